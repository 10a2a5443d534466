"""The visibility boundary of EvoPolicyGym and AI4AI-Bench: the judge's figures hidden until finalize.

A workspace whose champion's ``evotree.toml`` sets ``[eval] hide_until_finalize = true`` (what
``evotree init --protocol evopolicygym`` and ``--protocol ai4ai`` write) keeps its judge's
validation and held-out figures out of every output until ``evotree finalize`` has recorded the
search's one held-out evaluation (the ledger's ``meta["finalize"]``, set by the ``finalize``
event). The judge still computes and stores them: finalize selects the best validation run from
them. What this module takes out, the verb layer (:func:`evotree.verbs.policy.shown`) fills with
the candidate's own quick metric (``[train] headline_signal``, a train-phase signal) where the
judge's headline was.

**Who is hidden from: everyone, CLI and agent server alike** (fail closed). An agent is not told
apart from a person: a marker in the environment (``EVOTREE_AGENT_*``, set by ``evotree agent``)
is something a process in the agent's sandbox can unset, so no output, text or ``--json``, and
no override flag or variable, shows a hidden figure while the boundary holds. A person who
needs one before finalize reads the run directories (``.evotree/runs/<run>/``), outside
evotree's outputs.

What hiding does to an output (:func:`redact`, applied to the result of a command or tool
before it is printed or returned):

- a dict naming a hidden split (``"metric": "validation/…"`` — a run's or version's headline —
  or ``"split": "heldout"``, an eval row) becomes ``None`` (shown as "not scored");
- a key naming a hidden split (``validation/…``, ``heldout_mean``, …) is dropped;
- a string that spells out a hidden figure (``validation/mean_score=0.31``) has it replaced by
  ``<hidden>``;
- a finding that exists only to report the judge's figures (:func:`hidden_finding`: the score
  layer, the version layer's headline comparisons, train-vs-eval reward) becomes ``None``;
- usage hours (``wall_hours``, ``cpu_hours``, ``gpu_hours``: they include the judge phase's time)
  are shown to two decimals (36 s), a run's as its own phases' (:func:`coarsen_run`); the time of
  a ledger event written when a run ends (``run.finished``, …) is shown to the minute;
- a bare number under a headline key (``headline``, ``parent_headline``, ``best_headline``, …;
  with it a sibling ``delta``) becomes ``None``, and an audit's scores (``raw_score``, …) are
  dropped when its ``score_metric`` names a hidden split.

Redaction is the last line: the figures are kept out at their source where that is possible
(``diagnose`` runs no score or version layer and reads no judge row, ``audit`` computes no
score, ``logs`` shows no eval-phase log, ``sql`` has no judge row), so that nothing recorded
during the search (findings, ledger events, memory) holds one either.

Commands whose whole purpose is to compare hidden figures (``compare``, ``gates``, ``report``,
``promote``, ``bootstrap``, every ``export`` (it writes the judge's split means to files);
:data:`REFUSED`) are refused while hidden (exit 10, code
``hidden_until_finalize``); ``sql`` hides the judge's rows (its views leave out the ``eval``
phase and run.json's headline). Train feedback, budgets and usage stay visible.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from typing import Any

from evotree.core.errors import InvalidState

__all__ = [
    "FINALIZE_META",
    "HIDDEN_SPLITS",
    "REFUSED",
    "HiddenUntilFinalize",
    "coarsen_evidence",
    "coarsen_run",
    "hidden",
    "hidden_finding",
    "redact",
    "refuse_if_hidden",
]

#: The ledger's meta key set by the ``finalize`` event: the boundary is lifted once it exists.
FINALIZE_META = "finalize"
#: The judge's splits an agent must not see during the search (``evotree.harness.layout.HIDDEN_SPLITS``).
HIDDEN_SPLITS = ("validation", "heldout")
#: Commands and tools refused while hidden: every figure they exist to show is a hidden one.
REFUSED = frozenset({"compare", "gates", "report", "promote", "bootstrap", "export"})
#: Finding codes (prefixes) computed from the judge's figures alone: the score layer (split
#: summaries of the evals), the version layer's headline comparisons (Δ vs parent/champion, the
#: tree's best version, saturation, …) and the behavior layer's train-vs-eval reward checks.
HIDDEN_FINDINGS = ("score.", "version.", "behavior.reward_eval", "behavior.reward_up_eval_down")
#: ... except the version layer's analyzers-trust warning, which names no figure (its code keeps
#: the lineage's first name: persisted name, existing ledgers and signed statements use it).
SHOWN_FINDINGS = frozenset({"version.harness_unsigned"})

_WORD = "|".join(HIDDEN_SPLITS)
_HIDDEN_KEY = re.compile(rf"^({_WORD})([/_.\-]|$)", re.IGNORECASE)
_HIDDEN_TEXT = re.compile(
    rf"(\b(?:{_WORD})/[\w./\-]*\s*(?:=|:)\s*)([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|inf)",
    re.IGNORECASE,
)
_HIDDEN_MARK = "<hidden>"
_HEADLINE_KEY = re.compile(r"(^|_)headline(_|$)", re.IGNORECASE)
_AUDIT_SCORES = ("raw_score", "leak_adjusted_score", "leak_zeroed_score")
#: a failed run's note quotes the failing phase's log (evotree.harness.logs.log_tail_note): the eval
#: phase's is the judge's output
_JUDGE_NOTE = re.compile(r"\b(eval\.(?:out|err) ends: ).*", re.DOTALL)
#: text about the judge phase's output or failure (a note quoting its log, an error naming it)
_JUDGE_PHASE_TEXT = re.compile(r"\beval[ ._-]?(?:phase|out|err|log)|\bjudge\b", re.IGNORECASE)


class HiddenUntilFinalize(InvalidState):
    """A command that would only show hidden figures, asked before finalize (exit 10)."""

    code = "hidden_until_finalize"


def hidden(ws: Any) -> bool:
    """Whether ``ws`` hides validation and held-out figures now (the boundary holds).

    Fails closed: a configuration or ledger that cannot be read while the workspace opens
    counts as hidden when the champion's configuration cannot be read at all.
    """
    try:
        enabled = bool(ws.config.eval.hide_until_finalize)
    except Exception:  # noqa: BLE001 - an unreadable configuration must not lift the boundary
        return True
    if not enabled:
        return False
    try:
        return not ws.ledger.meta().get(FINALIZE_META)
    except Exception:  # noqa: BLE001
        return True


def hidden_finding(code: Any) -> bool:
    """Whether a finding with this ``code`` reports the judge's figures (:data:`HIDDEN_FINDINGS`)."""
    return isinstance(code, str) and code not in SHOWN_FINDINGS and code.startswith(HIDDEN_FINDINGS)


def refuse_if_hidden(ws: Any, command: str) -> None:
    """Raise :class:`HiddenUntilFinalize` when ``command`` (or the group it belongs to, e.g.
    ``export`` of ``export tensorboard``) is one of :data:`REFUSED` and ``ws`` hides."""
    words = command.split()
    if (command in REFUSED or (words and words[0] in REFUSED)) and hidden(ws):
        raise HiddenUntilFinalize(
            f"`{command}` shows validation and held-out figures, which this workspace hides until the search "
            "is finalized ([eval] hide_until_finalize, EvoPolicyGym's protocol)",
            fix="use the train feedback (evotree runs, evotree sql over the train phase); a person ends the "
            "search with `evotree finalize`",
            command=command,
        )


def _hidden_dict(data: dict[Any, Any]) -> bool:
    for key in ("metric", "split"):
        value = data.get(key)
        if isinstance(value, str) and _HIDDEN_KEY.match(value):
            return True
    return hidden_finding(data.get("code")) and (
        "title" in data or "severity" in data or "layer" in data
    )


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


#: phases whose timing and log are the judge's (EvoPolicyGym: the eval phase plays the hidden seeds)
JUDGE_PHASES = ("eval",)
_RUN_TIME_KEYS = ("wall_seconds", "cpu_seconds")
#: usage figures (hours) that include the judge phase's time: a run's are its own phases', and a
#: version's or the tree's sums are shown to :data:`USAGE_HOURS_SHOWN` decimals while hidden (a
#: difference before and after one run would otherwise time its judge phase to the microsecond)
_JUDGED_HOURS = ("wall_hours", "cpu_hours", "gpu_hours")
USAGE_HOURS_SHOWN = 2
#: ledger events written when a run ends: their time is the run's end time (judge phase included),
#: shown to the minute while hidden
_RUN_END_EVENTS = ("run.finished", "run.released", "version.status")
_ISO_MINUTE = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d)(?::\d\d(?:\.\d+)?)?(.*)$")


def _to_minute(at: str) -> str:
    """An ISO time to the minute (``2026-12-04T15:56:52.8+00:00`` -> ``2026-12-04T15:56:00+00:00``)."""
    match = _ISO_MINUTE.match(at)
    return f"{match.group(1)}:00{match.group(2)}" if match else ""


def _run_like(data: dict[Any, Any]) -> bool:
    return "run_id" in data and ("phases" in data or "wall_seconds" in data)


#: a run's evidence files written by (or holding rows of) the judge phase
_JUDGED_FILES = ("evidence/eval/", "evals.parquet", "signals.parquet")


def _evidence_like(data: dict[Any, Any]) -> bool:
    return "digest" in data and ("files" in data or "rows" in data or "seconds" in data)


def coarsen_evidence(evidence: dict[str, Any]) -> dict[str, Any]:
    """A run's evidence manifest as it may be shown while hidden: no ingest time, no row counts but
    the train phase's rollouts, and no file digest or malformed count of a file holding the judge's
    rows (a count or a hash of a hidden figure is a hidden figure); the overall digest stays."""
    out = {k: v for k, v in evidence.items() if k != "seconds"}
    if isinstance(out.get("rows"), dict):
        out["rows"] = {k: v for k, v in out["rows"].items() if k == "rollouts"}
    for key in ("files", "malformed"):
        if isinstance(out.get(key), dict):
            out[key] = {
                k: v
                for k, v in out[key].items()
                if not (isinstance(k, str) and k.startswith(_JUDGED_FILES))
            }
    return out


def coarsen_run(data: dict[str, Any]) -> dict[str, Any]:
    """A run's record as it may be shown while hidden: the judge phase keeps only whether it
    completed (``ok``), the run's wall and CPU seconds and its usage's wall/CPU/GPU hours are its own
    phases' (the judge's left out), its end time is left out, its evidence manifest is
    :func:`coarsen_evidence`'s, and a failure's note and error quote no judge output."""
    out = dict(data)
    phases = out.get("phases")
    if isinstance(phases, dict):
        shown = {}
        for name, phase in phases.items():
            if name in JUDGE_PHASES and isinstance(phase, dict):
                shown[name] = {"ok": phase.get("returncode") == 0}
            else:
                shown[name] = phase
        out["phases"] = shown
        for key in _RUN_TIME_KEYS:
            if key in out:
                out[key] = round(
                    sum(
                        float(p.get(key) or 0.0)
                        for n, p in phases.items()
                        if n not in JUDGE_PHASES and isinstance(p, dict)
                    ),
                    3,
                )
    if "ended_at" in out:
        out["ended_at"] = None
    if isinstance(out.get("usage"), dict) and isinstance(phases, dict):
        # the run's usage counts its whole wall time, the judge's included: its own phases' instead
        own = sum(
            float(p.get("wall_seconds") or 0.0)
            for n, p in phases.items()
            if n not in JUDGE_PHASES and isinstance(p, dict)
        )
        out["usage"] = {
            k: (round(own / 3600.0, 9) if k in _JUDGED_HOURS and _number(v) and v else v)
            for k, v in out["usage"].items()
        }
    if isinstance(out.get("evidence"), dict):
        out["evidence"] = coarsen_evidence(out["evidence"])
    for key in ("error", "note"):
        if isinstance(out.get(key), str) and _JUDGE_PHASE_TEXT.search(out[key]):
            out[key] = "the judge phase did not complete (its output is hidden until finalize)"
    if isinstance(out.get("notes"), list):
        out["notes"] = [
            n for n in out["notes"] if not (isinstance(n, str) and _JUDGE_PHASE_TEXT.search(n))
        ]
    return out


def redact(data: Any) -> Any:
    """``data`` (JSON-like values, dataclasses, tuples) with every hidden figure taken out; a copy."""
    if (
        dataclasses.is_dataclass(data)
        and not isinstance(data, type)
        and hasattr(data, "to_dict")
        and hasattr(data, "run_id")
        and hasattr(data, "phases")
    ):
        return _redact_run_record(data)
    if isinstance(data, dict):
        data = _coarsened(data)
    if isinstance(data, str):
        return _redact_text(data)
    if isinstance(data, dict):
        return _redact_dict(data)
    if isinstance(data, list):
        return [redact(v) for v in data]
    if isinstance(data, tuple) and not hasattr(data, "_fields"):
        return tuple(redact(v) for v in data)
    if dataclasses.is_dataclass(data) and not isinstance(data, type):
        clone = copy.copy(data)
        for f in dataclasses.fields(data):
            try:
                object.__setattr__(clone, f.name, redact(getattr(data, f.name)))
            except (
                AttributeError,
                TypeError,
            ):  # a slot-less frozen oddity: leave out what cannot be set
                continue
        return clone
    return data


def _redact_run_record(data: Any) -> Any:
    """A run record: coarsened, then redacted like a dict, back into a copy of the record."""
    shown = redact(coarsen_run(data.to_dict()))
    clone = copy.copy(data)
    for f in dataclasses.fields(data):
        if f.name in shown:
            object.__setattr__(clone, f.name, shown[f.name])
    return clone


def _coarsened(data: dict[Any, Any]) -> dict[Any, Any]:
    """A run, an evidence row, a run's end event or judged hours with their times and hours
    coarsened to what is shown (any other dict as it is)."""
    if _run_like(data):
        return coarsen_run(data)
    if _evidence_like(data):
        return coarsen_evidence(data)
    if data.get("kind") in _RUN_END_EVENTS and isinstance(data.get("at"), str):
        return {
            **data,
            "at": _to_minute(data["at"]),
        }  # a run's end time, which the record withholds
    if any(_number(data.get(k)) for k in _JUDGED_HOURS):
        return {
            k: (round(v, USAGE_HOURS_SHOWN) if k in _JUDGED_HOURS and _number(v) else v)
            for k, v in data.items()
        }
    return data


def _redact_text(data: str) -> str:
    """A text with the judge's notes and hidden figures it quotes masked."""
    data = _JUDGE_NOTE.sub(lambda m: m.group(1) + _HIDDEN_MARK, data)
    return (
        _HIDDEN_TEXT.sub(lambda m: m.group(1) + _HIDDEN_MARK, data)
        if _HIDDEN_TEXT.search(data)
        else data
    )


def _redact_dict(data: dict[Any, Any]) -> dict[Any, Any] | None:
    """A dict without its hidden keys, bare headline values and a judged split's audit scores
    (None: the whole dict is a hidden figure)."""
    if _hidden_dict(data):
        return None
    out = {
        k: redact(v) for k, v in data.items() if not (isinstance(k, str) and _HIDDEN_KEY.match(k))
    }
    headline = [
        k for k, v in data.items() if isinstance(k, str) and _HEADLINE_KEY.search(k) and _number(v)
    ]
    # a bare headline value (diagnose's interventions, finding evidence): the judge's
    for key in headline:
        out[key] = None
    if headline and _number(out.get("delta")):
        out["delta"] = None
    score_metric = data.get("score_metric")
    if isinstance(score_metric, str) and _HIDDEN_KEY.match(score_metric):
        for key in _AUDIT_SCORES:  # an audit of the judge's split
            out.pop(key, None)
    return out
