"""In a task's git directory only git writes (issue 29; red team of a6240c4/8fc3cad: A, D, I, O).

Each round of that red team forged what git then read: a reference made a symbolic link by hand
(A), an index written without git or one of the phase's own named by ``GIT_INDEX_FILE`` (D), a
file in the object store's layout (I), a commit graph (O). The seccomp tracer writes a
``gitwrite`` row for every name a process that is not the machine's git makes or changes under a
``.git`` folder (an open to write, create or truncate; ``symlink``, ``link``, ``rename``,
``mknod``: ``write_row`` in ``harness/seccomp_trace.c``). Under a task git directory each is a
finding (``git_forged``), except a regular file whose text the judge resolves as git would when
git reads it (``trace_beside``): a session's file (``sequencer/``, ``rebase-merge/``,
``rebase-apply/``: a sequence editor edits the todo) and a file at the top of the git directory
or of a linked worktree's folder (``COMMIT_EDITMSG``, ``MERGE_MSG``, ``ORIG_HEAD``, a name of the
phase's own: HEAD-like, sealed and judged by its text) other than the index and git's own
pointers and configuration. A link or a device node is never such a file, nor is a folder, a
link or a device renamed or hard-linked in (the tracer's ``from_type``: a folder holding a link
``refs/...`` would be (A) again). A hook (``hooks/``,
what ``pre-commit install`` writes) is a program git runs, traced as one: allowed, but for a link
whose text starts ``refs/`` (git's files backend reads it as a symbolic reference).

``GIT_INDEX_FILE`` is judged with the git process that read a task's objects
(:func:`index_file_env`): an index outside every task git directory is a finding.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from typing import Any

__all__ = ["RULE", "index_file_env", "written_findings"]

#: the rule a finding of this module names (in its ``change`` text and its ``rule`` key)
RULE = "git_forged"
#: a session's folders: their files are judged by their text (a todo an editor edits)
_SESSION_DIRS = frozenset({"sequencer", "rebase-merge", "rebase-apply"})
#: top-level files git reads as no revision (binary, or a pointer to other storage)
_NOT_TEXT = frozenset(
    {"index", "config", "config.worktree", "packed-refs", "commondir", "gitdir", "shallow"}
)
#: calls whose result is never a regular file of text
_NEVER_TEXT = frozenset({"symlink", "mknod"})
#: calls that move or link a name: allowed only for a regular file (``from_type``: a folder of
#: links or a link renamed or hard-linked in is (A) again; a RENAME_EXCHANGE is neither's)
_MOVES = frozenset({"rename", "rename_from", "link"})


def _git_dirs(repos: Sequence[dict[str, Any]]) -> list[str]:
    """Each task git directory as recorded and as its real path (the tracer's paths are real)."""
    out: list[str] = []
    for repo in repos:
        path = str(repo.get("path") or "")
        if path:
            for p in (posixpath.normpath(path), posixpath.normpath(posixpath.realpath(path))):
                if p not in out:
                    out.append(p)
    return out


def _under(path: str, gds: Sequence[str]) -> tuple[str, str] | None:
    """(the task git directory, the path relative to it) when ``path`` is in one, else None."""
    path = posixpath.normpath(path) if path else ""
    for gd in gds:
        if path == gd:
            return gd, "."
        if path.startswith(gd + "/"):
            return gd, path[len(gd) + 1 :]
    return None


def _text_file(rel: str) -> bool:
    """Is ``rel`` (under a task git directory) a file whose text the judge resolves as git
    would: a session's file, or a top-level file of the git directory (or of a linked
    worktree's folder) that is not the index, a configuration or a pointer?"""
    parts = rel.split("/")
    if len(parts) >= 3 and parts[0] == "worktrees":
        parts = parts[2:]
    if len(parts) >= 2 and parts[0] in _SESSION_DIRS:
        return True
    if len(parts) != 1 or parts[0] in (".", ".."):
        return False
    name = parts[0]
    return name not in _NOT_TEXT and not name.startswith("sharedindex.")


def _allowed(call: str, rel: str, link: str) -> bool:
    """May a program make or change ``rel`` (under a task git directory) with ``call``? A text
    file the judge resolves (:func:`_text_file`), and a hook (``hooks/``: a program git runs, its
    run an exec row; ``pre-commit install`` writes one, or links one in) unless it is a link git's
    files backend would take for a symbolic reference (its text ``refs/...``)."""
    if rel.split("/", 1)[0] == "hooks" and "/" in rel:
        return call != "mknod" and not link.startswith("refs/")
    return call not in _NEVER_TEXT and _text_file(rel)


def written_findings(
    rows: Sequence[dict[str, Any]], repos: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """``git_state`` findings (rule ``git_forged``) for the ``gitwrite`` rows of ``rows`` that
    make or change a name under a task git directory of ``repos`` (module doc)."""
    gds = _git_dirs(repos)
    if not gds:
        return []
    out: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for row in rows:
        if row.get("kind") != "gitwrite":
            continue
        call = str(row.get("call") or "write")
        places = [str(row.get(k) or "") for k in ("resolved", "followed")]
        if row.get("unresolved"):
            places.append(str(row.get("path") or ""))
        for place in places:
            hit = _under(place, gds)
            if hit is None:
                continue
            gd, rel = hit
            moved = str(row.get("from_type") or "unknown")
            if (call not in _MOVES or moved == "file") and _allowed(
                call, rel, str(row.get("link") or "")
            ):
                continue
            key = (call, place)
            if key in seen:
                break
            seen.add(key)
            exe = str(row.get("exe") or "a program")
            what = f" (a link to {str(row.get('link'))[:120]!r})" if call == "symlink" else ""
            if call in _MOVES and moved != "file":
                what = f" (a {moved}, not a regular file)"
            out.append(
                {
                    "kind": "git_state",
                    "rule": RULE,
                    "path": place,
                    "change": f"{RULE}: {exe} ({call}) wrote {rel}{what} in the task's git "
                    f"directory ({gd}), which only git writes: git reads what it finds there "
                    "as its own (a reference, an index, the object store)",
                }
            )
            break
    return out


def index_file_env(
    exec_row: dict[str, Any] | None, gds: set[str], here: str
) -> list[dict[str, Any]]:
    """``GIT_INDEX_FILE`` in the environment of a git that read a task's objects naming a file
    outside every task git directory (``gds``): an index of the phase's own, written without
    git, names what git checks out, diffs and shows (red team D)."""
    out: list[dict[str, Any]] = []
    for entry in (exec_row or {}).get("git_env") or ():
        text = str(entry)
        if not text.startswith("GIT_INDEX_FILE="):
            continue
        value = text.split("=", 1)[1]
        cwd = str((exec_row or {}).get("cwd") or "/")
        target = posixpath.normpath(posixpath.join(cwd, value)) if value else ""
        real = posixpath.normpath(posixpath.realpath(target)) if target else ""
        if target and any(p.startswith(gd + "/") for gd in gds for p in (target, real)):
            continue
        out.append(
            {
                "kind": "git_state",
                "rule": RULE,
                "path": target or "(empty)",
                "change": f"{RULE}: {here} with {text[:160]}: an index outside the task's git "
                "directory (written without git)",
            }
        )
    return out
