"""Where things are in the leak audit's replay: its own folders inside the sandbox, and where the
agent's checkout was (split off :mod:`evotree.harness.audit.replay` on its seam).

A trajectory's steps name the checkout by the agent's path (SWE-bench's ``/testbed``, a
container's ``/repo``); the replay puts its copy there, and links to it at the other paths the
steps ``cd`` to (:func:`_agent_roots`), never over the system the sandbox binds nor over its own
folders (:data:`_SYSTEM_PATHS`). ``worlds`` is a :class:`~evotree.harness.audit.replay.ReplayWorlds`
(typed ``Any`` here: this module sits below the replay, which imports it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: where the steps and their outputs sit inside the sandbox
_INSIDE = "/.evotree-replay"
#: the pristine world (the work tree without ``.git``), read-only, copied into place first
_WORLD = "/.evotree-replay-world"
#: where the steps' outputs are written inside the sandbox (a sized tmpfs),
_OUT = "/.evotree-replay-out"
#: the driver's own folder (a sized tmpfs the steps' nested sandboxes cover with an empty one)
_DRV = "/.evotree-replay-driver"


def _linked_on_the_way(root: Path, path: Path) -> bool:
    rel = path.relative_to(root)
    here = root
    for part in rel.parts[:-1]:
        here = here / part
        if here.is_symlink():
            return True
    return False


#: a checkout path a trajectory names is never one of these, nor inside one, nor above one
#: (the system the sandbox binds, the kernel's, the replay's own folders)
_SYSTEM_PATHS = (
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/proc", "/dev",
    "/sys", "/run", "/boot", "/var", "/tmp/home", _INSIDE, _WORLD, _OUT, "/.evotree-replay-driver",
)  # fmt: skip
#: ... and never one of these itself (a tmpfs of the sandbox; a folder inside one is allowed)
_TMPFS_PATHS = ("/tmp", "/var/tmp", "/dev/shm")
#: ``cd`` to an absolute path, as a step's first word or after ``&&``, ``;``, ``|``, ``(``
_CD_ABS = re.compile(
    r"(?:^|[;&|(\n{]|\bthen|\bdo)\s*cd\s+(?:--\s+)?"
    r"""(["']?)(/[^\s;&|()<>"'`$\\*?\[\]~]*)\1(?=$|[\s;&|)])"""
)


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _agent_root(worlds: Any, commands: Sequence[str], prompt: str | None = None) -> str | None:
    """Where the agent's checkout was, when its steps name another path than the auditor's
    (SWE-bench's ``/testbed``, a container's ``/repo``): the first of :func:`_agent_roots`;
    None: the copy stays at the auditor's path."""
    roots = _agent_roots(worlds, commands, prompt)
    return roots[0] or None if roots else None


def _agent_roots(worlds: Any, commands: Sequence[str], prompt: str | None = None) -> list[str]:
    """The paths the agent's checkout may have been at, the copy's first ("": the auditor's
    own), then up to :data:`_MAX_LINKS` others, each a link to the copy in the sandbox: the
    folder the task's prompt says the repository was uploaded to (SWE-bench's
    ``<uploaded_files>``) first, then the absolute paths the steps ``cd`` to, the most often
    first (the first on a tie), each cut to the shortest prefix under which the rest is a
    folder of the checkout (``cd /testbed/src`` → ``/testbed``). A decoy named as often as the
    checkout (``cd /root`` before ``cd /testbed && ...``) no longer takes the checkout's place:
    both reach the copy. A path that would cover the system (``/``, ``/usr``, ``/etc``,
    ``/proc``, ``/tmp`` itself, one above them, anything with ``..`` or not absolute) or that
    bwrap could not be given (a NUL, a lone surrogate, too long) is passed over before any is
    looked for on disk (a system path costs nothing and counts against no cap); at most
    :data:`_MAX_CD_PATHS` distinct paths, the most named first, are looked for. The
    trajectory's author controls these paths: they only place the copy and links inside the
    sandbox's own mount namespace, never over what the sandbox binds."""
    found: dict[str, None] = {}
    for m in _UPLOADED.finditer(prompt or ""):
        verdict = _checkout_at(worlds, m.group(1) or m.group(2))
        if verdict is not None:
            found[verdict] = None
            break
    # the path most often cd'd to (an agent goes back to its checkout: ``cd /testbed && ...``
    # step after step; a library's folder or a build folder once or twice), the first on a tie
    named_counts: dict[str, int] = {}
    for command in commands:
        for m in _CD_ABS.finditer(command):
            named = m.group(2)
            if named in named_counts:
                named_counts[named] += 1
            elif _plausible(named):
                named_counts[named] = 1
    looked = sorted(named_counts, key=lambda n: -named_counts[n])[:_MAX_CD_PATHS]
    counts: dict[str, int] = {}
    for named in sorted(looked, key=list(named_counts).index):
        verdict = _checkout_at(worlds, named)
        if verdict is not None:
            counts[verdict] = counts.get(verdict, 0) + named_counts[named]
    for path in sorted(counts, key=lambda p: -counts[p]):
        found.setdefault(path, None)
    roots: list[str] = []
    for path in found:
        real = path or str(worlds.root)
        if any(
            _inside(real, r or str(worlds.root)) or _inside(r or str(worlds.root), real)
            for r in roots
        ):
            continue  # one inside another: the first holds it
        roots.append(path)
        if len(roots) > _MAX_LINKS:
            break
    return roots


#: at most this many other paths of the agent's checkout are links to the copy
_MAX_LINKS = 8


def _plausible(named: str) -> bool:
    """Whether a ``cd`` path may name a checkout at all (no disk looked at): not the system's,
    no NUL, no lone surrogate, not too long (:func:`_checkout_at` says the rest)."""
    if "\0" in named or len(named) > _MAX_PATH:
        return False
    try:
        named.encode("utf-8")
    except UnicodeEncodeError:
        return False
    bare = "/" + "/".join(p for p in named.split("/") if p)
    return not any(_inside(bare, s) for s in _SYSTEM_PATHS)


#: at most this many distinct ``cd`` paths of a trajectory are looked at, each at most this long
_MAX_CD_PATHS = 64
_MAX_PATH = 1024
#: SWE-bench's prompt: where the repository was uploaded
_UPLOADED = re.compile(
    r"<uploaded_files>\s*(/[^\s<>]+?)/?\s*</uploaded_files>"
    r"|\buploaded an? [\w -]{0,40}?repository in the directory (/[^\s<>'\"`]+?)/?[.,]?(?:\s|$)"
)


def _checkout_at(worlds: Any, named: str) -> str | None:
    """The checkout's path ``named`` (a ``cd``'s, the prompt's) points to; "" when it is the
    auditor's own checkout (the copy stays there); None when it is passed over."""
    import posixpath

    try:
        size = len(named.encode("utf-8"))
    except UnicodeEncodeError:
        return None  # a lone surrogate: no path bwrap is given
    parts = [p for p in named.split("/") if p]
    if not parts or any(p in (".", "..") for p in parts):
        return None  # ``/`` or a path with ``..``: never bound over
    if "\0" in named or size > _MAX_PATH or len(parts) > 64 or any(len(p) > 255 for p in parts):
        return None  # no folder any checkout was in (bwrap could not make it)
    for k in range(1, len(parts) + 1):
        rest = parts[k:]
        here = worlds.real.joinpath(*rest) if rest else worlds.real
        try:
            if not rest or (here.is_dir() and not _linked_on_the_way(worlds.real, here / "x")):
                break
        except OSError:
            return None
    path = posixpath.join("/", *parts[:k])
    root = str(worlds.root)
    if _inside(path, root) or _inside(root, path):
        return ""  # the auditor's own checkout
    if any(_inside(path, s) or _inside(s, path) for s in _SYSTEM_PATHS):
        return None  # the system's: the step runs there as it is
    if path in _TMPFS_PATHS or any(_inside(t, path) for t in _TMPFS_PATHS):
        return None
    return path
