"""Running a candidate's policy on many episodes, safely: policy processes, time limits, restarts.

The environment and the episode loop run here, in the caller's process (the judge or the train
phase: :mod:`evotree.domains.gym.driver`); the policy runs in a process of its own
(:mod:`evotree.domains.gym.worker`) that gets observations and answers actions over two pipes. It
never holds the environment, its seed or this process's frames: the episode's seed cannot be
read from inside the policy, and the environment cannot be tampered with, so the returns need
no replay.

The parent enforces the per-episode time limit: the policy's own alarm normally stops a slow
episode with a traceback (finish_reason ``timeout``); a policy process that does not answer
within the limit plus a grace period is killed and replaced, and so is one that died (a
segfault, ``os._exit``, out of memory) or broke the protocol. A policy therefore cannot hang or
crash the train phase or the judge: every episode ends with a result. After ``max_timeouts``
timeouts in one environment the rest of its episodes are not run (``skipped``), so a policy
that always hangs costs a bounded time.

The policy's environment has no ``EVOTREE_*`` variables (the policy cannot reach the run's
recorder through them), ``PYTHONHASHSEED=0`` (set iteration order is the same every run) and
one BLAS/OpenMP thread unless told otherwise.

In the judge phase (``$EVOTREE_POLICY_SANDBOX`` set by the harness's sandbox) every policy process
runs in a nested sandbox of its own (:func:`evotree.harness.sandbox_nested.policy_sandbox_argv`): it
sees the system, the Python environment and the candidate's files (at ``/candidate``, its
working directory) read-only, a private ``/tmp``; not the judge's folder (hidden seeds,
references), not its evidence, not its processes (a new PID namespace; no ``/proc``), no network,
no capabilities. The request and reply pipes are all it shares with the judge. Where the
variable says that no nested sandbox can start here, or the first one fails, the judge gets
:class:`WorkerBroken` (fail closed: the candidate's code is not run with the judge's view).
Elsewhere (the train phase, ``[sandbox] mode = "off"``) policy processes run as plain
subprocesses: still a process of their own, but one that could read this process's memory
through ``/proc`` where the kernel lets a process of the same user do so.

Which episode plays where and when (the tasks the processes share, the lanes of one process,
how many play at once, whether their rounds overlap) is :mod:`evotree.domains.gym.schedule`.
"""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

from evotree.domains.gym.catalog import make_env
from evotree.domains.gym.driver import DONE, Play, PolicyDied, drive, reusable
from evotree.domains.gym.epg import env_meta
from evotree.domains.gym.episode import Episode
from evotree.domains.gym.wire import (
    GO,
    FrameReader,
    ProtocolError,
    clean_space,
    decode_reply,
    encode_request,
    send_bytes,
)
from evotree.domains.gym.launch import (
    FROM_ENV,
    WorkerBroken,
    adopt,
    policy_sandbox_from_env,
    spawn,
    worker_env,
)
from evotree.domains.gym.worker import InvalidPolicy
from evotree.domains.gym.schedule import _DONE, Task, _Flight, _Overlap, _Pace, _Tasks, _close

__all__ = [
    "InvalidPolicy",
    "Task",
    "Worker",
    "WorkerBroken",
    "policy_sandbox_from_env",
    "run_episodes",
    "worker_env",
]

#: groups of lanes with rounds of their own (:meth:`Worker.play_lanes`). 2 lets the two
#: processes overlap where two CPUs are free: on this project's 2-CPU machine quiet (load
#: 0.5) 1.01x a plain loop against 0.69x with one group (long episodes, steady), under load
#: (5-9) slower or no better (more rounds, more CPU; ``docs/benchmarks/gym-judge.md``). None
#: (the default): chosen while the lanes play (:class:`_Overlap`); 1 or 2: fixed
GROUPS: int | None = None
#: bytes of rounds that may wait in the request pipe at once (its buffer is 64 KiB)
_PIPE_ROOM = 48 * 1024


#: starts of a policy process lost before it said ``loading`` (nothing of the candidate's ran:
#: killed or starved on a loaded machine) before :meth:`Worker.start` gives up (WorkerBroken)
HOST_STARTS = 3
#: starts of a policy process lost while importing policy.py before it is the candidate's fault
#: (InvalidPolicy): one more try, for a kill from outside (out of memory) during the import
POLICY_LOADS = 2
#: seconds a policy process may take, from GO, to say ``loading``: its interpreter, numpy,
#: gymnasium and evotree's modules (~0.2 s of CPU), the machine's time however loaded; the
#: import of policy.py then has the worker's ``startup_timeout``
HOST_START_SECONDS = 300.0


class Worker:
    """One worker process (started on first use, restarted after a crash or a hang)."""

    def __init__(
        self,
        candidate_dir: Path,
        *,
        startup_timeout: float = 60.0,
        grace: float | None = None,
        sandbox: dict[str, Any] | None = FROM_ENV,
    ) -> None:
        self.candidate_dir = Path(candidate_dir).resolve()
        self.startup_timeout = startup_timeout
        self.grace = grace
        #: the nested sandbox's spec (``$EVOTREE_POLICY_SANDBOX``); None: a plain subprocess
        self.sandbox = policy_sandbox_from_env() if sandbox is FROM_ENV else sandbox
        self.proc: subprocess.Popen | None = None
        self.request_fd = -1
        self.reader: FrameReader | None = None
        self.starts = 0
        self.deadline: float | None = None
        #: the pickled clean copies of each environment's spaces (:meth:`_spaces`)
        self.spaces: dict[str, bytes] = {}
        #: EvoPolicyGym mode: the ``env_meta`` of each environment, computed once
        self.meta: dict[str, dict[str, Any]] = {}

    # ------------------------------------------------------------------ life cycle
    def start(self) -> None:
        """Start the process and wait until the policy is loaded: :class:`InvalidPolicy` if
        policy.py cannot be (the candidate's fault), :class:`WorkerBroken` if no policy process
        can start here (the machine's).

        The process says ``loading`` once it has read GO, before it imports policy.py. One that
        ends (or breaks the protocol) before that ran nothing of the candidate's: a start killed
        or starved on a loaded machine is replaced, up to :data:`HOST_STARTS` starts, then
        :class:`WorkerBroken`. One that ends while importing policy.py is started once more (a
        kill from outside, out of memory, is not the candidate's either) before InvalidPolicy.
        :attr:`startup_timeout` bounds policy.py's import alone, from ``loading`` on; the
        process's own start (Python, numpy, gymnasium, evotree) has :data:`HOST_START_SECONDS`.
        """
        lost_starts: list[str] = []
        lost_loads: list[str] = []
        while True:
            lost = self._start_once()
            if lost is None:
                return
            loading, how = lost
            if loading:
                lost_loads.append(how)
                if len(lost_loads) >= POLICY_LOADS:
                    raise InvalidPolicy(
                        f"the process loading policy.py died while importing it ({'; '.join(lost_loads)}), "
                        f"{len(lost_loads)} times; its stderr is in the phase's log"
                    )
            else:
                lost_starts.append(how)
                if len(lost_starts) >= HOST_STARTS:
                    raise WorkerBroken(
                        f"the policy's process failed {len(lost_starts)} times before it loaded "
                        f"policy.py ({'; '.join(lost_starts)}): nothing of the candidate's ran, this "
                        "machine cannot start it now; its stderr is in the phase's log"
                    )

    def _start_once(self) -> tuple[bool, str] | None:
        """One start of the policy's process (the one started early, if any: :func:`adopt`).
        None once it is ready; else (whether it had said ``loading``, how it was lost). Raises
        what tells the candidate's fault (:class:`InvalidPolicy`) or the machine's
        (:class:`WorkerBroken`) at once."""
        # the process started early for this candidate and sandbox (:func:`launch.prestart`,
        # the judge phase), else a new one
        self.proc, request_w, reply_r = adopt(self.candidate_dir, self.sandbox) or spawn(
            self.candidate_dir, self.sandbox
        )
        self.starts += 1
        self.request_fd = request_w
        os.set_blocking(request_w, False)  # writes wait by the deadline (send_bytes)
        self.reader = FrameReader(reply_r, nonblocking=True)
        deadline = time.monotonic() + HOST_START_SECONDS
        try:  # load policy.py now: not before (wire.GO)
            send_bytes(request_w, GO, deadline)
        except (OSError, TimeoutError):
            pass  # a process that is gone already: met below as a start that died
        loading = False
        while True:
            try:
                message = self.reader.read(deadline)
            except TimeoutError:
                self.stop()
                if loading:
                    raise InvalidPolicy(
                        f"policy.py did not finish importing within {self.startup_timeout:g} s "
                        "(does it loop or block at import time?)"
                    ) from None
                raise WorkerBroken(
                    f"the policy's process did not start within {HOST_START_SECONDS:g} s (its "
                    "Python, numpy, gymnasium and evotree, before policy.py): this machine is too "
                    "loaded to run it"
                ) from None
            except ProtocolError as exc:
                self.stop()
                if loading:
                    raise InvalidPolicy(
                        f"the policy's process wrote garbage on the domain's pipe: {exc}"
                    ) from None
                return False, f"it broke the domain's protocol: {exc}"
            if message is None:
                code = self.stop(exited=True)
                return loading, _exit_text(code, self.sandbox)
            kind = message.get("kind")
            if not loading and kind == "loading":
                loading = True
                deadline = time.monotonic() + self.startup_timeout
                continue
            if loading and kind == "ready":
                return None
            self.stop()
            if loading and kind == "invalid":
                raise InvalidPolicy(str(message.get("message")))
            if loading:  # policy.py's import wrote it (e.g. a forged "broken"): its own fault
                raise InvalidPolicy(
                    f"the policy's process sent {kind!r} where 'ready' was expected (does policy.py "
                    "write on the domain's pipe?)"
                )
            if kind == "broken":
                raise WorkerBroken(str(message.get("message")))
            return False, f"its first message was {kind!r}, not 'loading'"

    def stop(self, *, exited: bool = False) -> int | None:
        """Kill the process (if any) and return its exit code.

        ``exited``: its pipe was closed, so it ended by itself: a sandboxed worker's bubblewrap
        reports the exit status a moment later, which is waited for (up to a second) rather than
        replaced by the kill's.
        """
        code = None
        if self.proc is not None:
            if exited and self.sandbox is not None and self.proc.poll() is None:
                try:
                    self.proc.wait(timeout=1.0)
                except subprocess.TimeoutExpired:
                    pass
            if self.proc.poll() is None:
                try:
                    self.proc.kill()
                except ProcessLookupError:
                    pass
            code = self.proc.wait()
            self.proc = None
        for fd in (self.request_fd, self.reader.fd if self.reader else -1):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.request_fd, self.reader = -1, None
        return code

    def close(self) -> None:
        """Let the worker exit on end of input, then make sure it is gone."""
        if self.proc is not None and self.request_fd >= 0:
            try:
                os.close(self.request_fd)
            except OSError:
                pass
            self.request_fd = -1
            try:
                self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
        self.stop()

    # ------------------------------------------------------------------ episodes
    def send_frame(self, payload: bytes) -> None:
        """One frame to the policy's process (:class:`PolicyDied` if it is gone)."""
        try:
            send_bytes(self.request_fd, payload, self.deadline)
        except TimeoutError:
            raise
        except OSError:
            raise PolicyDied from None

    def read_frame(self) -> bytes:
        """The policy's next frame, by the episode's deadline (:class:`TimeoutError` past it)."""
        assert self.reader is not None
        frame = self.reader.read_frame(self.deadline)
        if frame is None:
            raise PolicyDied
        return frame

    def play(
        self,
        task: Task,
        *,
        timeout: float,
        record_actions: bool = False,
        summarize: bool = True,
        extra: dict[str, Any] | None = None,
    ) -> Episode:
        """Play one episode: the environment here, the policy in its process (started if needed).

        Always returns an Episode: a policy process past the episode's time limit plus a grace
        period is killed (``timeout``), one that died or broke the protocol is reported
        (``error``) and replaced at the next episode. Raises :class:`InvalidPolicy` /
        :class:`WorkerBroken` when the process cannot be (re)started with the policy loaded.
        """
        if self.proc is None:
            self.start()
        started = time.monotonic()
        grace = self.grace if self.grace is not None else max(1.0, 0.25 * timeout)
        self.deadline = started + timeout + grace
        env = None
        failure: tuple[str, str] | None = None
        epg_mode = bool(extra and extra.get("protocol") == "evopolicygym")
        try:
            env = make_env(task.env_id)
            episode = drive(
                self,
                env,
                task.env_id,
                task.index,
                task.seed,
                timeout=timeout,
                record_actions=record_actions,
                summarize=summarize,
                epg=self._epg_options(task.env_id, env, extra),
            )
        except Exception as exc:  # noqa: BLE001 - the policy's process or the environment failed
            failure = self._episode_lost(exc, timeout)
        finally:
            if env is not None:
                _close(env)
        if failure is not None:
            # EvoPolicyGym's verdict for an episode lost with its process: ``rollout`` (void)
            episode = Episode(
                env_id=task.env_id,
                index=task.index,
                seed=task.seed,
                finish_reason=failure[0],
                message=failure[1],
                category="rollout" if epg_mode else "",
            )
        episode.seconds = round(time.monotonic() - started, 6)
        return episode

    def _epg_options(
        self, env_id: str, env: Any, extra: dict[str, Any] | None
    ) -> dict[str, Any] | None:
        """:func:`drive`'s ``epg`` in EvoPolicyGym mode (``env_meta`` computed once per
        environment), None in evotree's."""
        if not (extra and extra.get("protocol") == "evopolicygym"):
            return None
        if env_id not in self.meta:
            self.meta[env_id] = env_meta(env_id, env, **extra.get("meta", {}))
        return {"meta": self.meta[env_id], "trajectory": bool(extra.get("trajectory"))}

    def _episode_lost(self, exc: Exception, timeout: float) -> tuple[str, str]:
        """Stop a policy process whose episode failed with ``exc`` (it may be waiting in the
        middle of the episode): (finish reason, message) of that episode."""
        if isinstance(exc, TimeoutError):
            self.stop()
            return (
                "timeout",
                f"the episode did not finish within its time limit of {timeout:g} s and the "
                "policy's process did not respond to the alarm; it was killed (does act() "
                "block in C code or ignore signals?)",
            )
        if isinstance(exc, PolicyDied):
            code = self.stop(exited=True)
            return (
                "error",
                "the policy's process died during the episode "
                f"({_exit_text(code, self.sandbox)}): e.g. a segfault, os._exit() or running "
                "out of memory; it was restarted",
            )
        if isinstance(exc, ProtocolError):
            self.stop()
            return (
                "error",
                f"the policy's process broke the domain's protocol ({exc}); it was restarted",
            )
        self.stop()  # e.g. the environment cannot be made or reset
        return ("error", f"{type(exc).__name__}: {exc}")

    def play_lanes(
        self,
        take: Callable[[], Task | None],
        *,
        lanes: int,
        timeout: float,
        record_actions: bool = False,
        summarize: bool = True,
        skipped: Callable[[Task], Episode | None] | None = None,
        groups: int | None = None,
    ) -> Iterator[Episode]:
        """Episodes of evotree's contract, up to ``lanes`` side by side in this one policy process:
        each round sends one message with every lane's observation (or start) and reads one with
        every lane's answer, so the pipe's cost is shared by the lanes. ``take`` gives the next
        task (None: no more). Each episode keeps its own generators, so it plays exactly what it
        would play alone; its time limit is its wall time here, the rounds it is in included
        (:class:`_Pace` plays fewer lanes when the policy is slow, so that the others' answers
        cost an episode little). If the process is lost (dead, past the time limit of every
        episode in flight, or breaking the protocol), every episode in flight fails with that
        reason and is never played again: a replay would let a policy re-roll an episode it is
        losing by ending its process. ``skipped`` is kept for the callers (not used: nothing is
        replayed). ``groups`` (default :data:`GROUPS`): the lanes are split in that many groups,
        each with its own rounds, so that this process steps one group's environments while the
        policy's process answers another's (the two processes overlap where two CPUs are free);
        None: one or two, chosen while the lanes play (:class:`_Overlap`)."""
        groups = GROUPS if groups is None else max(1, groups)
        overlap = _Overlap.start() if groups is None and lanes > 1 else None
        grace = self.grace if self.grace is not None else max(1.0, 0.25 * timeout)
        flight = _Flight(lanes, groups=groups or 1)
        active, done, out = flight.active, flight.done, flight.out
        pace = _Pace(lanes)
        monotonic = time.monotonic
        try:
            while True:
                # the episodes that are over go out first, in the order their tasks were taken
                # (as one at a time), before boarding starts a process: the replacement of a
                # lost one may raise (InvalidPolicy: policy.py no longer loads), and the
                # episodes that process played must be handed over (recorded, charged) by then
                while flight.given in done:
                    yield done.pop(flight.given)
                    flight.given += 1
                if flight.free and not flight.exhausted and len(active) < pace.width:
                    self._board(flight, take, pace, timeout, record_actions, summarize)
                while flight.given in done:  # ended at its start (no environment, a reset fault)
                    yield done.pop(flight.given)
                    flight.given += 1
                if not active:
                    if flight.exhausted:
                        return
                    continue
                # the round may last until the last episode in flight is past its limit, and a grace
                self.deadline = max(p.deadline for _, _, p in active.values()) + grace
                finished: list[int] = []
                try:
                    if overlap is None or overlap.groups == flight.groups or not out:
                        self._ask(flight, monotonic)  # else: no new round before regrouping
                    group, asked, began, _ = out.popleft()
                    answers = decode_reply(self.read_frame(), asked)
                    observed = flight.observed[group]
                    for lane, value, frame in answers:
                        play = active[lane][2]
                        if frame is not None:
                            obs = play.answer(frame)
                        elif type(value) is int and play.low <= value < play.high:
                            obs = play.step(value)  # the check's first case, inlined (per step)
                        else:
                            action, problem = play.check(value)
                            if problem is not None:
                                raise ProtocolError(
                                    "an action outside the space that its own check let "
                                    f"through: {problem}"
                                )
                            obs = play.step(action)
                        if obs is DONE:
                            finished.append(lane)
                        else:
                            observed.append((lane, obs))
                    pace.add(monotonic() - began, len(asked))
                except (TimeoutError, PolicyDied, ProtocolError) as exc:
                    self._crash(flight, exc)
                    continue
                if finished:
                    flight.land(finished)
                if overlap is not None and overlap.look(monotonic()) != flight.groups and not out:
                    flight.regroup(overlap.groups)
        finally:
            flight.close()

    def _ask(self, flight: _Flight, monotonic: Callable[[], float]) -> None:
        """Send the next round of every group that has something to ask and no round out. A
        second round goes out while the policy's process answers the first only if both fit in
        the pipe at once: this process never waits to write while the policy's process waits
        for its answer to be read."""
        out = flight.out
        for group in range(flight.groups):
            if not (flight.observed[group] or flight.starts[group]):
                continue
            if any(g == group for g, _, _, _ in out):
                continue
            request, asked = encode_request(
                flight.starts[group], flight.ends[group], flight.observed[group]
            )
            if out and len(request) + sum(size for _, _, _, size in out) > _PIPE_ROOM:
                return
            self.send_frame(request)
            flight.starts[group], flight.ends[group], flight.observed[group] = [], [], []
            out.append((group, asked, monotonic(), len(request)))

    def _board(
        self,
        flight: _Flight,
        take: Callable[[], Task | None],
        pace: _Pace,
        timeout: float,
        record_actions: bool,
        summarize: bool,
    ) -> None:
        """Start episodes in the free lanes, up to the pace's width, while ``take`` gives tasks
        (the policy's process started first, if needed, before an episode's clock starts)."""
        free, active, done = flight.free, flight.active, flight.done
        while free and not flight.exhausted and len(active) < pace.width:
            task = take()
            if task is None:
                flight.exhausted = True
                break
            if self.proc is None:  # started before the episode's clock does
                self.start()
            order = flight.taken
            flight.taken += 1
            spare = flight.spare.get(task.env_id)
            if spare:  # an environment of :func:`reusable`'s that played an episode already
                env = spare.pop()
            else:
                try:
                    env = make_env(task.env_id)
                except Exception as exc:  # noqa: BLE001
                    done[order] = Episode(
                        env_id=task.env_id,
                        index=task.index,
                        seed=task.seed,
                        message=f"{type(exc).__name__}: {exc}",
                    )
                    continue
            reuse = flight.reuse.get(task.env_id)
            if reuse is None:
                reuse = flight.reuse[task.env_id] = reusable(env)
            play = Play(
                env,
                task.env_id,
                task.index,
                task.seed,
                timeout=timeout,
                record_actions=record_actions,
                summarize=summarize,
                reset_only=reuse,
            )
            start = play.begin(self._spaces(task.env_id, env))
            if start is None:
                _close(env)
                play.episode.seconds = round(time.monotonic() - play.started, 6)
                done[order] = play.episode
                continue
            pace.horizon(timeout, play.limit)
            lane = free.pop()
            active[lane] = (order, env, play)
            flight.starts[lane % flight.groups].append((lane, start))

    def _crash(self, flight: _Flight, exc: BaseException) -> None:
        """The policy's process was lost in a round: stop it, fail every episode in flight with
        the reason (none is played again) and free every lane."""
        active = flight.active
        failure = self._lost(exc, len(active))
        for order, env, play in active.values():
            _close(env)
            play.fail({"reason": failure[0], "message": failure[1]})
            play.episode.seconds = round(time.monotonic() - play.started, 6)
            flight.done[order] = play.episode
        active.clear()
        flight.reset()

    def _spaces(self, env_id: str, env: Any) -> bytes:
        """The pickled clean copies of ``env``'s spaces, made once per environment id (the policy's
        process unpickles its own copies for every episode)."""
        cached = self.spaces.get(env_id)
        if cached is None:
            cached = self.spaces[env_id] = pickle.dumps(
                (clean_space(env.observation_space), clean_space(env.action_space)),
                protocol=pickle.HIGHEST_PROTOCOL,
            )
        return cached

    def _lost(self, exc: BaseException, flight: int) -> tuple[str, str]:
        """Stop a policy process that was lost in a round of ``flight`` episodes: (finish
        reason, message) for every one of them."""
        others = (
            f" and {flight - 1} other episode{'s' if flight > 2 else ''} side by side"
            if flight > 1
            else ""
        )
        tail = (
            "; every episode in flight fails and none is played again (a replay would let a "
            "policy re-roll an episode it is losing)"
        )
        if isinstance(exc, TimeoutError):
            self.stop()
            return (
                "timeout",
                f"the policy's process did not answer within the time limit of the "
                f"episodes in flight and a grace period, while it played this episode{others}; "
                f"it was killed (does act() block in C code or ignore signals?){tail}",
            )
        if isinstance(exc, PolicyDied):
            code = self.stop(exited=True)
            return (
                "error",
                f"the policy's process died during the episode ({_exit_text(code, self.sandbox)}), "
                f"while it played this episode{others}: e.g. a segfault, os._exit() or "
                f"running out of memory; it was restarted{tail}",
            )
        self.stop()
        return (
            "error",
            f"the policy's process broke the domain's protocol ({exc}) while it played this "
            f"episode{others}; it was restarted{tail}",
        )


def _exit_text(code: int | None, sandboxed: Any = None) -> str:
    """``code`` in words. A sandboxed worker's status is its sandbox's: a signal N comes back as 128 + N."""
    if code is None:
        return "exit status unknown"
    if sandboxed and 128 < code < 128 + 65:
        code = 128 - code
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def _episodes(
    shared: _Tasks,
    worker: Worker,
    *,
    lanes: int,
    extra: dict[str, Any] | None,
    timeout: float,
    record_actions: bool,
    summarize: bool,
) -> Iterator[Episode]:
    """The episodes ``worker``'s policy process plays until no task is left, each counted
    (side by side in lanes for evotree's contract, one at a time for EvoPolicyGym's)."""
    if lanes > 1 and not (extra and extra.get("protocol") == "evopolicygym"):
        for episode in worker.play_lanes(
            shared.take,
            lanes=lanes,
            timeout=timeout,
            record_actions=record_actions,
            summarize=summarize,
            skipped=shared.skipped,
        ):
            yield shared.count(episode)
    else:
        while (task := shared.take()) is not None:
            yield shared.count(
                worker.play(
                    task,
                    timeout=timeout,
                    record_actions=record_actions,
                    summarize=summarize,
                    extra=extra,
                )
            )


def _slot(
    shared: _Tasks,
    candidate_dir: Path,
    *,
    startup_timeout: float,
    sandbox: dict[str, Any] | None,
    **play: Any,
) -> None:
    """One policy process's thread: play tasks until none is left, each result (or the error
    that stops it: :class:`InvalidPolicy`, :class:`WorkerBroken`) into the results, then ``_DONE``."""
    results = shared.results
    worker = Worker(candidate_dir, startup_timeout=startup_timeout, sandbox=sandbox)
    try:
        for episode in _episodes(shared, worker, **play):
            results.put(episode)
    except BaseException as exc:  # noqa: BLE001 - InvalidPolicy, WorkerBroken: handed to the caller
        results.put(exc)
    finally:
        worker.close()
        results.put(_DONE)


def _inline(
    shared: _Tasks,
    candidate_dir: Path,
    *,
    startup_timeout: float,
    sandbox: dict[str, Any] | None,
    **play: Any,
) -> Iterator[Episode]:
    """One policy process driven from the caller's thread (``workers = 1``): the results in the
    order :func:`_slot` would give them (a skipped task's result when it was taken), without a
    thread to hand each one over (a hand-over per episode cost a wake-up of the caller's
    thread and a switch of the GIL)."""
    results = shared.results
    worker = Worker(candidate_dir, startup_timeout=startup_timeout, sandbox=sandbox)
    try:
        for episode in _episodes(shared, worker, **play):
            while not results.empty():  # skipped tasks, taken before this episode was over
                yield results.get_nowait()
            yield episode
        while not results.empty():
            yield results.get_nowait()
    finally:
        worker.close()


def run_episodes(
    candidate_dir: Path,
    tasks: Iterable[Task],
    *,
    timeout: float,
    workers: int = 1,
    record_actions: bool = False,
    summarize: bool = True,
    max_timeouts: int = 3,
    startup_timeout: float = 60.0,
    sandbox: dict[str, Any] | None = FROM_ENV,
    extra: dict[str, Any] | None = None,
    lanes: int = 1,
) -> Iterator[Episode]:
    """Play ``tasks`` with ``workers`` policy processes; yield each Episode as it finishes.

    Each policy process plays one episode at a time (or ``lanes`` side by side), its
    environments stepped by a thread of this process (with one worker, the caller's). Results come in completion order (task order with one worker). After
    ``max_timeouts`` timeouts in one environment (0: never) its remaining episodes are yielded
    unplayed with ``skipped`` set. Raises :class:`InvalidPolicy` if policy.py cannot be loaded
    and :class:`WorkerBroken` if the domain cannot run here. ``sandbox``: the policy processes'
    nested sandbox (:func:`policy_sandbox_from_env`: in the judge phase,
    ``$EVOTREE_POLICY_SANDBOX``; ``None``: plain subprocesses). ``extra``: EvoPolicyGym mode
    (``protocol``, ``meta``, ``trajectory``). ``lanes``: episodes each policy process plays side
    by side (:meth:`Worker.play_lanes`; evotree's contract only: EvoPolicyGym's one policy object
    plays its episodes in order).
    """
    if sandbox is FROM_ENV:
        sandbox = policy_sandbox_from_env()
    todo = list(tasks)
    workers = max(1, min(workers, len(todo) or 1))
    shared = _Tasks(todo, workers, max_timeouts)
    settings = {
        "startup_timeout": startup_timeout,
        "sandbox": sandbox,
        "lanes": lanes,
        "extra": extra,
        "timeout": timeout,
        "record_actions": record_actions,
        "summarize": summarize,
    }
    if workers == 1:
        yield from _inline(shared, candidate_dir, **settings)
        return
    slot = partial(_slot, shared, candidate_dir, **settings)
    # the slots' threads step environments under the GIL; switching often keeps each of them
    # responsive to its policy process
    interval = sys.getswitchinterval()
    sys.setswitchinterval(min(interval, 0.0005))
    threads = [
        threading.Thread(target=slot, name=f"gym-worker-{i}", daemon=True) for i in range(workers)
    ]
    for thread in threads:
        thread.start()
    finished = 0
    failure: BaseException | None = None
    try:
        while finished < workers:
            item = shared.results.get()
            if item is _DONE:
                finished += 1
            elif isinstance(item, BaseException):
                # the other processes take no more tasks; the episodes they have in flight
                # end and are handed over before the error is raised (they were played:
                # the train phase records and charges them)
                shared.stop.set()
                failure = failure or item
            else:
                yield item
        if failure is not None:
            raise failure
    finally:
        shared.stop.set()
        for thread in threads:
            thread.join(timeout=timeout + 10)
        sys.setswitchinterval(interval)
