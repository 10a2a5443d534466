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
- ``evotree push [REMOTE]`` archives what is not archived yet and pushes ``refs/evotree/runs/*``;
  ``git push origin 'refs/evotree/*'`` (the README's sharing command) carries them too.
- ``evotree pull [REMOTE]`` fetches ``refs/evotree/runs/*`` (never forced: an evidence ref that
  changed is refused) and materialises every run this machine lacks, so a fresh clone can
  ``compare``, ``diagnose``, ``gates`` and ``report``. The ledger's manifest (``run.finished``)
  still decides what counts: materialised evidence that differs from it is ``tampered``.

**Large runs.** A run whose archivable files exceed :data:`MAX_ARCHIVE_BYTES` does not go into
git. With a store (``evotree push --store URI``: a path, or an fsspec URL such as
``s3://bucket/prefix``) its files are copied to ``<URI>/evotree-archive/<run_id>/`` and the ref
holds only ``evotree-archive.json``: the URI and every file's size and sha256. ``evotree pull``
reads them back from there and refuses a file whose hash differs. Without a store such a run is
listed as skipped, with the reason.
Pushed evidence holds what the run recorded, the judge's per-task results included: push it only
where the people who may see those results can read.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pygit2

from evotree.core.errors import EvotreeError
from evotree.core.workspace import Workspace
from evotree.harness.runs import RunRecord, RunStatus, runs_dir

__all__ = ["RUNS_REF_PREFIX", "MAX_ARCHIVE_BYTES", "POINTER", "ShareError", "ShareResult", "archive_run", "archive_runs",
           "push_evidence", "pull_evidence", "run_ref"]

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
    v: int = 1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def run_ref(run_id: str) -> str:
    """The ref of a run's archived evidence; :class:`ShareError` for an id that cannot be one."""
    if not _RUN_ID_RE.fullmatch(run_id) or ".." in run_id or run_id.endswith((".lock", ".")):
        raise ShareError(f"{run_id!r} is not a run id that can name a ref", fix="`evotree runs` lists run ids")
    return RUNS_REF_PREFIX + run_id


def _archivable(root: Path) -> list[tuple[str, Path]]:
    """(tree path, file) of every regular file archived from a run directory; links are never followed."""
    out: list[tuple[str, Path]] = []
    for name in _TOP_FILES:
        path = root / name
        if path.is_file() and not path.is_symlink():
            out.append((name, path))
    for top in _TREES:
        base = root / top
        if base.is_symlink() or not base.is_dir():
            continue
        for folder, dirs, files in os.walk(base, followlinks=False):
            dirs[:] = sorted(d for d in dirs if not os.path.islink(os.path.join(folder, d)))
            for name in sorted(files):
                path = Path(folder) / name
                if stat.S_ISREG(path.lstat().st_mode):
                    out.append((path.relative_to(root).as_posix(), path))
    return out


def _build_tree(repo: pygit2.Repository, files: list[tuple[str, Path]]) -> pygit2.Oid:
    nested: dict[str, Any] = {}
    for rel, path in files:
        node = nested
        *dirs, name = rel.split("/")
        for part in dirs:
            node = node.setdefault(part, {})
        mode = pygit2.GIT_FILEMODE_BLOB_EXECUTABLE if path.stat().st_mode & 0o100 else pygit2.GIT_FILEMODE_BLOB
        node[name] = (repo.create_blob(path.read_bytes()), mode)

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
        raise ShareError(f"the store {uri} is a URL: reading or writing it needs fsspec",
                         fix="pip install fsspec (and the filesystem's package, e.g. s3fs)") from None
    fs, root = fsspec.core.url_to_fs(uri)
    return fs, root


def _store_put(uri: str, run_id: str, files: list[tuple[str, Path]]) -> dict[str, dict[str, Any]]:
    """Copy a run's files to ``<uri>/evotree-archive/<run_id>/``; their sizes and sha256."""
    import hashlib
    import shutil

    fs, root = _store_open(uri)
    listed: dict[str, dict[str, Any]] = {}
    for rel, path in files:
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
        listed[rel] = {"size": path.stat().st_size, "sha256": digest.hexdigest()}
        target = f"{root.rstrip('/')}/evotree-archive/{run_id}/{rel}"
        if fs is None:
            Path(target).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        else:
            fs.makedirs(target.rsplit("/", 1)[0], exist_ok=True)
            fs.put_file(str(path), target)
    return listed


def _store_get(pointer: dict[str, Any], run_id: str, staging: Path) -> None:
    """Write a large run's files from its store into ``staging``, checking each file's sha256."""
    import hashlib

    uri = pointer.get("uri")
    files = pointer.get("files")
    if not isinstance(uri, str) or not isinstance(files, dict):
        raise ShareError(f"{POINTER} of {run_id} is malformed", fix="the ref was not written by evotree; delete it")
    fs, root = _store_open(uri)
    for rel, entry in files.items():
        if not isinstance(rel, str) or not _safe_rel(rel) or not isinstance(entry, dict):
            raise ShareError(f"{POINTER} of {run_id} lists a path that cannot be written: {rel!r}",
                             fix="the ref was not written by evotree; delete it (git update-ref -d REF)")
        source = f"{root.rstrip('/')}/evotree-archive/{run_id}/{rel}"
        try:
            if fs is None:
                data = Path(source).read_bytes()
            else:
                with fs.open(source, "rb") as handle:
                    data = handle.read()
        except (OSError, FileNotFoundError) as exc:
            raise ShareError(f"{run_id}: cannot read {rel} from the store {uri} ({exc})",
                             fix="check the store is reachable from here (credentials, path)") from None
        if hashlib.sha256(data).hexdigest() != entry.get("sha256"):
            raise ShareError(f"{run_id}: {rel} in the store {uri} is not the file that was pushed (sha256 differs)",
                             fix="the store copy was changed; push the run again from the machine that ran it")
        path = staging / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def archive_run(ws: Workspace, run_dir: Path, *, store: str | None = None,
                max_bytes: int | None = None) -> tuple[str, str]:
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
    files = _archivable(run_dir)
    size = sum(path.stat().st_size for _rel, path in files)
    limit = MAX_ARCHIVE_BYTES if max_bytes is None else max_bytes
    repo = ws.git.repo
    existing = ws.git.ref_target(ref)
    if size > limit:
        if existing is not None:
            return run_id, "already"
        if not store:
            return run_id, (f"{size / 2**20:.1f} MiB of evidence is more than the git archive takes "
                            f"({limit / 2**20:.0f} MiB): push it to a store (evotree push --store URI)")
        uri = store if _SCHEME.match(store) else str(Path(store).expanduser().resolve())
        listed = _store_put(uri, run_id, files)
        pointer = json.dumps({"v": 1, "run_id": run_id, "uri": uri, "files": listed}, indent=1, sort_keys=True)
        builder = repo.TreeBuilder()
        builder.insert(POINTER, repo.create_blob(pointer.encode()), pygit2.GIT_FILEMODE_BLOB)
        tree = builder.write()
    else:
        tree = _build_tree(repo, files)
    if existing is not None:
        current = repo[existing].peel(pygit2.Commit)
        return run_id, "already" if current.tree_id == tree else "its ref holds other evidence: left unchanged"
    try:
        when = int(datetime.fromisoformat(record.ended_at).timestamp())
    except ValueError:
        when = 0
    sig = pygit2.Signature(*_AUTHOR, when, 0)
    message = (f"evotree: evidence of run {run_id}\n\nversion {record.version}, seed {record.seed}, status "
               f"{record.status}, commit {record.commit}\n")
    commit = repo.create_commit(None, sig, sig, message, tree, [])
    if not ws.git.create_ref(ref, commit, f"evotree: archive the evidence of {run_id}"):
        return run_id, "already"
    return run_id, "archived"


def archive_runs(ws: Workspace, run_ids: list[str] | None = None, *, store: str | None = None,
                 max_bytes: int | None = None) -> ShareResult:
    """Archive the finished runs of this machine (``run_ids``: only those) that are not archived yet
    (large ones into ``store``, when given: :func:`archive_run`)."""
    base = runs_dir(ws)
    result = ShareResult(action="archive", remote=None)
    if not base.is_dir():
        return result
    dirs = ([base / r for r in run_ids] if run_ids is not None
            else sorted(p for p in base.iterdir() if p.is_dir() and not p.name.startswith(".")))
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


def _remote(ws: Workspace, remote: str | None) -> str:
    name = remote or "origin"
    if name.startswith("-"):
        raise ShareError(f"{name!r} is not a remote", fix="name a remote (git remote -v lists them)")
    known = ws.git.run("remote").split()
    if name not in known and not re.match(r"^(/|\.|[A-Za-z][A-Za-z0-9+.-]*://|[^/:]+@[^:]+:)", name):
        raise ShareError(f"no git remote {name!r}" + (f" (remotes: {', '.join(known)})" if known else
                                                       " (this repository has no remote)"),
                         fix="git remote add origin URL, or name a remote or a URL")
    return name


def push_evidence(ws: Workspace, remote: str | None = None, *, store: str | None = None,
                  max_bytes: int | None = None) -> ShareResult:
    """Archive what is not archived yet (large runs into ``store``), then push every
    ``refs/evotree/runs/*`` to ``remote``."""
    archived = archive_runs(ws, store=store, max_bytes=max_bytes)
    name = _remote(ws, remote)
    refs = _run_refs(ws)
    result = ShareResult(action="push", remote=name, archived=archived.archived, skipped=archived.skipped,
                         refs=len(refs))
    if refs:  # never forced: a remote ref that names other evidence is refused by git, and said so
        ws.git.run("push", "--quiet", "--", name, f"{RUNS_REF_PREFIX}*:{RUNS_REF_PREFIX}*")
    return result


def _safe_rel(rel: str) -> bool:
    parts = rel.split("/")
    return bool(rel) and not rel.startswith("/") and "\\" not in rel and "\0" not in rel and all(
        p not in ("", ".", "..") and p.lower() != ".git" for p in parts)


def _materialize(repo: pygit2.Repository, tree: pygit2.Tree, target: Path, prefix: str = "") -> None:
    for entry in tree:
        rel = f"{prefix}{entry.name}"
        if not _safe_rel(rel):
            raise ShareError(f"archived evidence holds a path that cannot be written: {rel!r}",
                             fix="the ref was not written by evotree; delete it (git update-ref -d REF)")
        if entry.filemode == pygit2.GIT_FILEMODE_TREE:
            (target / rel).mkdir(parents=True, exist_ok=True)
            _materialize(repo, repo[entry.id], target, rel + "/")
        elif entry.filemode in (pygit2.GIT_FILEMODE_BLOB, pygit2.GIT_FILEMODE_BLOB_EXECUTABLE):
            path = target / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(repo[entry.id].data)
            if entry.filemode == pygit2.GIT_FILEMODE_BLOB_EXECUTABLE:
                path.chmod(0o755)
        else:
            raise ShareError(f"archived evidence holds a link or a submodule: {rel!r}",
                             fix="the ref was not written by evotree; delete it (git update-ref -d REF)")


def pull_evidence(ws: Workspace, remote: str | None = None, *, fetch: bool = True) -> ShareResult:
    """Fetch ``refs/evotree/runs/*`` from ``remote`` (``fetch=False``: only the local refs, e.g. after
    ``git clean -xdf``) and write back every archived run missing from the runs directory."""
    name = None
    if fetch:
        name = _remote(ws, remote)
        ws.git.run("fetch", "--quiet", "--no-tags", "--", name, f"{RUNS_REF_PREFIX}*:{RUNS_REF_PREFIX}*")
    result = ShareResult(action="pull", remote=name)
    base = runs_dir(ws)
    refs = _run_refs(ws)
    result.refs = len(refs)
    repo = ws.git.repo
    for run_id, target in sorted(refs.items()):
        if not _RUN_ID_RE.fullmatch(run_id) or ".." in run_id:
            result.skipped.append({"run_id": run_id, "reason": "not a run id"})
            continue
        final = base / run_id
        if (final / "run.json").exists():
            continue  # this machine has it: its own copy stands (the ledger's manifest checks both)
        if final.exists() and any(final.iterdir()):
            result.skipped.append({"run_id": run_id, "reason": f"{final} exists without a run.json: left alone"})
            continue
        obj = repo[target]
        commit = obj.peel(pygit2.Commit)
        staging = base / f".pull-{run_id}-{os.getpid()}"
        try:
            staging.mkdir(parents=True)
            names = [entry.name for entry in commit.tree]
            if names == [POINTER]:  # a large run: its files are in a store, named by hash
                try:
                    pointer = json.loads(repo[commit.tree[POINTER].id].data)
                except ValueError:
                    raise ShareError(f"{POINTER} of {run_id} is not JSON", fix="delete the ref") from None
                _store_get(pointer if isinstance(pointer, dict) else {}, run_id, staging)
            else:
                _materialize(repo, commit.tree, staging)
            if not (staging / "run.json").is_file():
                raise ShareError(f"{RUNS_REF_PREFIX}{run_id} holds no run.json", fix="delete the ref")
            if final.exists():
                final.rmdir()
            os.replace(staging, final)
        except ShareError as exc:
            result.skipped.append({"run_id": run_id, "reason": exc.message})
            continue
        finally:
            if staging.exists():
                import shutil

                shutil.rmtree(staging, ignore_errors=True)
        result.restored.append(run_id)
    return result
