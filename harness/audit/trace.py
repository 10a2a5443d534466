"""The runtime trace of a sandboxed phase: what really ran, read like a trajectory.

A static reading of commands can be walked around (a program that runs git itself, a command
built at run time). So the phase sandbox (:mod:`evotree.harness.sandbox`, ``SandboxSpec.trace``)
can run bubblewrap under ``strace -f --seccomp-bpf``: a tracer that lives *outside* the sandbox,
in a PID namespace the sandboxed processes cannot see, follows every process they start, and
cannot be detached from inside (a tracee cannot untrace itself; no environment variable, git
config or ``-c`` option reaches it). Every ``execve`` that succeeded — git by any name or path,
started by a shell, Python, ``eval`` or anything else — is recorded with its argv, working
directory and exit status, and so is every ``connect`` to an internet address.

:func:`parse_strace` turns strace's output into rows; :func:`write_trace` writes them as
``evidence/<phase>/exec_trace.jsonl`` (after the phase, so the run's evidence manifest binds it):

``{"kind": "exec", "pid": 12, "path": "/usr/bin/git", "argv": ["git", "log", "--all"], "cwd": "/w", "exit": 0}``
``{"kind": "connect", "pid": 13, "family": "AF_INET", "address": "1.1.1.1", "port": 443, "result": "ENETUNREACH"}``

The audit reads such a file as a trajectory (format ``trace``): each exec is a step (its argv
re-joined as a command line; the trajectory rules apply, git's above all), each connect to a
non-loopback address a step ``connect() ADDRESS:PORT``, which the network rule flags.

Tamper evidence. The tracer's own file is opened close-on-exec outside the sandbox (no
process of the phase holds a descriptor to it), each of its rows carries ``seq`` and its last row,
written after bwrap exited, is ``{"kind": "end", "rows": N, "sha256": H}`` (H: the SHA-256 of
every byte before it). :func:`check_raw` checks that (for strace's text: that the sandbox's first
process's exit was recorded). :func:`write_trace` seals ``exec_trace.jsonl`` the same way (every
row a ``seq``, then an ``end`` row with the count, the hash and whether the raw trace was
intact); :func:`read_trace_rows` raises :class:`TraceTampered` when the seal does not hold or the
raw trace was cut — the audit then fails closed (``audit.check_error``).
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import re
import stat
from dataclasses import dataclass, field
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evotree.harness.audit.git_argv import _git_split, _positionals
from evotree.harness.audit.trace_beside import beside_findings, is_state_read
from evotree.harness.audit.trace_written import written_findings

__all__ = [
    "AGENT_SESSIONS",
    "GIT_SERVERS",
    "TRACE_FILE",
    "TRACE_SYSCALLS",
    "TraceTampered",
    "check_raw",
    "git_identities",
    "identify",
    "judge_git_reads",
    "judge_git_spellings",
    "parse_strace",
    "merge_seccomp",
    "read_trace_rows",
    "seal_rows",
    "write_trace",
]

#: Where each traced ``evotree agent`` session's evidence lands, under ``.evotree/``:
#: ``agent-sessions/<session>/exec_trace.jsonl`` and ``session.json`` (the versions it could touch).
AGENT_SESSIONS = "agent-sessions"

#: The file of a phase's trace under ``evidence/<phase>/``.
TRACE_FILE = "exec_trace.jsonl"
#: What the tracer stops on (``--seccomp-bpf``: nothing else costs a context switch).
TRACE_SYSCALLS = "execve,execveat,connect,chdir,fchdir,clone,clone3,fork,vfork"

_LINE = re.compile(r"^(\d+)\s+(.*)$")
_CALL = re.compile(r"^(\w+)\((.*)\)\s+=\s+(-?\d+|\?)(?:\s+(\w+))?.*$", re.S)
_EXIT = re.compile(r"^\+\+\+ (?:exited with (\d+)|killed by (\w+)).*\+\+\+$")
_STR = re.compile(r'"((?:[^"\\]|\\.)*)"(\.\.\.)?')
_ESC = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "v": "\v",
    "f": "\f",
    "a": "\a",
    "b": "\b",
    "\\": "\\",
    '"': '"',
}


def _unescape(text: str) -> str:
    def one(m: re.Match[str]) -> str:
        e = m.group(1)
        if e[0] in "01234567":
            return chr(int(e, 8))
        if e[0] == "x":
            return chr(int(e[1:], 16))
        return _ESC.get(e, e)

    out = re.sub(r"\\([0-7]{1,3}|x[0-9a-fA-F]{2}|.)", one, text)
    try:  # strace escapes each byte: the bytes are UTF-8 text (invalid bytes "?", as the seccomp tracers)
        raw = out.encode("latin-1")
    except UnicodeEncodeError:
        return out
    return raw.decode("utf-8", "surrogateescape").encode("utf-8", "replace").decode("utf-8")


def _strings(text: str) -> list[str]:
    return [_unescape(m.group(1)) for m in _STR.finditer(text)]


def _argv(args: str) -> tuple[str, list[str]]:
    """(path, argv) of an ``execve`` argument list: ``"/usr/bin/git", ["git", "log"], ...``."""
    m = _STR.match(args)
    if not m:
        return "", []
    path = _unescape(m.group(1))
    rest = args[m.end() :]
    start = rest.find("[")
    if start < 0:
        return path, []
    depth, end = 0, len(rest)
    i = start
    while i < len(rest):  # the closing bracket of the argv array (strings may hold brackets)
        c = rest[i]
        if c == '"':
            s = _STR.match(rest, i)
            i = s.end() if s else i + 1
            continue
        if c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
            if depth == 0:
                end = i
                break
        i += 1
    return path, _strings(rest[start:end])


def _connect(args: str) -> dict[str, Any] | None:
    family = re.search(r"sa_family=(AF_\w+)", args)
    if not family:
        return None
    out: dict[str, Any] = {"family": family.group(1)}
    if family.group(1) == "AF_INET":
        port = re.search(r"sin_port=htons\((\d+)\)", args)
        addr = re.search(r'sin_addr=inet_addr\("([^"]+)"\)', args)
        out.update(address=addr.group(1) if addr else "", port=int(port.group(1)) if port else 0)
    elif family.group(1) == "AF_INET6":
        port = re.search(r"sin6_port=htons\((\d+)\)", args)
        addr = re.search(r'inet_pton\(AF_INET6,\s*"([^"]+)"', args)
        out.update(address=addr.group(1) if addr else "", port=int(port.group(1)) if port else 0)
    elif family.group(1) == "AF_UNIX":
        path = re.search(r'sun_path=(@?)"((?:[^"\\]|\\.)*)"', args)
        out.update(address=(path.group(1) + _unescape(path.group(2))) if path else "")
    return out


def parse_strace(text: str, cwd: str = "/") -> list[dict[str, Any]]:
    """Rows of the trace (module doc) from ``strace -f`` output; ``cwd``: the working directory
    of the first process (the phase's, as bubblewrap sets it).

    Working directories are rebuilt from ``chdir``/``fchdir`` and forks: a child starts where its
    parent was. strace names each line by the host pid but a fork's result by the pid inside the
    sandbox's namespace (translating it costs a scan of /proc per fork: 4x the phase's time), so
    children are matched to forks by order — both numberings grow together. Where the counts do
    not match (processes in a nested namespace), the remaining children are matched in the order
    they appear; a directory there may be approximate.
    """
    scan = _scan_strace(text)
    parent_of = _fork_parents(scan)
    return _rows_with_cwds(scan, parent_of, cwd)


@dataclass
class _StraceScan:
    """strace's lines read in file order: the events, where each pid first appears, the forks."""

    events: list[tuple[str, str, Any]] = field(default_factory=list)  # (pid, kind, data)
    first_seen: dict[str, int] = field(default_factory=dict)
    #: (event index, parent pid, child pid inside the namespace; negative: a host pid printed)
    clones: list[tuple[int, str, int]] = field(default_factory=list)


def _scan_strace(text: str) -> _StraceScan:
    """The events of strace's output, with interrupted calls (``<unfinished ...>``, then
    ``<... resumed>``) joined back into one line."""
    scan = _StraceScan()
    pending: dict[str, str] = {}
    for raw in text.splitlines():
        m = _LINE.match(raw)
        if not m:
            continue
        pid, rest = m.group(1), m.group(2)
        scan.first_seen.setdefault(pid, len(scan.events))
        if rest.endswith("<unfinished ...>"):
            pending[pid] = rest[: -len("<unfinished ...>")].rstrip()
            continue
        resumed = re.match(r"^<\.\.\. \w+ resumed>(.*)$", rest, re.S)
        if resumed:
            rest = pending.pop(pid, "") + resumed.group(1)
        ex = _EXIT.match(rest)
        if ex:
            status = int(ex.group(1)) if ex.group(1) is not None else f"killed by {ex.group(2)}"
            scan.events.append((pid, "exit", status))
            continue
        call = _CALL.match(rest)
        if call:
            _scan_call(scan, pid, rest, call)
    return scan


def _scan_call(scan: _StraceScan, pid: str, rest: str, call: re.Match[str]) -> None:
    """The event of one completed call: a fork, a successful chdir/fchdir or exec, a connect to
    an internet address (other calls are no event)."""
    name, args, result, errno = call.group(1), call.group(2), call.group(3), call.group(4)
    events = scan.events
    if name in ("clone", "clone3", "fork", "vfork"):
        host = re.search(r"/\* (\d+) in strace's PID NS \*/", rest)  # with --decode-pids=pidns
        if host:
            scan.clones.append((len(events), pid, -int(host.group(1))))
        elif result.isdigit():
            scan.clones.append((len(events), pid, int(result)))
        events.append((pid, "clone", None))
    elif name == "chdir" and result == "0":
        target = _strings(args)
        if target:
            events.append((pid, "chdir", target[0]))
    elif name == "fchdir" and result == "0":
        fd_path = re.match(r"^\d+<(.*)>$", args.strip())
        if fd_path:
            events.append((pid, "chdir", fd_path.group(1)))
    elif name in ("execve", "execveat") and result == "0":
        if name == "execveat":
            args = args.split(",", 1)[1] if "," in args else args
        path, argv = _argv(args.strip())
        row = {"kind": "exec", "pid": int(pid), "path": path, "argv": argv, "cwd": None}
        events.append((pid, "exec", {**row, "exit": None}))
    elif name == "connect":
        info = _connect(args)
        if info is not None and info["family"] in ("AF_INET", "AF_INET6"):
            outcome = "0" if result == "0" else (errno or result)
            events.append(
                (pid, "connect", {"kind": "connect", "pid": int(pid), **info, "result": outcome})
            )


def _fork_parents(scan: _StraceScan) -> dict[str, int]:
    """Which fork made which process (module doc): child pid -> index of its clone."""
    first_seen, clones = scan.first_seen, scan.clones
    pids = sorted(first_seen, key=first_seen.__getitem__)
    parent_of: dict[str, int] = {}  # child pid -> index of its clone in `clones`
    for k, (_, parent, inner) in enumerate(clones):
        # a host pid: printed translated (negative here), or a fork of the first process
        # (bubblewrap, outside the sandbox's namespace)
        host = str(-inner) if inner < 0 else str(inner) if pids and parent == pids[0] else None
        if host is not None and host in first_seen:
            parent_of[host] = k
    direct = set(parent_of.values())
    clones_in = [(k, c) for k, c in enumerate(clones) if k not in direct and c[2] >= 0]
    children = [p for p in pids[1:] if p not in parent_of]
    hosts = [int(c) for c in children]
    wrapped = (
        bool(hosts) and max(hosts) - min(hosts) > 1 << 14
    )  # pid numbers wrapped around meanwhile
    if (
        clones_in and len(clones_in) == len(children) and not wrapped
    ):  # both grow together: match by rank
        for child, (k, _) in zip(
            sorted(children, key=int), sorted(clones_in, key=lambda kc: kc[1][2])
        ):
            parent_of[child] = k
    else:  # in the order they appear
        for child, (k, _) in zip(children, clones_in):
            parent_of[child] = k
    return parent_of


def _rows_with_cwds(scan: _StraceScan, parent_of: dict[str, int], cwd: str) -> list[dict[str, Any]]:
    """The exec and connect rows in order, each exec with the directory its process was in
    (inherited at the fork, moved by chdir) and its process's exit status."""
    clones = scan.clones
    pids = sorted(scan.first_seen, key=scan.first_seen.__getitem__)
    at_clone: dict[int, str] = {}  # index of a clone -> the parent's directory then
    clone_index = {c[0]: k for k, c in enumerate(clones)}
    cwds: dict[str, str] = {pids[0]: cwd} if pids else {}
    last_exec: dict[str, dict[str, Any]] = {}
    rows: list[dict[str, Any]] = []
    for index, (pid, kind, data) in enumerate(scan.events):
        if pid not in cwds:
            k = parent_of.get(pid)
            if k is not None and k in at_clone:
                cwds[pid] = at_clone[k]
            elif k is not None:  # printed before its parent's fork returned
                cwds[pid] = cwds.get(clones[k][1], cwd)
            else:
                cwds[pid] = cwd
        here = cwds[pid]
        if kind == "clone":
            k = clone_index.get(index)
            if k is not None:
                at_clone[k] = here
        elif kind == "chdir":
            cwds[pid] = posixpath.normpath(posixpath.join(here, data))
        elif kind == "exec":
            data["cwd"] = here
            rows.append(data)
            last_exec[pid] = data
        elif kind == "connect":
            rows.append(data)
        elif kind == "exit":
            row = last_exec.pop(pid, None)
            if row is not None:
                row["exit"] = data
    return rows


def merge_seccomp(text: str) -> list[dict[str, Any]]:
    """Rows of the seccomp tracer (one JSON object per reported call) as trace rows.

    An exec row's argv is read from the caller's memory before the kernel copies it; the
    tracer reads the process's command line again at its next reported call after the exec (an
    ``execed`` row: a dynamic program's first open, before its own code ran). When that differs,
    it is what ran: it becomes the row's ``argv`` (the one read at the call kept as
    ``argv_read``; a thread rewrote it in between). Each ``exit`` gives its status to the last
    exec of its process; when the program's command line at exit differs from ``argv`` (the
    program rewrote its own), the row keeps both (``argv_at_exit``). Rows are matched by process
    (``tgid``: a thread's exec runs under its process's pid). ``loader_env``: the variables that
    loaded code into the machine's git (``LD_PRELOAD``, ``LD_AUDIT``, ``GCONV_PATH``); such a git's
    opens of git storage are open rows."""
    rows: list[dict[str, Any]] = []
    last: dict[int, dict[str, Any]] = {}
    for line in text.split(
        "\n"
    ):  # not splitlines(): U+2028 or U+0085 inside a JSON string is no line end
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if not isinstance(row, dict):
            continue
        row.pop(
            "seq", None
        )  # the raw file's order (check_raw); the sealed file numbers its own rows
        kind = row.get("kind")
        if kind == "exec":
            row["exit"] = None
            rows.append(row)
            last[row.get("tgid", row.get("pid", -1))] = row
        elif kind == "execed":
            target = last.get(row.get("pid", -1))
            if target is not None:
                cmdline = row.get("cmdline")
                if isinstance(cmdline, list) and cmdline and cmdline != target.get("argv"):
                    if row.get("same_exe"):  # the exec failed, or ran the same program: kept beside
                        target["argv_at_exit"] = cmdline
                    else:  # the program changed: this is what the kernel ran
                        target["argv_read"] = target.get("argv")
                        target["argv"] = cmdline
                for key in (
                    "exe",
                    "exe_dev",
                    "exe_ino",
                    "exe_links",
                    "exe_size",
                    "exe_sha256",
                    "loader_env",
                    "git_env",
                ):
                    if key in row:
                        target[key] = row[key]
        elif kind == "connect":
            row.setdefault("result", "attempted")
            rows.append(row)
        # git storage opened (gitread: by the machine's git); ptrace: a process of the phase
        # asked to trace another (the machine's git is then exempt only while untraced);
        # gitwrite: a name under a .git folder made or changed by a program (trace_written)
        elif kind in ("open", "gitread", "ptrace", "gitwrite"):
            rows.append(row)
        elif kind == "exit":
            target = last.pop(row.get("tgid", row.get("pid", -1)), None)
            if target is not None:
                target["exit"] = row.get("status")
                cmdline = row.get("cmdline")
                if cmdline and cmdline != target.get("argv") and "argv_at_exit" not in target:
                    target["argv_at_exit"] = cmdline
                for key in (
                    "exe",
                    "exe_dev",
                    "exe_ino",
                    "exe_links",
                    "exe_size",
                    "exe_sha256",
                    "mapped",
                    "mapped_sha256",
                ):
                    if key in row:
                        target[key] = row[key]
    return rows


#: Where git is installed on the machines evotree supports (its own program and the one of its
#: helpers' folder); :func:`git_identities` also asks PATH.
_GIT_PATHS = (
    "/usr/bin/git",
    "/bin/git",
    "/usr/local/bin/git",
    "/usr/lib/git-core/git",
    "/usr/libexec/git-core/git",
)
#: Dynamic loaders: a program they start is one of the files they map (``mapped``), not the exe.
_LOADER = re.compile(r"(^|/)ld(-linux[^/]*|-musl[^/]*)?\.so(\.\d+)*$")


def git_identities(extra: tuple[str, ...] = ()) -> frozenset[str]:
    """SHA-256 of the git programs of this machine (``_GIT_PATHS``, ``git`` on PATH, ``extra``): the
    sandbox binds the host's ``/usr``, so a git run inside — by any name, from any path, a copy,
    through ``ld.so`` or from a memfd — has one of these contents."""
    import shutil

    found = set()
    for path in (*_GIT_PATHS, shutil.which("git") or "", *extra):
        if path:
            digest = _file_sha256(path)
            if digest:
                found.add(digest)
    return frozenset(found)


def _file_sha256(path: str) -> str | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return _sha256_cached(
        os.path.realpath(path), info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns
    )


_HASHES: dict[tuple[str, int, int, int, int], str | None] = {}


def _sha256_cached(path: str, dev: int, ino: int, size: int, mtime: int) -> str | None:
    key = (path, dev, ino, size, mtime)
    if key not in _HASHES:
        digest = hashlib.sha256()
        try:
            with open(path, "rb") as fh:
                while chunk := fh.read(1 << 20):
                    digest.update(chunk)
            _HASHES[key] = digest.hexdigest()
        except OSError:
            _HASHES[key] = None
    return _HASHES[key]


def identify(rows: list[dict[str, Any]], gits: frozenset[str]) -> list[dict[str, Any]]:
    """Name each exec row by what the kernel ran, not by its argv, in place.

    A row whose loaded program (``exe_sha256``) or one of whose executable mappings
    (``mapped_sha256``: a program ``ld.so`` started) has the content of a git of this machine
    (``gits``), or whose program is named ``git``, is a git row: ``program: "git"``,
    ``identified_by`` says how, and when its argv does not start with ``git`` (``exec -a``, a
    renamed copy, ``ld.so /usr/bin/git``, a memfd) the argv is rewritten to ``["git", <its
    arguments>]`` (the argv as called kept as ``argv_called``) so that the audit's git rules read
    it. A program run from an anonymous or deleted file (``/memfd:...``, ``... (deleted)``) is
    marked ``anonymous_exe`` and ``unreadable`` (an ``audit.trace_incomplete`` finding): what it
    was cannot be read back from a path.
    """
    for row in rows:
        if row.get("kind") != "exec" or "exe" not in row:
            continue
        exe = str(row.get("exe") or "")
        argv = [str(a) for a in row.get("argv") or []]
        mapped = [str(m) for m in row.get("mapped") or []]
        mapped_sha = list(row.get("mapped_sha256") or [])
        how = None
        program_at = 0  # where the program's own name is in argv
        if row.get("exe_sha256") in gits:
            how = "exe sha256"
        elif posixpath.basename(exe.removesuffix(" (deleted)")) == "git":
            how = "exe name"
        if _LOADER.search(exe.removesuffix(" (deleted)")) and how is None:
            for path, digest in zip(mapped, mapped_sha, strict=False):
                if digest in gits or posixpath.basename(path.removesuffix(" (deleted)")) == "git":
                    how = "mapped sha256" if digest in gits else "mapped name"
                    program_at = next(
                        (
                            k
                            for k, a in enumerate(argv)
                            if k
                            and posixpath.basename(a)
                            == posixpath.basename(path.removesuffix(" (deleted)"))
                        ),
                        1,
                    )
                    break
        if exe.startswith("/memfd:") or exe.endswith(" (deleted)"):
            row["anonymous_exe"] = exe
            row["unreadable"] = True
        if how is None:
            continue
        row["program"] = "git"
        row["identified_by"] = how
        if not argv or posixpath.basename(argv[0]) != "git" or program_at:
            row["argv_called"] = argv
            sub = _dashed(argv[program_at] if argv else "")
            row["argv"] = ["git", *sub, *argv[program_at + 1 :]]
        again = row.get("argv_at_exit")
        if isinstance(again, list) and again and posixpath.basename(str(again[0])) != "git":
            row["argv_at_exit"] = [
                "git",
                *_dashed(str(again[program_at]) if program_at < len(again) else ""),
                *again[program_at + 1 :],
            ]
    return rows


def _dashed(name: str) -> list[str]:
    """The subcommand a git program's own name selects (``git-upload-pack`` runs ``upload-pack``,
    as git itself reads ``argv[0]``), or nothing."""
    base = posixpath.basename(name)
    return [base[4:]] if base.startswith("git-") and len(base) > 4 else []


#: git's server side: each advertises every reference with its hash and serves (or, for
#: receive-pack, accepts) the objects any of them reaches; judged as reading every reference
GIT_SERVERS = frozenset({"upload-pack", "receive-pack", "upload-archive", "http-backend", "daemon"})
#: subcommands for which a lone ``-`` is ``@{-1}`` (the branch HEAD's reflog was on before)
_DASH_IS_PREVIOUS = frozenset({"checkout", "switch", "merge", "rebase", "cherry-pick", "revert"})
#: subcommands that, given no revision, act on the current branch's upstream (``@{u}``)
_UPSTREAM_BY_DEFAULT = frozenset({"merge", "rebase", "cherry"})
#: options after which such a subcommand names no revision at all (a step of one in progress)
_IN_PROGRESS = frozenset(
    {"--abort", "--continue", "--quit", "--skip", "--edit-todo", "--show-current-patch", "--root"}
)


def judge_git_spellings(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Give each git exec row the spelling the audit's git rules judge, in place.

    Some git commands read beyond HEAD without naming a revision: git's server side
    (``upload-pack``, ``receive-pack``, ``upload-archive``, ``http-backend``, ``daemon``, under
    any name: ``git-upload-pack`` selects its subcommand by its own name) advertises every
    reference and serves what they reach, so it is judged as ``git log --all``; a lone ``-`` of
    ``checkout``/``switch``/``merge``/``rebase``/``cherry-pick``/``revert`` (and ``worktree add
    PATH -``) is ``@{-1}``, the reflog's previous branch; ``merge``, ``rebase`` and ``cherry``
    with no revision act on the upstream, which any config (the repository's, ``~/.gitconfig``,
    ``GIT_CONFIG_*`` in the environment, none of which the trace holds) may have set: they are
    judged as naming ``@{u}``. The argv as run is kept as ``argv_run``, and ``judged_as`` says
    why. A program named ``git-<server>`` that is not git (the separate ``git-http-backend``) is
    judged the same way."""
    for row in rows:
        if row.get("kind") != "exec":
            continue
        argv = [str(a) for a in row.get("argv") or []]
        if not argv:
            continue
        name = posixpath.basename(argv[0])
        if name != "git":
            dashed = _dashed(name) or _dashed(str(row.get("exe") or "").removesuffix(" (deleted)"))
            if not dashed or dashed[0] not in GIT_SERVERS:
                continue
            judged: list[str] | None = ["git", "log", "--all"]
            why = f"git {dashed[0]} advertises every reference and serves what they reach"
        else:
            judged, why = _judged_git(argv)
        if judged is not None and judged != argv:
            row.setdefault("argv_run", argv)
            row["argv"] = judged
            row["judged_as"] = why
    return rows


_PREVIOUS = "'-' is @{-1} (the reflog's previous branch)"


def _judged_git(argv: list[str]) -> tuple[list[str] | None, str]:
    sub, rest = _git_split(argv)
    head = argv[: len(argv) - len(rest)]
    if sub in GIT_SERVERS:
        return ["git", "log", "--all"], (
            f"git {sub} advertises every reference and serves what they reach"
        )
    if sub == "worktree" and rest[:1] == ["add"]:
        pos, _ = _positionals(rest[1:], sub)
        if len(pos) >= 2 and pos[1] == "-":
            at = len(rest) - 1 - rest[::-1].index("-")
            return head + rest[:at] + ["@{-1}"] + rest[at + 1 :], _PREVIOUS
        return None, ""
    if sub in _DASH_IS_PREVIOUS:
        cut = rest.index("--") if "--" in rest else len(rest)
        if "-" in rest[:cut]:
            fixed = [("@{-1}" if (k < cut and w == "-") else w) for k, w in enumerate(rest)]
            return head + fixed, _PREVIOUS
    in_progress = _IN_PROGRESS.intersection(w.split("=", 1)[0] for w in rest)
    if sub in _UPSTREAM_BY_DEFAULT and not in_progress:
        pos, _ = _positionals(rest, sub)
        if not pos:
            return head + rest + [
                "@{u}"
            ], f"git {sub} with no revision acts on the upstream (@{{u}})"
    return None, ""


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


def _history_env(row: dict[str, Any]) -> list[str]:
    """The variables of ``git_env`` judged wherever git runs (``GIT_COMMON_DIR`` and
    ``GIT_INDEX_FILE`` are judged by the repository whose objects git read: trace_beside)."""
    return [
        str(v)
        for v in row.get("git_env") or ()
        if not str(v).startswith(("GIT_COMMON_DIR=", "GIT_INDEX_FILE="))
    ]


def _history_finding(row: dict[str, Any]) -> dict[str, Any]:
    """The machine's git run with a variable that shows it another history (a graft file, another
    base of replacement references: ``git_env``, read from the environment the kernel copied)."""
    command = " ".join(str(a) for a in row.get("argv") or ["git"])[:200]
    names = ", ".join(v[:120] for v in _history_env(row))
    return _read_finding(
        str(row.get("path")), f"git ({command}) ran with {names}: a history other than its refs'"
    )


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


class TraceTampered(ValueError):
    """A trace whose seal does not hold (rows cut, truncated, reordered or changed), or whose raw
    tracer output was cut: it cannot be read as a record of what ran (the audit fails closed)."""


def check_raw(data: bytes | str) -> str | None:
    """Why the tracer's own output ``data`` is not whole (``None``: it is).

    The seccomp tracer's rows: ``seq`` 0, 1, 2, ... in order, then one ``end`` row whose ``rows``
    and ``sha256`` match every byte before it, and nothing after it. strace's text: the sandbox's
    first process (bwrap, the first pid of the file) has its exit recorded.
    """
    raw = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
    if not raw.strip():
        return (
            "the tracer wrote nothing (not even its end record): the trace was cut or never written"
        )
    if raw.lstrip().startswith(b"{"):
        return _check_seccomp(raw)
    text = raw.decode("utf-8", "replace")
    first = _LINE.match(text.lstrip().split("\n", 1)[0])
    if first is None:
        return "strace's output does not start with a process's line"
    pid = first.group(1)
    ended = re.compile(rf"^{pid}\s+\+\+\+ (?:exited with \d+|killed by \w+)", re.M)
    if not ended.search(text):
        return f"strace's output lacks the exit of the sandbox's first process ({pid}): the trace was cut"
    return None


def _check_seccomp(raw: bytes) -> str | None:
    digest = hashlib.sha256()
    lines = raw.split(b"\n")
    for seq, line in enumerate(lines):
        try:
            row = json.loads(line)
        except ValueError:
            return f"row {seq} of the tracer's file is not JSON: the trace was cut or edited"
        if not isinstance(row, dict) or row.get("seq") != seq:
            found = row.get("seq") if isinstance(row, dict) else None
            return (
                f"the tracer's rows are out of sequence at row {seq} (seq {found}): rows were removed, "
                "reordered or inserted"
            )
        if row.get("kind") == "end":
            if row.get("rows") != seq or row.get("sha256") != digest.hexdigest():
                return "the tracer's end record does not match its rows (count or hash): the trace was changed"
            if lines[seq + 1 :] != [b""]:
                return "rows follow the tracer's end record"
            if row.get("drained") is False:
                return "the tracer did not serve every reported call before it stopped"
            return None
        digest.update(line + b"\n")
    return f"the tracer's end record is missing after {len(lines)} line(s): the trace was cut (or the tracer killed)"


def seal_rows(
    rows: list[dict[str, Any]], *, problem: str | None = None, tracer: str = "seccomp"
) -> str:
    """The text of a sealed ``exec_trace.jsonl``: each row with its ``seq``, then the ``end`` row
    (count, SHA-256 of the lines before it, ``intact`` and the ``problem`` of the raw trace)."""
    lines = []
    for seq, row in enumerate(rows):
        lines.append(
            json.dumps({**{k: v for k, v in row.items() if k != "seq"}, "seq": seq}) + "\n"
        )
    body = "".join(lines)
    end: dict[str, Any] = {
        "kind": "end",
        "seq": len(rows),
        "rows": len(rows),
        "sha256": hashlib.sha256(body.encode("utf-8")).hexdigest(),
        "tracer": tracer,
        "intact": problem is None,
    }
    if problem is not None:
        end["problem"] = problem
    return body + json.dumps(end) + "\n"


def _sandbox_start(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """strace's first row is bubblewrap started by evotree (strace's own child, before any code
    of the phase): its command line is evotree's binds, the locked parts of task repositories
    among them, not something the phase ran. It is kept as ``sandbox_argv``, judged as
    ``bwrap``."""
    first = rows[0] if rows else {}
    if first.get("kind") == "exec" and posixpath.basename(str(first.get("path"))) == "bwrap":
        rows[0]["sandbox_argv"] = rows[0].get("argv")
        rows[0]["argv"] = ["bwrap"]
    return rows


def write_trace(
    raw: str | os.PathLike[str],
    out: str | os.PathLike[str],
    cwd: str = "/",
    *,
    extra: list[dict[str, Any]] | None = None,
    task_repos: Sequence[dict[str, Any]] = (),
) -> list[dict[str, Any]]:
    """Convert the tracer's file ``raw`` (the seccomp tracer's JSON rows or strace's output) into
    ``out``, sealed (:func:`seal_rows`; a raw trace that is not whole, :func:`check_raw`, is said in
    the seal and fails the audit closed). ``extra``: rows observed outside the tracer, sealed after
    its rows (``git_state``: a task repository changed during the phase, ``harness/git_guard.py``).
    A file already at ``out`` — one the phase itself may have planted — is replaced, never
    followed. ``task_repos``: the phase's task repositories, against which git's reads are
    judged (:func:`judge_git_reads`; its findings are sealed after the tracer's rows). Returns
    the rows."""
    try:
        fd = os.open(raw, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        data = b""
    else:
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise TraceTampered(f"{raw} is not a regular file")
            data = fh.read()
    text = data.decode("utf-8", errors="replace")
    seccomp = text.lstrip().startswith("{")
    if seccomp:
        rows = identify(merge_seccomp(text), git_identities())
        rows += judge_git_reads(rows, task_repos)
    else:
        rows = _sandbox_start(parse_strace(text, cwd))
    rows += extra or []
    problem = check_raw(data)
    target = Path(out)
    if target.is_symlink() or target.exists():
        target.unlink()
    tmp = target.with_name(target.name + ".tmp")
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    with open(tmp, "x", encoding="utf-8") as fh:
        fh.write(seal_rows(rows, problem=problem, tracer="seccomp" if seccomp else "strace"))
    os.replace(tmp, target)
    return rows


def read_trace_rows(text: str) -> list[dict[str, Any]]:
    """The exec, connect, open and git read rows of a sealed trace file's text
    (:func:`seal_rows`), git rows in the spelling the audit judges (:func:`judge_git_spellings`);
    a ``git_state`` row (a task repository changed during the phase, or read through a HEAD of
    the phase's own: :func:`judge_git_reads`) is read as an open row of what changed.

    Raises :class:`TraceTampered` when the seal does not hold — a row missing, reordered, added
    or changed, the end row missing (the file was cut) — or when the seal says the tracer's own
    output was cut: such a trace is no record of what ran.
    """
    rows: list[dict[str, Any]] = []
    digest = hashlib.sha256()
    lines = text.split("\n")
    for seq, line in enumerate(lines):
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise TraceTampered(
                f"line {seq + 1} of the trace is not JSON: it was cut or edited"
            ) from exc
        if not isinstance(row, dict) or row.get("seq") != seq:
            raise TraceTampered(
                f"the trace's rows are out of sequence at row {seq}: rows were removed, "
                "reordered or inserted (or it was not written by evotree)"
            )
        if row.get("kind") == "end":
            if row.get("rows") != seq or row.get("sha256") != digest.hexdigest():
                raise TraceTampered(
                    "the trace's end row does not match its rows (count or hash): it was changed"
                )
            if lines[seq + 1 :] != [""]:
                raise TraceTampered("rows follow the trace's end row")
            if row.get("intact") is not True:
                raise TraceTampered(
                    f"the tracer's own output was not whole: {row.get('problem') or 'unknown'}"
                )
            return judge_git_spellings(rows)
        digest.update(line.encode("utf-8", "surrogateescape") + b"\n")
        if row.get("kind") in ("exec", "connect", "open", "gitread", "ptrace"):
            rows.append(row)
        elif row.get("kind") == "git_state":  # judged as git storage touched without git
            rows.append(
                {
                    "kind": "open",
                    "path": f"{row.get('path')} ({row.get('change')})",
                    "exe": "the phase (the task repository's .git, compared after the phase)",
                    "git_state": row.get("change"),
                }
            )
    raise TraceTampered(
        f"the trace has no end row after {len(lines)} line(s): it was cut or truncated"
    )
