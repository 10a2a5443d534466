"""Protected paths and the patch gate: what a candidate version's own changes may not do.

A candidate's diff is its branch tip (``refs/heads/evotree/<id>``) against the commit it started
from: the ledger's ``base_commit`` (its parent's tip when it was branched), or, for a merge
version, each tip the merge joined. Measured from there, not from the parent's *current* tip,
so later commits on the parent are not blamed on the child.

* **Protected paths** (``audit.protected_path``, critical): the diff touches the judge, hidden
  data, the gate policy or the harness — ``[protect].paths`` (default ``evotree.toml``,
  ``judge/``, ``gates/``), ``[eval].judge_paths``, ``[gates].allowed_signers`` and the harness
  files (``harness.toml``, ``analyzers.py``, ``.evotree/``). The judge is read from the champion
  anyway; a candidate that changes it is trying to change what judges it.
* **Patch gate** (AI4AI-Bench's): a patch that adds data (``audit.patch_data``: csv, parquet,
  jsonl, npz, archives ...), weights (``audit.patch_weights``: .pt, .safetensors, .bin, .ckpt,
  .gguf ...), binaries (``audit.patch_binary``: a NUL byte in the first 8000 bytes, git's own
  test), large files (``audit.patch_large_file``), row-shaped payloads in text files
  (``audit.patch_payload``: many added lines of one literal shape — CSV or JSON records pasted
  into a ``.py`` — or one enormous line), symlinks out of the tree or into protected paths
  (``audit.patch_symlink``) or submodules (``audit.patch_submodule``).

Thresholds: :class:`PatchGate`, read from the champion's ``[protect]`` (``max_file_bytes``,
``max_row_lines``, ``max_line_chars``, ``patch_allow``; same defaults as here).
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pygit2
from pygit2.enums import FileMode

from evotree.core.findings import Finding, sort_findings
from evotree.core.refs import branch_ref
from evotree.harness.audit.errors import AuditInputError

__all__ = [
    "DATA_SUFFIXES",
    "HARNESS_PATHS",
    "WEIGHT_SUFFIXES",
    "PatchGate",
    "check_patch",
    "check_protected_paths",
    "protected_patterns",
    "row_shape",
]

#: Files of the diagnostic harness a policy branch has no business changing.
HARNESS_PATHS = ("harness.toml", "analyzers.py", ".evotree/")
DATA_SUFFIXES = frozenset({
    "csv", "tsv", "parquet", "jsonl", "ndjson", "npz", "npy", "arrow", "feather", "avro", "orc",
    "h5", "hdf5", "pkl", "pickle", "xlsx", "xls", "sqlite", "sqlite3", "db", "duckdb", "tfrecord",
    "tfrecords", "lance", "mat", "zip", "tar", "tgz", "7z", "rar", "gz", "bz2", "xz", "zst", "lz4",
})
WEIGHT_SUFFIXES = frozenset({
    "pt", "pth", "safetensors", "bin", "ckpt", "gguf", "ggml", "onnx", "pb", "tflite", "msgpack",
    "mlmodel", "params", "joblib", "keras", "nemo", "engine", "caffemodel", "pdparams",
})
_COMPRESSION = ("gz", "bz2", "xz", "zst", "lz4", "zip")
_SAMPLE = 20

_STRING = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'")
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_LITERAL_WORD = re.compile(r"\b(?:true|false|null|none|nan|inf|True|False|None|NaN)\b")
_ROW_CHARS = set("NS,;|:[](){}\t")


@dataclass
class PatchGate:
    """Thresholds of the patch gate (``[protect]`` keys of the same names override them)."""

    #: added or changed files larger than this (bytes) fail the gate
    max_file_bytes: int = 1_000_000
    #: added lines of one literal row shape (CSV / JSON records) a text file may gain
    max_row_lines: int = 200
    #: the longest added line a text file may have (a data literal on one line)
    max_line_chars: int = 20_000
    #: paths (globs; ``dir/`` for a folder) exempt from the patch gate (not from protected paths)
    allow: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        for key in ("max_file_bytes", "max_row_lines", "max_line_chars"):
            value = getattr(self, key)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise AuditInputError(f"patch gate {key}: expected a positive integer, actually: {value!r}",
                                      fix=f"set [protect].{key} to a positive integer")

    @classmethod
    def from_protect(cls, protect: Any) -> PatchGate:
        """The gate of a ``[protect]`` section: its keys where it has them, defaults otherwise."""
        base = cls()
        return cls(max_file_bytes=getattr(protect, "max_file_bytes", base.max_file_bytes),
                   max_row_lines=getattr(protect, "max_row_lines", base.max_row_lines),
                   max_line_chars=getattr(protect, "max_line_chars", base.max_line_chars),
                   allow=list(getattr(protect, "patch_allow", base.allow)))


def protected_patterns(config: Any) -> list[str]:
    """Every protected path of a configuration: protect.paths, judge paths, signers, harness."""
    patterns = [*config.protect.paths, *config.eval.judge_paths]
    signers = getattr(config.gates, "allowed_signers", "")
    if signers:
        patterns.append(signers)
    patterns += HARNESS_PATHS
    return list(dict.fromkeys(p for p in patterns if p))


def _match(path: str, patterns: Iterable[str]) -> str | None:
    """The first pattern that covers ``path``: ``dir/`` (or ``dir``) covers everything under it."""
    for pattern in patterns:
        bare = pattern.rstrip("/")
        if path == bare or path.startswith(bare + "/") or fnmatch.fnmatchcase(path, pattern) \
                or fnmatch.fnmatchcase(path, bare + "/*"):
            return pattern
    return None


def row_shape(line: str) -> str | None:
    """The literal shape of a data-row line (``"a",1.5,2`` -> ``S,N,N``), None for other lines.

    A row is made only of literals (strings, numbers, true/false/null) and separators, with at
    least two literals: CSV records, JSON records, rows of a list literal. Code is not a row.
    """
    text = line.strip()
    if len(text) < 3:
        return None
    shape = _STRING.sub("S", text)
    shape = _LITERAL_WORD.sub("N", shape)
    shape = _NUMBER.sub("N", shape)
    shape = re.sub(r"\s+", "", shape)
    if not shape or any(c not in _ROW_CHARS for c in shape):
        return None
    if shape.count("N") + shape.count("S") < 2:
        return None
    return shape


def _suffixes(path: str) -> list[str]:
    name = posixpath.basename(path).lower()
    parts = name.split(".")[1:]
    return parts


def _kind_by_name(path: str) -> str | None:
    parts = _suffixes(path)
    if not parts:
        return None
    last = parts[-1]
    if last in WEIGHT_SUFFIXES:
        return "weights"
    if last in _COMPRESSION and len(parts) >= 2 and parts[-2] in WEIGHT_SUFFIXES:
        return "weights"
    if last in DATA_SUFFIXES:
        return "data"
    return None


def _shapes(text: str) -> tuple[Counter[str], int]:
    counts: Counter[str] = Counter()
    longest = 0
    for line in text.splitlines():
        longest = max(longest, len(line))
        shape = row_shape(line)
        if shape is not None:
            counts[shape] += 1
    return counts, longest


def _blob(repo: pygit2.Repository, oid: pygit2.Oid) -> pygit2.Blob | None:
    try:
        obj = repo[oid]
    except (KeyError, ValueError):
        return None
    return obj if isinstance(obj, pygit2.Blob) else None


def check_patch(repo: pygit2.Repository, old: pygit2.Commit, new: pygit2.Commit, *,
                protected: Sequence[str], gate: PatchGate | None = None,
                version: str | None = None) -> list[Finding]:
    """Findings of the diff ``old`` -> ``new``: protected paths touched, and the patch gate."""
    gate = gate or PatchGate()
    diff = repo.diff(old.tree, new.tree)
    diff.find_similar()
    touched: list[dict[str, Any]] = []
    gate_hits: dict[str, list[dict[str, Any]]] = {}

    def hit(code: str, item: dict[str, Any]) -> None:
        gate_hits.setdefault(code, []).append(item)

    for delta in diff.deltas:
        status = delta.status_char()
        old_path, new_path = delta.old_file.path, delta.new_file.path
        for path in dict.fromkeys([old_path, new_path]):
            pattern = _match(path, protected)
            if pattern is not None:
                touched.append({"path": path, "status": status, "pattern": pattern})
                break
        if status == "D" or _match(new_path, gate.allow) is not None:
            continue
        mode = delta.new_file.mode
        if mode == FileMode.COMMIT:
            hit("audit.patch_submodule", {"path": new_path, "commit": str(delta.new_file.id)})
            continue
        blob = _blob(repo, delta.new_file.id)
        if blob is None:
            continue
        if mode == FileMode.LINK:
            link = blob.data.decode("utf-8", "replace")
            resolved = posixpath.normpath(posixpath.join(posixpath.dirname(new_path), link))
            inside = _match(resolved, protected)
            if link.startswith("/") or resolved.startswith("..") or inside is not None:
                hit("audit.patch_symlink", {"path": new_path, "target": link,
                                            "why": "absolute" if link.startswith("/") else
                                            "outside the tree" if resolved.startswith("..") else f"into {inside}"})
            continue
        size = blob.size
        kind = _kind_by_name(new_path)
        data = blob.data
        if kind == "weights":
            hit("audit.patch_weights", {"path": new_path, "status": status, "bytes": size})
        elif kind == "data":
            hit("audit.patch_data", {"path": new_path, "status": status, "bytes": size})
        elif b"\0" in data[:8000]:
            hit("audit.patch_binary", {"path": new_path, "status": status, "bytes": size})
        else:
            text = data.decode("utf-8", "replace")
            shapes, longest = _shapes(text)
            if status in ("M", "R", "C"):
                before = _blob(repo, delta.old_file.id)
                if before is not None:
                    shapes -= _shapes(before.data.decode("utf-8", "replace"))[0]
            if shapes:
                shape, count = shapes.most_common(1)[0]
                if count > gate.max_row_lines:
                    hit("audit.patch_payload", {"path": new_path, "status": status, "rows": count,
                                                "shape": shape[:80], "limit": gate.max_row_lines})
                    continue
            if longest > gate.max_line_chars:
                hit("audit.patch_payload", {"path": new_path, "status": status, "longest_line": longest,
                                            "limit": gate.max_line_chars})
                continue
        if size > gate.max_file_bytes:
            hit("audit.patch_large_file", {"path": new_path, "status": status, "bytes": size,
                                           "limit": gate.max_file_bytes})

    common = {"from": str(old.id), "to": str(new.id)}
    findings: list[Finding] = []
    if touched:
        findings.append(Finding(
            layer="audit", code="audit.protected_path", severity="critical",
            title=f"the candidate changes {len(touched)} protected path(s): "
                  f"{', '.join(t['path'] for t in touched[:3])}{' ...' if len(touched) > 3 else ''}",
            evidence={**common, "count": len(touched), "paths": touched[:_SAMPLE]},
            suggestion="revert the changes to the judge, hidden data, gates and harness on the candidate's "
                       "branch; change them on the champion (a reviewed promotion), never from a candidate",
            version=version))
    titles = {
        "audit.patch_data": ("high", "the patch adds data files",
                             "keep data out of the recipe; load it at run time from the domain's train split"),
        "audit.patch_weights": ("high", "the patch adds model weights",
                                "a candidate is a recipe that retrains from scratch; remove the weights"),
        "audit.patch_binary": ("high", "the patch adds binary files", "remove them; a recipe is source"),
        "audit.patch_large_file": ("high", "the patch adds large files",
                                   "remove or shrink them, or list them in [protect].patch_allow if legitimate"),
        "audit.patch_payload": ("high", "the patch embeds row-shaped data in text files",
                                "remove the embedded rows (answers or labels pasted into code)"),
        "audit.patch_symlink": ("high", "the patch adds symlinks out of the tree or into protected paths",
                                "remove the symlinks: they read files the run must not see"),
        "audit.patch_submodule": ("warn", "the patch adds submodules", "vendor the code as files, or drop it"),
    }
    for code, items in gate_hits.items():
        severity, title, fix = titles[code]
        findings.append(Finding(
            layer="audit", code=code, severity=severity,
            title=f"{title}: {', '.join(i['path'] for i in items[:3])}{' ...' if len(items) > 3 else ''}",
            evidence={**common, "count": len(items), "paths": items[:_SAMPLE]}, suggestion=fix, version=version))
    return sort_findings(findings)


def check_protected_paths(ws: Any, version: str, *, gate: PatchGate | None = None) -> list[Finding]:
    """Findings of ``version``'s own changes: protected paths touched and the patch gate.

    The diff runs from where the version started (``base_commit``; for a merge version, each
    tip the merge joined) to its branch tip. The protected paths and thresholds come from the
    configuration in force (the champion's ``evotree.toml``), never from the candidate. A root
    version (no parent) has no diff: ``[]``.
    """
    record = ws.resolve(version)
    repo: pygit2.Repository = ws.git.repo
    tip_id = ws.git.ref_target(branch_ref(record.id))
    if tip_id is None:
        raise AuditInputError(f"version {record.id} has no branch {branch_ref(record.id)}",
                              fix=f"restore it: git branch {record.branch} {record.base_commit}")
    if not record.parents:
        return []
    tip = repo[tip_id].peel(pygit2.Commit)
    try:
        start = repo[record.base_commit].peel(pygit2.Commit)
    except (KeyError, ValueError):
        raise AuditInputError(f"version {record.id}'s base commit {record.base_commit[:12]} is not in the repository",
                              fix="fetch the tree again: git fetch origin 'refs/heads/evotree/*:refs/heads/evotree/*'") from None
    starts = list(start.parents) if len(record.parents) > 1 and start.parents else [start]
    config = ws.config
    gate = gate or PatchGate.from_protect(config.protect)
    patterns = protected_patterns(config)
    merged: dict[str, Finding] = {}
    for origin in starts:
        for finding in check_patch(repo, origin, tip, protected=patterns, gate=gate, version=record.id):
            if finding.code in merged:  # a merge: one finding per code, paths of every side
                seen = merged[finding.code].evidence
                have = {p["path"] for p in seen["paths"]}
                seen["paths"] += [p for p in finding.evidence["paths"] if p["path"] not in have][: _SAMPLE]
                seen["count"] = max(seen["count"], finding.evidence["count"])
            else:
                merged[finding.code] = finding
    return sort_findings(list(merged.values()))
