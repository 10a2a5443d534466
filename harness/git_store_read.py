"""Host git on a task's git directory, read so that its files cannot make it lie: the low layer
of :mod:`evotree.harness.git_prune` and :mod:`evotree.harness.git_relations`.

git runs outside the sandbox here, on a git directory an earlier phase may have written, so it
never reads that directory's own config, links or pointers: :func:`_git` runs it with no system
or global config and git's own shortcuts off, a task's store read as a C-quoted alternate
(:func:`_quote_path`) of a store of evotree's own; :func:`_check_self_contained` refuses a
directory that points git elsewhere; :func:`_minimal_config` reads the task's config without its
includes into evotree's own (and the allowlisted one the box's copy holds, :func:`_kept_config`);
:func:`_head_text` and :func:`_read_regular` read its files without following a link, and
:func:`_head_state` (:func:`_own_base`) the commit its HEAD names as git reads it (a linked
worktree's through its ``commondir``, :func:`_common_dir`). Every call shares one deadline
(:data:`_DEADLINE`).
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


def _own_base(gd: Path) -> str | None:
    """The id HEAD of the store ``gd`` names, read without git and no link followed, as git
    reads it (:func:`_head_state`); ``None`` where it names none or cannot be read."""
    return _head_state(gd)[0]


def _head_state(gd: Path) -> tuple[str | None, bool]:
    """(the id HEAD of the store ``gd`` names, whether HEAD names a commit that could not be
    read), read as git reads it, no link followed: a detached HEAD's id, or its branch's — a
    loose reference's first word (git ignores what follows it; any case), a loose reference
    that is itself symbolic followed (five deep), else the branch's ``packed-refs`` line (one
    id: lines naming it twice with two ids cannot be told apart). Unreadable: a HEAD of garbage,
    a branch name git refuses (a reftable store's ``refs/heads/.invalid``), a reference or
    ``packed-refs`` there but behind a link or too big (git reads it: the s19 red team's M4,
    the s20 HEAD red team's H3). A linked worktree's git directory (a ``commondir``) keeps its
    branches in the store that file names, as git reads them (:func:`_common_dir`; the
    per-worktree ``refs/worktree``, ``refs/bisect``, ``refs/rewritten`` in itself): a
    ``commondir`` that names no folder that can be read leaves a branch unreadable (the s20
    HEAD red team's H4). ``(None, False)``: no HEAD at all (an object folder) or an unborn
    branch."""
    if not os.path.lexists(gd / "HEAD"):
        return None, False
    try:
        branch, detached = _head_text(gd)
    except (PruneError, OSError, UnicodeError):
        return None, True
    if branch is None:
        found = _first_id(detached or "")
        return found, found is None
    common = _common_dir(gd)
    for _ in range(5):
        if any(part.startswith(".") or part.endswith(".lock") for part in branch.split("/")):
            return None, True
        where = gd if branch.startswith(_PER_WORKTREE) else common
        if where is None:
            return None, True
        raw = _read_regular(where, branch, 4096)
        if raw is not None:
            text = raw.decode("ascii", "replace").split("\n", 1)[0].strip()
            if text.startswith("ref:"):
                branch = text[4:].strip()
                continue
            found = _first_id(text)
            return found, found is None
        if os.path.lexists(where / branch):
            return None, True
        if common is None:
            return None, True
        packed = _read_regular(common, "packed-refs", 256 << 20)
        if packed is None:
            return None, os.path.lexists(common / "packed-refs")
        ids = set()
        for line in packed.decode("utf-8", "replace").splitlines():
            words = line.split()
            if len(words) == 2 and words[1] == branch:
                ids.add(_first_id(words[0]))
        if len(ids) > 1 or None in ids:
            return None, True
        return (ids.pop(), False) if ids else (None, False)
    return None, True


#: The references a linked worktree keeps in its own git directory (git's per-worktree refs);
#: every other one lies in the store its ``commondir`` names.
_PER_WORKTREE = ("refs/worktree/", "refs/bisect/", "refs/rewritten/")


def _common_dir(gd: Path) -> Path | None:
    """The folder git reads the references of the git directory ``gd`` from: ``gd`` itself, or
    the one its ``commondir`` names (relative to ``gd`` or absolute: a linked worktree's git
    directory, whose branches lie in the main store), read as git reads it: the whole file but
    its trailing line ends (spaces kept), its links resolved before any ``..`` (the s21 relate
    red team's R11: ``hop/..`` with ``hop`` a link, `` store`` with a leading space, read
    elsewhere than git reads them, left the branch unborn); ``None`` where that file is there
    but cannot be read without following a link, names nothing, or names no folder."""
    if not os.path.lexists(gd / "commondir"):
        return gd
    raw = _read_regular(gd, "commondir", 4096)
    text = raw.decode("utf-8", "surrogateescape").rstrip("\r\n") if raw is not None else ""
    if not text or "\0" in text:
        return None
    common = Path(os.path.realpath(gd / text))
    return common if os.path.isdir(common) else None


def _first_id(text: str) -> str | None:
    """The object id ``text`` starts with (its first word, hex of either case, lowered)."""
    words = text.split()
    word = words[0].lower() if words else ""
    return word if _is_id(word) else None
