"""Steps re-run as bash ran them, over the checkout with and without the future's lines.

A rule that models what a command read (``grep``'s options, ``tail``'s forms, the locale, what
``xargs`` is handed) trails the next spelling. With a trusted task repository the audit also
asks the shell itself: every step of a trajectory is run again, in order, by one bash (its
``cd``, variables and files carry over as they did for the agent), in a bubblewrap sandbox over
a copy of the checkout — twice over the checkout as it is, once over a copy in which every line
of a hidden file that holds the future (a line a future commit adds, a piece of one, an indexed
line of the provenance index) has its letters and digits rotated (``a``→``b``, ``9``→``0``;
the same length, spaces and punctuation). Compressed hidden files (gzip, xz, bzip2) are
rotated inside.

What a step printed **depends on the future** when the two worlds part:

* its output recorded: what it printed is found, line by line in order, in what both runs over
  the checkout printed (the replay reproduced it), and not in what the run over the rotated
  copy printed — no world without the future's lines prints it;
* no output (a shell history): both runs over the checkout print the same, and the run over
  the rotated copy prints otherwise.

Such a step is an ``audit.future_content`` hit (high), whatever the command was: ``tail +2``,
``LC_ALL=C grep``, a ``bin/grep`` the agent wrote, ``xargs`` of a listing, ``rev``, a count.
A step whose replay did not reproduce what it printed, timed out or failed to start is not
judged here (the rules judge it). The replay only adds findings; it clears none.

The sandbox: new user, PID, network (none), IPC, UTS and cgroup namespaces, no capabilities, a
clean environment (``PATH``, ``HOME``, ``LANG=C.UTF-8``, ``TZ=UTC``), the system read-only, a
private ``/tmp``, the copy bound read-write where the checkout is (its absolute paths hold),
CPU, memory, file size and process limits and a wall-clock limit per run. It sees nothing of
the host but the system: not the trajectory's file, not the audit's folders, not ``$HOME``.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evotree.harness.audit.hits import Hit
from evotree.harness.audit.steps import Trajectory
from evotree.harness.safe_files import UnsafeFile, read_regular

__all__ = ["ReplayWorlds", "replay_hits", "rotated", "worlds_for"]

#: a replay of one trajectory (all its steps, one world) may take this long
RUN_SECONDS = 20.0
#: the checkout is copied only up to this size (a larger one: no replay)
MAX_CHECKOUT_BYTES = 512 << 20
MAX_CHECKOUT_FILES = 50_000
#: a hidden file is rotated up to this size (a larger one is left as it is)
MAX_HIDDEN_BYTES = 64 << 20
#: at most this much of each step's output is read back
MAX_OUTPUT_BYTES = 1 << 20
#: where the steps and their outputs sit inside the sandbox
_INSIDE = "/.evotree-replay"
#: the pristine world (the work tree without ``.git``), read-only, copied into place first
_WORLD = "/.evotree-replay-world"
_LIMITS = ["--cpu=30", "--as=4294967296", "--fsize=268435456", "--nproc=512", "--nofile=1024"]

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")
#: what varies from one run to the next whatever the files hold: durations, clock times,
#: addresses, process ids
_VOLATILE = re.compile(
    r"\b\d+(?:\.\d+)?\s?(?:ms|s|sec|seconds?)\b"
    r"|\b\d{1,2}:\d{2}:\d{2}(?:\.\d+)?\b"
    r"|\b0x[0-9a-fA-F]{6,}\b"
    r"|\bpid[ =:]\s?\d+\b",
)
_ROTATE = str.maketrans(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
    "bcdefghijklmnopqrstuvwxyzaBCDEFGHIJKLMNOPQRSTUVWXYZA1234567890",
)
_COMPRESSED: tuple[tuple[bytes, Any], ...] = (
    (b"\x1f\x8b", gzip),
    (b"\xfd7zXZ\x00", lzma),
    (b"BZh", bz2),
)


def rotated(line: str, keep: frozenset[str] | set[str] = frozenset()) -> str:
    """``line`` with each ASCII letter and digit moved one on (``z``→``a``, ``9``→``0``): the
    same length, spaces and punctuation, none of the same words — except the words of
    ``keep`` (the base's own words: a count of ``axles`` stays what it was)."""
    if not keep:
        return line.translate(_ROTATE)
    return _WORDS.sub(
        lambda m: m.group(0) if m.group(0) in keep else m.group(0).translate(_ROTATE), line
    )


_WORDS = re.compile(r"[A-Za-z0-9_]+")


@dataclass
class ReplayWorlds:
    """Two pristine copies of one checkout: as it is, and with the future's lines rotated."""

    root: Path  # the checkout (the copies are bound here inside the sandbox)
    #: the checkout's ``.git`` folder, bound read-only at ``root/.git`` (not copied: the steps
    #: read it as the agent did, and cannot change the task repository); None: copied with it
    gitdir: Path | None
    real: Path
    neutral: Path
    rotated_lines: int  # how many lines were rotated (0: the worlds are the same)
    tmp: tempfile.TemporaryDirectory[str]
    #: what each run printed, by the steps' commands (a trajectory audited twice runs once)
    runs: dict[tuple[str, ...], tuple[list[str | None], ...]] = field(default_factory=dict)


_WORLDS: weakref.WeakKeyDictionary[Any, ReplayWorlds | None] = weakref.WeakKeyDictionary()


def worlds_for(ancestry: Any) -> ReplayWorlds | None:
    """The replay's two copies of ``ancestry``'s checkout (made once per ancestry), or None: an
    untrusted or bare repository, no hidden path, nothing of the future in the hidden files, no
    sandbox here, or a checkout too large to copy."""
    if ancestry in _WORLDS:
        return _WORLDS[ancestry]
    worlds = None
    try:
        worlds = _make_worlds(ancestry)
    finally:
        _WORLDS[ancestry] = worlds
    return worlds


def _make_worlds(ancestry: Any) -> ReplayWorlds | None:
    if not getattr(ancestry, "trusted", False) or not ancestry.hidden_paths:
        return None
    workdir = getattr(ancestry.repo, "workdir", None)
    if not workdir or _bwrap() is None:
        return None
    root = Path(workdir).resolve()
    dotgit = root / ".git"
    gitdir = dotgit if dotgit.is_dir() and not dotgit.is_symlink() else None
    if not _small_enough(root):
        return None
    tmp = tempfile.TemporaryDirectory(prefix="evotree-replay-")
    real, neutral = Path(tmp.name) / "real", Path(tmp.name) / "neutral"
    skip = shutil.ignore_patterns(".git") if gitdir is not None else None
    try:
        shutil.copytree(root, real, symlinks=True, ignore=_top_only(root, skip))
        shutil.copytree(root, neutral, symlinks=True, ignore=_top_only(root, skip))
        future = _future_text(ancestry.index())
        count = 0
        for rel in _hidden_files(neutral, ancestry.hidden_paths):
            count += _rotate_file(neutral / rel, future)
    except OSError:
        tmp.cleanup()
        return None
    if count == 0:
        tmp.cleanup()
        return None
    return ReplayWorlds(root, gitdir, real, neutral, count, tmp)


def _top_only(root: Path, skip: Any) -> Any:
    """``skip`` (the ``.git`` folder, bound read-only instead of copied) at the top only."""
    if skip is None:
        return None

    def ignore(folder: str, names: list[str]) -> set[str]:
        return set(skip(folder, names)) if Path(folder) == root else set()

    return ignore


def _small_enough(root: Path) -> bool:
    files = size = 0
    for dirpath, dirnames, filenames in os.walk(root):
        files += len(filenames) + len(dirnames)
        for name in filenames:
            try:
                size += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                continue
        if files > MAX_CHECKOUT_FILES or size > MAX_CHECKOUT_BYTES:
            return False
    return True


def _hidden_files(root: Path, hidden_paths: Sequence[str]) -> list[Path]:
    """The regular files (not links) under each hidden path of the copy, relative to it."""
    found: dict[Path, None] = {}
    for hidden in hidden_paths:
        clean = hidden.strip().strip("/")
        if not clean or clean.startswith("..") or "/../" in f"/{clean}/":
            continue
        top = root / clean
        if top.is_symlink() or not top.exists():
            continue
        candidates = [top] if top.is_file() else sorted(top.rglob("*"))
        for path in candidates:
            if path.is_file() and not path.is_symlink() and not _linked_on_the_way(root, path):
                found[path.relative_to(root)] = None
    return list(found)


def _linked_on_the_way(root: Path, path: Path) -> bool:
    rel = path.relative_to(root)
    here = root
    for part in rel.parts[:-1]:
        here = here / part
        if here.is_symlink():
            return True
    return False


@dataclass
class _FutureText:
    """What of the future a hidden file's text may hold, judged one line (a text file) or one
    span (a binary file: only the matched text is rotated, so a database or a core dump keeps
    its structure)."""

    holds: Callable[[str], bool]
    spans: re.Pattern[str] | None
    #: the words the base's text files hold: kept as they are in a rotated line, so what a
    #: command probes with the base's words (``grep -c axles``) reads the same in both worlds
    #: and only the future's own words part them
    keep: set[str]


#: a binary file is searched for spans only up to this size
_SPAN_BYTES = 16 << 20


def _future_text(index: Any) -> _FutureText:
    added = index.added()
    pieces = index.pieces()

    def holds(line: str) -> bool:
        if not line.strip():
            return False
        if line.strip() in added or index.selected_future([line]) is not None:
            return True
        return any(piece in line for piece in pieces) if pieces else False

    wants = sorted({*index.lines, *added, *pieces}, key=len, reverse=True)
    spans = re.compile("|".join(re.escape(w) for w in wants if w.strip())) if wants else None
    keep: set[str] = set()
    for tree_repo, tree_base in getattr(index, "_trees", ()):
        keep |= base_words(tree_repo, tree_base)
    return _FutureText(holds, spans, keep)


def base_words(repo: Any, base: str) -> set[str]:
    """Every word (letters, digits, ``_``) of the text files of ``base``'s tree (files over
    4 MB and binary ones skipped)."""
    import pygit2

    words: set[str] = set()
    stack = [repo.revparse_single(base).peel(pygit2.Commit).tree]
    while stack:
        tree = stack.pop()
        for entry in tree:
            if entry.type_str == "tree":
                stack.append(repo[entry.id])
                continue
            if entry.type_str != "blob" or entry.filemode == pygit2.GIT_FILEMODE_COMMIT:
                continue
            blob = repo[entry.id]
            if blob.size > 4_000_000 or blob.is_binary:
                continue
            words.update(_WORDS.findall(blob.data.decode("utf-8", "replace")))
    return words


def _rotate_text(data: bytes, future: _FutureText) -> tuple[bytes, int]:
    """``data`` with the future's lines rotated (a binary file: the future's spans)."""
    if b"\0" in data:
        if future.spans is None or len(data) > _SPAN_BYTES:
            return data, 0
        text = data.decode("latin-1")
        count = 0

        def turn(match: re.Match[str]) -> str:
            nonlocal count
            turned = rotated(match.group(0), future.keep)
            count += turned != match.group(0)
            return turned

        new = future.spans.sub(turn, text)
        return new.encode("latin-1"), count
    out: list[bytes] = []
    count = 0
    for raw in data.split(b"\n"):
        text = raw.decode("utf-8", "surrogateescape")
        turned = rotated(text, future.keep) if future.holds(text) else text
        if turned != text:
            out.append(turned.encode("utf-8", "surrogateescape"))
            count += 1
        else:
            out.append(raw)
    return b"\n".join(out), count


def _rotate_file(path: Path, future: _FutureText) -> int:
    """Rotate the future's lines of one hidden file in place (inside a compressed one too)."""
    try:
        if path.stat().st_size > MAX_HIDDEN_BYTES:
            return 0
        data = path.read_bytes()
    except OSError:
        return 0
    for magic, codec in _COMPRESSED:
        if data.startswith(magic):
            try:
                inner = codec.decompress(data)
            except (OSError, EOFError, ValueError, lzma.LZMAError):
                return 0
            if len(inner) > MAX_HIDDEN_BYTES:
                return 0
            new, count = _rotate_text(inner, future)
            if count:
                path.write_bytes(codec.compress(new))
            return count
    new, count = _rotate_text(data, future)
    if count:
        path.write_bytes(new)
    return count


def _bwrap() -> str | None:
    from evotree.harness.sandbox_system import find_tool

    return find_tool("bwrap", None)


def _sandbox_argv(worlds: ReplayWorlds, pristine: Path, folder: Path) -> list[str]:
    from evotree.harness.sandbox_spec import SANDBOX_HOME
    from evotree.harness.sandbox_system import prlimit_path, system_args

    exe = _bwrap()
    assert exe is not None
    root = worlds.root
    return [
        exe,
        "--unshare-all",
        "--unshare-user",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--hostname",
        "evotree-replay",
        *system_args(False),
        "--bind",
        str(folder / "root"),
        str(root),
        *(["--ro-bind", str(worlds.gitdir), str(root / ".git")] if worlds.gitdir else []),
        "--bind",
        str(folder / "inside"),
        _INSIDE,
        "--ro-bind",
        str(pristine),
        _WORLD,
        "--clearenv",
        "--setenv",
        "PATH",
        "/usr/local/bin:/usr/bin:/bin",
        "--setenv",
        "HOME",
        SANDBOX_HOME,
        "--setenv",
        "LANG",
        "C.UTF-8",
        "--setenv",
        "TZ",
        "UTC",
        "--setenv",
        "TERM",
        "dumb",
        "--chdir",
        str(root),
        "--",
        prlimit_path(),
        *_LIMITS,
        "--",
        "/bin/bash",
        "--noprofile",
        "--norc",
        f"{_INSIDE}/driver.sh",
    ]


def _driver(count: int) -> str:
    """One bash copies the world into the checkout's place, then runs every step in order,
    each read from its own file and evaluated in the shell itself (``cd``, variables,
    functions carry over), its output to its own file."""
    lines = ["exec </dev/null", f"cp -a {_WORLD}/. . >/dev/null 2>&1 || exit 97"]
    for k in range(count):
        lines.append(
            f'builtin eval "$(< {_INSIDE}/in/{k})" </dev/null >{_INSIDE}/out/{k} 2>&1; '
            f": >{_INSIDE}/done/{k}"
        )
    return "\n".join(lines) + "\n"


def _run_worlds(worlds: ReplayWorlds, commands: Sequence[str]) -> tuple[list[str | None], ...]:
    """What each step printed in three runs started together, each over a fresh copy: the
    checkout twice, the rotated copy once (None: the step never finished)."""
    with tempfile.TemporaryDirectory(prefix="evotree-replay-run-") as tmp:
        runs = []
        for k, source in enumerate((worlds.real, worlds.real, worlds.neutral)):
            folder = Path(tmp) / str(k)
            runs.append((folder, _start(worlds, source, folder, commands)))
        deadline = time.monotonic() + RUN_SECONDS
        for _, proc in runs:
            if proc is None:
                continue
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        return tuple(
            _outputs(folder / "inside", len(commands))
            if proc is not None
            else [None] * len(commands)
            for folder, proc in runs
        )


def _start(
    worlds: ReplayWorlds, source: Path, folder: Path, commands: Sequence[str]
) -> subprocess.Popen[bytes] | None:
    inside = folder / "inside"
    (folder / "root").mkdir(parents=True)
    for sub in ("in", "out", "done"):
        (inside / sub).mkdir(parents=True)
    for k, command in enumerate(commands):
        (inside / "in" / str(k)).write_text(command, errors="surrogateescape")
    (inside / "driver.sh").write_text(_driver(len(commands)))
    try:
        return subprocess.Popen(
            _sandbox_argv(worlds, source, folder),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError:
        return None


def _outputs(inside: Path, count: int) -> list[str | None]:
    """What each step printed, read without following a link the steps may have left there
    (a link, a FIFO, a folder: not read, the step not judged)."""
    outputs: list[str | None] = []
    for k in range(count):
        try:
            read_regular(inside, f"done/{k}", limit=0)
            data = read_regular(inside, f"out/{k}", limit=MAX_OUTPUT_BYTES)
        except (OSError, UnsafeFile):
            outputs.append(None)
            continue
        outputs.append(data.decode("utf-8", "replace"))
    return outputs


def _lines(text: str) -> list[str]:
    """``text`` as the lines compared: colours, carriage returns, trailing spaces and what
    varies from run to run (durations, clock times, addresses) set aside; no blank lines."""
    out = []
    for raw in _ANSI.sub("", text).replace("\r", "").split("\n"):
        line = _VOLATILE.sub("<v>", raw.rstrip())
        if line:
            out.append(line)
    return out


def _in_order(wanted: Sequence[str], lines: Sequence[str]) -> int | None:
    """The index of the first of ``wanted`` not found in ``lines`` in order (None: all are)."""
    at = 0
    for k, line in enumerate(wanted):
        try:
            at = lines.index(line, at) + 1
        except ValueError:
            return k
    return None


def _judge(
    recorded: str | None, real: str | None, again: str | None, neutral: str | None
) -> str | None:
    """The line that shows a step's output depends on the future's lines, or None."""
    if real is None or again is None or neutral is None:
        return None
    first, second, other = _lines(real), _lines(again), _lines(neutral)
    if recorded is not None:
        seen = _lines(recorded)
        if not seen or _in_order(seen, first) is not None or _in_order(seen, second) is not None:
            return None  # the replay did not print what the agent saw
        missing = _in_order(seen, other)
        return None if missing is None else seen[missing]
    if first != second or first == other:
        return None
    for k, line in enumerate(first):
        if k >= len(other) or other[k] != line:
            return line
    return first[-1] if first else "(nothing printed)"


def replay_hits(traj: Trajectory, ancestry: Any) -> list[Hit]:
    """The steps of ``traj`` whose output, re-run as bash ran it over the checkout, depends on
    lines only the future holds (module doc); [] when there is nothing to replay."""
    commands = [step.command or ":" for step in traj.steps]
    if not commands or not any(step.command for step in traj.steps):
        return []
    worlds = worlds_for(ancestry)
    if worlds is None:
        return []
    key = tuple(commands)
    if key not in worlds.runs:  # the same steps audited again (recorded, then as a history)
        worlds.runs[key] = _run_worlds(worlds, commands)
    real, again, neutral = worlds.runs[key]
    hits = []
    for k, step in enumerate(traj.steps):
        if not step.command:
            continue
        line = _judge(step.output, real[k], again[k], neutral[k])
        if line is not None:
            hits.append(
                Hit(
                    "audit.future_content",
                    "high",
                    "re-run as bash ran it over the checkout, it prints otherwise when the "
                    "hidden files' future lines are changed: what it showed depends on the future",
                    step.command[:300],
                    output=line[:300],
                )
            )
    return hits
