"""Program identity of the trace's exec rows: which ran the machine's git, by content or name
(:func:`git_identities`, :func:`identify`), whatever argv it was called with."""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
from typing import Any

__all__ = ["git_identities", "identify"]


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
