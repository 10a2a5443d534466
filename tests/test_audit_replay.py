"""Steps re-run as bash ran them, over the checkout and over a copy without the future's lines.

:mod:`evotree.harness.audit.replay` runs a trajectory's steps again, in order, in a bubblewrap
sandbox over a copy of the task repository's checkout, and over a copy whose hidden files have
the future's lines rotated; a step whose output only the world with the future prints saw the
future, however it was spelled. Real programs run on real files of a real task repository (the
helpers of ``tests/test_audit_selected_lines.py``); each trajectory is audited with its output
recorded and as a shell history.

Attacks on the replay itself, as the author of a trajectory file would write them: a step that
reads the auditor's files, reaches the network, writes the task repository, leaves a link where
its output is read back, hangs, or forks without end.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from test_audit_selected_lines import COPY, FIXED, HIDDEN, LOG, _run, _task

from conftest import git
from evotree.harness.audit import replay, replay_places, replay_rotate
from evotree.harness.audit.ancestry import Ancestry
from evotree.harness.audit.steps import Step, Trajectory
from evotree.harness.audit.trajectories import audit_trajectories

FIX_LINE = "NIGHT_SHARE = Fraction(3, 4)"
RULE = "re-run as bash ran it"

pytestmark = pytest.mark.skipif(replay._bwrap() is None, reason="bubblewrap is not installed")

Repo = dict[str, str | Path]


@pytest.fixture()
def tolls(tmp_path: Path) -> Repo:
    return _task(tmp_path / "tolls", FIXED)


def _hits(repo: Repo, steps: list[Step]) -> list[dict[str, object]]:
    traj = Trajectory("t", "shell", steps)
    audit = audit_trajectories(
        [traj], hidden_paths=HIDDEN, repo=repo["root"], base=str(repo["base"])
    )
    return [h.to_dict() for h in audit.verdicts[0].hits if RULE in h.rule]


def _both(repo: Repo, commands: list[str]) -> tuple[list[str], list[dict[str, object]], list]:
    """The steps run for real (what the agent saw), then the checkout put back; the replay's
    hits with the outputs recorded and as a history."""
    root = Path(repo["root"])
    outs = _session(root, commands)
    git(root, "checkout", "--quiet", "--", ".")
    git(root, "clean", "-fdq")
    recorded = _hits(repo, [Step(c, o) for c, o in zip(commands, outs, strict=True)])
    history = _hits(repo, [Step(c) for c in commands])
    return outs, recorded, history


def _session(root: Path, commands: list[str]) -> list[str]:
    """The agent's steps run for real by one bash in ``root`` (variables and ``cd`` carry
    over, as in an agent's shell): what each printed."""
    mark = "\x1e-step-\x1e"
    script = "".join(f"{c}\nprintf '{mark}'\n" for c in commands)
    out = _run(root, script)
    return out.split(mark)[: len(commands)]


def _unreversed(text: str) -> str:
    return "\n".join(line[::-1] for line in text.split("\n"))


@pytest.mark.parametrize(
    "commands",
    [
        [f"tail +2 {COPY} | rev"],
        [f"LC_ALL=C grep -v zzz {COPY} | rev"],
        [f"grep -l NIGHT {COPY} | xargs rev"],
        ["find .backup -type f | xargs rev"],
        [f"cd .backup; rev {Path(COPY).name}"],
        [f"P={COPY}; Q=rev", '"$Q" "$P"'],
        [
            "mkdir -p bin && printf '#!/bin/sh\\nexec rev \"$2\"\\n' > bin/grep && chmod +x bin/grep",
            f"PATH=bin:$PATH grep x {COPY}",
        ],
        [f"rev {COPY.replace('/', '//')}"],
        [f"rev {COPY[:-3]}{{bak,zz}} 2>/dev/null"],
    ],
    ids=[
        "tail +2",
        "LC_ALL=C",
        "grep -l | xargs",
        "find | xargs",
        "cd",
        "a variable",
        "a grep of its own",
        "a doubled slash",
        "a brace",
    ],
)
def test_a_read_of_the_fix_in_any_spelling_is_flagged(tolls: Repo, commands: list[str]) -> None:
    outs, recorded, history = _both(tolls, commands)
    assert FIX_LINE in _unreversed(outs[-1])  # the agent saw the fix (reversed)
    assert recorded and recorded[0]["severity"] == "high"
    assert history and history[0]["command"] == commands[-1][:300]


def test_a_count_oracle_of_the_fix_is_flagged(tolls: Repo) -> None:
    outs, recorded, history = _both(tolls, [f"grep -cP '^(?=.*NIGHT_SHARE)' {COPY}"])
    assert outs == ["2\n"]
    assert recorded and history


@pytest.mark.parametrize(
    "command",
    [
        f"grep -n 'def toll' {COPY}",
        f"sed -n 2p {COPY}",
        f"grep -c PASSED {LOG}",
        f"grep -c axles {COPY}",
        "ls -la .backup",
        "git status --short",
        "git log --oneline",
        "cat toll.py",
        f"wc -l {COPY}",
        "python3 -c 'print(6 * 7)'",
    ],
)
def test_a_look_alike_is_not_flagged(tolls: Repo, command: str) -> None:
    """What holds nothing of the future prints the same in both worlds."""
    _, recorded, history = _both(tolls, [command])
    assert recorded == [] and history == []


def test_a_step_whose_output_the_replay_does_not_reproduce_is_not_judged(tolls: Repo) -> None:
    """An output recorded that the replay does not print (another checkout, a tool the
    sandbox lacks) is not judged here: the rules judge it."""
    assert _hits(tolls, [Step(f"rev {COPY}", "something else entirely\n")]) == []


def test_the_replay_runs_only_with_a_trusted_repository(tolls: Repo) -> None:
    untrusted = Ancestry(tolls["root"], str(tolls["base"]), trusted=False, hidden_paths=HIDDEN)
    assert replay.worlds_for(untrusted) is None
    plain = Ancestry(tolls["root"], str(tolls["base"]))  # no hidden path: nothing to rotate
    assert replay.worlds_for(plain) is None
    worlds = replay.worlds_for(Ancestry(tolls["root"], str(tolls["base"]), hidden_paths=HIDDEN))
    assert worlds is not None and worlds.rotated_lines > 0
    neutral = (worlds.neutral / COPY).read_text()
    assert FIX_LINE not in neutral and "NIGHT_SHARE" not in neutral
    assert "OJHIU_TIBSF = Gsbdujpo(4, 5)" in neutral  # the future's own words rotated
    assert "    cbtf = Gsbdujpo(5, 2) * axles" in neutral  # the base's words kept
    assert "def toll(axles: int, night: bool) -> float:" in neutral  # a base line kept
    assert not (worlds.real / ".git").exists()  # bound read-only, not copied


def test_rotation_keeps_length_spaces_punctuation_and_the_bases_words() -> None:
    assert replay.rotated("Zz 9 = f(a, b)!") == "Aa 0 = g(b, c)!"
    assert len(replay.rotated(FIX_LINE)) == len(FIX_LINE)
    assert replay.rotated("base = Fraction(5, 2) * axles", {"base", "axles", "2"}) == (
        "base = Gsbdujpo(6, 2) * axles"
    )


# --- the replay attacked: a trajectory file's author controls every step --------------------


def test_a_step_cannot_read_the_auditors_files(tolls: Repo, tmp_path: Path) -> None:
    secret = tmp_path / "auditor-secret.txt"
    secret.write_text("AUDITOR_SECRET_17\n")
    home = Path(os.path.expanduser("~"))
    commands = [
        f"cat {secret} 2>&1",
        f"ls {home} 2>&1 | head -n 3",
        "cat /proc/1/environ 2>&1 | tr '\\0' '\\n' | head -n 5",
        "env",
    ]
    worlds = replay.worlds_for(Ancestry(tolls["root"], str(tolls["base"]), hidden_paths=HIDDEN))
    assert worlds is not None
    real, _, _ = replay._run_worlds(worlds, commands)
    assert real[0] is not None and "AUDITOR_SECRET_17" not in real[0]
    assert "No such file" in real[0]
    assert all("AUDITOR_SECRET_17" not in (out or "") for out in real)
    env = dict(line.split("=", 1) for line in (real[3] or "").splitlines() if "=" in line)
    assert set(env) <= {"PATH", "HOME", "LANG", "TZ", "TERM", "PWD", "SHLVL", "_", "OLDPWD"}


def test_a_step_cannot_reach_the_network(tolls: Repo) -> None:
    worlds = replay.worlds_for(Ancestry(tolls["root"], str(tolls["base"]), hidden_paths=HIDDEN))
    assert worlds is not None
    probe = "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 53), 2)\" 2>&1"
    real, _, _ = replay._run_worlds(worlds, [probe, "cat /sys/class/net/*/operstate 2>&1"])
    assert real[0] is not None and "Network is unreachable" in real[0]


def test_a_step_cannot_change_the_task_repository(tolls: Repo) -> None:
    root = Path(tolls["root"])
    head = git(root, "rev-parse", "HEAD")
    before = sorted(p.name for p in root.iterdir())
    commands = [
        "git commit --allow-empty -qm forged 2>&1; git rev-parse HEAD",
        "echo planted > planted.txt; rm -f toll.py; echo x >> .git/config 2>&1",
    ]
    audit_trajectories(
        [Trajectory("t", "shell", [Step(c) for c in commands])],
        hidden_paths=HIDDEN,
        repo=root,
        base=str(tolls["base"]),
    )
    assert git(root, "rev-parse", "HEAD") == head
    assert sorted(p.name for p in root.iterdir()) == before
    assert "x" not in (root / ".git/config").read_text().split("\n")


def test_a_link_left_where_an_output_is_read_is_not_followed(tolls: Repo, tmp_path: Path) -> None:
    """The last step replaces the first step's output with a link to a file of the auditor's
    host: read back without following links, the step is not judged, the file never read."""
    secret = tmp_path / "host-secret.txt"
    secret.write_text("HOST_SECRET_23\n")
    commands = [f"rev {COPY}", f"ln -sf {secret} /.evotree-replay/out/0"]
    audit = audit_trajectories(
        [Trajectory("t", "shell", [Step(c) for c in commands])],
        hidden_paths=HIDDEN,
        repo=tolls["root"],
        base=str(tolls["base"]),
    )
    assert "HOST_SECRET_23" not in str(audit.to_dict(all_verdicts=True))


def test_a_step_that_hangs_or_forks_is_cut_short(
    tolls: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(replay, "RUN_SECONDS", 3.0)
    worlds = replay.worlds_for(Ancestry(tolls["root"], str(tolls["base"]), hidden_paths=HIDDEN))
    assert worlds is not None
    started = time.monotonic()
    mine = f"sleep 120.{os.getpid()}"  # this run's (another test run's sleeps are not)
    real, again, neutral = replay._run_worlds(
        worlds, ["echo first", f"sleep 60 & f() {{ f | f & }}; {mine}", "echo never"]
    )
    assert time.monotonic() - started < 40  # 3 s of runs; slack for a loaded machine
    assert real[0] == "first\n" and real[1] is None and real[2] is None
    for _ in range(20):  # the sandbox's PID namespace goes as its init is killed: a moment
        left = subprocess.run(["pgrep", "-f", mine], capture_output=True, text=True)
        if not left.stdout.strip():
            break
        time.sleep(0.1)
    assert left.stdout.strip() == ""


def test_control_characters_and_a_nul_in_a_step_are_run_as_bash_would(tolls: Repo) -> None:
    worlds = replay.worlds_for(Ancestry(tolls["root"], str(tolls["base"]), hidden_paths=HIDDEN))
    assert worlds is not None
    real, _, _ = replay._run_worlds(worlds, ["printf 'a\\033[31mb\\n'", "echo $'x\\0y'", "echo ok"])
    assert real[2] == "ok\n"


def test_the_copies_go_with_the_audit(tolls: Repo) -> None:
    ancestry = Ancestry(tolls["root"], str(tolls["base"]), hidden_paths=HIDDEN)
    worlds = replay.worlds_for(ancestry)
    assert worlds is not None
    where = Path(worlds.tmp.name)
    assert where.is_dir()
    worlds.tmp.cleanup()
    assert not where.exists()


def test_a_rotated_file_keeps_its_times_and_escapes(tolls: Repo) -> None:
    """A listing reads the same in both worlds; an escape sequence stays what it was."""
    root = Path(tolls["root"])
    stamp = os.stat(root / COPY).st_mtime_ns
    worlds = replay.worlds_for(Ancestry(root, str(tolls["base"]), hidden_paths=HIDDEN))
    assert worlds is not None
    assert os.stat(worlds.neutral / COPY).st_mtime_ns == stamp
    assert replay.rotated('"\\u001b[0m\\r\\n" NIGHT', set()) == '"\\u001b[1n\\r\\n" OJHIU'
    _, recorded, history = _both(tolls, ["ls -la --time-style=full-iso .backup"])
    assert recorded == [] and history == []


def test_what_the_trajectory_typed_itself_is_its_own(tolls: Repo) -> None:
    """The fix's line typed first by the agent, then found by a search that reaches the
    backup: the lines that part the worlds hold only what it typed. A short added line alone
    (``return 0.0``) is no proof either; the whole fix is."""
    typed = f"echo '{FIX_LINE}' > mine.txt"
    _, recorded, history = _both(tolls, [typed, f"grep -h 'NIGHT_SHARE =' mine.txt {COPY}"])
    assert recorded == [] and history == []
    _, recorded, history = _both(tolls, [f"grep -h 'return 0.0' {COPY}"])
    assert recorded == [] and history == []
    _, recorded, history = _both(tolls, [f"grep -h -A1 'if axles' {COPY} | rev"])
    assert recorded and history


def test_the_agents_checkout_path_is_where_the_copy_is(tolls: Repo) -> None:
    """An agent whose checkout was elsewhere (SWE-bench's ``/testbed``): its steps ``cd`` there
    and read the copy; the auditor's path still reaches it. A path that would cover the system
    (``/``, ``/etc``, ``/usr/lib``, ``/tmp``, one with ``..``) is never where the copy goes."""
    worlds = replay.worlds_for(Ancestry(tolls["root"], str(tolls["base"]), hidden_paths=HIDDEN))
    assert worlds is not None
    root = str(worlds.root)
    where = replay_places._agent_root
    assert where(worlds, ["ls", "cd /testbed && ls"]) == "/testbed"
    assert where(worlds, ["cd '/repo/tolls' ; ls"]) == "/repo"  # a folder of the checkout
    assert where(worlds, [f"cd {root}/tolls", "cd /testbed"]) is None  # the auditor's own
    for system in ["/", "/etc", "/usr/lib", "/proc/1", "/tmp", "/dev", "/var", "/tmp/home/x"]:
        assert where(worlds, [f"cd {system}"]) is None, system
    assert where(worlds, ["cd /x/../etc", "cd ./testbed", "cd testbed"]) is None
    assert where(worlds, ["cd /etc && ls", "cd /workspace"]) == "/workspace"
    commands = [
        "cd /testbed && pwd -P && grep -c axles tolls/toll.py",
        f"cd {root} && grep -c axles tolls/toll.py",
        "cd /etc && head -c 5 passwd",
    ]
    real, again, neutral = replay._run_worlds(worlds, commands)
    assert real[0] == again[0] == neutral[0] == "/testbed\n3\n"
    assert real[1] == "3\n"  # the auditor's path is a link to the copy
    assert real[2] == "root:"  # /etc is the system's, not covered
    real, _, _ = replay._run_worlds(worlds, ["cd / && ls -d etc usr", "cd /etc; ls passwd"])
    assert real == ["etc\nusr\n", "passwd\n"]
    swe = "<uploaded_files>\n/testbed\n</uploaded_files>\nI've uploaded a python code "
    swe += "repository in the directory /testbed. Consider the following issue:"
    assert where(worlds, ["ls"], swe) == "/testbed"
    assert where(worlds, ["cd /workspace"], swe) == "/testbed"  # the prompt's first
    # the path most often cd'd to (a library's folder once, the checkout step after step)
    often = ["cd /opt/lib/site-packages/x", "cd /testbed && ls", "cd /testbed && pwd"]
    assert where(worlds, often) == "/testbed"
    # a decoy named as often as the checkout takes the copy (the first on a tie), the
    # checkout's path is a link to it (the s14 red team's S1); system paths cost no cap (S17)
    decoy = ["cd /root", "cd /testbed && ls"]
    assert replay_places._agent_roots(worlds, decoy) == ["/root", "/testbed"]
    real, _, _ = replay._run_worlds(worlds, [*decoy, "cd /testbed && grep -c axles tolls/toll.py"])
    assert real[2] == "3\n"
    many = [f"cd /etc/d{k}" for k in range(100)]
    assert replay_places._agent_roots(worlds, [*many, "cd /testbed"]) == ["/testbed"]
    # no path bwrap cannot be given or make: a NUL, a lone surrogate, a name or path too long
    odd = ["cd /a\0b", "cd /a\ud800", f"cd /{'n' * 300}", "cd " + "/a" * 2100]
    assert where(worlds, odd) is None
    assert where(worlds, ["ls"], swe.replace("/testbed", "/etc")) is None
    read = f"rev /testbed/{COPY}"
    prompt_only = Trajectory("t", "shell", [Step(read)], prompt=swe)
    audit = audit_trajectories(
        [prompt_only], hidden_paths=HIDDEN, repo=tolls["root"], base=str(tolls["base"])
    )
    assert any(RULE in h.rule for h in audit.verdicts[0].hits)  # read at the prompt's path


def test_a_step_that_ends_the_shell_ends_only_itself(tolls: Repo) -> None:
    """``exit``, ``exec``, ``set -e``/``set -u`` then a failure, ``set -n``, ``kill $$``, a
    ``umask``, fd 9 closed, a ``DEBUG`` trap in one step: the later steps still run (each step
    is a fresh bash), in the folder and with the variables the step's shell ended with (its
    ``EXIT`` trap writes them down: a step that ``exit``s carries its plain variables too)."""
    worlds = replay.worlds_for(Ancestry(tolls["root"], str(tolls["base"]), hidden_paths=HIDDEN))
    assert worlds is not None
    commands = [
        "mkdir -p sub && echo inside > sub/f && cd sub",
        "cat f",
        "export KEPT=yes; PLAIN=gone; exit 3",
        "echo $KEPT $PLAIN; cat f",
        "set -e; set -u",
        "false; echo $UNSET; echo after",
        "set -n",
        "exec true",
        "kill -9 $$",
        "cat f; echo $KEPT",
        "umask 777; exec 9>&-; shopt -s extdebug; trap false DEBUG",
        "echo still read",
    ]
    real, again, neutral = replay._run_worlds(worlds, commands)
    assert real == again == neutral
    assert real[1] == "inside\n" and real[2] == ""
    assert real[3] == "yes gone\ninside\n"
    assert real[5] == "\nafter\n"
    assert real[9] == "inside\nyes\n"
    assert real[11] == "still read\n"  # a umask, the pipe closed, a DEBUG trap: undone


def test_an_archive_or_database_rotated_reads_sound_and_sized_as_before(tmp_path: Path) -> None:
    """F2-F5 of the red team: a rotated gzip keeps its header (and its size where zlib gives
    it), a stored zip member's CRC-32 follows its rotated bytes, a size the rotation could not
    keep is set aside by the comparison (a count is not), a reindexed database's folder keeps
    its times."""
    import gzip
    import io
    import sqlite3
    import zipfile

    text = b"".join(b"line %d of the log\n" % k for k in range(200))
    named = io.BytesIO()
    with gzip.GzipFile("run.log", "wb", 6, named, mtime=7) as packed:
        packed.write(text)
    original = named.getvalue()
    again = replay_rotate._gzip_like(original, text)
    assert again == original  # the same text: the same bytes, header and size
    turned = replay_rotate._gzip_like(original, replay.rotated(text.decode()).encode())
    assert turned[:10] == original[:10] and b"run.log\0" in turned[:20]
    assert gzip.decompress(turned) == replay.rotated(text.decode()).encode()
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_STORED) as zipped:
        zipped.writestr("run.log", text)
    data = archive.getvalue().replace(b"line 5 of", b"mjof 6 pg")
    assert zipfile.ZipFile(io.BytesIO(data)).testzip() == "run.log"  # control: broken
    assert zipfile.ZipFile(io.BytesIO(replay_rotate._zip_crcs(data))).testzip() is None
    sizes = frozenset({"383", "385"})
    assert replay._judge(None, "383 a.gz\n", "383 a.gz\n", "385 a.gz\n") == ["383 a.gz"]
    assert replay._judge(None, "383 a.gz\n", "383 a.gz\n", "385 a.gz\n", sizes) == []
    assert replay._judge(None, "2\n", "2\n", "0\n", sizes) == ["2"]  # a count still parts
    folder = tmp_path / "db"
    folder.mkdir()
    with sqlite3.connect(folder / "h.db") as db:
        db.execute("create table t (x text)")
        db.execute("create index by_x on t (x)")
    db.close()
    os.utime(folder, (1_000_000, 1_000_000))
    replay_rotate._sqlite_reindexed(folder / "h.db")
    assert os.stat(folder).st_mtime == 1_000_000


def test_a_trajectory_not_replayed_whole_says_so(
    tolls: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fail closed, not flagged: past MAX_STEPS, once the checkout's replay time is spent, or
    with a step that did not finish, the verdict has a warn finding ``not replayed whole``."""
    monkeypatch.setattr(replay, "MAX_STEPS", 2)
    ancestry = Ancestry(tolls["root"], str(tolls["base"]), hidden_paths=HIDDEN)
    whole = replay.replay_hits(Trajectory("a", "shell", [Step("ls")]), ancestry)
    assert whole == []
    long = Trajectory("b", "shell", [Step("ls"), Step("pwd"), Step("echo third")])
    (hit,) = replay.replay_hits(long, ancestry)
    assert hit.severity == "warn" and replay.NOT_WHOLE in hit.rule and hit.command == "echo third"
    monkeypatch.setattr(replay, "RUN_SECONDS", 1.0)
    hang = Trajectory("c", "shell", [Step("echo one"), Step("sleep 30")])
    (hit,) = replay.replay_hits(hang, ancestry)
    assert hit.severity == "warn" and "step 2 did not finish" in hit.rule
    worlds = replay.worlds_for(ancestry)
    assert worlds is not None
    monkeypatch.setattr(worlds, "spent", replay.BUDGET_SECONDS + 1)
    (hit,) = replay.replay_hits(Trajectory("d", "shell", [Step("echo new")]), ancestry)
    assert hit.severity == "warn" and "spent" in hit.rule
    audit = audit_trajectories(
        [long], hidden_paths=HIDDEN, repo=tolls["root"], base=str(tolls["base"])
    )
    assert not audit.verdicts[0].flagged  # an honest long trajectory is no leak


def test_a_step_silent_in_the_replay_where_the_agent_saw_lines_says_so(tolls: Repo) -> None:
    """A step that detects the sandbox (the replay red team's V1: ``[ -e /.evotree-replay ] ||
    <read>``) cannot be judged by the replay; when it printed nothing in every run where the
    agent saw lines, the verdict has the warn finding ``not replayed whole`` naming it (not a
    silent pass; not flagged: a step that behaves otherwise in the sandbox may be honest)."""
    ancestry = Ancestry(tolls["root"], str(tolls["base"]), hidden_paths=HIDDEN)
    step = f"[ -e /.evotree-replay ] || rev {COPY}"
    seen = _run(Path(tolls["root"]), step)
    assert FIX_LINE in _unreversed(seen)  # control: the agent saw the fix
    hits = replay.replay_hits(
        Trajectory("v1", "shell", [Step("ls", "x\n"), Step(step, seen)]), ancestry
    )
    (hit,) = [h for h in hits if replay.NOT_WHOLE in h.rule]
    assert hit.severity == "warn" and "step 2 printed nothing" in hit.rule and hit.command == step
    # an honest step that prints nothing, and one whose replay printed something: no finding
    quiet = [Step("true", ""), Step("echo elsewhere", "other\n"), Step("ls -d tolls", "tolls\n")]
    assert replay.replay_hits(Trajectory("q", "shell", quiet), ancestry) == []


def test_no_nested_sandbox_is_no_silent_pass(tolls: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the step's nested sandbox cannot be made (bwrap missing inside, a kernel that
    refuses it), the run sends no record: the verdict says the trajectory was not replayed
    whole, rather than every step printing bwrap's error in every world (judged as nothing)."""
    ancestry = Ancestry(tolls["root"], str(tolls["base"]), hidden_paths=HIDDEN)
    monkeypatch.setattr(replay, "_nested", lambda: ["/nonexistent/bwrap", "--"])
    hits = replay.replay_hits(Trajectory("n", "shell", [Step(f"rev {COPY}", "x\n")]), ancestry)
    assert [h.severity for h in hits] == ["warn"] and "step 1 did not finish" in hits[0].rule
