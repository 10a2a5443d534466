"""Provenance inside a trajectory: where it got the hashes, tags and names its commands use.

A hash or tag quoted by the task's prompt, or printed earlier by git run on HEAD's own history
by a step that broke no rule, is HEAD's history (:func:`clear_reason`); a plain name read off the
trajectory's own listing of references (:class:`ListedNames`), or a revision whose output showed
a line the trajectory then typed itself (:class:`CopiedLines`), names something beyond it
(:func:`by_what_followed`); a history hit whose own output showed only HEAD's history is lowered
(:class:`Shown`, :mod:`evotree.harness.audit.shown`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from evotree.core.findings import Severity
from evotree.harness.audit.ancestry import Ancestry
from evotree.harness.audit.commands import Hit
from evotree.harness.audit.git_argv import _git_split
from evotree.harness.audit.head_listing import listed_by_head_log
from evotree.harness.audit.revisions import BASE_NAMES, _TAG_LIKE, is_head_relative
from evotree.harness.audit.shown import (
    Vouched,
    blob_is_the_checkouts,
    cherry_marks_none,
    diff_shows_known,
    fix_quotes,
    names_below_head,
    one_branch_is_head,
    printed_commits_below_head,
    shows_only_vouched,
)
from evotree.harness.audit.steps import Trajectory
from evotree.harness.audit.shell_values import _REF_LISTERS
from evotree.harness.audit.unwrap import parse_shell

__all__ = [
    "CopiedLines",
    "ListedNames",
    "Shown",
    "by_what_followed",
    "clear_reason",
    "may_print_tag_message",
    "named_tags",
]

_UNQUOTE = str.maketrans("", "", "\"'\\")
HEX_WORD = re.compile(r"[0-9a-f]{7,40}")


class Shown:
    """A high history hit judged by what its step's recorded output showed
    (:mod:`evotree.harness.audit.shown`): only HEAD's own history there lowers it to info."""

    def __init__(self, traj: Trajectory, step_hits: Sequence[Sequence[Hit]]) -> None:
        self.traj, self.step_hits = traj, step_hits
        self._vouched: Vouched | None = None

    def quiet(self, j: int) -> bool:
        """Did step ``j`` break no rule (nothing warn or above, no name left unjudged)?"""
        return not any(
            Severity.parse(h.severity) >= Severity.WARN or h.candidate for h in self.step_hits[j]
        )

    def judge(self, hit: Hit, k: int) -> Hit:
        """The hit lowered to info when its step's output showed only HEAD's history."""
        if hit.severity != "high" or hit.code != "audit.git_history_leak":
            return hit
        if self._vouched is None:
            self._vouched = Vouched(self.traj, self.quiet, _git_step)
        names = [] if may_print_tag_message(hit, self.traj.steps[k].output) else _plain_names(hit)
        why = names_below_head(names, k, self.traj, self._vouched, self.quiet, _git_step)
        if why is not None:
            return Hit(
                hit.code, "info", f"{hit.rule} ({why})", hit.command, hit.revisions, refs=hit.refs
            )
        step = self.traj.steps[k]
        if step.output is None or not step.output.strip():
            return hit
        why = (
            shows_only_vouched(step.command, step.output, self._vouched)
            or one_branch_is_head(hit.command, step.output, self.traj)
            or diff_shows_known(k, self.traj, self.quiet, _git_step)
            or blob_is_the_checkouts(k, self.traj, self.quiet)
            or cherry_marks_none(step.command, step.output)
            or printed_commits_below_head(step.command, step.output, self._vouched)
        )
        if why is None:
            return hit
        return Hit(
            hit.code, "info", f"{hit.rule} ({why})", hit.command, hit.revisions, refs=hit.refs
        )


#: an annotated tag's header as ``git show`` / ``git cat-file -p`` print it
_TAG_HEADER = re.compile(r"(?m)^(?:tag \S+|Tagger: .*|type (?:commit|tree|blob))$")


def may_print_tag_message(hit: Hit, output: str | None) -> bool:
    """Could this command have printed an annotated tag's message (``git show T``, ``git
    cat-file -p T``, ``verify-tag``)? A tag at or below HEAD may still carry text of the future
    in its message; its output shows it did when it holds a tag header, or cannot say when none
    was recorded."""
    words = hit.command.split()
    sub = _git_split(words)[0] if words and os.path.basename(words[0]) == "git" else ""
    if sub not in ("show", "cat-file", "verify-tag", "tag", "for-each-ref"):
        return False
    return not output or _TAG_HEADER.search(output) is not None


def _plain_names(hit: Hit) -> list[str]:
    """The names (tags, branches, ``origin/main``) a history hit rests on, when it rests on
    names alone: no hash, no reference scope, no reflog selector ([] otherwise)."""
    if hit.revisions:
        return []
    names: list[str] = []
    for ref in hit.refs:
        if ref.startswith("*") or "@{" in ref:
            return []
        for part in re.split(r"\.\.\.?", ref.split(":", 1)[0]):
            part = re.sub(r"(?:[~^]\d*|\^\{\w*\})+$", "", part.lstrip("^"))
            if not part or is_head_relative(part):
                continue
            if HEX_WORD.fullmatch(part):
                return []
            names.append(part)
    return names


def _unresolved(hit: Hit) -> bool:
    """A hit on a name the spelling could not judge (a plain or path-like word in a revision's
    place): what the trajectory did around it may say what it was."""
    return (
        hit.code == "audit.git_history_leak"
        and bool(hit.refs)
        and hit.severity != "high"
        and (hit.candidate or hit.severity == "warn")
        and "own branch" not in hit.rule
    )


def _heads(ref: str) -> bool:
    """A ref of HEAD's own history (``*tagmsg-rev:HEAD~1``: ``git show HEAD~1`` may name a tag
    only by its spelling), or of a main branch name."""
    if ref.startswith("*tagmsg-rev:"):
        ref = ref[len("*tagmsg-rev:") :]
    elif ref.startswith("*"):
        return False
    return is_head_relative(ref) or _ref_name(ref) in BASE_NAMES


def _ref_name(ref: str) -> str:
    return re.sub(r"(?:[~^]\d*)+$", "", ref.split(":", 1)[0])


def by_what_followed(hit: Hit, k: int, listed: ListedNames, copied: CopiedLines) -> Hit:
    """An unresolved name judged by the trajectory around it: a name it read off its own listing
    of references, or a step whose output showed an added line the trajectory then wrote itself
    (it copied a change from that revision), is high."""
    if not _unresolved(hit) or all(_ref_name(r) in BASE_NAMES for r in hit.refs):
        return hit
    named = listed.names(hit, k)
    if named is not None:
        return Hit(
            hit.code,
            "high",
            f"{hit.rule.split(':')[0]} names {named[0]}, which step "
            f"{named[1] + 1}'s listing of references printed",
            hit.command,
            hit.revisions,
            refs=hit.refs,
        )
    if copied.applied(hit, k) and not all(_heads(r) for r in hit.refs):
        return Hit(
            hit.code,
            "high",
            f"{hit.rule.split(':')[0]}: what it read was piped into git apply / patch (the "
            "changes applied to the work tree came from it)",
            hit.command,
            hit.revisions,
            refs=hit.refs,
        )
    line = copied.line(k)
    if line is not None:
        return Hit(
            hit.code,
            "high",
            f"{hit.rule.split(':')[0]}: its output showed a line the "
            f"trajectory wrote itself at step {line[1] + 1}",
            hit.command,
            hit.revisions,
            line[0],
            refs=hit.refs,
        )
    return hit


#: programs a patch passes through on its way to git apply (cut, filtered, never written)
_FILTERS = frozenset({"sed", "awk", "grep", "head", "tail", "cut", "tr", "cat", "perl"})


def _applies(argv: Sequence[str]) -> bool:
    """``git apply`` / ``git am`` / ``patch``, reading a patch from standard input."""
    name = os.path.basename(argv[0])
    if name == "patch":
        return True
    return name == "git" and _git_split(argv)[0] in ("apply", "am")


class CopiedLines:
    """Lines a step's output *added* (a diff's ``+`` lines, distinctive ones) that the trajectory
    typed only later (an edit, a here-document, a patch) and never saw elsewhere (not in a
    ``cat`` of the file, not in any other step's output): it copied them from what that step
    showed."""

    _MIN = 16

    def __init__(self, traj: Trajectory, step_hits: Sequence[Sequence[Hit]]) -> None:
        self.traj = traj
        self.step_hits = step_hits
        self._typed: list[str] | None = None

    @staticmethod
    def _flat(text: str) -> str:
        return re.sub(r"\s+", " ", text.translate(_UNQUOTE)).strip()

    def _added(self, k: int) -> list[str]:
        out = self.traj.steps[k].output or ""
        lines: list[str] = []
        if "+" not in out or not re.search(r"(?m)^[ \t]*\+", out):
            return lines
        for line in out.splitlines():
            # a diff's added line, or one indented inside a message (``git tag -n20`` prints a
            # patch carried in a tag message four spaces in)
            line = line.lstrip(" \t")
            if line.startswith("+") and not line.startswith("+++"):
                text = self._flat(line[1:])
                if len(text) >= self._MIN and sum(c.isalnum() for c in text) >= 8:
                    lines.append(text)
        return lines

    def applied(self, hit: Hit, k: int) -> bool:
        """Was ``hit``'s command piped (through filters) into ``git apply`` / ``git am`` /
        ``patch`` in step ``k``: it applied what it read."""
        command = self.traj.steps[k].command or ""
        if "apply" not in command and "patch" not in command and " am" not in command:
            return False
        for cmd in parse_shell(command):
            if not cmd.argv or not _applies(cmd.argv):
                continue
            src, hops = cmd.stdin, 0
            while src is not None and src.argv and hops < 6:
                if " ".join(src.argv) == hit.command.split(" <", 1)[0].split(" >", 1)[0]:
                    return True
                if os.path.basename(src.argv[0]) not in _FILTERS:
                    break
                src, hops = src.stdin, hops + 1
        return False

    def line(self, k: int) -> tuple[str, int] | None:
        """(the line, the step that wrote it), or None."""
        added = self._added(k)
        if not added:
            return None
        if self._typed is None:
            self._typed = [self._flat(s.command or "") for s in self.traj.steps]
        steps = self.traj.steps
        for text in added:
            if any(text in self._typed[j] for j in range(k + 1)):
                continue  # typed before it was shown: the trajectory's own line
            if any(
                j != k and text in self._flat(steps[j].output or "")
                for j in range(len(steps))
                if not any(_unresolved(h) for h in self.step_hits[j])
            ):
                continue  # shown elsewhere too (the file as it is, HEAD's own history)
            later = next((j for j in range(k + 1, len(steps)) if text in self._typed[j]), None)
            if later is not None:
                return text, later
        return None


class ListedNames:
    """Names a trajectory read off its own listings of references (``git branch``, ``git tag``,
    ``git for-each-ref``, ``git ls-remote``): a later command naming one (``git log -p windup``)
    names a reference, however path-like or plain its spelling, not HEAD's history. The branch
    it stood on (``* main``) and branches it made itself are left out."""

    _LISTERS = frozenset(
        {"branch", "tag", "for-each-ref", "show-ref", "ls-remote", "stash", "reflog", "remote"}
    )
    _PREFIX = re.compile(r"^(?:refs/(?:heads|tags|remotes)/|remotes/)")
    _LISTER_WORD = re.compile(
        r"\b(?:branch|tag|for-each-ref|show-ref|ls-remote|stash|reflog|"
        r"remote)\b"
    )

    def __init__(self, traj: Trajectory) -> None:
        self.traj = traj
        self._listings: list[int] | None = None

    def listings(self) -> list[int]:
        """The steps that ran a listing of references and printed something (found once)."""
        if self._listings is None:
            self._listings = []
            for j, step in enumerate(self.traj.steps):
                command = step.command or ""
                if (
                    step.output
                    and "git" in command
                    and self._LISTER_WORD.search(command)
                    and not _git_step(command)
                    and any(
                        cmd.argv
                        and os.path.basename(cmd.argv[0]) == "git"
                        and _git_split(cmd.argv)[0] in self._LISTERS
                        for cmd in parse_shell(command)
                    )
                ):
                    self._listings.append(j)
        return self._listings

    @staticmethod
    def _listed(output: str, name: str) -> bool:
        """Does a listing name ``name`` among the first words of a line (ids come first in
        ``show-ref`` / ``ls-remote``), not as the branch HEAD is on (``* main``)?"""
        pattern = (
            r"(?m)^(?![ \t]*\* )[ \t]*(?:\S+[ \t]+){0,2}['\"]?"
            r"(?:refs/(?:heads|tags|remotes)/|remotes/)?" + re.escape(name) + r"(?=[\s'\":,]|$)"
        )
        return re.search(pattern, output) is not None

    def names(self, hit: Hit, k: int) -> tuple[str, int] | None:
        """(the name, the listing step) when ``hit`` rests on a plain or path-like name that an
        earlier listing printed; None otherwise."""
        steps = self.traj.steps
        for ref in hit.refs:
            word = re.sub(r"(?:[~^]\d*)+$", "", ref.split(":", 1)[0])
            head = word.split("/", 1)[0]
            if len(word) < 2 or HEX_WORD.fullmatch(word):
                continue
            for j in self.listings():
                output = steps[j].output or ""
                if j >= k or head not in output:
                    continue
                # a name listed, or a branch of a remote listed (`git remote` printed `fork`)
                if self._listed(output, word) or "/" in word and self._listed(output, head):
                    return word, j
        return None


def named_tags(hit: Hit) -> tuple[str, ...]:
    """The release tags (``v2.2.0``) a hit rests on, when it rests on nothing else: a tag
    printed earlier by HEAD's own history (``git describe``, ``git tag --merged``) or quoted by
    the task is behind the base, as a hash printed there is."""
    names = []
    for ref in hit.refs:
        for part in re.split(r"\.\.\.?", ref.split(":", 1)[0]):
            part = re.sub(r"(?:[~^]\d*|\^\{\w*\})+$", "", part.lstrip("^"))
            if not part or is_head_relative(part):
                continue
            if not _TAG_LIKE.match(part):
                return ()
            names.append(part)
    return tuple(names)


def _shows_word(text: str | None, word: str) -> bool:
    pattern = r"(?<![\w.])" + re.escape(word) + r"(?![\w.])"
    return bool(text) and re.search(pattern, text or "") is not None


def clear_reason(
    hit: Hit,
    k: int,
    traj: Trajectory,
    step_hits: Sequence[Sequence[Hit]],
    ancestry: Ancestry | None,
    names: Sequence[str] = (),
) -> str | None:
    """'ancestor' (every hash is the base or behind it), 'seen' (HEAD's own history or
    the task printed them first) or None: why a hit on hashes or tags may be cleared or lowered."""
    if names:  # tags the repository could not judge (or there is none): only provenance clears them
        seen = all(_seen_before(name, k, traj, step_hits, exact=True) for name in names)
        return "seen" if seen else None
    if ancestry is not None:
        states = {ancestry.status(h) for h in hit.revisions}
        if states == {"ancestor"} and ancestry.trusted:
            return "ancestor"
        if "future" in states:
            return None
    # provenance: every hash quoted by the task's prompt or printed earlier by a step that broke
    # no rule
    if all(_seen_before(rev, k, traj, step_hits) for rev in hit.revisions):
        return "seen"
    # or listed by ``git log --oneline`` of HEAD just before, on the same command line
    return "seen" if listed_by_head_log(hit.revisions, k, traj) else None


def _seen_before(
    rev: str, k: int, traj: Trajectory, step_hits: Sequence[Sequence[Hit]], *, exact: bool = False
) -> bool:
    """Was ``rev`` quoted by the task's prompt, or printed before step ``k`` by git run on HEAD's
    own history (a step that broke no rule and named no revision it could not judge)?"""

    def shows(text: str | None) -> bool:
        return _shows_word(text, rev) if exact else bool(text) and rev in (text or "")

    if shows(traj.prompt) and not any(
        q.startswith(rev) or rev.startswith(q) for q in fix_quotes(traj.prompt)
    ):
        return True  # quoted by the task, and not as the fix made elsewhere
    for j in range(k):
        quiet = not any(
            Severity.parse(h.severity) >= Severity.WARN or h.candidate for h in step_hits[j]
        )
        if quiet and shows(traj.steps[j].output) and _git_step(traj.steps[j].command):
            return True
    return False


#: git commands whose output is not HEAD's history: remotes, other worktrees' HEADs
#: (``worktree list``), a bisect's commits (``bisect log``, ``bisect run``)
_NOT_HEADS = frozenset({"remote", "worktree", "bisect"})


def _git_step(command: str) -> bool:
    """Did this step run git itself on HEAD's own history? Only git's own output on HEAD's
    history (``git log -3``, ``git describe``) vouches for a hash or a tag; a script the audit
    cannot read may print any hash it dug up, and a listing of references (``git tag``,
    ``git branch -v``, ``git for-each-ref``) prints names and tips beyond the base."""
    ran_git = False
    for cmd in parse_shell(command):
        if not cmd.argv or os.path.basename(cmd.argv[0]) not in ("git", "hub"):
            continue
        ran_git = True
        sub, args = _git_split(cmd.argv)
        if sub == "branch" and not (
            "--show-current" in args
            or "--merged" in args
            and set(args) <= {"--merged", "HEAD", "--list", "-l"}
        ):
            return False  # a listing of branches: names beyond HEAD's history
        if sub == "tag" and not ("--merged" in args or "--points-at" in args):
            return False
        if sub in _REF_LISTERS and sub not in ("tag", "describe") or sub in _NOT_HEADS:
            return False
    return ran_git
