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

Red-team additions (``tests/test_redteam_patch.py``): a file whose added text (4 KiB or more)
compresses to half its size or more is a payload whatever its alphabet (base85, base64 in short
lines, hex as letters), and so are dense names of added files; the patch's added text as a whole
may compress to at most ``max_patch_info`` bytes; row lines of several shapes count together; an
exact copy of a protected file or of a judge-store file, or 4 and more id-like strings of the
judge's data files, is ``audit.patch_data`` (``copy_of``); look-alike spellings of a protected path
(NFKC, ignorable code points, trailing dots and spaces) are the protected path; a symlink to a
folder holding protected paths is ``audit.patch_symlink``; ``patch_allow`` matches exactly; a quoted
dotted key is not the nested key; a base the ledger names must be in the champion's history.

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
import unicodedata
import zlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pygit2
from pygit2.enums import FileMode

from evotree.core.globs import glob_regex
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
#: byte escapes in a string literal (``\x00``, ``\u0000``, octal), each counted: ``repr(bytes)``
#: mixes them with printable characters
_ESCAPES = re.compile(r"\\x[0-9a-fA-F]{2}|\\u[0-9a-fA-F]{4}|\\[0-7]{3}")
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f]")
_MAX_CONTROL = 8
#: a whole patch may hold this many times a file's limit of numbers or encoded characters
_SPREAD = 4
#: a file may gain this many times ``max_row_lines`` row lines of all shapes together
_MIXED_ROWS = 2


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
    #: bytes the added text of the whole patch (and the names of added files) may compress to:
    #: the information a patch carries, whatever the encoding (weights as words, base85 ...)
    max_patch_info: int = 262_144

    def __post_init__(self) -> None:
        for key in ("max_file_bytes", "max_row_lines", "max_line_chars", "max_line_numbers", "max_file_numbers",
                    "max_encoded_chars", "max_patch_info"):
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
                   editable_keys=list(getattr(protect, "editable_keys", base.editable_keys)),
                   max_patch_info=getattr(protect, "max_patch_info", base.max_patch_info))

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


def glob_match(path: str, pattern: str, *, fold: bool = False) -> bool:
    """Whether ``pattern`` covers the repository path ``path``.

    Patterns are anchored at the repository root. ``dir/`` (or a pattern that names a folder)
    covers everything under it; ``**`` crosses folders (``data/**``, ``**/helper.py``); ``*``,
    ``?`` and ``[...]`` / ``[!...]`` match within one path segment. ``fold``: ignore case.
    """
    bare = pattern.rstrip("/")
    if not bare:
        return False
    regex = glob_regex(bare, fold=fold)
    if regex.fullmatch(path):
        return True
    parts = path.split("/")
    return any(regex.fullmatch("/".join(parts[:k])) for k in range(1, len(parts)))


#: code points file systems ignore in names (HFS+) or that render as nothing: ``ju\u200cdge/``
_IGNORABLE = re.compile("[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
                        "\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]")


def _canonical(path: str) -> str:
    """The name a forgiving file system would read: NFKC (NFD and full-width forms fold), no
    ignorable code points, case folded, trailing dots and spaces of each segment dropped (what
    Windows does). A protected path written any of these ways is the protected path."""
    text = _IGNORABLE.sub("", unicodedata.normalize("NFKC", path)).casefold()
    return "/".join(seg if seg in (".", "..") else (seg.rstrip(" .") or seg) for seg in text.split("/"))


def _match(path: str, patterns: Iterable[str]) -> str | None:
    """The first protected pattern that covers ``path``: :func:`glob_match` ignoring case, or
    (as before) ``fnmatch`` where ``*`` also crosses folders: a denylist errs on the wide side.
    The path is also compared in its :func:`_canonical` form (look-alike spellings of a
    protected path that a file system would merge with it)."""
    canonical = _canonical(path)
    for pattern in patterns:
        bare = pattern.rstrip("/")
        if glob_match(path, pattern, fold=True) or fnmatch.fnmatchcase(path, pattern) \
                or fnmatch.fnmatchcase(path, bare + "/*"):
            return pattern
        if canonical != path and bare and glob_match(canonical, _canonical(bare), fold=True):
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
    name = _canonical(posixpath.basename(path)).rstrip(" .\t")  # ``a.NPY``, ``a.npy.``, ``a.np\u200by``
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


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Dotted keys, as TOML writes them: a key holding a dot (or anything but ``A-Za-z0-9_-``) is
    quoted, so ``"train.steps" = 3`` is not ``[train] steps = 3``."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            name = str(k) if _BARE_KEY.fullmatch(str(k)) else json.dumps(str(k))
            out.update(_flatten(v, f"{prefix}.{name}" if prefix else name))
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


def _holds_protected(folder: str, patterns: Iterable[str]) -> str | None:
    """The first protected pattern under the folder ``folder`` (``.`` is the root): a link to
    ``.`` or to ``evo`` (holding ``evo/judge/``) reads protected files through the link."""
    canon = _canonical(folder)
    for pattern in patterns:
        bare = _canonical(pattern.rstrip("/"))
        if canon in ("", ".") or bare.startswith(canon + "/"):
            return pattern
    return None


#: a file the patch adds is dense (encoded bytes, whatever the alphabet) when its added text,
#: at least this long, compresses to no less than this share of its size (code: 0.25-0.4)
_DENSE_MIN = 4096
_DENSE_RATIO = 0.5
#: distinct strings of protected data files (answers, labels) the added lines may repeat
_COPIED_TOKENS = 4
_TOKEN = re.compile(r"[A-Za-z0-9][\w\-.:@+]{3,}")
_TEXT_SOURCES = frozenset({"json", "jsonl", "ndjson", "csv", "tsv", "txt", "yaml", "yml", "xml", ""})
_TOKEN_BUDGET = 8_000_000
_content_cache: dict[tuple[str, tuple[str, ...], tuple[str, ...]], tuple[dict[Any, str], dict[str, str]]] = {}


def _distinctive(word: str) -> bool:
    """An id-like string (``SECRET-held-0``, ``task_17``, ``ans.v2``): two letters or more and a
    digit or a separator. Plain words and plain numbers (``integer``, ``1000``) are left out: a
    recipe shares them with any judge's data by chance (numbers have rules of their own)."""
    return sum(c.isalpha() for c in word) >= 2 and any(c.isdigit() or c in "-_.:@+" for c in word)


def _compressed(data: bytes) -> int:
    return len(zlib.compress(data, 6))


def _walk(repo: pygit2.Repository, tree: pygit2.Tree, prefix: str = "") -> Iterable[tuple[str, Any]]:
    for entry in tree:
        path = f"{prefix}{entry.name}"
        if entry.filemode == FileMode.TREE:
            sub = repo.get(entry.id)
            if isinstance(sub, pygit2.Tree):
                yield from _walk(repo, sub, path + "/")
        elif entry.filemode in (FileMode.BLOB, FileMode.BLOB_EXECUTABLE):
            yield path, entry


def _protected_content(repo: pygit2.Repository, trees: Sequence[pygit2.Tree],
                       protected: Sequence[str], secret: Sequence[pygit2.Tree] = ()
                       ) -> tuple[dict[Any, str], dict[str, str]]:
    """``({blob id: protected path}, {token: protected path})``: the files under protected paths
    of ``trees`` (and every file of the ``secret`` trees: the judge store) a candidate must not
    copy out (64 bytes or more), and the distinctive strings of the protected *data* files
    (``judge/hidden.json``'s answers) — less whatever the other files (code, config, the
    unprotected files of the first tree) also hold."""
    key = (repo.path, tuple(str(t.id) for t in [*trees, *secret]), tuple(protected))
    if key in _content_cache:
        return _content_cache[key]
    blobs: dict[Any, str] = {}
    tokens: dict[str, str] = {}
    common_blobs: set[Any] = set()
    common_tokens: set[str] = set()
    budget = {True: _TOKEN_BUDGET, False: _TOKEN_BUDGET}  # protected files never wait for the others'
    for i, (tree, everything) in enumerate([*((t, False) for t in trees), *((t, True) for t in secret)]):
        for path, entry in _walk(repo, tree):
            is_protected = everything or _match(path, protected) is not None
            if not is_protected and i > 0:
                continue
            if not is_protected:
                common_blobs.add(entry.id)
            blob = repo.get(entry.id)
            if not isinstance(blob, pygit2.Blob):
                continue
            if is_protected and blob.size >= 64:
                blobs.setdefault(entry.id, path)
            if blob.size > budget[is_protected]:
                continue
            budget[is_protected] -= blob.size
            words = set(_TOKEN.findall(blob.data.decode("utf-8", "replace")))
            suffix = (_suffixes(path) or [""])[-1]
            if is_protected and suffix in _TEXT_SOURCES:
                for word in words:
                    if _distinctive(word):
                        tokens.setdefault(word, path)
            else:
                common_tokens |= words
    result = ({k: v for k, v in blobs.items() if k not in common_blobs},
              {k: v for k, v in tokens.items() if k not in common_tokens})
    if len(_content_cache) > 64:
        _content_cache.clear()
    _content_cache[key] = result
    return result


def check_patch(repo: pygit2.Repository, old: pygit2.Commit, new: pygit2.Commit, *,
                protected: Sequence[str], gate: PatchGate | None = None,
                version: str | None = None, protected_paths: bool = True,
                protected_trees: Sequence[pygit2.Tree] | None = None,
                secret_trees: Sequence[pygit2.Tree] = ()) -> list[Finding]:
    """Findings of the diff ``old`` -> ``new``: protected paths touched (unless ``protected_paths``
    is False: :func:`check_protected_paths` measures those from the champion), and the patch gate.

    ``protected_trees`` (default ``old``'s tree): the trees whose protected files the patch may
    not copy out (:func:`version_patch` passes the base's and the champion's); ``secret_trees``:
    trees none of whose files it may copy (the judge store's commit in force)."""
    gate = gate or PatchGate()
    copied_blobs, secret_tokens = _protected_content(
        repo, list(protected_trees) if protected_trees else [old.tree], list(protected), list(secret_trees))
    seen_tokens: dict[str, str] = {}
    added_texts: list[bytes] = []
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
        if status == "D" or _editable(new_path, gate.allow):  # an exemption matches exactly, as an allowlist
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
            inside = _match(resolved, protected) or _holds_protected(resolved, protected)
            if link.startswith("/") or resolved.startswith("..") or inside is not None:
                hit("audit.patch_symlink", {"path": new_path, "target": link,
                                            "why": "absolute" if link.startswith("/") else
                                            "outside the tree" if resolved.startswith("..") else f"into {inside}"})
            continue
        size = blob.size
        if delta.new_file.id in copied_blobs and _match(new_path, protected) is None:
            hit("audit.patch_data", {"path": new_path, "status": status, "bytes": size,
                                     "copy_of": copied_blobs[delta.new_file.id]})
            continue
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
                # rows spread over several shapes (``"q", "a",`` / ``("q", "a"),`` / ...) count together
                total = sum(shapes.values())
                if total > _MIXED_ROWS * gate.max_row_lines:
                    hit("audit.patch_payload", {"path": new_path, "status": status, "rows": total,
                                                "shapes": len(shapes), "limit": _MIXED_ROWS * gate.max_row_lines})
                    continue
            added = _added_lines(text, before_text)
            added_text = "\n".join(added).encode("utf-8", "replace")
            if secret_tokens and _match(new_path, protected) is None:
                for word in set(_TOKEN.findall(added_text.decode("utf-8", "replace"))):
                    if word in secret_tokens:
                        seen_tokens.setdefault(word, new_path)
            if len(added_text) >= _DENSE_MIN and _compressed(added_text) >= _DENSE_RATIO * len(added_text):
                hit("audit.patch_payload", {"path": new_path, "status": status, "bytes": len(added_text),
                                            "compressed": _compressed(added_text), "ratio": _DENSE_RATIO})
                continue
            added_texts.append(added_text)
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

    # names of added files carry bytes too (one empty file per base64 chunk)
    names = "\n".join(d.new_file.path for d in diff.deltas if d.status_char() in ("A", "R", "C")).encode(
        "utf-8", "surrogateescape")
    if len(names) >= _DENSE_MIN and _compressed(names) >= _DENSE_RATIO * len(names):
        hit("audit.patch_payload", {"path": "file names", "status": "*", "bytes": len(names),
                                    "compressed": _compressed(names), "ratio": _DENSE_RATIO})
    # dense text split into files each under _DENSE_MIN: the small files together
    small = b"\n".join(t for t in added_texts if len(t) < _DENSE_MIN)
    if len(small) >= _DENSE_MIN and _compressed(small) >= _DENSE_RATIO * len(small):
        hit("audit.patch_payload", {"path": f"{sum(1 for t in added_texts if len(t) < _DENSE_MIN)} small files",
                                    "status": "*", "bytes": len(small), "compressed": _compressed(small),
                                    "ratio": _DENSE_RATIO})
    # the information the patch carries, however encoded: its added text, compressed
    info = _compressed(b"\n".join([*added_texts, names]))
    if info > gate.max_patch_info:
        hit("audit.patch_payload", {"path": f"{len(added_texts)} files", "status": "*", "compressed": info,
                                    "limit": gate.max_patch_info})
    # strings of the protected data files (reference answers) repeated in the patch
    if len(seen_tokens) >= _COPIED_TOKENS:
        sources = sorted({secret_tokens[w] for w in seen_tokens})
        hit("audit.patch_data", {"path": ", ".join(sorted(set(seen_tokens.values()))[:3]), "status": "*",
                                 "copied_strings": len(seen_tokens), "copy_of": sources[:_SAMPLE]})
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


def _version_tip(ws: Any, record: Any, commit: str | None) -> pygit2.Commit:
    """``commit`` of the version (default: its branch tip), as a commit object."""
    if commit is None:
        tip_id = ws.git.ref_target(branch_ref(record.id))
        if tip_id is None:
            raise AuditInputError(f"version {record.id} has no branch {branch_ref(record.id)}",
                                  fix=f"restore it: git branch {record.branch} {record.base_commit}")
        commit = str(tip_id)
    return _commit(ws.git.repo, commit, f"version {record.id}'s commit")


def patch_digest(ws: Any, version: str, *, commit: str | None = None, config: Any = None) -> dict[str, Any]:
    """What ``run.started`` records of a run's patch (:meth:`VersionPatch.summary`) without
    running the rules: base, base commit, commit, hash and the number of changed paths."""
    record = ws.resolve(version)
    repo: pygit2.Repository = ws.git.repo
    tip = _version_tip(ws, record, commit)
    config = config if config is not None else ws.config
    label, base_id = resolve_base(ws, getattr(config.protect, "base", "root"))
    base = _commit(repo, base_id, f"the pristine base ({label})")
    digest, files = patch_sha256(repo, base, tip)
    return {"format": PATCH_FORMAT, "sha256": digest, "base": label, "base_commit": str(base.id),
            "commit": str(tip.id), "files": len(files)}


def _check_base_lineage(repo: pygit2.Repository, label: str, base: pygit2.Commit, named: str,
                        champion_commit: str | None) -> None:
    """A base read from the ledger (``root``, a root version id) must be the champion's commit or
    one of its ancestors: ``refs/evotree/ledger`` is a ref every worktree can move, and a ledger
    commit that names the candidate's own tip as v0's first commit would make its patch empty.
    A full commit id (or ``champion``) comes from the champion's own policy and is not checked."""
    if champion_commit is None or _COMMIT.fullmatch((named or "").strip()) or label == "champion":
        return
    champion = repo[champion_commit].peel(pygit2.Commit)
    if base.id == champion.id or repo.descendant_of(champion.id, base.id):
        return
    raise AuditInputError(
        f"the pristine base the ledger names ({label}, {str(base.id)[:10]}) is not in the champion's history "
        f"({champion_commit[:10]}): refs/evotree/ledger names a base the champion does not descend from",
        fix="run `evotree verify`; restore refs/evotree/ledger from a trusted copy")


def _judge_trees(ws: Any, repo: pygit2.Repository) -> list[pygit2.Tree]:
    """The judge store's tree in force (the ledger's judge commit: hidden pools, reference
    answers), which every worktree's git can read (``git show refs/evotree/judge:...``)."""
    from evotree.harness.judge_store import judge_in_force

    try:
        commit = judge_in_force(ws)
        return [repo[commit].peel(pygit2.Tree)] if commit else []
    except (KeyError, ValueError, AttributeError, pygit2.GitError):
        return []


def version_patch(ws: Any, version: str, *, commit: str | None = None, gate: PatchGate | None = None,
                  config: Any = None, champion_commit: str | None = None) -> VersionPatch:
    """``version``'s patch (its branch tip, or ``commit``) against the pristine base, with the findings.

    ``config`` (default the configuration in force) gives the protected paths, ``[protect].base``,
    the thresholds and allowlists; ``champion_commit`` (default the champion ref) the tree the
    protected paths must equal. A gate passes ``policy.config`` and ``policy.commit`` (verified).
    """
    record = ws.resolve(version)
    repo: pygit2.Repository = ws.git.repo
    tip = _version_tip(ws, record, commit)
    config = config if config is not None else ws.config
    if champion_commit is None:
        target = ws.git.ref_target(CHAMPION_REF)
        champion_commit = str(target) if target is not None else None
    named = getattr(config.protect, "base", "root")
    label, base_id = resolve_base(ws, named, champion_commit=champion_commit)
    base = _commit(repo, base_id, f"the pristine base ({label})")
    _check_base_lineage(repo, label, base, named, champion_commit)
    gate = gate or PatchGate.from_protect(config.protect)
    patterns = protected_patterns(config)
    champion = _commit(repo, champion_commit, "the champion commit") if champion_commit is not None else None
    trees = [base.tree] + ([champion.tree] if champion is not None else [])
    findings = check_patch(repo, base, tip, protected=patterns, gate=gate, version=record.id, protected_paths=False,
                           protected_trees=trees, secret_trees=_judge_trees(ws, repo))
    protected: list[Finding] = []
    if champion is not None:
        touched = protected_touches(repo, champion, tip, patterns)
        if touched:
            protected.append(_protected_finding(touched, {"from": str(champion.id), "to": str(tip.id)}, record.id))
    digest, files = patch_sha256(repo, base, tip)
    return VersionPatch(version=record.id, base=label, base_commit=str(base.id), commit=str(tip.id), sha256=digest,
                        files=files, findings=findings, protected=protected, champion_commit=champion_commit)
