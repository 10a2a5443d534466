"""The gym domain's train phase: ``python -P -m evotree.domains.gym.train`` in the candidate's tree.

Loads ``policy.py`` (in a worker process) and rolls it out on the train pool of ``gym.toml``;
records, through the run's recorder:

* one rollout row per episode: ``group_id`` = env id, ``task_id`` = ``ENV#i``, reward = the
  return, length = steps, truncated, ``finish_reason`` (terminated, truncated, error, timeout,
  invalid_action) and ``text`` = a short trajectory summary or the error;
* signals at step 0: per environment ``ENV/mean_return``, ``ENV/episodes``, ``ENV/failed``.

Seeds: at run seed ``s`` (``EVOTREE_SEED``; 0 when unset) episode ``ENV#i`` is played with the
seed ``first_seed + s * episodes_per_env + i`` (:meth:`TrainSettings.seeds`), which seeds the
environment's reset, its action space, and ``random`` / ``numpy.random`` in the worker before
the policy acts; so each run seed plays other train episodes. The signals ``seed/run`` and
``seed/first_episode`` (step 0) record them. The judge's pools do not depend on the run seed.

Every rollout row is an episode charged to the version's budget, failed ones included.
Exit codes: 0 when the episodes ran; 65 (invalid submission, charged nothing) when policy.py or
gym.toml cannot be used, before any episode ran; 1 when the domain cannot run on this machine.
Nothing here reads the judge's pools or references, and the train feedback never contains them.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# light imports only up to main()'s prestart: the policy's process starts while this one
# imports the rest (numpy, gymnasium, the settings, the runner; launch.py)
from evotree.harness.layout import INVALID_SUBMISSION_EXIT
from evotree.domains.gym import POLICY_FILE
from evotree.domains.gym import TRAIN_FILE
from evotree.domains.gym.launch import discard, prestart

__all__ = ["main", "ENV_MAX_EPISODES"]

#: Episodes the run may still record: set by the harness when a budget applies
#: (``[budget].max_episodes`` or ``tree_max_episodes``), as the run's share of what is left.
ENV_MAX_EPISODES = "EVOTREE_MAX_EPISODES"


def _fail(message: str, code: int) -> int:
    print(f"evotree gym train: {message}", file=sys.stderr)
    return code


def main(cwd: Path | None = None) -> int:
    cwd = Path(cwd or os.getcwd())
    if (cwd / POLICY_FILE).is_file():
        prestart(cwd)  # before anything of the train phase's is loaded (launch.py)
    try:
        return _main(cwd)
    finally:
        discard()  # not adopted (stopped before its episodes): never kept for later


def _main(cwd: Path) -> int:
    """:func:`main` after the policy's process was started."""
    from evotree.domains.gym.catalog import GymMissing, require_gymnasium, unavailable_reason
    from evotree.domains.gym.settings import SettingsError, load_train_settings
    from evotree.harness.seeding import derive_seed, seed_everything
    from evotree.harness.seeding import run_seed as read_run_seed

    try:
        require_gymnasium()
    except GymMissing as exc:
        return _fail(str(exc), 1)
    if not (cwd / POLICY_FILE).is_file():
        return _fail(
            f"invalid submission: {POLICY_FILE} is missing from the version's tree",
            INVALID_SUBMISSION_EXIT,
        )
    try:
        settings = load_train_settings(cwd / TRAIN_FILE)
    except SettingsError as exc:
        return _fail(f"invalid submission: {exc}", INVALID_SUBMISSION_EXIT)

    try:
        run_seed = read_run_seed()
    except ValueError as exc:  # the harness always sets a valid one
        return _fail(str(exc), 1)
    # this process draws nothing itself (each episode's worker seeds from the episode's seed);
    # seeded all the same, for anything that may come to draw here
    seed_everything(derive_seed("gym/train", run_seed), torch=False)
    seeds = settings.seeds(run_seed)

    envs = []
    for env_id in settings.envs:
        reason = unavailable_reason(env_id)
        if reason:
            print(f"evotree gym train: {reason}", file=sys.stderr)
        else:
            envs.append(env_id)
    if settings.protocol == "evopolicygym":  # EvoPolicyGym's contract, feedback and voiding
        from evotree.domains.gym.epg_phases import train as train_evopolicygym

        return train_evopolicygym(cwd, settings, envs, run_seed, seeds)
    return _train_tasks(cwd, settings, envs, run_seed, seeds)


@dataclass
class _Tally:
    """What the train episodes gave, per environment, and how many were recorded or skipped."""

    returns: dict[str, list[float]]
    failed: dict[str, int]
    skipped: int = 0
    recorded: int = 0


def _train_tasks(cwd: Path, settings: Any, envs: list[str], run_seed: int, seeds: list[int]) -> int:
    """Play the train pool (capped by the run's episode limit), record every episode as a
    rollout group, and print the per-environment summary; the phase's exit code."""
    from evotree.domains.gym.runner import InvalidPolicy, Task, WorkerBroken, run_episodes
    from evotree.harness.recorder import get_recorder

    tasks = [Task(env_id, index, seed) for env_id in envs for index, seed in enumerate(seeds)]
    limit = os.environ.get(ENV_MAX_EPISODES)
    if limit and limit.isdigit() and int(limit) < len(tasks):
        print(
            f"evotree gym train: the run may record {limit} episodes; the train pool has {len(tasks)}, "
            f"the first {limit} are played",
            file=sys.stderr,
        )
        tasks = tasks[: int(limit)]
    rec = get_recorder()
    tally = _Tally({env_id: [] for env_id in envs}, {env_id: 0 for env_id in envs})
    try:
        for episode in run_episodes(
            cwd,
            tasks,
            timeout=settings.episode_timeout_seconds,
            workers=settings.workers,
            lanes=settings.lanes,
        ):
            _record(rec, tally, episode)
    except InvalidPolicy as exc:
        if tally.recorded == 0:
            return _fail(f"invalid submission: {exc}", INVALID_SUBMISSION_EXIT)
        # it loaded before: the episodes played stay recorded (and charged); the rest cannot run
        print(
            f"evotree gym train: policy.py stopped loading after {tally.recorded} episodes: {exc}",
            file=sys.stderr,
        )
    except WorkerBroken as exc:
        return _fail(str(exc), 1)
    _summarize(rec, tally, envs, run_seed, seeds)
    return 0


def _record(rec: Any, tally: _Tally, episode: Any) -> None:
    """One played episode as a rollout group (a skipped one is only counted)."""
    if episode.skipped:
        tally.skipped += 1
        return
    rec.rollout_group(
        0,
        group_id=episode.env_id,
        task_id=f"{episode.env_id}#{episode.index}",
        rewards=[episode.ret],
        lengths=[episode.length],
        truncated=[episode.truncated],
        finish_reasons=[episode.finish_reason],
        texts=[episode.text()],
    )
    tally.recorded += 1
    tally.returns[episode.env_id].append(episode.ret)
    tally.failed[episode.env_id] += episode.failed
    if episode.failed:
        print(f"{episode.env_id}#{episode.index}: {episode.text()}", file=sys.stderr)


def _summarize(rec: Any, tally: _Tally, envs: list[str], run_seed: int, seeds: list[int]) -> None:
    """The run's metrics (per-environment means, failures, the seeds) and the summary table."""
    returns, failed = tally.returns, tally.failed
    metrics: dict[str, float] = {}
    for env_id in envs:
        if returns[env_id]:
            metrics[f"{env_id}/mean_return"] = sum(returns[env_id]) / len(returns[env_id])
        metrics[f"{env_id}/episodes"] = len(returns[env_id])
        metrics[f"{env_id}/failed"] = failed[env_id]
    metrics["episodes"] = tally.recorded
    metrics["seed/run"] = run_seed
    if seeds:
        metrics["seed/first_episode"] = seeds[0]
    if tally.skipped:
        metrics["skipped_episodes"] = tally.skipped
        print(
            f"evotree gym train: {tally.skipped} episodes were not played (repeated timeouts); they "
            "are not charged",
            file=sys.stderr,
        )
    rec.signal(0, **metrics)
    rec.close()
    print(f"{'environment':28s} {'episodes':>8s} {'failed':>6s} {'mean return':>12s}")
    for env_id in envs:
        mean = metrics.get(f"{env_id}/mean_return")
        print(
            f"{env_id:28s} {len(returns[env_id]):8d} {failed[env_id]:6d} "
            f"{'-' if mean is None else f'{mean:.3f}':>12s}"
        )


if __name__ == "__main__":
    sys.exit(main())
