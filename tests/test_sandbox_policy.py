"""Candidate code the judge runs plays in a nested sandbox, tested as an attacker.

The gym judge is trusted code from the champion, but it plays the *candidate's* `policy.py` in
worker processes. Each worker runs in a sandbox of its own, nested in the judge's
(`evotree.harness.sandbox_nested.policy_sandbox_argv`): it sees the system, the Python environment
and the candidate's files, nothing of the judge. The hostile `policy.py` below, at import and
inside `act()`, tries to read the judge's hidden `judge/gym.toml` and `judge/references.json`
(relative to its cwd, through `/proc/self/cwd`, `/proc/<ppid>/cwd`, every `/proc/<pid>/cwd`,
every path in its environment, the absolute paths of the workspace's judge folders), to write
into the judge's evidence folder, to find, kill and ptrace the judge, to reach a loopback
server (the judge itself may use the network here), to write a host sysctl and to make a user
namespace of its own. It prints what it achieved to stderr (the phase's log).

`test_the_attacks_work_without_the_nested_sandbox` shows that the same code reads the judge's
files, its parent's environment and reaches its parent when the worker is a plain subprocess
(what the judge did before); the other tests show that every attack fails in a real `evotree
run`, that an honest policy's per-episode returns are bit-identical with and without the
nested sandbox, that hangs, exits and crashes of a nested worker are handled as before (and
leave no process behind), that a judge whose machine cannot nest fails closed, that only the
judge phase gets the user namespace and `$EVOTREE_POLICY_SANDBOX`, that `/proc/sys` is read-only
in the phases, and that with `[sandbox] mode = "off"` workers run as before.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "gymnasium", reason="the gym domain needs gymnasium: pip install 'evotree[gym]'"
)

from conftest import commit_file, git, make_repo
from evotree.domains.gym import materialize
from evotree.domains.gym.runner import Task, WorkerBroken, run_episodes
from evotree.domains.gym.settings import load_judge_settings
from evotree.gates.runs import run_versions
from evotree.harness import sandbox
from evotree.harness.records import RunRecord
from evotree.harness.sandbox import check_policy_sandbox, policy_sandbox_spec, wrap
from evotree.harness.sandbox_spec import ENV_POLICY_SANDBOX, JUDGE_UID, PolicySandbox, SandboxSpec

from evotree.api import init as evotree_init
from evotree.core.config_template import render_template
from evotree.core.versions import create_version
from evotree.core.workspace import Workspace

# tens of seconds of real sandboxes: run apart (make test-heavy; CI runs it after make test)
pytestmark = pytest.mark.heavy

ENVS = ("CartPole-v1", "Pendulum-v1")  # Pendulum: float returns, so "bit-identical" means something
MARK = "EVOTREE-POLICY-REPORT "

#: An honest, deterministic controller for both environments.
CONTROLLER = """\
import numpy as np


class Policy:
    def __init__(self, env_id, observation_space, action_space):
        self.env_id = env_id

    def reset(self):
        pass

    def act(self, obs):
        if self.env_id == "CartPole-v1":
            x, x_dot, theta, theta_dot = obs
            return int(theta + 0.5 * theta_dot + 0.05 * x + 0.1 * x_dot > 0.0)
        cos, sin, speed = obs
        angle = np.arctan2(sin, cos)
        torque = -10.0 * angle - 1.0 * speed if abs(angle) < 0.8 else (2.0 if speed >= 0 else -2.0)
        return np.array([np.clip(torque, -2.0, 2.0)], dtype=np.float32)
"""

#: The attack. ``WS``, ``PORT`` and ``DESTRUCTIVE`` are filled in by the test.
ATTACK = '''\
import ctypes, glob, json, os, signal, socket, sys

WS, PORT, DESTRUCTIVE = {ws!r}, {port!r}, {destructive!r}
libc = ctypes.CDLL(None, use_errno=True)
JUDGE_MARKERS = ("[pools", "expert", "replay_fraction")


def read(path):
    try:
        with open(path, "rb") as handle:
            return handle.read(1 << 16).decode(errors="replace")
    except OSError:
        return None


def judge_file_reads():
    ppid = os.getppid()
    candidates = ["judge/gym.toml", "judge/references.json", "../judge/gym.toml",
                  "/proc/self/cwd/judge/gym.toml", f"/proc/{{ppid}}/cwd/judge/gym.toml",
                  f"/proc/{{ppid}}/cwd/judge/references.json"]
    candidates += [f"{{d}}/cwd/judge/gym.toml" for d in glob.glob("/proc/[0-9]*")]
    for value in os.environ.values():  # every path the environment names, and its parents
        for part in value.split(os.pathsep):
            if part.startswith("/"):
                candidates += [os.path.join(part, "judge", "gym.toml"),
                               os.path.join(os.path.dirname(part), "judge", "gym.toml")]
    candidates += glob.glob(f"{{WS}}/.evotree/judge/*/judge/*")
    candidates += glob.glob("/**/judge/references.json", recursive=False)
    found = []
    for path in dict.fromkeys(candidates):
        text = read(path)
        if text and any(m in text for m in JUDGE_MARKERS):
            found.append(path)
    return found, len(candidates)


def parent_environ():
    text = read(f"/proc/{{os.getppid()}}/environ") or ""
    return sorted({{k.split("=", 1)[0] for k in text.split("\\0") if k.startswith("EVOTREE_")}})


def evidence_writes():
    targets = glob.glob(f"{{WS}}/.evotree/runs/*/evidence/eval") + ["../evidence/eval"]
    env = read(f"/proc/{{os.getppid()}}/environ") or ""
    targets += [k.split("=", 1)[1] for k in env.split("\\0") if k.startswith("EVOTREE_EVIDENCE_DIR=")]
    if os.environ.get("EVOTREE_EVIDENCE_DIR"):
        targets.append(os.environ["EVOTREE_EVIDENCE_DIR"])
    done = []
    for folder in dict.fromkeys(targets):
        try:
            with open(os.path.join(folder, "forged-by-policy.txt"), "a") as handle:
                handle.write("forged\\n")
            done.append(folder)
        except OSError:
            pass
    return done


def visible_pids():
    seen = []
    for pid in range(1, 1 << 15):
        try:
            os.kill(pid, 0)
            seen.append(pid)
        except PermissionError:
            seen.append(pid)
        except ProcessLookupError:
            pass
    return seen


def judge_pids():
    found = []
    for d in glob.glob("/proc/[0-9]*"):
        if "evotree.domains.gym.judge" in (read(d + "/cmdline") or "").replace("\\0", " "):
            found.append(int(d.rsplit("/", 1)[1]))
    return found


def hit(pids):
    """Kill and ptrace the judge's processes (DESTRUCTIVE, and not in the train phase, whose parent is the
    train command), or only check that we could (signal 0)."""
    destructive = DESTRUCTIVE and not IN_TRAIN
    out = {{}}
    for pid in pids:
        if pid == os.getpid():
            continue
        try:
            os.kill(pid, signal.SIGKILL if destructive else 0)
            out[f"kill {{pid}}"] = True
        except OSError:
            out[f"kill {{pid}}"] = False
        if destructive:
            out[f"ptrace {{pid}}"] = attached = libc.ptrace(16, pid, None, None) == 0  # PTRACE_ATTACH
            if attached:  # let go again (a stopped process could hold up the phase until its budget)
                try:
                    os.waitpid(pid, 0x40000000)  # __WALL
                except OSError:
                    pass
                libc.ptrace(17, pid, None, None)  # PTRACE_DETACH
    return out


def connects():
    try:
        with socket.create_connection(("127.0.0.1", PORT), timeout=2) as conn:
            conn.sendall(b"policy")
        return True
    except OSError:
        return False


def writes_sysctl():
    path = "/proc/sys/vm/swappiness"  # writes back the value it has: nothing changes if it works
    try:
        value = open(path).read()
        with open(path, "w") as handle:
            handle.write(value)
        return True
    except OSError:
        return False


def capabilities():
    class H(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class D(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

    h, d = H(0x20080522, 0), (D * 2)()
    libc.capget(ctypes.byref(h), d)
    return d[0].effective | d[1].effective


def writes_own_files():
    try:
        with open("policy.py", "a"):
            return True
    except OSError:
        return False


def attack(where):
    reads, tried = judge_file_reads()
    pids = judge_pids()
    report = {{
        "where": where, "cwd": os.getcwd(), "uid": os.getuid(), "pid": os.getpid(), "ppid": os.getppid(),
        "proc": os.path.isdir("/proc/self"), "judge_reads": reads, "paths_tried": tried,
        "parent_env": parent_environ(), "parent_environ_readable": read(f"/proc/{{os.getppid()}}/environ") is not None,
        "evidence_writes": evidence_writes(), "visible_pids": visible_pids(),
        "judge_pids": pids, "capabilities": capabilities(), "no_new_privs": libc.prctl(39, 0, 0, 0, 0),
        "connects": connects(), "writes_sysctl": writes_sysctl(), "writes_own_files": writes_own_files(),
        "env_keys": sorted(k for k in os.environ if k.startswith("EVOTREE_")), "pwd": os.environ.get("PWD"),
        "oldpwd": os.environ.get("OLDPWD"),
    }}
    report["hits"] = hit(pids + ([os.getppid()] if os.getppid() > 1 else []))
    report["own_userns"] = libc.unshare(0x10000000) == 0  # CLONE_NEWUSER: last, it changes our uid
    sys.stderr.write({mark!r} + json.dumps(report) + "\\n")
    sys.stderr.flush()


IN_TRAIN = "EVOTREE_PHASE=train" in (read(f"/proc/{{os.getppid()}}/environ") or "")  # before unshare()
attack("import")
_acted = False

'''

ATTACK_ACT = """\
    def act(self, obs):
        global _acted
        if not _acted:
            _acted = True
            attack("act")
        return _act(self, obs)
"""


def hostile_policy(ws: Path | str, port: int, *, destructive: bool) -> str:
    """The attack followed by the honest controller (so the hostile run still scores normally)."""
    head = ATTACK.format(ws=str(ws), port=port, destructive=destructive, mark=MARK)
    controller = CONTROLLER.replace("import numpy as np\n", "")
    return (
        "import numpy as np\n"
        + head
        + controller
        + "\n\n_act = Policy.act\n\n\nclass Policy(Policy):\n"
        + ATTACK_ACT
    )


def reports(text: str) -> list[dict[str, Any]]:
    return [json.loads(line[len(MARK) :]) for line in text.splitlines() if line.startswith(MARK)]


class LoopbackServer:
    """A TCP server on 127.0.0.1 that counts the connections it accepts."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            conn.close()
            self.accepted += 1

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=5)
        self.sock.close()


def gym_workspace(
    path: Path, *, sandbox_config: dict[str, str] | None = None, validation: int = 3
) -> Workspace:
    """A gym workspace (small pools) whose champion's evotree.toml has ``sandbox_config`` in [sandbox]."""
    repo = make_repo(path)
    materialize(
        repo,
        envs=ENVS,
        train_episodes=1,
        validation_episodes=validation,
        heldout_episodes=1,
        episode_timeout=30.0,
    )
    lines = render_template("gym").splitlines()
    section = lines.index("[sandbox]")
    for key, value in (sandbox_config or {}).items():
        at = next(i for i in range(section, len(lines)) if lines[i].startswith(f"{key} ="))
        lines[at] = f"{key} = {value}"
    (repo / "evotree.toml").write_text("\n".join(lines) + "\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "gym files")
    evotree_init(repo, domain="gym")
    return Workspace.open(repo)


def version(ws: Workspace, source: str) -> str:
    rec = create_version(ws, hypothesis="h", parent="champion")
    commit_file(ws.root / rec.worktree, "policy.py", source, "policy")
    return rec.id


def run_dir(ws: Workspace, record: RunRecord) -> Path:
    return ws.root / ".evotree" / "runs" / record.run_id


def episode_returns(ws: Workspace, record: RunRecord) -> dict[str, float]:
    import duckdb

    path = run_dir(ws, record) / "signals.parquet"
    rows = (
        duckdb.connect()
        .execute(f"SELECT metric, value FROM read_parquet('{path}') WHERE phase = 'eval'")
        .fetchall()
    )
    return {metric: value for metric, value in rows if metric.endswith("/return")}


def hidden_seeds(ws: Workspace) -> dict[str, list[int]]:
    from evotree.harness.judge_store import judge_in_force, materialise_judge

    with tempfile.TemporaryDirectory(prefix="judge-view-") as tmp:
        materialise_judge(ws.git.repo, judge_in_force(ws), Path(tmp) / "view")
        settings = load_judge_settings(Path(tmp) / "view" / "judge" / "gym.toml")
    return {env_id: settings.seeds("validation", env_id) for env_id in ENVS}


# ---------------------------------------------------------------------------- the real run
@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """An honest and a hostile version of one workspace, run (sandboxed; the judge may use the network)."""
    if not check_policy_sandbox().ok:
        pytest.skip(f"no nested sandbox here: {check_policy_sandbox().reason}")
    base = tmp_path_factory.mktemp("policy-sandbox")
    server = LoopbackServer()
    try:
        ws = gym_workspace(base / "w", sandbox_config={"eval_network": "true"})
        honest = version(
            ws,
            CONTROLLER + "\nimport os, sys\nsys.stderr.write('honest policy in ' + os.getcwd() + "
            "'\\n')\n",
        )
        attacker = version(ws, hostile_policy(ws.root, server.port, destructive=True))
        records = {r.version: r for r in run_versions(ws, [honest, attacker])}
        yield {
            "ws": ws,
            "honest": records[honest],
            "attacker": records[attacker],
            "server": server,
            "eval": reports((run_dir(ws, records[attacker]) / "logs" / "eval.err").read_text()),
            "train": reports((run_dir(ws, records[attacker]) / "logs" / "train.err").read_text()),
        }
    finally:
        server.close()


def judged(hostile: dict[str, Any]) -> list[dict[str, Any]]:
    """The hostile policy's reports from the judge phase: one at import, one from act()."""
    assert [r["where"] for r in hostile["eval"]] == ["import", "act"], hostile["eval"]
    return hostile["eval"]


def test_the_hostile_policy_is_judged_normally(hostile: dict[str, Any]) -> None:
    """Every attack ran (at import and in act(), in the judge's worker), the judge survived them all and
    scored the hostile policy exactly like the honest one (same controller, same episodes)."""
    attacker, honest = hostile["attacker"], hostile["honest"]
    assert honest.status == "succeeded", honest.error
    assert attacker.status == "succeeded", (attacker.error, attacker.notes)
    assert [r["where"] for r in hostile["eval"]] == ["import", "act"]
    assert (
        attacker.phases["eval"]["network"] is True
    )  # the judge itself could reach the loopback server
    ws = hostile["ws"]
    assert episode_returns(ws, attacker) == episode_returns(ws, honest)
    assert attacker.headline == honest.headline


def test_the_policy_cannot_read_the_judges_hidden_files(hostile: dict[str, Any]) -> None:
    for report in judged(hostile):
        assert report["judge_reads"] == [], report["judge_reads"]
        assert (
            report["paths_tried"] >= 6
        )  # relative, /proc/self/cwd, /proc/<ppid>/cwd, env paths, globs
        # it has no /proc (no /proc/<ppid>/cwd or environ of the judge), is in /candidate, and its
        # environment names none of the judge's folders
        assert report["proc"] is False and report["parent_environ_readable"] is False
        assert (
            report["cwd"] == "/candidate"
            and report["pwd"] in (None, "/candidate")
            and not report["oldpwd"]
        )
        assert report["env_keys"] == []


def test_the_policy_cannot_write_the_judges_evidence_or_its_own_files(
    hostile: dict[str, Any],
) -> None:
    ws = hostile["ws"]
    for report in judged(hostile):
        assert report["evidence_writes"] == []
        assert (
            report["writes_own_files"] is False
        )  # the candidate's files are read-only in its sandbox
    assert not list((ws.root / ".evotree" / "runs").glob("*/evidence/eval/forged-by-policy.txt"))


def test_the_policy_cannot_find_signal_or_ptrace_the_judge(hostile: dict[str, Any]) -> None:
    """Its PID namespace holds itself and its sandbox's reaper (pid 1): the judge has no pid it could name.
    It SIGKILLed and ptraced every judge process it found, and the run above succeeded."""
    for report in judged(hostile):
        assert report["judge_pids"] == []
        assert report["ppid"] == 1  # its "parent" is its own sandbox's init, not the judge
        assert set(report["visible_pids"]) <= {1, report["pid"]}
        assert report["hits"] == {}


def test_the_policy_has_no_network_no_privileges_and_no_namespaces_of_its_own(
    hostile: dict[str, Any],
) -> None:
    for report in judged(hostile):
        assert report["connects"] is False
        assert report["capabilities"] == 0 and report["no_new_privs"] == 1
        if policy_sandbox_spec(PolicySandbox())["disable_userns"]:  # bubblewrap >= 0.8
            assert report["own_userns"] is False
        assert report["writes_sysctl"] is False
    assert hostile["server"].accepted == 0


def test_the_train_phase_is_unchanged_and_cannot_write_host_sysctls(
    hostile: dict[str, Any],
) -> None:
    """The train phase runs the policy as before (no nesting), in the phase sandbox; it never sees the
    judge's variable, and /proc/sys is read-only there (as root, the phase is the host's uid 0)."""
    (report,) = [r for r in hostile["train"] if r["where"] == "import"][:1]
    assert report["cwd"].endswith("/candidate") and report["cwd"] != "/candidate"
    assert report["proc"] is True and "EVOTREE_RUN_ID" in report["parent_env"]
    assert ENV_POLICY_SANDBOX not in report["parent_env"]
    assert report["writes_sysctl"] is False
    assert report["judge_reads"] == [] and report["connects"] is False


def test_honest_returns_are_bit_identical_with_and_without_the_nested_sandbox(
    hostile: dict[str, Any],
) -> None:
    """The honest run (nested) against the same episodes played by plain worker subprocesses."""
    ws, record = hostile["ws"], hostile["honest"]
    assert "honest policy in /candidate" in (run_dir(ws, record) / "logs" / "eval.err").read_text()
    nested = episode_returns(ws, record)
    candidate = run_dir(ws, record) / "candidate"
    tasks = [
        Task(env_id, i, seed)
        for env_id, seeds in hidden_seeds(ws).items()
        for i, seed in enumerate(seeds)
    ]
    plain = {
        f"validation/{e.env_id}#{e.index}/return": e.ret
        for e in run_episodes(candidate, tasks, timeout=30, sandbox=None)
    }
    assert len(nested) == len(tasks) == 6
    assert nested == plain  # exact float equality
    assert any(v != int(v) for v in nested.values())  # Pendulum's returns are not integers


# ---------------------------------------------------------------------------- the runner, directly
def _judge_like_folder(base: Path) -> tuple[Path, Path, Path]:
    """A judge folder (hidden files), an evidence folder and a candidate, laid out as a run's."""
    judge = base / ".evotree" / "judge" / "run-1-abcd"
    (judge / "judge").mkdir(parents=True)
    (judge / "judge" / "gym.toml").write_text(
        '[judge]\nreplay_fraction = 0.25\n[pools.validation]\n"x" = [1]\n'
    )
    (judge / "judge" / "references.json").write_text('{"envs": {"x": {"random": 0, "expert": 1}}}')
    evidence = base / ".evotree" / "runs" / "run-1" / "evidence" / "eval"
    evidence.mkdir(parents=True)
    candidate = base / ".evotree" / "judge" / "run-1-candidate-efgh"
    candidate.mkdir(parents=True)
    return judge, evidence, candidate


def test_the_attacks_work_without_the_nested_sandbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """The control: the same attack, the worker a plain subprocess of a 'judge' (this process) whose cwd
    is a judge folder. It reads the hidden files, its parent's environment, writes the evidence and could
    signal its parent (signal 0 here). Then, nested: none of it."""
    if not check_policy_sandbox().ok:
        pytest.skip(f"no nested sandbox here: {check_policy_sandbox().reason}")
    judge, evidence, candidate = _judge_like_folder(tmp_path)
    (candidate / "policy.py").write_text(hostile_policy(tmp_path, 9, destructive=False))
    monkeypatch.chdir(judge)
    tasks = [Task("CartPole-v1", 0, 1_000_003)]

    plain = list(run_episodes(candidate, tasks, timeout=30, sandbox=None))
    (before, _) = reports(capfd.readouterr().err)
    assert plain[0].finish_reason in ("terminated", "truncated"), plain[0].message
    assert any(p.endswith("judge/gym.toml") for p in before["judge_reads"])
    assert f"/proc/{os.getpid()}/cwd/judge/gym.toml" in before["judge_reads"]
    assert before["parent_environ_readable"] is True and before["ppid"] == os.getpid()
    assert before["hits"][f"kill {os.getpid()}"] is True
    assert str(evidence) in before["evidence_writes"]
    (evidence / "forged-by-policy.txt").unlink()

    nested = list(
        run_episodes(candidate, tasks, timeout=30, sandbox=policy_sandbox_spec(PolicySandbox()))
    )
    (after, _) = reports(capfd.readouterr().err)
    assert [(e.ret, e.length, e.finish_reason) for e in nested] == [
        (e.ret, e.length, e.finish_reason) for e in plain
    ]
    assert (
        after["judge_reads"] == []
        and after["parent_environ_readable"] is False
        and after["evidence_writes"] == []
    )
    assert (
        after["ppid"] == 1
        and after["hits"] == {}
        and set(after["visible_pids"]) <= {1, after["pid"]}
    )
    assert not (evidence / "forged-by-policy.txt").exists()


def test_returns_are_bit_identical_through_the_runner(tmp_path: Path) -> None:
    if not check_policy_sandbox().ok:
        pytest.skip(f"no nested sandbox here: {check_policy_sandbox().reason}")
    (tmp_path / "policy.py").write_text(CONTROLLER)
    tasks = [Task(env_id, i, 1_000_000 + 7919 * i) for env_id in ENVS for i in range(4)]

    def play(spec: dict[str, Any] | None, workers: int) -> list[tuple[str, int, float, int, str]]:
        found = run_episodes(tmp_path, tasks, timeout=30, workers=workers, sandbox=spec)
        return sorted((e.env_id, e.index, e.ret, e.length, e.finish_reason) for e in found)

    spec = policy_sandbox_spec(PolicySandbox())
    assert play(spec, 2) == play(None, 1)


def test_hangs_and_deaths_are_handled_through_the_nested_sandbox(tmp_path: Path) -> None:
    """A worker killed for a hang dies with its sandbox (the runner kills bubblewrap); a worker's exit
    status and the signal that killed it come back through bubblewrap (128 + N) as before."""
    if not check_policy_sandbox().ok:
        pytest.skip(f"no nested sandbox here: {check_policy_sandbox().reason}")
    spec = policy_sandbox_spec(PolicySandbox())
    policies = {
        "hang": "import signal, time\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nwhile True:\n"
        "    time.sleep(0.01)\n",
        "exit": "import os\nos._exit(7)\n",
        "segv": "import ctypes\nctypes.string_at(0)\n",
    }
    expected = {"hang": "it was killed", "exit": "(exit code 7)", "segv": "(killed by SIGSEGV)"}
    for name, body in policies.items():
        folder = tmp_path / name
        folder.mkdir()
        act = textwrap.indent(body, "        ")
        (folder / "policy.py").write_text(
            "class Policy:\n    def __init__(self, e, o, a):\n        pass\n"
            "    def reset(self):\n        pass\n    def act(self, obs):\n" + act
        )
        tasks = [Task("CartPole-v1", 0, 0), Task("CartPole-v1", 1, 1)]
        episodes = list(run_episodes(folder, tasks, timeout=0.5, max_timeouts=5, sandbox=spec))
        assert [e.finish_reason for e in episodes] == [
            ("timeout" if name == "hang" else "error")
        ] * 2
        assert expected[name] in episodes[0].message, episodes[0].message
    leftover = subprocess.run(
        ["pgrep", "-f", str(tmp_path)], capture_output=True, text=True, check=False
    )
    assert leftover.stdout.strip() == ""  # no worker (or its sandbox) outlived its kill


def test_a_judge_that_cannot_nest_refuses_to_run_the_policy(tmp_path: Path) -> None:
    """Fail closed: no nested sandbox, no policy code (WorkerBroken: the judge exits 1, the run fails)."""
    (tmp_path / "policy.py").write_text(CONTROLLER + "\nraise SystemExit('the policy ran')\n")
    tasks = [Task("CartPole-v1", 0, 1)]
    with pytest.raises(
        WorkerBroken, match="cannot be isolated from the judge here: user namespaces are off"
    ):
        list(
            run_episodes(
                tmp_path, tasks, timeout=5, sandbox={"error": "user namespaces are off", "fix": "x"}
            )
        )
    spec = dict(policy_sandbox_spec(PolicySandbox()), bwrap=str(tmp_path / "no-bwrap"))
    with pytest.raises(WorkerBroken, match="not executable"):
        list(run_episodes(tmp_path, tasks, timeout=5, sandbox=spec))
    broken = dict(policy_sandbox_spec(PolicySandbox()), read_only=[str(tmp_path / "missing")])
    with pytest.raises(WorkerBroken, match="does not start here"):
        list(run_episodes(tmp_path, tasks, timeout=5, sandbox=broken))


def test_only_the_judge_phase_gets_a_user_namespace_and_the_variable(tmp_path: Path) -> None:
    judge = wrap(SandboxSpec(cwd=tmp_path, policy=PolicySandbox(read_only=(tmp_path,))), ["true"])
    train = wrap(SandboxSpec(cwd=tmp_path), ["true"])
    assert ENV_POLICY_SANDBOX not in train and "--uid" not in train
    at = judge.index("--setenv")
    assert judge[at + 1] == ENV_POLICY_SANDBOX
    spec = json.loads(judge[at + 2])
    assert str(tmp_path) in spec["read_only"] and spec["bwrap"].endswith("bwrap")
    assert "--unshare-user" in judge
    if (
        os.getuid() == 0
    ):  # a capability-less process may not map its parent's uid 0 into a new namespace
        assert judge[judge.index("--uid") + 1] == str(JUDGE_UID)
    for argv in (
        judge,
        train,
    ):  # /proc/sys read-only in every phase (writable by the host's root otherwise)
        assert " ".join(argv).count("--ro-bind /proc/sys /proc/sys") == 1


def test_a_judge_phase_sees_the_variable_and_no_capabilities(tmp_path: Path) -> None:
    probe = (
        "import os; s = dict(l.split(':', 1) for l in open('/proc/self/status') if ':' in l); "
        f"print(os.getuid(), int(s['CapEff'], 16), '{ENV_POLICY_SANDBOX}' in os.environ)"
    )
    argv = wrap(
        SandboxSpec(cwd=tmp_path, read_only=(tmp_path,), policy=PolicySandbox()),
        [sys.executable, "-I", "-c", probe],
    )
    out = subprocess.run(
        argv, capture_output=True, text=True, check=True, env=sandbox.sandbox_env(dict(os.environ))
    ).stdout.split()
    assert out[1:] == ["0", "True"]
    assert out[0] == str(JUDGE_UID if os.getuid() == 0 else os.getuid())


def test_mode_off_runs_workers_as_before(tmp_path: Path) -> None:
    ws = gym_workspace(tmp_path / "w", sandbox_config={"mode": '"off"'}, validation=1)
    v1 = version(
        ws,
        CONTROLLER + "\nimport os, sys\nsys.stderr.write('cwd=' + os.getcwd() + "
        "' var=' + str(bool(os.environ.get('" + ENV_POLICY_SANDBOX + "'))) + '\\n')\n",
    )
    (record,) = run_versions(ws, [v1])
    assert record.status == "succeeded", record.error
    assert record.phases["eval"]["sandbox"] == "off"
    log = (run_dir(ws, record) / "logs" / "eval.err").read_text()
    assert "cwd=/candidate" not in log and "cwd=" + str(ws.root / ".evotree" / "judge") in log
    assert "var=False" in log
