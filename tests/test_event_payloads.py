"""Every ledger event kind has a typed payload: written from it, parsed back strictly, and stored
exactly as the hand-built dicts were (old ledgers and signatures over them stay valid)."""

from __future__ import annotations

import json
import shutil
import typing
from dataclasses import MISSING, fields
from pathlib import Path
from typing import Any, Union

import pytest

from evotree.core.events import (
    ABSENT,
    PAYLOADS,
    EventKind,
    MalformedEvent,
    Payload,
    SpendRecorded,
    payload_type,
)
from evotree.core.ledger import Event
from evotree.core.workspace import Workspace


def _sample(hint: Any, depth: int = 0) -> Any:
    """A value of type ``hint`` (the first option of a union that is not None)."""
    if hint is Any:
        return {"any": [1, "two"]}
    origin = typing.get_origin(hint)
    if origin in (Union, __import__("types").UnionType):
        options = [o for o in typing.get_args(hint) if o is not type(None)]
        return _sample(options[0], depth)
    if origin is list:
        return [_sample(typing.get_args(hint)[0], depth + 1)]
    if origin is dict:
        return {"key": _sample(typing.get_args(hint)[1], depth + 1)}
    return {str: "text", int: 7, float: 0.25, bool: True, type(None): None}[hint]


def _full(cls: type[Payload]) -> Payload:
    hints = typing.get_type_hints(cls, vars(__import__(cls.__module__, fromlist=["x"])))
    return cls(**{f.name: _sample(hints[f.name]) for f in fields(cls)})


def _minimal(cls: type[Payload]) -> Payload:
    hints = typing.get_type_hints(cls, vars(__import__(cls.__module__, fromlist=["x"])))
    return cls(
        **{
            f.name: _sample(hints[f.name])
            for f in fields(cls)
            if f.default is MISSING and f.default_factory is MISSING
        }
    )


def test_every_event_kind_has_a_payload_type() -> None:
    assert set(PAYLOADS) == set(EventKind)
    for kind, cls in PAYLOADS.items():
        assert cls.KIND is kind and payload_type(kind.value) is cls
        assert cls.__dataclass_params__.frozen  # type: ignore[attr-defined]


@pytest.mark.parametrize("kind", list(EventKind), ids=lambda k: k.value)
def test_each_kind_round_trips_through_the_ledger_line(kind: EventKind) -> None:
    """Every field set, and only the required ones: written as one JSON line, read back, parsed
    strictly, equal; an unset optional field leaves no key behind."""
    cls = PAYLOADS[kind]
    for payload in (_full(cls), _minimal(cls)):
        event = Event.of(payload, version="v1", actor="A <a@example.com>")
        line = event.to_json()
        back = Event.from_json(line)
        assert back is not None and back.kind == kind.value
        assert back.payload() == payload
        assert (
            Event.of(back.payload(), version="v1", actor=back.actor, at=back.at).to_json() == line
        )
        stored = json.loads(line)["data"]
        assert all(value is not ABSENT for value in stored.values())
        assert set(stored) == {
            f.name for f in fields(cls) if getattr(payload, f.name) is not ABSENT
        }


def test_a_malformed_payload_is_refused_naming_the_event_and_the_field() -> None:
    good = {"usd": 0.5, "note": "api", "tokens": 10, "principal": "A <a@example.com>"}
    assert Event(
        kind="spend.recorded", version="v2", actor="a", data=good
    ).payload() == SpendRecorded(**good)
    cases = [
        ({**good, "usd": "1e9"}, "field usd: expected a finite number"),
        ({**good, "usd": float("inf")}, "field usd"),
        ({**good, "tokens": True}, "field tokens"),
        ({**good, "note": None}, "field note"),
        ({**good, "sneaky": 1}, "unknown field(s) sneaky"),
        ({"note": "no amount"}, "field usd is missing"),
    ]
    for data, said in cases:
        with pytest.raises(MalformedEvent) as refused:
            Event(
                kind="spend.recorded",
                version="v2",
                actor="a",
                at="2026-01-01T00:00:00+00:00",
                data=data,
            ).payload()
        assert said in refused.value.message, refused.value.message
        assert refused.value.message.startswith("spend.recorded event of v2 at 2026-01-01")
        assert refused.value.exit_code != 0 and "evotree verify" in (refused.value.fix or "")
    with pytest.raises(MalformedEvent, match="run.finished event.*field usage\\['episodes'\\]"):
        Event(
            kind="run.finished",
            version="v1",
            actor="a",
            data={"run_id": "r", "seed": 0, "status": "succeeded", "usage": {"episodes": "many"}},
        ).payload()
    with pytest.raises(MalformedEvent, match="unknown event kind 'version.teleported'"):
        Event(kind="version.teleported", version="v1", actor="a").payload()
    with pytest.raises(MalformedEvent, match="not an object"):
        bad: Any = [1, 2]
        Event(kind="finding", version="v1", actor="a", data=bad).payload()


def test_a_writer_cannot_build_an_event_of_the_wrong_type() -> None:
    """Event.of checks the payload before anything is written: a writer's bug is refused at once."""
    bad: Any = "0.5"
    with pytest.raises(MalformedEvent, match="spend.recorded event being written: field usd"):
        Event.of(SpendRecorded(usd=bad, note="api"), version=None, actor="a")
    with pytest.raises(MalformedEvent, match="field worktree_removed"):
        Event.of(
            PAYLOADS[EventKind.VERSION_ABANDONED](reason="r", worktree_removed=3),
            version="v1",
            actor="a",
        )


def test_the_finalize_payload_has_every_field_finalize_writes() -> None:
    """finalize's event data is FinalizeResult.to_dict(): a field added there must be in the payload
    type too, or the event would no longer parse."""
    from evotree.gates.finalize import FinalizeResult

    written = {f.name for f in fields(FinalizeResult)}
    for kind in (EventKind.FINALIZE, EventKind.FINALIZE_ATTEMPT):
        assert written == {f.name for f in fields(PAYLOADS[kind])}, kind


def test_an_event_written_before_its_newer_fields_still_reads() -> None:
    """A spend.recorded of an older release (no tokens, principal or seal) parses, and is stored
    back byte for byte as it was."""
    line = (
        '{"actor":"A <a@example.com>","at":"2025-05-01T00:00:00+00:00",'
        '"data":{"note":"api","usd":1.5},'
        '"kind":"spend.recorded","v":1,"version":null}'
    )
    event = Event.from_json(line)
    assert event is not None
    payload = event.payload()
    assert (
        isinstance(payload, SpendRecorded) and payload.tokens is ABSENT and payload.seal is ABSENT
    )
    assert Event.of(payload, version=None, actor=event.actor, at=event.at).to_json() == line


@pytest.mark.heavy
def test_every_event_a_real_workspace_writes_parses_and_is_stored_as_its_payload_gives_it(
    tmp_path: Path,
) -> None:
    """A workspace's life (init, branch, commit, runs, spend, diagnose, prune and restore a
    worktree, abandon): each event of its ledger parses strictly as its kind's payload, and
    written again from the payload it gives the same line (so the writers' dicts and the payload
    types agree, and nothing already signed changes)."""
    from evotree.harness.money import record_spend
    from test_runs import make_run_repo

    from evotree.core.versions import abandon_version, prune_worktrees, restore_worktree
    from evotree.verbs import Session

    repo = make_run_repo(tmp_path / "ws")
    session = Session(repo)
    v1 = session.branch("more skill")
    (repo / v1.worktree / "recipe.toml").write_text("skill = 0.7\nsteps = 3\n")
    session.commit(v1.id, "more skill")
    [record] = session.run([v1.id])
    assert record.status == "succeeded", record.error
    session.diagnose(v1.id)
    session.spend_record(0.25, "api: one session", tokens=1200, version=v1.id)
    ws = Workspace.open(repo)
    record_spend(ws, 0.5, "tree-wide")
    v2 = session.branch("to throw away")
    shutil.rmtree(repo / v2.worktree)  # gone: prune forgets it
    assert prune_worktrees(ws).forgotten == [v2.id]
    restore_worktree(ws, v2.id)
    abandon_version(ws, v2.id, reason="a dead end")
    kinds = set()
    for entry in Workspace.open(repo).ledger.entries():
        event = entry.event
        payload = event.payload()
        assert (
            Event.of(payload, version=event.version, actor=event.actor, at=event.at).to_json()
            == event.to_json()
        )
        kinds.add(event.kind)
    assert {
        "workspace.initialized",
        "version.created",
        "run.reserved",
        "run.started",
        "run.finished",
        "finding",
        "spend.recorded",
        "worktree.pruned",
        "worktree.restored",
        "version.abandoned",
    } <= kinds, kinds
