"""``evotree init --protocol evopolicygym --env ID``: a gym workspace that follows EvoPolicyGym v0.1.0.

Written (never overwriting an existing file):

* ``task.md``: the environment's task description (EvoPolicyGym's ``task.md``;
  :mod:`evotree.domains.gym.epg_tasks`);
* ``policy.py``: a baseline with EvoPolicyGym's contract (``Policy(obs_space, action_space,
  env_meta)``, ``reset(episode_index)``, ``act(obs)`` on JSON observations);
* ``gym.toml``: ``protocol = "evopolicygym"``, the one environment, 8 episodes per submit (run),
  instances of the fixed train pool of 64 (:func:`evotree.domains.gym.epg.train_pool`), never seeds;
* ``judge/gym.toml`` (hidden): ``protocol = "evopolicygym"``, a validation pool of 64 and a held-out
  pool of 256 seeds (EvoPolicyGym's sizes), drawn at random in the hidden range;
* ``judge/references.json`` (hidden): EvoPolicyGym's static anchors where it has them, otherwise
  the random policy's and evotree's reference policy's mean return on the first
  :data:`REFERENCE_EPISODES` validation seeds, with their provenance;
* ``evotree.toml``: the gym template with EvoPolicyGym's budget: 128 episodes for the whole run
  (``tree_max_episodes = 128``: every version's submits share it), none per version.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

from evotree.core.errors import EvotreeError
from evotree.domains.gym.templates import render_judge_toml
from evotree.core.config_template import render_template
from evotree.domains import write_if_absent
from evotree.domains.gym import JUDGE_FILE
from evotree.domains.gym import POLICY_FILE
from evotree.domains.gym import REFERENCES_FILE
from evotree.domains.gym import TRAIN_FILE
from evotree.domains.gym.catalog import GymMissing
from evotree.domains.gym.catalog import require_gymnasium
from evotree.domains.gym.catalog import unavailable_reason
from evotree.domains.gym.experts import EXPERTS
from evotree.domains.gym.scoring import compute_references
from evotree.domains.gym.settings import SettingsError
from evotree.domains.gym.settings import load_judge_settings
from evotree.domains.gym.epg_tasks import TASK_FILE
from evotree.domains.gym.epg_tasks import render as render_task
from evotree.domains.gym.templates import draw_hidden_pools
from evotree.domains.gym import refuse_ignored_judge
from evotree.domains.gym import materialize

__all__ = [
    "materialize_evopolicygym",
    "init_template",
    "POLICY_PY",
    "REFERENCE_EPISODES",
    "BUDGET_EPISODES",
]

#: EvoPolicyGym's episode budget of one run, over all its submits.
BUDGET_EPISODES = 128
VALIDATION_EPISODES = 64
HELDOUT_EPISODES = 256
#: Validation seeds the measured anchors are played on (EvoPolicyGym measures on its held-out 256;
#: fewer here so that init stays quick on two cores; the entry records how many).
REFERENCE_EPISODES = 16

POLICY_PY = '''\
"""v0 policy in EvoPolicyGym's contract (evotree init --protocol evopolicygym).

* ``Policy(obs_space, action_space, env_meta)`` is built once per submit (a run): the spaces are
  compact JSON schemas ({"type": "Box", "shape": [...], "low": ..., "high": ...},
  {"type": "Discrete", "n": ...}, {"type": "Dict", "spaces": {...}}, ...);
* ``reset(episode_index)`` starts an episode (the index within the submit, never its seed);
* ``act(obs)`` gets the observation as JSON data (lists, dicts) and returns an action; one outside
  the action space is coerced into it and flagged as invalid in the feedback.

An exception in reset() or act(), or in building the policy, makes the submit fail: its episodes
are charged and it is never selected. Per-step trajectories of every train episode are in the
run's feedback (evidence/train/feedback/).
"""


class Policy:
    def __init__(self, obs_space, action_space, env_meta):
        self.action_space = action_space
        self.env = env_meta.get("env")

    def reset(self, episode_index):
        self.t = 0

    def act(self, obs):
        self.t += 1
        return _neutral(self.action_space)


def _neutral(space):
    """The middle of a Box, the first value of a Discrete: a do-little baseline to improve on."""
    kind = space.get("type")
    if kind == "Discrete":
        return space.get("start", 0)
    if kind == "Box":
        low, high, shape = space.get("low", -1.0), space.get("high", 1.0), space.get("shape", [1])
        size = 1
        for dim in shape:
            size *= dim
        if isinstance(low, (int, float)) and isinstance(high, (int, float)):
            return [(low + high) / 2.0] * size if len(shape) == 1 else 0.0
        return [0.0] * size
    if kind == "Dict":
        return {key: _neutral(sub) for key, sub in space.get("spaces", {}).items()}
    if kind == "Tuple":
        return [_neutral(sub) for sub in space.get("spaces", [])]
    return 0
'''


def _judge_toml(env_id: str, pools: dict[str, dict[str, list[int]]], timeout: float) -> str:

    text = render_judge_toml([env_id], pools, timeout=timeout)
    head = (
        "# EvoPolicyGym compatibility mode: raw returns are the scores (the headline is the raw mean),\n"
        "# SPLIT/ENV/final_score is clip((mean - random) / (expert - random), 0, 1.2) * 100, and a\n"
        "# policy that cannot be built voids the run. Workers: 1 (one Policy plays the pool in order).\n"
    )
    return head + text.replace("[judge]\n", '[judge]\nprotocol = "evopolicygym"\n', 1)


def _gym_toml(env_id: str, episodes: int, timeout: float) -> str:
    return (
        "# Train feedback (EvoPolicyGym compatibility mode): one run is one submit of episodes_per_env\n"
        "# episodes; each is charged to the run budget of 128 episodes ([budget] tree_max_episodes in\n"
        "# evotree.toml), failed ones too. Per-step trajectories: the run's evidence/train/feedback/.\n"
        "# The protocol is also fixed in the judge's own configuration: changing it here changes only\n"
        "# how your train episodes are played.\n"
        "[train]\n"
        'protocol = "evopolicygym"\n'
        f'envs = ["{env_id}"]\n'
        f"episodes_per_env = {episodes}\n"
        "# The train pool: instances 0 to 63 of a fixed pool (EvoPolicyGym's), the same episode every time an id\n"
        "# is played. Name the ones a run plays (repeats allowed; episodes_per_env then follows):\n"
        f"#   instances = {list(range(episodes))}\n"
        f"# Without them, run seed s plays ids s*{episodes} .. s*{episodes}+{episodes - 1} (modulo 64). Seeds are never named.\n"
        f"episode_timeout_seconds = {timeout:g}\n"
        "workers = 1\n"
    )


def _evotree_toml() -> str:

    text = render_template("gym")
    text, n1 = re.subn(r"(?m)^max_episodes = \d+$", "max_episodes = 0", text)
    text, n2 = re.subn(
        r"(?m)^tree_max_episodes = \d+$", f"tree_max_episodes = {BUDGET_EPISODES}", text
    )
    if n1 != 1 or n2 != 1:  # the template changed shape: say so rather than write a wrong budget
        raise EvotreeError(
            "cannot set EvoPolicyGym's budget in the evotree.toml template",
            fix="set [budget] max_episodes = 0 and tree_max_episodes = 128 by hand",
        )
    text = text.replace(
        "[budget]\n",
        "[budget]\n# EvoPolicyGym compatibility mode: 128 episodes for the whole search, "
        "over every version's runs.\n",
        1,
    )
    # EvoPolicyGym's visibility boundary: validation and held-out hidden until `evotree finalize`
    text, n3 = re.subn(
        r"(?m)^hide_until_finalize = false$", "hide_until_finalize = true", text, count=1
    )
    if n3 != 1:
        raise EvotreeError(
            "cannot set [eval] hide_until_finalize in the evotree.toml template",
            fix="set [eval] hide_until_finalize = true by hand",
        )
    return text


def materialize_evopolicygym(
    root: Path,
    env_id: str,
    *,
    train_episodes: int = 8,
    validation_episodes: int = VALIDATION_EPISODES,
    heldout_episodes: int = HELDOUT_EPISODES,
    episode_timeout: float = 120.0,
    reference_episodes: int = REFERENCE_EPISODES,
) -> list[str]:
    """Write the compatibility-mode workspace files into ``root`` (never overwriting); the paths written."""

    root = Path(root)

    refuse_ignored_judge(root)
    try:
        require_gymnasium()
    except GymMissing as exc:
        raise EvotreeError(str(exc), fix='pip install "evotree[gym]"') from None
    reason = unavailable_reason(env_id)
    if reason:
        raise EvotreeError(reason, fix='pip install "evotree[gym]", or choose another --env')
    if env_id not in EXPERTS:
        raise EvotreeError(
            f"{env_id} has no references (no reference policy), so it cannot be judged",
            fix=f"choose one of: {', '.join(EXPERTS)}",
        )
    written: list[str] = []
    try:
        write_if_absent(root, "evotree.toml", _evotree_toml(), written)
        write_if_absent(root, POLICY_FILE, POLICY_PY, written)
        write_if_absent(
            root, TRAIN_FILE, _gym_toml(env_id, train_episodes, episode_timeout), written
        )
        write_if_absent(
            root, TASK_FILE, render_task(env_id, max_episode_steps=_step_limit(env_id)), written
        )
        if not (root / JUDGE_FILE).exists():
            pools = draw_hidden_pools(
                [env_id], {"validation": validation_episodes, "heldout": heldout_episodes}
            )
            write_if_absent(root, JUDGE_FILE, _judge_toml(env_id, pools, episode_timeout), written)
        if not (root / REFERENCES_FILE).exists():
            settings = load_judge_settings(root / JUDGE_FILE)
            if settings.protocol != "evopolicygym":
                raise SettingsError(
                    f'{JUDGE_FILE} exists and does not say protocol = "evopolicygym"'
                )
            seeds = settings.seeds("validation", env_id)[:reference_episodes]
            if not seeds:
                raise SettingsError(f"{JUDGE_FILE} has no validation seeds for {env_id}")
            refs = compute_references({env_id: seeds})
            refs.meta["protocol"] = "evopolicygym"
            write_if_absent(root, REFERENCES_FILE, refs.to_json(), written)
    except (SettingsError, RuntimeError) as exc:
        _undo(root, written)
        raise EvotreeError(
            f"cannot write the EvoPolicyGym workspace: {exc}",
            fix="check judge/gym.toml, or choose another --env",
        ) from None
    except BaseException:
        _undo(root, written)
        raise
    return written


def _step_limit(env_id: str) -> int | None:
    """The registered step limit of ``env_id`` (None when gymnasium does not say)."""
    try:
        import gymnasium

        return gymnasium.spec(env_id).max_episode_steps
    except Exception:  # noqa: BLE001 - a description without the limit is still a description
        return None


def _undo(root: Path, written: list[str]) -> None:
    for rel in written:
        (root / rel).unlink(missing_ok=True)
    judge = root / "judge"
    if judge.is_dir() and not any(judge.iterdir()):
        judge.rmdir()


def init_template(
    domain: str, protocol: str, envs: Sequence[str]
) -> tuple[str, Callable[[Path], list[str]]]:
    """(domain, template) for ``evotree init --protocol P --env ID``: what the CLI hands to init."""
    if domain not in ("gym", "custom"):
        raise EvotreeError(
            f"--protocol and --env are options of the gym domain, not of {domain}",
            fix="evotree init --domain gym --env ID (or --protocol evopolicygym --env ID)",
        )
    if protocol == "evopolicygym":
        if len(envs) != 1:
            raise EvotreeError(
                "--protocol evopolicygym needs exactly one --env (an EvoPolicyGym run has one "
                f"environment); got {len(envs)}",
                fix="evotree init --protocol evopolicygym --env Acrobot-v1",
            )
        env_id = envs[0]
        return "gym", lambda root: materialize_evopolicygym(root, env_id)
    if protocol != "evotree":
        raise EvotreeError(
            f"unknown protocol {protocol!r}", fix="--protocol evotree or evopolicygym"
        )

    chosen = list(envs)
    return "gym", lambda root: materialize(root, envs=chosen or None)
