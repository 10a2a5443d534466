"""The seccomp tracer's rows (one JSON object per reported call) as trace rows
(:func:`merge_seccomp`), for :mod:`evotree.harness.audit.trace`."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["merge_seccomp"]


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
