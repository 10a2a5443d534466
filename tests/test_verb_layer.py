"""One verb layer, one trust root (evotree.verbs, evotree.gates.trust), tested as the attacker would:
a stranger's remote, a second principal, a concurrent commit, and every face of every verb."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli, commit_file, git, make_repo
from fixtures_ws import (
    EVOTREE_SPECS,
    make_key,
    promote_at_terminal,
    signed_workspace,
    with_stranger,
)

from evotree.core.errors import EvotreeError
from evotree.core.ledger import Event, EventKind, LedgerTxn
from evotree.core.refs import CHAMPION_REF
from evotree.core.workspace import Workspace, init_workspace
from evotree.verbs import VERBS, Principal, Session

EVIL_CONFIG = """\
[sandbox]
mode = "off"
[train]
command = "python -c \\"open('{marker}', 'w').write('pwned')\\""
[eval]
command = "python -c \\"open('{marker}', 'w').write('pwned')\\""
"""


@pytest.fixture
def shared(tmp_path: Path) -> dict[str, Any]:
    """A workspace with a signer, pushed to a bare remote, and a stranger's clone of it."""
    key, _ = make_key(tmp_path, "key-ada", comment="ada@example.com")
    return {
        **with_stranger(signed_workspace(tmp_path / "ws", key), tmp_path),
        "marker": tmp_path / "PWNED",
    }


def _stranger_crowns_own_version(stranger: Path, marker: Path) -> None:
    """The attack of the issue: an unsigned ledger event names the stranger's version champion
    (a fast-forward), refs/evotree/champion moves to it, and its evotree.toml turns the sandbox off."""
    from evotree.core.versions import create_version

    ws = Workspace.open(stranger)
    record = create_version(ws, hypothesis="totally benign")
    commit_file(
        stranger / record.worktree, "evotree.toml", EVIL_CONFIG.format(marker=marker), "tune"
    )
    tip = git(stranger / record.worktree, "rev-parse", "HEAD")

    def crown(txn: LedgerTxn) -> Event:
        txn.meta["champion"] = record.id
        return Event(
            kind=EventKind.PROMOTION.value,
            version=record.id,
            actor="Mallory <mallory@example.com>",
            at="2026-12-04T00:00:00+00:00",
            data={"commit": tip, "previous_champion": "v0"},
        )

    ws.ledger.transact(crown, actor=ws.git.identity())
    git(stranger, "update-ref", CHAMPION_REF, tip)
    git(stranger, "push", "--quiet", "origin", *EVOTREE_SPECS)


def test_a_fetched_unsigned_champion_is_shown_and_never_acted_on(shared: dict[str, Any]) -> None:
    repo, marker = shared["repo"], shared["marker"]
    _stranger_crowns_own_version(shared["stranger"], marker)
    # the README's refspecs: both are fast-forwards, so a plain fetch takes them
    git(repo, "fetch", "--quiet", "origin", *EVOTREE_SPECS)
    cli = Cli(repo)
    # acting verbs refuse, with the problem and `evotree verify` in the fix
    for args in (
        ("run", "v0"),
        ("run", "v1"),
        ("branch", "-m", "next"),
        ("gates", "v1"),
        ("compare", "v0", "v1"),
        ("diagnose", "v1"),
        ("report", "v1", "--format", "json"),
    ):
        error = cli.json(*args, code=33)["error"]
        assert error["code"] == "untrusted_state", args
        assert "evotree verify" in error["fix"] and error["details"]["problems"], args
    agent = json.loads(cli("agent", "--as", "bot", "--json", "--", "true", code=33).stdout)
    assert (
        agent["error"]["code"] == "untrusted_state"
    )  # the agent's sandbox settings would be the stranger's
    assert not marker.exists()  # the stranger's command never ran
    # the Python API and the agent server are the same verbs
    with pytest.raises(EvotreeError, match="not backed by signed promotions"):
        import evotree.api as api

        api.run(api.open(repo), "v0")
    with pytest.raises(EvotreeError, match="not backed by signed promotions"):
        Session(repo, Principal.parse("bot")).branch("x")
    assert not marker.exists()
    # reading verbs still work and show the mismatch
    tree = cli.json("tree")
    assert tree["champion"] == "v1"
    assert {e["kind"] for e in cli.json("log")["events"]} >= {"promotion"}
    report = json.loads(cli("verify", "--json", code=33).stdout)
    assert not report["ok"] and any(
        "promotion" in p["kind"] or "champion" in p["kind"] for p in report["problems"]
    )


def test_a_config_edited_on_the_champion_ref_is_not_in_force(tmp_path: Path) -> None:
    """A local edit that moves refs/evotree/champion to a commit with another evotree.toml: refused."""
    repo = make_repo(tmp_path / "ws")
    init_workspace(repo)
    ws = Workspace.open(repo)
    git(repo, "switch", "-q", "-c", "sneaky")
    (repo / "evotree.toml").write_text(EVIL_CONFIG.format(marker=tmp_path / "PWNED"))
    git(repo, "commit", "-qam", "no sandbox")
    git(repo, "update-ref", CHAMPION_REF, git(repo, "rev-parse", "HEAD"))
    out = Cli(repo).json("run", "v0", code=33)
    assert out["error"]["code"] == "untrusted_state"
    assert not (tmp_path / "PWNED").exists()
    assert Cli(repo).json("tree")["champion"] == "v0"
    del ws


def test_the_trust_walk_is_cached_and_refreshed_by_the_ledger(tmp_path: Path) -> None:
    """Harmless events reuse the cached walk; moving the champion ref invalidates it at once."""
    from evotree.gates.trust import in_force

    repo = make_repo(tmp_path / "ws")
    init_workspace(repo)
    ws = Workspace.open(repo)
    first = in_force(ws)
    assert (repo / ".evotree" / "cache" / "trust.json").exists()
    made = Session(repo).branch("a harmless event")  # version.created: the cache stands
    assert in_force(Workspace.open(repo)) == first
    commit_file(repo / made.worktree, "recipe.toml", "learning_rate = 1\n", "a change")
    git(repo, "update-ref", CHAMPION_REF, git(repo, "rev-parse", "evotree/v1"))
    with pytest.raises(EvotreeError, match="not backed"):
        in_force(Workspace.open(repo))


# ---------------------------------------------------------------------------- principals
def test_a_principal_writes_only_its_own_versions(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "ws")
    init_workspace(repo)
    alice, mallory = (
        Session(repo, Principal.parse("alice")),
        Session(repo, Principal.parse("mallory")),
    )
    mine = alice.branch("alice's idea")
    (repo / mine.worktree / "recipe.toml").write_text("learning_rate = 3e-5\n# draft, secret\n")
    for attempt in (
        lambda: mallory.commit(mine.id, "steal the draft"),
        lambda: mallory.abandon(mine.id, reason="sabotage"),
        lambda: mallory.spend_record(1.0, "charge alice", version=mine.id),
        lambda: mallory.run([mine.id]),
    ):
        with pytest.raises(EvotreeError) as caught:
            attempt()
        assert caught.value.code == "not_your_version"
    # the draft stayed alice's: not committed by mallory, not shown to mallory
    assert git(repo, "log", "-1", "--format=%an", f"evotree/{mine.id}") != "mallory"
    assert mallory.show(mine.id).uncommitted == [] and alice.show(mine.id).uncommitted
    # branching from another's version takes its committed tip only, never the draft
    theirs = mallory.branch("build on alice", parent=mine.id)
    assert "secret" not in (repo / theirs.worktree / "recipe.toml").read_text()
    # the owner's own write works
    assert alice.commit(mine.id, "lower lr").changed


@pytest.mark.parametrize("usd", [1e300, 1.7e308, float("inf"), float("nan"), -1.0, 1_000_001.0])
def test_spend_is_finite_and_bounded(tmp_path: Path, usd: float) -> None:
    repo = make_repo(tmp_path / "ws")
    init_workspace(repo)
    bot = Session(repo, Principal.parse("bot"))
    before = Workspace.open(repo).ledger.meta()
    with pytest.raises(EvotreeError) as caught:
        bot.spend_record(usd, "huge")
    assert caught.value.code == "invalid_spend"
    assert Workspace.open(repo).ledger.meta() == before  # nothing written


def test_two_maximal_spends_keep_the_ledger_finite(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "ws")
    init_workspace(repo)
    bot = Session(repo, Principal.parse("bot"))
    for _ in range(2):
        bot.spend_record(1_000_000.0, "the largest record allowed")
    usage = Workspace.open(repo).ledger.meta()["usage"]
    assert all(math.isfinite(v) for v in usage.values() if isinstance(v, float))
    assert "Infinity" not in git(repo, "show", "refs/evotree/ledger:meta.json")


# ---------------------------------------------------------------------------- the champion moves only by promotion
def test_new_versions_branch_from_the_signed_champion_commit(tmp_path: Path) -> None:
    """A commit that lands on the champion's branch after its promotion is not part of the
    champion: new versions branch from the signed commit."""
    repo = make_repo(tmp_path / "ws")
    init_workspace(repo)
    signed = git(repo, "rev-parse", CHAMPION_REF)
    # a racing commit lands on evotree/v0 by plain git (the verb refuses commits to the champion)
    worktree = (
        repo / Workspace.open(repo).resolve("v0").worktree
        if Workspace.open(repo).resolve("v0").worktree
        else repo
    )
    git(worktree, "switch", "-q", "evotree/v0") if worktree == repo else None
    commit_file(worktree, "recipe.toml", "learning_rate = 1\n", "racing commit")
    assert git(repo, "rev-parse", "evotree/v0") != signed
    made = Session(repo).branch("from the champion")
    assert made.base_commit == signed


def test_every_verb_is_a_session_method_and_every_face_names_it() -> None:
    """The list the faces are tested against is the verb layer's own."""
    from evotree.server.verbs import Verbs

    import evotree.api as api

    for verb in VERBS:
        assert callable(getattr(Session, verb)), verb
        if verb not in ("abandon", "merge"):  # not agent tools, by design (a person's housekeeping)
            assert callable(getattr(Verbs, verb)), verb
    for name in (
        "tree",
        "show",
        "log",
        "branch",
        "merge",
        "abandon",
        "run",
        "runs",
        "compare",
        "diagnose",
        "gates",
        "query",
    ):
        assert callable(getattr(api, name)), name


@pytest.mark.heavy
def test_a_commit_that_lands_during_review_fails_the_promotion(
    tmp_path: Path, keys: dict[str, tuple[Path, str]]
) -> None:
    """An agent commits to the version while its reviewer types at `promote`: nothing is promoted,
    the tag is taken back, and the champion stays where the signed chain says."""
    from test_gates import SEEDED_JUDGE, gate_repo, new_version
    from test_runs import TRAIN

    repo = gate_repo(tmp_path / "h", keys, judge=SEEDED_JUDGE, train=TRAIN)
    v1 = new_version(repo, "skill = 0.9\nsteps = 3\n")
    runs = Session(repo).run(["v0", v1], seeds=3)
    assert all(r.status == "succeeded" for r in runs), [r.error for r in runs]
    Cli(repo)("diagnose", v1)
    assert Cli(repo).json("gates", v1)["passed"]
    reviewed = git(repo, "rev-parse", f"evotree/{v1}")
    worktree = repo / Workspace.open(repo).resolve(v1).worktree
    code, out = promote_at_terminal(
        repo,
        v1,
        keys["bob"][0],
        "--json",
        under_review=lambda: commit_file(
            worktree, "recipe.toml", "skill = 0.9\nsteps = 3\n# sneaked in\n", "racing commit"
        ),
    )
    assert code == 10 and "changed while it was under review" in out, out
    ws = Workspace.open(repo)
    assert ws.champion() == "v0" and git(repo, "rev-parse", CHAMPION_REF) != reviewed
    assert git(repo, "tag", "--list", f"evotree/promoted/{v1}") == ""
    assert Cli(repo).json("tree")["champion"] == "v0"


# ---------------------------------------------------------------------------- visibility in every face
@pytest.mark.heavy
def test_every_verb_of_every_face_obeys_the_boundary_and_renders(tmp_path: Path) -> None:
    """EvoPolicyGym mode: every verb through the CLI (text and --json), the Python API and the agent
    server either refuses (the verbs that only show hidden figures) or shows no hidden figure; no
    renderer fails on redacted data; a plain `evotree run` (text) succeeds."""
    from test_finalize_visibility import leaks
    from test_gym_finalize import GOOD, hidden_gym_workspace

    import evotree.api as api
    from evotree.server.verbs import Verbs

    ws = hidden_gym_workspace(tmp_path / "w")
    repo = ws.root
    cli = Cli(repo)
    made = Session(repo, Principal.parse("agent")).branch("balance")  # the agent's own version
    commit_file(repo / made.worktree, "policy.py", GOOD, "balance")
    # a plain run with text output (the renderer sees redacted progress events)
    out = cli("run", made.id, code=0)
    assert "Traceback" not in out.output
    [record] = Session(repo).runs(made.id)
    assert record.status == "succeeded", record.error
    v = made.id
    refused = {"compare", "gates", "report"}
    calls = {
        "tree": ((), lambda s: s.tree()),
        "show": (("show", v), lambda s: s.show(v)),
        "log": (("log",), lambda s: s.log()),
        "runs": (("runs",), lambda s: s.runs()),
        "compare": (("compare", "v0", v), lambda s: s.compare("v0", v)),
        "gates": (("gates", v), lambda s: s.gates(v)),
        "report": (("report", v, "--format", "json"), lambda s: s.report(v)),
        "diagnose": (("diagnose", v), lambda s: s.diagnose(v)),
        "suggest": (("suggest", v), lambda s: s.suggest(v)),
        "audit": (("audit", v), lambda s: s.audit(v)),
        "sql": (("sql", "SELECT * FROM evals"), lambda s: s.sql("SELECT * FROM evals")),
        "memory_search": (("memory", "search", "balance"), lambda s: s.memory_search("balance")),
    }
    for verb, (args, call) in calls.items():
        faces = {"person": Session(repo), "agent": Session(repo, Principal.parse("agent"))}
        for face, session in faces.items():
            if verb in refused:
                with pytest.raises(EvotreeError) as caught:
                    call(session)
                assert caught.value.code == "hidden_until_finalize", (verb, face)
                continue
            result = call(session)
            data = (
                result.to_dict()
                if hasattr(result, "to_dict")
                else [r.to_dict() if hasattr(r, "to_dict") else r for r in result]
                if isinstance(result, list)
                else result
            )
            assert not leaks(data), (verb, face, leaks(data))
        server = getattr(Verbs(repo, Principal.parse("agent")), verb, None)
        if server is not None and verb not in refused:
            assert not leaks(call(Verbs(repo, Principal.parse("agent")))), verb
        if not args:
            args = ("tree",)
        text = Cli(repo).runner.invoke(
            __import__("evotree.cli.main", fromlist=["cli"]).cli, ["-C", str(repo), *args]
        )
        assert text.exit_code != 1 and "Traceback" not in text.output, (verb, text.output)
        if verb in refused:
            assert text.exit_code == 10, (verb, text.output)
        as_json = Cli(repo).runner.invoke(
            __import__("evotree.cli.main", fromlist=["cli"]).cli, ["-C", str(repo), *args, "--json"]
        )
        assert as_json.exit_code != 1, (verb, as_json.output)
        if as_json.exit_code == 0:
            assert not leaks(json.loads(as_json.stdout)), (verb, leaks(json.loads(as_json.stdout)))
    # the API refuses what the other faces refuse
    for call in (
        lambda: api.compare(api.open(repo), "v0", v),
        lambda: api.gates(api.open(repo), v),
    ):
        with pytest.raises(EvotreeError, match="hides"):
            call()
    assert api.query(api.open(repo), "SELECT * FROM evals").num_rows == 0


def test_the_ledger_refuses_an_unknown_meta_key_and_non_finite_numbers(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "ws")
    init_workspace(repo)
    ws = Workspace.open(repo)
    head = git(repo, "rev-parse", "refs/evotree/ledger")
    for key, value in (("champoin", "v9"), ("usage", {"usd": float("inf")})):

        def change(txn: LedgerTxn, key: str = key, value: Any = value) -> Event:
            txn.meta[key] = value  # type: ignore[literal-required]
            return Event(kind=EventKind.VERSION_STATUS.value, version=None, actor="x", data={})

        with pytest.raises((EvotreeError, ValueError)):
            ws.ledger.transact(change, actor=ws.git.identity())
    assert git(repo, "rev-parse", "refs/evotree/ledger") == head  # nothing written


@pytest.mark.heavy
def test_a_failure_of_evotree_itself_is_never_charged(tmp_path: Path) -> None:
    """A face's progress callback that raises (the renderer bug of EvoPolicyGym mode) under the
    harness directly: the run fails as evotree's failure and costs the version nothing; through
    the verb layer the same callback cannot even fail the run."""
    from test_runs import make_run_repo

    from evotree.gates.runs import run_versions

    repo = make_run_repo(tmp_path / "w")

    def broken(run_id: str, event: str, info: dict[str, Any]) -> None:
        if event == "started":
            raise AttributeError("'NoneType' object has no attribute 'get'")

    [record] = run_versions(Workspace.open(repo), ["v0"], progress=broken)
    assert record.status == "failed" and "not charged" in " ".join(record.notes)
    usage = Workspace.open(repo).ledger.snapshot().require("v0").usage or {}
    assert not usage.get("runs") and not usage.get("wall_seconds")
    [record] = Session(repo).run(["v0"], progress=broken)
    assert record.status == "succeeded", record.error


@pytest.mark.heavy
def test_after_a_promotion_compare_names_the_comparison_that_justified_it(
    tmp_path: Path, keys: dict[str, tuple[Path, str]]
) -> None:
    from test_gates import SEEDED_JUDGE, gate_repo, new_version
    from test_runs import TRAIN

    repo = gate_repo(tmp_path / "h", keys, judge=SEEDED_JUDGE, train=TRAIN)
    v1 = new_version(repo, "skill = 0.9\nsteps = 3\n")
    Session(repo).run(["v0", v1], seeds=3)
    Cli(repo)("diagnose", v1)
    code, out = promote_at_terminal(repo, v1, keys["bob"][0], "--json")
    assert code == 0, out
    error = Cli(repo).json("compare", "v0", v1, code=22)["error"]
    assert "it was promoted on Δ +" in error["message"] and "against v0" in error["message"]
    assert error["details"]["promotion_comparison"]["p_value"] < 0.05
