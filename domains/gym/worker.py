"""The worker process: loads the candidate's ``policy.py`` and plays whole episodes on request.

Started by :class:`evotree.domains.gym.runner.Worker` as ``python -P -m evotree.domains.gym.worker REQ_FD REP_FD
POLICY_FILE`` with the candidate's directory as its working directory. Messages are JSON (never
pickle: the parent must not execute anything the policy's process sends) in frames of a 4-byte
big-endian length and the UTF-8 text:

* worker → parent at start: ``{"kind": "ready"}``, ``{"kind": "invalid", "message": ...}`` (the
  policy breaks the contract) or ``{"kind": "broken", "message": ...}`` (this machine cannot run
  the domain, e.g. gymnasium is missing: not the candidate's fault);
* parent → worker: ``{"env_id", "index", "seed", "timeout", "record_actions", "summarize"}``
  (the parent may send the next request before the previous answer: requests queue in the pipe);
* worker → parent: ``{"kind": "episode", ...Episode fields}``.

The worker's stdout is redirected to stderr, so a policy's ``print`` cannot corrupt the
protocol (and lands in the phase's log). An alarm inside the worker turns a slow episode into a
``timeout`` with a traceback of where the policy was; the parent kills a worker that ignores it.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import os
import select
import signal
import struct
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["send", "FrameReader", "ProtocolError", "load_policy_class", "InvalidPolicy", "main"]

_HEADER = struct.Struct(">I")
MAX_FRAME = 64 * 1024 * 1024


class ProtocolError(Exception):
    pass


class InvalidPolicy(Exception):
    """policy.py cannot be used: it does not import, or does not define a usable ``Policy``."""


def send(fd: int, message: dict[str, Any]) -> None:
    data = json.dumps(message, separators=(",", ":"), allow_nan=True).encode()
    payload = _HEADER.pack(len(data)) + data
    view = memoryview(payload)
    while view:
        written = os.write(fd, view)
        view = view[written:]


class FrameReader:
    """Reads frames from a pipe with a deadline (the parent side)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = bytearray()

    def _frame(self) -> dict[str, Any] | None:
        if len(self.buffer) < _HEADER.size:
            return None
        (size,) = _HEADER.unpack_from(self.buffer)
        if size > MAX_FRAME:
            raise ProtocolError(f"a message of {size} bytes (more than {MAX_FRAME})")
        if len(self.buffer) < _HEADER.size + size:
            return None
        data = bytes(self.buffer[_HEADER.size:_HEADER.size + size])
        del self.buffer[:_HEADER.size + size]
        try:
            message = json.loads(data)
        except ValueError as exc:
            raise ProtocolError(f"a message that is not JSON: {exc}") from None
        if not isinstance(message, dict):
            raise ProtocolError("a message that is not a JSON object")
        return message

    def read(self, deadline: float | None) -> dict[str, Any] | None:
        """The next message; None at end of file; :class:`TimeoutError` past ``deadline``."""
        while True:
            message = self._frame()
            if message is not None:
                return message
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self.fd], [], [], wait)
            if not ready:
                raise TimeoutError
            chunk = os.read(self.fd, 1 << 20)
            if not chunk:
                return None
            self.buffer += chunk


def _read_request(fd: int, reader: FrameReader) -> dict[str, Any] | None:
    return reader.read(None)


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
def _alarm(signum: int, frame: Any) -> None:
    from evotree.domains.gym.episode import EpisodeTimeout

    raise EpisodeTimeout(f"{_alarm.limit:g} s")  # type: ignore[attr-defined]


def main(argv: list[str]) -> int:
    request_fd, reply_fd, policy_file = int(argv[0]), int(argv[1]), Path(argv[2])
    os.dup2(2, 1)  # the policy's prints go to stderr; the protocol has its own pipe
    sys.stdout = sys.stderr
    try:
        from evotree.domains.gym.catalog import make_env, require_gymnasium
        from evotree.domains.gym.episode import Episode, EpisodeTimeout, play

        require_gymnasium()
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
    send(reply_fd, {"kind": "ready"})
    signal.signal(signal.SIGALRM, _alarm)
    submit: dict[str, Any] = {}  # EvoPolicyGym mode: the one Policy instance of this submit, per env
    reader = FrameReader(request_fd)
    while True:
        try:
            request = _read_request(request_fd, reader)
        except (ProtocolError, OSError):
            return 4
        if request is None:
            return 0
        env_id, index, seed = str(request["env_id"]), int(request["index"]), int(request["seed"])
        started = time.monotonic()
        env = None
        try:
            # a fresh environment per episode, as EvoPolicyGym's judge makes one: some environments keep
            # state across reset(seed) (BipedalWalker keeps its Box2D world), so an episode played on a
            # reused object can depend on the episodes played on it before (docs/domains/gym.md)
            env = make_env(env_id)
            _alarm.limit = float(request["timeout"])  # type: ignore[attr-defined]
            signal.setitimer(signal.ITIMER_REAL, float(request["timeout"]))
            try:
                if request.get("protocol") == "evopolicygym":
                    episode = _play_evopolicygym(env, env_id, index, seed, policy_class, request, submit)
                else:
                    episode = play(env, env_id, index, seed, policy_class,
                                   record_actions=bool(request.get("record_actions")),
                                   summarize=bool(request.get("summarize", True)))
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        except EpisodeTimeout as exc:
            episode = Episode(env_id=env_id, index=index, seed=seed, finish_reason="timeout",
                              message=f"the episode ran past its time limit ({exc})")
        except Exception as exc:  # noqa: BLE001 - e.g. the environment cannot be made
            episode = Episode(env_id=env_id, index=index, seed=seed, finish_reason="error",
                              message=f"{type(exc).__name__}: {exc}")
        finally:
            if env is not None:
                _close(env)
        episode.seconds = round(time.monotonic() - started, 6)
        send(reply_fd, {"kind": "episode", **vars(episode)})  # not asdict(): it deep-copies the actions


def _close(env: Any) -> None:
    """Close an episode's environment; a policy that broke it must not break the worker."""
    try:
        env.close()
    except Exception:  # noqa: BLE001
        pass


def _play_evopolicygym(env: Any, env_id: str, index: int, seed: int, policy_class: type,
                       request: dict[str, Any], submit: dict[str, Any]) -> Any:
    """An episode under EvoPolicyGym's contract: one ``Policy(obs_space, action_space, env_meta)`` per
    submit and environment (built on its first episode), ``reset(episode_index)``, JSON observations."""
    from evotree.domains.gym import epg
    from evotree.domains.gym.episode import Episode, EpisodeTimeout

    if env_id not in submit:
        meta = epg.env_meta(env_id, env, **request.get("meta", {}))
        try:
            submit[env_id] = policy_class(meta["obs_space"], meta["action_space"], meta)
        except EpisodeTimeout:
            raise
        except BaseException as exc:  # noqa: BLE001 - SystemExit too: the policy's fault
            submit[env_id] = epg._error("init_error", exc)
    policy = submit[env_id]
    if isinstance(policy, str):  # its construction failed: the submit is void, nothing is played
        return Episode(env_id=env_id, index=index, seed=seed, finish_reason="error", message=policy,
                       category="init_error")
    image = epg.schema(env.observation_space).get("type") == "Image"
    fields = epg.play_submit_episode(env, policy, env_id, index, seed,
                                     record_actions=bool(request.get("record_actions")),
                                     trajectory=bool(request.get("trajectory")), image_obs=image)
    return Episode.from_dict(fields)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
