"""``evotree demo``: the loop on the gym domain, driven by the autopilot, as the real CLI commands.

Every step is the exact command a person would type, run with ``python -P -m evotree`` (so a
folder of the demo repository can never shadow evotree's packages) and echoed with its output as
it arrives. The researcher's first recipe is the gym domain's **own default policy** (the
template's constants written as knobs, :data:`GYM_POLICY`: no planted flaw). ``evotree
autopilot`` then tries a handful of knob moves drawn in advance from ``[autopilot].seed``: each
is branched from the champion, run on the seeds the score gate asks for and gated. The demo then
shows side by side what greedy keep-if-better on one run would have kept, what evotree kept, and
the held-out truth of both (each policy played on the judge's held-out pool, which no run saw).
It promotes only when the gate found a real gain — at a pseudo-terminal, as the demo's second
person with a key made for the demo — and says so either way.
"""

from __future__ import annotations

import json
import os
import random
import re
import select
import shutil
import struct
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomli_w

from evotree.core.config_template import render_template, toml_value
from evotree.core.errors import AlreadyExists, EvotreeError, GitCommandError
from evotree.core.proc import python_command, safe_env
from evotree.domains.gym import materialize
from evotree.domains.gym.settings import (
    HIDDEN_SEED_MAX,
    HIDDEN_SEED_MIN,
    load_judge_settings,
    load_references,
)
from evotree.gates.evaluation import evaluate_gates
from evotree.gates.promote import record_promotion
from evotree.gates.signoff import CI_VARIABLES, approver_for
from evotree.gates.verify import trusted_policy
from evotree.verbs import Session, open_workspace
from evotree.verbs.autopilot import set_knob
from evotree.domains.gym.templates import render_judge_toml
from evotree.domains.gym.catalog import make_env
from evotree.domains.gym.episode import play
from evotree.domains.gym.scoring import normalized_score

__all__ = [
    "APPROVER",
    "DEMO_ENVS",
    "DEMO_PROPOSALS",
    "DemoResult",
    "GYM_KNOBS",
    "GYM_POLICY",
    "autopilot_toml",
    "gym_config_text",
    "greedy_keep",
    "gym_files",
    "gym_policy",
    "gym_truth",
    "run_demo",
]

#: The demo's second person: a signer of its own, made for the demo and named as such.
APPROVER = "reviewer@evotree-demo.invalid"
#: The gym domain's default environments that need nothing but gymnasium and run fast on 2 cores.
DEMO_ENVS = ("CartPole-v1", "Acrobot-v1", "MountainCar-v0")
#: Proposals the autopilot tries (knob moves drawn from [autopilot].seed = DEMO_SEED).
DEMO_PROPOSALS = 6
DEMO_SEED = 3
#: The hidden pools: 16 validation episodes per environment (48 tasks for the gate), 40 held-out
#: ones for the truth; drawn from a fixed seed so that the demo repeats.
DEMO_VALIDATION, DEMO_HELDOUT, DEMO_JUDGE_SEED = 16, 40, 20261204
_HEARTBEAT = 15.0  # seconds without output before the demo says the step is still running


@dataclass
class DemoResult:
    """What the demo did: the workspace, the proposals' outcomes, the two rules' picks and truths."""

    path: Path
    autopilot: dict[str, Any] | None = None
    greedy: str | None = None
    evotree: str | None = None
    truth: dict[str, float] = field(default_factory=dict)
    reports: list[str] = field(default_factory=list)
    seconds: float = 0.0
    gates_passed: bool = False
    promoted: bool = False
    verified: bool = False
    stopped: str | None = None


def _git(repo: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)
    if proc.returncode != 0:
        raise GitCommandError(
            f"`git {' '.join(args)}` failed in the demo repository: {proc.stderr.strip()}",
            fix="check that git works here (git --version)",
        )
    return proc.stdout


def _git_ok(repo: Path, *args: str) -> bool:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True).returncode == 0


def _quote(arg: str) -> str:
    return f'"{arg}"' if (" " in arg or not arg) else arg


class _Runner:
    """Runs ``evotree`` subprocesses in the demo repository, streaming their output."""

    def __init__(self, repo: Path, echo: Callable[[str], None]) -> None:
        # output goes through a pipe: without COLUMNS, rich would wrap tables at 80 columns
        self.repo, self.echo = repo, echo
        self.env = {
            "COLUMNS": str(max(120, shutil.get_terminal_size((120, 40)).columns)),
            **safe_env(),
        }
        self._commands: set[str] | None = None

    def has(self, command: str) -> bool:
        """Whether this evotree has ``command`` (from ``evotree --help``)."""
        if self._commands is None:
            proc = subprocess.run(
                python_command("-m", "evotree", "--help"),
                cwd=self.repo,
                env=self.env,
                capture_output=True,
                text=True,
            )
            names: set[str] = set()
            section = False
            for line in proc.stdout.splitlines():
                if line.strip() == "Commands:":
                    section = True
                elif section and line.startswith("  ") and not line.startswith("   "):
                    names.add(line.split()[0])
                elif section and line.strip() and not line.startswith(" "):
                    section = False
            self._commands = names
        return command in self._commands

    def quiet(self, *args: str) -> Any:
        """Run a ``--json`` command without echoing; its parsed output (None on failure)."""
        proc = subprocess.run(
            python_command("-m", "evotree", "-C", str(self.repo), *args, "--json"),
            cwd=self.repo,
            env=self.env,
            capture_output=True,
            text=True,
        )
        try:
            return json.loads(proc.stdout) if proc.returncode == 0 else None
        except json.JSONDecodeError:
            return None

    def streamed_json(self, *args: str) -> Any:
        """Echo ``$ evotree ARGS --json``, stream its progress (stderr) as it comes, return its JSON."""
        self.echo(f"$ evotree {' '.join(_quote(a) for a in args)} --json")
        proc = subprocess.Popen(
            python_command("-m", "evotree", "-C", str(self.repo), *args, "--json"),
            cwd=self.repo,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
        )

        def pump() -> None:
            assert proc.stderr is not None
            for line in proc.stderr:
                self.echo("  " + line.rstrip("\n"))

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        assert proc.stdout is not None
        out = proc.stdout.read()
        code = proc.wait()
        reader.join(timeout=5)
        try:
            data = json.loads(out)
        except json.JSONDecodeError:
            data = None
        if code != 0 or not isinstance(data, dict):
            raise EvotreeError(
                f"demo step `evotree {' '.join(args)}` failed with exit code {code}: {out[-2000:]}",
                fix=f"see the output above; the demo workspace is left at {self.repo}",
            )
        return data

    def __call__(self, *args: str, ok: tuple[int, ...] = (0,)) -> int:
        """Echo ``$ evotree ARGS``, stream its output, fail unless its exit code is in ``ok``."""
        self.echo(f"$ evotree {' '.join(_quote(a) for a in args)}")
        started = time.monotonic()
        proc = subprocess.Popen(
            python_command("-m", "evotree", "-C", str(self.repo), *args),
            cwd=self.repo,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
        )
        last = [time.monotonic()]

        def pump() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                last[0] = time.monotonic()
                self.echo(line.rstrip("\n"))

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        while reader.is_alive():
            reader.join(timeout=1.0)
            if reader.is_alive() and time.monotonic() - last[0] >= _HEARTBEAT:
                self.echo(f"  … still running ({time.monotonic() - started:.0f} s)")
                last[0] = time.monotonic()
        code = proc.wait()
        if code not in ok:
            raise EvotreeError(
                f"demo step `evotree {' '.join(args)}` failed with exit code {code}",
                fix=f"see the output above; the demo workspace is left at {self.repo} for inspection",
            )
        return code


def _at_terminal(
    argv: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    script: list[tuple[str, Callable[[re.Match[str]], str]]],
    echo: Callable[[str], None],
    timeout: float = 600.0,
) -> int:
    """Run ``argv`` on a new pseudo-terminal (its controlling terminal), answer each prompt of
    ``script`` (a regex, and the line to type when it appears) in order, echo the session and
    return the exit code. A prompt that does not appear in ``timeout`` seconds kills the process."""
    proc, master = _spawn_on_pty(argv, cwd=cwd, env=env)
    session = _PtySession(master=master, echo=echo)
    deadline = time.monotonic() + timeout
    try:
        session.converse(proc, list(script), deadline=deadline, argv=argv, timeout=timeout)
    finally:
        os.close(master)
    session.show(len(session.buffer))
    return proc.wait(timeout=60)


def _spawn_on_pty(
    argv: list[str], *, cwd: Path, env: dict[str, str]
) -> tuple[subprocess.Popen[bytes], int]:
    """Start ``argv`` in a new session whose controlling terminal is a new pseudo-terminal of 50
    rows and 120 columns; the process and the terminal's master side."""
    import fcntl
    import pty
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 120, 0, 0))  # rows, columns

    def controlling_terminal() -> None:  # runs in the child, after setsid
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
        preexec_fn=controlling_terminal,
        close_fds=True,
    )
    os.close(slave)
    return proc, master


@dataclass
class _PtySession:
    """A conversation on a pseudo-terminal: what the child wrote, and how much of it was echoed."""

    master: int
    echo: Callable[[str], None]
    buffer: str = ""
    shown: int = 0

    def show(self, upto: int) -> None:
        """Echo what the child wrote up to ``upto`` that was not echoed yet."""
        for line in self.buffer[self.shown : upto].replace("\r", "").splitlines():
            self.echo("  | " + line)
        self.shown = max(self.shown, upto)

    def answer(self, pending: list[tuple[str, Callable[[re.Match[str]], str]]]) -> bool:
        """Type the answer to the first pending prompt if it has appeared; whether it had."""
        pattern, answer = pending[0]
        found = re.search(pattern, self.buffer[self.shown :])
        if found is None:
            return False
        self.show(self.shown + found.end())
        reply = answer(found)
        self.echo(f"  | (typed) {reply}")
        os.write(self.master, (reply + "\n").encode())
        pending.pop(0)
        return True

    def converse(
        self,
        proc: subprocess.Popen[bytes],
        pending: list[tuple[str, Callable[[re.Match[str]], str]]],
        *,
        deadline: float,
        argv: list[str],
        timeout: float,
    ) -> None:
        """Read the child's output and answer its prompts until it closes the terminal (or exits
        with nothing left to answer); past ``deadline`` the child is killed."""
        while True:
            if pending and self.answer(pending):
                continue
            if time.monotonic() > deadline:
                proc.kill()
                raise EvotreeError(
                    f"demo: `{' '.join(argv[-3:])}` did not ask for "
                    f"{pending[0][0] if pending else 'nothing more'} in {timeout:.0f} s",
                    fix="see the session above",
                )
            ready, _, _ = select.select([self.master], [], [], 0.5)
            if not ready:
                if proc.poll() is not None and not pending:
                    return
                continue
            try:
                chunk = os.read(self.master, 4096)
            except OSError:  # EIO: the child closed the terminal
                return
            if not chunk:
                return
            self.buffer += chunk.decode("utf-8", "replace")
            if not pending:
                cut = self.buffer.rfind("\n") + 1
                if cut > self.shown:
                    self.show(cut)


def _approver_key(echo: Callable[[str], None]) -> tuple[Path, Path]:
    """A fresh SSH key pair for the demo's second person, outside the demo repository."""
    folder = Path(tempfile.mkdtemp(prefix="evotree-demo-approver-"))
    key = folder / "id_ed25519"
    proc = subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", APPROVER, "-f", str(key)],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise EvotreeError(
            f"demo: ssh-keygen could not make the approver's key: {proc.stderr.strip()}",
            fix="install OpenSSH's ssh-keygen (apt-get install openssh-client)",
        )
    echo(
        f"(a demo-only approver, {APPROVER}: its key {key} was made for this demo and is allowed to sign "
        "promotions in this workspace only)"
    )
    return key, key.with_suffix(".pub")


def _prepare(path: str | None) -> Path:
    if path is None:
        return Path(tempfile.mkdtemp(prefix="evotree-demo-"))
    repo = Path(path).resolve()
    if repo.exists() and (not repo.is_dir() or any(repo.iterdir())):
        raise AlreadyExists(
            f"demo path {repo} is not an empty folder", fix="pass a new or empty folder"
        )
    repo.mkdir(parents=True, exist_ok=True)
    return repo


# ---------------------------------------------------------------------------- a gym workspace with knobs
#: The gym domain's own v0 policy (domains/gym/templates.py POLICY_PY) written with its constants
#: as knobs: at these defaults it plays exactly as the template does (CartPole pushes towards the
#: lean, Acrobot torques with the first link's swing, MountainCar pushes right while moving right),
#: plus two Core-16 environments the template leaves random (MountainCarContinuous: full throttle
#: with the motion; HalfCheetah: a sine gait). ``EPSILON``: the chance of a random action each step,
#: drawn from the system's entropy, so that runs of the same policy differ (0: deterministic).
GYM_POLICY = '''\
"""A parameterized policy: the gym domain's v0 with its constants as knobs (evotree autopilot)."""

import math
import random

import numpy as np

CP_ANGLE = 1.0       # CartPole: weight of the pole's angle
CP_ANGVEL = 0.0      # CartPole: weight of the pole's angular velocity
CP_POS = 0.0         # CartPole: weight of the cart's position
AC_V1 = 1.0          # Acrobot: weight of the first link's angular velocity
AC_V2 = 0.0          # Acrobot: weight of the second link's angular velocity
MC_BACK = 0          # MountainCar: 1 = push left while moving left (0 = coast)
MCC_THROTTLE = 1.0   # MountainCarContinuous: throttle with the motion
MCC_BIAS = 0.0       # MountainCarContinuous: velocity threshold of the push
HC_PERIOD = 9.0      # HalfCheetah: steps per gait cycle
HC_AMP = 0.6         # HalfCheetah: torque amplitude
EPSILON = 0.0        # chance of a random action per step (system entropy: runs differ)

_NOISE = random.SystemRandom()


class Policy:
    def __init__(self, env_id, observation_space, action_space):
        self.env_id = env_id
        self.action_space = action_space
        self.t = 0

    def reset(self):
        self.t = 0

    def act(self, obs):
        self.t += 1
        if EPSILON > 0 and _NOISE.random() < EPSILON:
            if hasattr(self.action_space, "n"):
                return _NOISE.randrange(int(self.action_space.n))
            low, high = self.action_space.low, self.action_space.high
            return np.array([_NOISE.uniform(float(a), float(b)) for a, b in zip(low, high)], dtype=np.float32)
        if self.env_id == "CartPole-v1":
            return int(CP_ANGLE * obs[2] + CP_ANGVEL * obs[3] + CP_POS * obs[0] > 0)
        if self.env_id == "Acrobot-v1":
            return 2 if AC_V1 * obs[4] + AC_V2 * obs[5] > 0 else 0
        if self.env_id == "MountainCar-v0":
            return 2 if obs[1] >= 0 else (0 if MC_BACK else 1)
        if self.env_id == "MountainCarContinuous-v0":
            push = MCC_THROTTLE if obs[1] > MCC_BIAS else -MCC_THROTTLE
            return np.clip(np.array([push], dtype=np.float32), -1.0, 1.0)
        if self.env_id == "HalfCheetah-v5":
            phase = 2 * math.pi * self.t / max(HC_PERIOD, 1.0)
            back = [math.sin(phase - i) for i in range(3)]
            front = [math.sin(phase + math.pi / 2 - i) for i in range(3)]
            return np.clip(np.array(back + front) * HC_AMP, -1.0, 1.0).astype(np.float32)
        if self.env_id == "Pendulum-v1":
            return np.clip(np.array([-2.0 * obs[1]], dtype=np.float32), -2.0, 2.0)
        return self.action_space.sample()
'''

#: The knobs each environment's score depends on: (low, high, step).
GYM_KNOBS: dict[str, dict[str, tuple[float, float, float]]] = {
    "CartPole-v1": {"CP_ANGVEL": (-1.0, 2.0, 0.5), "CP_POS": (-0.5, 0.5, 0.25)},
    "Acrobot-v1": {"AC_V1": (-1.0, 2.0, 0.5), "AC_V2": (-1.0, 1.0, 0.5)},
    "MountainCar-v0": {"MC_BACK": (0, 1, 1)},
    "MountainCarContinuous-v0": {
        "MCC_THROTTLE": (0.25, 1.0, 0.25),
        "MCC_BIAS": (-0.02, 0.02, 0.01),
    },
    "HalfCheetah-v5": {"HC_PERIOD": (5.0, 15.0, 1.0), "HC_AMP": (0.2, 1.0, 0.1)},
}


def gym_policy(**values: float) -> str:
    """:data:`GYM_POLICY` with some knobs set (e.g. ``EPSILON=0.1``)."""
    text = GYM_POLICY
    for name, value in values.items():
        text = set_knob(text, name, value, isinstance(value, int))
    return text


def autopilot_toml(
    envs: Sequence[str],
    *,
    max_proposals: int = 8,
    patience: int = 3,
    seed: int = 0,
    knobs_only: bool = False,
) -> str:
    """The ``[autopilot]`` section of the knobs of ``envs`` over ``policy.py`` (``knobs_only``: the
    ``[autopilot.knobs.NAME]`` tables alone, for a file whose ``[autopilot]`` is already set)."""
    knobs = {
        name: {"low": low, "high": high, "step": step}
        for env_id in envs
        for name, (low, high, step) in GYM_KNOBS.get(env_id, {}).items()
    }
    if knobs_only:
        return "\n" + tomli_w.dumps({"autopilot": {"knobs": knobs}}) if knobs else "\n"
    section = {
        "recipe": "policy.py",
        "max_proposals": max_proposals,
        "patience": patience,
        "seed": seed,
        "knobs": knobs,
    }
    return "\n" + tomli_w.dumps({"autopilot": section})


def gym_config_text(
    envs: Sequence[str], *, max_proposals: int = 6, patience: int = 3, seed: int = 0
) -> str:
    """The gym template's ``evotree.toml`` (its comments kept) with its ``[autopilot]`` set to
    search ``policy.py``'s knobs of ``envs`` and no episode budget; each value written by
    :func:`~evotree.core.config_template.toml_value` (tomli_w), none quoted by hand."""
    text = render_template("gym")
    for key, value in (
        ("recipe", "policy.py"),
        ("max_proposals", max_proposals),
        ("patience", patience),
        ("seed", seed),
    ):  # the template's [autopilot] section, set (each key once in it)
        line = f"{key} = {toml_value(value)}"
        text = re.sub(
            rf"(?m)^(\[autopilot\][\s\S]*?)^{key} = .*$",
            lambda m, line=line: m.group(1) + line,
            text,
            count=1,
        )
    text = re.sub(r"(?m)^knobs = \{\}\n", "", text, count=1) + autopilot_toml(envs, knobs_only=True)
    return re.sub(r"(?m)^max_episodes = \d+$", f"max_episodes = {toml_value(0)}", text)


def gym_files(
    repo: Path,
    envs: Sequence[str],
    *,
    policy: str,
    validation: int,
    heldout: int,
    train: int = 2,
    max_proposals: int = 6,
    patience: int = 3,
    seed: int = 0,
    judge_seed: int | None = None,
    extra_toml: str = "",
) -> dict[str, Any]:
    """Write a gym workspace's files into the git repository ``repo`` (evotree.toml with the
    ``[autopilot]`` knobs of ``envs``, ``policy``, gym.toml, the judge's pools and references);
    ``judge_seed`` fixes the hidden pools (a demo and a benchmark repeat), else they are drawn at
    random. Returns the pools and references, for a held-out truth kept outside the workspace."""

    text = gym_config_text(envs, max_proposals=max_proposals, patience=patience, seed=seed)
    (repo / "evotree.toml").write_text(text + extra_toml)
    (repo / "policy.py").write_text(policy)
    if judge_seed is not None:
        rng = random.Random(judge_seed)
        draw = rng.sample(
            range(HIDDEN_SEED_MIN, HIDDEN_SEED_MAX), len(envs) * (validation + heldout)
        )
        pools = {
            "validation": {
                e: draw[i * validation : (i + 1) * validation] for i, e in enumerate(envs)
            }
        }
        rest = draw[len(envs) * validation :]
        pools["heldout"] = {e: rest[i * heldout : (i + 1) * heldout] for i, e in enumerate(envs)}
        (repo / "judge").mkdir(exist_ok=True)
        (repo / "judge" / "gym.toml").write_text(render_judge_toml(envs, pools, timeout=30.0))
    materialize(
        repo,
        envs=envs,
        train_episodes=train,
        validation_episodes=validation,
        heldout_episodes=heldout,
        episode_timeout=30.0,
    )
    settings = load_judge_settings(repo / "judge" / "gym.toml")
    refs = load_references(repo / "judge" / "references.json")
    return {
        "envs": list(envs),
        "heldout": {e: settings.seeds("heldout", e) for e in envs},
        "validation": {e: settings.seeds("validation", e) for e in envs},
        "references": {e: refs.pair(e) for e in envs},
    }


def gym_truth(
    policy: str, judge: dict[str, Any], *, repeats: int = 1, split: str = "heldout"
) -> float:
    """The mean normalized score of ``policy`` (its text) on the ``split`` pool of ``judge`` (what
    :func:`gym_files` returned), each episode played ``repeats`` times: the truth a benchmark
    judges a champion by, computed here with the domain's own episode and scoring code."""
    # the episode and scoring code load numpy: only when a truth is computed

    namespace: dict[str, Any] = {"__name__": "evotree_truth_policy"}
    exec(compile(policy, "policy.py", "exec"), namespace)  # noqa: S102 - the benchmark's own policy text
    policy_class = namespace["Policy"]
    per_env = []
    for env_id in judge["envs"]:
        random_ret, expert_ret = judge["references"][env_id]
        env = make_env(env_id)
        scores = []
        try:
            for _ in range(repeats):
                for index, seed in enumerate(judge[split][env_id]):
                    episode = play(env, env_id, index, seed, policy_class, summarize=False)
                    scores.append(
                        0.0
                        if episode.failed
                        else normalized_score(episode.ret, random_ret, expert_ret)
                    )
        finally:
            env.close()
        per_env.append(sum(scores) / len(scores))
    return sum(per_env) / len(per_env)


def greedy_keep(
    start: tuple[str, float], tried: Sequence[tuple[str, float | None]]
) -> tuple[str, float]:
    """What greedy keep-if-better on one run keeps: each tried version whose one run scores above
    the kept one's run replaces it, in order. ``start``: the champion and its run's score."""
    kept = start
    for version, value in tried:
        if value is not None and value > kept[1]:
            kept = (version, value)
    return kept


def _first_value(records: Sequence[Any]) -> float | None:
    for record in sorted(
        records, key=lambda r: (r.seed if r.seed is not None else 1 << 30, r.started_at)
    ):
        if (
            record.status == "succeeded"
            and record.headline
            and isinstance(record.headline.get("value"), (int, float))
        ):
            return float(record.headline["value"])
    return None


def run_demo(
    path: str | None,
    *,
    keep: bool = True,
    echo: Callable[[str], None] = print,
    proposals: int = DEMO_PROPOSALS,
) -> DemoResult:
    """Create a gym workspace at ``path`` (default: a temp folder) and let the autopilot walk the loop."""
    started = time.monotonic()
    demo = _Demo(_prepare(path), echo, proposals)
    result = demo.result
    steps: list[tuple[str, Callable[[], None]]] = [
        (
            "create a repository with the gym domain's default policy, and a demo-only approver",
            demo.setup_repo,
        ),
        ("make it a workspace of the gym domain (v0 = that policy)", demo.init),
        (
            "the autopilot tries a handful of proposals; a person signs only what the gates pass",
            demo.autopilot,
        ),
        (
            "side by side: greedy keep-if-better, evotree, and the held-out truth of both",
            demo.side_by_side,
        ),
        ("the tree: what was kept, what is negative evidence", demo.tree),
    ]
    try:
        for number, (title, step) in enumerate(steps, start=1):
            echo(f"\n[{number}/{len(steps)}] {title}  ({time.monotonic() - started:.0f} s)")
            step()
    finally:
        if not keep:
            shutil.rmtree(demo.repo, ignore_errors=True)
        if "private" in demo.keys:
            shutil.rmtree(demo.keys["private"].parent, ignore_errors=True)
    result.seconds = time.monotonic() - started
    echo(f"\ndone in {result.seconds:.0f} s.")
    if result.promoted:
        echo(
            f"{result.evotree} is the champion: the gate found a real gain, promoted by {APPROVER} (the demo's "
            f"second person), verified. Held-out truth: v0 {result.truth.get('v0', float('nan')):.4f}, "
            f"{result.evotree} {result.truth.get(result.evotree or 'v0', float('nan')):.4f}."
        )
    else:
        echo(f"nothing promoted: {result.stopped}")
    if keep:
        echo(f"workspace: {demo.repo}")
    return result


class _Demo:
    """The demo's steps on one repository, sharing what each step leaves for the next."""

    def __init__(self, repo: Path, echo: Callable[[str], None], proposals: int) -> None:
        self.repo, self.echo, self.proposals = repo, echo, proposals
        self.evotree = _Runner(repo, echo)
        self.result = DemoResult(path=repo)
        #: the demo-only approver's key pair ("private", "public")
        self.keys: dict[str, Path] = {}
        #: the judge's settings gym_files wrote (the held-out truth reads them)
        self.judge: dict[str, Any] = {}
        self._code_shown = ""

    def setup_repo(self) -> None:
        """A repository holding the gym domain's default policy, and the approver's key."""
        repo, echo = self.repo, self.echo
        echo(f"demo repository: {repo}")
        _git(repo, "init", "--quiet", "-b", "main")
        if not _git_ok(repo, "config", "user.name") or not _git_ok(repo, "config", "user.email"):
            _git(repo, "config", "user.name", "evotree demo")
            _git(repo, "config", "user.email", "demo@evotree.invalid")
        (repo / "README.md").write_text("# A control policy, versioned with evotree\n")
        self.judge.update(
            gym_files(
                repo,
                DEMO_ENVS,
                policy=GYM_POLICY,
                validation=DEMO_VALIDATION,
                heldout=DEMO_HELDOUT,
                max_proposals=self.proposals,
                patience=3,
                seed=DEMO_SEED,
                judge_seed=DEMO_JUDGE_SEED,
            )
        )
        echo(
            f"(the researcher's first recipe: the gym domain's own default policy for {', '.join(DEMO_ENVS)}, "
            "its constants written as knobs (policy.py); evotree.toml's [autopilot] declares each knob's range "
            "and step; init keeps it as v0)"
        )
        echo(
            f"(the judge's hidden pools are drawn from a fixed seed so the demo repeats: {DEMO_VALIDATION} "
            f"validation and {DEMO_HELDOUT} held-out episodes per environment; `evotree init` draws them at random)"
        )
        # folders named like evotree's packages: the demo proves they cannot shadow it
        for name in ("skills", "domains"):
            (repo / name).mkdir()
            (repo / name / "__init__.py").write_text(
                f"raise ImportError('user {name}/ shadowed evotree')\n"
            )
        _git(repo, "add", "-A")
        _git(repo, "commit", "--quiet", "-m", "initial commit")
        self.keys["private"], self.keys["public"] = _approver_key(echo)

    def init(self) -> None:
        self.evotree("init", "--domain", "gym", "--signer", f"{APPROVER}={self.keys['public']}")

    def autopilot(self) -> None:
        """The autopilot's proposals; each version that passes every gate is promoted, then it goes on."""
        echo, proposals, result = self.echo, self.proposals, self.result
        echo(
            f"(the autopilot tries {proposals} knob moves drawn in advance from [autopilot].seed; for each it "
            "branches from the champion, commits, runs the seeds the score gate asks for - the champion's "
            "re-runs first - and evaluates the gates. It never signs: when a version passes every gate it stops "
            "for a person's sign-off, which the demo's second person gives, and the autopilot goes on from the "
            "new champion with the rest of the sequence)"
        )
        outcomes: list[dict[str, Any]] = []
        data: dict[str, Any] = {}
        start_champion = "v0"
        while len(outcomes) < proposals:
            args = ["autopilot", "--max-proposals", str(proposals - len(outcomes)), "--jobs", "2"]
            data = self.evotree.streamed_json(
                *args, *(["--skip", str(len(outcomes))] if outcomes else [])
            )
            outcomes += data["outcomes"]
            waiting = data.get("awaiting_signoff")
            if waiting:
                result.gates_passed = True
                self.promote(waiting)
                continue
            break
        for o in outcomes:
            delta = f"Δ {o['delta']:+.4f}" if isinstance(o.get("delta"), (int, float)) else ""
            echo(
                f"  {o['version'] or '-':>4}  {o['status']:<13} {o['verdict'] or '':<11} {delta:<10} "
                f"{o['runs']} run(s)  {o['proposal']['summary']}"
            )
        echo(f"  stopped: {data.get('stopped')}: {data.get('stop_reason')}")
        result.autopilot = {"start_champion": start_champion, "outcomes": outcomes, "last": data}
        result.evotree = str(Session(self.repo).open().champion())
        if not result.promoted:
            result.stopped = (
                "no proposal passed the gates: nothing is promoted, v0 stays the champion"
            )

    def side_by_side(self) -> None:
        """What greedy keep-if-better would have kept beside what the gates kept, with held-out truth."""
        echo, result = self.echo, self.result
        verbs = Session(self.repo)
        assert result.autopilot is not None
        start = result.autopilot["start_champion"]
        v0_value = _first_value(verbs.runs(start))
        tried = [
            (o["version"], _first_value(verbs.runs(o["version"])))
            for o in result.autopilot["outcomes"]
            if o.get("version") and o["status"] in ("passed", "not_passed")
        ]
        greedy, greedy_value = greedy_keep(
            (start, v0_value if v0_value is not None else float("-inf")), tried
        )
        result.greedy = greedy
        echo(f"{'rule':<34} {'keeps':<6} {'its first run':>14} {'held-out truth':>15}")
        rows = [
            ("the start (the domain's default)", start),
            ("greedy keep-if-better on one run", greedy),
            ("evotree (the gates)", result.evotree or start),
        ]
        first = dict(tried, **{start: v0_value})
        for label, version in rows:
            if version not in result.truth:
                policy = _git(self.repo, "show", f"evotree/{version}:policy.py")
                result.truth[version] = gym_truth(policy, self.judge, repeats=1)
            value = first.get(version)
            shown = f"{value:.4f}" if value is not None else "-"
            echo(f"{label:<34} {version:<6} {shown:>14} {result.truth[version]:>15.4f}")
        if greedy != result.evotree:
            better = (
                "above"
                if result.truth[greedy] > result.truth[result.evotree or start]
                else "not above"
            )
            echo(
                f"(greedy would keep {greedy}, whose held-out truth is {better} what evotree kept: "
                f"{result.truth[greedy]:.4f} vs {result.truth[result.evotree or start]:.4f})"
            )
        else:
            echo(f"(greedy and evotree keep the same version, {greedy})")

    def promote(self, version: str) -> None:
        """The second person's promotion at a pseudo-terminal, then ``evotree verify``."""
        echo, keys = self.echo, self.keys
        echo(
            f"(the gate found a real gain: {version}. The demo now plays the second person, {APPROVER}: "
            "promotion needs someone other than the version's creator, at a terminal, typing the version and a "
            "one-time code, and signing with a key the champion allows; the demo answers at a pseudo-terminal "
            "with the demo-only key)"
        )
        echo(f"$ evotree promote {version} --key {keys['private']}")
        # the demo's own stand-in person types at the terminal, so a CI variable of the shell
        # that started the demo is not passed on (a real promotion from CI stays refused)
        env = {k: v for k, v in safe_env().items() if k not in CI_VARIABLES}
        env.update({"TERM": "dumb", "NO_COLOR": "1", "COLUMNS": "120"})
        code = _at_terminal(
            python_command(
                "-m",
                "evotree",
                "-C",
                str(self.repo),
                "promote",
                version,
                "--key",
                str(keys["private"]),
            ),
            cwd=self.repo,
            env=env,
            echo=echo,
            script=self._promote_script(version),
        )
        if code != 0:
            raise EvotreeError(
                f"demo: `evotree promote {version}` exited {code}",
                fix=f"see the session above; the workspace is left at {self.repo}",
            )
        self.result.promoted = True
        self.evotree("verify")
        self.result.verified = True

    def _promote_script(self, version: str) -> list[tuple[str, Callable[[re.Match[str]], str]]]:
        """The prompts of ``evotree promote`` and the second person's answers."""

        def remember(match: re.Match[str]) -> str:
            self._code_shown = match.group(1)
            return version

        return [
            (r"one-time code \S*?([A-Z2-9]{4}-[A-Z2-9]{4})[\s\S]*?version id: ", remember),
            (r"one-time code: ", lambda m: self._code_shown),
            (r"decision \[approve/revise/abort\]: ", lambda m: "approve"),
        ]

    def tree(self) -> None:
        if not self.result.promoted:
            self.echo(
                f"(nothing promoted: {self.result.stopped}; the gate found no real gain among these proposals)"
            )
        self.evotree("tree")


class SecondSigner:
    """A benchmark's or a test's second person: an SSH key made in a temporary folder for this
    workspace only, allowed at init (``public``), signing a passed version through the library
    (the gates evaluated again, then :func:`evotree.gates.promote.record_promotion`). The autopilot
    never signs; this is the person it waits for, stood in by code where no person can be."""

    def __init__(self, principal: str = "bench-signer@evotree-bench.invalid") -> None:
        self.principal = principal
        self.folder = Path(tempfile.mkdtemp(prefix="evotree-signer-"))
        self.key = self.folder / "id_ed25519"
        proc = subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", principal, "-f", str(self.key)],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            raise EvotreeError(
                f"ssh-keygen could not make the second signer's key: {proc.stderr.strip()}",
                fix="install OpenSSH's ssh-keygen",
            )
        self.public = self.key.with_suffix(".pub")
        self.root: Path | None = None

    @property
    def signer_arg(self) -> str:
        """``EMAIL=KEY.pub`` for ``evotree init --signer`` / ``evotree.api.init(signers=...)``."""
        return f"{self.principal}={self.public}"

    def __call__(self, version: str) -> bool:
        """Promote ``version`` of the workspace at :attr:`root` when every gate passes; whether it did."""
        assert self.root is not None, "set SecondSigner.root to the workspace first"
        ws = open_workspace(self.root)
        policy = trusted_policy(ws)
        report = evaluate_gates(ws, version, policy=policy)
        if not report.passed:
            return False
        approver = approver_for(policy, self.key, ws.resolve(version).created_by)
        record_promotion(ws, policy, report, approver)
        return True

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
