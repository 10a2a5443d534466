"""Moving memory between workspaces: ``evotree memory export|import``.

An export is one JSON document::

    {"format": "evotree-memory", "v": 1, "workspace": "<id>", "domain": "math",
     "exported_at": "...", "exported_by": "...", "count": 12,
     "digest": "<sha256 of the entries' canonical JSON>", "entries": [MemoryEntry, ...]}

Import validates everything before writing anything: the format marker and version, the count
and digest (a truncated or corrupted file), every entry (fields, types, and that its content
hashes to its id). Then it appends the entries not already present in ONE memory commit, so an
import lands whole or not at all, and importing the same file twice adds nothing. Each imported
entry gets an ``origin`` (where and when it came from; not part of its id) so memory always shows
what was learned here and what was only reported by another workspace. Import writes only
``refs/evotree/memory``: nothing it carries can change the ledger, a run, a finding or a gate.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evotree.core.ledger import utcnow
from evotree.core.workspace import Workspace
from evotree.memory.model import EntryKind, InvalidMemory, MemoryEntry
from evotree.memory.record import workspace_id
from evotree.memory.store import MemoryStore

__all__ = [
    "EXPORT_FORMAT",
    "ExportResult",
    "ImportResult",
    "MergeResult",
    "export_memory",
    "import_memory",
    "merge_memory",
    "read_export",
]

EXPORT_FORMAT = "evotree-memory"
EXPORT_VERSION = 1
MAX_EXPORT_BYTES = 256 * 1024 * 1024


def _digest(entries: list[dict[str, Any]]) -> str:
    canonical = json.dumps(
        entries, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    ).encode()
    return hashlib.sha256(canonical).hexdigest()


@dataclass
class ExportResult:
    """What ``evotree memory export`` wrote (schema: ``memory_export.schema.json``)."""

    path: str
    entries: int
    kinds: dict[str, int]
    workspace: str
    domain: str
    digest: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "v": 1,
            "path": self.path,
            "entries": self.entries,
            "kinds": self.kinds,
            "workspace": self.workspace,
            "domain": self.domain,
            "digest": self.digest,
        }


@dataclass
class ImportResult:
    """What ``evotree memory import`` did (schema: ``memory_import.schema.json``)."""

    path: str
    source_workspace: str
    source_domain: str
    added: list[str]
    skipped: list[str]
    commit: str | None
    dry_run: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "v": 1,
            "path": self.path,
            "source_workspace": self.source_workspace,
            "source_domain": self.source_domain,
            "added": self.added,
            "skipped": self.skipped,
            "commit": self.commit,
            "dry_run": self.dry_run,
        }


def export_memory(
    ws: Workspace, path: str | os.PathLike[str], *, kind: str | None = None, force: bool = False
) -> ExportResult:
    """Write memory (optionally one kind) to ``path`` as an export document (atomically)."""
    target = Path(path)
    if target.exists() and not force:
        raise InvalidMemory(
            f"{target} already exists",
            fix="choose another path or pass --force to overwrite it",
            path=str(target),
        )
    if not target.parent.is_dir():
        raise InvalidMemory(
            f"cannot write {target}: {target.parent} is not a directory",
            fix="create the directory first",
            path=str(target),
        )
    kind_value = EntryKind.parse(kind).value if kind else None
    entries = [
        e for e in MemoryStore(ws.git).entries() if kind_value is None or e.kind == kind_value
    ]
    items = [e.to_dict() for e in entries]
    kinds: dict[str, int] = {}
    for entry in entries:
        kinds[entry.kind] = kinds.get(entry.kind, 0) + 1
    doc = {
        "format": EXPORT_FORMAT,
        "v": EXPORT_VERSION,
        "workspace": workspace_id(ws),
        "domain": ws.config.workspace.domain,
        "exported_at": utcnow(),
        "exported_by": str(ws.git.identity()),
        "count": len(items),
        "digest": _digest(items),
        "entries": items,
    }
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        os.replace(tmp, target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise InvalidMemory(
            f"cannot write {target}: {exc.strerror or exc}",
            fix="check the path and permissions",
            path=str(target),
        ) from None
    return ExportResult(
        path=str(target),
        entries=len(items),
        kinds=kinds,
        workspace=doc["workspace"],
        domain=doc["domain"],
        digest=doc["digest"],
    )


def read_export(path: str | os.PathLike[str]) -> tuple[dict[str, Any], list[MemoryEntry]]:
    """Read and fully validate an export; (header, entries). Raises :class:`InvalidMemory`."""
    source = Path(path)
    fix = "export it again with `evotree memory export PATH` in the source workspace"
    try:
        size = source.stat().st_size
    except OSError as exc:
        raise InvalidMemory(
            f"cannot read {source}: {exc.strerror or exc}", fix="check the path", path=str(source)
        ) from None
    if size > MAX_EXPORT_BYTES:
        raise InvalidMemory(
            f"{source} is {size} bytes; a memory export is at most {MAX_EXPORT_BYTES}",
            fix="export one kind at a time (--kind)",
            path=str(source),
        )
    try:
        doc = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidMemory(
            f"{source} is not a memory export (not JSON: {exc})", fix=fix, path=str(source)
        ) from None
    if not isinstance(doc, dict) or doc.get("format") != EXPORT_FORMAT:
        found = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
        raise InvalidMemory(
            f"{source} is not a memory export: format is {found!r}, expected {EXPORT_FORMAT!r}",
            fix=fix,
            path=str(source),
        )
    if doc.get("v") != EXPORT_VERSION:
        raise InvalidMemory(
            f"{source}: export version {doc.get('v')!r}, this evotree reads {EXPORT_VERSION}",
            fix="upgrade evotree, or export with the same evotree version",
            path=str(source),
        )
    for key, kind in (
        ("workspace", str),
        ("domain", str),
        ("count", int),
        ("digest", str),
        ("entries", list),
    ):
        if not isinstance(doc.get(key), kind) or isinstance(doc.get(key), bool):
            raise InvalidMemory(
                f"{source}: {key!r} missing or not a {kind.__name__}", fix=fix, path=str(source)
            )
    items = doc["entries"]
    if len(items) != doc["count"]:
        raise InvalidMemory(
            f"{source}: holds {len(items)} entries but says {doc['count']} (truncated or edited)",
            fix=fix,
            path=str(source),
        )
    if _digest(items) != doc["digest"]:
        raise InvalidMemory(
            f"{source}: the entries do not match the export's digest (corrupted or edited)",
            fix=fix,
            path=str(source),
        )
    entries = []
    for index, item in enumerate(items):
        try:
            entries.append(MemoryEntry.from_dict(item))
        except InvalidMemory as exc:
            raise InvalidMemory(
                f"{source}: entry {index}: {exc.message}",
                fix=exc.fix or fix,
                path=str(source),
                index=index,
            ) from None
    return doc, entries


def import_memory(
    ws: Workspace, path: str | os.PathLike[str], *, dry_run: bool = False
) -> ImportResult:
    """Validate the export at ``path``, then add its entries not yet present in one commit."""
    doc, entries = read_export(path)
    store = MemoryStore(ws.git)
    actor = ws.git.identity()
    now = utcnow()
    stamped = []
    for entry in entries:
        origin = {
            "imported_from": doc["workspace"],
            "imported_domain": doc["domain"],
            "imported_at": now,
            "imported_by": str(actor),
            "file": Path(path).name,
        }
        if entry.origin is not None:
            origin["via"] = entry.origin
        data = entry.to_dict()
        data["origin"] = origin
        stamped.append(MemoryEntry.from_dict(data))
    if dry_run:
        present = store.ids()
        unique = list(dict.fromkeys(e.id for e in stamped))
        return ImportResult(
            path=str(path),
            source_workspace=doc["workspace"],
            source_domain=doc["domain"],
            added=[i for i in unique if i not in present],
            skipped=[i for i in unique if i in present],
            commit=None,
            dry_run=True,
        )
    result = store.append(
        stamped, actor=actor, what=f"import from {doc['workspace']} ({doc['domain']})"
    )
    return ImportResult(
        path=str(path),
        source_workspace=doc["workspace"],
        source_domain=doc["domain"],
        added=[e.id for e in result.added],
        skipped=result.skipped,
        commit=result.commit,
        dry_run=False,
    )


@dataclass
class MergeResult:
    """What ``evotree memory merge`` did (schema: ``memory_merge.schema.json``)."""

    source: str
    source_commit: str
    added: list[str]
    skipped: list[str]
    commit: str | None
    fast_forward: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "v": 1,
            "source": self.source,
            "source_commit": self.source_commit,
            "added": self.added,
            "skipped": self.skipped,
            "commit": self.commit,
            "fast_forward": self.fast_forward,
        }


def merge_memory(ws: Workspace, rev: str) -> MergeResult:
    """Join another memory history (a clone's, fetched to ``rev``) into ``refs/evotree/memory``.

    Every entry of ``rev``'s tree is validated first (nothing is written if one is bad); the
    entries not present are added in one commit whose second parent is ``rev``, so pushing the
    result fast-forwards the remote. When ``rev`` already contains ours, the ref just moves to it.
    Entries keep their content and origin: a clone's memory is this workspace's memory.
    """
    import pygit2

    store = MemoryStore(ws.git)
    fix = (
        "fetch the other memory to a ref of its own first, e.g. git fetch origin "
        "refs/evotree/memory:refs/remotes/origin/evotree-memory"
    )
    try:
        commit = ws.git.repo.revparse_single(rev).peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError) as exc:
        raise InvalidMemory(f"{rev!r} does not name a commit ({exc})", fix=fix, rev=rev) from None
    tree = commit.tree
    if "meta.json" not in tree or "entries" not in tree:
        raise InvalidMemory(
            f"{rev} ({str(commit.id)[:10]}) is not a memory commit (no meta.json and entries/)",
            fix=fix,
            rev=rev,
        )
    entries = store.entries_of(tree, rev)
    head = store.head()
    fast_forward = head is None or ws.git.repo.descendant_of(commit.id, head.id)
    result = store.append(entries, actor=ws.git.identity(), what=f"merge {rev}", merge=commit.id)
    return MergeResult(
        source=rev,
        source_commit=str(commit.id),
        added=[e.id for e in result.added],
        skipped=result.skipped,
        commit=result.commit,
        fast_forward=bool(result.commit) and fast_forward,
    )
