"""Evidence that travels: a run's evidence as a git commit on ``refs/evotree/runs/<run_id>``.

``.evotree/runs/`` is ignored by git, so a clone lacks it and ``git clean -xdf`` deletes it. Each
finished run is therefore also *archived* in the repository's object store: its ``run.json``,
``<kind>.parquet``, ``evidence/`` and ``logs/`` (not ``candidate/``: that is the version's commit,
exported again on demand) become the tree of a parentless commit, and the ref
``refs/evotree/runs/<run_id>`` points to it. The commit is content-addressed and deterministic (a
fixed author, the run's end time): archiving the same evidence twice gives the same commit, and a
ref that already names other evidence is never moved (evidence is immutable; the ledger's
``run.finished`` manifest says which is right).

- ``evotree run`` archives the runs it finished (a failure to archive is a warning, never a failed
  run), so a ``git clean -xdf`` loses nothing: ``evotree pull`` writes the run directories back.
- ``evotree push [REMOTE]`` archives what is not archived yet and pushes every ref a clone needs
  (:data:`SHARE_REFSPECS`: the version branches, the ledger, the champion, memory, the judge
  store, the harness, the run evidence and the signed promotion tags
  ``refs/tags/evotree/promoted/*``); never forced: a ref git refuses is listed in ``rejected``.
- ``evotree pull [REMOTE]`` fetches the same refs into a staging namespace, then moves each local
  ref only forward (a ref missing here is created, a fast-forward is taken, a ref that is ahead
  here is kept, a diverged one — or a run ref naming other evidence — is refused and listed in
  ``rejected``), and materialises every run this machine lacks. What counts is still decided
  here: the ledger's manifest (evidence that differs from it is ``tampered``) and the run's
  provenance (:mod:`evotree.harness.provenance`: a run another workspace recorded is ``foreign``,
  shown and never counted, unless signed by a runner key the signed policy lists).

**Limits.** The remote decides nothing about sizes: the fetch runs with ``RLIMIT_FSIZE`` at
``[share] max_total_mb`` (a pack larger than that kills git before it is written whole; git
streams blobs over 1 MiB instead of holding them in memory), each blob is measured (its
header, never inflated) before it is written and refused above ``[share] max_object_mb``, and
the bytes one pull writes stay under ``max_total_mb``. Files are copied in 1 MiB chunks.

**Large runs.** A run whose archivable files exceed :data:`MAX_ARCHIVE_BYTES` does not go into
git. With a store (``evotree push --store URI``: a path, or an fsspec URL such as
``s3://bucket/prefix``) its files are copied to ``<URI>/evotree-archive/<run_id>/`` and the ref
holds only ``evotree-archive.json``: the URI and every file's size and sha256. ``evotree pull``
reads them back from **this workspace's** store (``--store``, else ``[executor].evidence_uri``),
never from the URI the pointer names (a remote would choose what this machine connects to),
refuses a file over its listed size or the caps, and a file whose hash differs. Without a store
such a run is listed as skipped, with the reason.
Pushed evidence holds what the run recorded, the judge's per-task results included: push it only
where the people who may see those results can read.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import resource
import stat
import subprocess
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pygit2

from evotree.core.config import Config
from evotree.core.errors import EvotreeError
from evotree.core.gitio import Git
from evotree.core.workspace import Workspace
from evotree.harness.records import RunRecord, RunStatus, runs_dir

__all__ = [
    "RUNS_REF_PREFIX",
    "MAX_ARCHIVE_BYTES",
    "POINTER",
    "SHARE_REFSPECS",
    "ShareError",
    "ShareResult",
    "archive_run",
    "archive_runs",
    "fetch_shared",
    "push_evidence",
    "pull_evidence",
    "run_ref",
]

RUNS_REF_PREFIX = "refs/evotree/runs/"
#: a run with more archivable bytes than this is not archived in git (use an evidence store)
MAX_ARCHIVE_BYTES = 256 * 1024 * 1024
#: what of a run directory is archived: the record, the compacted evidence, the raw evidence, the logs
_TOP_FILES = ("run.json", "signals.parquet", "rollouts.parquet", "evals.parquet")
_TREES = ("evidence", "logs")
_RUN_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,200}")
_AUTHOR = ("evotree", "evotree@localhost")
#: the one file of a ref whose evidence lives in a store (large runs)
POINTER = "evotree-archive.json"
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
#: every ref a clone needs, as push/fetch refspecs (never forced): the ledger, champion, memory,
#: judge store, harness and run evidence (refs/evotree/*), the version branches, the signed tags
SHARE_REFSPECS = (
    "refs/evotree/*:refs/evotree/*",
    "refs/heads/evotree/*:refs/heads/evotree/*",
    "refs/tags/evotree/*:refs/tags/evotree/*",
)
#: where `pull` fetches to before it moves any ref of the workspace (emptied after each pull)
_INCOMING = "refs/evotree-incoming/"
_CHUNK = 1 << 20


class ShareError(EvotreeError):
    exit_code = 39
    code = "share_error"


@dataclass
class ShareResult:
    """What ``evotree push`` / ``evotree pull`` did (schema: ``share.schema.json``)."""

    action: str
    remote: str | None
    #: runs newly archived in refs/evotree/runs/ (push; and run)
    archived: list[str] = field(default_factory=list)
    #: runs written back into the runs directory from their refs (pull)
    restored: list[str] = field(default_factory=list)
    #: runs left alone, with why: {"run_id", "reason"}
    skipped: list[dict[str, str]] = field(default_factory=list)
    #: refs pushed or fetched
    refs: int = 0
    #: refs left as they were, with why: {"ref", "reason"} (git refused a push; pull: diverged, other evidence)
    rejected: list[dict[str, str]] = field(default_factory=list)
    #: refs created or moved forward here (pull) / sent (push), run evidence included
    updated: list[str] = field(default_factory=list)
    v: int = 1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def run_ref(run_id: str) -> str:
    """The ref of a run's archived evidence; :class:`ShareError` for an id that cannot be one."""
    if not _RUN_ID_RE.fullmatch(run_id) or ".." in run_id or run_id.endswith((".lock", ".")):
        raise ShareError(
            f"{run_id!r} is not a run id that can name a ref", fix="`evotree runs` lists run ids"
        )
    return RUNS_REF_PREFIX + run_id


class _NotRegular(Exception):
    """A path of a run directory that is a link or not a regular file (never followed)."""


def _open_regular(root: Path, rel: str) -> int:
    """An fd of ``root/rel`` opened without following a link at any component (``O_NOFOLLOW``
    from a directory fd down), and only when it is a regular file; :class:`_NotRegular` else."""
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    parts = rel.split("/")
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | nofollow)
    try:
        for part in parts[:-1]:
            try:
                nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | nofollow, dir_fd=fd)
            except OSError as exc:
                raise _NotRegular(
                    f"{rel}: {part} is not a plain directory ({exc.strerror})"
                ) from None
            os.close(fd)
            fd = nxt
        try:
            leaf = os.open(
                parts[-1], os.O_RDONLY | nofollow | getattr(os, "O_NONBLOCK", 0), dir_fd=fd
            )
        except OSError as exc:
            raise _NotRegular(f"{rel} is a link or cannot be opened ({exc.strerror})") from None
    finally:
        os.close(fd)
    if not stat.S_ISREG(os.fstat(leaf).st_mode):
        os.close(leaf)
        raise _NotRegular(f"{rel} is not a regular file")
    return leaf


def _read_regular(root: Path, rel: str) -> tuple[bytes, int]:
    """(bytes, st_mode) of the regular file ``root/rel``, read through :func:`_open_regular`."""
    fd = _open_regular(root, rel)
    with os.fdopen(fd, "rb") as handle:
        mode = os.fstat(handle.fileno()).st_mode
        return handle.read(), mode


def _archivable(root: Path) -> tuple[list[tuple[str, Path]], list[str]]:
    """(tree path, file) of every regular file archived from a run directory, and what was refused:
    a link (file or folder) or anything but a regular file among them is named, never followed."""
    out: list[tuple[str, Path]] = []
    refused: list[str] = []
    for name in _TOP_FILES:
        path = root / name
        if not os.path.lexists(path):
            continue
        if stat.S_ISREG(path.lstat().st_mode):
            out.append((name, path))
        else:
            refused.append(f"{name} is a link or not a regular file")
    for top in _TREES:
        base = root / top
        if not os.path.lexists(base):
            continue
        if base.is_symlink() or not base.is_dir():
            refused.append(f"{top} is a link or not a folder")
            continue
        for folder, dirs, files in os.walk(base, followlinks=False):
            for d in sorted(dirs):
                if os.path.islink(os.path.join(folder, d)):
                    refused.append(f"{Path(folder, d).relative_to(root).as_posix()} is a link")
            dirs[:] = sorted(d for d in dirs if not os.path.islink(os.path.join(folder, d)))
            for name in sorted(files):
                path = Path(folder) / name
                rel = path.relative_to(root).as_posix()
                if stat.S_ISREG(path.lstat().st_mode):
                    out.append((rel, path))
                else:
                    refused.append(f"{rel} is a link or not a regular file")
    return out, refused


def _build_tree(repo: pygit2.Repository, root: Path, files: list[tuple[str, Path]]) -> pygit2.Oid:
    nested: dict[str, Any] = {}
    for rel, _path in files:
        node = nested
        *dirs, name = rel.split("/")
        for part in dirs:
            node = node.setdefault(part, {})
        data, st_mode = _read_regular(
            root, rel
        )  # O_NOFOLLOW at every component: a swapped-in link is refused
        mode = pygit2.GIT_FILEMODE_BLOB_EXECUTABLE if st_mode & 0o100 else pygit2.GIT_FILEMODE_BLOB
        node[name] = (repo.create_blob(data), mode)

    def write(node: dict[str, Any]) -> pygit2.Oid:
        builder = repo.TreeBuilder()
        for name, value in sorted(node.items()):
            if isinstance(value, dict):
                builder.insert(name, write(value), pygit2.GIT_FILEMODE_TREE)
            else:
                builder.insert(name, value[0], value[1])
        return builder.write()

    return write(nested)


def _store_open(uri: str) -> tuple[Any, str]:
    """(filesystem, root path) of a store: a local path, or an fsspec URL (fsspec needed)."""
    if not _SCHEME.match(uri):
        return None, str(Path(uri).expanduser().resolve())
    try:
        import fsspec
    except ImportError:
        raise ShareError(
            f"the store {uri} is a URL: reading or writing it needs fsspec",
            fix="pip install fsspec (and the filesystem's package, e.g. s3fs)",
        ) from None
    fs, root = fsspec.core.url_to_fs(uri)
    return fs, root


def _store_put(
    uri: str, run_id: str, run_dir: Path, files: list[tuple[str, Path]]
) -> dict[str, dict[str, Any]]:
    """Copy a run's files to ``<uri>/evotree-archive/<run_id>/``; their sizes and sha256 (each file
    opened with ``O_NOFOLLOW``, regular files only, and hashed from the bytes copied)."""
    fs, root = _store_open(uri)
    listed: dict[str, dict[str, Any]] = {}
    for rel, _path in files:
        digest = hashlib.sha256()
        size = 0
        target = f"{root.rstrip('/')}/evotree-archive/{run_id}/{rel}"
        if fs is None:
            Path(target).parent.mkdir(parents=True, exist_ok=True)
            out = open(target, "wb")  # noqa: SIM115 - closed below
        else:
            fs.makedirs(target.rsplit("/", 1)[0], exist_ok=True)
            out = fs.open(target, "wb")
        with os.fdopen(_open_regular(run_dir, rel), "rb") as handle, out:
            for chunk in iter(lambda: handle.read(_CHUNK), b""):
                digest.update(chunk)
                size += len(chunk)
                out.write(chunk)
        listed[rel] = {"size": size, "sha256": digest.hexdigest()}
    return listed


class _Budget:
    """What one pull may still write: each object at most ``per_object``, all of them ``total``."""

    def __init__(self, per_object: int, total: int) -> None:
        self.per_object, self.left = per_object, total

    def take(self, size: int, what: str) -> None:
        if size > self.per_object:
            raise ShareError(
                f"{what} is {size / 2**20:.1f} MiB, more than one object may be "
                f"({self.per_object / 2**20:.0f} MiB, [share] max_object_mb): refused, nothing written",
                fix="raise [share] max_object_mb on the champion if this evidence is expected",
            )
        if size > self.left:
            raise ShareError(
                f"{what} ({size / 2**20:.1f} MiB) would take this pull past [share] max_total_mb "
                f"({self.left / 2**20:.1f} MiB left): refused",
                fix="pull again, or raise [share] max_total_mb",
            )
        self.left -= size


def _store_get(
    pointer: dict[str, Any], run_id: str, staging: Path, store: str | None, budget: _Budget
) -> None:
    """Write a large run's files from **this workspace's** ``store`` into ``staging``: each file's
    size checked against the pointer and the caps before and while it is copied, its sha256 after.
    The pointer's own ``uri`` is never contacted (a remote would choose the address)."""
    files = pointer.get("files")
    if not isinstance(files, dict):
        raise ShareError(
            f"{POINTER} of {run_id} is malformed",
            fix="the ref was not written by evotree; delete it",
        )
    if not store:
        raise ShareError(
            f"{run_id} is a large run whose files are in an evidence store, and this workspace names "
            "none (its pointer's own address is never used)",
            fix="set [executor].evidence_uri, or pass evotree pull --store URI (the store the team pushes to)",
        )
    fs, root = _store_open(store)
    for rel, entry in files.items():
        if not isinstance(rel, str) or not _safe_rel(rel) or not isinstance(entry, dict):
            raise ShareError(
                f"{POINTER} of {run_id} lists a path that cannot be written: {rel!r}",
                fix="the ref was not written by evotree; delete it (git update-ref -d REF)",
            )
        size = entry.get("size")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise ShareError(f"{POINTER} of {run_id} gives no size for {rel}", fix="delete the ref")
        budget.take(size, f"{run_id}: {rel}")
        source = f"{root.rstrip('/')}/evotree-archive/{run_id}/{rel}"
        path = staging / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256()
        written = 0
        try:
            handle = open(source, "rb") if fs is None else fs.open(source, "rb")  # noqa: SIM115
            with handle, open(path, "wb") as out:
                while chunk := handle.read(_CHUNK):
                    written += len(chunk)
                    if written > size:
                        raise ShareError(
                            f"{run_id}: {rel} in the store {store} is larger than the "
                            f"{size} bytes its pointer lists: refused",
                            fix="the store copy was changed; push the run again from the machine that ran it",
                        )
                    digest.update(chunk)
                    out.write(chunk)
        except (OSError, FileNotFoundError) as exc:
            raise ShareError(
                f"{run_id}: cannot read {rel} from the store {store} ({exc})",
                fix="check the store is reachable from here (credentials, path)",
            ) from None
        if digest.hexdigest() != entry.get("sha256"):
            raise ShareError(
                f"{run_id}: {rel} in the store {store} is not the file that was pushed (sha256 differs)",
                fix="the store copy was changed; push the run again from the machine that ran it",
            )


def archive_run(
    ws: Workspace, run_dir: Path, *, store: str | None = None, max_bytes: int | None = None
) -> tuple[str, str]:
    """Archive one finished run; returns ``(run_id, outcome)`` with outcome ``archived``, ``already`` or a
    reason it was skipped (running, too large without a ``store``, no run.json, a ref naming other evidence).

    A run over ``max_bytes`` (default :data:`MAX_ARCHIVE_BYTES`) goes to ``store`` when one is given: the
    ref then holds a pointer (:data:`POINTER`) with the store's URI and the files' hashes."""
    run_id = run_dir.name
    try:
        ref = run_ref(run_id)
    except ShareError as exc:
        return run_id, exc.message
    try:
        record = RunRecord.load(run_dir / "run.json")
    except (OSError, ValueError):
        return run_id, "no readable run.json"
    if record.status == RunStatus.RUNNING.value or not record.ended_at:
        return run_id, "still running"
    files, refused = _archivable(run_dir)
    if refused:
        return run_id, (
            "not archived: "
            + "; ".join(refused[:3])
            + (" …" if len(refused) > 3 else "")
            + " (links are never followed)"
        )
    size = sum(path.lstat().st_size for _rel, path in files)
    limit = MAX_ARCHIVE_BYTES if max_bytes is None else max_bytes
    repo = ws.git.repo
    existing = ws.git.ref_target(ref)
    if size > limit:
        if existing is not None:
            return run_id, "already"
        if not store:
            return run_id, (
                f"{size / 2**20:.1f} MiB of evidence is more than the git archive takes "
                f"({limit / 2**20:.0f} MiB): push it to a store (evotree push --store URI)"
            )
        uri = store if _SCHEME.match(store) else str(Path(store).expanduser().resolve())
        listed = _store_put(uri, run_id, run_dir, files)
        pointer = json.dumps(
            {"v": 1, "run_id": run_id, "uri": uri, "files": listed}, indent=1, sort_keys=True
        )
        builder = repo.TreeBuilder()
        builder.insert(POINTER, repo.create_blob(pointer.encode()), pygit2.GIT_FILEMODE_BLOB)
        tree = builder.write()
    else:
        try:
            tree = _build_tree(repo, run_dir, files)
        except _NotRegular as exc:
            return run_id, f"not archived: {exc} (links are never followed)"
    if existing is not None:
        current = repo[existing].peel(pygit2.Commit)
        return (
            run_id,
            "already"
            if current.tree_id == tree
            else "its ref holds other evidence: left unchanged",
        )
    try:
        when = int(datetime.fromisoformat(record.ended_at).timestamp())
    except ValueError:
        when = 0
    sig = pygit2.Signature(*_AUTHOR, when, 0)
    message = (
        f"evotree: evidence of run {run_id}\n\nversion {record.version}, seed {record.seed}, status "
        f"{record.status}, commit {record.commit}\n"
    )
    commit = repo.create_commit(None, sig, sig, message, tree, [])
    if not ws.git.create_ref(ref, commit, f"evotree: archive the evidence of {run_id}"):
        return run_id, "already"
    return run_id, "archived"


def archive_runs(
    ws: Workspace,
    run_ids: list[str] | None = None,
    *,
    store: str | None = None,
    max_bytes: int | None = None,
) -> ShareResult:
    """Archive the finished runs of this machine (``run_ids``: only those) that are not archived yet
    (large ones into ``store``, when given: :func:`archive_run`)."""
    base = runs_dir(ws)
    result = ShareResult(action="archive", remote=None)
    if not base.is_dir():
        return result
    dirs = (
        [base / r for r in run_ids]
        if run_ids is not None
        else sorted(p for p in base.iterdir() if p.is_dir() and not p.name.startswith("."))
    )
    for run_dir in dirs:
        if not (run_dir / "run.json").is_file():
            continue
        run_id, outcome = archive_run(ws, run_dir, store=store, max_bytes=max_bytes)
        if outcome == "archived":
            result.archived.append(run_id)
        elif outcome != "already":
            result.skipped.append({"run_id": run_id, "reason": outcome})
    return result


def _run_refs(ws: Workspace) -> dict[str, pygit2.Oid]:
    out = {}
    for name in ws.git.repo.references:
        if name.startswith(RUNS_REF_PREFIX):
            target = ws.git.ref_target(name)
            if target is not None:
                out[name.removeprefix(RUNS_REF_PREFIX)] = target
    return out


def _remote(ws: Workspace | Git, remote: str | None) -> str:
    git = ws if isinstance(ws, Git) else ws.git
    name = remote or "origin"
    if name.startswith("-"):
        raise ShareError(
            f"{name!r} is not a remote", fix="name a remote (git remote -v lists them)"
        )
    known = git.run("remote").split()
    if name not in known and not re.match(
        r"^(/|\.|[A-Za-z][A-Za-z0-9+.-]*://|[^/:]+@[^:]+:)", name
    ):
        raise ShareError(
            f"no git remote {name!r}"
            + (f" (remotes: {', '.join(known)})" if known else " (this repository has no remote)"),
            fix="git remote add origin URL, or name a remote or a URL",
        )
    return name


def _git_env() -> dict[str, str]:
    return {**os.environ, "GIT_TERMINAL_PROMPT": "0"}


def push_evidence(
    ws: Workspace,
    remote: str | None = None,
    *,
    store: str | None = None,
    max_bytes: int | None = None,
) -> ShareResult:
    """Archive what is not archived yet (large runs into ``store``), then push every ref a clone
    needs (:data:`SHARE_REFSPECS`) to ``remote``, never forced: refs git refuses are in ``rejected``."""
    archived = archive_runs(ws, store=store, max_bytes=max_bytes)
    name = _remote(ws, remote)
    refs = _run_refs(ws)
    result = ShareResult(
        action="push",
        remote=name,
        archived=archived.archived,
        skipped=archived.skipped,
        refs=len(refs),
    )
    proc = subprocess.run(
        ["git", "push", "--porcelain", "--", name, *SHARE_REFSPECS],
        cwd=ws.root,
        capture_output=True,
        text=True,
        env=_git_env(),
        stdin=subprocess.DEVNULL,
        check=False,
    )
    for line in proc.stdout.splitlines():
        parts = line.split("\t")
        if len(parts) < 3 or ":" not in parts[1]:
            continue
        flag, dst, summary = parts[0], parts[1].split(":", 1)[1], parts[2].strip()
        if flag == "!":
            result.rejected.append({"ref": dst, "reason": f"the remote refused it: {summary}"})
        elif flag in ("*", " ", "+"):
            result.updated.append(dst)
    if proc.returncode != 0 and not result.rejected:
        raise ShareError(
            f"git push to {name} failed: {(proc.stderr.strip() or proc.stdout.strip())[:500]}",
            fix="check the remote's URL and your access to it (git remote -v)",
        )
    return result


def _safe_rel(rel: str) -> bool:
    parts = rel.split("/")
    return (
        bool(rel)
        and not rel.startswith("/")
        and "\\" not in rel
        and "\0" not in rel
        and all(p not in ("", ".", "..") and p.lower() != ".git" for p in parts)
    )


def _tree_entries(
    repo: pygit2.Repository, tree: pygit2.Tree, prefix: str = ""
) -> list[tuple[str, str, int]]:
    """(path, blob id, mode) of every file of an archived run's tree; :class:`ShareError` for a
    path that cannot be written, a link or a submodule."""
    out: list[tuple[str, str, int]] = []
    for entry in tree:
        rel = f"{prefix}{entry.name}"
        if not _safe_rel(rel):
            raise ShareError(
                f"archived evidence holds a path that cannot be written: {rel!r}",
                fix="the ref was not written by evotree; delete it (git update-ref -d REF)",
            )
        if entry.filemode == pygit2.GIT_FILEMODE_TREE:
            out += _tree_entries(repo, repo[entry.id], rel + "/")
        elif entry.filemode in (pygit2.GIT_FILEMODE_BLOB, pygit2.GIT_FILEMODE_BLOB_EXECUTABLE):
            out.append((rel, str(entry.id), entry.filemode))
        else:
            raise ShareError(
                f"archived evidence holds a link or a submodule: {rel!r}",
                fix="the ref was not written by evotree; delete it (git update-ref -d REF)",
            )
    return out


class _Blobs:
    """Blob sizes from their headers (``git cat-file --batch-check``: nothing inflated) and blob
    contents streamed in chunks (``git cat-file --batch``): no blob is ever held whole in memory."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._proc: subprocess.Popen[bytes] | None = None

    def sizes(self, oids: list[str]) -> dict[str, int]:
        if not oids:
            return {}
        proc = subprocess.run(
            ["git", "cat-file", "--batch-check"],
            cwd=self.root,
            input="\n".join(oids) + "\n",
            capture_output=True,
            text=True,
            env=_git_env(),
            check=False,
        )
        out: dict[str, int] = {}
        for line in proc.stdout.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] == "blob" and parts[2].isdigit():
                out[parts[0]] = int(parts[2])
        missing = [o for o in oids if o not in out]
        if missing:
            raise ShareError(
                f"archived evidence names {len(missing)} object(s) this repository lacks ({missing[0]})",
                fix="fetch again (evotree pull)",
            )
        return out

    def copy(self, oid: str, size: int, path: Path) -> None:
        if self._proc is None:
            self._proc = subprocess.Popen(
                ["git", "cat-file", "--batch"],
                cwd=self.root,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=_git_env(),
            )
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(f"{oid}\n".encode())
        self._proc.stdin.flush()
        header = self._proc.stdout.readline().split()
        if len(header) != 3 or header[2] != str(size).encode():
            self.close()
            raise ShareError(f"object {oid} changed size while it was read", fix="pull again")
        left = size
        with open(path, "wb") as out:
            while left:
                chunk = self._proc.stdout.read(min(_CHUNK, left))
                if not chunk:
                    self.close()
                    raise ShareError(f"object {oid} ended early", fix="pull again")
                out.write(chunk)
                left -= len(chunk)
        self._proc.stdout.read(1)  # the newline after each object

    def close(self) -> None:
        if self._proc is not None:
            if self._proc.stdin is not None:
                self._proc.stdin.close()
            self._proc.kill()
            self._proc.wait()
            self._proc = None


def _materialize(
    repo: pygit2.Repository,
    blobs: _Blobs,
    tree: pygit2.Tree,
    target: Path,
    budget: _Budget,
    run_id: str,
) -> None:
    """Write an archived run's files under ``target``: every blob measured first (the whole run
    refused before a byte is written when one is over the caps), then streamed."""
    entries = _tree_entries(repo, tree)
    sizes = blobs.sizes(sorted({oid for _rel, oid, _mode in entries}))
    for rel, oid, _mode in entries:
        if sizes[oid] > budget.per_object:
            budget.take(sizes[oid], f"{run_id}: {rel}")  # raises, naming the cap
    budget.take(sum(sizes[oid] for _rel, oid, _mode in entries), f"the evidence of {run_id}")
    for rel, oid, mode in entries:
        path = target / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        blobs.copy(oid, sizes[oid], path)
        if mode == pygit2.GIT_FILEMODE_BLOB_EXECUTABLE:
            path.chmod(0o755)


def _checked_out(git: Git) -> dict[str, Path]:
    """Branch ref -> the linked worktree that has it checked out (read from the repository's side)."""
    out: dict[str, Path] = {}
    try:
        worktrees = git.linked_worktrees()
    except Exception:  # noqa: BLE001 - no worktree information: nothing is known to be checked out
        return out
    for admin, path in worktrees:
        try:
            head = (Path(admin) / "HEAD").read_text().strip()
        except OSError:
            continue
        if head.startswith("ref: "):
            out[head[5:]] = Path(path)
    return out


def _local_name(incoming: str) -> str | None:
    rest = incoming.removeprefix(_INCOMING)
    for source, local in (
        ("evotree/", "refs/evotree/"),
        ("heads/", "refs/heads/evotree/"),
        ("tags/", "refs/tags/evotree/"),
    ):
        if rest.startswith(source):
            return local + rest[len(source) :]
    return None


def _clear_incoming(git: Git) -> None:
    for name in [n for n in git.repo.references if n.startswith(_INCOMING)]:
        git.delete_ref(name)


def _fetch(git: Git, name: str, budget: _Budget) -> None:
    """Fetch the shared refs of ``name`` into :data:`_INCOMING` with every file git writes capped
    at what the pull may still write (``RLIMIT_FSIZE``) and large blobs streamed, not held."""
    _clear_incoming(git)
    limit = max(budget.left, 1)

    def capped() -> None:  # in the child, before git runs
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    pack_dir = git._common_dir() / "objects" / "pack"
    before = {p.name for p in pack_dir.glob("*")} if pack_dir.is_dir() else set()
    specs = [
        f"+{src.split(':')[0]}:{_INCOMING}{tag}/*"
        for src, tag in zip(SHARE_REFSPECS, ("evotree", "heads", "tags"), strict=True)
    ]
    proc = subprocess.run(
        [
            "git",
            "-c",
            "core.bigFileThreshold=1m",
            "-c",
            "fetch.unpackLimit=1",
            "-c",
            "transfer.unpackLimit=1",
            "-c",
            "fetch.writeCommitGraph=false",
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            "--no-recurse-submodules",
            "--",
            name,
            *specs,
        ],
        cwd=git.root,
        capture_output=True,
        text=True,
        env=_git_env(),
        stdin=subprocess.DEVNULL,
        check=False,
        preexec_fn=capped,
    )
    new = [p for p in pack_dir.glob("*") if p.name not in before] if pack_dir.is_dir() else []
    if proc.returncode != 0:
        for leftover in new:  # a pack cut short at the cap: nothing of it stays
            if leftover.name.startswith(("tmp_pack_", "tmp_idx_", "tmp_rev_")):
                leftover.unlink(missing_ok=True)
        _clear_incoming(git)
        text = (proc.stderr.strip() or proc.stdout.strip())[:500]
        capped_out = any(
            k in text for k in ("File size limit", "signal 25", "EFBIG", "too large", "index-pack")
        )
        raise ShareError(
            (
                f"the fetch from {name} was stopped: the remote sent more than this pull may write "
                f"({limit / 2**20:.0f} MiB, [share] max_total_mb)"
                if capped_out
                else f"git fetch from {name} failed"
            )
            + f": {text}",
            fix="raise [share] max_total_mb on the champion if the remote's refs are expected to be "
            "this large; else check the remote (git remote -v)",
        )
    received = sum(p.stat().st_size for p in new if p.is_file() and p.suffix == ".pack")
    budget.left = max(budget.left - received, 0)


def _take_incoming(git: Git, result: ShareResult) -> None:
    """Move each local ref to the fetched one only forward; list what was refused."""
    repo = git.repo
    checked_out = _checked_out(git)
    for incoming in sorted(n for n in repo.references if n.startswith(_INCOMING)):
        local = _local_name(incoming)
        theirs = git.ref_target(incoming)
        if local is None or theirs is None:
            continue
        ours = git.ref_target(local)
        if ours == theirs:
            continue
        if ours is None:
            if git.create_ref(local, theirs, f"evotree pull: {local} from {result.remote}"):
                result.updated.append(local)
            continue
        if local.startswith((RUNS_REF_PREFIX, "refs/tags/")):
            what = "other evidence" if local.startswith(RUNS_REF_PREFIX) else "another tag"
            result.rejected.append(
                {"ref": local, "reason": f"the remote's names {what}: left unchanged"}
            )
            continue
        try:
            ahead = repo.descendant_of(theirs, ours)
            behind = repo.descendant_of(ours, theirs)
        except (pygit2.GitError, ValueError):
            ahead = behind = False
        if behind:
            continue  # ours is ahead of the remote's: push it
        if not ahead:
            result.rejected.append(
                {
                    "ref": local,
                    "reason": "diverged from the remote's (neither contains the "
                    "other): left unchanged",
                }
            )
            continue
        if local in checked_out:
            result.rejected.append(
                {
                    "ref": local,
                    "reason": f"checked out in {checked_out[local]}: update it there "
                    f"(git -C {checked_out[local]} merge --ff-only {theirs})",
                }
            )
            continue
        try:
            git.cas_ref(
                local, theirs, ours, f"evotree pull: fast-forward {local} from {result.remote}"
            )
            result.updated.append(local)
        except Exception as exc:  # noqa: BLE001 - a racing writer: say so, move nothing
            result.rejected.append({"ref": local, "reason": f"changed here while pulling ({exc})"})
    _clear_incoming(git)


def fetch_shared(start: str | os.PathLike[str], remote: str | None = None) -> ShareResult:
    """A fresh clone's first pull: fetch every shared ref of ``remote`` into the repository at
    ``start`` (no workspace yet, so the default ``[share]`` caps), moving refs only forward.
    Then :func:`pull_evidence` (``fetch=False``) writes back the runs."""
    git = Git(start)
    share = Config().share
    name = _remote(git, remote)
    result = ShareResult(action="pull", remote=name)
    _fetch(git, name, _Budget(share.max_object_mb * 2**20, share.max_total_mb * 2**20))
    _take_incoming(git, result)
    return result


def _configured_store(ws: Workspace) -> str | None:
    """This workspace's evidence store, ``[executor].evidence_uri`` (a path is relative to the workspace)."""
    configured = ws.config.executor.evidence_uri
    if not configured:
        return None
    return configured if _SCHEME.match(configured) else str((ws.root / Path(configured)).resolve())


def pull_evidence(
    ws: Workspace, remote: str | None = None, *, fetch: bool = True, store: str | None = None
) -> ShareResult:
    """Fetch every shared ref from ``remote`` (:func:`_fetch`, :func:`_take_incoming`; ``fetch=False``:
    only the local refs, e.g. after ``git clean -xdf``) and write back every archived run missing
    from the runs directory, under ``[share]``'s caps. Large runs come only from ``store`` (default
    this workspace's ``[executor].evidence_uri``), never from the address a pointer names."""
    share = ws.config.share
    budget = _Budget(share.max_object_mb * 2**20, share.max_total_mb * 2**20)
    store = store or _configured_store(ws)
    if store and not _SCHEME.match(store):
        store = str(Path(store).expanduser().resolve())
    name = None
    result = ShareResult(action="pull", remote=None)
    if fetch:
        name = _remote(ws, remote)
        result.remote = name
        _fetch(ws.git, name, budget)
        _take_incoming(ws.git, result)
    base = runs_dir(ws)
    refs = _run_refs(ws)
    result.refs = len(refs)
    repo = ws.git.repo
    blobs = _Blobs(ws.root)
    try:
        for run_id, target in sorted(refs.items()):
            _restore(ws, repo, blobs, base, run_id, target, store, budget, result)
    finally:
        blobs.close()
    return result


def _restore(
    ws: Workspace,
    repo: pygit2.Repository,
    blobs: _Blobs,
    base: Path,
    run_id: str,
    target: pygit2.Oid,
    store: str | None,
    budget: _Budget,
    result: ShareResult,
) -> None:
    """Write one archived run back into the runs directory (staged, then renamed into place)."""
    import shutil

    if not _RUN_ID_RE.fullmatch(run_id) or ".." in run_id:
        result.skipped.append({"run_id": run_id, "reason": "not a run id"})
        return
    final = base / run_id
    if (final / "run.json").exists():
        return  # this machine has it: its own copy stands (the ledger's manifest checks both)
    if final.exists() and any(final.iterdir()):
        result.skipped.append(
            {"run_id": run_id, "reason": f"{final} exists without a run.json: left alone"}
        )
        return
    staging = base / f".pull-{run_id}-{os.getpid()}"
    try:
        commit = repo[target].peel(pygit2.Commit)
        staging.mkdir(parents=True)
        names = [entry.name for entry in commit.tree]
        if names == [POINTER]:  # a large run: its files are in a store, named by hash
            entry = commit.tree[POINTER]
            size = blobs.sizes([str(entry.id)])[str(entry.id)]
            if size > 1 << 20:
                raise ShareError(
                    f"{POINTER} of {run_id} is {size} bytes: not a pointer evotree wrote",
                    fix="delete the ref",
                )
            try:
                pointer = json.loads(repo[entry.id].data)
            except ValueError:
                raise ShareError(
                    f"{POINTER} of {run_id} is not JSON", fix="delete the ref"
                ) from None
            _store_get(pointer if isinstance(pointer, dict) else {}, run_id, staging, store, budget)
        else:
            _materialize(repo, blobs, commit.tree, staging, budget, run_id)
        if not (staging / "run.json").is_file():
            raise ShareError(f"{RUNS_REF_PREFIX}{run_id} holds no run.json", fix="delete the ref")
        if final.exists():
            final.rmdir()
        os.replace(staging, final)
    except (ShareError, pygit2.GitError, ValueError, OSError) as exc:
        result.skipped.append(
            {"run_id": run_id, "reason": getattr(exc, "message", None) or str(exc)}
        )
        return
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    result.restored.append(run_id)
