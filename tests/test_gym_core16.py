"""EvoPolicyGym's Core-16 on this machine: every environment makes, trains and is judged by the gym domain.

Each environment gets a real train phase (``python -P -m evotree.domains.gym.train``, a reference
policy's policy.py) and two real judge phases (``python -P -m evotree.domains.gym.judge``): one with a
uniform random policy.py and one with evotree's reference policy. Reference policies that read the
environment's internal state (MiniGrid's full grid, Pusher's MuJoCo Jacobian) cannot be a
candidate's policy.py; they are judged in-process with the same episode loop and scoring.
"""

from __future__ import annotations

import json
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

from evotree.domains.gym.catalog import CORE16, unavailable_reason  # noqa: E402
from evotree.domains.gym.core16 import OBS_ONLY, PRIVILEGED, STATIC_REFERENCES  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

RANDOM_POLICY = """\
class Policy:
    def __init__(self, env_id, observation_space, action_space):
        self.space = action_space
    def reset(self):
        pass
    def act(self, obs):
        return self.space.sample()
"""

REFERENCE_POLICY = """\
from evotree.domains.gym import core16, experts
class Policy:
    def __init__(self, env_id, observation_space, action_space):
        self.inner = core16.OBS_ONLY[env_id]() if env_id in core16.OBS_ONLY else experts.make_expert(env_id, None)
    def reset(self):
        self.inner.reset()
    def act(self, obs):
        return self.inner.act(obs)
"""


def _phase_env(evidence: Path, phase: str, candidate: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVOTREE_")}
    env.update(EVOTREE_EVIDENCE_DIR=str(evidence), EVOTREE_PHASE=phase, EVOTREE_SEED="0")
    if candidate is not None:
        env["EVOTREE_CANDIDATE_DIR"] = str(candidate)
    return env


def _signals(evidence: Path) -> dict[str, float]:
    out: dict[str, float] = {}
    for line in (evidence / "signals.jsonl").read_text().splitlines():
        row = json.loads(line)
        out[row["metric"]] = row["value"]
    return out


def _judge(judge_dir: Path, candidate: Path, evidence: Path) -> dict[str, float]:
    proc = subprocess.run(
        [sys.executable, "-P", "-m", "evotree.domains.gym.judge"],
        cwd=judge_dir,
        env=_phase_env(evidence, "eval", candidate),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return _signals(evidence)


def _setup(tmp_path: Path, env_id: str, seeds: list[int]) -> Path:
    from evotree.domains.gym.scoring import compute_references
    from evotree.domains.gym.templates import render_judge_toml

    judge_dir = tmp_path / "judge-view"
    (judge_dir / "judge").mkdir(parents=True)
    (judge_dir / "judge" / "gym.toml").write_text(
        render_judge_toml([env_id], {"validation": {env_id: seeds}}, timeout=60.0)
    )
    (judge_dir / "judge" / "references.json").write_text(
        compute_references({env_id: seeds}).to_json()
    )
    return judge_dir


def _candidate(tmp_path: Path, name: str, text: str, env_id: str) -> Path:
    cand = tmp_path / name
    cand.mkdir()
    (cand / "policy.py").write_text(text)
    (cand / "gym.toml").write_text(
        f'[train]\nenvs = ["{env_id}"]\nepisodes_per_env = 1\nepisode_timeout_seconds = 60\n'
    )
    return cand


#: Core-16 environments whose reference policy does not reliably beat random on a drawn pool (the
#: judge then refuses to score: undefined normalization), marked xfail rather than hidden. Empty:
#: parking-v0's was one until its reference became a path-following controller.
_WEAK_REFERENCE: dict[str, str] = {}


@pytest.mark.heavy
@pytest.mark.parametrize(
    "env_id",
    [
        pytest.param(e, marks=pytest.mark.xfail(strict=False, reason=_WEAK_REFERENCE[e]))
        if e in _WEAK_REFERENCE
        else e
        for e in CORE16
    ],
)
def test_core16_env_trains_and_is_judged_with_random_and_reference(
    tmp_path: Path, env_id: str
) -> None:
    reason = unavailable_reason(env_id)
    assert reason is None, reason  # the gym extra installs every Core-16 package
    # CarRacing: 7 s an episode; roundabout: short episodes whose random returns vary a lot
    count = {"CarRacing-v3": 1, "roundabout-v0": 6}.get(env_id, 2)
    seeds = [1_000_001 + i for i in range(count)]
    judge_dir = _setup(tmp_path, env_id, seeds)
    refs = json.loads((judge_dir / "judge" / "references.json").read_text())["envs"][env_id]
    if env_id in STATIC_REFERENCES:
        assert (refs["random"], refs["expert"]) == STATIC_REFERENCES[
            env_id
        ] and "EvoPolicyGym" in refs["source"]
    else:
        assert refs["expert"] > refs["random"] and refs["source"].startswith("measured by evotree")
        # the upper anchor is at least as good as doing nothing (zero torque / the first action),
        # measured independently here on the same seeds
        from evotree.domains.gym.scoring import reference_returns

        zero = reference_returns(env_id, seeds, "zero")
        assert refs["expert"] >= sum(zero) / len(zero), (env_id, refs["expert"], zero)
        assert refs["expert_policy"] in ("reference", "zero") and set(refs["measured"]) >= {
            "random",
            "reference",
        }

    # train: one episode of the random policy, recorded as one rollout row
    random_cand = _candidate(tmp_path, "random", RANDOM_POLICY, env_id)
    proc = subprocess.run(
        [sys.executable, "-P", "-m", "evotree.domains.gym.train"],
        cwd=random_cand,
        env=_phase_env(tmp_path / "ev-train", "train"),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    rollouts = [
        json.loads(x) for x in (tmp_path / "ev-train" / "rollouts.jsonl").read_text().splitlines()
    ]
    assert [r["task_id"] for r in rollouts] == [f"{env_id}#0"]
    assert rollouts[0]["finish_reason"] in ("terminated", "truncated")

    # judge: the random policy scores about 0 and never fails
    low = _judge(judge_dir, random_cand, tmp_path / "ev-random")
    assert low[f"validation/{env_id}/failed"] == 0
    random_score = low[f"validation/{env_id}/mean_score"]

    # judge: the reference policy beats it
    if (
        env_id in PRIVILEGED
    ):  # reads the env's state: judged in-process with the same loop and scoring
        from evotree.domains.gym.scoring import normalized_score, reference_returns

        returns = reference_returns(env_id, seeds, "expert")
        ref_score = sum(normalized_score(r, refs["random"], refs["expert"]) for r in returns) / len(
            returns
        )
    else:
        ref_cand = _candidate(tmp_path, "reference", REFERENCE_POLICY, env_id)
        high = _judge(judge_dir, ref_cand, tmp_path / "ev-reference")
        assert high[f"validation/{env_id}/failed"] == 0
        ref_score = high[f"validation/{env_id}/mean_score"]
    if env_id in STATIC_REFERENCES:  # EvoPolicyGym's anchors: its expert is not evotree's reference
        assert ref_score > random_score + 0.1, (env_id, ref_score, random_score)
    else:  # the reference is the upper anchor, measured on these seeds
        assert ref_score >= 0.5 and ref_score > random_score, (env_id, ref_score, random_score)


@pytest.mark.heavy
def test_registration_does_not_depend_on_which_env_was_made_first(tmp_path: Path) -> None:
    """A fresh interpreter makes a MiniGrid, a highway-env and a Fetch id first thing: each is registered."""
    script = textwrap.dedent("""
        import sys
        from evotree.domains.gym.catalog import make_env, unavailable_reason
        for env_id in sys.argv[1:]:
            assert unavailable_reason(env_id) is None, unavailable_reason(env_id)
            make_env(env_id).reset(seed=1)
            print(env_id, "made")
    """)
    for first in (
        "MiniGrid-FourRooms-v0",
        "roundabout-v0",
        "FetchPush-v4",
        "MiniGrid-ObstructedMaze-1Q-v1",
    ):
        proc = subprocess.run(
            [sys.executable, "-P", "-c", script, first],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )
        assert proc.returncode == 0 and f"{first} made" in proc.stdout, proc.stderr[-2000:]


def test_unknown_family_ids_name_their_package_and_the_catalog_covers_core16() -> None:
    from evotree.domains.gym.catalog import CATALOG, modules_for

    assert set(CORE16) <= set(CATALOG) and len(CORE16) == 16
    assert set(CORE16) <= set(OBS_ONLY) | set(PRIVILEGED) | {"Acrobot-v1", "Reacher-v5"}
    assert "minigrid" in modules_for("MiniGrid-Empty-5x5-v0")[0]
    assert "highway_env" in modules_for("highway-fast-v0")[0]
    assert "gymnasium_robotics" in modules_for("FetchSlide-v4")[0]
    assert (
        unavailable_reason("NoSuchEnv-v9")
        == "NoSuchEnv-v9 is not a registered Gymnasium environment id"
    )


def test_carracing_policy_gets_pixels(tmp_path: Path) -> None:
    """CarRacing's observation reaches act() as the 96x96 RGB frame (uint8)."""
    from evotree.domains.gym.catalog import make_env
    from evotree.domains.gym.episode import play

    seen: list[Any] = []

    class Probe:
        def __init__(self, *_: Any) -> None:
            pass

        def reset(self) -> None:
            pass

        def act(self, obs: Any) -> Any:
            seen.append((obs.shape, str(obs.dtype)))
            if len(seen) >= 3:
                raise StopIteration("enough")
            return [0.0, 0.0, 0.0]

    env = make_env("CarRacing-v3")
    try:
        episode = play(env, "CarRacing-v3", 0, 1_000_003, Probe)
    finally:
        env.close()
    assert seen[0] == ((96, 96, 3), "uint8") and episode.finish_reason == "error"
