"""The trace's judge of git's reads (:func:`judge_git_reads`): the machine's git reading a task
repository's objects through a HEAD or reference that is not that repository's, or with a
variable that shows it another history; findings are ``git_state`` rows, sealed with the trace."""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from typing import Any

from evotree.harness.audit.trace_argv import _history_env, _history_finding
from evotree.harness.audit.trace_beside import beside_findings, is_state_read
from evotree.harness.audit.trace_written import written_findings

__all__ = ["judge_git_reads"]


def judge_git_reads(
    rows: list[dict[str, Any]], repos: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Findings (``git_state`` rows) of the machine's git reading a task repository's objects
    through a HEAD or reference that is not that repository's.

    ``rows``: the trace's rows in order; a ``gitread`` row (the seccomp tracer's) is a HEAD file
    or a reference a git process opened, or the folder of an object store it read from, with the
    device and inode of what the path named. ``repos``: the task repositories
    (:func:`evotree.harness.git_guard.task_repositories`). A process that read from a task
    repository's object store (its folder or a folder in it, or one of its object files — a hard
    link of one in a folder of the phase's own —, by identity) may read only that repository's HEAD, ``packed-refs`` and
    references (as recorded before the phase), or a HEAD of one of its linked worktrees that names
    what the repository's HEAD names. Anything else — a git directory of links, a ``commondir``
    naming the repository, a worktree's HEAD rewritten, alternates or ``GIT_OBJECT_DIRECTORY``
    under another HEAD — is a finding, and so is a git program that read them with no HEAD
    opened (a HEAD that is a symbolic link is read with readlink, unseen), or from an object
    store named through /proc or /dev (which the tracer cannot walk). So is a trace with more
    git reads than the tracer
    records, and a git run with ``GIT_GRAFT_FILE`` or ``GIT_REPLACE_REF_BASE`` (another history
    under the same HEAD, references and objects). What such a process reads beside the task's
    own files — a commondir or graft file of the phase's own, a task reference under another
    name, ``GIT_COMMON_DIR``, a state pointer (``ORIG_HEAD``, ``MERGE_HEAD`` ...) naming a commit
    beyond the base — is judged by :func:`evotree.harness.audit.trace_beside.beside_findings`.
    A name made or changed in a task git directory by a program that is not git (a ``gitwrite``
    row) is judged by :func:`evotree.harness.audit.trace_written.written_findings`."""
    findings = [_history_finding(row) for row in rows if _history_env(row)]
    findings += _pointer_findings(rows, repos)
    findings += written_findings(rows, repos)
    for process in _git_processes(rows):
        findings += _judge_process_reads(process, repos)
    return findings


def _pointer_findings(
    rows: list[dict[str, Any]], repos: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """git reading a ``commondir`` or ``info/grafts`` of a task repository's git directory that
    was not there before the phase (written during it, perhaps removed before its end): it
    points git at references and objects, or parents, other than the repository's."""
    out: list[dict[str, Any]] = []
    for row in rows:
        if row.get("kind") != "gitread" or row.get("what") != "pointer":
            continue
        if row.get("type") not in ("file", "other"):
            continue
        resolved = str(row.get("resolved") or row.get("path") or "")
        for repo in repos:
            gd = str(repo.get("path"))
            name = posixpath.relpath(resolved, gd) if resolved.startswith(gd + "/") else None
            if name in ("commondir", "info/grafts") and name not in (repo.get("pointers") or ()):
                text = str(row.get("content", "")).strip()[:80]
                out.append(
                    _read_finding(
                        resolved,
                        f"git read a {name} written into the task repository ({gd}) during "
                        f"the phase, naming {text!r}: another history than its own",
                    )
                )
    return out


def _git_processes(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``gitread`` rows grouped by the program that made them: each exec starts a group of its
    process; reads of a process with no exec row (a fork) form a group of their own."""
    current: dict[Any, dict[str, Any]] = {}
    groups: list[dict[str, Any]] = []
    for row in rows:
        kind = row.get("kind")
        if kind == "exec":
            group = {"exec": row, "reads": []}
            current[row.get("tgid", row.get("pid"))] = group
            groups.append(group)
        elif kind == "gitread":
            group = current.get(row.get("pid"))
            if group is None:
                group = current[row.get("pid")] = {"exec": None, "reads": []}
                groups.append(group)
            group["reads"].append(row)
    return [g for g in groups if g["reads"]]


def _judge_process_reads(
    process: dict[str, Any], repos: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The findings of one git process's reads (:func:`judge_git_reads`)."""
    reads = process["reads"]
    argv = (process["exec"] or {}).get("argv") or ["git"]
    command = " ".join(str(a) for a in argv)[:200]
    if any(r.get("overflow") for r in reads):
        return [_read_finding("(the trace)", "more git reads than the tracer records: not judged")]
    out: list[dict[str, Any]] = []
    hidden = [r for r in reads if _store_behind_a_link(r)]
    if hidden and repos:
        named = str(hidden[0].get("path"))[:200]
        out.append(
            _read_finding(
                named,
                f"git ({command}) read an object store named through /proc or /dev ({named}), "
                "which the tracer cannot walk: whose objects it read is unknown",
            )
        )
    for repo in repos:
        stores = {tuple(repo.get("objects") or ())} | {
            tuple(d) for d in repo.get("object_dirs") or ()
        }
        files = {tuple(f) for f in repo.get("object_files") or ()}
        if not any(
            r.get("what") == "objects"
            and (_identity(r) in stores or (r.get("file_dev"), r.get("file_ino")) in files)
            for r in reads
        ):
            continue
        known = {tuple(k) for k in repo.get("known") or ()}
        heads = [
            r
            for r in reads
            if r.get("what") == "head"
            and r.get("type") in ("file", "other")
            and not is_state_read(r)
        ]
        if process["exec"] is not None and not heads and repo.get("head_file", True):
            # git opens a HEAD file to take a folder as a git directory; a HEAD that is a
            # symbolic link it reads with readlink, which the tracer does not see (a task
            # repository whose own HEAD is a link is a finding of git_guard already)
            out.append(
                _read_finding(
                    str(repo.get("path")),
                    f"git ({command}) read the task repository's objects ({repo.get('path')}) "
                    "without opening its HEAD (a HEAD of its own that is a symbolic link?)",
                )
            )
        for r in reads:
            if r.get("what") not in ("head", "ref") or r.get("type") not in ("file", "other"):
                continue  # a folder lists names; a path that named nothing read nothing
            if is_state_read(r):
                continue  # ORIG_HEAD, MERGE_HEAD ...: judged by what they name (trace_beside)
            if _identity(r) in known or _worktree_head(r, repo):
                continue
            what = "HEAD" if r["what"] == "head" else "reference"
            named = f" naming {str(r.get('content', '')).strip()[:80]!r}" if "content" in r else ""
            out.append(
                _read_finding(
                    str(r.get("resolved") or r.get("path")),
                    f"git ({command}) read the task repository's objects ({repo.get('path')}) "
                    f"through a {what} that is not the task repository's{named}",
                )
            )
        out += beside_findings(reads, process["exec"], repo, repos, command)
    return out


def _store_behind_a_link(row: dict[str, Any]) -> bool:
    """An object-store read the tracer could not walk whose path goes through ``/proc`` or
    ``/dev`` (``/proc/self/root/...``, ``/proc/self/cwd/...``, ``/dev/fd/N``: links the tracer,
    outside the sandbox's PID namespace, cannot follow). A store git merely looked for and did
    not find (a loose object's folder, alternates) has an ordinary path and is not one."""
    if row.get("what") != "objects" or not row.get("unresolved"):
        return False
    path = posixpath.normpath("/" + str(row.get("path") or "").lstrip("/"))
    return path.startswith(("/proc/", "/dev/")) or path in ("/proc", "/dev")


def _identity(row: dict[str, Any]) -> tuple[Any, Any]:
    return (row.get("dev"), row.get("ino"))


def _worktree_head(row: dict[str, Any], repo: dict[str, Any]) -> bool:
    """A linked worktree's HEAD of the task repository that names what its HEAD names."""
    if row.get("what") != "head":
        return False
    where = posixpath.dirname(posixpath.dirname(str(row.get("resolved") or "")))
    if where != posixpath.join(str(repo.get("path")), "worktrees"):
        return False
    text = str(row.get("content", "")).strip()
    if text.strip("0") == "" and len(text) in (40, 64):
        return True  # the placeholder git writes while it makes the worktree: names no commit
    return bool(text) and text in (repo.get("head"), repo.get("head_commit"))


def _read_finding(path: str, change: str) -> dict[str, Any]:
    return {"kind": "git_state", "path": path, "change": change}
