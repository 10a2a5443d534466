"""The gym domain's judge: ``python -P -m evotree.domains.gym.judge`` in the champion's tree.

Reads the hidden ``judge/gym.toml`` and ``judge/references.json`` of the champion, loads the
candidate's ``policy.py`` from ``$EVOTREE_CANDIDATE_DIR`` in worker processes, plays the pools
of the splits in ``$EVOTREE_JUDGE_SPLITS`` (default ``validation``) and records per episode
``eval_result(split, "ENV#i", score)`` with the normalized score of :mod:`evotree.domains.gym.scoring`.
Failed episodes (error, timeout, invalid action) score 0. Signals at step 0:
``SPLIT/ENV/mean_return``, ``SPLIT/ENV/mean_score``, ``SPLIT/ENV/failed``, ``SPLIT/ENV#i/return``
and ``replay_mismatches``.

The environments, their seeds and the episode loop run in this process; the policy runs in a
process of its own (in a nested sandbox) that gets only observations and answers actions
(:mod:`evotree.domains.gym.runner`). It cannot read its episodes' seeds nor reach the
environment, so the returns are what this process's environments gave and nothing is replayed
(``replay_fraction`` in ``judge/gym.toml`` is accepted and no longer used). Afterwards the judge
checks that nobody else appended to its evidence (a policy could try to forge eval rows); if so
it exits 1 and the run fails. The signal ``replay_mismatches`` stays 0.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

# light imports only up to main()'s prestart: the policy's process starts while this one
# imports the rest (numpy, gymnasium, the settings, the runner; launch.py)
from evotree.harness.layout import ENV_CANDIDATE_DIR, ENV_EVIDENCE_DIR, ENV_JUDGE_SPLITS
from evotree.domains.gym import JUDGE_FILE
from evotree.domains.gym import REFERENCES_FILE
from evotree.domains.gym.launch import discard, prestart

__all__ = ["main", "judge_episodes"]


def _say(message: str) -> None:
    print(f"evotree gym judge: {message}", file=sys.stderr)


def main(cwd: Path | None = None) -> int:
    cwd = Path(cwd or os.getcwd())
    candidate = os.environ.get(ENV_CANDIDATE_DIR)
    if candidate and Path(candidate).is_dir():
        prestart(Path(candidate))  # before anything of the judge's is loaded (launch.py)
    try:
        return _main(cwd, candidate)
    finally:
        discard()  # not adopted (the judge stopped before its episodes): never kept for later


def _main(cwd: Path, candidate: str | None) -> int:
    """:func:`main` after the policy's process was started."""
    from evotree.domains.gym.catalog import GymMissing, require_gymnasium
    from evotree.domains.gym.settings import (
        SPLITS,
        SettingsError,
        load_judge_settings,
        load_references,
    )

    try:
        require_gymnasium()
        settings = load_judge_settings(cwd / JUDGE_FILE)
        refs = load_references(cwd / REFERENCES_FILE)
    except (GymMissing, SettingsError) as exc:
        _say(str(exc))
        if not (cwd / JUDGE_FILE).exists() or not (cwd / REFERENCES_FILE).exists():
            _say(
                f"the judge in force has no {JUDGE_FILE} / {REFERENCES_FILE}: store them in the judge store "
                "(evotree judge export DIR; add them; evotree judge promote DIR)"
            )
        return 1
    if not candidate or not Path(candidate).is_dir():
        _say(f"${ENV_CANDIDATE_DIR} does not name the candidate's directory ({candidate!r})")
        return 1
    splits = [
        s.strip() for s in os.environ.get(ENV_JUDGE_SPLITS, "validation").split(",") if s.strip()
    ]
    for split in splits:
        if split not in SPLITS:
            _say(
                f"split {split!r} has no pool in the gym domain (it has {', '.join(SPLITS)}); not scored"
            )
    envs = _judged_envs(settings, refs)
    if envs is None:
        return 1
    if (
        settings.protocol == "evopolicygym"
    ):  # raw returns, EvoPolicyGym's normalization, void on failure
        from evotree.domains.gym.epg_phases import judge as judge_evopolicygym

        return judge_evopolicygym(
            Path(candidate),
            settings,
            refs,
            envs,
            [s for s in splits if s in SPLITS],
            _check_evidence,
        )
    return _judge_tasks(Path(candidate), settings, refs, envs, splits)


def _judged_envs(settings: Any, refs: Any) -> list[str] | None:
    """The environments judged on this machine (an unavailable one is said and skipped); None
    when one has no reference pair (the judge cannot score it)."""
    from evotree.domains.gym.catalog import unavailable_reason
    from evotree.domains.gym.settings import SettingsError

    envs = []
    for env_id in settings.envs:
        reason = unavailable_reason(env_id)
        if reason:
            _say(reason + " — it is not judged on this machine")
            continue
        try:
            refs.pair(env_id)
        except SettingsError as exc:
            _say(str(exc))
            return None
        envs.append(env_id)
    return envs


def _judge_tasks(
    candidate: Path, settings: Any, refs: Any, envs: list[str], splits: list[str]
) -> int:
    """Play every split's seeded episodes of ``envs``, record each normalized score, and print
    the per-environment means (a policy that cannot be loaded scores 0 on what remains)."""
    from evotree.domains.gym.episode import Episode
    from evotree.domains.gym.runner import InvalidPolicy, Task, WorkerBroken
    from evotree.domains.gym.settings import SPLITS
    from evotree.harness.recorder import get_recorder

    split_of: dict[tuple[str, int], str] = {}
    tasks = []
    for split in (s for s in splits if s in SPLITS):
        for env_id in envs:
            for index, seed in enumerate(settings.seeds(split, env_id)):
                tasks.append(Task(env_id, index, seed))
                split_of[(env_id, seed)] = split
    rec = get_recorder()
    stats: dict[tuple[str, str], dict[str, float]] = {}

    def record(split: str, episode: Episode, score: float) -> None:
        rec.eval_result(split, f"{episode.env_id}#{episode.index}", score)
        entry = stats.setdefault(
            (split, episode.env_id), {"n": 0, "ret": 0.0, "score": 0.0, "failed": 0}
        )
        entry["n"] += 1
        entry["ret"] += episode.ret
        entry["score"] += score
        entry["failed"] += episode.failed
        rec.signal(0, **{f"{split}/{episode.env_id}#{episode.index}/return": episode.ret})

    done: set[tuple[str, int]] = set()
    try:
        for episode, score in judge_episodes(candidate, tasks, settings, refs):
            split = split_of[(episode.env_id, episode.seed)]
            if episode.failed:
                _say(
                    f"{split} {episode.env_id}#{episode.index}: {episode.finish_reason}: {episode.message}"
                )
            record(split, episode, score)
            done.add((episode.env_id, episode.seed))
    except InvalidPolicy as exc:
        _say(f"the candidate's policy cannot be loaded, every remaining episode scores 0: {exc}")
        for task in tasks:
            if (task.env_id, task.seed) not in done:
                record(
                    split_of[(task.env_id, task.seed)],
                    Episode(env_id=task.env_id, index=task.index, seed=task.seed, message=str(exc)),
                    0.0,
                )
    except WorkerBroken as exc:
        _say(str(exc))
        return 1
    metrics: dict[str, float] = {"replay_mismatches": 0}
    for (split, env_id), entry in sorted(stats.items()):
        metrics[f"{split}/{env_id}/mean_return"] = entry["ret"] / entry["n"]
        metrics[f"{split}/{env_id}/mean_score"] = entry["score"] / entry["n"]
        metrics[f"{split}/{env_id}/failed"] = entry["failed"]
    rec.signal(0, **metrics)
    written = rec.rows["evals"]
    rec.close()
    _print_stats(stats)
    return _check_evidence(written)


def _print_stats(stats: dict[tuple[str, str], dict[str, float]]) -> None:
    """The judge's summary on stdout: one row per split and environment."""
    print(
        f"{'split':10s} {'environment':28s} {'episodes':>8s} {'failed':>6s} {'mean return':>12s} {'score':>6s}"
    )
    for (split, env_id), entry in sorted(stats.items()):
        print(
            f"{split:10s} {env_id:28s} {int(entry['n']):8d} {int(entry['failed']):6d} "
            f"{entry['ret'] / entry['n']:12.3f} {entry['score'] / entry['n']:6.3f}"
        )


def judge_episodes(
    candidate: Path, tasks: list[Any], settings: Any, refs: Any
) -> list[tuple[Any, float]]:
    """Play ``tasks`` with the candidate's policy; return (episode, normalized score) pairs.

    The environments are stepped in this process and the policy acts from its own process, so
    a return is what the environment gave: there is nothing to replay. Results come in
    completion order, once all episodes are played. Raises
    :class:`evotree.domains.gym.runner.InvalidPolicy` / ``WorkerBroken`` like ``run_episodes``.
    """
    from evotree.domains.gym.runner import run_episodes
    from evotree.domains.gym.scoring import normalized_score

    results = []
    for episode in run_episodes(
        candidate,
        tasks,
        timeout=settings.episode_timeout_seconds,
        workers=settings.workers,
        summarize=False,
        max_timeouts=settings.max_timeouts_per_env,
        lanes=settings.lanes,
    ):
        random_ret, expert_ret = refs.pair(episode.env_id)
        score = (
            0.0
            if episode.failed
            else normalized_score(episode.ret, random_ret, expert_ret, settings.clip_max)
        )
        results.append((episode, score))
    return results


def _check_evidence(written: int) -> int:
    """1 when the eval evidence holds rows this judge did not write (a forging policy)."""
    evidence = os.environ.get(ENV_EVIDENCE_DIR)
    if not evidence:
        return 0
    path = Path(evidence) / "evals.jsonl"
    try:
        with open(path, "rb") as handle:
            lines = sum(1 for line in handle if line.strip())
    except FileNotFoundError:
        lines = 0
    if lines != written:
        _say(
            f"{path} has {lines} rows but the judge wrote {written}: something else (the policy?) wrote "
            "into the judge's evidence; the run fails"
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
