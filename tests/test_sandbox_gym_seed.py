"""The gym judge gives the policy nothing but observations.

EvoPolicyGym's contract: the policy never gets its episode's seed (with it, it could replay the
hidden episodes). The environment, its seed and the episode loop run in the judge's process;
the policy runs in a process of its own (in the judge phase, a nested sandbox with no ``/proc``
and its own PID namespace) that gets the spaces, the observations and a policy seed derived
from the environment and the episode's index. These are the attacks a candidate's ``policy.py``
would try, in both contracts; each reports what it found by raising at ``reset`` (the episode's
message carries the report).
"""

from __future__ import annotations

import gc
import hashlib
import inspect
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("gymnasium")

from evotree.domains.gym.catalog import make_env  # noqa: E402
from evotree.domains.gym.episode import play  # noqa: E402
from evotree.domains.gym.runner import Task, run_episodes  # noqa: E402
from evotree.harness.sandbox import check_policy_sandbox, policy_sandbox_spec
from evotree.harness.sandbox_spec import PolicySandbox  # noqa: E402

SEED = 918_273_645
ENV = "CartPole-v1"


class _Spy:
    """The in-process control: the trusted loop (``play``) seeds the globals with the seed."""

    found: set[str] = set()

    def __init__(self, *_: Any) -> None:
        pass

    def reset(self) -> None:
        import numpy as np

        if int(np.random.get_state()[1][0]) == SEED:  # type: ignore[index]
            _Spy.found.add("numpy state")
        frame = sys._getframe()
        while frame is not None:
            if SEED in [v for v in frame.f_locals.values() if isinstance(v, int)]:
                _Spy.found.add("frames")
            frame = frame.f_back
        if any(
            SEED in [v for v in info.frame.f_locals.values() if isinstance(v, int)]
            for info in inspect.stack()
        ):
            _Spy.found.add("inspect.stack")
        for obj in gc.get_objects():
            try:  # some objects answer any attribute by raising (pytest's mark generator fails
                value = getattr(obj, "seed", None)  # an unknown mark under --strict-markers)
            except (Exception, pytest.fail.Exception):
                continue
            if value == SEED:
                _Spy.found.add("gc")
                break

    def act(self, obs: Any) -> int:
        return 0


def test_the_spy_finds_the_seed_where_policy_and_environment_share_a_process() -> None:
    """The control: the attack code works (the trusted in-process loop holds the seed)."""
    _Spy.found = set()
    env = make_env(ENV)
    try:
        play(env, ENV, 0, SEED, lambda *a: _Spy(*a), summarize=False)
    finally:
        env.close()
    assert {"numpy state", "frames", "inspect.stack", "gc"} <= _Spy.found


#: The attacker's code, shared by both contracts: every channel it tries, and what each gave.
SPY = r"""
import gc, hashlib, inspect, json, os, random, re, struct, sys
import numpy as np

# the spy must not hold the seed itself (its own module would be found): a hash of its digits
HASH = {digest!r}
JUDGE_DIR = {judge_dir!r}
DIGITS = re.compile(rb"[0-9]{{6,10}}")


def _is(number):
    return 10 ** 6 <= number < 2 ** 32 and hashlib.sha256(str(number).encode()).hexdigest() == HASH


def _hit(value, depth=0):
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return _is(value)
    if isinstance(value, (str, bytes)):
        data = value.encode(errors="replace") if isinstance(value, str) else value
        return any(_is(int(m)) for m in DIGITS.findall(data))
    if depth < 2 and isinstance(value, dict):
        return any(_hit(v, depth + 1) or _hit(k, depth + 1) for k, v in list(value.items()))
    if depth < 2 and isinstance(value, (list, tuple, set)):
        return any(_hit(v, depth + 1) for v in list(value))
    return False


def _read(path, limit=1 << 20):
    try:
        with open(path, "rb") as handle:
            return handle.read(limit)
    except OSError:
        return b""


def _scan_mem(pid, needles):
    maps = _read(f"/proc/{{pid}}/maps").decode(errors="replace")
    if not maps:
        return "no maps"
    try:
        mem = open(f"/proc/{{pid}}/mem", "rb")
    except OSError as exc:
        return "mem refused: " + type(exc).__name__
    with mem:
        for line in maps.splitlines():
            fields = line.split()
            if len(fields) < 2 or not fields[1].startswith("rw"):
                continue
            start, end = (int(x, 16) for x in fields[0].split("-"))
            if end - start > 1 << 28:
                continue
            try:
                mem.seek(start)
                chunk = mem.read(end - start)
            except (OSError, OverflowError, ValueError):
                continue
            if any(n in chunk for n in needles):
                return "found"
    return "searched"


def spy(space, observation_space):
    found, tried = [], {{}}
    frame = sys._getframe()
    while frame is not None:
        seen = list(frame.f_locals.values()) + list(frame.f_globals.values())
        if any(_hit(v) for v in seen):
            found.append("frames")
            break
        frame = frame.f_back
    if any(any(_hit(v) for v in info.frame.f_locals.values()) for info in inspect.stack()):
        found.append("inspect.stack")
    for obj in gc.get_objects():
        try:
            container = isinstance(obj, (dict, list, tuple))
            if _hit(getattr(obj, "seed", None)) or (container and _hit(obj)):
                found.append("gc")
                break
        except Exception:
            continue
    if _hit(list(sys.argv)) or _hit(dict(os.environ)):
        found.append("argv or environment")
    state = np.random.get_state()
    if _is(int(state[1][0])):
        found.append("numpy state")
    for name, sp in (("action space", space), ("observation space", observation_space)):
        try:
            entropy = int(sp.np_random.bit_generator.seed_seq.entropy)
        except (AttributeError, TypeError):
            entropy = 0
        if _is(entropy):
            found.append(name + " generator")
    ppid = os.getppid()
    tried["ppid"] = ppid
    for what in ("environ", "cmdline"):
        data = _read(f"/proc/{{ppid}}/{{what}}")
        tried["parent " + what] = len(data)
        if _hit(data):
            found.append("parent " + what)
    for path in (os.path.join(JUDGE_DIR, "judge", "gym.toml"), "../judge/gym.toml",
                 f"/proc/{{ppid}}/cwd/judge/gym.toml"):
        data = _read(path)
        tried["file " + path] = len(data)
        if _hit(data):
            found.append("seed file " + path)
            seed = next(int(m) for m in DIGITS.findall(data) if _is(int(m)))
            tried["parent mem"] = _scan_mem(ppid, [struct.pack("<I", seed), str(seed).encode()])
    if "parent mem" not in tried:
        tried["parent mem"] = _scan_mem(ppid, []) if ppid > 1 else "no parent visible"
    if tried["parent mem"] == "found":
        found.append("parent mem")
    return found, tried


class Policy:
    def __init__(self, *args):
        self.args = args

    def reset(self, *_):
        # EvoPolicyGym: JSON schemas, no spaces
        if len(self.args) == 3 and isinstance(self.args[2], dict):
            space = observation_space = None
        else:
            space, observation_space = self.args[2], self.args[1]
        found, tried = spy(space, observation_space)
        raise RuntimeError("REPORT" + json.dumps({{"found": found, "tried": tried}}) + "TROPER")

    def act(self, obs):
        return 0
"""


def _report(message: str) -> dict[str, Any]:
    assert "REPORT" in message, message
    return json.loads(message.split("REPORT", 1)[1].split("TROPER", 1)[0])


def _judge_like(tmp_path: Path) -> tuple[Path, Path]:
    """A judge folder holding the seed (as ``judge/gym.toml``) and a candidate holding the spy."""
    judge = tmp_path / "judge-dir"
    (judge / "judge").mkdir(parents=True)
    (judge / "judge" / "gym.toml").write_text(f'[pools.validation]\n"{ENV}" = [{SEED}]\n')
    candidate = tmp_path / "candidate"
    candidate.mkdir()
    digest = hashlib.sha256(str(SEED).encode()).hexdigest()
    (candidate / "policy.py").write_text(SPY.format(digest=digest, judge_dir=str(judge)))
    return judge, candidate


def _spy(candidate: Path, sandbox: dict[str, Any] | None, *, epg: bool) -> dict[str, Any]:
    extra = (
        {
            "protocol": "evopolicygym",
            "meta": {"submit_index": 0, "n_episodes": 1, "remaining_after": 0},
        }
        if epg
        else None
    )
    (episode,) = run_episodes(
        candidate, [Task(ENV, 0, SEED)], timeout=120, sandbox=sandbox, extra=extra
    )
    assert episode.failed and episode.category == ("reset_error" if epg else ""), episode
    return _report(episode.message)


@pytest.mark.heavy
@pytest.mark.parametrize("epg", [False, True], ids=["evotree", "evopolicygym"])
def test_a_policy_process_holds_nothing_of_the_seed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, epg: bool
) -> None:
    """A plain policy process (train phase, sandbox off): no frame, object, generator, space,
    argument or variable of its process holds the seed. What a process of the same user may
    read of its parent through /proc is the nested sandbox's to close (next test)."""
    judge, candidate = _judge_like(tmp_path)
    monkeypatch.chdir(judge)
    report = _spy(candidate, None, epg=epg)
    in_process = {
        "numpy state",
        "action space generator",
        "observation space generator",
        "frames",
        "inspect.stack",
        "gc",
        "argv or environment",
    }
    assert not in_process & set(report["found"]), report
    assert "parent environ" not in report["found"] and "parent cmdline" not in report["found"]
    assert report["tried"]["ppid"] == os.getpid()  # the attack did look at its parent


@pytest.mark.heavy
@pytest.mark.parametrize("epg", [False, True], ids=["evotree", "evopolicygym"])
def test_in_the_nested_sandbox_no_channel_gives_the_seed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, epg: bool
) -> None:
    """The judge phase's configuration: /proc/<ppid>/mem, environ, cmdline, the judge's seed file,
    the frames, gc, the generators: nothing."""
    if not check_policy_sandbox().ok:
        pytest.skip(f"no nested sandbox here: {check_policy_sandbox().reason}")
    judge, candidate = _judge_like(tmp_path)
    monkeypatch.chdir(judge)
    report = _spy(candidate, policy_sandbox_spec(PolicySandbox()), epg=epg)
    assert report["found"] == [], report
    assert report["tried"]["parent mem"] in ("no parent visible", "no maps")
    assert all(size == 0 for key, size in report["tried"].items() if key.startswith("file "))


@pytest.mark.heavy
def test_the_proc_attack_works_on_a_plain_process_as_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control of the /proc attacks (and the documented residual of a plain policy process): as
    root, outside the nested sandbox, the spy reads the seed file through its parent's cwd and the
    seed in its parent's memory — the reason the judge phase nests."""
    if os.geteuid() != 0:
        pytest.skip("reading a parent's memory needs root (or ptrace rights) here")
    judge, candidate = _judge_like(tmp_path)
    monkeypatch.chdir(judge)
    report = _spy(candidate, None, epg=False)
    assert f"seed file /proc/{os.getpid()}/cwd/judge/gym.toml" in report["found"], report
    assert "parent mem" in report["found"], report


# ---------------------------------------------------------------------------- failures are results
BODY = (
    "class Policy:\n    def __init__(self, *a):\n        pass\n"
    "    def reset(self, *a):\n        pass\n"
    "    def act(self, obs):\n"
)

FAILING = {
    "segfault": (
        "import ctypes\n",
        "        ctypes.string_at(0)\n",
        "error",
        "died during the episode",
    ),
    "hang": (
        "import signal, time\n",
        "        signal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
        "        while True:\n            time.sleep(0.01)\n",
        "timeout",
        "it was killed",
    ),
    "garbage": (
        "import os, sys\n",
        "        os.write(int(sys.argv[2]), b'\\x00\\x00\\x00\\x05Jnope')\n        return 0\n",
        "error",
        "broke the domain's protocol",
    ),
    "forged action": (
        "import os, struct, sys\n",
        "        os.write(int(sys.argv[2]), struct.pack('>I', 14) + b'A'"
        " + struct.pack('>BcI', 0, b'i', 8) + struct.pack('>q', 7))\n        return 0\n",
        "error",
        "broke the domain's protocol",
    ),
    "exit": ("", "        raise SystemExit(3)\n", "error", "act(obs) called sys.exit(3) at step 0"),
}


@pytest.mark.heavy
@pytest.mark.parametrize("name", sorted(FAILING))
def test_a_policy_that_crashes_hangs_or_forges_is_a_failed_episode(
    tmp_path: Path, name: str
) -> None:
    from evotree.domains.gym.judge import judge_episodes
    from evotree.domains.gym.settings import JudgeSettings, References

    prelude, act, reason, text = FAILING[name]
    (tmp_path / "policy.py").write_text(prelude + BODY + act)
    settings = JudgeSettings(
        envs=[ENV], pools={}, episode_timeout_seconds=0.5, max_timeouts_per_env=5
    )
    refs = References(envs={ENV: {"random": 0.0, "expert": 500.0}})
    results = judge_episodes(
        tmp_path, [Task(ENV, i, 1_000_000 + i) for i in range(2)], settings, refs
    )
    assert len(results) == 2
    for episode, score in results:
        assert (episode.finish_reason, score) == (reason, 0.0), episode
        assert text in episode.message, episode.message
