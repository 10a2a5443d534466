"""The phase sandbox (items 1 and 6), tested as the attacker would attack it.

One real `evotree run` of a custom-domain workspace whose candidate is hostile: its train phase
tries to read the user's checkout, another version's worktree, the home directory and `.git`,
to write outside its candidate folder, to reach a loopback server the test runs, to keep a
`setsid env -i` daemon alive past the phase, to keep its capabilities, and leaves a symlink to
the judge's hidden file, a hard link and a FIFO among its outputs. Each test below asserts one
of these failed; every one of them succeeded before the sandbox. Then: honest runs keep
working (the domains' own tests run sandboxed too), limits apply, and `evotree run` fails
closed where bubblewrap cannot start.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, Cli, commit_file, git, ledger_commits, make_repo
from evotree.core.versions import create_version
from evotree.core.workspace import Workspace, init_workspace
from evotree.gates.runs import run_versions
from evotree.harness import sandbox
from evotree.harness.records import RunRecord
from evotree.harness.sandbox import check_sandbox, wrap
from evotree.harness.sandbox_copy import copy_regular_files
from evotree.harness.sandbox_report import sandbox_warning
from evotree.harness.sandbox_spec import Limits, SandboxSpec, SandboxUnavailable
from evotree.harness.sandbox_system import python_paths

TRAIN = """\
import json, os, socket, subprocess, sys, tomllib
from evotree.harness import get_recorder

rec = get_recorder()
r = tomllib.load(open("recipe.toml", "rb"))


def can_read(path):
    try:
        with open(path, "rb") as handle:
            return float(len(handle.read()) > 0)
    except OSError:
        return 0.0


def can_list(path):  # the run folder's parents exist inside (empty but for the path to it)
    try:
        return float(bool(set(os.listdir(path)) - {".evotree"}))
    except OSError:
        return 0.0


def can_write(path):
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as handle:
            handle.write("pwned")
        return 1.0
    except OSError:
        return 0.0


def connects(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=3) as conn:
            conn.sendall(b"hello from the sandbox")
        return 1.0
    except OSError:
        return 0.0


def allocates(mib):
    try:
        block = bytearray(mib * 2**20)
        return float(len(block) > 0)
    except MemoryError:
        return 0.0


def writes_big(mib):
    try:
        with open("big.bin", "wb") as handle:
            handle.write(b"x" * (mib * 2**20))
        return 1.0
    except OSError:
        return 0.0
    finally:
        if os.path.exists("big.bin"):
            os.unlink("big.bin")


status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
if r.get("attack"):
    seen = {
        "reads_checkout": can_read(r["checkout_secret"]),
        "lists_checkout": can_list(r["repo"]),
        "reads_git": can_read(os.path.join(r["repo"], ".git", "HEAD")),
        "reads_worktree": can_read(r["worktree_secret"]),
        "reads_home": can_read(os.path.expanduser("~/.ssh/id_rsa")),
        "reads_real_home": can_read(r["home_secret"]),
        "writes_outside": can_write(r["outside_file"]),
        "writes_tmp": can_write(r["tmp_file"]),
        "writes_run_dir": can_write(os.path.join(os.environ["EVOTREE_RUN_DIR"], "forged.txt")),
        "connects": connects(r["port"]),
        "capeff": float(int(status["CapEff"].strip(), 16) != 0),
        "mounts": float(subprocess.run(["unshare", "--mount", "true"], capture_output=True).returncode == 0),
        "allocates": allocates(r["alloc_mib"]),
        "writes_big": writes_big(r["big_mib"]),
    }
    rec.signal(0, **seen)
    # a daemon in its own session, with no evotree variable left to be found by
    daemon = f"sleep 2; touch {r['proof']}; touch {os.getcwd()}/proof-daemon; touch /tmp/proof-outside-{r['token']}"
    subprocess.Popen(["setsid", "env", "-i", "sh", "-c", daemon], stdin=subprocess.DEVNULL,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # outputs that point the judge at its own hidden data, or block it
    os.symlink("/proc/self/cwd/judge/hidden.json", "predictions.json")
    with open("artifact.txt", "w") as handle:
        handle.write("artifact")
    os.link("artifact.txt", "hardlink.txt")
    os.mkfifo("pipe")
json.dump({"skill": float(r.get("skill", 0.5))}, open("model.json", "w"))
"""

JUDGE = """\
import json, os, stat
from evotree.harness import get_recorder

rec = get_recorder()
cand = os.environ["EVOTREE_CANDIDATE_DIR"]
model = json.load(open(os.path.join(cand, "model.json")))
hidden = json.load(open("judge/hidden.json"))


def read(name):
    path = os.path.join(cand, name)
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return ""
        return open(path).read()
    except OSError:
        return ""


rec.signal(0, judge_leak=float("SECRET" in read("predictions.json")),
           judge_hardlink=float(read("hardlink.txt") != ""),
           judge_fifo=float(os.path.lexists(os.path.join(cand, "pipe"))),
           judge_raw_candidate=float(os.path.isdir(os.path.join(os.environ["EVOTREE_RUN_DIR"], "candidate"))
                                     and bool(os.listdir(os.path.join(os.environ["EVOTREE_RUN_DIR"], "candidate")))))
for i, task in enumerate(hidden["validation"]):
    rec.eval_result("validation", task, 1.0 if (i + 1) / len(hidden["validation"]) <= model["skill"] else 0.0)
"""

CONFIG = """\
[train]
command = "python train.py"
[eval]
command = "python judge/eval.py"
judge_paths = ["judge/"]
[sandbox]
{sandbox}
"""


def make_sandbox_repo(path: Path, *, sandbox_config: str = "") -> Path:
    repo = make_repo(path)
    (repo / "recipe.toml").write_text("skill = 0.5\n")
    (repo / "train.py").write_text(TRAIN)
    (repo / "judge").mkdir()
    (repo / "judge" / "eval.py").write_text(JUDGE)
    hidden = {"validation": [f"SECRET-val-{i}" for i in range(10)]}
    (repo / "judge" / "hidden.json").write_text(json.dumps(hidden))
    (repo / "evotree.toml").write_text(CONFIG.format(sandbox=sandbox_config))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "recipe, train script and judge")
    init_workspace(repo)
    return repo


class LoopbackServer:
    """A TCP server on 127.0.0.1 that records every connection it accepts."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.accepted: list[bytes] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(1)
                try:
                    self.accepted.append(conn.recv(100))
                except OSError:
                    self.accepted.append(b"")

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=5)
        self.sock.close()


def _signals(record: RunRecord, root: Path) -> dict[str, float]:
    import duckdb

    path = root / ".evotree" / "runs" / record.run_id / "signals.parquet"
    rows = (
        duckdb.connect()
        .execute(f"SELECT phase, metric, value FROM read_parquet('{path}') WHERE step = 0")
        .fetchall()
    )
    return {metric: value for _, metric, value in rows}


def _alive(token: str) -> list[int]:
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if token.encode() in (proc / "cmdline").read_bytes():
                found.append(int(proc.name))
        except OSError:
            continue
    return found


@pytest.fixture(scope="module")
def attack(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One hostile run, observed from outside."""
    base = tmp_path_factory.mktemp("attack")
    repo = make_sandbox_repo(
        base / "w", sandbox_config="memory_mb = 768\nmax_output_mb = 4\nmax_processes = 512"
    )
    ws = Workspace.open(repo)
    (repo / ".checkout-secret.txt").write_text(
        "SECRET of the user's checkout"
    )  # untracked, never exported
    other = create_version(ws, hypothesis="a sibling with a secret in its worktree")
    (repo / other.worktree / "worktree-secret.txt").write_text("SECRET of another version")
    home = Path(os.environ["HOME"])
    (home / ".ssh").mkdir(exist_ok=True)
    (home / ".ssh" / "id_rsa").write_text("SECRET private key")
    token = f"evotree-attack-{os.getpid()}-{time.monotonic_ns()}"
    server = LoopbackServer()
    recipe = {
        "skill": 0.5,
        "attack": True,
        "repo": str(repo),
        "checkout_secret": str(repo / ".checkout-secret.txt"),
        "worktree_secret": str(repo / other.worktree / "worktree-secret.txt"),
        "home_secret": str(home / ".ssh" / "id_rsa"),
        "outside_file": str(repo / "pwned" / "pwned.txt"),
        "tmp_file": str(base / "outside" / "pwned.txt"),
        "port": server.port,
        "proof": str(base / f"proof-{token}"),
        "token": token,
        "alloc_mib": 1024,
        "big_mib": 8,
    }
    v1 = create_version(ws, hypothesis="attack the boundary")
    wt = repo / v1.worktree
    commit_file(
        wt, "recipe.toml", "".join(f"{k} = {json.dumps(v)}\n" for k, v in recipe.items()), "attack"
    )
    # the candidate also turns the sandbox off and the network on in its own evotree.toml: ignored,
    # the policy in force is the champion's
    commit_file(
        wt,
        "evotree.toml",
        CONFIG.format(sandbox='mode = "off"\ntrain_network = true'),
        "no sandbox",
    )
    try:
        (record,) = run_versions(ws, [v1.id])
        finished = time.monotonic()
        time.sleep(max(0.0, 3.5 - (time.monotonic() - finished)))  # past the daemon's 2 s sleep
        yield {
            "ws": ws,
            "repo": repo,
            "record": record,
            "signals": _signals(record, repo),
            "server": server,
            "token": token,
            "base": base,
            "recipe": recipe,
            "run_dir": repo / ".evotree" / "runs" / record.run_id,
        }
    finally:
        server.close()
        (home / ".ssh" / "id_rsa").unlink(missing_ok=True)


def test_the_sandbox_can_start_here() -> None:
    status = check_sandbox()
    assert status.ok, f"{status.reason} — fix: {status.fix}"
    assert status.startup_ms is not None and status.binary


def test_the_hostile_run_is_sandboxed_and_still_scored(attack: dict[str, Any]) -> None:
    record = attack["record"]
    assert record.status == "succeeded", (record.error, record.notes)
    assert record.headline["value"] == pytest.approx(0.5)  # the honest part of the run still counts
    assert (
        record.phases["train"]["sandbox"] == "bwrap" and record.phases["eval"]["sandbox"] == "bwrap"
    )
    assert (
        record.phases["train"]["network"] is False
    )  # the candidate's own evotree.toml did not turn it on
    assert not any("without a sandbox" in note for note in record.notes)


def test_train_cannot_read_the_users_checkout_or_its_git(attack: dict[str, Any]) -> None:
    seen = attack["signals"]
    assert (seen["reads_checkout"], seen["lists_checkout"], seen["reads_git"]) == (0.0, 0.0, 0.0)


def test_train_cannot_read_another_versions_worktree(attack: dict[str, Any]) -> None:
    assert attack["signals"]["reads_worktree"] == 0.0


def test_train_cannot_read_the_home_directory(attack: dict[str, Any]) -> None:
    """Neither through $HOME (a private folder inside) nor by the real home's absolute path."""
    seen = attack["signals"]
    assert (seen["reads_home"], seen["reads_real_home"]) == (0.0, 0.0)


def test_train_cannot_write_outside_its_candidate_folder(attack: dict[str, Any]) -> None:
    """The run folder is bound read-only; anything else the phase writes lands in its private
    tmpfs (the test's checkout lives under /tmp here) and never reaches the machine."""
    seen = attack["signals"]
    assert seen["writes_run_dir"] == 0.0
    assert not (attack["repo"] / "pwned").exists()
    assert not (attack["base"] / "outside").exists()
    assert not (attack["run_dir"] / "forged.txt").exists()


def test_train_cannot_reach_a_loopback_server(attack: dict[str, Any]) -> None:
    assert attack["signals"]["connects"] == 0.0
    assert attack["server"].accepted == []


def test_train_has_no_capabilities_and_cannot_mount(attack: dict[str, Any]) -> None:
    """evotree runs as root here (and in CI): the sandbox still has CapEff 0 and cannot unshare a mount namespace."""
    seen = attack["signals"]
    assert (seen["capeff"], seen["mounts"]) == (0.0, 0.0)


def test_a_setsid_daemon_does_not_outlive_the_train_phase(attack: dict[str, Any]) -> None:
    token = attack["token"]
    assert _alive(token) == []
    assert not (attack["base"] / f"proof-{token}").exists()
    assert not (attack["run_dir"] / "candidate" / "proof-daemon").exists()
    assert not Path(f"/tmp/proof-outside-{token}").exists()


def test_links_and_fifos_among_the_outputs_never_reach_the_judge(attack: dict[str, Any]) -> None:
    """predictions.json -> /proc/self/cwd/judge/hidden.json would make the judge read its own
    hidden file as the candidate's predictions; the judge gets a copy of regular files only."""
    record, seen = attack["record"], attack["signals"]
    assert seen["judge_leak"] == 0.0
    assert (seen["judge_hardlink"], seen["judge_fifo"]) == (0.0, 0.0)
    assert seen["judge_raw_candidate"] == 0.0  # the live candidate folder is hidden from the judge
    refused = "\n".join(n for n in record.notes if n.startswith("not given to the judge"))
    assert "predictions.json: symbolic link to '/proc/self/cwd/judge/hidden.json'" in refused
    assert "hardlink.txt: hard link" in refused and "artifact.txt: hard link" in refused
    assert "pipe: FIFO" in refused


def test_limits_apply_inside(attack: dict[str, Any]) -> None:
    """memory_mb = 768: a 1 GiB allocation fails; max_output_mb = 4: an 8 MiB file cannot be written."""
    seen = attack["signals"]
    assert (seen["allocates"], seen["writes_big"]) == (0.0, 0.0)


def test_honest_runs_leave_no_warning(attack: dict[str, Any]) -> None:
    assert sandbox_warning(attack["ws"]) is None


# ---------------------------------------------------------------------------- fail closed
def test_check_fails_closed_without_bwrap() -> None:
    status = check_sandbox("/nonexistent/bin/bwrap")
    assert not status.ok and status.binary is None
    assert "not installed" in status.reason and "/nonexistent/bin/bwrap" in status.reason
    assert "apt-get install bubblewrap" in status.fix and 'mode = "off"' in status.fix
    with pytest.raises(SandboxUnavailable):
        wrap(SandboxSpec(cwd=Path("/tmp")), ["true"], binary="/nonexistent/bin/bwrap")


def test_run_refuses_before_anything_starts_without_bwrap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_sandbox_repo(tmp_path / "w")
    runs = repo / ".evotree" / "runs"
    before_ledger = ledger_commits(repo)
    before_runs = sorted(p.name for p in runs.iterdir()) if runs.is_dir() else []
    monkeypatch.setattr(sandbox, "BWRAP", "/nonexistent/bin/bwrap")
    data = Cli(repo).json("run", "v0", code=36)
    error = data["error"]
    assert error["code"] == "sandbox_unavailable" and error["exit_code"] == 36
    assert "bubblewrap (bwrap) is not installed" in error["message"]
    assert "apt-get install bubblewrap" in error["fix"] and 'mode = "off"' in error["fix"]
    assert ledger_commits(repo) == before_ledger  # no run.started
    assert (
        sorted(p.name for p in runs.iterdir()) if runs.is_dir() else []
    ) == before_runs  # no run dir
    assert not (repo / ".evotree" / "judge").exists()


def test_mode_off_runs_unsandboxed_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_sandbox_repo(tmp_path / "w", sandbox_config='mode = "off"')
    monkeypatch.setattr(sandbox, "BWRAP", "/nonexistent/bin/bwrap")  # not needed when off
    ws = Workspace.open(repo)
    (record,) = run_versions(ws, ["v0"])
    assert record.status == "succeeded", record.error
    assert record.phases["train"]["sandbox"] == "off" and record.phases["eval"]["sandbox"] == "off"
    assert any("without a sandbox" in note and 'mode = "off"' in note for note in record.notes)
    saved = json.loads((repo / ".evotree" / "runs" / record.run_id / "run.json").read_text())
    assert saved["phases"]["train"]["sandbox"] == "off"
    warning = sandbox_warning(ws)
    assert warning is not None and warning.startswith("WARNING: sandbox off")
    assert "1 run(s)" in warning and record.run_id in warning
    assert record.run_id in (sandbox_warning(ws, "v0") or "")


# ---------------------------------------------------------------------------- the pieces
def test_python_paths_never_expose_the_checkout() -> None:
    """In development evotree is an editable install from this checkout: only its package folders are bound."""
    paths = python_paths()
    for path in paths:
        assert path != ROOT and not (path / ".git").exists() and not (path / ".evotree").exists(), (
            path
        )
        assert ROOT not in path.parents or path.name in {
            "evotree",
            "harness",
            "diagnostics",
            "skills",
            "memory",
            "gates",
            "domains",
            ".venv",
        }, path


def test_wrap_drops_everything_and_binds_only_what_it_is_given(tmp_path: Path) -> None:
    ro, rw = tmp_path / "ro", tmp_path / "ro" / "rw"
    rw.mkdir(parents=True)
    argv = wrap(
        SandboxSpec(
            cwd=rw,
            read_only=(ro,),
            read_write=(rw,),
            masked=(ro / "hidden",),
            limits=Limits(memory_mb=100, max_processes=50, max_output_mb=10),
        ),
        ["true"],
    )
    joined = " ".join(argv)
    for flag in (
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--cap-drop ALL",
        "--remount-ro /",
    ):
        assert flag in joined
    assert "--share-net" not in argv
    assert joined.index(f"--ro-bind {ro} {ro}") < joined.index(
        f"--bind {rw} {rw}"
    )  # writable inside read-only
    assert f"--tmpfs {ro / 'hidden'}" in joined
    assert (
        "--data=104857600:104857600" in argv
        and "--nproc=50:50" in argv
        and "--fsize=10485760:10485760" in argv
    )
    assert f" {ROOT} " not in f" {joined} " and "/etc/shadow" not in joined


def test_a_sandboxed_process_sees_only_its_binds(tmp_path: Path) -> None:
    import subprocess
    import sys

    mine, other = tmp_path / "mine", tmp_path / "other"
    mine.mkdir()
    other.mkdir()
    (other / "secret").write_text("x")
    probe = (
        "import json, os, sys; print(json.dumps({'other': os.path.exists(sys.argv[1]), "
        "'home': os.path.exists(sys.argv[2]), 'root': sorted(os.listdir('/')), 'cwd': os.getcwd(), "
        "'pid': os.getpid()}))"
    )
    out = subprocess.run(
        wrap(
            SandboxSpec(cwd=mine, read_write=(mine,)),
            [sys.executable, "-c", probe, str(other / "secret"), str(Path.home())],
        ),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    seen = json.loads(out)
    assert seen["other"] is False and seen["home"] is False and seen["cwd"] == str(mine)
    # the system folders, plus the top folder of the Python environment bound read-only (a CI clone may
    # live under /check, a venv under /work); the test's own tmp folder only as the cwd's ancestor
    allowed = {
        "bin",
        "dev",
        "etc",
        "lib",
        "lib32",
        "lib64",
        "libx32",
        "proc",
        "sbin",
        "sys",
        "tmp",
        "usr",
        "var",
    }
    allowed |= {Path(p).resolve().parts[1] for p in (sys.prefix, sys.base_prefix, sys.executable)}
    allowed |= {mine.parts[1]}
    assert set(seen["root"]) <= allowed, seen["root"]
    assert seen["pid"] < 10  # its own PID namespace


def test_copy_keeps_regular_files_and_refuses_the_rest(tmp_path: Path) -> None:
    src, dst = tmp_path / "src", tmp_path / "dst"
    (src / "sub").mkdir(parents=True)
    dst.mkdir()
    (src / "a.txt").write_text("a")
    (src / "sub" / "b.bin").write_bytes(b"b" * 100)
    (src / "run.sh").write_text("#!/bin/sh\n")
    (src / "run.sh").chmod(0o4755)  # set-uid: not kept
    (src / "link").symlink_to("/etc/passwd")
    (src / "dirlink").symlink_to(src / "sub")
    (src / "h1").write_text("h")
    os.link(src / "h1", src / "h2")
    os.mkfifo(src / "fifo")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(src / "sock"))
    try:
        report = copy_regular_files(src, dst, max_files=100, max_bytes=10_000)
    finally:
        sock.close()
    assert (dst / "a.txt").read_text() == "a" and (dst / "sub" / "b.bin").read_bytes() == b"b" * 100
    assert stat.S_IMODE((dst / "run.sh").stat().st_mode) == 0o755
    for name in ("link", "dirlink", "h1", "h2", "fifo", "sock"):
        assert not os.path.lexists(dst / name), name
    refused = "\n".join(report.refused)
    assert "link: symbolic link to '/etc/passwd'" in refused and "dirlink: symbolic link" in refused
    assert "h1: hard link" in refused and "h2: hard link" in refused
    assert "fifo: FIFO" in refused and "sock: socket" in refused
    assert (report.files, report.bytes) == (3, 1 + 100 + len("#!/bin/sh\n"))


def test_copy_stops_at_its_limits(tmp_path: Path) -> None:
    src, dst = tmp_path / "src", tmp_path / "dst"
    src.mkdir()
    dst.mkdir()
    for i in range(5):
        (src / f"f{i}").write_bytes(b"x" * 10)
    report = copy_regular_files(src, dst, max_files=3, max_bytes=1000)
    assert report.files == 3 and len(list(dst.iterdir())) == 3
    assert len(report.refused) == 1 and "over the copy limit" in report.refused[0]
    dst2 = tmp_path / "dst2"
    dst2.mkdir()
    report = copy_regular_files(src, dst2, max_files=100, max_bytes=25)
    assert report.files == 2 and report.bytes == 20


def test_read_paths_may_not_overlap_the_repository(tmp_path: Path) -> None:
    from evotree.harness.sandbox_spec import SandboxPolicy

    inside = SandboxPolicy(
        read_paths=(str(tmp_path / "repo" / "data"),), forbidden=(str(tmp_path / "repo"),)
    )
    above = SandboxPolicy(read_paths=(str(tmp_path),), forbidden=(str(tmp_path / "repo"),))
    for policy in (inside, above):
        with pytest.raises(SandboxUnavailable, match="overlaps the workspace's repository"):
            policy.extra_read_only()
    (tmp_path / "models").mkdir()
    ok = SandboxPolicy(
        read_paths=(str(tmp_path / "models"), "/nonexistent"), forbidden=(str(tmp_path / "repo"),)
    )
    assert ok.extra_read_only() == (tmp_path / "models",)


def test_sandbox_config_is_validated() -> None:
    from evotree.core.config import parse_config
    from evotree.core.errors import ConfigError

    assert parse_config('[sandbox]\nmode = "off"\n').sandbox.mode == "off"
    for text, key in (
        ('mode = "docker"', "sandbox.mode"),
        ("memory_mb = -1", "sandbox.memory_mb"),
        ('read_paths = ["data"]', "sandbox.read_paths"),
    ):
        with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
            parse_config(f"[sandbox]\n{text}\n")


def test_a_box_never_takes_the_machines_namespace_for_its_own() -> None:
    """Signalling "every process of the sandbox" must never mean every process of the machine:
    a process that is no sandbox (no child in another PID namespace) has no members."""
    import subprocess

    from evotree.harness.sandbox_box import SandboxBox

    plain = subprocess.Popen(["sh", "-c", "sleep 5 & wait"], start_new_session=True)
    try:
        time.sleep(0.2)
        box = SandboxBox(plain.pid)
        assert (box.locate(), box.members(), box.reap()) == (None, [], [])
    finally:
        os.killpg(plain.pid, 9)
        plain.wait()
    boxed = subprocess.Popen(
        wrap(SandboxSpec(cwd=Path("/tmp")), ["sh", "-c", "sleep 30 & sleep 30"]),
        start_new_session=True,
    )
    box = SandboxBox(boxed.pid)
    deadline = time.monotonic() + 5
    while len(box.members()) < 3 and time.monotonic() < deadline:  # init, sh and two sleeps
        time.sleep(0.05)
    members = box.members()
    assert box.init in members and boxed.pid not in members and os.getpid() not in members, (
        box.init,
        members,
    )
    box.signal(15)  # SIGTERM to the phase's processes: sh dies, the namespace ends with it
    assert boxed.wait(timeout=10) != 0
    # the kernel ends the namespace's other processes with its init, but bwrap may report
    # before the last of them has finished exiting (seen on a loaded machine): wait for that
    deadline = time.monotonic() + 10
    while box.members() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert box.members() == [], members
    assert box.reap() == [], members

    def running(
        pid: int,
    ) -> bool:  # zombies run nothing (the init's is reaped by the machine's init)
        try:
            return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in (
                "Z",
                "X",
            )
        except OSError:
            return False

    # the kernel kills a PID namespace's members when its init ends, but not at once: under
    # load a member may still be on its way out when the sandbox's process has been reaped
    deadline = time.monotonic() + 10
    while [p for p in members if running(p)] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in members if running(p)], [
        (p, Path(f"/proc/{p}/stat").read_text()) for p in members if running(p)
    ]


def test_read_paths_are_seen_live_and_read_only_and_travel_to_ray_workers(tmp_path: Path) -> None:
    """A folder of [sandbox].read_paths (a dataset, a model cache; in tests a file that holds a
    phase) is bound read-only, and changes made outside are seen inside while the phase runs.
    The policy reaches a Ray worker as a dict (spec["sandbox"]) unchanged."""
    import subprocess

    from evotree.core.config_execution import SandboxSection
    from evotree.harness.sandbox_spec import SandboxPolicy

    gate = tmp_path / "gate"
    gate.mkdir()
    (gate / "block").write_text("hold")
    section = SandboxSection(read_paths=[str(gate)], memory_mb=1024)
    policy = SandboxPolicy.from_config(section, forbidden=(tmp_path / "repo",))
    assert SandboxPolicy.from_dict(policy.to_dict()) == policy
    assert (
        SandboxPolicy.from_dict(None) == SandboxPolicy()
    )  # a spec without a policy: the default, a sandbox
    work = tmp_path / "work"
    work.mkdir()
    script = f"touch {gate}/x 2>/dev/null && echo writable; while [ -e {gate}/block ]; do sleep 0.05; done; echo released"
    proc = subprocess.Popen(
        wrap(
            SandboxSpec(
                cwd=work,
                read_only=policy.extra_read_only(),
                read_write=(work,),
                limits=policy.limits,
            ),
            ["sh", "-c", script],
        ),
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    time.sleep(0.5)
    assert proc.poll() is None  # held by the file it sees
    (gate / "block").unlink()
    out, _ = proc.communicate(timeout=10)
    assert out.split() == ["released"] and not (gate / "x").exists()
