"""What a patch's content carries: the detectors of the patch gate, one file at a time.

Data and weights by name (:data:`DATA_SUFFIXES`, :data:`WEIGHT_SUFFIXES`, compressed forms too),
binary content (:func:`_binary_reason`), literal data rows (:func:`row_shape`), encoded bytes
(:func:`_encoded_chars`), numeric literals, dense text (:func:`_compressed`), the dotted keys of a
TOML / JSON file (:func:`_parse_params`), and what a patch must not copy out of protected files
and the judge store (:func:`_protected_content`). :mod:`evotree.harness.audit.patch_gate` applies
them to every file of a diff.
"""

from __future__ import annotations

import json
import posixpath
import re
import tomllib
import zlib
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import pygit2
from pygit2.enums import FileMode

from evotree.harness.audit.protected_paths import _canonical, _match

__all__ = ["DATA_SUFFIXES", "WEIGHT_SUFFIXES", "row_shape"]

DATA_SUFFIXES = frozenset(
    {
        "csv",
        "tsv",
        "parquet",
        "jsonl",
        "ndjson",
        "npz",
        "npy",
        "arrow",
        "feather",
        "avro",
        "orc",
        "h5",
        "hdf5",
        "pkl",
        "pickle",
        "xlsx",
        "xls",
        "sqlite",
        "sqlite3",
        "db",
        "duckdb",
        "tfrecord",
        "tfrecords",
        "lance",
        "mat",
        "zip",
        "tar",
        "tgz",
        "7z",
        "rar",
        "gz",
        "bz2",
        "xz",
        "zst",
        "lz4",
    }
)
WEIGHT_SUFFIXES = frozenset(
    {
        "pt",
        "pth",
        "safetensors",
        "bin",
        "ckpt",
        "gguf",
        "ggml",
        "onnx",
        "pb",
        "tflite",
        "msgpack",
        "mlmodel",
        "params",
        "joblib",
        "keras",
        "nemo",
        "engine",
        "caffemodel",
        "pdparams",
    }
)
_COMPRESSION = ("gz", "bz2", "xz", "zst", "lz4", "zip")

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
    name = _canonical(posixpath.basename(path)).rstrip(
        " .\t"
    )  # ``a.NPY``, ``a.npy.``, ``a.np\u200by``
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


#: a file the patch adds is dense (encoded bytes, whatever the alphabet) when its added text,
#: at least this long, compresses to no less than this share of its size (code: 0.25-0.4)
_DENSE_MIN = 4096
_DENSE_RATIO = 0.5
#: distinct strings of protected data files (answers, labels) the added lines may repeat
_COPIED_TOKENS = 4
_TOKEN = re.compile(r"[A-Za-z0-9][\w\-.:@+]{3,}")
_TEXT_SOURCES = frozenset(
    {"json", "jsonl", "ndjson", "csv", "tsv", "txt", "yaml", "yml", "xml", ""}
)
_TOKEN_BUDGET = 8_000_000
_content_cache: dict[
    tuple[str, tuple[str, ...], tuple[str, ...]], tuple[dict[Any, str], dict[str, str]]
] = {}


def _distinctive(word: str) -> bool:
    """An id-like string (``SECRET-held-0``, ``task_17``, ``ans.v2``): two letters or more and a
    digit or a separator. Plain words and plain numbers (``integer``, ``1000``) are left out: a
    recipe shares them with any judge's data by chance (numbers have rules of their own)."""
    return sum(c.isalpha() for c in word) >= 2 and any(c.isdigit() or c in "-_.:@+" for c in word)


def _compressed(data: bytes) -> int:
    return len(zlib.compress(data, 6))


def _walk(
    repo: pygit2.Repository, tree: pygit2.Tree, prefix: str = ""
) -> Iterable[tuple[str, Any]]:
    for entry in tree:
        path = f"{prefix}{entry.name}"
        if entry.filemode == FileMode.TREE:
            sub = repo.get(entry.id)
            if isinstance(sub, pygit2.Tree):
                yield from _walk(repo, sub, path + "/")
        elif entry.filemode in (FileMode.BLOB, FileMode.BLOB_EXECUTABLE):
            yield path, entry


def _protected_content(
    repo: pygit2.Repository,
    trees: Sequence[pygit2.Tree],
    protected: Sequence[str],
    secret: Sequence[pygit2.Tree] = (),
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
    budget = {
        True: _TOKEN_BUDGET,
        False: _TOKEN_BUDGET,
    }  # protected files never wait for the others'
    for i, (tree, everything) in enumerate(
        [*((t, False) for t in trees), *((t, True) for t in secret)]
    ):
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
    result = (
        {k: v for k, v in blobs.items() if k not in common_blobs},
        {k: v for k, v in tokens.items() if k not in common_tokens},
    )
    if len(_content_cache) > 64:
        _content_cache.clear()
    _content_cache[key] = result
    return result
