"""EvoPolicyGym compatibility: its policy contract, its episode loop and its scoring, in evotree's gym domain.

A workspace made by ``evotree init --protocol evopolicygym --env ID`` runs policies written for
EvoPolicyGym (v0.1.0, ``docs/protocol/02-policy.md`` there) unchanged:

* ``Policy(obs_space, action_space, env_meta)`` is built once per submit (a run's train phase,
  or one judge evaluation), with compact JSON schemas of the spaces (:func:`schema`) and
  ``env_meta`` (``env``, ``submit_index``, ``n_episodes_this_submit``, ``remaining_budget_after``,
  ``max_episode_steps``, ``obs_space``, ``action_space``, ``obs_storage``);
* ``reset(episode_index)`` before each episode (the index within the submit, never the seed);
* ``act(obs)`` gets JSON-safe observations (nested lists, dicts, strings: :func:`to_json`);
* an action outside the space is coerced into it (clipped, rounded, zero-filled: :func:`coerce`)
  and the step is flagged ``action_invalid``; the episode goes on;
* ``act()`` raising: that step plays ``action_space.sample()`` and the episode ends
  (``act_error``); ``reset()`` raising: the episode is not played, return 0 (``reset_error``);
  ``Policy(...)`` or the import raising: nothing is played (``init_error`` / ``import_error``).

Scoring (``docs/protocol/07-scoring.md`` there): a submit with any error is not ``ok`` and is
void — it is charged and never selected (here: the run fails after recording its episodes).
The judge records raw returns; the headline is the raw mean, and the normalized
``final_score = clip((mean - random) / (expert - random), 0, 1.2) * 100`` of the mean return is
a signal beside it.
"""

from __future__ import annotations

import json
import math
import traceback
from typing import Any

import numpy as np
from evotree.domains.gym.episode import EpisodeTimeout
from evotree.domains.gym.episode import encode_action
from evotree.domains.gym.episode import seed_everything

__all__ = [
    "PROTOCOL",
    "schema",
    "to_json",
    "coerce",
    "env_meta",
    "play_submit_episode",
    "TrajectoryRows",
    "info_row",
    "final_score",
    "TRAJECTORY_CAP_BYTES",
    "FEEDBACK_CAP_BYTES",
    "TRAIN_POOL_SIZE",
    "train_pool",
    "instance_seeds",
]

PROTOCOL = "evopolicygym"
#: One episode's trajectory.jsonl is cut past this many bytes (a ``{"truncated": ...}`` line says so).
TRAJECTORY_CAP_BYTES = 1_000_000
#: All trajectories of one submit together.
FEEDBACK_CAP_BYTES = 8_000_000
_SUMMARY_LIMIT = 64  # values listed in full in a Box bound; past that a {shape, min, max} summary
#: EvoPolicyGym's train pool: a submit names instances 0 .. 63 (its ``spec.cases`` default), never seeds.
TRAIN_POOL_SIZE = 64
_POOL_NAME = "evotree evopolicygym train pool v1"
#: = settings.HIDDEN_SEED_MIN (not imported: settings imports this module); tests check they agree
_POOL_BELOW = 1_000_000


def train_pool() -> list[int]:
    """The fixed pool of :data:`TRAIN_POOL_SIZE` train seeds, the same for every environment (as
    EvoPolicyGym's one ``train.json`` generator serves every environment of a suite).

    Instance ``i`` is always the same episode (bit-exact comparisons across versions and agents).
    The seeds are evotree's own — distinct, drawn once from a fixed name, below the judge's range
    (:data:`evotree.domains.gym.settings.HIDDEN_SEED_MIN`), so disjoint from every hidden pool — not
    EvoPolicyGym's data files' (which lie in the range evotree reserves for hidden seeds)."""
    import random

    rng = random.Random(_POOL_NAME)
    seen: list[int] = []
    while len(seen) < TRAIN_POOL_SIZE:
        value = rng.randrange(_POOL_BELOW)
        if value not in seen:
            seen.append(value)
    return seen


def instance_seeds(instances: list[int]) -> list[int]:
    """The seeds of train instances (ids in ``[0, TRAIN_POOL_SIZE)``; repeats allowed, as there)."""
    pool = train_pool()
    bad = [i for i in instances if not (isinstance(i, int) and 0 <= i < TRAIN_POOL_SIZE)]
    if bad:
        raise ValueError(f"train instances are ids in [0, {TRAIN_POOL_SIZE}), not {bad}")
    return [pool[i] for i in instances]


# ---------------------------------------------------------------------------- schemas and values
def _bound(values: np.ndarray) -> Any:
    flat = np.asarray(values, dtype=np.float64)
    if flat.size and np.all(flat == flat.flat[0]):
        return to_json(flat.flat[0])
    if flat.size > _SUMMARY_LIMIT:
        return {"shape": list(flat.shape), "min": to_json(flat.min()), "max": to_json(flat.max())}
    return to_json(flat)


def schema(space: Any) -> dict[str, Any]:
    """A compact, JSON-safe description of a Gymnasium space (EvoPolicyGym's schema types)."""
    from gymnasium import spaces

    if isinstance(space, spaces.Discrete):
        return {"type": "Discrete", "n": int(space.n), "start": int(space.start)}
    if isinstance(space, spaces.Box):
        shape = [int(s) for s in space.shape]
        if space.dtype == np.uint8 and len(shape) == 3:
            return {
                "type": "Image",
                "shape": shape,
                "dtype": "uint8",
                "layout": "height_width_channels",
                "value_range": [0, 255],
                "storage": "external",
            }
        return {
            "type": "Box",
            "shape": shape,
            "dtype": str(space.dtype),
            "low": _bound(space.low),
            "high": _bound(space.high),
        }
    if isinstance(space, spaces.MultiDiscrete):
        return {"type": "MultiDiscrete", "nvec": to_json(space.nvec), "dtype": str(space.dtype)}
    if isinstance(space, spaces.MultiBinary):
        return {"type": "MultiBinary", "n": to_json(space.n)}
    if isinstance(space, spaces.Tuple):
        return {"type": "Tuple", "spaces": [schema(s) for s in space.spaces]}
    if isinstance(space, spaces.Dict):
        return {"type": "Dict", "spaces": {str(k): schema(s) for k, s in space.spaces.items()}}
    if isinstance(space, spaces.Text):
        return {
            "type": "Text",
            "min_length": int(space.min_length),
            "max_length": int(space.max_length),
        }
    if type(space).__name__ == "MissionSpace":
        return {"type": "Text", "min_length": 0, "max_length": 256}
    return {"type": type(space).__name__, "repr": repr(space)[:200]}


def to_json(value: Any) -> Any:
    """Observations, actions and infos as JSON data; non-finite floats as ``"NaN"``, ``"Inf"``, ``"-Inf"``."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return "NaN" if math.isnan(value) else ("Inf" if value > 0 else "-Inf")
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "iub":
            return value.tolist()
        if value.dtype.kind == "f" and np.all(np.isfinite(value)):
            return value.astype(np.float64).tolist()
        return to_json(value.tolist())
    if isinstance(value, np.generic):
        return to_json(value.item())
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    return repr(value)


def coerce(space: Any, value: Any) -> tuple[Any, bool]:
    """``value`` made into an action of ``space``, and whether it had to be changed (invalid)."""
    from gymnasium import spaces

    if isinstance(space, spaces.Discrete):
        low, high = int(space.start), int(space.start + space.n - 1)
        try:
            number = float(value) if not isinstance(value, (list, dict, str)) else float("nan")
        except (TypeError, ValueError):
            return low, True
        if not math.isfinite(number):
            return low, True
        item = int(number)
        clamped = min(high, max(low, item))
        return clamped, clamped != number
    if isinstance(space, spaces.Box):
        try:
            array = np.asarray(value, dtype=np.float64)
            if array.shape != space.shape:
                array = np.broadcast_to(array, space.shape).astype(np.float64)
            ok = True
        except (TypeError, ValueError):
            array, ok = np.zeros(space.shape, dtype=np.float64), False
        finite = np.isfinite(array)
        if not np.all(finite):
            array, ok = np.where(finite, array, 0.0), False
        clipped = np.clip(array, space.low, space.high)
        ok = ok and bool(np.array_equal(clipped, array))
        action = clipped.astype(space.dtype)
        if not space.contains(action):
            action = np.clip(action, space.low, space.high).astype(space.dtype)
        return action, not ok
    if isinstance(space, spaces.MultiDiscrete):
        try:
            array = np.asarray(value, dtype=np.float64).reshape(space.shape)
            ok = bool(np.all(np.isfinite(array)))
        except (TypeError, ValueError):
            array, ok = np.zeros(space.shape), False
        array = np.where(np.isfinite(array), array, 0)
        clipped = np.clip(np.trunc(array), space.start, space.start + space.nvec - 1)
        return clipped.astype(space.dtype), not (ok and np.array_equal(clipped, array))
    if isinstance(space, spaces.Tuple):
        items = list(value) if isinstance(value, (list, tuple)) else []
        out, bad = [], len(items) != len(space.spaces)
        for i, sub in enumerate(space.spaces):
            action, changed = coerce(sub, items[i] if i < len(items) else None)
            out.append(action)
            bad = bad or changed
        return tuple(out), bad
    if isinstance(space, spaces.Dict):
        table = value if isinstance(value, dict) else {}
        out_d, bad = {}, not isinstance(value, dict)
        for key, sub in space.spaces.items():
            out_d[key], changed = coerce(sub, table.get(key))
            bad = bad or changed
        return out_d, bad
    try:
        return value, not space.contains(value)
    except Exception:  # noqa: BLE001
        return space.sample(), True


def env_meta(
    env_id: str, env: Any, *, submit_index: int, n_episodes: int, remaining_after: int
) -> dict[str, Any]:
    """The ``env_meta`` a Policy is built with (no seeds, no pool sizes, no anchors)."""
    obs_schema, act_schema = schema(env.observation_space), schema(env.action_space)
    spec = getattr(env, "spec", None)
    return {
        "env": env_id,
        "submit_index": int(submit_index),
        "n_episodes_this_submit": int(n_episodes),
        "remaining_budget_after": int(max(0, remaining_after)),
        "max_episode_steps": getattr(spec, "max_episode_steps", None),
        "obs_space": obs_schema,
        "action_space": act_schema,
        "obs_storage": "external" if obs_schema.get("type") == "Image" else "inline",
        "allowed_imports": ["numpy"],
    }


def _error(category: str, exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)[-4:]
    where = "; ".join(f"{f.filename.rsplit('/', 1)[-1]}:{f.lineno} in {f.name}" for f in frames)
    return f"{category}: {type(exc).__name__}: {exc}" + (f" (at {where})" if where else "")


class TrajectoryRows:
    """One episode's ``trajectory.jsonl`` rows, cut past :data:`TRAJECTORY_CAP_BYTES` (a last
    ``truncated_feedback`` row says so); :attr:`cut`: no row is added any more."""

    def __init__(self) -> None:
        self.rows: list[str] = []
        self.size = 0
        self.cut = False

    def add(
        self,
        info: dict[str, Any],
        t: int,
        obs: Any,
        action: Any,
        reward: float,
        terminated: Any,
        truncated: Any,
    ) -> None:
        """The row of step ``t`` (``info``: :func:`info_row`; ``obs`` and ``action`` JSON data)."""
        row = json.dumps(
            {
                "t": t,
                "obs": obs,
                "action": action,
                "reward": reward,
                "terminated": bool(terminated),
                "truncated": bool(truncated),
                "info": info,
            },
            separators=(",", ":"),
            default=repr,
        )
        if self.size + len(row) > TRAJECTORY_CAP_BYTES:
            self.cut = True
            self.rows.append(
                json.dumps(
                    {
                        "t": t,
                        "truncated_feedback": f"trajectory cut at {TRAJECTORY_CAP_BYTES} bytes",
                    }
                )
            )
        else:
            self.rows.append(row)
            self.size += len(row) + 1


def info_row(info: Any, invalid: Any) -> dict[str, Any]:
    """A step's ``info`` as a trajectory row has it: JSON data, ``action_invalid`` when coerced."""
    row_info = to_json(info) if isinstance(info, dict) else {}
    if invalid:
        row_info["action_invalid"] = True
    return row_info


def play_submit_episode(
    env: Any,
    policy: Any,
    env_id: str,
    index: int,
    seed: int,
    *,
    record_actions: bool,
    trajectory: bool,
    image_obs: bool,
) -> dict[str, Any]:
    """One episode of an already-built EvoPolicyGym policy; a dict of :class:`Episode` fields.

    ``category`` is ``""``, ``reset_error`` or ``act_error``; ``invalid_actions`` counts coerced
    steps; ``trajectory`` (when asked) holds the per-step rows ``{t, obs, action, reward,
    terminated, truncated, info}`` (``obs`` is null for image observations), cut at
    :data:`TRAJECTORY_CAP_BYTES`.
    """

    out = _episode_fields(env_id, index, seed)
    actions: list[Any] = []
    rows = TrajectoryRows()
    space = env.action_space
    try:
        policy.reset(index)
    except EpisodeTimeout:
        raise
    except Exception as exc:  # noqa: BLE001
        out.update(category="reset_error", message=_error("reset_error", exc))
        out["trajectory"] = [] if trajectory else None
        return out
    seed_everything(seed)
    obs, _ = env.reset(seed=seed)
    space.seed(seed)
    total, length = 0.0, 0
    try:
        while True:
            view = to_json(obs)
            failure = None
            try:
                raw = policy.act(view)
                action, invalid = coerce(space, raw)
            except EpisodeTimeout:
                raise
            except Exception as exc:  # noqa: BLE001
                failure = _error("act_error", exc)
                raw, action, invalid = None, space.sample(), False
            obs, reward, terminated, truncated, info = env.step(action)
            reward = float(reward)
            total += reward
            length += 1
            out["invalid_actions"] += bool(invalid)
            if record_actions:
                actions.append(action if type(action) is int else encode_action(action))
            if trajectory and not rows.cut:
                rows.add(
                    info_row(info, invalid),  # the info converted before the action
                    length - 1,
                    None if image_obs else view,
                    to_json(raw if failure is None else action),
                    reward,
                    terminated,
                    truncated,
                )
            if failure is not None:
                out.update(category="act_error", message=failure)
                break
            if terminated or truncated:
                out["finish_reason"] = "terminated" if terminated else "truncated"
                break
    finally:
        out["ret"], out["length"] = total, length
        if record_actions:
            out["actions"] = actions
        out["trajectory"] = rows.rows if trajectory else None
    return out


def _episode_fields(env_id: str, index: int, seed: int) -> dict[str, Any]:
    """The result of an episode not played yet (:func:`play_submit_episode` fills it in)."""
    return {
        "env_id": env_id,
        "index": index,
        "seed": seed,
        "ret": 0.0,
        "length": 0,
        "finish_reason": "error",
        "message": "",
        "category": "",
        "invalid_actions": 0,
    }


def final_score(
    mean_return: float, random_ret: float, expert_ret: float, clip_max: float = 1.2
) -> float:
    """EvoPolicyGym's ``clip((mean - random) / (expert - random), 0, clip_max) * 100``."""
    span = expert_ret - random_ret
    if not (math.isfinite(span) and span > 0):
        raise ValueError(
            f"the expert's return ({expert_ret}) must be above the random policy's ({random_ret})"
        )
    if not math.isfinite(mean_return):
        return 0.0
    return min(clip_max, max(0.0, (mean_return - random_ret) / span)) * 100.0
