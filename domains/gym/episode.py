"""One episode: seeding, action checks, the in-process rollout loop, its summary, and a replay.

:func:`play` runs a trusted policy in this process: the reference policies (at ``evotree
init``), the benchmark's plain arm, tests. A candidate's policy never runs here: it runs in a
process of its own and :mod:`evotree.domains.gym.driver` steps the environment for it, with the
same checks, finish reasons and messages (``play(..., isolated=True)`` reproduces that split's
seeding in-process, for comparisons).

Determinism: before an episode, ``random`` and ``numpy.random`` are seeded with the episode's
seed, the environment is reset with it and its action space is seeded with it (so a reference
policy's ``action_space.sample()`` is reproducible); a fresh policy object is built for every
episode. A candidate's policy gets neither: its generators and its copies of the spaces are
seeded with :func:`evotree.domains.gym.wire.policy_seed` (the environment and the episode's
index), so it learns nothing of the hidden seed and still plays the same pool the same way.
"""

from __future__ import annotations

import math
import random
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from evotree.domains.gym.wire import clean_space, policy_seed

__all__ = [
    "FINISH_REASONS",
    "Episode",
    "seed_everything",
    "canonical_action",
    "action_checker",
    "encode_action",
    "decode_action",
    "play",
    "replay",
    "EpisodeTimeout",
]

#: finish_reason of a rollout row.
FINISH_REASONS = ("terminated", "truncated", "error", "timeout", "invalid_action")
_TEXT_LIMIT = 1500


class EpisodeTimeout(BaseException):
    """Raised inside the policy's code by the worker's alarm when an episode runs too long.

    A BaseException so that a policy's ``except Exception`` cannot swallow it.
    """


@dataclass
class Episode:
    env_id: str
    index: int
    seed: int
    ret: float = 0.0
    length: int = 0
    finish_reason: str = "error"
    message: str = ""  # the error, for error / timeout / invalid_action
    summary: str = ""  # a short description of the trajectory
    actions: list[Any] | None = field(default=None, repr=False)  # for the judge's replay
    seconds: float = 0.0
    skipped: bool = False  # not played (too many timeouts in its environment)
    #: EvoPolicyGym mode (:mod:`evotree.domains.gym.epg`): init_error, reset_error, act_error or ""
    category: str = ""
    invalid_actions: int = 0  # EvoPolicyGym mode: steps whose action was coerced into the space
    trajectory: list[str] | None = field(default=None, repr=False)  # EvoPolicyGym mode: JSON rows

    @property
    def truncated(self) -> bool:
        return self.finish_reason == "truncated"

    @property
    def failed(self) -> bool:
        return self.finish_reason in ("error", "timeout", "invalid_action")

    def text(self) -> str:
        """What the train feedback shows: the error, or the trajectory summary."""
        head = f"seed={self.seed} return={_fmt(self.ret)} steps={self.length} {self.finish_reason}"
        body = self.message if self.failed else self.summary
        text = f"{head}: {body}" if body else head
        return text if len(text) <= _TEXT_LIMIT else text[: _TEXT_LIMIT - 1] + "…"

    def to_dict(self) -> dict[str, Any]:
        """A shallow dict (``dataclasses.asdict`` deep-copies the action list: ~0.5 ms an
        episode of 500 steps, a tenth of playing it)."""
        return {name: getattr(self, name) for name in _EPISODE_FIELDS}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Episode:
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})


_EPISODE_FIELDS = tuple(Episode.__dataclass_fields__)


def _fmt(value: float) -> str:
    if not math.isfinite(value):
        return str(value)
    return f"{value:.4g}" if abs(value) < 1e4 else f"{value:.6g}"


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % (2**32))


# ---------------------------------------------------------------------------- actions
def canonical_action(space: Any, raw: Any) -> tuple[Any, str | None]:
    """(the action as the environment gets it, None) or (None, why it is not in ``space``).

    Discrete: a Python or numpy integer (not a float, not a bool) in range. Box: numbers of
    exactly the space's shape, finite, within bounds, cast to the space's dtype. Other spaces:
    ``space.contains``.
    """
    return action_checker(space)(raw)


def action_checker(space: Any) -> Callable[[Any], tuple[Any, str | None]]:
    """:func:`canonical_action` for one space, with a fast path for the common case (per step)."""
    from gymnasium import spaces

    if isinstance(space, spaces.Discrete):
        low, high = int(space.start), int(space.start + space.n)

        def discrete(raw: Any) -> tuple[Any, str | None]:
            if type(raw) is int and low <= raw < high:
                return raw, None
            value = raw
            if isinstance(value, np.ndarray) and value.shape == ():
                value = value[()]
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
                return None, (
                    f"expected an integer action in [{low}, {high}), "
                    f"got {_short(raw)} of type {type(raw).__name__}"
                )
            action = int(value)
            if not low <= action < high:
                return None, f"action {action} is outside [{low}, {high})"
            return action, None

        return discrete
    if isinstance(space, spaces.Box):
        shape, dtype, lows, highs = space.shape, space.dtype, space.low, space.high
        isfinite, greater_equal, less_equal = np.isfinite, np.greater_equal, np.less_equal

        def box(raw: Any) -> tuple[Any, str | None]:
            # fast path (per step): already an array of the space's dtype and shape, finite, in bounds
            if (
                type(raw) is np.ndarray
                and raw.dtype == dtype
                and raw.shape == shape
                and isfinite(raw).all()
                and greater_equal(raw, lows).all()
                and less_equal(raw, highs).all()
            ):
                return raw, None
            try:
                array = np.asarray(raw, dtype=np.float64)
            except (TypeError, ValueError):
                return (
                    None,
                    f"expected numbers of shape {shape}, got {_short(raw)} of type {type(raw).__name__}",
                )
            if array.shape != shape:
                return None, (
                    f"expected shape {shape} (e.g. np.array([...], dtype=np.float32)), "
                    f"got shape {array.shape}: {_short(raw)}"
                )
            if not np.all(np.isfinite(array)):
                return None, f"the action has non-finite values: {_short(raw)}"
            if np.any(array < lows) or np.any(array > highs):
                return None, (
                    f"the action {_short(raw)} is outside the bounds low={_short(lows)} "
                    f"high={_short(highs)} (clip it)"
                )
            action = array.astype(dtype)
            if not space.contains(action):  # e.g. float64 -> float32 rounding past a bound
                action = np.clip(action, lows, highs).astype(dtype)
            return action, None

        return box

    def other(raw: Any) -> tuple[Any, str | None]:
        try:
            ok = space.contains(raw)
        except Exception:  # noqa: BLE001
            ok = False
        return (raw, None) if ok else (None, f"{_short(raw)} is not in {space}")

    return other


def encode_action(action: Any) -> Any:
    """A canonical action as JSON data (exact: float32 values survive the float64 round trip)."""
    if isinstance(action, np.ndarray):
        return action.tolist()
    if isinstance(action, np.generic):
        return action.item()
    return action


def decode_action(space: Any, data: Any) -> Any:
    from gymnasium import spaces

    if isinstance(space, spaces.Discrete):
        if isinstance(data, bool) or not isinstance(data, int):
            raise ValueError(f"not an integer action: {data!r}")
        return data
    if isinstance(space, (spaces.Box, spaces.MultiDiscrete, spaces.MultiBinary)):
        return np.asarray(data, dtype=space.dtype)
    return data


def _short(value: Any, limit: int = 80) -> str:
    try:
        if isinstance(value, np.ndarray):
            text = np.array2string(value, precision=3, threshold=8, separator=", ")
        elif isinstance(value, np.generic):
            text = repr(value.item())
        else:
            text = repr(value)
    except Exception:  # noqa: BLE001 - a policy may return anything
        text = f"<{type(value).__name__}>"
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---------------------------------------------------------------------------- summaries
class _Stats:
    """What the summary says about a trajectory, gathered cheaply while stepping."""

    def __init__(self, space: Any) -> None:
        from gymnasium import spaces

        self.discrete = isinstance(space, spaces.Discrete)
        self.counts: dict[int, int] = {}
        self.total: np.ndarray | None = None
        self.n = 0

    def add(self, action: Any) -> None:
        self.n += 1
        if self.discrete:
            self.counts[action] = self.counts.get(action, 0) + 1
        elif isinstance(action, np.ndarray):
            self.total = action.astype(np.float64) if self.total is None else self.total + action

    def describe(self) -> str:
        if self.n == 0:
            return "no actions"
        if self.discrete:
            return "actions " + " ".join(f"{a}:{c}" for a, c in sorted(self.counts.items()))
        if self.total is not None:
            return f"mean action {_short(self.total / self.n)}"
        return f"{self.n} actions"


def _obs_text(obs: Any) -> str:
    if isinstance(obs, dict):
        parts = []
        for key, value in obs.items():
            if isinstance(value, np.ndarray) and value.size > 8:
                parts.append(f"{key}=<{value.dtype} {value.shape}>")
            else:
                parts.append(f"{key}={_short(value, 40)}")
        return "{" + ", ".join(parts) + "}"
    if isinstance(obs, np.ndarray) and obs.size > 12:
        return f"<{obs.dtype} {obs.shape}>"
    return _short(obs)


def _policy_traceback(exc: BaseException, *, limit: int = 6) -> str:
    """The exception with the last frames of its traceback (the policy's own code last)."""
    frames = traceback.extract_tb(exc.__traceback__)[-limit:]
    where = "; ".join(f"{f.filename.rsplit('/', 1)[-1]}:{f.lineno} in {f.name}" for f in frames)
    message = f"{type(exc).__name__}: {exc}"
    return f"{message} (at {where})" if where else message


# ---------------------------------------------------------------------------- the loop
PolicyFactory = Callable[[str, Any, Any], Any]


def play(
    env: Any,
    env_id: str,
    index: int,
    seed: int,
    make_policy: PolicyFactory,
    *,
    record_actions: bool = False,
    summarize: bool = True,
    isolated: bool = False,
) -> Episode:
    """Run one episode of a freshly built policy in this process; never raises for its faults.

    :class:`EpisodeTimeout` (from an alarm) ends the episode as ``timeout``. ``summarize``
    builds the trajectory summary of the train feedback (the judge skips it). ``isolated``: the
    policy gets clean copies of the spaces and its generators seeded with the policy seed, as
    a candidate's policy in its own process does (the same returns as the judge's).
    """
    episode = Episode(env_id=env_id, index=index, seed=seed)
    space = env.action_space
    stats = _Stats(space) if summarize else None
    actions: list[Any] = []
    obs: Any = None
    stage = "Policy(...)"
    total = 0.0
    first = ""
    try:
        seed_everything(seed)
        obs, _ = env.reset(seed=seed)
        space.seed(seed)
        if summarize:
            first = _obs_text(obs)
        observation_space, action_space = _policy_spaces(env, space, env_id, index, isolated)
        policy = make_policy(env_id, observation_space, action_space)
        stage = "reset()"
        policy.reset()
        stage = "act(obs)"
        check = action_checker(space)
        act = policy.act
        step = env.step
        record = actions.append if record_actions else None
        add = stats.add if stats is not None else None
        reward = 0.0
        length = 0
        while True:
            raw = act(obs)
            action, problem = check(raw)
            if problem is not None:
                episode.finish_reason = "invalid_action"
                episode.message = (
                    f"invalid action at step {length}: act() returned "
                    f"{_short(raw)}, not in the action space {space}: {problem}"
                )
                break
            if add is not None:
                add(action)
            if record is not None:
                record(action if type(action) is int else encode_action(action))
            stage = "env.step"
            obs, reward, terminated, truncated, _ = step(action)
            stage = "act(obs)"
            total += float(reward)
            length += 1
            episode.length = length
            if terminated or truncated:
                episode.finish_reason = "terminated" if terminated else "truncated"
                break
        if stats is not None:
            episode.summary = (
                f"{stats.describe()}; first obs {first}; last obs {_obs_text(obs)}; "
                f"last reward {_fmt(float(reward))}"
            )
    except (EpisodeTimeout, Exception, SystemExit) as exc:  # the policy's fault is feedback
        _policy_fault(episode, stage, exc)
    episode.ret = total  # up to the failure, for an episode that failed
    if record_actions:
        episode.actions = actions
    return episode


def _policy_spaces(
    env: Any, space: Any, env_id: str, index: int, isolated: bool
) -> tuple[Any, Any]:
    """The spaces the policy is built with: ``env``'s own, or (``isolated``) clean copies
    seeded with the policy seed, its generators seeded with it too, as in its own process."""
    observation_space, action_space = env.observation_space, space
    if isolated:
        pseed = policy_seed(env_id, index)
        observation_space, action_space = clean_space(observation_space), clean_space(space)
        observation_space.seed(pseed)
        action_space.seed(pseed)
        random.seed(pseed)
        np.random.seed(pseed)
    return observation_space, action_space


def _policy_fault(episode: Episode, stage: str, exc: BaseException) -> None:
    """Record in ``episode`` how the policy's code (or the step, ``stage``) failed: the alarm's
    :class:`EpisodeTimeout` as ``timeout``, an exception or ``sys.exit`` as ``error``."""
    if isinstance(exc, EpisodeTimeout):
        episode.finish_reason = "timeout"
        episode.message = (
            f"the episode ran past its time limit ({exc}) at step {episode.length}, "
            f"inside {stage}: {_policy_traceback(exc)}"
        )
    elif isinstance(exc, Exception):
        episode.finish_reason = "error"
        episode.message = f"{stage} raised at step {episode.length}: {_policy_traceback(exc)}"
    elif isinstance(exc, SystemExit):
        episode.finish_reason = "error"
        episode.message = f"{stage} called sys.exit({exc.code}) at step {episode.length}"


_PLAIN_WRAPPERS = ("PassiveEnvChecker", "OrderEnforcing", "TimeLimit")


def _fast_path(env: Any) -> tuple[Any, int | None] | None:
    """(unwrapped env, step limit) when ``env`` only has gym.make's checking and time-limit wrappers."""
    limit = None
    current = env
    while hasattr(current, "env") and current is not current.unwrapped:
        name = type(current).__name__
        if name not in _PLAIN_WRAPPERS:
            return None
        if name == "TimeLimit":
            limit = int(current._max_episode_steps)
        current = current.env
    return current, limit


def replay(env: Any, seed: int, actions: list[Any]) -> tuple[float, int, str, str | None]:
    """Re-run ``actions`` on a clean environment: (return, length, finish_reason, problem).

    The judge scores this, not what the worker reported: the worker also runs the policy's
    code, which could have tampered with its copy of the environment. When ``env`` has only
    the wrappers ``gymnasium.make`` adds for checking and the time limit, the bare environment
    is stepped and the time limit applied here (the same episode, a third cheaper).
    """
    fast = _fast_path(env)
    if fast is not None:
        target, limit = fast
    else:
        target, limit = env, None
    target.reset(seed=seed)
    space = env.action_space
    check = action_checker(space)
    step = target.step
    total, length = 0.0, 0
    for position, data in enumerate(actions):
        if type(data) is int:
            action = data
        else:
            try:
                action = decode_action(space, data)
            except (TypeError, ValueError) as exc:
                return total, length, "error", f"replay: action {position} cannot be decoded: {exc}"
        canonical, problem = check(action)
        if problem is not None:
            return total, length, "invalid_action", f"replay: action {position}: {problem}"
        _, reward, terminated, truncated, _ = step(canonical)
        total += float(reward)
        length += 1
        if limit is not None and length >= limit:
            truncated = True
        if terminated or truncated:
            extra = len(actions) - position - 1
            problem = (
                f"replay: the episode ended at step {length} but {extra} more actions were reported"
                if extra
                else None
            )
            return total, length, "terminated" if terminated else "truncated", problem
    return total, length, "unfinished", None
