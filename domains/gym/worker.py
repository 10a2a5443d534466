"""The policy's process: loads the candidate's ``policy.py`` and answers observations with actions.

Started by :class:`evotree.domains.gym.runner.Worker` as ``python -P -m evotree.domains.gym.worker REQ_FD
REP_FD POLICY_FILE`` with the candidate's directory as its working directory (in the judge phase
inside a nested sandbox of its own). It holds the policy and nothing else: the environment, its
seed and the episode loop stay in the process that started it (:mod:`evotree.domains.gym.driver`),
so the policy cannot read the seed from its frames, its memory or its generators. What crosses
the pipes (:mod:`evotree.domains.gym.wire`):

* policy → parent at start: ``{"kind": "ready"}``, ``{"kind": "invalid", "message": ...}`` (the
  policy breaks the contract) or ``{"kind": "broken", "message": ...}`` (this machine cannot run
  the domain, e.g. gymnasium is missing: not the candidate's fault);
* parent → policy: ``S`` an episode starts (the environment's id, the episode's index, the seed of
  the policy's own generators — :func:`evotree.domains.gym.wire.policy_seed`, not the episode's —,
  the time limit, clean copies of the spaces, the first observation; in EvoPolicyGym mode its
  ``env_meta``), ``O`` the next observation, ``E`` the episode is over;
* policy → parent: ``A`` an action (checked here, and again by the parent), or a JSON failure
  ``{"kind": "fail", "reason", "message", "category"}`` (the policy raised, timed out, or returned
  an action outside the space), after which it waits for the next episode.

Before each episode the policy's ``random`` and ``numpy.random`` and its copies of the spaces are
seeded with the policy seed, so the same policy plays the same pool the same way. Its stdout is
redirected to stderr (its prints land in the phase's log, not on the pipe). An alarm turns a slow
episode into a ``timeout`` with a traceback of where the policy was; the parent kills a process
that ignores it.
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import pickle
import random
import signal
import sys
from pathlib import Path
from typing import Any

from evotree.domains.gym.wire import FrameReader, ProtocolError, encode_action, send, send_bytes

__all__ = ["load_policy_class", "InvalidPolicy", "main"]

#: failure messages are cut to this many characters
_MESSAGE_LIMIT = 4000


class InvalidPolicy(Exception):
    """policy.py cannot be used: it does not import, or does not define a usable ``Policy``."""


# ---------------------------------------------------------------------------- the policy
def load_policy_class(path: Path) -> type:
    """Import ``path`` as module ``policy`` and return its ``Policy`` class, checked.

    Raises :class:`InvalidPolicy` with a message meant for the candidate's author.
    """
    if not path.is_file():
        raise InvalidPolicy(f"{path.name} is missing: the gym domain runs the class Policy defined in it")
    spec = importlib.util.spec_from_file_location("policy", path)
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
            f"{path.name} defines no `Policy` (it defines: {', '.join(names) or 'nothing'}); define "
            "class Policy with __init__(self, env_id, observation_space, action_space), reset(self) "
            "and act(self, obs)"
        )
    if not inspect.isclass(policy):
        raise InvalidPolicy(f"`Policy` in {path.name} is a {type(policy).__name__}, not a class")
    missing = [name for name in ("reset", "act") if not callable(getattr(policy, name, None))]
    if missing:
        raise InvalidPolicy(f"class Policy in {path.name} has no {' and no '.join(m + '()' for m in missing)} "
                            "method; the domain calls reset() before each episode and act(obs) at each step")
    try:
        inspect.signature(policy).bind("CartPole-v1", None, None)
    except TypeError as exc:
        raise InvalidPolicy(f"Policy(env_id, observation_space, action_space) cannot be called: {exc}") from None
    except ValueError:
        pass  # no signature available (a C type): it will be tried
    try:
        inspect.signature(policy.act).bind(object(), None)
    except TypeError as exc:
        raise InvalidPolicy(f"Policy.act(obs) cannot be called with one observation: {exc}") from None
    except ValueError:
        pass
    return policy


# ---------------------------------------------------------------------------- main
class _Clock:
    """The episode's alarm: raises :class:`EpisodeTimeout` inside the policy's code; while this
    process waits on the pipe (the environment is stepping) it only marks the episode expired,
    so no frame is ever cut in half."""

    limit = 0.0
    in_policy = False
    expired = False


def _alarm(signum: int, frame: Any) -> None:
    from evotree.domains.gym.episode import EpisodeTimeout

    if _Clock.in_policy:
        raise EpisodeTimeout(f"{_Clock.limit:g} s")
    _Clock.expired = True


class _Host:
    """The policy side of one episode at a time."""

    def __init__(self, policy_class: type, reply_fd: int) -> None:
        from evotree.domains.gym import epg
        from evotree.domains.gym.episode import EpisodeTimeout, _policy_traceback, _short, action_checker

        self.policy_class = policy_class
        self.reply_fd = reply_fd
        self.epg, self.timeout_type, self.traceback = epg, EpisodeTimeout, _policy_traceback
        self.short, self.checker = _short, action_checker
        self.submit: dict[str, Any] = {}  # EvoPolicyGym mode: the one Policy of this submit, per env
        self.active = False
        self.steps = 0
        self.stage = ""

    # ------------------------------------------------------------------ episodes
    def start(self, message: dict[str, Any]) -> None:
        """An episode starts: build (or reuse) the policy, then answer the first observation."""
        _Clock.limit, _Clock.expired = float(message["timeout"]), False
        signal.setitimer(signal.ITIMER_REAL, float(message["timeout"]))
        self.active, self.steps = True, 0
        self.mode = message.get("mode", "default")
        self.space = message["action_space"]
        self.trajectory = bool(message.get("trajectory"))
        seed = int(message["policy_seed"])
        self.space.seed(seed)
        try:
            if self.mode == "evopolicygym":
                self._start_evopolicygym(message, seed)
            else:
                self._start_default(message, seed)
        except self.timeout_type as exc:
            self.fail("timeout", f"the episode ran past its time limit ({exc}) at step 0, inside {self.stage}: "
                                 f"{self.traceback(exc)}")
            return
        if self.active:
            self.observe(message["obs"])

    def _seed_globals(self, seed: int) -> None:
        import numpy as np

        random.seed(seed)
        np.random.seed(seed)

    def _start_default(self, message: dict[str, Any], seed: int) -> None:
        observation_space = message["observation_space"]
        observation_space.seed(seed)
        self._seed_globals(seed)
        self.check = self.checker(self.space)
        try:
            _Clock.in_policy = True
            self.stage = "Policy(...)"
            policy = self.policy_class(message["env_id"], observation_space, self.space)
            self.stage = "reset()"
            policy.reset()
            self.stage = "act(obs)"
            self.act = policy.act
        except Exception as exc:  # noqa: BLE001 - the policy's fault is feedback
            self.fail("error", f"{self.stage} raised at step 0: {self.traceback(exc)}")
        except SystemExit as exc:
            self.fail("error", f"{self.stage} called sys.exit({exc.code}) at step 0")
        finally:
            _Clock.in_policy = False

    def _start_evopolicygym(self, message: dict[str, Any], seed: int) -> None:
        """EvoPolicyGym's contract: one ``Policy(obs_space, action_space, env_meta)`` per submit and
        environment (built on its first episode), ``reset(episode_index)``, JSON observations."""
        env_id = str(message["env_id"])
        self.stage = "act(obs)"
        try:
            _Clock.in_policy = True
            if env_id not in self.submit:
                meta = message["meta"]
                try:
                    self.submit[env_id] = self.policy_class(meta["obs_space"], meta["action_space"], meta)
                except self.timeout_type:
                    raise
                except BaseException as exc:  # noqa: BLE001 - SystemExit too: the policy's fault
                    self.submit[env_id] = self.epg._error("init_error", exc)
            policy = self.submit[env_id]
            if isinstance(policy, str):  # its construction failed: the submit is void
                self.fail("error", policy, category="init_error")
                return
            try:
                policy.reset(int(message["index"]))
            except self.timeout_type:
                raise
            except Exception as exc:  # noqa: BLE001
                self.fail("error", self.epg._error("reset_error", exc), category="reset_error")
                return
        finally:
            _Clock.in_policy = False
        self._seed_globals(seed)
        self.act = policy.act

    def observe(self, obs: Any) -> None:
        """Answer one observation with an action (or a failure, which ends the episode here)."""
        if not self.active:
            return
        if _Clock.expired:
            self.fail("timeout", f"the episode ran past its time limit ({_Clock.limit:g} s) at step "
                                 f"{self.steps}, while the environment stepped")
            return
        epg = self.mode == "evopolicygym"
        try:
            _Clock.in_policy = True
            try:
                if epg:
                    raw = self.act(self.epg.to_json(obs))
                    action, invalid = self.epg.coerce(self.space, raw)
                else:
                    raw = self.act(obs)
            finally:
                _Clock.in_policy = False
        except self.timeout_type as exc:
            self.fail("timeout", f"the episode ran past its time limit ({exc}) at step {self.steps}, inside "
                                 f"{self.stage}: {self.traceback(exc)}")
            return
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - the policy's fault is feedback, not a crash
            if epg:
                self.fail("error", self.epg._error("act_error", exc), category="act_error")
            elif isinstance(exc, SystemExit):
                self.fail("error", f"{self.stage} called sys.exit({exc.code}) at step {self.steps}")
            else:
                self.fail("error", f"{self.stage} raised at step {self.steps}: {self.traceback(exc)}")
            return
        try:
            if epg:
                frame = encode_action(action, self.space, invalid=invalid, with_raw=self.trajectory,
                                      raw=self.epg.to_json(raw) if self.trajectory else None)
            else:
                action, problem = self.check(raw)
                if problem is not None:
                    self.fail("invalid_action", f"invalid action at step {self.steps}: act() returned "
                                                f"{self.short(raw)}, not in the action space {self.space}: "
                                                f"{problem}")
                    return
                frame = encode_action(action, self.space)
        except Exception as exc:  # noqa: BLE001 - e.g. an object whose __array__ raises
            self.fail("invalid_action", f"invalid action at step {self.steps}: act() returned a value that "
                                        f"cannot be used: {type(exc).__name__}: {exc}")
            return
        self.steps += 1
        send_bytes(self.reply_fd, frame)

    def fail(self, reason: str, message: str, *, category: str = "") -> None:
        self.active = False
        send(self.reply_fd, {"kind": "fail", "reason": reason, "message": message[:_MESSAGE_LIMIT],
                             "category": category})

    def end(self) -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        self.active, self.act = False, None
        _Clock.expired = False


def main(argv: list[str]) -> int:
    request_fd, reply_fd, policy_file = int(argv[0]), int(argv[1]), Path(argv[2])
    os.dup2(2, 1)  # the policy's prints go to stderr; the protocol has its own pipe
    sys.stdout = sys.stderr
    try:
        from evotree.domains.gym.catalog import require_gymnasium

        require_gymnasium()  # the spaces arrive as gymnasium objects
        from evotree.domains.gym import epg, episode  # noqa: F401 - what the host needs, imported here
    except Exception as exc:  # noqa: BLE001
        send(reply_fd, {"kind": "broken", "message": str(exc)})
        return 3
    # helper modules next to policy.py are importable, after evotree's and installed packages
    sys.path.append(str(policy_file.parent.resolve()))
    try:
        policy_class = load_policy_class(policy_file)
    except InvalidPolicy as exc:
        send(reply_fd, {"kind": "invalid", "message": str(exc)})
        return 0
    host = _Host(policy_class, reply_fd)
    send(reply_fd, {"kind": "ready"})
    signal.signal(signal.SIGALRM, _alarm)
    reader = FrameReader(request_fd)
    while True:
        try:
            frame = reader.read_frame(None)
        except (ProtocolError, OSError):
            return 4
        if frame is None:
            return 0
        kind = frame[:1]
        if kind == b"O":
            host.observe(pickle.loads(frame[1:]))
        elif kind == b"S":
            host.start(pickle.loads(frame[1:]))
        elif kind == b"E":
            host.end()
        else:
            return 4


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
