"""Red team of the verb layer and the trust root (issue 28): each attack as the adversary would
play it — a stranger's remote fetched with the README's refspecs, a second principal over the
verbs, a local process moving refs, an agent in EvoPolicyGym hide mode. An attack that still
works is an ``xfail(strict=True)`` test naming it; one that fails is asserted to fail."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli, commit_file, git, make_repo
from fixtures_ws import EVOTREE_SPECS, make_key, with_stranger

from evotree.core.errors import EvotreeError
from evotree.core.ledger import Event, EventKind, LedgerTxn
from evotree.core.refs import CHAMPION_REF
from evotree.core.workspace import Workspace, init_workspace
from evotree.verbs import Principal, Session

REFSPECS = EVOTREE_SPECS


def _key(tmp_path: Path, email: str) -> Path:
    return make_key(tmp_path, f"key-{email.split('@')[0]}", comment=email)[0]


def _shared(tmp_path: Path, *init_args: str) -> dict[str, Path]:
    """A workspace pushed to a bare remote, and a stranger's clone of it (the README's refspecs)."""
    repo = make_repo(tmp_path / "ws")
    Cli(repo).json("init", *init_args)
    return with_stranger(repo, tmp_path)


def _push_and_fetch(s: dict[str, Path]) -> None:
    git(s["stranger"], "push", "--quiet", "origin", *REFSPECS)
    git(s["repo"], "fetch", "--quiet", "origin", *REFSPECS)


# ---------------------------------------------------------------------------- (a) a stranger's remote
def test_a_stranger_cannot_add_the_first_signers_of_a_workspace_without_one(tmp_path: Path) -> None:
    """A workspace made without --signer: the stranger performs the real `signers add` step in its
    own clone with its own key (signed, only the allowed-signers file changes) and pushes it."""
    from evotree.gates.bootstrap import prepare_signers, record_signers
    from evotree.gates.signoff import approver_for
    from evotree.gates.trust import in_force
    from evotree.gates.verify import trusted_policy

    s = _shared(tmp_path)
    key = _key(tmp_path, "mallory@example.com")
    ws = Workspace.open(s["stranger"])
    policy = trusted_policy(ws)
    line = f"mallory@example.com {' '.join(Path(f'{key}.pub').read_text().split()[:2])}"
    commit, new_policy = prepare_signers(ws, policy, [line])
    record_signers(ws, policy, new_policy, approver_for(new_policy, key, None))
    _push_and_fetch(s)
    victim = Workspace.open(s["repo"])
    with pytest.raises(EvotreeError):
        in_force(victim)  # the stranger's key must not become the trust root here


def _hidden_shared(tmp_path: Path) -> dict[str, Path]:
    """An EvoPolicyGym-mode workspace ([eval] hide_until_finalize) pushed to a bare remote, and a
    stranger's clone of it."""
    from test_gym_finalize import hidden_gym_workspace

    repo = hidden_gym_workspace(tmp_path / "ws").root
    return with_stranger(repo, tmp_path)


def test_a_fetched_finalize_event_does_not_lift_the_boundary(tmp_path: Path) -> None:
    """The stranger appends an unsigned `finalize` event (a fast-forward of the ledger): the
    boundary must hold here, where nothing was finalized."""
    from evotree.verbs.policy import hidden_now

    s = _hidden_shared(tmp_path)
    ws = Workspace.open(s["stranger"])

    def forge(txn: LedgerTxn) -> Event:
        txn.meta["finalize"] = {
            "status": "no_ok_submit",
            "at": "2026-12-04T00:00:00+00:00",
            "heldout_run": None,
        }
        return Event(
            kind=EventKind.FINALIZE.value,
            version="v0",
            actor="Mallory <mallory@example.com>",
            at="2026-12-04T00:00:00+00:00",
            data={"status": "no_ok_submit"},
        )

    ws.ledger.transact(forge, actor=ws.git.identity())
    _push_and_fetch(s)
    victim = Workspace.open(s["repo"])
    assert hidden_now(victim)
    with pytest.raises(EvotreeError) as caught:
        Session(s["repo"], Principal.parse("agent")).compare("v0", "v0")
    assert caught.value.code == "hidden_until_finalize"


# ---------------------------------------------------------------------------- (b) a second principal
def test_a_merge_by_a_principal_is_recorded_as_that_principal(tmp_path: Path) -> None:
    """mallory merges alice's version with her own: the new version must name mallory, not the
    workspace owner's git identity (a forged created_by would let mallory's work pass as the
    owner's, and refuse the owner's own sign-off of it)."""
    repo = make_repo(tmp_path / "ws")
    init_workspace(repo)
    alice, mallory = (
        Session(repo, Principal.parse("alice")),
        Session(repo, Principal.parse("mallory")),
    )
    a = alice.branch("alice's idea")
    commit_file(repo / a.worktree, "a.txt", "a\n", "a")
    m = mallory.branch("mallory's idea")
    commit_file(repo / m.worktree, "m.txt", "m\n", "m")
    merged = mallory.merge(a.id, m.id, message="both")
    assert merged.created_by == "mallory <mallory>"


def test_a_merge_with_the_champion_takes_its_signed_commit(tmp_path: Path) -> None:
    """A commit that lands on the champion's branch after its promotion is not the champion: a
    merge with the champion starts from the signed commit, as branch does."""
    repo = make_repo(tmp_path / "ws")
    init_workspace(repo)
    signed = git(repo, "rev-parse", CHAMPION_REF)
    other = Session(repo).branch("other")
    commit_file(repo / other.worktree, "o.txt", "o\n", "o")
    git(repo, "switch", "-q", "evotree/v0")
    commit_file(repo, "sneaky.txt", "unsigned\n", "racing commit on the champion's branch")
    merged = Session(repo).merge("v0", other.id, message="merge")
    parents = git(repo, "log", "-1", "--format=%P", merged.base_commit).split()
    assert signed in parents


@pytest.mark.parametrize(
    "tokens", [10**400, -1, 10**12 + 1, True, 1.5], ids=["1e400", "-1", "1e12+1", "True", "1.5"]
)
def test_spend_tokens_are_whole_and_bounded(tmp_path: Path, tokens: Any) -> None:
    """`spend_record(tokens=10**400)` wrote a 400-digit number into the ledger's usage (every
    version over any token budget); the count is bounded like the amount."""
    repo = make_repo(tmp_path / "ws")
    init_workspace(repo)
    before = git(repo, "rev-parse", "refs/evotree/ledger")
    with pytest.raises(EvotreeError) as caught:
        Session(repo, Principal.parse("bot")).spend_record(0.5, "tokens", tokens=tokens)
    assert caught.value.code == "invalid_spend"
    assert git(repo, "rev-parse", "refs/evotree/ledger") == before
    assert (
        Session(repo, Principal.parse("bot")).spend_record(0.5, "a real bill", tokens=120_000).usd
        == 0.5
    )


# ---------------------------------------------------------------------------- (d) an agent in hide mode
_RUN = {
    "run_id": "v1-s0-x",
    "version": "v1",
    "status": "succeeded",
    "started_at": "2026-12-04T15:56:43.196235+00:00",
    "ended_at": "2026-12-04T15:56:51.198644+00:00",
    "wall_seconds": 7.978,
    "cpu_seconds": 1.677,
    "phases": {
        "train": {"wall_seconds": 3.622, "cpu_seconds": 1.048, "returncode": 0},
        "eval": {"wall_seconds": 2.294, "cpu_seconds": 0.629, "returncode": 0},
    },
    "usage": {
        "wall_hours": 0.002216111,
        "cpu_hours": 0.002216111,
        "train_hours": 0.001006111,
        "episodes": 2,
    },
    "evidence": {
        "digest": "sha256:00",
        "seconds": 1.53,
        "rows": {"evals": 3, "rollouts": 2, "signals": 13},
        "files": {
            "evidence/eval/evals.jsonl": "sha256:11",
            "evidence/train/rollouts.jsonl": "sha256:22",
            "signals.parquet": "sha256:33",
        },
    },
}


def test_a_run_s_usage_and_ledger_times_do_not_time_the_judge() -> None:
    """The run record's usage (wall_hours = train + judge, to 3.6 µs), its evidence ingest time and
    the `run.finished` event's time (in `log`) gave back what coarsen_run withholds: the judge
    phase's wall time (whose length is the hidden return of a policy that sleeps per step)."""
    from evotree.core.visibility import coarsen_run, redact

    coarse = coarsen_run(_RUN)
    assert coarse["usage"]["wall_hours"] == round(3.622 / 3600, 9) == coarse["usage"]["cpu_hours"]
    assert coarse["usage"]["train_hours"] == 0.001006111 and "seconds" not in coarse["evidence"]
    # a count or a hash of the judge's rows is a hidden figure (a judge that writes a row per step
    # survived counts the return); the train phase's stay, and the overall digest
    assert coarse["evidence"]["rows"] == {"rollouts": 2}
    assert coarse["evidence"]["files"] == {"evidence/train/rollouts.jsonl": "sha256:22"}
    assert coarse["evidence"]["digest"] == "sha256:00"
    assert (
        redact({"run_id": "r", "evidence": _RUN["evidence"]})["evidence"] == coarse["evidence"]
    )  # run.finished
    shown = redact(_RUN)
    assert shown["usage"]["wall_hours"] == 0.0 and shown["ended_at"] is None
    # a version's or the tree's usage sums: to 0.01 h while hidden
    assert redact({"usage": {"wall_hours": 0.123456789, "runs": 3}})["usage"] == {
        "wall_hours": 0.12,
        "runs": 3,
    }
    # the ledger's run.finished event: to the minute
    event = {
        "kind": "run.finished",
        "at": "2026-12-04T15:56:52.837852+00:00",
        "version": "v1",
        "actor": "x",
        "data": {"usage": dict(_RUN["usage"])},
    }
    out = redact(event)
    assert out["at"] == "2026-12-04T15:56:00+00:00" and out["data"]["usage"]["wall_hours"] == 0.0
    assert (
        redact({"kind": "version.created", "at": event["at"]})["at"] == event["at"]
    )  # the agent's own acts


@pytest.mark.heavy
def test_no_verb_times_the_judge_phase_in_hide_mode(tmp_path: Path) -> None:
    """End to end: a run in EvoPolicyGym mode, then every reading verb as the agent: no figure that
    includes the judge phase's time is finer than the rule allows."""
    import re

    from test_gym_finalize import GOOD, hidden_gym_workspace

    repo = hidden_gym_workspace(tmp_path / "w").root
    agent = Session(repo, Principal.parse("agent"))
    made = agent.branch("balance")
    commit_file(repo / made.worktree, "policy.py", GOOD, "balance")
    events: list[tuple[str, dict[str, Any]]] = []
    [record] = agent.run([made.id], progress=lambda _r, event, info: events.append((event, info)))
    assert record.status == "succeeded", record.error
    # the judge's signals never reach a face's progress callback (the gym judge's replay_mismatches did)
    assert not [e for e in events if e[0] in ("step", "metric") and e[1].get("phase") == "eval"], (
        events
    )
    raw = json.loads(next((repo / ".evotree" / "runs").glob("v1-*/run.json")).read_text())
    finished = next(
        e.event.at for e in Workspace.open(repo).ledger.entries() if e.event.kind == "run.finished"
    )
    ends = {
        raw["ended_at"][11:26],
        finished[11:26],
    }  # the run's end (judge included), to the microsecond
    judged_hours = f"{raw['wall_seconds'] / 3600:.6f}"[:7]
    for name, out in (
        ("runs", agent.runs()),
        ("show", agent.show(made.id)),
        ("tree", agent.tree()),
        ("log", agent.log()),
        ("sql", agent.sql("SELECT * FROM runs").rows),
    ):
        text = json.dumps(
            [r.to_dict() if hasattr(r, "to_dict") else r for r in out]
            if isinstance(out, list)
            else out.to_dict(),
            default=str,
        )
        assert not any(end in text for end in ends), name
        assert not re.search(rf"\b{re.escape(judged_hours)}", text), name


# ---------------------------------------------------------------------------- (c) a local process, TOCTOU
def test_a_champion_ref_moved_after_verification_does_not_judge_the_run(tmp_path: Path) -> None:
    """Session.run verifies the chain and pins the workspace (act), then hands it to run_versions.
    A champion ref moved in between (a fetch or a local `git update-ref` landing at that moment) must
    change nothing: the judge phase's directory (the champion's tree outside the judge paths, where
    an eval command such as `python score.py` finds its code) is the pinned signed commit's."""
    from test_runs import make_run_repo

    from evotree.gates.runs import run_versions

    repo = make_run_repo(tmp_path / "w")
    signed = git(repo, "rev-parse", CHAMPION_REF)
    ws = Session(repo).act()  # what Session.run does first
    git(repo, "switch", "-q", "-c", "evil")
    (repo / "score_helper.py").write_text(
        "raise SystemExit('the stranger judges')\n"
    )  # in the judge's tree
    git(repo, "add", "score_helper.py")
    git(repo, "commit", "-qm", "a file for the judge's directory")
    git(repo, "update-ref", CHAMPION_REF, git(repo, "rev-parse", "HEAD"))  # the race lands here
    [record] = run_versions(ws, ["v0"])
    assert record.judge_commit == signed
    assert record.status == "succeeded", record.error


def test_a_judge_changed_in_the_ledger_after_verification_is_not_used(tmp_path: Path) -> None:
    """The same race on the ledger's judge (a fetched unsigned judge commit in meta.judge): the
    pinned workspace keeps the verified judge."""
    from test_runs import make_run_repo

    from evotree.harness.judge_store import judge_in_force

    repo = make_run_repo(tmp_path / "w")
    ws = Session(repo).act()
    verified = judge_in_force(ws)
    assert verified
    other = git(repo, "rev-parse", "HEAD")

    def swap(txn: LedgerTxn) -> Event:
        txn.meta["judge"] = {"commit": other}
        return Event(kind=EventKind.VERSION_STATUS.value, version=None, actor="mallory", data={})

    Workspace.open(repo).ledger.transact(swap, actor=ws.git.identity())
    assert judge_in_force(ws) == verified
    with pytest.raises(
        EvotreeError, match="not backed"
    ):  # and the next verb refuses the unsigned judge
        Session(repo).act()


# ---------------------------------------------------------------------------- attacks that fail (kept as tests)
def test_a_champion_move_under_a_harmless_event_kind_is_not_masked_by_the_trust_cache(
    tmp_path: Path,
) -> None:
    """The cache skips the walk after events whose kind cannot change the chain; an event of such a
    kind (`finding`) that still moves meta.champion, with the champion ref, is refused all the same."""
    from evotree.core.versions import create_version
    from evotree.gates.trust import in_force

    repo = make_repo(tmp_path / "ws")
    init_workspace(repo)
    in_force(Workspace.open(repo))  # the cache is written
    ws = Workspace.open(repo)
    record = create_version(ws, hypothesis="mine")
    commit_file(repo / record.worktree, "evotree.toml", '[sandbox]\nmode = "off"\n', "no sandbox")
    tip = git(repo / record.worktree, "rev-parse", "HEAD")

    def crown(txn: LedgerTxn) -> Event:
        txn.meta["champion"] = record.id
        return Event(kind=EventKind.FINDING.value, version=record.id, actor="mallory", data={})

    ws.ledger.transact(crown, actor=ws.git.identity())
    git(repo, "update-ref", CHAMPION_REF, tip)
    with pytest.raises(EvotreeError, match="not backed"):
        in_force(Workspace.open(repo))
    # a trust cache whose recorded key is the old one is not reused either
    cache = json.loads((repo / ".evotree" / "cache" / "trust.json").read_text())
    assert cache["champion_ref"] != tip


def test_a_signers_step_that_smuggles_another_file_is_refused(tmp_path: Path) -> None:
    """The signers step signed by the new key (valid signature) whose commit also turns the sandbox
    off: verify reports it, acting verbs refuse."""
    from evotree.gates.bootstrap import record_signers
    from evotree.gates.policy import policy_at
    from evotree.gates.signoff import approver_for
    from evotree.gates.verify import trusted_policy

    repo = make_repo(tmp_path / "ws")
    Cli(repo).json("init")
    key = _key(tmp_path, "mallory@example.com")
    ws = Workspace.open(repo)
    policy = trusted_policy(ws)
    line = f"mallory@example.com {' '.join(Path(f'{key}.pub').read_text().split()[:2])}\n"
    side = tmp_path / "side"
    git(repo, "worktree", "add", "--quiet", "--detach", str(side), policy.commit)
    (side / policy.allowed_signers_path).parent.mkdir(parents=True, exist_ok=True)
    (side / policy.allowed_signers_path).write_text(line)
    (side / "evotree.toml").write_text('[sandbox]\nmode = "off"\n')
    git(side, "add", "-A")
    git(side, "commit", "-qm", "signers")
    commit = git(side, "rev-parse", "HEAD")
    new_policy = policy_at(ws, policy.champion, commit)
    record_signers(ws, policy, new_policy, approver_for(new_policy, key, None))
    report = json.loads(Cli(repo)("verify", "--json", code=33).stdout)
    assert any(
        p["kind"] == "signers_added" and "evotree.toml" in p["message"] for p in report["problems"]
    )
    assert Cli(repo).json("run", "v0", code=33)["error"]["code"] == "untrusted_state"


def test_a_fetched_usage_claim_does_not_spend_this_workspace_s_budget(tmp_path: Path) -> None:
    """A fetched fast-forward set the ledger's meta.usage past the tree's budget (with an unsealed
    spend.recorded-kind event) and every run here was refused: budgets now decide from usage
    recomputed from the events this workspace trusts."""
    from test_runs import make_run_repo

    repo = make_run_repo(tmp_path / "ws", budget="tree_max_episodes = 1000")
    s = with_stranger(repo, tmp_path)
    ws = Workspace.open(s["stranger"])

    def exhaust(txn: LedgerTxn) -> Event:
        txn.meta["usage"] = {**(txn.meta.get("usage") or {}), "episodes": 10**9}
        return Event(
            kind=EventKind.SPEND_RECORDED.value,
            version=None,
            actor="Mallory <mallory@example.com>",
            data={"usd": 0.0, "note": "nothing to see"},
        )

    ws.ledger.transact(exhaust, actor=ws.git.identity())
    _push_and_fetch(s)
    [record] = Session(repo).run(["v0"])
    assert record.status == "succeeded", record.error
    from evotree.harness.money import budget_status

    status = budget_status(Workspace.open(repo))
    assert status.charged["episodes"] == record.usage["episodes"] < 1000  # the claim: nothing
    assert any(
        item["event"] == "spend.recorded" and "sealed" in item["why"] for item in status.not_counted
    )


def _budgeted_pair(tmp_path: Path, budget: str) -> dict[str, Path]:
    from test_runs import make_run_repo

    repo = make_run_repo(tmp_path / "ws", budget=budget)
    return with_stranger(repo, tmp_path)


@pytest.mark.heavy
def test_real_usage_still_stops_runs_at_the_budget(tmp_path: Path) -> None:
    """The converse: what this workspace's own runs used is counted, and the run that would cross
    the tree's run budget is refused, although meta.usage was wiped by a fetched fast-forward."""
    from evotree.harness.budget import BudgetExceeded, trusted_usage

    s = _budgeted_pair(tmp_path, "tree_max_episodes = 1000\nmax_runs_per_version = 2")
    session = Session(s["repo"])
    first = session.run(["v0"])[0]
    assert first.status == "succeeded", first.error
    second = session.run(["v0"])[0]
    assert second.status == "succeeded", second.error
    git(s["repo"], "push", "--quiet", "origin", *REFSPECS)
    git(s["stranger"], "fetch", "--quiet", "origin", *REFSPECS)
    ws = Workspace.open(s["stranger"])

    def wipe(txn: LedgerTxn) -> Event:  # the remote resets the caches: every version "fresh"
        txn.meta["usage"] = {}
        record = txn.require("v0")
        record.usage = {}
        txn.put(record)
        return Event(
            kind=EventKind.SPEND_RECORDED.value,
            version=None,
            actor="Mallory <mallory@example.com>",
            data={"usd": 0.0, "note": "reset"},
        )

    ws.ledger.transact(wipe, actor=ws.git.identity())
    _push_and_fetch(s)
    mine = Workspace.open(s["repo"])
    assert mine.ledger.meta()["usage"] == {}
    counted = trusted_usage(mine)
    assert counted.version("v0")["runs"] == 2
    assert counted.tree["episodes"] == first.usage["episodes"] + second.usage["episodes"]
    with pytest.raises(BudgetExceeded) as refused:
        session.run(["v0"])
    assert refused.value.details["budget"] == "max_runs_per_version"


@pytest.mark.heavy
def test_a_replayed_run_or_spend_counts_once_and_a_forged_run_not_at_all(tmp_path: Path) -> None:
    """A remote copies this workspace's own run.finished (its provenance still matches: the MAC
    does not cover usage) with usage inflated, replays a sealed spend.recorded, and adds a run of
    its own: none of it spends this workspace's budget; the real run and spend count once."""
    from evotree.harness.budget import trusted_usage
    from evotree.harness.money import budget_status, record_spend

    s = _budgeted_pair(tmp_path, "tree_max_usd = 100")
    [real] = Session(s["repo"]).run(["v0"])
    assert real.status == "succeeded", real.error
    record_spend(Workspace.open(s["repo"]), 2.5, "api: session 1")
    git(s["repo"], "push", "--quiet", "origin", *REFSPECS)
    git(s["stranger"], "fetch", "--quiet", "origin", *REFSPECS)
    ws = Workspace.open(s["stranger"])
    events = [e.event for e in ws.ledger.entries()]
    finished = next(e for e in events if e.kind == EventKind.RUN_FINISHED.value)
    spent = next(e for e in events if e.kind == EventKind.SPEND_RECORDED.value)

    def replay(event: Event, **changes: Any) -> None:
        def change(txn: LedgerTxn) -> Event:
            return Event(
                kind=event.kind,
                version=event.version,
                actor=event.actor,
                at=event.at,
                data={**event.data, **changes},
            )

        ws.ledger.transact(change, actor=ws.git.identity())

    replay(finished, usage={**finished.data["usage"], "episodes": 10**9, "usd": 99.0})
    replay(spent)
    replay(spent, usd=90.0)  # the seal no longer matches
    replay(finished, run_id="r-forged", usage={**finished.data["usage"], "usd": 50.0})
    _push_and_fetch(s)
    mine = Workspace.open(s["repo"])
    counted = trusted_usage(mine)
    assert counted.tree["runs"] == 1
    assert counted.tree["episodes"] == real.usage["episodes"]
    assert counted.tree["agent_usd"] == 2.5
    assert counted.tree["usd"] == round(real.usage["usd"] + 2.5, 9)
    whys = [item["why"] for item in counted.not_counted]
    assert len(whys) == 4, whys
    assert any("second run.finished" in w for w in whys)
    assert any("copy of a spend" in w for w in whys)
    status = budget_status(mine)
    assert status.not_counted_total == 4 and not status.spent
    assert [row["counted"] for row in status.spend] == [False, False, True]


def test_progress_shows_no_step_or_metric_of_the_judge_phase_while_hidden() -> None:
    """A judge signal whose name names no split (the gym judge's `replay_mismatches`, or any judge's
    `mean_return`) passed redaction and reached the face as a progress metric."""
    from evotree.verbs import _safe_progress

    seen: list[tuple[str, dict[str, Any]]] = []
    hidden = _safe_progress(lambda _r, e, i: seen.append((e, i)), True)
    for event, info in (
        ("metric", {"phase": "eval", "step": 0, "metric": "replay_mismatches", "value": 0.0}),
        ("metric", {"phase": "eval", "step": 3, "metric": "mean_return", "value": 187.0}),
        ("step", {"phase": "eval", "step": 187}),
    ):
        hidden("r", event, info)
    assert seen == []
    hidden(
        "r", "metric", {"phase": "train", "step": 1, "metric": "mean_return", "value": 9.0}
    )  # the agent's own
    hidden(
        "r", "phase", {"phase": "eval", "pid": 1}
    )  # that the judge started: shown (its timing is the residual)
    assert [e for e, _ in seen] == ["metric", "phase"]
    shown: list[Any] = []
    _safe_progress(lambda _r, e, i: shown.append(i), False)(
        "r", "metric", {"phase": "eval", "metric": "m"}
    )
    assert shown  # not hidden: everything is shown


def test_the_trust_cache_key_names_the_ledger_s_real_meta_keys() -> None:
    """The cache key listed meta "harness", a key the ledger never writes (it is "harness_active"):
    every key it names must be one the ledger's typed meta has."""
    from evotree.core.ledger import LedgerMeta
    from evotree.gates.trust import _meta_key

    named = set(json.loads(_meta_key({})))
    assert named <= set(LedgerMeta.__annotations__), named - set(LedgerMeta.__annotations__)
    assert "harness_active" in named


@pytest.mark.heavy
def test_reservations_a_remote_plants_do_not_block_runs(tmp_path: Path) -> None:
    """A remote fast-forwards the ledger with reservations of its own in ``meta.reservations``
    (unstarted and "started" ones, on its host or claiming this one, one of the finalize account,
    malformed ones), enough to fill ``max_runs_per_version`` and the tree's budget many times:
    ``evotree run`` here still runs, ``budget`` shows nothing reserved, and a reservation this
    workspace makes still counts."""
    import socket

    from evotree.core.proc import process_owner
    from evotree.harness.money import budget_status
    from evotree.harness.reservations import counted_reservations, live_reservations

    s = _budgeted_pair(tmp_path, "tree_max_usd = 100\nmax_runs_per_version = 2")
    ws = Workspace.open(s["stranger"])
    here = process_owner()  # the stranger knows this host's name, not its boot id or processes
    limits = {"wall_seconds": 3.6e9, "max_steps": 10**9, "max_episodes": 10**9}

    def plant(txn: LedgerTxn) -> Event:
        held = dict(txn.meta.get("reservations") or {})
        for i in range(6):
            owner = {
                "pid": 1,
                "pid_start": 1,
                "pid_ns": "pid:[4026531836]",
                "host": "mallory-box",
                "boot_id": "b" * 36,
                "at": here["at"],
            }
            if i % 2:  # claims this host: a guessed boot id, its own pid
                owner = {**owner, "host": socket.gethostname(), "pid": 1 + i}
            held[f"v0-s{i}-planted"] = {
                "version": "v0",
                "seed": i,
                "commit": "0" * 40,
                "at": here["at"],
                "owner": owner,
                "limits": limits,
                "gpus": 8.0,
                "cpus": 64.0,
                "usd_per_hour": 1e6,
                "account": "finalize" if i == 5 else "version",
                "started": here["at"] if i >= 3 else None,
                "seal": "hmac-sha256:" + "0" * 64,
            }
        held["junk"] = "not a reservation"
        txn.meta["reservations"] = held
        return Event(
            kind=EventKind.SPEND_RECORDED.value,
            version=None,
            actor="Mallory <mallory@example.com>",
            data={"usd": 0.0, "note": "hold"},
        )

    ws.ledger.transact(plant, actor=ws.git.identity())
    _push_and_fetch(s)
    mine = Workspace.open(s["repo"])
    assert len(live_reservations(mine.ledger.meta())) >= 3  # the planted book is there
    assert counted_reservations(mine, mine.ledger.meta()) == {}
    status = budget_status(mine)
    assert status.reserved["runs"] == 0 and status.reserved["usd"] == 0
    ran = Cli(s["repo"]).json("run", "v0")
    records = ran if isinstance(ran, list) else ran.get("runs", [ran])
    assert records and all(r["status"] == "succeeded" for r in records), records
    second = Session(s["repo"]).run(["v0"])[0]
    assert second.status == "succeeded", second.error


def test_a_reservation_this_workspace_makes_counts_and_an_edited_copy_does_not(
    tmp_path: Path,
) -> None:
    """The converse: a reservation planned here is sealed with the local key and counts; a sealed
    entry counts here but not in another workspace, and not once its limits are changed (as a
    remote would) or its seal is copied to another run."""
    from evotree.harness.planning import plan_runs
    from evotree.harness.reservations import counted_reservations, reservation_seal
    from test_runs import make_run_repo

    repo = make_run_repo(tmp_path / "ws", budget="max_runs_per_version = 5")
    ws = Workspace.open(repo)
    [plan] = plan_runs(ws, ["v0"], authorize=lambda _ws, _per: None, reserve=True)
    meta = ws.ledger.meta()
    assert list(counted_reservations(ws, meta)) == [plan.run_id]
    assert meta["reservations"][plan.run_id]["seal"]
    # an owner this host cannot judge (another machine): only the seal can make it count
    entry = {**meta["reservations"][plan.run_id], "owner": {"pid": 7, "host": "elsewhere"}}
    entry["seal"] = reservation_seal(ws, plan.run_id, entry)
    assert list(counted_reservations(ws, {"reservations": {plan.run_id: entry}})) == [plan.run_id]
    other = Workspace.open(make_run_repo(tmp_path / "other", budget="max_runs_per_version = 5"))
    assert counted_reservations(other, {"reservations": {plan.run_id: entry}}) == {}
    edited = {**entry, "limits": {**entry["limits"], "wall_seconds": 1e12}}
    assert counted_reservations(ws, {"reservations": {plan.run_id: edited}}) == {}
    assert counted_reservations(ws, {"reservations": {"v0-other": entry}}) == {}


def test_a_remote_s_cached_usage_does_not_fail_the_budget_gate(tmp_path: Path) -> None:
    """A remote raises a version's cached ``usage`` in the ledger (999 runs, 1e9 USD) and
    fast-forwards: the budget gate here decides from trusted usage only and still passes."""
    from evotree.core.versions import create_version

    s = _budgeted_pair(tmp_path, "max_runs_per_version = 4\nmax_usd = 10")
    mine = Workspace.open(s["repo"])
    v1 = create_version(mine, hypothesis="better", parent="champion").id
    git(s["repo"], "push", "--quiet", "origin", *REFSPECS)
    git(s["stranger"], "fetch", "--quiet", "origin", *REFSPECS)
    ws = Workspace.open(s["stranger"])

    def inflate(txn: LedgerTxn) -> Event:
        record = txn.require(v1)
        record.usage = {"runs": 999, "usd": 1e9, "episodes": 10**9, "wall_hours": 1e6}
        txn.put(record)
        return Event(
            kind=EventKind.SPEND_RECORDED.value,
            version=None,
            actor="Mallory <mallory@example.com>",
            data={"usd": 0.0, "note": "inflate"},
        )

    ws.ledger.transact(inflate, actor=ws.git.identity())
    git(s["stranger"], "push", "--quiet", "origin", *REFSPECS)
    git(s["repo"], "fetch", "--quiet", "origin", REFSPECS[0])  # v1's branch is checked out here
    assert Workspace.open(s["repo"]).ledger.snapshot().version(v1).usage["runs"] == 999
    report = Cli(s["repo"]).json("gates", v1)
    budget = next(g for g in report["gates"] if g["name"] == "budget")
    assert budget["status"] == "pass", budget
    assert budget["numbers"]["version_usage"]["runs"] == 0


def test_malformed_reservations_count_for_nothing_and_are_released(tmp_path: Path) -> None:
    """Entries of a fetched reservation book that are not reservations at all (a string, a
    number) neither count nor crash the release of dead reservations: they are given back."""
    from evotree.harness.reservations import counted_reservations, release_dead_reservations
    from test_runs import make_run_repo

    ws = Workspace.open(make_run_repo(tmp_path / "ws"))

    def plant(txn: LedgerTxn) -> Event:
        txn.meta["reservations"] = {"junk": "x", "n": 5}
        return Event(
            kind=EventKind.SPEND_RECORDED.value,
            version=None,
            actor="Mallory <mallory@example.com>",
            data={"usd": 0.0, "note": "junk"},
        )

    ws.ledger.transact(plant, actor=ws.git.identity())
    assert counted_reservations(ws, ws.ledger.meta()) == {}
    assert sorted(release_dead_reservations(ws)) == ["junk", "n"]
    assert ws.ledger.meta().get("reservations") == {}
