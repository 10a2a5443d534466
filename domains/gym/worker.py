"""The policy's process: loads the candidate's ``policy.py`` and answers observations with actions.

Started by :class:`evotree.domains.gym.runner.Worker` as
``python -P -m evotree.domains.gym.worker REQ_FD REP_FD POLICY_FILE`` with the candidate's
directory as its working directory (in the judge phase inside a nested sandbox of its own).
It holds the policy and nothing else: the environment, its seed and the episode loop stay in
the process that started it (:mod:`evotree.domains.gym.driver`), so the policy cannot read
the seed from its frames, its memory or its generators. What crosses the pipes
(:mod:`evotree.domains.gym.wire`):

* policy → parent at start: ``{"kind": "broken", "message": ...}`` (this machine cannot run the
  domain, e.g. gymnasium is missing: not the candidate's fault) before GO; after GO
  ``{"kind": "loading"}`` (GO was read: policy.py is imported next, so whatever ends the process
  before this message is the machine's doing, not the candidate's), then ``{"kind": "ready"}``
  or ``{"kind": "invalid", "message": ...}`` (the policy breaks the contract);
* parent → policy: ``S`` an episode starts (the environment's id, the episode's index, the seed of
  the policy's own generators — :func:`evotree.domains.gym.wire.policy_seed`, not the episode's —,
  the time limit, clean copies of the spaces, the first observation; in EvoPolicyGym mode its
  ``env_meta``), ``O`` the next observation, ``E`` the episode is over; or ``R``, one round of
  several lanes (episodes played side by side: :func:`evotree.domains.gym.wire.encode_request`);
* policy → parent: ``A`` an action (checked here, and again by the parent), or a JSON failure
  ``{"kind": "fail", "reason", "message", "category"}`` (the policy raised, timed out, or returned
  an action outside the space), after which the lane waits for its next episode; for a round,
  ``N`` or ``M``: every lane's answer in one message.

Each episode (lane) has a fresh policy object (evotree's contract), its own copies of the spaces
and its own ``random`` / ``numpy.random``: the module functions are routed to the running lane's
generators, seeded with its policy seed, so the same policy plays the same pool the same way
with any number of lanes. Its stdout is redirected to stderr (its prints land in the phase's
log, not on the pipe). An alarm turns a slow episode into a ``timeout`` with a traceback of
where the policy was, once the episode's time is over (the time left that the parent gave at
its start: its wall time, as the parent counts it). The alarm is only a courtesy: the parent
measures every episode's time itself, ends the episodes past their limit and kills a process
that does not answer; nothing this process says about time counts there.
"""

from __future__ import annotations

import ctypes
import importlib.machinery
import importlib.util
import inspect
import json
import os
import pickle
import random
import signal
import struct
import sys
import time
from pathlib import Path
from typing import Any

from evotree.domains.gym.wire import (
    GO,
    FrameReader,
    ProtocolError,
    decode_request,
    encode_action,
    encode_reply,
    send,
    send_bytes,
)
from evotree.domains.gym import epg
from evotree.domains.gym.episode import EpisodeTimeout
from evotree.domains.gym.episode import _policy_traceback
from evotree.domains.gym.episode import _short
from evotree.domains.gym.episode import action_checker

__all__ = ["load_policy_class", "InvalidPolicy", "main"]

#: failure messages are cut to this many characters
_MESSAGE_LIMIT = 4000


class InvalidPolicy(Exception):
    """policy.py cannot be used: it does not import, or does not define a usable ``Policy``."""


# ---------------------------------------------------------------------------- the policy
class _SourceOnly(importlib.machinery.SourceFileLoader):
    """A loader of the candidate's ``.py`` files that compiles their source every time: it
    neither reads nor writes bytecode. Python's own loader runs ``__pycache__/NAME.cpython-3XX.pyc``
    instead of ``NAME.py`` when that file is an unchecked-hash pyc (PEP 552), whatever the source
    says: what runs would not be what ``policy.py`` (or a helper beside it) shows."""

    def get_code(self, fullname: str) -> Any:
        path = self.get_filename(fullname)
        return self.source_to_code(self.get_data(path), path)


def _source_only_under(root: Path) -> None:
    """From now on, modules found in ``root`` (the candidate's folder) or below it are imported
    from their ``.py`` source only (:class:`_SourceOnly`): no bytecode (``__pycache__`` or a
    bare ``.pyc``), no compiled extension, no zip archive. The folders already on ``sys.path``
    (the worker's own: the standard library, the installed packages) keep Python's finders."""
    root = root.resolve()
    kept = {os.path.abspath(p or ".") for p in sys.path} - {str(root)}
    finder = importlib.machinery.FileFinder.path_hook(
        (_SourceOnly, importlib.machinery.SOURCE_SUFFIXES)
    )

    def under(entry: str) -> bool:
        """Whether the ``sys.path`` entry is the candidate's folder or below it, as written
        (relative to the working directory) or once resolved."""
        where = os.path.abspath(entry or ".")
        real = Path(where).resolve()
        return where.startswith(f"{root}{os.sep}") or real == root or root in real.parents

    def hook(entry: str) -> Any:
        if os.path.abspath(entry or ".") in kept or not under(entry):
            raise ImportError("not the candidate's folder: Python's own finders")
        return finder(os.path.abspath(entry or "."))

    sys.path_hooks.insert(0, hook)
    for entry in [e for e in sys.path_importer_cache if under(e)]:
        del sys.path_importer_cache[entry]  # found again, through the hook


def load_policy_class(path: Path) -> type:
    """Import ``path`` as module ``policy`` from its source (never a ``.pyc`` of it) and return
    its ``Policy`` class, checked.

    Raises :class:`InvalidPolicy` with a message meant for the candidate's author.
    """
    if not path.is_file():
        raise InvalidPolicy(
            f"{path.name} is missing: the gym domain runs the class Policy defined in it"
        )
    spec = importlib.util.spec_from_file_location(
        "policy", path, loader=_SourceOnly("policy", str(path))
    )
    if spec is None or spec.loader is None:
        raise InvalidPolicy(f"{path.name} cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules["policy"] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:  # noqa: BLE001 - SyntaxError, ImportError, SystemExit, …
        from evotree.domains.gym.episode import _policy_traceback

        raise InvalidPolicy(f"importing {path.name} failed: {_policy_traceback(exc)}") from None
    policy = getattr(module, "Policy", None)
    if policy is None:
        names = sorted(n for n in vars(module) if not n.startswith("_"))
        raise InvalidPolicy(
            f"{path.name} defines no `Policy` (it defines: {', '.join(names) or 'nothing'}); "
            "define class Policy with __init__(self, env_id, observation_space, action_space), "
            "reset(self) and act(self, obs)"
        )
    if not inspect.isclass(policy):
        raise InvalidPolicy(f"`Policy` in {path.name} is a {type(policy).__name__}, not a class")
    missing = [name for name in ("reset", "act") if not callable(getattr(policy, name, None))]
    if missing:
        raise InvalidPolicy(
            f"class Policy in {path.name} has no {' and no '.join(m + '()' for m in missing)} "
            "method; the domain calls reset() before each episode and act(obs) at each step"
        )
    try:
        inspect.signature(policy).bind("CartPole-v1", None, None)
    except TypeError as exc:
        raise InvalidPolicy(
            f"Policy(env_id, observation_space, action_space) cannot be called: {exc}"
        ) from None
    except ValueError:
        pass  # no signature available (a C type): it will be tried
    try:
        inspect.signature(policy.act).bind(object(), None)
    except TypeError as exc:
        raise InvalidPolicy(
            f"Policy.act(obs) cannot be called with one observation: {exc}"
        ) from None
    except ValueError:
        pass
    return policy


# ---------------------------------------------------------------------------- the generators
class _Now:
    """The lane whose policy code runs now (None: this process's own code)."""

    lane: _Lane | None = None


def _install_generators() -> None:
    """Route ``random``'s and ``numpy.random``'s module functions to the running lane's own
    generators (seeded with its policy seed), so that episodes played side by side draw exactly
    what each would draw alone. Installed before ``policy.py`` is imported (a ``from random
    import random`` gets the router too); outside a lane the process's own generators answer."""
    import numpy as np

    def route(name: str, fallback: Any, which: str) -> Any:
        def routed(*args: Any, **kwargs: Any) -> Any:
            lane = _Now.lane
            if lane is None:
                return fallback(*args, **kwargs)
            return getattr(lane.generator(which), name)(*args, **kwargs)

        routed.__name__ = routed.__qualname__ = name
        routed.__doc__ = getattr(fallback, "__doc__", None)
        return routed

    for name in dir(random):
        value = getattr(random, name)
        if getattr(value, "__self__", None) is random._inst:  # type: ignore[attr-defined]
            setattr(random, name, route(name, value, "random"))
    legacy = np.random.mtrand._rand
    for name in dir(np.random.mtrand):
        value = getattr(np.random.mtrand, name)
        if getattr(value, "__self__", None) is legacy or name == "seed":
            routed = route(name, value, "numpy")
            setattr(np.random.mtrand, name, routed)
            if getattr(np.random, name, None) is value:
                setattr(np.random, name, routed)


# ---------------------------------------------------------------------------- episodes
_monotonic = time.monotonic
_CURRENT: dict[str, Any] = {}


class _Alarm:
    """When the alarm is set to ring (``inf``: not set)."""

    at = float("inf")


def _arm(deadline: float) -> None:
    """Have the alarm ring by ``deadline`` (a system call only when it would ring later)."""
    if deadline < _Alarm.at:
        signal.setitimer(signal.ITIMER_REAL, max(deadline - time.monotonic(), 0.001))
        _Alarm.at = deadline


def _alarm(signum: int, frame: Any) -> None:
    """The time limit: raises :class:`EpisodeTimeout` inside a lane's policy code once that
    episode's deadline has passed; inside another lane's code it is set again for that lane;
    elsewhere (this process's code, waiting on the pipe) it does nothing, so no frame is ever
    cut in half."""
    _Alarm.at = float("inf")
    lane = _Now.lane
    if lane is None:
        return
    if time.monotonic() >= lane.deadline:
        raise _CURRENT["timeout"](f"{lane.limit:g} s")
    _arm(lane.deadline)


class _Lane:
    """One episode of the policy, in one lane of this process (several play side by side)."""

    def __init__(self, host: _Host) -> None:
        self.host = host
        self.mode = "default"
        self.active = False
        self.act: Any = None
        self.generators: dict[str, Any] = {}
        self.deadline = self.limit = 0.0
        self.steps = 0
        self.stage = ""
        #: a Discrete action space's actions (``low <= a < high``); empty for other spaces
        self.low, self.high = 1, 0

    def generator(self, which: str) -> Any:
        if which not in self.generators:
            import numpy as np

            self.generators[which] = (
                random.Random(self.seed) if which == "random" else np.random.RandomState(self.seed)
            )
        return self.generators[which]

    def _enter(self) -> None:
        """The lane's policy code runs from now: the alarm rings by its deadline."""
        if self.deadline < _Alarm.at:
            _arm(self.deadline)
        _Now.lane = self

    def _leave(self) -> None:
        _Now.lane = None

    # ------------------------------------------------------------------ episodes
    def start(self, message: dict[str, Any]) -> tuple[Any, bytes | None]:
        """An episode starts: build (or reuse) the policy, then answer the first observation."""
        host = self.host
        self.deadline = time.monotonic() + float(message["timeout"])
        self.limit = float(message.get("limit", message["timeout"]))
        self.active, self.steps, self.act = True, 0, None
        self.mode = message.get("mode", "default")
        if "spaces" in message:  # the judge's clean copies, pickled once per environment id
            message["observation_space"], message["action_space"] = pickle.loads(message["spaces"])
        self.space = message["action_space"]
        self.trajectory = bool(message.get("trajectory"))
        self.seed = int(message["policy_seed"])
        self.generators = {}
        self.space.seed(self.seed)
        try:
            if self.mode == "evopolicygym":
                failure = self._start_evopolicygym(message)
            else:
                failure = self._start_default(message)
        except host.timeout_type as exc:
            return None, self.fail(
                "timeout",
                f"the episode ran past its time limit ({exc}) at step 0, inside "
                f"{self.stage}: {host.traceback(exc)}",
            )
        if failure is not None:
            return None, failure
        return self.answer(message["obs"])

    def _start_default(self, message: dict[str, Any]) -> bytes | None:
        host = self.host
        observation_space = message["observation_space"]
        observation_space.seed(self.seed)
        self.check = host.checker(self.space)
        self.low, self.high = _int_actions(self.space)
        try:
            self._enter()
            try:
                self.stage = "Policy(...)"
                policy = host.policy_class(message["env_id"], observation_space, self.space)
                self.stage = "reset()"
                policy.reset()
            finally:
                self._leave()
        except Exception as exc:  # noqa: BLE001 - the policy's fault is feedback
            return self.fail("error", f"{self.stage} raised at step 0: {host.traceback(exc)}")
        except SystemExit as exc:
            return self.fail("error", f"{self.stage} called sys.exit({exc.code}) at step 0")
        self.stage = "act(obs)"
        self.act = policy.act
        return None

    def _start_evopolicygym(self, message: dict[str, Any]) -> bytes | None:
        """EvoPolicyGym's contract: one ``Policy(obs_space, action_space, env_meta)`` per submit and
        environment (built on its first episode), ``reset(episode_index)``, JSON observations."""
        host, env_id = self.host, str(message["env_id"])
        self.stage = "act(obs)"
        self._enter()
        try:
            if env_id not in host.submit:
                meta = message["meta"]
                try:
                    host.submit[env_id] = host.policy_class(
                        meta["obs_space"], meta["action_space"], meta
                    )
                except host.timeout_type:
                    raise
                except BaseException as exc:  # noqa: BLE001 - SystemExit too: the policy's fault
                    host.submit[env_id] = host.epg._error("init_error", exc)
            policy = host.submit[env_id]
            if isinstance(policy, str):  # its construction failed: the submit is void
                return self.fail("error", policy, category="init_error")
            try:
                policy.reset(int(message["index"]))
            except host.timeout_type:
                raise
            except Exception as exc:  # noqa: BLE001
                return self.fail(
                    "error", host.epg._error("reset_error", exc), category="reset_error"
                )
        finally:
            self._leave()
        self.act = policy.act
        return None

    def observe(self, obs: Any) -> bytes:
        """The answer to one observation as a frame (an ``A`` action or a ``J`` failure)."""
        action, frame = self.answer(obs)
        return frame if frame is not None else encode_action(action, self.space)

    def answer(self, obs: Any) -> tuple[Any, bytes | None]:
        """The answer to one observation: ``(action, None)``, an action checked here (evotree's
        contract), or ``(None, frame)``: a failure (which ends the episode here) or, in
        EvoPolicyGym mode, the ``A`` frame of the coerced action."""
        if not self.active:
            return None, self.fail("error", "an observation for an episode that is over")
        deadline = self.deadline
        if _monotonic() >= deadline:
            return None, self.fail(
                "timeout",
                f"the episode ran past its time limit ({self.limit:g} s) at step {self.steps}",
            )
        if self.mode == "evopolicygym":
            return self._answer_evopolicygym(obs)
        # the lane's policy code runs (as :meth:`_enter` / :meth:`_leave`, inlined: per step)
        if deadline < _Alarm.at:
            _arm(deadline)
        _Now.lane = self
        try:
            try:
                raw = self.act(obs)
            finally:
                _Now.lane = None
        except EpisodeTimeout as exc:
            return None, self._act_timeout(exc)
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - the policy's fault is feedback, not a crash
            if isinstance(exc, SystemExit):
                return None, self.fail(
                    "error", f"{self.stage} called sys.exit({exc.code}) at step {self.steps}"
                )
            return None, self.fail(
                "error", f"{self.stage} raised at step {self.steps}: {_policy_traceback(exc)}"
            )
        if type(raw) is int and self.low <= raw < self.high:  # the check's own first case
            self.steps += 1
            return raw, None
        try:
            action, problem = self.check(raw)
            if problem is not None:
                return None, self.fail(
                    "invalid_action",
                    f"invalid action at step {self.steps}: act() returned "
                    f"{_short(raw)}, not in the action space "
                    f"{self.space}: {problem}",
                )
            if type(action) is not int:
                encode_action(action, self.space)  # fails here for a value that cannot travel
        except Exception as exc:  # noqa: BLE001 - e.g. an object whose __array__ raises
            return None, self._unusable(exc)
        self.steps += 1
        return action, None

    def _answer_evopolicygym(self, obs: Any) -> tuple[Any, bytes | None]:
        """:meth:`answer` in EvoPolicyGym mode: JSON observations, the action coerced into the
        space (and flagged), an ``act()`` error an ``act_error``."""
        host = self.host
        try:
            self._enter()
            try:
                raw = self.act(host.epg.to_json(obs))
                action, invalid = host.epg.coerce(self.space, raw)
            finally:
                self._leave()
        except host.timeout_type as exc:
            return None, self._act_timeout(exc)
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - the policy's fault is feedback
            return None, self.fail("error", host.epg._error("act_error", exc), category="act_error")
        try:
            frame = encode_action(
                action,
                self.space,
                invalid=invalid,
                with_raw=self.trajectory,
                raw=host.epg.to_json(raw) if self.trajectory else None,
            )
        except Exception as exc:  # noqa: BLE001 - e.g. an object whose __array__ raises
            return None, self._unusable(exc)
        self.steps += 1
        return None, frame

    def _act_timeout(self, exc: BaseException) -> bytes:
        return self.fail(
            "timeout",
            f"the episode ran past its time limit ({exc}) at step {self.steps}, "
            f"inside {self.stage}: {self.host.traceback(exc)}",
        )

    def _unusable(self, exc: Exception) -> bytes:
        return self.fail(
            "invalid_action",
            f"invalid action at step {self.steps}: act() returned a value "
            f"that cannot be used: {type(exc).__name__}: {exc}",
        )

    def fail(self, reason: str, message: str, *, category: str = "") -> bytes:
        self.active, self.act = False, None
        text = json.dumps(
            {
                "kind": "fail",
                "reason": reason,
                "message": message[:_MESSAGE_LIMIT],
                "category": category,
            },
            separators=(",", ":"),
        )
        return b"J" + text.encode()

    def end(self) -> None:
        self.active, self.act, self.generators = False, None, {}


class _Host:
    """The policy side: its lanes, the alarm, the replies."""

    def __init__(self, policy_class: type, reply_fd: int) -> None:

        self.policy_class = policy_class
        self.reply_fd = reply_fd
        self.epg, self.timeout_type, self.traceback = epg, EpisodeTimeout, _policy_traceback
        _CURRENT["timeout"] = EpisodeTimeout
        self.short, self.checker = _short, action_checker
        #: EvoPolicyGym mode: the one Policy of this submit, per environment
        self.submit: dict[str, Any] = {}
        self.lanes: dict[int, _Lane] = {}

    def lane(self, number: int) -> _Lane:
        if number not in self.lanes:
            self.lanes[number] = _Lane(self)
        return self.lanes[number]

    def round(self, frame: bytes) -> bytes:
        """One round of lanes (an ``R`` frame): episodes that ended, observations, starts; one
        reply with every answer, observations' first, in the order they were asked."""
        starts, ends, observed = decode_request(frame)
        for number in ends:
            self.lane(number).end()
        answers = []
        append = answers.append
        lanes = self.lanes
        ints = True  # every answer so far an integer action: the reply is ``Ni``
        for number, obs in observed:
            lane = lanes.get(number) or self.lane(number)
            action, failure = lane.answer(obs)
            if type(action) is not int or failure is not None:
                ints = False
            append((number, action, failure, lane.space))
        for number, message in starts:
            lane = self.lane(number)
            action, failure = lane.start(message)
            if type(action) is not int or failure is not None:
                ints = False
            append((number, action, failure, lane.space))
        if ints and answers:  # encode_reply's ``Ni`` without looking at every answer again
            try:
                return b"Ni" + _pack(f"<{len(answers)}q", *[a[1] for a in answers])
            except struct.error:
                pass  # an integer past 64 bits: the general form
        return encode_reply(answers)


_pack = struct.pack


def _int_actions(space: Any) -> tuple[int, int]:
    """``(low, high)``: the integer actions of a Discrete ``space`` are ``low <= a < high``, as
    :func:`~evotree.domains.gym.episode.action_checker` checks them first; ``(1, 0)`` (none)
    for any other space."""
    from gymnasium import spaces

    if isinstance(space, spaces.Discrete):
        return int(space.start), int(space.start + space.n)
    return 1, 0


#: prctl(2)'s option: the signal this process gets when the thread that started it ends
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """Be killed when the process that started this one ends. It starts this one in a session
    of its own (as bubblewrap's ``--new-session`` does in the nested sandbox), which its process
    group's signals do not reach: a phase killed as a group still takes this process with it."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def main(argv: list[str]) -> int:
    _die_with_parent()
    request_fd, reply_fd, policy_file = int(argv[0]), int(argv[1]), Path(argv[2])
    os.dup2(2, 1)  # the policy's prints go to stderr; the protocol has its own pipe
    sys.stdout = sys.stderr
    try:
        from evotree.domains.gym.catalog import require_gymnasium

        require_gymnasium()  # the spaces arrive as gymnasium objects
        from evotree.domains.gym import epg, episode  # noqa: F401 - what the host needs, imported here

        _install_generators()
    except Exception as exc:  # noqa: BLE001
        send(reply_fd, {"kind": "broken", "message": str(exc)})
        return 3
    reader = FrameReader(request_fd)
    # no candidate code before the host says go: a process started early (launch.prestart)
    # waits here until its judge, or train phase, has read what it reads and adopted it, so
    # policy.py runs no sooner than in a process started then (a phase that stops first, or a
    # judge that adopts nothing, closes the pipe: this process ends with policy.py unread)
    try:
        go = reader.read_frame(None)
    except (ProtocolError, OSError):
        return 4
    if go is None:
        return 0
    if go != GO:
        return 4
    # no candidate code has run yet: the host tells a process lost before this message (the
    # machine's fault) from one lost while importing policy.py (runner.Worker.start)
    send(reply_fd, {"kind": "loading"})
    # helper modules next to policy.py are importable, after evotree's and installed packages
    # (from their source only, as policy.py: never a bytecode file of the candidate's folder)
    _source_only_under(policy_file.parent)
    sys.path.append(str(policy_file.parent.resolve()))
    try:
        policy_class = load_policy_class(policy_file)
    except InvalidPolicy as exc:
        send(reply_fd, {"kind": "invalid", "message": str(exc)})
        return 0
    host = _Host(policy_class, reply_fd)
    send(reply_fd, {"kind": "ready"})
    signal.signal(signal.SIGALRM, _alarm)
    lane = host.lane(0)
    while True:
        try:
            frame = reader.read_frame(None)
        except (ProtocolError, OSError):
            return 4
        if frame is None:
            return 0
        kind = frame[:1]
        if kind == b"R":
            send_bytes(reply_fd, host.round(frame))
        elif kind == b"O":
            send_bytes(reply_fd, lane.observe(pickle.loads(frame[1:])))
        elif kind == b"S":
            action, failure = lane.start(pickle.loads(frame[1:]))
            send_bytes(
                reply_fd, failure if failure is not None else encode_action(action, lane.space)
            )
        elif kind == b"E":
            lane.end()
        else:
            return 4


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
