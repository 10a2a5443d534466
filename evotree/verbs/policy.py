"""The policies every verb applies, each decided here once: trust, ownership, visibility, spend.

- **What is in force** (:func:`acting`): a verb that acts on the champion's configuration, policy
  or judge (running, comparing, gating, branching from the champion, committing) first verifies
  the signed chain (:func:`evotree.gates.trust.in_force`) and pins the workspace to its end; an
  unsigned move of a ref refuses it with the problems and ``evotree verify``.
- **Who may act** (:func:`require_owner`): a named principal (an agent behind ``evotree serve`` /
  ``evotree agent``) writes only to the versions it created; the person at this machine (no
  principal: the CLI, the Python API) owns the workspace and may act on every version (sign-off
  still refuses a version's creator, in :mod:`evotree.gates.signoff`).
- **What is hidden** (:func:`hidden_now`, :func:`refuse_hidden`, :func:`shown`): the boundary of
  EvoPolicyGym and AI4AI-Bench (``[eval] hide_until_finalize``), decided from the *trusted*
  configuration; when the chain cannot be established the figures are hidden (fail closed). While
  hidden, every face shows the candidate's own quick metric (``[train] headline_signal``, a
  train-phase signal: :func:`with_quick_metrics`) where the judge's headline would be. What
  redaction takes out is taken out so that every output still matches its ``--json`` schema
  (:func:`redacted`): a list item that a hidden figure is part of is omitted (no count: the number
  of hidden findings is itself a figure), a headline becomes ``null`` ("not scored"), a text field
  named after a hidden split keeps its text when it spells no number and reads ``<hidden>`` when it
  does.
- **What spend may be recorded** (:data:`MAX_SPEND_USD`): finite, bounded amounts only.
"""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING, Any

from evotree.core.errors import EvotreeError, InvalidState
from evotree.core.visibility import FINALIZE_META, HIDDEN_SPLITS, HiddenUntilFinalize, redact
from evotree.core.visibility import hidden as _configured_hidden
from evotree.gates.trust import InForce, UntrustedState, in_force

if TYPE_CHECKING:
    from evotree.core.ledger import VersionRecord
    from evotree.core.workspace import Workspace
    from evotree.verbs.principal import Principal

__all__ = [
    "MAX_SPEND_TOKENS",
    "MAX_SPEND_USD",
    "NotYourVersion",
    "QUICK_PREFIX",
    "acting",
    "attach",
    "hidden_now",
    "redacted",
    "refuse_hidden",
    "require_owner",
    "shown",
    "with_quick_metrics",
]

#: the largest amount one ``spend record`` may carry (USD): far above any real API bill, far below
#: where sums of records stop being finite
MAX_SPEND_USD = 1_000_000.0
#: the most tokens one ``spend record`` may carry: a whole number far above any real bill (an
#: unbounded one, 10**400, landed in the ledger's usage and put every version over a token budget)
MAX_SPEND_TOKENS = 10**12


class NotYourVersion(InvalidState):
    """A principal asked to write to a version another principal created (exit 10)."""

    code = "not_your_version"


def attach(ws: Workspace) -> Workspace:
    """Give ``ws`` what the layers below need from this one, passed in explicitly: the signed
    policy's check of ``run.voided`` events (the evidence views call it)."""
    ws.void_checker = _check_void
    return ws


def _check_void(ws: Workspace, record: Any, run_id: str, data: dict[str, Any]) -> list[str]:
    """:func:`evotree.gates.voids.check_void`, loaded when a void is judged (it loads the harness's
    evidence code, which a reading command such as ``tree`` never needs)."""
    from evotree.gates.voids import check_void

    return check_void(ws, record, run_id, data)


def acting(ws: Workspace) -> InForce:
    """Verify the signed chain and pin ``ws`` to its end before a verb acts (see module doc)."""
    return in_force(ws)


def hidden_now(ws: Workspace) -> bool:
    """Whether figures are hidden now, by the trusted configuration; hidden when the chain cannot
    be established (a fetched champion could otherwise switch the boundary off)."""
    try:
        in_force(ws)
    except EvotreeError:
        return True
    if _configured_hidden(ws):
        return True
    return _finalized_elsewhere(ws)


def _finalized_elsewhere(ws: Workspace) -> bool:
    """Whether the boundary is lifted only by a ``finalize`` this workspace did not record (a fetched
    ledger's unsigned event): then it holds (fail closed)."""
    from evotree.gates.finalize import finalized_here

    try:
        if not ws.config.eval.hide_until_finalize:
            return False
        return not finalized_here(ws, ws.ledger.meta().get(FINALIZE_META))
    except Exception:  # noqa: BLE001 - what cannot be read must not lift the boundary
        return True


def refuse_hidden(ws: Workspace, verb: str) -> None:
    """Refuse ``verb`` (exit 10) when it exists only to show hidden figures and they are hidden now
    (decided by :func:`hidden_now` alone: a configuration that cannot be read, or a finalize this
    workspace did not record, keeps the verb refused)."""
    from evotree.core.visibility import REFUSED

    words = verb.split()
    if not (verb in REFUSED or (words and words[0] in REFUSED)):
        return
    try:
        in_force(ws)  # an unsigned state is refused as such (exit 33, naming `evotree verify`)
    except UntrustedState:
        raise
    except EvotreeError:
        raise HiddenUntilFinalize(
            f"`{verb}` shows figures this workspace may hide, and what is in force "
            "cannot be established",
            fix="run `evotree verify`",
        ) from None
    if hidden_now(ws):
        raise HiddenUntilFinalize(
            f"`{verb}` shows validation and held-out figures, which this workspace hides until the search "
            "is finalized here ([eval] hide_until_finalize: the EvoPolicyGym and AI4AI-Bench protocols)",
            fix="use the train feedback (evotree runs, evotree sql over the train phase); a person ends the "
            "search with `evotree finalize`",
            command=verb,
        )


def shown(ws: Workspace, result: Any, *, hide: bool | None = None) -> Any:
    """``result`` as any face may show it: redacted while figures are hidden, and then the quick
    metric (:func:`with_quick_metrics`) where the judge's headline was."""
    if hide is None:
        hide = hidden_now(ws)
    return with_quick_metrics(ws, redacted(result)) if hide else result


#: what a text field named after a hidden split reads when its text spells a number
HIDDEN_TEXT = "<hidden>"
_SPLIT_KEY = re.compile(rf"^({'|'.join(HIDDEN_SPLITS)})([/_.\-]|$)", re.IGNORECASE)
_HEADLINE = re.compile(r"(^|_)headline(_|$)", re.IGNORECASE)
_DIGIT = re.compile(r"\d")


def redacted(result: Any) -> Any:
    """``result`` with every hidden figure taken out (:func:`evotree.core.visibility.redact`), in a
    form its ``--json`` schema still accepts, the same for every face:

    - a list item that redaction emptied, or one a part of which (other than a headline) it
      emptied (a ledger event whose payload is a hidden finding), is omitted;
    - a headline emptied stays ``null`` (every headline's schema allows it: "not scored");
    - a text field named after a hidden split (a skill's ``validation`` criterion) keeps its text
      when the text spells no number, and reads :data:`HIDDEN_TEXT` when it does;
    - a typed result's field named after a hidden split (``validation_mean``, ``heldout_run``, a
      candidate's ``validation``) is ``None``, as its key is dropped from the same result's JSON:
      a text renderer of the typed result shows what the JSON shows.
    """
    out, _ = _mend(result, redact(result))
    return out


def _mend(before: Any, after: Any) -> tuple[Any, bool]:
    """``after`` (redaction's output for ``before``) made schema-valid, and whether it kept every
    part but headlines (a list drops an item that did not)."""
    if after is None:  # a hidden dict emptied (not whole); a value nulled (whole)
        return None, not isinstance(before, dict)
    if isinstance(after, list) and isinstance(before, list) and len(before) == len(after):
        kept = [_mend(b, a) for b, a in zip(before, after)]
        return [value for value, whole in kept if whole], True
    if (
        isinstance(after, tuple)
        and isinstance(before, tuple)
        and len(before) == len(after)
        and not hasattr(after, "_fields")
    ):
        kept = [_mend(b, a) for b, a in zip(before, after)]
        return tuple(value for value, whole in kept if whole), True
    if isinstance(after, dict) and isinstance(before, dict):
        whole = True
        out = dict(after)
        for key, value in before.items():
            if key in after:
                out[key], ok = _mend(value, after[key])
                whole = whole and (ok or _headline(key))
            elif isinstance(value, str) and _split_word(key):
                out[key] = _text(value)
        return out, whole
    if (
        dataclasses.is_dataclass(after)
        and not isinstance(after, type)
        and type(after) is type(before)
    ):
        scalars = _as_json(before)
        if scalars is not None and not scalars:
            return None, False  # the record's own keys name a hidden figure: hidden whole
        whole = True
        for f in dataclasses.fields(after):
            value, ok = _mend(getattr(before, f.name, None), getattr(after, f.name, None))
            whole = whole and (ok or _headline(f.name))
            if scalars is not None and f.name in scalars:  # as the same record's JSON shows it
                value = scalars[f.name]
            elif _SPLIT_KEY.match(f.name):  # the field of a key the JSON drops: not shown either
                value = _dropped(f.name, value)
            try:
                object.__setattr__(after, f.name, value)
            except (AttributeError, TypeError):  # a slot-less frozen oddity: left as redacted
                continue
        return after, whole
    return after, True


_SCALAR = (str, int, float, bool, type(None))


def _as_json(record: Any) -> dict[str, Any] | None:
    """A typed record's scalar fields as redaction shows them in its JSON (a ledger event's time to
    the minute, a bare headline number ``None``, a split-named key dropped); ``{}`` when the record
    is hidden whole (its keys name a hidden split or finding); ``None`` for a run record, which
    redaction already coarsens from its own JSON."""
    if hasattr(record, "run_id") and hasattr(record, "phases"):
        return None
    scalars = {
        f.name: getattr(record, f.name, None)
        for f in dataclasses.fields(record)
        if isinstance(getattr(record, f.name, None), _SCALAR)
    }
    shown = redact(scalars)
    if shown is None:
        return {}
    return {k: shown[k] if k in shown else _dropped(k, v) for k, v in scalars.items()} or None


def _dropped(key: str, value: Any) -> Any:
    """A scalar field whose key redaction drops: a text under a split's own name keeps its words
    (:func:`_text`); anything else is ``None``."""
    return _text(value) if _split_word(key) and isinstance(value, str) else None


def _split_word(key: Any) -> bool:
    """``key`` is a hidden split's name itself (``validation``: a text about the split)."""
    return isinstance(key, str) and key.lower() in HIDDEN_SPLITS


def _text(value: str) -> str:
    return value if not _DIGIT.search(value) else HIDDEN_TEXT


def _headline(key: Any) -> bool:
    return isinstance(key, str) and bool(_HEADLINE.search(key))


#: the metric prefix of a quick headline: the candidate's own train-phase signal, shown while the
#: judge's figures are hidden (AI4AI-Bench's fast metric: what the agent measures on data it sees)
QUICK_PREFIX = "quick/"


def _is_run(item: Any) -> bool:
    return all(_has(item, k) for k in ("run_id", "headline", "version", "seed"))


def _is_version(item: Any) -> bool:
    return all(_has(item, k) for k in ("id", "headline", "status", "hypothesis"))


def _has(item: Any, key: str) -> bool:
    if isinstance(item, dict):
        return key in item
    return dataclasses.is_dataclass(item) and hasattr(item, key)


def _get(item: Any, key: str) -> Any:
    return item.get(key) if isinstance(item, dict) else getattr(item, key, None)


def _walk(data: Any, found: list[Any]) -> None:
    """Every run-like and version-like item in ``data`` (lists, dicts, dataclasses)."""
    if _is_run(data) or _is_version(data):
        found.append(data)
    if isinstance(data, dict):
        for value in data.values():
            _walk(value, found)
    elif isinstance(data, (list, tuple)):
        for value in data:
            _walk(value, found)
    elif dataclasses.is_dataclass(data) and not isinstance(data, type):
        for f in dataclasses.fields(data):
            value = getattr(data, f.name, None)
            if isinstance(value, (dict, list, tuple)) or dataclasses.is_dataclass(value):
                _walk(value, found)


def _quick_values(ws: Workspace, signal: str, run_ids: set[str]) -> dict[str, float]:
    """The last value of the train-phase signal ``signal`` of each run (by its run directory)."""
    import duckdb

    from evotree.harness.records import runs_dir

    base = runs_dir(ws)
    safe = (r for r in sorted(run_ids) if r and "/" not in r and not r.startswith("."))
    files = {
        str(base / r / "signals.parquet"): r
        for r in safe
        if (base / r / "signals.parquet").is_file()
    }
    if not files:
        return {}
    con = duckdb.connect()
    try:
        rows = con.execute(
            "SELECT filename, arg_max(value, step) FROM read_parquet(?, filename = true) "
            "WHERE phase = 'train' AND metric = ? AND value IS NOT NULL GROUP BY filename",
            [list(files), signal],
        ).fetchall()
    except duckdb.Error:
        return {}
    finally:
        con.close()
    return {
        files[f]: float(v) for f, v in rows if f in files and isinstance(v, (int, float)) and v == v
    }


def with_quick_metrics(ws: Workspace, data: Any) -> Any:
    """``data`` (already redacted) with the quick metric where the judge's headline is not shown.

    The quick metric is the train phase's ``[train] headline_signal`` (the trusted configuration's):
    a signal the candidate's own training reports, e.g. its accuracy on data it may see. A run with
    no shown headline gets its last value (``{"metric": "quick/NAME", "value": …, "phase":
    "train"}``), a version the mean over its succeeded runs (with ``n``). Nothing here reads the
    judge's rows. Without a headline signal ``data`` is returned as it is.
    """
    try:
        signal = str(ws.config.train.headline_signal or "")
    except Exception:  # noqa: BLE001 - no readable configuration: no quick metric
        return data
    if not signal:
        return data
    items: list[Any] = []
    _walk(data, items)
    items = [i for i in items if _get(i, "headline") is None]
    if not items:
        return data
    runs_of: dict[str, list[str]] = {}
    if any(_is_version(i) and not _is_run(i) for i in items):
        runs_of = {
            r.id: [str(x.get("run_id")) for x in (r.runs or []) if x.get("status") == "succeeded"]
            for r in ws.ledger.versions()
        }
    wanted = {str(_get(i, "run_id")) for i in items if _is_run(i)}
    for item in items:
        if not _is_run(item):
            wanted.update(runs_of.get(str(_get(item, "id")), []))
    values = _quick_values(ws, signal, wanted)
    metric = QUICK_PREFIX + signal
    for item in items:
        if _is_run(item):
            value = values.get(str(_get(item, "run_id")))
            headline = (
                None if value is None else {"metric": metric, "value": value, "phase": "train"}
            )
        else:
            got = [values[r] for r in runs_of.get(str(_get(item, "id")), []) if r in values]
            headline = (
                None
                if not got
                else {
                    "metric": metric,
                    "value": sum(got) / len(got),
                    "n": len(got),
                    "phase": "train",
                }
            )
        if headline is None:
            continue
        if isinstance(item, dict):
            item["headline"] = headline
        else:
            object.__setattr__(item, "headline", headline)
    return data


def require_owner(record: VersionRecord, principal: Principal | None, verb: str) -> None:
    """Refuse a named principal's write to a version it did not create."""
    if principal is None:
        return
    if record.created_by != str(principal.identity()):
        raise NotYourVersion(
            f"{verb} {record.id}: {record.id} was created by {record.created_by}, not by {principal}; "
            "a principal writes only to its own versions",
            fix=f"branch your own version from it (branch(parent={record.id!r}, ...)) and work there",
            version=record.id,
            verb=verb,
        )
