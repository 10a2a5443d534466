"""``evotree diff V W``: what changed between two versions' recipes, file by file and parameter by parameter.

Parameters are read from the structured files of each version's tip commit (TOML, JSON, and YAML
when PyYAML is installed): nested tables are flattened to dotted keys (``train.learning_rate``),
and a key whose value differs, appears or disappears is one row, like ``dvc exp diff``. Every
other change is listed per file with its added and removed lines. The headline scores the ledger
recorded are shown beside them. Nothing is written.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import asdict, dataclass, field
from typing import Any

import pygit2

from evotree.core.refs import branch_ref
from evotree.core.workspace import Workspace

__all__ = ["VersionDiff", "diff_versions", "diff_markdown", "PARAM_SUFFIXES"]

#: files read as parameters (by name suffix)
PARAM_SUFFIXES = (".toml", ".json", ".yaml", ".yml")
#: a parameter file larger than this is listed as a file change only
_MAX_PARAM_BYTES = 1 << 20
#: a value longer than this is shortened in the table (the JSON keeps it whole)
_MAX_VALUE_CHARS = 200


@dataclass
class VersionDiff:
    """Two versions' differences (schema: ``diff.schema.json``); ``a`` is the old side."""

    a: str
    b: str
    commit_a: str
    commit_b: str
    #: one row per parameter that differs: path, param (dotted key), a, b (None: absent on that side)
    params: list[dict[str, Any]] = field(default_factory=list)
    #: one row per changed file: path, status (added / removed / modified / renamed), additions, deletions
    files: list[dict[str, Any]] = field(default_factory=list)
    #: the headline each version's record carries (None: not scored)
    headline_a: dict[str, Any] | None = None
    headline_b: dict[str, Any] | None = None
    #: parameter files that could not be parsed on one side (listed with the reason; their lines still count)
    unreadable: list[dict[str, str]] = field(default_factory=list)
    v: int = 1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _tip(ws: Workspace, version: str) -> tuple[str, pygit2.Commit]:
    record = ws.resolve(version)
    target = ws.git.ref_target(branch_ref(record.id))
    oid = target if target is not None else pygit2.Oid(hex=record.base_commit)
    return record.id, ws.git.repo[oid].peel(pygit2.Commit)


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Nested mappings as dotted keys; lists and scalars are leaves."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            out.update(_flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix or "(value)": value}


def _parse(path: str, data: bytes) -> dict[str, Any]:
    """The flattened parameters of one file; ValueError when it does not parse."""
    text = data.decode("utf-8")  # UnicodeDecodeError is a ValueError
    if path.endswith(".toml"):
        return _flatten(tomllib.loads(text))
    if path.endswith(".json"):
        return _flatten(json.loads(text))
    try:
        import yaml  # optional: YAML recipes are read when PyYAML is there
    except ImportError as exc:
        raise ValueError("PyYAML is not installed") from exc
    try:
        return _flatten(yaml.safe_load(text))
    except yaml.YAMLError as exc:
        raise ValueError(str(exc)) from None


def _blob(repo: pygit2.Repository, tree: pygit2.Tree, path: str) -> bytes | None:
    try:
        entry = tree[path]
    except KeyError:
        return None
    obj = repo[entry.id]
    return obj.data if isinstance(obj, pygit2.Blob) else None


def _jsonable(value: Any) -> Any:
    """A TOML date or time as its ISO text; everything else as it is."""
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def diff_versions(ws: Workspace, a: str, b: str) -> VersionDiff:
    """The recipe and parameter differences from version ``a`` to version ``b`` (their branch tips)."""
    id_a, commit_a = _tip(ws, a)
    id_b, commit_b = _tip(ws, b)
    repo = ws.git.repo
    result = VersionDiff(
        a=id_a,
        b=id_b,
        commit_a=str(commit_a.id),
        commit_b=str(commit_b.id),
        headline_a=ws.resolve(id_a).headline,
        headline_b=ws.resolve(id_b).headline,
    )
    diff = repo.diff(commit_a.tree, commit_b.tree, context_lines=0)
    diff.find_similar()
    status_names = {
        pygit2.GIT_DELTA_ADDED: "added",
        pygit2.GIT_DELTA_DELETED: "removed",
        pygit2.GIT_DELTA_MODIFIED: "modified",
        pygit2.GIT_DELTA_RENAMED: "renamed",
        pygit2.GIT_DELTA_TYPECHANGE: "modified",
    }
    for patch in diff:
        delta = patch.delta
        _context, additions, deletions = patch.line_stats if not delta.is_binary else (0, 0, 0)
        row: dict[str, Any] = {
            "path": delta.new_file.path,
            "status": status_names.get(delta.status, "modified"),
            "additions": additions,
            "deletions": deletions,
            "binary": bool(delta.is_binary),
        }
        if delta.status == pygit2.GIT_DELTA_RENAMED:
            row["old_path"] = delta.old_file.path
        result.files.append(row)
        old_path, new_path = delta.old_file.path, delta.new_file.path
        if not new_path.endswith(PARAM_SUFFIXES) and not old_path.endswith(PARAM_SUFFIXES):
            continue
        sides: list[dict[str, Any]] = []
        for tree, path, side in ((commit_a.tree, old_path, id_a), (commit_b.tree, new_path, id_b)):
            data = _blob(repo, tree, path) if path.endswith(PARAM_SUFFIXES) else None
            if data is None or len(data) > _MAX_PARAM_BYTES:
                sides.append({})
                continue
            try:
                sides.append(_parse(path, data))
            except (ValueError, RecursionError) as exc:
                result.unreadable.append({"path": path, "version": side, "reason": str(exc)[:200]})
                sides.append({})
        before, after = sides
        for key in sorted(set(before) | set(after)):
            va, vb = before.get(key), after.get(key)
            if key in before and key in after and va == vb and type(va) is type(vb):
                continue
            result.params.append(
                {
                    "path": new_path,
                    "param": key,
                    "a": _jsonable(va) if key in before else None,
                    "b": _jsonable(vb) if key in after else None,
                }
            )
    result.files.sort(key=lambda r: r["path"])
    return result


def _cell(value: Any) -> str:
    """A value as a Markdown table cell: JSON-like, pipes and newlines escaped, shortened."""
    if value is None:
        return "—"
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    text = text.replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")
    text = "".join(c if c.isprintable() else "?" for c in text)
    return text if len(text) <= _MAX_VALUE_CHARS else text[: _MAX_VALUE_CHARS - 1] + "…"


def _score(headline: dict[str, Any] | None) -> str:
    if not headline or not isinstance(headline.get("value"), (int, float)):
        return "—"
    return f"{headline['value']:.4g}"


def diff_markdown(result: VersionDiff) -> str:
    """The diff as Markdown tables (a PR comment, like ``dvc exp diff --md``)."""
    a, b = _cell(result.a), _cell(result.b)
    lines = [f"### {a} → {b}", "", f"`{result.commit_a[:10]}` → `{result.commit_b[:10]}`", ""]
    if result.headline_a or result.headline_b:
        metric = (result.headline_b or result.headline_a or {}).get("metric", "score")
        lines += [
            "| Metric | " + a + " | " + b + " |",
            "|---|---|---|",
            f"| {_cell(metric)} | {_score(result.headline_a)} | {_score(result.headline_b)} |",
            "",
        ]
    if result.params:
        lines += ["| Path | Param | " + a + " | " + b + " |", "|---|---|---|---|"]
        lines += [
            f"| {_cell(p['path'])} | {_cell(p['param'])} | {_cell(p['a'])} | {_cell(p['b'])} |"
            for p in result.params
        ]
        lines.append("")
    else:
        lines += ["No parameter differs.", ""]
    if result.files:
        lines += ["| File | Change | + | − |", "|---|---|---|---|"]
        for f in result.files:
            name = _cell(f["path"]) + (
                f" (from {_cell(f['old_path'])})" if f.get("old_path") else ""
            )
            counts = (
                ("binary", "") if f.get("binary") else (str(f["additions"]), str(f["deletions"]))
            )
            lines.append(f"| {name} | {f['status']} | {counts[0]} | {counts[1]} |")
    else:
        lines.append("The two versions' trees are identical.")
    for u in result.unreadable:
        lines.append(
            f"\n> {_cell(u['path'])} of {_cell(u['version'])} could not be read as parameters: "
            f"{_cell(u['reason'])}"
        )
    return "\n".join(lines) + "\n"
