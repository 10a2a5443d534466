"""The findings model shared by every layer: :class:`Finding`, :class:`Severity`, the layer names.

It lives in the core layer because the harness's audits, the diagnostics' analyzers, memory and
the gates all build or read findings; the analyzer contract and registry that produce them stay in
:mod:`evotree.diagnostics.findings`. A finding has a ``layer`` (score, signal, behavior, version,
audit), a stable ``code`` (``"signal.dead_groups_high"``), a ``severity`` (info < warn < high <
critical), a one-line ``title``, its ``evidence`` (numbers, and the SQL that produced them under
``"query"``), a ``suggestion``, the ``skills`` that address it, the ``run_id`` / ``version`` it is
about and the ``harness_version`` of the analyzer that produced it. :meth:`Finding.to_dict` is the
JSON form (schema version ``"v": 1``).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from pathlib import Path
from typing import Any

from evotree.core.errors import EvotreeError

__all__ = [
    "FINDING_SCHEMA_VERSION",
    "LAYERS",
    "SEVERITIES",
    "Finding",
    "FindingError",
    "Severity",
    "json_safe",
    "max_severity",
    "sort_findings",
    "write_findings_file",
]

FINDING_SCHEMA_VERSION = 1
#: The four diagnostic layers, and ``audit`` for the leak audits (:mod:`evotree.harness.audit`).
LAYERS = ("score", "signal", "behavior", "version", "audit")
SEVERITIES = ("info", "warn", "high", "critical")

_CODE = re.compile(r"^(score|signal|behavior|version|audit)\.[a-z][a-z0-9_]*$")


class FindingError(EvotreeError, ValueError):
    """A finding or analyzer that breaks the model: unknown layer/severity, bad code, bad dict."""

    exit_code = 23
    code = "invalid_finding"


class Severity(IntEnum):
    """Severities in order: ``Severity.parse("high") > Severity.WARN``."""

    INFO = 0
    WARN = 1
    HIGH = 2
    CRITICAL = 3

    @classmethod
    def parse(cls, value: str | int | Severity) -> Severity:
        """``"warn"`` / ``Severity.WARN`` / ``1`` -> ``Severity.WARN``; anything else raises."""
        if isinstance(value, Severity):
            return value
        if isinstance(value, str) and value.lower() in SEVERITIES:
            return cls(SEVERITIES.index(value.lower()))
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(SEVERITIES):
            return cls(value)
        raise FindingError(
            f"severity: expected one of {', '.join(SEVERITIES)}, actually: {value!r}"
        )

    @property
    def label(self) -> str:
        """The lower-case name used in findings: ``"critical"``."""
        return SEVERITIES[self.value]

    def __str__(self) -> str:
        return self.label


def json_safe(value: Any) -> Any:
    """``value`` with numpy scalars made Python numbers, non-finite floats None, tuples lists."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    tolist = getattr(value, "tolist", None)  # numpy scalar (-> Python number) or array (-> list)
    if callable(tolist):
        return json_safe(tolist())
    return str(value)


@dataclass
class Finding:
    """One diagnosis. ``evidence`` is made JSON-safe on construction (NaN becomes None)."""

    layer: str
    code: str
    severity: str
    title: str
    evidence: dict[str, Any] = field(default_factory=dict)
    suggestion: str = ""
    skills: list[str] = field(default_factory=list)
    run_id: str | None = None
    version: str | None = None
    #: the analyzer version that produced it ("builtin", "h0", "h2", ...); persisted name
    #: (existing ledgers and signed statements use it)
    harness_version: str = "builtin"

    def __post_init__(self) -> None:
        if self.layer not in LAYERS:
            raise FindingError(
                f"layer: expected one of {', '.join(LAYERS)}, actually: {self.layer!r}"
            )
        if not isinstance(self.code, str) or not _CODE.match(self.code):
            raise FindingError(f"code: expected '<layer>.<snake_case>', actually: {self.code!r}")
        if self.code.split(".", 1)[0] != self.layer:
            raise FindingError(f"code {self.code!r} does not start with its layer {self.layer!r}")
        self.severity = Severity.parse(self.severity).label
        if not isinstance(self.title, str) or not self.title:
            raise FindingError(f"title: expected a non-empty string, actually: {self.title!r}")
        if not isinstance(self.evidence, Mapping):
            raise FindingError(
                f"evidence: expected a dict, actually: {type(self.evidence).__name__}"
            )
        self.evidence = json_safe(self.evidence)
        if isinstance(self.skills, str) or not all(isinstance(s, str) for s in self.skills):
            raise FindingError(f"skills: expected a list of skill names, actually: {self.skills!r}")
        self.skills = list(self.skills)
        if not isinstance(self.harness_version, str) or not self.harness_version:
            raise FindingError(
                f"harness_version: expected a non-empty string, actually: {self.harness_version!r}"
            )

    @property
    def rank(self) -> Severity:
        """The severity as an ordered :class:`Severity`."""
        return Severity.parse(self.severity)

    @property
    def query(self) -> str | None:
        """The SQL that produced the evidence (``evidence["query"]``), if any."""
        value = self.evidence.get("query")
        return value if isinstance(value, str) else None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: ``{"v": 1, "layer": ..., "code": ..., ...}`` (JSON-safe)."""
        return {
            "v": FINDING_SCHEMA_VERSION,
            "layer": self.layer,
            "code": self.code,
            "severity": self.severity,
            "title": self.title,
            "evidence": dict(self.evidence),
            "suggestion": self.suggestion,
            "skills": list(self.skills),
            "run_id": self.run_id,
            "version": self.version,
            "harness_version": self.harness_version,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Finding:
        """Read :meth:`to_dict`'s form back. Raises :class:`FindingError` for another ``"v"``
        (callers that scan stored findings skip those) or missing fields."""
        if not isinstance(data, Mapping):
            raise FindingError(
                f"a finding: expected a JSON object, actually: {type(data).__name__}"
            )
        if data.get("v") != FINDING_SCHEMA_VERSION:
            raise FindingError(
                f"finding schema version: expected {FINDING_SCHEMA_VERSION}, "
                f"actually: {data.get('v')!r}",
                fix="upgrade evotree to read findings written by a newer version",
            )
        missing = [k for k in ("layer", "code", "severity", "title") if k not in data]
        if missing:
            raise FindingError(f"a finding is missing {', '.join(missing)}")
        kwargs = {f.name: data[f.name] for f in dataclasses.fields(cls) if f.name in data}
        for optional in ("evidence", "suggestion", "skills", "harness_version"):
            if kwargs.get(optional) is None:  # null in the JSON: the default
                kwargs.pop(optional, None)
        return cls(**kwargs)


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    """Most severe first; then by layer (score, signal, behavior, version), code and run."""
    return sorted(findings, key=lambda f: (-f.rank, LAYERS.index(f.layer), f.code, f.run_id or ""))


def max_severity(findings: Iterable[Finding]) -> Severity | None:
    """The highest severity among ``findings`` (None for none)."""
    ranks = [f.rank for f in findings]
    return max(ranks) if ranks else None


def write_findings_file(directory: Any, name: str, findings: Iterable[Mapping[str, Any]]) -> Any:
    """Replace ``directory/name`` atomically with one JSON line per finding, each stamped with
    ``ts`` (now): the `findings` view reads these files, and a reader never sees half of one."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    now = time.time()
    target = folder / name
    tmp = folder / f".{name}.{os.getpid()}.tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as handle:
            for finding in findings:
                handle.write(json.dumps({**finding, "ts": now}, default=str) + "\n")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target
