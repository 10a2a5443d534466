"""The gym domain (policy as code, EvoPolicyGym protocol): real Gymnasium envs, real git repos, real runs."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "gymnasium", reason="the gym domain needs gymnasium: pip install 'evotree[gym]'"
)

# tens of seconds of real runs: run apart (make test-heavy; CI runs it after make test)
pytestmark = pytest.mark.heavy

from conftest import commit_file, git, make_repo  # noqa: E402

from evotree.api import init as evotree_init  # noqa: E402
from evotree.domains.gym import materialize  # noqa: E402
from evotree.domains.gym.settings import (  # noqa: E402
    HIDDEN_SEED_MIN,
    SettingsError,
    load_judge_settings,
    load_references,
    load_train_settings,
)
from evotree.core.versions import create_version  # noqa: E402
from evotree.core.workspace import Workspace  # noqa: E402
from evotree.harness.budget import BudgetExceeded  # noqa: E402
from evotree.gates.runs import run_versions  # noqa: E402
from evotree.harness.records import RunRecord  # noqa: E402


# ---------------------------------------------------------------------------- helpers
def gym_workspace(
    path: Path,
    *,
    envs: tuple[str, ...] = ("CartPole-v1",),
    train: int = 2,
    validation: int = 3,
    heldout: int = 2,
    timeout: float = 10.0,
    judge: dict[str, Any] | None = None,
    references: dict[str, tuple[float, float]] | None = None,
) -> Workspace:
    """A repo with the gym files (small pools) committed, then `init --domain gym`."""
    repo = make_repo(path)
    materialize(
        repo,
        envs=envs,
        train_episodes=train,
        validation_episodes=validation,
        heldout_episodes=heldout,
        episode_timeout=timeout,
    )
    if judge:
        toml = repo / "judge" / "gym.toml"
        text = toml.read_text()
        for key, value in judge.items():
            text = (
                "\n".join(
                    f"{key} = {value}" if line.startswith(f"{key} =") else line
                    for line in text.splitlines()
                )
                + "\n"
            )
        toml.write_text(text)
    if references:
        refs = json.loads((repo / "judge" / "references.json").read_text())
        for env_id, (low, high) in references.items():
            refs["envs"][env_id].update(random=low, expert=high)
        (repo / "judge" / "references.json").write_text(json.dumps(refs))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "gym files")
    evotree_init(repo, domain="gym")
    return Workspace.open(repo)


def judge_view(ws: Workspace) -> Path:
    """The judge in force, materialised into a fresh directory outside the repository (as a run's judge sees it)."""
    import tempfile

    from evotree.harness.judge_store import judge_in_force, materialise_judge

    target = Path(tempfile.mkdtemp(prefix="judge-view-"))
    materialise_judge(ws.git.repo, judge_in_force(ws), target)
    return target


def hidden_files_anywhere(repo: Path, worktree: Path | None = None) -> list[str]:
    """Judge files in the checkout, the branch tip or a version's worktree (there must be none)."""
    found = (
        [p.relative_to(repo).as_posix() for p in (repo / "judge").rglob("*")]
        if (repo / "judge").exists()
        else []
    )
    found += [
        p
        for p in git(repo, "ls-tree", "-r", "--name-only", "HEAD").splitlines()
        if p.startswith("judge/")
    ]
    if worktree is not None:
        found += [
            p.relative_to(worktree).as_posix()
            for p in worktree.rglob("*")
            if p.relative_to(worktree).as_posix().startswith("judge")
        ]
    return found


def version(ws: Workspace, policy: str, *, files: dict[str, str] | None = None) -> str:
    rec = create_version(ws, hypothesis="h", parent="champion")
    worktree = ws.root / rec.worktree
    for name, text in (files or {}).items():
        (worktree / name).write_text(text)
    commit_file(worktree, "policy.py", textwrap.dedent(policy), "policy")
    return rec.id


def rows(path: Path) -> list[dict[str, Any]]:
    import duckdb

    if not path.exists():
        return []
    cur = duckdb.connect().execute("SELECT * FROM read_parquet(?)", [str(path)])
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]


def run_dir(ws: Workspace, record: RunRecord) -> Path:
    return ws.root / ".evotree" / "runs" / record.run_id


def returns_of(run: Path) -> dict[str, float]:
    return {
        r["metric"]: r["value"]
        for r in rows(run / "signals.parquet")
        if r["phase"] == "eval" and r["metric"].endswith("/return")
    }


POLICY_HEADER = """\
import numpy as np
class Policy:
    def __init__(self, env_id, observation_space, action_space):
        self.space = action_space
    def reset(self):
        self.t = 0
"""


def policy(act_body: str, *, header: str = POLICY_HEADER, prelude: str = "") -> str:
    return (
        prelude
        + header
        + "    def act(self, obs):\n"
        + textwrap.indent(textwrap.dedent(act_body), "        ")
    )


# ---------------------------------------------------------------------------- init + a real run
def test_init_writes_and_commits_the_files_without_overwriting(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "policy.py").write_text("# mine\n")  # an existing file is never overwritten
    result = evotree_init(repo, domain="gym")
    assert result.config_committed
    committed = set(git(repo, "ls-tree", "-r", "--name-only", "HEAD").splitlines())
    assert {"evotree.toml", "gym.toml"} <= committed
    assert "policy.py" not in committed and (repo / "policy.py").read_text() == "# mine\n"
    assert git(repo, "status", "--porcelain", "--", "gym.toml", "judge") == ""
    # the hidden files went to the judge store: not committed on the branch, not in the checkout
    assert result.judge_files == ["judge/gym.toml", "judge/references.json"]
    assert (
        git(repo, "ls-tree", "-r", "--name-only", "refs/evotree/judge").splitlines()
        == result.judge_files
    )
    assert hidden_files_anywhere(repo) == []
    assert set(result.files) == {"evotree.toml", "gym.toml"}


def test_init_and_v0_run_end_to_end(repo: Path) -> None:
    evotree_init(repo, domain="gym")
    committed = set(git(repo, "ls-tree", "-r", "--name-only", "HEAD").splitlines())
    assert {"evotree.toml", "policy.py", "gym.toml"} <= committed
    # hidden data in no checkout: not the main one, not main's tip, not a new version's worktree
    ws = Workspace.open(repo)
    v1 = create_version(ws, hypothesis="a candidate's worktree")
    assert hidden_files_anywhere(repo, ws.root / v1.worktree) == []
    assert not [
        c
        for c in git(repo, "rev-list", "main").splitlines()
        if "judge" in git(repo, "ls-tree", "--name-only", c)
    ]  # the user's history never had it
    hidden = judge_view(ws)
    config = (repo / "evotree.toml").read_text()
    assert (
        'command = "python -P -m evotree.domains.gym.train"' in config
        and "max_episodes = 128" in config
    )
    train = load_train_settings(repo / "gym.toml")
    assert train.envs == ["CartPole-v1", "Acrobot-v1", "MountainCar-v0", "Pendulum-v1"]
    assert train.episodes == 32 and max(train.seeds()) < HIDDEN_SEED_MIN
    judge = load_judge_settings(hidden / "judge" / "gym.toml")
    refs = load_references(hidden / "judge" / "references.json")
    for env_id in judge.envs:
        low, high = refs.pair(env_id)
        assert high > low
        val, held = judge.seeds("validation", env_id), judge.seeds("heldout", env_id)
        assert len(val) == 16 and len(held) == 16 and not set(val) & set(held)
        assert min(val + held) >= HIDDEN_SEED_MIN

    (record,) = run_versions(
        ws, ["v0"], heldout=True
    )  # v0 = the baseline policy.py of the template
    assert record.status == "succeeded", record.error
    # the judge scored with the hidden data of the judge store, recorded as the run's provenance
    assert record.judge_data_commit == git(repo, "rev-parse", "refs/evotree/judge")
    run = run_dir(ws, record)
    rollouts = rows(run / "rollouts.parquet")
    assert len(rollouts) == 32 and record.usage["episodes"] == 32
    assert {r["group_id"] for r in rollouts} == set(train.envs)
    assert {r["finish_reason"] for r in rollouts} <= {"terminated", "truncated"}
    assert all(r["text"].startswith("seed=") and r["length"] > 0 for r in rollouts)
    evals = rows(run / "evals.parquet")
    assert {r["split"] for r in evals} == {"validation", "heldout"} and len(evals) == 128
    assert record.headline["metric"] == "validation/mean_score" and record.headline["n"] == 64
    assert 0.0 <= record.headline["value"] <= 1.2
    assert all(0.0 <= r["score"] <= 1.2 for r in evals)
    usage = ws.ledger.snapshot().version("v0").usage
    assert usage["episodes"] == 32

    # the visibility boundary: no hidden seed and no reference value reaches the candidate
    needles = {str(s) for split in judge.pools.values() for seeds in split.values() for s in seeds}
    needles |= {
        repr(float(v))
        for entry in refs.envs.values()
        for k, v in entry.items()
        if k in ("random", "expert") and len(repr(float(v))) >= 7
    }
    assert not (run / "candidate" / "judge").exists()
    places = [p for p in (run / "candidate").rglob("*") if p.is_file()]
    places += [p for p in (run / "evidence" / "train").rglob("*") if p.is_file()]
    places += [run / "logs" / "train.out", run / "logs" / "train.err"]
    train_rows = json.dumps([r for r in rollouts], default=str)
    train_signals = json.dumps(
        [r for r in rows(run / "signals.parquet") if r["phase"] == "train"], default=str
    )
    for place in places:
        text = place.read_text(errors="ignore")
        leaked = [n for n in needles if n in text]
        assert not leaked, (place, leaked[:3])
    for text in (train_rows, train_signals):
        assert not [n for n in needles if n in text]


# ---------------------------------------------------------------------------- determinism + score math
STOCHASTIC = policy("""\
    import random
    self.t += 1
    if np.random.rand() < 0.3 or random.random() < 0.1:
        return self.space.sample()
    return int(obs[2] + 0.5 * obs[3] > 0)
""")


def test_judge_is_deterministic_and_scores_by_the_formula(tmp_path: Path) -> None:
    ws = gym_workspace(
        tmp_path / "w",
        validation=4,
        judge={"workers": 2},
        references={"CartPole-v1": (10.0, 210.0)},
    )
    v1 = version(ws, STOCHASTIC)
    first, second = run_versions(ws, [v1], seeds=2)
    assert first.status == second.status == "succeeded", (first.error, second.error)
    a, b = returns_of(run_dir(ws, first)), returns_of(run_dir(ws, second))
    assert len(a) == 4 and a == b  # same policy, same pool: exactly the same returns
    # the same episodes played here, in-process with the policy's seeding, give the same returns
    import importlib.util

    from evotree.domains.gym.catalog import make_env
    from evotree.domains.gym.episode import play

    spec = importlib.util.spec_from_file_location(
        "det_policy", run_dir(ws, first) / "candidate" / "policy.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    seeds = load_judge_settings(judge_view(ws) / "judge" / "gym.toml").seeds(
        "validation", "CartPole-v1"
    )
    env = make_env("CartPole-v1")
    local = [
        play(env, "CartPole-v1", i, s, module.Policy, isolated=True).ret
        for i, s in enumerate(seeds)
    ]
    assert [a[f"validation/CartPole-v1#{i}/return"] for i in range(4)] == local
    # normalized score = clip((R - 10) / (210 - 10), 0, 1.2), per episode; headline = the mean
    expected = [min(1.2, max(0.0, (r - 10.0) / 200.0)) for r in local]
    scores = {r["task_id"]: r["score"] for r in rows(run_dir(ws, first) / "evals.parquet")}
    assert [scores[f"CartPole-v1#{i}"] for i in range(4)] == pytest.approx(expected)
    assert first.headline["value"] == pytest.approx(sum(expected) / 4)


def test_normalized_score_math() -> None:
    from evotree.domains.gym.scoring import normalized_score

    assert normalized_score(60, 20, 100) == pytest.approx(0.5)
    assert normalized_score(20, 20, 100) == 0.0
    assert normalized_score(-5, 20, 100) == 0.0  # worse than random: clipped at 0
    assert normalized_score(100, 20, 100) == 1.0
    assert normalized_score(116, 20, 100) == pytest.approx(1.2)
    assert normalized_score(1e6, 20, 100) == 1.2  # beating the expert is capped at 1.2
    assert normalized_score(-300, -500, -100) == pytest.approx(0.5)  # negative returns (Acrobot)
    assert normalized_score(-150, -200, -100, clip_max=1.0) == pytest.approx(0.5)
    assert normalized_score(float("nan"), 0, 1) == 0.0
    with pytest.raises(ValueError, match="must be above"):
        normalized_score(1, 5, 5)


# ---------------------------------------------------------------------------- run seeds
def train_rollouts(run: Path) -> list[tuple[str, float, int, str]]:
    return sorted(
        (r["task_id"], r["reward"], r["length"], r["text"]) for r in rows(run / "rollouts.parquet")
    )


def train_signals(run: Path) -> dict[str, float]:
    return {r["metric"]: r["value"] for r in rows(run / "signals.parquet") if r["phase"] == "train"}


def test_run_seeds_play_other_train_episodes_and_the_same_seed_repeats(tmp_path: Path) -> None:
    """EVOTREE_SEED reaches the train phase: run seed s plays the train seeds first_seed + s * n + i
    (other episodes, other returns); the same seed plays exactly the same episodes again. The
    judge's hidden pools do not move: its returns are the same at every run seed."""
    ws = gym_workspace(tmp_path / "w", train=4, validation=3)
    v1 = version(ws, STOCHASTIC)
    first, second = run_versions(ws, [v1], seeds=2)
    (again,) = run_versions(ws, [v1], seeds=1)
    assert (first.seed, second.seed, again.seed) == (0, 1, 0)
    assert all(r.status == "succeeded" for r in (first, second, again)), (first.error, second.error)
    a, b, a2 = (train_rollouts(run_dir(ws, r)) for r in (first, second, again))
    seeds_of = [
        sorted(int(text.split()[0].removeprefix("seed=")) for *_, text in x) for x in (a, b)
    ]
    assert seeds_of == [[0, 1, 2, 3], [4, 5, 6, 7]]  # first_seed = 0, 4 episodes per env
    assert [r[1] for r in a] != [r[1] for r in b]  # other episodes, other returns
    assert a == a2  # reproducible: the same seed gives the same episodes, returns and trajectories
    sa, sb = train_signals(run_dir(ws, first)), train_signals(run_dir(ws, second))
    assert (sa["seed/run"], sa["seed/first_episode"], sb["seed/run"], sb["seed/first_episode"]) == (
        0,
        0,
        1,
        4,
    )
    # the judge is the same at every run seed: same hidden episodes, same returns
    assert (
        returns_of(run_dir(ws, first))
        == returns_of(run_dir(ws, second))
        == returns_of(run_dir(ws, again))
    )
    # the block of a run seed, and its wrap below the judge's range
    settings = load_train_settings(ws.root / "gym.toml")
    assert settings.seeds(0) == [0, 1, 2, 3] and settings.seeds(2) == [8, 9, 10, 11]
    near_the_end = type(settings)(
        envs=["CartPole-v1"], episodes_per_env=4, first_seed=HIDDEN_SEED_MIN - 6
    )
    assert near_the_end.seeds(1) == [HIDDEN_SEED_MIN - 2, HIDDEN_SEED_MIN - 1, 0, 1]


CARTPOLE_EXPERT = policy("""\
    x, x_dot, theta, theta_dot = (float(v) for v in obs)
    return int(theta + 0.5 * theta_dot + 0.05 * x + 0.1 * x_dot > 0.0)
""")


def test_a_solved_cartpole_passes_the_signal_gate(tmp_path: Path) -> None:
    """Every train return is 500 (CartPole solved): equal returns of episodes are not dead GRPO
    groups. No dead-group finding, the real signal gate passes, and no GRPO skill is suggested."""
    from evotree.diagnostics.diagnose import diagnose
    from evotree.gates.evaluation import evaluate_gates
    from evotree.gates.analyzer_versions import active_analyzers
    from evotree.memory.suggestions import suggest  # the function, not the module

    ws = gym_workspace(tmp_path / "w", train=8, validation=3)
    v1 = version(ws, CARTPOLE_EXPERT)
    (record,) = run_versions(ws, [v1])
    assert record.status == "succeeded", record.error
    assert {r["reward"] for r in rows(run_dir(ws, record) / "rollouts.parquet")} == {500.0}
    found = diagnose(ws, v1, analyzers=active_analyzers(ws)).findings
    codes = {f["code"] for f in found}
    assert not {
        c
        for c in codes
        if c.startswith(("signal.dead_groups", "signal.all_solved", "signal.none_solved"))
    }
    assert not [f for f in found if f["severity"] == "critical"], found
    assert "behavior.gym_episodes" in codes
    report = evaluate_gates(ws, v1, run_audit=False)
    gate = next(g for g in report.gates if g.name == "signal")
    assert gate.status == "pass" and gate.numbers["critical"] == 0, gate
    from evotree.skills import list_skills

    grpo = {s.name for s in list_skills() if "gym" not in s.domains}
    assert not {s.skill for s in suggest(ws, v1).suggestions} & grpo


# ---------------------------------------------------------------------------- budget
def test_train_episodes_are_charged_until_the_budget_refuses(tmp_path: Path) -> None:
    ws = gym_workspace(tmp_path / "w", train=64)  # 64 CartPole episodes per run: two runs fill 128
    v1 = version(ws, policy("return int(obs[2] > 0)"))
    for expected in (64, 128):
        (record,) = run_versions(ws, [v1])
        assert record.status == "succeeded", record.error
        assert record.usage["episodes"] == len(rows(run_dir(ws, record) / "rollouts.parquet")) == 64
        assert ws.ledger.snapshot().version(v1).usage["episodes"] == expected
    with pytest.raises(BudgetExceeded, match="max_episodes is spent: 128 of 128"):
        run_versions(ws, [v1])


def test_invalid_policies_are_refused_and_cost_nothing(tmp_path: Path) -> None:
    ws = gym_workspace(tmp_path / "w")
    no_act = version(
        ws, "class Policy:\n    def __init__(self, env_id, o, a): pass\n    def reset(self): pass\n"
    )
    broken = version(ws, "import not_a_module_xyz\n")
    no_class = version(ws, "def act(obs):\n    return 0\n")
    records = run_versions(ws, [no_act, broken, no_class])
    snapshot = ws.ledger.snapshot()
    messages = {
        no_act: "has no act() method",
        broken: "ModuleNotFoundError",
        no_class: "defines no `Policy`",
    }
    for record in records:
        assert record.status == "invalid", (record.version, record.error)
        assert record.usage == {} and not snapshot.version(record.version).usage.get("episodes")
        assert "eval" not in record.phases  # the judge never ran
        assert messages[record.version] in (run_dir(ws, record) / "logs" / "train.err").read_text()


# ---------------------------------------------------------------------------- failures are feedback
CRASH = policy("""\
    self.t += 1
    if self.t == 3:
        raise RuntimeError("boom at three")
    return 0
""")
HANG = policy("""\
    while True:
        pass
""")
BAD_ACTION = policy("return 0.5  # a float for a Discrete space")
DIES = policy("""\
    import os
    os._exit(7)
""")


def test_crash_hang_invalid_action_and_dead_worker_give_clear_feedback(tmp_path: Path) -> None:
    ws = gym_workspace(tmp_path / "w", timeout=1.0, validation=2)
    names = {
        version(ws, CRASH): "crash",
        version(ws, HANG): "hang",
        version(ws, BAD_ACTION): "bad",
        version(ws, DIES): "dies",
    }
    records = run_versions(ws, list(names), jobs=2)
    expected = {
        "crash": ("error", "RuntimeError: boom at three"),
        "hang": ("timeout", "time limit"),
        "bad": (
            "invalid_action",
            "not in the action space Discrete(2): expected an integer action",
        ),
        "dies": ("error", "died during the episode (exit code 7)"),
    }
    for record in records:
        kind = names[record.version]
        assert record.status == "succeeded", (kind, record.error)  # the judge survived and scored
        run = run_dir(ws, record)
        rollouts = rows(run / "rollouts.parquet")
        assert len(rollouts) == 2 and record.usage["episodes"] == 2  # failed episodes are charged
        reason, message = expected[kind]
        for row in rollouts:
            assert row["finish_reason"] == reason, (kind, row)
            assert message in row["text"], (kind, row["text"])
        if kind == "crash":
            assert "policy.py:" in rollouts[0]["text"] and "at step 2" in rollouts[0]["text"]
        assert record.headline == {
            "metric": "validation/mean_score",
            "value": 0.0,
            "n": 2,
            "scored": 2,
        }


def test_a_worker_that_ignores_the_alarm_is_killed(tmp_path: Path) -> None:
    from evotree.domains.gym.runner import Task, run_episodes

    (tmp_path / "policy.py").write_text(
        policy("""\
        import signal, time
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        while True:
            time.sleep(0.01)
    """)
        + "\n"
    )
    tasks = [Task("CartPole-v1", 0, 0), Task("CartPole-v1", 1, 1), Task("CartPole-v1", 2, 2)]
    episodes = list(run_episodes(tmp_path, tasks, timeout=0.3, max_timeouts=2))
    assert [e.finish_reason for e in episodes] == ["timeout"] * 3
    assert "it was killed" in episodes[0].message
    assert [e.skipped for e in episodes] == [False, False, True]  # bounded: the third is not played


# ---------------------------------------------------------------------------- a policy cannot cheat the judge
TAMPER = policy(
    "return int(obs[2] > 0)",
    prelude="""\
from gymnasium.envs.classic_control import cartpole
_step = cartpole.CartPoleEnv.step
def _rich_step(self, action):
    obs, reward, terminated, truncated, info = _step(self, action)
    return obs, reward * 100.0, terminated, truncated, info
cartpole.CartPoleEnv.step = _rich_step
""",
)
FORGE = policy(
    "return int(obs[2] > 0)",
    prelude="""\
import json, os, time
_evals = os.path.join("..", "evidence", "eval", "evals.jsonl")
if os.path.isdir(os.path.dirname(_evals)):  # only in the judge phase
    with open(_evals, "a") as f:
        f.write(json.dumps({"run_id": "x", "phase": "eval", "split": "validation", "task_id": "CartPole-v1#0",
                            "sample_index": 0, "score": 1.2, "nonfinite": False, "ts": time.time()}) + "\\n")
""",
)


def test_tampering_with_the_env_or_the_evidence_does_not_pay(tmp_path: Path) -> None:
    ws = gym_workspace(tmp_path / "w", references={"CartPole-v1": (0.0, 10000.0)})
    honest, tamper, forge = (
        version(ws, policy("return int(obs[2] > 0)")),
        version(ws, TAMPER),
        version(ws, FORGE),
    )
    by_version = {r.version: r for r in run_versions(ws, [honest, tamper, forge])}
    assert by_version[honest].status == "succeeded"
    # the environment is stepped in the judge's process: patching gymnasium in the policy's process
    # changes nothing, and there is nothing to replay
    assert by_version[tamper].status == "succeeded"
    assert by_version[tamper].headline["value"] == pytest.approx(
        by_version[honest].headline["value"]
    )
    tampered = {
        r["metric"]: r["value"] for r in rows(run_dir(ws, by_version[tamper]) / "signals.parquet")
    }
    assert tampered["replay_mismatches"] == 0
    assert returns_of(run_dir(ws, by_version[tamper])) == returns_of(
        run_dir(ws, by_version[honest])
    )
    # forged eval rows: the policy runs in a nested sandbox that cannot reach the judge's evidence,
    # so nothing is forged and the run scores what the policy earned
    assert by_version[forge].status == "succeeded"
    assert by_version[forge].headline["value"] == pytest.approx(
        by_version[honest].headline["value"]
    )


def test_a_policy_that_patches_gymnasium_in_its_process_gets_the_honest_returns(
    tmp_path: Path,
) -> None:
    """The patch multiplies every reward by 100 where the environment runs; it runs in the judge."""
    from evotree.domains.gym.judge import judge_episodes
    from evotree.domains.gym.runner import Task
    from evotree.domains.gym.settings import JudgeSettings, References

    settings = JudgeSettings(envs=["CartPole-v1"], pools={})
    refs = References(envs={"CartPole-v1": {"random": 0.0, "expert": 500.0}})
    tasks = [Task("CartPole-v1", i, HIDDEN_SEED_MIN + i) for i in range(4)]
    found = {}
    for name, source in (("tamper", TAMPER), ("honest", policy("return int(obs[2] > 0)"))):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "policy.py").write_text(source)
        found[name] = sorted(
            (e.index, e.ret, e.length) for e, _ in judge_episodes(folder, tasks, settings, refs)
        )
    assert found["tamper"] == found["honest"]
    assert all(ret == length for _, ret, length in found["tamper"])  # 1 per step, never 100


# ---------------------------------------------------------------------------- units
def test_action_checks() -> None:
    import gymnasium as gym
    import numpy as np

    from evotree.domains.gym.episode import canonical_action

    discrete = gym.spaces.Discrete(3)
    assert canonical_action(discrete, 2) == (2, None)
    assert canonical_action(discrete, np.int64(1)) == (1, None)
    assert "outside [0, 3)" in canonical_action(discrete, 3)[1]
    assert "expected an integer" in canonical_action(discrete, 1.0)[1]
    assert "expected an integer" in canonical_action(discrete, True)[1]
    box = gym.spaces.Box(-2.0, 2.0, (1,), np.float32)
    action, problem = canonical_action(box, np.array([0.5]))  # float64 is accepted and cast
    assert problem is None and action.dtype == np.float32 and action.tolist() == [0.5]
    assert "expected shape (1,)" in canonical_action(box, 0.5)[1]
    assert "outside the bounds" in canonical_action(box, [3.0])[1]
    assert "non-finite" in canonical_action(box, [float("nan")])[1]


def test_settings_errors(tmp_path: Path) -> None:
    materialize(tmp_path, envs=["CartPole-v1"], validation_episodes=2, heldout_episodes=2)
    toml = tmp_path / "gym.toml"
    toml.write_text(toml.read_text().replace("first_seed = 0", f"first_seed = {HIDDEN_SEED_MIN}"))
    with pytest.raises(SettingsError, match="reserved for the judge"):
        load_train_settings(toml)
    toml.write_text("[train]\nenvs = []\n")
    with pytest.raises(SettingsError, match="non-empty list"):
        load_train_settings(toml)
    judge = tmp_path / "judge" / "gym.toml"
    settings = load_judge_settings(judge)
    seed = settings.seeds("validation", "CartPole-v1")[0]
    text = judge.read_text()
    held = settings.seeds("heldout", "CartPole-v1")[0]
    judge.write_text(text.replace(str(held), str(seed)))
    with pytest.raises(SettingsError, match="pools must be disjoint"):
        load_judge_settings(judge)


def test_train_stops_at_the_episode_limit_and_refuses_bad_gym_toml(tmp_path: Path) -> None:
    materialize(
        tmp_path, envs=["CartPole-v1"], train_episodes=5, validation_episodes=1, heldout_episodes=1
    )
    env = {
        **os.environ,
        "EVOTREE_EVIDENCE_DIR": str(tmp_path / "ev"),
        "EVOTREE_PHASE": "train",
        "EVOTREE_MAX_EPISODES": "3",
    }
    proc = subprocess.run(
        [sys.executable, "-P", "-m", "evotree.domains.gym.train"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    lines = (tmp_path / "ev" / "rollouts.jsonl").read_text().splitlines()
    assert [json.loads(line)["task_id"] for line in lines] == [
        "CartPole-v1#0",
        "CartPole-v1#1",
        "CartPole-v1#2",
    ]
    (tmp_path / "gym.toml").write_text("[train]\nenvs = ['CartPole-v1']\nepisodes = 3\n")
    proc = subprocess.run(
        [sys.executable, "-P", "-m", "evotree.domains.gym.train"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 65 and "unknown key(s) episodes" in proc.stderr


# ---------------------------------------------------------------------------- optional environments
def test_missing_optional_package_is_skipped_with_a_clear_reason(
    tmp_path: Path, monkeypatch: Any
) -> None:
    from evotree.domains.gym import catalog
    from evotree.core.errors import EvotreeError

    monkeypatch.setattr(catalog, "_REASONS", {})
    monkeypatch.setitem(sys.modules, "minigrid", None)  # `import minigrid` now fails
    reason = catalog.unavailable_reason("MiniGrid-DoorKey-5x5-v0")
    assert reason and "is skipped" in reason and "pip install minigrid" in reason
    assert catalog.unavailable_reason("CartPole-v1") is None
    with pytest.raises(EvotreeError, match="pip install minigrid"):
        materialize(tmp_path, envs=["CartPole-v1", "MiniGrid-DoorKey-5x5-v0"])
    assert not list(tmp_path.iterdir())  # nothing half-written

    # the train phase skips such an env with the reason, and trains on the others
    from evotree.domains.gym import train
    from evotree.harness import recorder

    materialize(
        tmp_path, envs=["CartPole-v1"], train_episodes=1, validation_episodes=1, heldout_episodes=1
    )
    (tmp_path / "gym.toml").write_text(
        "[train]\nenvs = ['CartPole-v1', 'MiniGrid-DoorKey-5x5-v0']\nepisodes_per_env = 1\n"
    )
    monkeypatch.setenv("EVOTREE_EVIDENCE_DIR", str(tmp_path / "ev"))
    monkeypatch.setenv("EVOTREE_PHASE", "train")
    monkeypatch.setattr(recorder, "_default", None)
    assert train.main(tmp_path) == 0
    task_ids = [
        json.loads(x)["task_id"]
        for x in (tmp_path / "ev" / "rollouts.jsonl").read_text().splitlines()
    ]
    assert task_ids == ["CartPole-v1#0"]


OPTIONAL = [
    ("LunarLander-v3", "Box2D"),
    ("MiniGrid-DoorKey-5x5-v0", "minigrid"),
    ("Reacher-v5", "mujoco"),
]


@pytest.mark.slow
@pytest.mark.parametrize("env_id,module", OPTIONAL)
def test_optional_env_runs_end_to_end_when_installed(
    tmp_path: Path, env_id: str, module: str
) -> None:
    from evotree.domains.gym.catalog import unavailable_reason

    reason = unavailable_reason(env_id)
    if reason:
        pytest.skip(reason)
    ws = gym_workspace(tmp_path / "w", envs=(env_id,), validation=3)
    refs = load_references(judge_view(ws) / "judge" / "references.json")
    low, high = refs.pair(env_id)
    assert high > low
    (record,) = run_versions(ws, ["v0"])  # v0 is the template: random actions on these envs
    assert record.status == "succeeded", record.error
    rollouts = rows(run_dir(ws, record) / "rollouts.parquet")
    assert len(rollouts) == 2 and all(
        r["finish_reason"] in ("terminated", "truncated") for r in rollouts
    )
    assert record.headline["n"] == 3 and math.isfinite(record.headline["value"])


@pytest.mark.slow
def test_experts_score_about_one_on_their_own_pool(tmp_path: Path) -> None:
    """The reference math closes: the expert, judged like a candidate, averages ~1."""
    ws = gym_workspace(tmp_path / "w", envs=("CartPole-v1", "MountainCar-v0"), validation=8)
    expert = """\
from evotree.domains.gym.experts import make_expert
class Policy:
    def __init__(self, env_id, observation_space, action_space):
        self.inner = make_expert(env_id, None)
    def reset(self):
        self.inner.reset()
    def act(self, obs):
        return self.inner.act(obs)
"""
    v1 = version(ws, expert)
    (record,) = run_versions(ws, [v1])
    assert record.status == "succeeded", record.error
    by_env: dict[str, list[float]] = {}
    for r in rows(run_dir(ws, record) / "evals.parquet"):
        by_env.setdefault(r["task_id"].split("#")[0], []).append(r["score"])
    refs = load_references(judge_view(ws) / "judge" / "references.json")
    returns = returns_of(run_dir(ws, record))
    for env_id in by_env:
        mean_return = (
            sum(v for k, v in returns.items() if k.startswith(f"validation/{env_id}#")) / 8
        )
        assert mean_return == pytest.approx(refs.pair(env_id)[1])  # exactly the expert reference


def test_maintenance_commands_add_an_env_to_the_judge(tmp_path: Path, capsys: Any) -> None:
    from evotree.domains.gym.__main__ import main

    materialize(tmp_path, envs=["CartPole-v1"], validation_episodes=2, heldout_episodes=2)
    assert main(["envs"]) == 0
    assert "MountainCar-v0" in capsys.readouterr().out
    assert (
        main(
            [
                "pools",
                "MountainCar-v0",
                "--root",
                str(tmp_path),
                "--validation",
                "3",
                "--heldout",
                "2",
            ]
        )
        == 0
    )
    settings = load_judge_settings(
        tmp_path / "judge" / "gym.toml"
    )  # still valid: pools disjoint, in range
    assert settings.envs == ["CartPole-v1", "MountainCar-v0"]
    assert len(settings.seeds("validation", "MountainCar-v0")) == 3
    assert len(settings.seeds("heldout", "MountainCar-v0")) == 2
    assert len(settings.seeds("validation", "CartPole-v1")) == 2  # existing pools kept
    assert main(["references", "--root", str(tmp_path)]) == 0
    refs = load_references(tmp_path / "judge" / "references.json")
    assert refs.pair("MountainCar-v0")[0] == -200.0 and refs.pair("MountainCar-v0")[1] > -200.0
    # hidden data is never (re)written inside a checkout: the owner works on an exported copy
    repo = make_repo(tmp_path / "checkout")
    (repo / "judge").mkdir()
    capsys.readouterr()
    assert main(["references", "--root", str(repo)]) == 2
    assert main(["pools", "MountainCar-v0", "--root", str(repo / "judge")]) == 2
    err = capsys.readouterr().err
    assert "inside the git checkout" in err and "evotree judge export DIR" in err
    assert not (repo / "judge" / "references.json").exists()
