"""Red team of the gym phases' early-started policy process (issue 29, item 6).

Commits 14f6312, c32ea3e and ab02f55 start the policy's process first thing in the judge
phase and the train phase (``launch.prestart``), before the phase imports numpy, gymnasium or
reads its settings; the phase's first worker adopts it, one for another candidate or sandbox is
killed, an unadopted one is killed when ``main`` returns (``launch.discard``). Written by
someone who did not write it, as a candidate's ``policy.py`` would attack it. Each attack
asserts that it ran (a control: the same probe where it works, or a count of what it did); an
attack that wins is an ``xfail(strict=False)`` naming its mechanism.

Stopped in the judge phase's nested sandbox (see each test): the early process looks for its
judge (files, ``/proc``, memory, the pids it can name, the descriptors it can copy from its
parent with ``pidfd_getfd``) at import, while the judge still imports, and again at reset, in
both contracts (evotree's, two workers side by side; EvoPolicyGym's); it leaves marks in its
``/tmp``, ``/dev/shm`` and ``$HOME`` for the process started after it (none found); it tries to
replace the judge's references before the judge reads them; it signals and ptraces its parent
from the window (its sandbox's init: the judge plays on and scores it); its view (environment,
descriptors, signal dispositions and mask, limits, session, credentials) is the view of a
process started late, judge and train phase; a daemon it forks at import does not outlive a
judge that stops before its episodes; a process of a previous candidate in the same folder is
never adopted by a later ``judge.main``, and a second ``prestart`` starts no second process (a
waiting process for the same folder is adopted as it loaded policy.py: the key is the folder,
not its content; no candidate reaches that); frames it writes before its adoption void the
policy, they never score; in the train phase it cannot raise the run's episode cap by rewriting
``gym.toml`` before the phase reads it (it may win that race: the phase then plays the rewritten
file, its own).

Won, before the gate, ``[sandbox] mode = "off"`` only (no boundary is claimed there, but the
early start added this): a plain early process rewrote ``judge/references.json`` through
``/proc/<ppid>/cwd`` before the judge read it and so set its own score. Won, low severity
(ab02f55): a train phase that refuses the submission (exit 65, charged nothing) ran policy.py's
import code when the early process got that far before ``discard``. Both closed by the gate
(``wire.GO``): the policy's process, early or late, does its own imports and then waits for its
host's first frame before it loads policy.py, so candidate code runs no sooner than in a process
started when it is adopted; a judge or train phase that stops first, or adopts nothing, kills it
with policy.py unread (the daemon, previous-candidate and second-prestart attacks now find no
candidate code ran at all). The controls show the probes work: as root the plain process reads
the seed file, finds the seed in the judge's memory, copies the judge's descriptors and kills
its judge; an adopted process forks its daemon.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("gymnasium")

from evotree.domains.gym import launch  # noqa: E402
from evotree.domains.gym.runner import Task, run_episodes  # noqa: E402

ENV = "CartPole-v1"
#: the judge's hidden seeds (the policy holds only their hashes)
SEEDS = (918_273_645, 918_273_646)
HASHES = sorted(hashlib.sha256(str(s).encode()).hexdigest() for s in SEEDS)
CONTROLLER = "int(obs[2] + 0.5 * obs[3] > 0)"


def _spec() -> dict[str, Any] | None:
    """The judge phase's nested sandbox where it starts here, else None."""
    from evotree.harness.sandbox import check_policy_sandbox, policy_sandbox_spec
    from evotree.harness.sandbox_spec import PolicySandbox

    return policy_sandbox_spec(PolicySandbox()) if check_policy_sandbox().ok else None


def _nested() -> dict[str, Any]:
    spec = _spec()
    if spec is None:
        pytest.skip("no nested policy sandbox here")
    return spec


def _reports(text: str) -> list[dict[str, Any]]:
    """The attack's reports: ``REDTEAM {json}`` lines the policy wrote on its stderr."""
    return [
        json.loads(line.split("REDTEAM ", 1)[1])
        for line in text.splitlines()
        if line.startswith("REDTEAM ")
    ]


def _judge_folder(
    tmp_path: Path, *, workers: int = 1, episodes: int = 2, protocol: str = "evotree"
) -> Path:
    """A judge tree holding hidden seeds (``judge/gym.toml``) and references."""
    judge = tmp_path / "judge-dir"
    (judge / "judge").mkdir(parents=True)
    seeds = ", ".join(str(s) for s in SEEDS[:episodes])
    (judge / "judge" / "gym.toml").write_text(
        f'[judge]\nenvs = ["{ENV}"]\nepisode_timeout_seconds = 20\nworkers = {workers}\n'
        f'lanes = 1\nprotocol = "{protocol}"\n[pools.validation]\n"{ENV}" = [{seeds}]\n'
    )
    (judge / "judge" / "references.json").write_text(
        json.dumps({"envs": {ENV: {"random": 20.0, "expert": 500.0}}})
    )
    return judge


def _candidate(tmp_path: Path, source: str, name: str = "candidate") -> Path:
    candidate = tmp_path / name
    candidate.mkdir(exist_ok=True)
    (candidate / "policy.py").write_text(source)
    return candidate


def _phase_env(tmp_path: Path, phase: str, sandbox: dict[str, Any] | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVOTREE_")}
    evidence = tmp_path / f"evidence-{phase}"
    evidence.mkdir(exist_ok=True)
    env.update(EVOTREE_EVIDENCE_DIR=str(evidence), EVOTREE_PHASE=phase, EVOTREE_RUN_ID="redteam")
    if sandbox is not None:
        env["EVOTREE_POLICY_SANDBOX"] = json.dumps(sandbox)
    return env


def _run_judge(
    tmp_path: Path,
    candidate: Path,
    sandbox: dict[str, Any] | None,
    *,
    workers: int = 1,
    protocol: str = "evotree",
) -> tuple[int, str, list[dict[str, Any]]]:
    """``python -P -m evotree.domains.gym.judge`` as the harness starts it (its ``main``, so
    its ``prestart``): (exit code, stderr, its evidence rows: evals and signals). Its output
    goes to files, as the harness's logs do, so that a process the policy left behind cannot
    hold the test up."""
    judge = _judge_folder(tmp_path, workers=workers, protocol=protocol)
    env = _phase_env(tmp_path, "eval", sandbox)
    env["EVOTREE_CANDIDATE_DIR"] = str(candidate)
    err = tmp_path / "eval.err"
    with open(tmp_path / "eval.out", "wb") as out, open(err, "wb") as handle:
        proc = subprocess.run(
            [sys.executable, "-P", "-m", "evotree.domains.gym.judge"],
            cwd=judge,
            env=env,
            stdout=out,
            stderr=handle,
            stdin=subprocess.DEVNULL,
            timeout=120,
            check=False,
        )
    rows = [
        json.loads(line)
        for path in sorted((tmp_path / "evidence-eval").glob("*.jsonl"))
        for line in path.read_text().splitlines()
    ]
    return proc.returncode, err.read_text(errors="replace"), rows


# ---------------------------------------------------------------------------- 1. looking around

#: at import (the judge is importing: it has read nothing yet) and at reset (it holds the
#: seeds): the judge's files by absolute path, relatively, through /proc; its environ, cmdline
#: and memory; every pid it can name (kill(pid, 0) only: nothing is signalled)
LOOK = r"""
import hashlib, json, os, re, sys, time

HASHES = {hashes!r}
JUDGE = {judge!r}
DIGITS = re.compile(rb"[0-9]{{6,10}}")


def _seeds(data):
    return [int(m) for m in DIGITS.findall(data or b"") if hashlib.sha256(m).hexdigest() in HASHES]


def _read(path):
    try:
        with open(path, "rb") as handle:
            return handle.read(1 << 16)
    except OSError:
        return None


def _visible():
    seen = []
    for pid in range(1, 4097):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        except PermissionError:
            pass
        seen.append(pid)
    return seen


def _mem(pid, seeds):
    maps = _read(f"/proc/{{pid}}/maps")
    if maps is None:
        return "no maps"
    needles = [str(s).encode() for s in seeds] + [s.to_bytes(8, "little") for s in seeds]
    try:
        mem = open(f"/proc/{{pid}}/mem", "rb")
    except OSError as exc:
        return "mem refused: " + type(exc).__name__
    with mem:
        for line in maps.decode(errors="replace").splitlines():
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
            if needles and any(n in chunk for n in needles):
                return "seed found"
    return "searched"


def _own():
    own = set()
    for fd in range(256):
        try:
            st = os.fstat(fd)
        except OSError:
            continue
        own.add((st.st_dev, st.st_ino))
    return own


def _grab(pid):
    # the descriptors of pid copied into this process (pidfd_getfd: ptrace rights over it):
    # [fd, file type, a directory?, one of this process's own files?]
    import ctypes, stat
    libc = ctypes.CDLL(None, use_errno=True)
    try:
        pidfd = os.pidfd_open(pid)
    except OSError as exc:
        return type(exc).__name__
    own, got = _own(), []
    for fd in range(64):
        copy = libc.syscall(438, pidfd, fd, 0)
        if copy < 0:
            continue
        st = os.fstat(copy)
        got.append([fd, stat.S_IFMT(st.st_mode), stat.S_ISDIR(st.st_mode),
                    (st.st_dev, st.st_ino) in own])
        os.close(copy)
    os.close(pidfd)
    return got


def look(where):
    ppid = os.getppid()
    paths = [JUDGE + "/judge/gym.toml", "../judge-dir/judge/gym.toml",
             f"/proc/{{ppid}}/cwd/judge/gym.toml", "/proc/1/cwd/judge/gym.toml",
             f"/proc/{{ppid}}/environ", f"/proc/{{ppid}}/cmdline"]
    data = {{p: _read(p) for p in paths}}
    seeds = sorted({{s for d in data.values() for s in _seeds(d)}})
    report = {{
        "where": where, "pid": os.getpid(), "ppid": ppid, "visible": _visible(),
        "readable": sorted(p for p, d in data.items() if d is not None),
        "seed_in": sorted(p for p, d in data.items() if _seeds(d)),
        "mem": _mem(ppid, seeds),
        "parent_fds": _grab(ppid),
    }}
    os.write(2, ("REDTEAM " + json.dumps(report) + "\n").encode())


look("import")


class Policy:
    def __init__(self, *args):
        pass

    def reset(self, *args):
        look("reset")

    def act(self, obs):
        return {controller}
"""


def _look(tmp_path: Path) -> Path:
    judge = tmp_path / "judge-dir"
    return _candidate(tmp_path, LOOK.format(hashes=HASHES, judge=str(judge), controller=CONTROLLER))


@pytest.mark.heavy
@pytest.mark.parametrize("protocol", ["evotree", "evopolicygym"])
def test_the_early_process_finds_nothing_of_its_judge_at_import_or_at_reset(
    tmp_path: Path, protocol: str
) -> None:
    """The real judge (evotree's contract with two workers: the early process and one started
    late play side by side; EvoPolicyGym's: one process, the early one): at import and at reset
    no policy process reads a judge file, a /proc entry or the judge's memory, and the only
    pids it can name are its own and its sandbox's init. The judge scores both episodes as the
    controller earns them. The descriptors it can copy from its parent (pidfd_getfd on its
    sandbox's init, the same user) are 0-2 (its own files) and an anonymous inode: no
    directory, nothing of the judge's."""
    spec = _nested()
    epg = protocol == "evopolicygym"
    rc, err, rows = _run_judge(
        tmp_path, _look(tmp_path), spec, workers=1 if epg else 2, protocol=protocol
    )
    reports = _reports(err)
    assert rc == 0, err[-3000:]
    # EvoPolicyGym records the raw return, evotree's contract the normalized score
    scores = [r["score"] for r in rows if "score" in r]
    assert scores == ([500.0, 500.0] if epg else [1.0, 1.0]), rows
    # the attack ran: one report per process at import, one per episode at reset
    imports = ["import"] if epg else ["import", "import"]
    assert sorted(r["where"] for r in reports) == [*imports, "reset", "reset"], err
    for report in reports:
        assert report["readable"] == [] and report["seed_in"] == [], report
        assert report["mem"] == "no maps", report
        assert report["ppid"] == 1 and set(report["visible"]) <= {1, report["pid"]}, report
        grabbed = report["parent_fds"]
        assert isinstance(grabbed, list), grabbed
        assert not [g for g in grabbed if g[2] or (g[1] != 0 and not g[3])], grabbed


@pytest.mark.heavy
def test_control_the_look_finds_the_seed_from_a_plain_early_process(tmp_path: Path) -> None:
    """The control (``[sandbox] mode = "off"``, the documented residual of a plain process):
    as root, the same policy started early reads the seed file through its judge's cwd at
    import, and at reset finds the seed in its judge's memory."""
    if os.geteuid() != 0:
        pytest.skip("reading a parent's files and memory through /proc needs root here")
    rc, err, _ = _run_judge(tmp_path, _look(tmp_path), None)
    reports = {r["where"]: r for r in _reports(err)}
    assert rc == 0 and set(reports) == {"import", "reset"}, err[-3000:]
    assert any("/cwd/judge/gym.toml" in p for p in reports["import"]["seed_in"]), reports
    assert reports["reset"]["mem"] == "seed found", reports["reset"]
    assert len(reports["import"]["visible"]) > 2  # the machine's processes (pids up to 4096)
    # the judge's own descriptors (its stdout, not this process's) copied out of it
    assert [g for g in reports["reset"]["parent_fds"] if not g[3]], reports["reset"]


# ---------------------------------------------------------------------------- 1b. the judge's files

#: at import, while the judge still imports: replaces the judge's references (random 0, expert
#: 10) through its parent's cwd or a guessed relative path; then always pushes left (~9 steps,
#: which scores 0 against the real references, random 20 and expert 500)
REFERENCES = r"""
import json, os

wrote = False
for path in (f"/proc/{{os.getppid()}}/cwd/judge/references.json",
             "../judge-dir/judge/references.json", {judge!r} + "/judge/references.json"):
    try:
        with open(path, "w") as handle:
            handle.write(json.dumps({{"envs": {{"{env}": {{"random": 0.0, "expert": 10.0}}}}}}))
        wrote = True
        break
    except OSError:
        pass
os.write(2, ("REDTEAM " + json.dumps({{"where": "import", "wrote": wrote}}) + "\n").encode())


class Policy:
    def __init__(self, *args):
        pass

    def reset(self):
        pass

    def act(self, obs):
        return 0
"""

#: won before the gate (wire.GO: the early process loads policy.py only once adopted), now a
#: plain test
_REFERENCES_WIN = (
    "[sandbox] mode = 'off' only (the nested judge's case passes): the policy's process starts "
    "before the judge reads judge/references.json and judge/gym.toml (launch.prestart), and a "
    "plain process of the same user opens /proc/<ppid>/cwd/judge/references.json for writing "
    "(the judge's fresh folder is its user's) and replaces the references before the judge "
    "loads them: ~9-step episodes score 0.9 instead of 0, with no extra evidence row. A process "
    "started late finds the references already read (it would need ptrace rights over the "
    "judge to change them). A race with the judge's own imports: won 4 of 6 tries by hand, "
    "1 of 4 under pytest"
)


@pytest.mark.heavy
@pytest.mark.parametrize(
    "nested",
    [True, False],
    ids=["nested", "plain"],
)
def test_the_early_process_cannot_rewrite_the_references_before_the_judge_reads_them(
    tmp_path: Path, nested: bool
) -> None:
    """The judge's score of every episode is what its return earns against the references the
    judge was given. Nested: the policy cannot open them (stopped). Plain: up to eight judges,
    the attack asserted to have written each time; the first it wins fails the test."""
    spec = _nested() if nested else None
    for attempt in range(1 if nested else 8):
        root = tmp_path / f"try-{attempt}"
        root.mkdir()
        judge = root / "judge-dir"
        candidate = _candidate(root, REFERENCES.format(judge=str(judge), env=ENV))
        rc, err, rows = _run_judge(root, candidate, spec)
        (report,) = _reports(err)
        assert rc == 0 and report["wrote"] is (not nested), (report, err[-2000:])
        returns = {
            r["metric"].split("#")[1].split("/")[0]: r["value"]
            for r in rows
            if str(r.get("metric", "")).endswith("/return") and "#" in r["metric"]
        }
        scores = {r["task_id"].split("#")[1]: r["score"] for r in rows if "score" in r}
        assert len(scores) == 2 and scores.keys() == returns.keys(), rows
        for index, score in scores.items():
            assert returns[index] < 20 and score == 0.0, (attempt, returns, scores)


# ---------------------------------------------------------------------------- 2. signals, ptrace

#: from the window (at import, the judge importing), then again at the first act: SIGSTOP and
#: SIGKILL its parent, PTRACE_ATTACH it; then plays the controller. Only the parent is
#: signalled (in the nested sandbox its sandbox's init; in the control the judge the test
#: started), never a scanned pid
SIGNALS = r"""
import ctypes, json, os, signal, time

_libc = ctypes.CDLL(None, use_errno=True)
_done = []


def hit(where):
    ppid = os.getppid()
    out = {{"where": where, "ppid": ppid}}
    # first the attempt (a plain process dies with its judge before it could say more)
    os.write(2, ("REDTEAM " + json.dumps(dict(out, stage="before")) + "\n").encode())
    for name in ("SIGSTOP", "SIGKILL"):
        try:
            os.kill(ppid, getattr(signal, name))
            out[name] = "sent"
        except OSError as exc:
            out[name] = type(exc).__name__
    out["ptrace"] = _libc.ptrace(16, ppid, 0, 0)  # PTRACE_ATTACH
    out["ptrace_errno"] = ctypes.get_errno()
    out["stage"] = "after"
    os.write(2, ("REDTEAM " + json.dumps(out) + "\n").encode())


hit("import")


class Policy:
    def __init__(self, *args):
        pass

    def reset(self):
        pass

    def act(self, obs):
        if not _done:
            _done.append(1)
            hit("act")
        return {controller}
"""


@pytest.mark.heavy
def test_the_early_process_cannot_signal_or_trace_its_judge(tmp_path: Path) -> None:
    """Nested: its parent is its sandbox's init (pid 1, bubblewrap's reaper), which ignores the
    signals from inside its namespace; PTRACE_ATTACH on it may succeed (the same user in the
    same sandbox: the reaper holds nothing of the judge); the judge plays on and scores the
    controller's 500 on both episodes."""
    spec = _nested()
    candidate = _candidate(tmp_path, SIGNALS.format(controller=CONTROLLER))
    rc, err, rows = _run_judge(tmp_path, candidate, spec)
    reports = [r for r in _reports(err) if r["stage"] == "after"]
    assert rc == 0, err[-3000:]
    assert [r["score"] for r in rows if "score" in r] == [1.0, 1.0], rows
    assert [r["where"] for r in reports] == ["import", "act"], err[-3000:]
    for report in reports:
        assert report["ppid"] == 1 and report["SIGKILL"] == "sent", report


@pytest.mark.heavy
def test_control_a_plain_early_process_kills_its_judge(tmp_path: Path) -> None:
    """The control: the same policy as a plain process (no nested sandbox) stops and kills its
    judge at import; the judge scores nothing."""
    candidate = _candidate(tmp_path, SIGNALS.format(controller=CONTROLLER))
    rc, err, rows = _run_judge(tmp_path, candidate, None)
    reports = _reports(err)
    assert reports and reports[0]["where"] == "import", err[-3000:]  # the attack ran
    assert reports[0]["ppid"] > 1
    assert rc == -signal.SIGKILL and not [r for r in rows if "score" in r], (rc, rows)


# ---------------------------------------------------------------------------- 3. same view as late

#: what a process holds from its start: environment, descriptors (kind and flags), signal
#: dispositions and mask, limits, credentials, session; /proc/self/status where there is a
#: /proc. Every process reports at import and dies at its first act, so the judge starts one
#: per episode: the first the early one, the second started late
VIEW = r"""
import fcntl, json, os, resource, signal, stat, sys


def _fds():
    out = []
    for fd in range(256):
        try:
            st = os.fstat(fd)
        except OSError:
            continue
        out.append([fd, stat.S_IFMT(st.st_mode), fcntl.fcntl(fd, fcntl.F_GETFL),
                    fcntl.fcntl(fd, fcntl.F_GETFD)])
    return out


def _status():
    try:
        with open("/proc/self/status") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    keep = ("SigBlk", "SigIgn", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb",
            "NoNewPrivs", "Seccomp", "Uid", "Gid", "Groups")
    return [line for line in lines if line.split(":")[0] in keep]


def _signals():
    out = {{}}
    for sig in signal.Signals:
        try:
            out[sig.name] = str(signal.getsignal(sig))
        except (ValueError, OSError):
            pass
    return out


umask = os.umask(0)
os.umask(umask)
view = {{
    "env": sorted(os.environ.items()),
    "argv": sys.argv[1:],
    "cwd": os.getcwd(),
    "fds": _fds(),
    "ids": [os.getuid(), os.geteuid(), os.getgid(), os.getegid(), sorted(os.getgroups())],
    "umask": umask,
    "nice": os.getpriority(os.PRIO_PROCESS, 0),
    "affinity": sorted(os.sched_getaffinity(0)),
    "limits": {{n: resource.getrlimit(getattr(resource, n)) for n in dir(resource)
               if n.startswith("RLIMIT_")}},
    "signals": _signals(),
    "mask": sorted(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, [])),
    "session_leader": os.getsid(0) == os.getpid(),
    "status": _status(),
}}
os.write(2, ("REDTEAM " + json.dumps({{"where": "import", "pid": os.getpid(), "view": view}})
             + "\n").encode())


class Policy:
    def __init__(self, *args):
        pass

    def reset(self):
        pass

    def act(self, obs):
        os._exit(3)
"""


def _same_views(reports: list[dict[str, Any]]) -> None:
    assert len(reports) == 2, reports
    early, late = reports[0]["view"], reports[1]["view"]
    assert early.keys() == late.keys()
    differ = sorted(k for k in early if early[k] != late[k])
    assert differ == [], {k: (early[k], late[k]) for k in differ}
    assert len(early["fds"]) == 5, early["fds"]  # 0-2 and its two pipes
    assert not [k for k, _ in early["env"] if k.startswith("EVOTREE_")], early["env"]


@pytest.mark.heavy
@pytest.mark.parametrize("nested", [True, False], ids=["nested", "plain"])
def test_the_early_process_holds_what_a_late_one_holds(tmp_path: Path, nested: bool) -> None:
    """Judge phase: the early process (episode 0) and its replacement started late (episode 1)
    have the same environment, descriptors (kind, flags), signal dispositions and mask, limits,
    credentials, umask, nice, affinity and session; in a plain process also the same
    /proc/self/status (ignored and blocked signals, capabilities, seccomp, no_new_privs)."""
    spec = _nested() if nested else None
    candidate = _candidate(tmp_path, VIEW.format())
    rc, err, rows = _run_judge(tmp_path, candidate, spec)
    assert rc == 0, err[-3000:]
    assert [r["score"] for r in rows if "score" in r] == [0.0, 0.0]  # each process died
    reports = _reports(err)
    _same_views(reports)
    if not nested:  # the control that the status part of the probe reads something
        assert reports[0]["view"]["status"], reports[0]


@pytest.mark.heavy
def test_the_train_phases_early_process_holds_what_a_late_one_holds(tmp_path: Path) -> None:
    """Train phase (ab02f55, plain processes): the same comparison through ``train.main``."""
    candidate = _candidate(tmp_path, VIEW.format())
    (candidate / "gym.toml").write_text(
        f'[train]\nenvs = ["{ENV}"]\nepisodes_per_env = 2\nfirst_seed = 0\n'
        "episode_timeout_seconds = 20\nworkers = 1\n"
    )
    env = _phase_env(tmp_path, "train", None)
    env["EVOTREE_SEED"] = "0"
    proc = subprocess.run(
        [sys.executable, "-P", "-m", "evotree.domains.gym.train"],
        cwd=candidate,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    _same_views(_reports(proc.stderr))


# ---------------------------------------------------------------------------- 3b. marks for later

#: each process looks for marks at reset, then at its first act leaves marks where a process
#: started after it might find them (a private /tmp, /dev/shm, $HOME in the nested sandbox; its
#: own folder, read-only there) and dies: the early process marks, the late one looks
MARKS = r"""
import json, os

PLACES = ["/tmp/{tag}", "/dev/shm/{tag}", os.path.join(os.environ.get("HOME", "/tmp"), "{tag}"),
          os.path.join(os.getcwd(), "{tag}")]


class Policy:
    def __init__(self, *args):
        pass

    def reset(self):
        found = [p for p in PLACES if os.path.exists(p)]
        os.write(2, ("REDTEAM " + json.dumps({{"where": "reset", "found": found}}) + "\n").encode())

    def act(self, obs):
        wrote = []
        for place in PLACES:
            try:
                with open(place, "w") as handle:
                    handle.write("early")
                wrote.append(place)
            except OSError:
                pass
        os.write(2, ("REDTEAM " + json.dumps({{"where": "act", "wrote": wrote}}) + "\n").encode())
        os._exit(3)
"""


@pytest.mark.heavy
@pytest.mark.parametrize("nested", [True, False], ids=["nested", "plain"])
def test_the_late_process_finds_no_mark_of_the_early_one(tmp_path: Path, nested: bool) -> None:
    """Nested: the early process writes its marks (its /tmp, /dev/shm, $HOME) and dies; the
    process started late for the next episode finds none. Plain (the control): it finds them."""
    spec = _nested() if nested else None
    tag = f"redteam-prestart-{os.getpid()}-{time.monotonic_ns()}"
    candidate = _candidate(tmp_path, MARKS.format(tag=tag))
    home = Path(os.environ.get("HOME", "/tmp"))
    places = [Path("/tmp") / tag, Path("/dev/shm") / tag, home / tag, candidate / tag]
    try:
        rc, err, _ = _run_judge(tmp_path, candidate, spec)
        reports = _reports(err)
        assert rc == 0, err[-3000:]
        assert [r["where"] for r in reports] == ["reset", "act", "reset", "act"], err[-3000:]
        assert reports[0]["found"] == [] and reports[1]["wrote"], reports  # the attack ran
        if nested:
            assert reports[2]["found"] == [], reports
            assert not any(p.exists() for p in places)  # nothing reached the judge's machine
        else:
            assert reports[2]["found"], reports
    finally:
        for place in places:
            place.unlink(missing_ok=True)


# ---------------------------------------------------------------------------- 4. nothing outlives

#: at import: a daemon (double fork, a session of its own) that beats on stderr for LIFE
#: seconds, then the import waits, so that the judge discards the process while it imports
DAEMON = r"""
import os, time

LIFE = {life}
first = os.fork()
if first == 0:
    os.setsid()
    if os.fork() == 0:
        os.write(2, ("DAEMON-START %d\n" % os.getpid()).encode())
        end = time.monotonic() + LIFE
        while time.monotonic() < end:
            os.write(2, b"DAEMON-BEAT\n")
            time.sleep(0.02)
    os._exit(0)
os.waitpid(first, 0)
time.sleep(LIFE)


class Policy:
    def __init__(self, *args):
        pass

    def reset(self):
        pass

    def act(self, obs):
        return 0
"""


def _stop_judge_early(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
    sandbox: dict[str, Any] | None,
) -> tuple[str, str]:
    """``judge.main`` for a candidate holding :data:`DAEMON` in a folder with no judge files
    (it stops before its episodes), held until the daemon has started (3 s at most: with the
    gate it never starts); (what came on stderr while the judge ran and 0.2 s after, what came
    in the half second after that)."""
    from evotree.domains.gym import catalog, judge

    candidate = _candidate(tmp_path, DAEMON.format(life=5.0))
    monkeypatch.setattr(launch, "_early", None)
    monkeypatch.setenv("EVOTREE_CANDIDATE_DIR", str(candidate))
    if sandbox is None:
        monkeypatch.delenv("EVOTREE_POLICY_SANDBOX", raising=False)
    else:
        monkeypatch.setenv("EVOTREE_POLICY_SANDBOX", json.dumps(sandbox))
    seen: list[str] = []
    real = catalog.require_gymnasium

    def held() -> Any:
        """The judge's first step, held until the early process's daemon beats (3 s at most)."""
        end = time.monotonic() + 3
        while time.monotonic() < end and "DAEMON-BEAT" not in "".join(seen):
            seen.append(capfd.readouterr().err)
            time.sleep(0.02)
        return real()

    monkeypatch.setattr(catalog, "require_gymnasium", held)
    empty = tmp_path / "no-judge-files"
    empty.mkdir()
    assert judge.main(empty) == 1
    assert launch._early is None
    time.sleep(0.2)  # what the sandbox's processes wrote while they were being ended
    seen.append(capfd.readouterr().err)
    time.sleep(0.5)
    return "".join(seen), capfd.readouterr().err


def _kill_daemon(text: str) -> None:
    """End the plain control's daemon (a process this test started), by its pid."""
    for line in text.splitlines():
        if line.startswith("DAEMON-START "):
            try:
                os.kill(int(line.split()[1]), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass


@pytest.mark.heavy
@pytest.mark.parametrize("nested", [True, False], ids=["nested", "plain"])
def test_a_judge_that_stops_early_runs_no_candidate_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str], nested: bool
) -> None:
    """The judge stops before its episodes (no judge files) and kills the unadopted early
    process. Before the gate its import code ran (a daemon forked at import beat while the
    judge ran; plain, it beat on after ``main`` returned); with the gate (``wire.GO``) the
    process waits for its adoption before it loads policy.py, so no daemon ever starts."""
    during = after = ""
    try:
        during, after = _stop_judge_early(
            tmp_path, monkeypatch, capfd, _nested() if nested else None
        )
        assert "DAEMON-" not in during + after, (during[-500:], after[-500:])
    finally:
        _kill_daemon(during + after)


@pytest.mark.heavy
def test_control_an_adopted_processs_daemon_starts(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """The control: the same policy played (a process that is adopted, plain) forks its daemon
    at import — the probe is live; the test ends the daemon."""
    candidate = _candidate(tmp_path, DAEMON.format(life=5.0))
    text = ""
    try:
        (episode,) = run_episodes(candidate, [Task(ENV, 0, SEEDS[0])], timeout=30, sandbox=None)
        assert episode.finish_reason == "terminated", episode.message
        end = time.monotonic() + 10
        while "DAEMON-BEAT" not in text and time.monotonic() < end:
            text += capfd.readouterr().err
            time.sleep(0.05)
        assert "DAEMON-BEAT" in text, text[-2000:]
    finally:
        _kill_daemon(text)


# ---------------------------------------------------------------------------- 5. previous candidate

#: reports which policy it is (and its pid) at reset, by failing the episode
WHO = r"""
import os, sys

os.write(2, ("LOADED {who} %d\n" % os.getpid()).encode())


class Policy:
    def __init__(self, *args):
        pass

    def reset(self):
        raise RuntimeError("REPORT {who} %d TROPER" % os.getpid())

    def act(self, obs):
        return 0
"""


@pytest.mark.heavy
def test_a_previous_candidates_early_process_is_never_adopted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """``judge.main`` for a folder holding policy A stops before its episodes (A's early
    process is killed without loading A: the gate); the folder then holds policy B: the next worker for the same folder plays B, in a
    new process (A's was killed by ``discard``, not kept for the next start in this process).
    And a process left by a ``prestart`` for another folder is killed, never adopted."""
    from evotree.domains.gym import catalog, judge

    candidate = _candidate(tmp_path, WHO.format(who="A"))
    monkeypatch.setattr(launch, "_early", None)
    monkeypatch.setenv("EVOTREE_CANDIDATE_DIR", str(candidate))
    monkeypatch.delenv("EVOTREE_POLICY_SANDBOX", raising=False)
    seen: list[str] = []
    real = catalog.require_gymnasium

    def held() -> Any:
        end = time.monotonic() + 3  # with the gate, A's process never loads A
        while time.monotonic() < end and "LOADED A" not in "".join(seen):
            seen.append(capfd.readouterr().err)
            time.sleep(0.02)
        return real()

    monkeypatch.setattr(catalog, "require_gymnasium", held)
    empty = tmp_path / "no-judge-files"
    empty.mkdir()
    assert judge.main(empty) == 1
    seen.append(capfd.readouterr().err)
    # before the gate A's early process had loaded A here; now it waits for an adoption that
    # never comes, and is killed with policy.py unread
    assert not [x for x in "".join(seen).splitlines() if x.startswith("LOADED A ")], seen
    (candidate / "policy.py").write_text(WHO.format(who="B"))
    other = _candidate(tmp_path, WHO.format(who="C"), "other")
    assert launch.prestart(other, None)  # a leftover for another folder
    (episode,) = run_episodes(candidate, [Task(ENV, 0, SEEDS[0])], timeout=30, sandbox=None)
    assert "REPORT B " in episode.message, episode.message
    assert launch._early is None


@pytest.mark.heavy
def test_a_second_prestart_starts_no_second_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """A second ``prestart`` while one waits starts nothing (one process, the first); once it is
    adopted, a later ``prestart`` starts a new one, which ``discard`` kills. What this shows
    about the key (the folder, not its content): before the gate a waiting process was adopted
    as it had loaded policy.py (A, though the folder then held B, a sharp edge for a future
    caller); with the gate it loads policy.py once adopted — B, what a late start loads."""
    monkeypatch.setattr(launch, "_early", None)
    candidate = _candidate(tmp_path, WHO.format(who="A"))
    assert launch.prestart(candidate, None)
    first = launch._early[1][0]  # type: ignore[index]
    assert not launch.prestart(candidate, None)
    assert launch._early[1][0] is first  # type: ignore[index]
    time.sleep(1.0)  # the waiting process has done its imports, not loaded policy.py
    assert "LOADED A" not in capfd.readouterr().err
    (candidate / "policy.py").write_text(WHO.format(who="B"))
    (episode,) = run_episodes(candidate, [Task(ENV, 0, SEEDS[0])], timeout=30, sandbox=None)
    # the same process, loading policy.py once adopted: B, as a process started then would
    assert f"REPORT B {first.pid} " in episode.message, episode.message
    assert launch._early is None and first.poll() is not None
    assert launch.prestart(candidate, None)
    again = launch._early[1][0]  # type: ignore[index]
    launch.discard()
    assert launch._early is None and again.poll() is not None


# ---------------------------------------------------------------------------- 6. early frames

#: at import, before the worker's own "ready": a forged "ready" and then a failure frame that
#: claims a good ending (truncated), queued on the reply pipe while the judge has not adopted
#: the process yet; then it plays the controller
FRAMES = r"""
import json, os, struct, sys

MARK = {mark!r}


def _frame(payload):
    return struct.pack(">I", len(payload)) + payload


if not os.path.exists(MARK):  # the first process only: its replacements play honestly
    open(MARK, "w").close()
    os.write(int(sys.argv[2]), _frame(b'J{{"kind":"ready"}}')
             + _frame(b'J{{"kind":"fail","reason":"truncated","message":"","category":""}}'))


class Policy:
    def __init__(self, *args):
        pass

    def reset(self):
        pass

    def act(self, obs):
        return {controller}
"""


@pytest.mark.heavy
def test_frames_queued_before_adoption_never_score(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the judge reads first from the adopted process is what the early process queued:
    the forged ready is taken, the forged failure answers the first start (its episode fails,
    scoring 0), and the worker's real ready after it breaks the protocol: the process is
    replaced and every later episode plays the controller honestly. Nothing scores above what
    the policy plays."""
    monkeypatch.setattr(launch, "_early", None)
    mark = tmp_path / "mark"
    candidate = _candidate(tmp_path, FRAMES.format(controller=CONTROLLER, mark=str(mark)))
    assert launch.prestart(candidate, None)
    early = launch._early[1][0]  # type: ignore[index]
    tasks = [Task(ENV, i, SEEDS[0] + i) for i in range(3)]
    played = sorted(
        run_episodes(candidate, tasks, timeout=20, sandbox=None, summarize=False),
        key=lambda e: e.index,
    )
    assert mark.exists() and early.poll() is not None  # it forged, was adopted, then replaced
    assert [e.index for e in played] == [0, 1, 2], played
    assert played[0].failed and played[0].finish_reason in ("error", "invalid_action"), played[0]
    assert all(not e.failed and e.ret == 500.0 for e in played[1:]), played


# ---------------------------------------------------------------------------- 7. train: the cap

#: at import (before the train phase reads gym.toml): rewrites gym.toml to ask for 50 episodes
REWRITE = r"""
import os

with open("gym.toml", "w") as handle:
    handle.write('[train]\nenvs = ["{env}"]\nepisodes_per_env = 50\nfirst_seed = 0\n'
                 'episode_timeout_seconds = 20\nworkers = 1\n')
os.write(2, b"REWRITTEN\n")


class Policy:
    def __init__(self, *args):
        pass

    def reset(self):
        pass

    def act(self, obs):
        return 0
"""


@pytest.mark.heavy
def test_the_train_phases_early_process_cannot_raise_the_episode_cap(tmp_path: Path) -> None:
    """The early train process runs before the phase reads ``gym.toml`` (its own file) and may
    rewrite it; the run's cap (``EVOTREE_MAX_EPISODES``, the phase's environment, which the
    policy cannot change) still bounds the episodes played and recorded."""
    candidate = _candidate(tmp_path, REWRITE.format(env=ENV))
    (candidate / "gym.toml").write_text(
        f'[train]\nenvs = ["{ENV}"]\nepisodes_per_env = 1\nfirst_seed = 0\n'
        "episode_timeout_seconds = 20\nworkers = 1\n"
    )
    env = _phase_env(tmp_path, "train", None)
    env.update(EVOTREE_SEED="0", EVOTREE_MAX_EPISODES="3")
    proc = subprocess.run(
        [sys.executable, "-P", "-m", "evotree.domains.gym.train"],
        cwd=candidate,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "REWRITTEN" in proc.stderr  # the attack ran
    rollouts = tmp_path / "evidence-train" / "rollouts.jsonl"
    rows = [json.loads(x) for x in rollouts.read_text().splitlines()] if rollouts.exists() else []
    assert 1 <= len(rows) <= 3, len(rows)


# ---------------------------------------------------------------------------- 8. train: refused

#: at import: leaves a file in its folder (the train phase's candidate folder, writable there)
RAN = r"""
import os, time

open("ran-%d" % time.monotonic_ns(), "w").close()


class Policy:
    def __init__(self, *args):
        pass

    def reset(self):
        pass

    def act(self, obs):
        return 0
"""

#: won before the gate (wire.GO), now a plain test
_REFUSED_WIN = (
    "ab02f55: the train phase starts the policy's process before it reads gym.toml, so in a "
    "phase that then refuses the submission (an unusable gym.toml: exit 65, 'invalid "
    "submission, charged nothing' - no time, no episode charged unless [budget] "
    "charge_invalid) policy.py's import code runs when the process gets that far before "
    "launch.discard kills it (a race: about half the tries by hand); before ab02f55 no "
    "candidate code ran in such a phase. Bounded: the process is killed when main returns and "
    "the phase's sandbox ends what it forked; low severity (the candidate gets uncharged runs "
    "of its import code in the train sandbox, which it could read and write in any run)"
)


def _train(candidate: Path, tmp_path: Path) -> int:
    env = _phase_env(tmp_path, "train", None)
    env["EVOTREE_SEED"] = "0"
    return subprocess.run(
        [sys.executable, "-P", "-m", "evotree.domains.gym.train"],
        cwd=candidate,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=120,
        check=False,
    ).returncode


@pytest.mark.heavy
def test_a_refused_train_phase_runs_no_candidate_code(tmp_path: Path) -> None:
    """A train phase that refuses the submission (gym.toml is not TOML: exit 65) runs nothing
    of policy.py: up to six tries, the first whose policy left its file fails the test. The
    control: with a usable gym.toml the same policy's file is there."""
    candidate = _candidate(tmp_path, RAN)
    (candidate / "gym.toml").write_text(
        f'[train]\nenvs = ["{ENV}"]\nepisodes_per_env = 1\nfirst_seed = 0\n'
        "episode_timeout_seconds = 20\nworkers = 1\n"
    )
    assert _train(candidate, tmp_path) == 0
    assert list(candidate.glob("ran-*")), "the probe did not run in an accepted phase"
    for path in candidate.glob("ran-*"):
        path.unlink()
    (candidate / "gym.toml").write_text("not toml [\n")
    for attempt in range(6):
        assert _train(candidate, tmp_path) == 65
        assert not list(candidate.glob("ran-*")), f"policy.py ran in refused phase {attempt}"
