"""How a word names a revision: HEAD-relative (:func:`is_head_relative`: the task's own history),
a hash or a reference certainly outside HEAD, or a name the spelling alone cannot judge (a branch,
a tag or a path), for the git rules of the leak audit."""

from __future__ import annotations

import re

__all__ = ["BASE_NAMES", "HEX_REV", "is_head_relative"]


HEX_REV = re.compile(r"^[0-9a-fA-F]{7,40}$")  # git reads an id in either case


#: (``HEAD@{0}`` and ``@{0}`` are the newest entry of HEAD's or its branch's log: HEAD itself)
_HEAD_REL = re.compile(r"^(HEAD|@)?(?:@\{0\})?([~^][0-9]*)*$")


#: a release tag's spelling (v1.2.3, 2.0.1, v3.1-rc1): a revision, not a path
_TAG_LIKE = re.compile(r"^v?\d+(?:\.\d+)+(?:[-.+]?[A-Za-z][\w.]*)?$")


#: references git's own operations write (the image's ORIG_HEAD may point at the future fix)
_SPECIAL_HEADS = (
    "ORIG_HEAD",
    "FETCH_HEAD",
    "MERGE_HEAD",
    "CHERRY_PICK_HEAD",
    "REVERT_HEAD",
    "REBASE_HEAD",
    "BISECT_HEAD",
    "AUTO_MERGE",
)


#: ``:/text``: git searches the messages of commits reachable from *any* reference
_MESSAGE_SEARCH = re.compile(r"^:/[^/\s]")


#: branch namespaces by convention (git-flow and forges): ``fix/integral-windup`` names a
#: branch, not a path, when its last part has no file extension
_BRANCH_NS = re.compile(
    r"^(?:fix|fixes|hotfix|bugfix|bug|feature|feat|release|pr|pull|wip|topic|"
    r"issue|chore|backport|patch)/[^.:]+$"
)


#: a plain name one of whose parts says it is a change (``fix-midnight``, ``pr-17``,
#: ``windup_hotfix``): a branch, not a file or folder (those have extensions or plain names)
_BRANCH_WORD = re.compile(
    r"^(?=[^./:]*$)(?:[A-Za-z0-9]+[-_])*(?:fix|fixes|hotfix|bugfix|pr|wip|"
    r"backport)(?:[-_][A-Za-z0-9]+)*$"
)


#: spellings git resolves as references, never as paths: ``refs/...``, remote branches by
#: convention, a bisect's terms (``bisect/fixed`` is ``refs/bisect/fixed``) and another
#: worktree's HEAD (``worktrees/NAME/HEAD``, ``main-worktree/HEAD``)
_REF_NAMESPACES = (
    "refs/",
    "origin/",
    "upstream/",
    "remotes/",
    "bisect/",
    "worktrees/",
    "main-worktree/",
)


#: the names a task's own branch usually has (``git log -p main`` reads HEAD's history there)
BASE_NAMES = frozenset({"main", "master", "trunk", "develop", "development", "default"})


def is_head_relative(rev: str) -> bool:
    """``HEAD``, ``HEAD~3``, ``@^``, ``HEAD~2..HEAD``, ``HEAD:path``: the task's own history."""
    rev = rev.strip()
    if not rev:
        return True
    if _MESSAGE_SEARCH.match(rev):
        return False  # :/text: the youngest commit whose message matches, reachable from any ref
    if ":" in rev and not rev.startswith(":"):
        rev = rev.split(":", 1)[0]
    elif rev.startswith(":"):  # :path is the index
        return True
    for part in re.split(r"\.\.\.?", rev):
        part = part.lstrip("^")
        if part and not _HEAD_REL.match(part):
            return False
        if part in ("",):
            continue
    return True


def _rev_kind(word: str) -> str | None:
    """'hash' / 'ref' when ``word`` certainly names a revision outside HEAD; 'name' when it may
    be a branch or a path; None when it is HEAD-relative or clearly a path."""
    if is_head_relative(word):
        return None
    if _MESSAGE_SEARCH.match(word):
        return "ref"
    base = word.split(":", 1)[0] if ":" in word else word
    parts = [p.lstrip("^") for p in re.split(r"\.\.\.?", base) if p]
    parts = [re.sub(r"([~^][0-9]*)+$", "", p) for p in parts]
    kinds = set()
    for part in parts:
        if not part or _HEAD_REL.match(part):
            continue
        if HEX_REV.match(part):
            kinds.add("hash")
        elif (
            part.startswith(_REF_NAMESPACES)
            or "@{" in part
            or ":" in word
            or ".." in word
            or part in _SPECIAL_HEADS
            or part in ("stash", "-")
            or _TAG_LIKE.match(part)
            or part.endswith("^{}")
            or "^{" in part
            or _BRANCH_NS.match(part)
            or _BRANCH_WORD.search(part)
        ):
            kinds.add("ref")
        elif "/" in part or "." in part or part.startswith("*"):
            continue  # a path
        else:
            kinds.add("name")
    if "hash" in kinds:
        return "hash"
    if "ref" in kinds:
        return "ref"
    return "name" if "name" in kinds else None


def _hashes(word: str) -> tuple[str, ...]:
    base = word.split(":", 1)[0]
    return tuple(
        h
        for h in (re.sub(r"([~^][0-9]*)+$", "", p.lstrip("^")) for p in re.split(r"\.\.\.?", base))
        if HEX_REV.match(h)
    )
