"""The patch gate: what a candidate's patch may not add (AI4AI-Bench's gate, and more).

:func:`check_patch` reads the diff ``old`` -> ``new`` once, file by file (:class:`_PatchScan`),
with the detectors of :mod:`evotree.harness.audit.payload`, then judges the patch as a whole
(dense file names, small files together, the information the whole patch carries, strings of
the judge's data, numbers and encoded bytes spread over many files). Thresholds and allowlists:
:class:`PatchGate`, read from the champion's ``[protect]``.
"""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pygit2
from pygit2.enums import FileMode

from evotree.core.findings import Finding, sort_findings
from evotree.harness.audit.errors import AuditInputError
from evotree.harness.audit.payload import (
    _COPIED_TOKENS,
    _DENSE_MIN,
    _DENSE_RATIO,
    _LONE_NUMBER,
    _TOKEN,
    _added_lines,
    _binary_reason,
    _blob,
    _compressed,
    _encoded_chars,
    _kind_by_name,
    _parse_params,
    _protected_content,
    _shapes,
)
from evotree.harness.audit.protected_paths import (
    _SAMPLE,
    _editable,
    _holds_protected,
    _match,
    _protected_finding,
)

__all__ = ["BLOCKING", "PatchGate", "check_patch"]

#: patch-gate codes that block (the gate and the check before a run refuse them)
BLOCKING = ("high", "critical")
#: a whole patch may hold this many times a file's limit of numbers or encoded characters
_SPREAD = 4
#: a file may gain this many times ``max_row_lines`` row lines of all shapes together
_MIXED_ROWS = 2
_MISSING = object()


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
        for key in (
            "max_file_bytes",
            "max_row_lines",
            "max_line_chars",
            "max_line_numbers",
            "max_file_numbers",
            "max_encoded_chars",
            "max_patch_info",
        ):
            value = getattr(self, key)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise AuditInputError(
                    f"patch gate {key}: expected a positive integer, actually: {value!r}",
                    fix=f"set [protect].{key} to a positive integer",
                )
        for entry in self.editable_keys:
            file, sep, keys = entry.partition(":")
            if not sep or not file or not keys:
                raise AuditInputError(
                    f'patch gate editable_keys: expected "FILE:KEY-GLOB", actually: {entry!r}',
                    fix='write entries such as "recipe.toml:train.learning_rate"',
                )

    @classmethod
    def from_protect(cls, protect: Any) -> PatchGate:
        """The gate of a ``[protect]`` section: its keys where it has them, defaults otherwise."""
        base = cls()
        return cls(
            max_file_bytes=getattr(protect, "max_file_bytes", base.max_file_bytes),
            max_row_lines=getattr(protect, "max_row_lines", base.max_row_lines),
            max_line_chars=getattr(protect, "max_line_chars", base.max_line_chars),
            allow=list(getattr(protect, "patch_allow", base.allow)),
            max_line_numbers=getattr(protect, "max_line_numbers", base.max_line_numbers),
            max_file_numbers=getattr(protect, "max_file_numbers", base.max_file_numbers),
            max_encoded_chars=getattr(protect, "max_encoded_chars", base.max_encoded_chars),
            editable=list(getattr(protect, "editable", base.editable)),
            editable_keys=list(getattr(protect, "editable_keys", base.editable_keys)),
            max_patch_info=getattr(protect, "max_patch_info", base.max_patch_info),
        )

    def key_rules(self) -> dict[str, list[str]]:
        """``{file: [key globs]}`` of :attr:`editable_keys`."""
        rules: dict[str, list[str]] = {}
        for entry in self.editable_keys:
            file, _, keys = entry.partition(":")
            rules.setdefault(file.strip("/"), []).append(keys)
        return rules


#: severity, title and fix of each patch-gate code
_TITLES = {
    "audit.patch_data": (
        "high",
        "the patch adds data files",
        "keep data out of the recipe; load it at run time from the domain's train split",
    ),
    "audit.patch_weights": (
        "high",
        "the patch adds model weights",
        "a candidate is a recipe that retrains from scratch; remove the weights",
    ),
    "audit.patch_binary": (
        "high",
        "the patch adds binary files",
        "remove them; a recipe is source",
    ),
    "audit.patch_large_file": (
        "high",
        "the patch adds large files",
        "remove or shrink them, or list them in [protect].patch_allow if legitimate",
    ),
    "audit.patch_payload": (
        "high",
        "the patch embeds data in text files (rows, number arrays or encoded bytes)",
        "remove the embedded data (answers, labels or weights pasted into code or config)",
    ),
    "audit.patch_symlink": (
        "high",
        "the patch adds symlinks out of the tree or into protected paths",
        "remove the symlinks: they read files the run must not see",
    ),
    "audit.patch_submodule": (
        "warn",
        "the patch adds submodules",
        "vendor the code as files, or drop it",
    ),
    "audit.patch_not_editable": (
        "high",
        "the patch changes paths outside [protect].editable",
        "revert them: this protocol lets a candidate change only the editable paths",
    ),
    "audit.patch_config_key": (
        "high",
        "the patch changes configuration keys outside [protect].editable_keys",
        "revert those keys: only the listed keys of the file may change",
    ),
}


def check_patch(
    repo: pygit2.Repository,
    old: pygit2.Commit,
    new: pygit2.Commit,
    *,
    protected: Sequence[str],
    gate: PatchGate | None = None,
    version: str | None = None,
    protected_paths: bool = True,
    protected_trees: Sequence[pygit2.Tree] | None = None,
    secret_trees: Sequence[pygit2.Tree] = (),
) -> list[Finding]:
    """Findings of the diff ``old`` -> ``new``: protected paths touched (unless ``protected_paths``
    is False: :func:`check_protected_paths` measures those from the champion), and the patch gate.

    ``protected_trees`` (default ``old``'s tree): the trees whose protected files the patch may
    not copy out (:func:`version_patch` passes the base's and the champion's); ``secret_trees``:
    trees none of whose files it may copy (the judge store's commit in force)."""
    gate = gate or PatchGate()
    copied_blobs, secret_tokens = _protected_content(
        repo,
        list(protected_trees) if protected_trees else [old.tree],
        list(protected),
        list(secret_trees),
    )
    scan = _PatchScan(repo, gate, list(protected), copied_blobs, secret_tokens)
    diff = repo.diff(old.tree, new.tree)
    diff.find_similar()
    for delta in diff.deltas:
        scan.delta(delta)
    scan.whole_patch([d.new_file.path for d in diff.deltas if d.status_char() in ("A", "R", "C")])
    common = {"from": str(old.id), "to": str(new.id)}
    findings: list[Finding] = []
    if scan.touched and protected_paths:
        findings.append(_protected_finding(scan.touched, common, version))
    for code, items in scan.hits.items():
        severity, title, fix = _TITLES[code]
        findings.append(
            Finding(
                layer="audit",
                code=code,
                severity=severity,
                title=f"{title}: {', '.join(i['path'] for i in items[:3])}{' ...' if len(items) > 3 else ''}",
                evidence={**common, "count": len(items), "paths": items[:_SAMPLE]},
                suggestion=fix,
                version=version,
            )
        )
    return sort_findings(findings)


@dataclass
class _PatchScan:
    """What the gate gathers while it reads a diff: hits per code, protected paths touched, and
    what the whole-patch rules need (added texts, strings of the judge's data, spread counts)."""

    repo: pygit2.Repository
    gate: PatchGate
    protected: list[str]
    copied_blobs: dict[Any, str]
    secret_tokens: dict[str, str]
    hits: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    touched: list[dict[str, Any]] = field(default_factory=list)
    added_texts: list[bytes] = field(default_factory=list)
    seen_tokens: dict[str, str] = field(default_factory=dict)
    spread: dict[str, Any] = field(
        default_factory=lambda: {"numbers": 0, "encoded_chars": 0, "files": []}
    )

    def hit(self, code: str, item: dict[str, Any]) -> None:
        self.hits.setdefault(code, []).append(item)

    def delta(self, delta: Any) -> None:
        """One changed file: protected paths, the allowlists, then what the new content holds."""
        status = delta.status_char()
        old_path, new_path = delta.old_file.path, delta.new_file.path
        for path in dict.fromkeys([old_path, new_path]):
            pattern = _match(path, self.protected)
            if pattern is not None:
                self.touched.append({"path": path, "status": status, "pattern": pattern})
                break
        self.allowlists(delta, status, old_path, new_path)
        if status == "D" or _editable(new_path, self.gate.allow):  # an exemption matches exactly
            return
        self.content(delta, status, new_path)

    def allowlists(self, delta: Any, status: str, old_path: str, new_path: str) -> None:
        """Every path the delta changes (both sides of a rename) must be editable, and a file of
        ``editable_keys`` may change only at its keys."""
        changed_paths = list(
            dict.fromkeys([old_path, new_path] if status not in ("A", "C") else [new_path])
        )
        if status == "D":  # (a copy leaves its source as it was)
            changed_paths = [old_path]
        key_rules = self.gate.key_rules()
        for path in changed_paths:
            if path in key_rules:
                self.config_keys(delta, status, path, old_path, new_path, key_rules[path])
            elif (
                self.gate.editable
                and not _editable(path, self.gate.editable)
                and _match(path, self.protected) is None
            ):
                # (protected paths have a rule of their own: equal to the champion's, not to the base)
                self.hit("audit.patch_not_editable", {"path": path, "status": status})

    def config_keys(
        self, delta: Any, status: str, path: str, old_path: str, new_path: str, globs: list[str]
    ) -> None:
        before = _blob(self.repo, delta.old_file.id) if status != "A" and path == old_path else None
        after = _blob(self.repo, delta.new_file.id) if status != "D" and path == new_path else None
        params_a = _parse_params(path, before.data if before is not None else None)
        params_b = _parse_params(path, after.data if after is not None else None)
        if isinstance(params_a, str) or isinstance(params_b, str):
            self.hit(
                "audit.patch_config_key",
                {
                    "path": path,
                    "status": status,
                    "why": params_b if isinstance(params_b, str) else params_a,
                },
            )
            return
        keys = sorted(
            k
            for k in set(params_a) | set(params_b)
            if params_a.get(k, _MISSING) != params_b.get(k, _MISSING)
            and not any(fnmatch.fnmatchcase(k, g) for g in globs)
        )
        if keys:
            self.hit(
                "audit.patch_config_key",
                {"path": path, "status": status, "keys": keys[:_SAMPLE], "editable": globs},
            )

    def content(self, delta: Any, status: str, new_path: str) -> None:
        """Submodules, symlinks, copies of protected files, data, weights, binaries, payloads in
        text, and large files."""
        mode = delta.new_file.mode
        if mode == FileMode.COMMIT:
            self.hit("audit.patch_submodule", {"path": new_path, "commit": str(delta.new_file.id)})
            return
        blob = _blob(self.repo, delta.new_file.id)
        if blob is None:
            return
        if mode == FileMode.LINK:
            self.symlink(new_path, blob.data.decode("utf-8", "replace"))
            return
        size = blob.size
        if delta.new_file.id in self.copied_blobs and _match(new_path, self.protected) is None:
            self.hit(
                "audit.patch_data",
                {
                    "path": new_path,
                    "status": status,
                    "bytes": size,
                    "copy_of": self.copied_blobs[delta.new_file.id],
                },
            )
            return
        kind = _kind_by_name(new_path)
        data = blob.data
        binary = _binary_reason(data) if kind is None else None
        if kind == "weights":
            self.hit("audit.patch_weights", {"path": new_path, "status": status, "bytes": size})
        elif kind == "data":
            self.hit("audit.patch_data", {"path": new_path, "status": status, "bytes": size})
        elif binary is not None:
            self.hit(
                "audit.patch_binary",
                {"path": new_path, "status": status, "bytes": size, "why": binary},
            )
        elif self.text(delta, status, new_path, data.decode("utf-8", "replace")):
            return  # a payload found: the size is not the point
        if size > self.gate.max_file_bytes:
            self.hit(
                "audit.patch_large_file",
                {
                    "path": new_path,
                    "status": status,
                    "bytes": size,
                    "limit": self.gate.max_file_bytes,
                },
            )

    def symlink(self, new_path: str, link: str) -> None:
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(new_path), link))
        inside = _match(resolved, self.protected) or _holds_protected(resolved, self.protected)
        if link.startswith("/") or resolved.startswith("..") or inside is not None:
            self.hit(
                "audit.patch_symlink",
                {
                    "path": new_path,
                    "target": link,
                    "why": "absolute"
                    if link.startswith("/")
                    else "outside the tree"
                    if resolved.startswith("..")
                    else f"into {inside}",
                },
            )

    def text(self, delta: Any, status: str, new_path: str, text: str) -> bool:
        """The payload rules of a text file's added lines; True when one fired."""
        before_text = None
        if status in ("M", "R", "C"):
            before = _blob(self.repo, delta.old_file.id)
            if before is not None:
                before_text = before.data.decode("utf-8", "replace")
        if self.rows(status, new_path, text, before_text):
            return True
        added = _added_lines(text, before_text)
        added_text = "\n".join(added).encode("utf-8", "replace")
        if self.secret_tokens and _match(new_path, self.protected) is None:
            for word in set(_TOKEN.findall(added_text.decode("utf-8", "replace"))):
                if word in self.secret_tokens:
                    self.seen_tokens.setdefault(word, new_path)
        if len(added_text) >= _DENSE_MIN and _compressed(added_text) >= _DENSE_RATIO * len(
            added_text
        ):
            self.hit(
                "audit.patch_payload",
                {
                    "path": new_path,
                    "status": status,
                    "bytes": len(added_text),
                    "compressed": _compressed(added_text),
                    "ratio": _DENSE_RATIO,
                },
            )
            return True
        self.added_texts.append(added_text)
        return self.literals(status, new_path, added)

    def rows(self, status: str, new_path: str, text: str, before_text: str | None) -> bool:
        """Added lines of one literal row shape (CSV / JSON records), or of several together."""
        shapes, _ = _shapes(text)
        if before_text is not None:
            shapes -= _shapes(before_text)[0]
        if not shapes:
            return False
        gate = self.gate
        shape, count = shapes.most_common(1)[0]
        if count > gate.max_row_lines:
            self.hit(
                "audit.patch_payload",
                {
                    "path": new_path,
                    "status": status,
                    "rows": count,
                    "shape": shape[:80],
                    "limit": gate.max_row_lines,
                },
            )
            return True
        # rows spread over several shapes (``"q", "a",`` / ``("q", "a"),`` / ...) count together
        total = sum(shapes.values())
        if total > _MIXED_ROWS * gate.max_row_lines:
            self.hit(
                "audit.patch_payload",
                {
                    "path": new_path,
                    "status": status,
                    "rows": total,
                    "shapes": len(shapes),
                    "limit": _MIXED_ROWS * gate.max_row_lines,
                },
            )
            return True
        return False

    def literals(self, status: str, new_path: str, added: list[str]) -> bool:
        """One enormous line, numbers on a line or in a file, encoded bytes; else counted toward
        the whole patch's spread."""
        gate = self.gate
        longest = max((len(line) for line in added), default=0)
        if longest > gate.max_line_chars:
            self.hit(
                "audit.patch_payload",
                {
                    "path": new_path,
                    "status": status,
                    "longest_line": longest,
                    "limit": gate.max_line_chars,
                },
            )
            return True
        per_line = [len(_LONE_NUMBER.findall(line)) for line in added]
        most = max(per_line, default=0)
        if most > gate.max_line_numbers:
            self.hit(
                "audit.patch_payload",
                {
                    "path": new_path,
                    "status": status,
                    "line_numbers": most,
                    "limit": gate.max_line_numbers,
                },
            )
            return True
        if sum(per_line) > gate.max_file_numbers:
            self.hit(
                "audit.patch_payload",
                {
                    "path": new_path,
                    "status": status,
                    "numbers": sum(per_line),
                    "limit": gate.max_file_numbers,
                },
            )
            return True
        encoded = _encoded_chars("\n".join(added))
        if encoded > gate.max_encoded_chars:
            self.hit(
                "audit.patch_payload",
                {
                    "path": new_path,
                    "status": status,
                    "encoded_chars": encoded,
                    "limit": gate.max_encoded_chars,
                },
            )
            return True
        self.spread["numbers"] += sum(per_line)
        self.spread["encoded_chars"] += encoded
        self.spread["files"].append(new_path)
        return False

    def whole_patch(self, added_names: list[str]) -> None:
        """The rules of the patch as a whole, after every file was read."""
        gate, added_texts, spread = self.gate, self.added_texts, self.spread
        # names of added files carry bytes too (one empty file per base64 chunk)
        names = "\n".join(added_names).encode("utf-8", "surrogateescape")
        if len(names) >= _DENSE_MIN and _compressed(names) >= _DENSE_RATIO * len(names):
            self.hit(
                "audit.patch_payload",
                {
                    "path": "file names",
                    "status": "*",
                    "bytes": len(names),
                    "compressed": _compressed(names),
                    "ratio": _DENSE_RATIO,
                },
            )
        # dense text split into files each under _DENSE_MIN: the small files together
        small = b"\n".join(t for t in added_texts if len(t) < _DENSE_MIN)
        if len(small) >= _DENSE_MIN and _compressed(small) >= _DENSE_RATIO * len(small):
            count = sum(1 for t in added_texts if len(t) < _DENSE_MIN)
            self.hit(
                "audit.patch_payload",
                {
                    "path": f"{count} small files",
                    "status": "*",
                    "bytes": len(small),
                    "compressed": _compressed(small),
                    "ratio": _DENSE_RATIO,
                },
            )
        # the information the patch carries, however encoded: its added text, compressed
        info = _compressed(b"\n".join([*added_texts, names]))
        if info > gate.max_patch_info:
            self.hit(
                "audit.patch_payload",
                {
                    "path": f"{len(added_texts)} files",
                    "status": "*",
                    "compressed": info,
                    "limit": gate.max_patch_info,
                },
            )
        # strings of the protected data files (reference answers) repeated in the patch
        if len(self.seen_tokens) >= _COPIED_TOKENS:
            sources = sorted({self.secret_tokens[w] for w in self.seen_tokens})
            self.hit(
                "audit.patch_data",
                {
                    "path": ", ".join(sorted(set(self.seen_tokens.values()))[:3]),
                    "status": "*",
                    "copied_strings": len(self.seen_tokens),
                    "copy_of": sources[:_SAMPLE],
                },
            )
        # data sharded into many files, each under the per-file limits: the patch as a whole
        for key, limit in (
            ("numbers", gate.max_file_numbers * _SPREAD),
            ("encoded_chars", gate.max_encoded_chars * _SPREAD),
        ):
            if spread[key] > limit:
                self.hit(
                    "audit.patch_payload",
                    {
                        "path": f"{len(spread['files'])} files",
                        "status": "*",
                        key: spread[key],
                        "limit": limit,
                        "files": spread["files"][:_SAMPLE],
                    },
                )
