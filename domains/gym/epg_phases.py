"""The train and judge phases of the EvoPolicyGym compatibility mode (``protocol = "evopolicygym"``).

:mod:`evotree.domains.gym.train` and :mod:`evotree.domains.gym.judge` hand over to these when their
settings say ``protocol = "evopolicygym"``. See :mod:`evotree.domains.gym.epg` for the contract.

Train (one run = one EvoPolicyGym submit): every episode is a rollout row (charged to the
budget, failed ones too); the per-step trajectories go to ``feedback/`` in the phase's evidence
folder: ``summary.json`` (EvoPolicyGym's fields: status, returns, lengths, errors, remaining
budget), ``episodes/ep_NNN/trajectory.jsonl`` (one JSON row per step, image observations as
null) and ``error.txt`` for a failed episode; each trajectory is cut at 1 MB and all of them
together at 8 MB. A submit whose policy fails to import or build, or raises in ``reset`` /
``act`` in any episode, is not ``ok``: its episodes are recorded and charged, and the phase
exits 1, so the run fails and is never judged nor selected (EvoPolicyGym voids it). A run asked
for more episodes than the budget has left (``EVOTREE_MAX_EPISODES``) plays none
(``budget_invalid``, exit 65: charged nothing).

Judge: one ``Policy`` per split, ``reset(i)`` for the split's i-th episode; each episode's raw
return is its eval score (so the headline is the raw mean return, EvoPolicyGym's ``val_score``);
``SPLIT/ENV/final_score`` is its normalization of the mean. A policy that cannot be imported or
built makes the judge exit 1 (void), and so does an episode that times out or whose policy
process dies, hangs or breaks the protocol (EvoPolicyGym's evaluation fails there: it has no
return to count, and a return of 0 would beat a losing episode where returns are negative, e.g.
MountainCar). ``act`` errors count as they do there: the sampled action
is played and the episode ends with the return so far. As in EvoPolicyGym, the policy runs in
a process of its own and never gets a seed: the environments are stepped in the judge's
process (:mod:`evotree.domains.gym.driver`), so nothing is replayed (``replay_mismatches`` is 0).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evotree.harness.layout import ENV_EVIDENCE_DIR, ENV_MAX_EPISODES, INVALID_SUBMISSION_EXIT
from evotree.domains.gym.epg import FEEDBACK_CAP_BYTES
from evotree.domains.gym.runner import InvalidPolicy
from evotree.domains.gym.runner import Task
from evotree.domains.gym.runner import WorkerBroken
from evotree.domains.gym.runner import run_episodes
from evotree.domains.gym.episode import Episode
from evotree.harness.recorder import get_recorder
from evotree.domains.gym.epg import final_score

__all__ = ["train", "judge"]


def _say(phase: str, message: str) -> None:
    print(f"evotree gym {phase} (evopolicygym): {message}", file=sys.stderr)


def _write_feedback(root: Path, summary: dict[str, Any], episodes: list[Any]) -> None:

    root.mkdir(parents=True, exist_ok=True)
    spent = 0
    for local, episode in enumerate(episodes):
        folder = root / "episodes" / f"ep_{local:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        rows = episode.trajectory or []
        text = "".join(row + "\n" for row in rows)
        if spent + len(text) > FEEDBACK_CAP_BYTES:
            text = (
                json.dumps(
                    {
                        "truncated_feedback": f"the submit's trajectories passed {FEEDBACK_CAP_BYTES} "
                        "bytes; this one is left out"
                    }
                )
                + "\n"
            )
        spent += len(text)
        (folder / "trajectory.jsonl").write_text(text, encoding="utf-8")
        if episode.category:
            (folder / "error.txt").write_text(
                json.dumps({"category": episode.category, "message": episode.message}) + "\n",
                encoding="utf-8",
            )
    (root / "summary.json").write_text(
        json.dumps(summary, indent=1, allow_nan=False, default=str) + "\n", encoding="utf-8"
    )


def train(cwd: Path, settings: Any, envs: list[str], run_seed: int, seeds: list[int]) -> int:
    """The train phase under EvoPolicyGym's contract; the process's exit code."""

    tasks = [Task(env_id, index, seed) for env_id in envs for index, seed in enumerate(seeds)]
    limit = os.environ.get(ENV_MAX_EPISODES)
    budget = int(limit) if limit and limit.isdigit() else None
    if budget is not None and len(tasks) > budget:
        _say(
            "train",
            f"budget_invalid: this submit asks for {len(tasks)} episodes and the budget has {budget} "
            "left; nothing was played or charged (ask for fewer: gym.toml episodes_per_env)",
        )
        return INVALID_SUBMISSION_EXIT
    started = time.time()
    remaining = max(0, budget - len(tasks)) if budget is not None else 0
    meta = {"submit_index": run_seed, "n_episodes": len(tasks), "remaining_after": remaining}
    outcome = _play_submit(cwd, settings, tasks, meta)
    if isinstance(outcome, int):
        return outcome
    played, import_error = outcome
    rec = get_recorder()
    _record_rollouts(rec, played)
    summary = _submit_summary(played, envs, run_seed, len(tasks), remaining, started)
    submit_level = summary["status"] in ("import_error", "init_error")
    if submit_level:
        summary["error"] = played[0].message if played else import_error
    errors = [i for i, e in enumerate(played) if e.failed]
    evidence = os.environ.get(ENV_EVIDENCE_DIR)
    if evidence:
        _write_feedback(Path(evidence) / "feedback", summary, [] if submit_level else played)
    ok = summary["status"] == "ok"
    metrics: dict[str, float] = {
        "episodes": len(played),
        "seed/run": run_seed,
        "submit_ok": float(ok),
        "errors": len(errors) + (len(played) if submit_level else 0),
    }
    for env_id in envs:
        mine = [e for e in played if e.env_id == env_id]
        if mine and not submit_level:
            metrics[f"{env_id}/mean_return"] = sum(e.ret for e in mine) / len(mine)
        metrics[f"{env_id}/episodes"] = len(mine)
        metrics[f"{env_id}/invalid_actions"] = sum(e.invalid_actions for e in mine)
    rec.signal(0, **metrics)
    rec.close()
    print(
        json.dumps(
            {
                k: summary[k]
                for k in ("status", "n_episodes", "mean_return", "errors", "remaining_budget")
            }
        )
    )
    if not ok:
        detail = summary.get("error") or "; ".join(played[i].message for i in errors[:3])
        _say(
            "train",
            f"the submit is not ok ({summary['status']}): EvoPolicyGym voids it (charged, never "
            f"selected); {detail}",
        )
        return 1
    return 0


def _play_submit(
    cwd: Path, settings: Any, tasks: list[Task], meta: dict[str, Any]
) -> tuple[list[Episode], str] | int:
    """Play the submit's episodes in order (a timeout aborts the rest, charged); a policy that
    cannot be imported makes every requested episode a failed row. The played episodes and the
    import error, or the exit code when the worker broke."""
    played: list[Episode] = []
    import_error = ""
    try:
        for episode in run_episodes(
            cwd,
            tasks,
            timeout=settings.episode_timeout_seconds,
            workers=1,
            record_actions=False,
            summarize=False,
            max_timeouts=1,
            extra={"protocol": "evopolicygym", "meta": meta, "trajectory": True},
        ):
            # a timeout aborts the submit there (rollout_timeout): the rest come back unplayed, charged
            played.append(episode)
    except InvalidPolicy as exc:
        import_error = str(exc)
    except WorkerBroken as exc:
        _say("train", str(exc))
        return 1
    order = {(t.env_id, t.index): i for i, t in enumerate(tasks)}
    played.sort(key=lambda e: order[(e.env_id, e.index)])
    if (
        import_error
    ):  # EvoPolicyGym charges the whole submit: every requested episode is a failed row
        played = [
            Episode(
                env_id=t.env_id,
                index=t.index,
                seed=t.seed,
                message=import_error,
                category="import_error",
            )
            for t in tasks
        ]
    return played, import_error


def _record_rollouts(rec: Any, played: list[Episode]) -> None:
    """Every played episode as a rollout group (its return, or the error that voided it)."""
    for episode in played:
        text = (
            episode.message
            if episode.category
            else (
                f"return={episode.ret:.6g} steps={episode.length} {episode.finish_reason}"
                + (
                    f"; {episode.invalid_actions} invalid actions coerced"
                    if episode.invalid_actions
                    else ""
                )
            )
        )
        rec.rollout_group(
            0,
            group_id=episode.env_id,
            task_id=f"{episode.env_id}#{episode.index}",
            rewards=[episode.ret],
            lengths=[episode.length],
            truncated=[episode.truncated],
            finish_reasons=[episode.finish_reason if not episode.category else "error"],
            texts=[text[:1500]],
        )


def _submit_summary(
    played: list[Episode],
    envs: list[str],
    run_seed: int,
    n_episodes: int,
    remaining: int,
    started: float,
) -> dict[str, Any]:
    """EvoPolicyGym's submit summary: its status (import or init error, rollout timeout, rollout
    error, ok) and the returns, lengths and errors (none for a submit-level error)."""
    submit_level = next(
        (e.category for e in played if e.category in ("import_error", "init_error")), ""
    )
    errors = [i for i, e in enumerate(played) if e.failed]  # reset_error, act_error, a timeout
    timed_out = any(e.finish_reason == "timeout" for e in played)
    status = submit_level or ("rollout_timeout" if timed_out else "rollout" if errors else "ok")
    returns = [e.ret for e in played]
    return {
        "schema_version": "0.1",
        "protocol": "evopolicygym (evotree compatibility mode)",
        "submit_index": run_seed,
        "env": envs[0] if len(envs) == 1 else envs,
        "status": status,
        "n_episodes": n_episodes,
        "remaining_budget": remaining,
        "returns": returns if not submit_level else None,
        "mean_return": (sum(returns) / len(returns)) if returns and not submit_level else None,
        "min_return": min(returns) if returns and not submit_level else None,
        "max_return": max(returns) if returns and not submit_level else None,
        "episode_lengths": [e.length for e in played] if not submit_level else None,
        "errors": errors if not submit_level else None,
        "invalid_actions": [e.invalid_actions for e in played] if not submit_level else None,
        "wall_time_seconds": round(time.time() - started, 3),
    }


def judge(
    candidate: Path,
    settings: Any,
    refs: Any,
    envs: list[str],
    splits: list[str],
    check_evidence: Callable[[int], int],
) -> int:
    """The judge phase under EvoPolicyGym's scoring; the process's exit code (``check_evidence``:
    the judge's check that only it wrote eval rows, given how many it wrote)."""

    try:
        from evotree.domains.gym.settings import load_train_settings

        visible = load_train_settings(candidate / "gym.toml").episodes
    except Exception:  # noqa: BLE001 - only a number shown to the policy
        visible = 0
    rec = get_recorder()
    metrics: dict[str, float] = {"replay_mismatches": 0}
    table = []
    try:
        for split in splits:
            for env_id in envs:
                seeds = settings.seeds(split, env_id)
                if not seeds:
                    continue
                row = _judge_env(candidate, settings, refs, split, env_id, seeds, visible, rec)
                if row is None:
                    return 1
                mean, score, episodes = row
                metrics[f"{split}/{env_id}/mean_return"] = mean
                metrics[f"{split}/{env_id}/final_score"] = score
                metrics[f"{split}/{env_id}/errors"] = sum(1 for e in episodes if e.category)
                metrics[f"{split}/{env_id}/invalid_actions"] = sum(
                    e.invalid_actions for e in episodes
                )
                table.append((split, env_id, len(episodes), mean, score))
    except InvalidPolicy as exc:
        _say("judge", f"the policy cannot be imported, the submit is void: {exc}")
        return 1
    except WorkerBroken as exc:
        _say("judge", str(exc))
        return 1
    rec.signal(0, **metrics)
    written = rec.rows["evals"]
    rec.close()
    print(
        f"{'split':10s} {'environment':30s} {'episodes':>8s} {'mean return':>12s} {'final score':>11s}"
    )
    for split, env_id, n, mean, score in table:
        print(f"{split:10s} {env_id:30s} {n:8d} {mean:12.3f} {score:11.2f}")
    return check_evidence(written)


def _judge_env(
    candidate: Path,
    settings: Any,
    refs: Any,
    split: str,
    env_id: str,
    seeds: list[int],
    visible: int,
    rec: Any,
) -> tuple[float, float, list[Episode]] | None:
    """Play one split's episodes of ``env_id`` and record each return; (mean return, final
    score, episodes), or None when the submit is void (the policy cannot be built, or an
    episode was lost: EvoPolicyGym's eval fails on a rollout timeout or a dead process)."""
    tasks = [Task(env_id, i, s) for i, s in enumerate(seeds)]
    meta = {"submit_index": 0, "n_episodes": visible, "remaining_after": 0}
    episodes = list(
        run_episodes(
            candidate,
            tasks,
            timeout=settings.episode_timeout_seconds,
            workers=1,
            summarize=False,
            max_timeouts=settings.max_timeouts_per_env,
            extra={"protocol": "evopolicygym", "meta": meta},
        )
    )
    episodes.sort(key=lambda e: e.index)
    void = next((e for e in episodes if e.category == "init_error"), None)
    if void is not None:
        _say(
            "judge",
            f"{split} {env_id}: the policy cannot be built, the submit is void: {void.message}",
        )
        return None
    lost = next(
        (e for e in episodes if e.finish_reason == "timeout" or e.category == "rollout"), None
    )
    if lost is not None:
        _say(
            "judge",
            f"{split} {env_id}#{lost.index}: the episode was lost ({lost.finish_reason}), "
            f"the submit is void: {lost.message}",
        )
        return None
    for episode in episodes:
        rec.eval_result(split, f"{env_id}#{episode.index}", episode.ret)
        rec.signal(0, **{f"{split}/{env_id}#{episode.index}/return": episode.ret})
    mean = sum(e.ret for e in episodes) / len(episodes)
    low, high = refs.pair(env_id)
    return mean, final_score(mean, low, high, settings.clip_max), episodes
