"""`evotree autopilot`: proposals tried through the verbs, judged by the gates, never signed.

Fast checks of the search space (knob lines, the fixed sequence, bounds, config errors) and one
real gym workspace (CartPole, the gym domain's default policy with its constants as knobs) driven
by the CLI over patches — a neutral one, one that does not apply, a real gain — and by the library
with a second signer made in a temp folder.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import EVOTREE_BIN, git, make_repo, validate

from evotree.verbs.autopilot import (
    Knob,
    Proposal,
    ProposalError,
    apply_proposal,
    knob_proposals,
    read_knob,
    set_knob,
)
from evotree.core.errors import ConfigError
from evotree.core.proc import safe_env

# ---------------------------------------------------------------------------- the search space


def test_knob_lines_are_read_and_set_with_comments_kept() -> None:
    text = "lr = 1e-3  # the step\nother = 2\n  nested = 0.5\nlr_decay = 7\n"
    assert read_knob(text, "lr") == 1e-3 and read_knob(text, "nested") == 0.5
    out = set_knob(text, "lr", 0.00075)
    assert (
        "lr = 0.00075  # the step" in out
        and "lr_decay = 7" in out
        and out.count("\n") == text.count("\n")
    )
    assert "other = 3\n" in set_knob(text, "other", 3, integer=True)
    with pytest.raises(ProposalError, match="no line `missing = <number>`"):
        read_knob(text, "missing")


def test_the_sequence_is_fixed_by_its_seed_and_moves_stay_in_bounds(tmp_path: Path) -> None:
    knobs = [Knob("A", 0.0, 1.0, 0.25, "r.toml"), Knob("B", -2.0, 2.0, 1.0, "r.toml")]
    first, again, other = (knob_proposals(knobs, count=20, seed=s) for s in (7, 7, 8))
    assert [p.data for p in first] == [p.data for p in again] != [p.data for p in other]
    assert {p.data["knob"] for p in first} == {"A", "B"} and {
        abs(p.data["steps"]) for p in first
    } <= {1, 2}
    (tmp_path / "r.toml").write_text("A = 1.0\nB = 0\n")
    by_name = {k.name: k for k in knobs}
    # at the upper bound a move up goes down instead; every move lands on the grid, inside [low, high]
    message = apply_proposal(
        Proposal("p", "knob", "", {"knob": "A", "steps": 2}), tmp_path, by_name
    )
    assert read_knob((tmp_path / "r.toml").read_text(), "A") == 0.5 and "A 1.0 -> 0.5" in message
    apply_proposal(Proposal("q", "knob", "", {"knob": "B", "steps": -2}), tmp_path, by_name)
    assert "B = -2\n" in (tmp_path / "r.toml").read_text()  # an integer knob stays an integer
    with pytest.raises(ProposalError, match="outside"):
        apply_proposal(
            Proposal("r", "change", "", {"param": "A", "to": 1, "file": "../x"}), tmp_path, by_name
        )


def test_suggest_proposals_are_the_numeric_changes_then_the_applicable_skills(
    tmp_path: Path,
) -> None:
    from evotree.verbs.autopilot import suggest_proposals

    class Suggested:  # what Session.suggest returns, as its to_dict() gives it
        def suggest(self, version: str) -> Any:
            assert version == "v3"
            return {
                "changes": [
                    {"param": "learning_rate", "from": 0.003, "to": 0.00075},
                    {"param": "loss_type", "from": "grpo", "to": "dr_grpo"},
                ],
                "suggestions": [
                    {"skill": "StdGroupFilter", "applies": True, "applied": False},
                    {"skill": "DualLevelFilter", "applies": True, "applied": True},
                    {"skill": "OverlongPenalty", "applies": False, "applied": False},
                ],
            }

    proposals = suggest_proposals(Suggested(), "v3")  # type: ignore[arg-type]
    assert [(p.kind, p.data.get("param") or p.data.get("skill")) for p in proposals] == [
        ("change", "learning_rate"),
        ("skill", "StdGroupFilter"),
    ]
    (tmp_path / "recipe.toml").write_text("learning_rate = 3e-3\nmax_steps = 200\n")
    message = apply_proposal(proposals[0], tmp_path, {})
    assert (tmp_path / "recipe.toml").read_text() == "learning_rate = 0.00075\nmax_steps = 200\n"
    assert "learning_rate 0.003 -> 0.00075" in message


@pytest.mark.parametrize(
    "table, message",
    [
        ("[autopilot.knobs.lr]\nlow = 1\nhigh = 0\nstep = 1\n", "low < high and step > 0"),
        ("[autopilot.knobs.lr]\nlow = 0\nhigh = 1\nstep = 0\n", "low < high and step > 0"),
        (
            "[autopilot.knobs.lr]\nlow = 0\nhigh = 1\nstep = 0.1\nwhat = 2\n",
            "only low, high, step and file",
        ),
        ("[autopilot.knobs.lr]\nlow = 0\nhigh = 1\n", "finite numbers low, high and step"),
        ('[autopilot]\nrecipe = "../escape.toml"\n', "inside the repository"),
        ("[autopilot]\npatience = -1\n", "0 or more"),
    ],
)
def test_a_bad_search_space_is_refused_with_its_key(table: str, message: str) -> None:
    from evotree.core.config import parse_config

    with pytest.raises(ConfigError, match="autopilot") as info:
        parse_config(table)
    assert message in str(info.value)


# ---------------------------------------------------------------------------- a real loop


def _patch(repo: Path, edit: Any) -> str:
    """A unified diff of policy.py made by ``edit`` (its text -> new text), as `git diff` writes it."""
    path = repo / "policy.py"
    before = path.read_text()
    path.write_text(edit(before))
    diff = git(repo, "diff", "--", "policy.py")
    path.write_text(before)
    return diff


@pytest.mark.heavy
@pytest.mark.timeout(600)
def test_the_autopilot_gates_each_proposal_and_never_signs(tmp_path: Path) -> None:
    pytest.importorskip(
        "gymnasium", reason="the gym domain needs gymnasium: pip install 'evotree[gym]'"
    )
    from evotree.api import init as evotree_init
    from evotree.verbs.autopilot import run_autopilot
    from evotree.demo import GYM_POLICY, SecondSigner, gym_files
    from evotree.verbs import Session

    signer = SecondSigner()
    try:
        repo = make_repo(tmp_path / "w")
        judge = gym_files(
            repo,
            ("CartPole-v1",),
            policy=GYM_POLICY,
            validation=24,
            heldout=8,
            train=1,
            judge_seed=11,
        )
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "gym files")
        evotree_init(repo, domain="gym", signers=[signer.signer_arg])
        signer.root = repo
        patches = tmp_path / "patches"
        patches.mkdir()
        (patches / "01-comment.patch").write_text(
            _patch(
                repo,
                lambda t: t.replace(
                    "# CartPole: weight of the pole's angle",
                    "# CartPole: weight of the pole's lean",
                ),
            )
        )
        docstring = tmp_path / "docstring.patch"  # far from the knobs: applies to any champion
        docstring.write_text(
            _patch(repo, lambda t: t.replace("A parameterized policy:", "A policy with knobs:"))
        )
        (patches / "02-stale.patch").write_text(
            "--- a/policy.py\n+++ b/policy.py\n@@ -1 +1 @@\n-no such line\n+x\n"
        )
        (patches / "03-damping.patch").write_text(
            _patch(repo, lambda t: t.replace("CP_ANGVEL = 0.0", "CP_ANGVEL = 1.0"))
        )

        proc = subprocess.run(
            [
                str(EVOTREE_BIN),
                "-C",
                str(repo),
                "autopilot",
                "--patches",
                str(patches),
                "--patience",
                "5",
                "--jobs",
                "2",
                "--json",
            ],
            capture_output=True,
            text=True,
            env=safe_env(),
            timeout=500,
        )
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        data = json.loads(proc.stdout)
        validate(data, "autopilot")
        # progress with totals went to stderr, the JSON alone to stdout
        assert (
            "[0/3 proposals, 0 runs] proposal 1" in proc.stderr and "runs]   gates v" in proc.stderr
        )
        statuses = [(o["proposal"]["key"], o["status"], o["verdict"]) for o in data["outcomes"]]
        assert statuses[0][:2] == ("01-comment", "not_passed") and statuses[0][2] in (
            "futile",
            "fail",
        )
        assert statuses[1][:2] == ("02-stale", "not_applicable")
        assert statuses[2] == ("03-damping", "passed", "pass"), statuses
        gain = data["outcomes"][2]
        assert data["stopped"] == "awaiting_signoff" and data["awaiting_signoff"] == gain["version"]
        assert gain["delta"] > 0 and gain["ci"][0] > 0
        # the champion re-runs the gate asked for were run, and counted in the totals
        assert data["champion_runs"] >= 4 and data["runs"] == sum(
            o["runs"] for o in data["outcomes"]
        )
        # never signed: v0 is still the champion, no promotion tag; each proposal is a version whose
        # hypothesis names it, the neutral and stale ones abandoned as negative evidence
        verbs = Session(repo)
        ws = verbs.open()
        assert (
            ws.champion() == "v0" and not git(repo, "tag", "--list", "evotree/promoted/*").strip()
        )
        for outcome in data["outcomes"]:
            record = ws.resolve(outcome["version"])
            assert record.hypothesis.startswith(f"autopilot {outcome['proposal']['key']}:")
            assert (record.status == "abandoned") == (outcome["status"] != "passed")

        # the library with a second signer: the passed version waits; a new proposal from the
        # champion passes and the signer (not the autopilot) promotes it; then post-peak stops it
        result = run_autopilot(
            verbs,
            [
                Proposal("gain", "knob", "CP_ANGVEL +2 steps", {"knob": "CP_ANGVEL", "steps": 2}),
                Proposal("same", "patch", "docstring only", {"path": str(docstring)}),
            ],
            patience=1,
            promote=signer,
        )
        assert [o.status for o in result.outcomes] == ["passed", "not_passed"], result.to_dict()
        assert result.outcomes[0].promoted and result.stopped == "post_peak"
        assert verbs.open().champion() == result.outcomes[0].version == result.champion
        tag = git(repo, "cat-file", "-p", f"refs/tags/evotree/promoted/{result.champion}")
        assert signer.principal in tag
        # the budget rule: one run allowed, and the first look's two seeds do not fit: nothing runs
        capped = run_autopilot(
            verbs,
            [Proposal("pos", "knob", "CP_POS +1 step", {"knob": "CP_POS", "steps": 1})],
            max_runs=1,
            first_seeds=2,
            promote=signer,
        )
        assert (
            capped.stopped == "budget"
            and capped.runs == 0
            and "run budget (1)" in capped.stop_reason
        )
        assert capped.outcomes[0].status == "budget" and verbs.open().champion() == result.champion
        # one gate evaluation at most: the first look's seed runs, nothing the gate asks after it
        # (the default follows the gate's whole look schedule: its verdict ends the proposal)
        one = run_autopilot(
            verbs,
            [Proposal("pos1", "knob", "CP_POS +1 step", {"knob": "CP_POS", "steps": 1})],
            max_rounds=1,
            promote=signer,
        )
        assert one.runs == one.outcomes[0].runs == 1 and one.champion_runs == 0, one.to_dict()
        assert result.outcomes[1].verdict in ("futile", "fail"), result.to_dict()
        assert verbs.open().resolve(capped.outcomes[0].version).status == "abandoned"
        # the champion plays better on the held-out pool than v0 did (the truth no run saw)
        from evotree.demo import gym_truth

        new = git(repo, "show", f"evotree/{result.champion}:policy.py")
        assert gym_truth(new, judge) > gym_truth(GYM_POLICY, judge)
    finally:
        signer.close()


def test_autopilot_refuses_an_empty_search_space(tmp_path: Path) -> None:
    from conftest import Cli

    repo = make_repo(tmp_path / "w")
    Cli(repo)("init")
    proc = subprocess.run(
        [str(EVOTREE_BIN), "-C", str(repo), "autopilot", "--json"],
        capture_output=True,
        text=True,
        env=safe_env(),
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert "no knobs" in error["message"] and "[autopilot.knobs" in error["fix"]
