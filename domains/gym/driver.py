"""The environment's side of an episode: the loop that steps the environment for a policy in
another process.

The environment, its seed and this loop live in the process that judges (or trains); the
policy lives in its own process (:mod:`evotree.domains.gym.worker`, in the judge phase inside a
nested sandbox) and gets, per episode, the environment's id, the episode's index, clean copies
of the spaces seeded with the policy seed (:func:`evotree.domains.gym.wire.policy_seed`, never
the episode's) and the observations, one at a time; it answers with actions. So the policy can
neither read the seed (it is not in its process) nor tamper with the environment: the returns
are what this process's environment gave.

The loop is :func:`evotree.domains.gym.episode.play`'s, split in two: the same seeding of the
environment and its action space, the same action checks (done in the policy's process for its
messages, and again here), the same finish reasons and messages; and, in EvoPolicyGym mode,
:func:`evotree.domains.gym.epg.play_submit_episode`'s. The environment is stepped without
``gymnasium.make``'s checking wrappers when it has only those (the time limit is applied
here): the same episode, a third cheaper.
"""

from __future__ import annotations

import pickle
import time
from typing import Any, Protocol

from evotree.domains.gym.episode import (
    Episode,
    _fast_path,
    _fmt,
    _obs_text,
    _Stats,
    action_checker,
    encode_action,
    seed_everything,
)
from evotree.domains.gym.wire import (
    ProtocolError,
    clean_space,
    decode_action_frame,
    json_frame,
    policy_seed,
)
from evotree.domains.gym.epg import TrajectoryRows
from evotree.domains.gym.epg import info_row
from evotree.domains.gym.epg import schema
from evotree.domains.gym.epg import to_json

__all__ = ["DONE", "Pipe", "Play", "PolicyDied", "drive", "reusable"]

_REASONS = ("error", "timeout", "invalid_action")
_monotonic = time.monotonic


class PolicyDied(Exception):
    """The policy's process closed its pipe (it exited or was killed)."""


class Pipe(Protocol):
    """The policy's process, as the loop sees it (:class:`evotree.domains.gym.runner.Worker`)."""

    def send_frame(self, payload: bytes) -> None: ...

    def read_frame(self) -> bytes: ...


def _failure(frame: bytes) -> dict[str, Any]:
    message = json_frame(frame)
    if message.get("kind") != "fail" or message.get("reason") not in _REASONS:
        raise ProtocolError(f"unexpected message from the policy's process: {str(message)[:200]}")
    return message


#: names of gymnasium's classic-control environment classes whose ``reset(seed=...)`` sets every
#: piece of state their episodes read (the physical state from the environment's own generator,
#: which the seed replaces; nothing kept across resets but constants and rendering objects) and
#: which never draw from the global generators nor sample their action space: one object plays
#: many episodes exactly as fresh ones would (``tests/test_gym_lanes.py`` checks it)
_RESET_SAFE = {
    "gymnasium.envs.classic_control.cartpole": ("CartPoleEnv",),
    "gymnasium.envs.classic_control.mountain_car": ("MountainCarEnv",),
    "gymnasium.envs.classic_control.continuous_mountain_car": ("Continuous_MountainCarEnv",),
    "gymnasium.envs.classic_control.pendulum": ("PendulumEnv",),
    "gymnasium.envs.classic_control.acrobot": ("AcrobotEnv",),
}


def reusable(env: Any) -> bool:
    """Whether ``env`` may play another episode after this one instead of a fresh environment:
    only ``gymnasium.make``'s checking wrappers around one of :data:`_RESET_SAFE`'s classes
    (exactly that class, not a subclass), without rendering. Anything else (BipedalWalker keeps
    its Box2D world across resets, ``tests/test_gym_fresh_env.py``) is made fresh per episode."""
    fast = _fast_path(env)
    if fast is None:
        return False
    kind = type(fast[0])
    return (
        kind.__name__ in _RESET_SAFE.get(kind.__module__, ())
        and getattr(fast[0], "render_mode", None) is None
    )


class Play:
    """One episode of evotree's contract on the environment's side, driven by the policy's answers.

    :meth:`begin` resets the environment and gives the start message (None: the episode is
    over already), :meth:`answer` takes the policy's answer frame (:meth:`step` an action
    already decoded and checked) and gives the next observation (``DONE``: the episode is
    over), :attr:`episode` is the result. The time limit is the episode's wall time on this
    side's clock, from :meth:`begin` (:attr:`deadline`): what the policy's process says about
    its own time counts for nothing.
    """

    def __init__(
        self,
        env: Any,
        env_id: str,
        index: int,
        seed: int,
        *,
        timeout: float,
        record_actions: bool = False,
        summarize: bool = True,
        reset_only: bool = False,
    ) -> None:
        self.env, self.timeout, self.summarize = env, timeout, summarize
        #: the environment is one of :func:`reusable`'s: its reset seeds all it draws from, so
        #: the global generators and its action space are not seeded (it uses neither)
        self.reset_only = reset_only
        #: the environment raised (it is not played again)
        self.env_fault = False
        self.episode = Episode(env_id=env_id, index=index, seed=seed)
        self.record_actions = record_actions
        self.actions: list[Any] = []
        self.total, self.length = 0.0, 0
        self.first = ""
        self.started = self.deadline = 0.0

    def begin(self, spaces: Any = None) -> dict[str, Any] | None:
        """Reset the environment; the start message (``spaces``: the pickled clean copies of
        the spaces, when the caller keeps them per environment id) or None."""
        env, episode = self.env, self.episode
        self.started = started = time.monotonic()
        self.deadline = started + self.timeout
        self.space = space = (
            env.action_space
        )  # as play(): the object before reset (highway-env makes a new one)
        fast = _fast_path(env)
        # with only gym.make's checking wrappers the bare environment is reset and stepped: the
        # same episode (the wrappers only check, and the time limit is applied here), without
        # the checker's per-environment inspection on the first reset
        target = fast[0] if fast is not None else env
        if not self.reset_only:  # for environments that draw from the global generators
            seed_everything(episode.seed)
        try:
            obs, _ = target.reset(seed=episode.seed)
        except Exception as exc:  # noqa: BLE001 - the environment's fault, reported
            episode.message = f"env.reset raised: {type(exc).__name__}: {exc}"
            self.env_fault = True
            return None
        if not self.reset_only:
            space.seed(episode.seed)
        self.stats = _Stats(space) if self.summarize else None
        self.first = _obs_text(obs) if self.summarize else ""
        self._step, self.limit = target.step, (fast[1] if fast is not None else None)
        self.check = action_checker(space)
        from gymnasium.spaces import Discrete  # (gymnasium is there: the environment is)

        #: a Discrete action space's actions (``low <= a < high``, the check's first case)
        self.low, self.high = (
            (int(space.start), int(space.start + space.n))
            if isinstance(space, Discrete)
            else (1, 0)
        )
        message = {
            "mode": "default",
            "env_id": episode.env_id,
            "index": episode.index,
            "policy_seed": policy_seed(episode.env_id, episode.index),
            "timeout": max(self.deadline - time.monotonic(), 0.0),
            "limit": self.timeout,
            "obs": obs,
        }
        if spaces is None:
            message["observation_space"] = clean_space(env.observation_space)
            message["action_space"] = clean_space(space)
        else:
            message["spaces"] = spaces
        return message

    def answer(self, frame: bytes) -> Any:
        """The next observation for the policy, or ``DONE``: ``frame`` is its answer."""
        if frame[:1] != b"A":
            return self.fail(_failure(frame))
        action, problem = self.check(decode_action_frame(frame, self.space)[0])
        if problem is not None:
            raise ProtocolError(
                f"an action outside the space that its own check let through: {problem}"
            )
        return self.step(action)

    def fail(self, failure: dict[str, Any]) -> Any:
        """The policy's process reported a failure (a checked ``fail`` message): ``DONE``."""
        self.episode.finish_reason = failure["reason"]
        self.episode.message = str(failure.get("message", ""))
        return self._done()

    def step(self, action: Any) -> Any:
        """Step the environment with ``action`` (decoded and checked with this environment's
        action space): the next observation, or ``DONE``."""
        if self.stats is not None:
            self.stats.add(action)
        if self.record_actions:
            self.actions.append(action if type(action) is int else encode_action(action))
        try:
            obs, reward, terminated, truncated, _ = self._step(action)
        except Exception as exc:  # noqa: BLE001
            episode = self.episode
            episode.message = f"env.step raised at step {self.length}: {type(exc).__name__}: {exc}"
            self.env_fault = True
            return self._done()
        self.total += float(reward)
        self.length += 1
        if self.limit is not None and self.length >= self.limit:
            truncated = True
        if terminated or truncated:
            episode = self.episode
            episode.finish_reason = "terminated" if terminated else "truncated"
            if self.stats is not None:
                episode.summary = (
                    f"{self.stats.describe()}; first obs {self.first}; last obs "
                    f"{_obs_text(obs)}; last reward {_fmt(float(reward))}"
                )
            return self._done()
        if _monotonic() > self.deadline:
            return self.time_out()
        return obs

    def time_out(self) -> Any:
        """The episode's wall time is past its limit: ``DONE``."""
        self.episode.finish_reason = "timeout"
        self.episode.message = (
            f"the episode ran past its time limit ({self.timeout:g} s) at step {self.length} "
            "(its wall time in the judge: the policy's answers and the environment's steps, "
            "and with lanes the other episodes' answers in the same rounds)"
        )
        return self._done()

    def _done(self) -> Any:
        self.episode.ret, self.episode.length = self.total, self.length  # up to a failure
        if self.record_actions:
            self.episode.actions = self.actions
        return DONE


#: :meth:`Play.answer`'s "the episode is over"
DONE: Any = object()


def drive(
    pipe: Pipe,
    env: Any,
    env_id: str,
    index: int,
    seed: int,
    *,
    timeout: float,
    record_actions: bool = False,
    summarize: bool = True,
    epg: dict[str, Any] | None = None,
) -> Episode:
    """One episode of ``env`` (fresh) against the policy behind ``pipe``.

    ``epg``: EvoPolicyGym mode (``{"meta": env_meta, "trajectory": bool}``). Never raises for
    the policy's faults; raises :class:`TimeoutError`, :class:`PolicyDied` or
    :class:`~evotree.domains.gym.wire.ProtocolError` when the policy's process stops answering
    or breaks the protocol (the caller kills and replaces it).
    """
    if epg is not None:
        return _drive_evopolicygym(
            pipe,
            env,
            env_id,
            index,
            seed,
            timeout=timeout,
            record_actions=record_actions,
            meta=epg["meta"],
            trajectory=bool(epg.get("trajectory")),
        )
    play = Play(
        env,
        env_id,
        index,
        seed,
        timeout=timeout,
        record_actions=record_actions,
        summarize=summarize,
    )
    start = play.begin()
    if start is None:
        return play.episode
    pipe.send_frame(b"S" + pickle.dumps(start, protocol=pickle.HIGHEST_PROTOCOL))
    dumps, protocol = pickle.dumps, pickle.HIGHEST_PROTOCOL
    while True:
        obs = play.answer(pipe.read_frame())
        if obs is DONE:
            break
        pipe.send_frame(b"O" + dumps(obs, protocol))
    pipe.send_frame(b"E")
    return play.episode


def _drive_evopolicygym(
    pipe: Pipe,
    env: Any,
    env_id: str,
    index: int,
    seed: int,
    *,
    timeout: float,
    record_actions: bool,
    meta: dict[str, Any],
    trajectory: bool,
) -> Episode:
    """EvoPolicyGym's episode (:func:`evotree.domains.gym.epg.play_submit_episode`) with the policy
    in its own process: ``reset(episode_index)`` there, JSON observations, actions coerced into the
    space (and flagged), an ``act()`` error plays a sampled action and ends the episode."""
    episode = Episode(env_id=env_id, index=index, seed=seed)
    started = time.monotonic()
    space = env.action_space
    obs, image_obs = _epg_begin(
        pipe, env, space, episode, timeout=timeout, meta=meta, trajectory=trajectory
    )
    fast = _fast_path(env)
    step, limit = (fast[0].step, fast[1]) if fast is not None else (env.step, None)
    check = action_checker(space)
    actions: list[Any] = []
    rows = TrajectoryRows()
    total, length = 0.0, 0
    try:
        while True:
            frame = pipe.read_frame()
            failure = None
            if frame[:1] == b"A":
                action, invalid, raw = decode_action_frame(frame, space)
                action, problem = check(action)
                if problem is not None:
                    raise ProtocolError(f"an action outside the space after coercion: {problem}")
            else:
                failure = _epg_failure(_failure(frame), episode, trajectory)
                if failure is None:  # the episode ends here
                    if episode.finish_reason == "timeout":  # as EvoPolicyGym's watchdog:
                        total, length = 0.0, 0  # nothing of it counts
                    break
                action, invalid, raw = space.sample(), False, None
            obs_row = to_json(obs) if trajectory and not rows.cut and not image_obs else None
            obs, reward, terminated, truncated, info = step(action)
            reward = float(reward)
            total += reward
            length += 1
            if limit is not None and length >= limit:
                truncated = True
            episode.invalid_actions += bool(invalid)
            if record_actions:
                actions.append(action if type(action) is int else encode_action(action))
            if trajectory and not rows.cut:
                rows.add(
                    info_row(info, invalid),
                    length - 1,
                    obs_row,
                    raw if failure is None else to_json(action),
                    reward,
                    terminated,
                    truncated,
                )
            if failure is not None:
                episode.category, episode.message = "act_error", failure
                break
            if terminated or truncated:
                episode.finish_reason = "terminated" if terminated else "truncated"
                break
            if time.monotonic() - started > timeout:  # as EvoPolicyGym's watchdog:
                total, length = 0.0, 0  # nothing of it counts
                episode.finish_reason = "timeout"
                episode.message = f"the episode ran past its time limit ({timeout:g} s)"
                break
            pipe.send_frame(b"O" + pickle.dumps(obs, protocol=pickle.HIGHEST_PROTOCOL))
        pipe.send_frame(b"E")
    finally:
        _epg_settle(episode, total, length, actions if record_actions else None, rows, trajectory)
    return episode


def _epg_settle(
    episode: Episode,
    total: float,
    length: int,
    actions: list[Any] | None,
    rows: TrajectoryRows,
    trajectory: bool,
) -> None:
    """The episode's return and length up to where it ended, its actions (None: not recorded)
    and its trajectory rows when asked (unless it ended before its first step: ``[]`` then)."""
    episode.ret, episode.length = total, length
    if actions is not None:
        episode.actions = actions
    if trajectory and episode.trajectory is None:
        episode.trajectory = rows.rows


def _epg_begin(
    pipe: Pipe,
    env: Any,
    space: Any,
    episode: Episode,
    *,
    timeout: float,
    meta: dict[str, Any],
    trajectory: bool,
) -> tuple[Any, bool]:
    """Reset the environment with the episode's seed and send the policy's process the start
    message (never the seed): (the first observation, whether observations are images).
    ``space``: the action space as it was before the reset (highway-env makes a new one)."""
    seed = episode.seed
    seed_everything(seed)
    obs, _ = env.reset(seed=seed)
    space.seed(seed)
    image_obs = schema(env.observation_space).get("type") == "Image"
    pipe.send_frame(
        b"S"
        + pickle.dumps(
            {
                "mode": "evopolicygym",
                "env_id": episode.env_id,
                "index": episode.index,
                "policy_seed": policy_seed(episode.env_id, episode.index),
                "timeout": timeout,
                "meta": meta,
                "action_space": clean_space(space),
                "obs": obs,
                "trajectory": trajectory,
            },
            protocol=pickle.HIGHEST_PROTOCOL,
        )
    )
    return obs, image_obs


def _epg_failure(message: dict[str, Any], episode: Episode, trajectory: bool) -> str | None:
    """A checked ``fail`` message in EvoPolicyGym mode: an ``act()`` error's text (that step plays
    a sampled action, then the episode ends), or None when the episode ends without that step
    (``init_error``, ``reset_error``, a timeout: ``episode`` says which). Anything else breaks
    the protocol (:class:`~evotree.domains.gym.wire.ProtocolError`)."""
    if message.get("category") in ("init_error", "reset_error") or message["reason"] == "timeout":
        if message["reason"] == "timeout":
            episode.finish_reason = "timeout"
        episode.category = str(message.get("category", ""))
        episode.message = str(message.get("message", ""))
        if trajectory:
            episode.trajectory = []
        return None
    if message.get("category") != "act_error":
        raise ProtocolError(f"unexpected failure from the policy's process: {str(message)[:200]}")
    return str(message.get("message", ""))
