"""Host git on a task's git directory, read so that its files cannot make it lie: the low layer
of :mod:`evotree.harness.git_prune` and :mod:`evotree.harness.git_relations`.

git runs outside the sandbox here, on a git directory an earlier phase may have written, so it
never reads that directory's own config, links or pointers: :func:`_git` runs it with no system
or global config and git's own shortcuts off, a task's store read as a C-quoted alternate
(:func:`_quote_path`) of a store of evotree's own; :func:`_check_self_contained` refuses a
directory that points git elsewhere; :func:`_minimal_config` reads the task's config without its
includes into evotree's own (and the allowlisted one the box's copy holds, :func:`_kept_config`);
:func:`_head_text` and :func:`_read_regular` read its files without following a link. Every call
shares one deadline (:data:`_DEADLINE`).
"""

from __future__ import annotations

import contextvars
import os
import stat
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from evotree.harness import safe_files
from evotree.harness.audit.repo_objects import GIT, git_env

__all__ = ["PruneError", "PrunedCopy"]

#: The largest file copied as it is (config, info files, shallow) and the largest index.
_SMALL = 1 << 20
_HEX = frozenset("0123456789abcdef")


class PruneError(RuntimeError):
    """A task repository that could not be copied at its base (the phase then does not see it)."""


@dataclass(frozen=True)
class PrunedCopy:
    """What :func:`evotree.harness.git_prune.prune_copy` made: the copy's path, the base it
    was pruned at (``None`` for a repository with no commit), the references kept, and how its
    index was made (``copied``, ``rebuilt`` from the base's tree, or ``none``)."""

    path: Path
    base: str | None
    refs: int
    index: str


def _git(
    git_dir: Path,
    *args: str,
    stdin: bytes | None = None,
    objects: Path | tuple[Path, ...] | None = None,
    primary: Path | None = None,
) -> tuple[int, bytes, str]:
    """git on ``git_dir`` alone, without the shortcuts a repository's files could make lie and
    with no system or global config. ``objects``: the task's store (or stores: a nested one and
    its enclosing repository's pruned copy, :func:`~evotree.harness.git_prune.prune_nested`),
    read as alternates of ``primary`` (the copy's own store, where git writes whatever it
    writes: nothing is written into the task's store, and a copy on another filesystem is no
    rename across it)."""
    env = git_env(git_dir) | {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    if objects is not None:
        if primary is None:
            raise ValueError("the task's store is read as an alternate of a primary store")
        env["GIT_OBJECT_DIRECTORY"] = str(primary)
        # quoted as git documents for this ':'-separated list: a path holding ':' (a folder
        # 's:t' an earlier phase made) is never split into other stores
        stores = (objects,) if isinstance(objects, Path) else objects
        env["GIT_ALTERNATE_OBJECT_DIRECTORIES"] = ":".join(_quote_path(str(o)) for o in stores)
    deadline = _DEADLINE.get()
    timeout = 600.0 if deadline is None else min(600.0, deadline - time.monotonic())
    if timeout <= 0:
        raise PruneError("the time allowed for pruning git directories is spent")
    try:
        proc = subprocess.run(
            [*GIT, *args],
            input=stdin,
            capture_output=True,
            env=env,
            cwd=git_dir,
            check=False,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as exc:
        raise PruneError(f"host git took over {timeout:.0f} s on {git_dir}") from exc
    lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
    return proc.returncode, proc.stdout, lines[-1] if lines else ""


#: When the pruning under way must be over (``time.monotonic``); ``None``: 600 s a git call.
_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "evotree_prune_deadline", default=None
)


def _quote_path(path: str) -> str:
    """``path`` C-quoted, as git reads a quoted entry of ``GIT_ALTERNATE_OBJECT_DIRECTORIES``
    (one that starts with ``"``): never split at ':', a newline or quote kept in the name."""
    out = []
    for ch in path:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\{ord(ch):03o}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _read_regular(git_dir: Path, rel: str | Path, limit: int) -> bytes | None:
    """The bytes of the regular file ``rel`` of ``git_dir``, no link followed on the way
    (:func:`evotree.harness.safe_files.read_regular`); ``None`` when it is absent, not a
    regular file, behind a link or larger than ``limit``."""
    try:
        data = safe_files.read_regular(git_dir, rel, limit=limit + 1)
    except (safe_files.UnsafeFile, OSError):
        return None
    return data if len(data) <= limit else None


def _is_id(text: str) -> bool:
    return len(text) in (40, 64) and set(text) <= _HEX


def _head_text(git_dir: Path) -> tuple[str | None, str | None]:
    """(the branch HEAD names, or ``None`` when detached; the id a detached HEAD names)."""
    raw = _read_regular(git_dir, "HEAD", 4096)
    if raw is None and os.path.islink(git_dir / "HEAD"):
        # git takes a HEAD link whose target starts "refs/" for a symbolic reference
        target = os.readlink(git_dir / "HEAD")
        raw = f"ref: {target}".encode() if target.startswith("refs/") else None
    if raw is None:
        raise PruneError(f"{git_dir / 'HEAD'} is not a regular file")
    text = raw.decode("utf-8", "replace").strip()
    if text.startswith("ref:"):
        branch = text[4:].strip()
        if (
            not branch.startswith("refs/")
            or ".." in branch.split("/")
            or any(c.isspace() for c in branch)
        ):
            raise PruneError(f"{git_dir / 'HEAD'} names {branch!r}, not a reference")
        return branch, None
    if not _is_id(text):
        raise PruneError(f"{git_dir / 'HEAD'} holds neither a reference nor an id")
    return None, text


#: Entries that point git at another repository or store: a directory holding one is not
#: copied (git outside the box would follow them to what the box never saw).
_POINTERS = ("commondir", "gitdir", "objects/info/alternates", "objects/info/http-alternates")
#: The most entries of ``objects/`` and ``refs/`` checked; a larger directory is not copied.
_MAX_CHECKED = 2_000_000


def _check_self_contained(git_dir: Path, *, pointers: bool = True) -> None:
    """:class:`PruneError` unless git reading ``git_dir`` reads only ``git_dir``: no pointer to
    another repository or store, ``objects/`` and ``refs/`` folders whose every entry is a
    regular file or a folder (a link, FIFO or device is refused), and ``packed-refs``,
    ``shallow`` regular files where they are there. ``pointers=False``: the pointers are not
    checked (a store read for its own objects alone, its alternates left unread)."""
    for name in _POINTERS if pointers else ():
        if os.path.lexists(git_dir / name):
            raise PruneError(f"{git_dir / name} points git elsewhere: not self-contained")
    for name in ("packed-refs", "shallow", "config"):
        path = git_dir / name
        if os.path.lexists(path) and not stat.S_ISREG(os.lstat(path).st_mode):
            raise PruneError(f"{path} is not a regular file")
    checked = 0
    for top in ("objects", "refs"):
        root = git_dir / top
        if not stat.S_ISDIR(os.lstat(root).st_mode):
            raise PruneError(f"{root} is not a folder")
        stack = [root]
        while stack:
            for entry in os.scandir(stack.pop()):
                checked += 1
                if checked > _MAX_CHECKED:
                    raise PruneError(f"{git_dir} has over {_MAX_CHECKED:,} objects and references")
                mode = entry.stat(follow_symlinks=False).st_mode
                if stat.S_ISDIR(mode):
                    stack.append(Path(entry.path))
                elif not stat.S_ISREG(mode):
                    raise PruneError(f"{entry.path} is not a regular file or a folder")


#: The config keys the copy keeps (lower-cased section and name; ``*`` any subsection): what
#: honest work with a repository needs. Everything else — a program git runs
#: (``core.fsmonitor``, ``core.hooksPath``, ``core.sshCommand``, ``core.pager``,
#: ``core.editor``, ``filter.*``, ``diff.*.textconv``, ``alias.*``...) or a file it reads
#: (``include.*``, ``core.excludesFile``...) — is dropped: the judge's own git runs in the copy.
_KEPT_CONFIG = frozenset(
    {
        "core.repositoryformatversion",
        "core.bare",
        "core.filemode",
        "core.logallrefupdates",
        "core.ignorecase",
        "core.precomposeunicode",
        "core.symlinks",
        "core.autocrlf",
        "core.eol",
        "core.safecrlf",
        "core.quotepath",
        "core.sparsecheckout",
        "core.sparsecheckoutcone",
        "core.abbrev",
        "extensions.objectformat",
        "remote.*.url",
        "remote.*.fetch",
        "branch.*.remote",
        "branch.*.merge",
        "submodule.*.url",
        "submodule.*.active",
        "user.name",
        "user.email",
    }
)
#: git-lfs's own filter commands, kept as they are (a repository of LFS files reads as one).
_LFS_FILTER = {
    "filter.lfs.clean": "git-lfs clean -- %f",
    "filter.lfs.smudge": "git-lfs smudge -- %f",
    "filter.lfs.process": "git-lfs filter-process",
    "filter.lfs.required": "true",
}


def _config_value(text: str) -> str:
    """``text`` as a quoted config value."""
    return (
        '"'
        + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
        + '"'
    )


def _kept_config(entries: list[tuple[str, str | None]]) -> str:
    """The config text the copy holds: the entries of :data:`_KEPT_CONFIG` (and git-lfs's
    filters as git-lfs writes them), every other one dropped (module doc)."""
    sections: dict[tuple[str, str | None], list[str]] = {}
    for key, value in entries:
        section, _, rest = key.partition(".")
        sub, _, name = rest.rpartition(".")
        pattern = f"{section}.*.{name}" if sub else key
        if key in _LFS_FILTER:
            if value != _LFS_FILTER[key]:
                continue
        elif pattern not in _KEPT_CONFIG and key not in _KEPT_CONFIG:
            continue
        if not section.isalnum() or not name.replace("-", "").isalnum():
            continue
        if any(c in sub for c in "\n\0"):
            continue
        line = f"\t{name}\n" if value is None else f"\t{name} = {_config_value(value)}\n"
        sections.setdefault((section, sub or None), []).append(line)
    text = ""
    for (section, sub), lines in sections.items():
        if sub is None:
            text += f"[{section}]\n"
        else:
            quoted = sub.replace("\\", "\\\\").replace('"', '\\"')
            text += f'[{section} "{quoted}"]\n'
        text += "".join(lines)
    return text


def _minimal_config(git_dir: Path, scratch: Path) -> tuple[str, str]:
    """(evotree's own config for git run on the task's store: its format version and the
    extensions git needs to read it (the object format), read from the task's config without
    its includes — a reference storage git reads elsewhere (reftable) is refused; the config
    the copy holds for the box's git: :func:`_kept_config`)."""
    raw = _read_regular(git_dir, "config", _SMALL)
    if raw is None:
        raise PruneError(f"{git_dir / 'config'} is not a regular file of at most 1 MiB")
    original = scratch / "task-config"
    original.write_bytes(raw)
    rc, out, _ = _git(
        scratch, "config", "--file", str(original), "--no-includes", "--null", "--list"
    )
    entries: list[tuple[str, str | None]] = []
    for item in out.decode("utf-8", "replace").split("\0") if rc == 0 else []:
        key, newline, value = item.partition("\n")
        if key:  # a key with no value (implicit true) is listed with no newline
            entries.append((key.lower() if key.count(".") < 2 else key, value if newline else None))
    extensions = {}
    for key, value in entries:
        if key.lower().startswith("extensions."):
            extensions[key.split(".", 1)[1].lower()] = (value or "").strip()
    format_ = extensions.pop("objectformat", "")
    if format_ not in ("", "sha1", "sha256"):
        raise PruneError(f"{git_dir}'s object format {format_!r} is not known")
    if "refstorage" in extensions and extensions["refstorage"] != "files":
        raise PruneError(f"{git_dir} keeps its references in {extensions['refstorage']!r}")
    text = f"[core]\n\trepositoryformatversion = {1 if format_ else 0}\n\tbare = true\n"
    if format_:
        text += f"[extensions]\n\tobjectformat = {format_}\n"
    kept = [(k, v) for k, v in entries if not k.lower().startswith("extensions.")]
    kept += [("extensions.objectformat", format_)] if format_ else []
    return text, _kept_config(kept)


def _object_format(git_dir: Path) -> str:
    """The object format of ``git_dir`` (``sha1`` or ``sha256``), read from its config as
    :func:`_minimal_config` reads it; :class:`PruneError` where it cannot be told."""
    with tempfile.TemporaryDirectory(prefix="evotree-format-") as scratch:
        config, _ = _minimal_config(git_dir, Path(scratch))
    return "sha256" if "\tobjectformat = sha256\n" in config else "sha1"


def _is_folder(path: Path) -> bool:
    """A folder itself, not a link to one."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False
