"""Where each program of the trace ran its git work: a repository of the phase's own, or one the
judges must read as a task repository's (:func:`mark_own_repositories`, issue 29).

The audit's git rules read a command line alone: ``git -C /tmp/own cherry-pick <id>`` is judged
against the task repository whatever repository ``-C`` names, and so is ``git notes copy
--for-rewrite=rebase`` (git's own child after a rewriting rebase) or the sequence editor given
``<git dir>/rebase-merge/git-rebase-todo``. The trace knows more: every HEAD, reference and
object store the machine's git opened, with what the path named (device and inode) — the same
reads :func:`evotree.harness.audit.trace_reads.judge_git_reads` judges. A git process all of
whose reads are of a repository that is no task repository (by identity and by the resolved
path) touched nothing of the task's history: its row is marked ``own_repository`` (the git
directory whose HEAD it read) and :func:`evotree.harness.audit.trace_argv.judge_git_spellings`
judges its words only for the ids they name. Everything else is left to the rules as before
(fails closed): a git process with no HEAD read, a subcommand that reaches the network or
another repository (fetch, clone, remote, submodule, push, ...: the network rules judge it) or
removes or moves files (``rm``, ``mv``: the test-write rule), one whose command line changed
between the tracer's read and its exit, a read the tracer could not resolve through ``/proc`` or
``/dev``, a trace with more reads than the tracer records, a variable that shows git another
history, any read of a task repository's HEAD, references, object store or object files, under
any name. The tries of a PATH search before such a git (the same argv, a path with nothing
there: no program ran) are marked with it. A program that is not git is marked when every word
of its command line naming a ``.git`` path names a file that such a git opened under that very
name (no link on the way: the editor git starts on its todo, which git reads back), and no task
repository's."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from typing import Any

from evotree.harness.audit.git_argv import _git_split
from evotree.harness.audit.network_rules import _NET_SUBS
from evotree.harness.audit.trace_argv import GIT_SERVERS, OWN_REPOSITORY, _history_env, own_path
from evotree.harness.audit.trace_reads import _git_processes, _identity, _store_behind_a_link

__all__ = ["OWN_REPOSITORY", "mark_own_repositories"]

#: subcommands judged as they run wherever git ran: they reach the network or another
#: repository (``audit.network_fetch``), serve one, or remove or move files the test-write rule
#: judges by their words (a work tree may be the task's: ``--work-tree``)
_NEVER_OWN = _NET_SUBS | GIT_SERVERS | {"remote", "submodule", "push", "archive", "send-pack"}
_NEVER_OWN |= {"rm", "mv"}
#: a word naming a path in a ``.git`` folder (as the git internals rule reads command lines)
_GIT_PATH_WORD = re.compile(r"(?:^|/)\.git(?:/|$)")


def mark_own_repositories(
    rows: list[dict[str, Any]], repos: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Mark, in place, the exec rows of git processes that read only a repository of the
    phase's own, and of programs whose ``.git`` words name files of such a repository (module
    doc); ``repos``: the task repositories (:func:`evotree.harness.git_guard.task_repositories`).
    Without task repositories nothing is marked. Returns ``rows``."""
    for row in rows:
        if row.get("kind") == "exec":
            row.pop(OWN_REPOSITORY, None)  # only this judge says it
    if not repos:
        return rows
    task = _TaskIdentities(repos)
    own_of: dict[int, str] = {}
    own_files: dict[str, str] = {}  # a file an own git opened (under its own name) -> its git dir
    for process in _git_processes(rows):
        row = process["exec"]
        if row is None or _history_env(row) or _in_doubt(row) or _reaches_out(row):
            continue
        gd = _own_git_dir(process["reads"], task)
        if gd is not None:
            own_of[id(row)] = gd
            for r in process["reads"]:
                path = posixpath.normpath(str(r.get("path") or "/"))
                if r.get("type") == "file" and str(r.get("resolved") or "") == path:
                    own_files.setdefault(path, gd)
    for at, row in enumerate(rows):
        if row.get("kind") != "exec":
            continue
        gd = own_of.get(id(row))
        if gd is not None:
            row[OWN_REPOSITORY] = gd
            _mark_tries(rows, at, gd)
            continue
        if row.get("program") == "git" or _is_git(row):
            continue
        named = None if _in_doubt(row) else _named_git_dir(row, own_files, task)
        if named is not None:
            row[OWN_REPOSITORY] = named
    return rows


def _reaches_out(row: dict[str, Any]) -> bool:
    """A git command judged as it runs wherever it ran (:data:`_NEVER_OWN`)."""
    sub, _ = _git_split([str(a) for a in row.get("argv") or []])
    return sub in _NEVER_OWN


def _in_doubt(row: dict[str, Any]) -> bool:
    """An exec row whose words are in doubt: its argv read at the call differs from what the
    kernel ran (``argv_read``) or from its command line at exit (``argv_at_exit``: both steps are
    judged as run), or its program could not be read back (``unreadable``)."""
    return any(k in row for k in ("argv_read", "argv_at_exit")) or bool(row.get("unreadable"))


def _mark_tries(rows: list[dict[str, Any]], at: int, gd: str) -> None:
    """Mark the exec rows of the same process before ``rows[at]`` that tried a path with nothing
    there (``missing``: a PATH search, no program ran, none identified) with the same argv."""
    row = rows[at]
    pid = row.get("tgid", row.get("pid"))
    for before in reversed(rows[:at]):
        if before.get("kind") not in ("exec", "execed", "exit", "open", "gitread", "gitwrite"):
            continue
        if before.get("tgid", before.get("pid")) != pid:
            continue
        if (
            before.get("kind") != "exec"
            or not before.get("missing")
            or "exe" in before
            or before.get("argv") != row.get("argv")
        ):
            return
        before[OWN_REPOSITORY] = gd


class _TaskIdentities:
    """What identifies the task repositories' storage: their git directories' paths, and the
    device and inode of their HEADs and references, object stores and object files."""

    def __init__(self, repos: Sequence[dict[str, Any]]) -> None:
        self.dirs = [posixpath.normpath(str(r.get("path"))) for r in repos]
        self.files: set[tuple[Any, Any]] = set()
        for repo in repos:
            self.files |= {tuple(k) for k in repo.get("known") or ()}
            self.files |= {tuple(repo.get("objects") or ())}
            self.files |= {tuple(d) for d in repo.get("object_dirs") or ()}
            self.files |= {tuple(f) for f in repo.get("object_files") or ()}

    def holds(self, path: str) -> bool:
        """Is ``path`` (absolute, normalized) a task git directory or in one?"""
        return any(path == d or path.startswith(d + "/") for d in self.dirs)


def _own_git_dir(reads: list[dict[str, Any]], task: _TaskIdentities) -> str | None:
    """The git directory of the phase's own a git process read (the folder of the first HEAD
    it opened), or None when any of its reads is, or may be, a task repository's."""
    found: str | None = None
    for r in reads:
        if r.get("overflow") or _store_behind_a_link(r):
            return None
        path = str(r.get("resolved") or r.get("path") or "")
        if not path.startswith("/"):
            return None
        path = posixpath.normpath(path)
        if task.holds(path) or task.holds(posixpath.normpath(str(r.get("path") or "/"))):
            return None
        if r.get("unresolved"):
            continue  # a path that named nothing (looked for, not there): read nothing
        if _identity(r) in task.files or (r.get("file_dev"), r.get("file_ino")) in task.files:
            return None
        if (
            found is None
            and r.get("what") == "head"
            and r.get("type") == "file"
            and posixpath.basename(path) == "HEAD"
        ):
            found = posixpath.dirname(path)
    return found


def _is_git(row: dict[str, Any]) -> bool:
    argv = row.get("argv") or []
    return bool(argv) and posixpath.basename(str(argv[0])) == "git"


def _named_git_dir(
    row: dict[str, Any], own_files: dict[str, str], task: _TaskIdentities
) -> str | None:
    """The own git directory every ``.git`` word of a program's command line names a file of,
    a file an own git opened under that very name (``own_files``: the editor's todo, which git
    reads back), or None (no such word; a word that is not a plain path; a file no own git read,
    or read through a link; more than one directory; a task repository's)."""
    argv = [str(a) for a in row.get("argv") or []]
    words = [w for w in argv[1:] if _GIT_PATH_WORD.search(w)]
    if not words:
        return None
    found: str | None = None
    for word in words:
        path = own_path(word, row)
        if path is None or task.holds(path):
            return None
        where = own_files.get(path)
        if where is None or found not in (None, where):
            return None
        found = where
    return found
