"""Reference scopes: the references a wide git command lists or walks (``--all``,
``for-each-ref``, ``notes``, a bisect in progress), as pseudo-revisions (:data:`SCOPE`) that the
task repository resolves and judges by ancestry."""

from __future__ import annotations

from collections.abc import Sequence

from evotree.harness.audit.git_argv import _positionals
from evotree.harness.audit.revisions import is_head_relative

__all__ = [
    "AM_SESSION",
    "BISECT_SCOPE",
    "BISECT_START",
    "REBASE_SESSION",
    "SCOPE",
    "SUBMODULE_REMOTE",
    "scope_refs",
]


#: flags that make a command walk or list every reference of a kind (or every object)
_ALL_REFS = frozenset(
    {
        "--all",
        "--branches",
        "--remotes",
        "--tags",
        "--reflog",
        "--glob",
        "-g",
        "--walk-reflogs",
        "--bisect",
        "--alternate-refs",
        "--indexed-objects",
        "--exclude-hidden",
        "--disk-usage",
    }
)


_ALL_REFS_PREFIX = ("--branches=", "--remotes=", "--tags=", "--glob=", "--exclude-hidden=")


#: a reference scope: the references a wide command lists or walks, as a pseudo-revision the
#: task repository resolves (:meth:`evotree.harness.audit.ancestry.Ancestry.resolve`):
#: ``*refs:P1,P2`` (every reference under the prefixes or globs; none: all), ``*show-ref:``
#: (``git show-ref``'s tail-matched patterns after ``;``), ``*notes:REF:OBJ`` (a note on OBJ, or
#: any note, in the notes reference REF). Without the repository the hit stays as spelled.
SCOPE = "*"


_SCOPE_OF_FLAG = {
    "--all": "*refs:",
    "--branches": "*refs:refs/heads/",
    "--tags": "*refs:refs/tags/",
    "--remotes": "*refs:refs/remotes/",
}


def scope_refs(flag: str) -> tuple[str, ...]:
    """The reference scope a walk flag (``--all``, ``--branches``, ...) reads, if it has one."""
    token = _SCOPE_OF_FLAG.get(flag)
    return (token,) if token else ()


def _refs_scope(sub: str, args: Sequence[str]) -> tuple[str, ...]:
    """The references ``for-each-ref`` / ``show-ref`` list, as a scope token (:data:`SCOPE`)."""
    pos, _ = _positionals([a for a in args if a not in ("--heads", "--tags", "--branches")], sub)
    if sub == "for-each-ref":
        if any(
            a.split("=", 1)[0]
            in ("--contains", "--no-contains", "--merged", "--no-merged", "--points-at")
            for a in args
        ):
            return ()  # filtered by a revision: judged by spelling
        return ("*refs:" + ",".join(pos),)
    prefixes = [
        p
        for f, p in (
            ("--heads", "refs/heads/"),
            ("--branches", "refs/heads/"),
            ("--tags", "refs/tags/"),
        )
        if f in args
    ]
    if any(
        a in ("--verify", "--exists", "--exclude-existing") or a.startswith("--exclude-existing")
        for a in args
    ):
        return ()
    return ("*show-ref:" + ",".join(prefixes) + ";" + ",".join(pos),)


def _notes_scope(args: Sequence[str]) -> tuple[str, ...]:
    """``git notes [--ref R] list|show [OBJ]``: the note it reads, as a scope token; () for
    the other notes subcommands."""
    ref = "refs/notes/commits"
    rest: list[str] = []
    k = 0
    while k < len(args):
        word = args[k]
        if word == "--ref" and k + 1 < len(args):
            ref = args[k + 1]
            k += 2
            continue
        if word.startswith("--ref="):
            ref = word.split("=", 1)[1]
        elif not word.startswith("-"):
            rest.append(word)
        k += 1
    if not ref.startswith("refs/"):
        ref = "refs/notes/" + ref
    action = rest[0] if rest else "list"
    if action not in ("list", "show") or len(rest) > 2:
        return ()
    obj = rest[1] if len(rest) > 1 else ("HEAD" if action == "show" else "")
    return (f"*notes:{ref}:{obj}",)


#: the reference scope of a bisect in progress: its terms' commits (``refs/bisect/*``)
BISECT_SCOPE = "*refs:refs/bisect/"


#: where ``git bisect reset`` returns: the branch or commit ``BISECT_START`` names
BISECT_START = "*bisect-start:"


#: the patch of a stopped ``git am`` (``.git/rebase-apply``) / rebase (``rebase-merge`` or
#: ``rebase-apply``) the task repository holds: 'absent' when it holds none
AM_SESSION = "*session:am"
REBASE_SESSION = "*session:rebase"
#: what ``git submodule update --remote`` checks out: each submodule's remote-tracking branches
SUBMODULE_REMOTE = "*submodule-remote:"


def _shown_notes(sub: str, args: Sequence[str]) -> str | None:
    """The notes reference ``git log|show|whatchanged --notes[=REF]`` / ``--show-notes[=REF]``
    asks for (None: none asked for; git's default display is left to content provenance)."""
    if sub not in ("log", "show", "whatchanged") or "--no-notes" in args:
        return None
    for word in args:
        name, eq, value = word.partition("=")
        if name in ("--notes", "--show-notes", "--standard-notes"):
            ref = value if eq and value else "commits"
            return ref if ref.startswith("refs/") else "refs/notes/" + ref
    return None


def _walk_scope(sub: str, args: list[str]) -> tuple[str, ...]:
    """What a walk of every reference reads, for the task repository to judge: the scopes of
    its flags and the revisions it names besides; () (judged by spelling) when a flag has no
    scope (``--reflog``, ``--glob``, ...)."""
    if sub == "show-branch":
        flags = [a for a in args if a in ("-a", "-r", "--all", "--remotes")]
        scopes = [
            (
                "*refs:refs/remotes/"
                if f in ("-r", "--remotes")
                else "*refs:refs/heads/,refs/remotes/"
            )
            for f in flags
        ]
    else:
        flags = [a for a in args if a in _ALL_REFS or a.startswith(_ALL_REFS_PREFIX)]
        if any(f not in _SCOPE_OF_FLAG for f in flags):
            return ()
        scopes = [_SCOPE_OF_FLAG[f] for f in flags]
    words = [w for w in _positionals(args, sub)[0] if not is_head_relative(w)]
    return tuple(dict.fromkeys(scopes)) + tuple(words)
