"""strace's text as trace rows (:func:`parse_strace`): the exec and connect rows of ``strace -f``
output, each exec with the working directory its process was in, rebuilt from forks and
``chdir`` (the strace tracer of :mod:`evotree.harness.audit.trace`)."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["parse_strace"]

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
