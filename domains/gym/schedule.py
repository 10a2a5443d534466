"""Which episode plays where and when, for :mod:`evotree.domains.gym.runner`: the tasks shared by
the policy processes' threads (:class:`_Tasks`: taken in order, an environment's episodes skipped
after too many timeouts), and the lanes of one policy process (:meth:`runner.Worker.play_lanes`):
the episodes in flight and the rounds out (:class:`_Flight`), how many lanes play at once
(:class:`_Pace`), whether their rounds overlap in two groups or take turns (:class:`_Overlap`).
Plain data and clocks: no process is started or spoken to here."""

from __future__ import annotations

import queue
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from evotree.domains.gym.driver import Play
from evotree.domains.gym.episode import Episode


@dataclass(frozen=True)
class Task:
    env_id: str
    index: int
    seed: int


@dataclass
class _Flight:
    """The lanes of one policy process (:meth:`runner.Worker.play_lanes`): the episodes in
    flight, the finished ones not handed out yet, and what each group's next round says (lane
    ``n`` is in group ``n % groups``)."""

    lanes: int
    groups: int = 1
    #: lane -> (the order its task was taken in, its environment, its episode)
    active: dict[int, tuple[int, Any, Play]] = field(default_factory=dict)
    #: finished episodes, by the order their tasks were taken in
    done: dict[int, Episode] = field(default_factory=dict)
    free: list[int] = field(default_factory=list)
    #: per group, the next round's starts (lane, start message), ended lanes and observations
    #: (lane, obs)
    starts: list[list[tuple[int, dict[str, Any]]]] = field(default_factory=list)
    ends: list[list[int]] = field(default_factory=list)
    observed: list[list[tuple[int, Any]]] = field(default_factory=list)
    #: the rounds sent and not answered yet, oldest first: (group, lanes asked, when, bytes)
    out: deque[tuple[int, list[int], float, int]] = field(default_factory=deque)
    taken: int = 0  # tasks taken
    given: int = 0  # episodes handed out (in the order their tasks were taken)
    exhausted: bool = False  # ``take`` has no more tasks
    #: per environment id: whether its environments are :func:`~evotree.domains.gym.driver.reusable`
    reuse: dict[str, bool] = field(default_factory=dict)
    #: per environment id: reusable environments whose episode is over, for the next ones
    spare: dict[str, list[Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Every lane free, nothing to send, nothing out (a new policy process)."""
        self.free = list(range(self.lanes - 1, -1, -1))
        self.starts = [[] for _ in range(self.groups)]
        self.ends = [[] for _ in range(self.groups)]
        self.observed = [[] for _ in range(self.groups)]
        self.out.clear()

    def regroup(self, groups: int) -> None:
        """Split the lanes in ``groups`` groups from the next round on (no round may be out):
        what each lane's next round says moves to its new group; a lane's episode is its own
        (its generators, its policy object), so the order of the lanes in a round changes
        nothing of what it plays."""
        assert not self.out
        starts = [item for items in self.starts for item in items]
        ends = [lane for lanes in self.ends for lane in lanes]
        observed = [item for items in self.observed for item in items]
        self.groups = groups
        self.starts = [[] for _ in range(groups)]
        self.ends = [[] for _ in range(groups)]
        self.observed = [[] for _ in range(groups)]
        for lane, start in starts:
            self.starts[lane % groups].append((lane, start))
        for lane in ends:
            self.ends[lane % groups].append(lane)
        for lane, obs in observed:
            self.observed[lane % groups].append((lane, obs))

    def land(self, finished: list[int]) -> None:
        """The episodes of ``finished`` lanes are over: their lanes are free for the next (and
        a reusable environment that did not raise is kept for the next episode of its id)."""
        for lane in finished:
            order, env, play = self.active.pop(lane)
            if play.reset_only and not play.env_fault:
                self.spare.setdefault(play.episode.env_id, []).append(env)
            else:
                _close(env)
            play.episode.seconds = round(time.monotonic() - play.started, 6)
            self.free.append(lane)
            self.ends[lane % self.groups].append(lane)
            self.done[order] = play.episode

    def close(self) -> None:
        """Close the kept environments (and those of episodes left in flight: the caller
        stopped early)."""
        for _, env, _ in self.active.values():
            _close(env)
        for envs in self.spare.values():
            for env in envs:
                _close(env)
        self.spare.clear()


class _Pace:
    """How many lanes play at once: up to ``lanes``, ramped up from one (a policy whose
    ``__init__`` is slow does not start many at once), and fewer when a round is slow.

    An episode's time limit is its wall time, which with lanes includes the other lanes'
    answers and environment steps in its rounds. Lanes save the pipe's round trip (tens of
    microseconds a round), so the width is kept to :attr:`budget` seconds a round (measured
    here, on this side's clock, averaged over the last rounds): at most ``ROUND``, and at most
    a tenth of the time limit spread over the longest episode (``max_episode_steps``), so that
    playing side by side costs an episode at most about a tenth of its time."""

    ROUND = 0.002

    def __init__(self, lanes: int) -> None:
        self.lanes = lanes
        self.width = 1
        self.per = 0.0
        self.budget = self.ROUND

    def horizon(self, timeout: float, steps: int | None) -> None:
        """An episode of at most ``steps`` steps and ``timeout`` seconds starts."""
        if steps:
            self.budget = min(self.budget, 0.1 * timeout / steps)

    def add(self, wall: float, answers: int) -> None:
        per = wall / max(answers, 1)
        self.per = per if not self.per else 0.5 * (self.per + per)
        fit = int(self.budget / self.per) if self.per > 0 else self.lanes
        self.width = max(1, min(self.lanes, fit, 2 * self.width))


class _Overlap:
    """Whether the lanes' rounds overlap (two groups) or take turns (one), chosen while they
    play: two groups let this process step one group's environments while the policy's
    process answers the other's, which pays only where a second CPU is free for them (on a
    busy machine it costs more rounds and more CPU for nothing). The signal is this thread's
    own wait for a CPU (its run-queue time, ``/proc/thread-self/schedstat``) over each
    :attr:`WINDOW` of wall time: under :attr:`LOW` of it, two groups; over :attr:`HIGH`, one.
    What counts is what delays this thread: the machine's load average would count this
    process's own policy process too, and processes that delay it little. (Where the scheduler
    shares the CPUs between sessions first, autogroup on this machine, a process at a low
    priority in a session of its own delays it as much as any other.)"""

    WINDOW = 0.2
    LOW = 0.03
    HIGH = 0.12
    PATH = "/proc/thread-self/schedstat"

    def __init__(self, wait: float, now: float) -> None:
        self.groups = 1
        self.wait, self.since = wait, now

    @classmethod
    def start(cls) -> _Overlap | None:
        """A controller from now on (one group first); None where the wait cannot be read."""
        wait = cls.waited()
        return None if wait is None else cls(wait, time.monotonic())

    @classmethod
    def waited(cls) -> float | None:
        """Seconds this thread has waited for a CPU so far; None where the kernel does not say."""
        try:
            with open(cls.PATH, "rb") as f:
                return int(f.read().split()[1]) / 1e9
        except (OSError, ValueError, IndexError):
            return None

    def look(self, now: float) -> int:
        """The groups for the next rounds (the same until a window is over)."""
        if now - self.since < self.WINDOW:
            return self.groups
        wait = self.waited()
        if wait is None:
            self.groups = 1
            return 1
        share = (wait - self.wait) / (now - self.since)
        self.wait, self.since = wait, now
        if share < self.LOW:
            self.groups = 2
        elif share > self.HIGH:
            self.groups = 1
        return self.groups


def _close(env: Any) -> None:
    """Close an episode's environment; one that fails to close must not break the run."""
    try:
        env.close()
    except Exception:  # noqa: BLE001
        pass


_DONE = object()


class _Tasks:
    """The tasks shared by the policy processes' threads, and their results: taken in order; a
    task of an environment with ``max_timeouts`` timeouts already (0: never) goes to the results
    unplayed (``skipped``); ``stop`` (set when a thread fails) makes the others take no more."""

    def __init__(self, tasks: list[Task], workers: int, max_timeouts: int) -> None:
        self.pending: queue.Queue[Task | object] = queue.Queue()
        for task in tasks:
            self.pending.put(task)
        for _ in range(workers):
            self.pending.put(_DONE)
        self.results: queue.Queue[Any] = queue.Queue()
        self.max_timeouts = max_timeouts
        self.timeouts: dict[str, int] = {}
        self.lock = threading.Lock()
        self.stop = threading.Event()

    def skipped(self, task: Task) -> Episode | None:
        """The unplayed result of ``task`` when its environment timed out too often, else None."""
        with self.lock:
            skip = (
                bool(self.max_timeouts) and self.timeouts.get(task.env_id, 0) >= self.max_timeouts
            )
        if not skip:
            return None
        return Episode(
            env_id=task.env_id,
            index=task.index,
            seed=task.seed,
            finish_reason="timeout",
            skipped=True,
            message=f"not run: {self.max_timeouts} episodes of {task.env_id} already timed out",
        )

    def take(self) -> Task | None:
        """The next task to play (None: no more); the skipped ones go straight to the results."""
        while not self.stop.is_set():
            item = self.pending.get()
            if item is _DONE:
                return None
            task: Task = item  # type: ignore[assignment]
            instead = self.skipped(task)
            if instead is not None:
                self.results.put(instead)
                continue
            return task
        return None

    def count(self, episode: Episode) -> Episode:
        """``episode``, its timeout counted against its environment."""
        if episode.finish_reason == "timeout" and not episode.skipped:
            with self.lock:
                self.timeouts[episode.env_id] = self.timeouts.get(episode.env_id, 0) + 1
        return episode
