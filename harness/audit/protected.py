"""Protected paths and the patch gate: what a candidate version's patch may not do.

A candidate's patch is its branch tip (``refs/heads/evotree/<id>``) against the *pristine base*
(``[protect].base``: the root version's first commit unless configured), not against its
parent: what an ancestor added is in the patch too. Protected paths are compared with the
champion's tree. :func:`version_patch` (re-exported by :mod:`evotree.harness.patch`) is the one
function the audit, the protected gate and the check before a run use.

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

Payloads however encoded (``audit.patch_payload``): numeric literals on one added line
(``max_line_numbers``: weights as a one-line JSON array) or in a file's added lines
(``max_file_numbers``), base64 / hex runs and byte escapes (``max_encoded_chars``); binary
bytes anywhere in a file (a NUL past git's first 8000 bytes, text that is not UTF-8, control
characters) are ``audit.patch_binary``. Allowlists: ``[protect].editable`` (globs; anything
else changed is ``audit.patch_not_editable``) and ``[protect].editable_keys`` (``FILE:KEY-GLOB``:
a TOML / JSON file that may change only at those dotted keys, ``audit.patch_config_key``).

**Where from** (:func:`check_protected_paths`): protected paths are compared with the champion's
tree (the policy in force; a person accepts a change of them at promotion); the patch rules
with the *pristine base* (``[protect].base``, default the root version's first commit), as
AI4AI-Bench measures a candidate's patch against its frozen start: a child of a version that
added ``warm.npy`` carries it in its patch too. Globs (:func:`glob_match`) mean the same in
the audit, the protected gate and the check before a run.

Thresholds: :class:`PatchGate`, read from the champion's ``[protect]`` (``max_file_bytes``,
``max_row_lines``, ``max_line_chars``, ``patch_allow``, ...; same defaults as here).
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import posixpath
import re
import tomllib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import pygit2
from pygit2.enums import FileMode

from evotree.core.findings import Finding, sort_findings
from evotree.core.refs import CHAMPION_REF, branch_ref
from evotree.harness.audit.errors import AuditInputError

__all__ = [
    "DATA_SUFFIXES",
    "HARNESS_PATHS",
    "WEIGHT_SUFFIXES",
    "PATCH_FORMAT",
    "PatchGate",
    "VersionPatch",
    "check_patch",
    "check_protected_paths",
    "glob_match",
    "protected_patterns",
    "patch_digest",
    "patch_sha256",
    "protected_touches",
    "resolve_base",
    "row_shape",
    "version_patch",
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
#: patch-gate codes that block (the gate and the check before a run refuse them)
BLOCKING = ("high", "critical")

_STRING = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'")
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
#: a numeric literal standing alone (not part of a name such as ``x1`` or a version ``1.2.3``'s middle)
_LONE_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?![\w])")
_LITERAL_WORD = re.compile(r"\b(?:true|false|null|none|nan|inf|True|False|None|NaN)\b")
_ROW_CHARS = set("NS,;|:[](){}\t")
#: runs of base64 / base64url / hex characters long enough to carry bytes
_ENCODED_RUN = re.compile(r"[A-Za-z0-9+/_-]{40,}={0,2}")
_HEX = re.compile(r"[0-9a-fA-F]+")
#: byte escapes in a string literal (``\x00\x01...``, ``\u0000``, octal)
_ESCAPES = re.compile(r"(?:\\x[0-9a-fA-F]{2}|\\u[0-9a-fA-F]{4}|\\[0-7]{3}){8,}")
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f]")
_MAX_CONTROL = 8
#: a whole patch may hold this many times a file's limit of numbers or encoded characters
_SPREAD = 4


@dataclass
class PatchGate:
    """Thresholds and allowlists of the patch gate (``[protect]`` keys of the same names override them)."""

    #: added or changed files larger than this (bytes) fail the gate
    max_file_bytes: int = 1_000_000
    #: added lines of one literal row shape (CSV / JSON records) a text file may gain
    max_row_lines: int = 200
    #: the longest added line a text file may have (a data literal on one line)
    max_line_chars: int = 20_000
    #: paths (globs; ``dir/`` for a folder) exempt from the patch gate (not from protected paths)
    allow: list[str] = field(default_factory=list)
    #: numeric literals one added line may hold
    max_line_numbers: int = 128
    #: numeric literals the added lines of one text file may hold in all
    max_file_numbers: int = 1000
    #: characters of base64 / hex runs and byte escapes one text file may gain
    max_encoded_chars: int = 2048
    #: globs of the only paths a patch may change (empty: no allowlist)
    editable: list[str] = field(default_factory=list)
    #: ``FILE:KEY-GLOB`` entries: FILE may change only at the dotted keys the globs match
    editable_keys: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        for key in ("max_file_bytes", "max_row_lines", "max_line_chars", "max_line_numbers", "max_file_numbers",
                    "max_encoded_chars"):
            value = getattr(self, key)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise AuditInputError(f"patch gate {key}: expected a positive integer, actually: {value!r}",
                                      fix=f"set [protect].{key} to a positive integer")
        for entry in self.editable_keys:
            file, sep, keys = entry.partition(":")
            if not sep or not file or not keys:
                raise AuditInputError(f'patch gate editable_keys: expected "FILE:KEY-GLOB", actually: {entry!r}',
                                      fix='write entries such as "recipe.toml:train.learning_rate"')

    @classmethod
    def from_protect(cls, protect: Any) -> PatchGate:
        """The gate of a ``[protect]`` section: its keys where it has them, defaults otherwise."""
        base = cls()
        return cls(max_file_bytes=getattr(protect, "max_file_bytes", base.max_file_bytes),
                   max_row_lines=getattr(protect, "max_row_lines", base.max_row_lines),
                   max_line_chars=getattr(protect, "max_line_chars", base.max_line_chars),
                   allow=list(getattr(protect, "patch_allow", base.allow)),
                   max_line_numbers=getattr(protect, "max_line_numbers", base.max_line_numbers),
                   max_file_numbers=getattr(protect, "max_file_numbers", base.max_file_numbers),
                   max_encoded_chars=getattr(protect, "max_encoded_chars", base.max_encoded_chars),
                   editable=list(getattr(protect, "editable", base.editable)),
                   editable_keys=list(getattr(protect, "editable_keys", base.editable_keys)))

    def key_rules(self) -> dict[str, list[str]]:
        """``{file: [key globs]}`` of :attr:`editable_keys`."""
        rules: dict[str, list[str]] = {}
        for entry in self.editable_keys:
            file, _, keys = entry.partition(":")
            rules.setdefault(file.strip("/"), []).append(keys)
        return rules


def protected_patterns(config: Any) -> list[str]:
    """Every protected path of a configuration: protect.paths, judge paths, signers, the policy
    file itself (even where ``paths`` leaves it out) and the harness files."""
    patterns = [*config.protect.paths, *config.eval.judge_paths]
    signers = getattr(config.gates, "allowed_signers", "")
    if signers:
        patterns.append(signers)
    patterns.append("evotree.toml")
    patterns += HARNESS_PATHS
    return list(dict.fromkeys(p for p in patterns if p))


@lru_cache(maxsize=512)
def _glob_regex(pattern: str, fold: bool) -> re.Pattern[str]:
    """An anchored glob: ``**`` crosses folders, ``*`` ``?`` ``[...]`` (``[!...]``) stay in one."""
    out, i, n = [], 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1:i + 2] in ("!", "^") else i + 1)
            if end < 0:
                out.append(re.escape(c))
                i += 1
                continue
            inner = pattern[i + 1:end]
            negate = inner[:1] in ("!", "^")
            inner = inner[1:] if negate else inner
            inner = inner.replace("\\", "\\\\")
            out.append(f"[^/{inner}]" if negate else f"[{inner}]")
            i = end + 1
        else:
            out.append(re.escape(c))
            i += 1
    return re.compile("".join(out), re.IGNORECASE if fold else 0)


def glob_match(path: str, pattern: str, *, fold: bool = False) -> bool:
    """Whether ``pattern`` covers the repository path ``path``.

    Patterns are anchored at the repository root. ``dir/`` (or a pattern that names a folder)
    covers everything under it; ``**`` crosses folders (``data/**``, ``**/helper.py``); ``*``,
    ``?`` and ``[...]`` / ``[!...]`` match within one path segment. ``fold``: ignore case.
    """
    bare = pattern.rstrip("/")
    if not bare:
        return False
    regex = _glob_regex(bare, fold)
    if regex.fullmatch(path):
        return True
    parts = path.split("/")
    return any(regex.fullmatch("/".join(parts[:k])) for k in range(1, len(parts)))


def _match(path: str, patterns: Iterable[str]) -> str | None:
    """The first protected pattern that covers ``path``: :func:`glob_match` ignoring case, or
    (as before) ``fnmatch`` where ``*`` also crosses folders: a denylist errs on the wide side."""
    for pattern in patterns:
        bare = pattern.rstrip("/")
        if glob_match(path, pattern, fold=True) or fnmatch.fnmatchcase(path, pattern) \
                or fnmatch.fnmatchcase(path, bare + "/*"):
            return pattern
    return None


def _editable(path: str, patterns: Iterable[str]) -> bool:
    """An allowlist matches exactly: case-sensitive, ``*`` within one folder."""
    return any(glob_match(path, p) for p in patterns)


def row_shape(line: str) -> str | None:
    """The literal shape of a data-row line (``"a",1.5,2`` -> ``S,N,N``), None for other lines.

    A row is made only of literals (strings, numbers, true/false/null) and separators: CSV
    records, JSON records, rows of a list literal — one quoted answer or one number a line
    included (``"Paris",``). Code is not a row.
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
    if shape.count("N") + shape.count("S") < 1:
        return None
    return shape


def _suffixes(path: str) -> list[str]:
    name = posixpath.basename(path).lower().rstrip(" .\t")
    return [part.strip() for part in name.split(".")[1:]]


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


def _binary_reason(data: bytes) -> str | None:
    """Why a blob is not text: a NUL anywhere, bytes that are not UTF-8, control characters."""
    if b"\0" in data:
        return "NUL byte"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})"
    controls = len(_CONTROL.findall(text))
    if controls > _MAX_CONTROL:
        return f"{controls} control characters"
    return None


def _encoded_chars(text: str) -> int:
    """Characters of base64 / hex runs (mixed letters and digits) and of byte-escape runs."""
    total = 0
    for m in _ENCODED_RUN.finditer(text):
        run = m.group(0)
        if not any(c.isdigit() for c in run):
            continue
        if _HEX.fullmatch(run) or (any(c.isupper() for c in run) and any(c.islower() for c in run)):
            total += len(run)
    total += sum(len(m.group(0)) for m in _ESCAPES.finditer(text))
    return total


def _added_lines(new: str, old: str | None) -> list[str]:
    """Lines of ``new`` that ``old`` does not have (as a multiset): what a change added."""
    lines = new.splitlines()
    if old is None:
        return lines
    have = Counter(old.splitlines())
    out = []
    for line in lines:
        if have[line] > 0:
            have[line] -= 1
        else:
            out.append(line)
    return out


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out or ({prefix: {}} if prefix else {})
    return {prefix: value}


def _parse_params(path: str, data: bytes | None) -> dict[str, Any] | str:
    """Dotted keys of a TOML / JSON file (``{}`` when absent), or why it cannot be read."""
    if data is None:
        return {}
    try:
        text = data.decode("utf-8")
        parsed = json.loads(text) if path.lower().endswith(".json") else tomllib.loads(text)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        return f"not readable as {'JSON' if path.lower().endswith('.json') else 'TOML'}: {str(exc)[:120]}"
    if not isinstance(parsed, dict):
        return "not a table of keys"
    return _flatten(parsed)


def _blob(repo: pygit2.Repository, oid: pygit2.Oid) -> pygit2.Blob | None:
    try:
        obj = repo[oid]
    except (KeyError, ValueError):
        return None
    return obj if isinstance(obj, pygit2.Blob) else None


def protected_touches(repo: pygit2.Repository, old: pygit2.Commit, new: pygit2.Commit,
                      protected: Sequence[str]) -> list[dict[str, Any]]:
    """``{path, status, pattern}`` of every file under a protected pattern that differs between the trees."""
    diff = repo.diff(old.tree, new.tree)
    diff.find_similar()
    touched: list[dict[str, Any]] = []
    for delta in diff.deltas:
        for path in dict.fromkeys([delta.old_file.path, delta.new_file.path]):
            pattern = _match(path, protected)
            if pattern is not None:
                touched.append({"path": path, "status": delta.status_char(), "pattern": pattern})
                break
    return touched


def _protected_finding(touched: list[dict[str, Any]], common: dict[str, str], version: str | None) -> Finding:
    return Finding(
        layer="audit", code="audit.protected_path", severity="critical",
        title=f"the candidate changes {len(touched)} protected path(s): "
              f"{', '.join(t['path'] for t in touched[:3])}{' ...' if len(touched) > 3 else ''}",
        evidence={**common, "count": len(touched), "paths": touched[:_SAMPLE]},
        suggestion="revert the changes to the judge, hidden data, gates and harness on the candidate's "
                   "branch; change them on the champion (a reviewed promotion), never from a candidate",
        version=version)


def check_patch(repo: pygit2.Repository, old: pygit2.Commit, new: pygit2.Commit, *,
                protected: Sequence[str], gate: PatchGate | None = None,
                version: str | None = None, protected_paths: bool = True) -> list[Finding]:
    """Findings of the diff ``old`` -> ``new``: protected paths touched (unless ``protected_paths``
    is False: :func:`check_protected_paths` measures those from the champion), and the patch gate."""
    gate = gate or PatchGate()
    diff = repo.diff(old.tree, new.tree)
    diff.find_similar()
    touched: list[dict[str, Any]] = []
    gate_hits: dict[str, list[dict[str, Any]]] = {}
    key_rules = gate.key_rules()
    spread: dict[str, Any] = {"numbers": 0, "encoded_chars": 0, "files": []}

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
        # the allowlists: every path the delta changes (both sides of a rename) must be editable
        changed_paths = list(dict.fromkeys([old_path, new_path] if status not in ("A", "C") else [new_path]))
        if status == "D":  # (a copy leaves its source as it was)
            changed_paths = [old_path]
        for path in changed_paths:
            if path in key_rules:
                before = _blob(repo, delta.old_file.id) if status != "A" and path == old_path else None
                after = _blob(repo, delta.new_file.id) if status != "D" and path == new_path else None
                params_a = _parse_params(path, before.data if before is not None else None)
                params_b = _parse_params(path, after.data if after is not None else None)
                if isinstance(params_a, str) or isinstance(params_b, str):
                    hit("audit.patch_config_key", {"path": path, "status": status,
                                                   "why": params_b if isinstance(params_b, str) else params_a})
                    continue
                keys = sorted(k for k in set(params_a) | set(params_b)
                              if params_a.get(k, _MISSING) != params_b.get(k, _MISSING)
                              and not any(fnmatch.fnmatchcase(k, g) for g in key_rules[path]))
                if keys:
                    hit("audit.patch_config_key", {"path": path, "status": status, "keys": keys[:_SAMPLE],
                                                   "editable": key_rules[path]})
            elif gate.editable and not _editable(path, gate.editable) and _match(path, protected) is None:
                # (protected paths have a rule of their own: equal to the champion's, not to the base)
                hit("audit.patch_not_editable", {"path": path, "status": status})
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
        binary = _binary_reason(data) if kind is None else None
        if kind == "weights":
            hit("audit.patch_weights", {"path": new_path, "status": status, "bytes": size})
        elif kind == "data":
            hit("audit.patch_data", {"path": new_path, "status": status, "bytes": size})
        elif binary is not None:
            hit("audit.patch_binary", {"path": new_path, "status": status, "bytes": size, "why": binary})
        else:
            text = data.decode("utf-8", "replace")
            before_text = None
            if status in ("M", "R", "C"):
                before = _blob(repo, delta.old_file.id)
                if before is not None:
                    before_text = before.data.decode("utf-8", "replace")
            shapes, _ = _shapes(text)
            if before_text is not None:
                shapes -= _shapes(before_text)[0]
            if shapes:
                shape, count = shapes.most_common(1)[0]
                if count > gate.max_row_lines:
                    hit("audit.patch_payload", {"path": new_path, "status": status, "rows": count,
                                                "shape": shape[:80], "limit": gate.max_row_lines})
                    continue
            added = _added_lines(text, before_text)
            longest = max((len(line) for line in added), default=0)
            if longest > gate.max_line_chars:
                hit("audit.patch_payload", {"path": new_path, "status": status, "longest_line": longest,
                                            "limit": gate.max_line_chars})
                continue
            per_line = [len(_LONE_NUMBER.findall(line)) for line in added]
            most = max(per_line, default=0)
            if most > gate.max_line_numbers:
                hit("audit.patch_payload", {"path": new_path, "status": status, "line_numbers": most,
                                            "limit": gate.max_line_numbers})
                continue
            if sum(per_line) > gate.max_file_numbers:
                hit("audit.patch_payload", {"path": new_path, "status": status, "numbers": sum(per_line),
                                            "limit": gate.max_file_numbers})
                continue
            encoded = _encoded_chars("\n".join(added))
            if encoded > gate.max_encoded_chars:
                hit("audit.patch_payload", {"path": new_path, "status": status, "encoded_chars": encoded,
                                            "limit": gate.max_encoded_chars})
                continue
            spread["numbers"] += sum(per_line)
            spread["encoded_chars"] += encoded
            spread["files"].append(new_path)
        if size > gate.max_file_bytes:
            hit("audit.patch_large_file", {"path": new_path, "status": status, "bytes": size,
                                           "limit": gate.max_file_bytes})

    # data sharded into many files, each under the per-file limits: the patch as a whole
    for key, limit in (("numbers", gate.max_file_numbers * _SPREAD), ("encoded_chars", gate.max_encoded_chars * _SPREAD)):
        if spread[key] > limit:
            hit("audit.patch_payload", {"path": f"{len(spread['files'])} files", "status": "*", key: spread[key],
                                        "limit": limit, "files": spread["files"][:_SAMPLE]})
    common = {"from": str(old.id), "to": str(new.id)}
    findings: list[Finding] = []
    if touched and protected_paths:
        findings.append(_protected_finding(touched, common, version))
    titles = {
        "audit.patch_data": ("high", "the patch adds data files",
                             "keep data out of the recipe; load it at run time from the domain's train split"),
        "audit.patch_weights": ("high", "the patch adds model weights",
                                "a candidate is a recipe that retrains from scratch; remove the weights"),
        "audit.patch_binary": ("high", "the patch adds binary files", "remove them; a recipe is source"),
        "audit.patch_large_file": ("high", "the patch adds large files",
                                   "remove or shrink them, or list them in [protect].patch_allow if legitimate"),
        "audit.patch_payload": ("high", "the patch embeds data in text files (rows, number arrays or encoded bytes)",
                                "remove the embedded data (answers, labels or weights pasted into code or config)"),
        "audit.patch_symlink": ("high", "the patch adds symlinks out of the tree or into protected paths",
                                "remove the symlinks: they read files the run must not see"),
        "audit.patch_submodule": ("warn", "the patch adds submodules", "vendor the code as files, or drop it"),
        "audit.patch_not_editable": ("high", "the patch changes paths outside [protect].editable",
                                     "revert them: this protocol lets a candidate change only the editable paths"),
        "audit.patch_config_key": ("high", "the patch changes configuration keys outside [protect].editable_keys",
                                   "revert those keys: only the listed keys of the file may change"),
    }
    for code, items in gate_hits.items():
        severity, title, fix = titles[code]
        findings.append(Finding(
            layer="audit", code=code, severity=severity,
            title=f"{title}: {', '.join(i['path'] for i in items[:3])}{' ...' if len(items) > 3 else ''}",
            evidence={**common, "count": len(items), "paths": items[:_SAMPLE]}, suggestion=fix, version=version))
    return sort_findings(findings)


_MISSING = object()


def check_protected_paths(ws: Any, version: str, *, gate: PatchGate | None = None,
                          config: Any = None, champion_commit: str | None = None) -> list[Finding]:
    """Findings of ``version``: protected paths changed, and its patch against the pristine base.

    Protected paths are compared with the champion's tree (``champion_commit``, default the
    champion ref); the patch rules with ``[protect].base`` (:func:`resolve_base`, default the
    root version's first commit). The paths, thresholds and allowlists come from ``config``
    (default the configuration in force, the champion's ``evotree.toml``), never from the
    candidate. :func:`version_patch` has the same findings, with the patch's hash.
    """
    return version_patch(ws, version, gate=gate, config=config, champion_commit=champion_commit).all_findings


# ---------------------------------------------------------------------------- the pristine base
#: the name of the canonical form :func:`patch_sha256` hashes
PATCH_FORMAT = "evotree-tree-delta-v1"
_COMMIT = re.compile(r"[0-9a-f]{40}")


@dataclass
class VersionPatch:
    """A version's patch: base, commit, hash, changed paths and the findings of the rules."""

    version: str
    #: how the base was named (``root (v0)``, ``champion``, a version id or a commit)
    base: str
    base_commit: str
    commit: str
    sha256: str
    files: list[dict[str, str]]
    #: findings of the patch rules (measured from the base)
    findings: list[Finding] = field(default_factory=list)
    #: the protected-path finding (measured from the champion), if any
    protected: list[Finding] = field(default_factory=list)
    champion_commit: str | None = None

    @property
    def blocking(self) -> list[Finding]:
        """The patch findings the gate and the check before a run refuse (high and critical)."""
        return [f for f in self.findings if f.severity in BLOCKING]

    @property
    def all_findings(self) -> list[Finding]:
        """Protected-path and patch findings together, sorted (what ``evotree audit`` reports)."""
        return sort_findings([*self.protected, *self.findings])

    @property
    def changed_protected(self) -> list[str]:
        """Protected paths whose content differs from the champion's."""
        return sorted({p["path"] for f in self.protected for p in f.evidence.get("paths", [])})

    def summary(self) -> dict[str, Any]:
        """What the ledger records of the patch (``run.started``'s ``patch``)."""
        return {"format": PATCH_FORMAT, "sha256": self.sha256, "base": self.base, "base_commit": self.base_commit,
                "commit": self.commit, "files": len(self.files)}

    def to_dict(self) -> dict[str, Any]:
        return {**self.summary(), "version": self.version, "paths": self.files[:200],
                "findings": [f.to_dict() for f in self.all_findings],
                "blocking": [f.code for f in self.blocking], "changed_protected": self.changed_protected}


def _commit(repo: pygit2.Repository, rev: str, what: str) -> pygit2.Commit:
    try:
        return repo[rev].peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.InvalidSpecError):
        raise AuditInputError(f"{what} {rev[:12]} is not a commit of this repository",
                              fix="fetch it, or name another [protect].base in the champion's evotree.toml") from None


def resolve_base(ws: Any, base: str, *, champion_commit: str | None = None) -> tuple[str, str]:
    """``(label, commit)`` of a ``[protect].base``: ``root`` (the root version's first commit),
    ``champion``, a root version id, or a full commit id. Every choice is immutable: a root's
    first commit is in the ledger, a champion commit is signed; a non-root version's branch
    could move under its own children, so it is refused."""
    base = (base or "root").strip()
    if base == "champion":
        commit = champion_commit or (str(ws.git.ref_target(CHAMPION_REF) or "") or None)
        if commit is None:
            raise AuditInputError("[protect].base = \"champion\": refs/evotree/champion is missing",
                                  fix="re-run `evotree init` in a fresh clone")
        return "champion", commit
    if _COMMIT.fullmatch(base):
        return base[:12], str(_commit(ws.git.repo, base, "[protect].base commit").id)
    versions = ws.ledger.versions()
    if base == "root":
        roots = sorted((r for r in versions if not r.parents), key=lambda r: (r.created_at, r.id))
        if not roots:
            raise AuditInputError("the ledger has no root version to measure patches from",
                                  fix="set [protect].base to a full commit id in the champion's evotree.toml")
        return f"root ({roots[0].id})", roots[0].base_commit
    record = ws.resolve(base)
    if record.parents:
        raise AuditInputError(f"[protect].base = {base!r} is not a root version: its branch can move, so it is "
                              "no pristine base", fix='name "root", "champion", a root version or a full commit id')
    return base, record.base_commit


def patch_sha256(repo: pygit2.Repository, base: pygit2.Commit, tip: pygit2.Commit) -> tuple[str, list[dict[str, str]]]:
    """The canonical hash of the patch ``base`` -> ``tip`` and its changed paths (module docstring)."""
    diff = repo.diff(base.tree, tip.tree)
    lines = [f"{PATCH_FORMAT}\nbase-tree {base.tree.id}\ntree {tip.tree.id}\n"]
    files = []
    rows = sorted(diff.deltas, key=lambda d: (d.new_file.path, d.old_file.path))
    for d in rows:
        status = d.status_char()
        lines.append(f"{status} {d.old_file.mode:06o} {d.new_file.mode:06o} {d.old_file.id} {d.new_file.id}\t"
                     f"{d.old_file.path}\t{d.new_file.path}\n")
        files.append({"path": d.new_file.path if status != "D" else d.old_file.path, "status": status})
    digest = hashlib.sha256()
    for line in lines:
        digest.update(line.encode("utf-8", "surrogateescape"))
    return digest.hexdigest(), files


def patch_digest(ws: Any, version: str, *, commit: str | None = None, config: Any = None) -> dict[str, Any]:
    """What ``run.started`` records of a run's patch (:meth:`VersionPatch.summary`) without
    running the rules: base, base commit, commit, hash and the number of changed paths."""
    record = ws.resolve(version)
    repo: pygit2.Repository = ws.git.repo
    if commit is None:
        tip_id = ws.git.ref_target(branch_ref(record.id))
        if tip_id is None:
            raise AuditInputError(f"version {record.id} has no branch {branch_ref(record.id)}",
                                  fix=f"restore it: git branch {record.branch} {record.base_commit}")
        commit = str(tip_id)
    tip = _commit(repo, commit, f"version {record.id}'s commit")
    config = config if config is not None else ws.config
    label, base_id = resolve_base(ws, getattr(config.protect, "base", "root"))
    base = _commit(repo, base_id, f"the pristine base ({label})")
    digest, files = patch_sha256(repo, base, tip)
    return {"format": PATCH_FORMAT, "sha256": digest, "base": label, "base_commit": str(base.id),
            "commit": str(tip.id), "files": len(files)}


def version_patch(ws: Any, version: str, *, commit: str | None = None, gate: PatchGate | None = None,
                  config: Any = None, champion_commit: str | None = None) -> VersionPatch:
    """``version``'s patch (its branch tip, or ``commit``) against the pristine base, with the findings.

    ``config`` (default the configuration in force) gives the protected paths, ``[protect].base``,
    the thresholds and allowlists; ``champion_commit`` (default the champion ref) the tree the
    protected paths must equal. A gate passes ``policy.config`` and ``policy.commit`` (verified).
    """
    record = ws.resolve(version)
    repo: pygit2.Repository = ws.git.repo
    if commit is None:
        tip_id = ws.git.ref_target(branch_ref(record.id))
        if tip_id is None:
            raise AuditInputError(f"version {record.id} has no branch {branch_ref(record.id)}",
                                  fix=f"restore it: git branch {record.branch} {record.base_commit}")
        commit = str(tip_id)
    tip = _commit(repo, commit, f"version {record.id}'s commit")
    config = config if config is not None else ws.config
    if champion_commit is None:
        target = ws.git.ref_target(CHAMPION_REF)
        champion_commit = str(target) if target is not None else None
    label, base_id = resolve_base(ws, getattr(config.protect, "base", "root"), champion_commit=champion_commit)
    base = _commit(repo, base_id, f"the pristine base ({label})")
    gate = gate or PatchGate.from_protect(config.protect)
    patterns = protected_patterns(config)
    findings = check_patch(repo, base, tip, protected=patterns, gate=gate, version=record.id, protected_paths=False)
    protected: list[Finding] = []
    if champion_commit is not None:
        champion = _commit(repo, champion_commit, "the champion commit")
        touched = protected_touches(repo, champion, tip, patterns)
        if touched:
            protected.append(_protected_finding(touched, {"from": str(champion.id), "to": str(tip.id)}, record.id))
    digest, files = patch_sha256(repo, base, tip)
    return VersionPatch(version=record.id, base=label, base_commit=str(base.id), commit=str(tip.id), sha256=digest,
                        files=files, findings=findings, protected=protected, champion_commit=champion_commit)
