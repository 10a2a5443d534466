"""Red team of the first line: task repositories bound pruned at their base (issue 29).

Commit 03d6e12 copies each task git directory ``git_guard.find_git_dirs`` finds, before a traced
phase, with only what its base (HEAD's commit) reaches, and binds the copy over it
(``harness/git_prune.py``). Each attack below is what the candidate (code in the box, in this
phase or an earlier one of the same work tree) or a careless task image would try: make the box
see the future (``FUTURE_SECRET_42``), make the host-side copy (git run outside the sandbox on a
git directory the box prepared) run a program, read outside the task or hang, or break honest
work. The first line is ON in every attack (``EVOTREE_TASK_REPOS`` unset); each asserts its
attack ran (a control). An attack that wins is ``xfail(strict=False)`` asserting the safe outcome,
its reason the exact mechanism; one that is stopped passes, saying by what. "WON" in a reason
is the result against 03d6e12 itself; a fix made since may stop it (the xfail is not strict: it
then passes, and the marker can go).

At 03d6e12 (checked on a clean export of it): A, a nested git directory an earlier phase wrote
(``commondir``, links into the task's store, ``info/`` a link) — WON, the future (or a host
repository's content) is copied into the box; B, a FIFO as config or included config — WON, the
next start hangs (600 s per git call); C, a config armed with programs — stopped; D, a flood of
root entries hiding a nested repository — WON; E, a nested repository four folders down — WON
(documented as left); E2, an earlier phase moves an image's nested repository 70 folders
down — WON; E3, that move leaves no git_state row (compare reads the copy) — WON; F, honest git
in the box — works, but plain ``git describe``, the phase's
staging after the phase and a submodule's git break; G, many prepared repositories — WON (no
cap: a slow start); H, an image cloned with ``--shared`` — works; I, odd references — stopped;
a linked worktree of the image — its future absent, git in it broken;
J, a task repository reached through a read-only bind (the prepare phase's view of the
candidate folder) — WON, bound whole.

At eeb56a9 (83aef20 answered A, B, D, E): A, B, D, E, E2 stopped (their xfails pass); the
submodule works; still G (no cap), E3 (no row for the move), J, plain describe, the phase's
staging, a linked worktree — and H now breaks (an alternate hides the whole repository).

At c76164f (read-only folders searched too, at most 32 copies a start, the box path's own entry
compared): G, E3 and J stopped too. Every attack that won is now a plain test (its former reason
kept as a comment above it). Left, as xfails: four changes to honest work, each documented in
docs/threat-model.md — plain ``git describe`` (tags are copied peeled), the phase's staging after
the phase, an image cloned with ``--shared``/``--reference`` (an alternate is refused: the
repository is hidden; the image should ``git repack -a -d`` and drop its alternates), git in a
linked worktree of the image (its ``worktrees/`` entry is not copied).
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from pathlib import Path

import pytest
from test_task_prune import _ENV, SECRET, _commit, _git, _task

from evotree.harness import git_guard, git_prune
from evotree.harness.sandbox import finish_trace, wrap
from evotree.harness.sandbox_launch import accounted, sandbox_env
from evotree.harness.sandbox_spec import SandboxSpec
from test_redteam_trace_deputy import seccomp as seccomp  # noqa: F401 - the fixture

#: content of a repository outside the task (on the host, never bound into the box)
HOST_SECRET = "HOST_SECRET_77"


@pytest.fixture(autouse=True)
def _first_line_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every attack here runs with the first line on (the default)."""
    monkeypatch.delenv(git_prune.ENV_TASK_REPOS, raising=False)


def _phase(
    tmp_path: Path, work: Path, script: str, n: int = 1
) -> tuple[subprocess.CompletedProcess, list]:
    """Phase ``n`` over ``work``: ``python3 -c script`` in the sandbox, traced (its own trace)."""
    spec = SandboxSpec(cwd=work, read_write=(work,), trace=tmp_path / f"raw{n}.trace")
    proc = subprocess.run(
        accounted(wrap(spec, ["python3", "-c", script])),
        env=sandbox_env(dict(_ENV)),
        capture_output=True,
        text=True,
        timeout=180,
    )
    evidence = tmp_path / f"evidence{n}"
    evidence.mkdir(exist_ok=True)
    rows = finish_trace(spec, evidence)
    return proc, rows


def _sources(tmp_path: Path, n: int) -> dict[str, str]:
    """Phase ``n``'s task repositories as its snapshot recorded them: box path -> source."""
    snap = json.loads(git_guard.snapshot_path(tmp_path / f"raw{n}.trace").read_text())
    return {r["path"]: r["source"] for r in snap["repos"]}


# ---------------------------------------- A: a git directory an earlier phase prepared (host git)

_READ_EVIL = """\
import subprocess
out = subprocess.run(["git", "-C", "evil", "log", "-p", "-1"], capture_output=True, text=True)
print("rc", out.returncode)
print("seen", out.stdout.replace("\\n", " | ")[-600:], out.stderr.replace("\\n", " | ")[-300:])
for name in ("exclude", "attributes"):
    try:
        print("file", open("evil/.git/info/" + name).read().replace("\\n", " | "))
    except OSError as exc:
        print("file", exc)
"""

_PREPARE = {
    # a linked worktree's layout: the common dir named by a text file, no link at all
    "commondir-own-future": (
        'os.makedirs(g); open(g + "/commondir", "w").write("../../.git\\n")\n'
        'open(g + "/HEAD", "w").write("ref: refs/heads/fix\\n"); open(g + "/config", "w")\n',
        SECRET,
    ),
    # the same, naming a repository of the host outside the task (never bound into the box)
    "commondir-host-repository": (
        'os.makedirs(g); open(g + "/commondir", "w").write("{elsewhere}\\n")\n'
        'open(g + "/HEAD", "w").write("ref: refs/heads/main\\n"); open(g + "/config", "w")\n',
        HOST_SECRET,
    ),
    # links the host's git follows: objects and refs of the task's own (bound over in the box)
    "links-into-the-task-store": (
        'os.makedirs(g); os.symlink("../../.git/objects", g + "/objects")\n'
        'os.symlink("../../.git/refs", g + "/refs")\n'
        'open(g + "/HEAD", "w").write("ref: refs/heads/fix\\n"); open(g + "/config", "w")\n',
        SECRET,
    ),
    # a repository with no commit whose info/ is a link to a folder of the host: the copy reads
    # info/exclude and info/attributes through it (O_NOFOLLOW guards the last component only)
    "info-link-to-a-host-folder": (
        'import shutil, subprocess\nsubprocess.run(["git", "init", "-q", "evil"], check=True)\n'
        'shutil.rmtree(g + "/info"); os.symlink("{hostinfo}", g + "/info")\n',
        HOST_SECRET,
    ),
}


@pytest.mark.heavy
# Won against 03d6e12, stopped since (83aef20, eeb56a9, c76164f: now a plain test): WON: phase 1
# writes evil/.git (HEAD 'ref: refs/heads/fix', an empty config, and either commondir '../../.git'
# — or an absolute path to any repository of the host — or objects/refs links into ../../.git). In
# the box those name the pruned copy or nothing; before phase 2, find_git_dirs finds evil/.git and
# prune_copy runs the host's git on it OUTSIDE the box, where commondir and the links resolve to
# the ORIGINAL task git directory (or the host repository): _head's rev-parse takes the future
# branch as the base, pack-objects packs the future into the copy, and the copy is bound at
# evil/.git: git -C evil log -p shows FUTURE_SECRET_42 (or the host repository's content).
# Likewise evil/.git/info a link to a host folder: _read_regular's O_NOFOLLOW guards only the last
# component, so the host's <folder>/exclude and attributes are copied into the box. prune_copy
# never checks that the git directory is self-contained (no commondir, no link in it, no
# alternates outside it). The audit of phase 2 flags nothing (checked once by hand: no flagged
# verdict, rows exec and gitread only).
@pytest.mark.parametrize("attack", sorted(_PREPARE))
def test_a_git_directory_prepared_by_an_earlier_phase_names_the_future(
    tmp_path: Path, seccomp: None, attack: str
) -> None:
    work = tmp_path / "work"
    _task(work)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    _git(elsewhere, "init", "-q", "-b", "main")
    _commit(elsewhere, "h.txt", HOST_SECRET + "\n", "host repository")
    body, secret = _PREPARE[attack]
    hostinfo = tmp_path / "hostinfo"
    hostinfo.mkdir()
    (hostinfo / "exclude").write_text(f"{HOST_SECRET} in a host file\n")
    prepare = 'import os\ng = "evil/.git"\n' + body.replace(
        "{elsewhere}", str(elsewhere / ".git")
    ).replace("{hostinfo}", str(hostinfo))
    prepare += 'print("made", sorted(os.listdir(g)))\n'
    first, _ = _phase(tmp_path, work, prepare, 1)
    assert first.stdout.startswith("made ['"), first.stdout + first.stderr[-2000:]
    second, _ = _phase(tmp_path, work, _READ_EVIL, 2)
    # control: the first line was on in phase 2, and the task was bound as a pruned copy — or,
    # where evil/.git's HEAD cannot be read without following its links into the task's store
    # (links-into-the-task-store, since session 20: an unpruned store's unreadable HEAD keeps no
    # copy beside it), hidden with it: the candidate's own writes cost its own task, never a leak
    sources = _sources(tmp_path, 2)
    copies = str(git_prune.copies_path(tmp_path / "raw2.trace"))
    if attack == "links-into-the-task-store":
        assert str(work / ".git") not in sources, sources
    else:
        assert sources[str(work / ".git")].startswith(copies), sources
        assert "seen" in second.stdout, second.stdout + second.stderr[-2000:]
    assert secret not in second.stdout, second.stdout


# ---------------------------------------------------------------- B: a hang in the host's copy


def _release(fifo: Path, done: threading.Event) -> None:
    """Open ``fifo`` for writing until ``done``: each reader blocked on it gets an end of file."""
    while not done.is_set():
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            time.sleep(0.02)
            continue
        os.close(fd)


_FIFOS = {
    "config-a-fifo": 'os.remove(g + "/config"); os.mkfifo(g + "/config"); f = g + "/config"',
    "include-path-a-fifo": (
        'os.mkfifo("pipe"); f = "pipe"\n'
        'open(g + "/config", "a").write("[include]\\n\\tpath = ../../pipe\\n")'
    ),
}


@pytest.mark.heavy
# Won against 03d6e12, stopped since (83aef20, eeb56a9, c76164f: now a plain test): WON (a hang):
# phase 1 makes a nested repository evil/.git whose config is a FIFO (or includes one:
# include.path = ../../pipe). Before phase 2, prune_copy reads HEAD with O_NONBLOCK and checks
# what is regular, but its first git call (rev-parse) opens the config through git, which blocks
# on the FIFO until _git's timeout of 600 s — per git call that reaches it, per repository found:
# the phase's start hangs for ten minutes or more per such repository, then the repository is
# hidden.
@pytest.mark.parametrize("attack", sorted(_FIFOS))
def test_a_fifo_in_a_prepared_git_directory_hangs_the_copy(
    tmp_path: Path, seccomp: None, attack: str
) -> None:
    work = tmp_path / "work"
    _task(work)
    prepare = (
        'import os, subprocess\nsubprocess.run(["git", "init", "-q", "evil"], check=True)\n'
        'g = "evil/.git"\n' + _FIFOS[attack] + '\nprint("made", os.path.exists(f))\n'
    )
    first, _ = _phase(tmp_path, work, prepare, 1)
    assert first.stdout.strip() == "made True", first.stdout + first.stderr[-2000:]
    fifo = work / ("evil/.git/config" if attack == "config-a-fifo" else "pipe")
    assert fifo.is_fifo()  # the control: the box could make it, it is there for the host
    result: dict[str, object] = {}

    def start() -> None:
        try:
            result["binds"] = git_guard.before_phase([work], tmp_path / "raw2.trace")
        except Exception as exc:  # noqa: BLE001 - what the start raised is the result
            result["error"] = exc

    thread = threading.Thread(target=start, daemon=True)
    began = time.monotonic()
    thread.start()
    thread.join(8)
    waited = time.monotonic() - began
    hung = thread.is_alive()
    done = threading.Event()
    releaser = threading.Thread(target=_release, args=(fifo, done), daemon=True)
    releaser.start()
    thread.join(60)
    done.set()
    releaser.join(5)
    git_prune.remove_copies(tmp_path / "raw2.trace")
    assert not thread.is_alive()
    assert not hung, f"the phase's start was still copying after {waited:.1f} s: {result}"


# ---------------------------------- C: a config that would make the host's git run a program

_HOOKS = (
    "pre-commit",
    "post-checkout",
    "post-index-change",
    "reference-transaction",
    "pre-auto-gc",
    "post-rewrite",
)


def _armed(repo: Path, marker: Path) -> None:
    """``repo``'s config, attributes and hooks armed: each program they name touches ``marker``."""
    touch = f"touch {marker}"
    hooks = repo / ".git" / "myhooks"
    hooks.mkdir()
    for name in _HOOKS:
        (hooks / name).write_text(f"#!/bin/sh\n{touch}\n")
        (hooks / name).chmod(0o755)
        (repo / ".git" / "hooks" / name).write_text(f"#!/bin/sh\n{touch}\n")
        (repo / ".git" / "hooks" / name).chmod(0o755)
    (repo / ".git" / "info" / "attributes").write_text("* filter=x diff=x merge=x\n")
    with open(repo / ".git" / "config", "a") as fh:
        fh.write(
            "[core]\n\trepositoryformatversion = 1\n"
            f"\tfsmonitor = {touch}; echo\n\thooksPath = {hooks}\n"
            f"\tsshCommand = {touch}; echo\n\tpager = {touch}; cat\n"
            f"\teditor = {touch}; true\n\talternateRefsCommand = {touch}; echo\n"
            "[extensions]\n\tpartialClone = origin\n"
            f'[remote "origin"]\n\turl = {repo.parent / "upstream"}\n\tpromisor = true\n'
            f"\tuploadpack = {touch}; git-upload-pack\n"
            f'[filter "x"]\n\tclean = {touch}; cat\n\tsmudge = {touch}; cat\n\tprocess = {touch}\n'
            f'[diff "x"]\n\ttextconv = {touch}; cat\n\tcommand = {touch}\n'
            f'[merge "x"]\n\tdriver = {touch}\n'
            f"[credential]\n\thelper = !{touch}\n[gpg]\n\tprogram = {touch}\n"
            "[gc]\n\tauto = 1\n[maintenance]\n\tauto = true\n"
        )


def test_an_armed_config_runs_nothing_in_the_hosts_copy(tmp_path: Path) -> None:
    """Stopped: prune_copy's git runs with ``-c core.fsmonitor=false -c core.hooksPath=/dev/null``
    and ``GIT_NO_LAZY_FETCH=1`` (git_env), and no command it runs (rev-parse, for-each-ref,
    pack-objects, cat-file --batch-check, read-tree without -u) runs a filter, driver, pager or
    transport: an index naming an absent blob (which makes cat-file want a lazy fetch from the
    promisor remote, whose uploadpack is a program) touches nothing. The control: the same
    ``cat-file --batch-check`` without GIT_NO_LAZY_FETCH, and a plain ``git status``, run it."""
    work = tmp_path / "evil"
    work.mkdir()
    _git(work, "init", "-q", "-b", "main")
    _commit(work, "a.txt", "a\n", "base")
    _git(work, "update-index", "--add", "--cacheinfo", f"100644,{'1' * 40},absent.txt")
    marker = tmp_path / "RAN"
    _armed(work, marker)
    copy = git_prune.prune_copy(work / ".git", tmp_path / "copy")
    assert copy.index == "rebuilt"  # the check that wants the absent blob ran (cat-file)
    assert not marker.exists(), "the host's copy ran a program the task's config names"
    assert "fsmonitor" not in (Path(copy.path) / "config").read_text()  # the box's copy: disarmed
    # the controls: the task's config is armed (the copy's own config keeps none of it since
    # the judge-copy fixes: an allowlist)
    subprocess.run(
        ["git", "--git-dir", str(work / ".git"), "cat-file", "--batch-check"],
        input=f"{'1' * 40}\n",
        capture_output=True,
        text=True,
        env={k: v for k, v in _ENV.items() if k != "GIT_NO_LAZY_FETCH"},
    )
    assert marker.exists(), "control: a lazy fetch by cat-file runs the remote's uploadpack"
    marker.unlink()
    subprocess.run(["git", "status"], cwd=work, capture_output=True, env=_ENV)
    assert marker.exists(), "control: git status runs core.fsmonitor"


# ----------------------------------------------- D, E: a nested task repository the guard misses


def _nested(work: Path, rel: str) -> Path:
    """The task at ``work`` and a nested repository at ``work/rel`` whose future (a branch
    ``fix``) holds the secret: a vendored library of the image, not a submodule."""
    _task(work)
    lib = work / rel
    lib.mkdir(parents=True)
    _git(lib, "init", "-q", "-b", "main")
    _commit(lib, "l.txt", "lib base\n", "lib base")
    _git(lib, "checkout", "-q", "-b", "fix")
    _commit(lib, "l.txt", f"lib {SECRET}\n", f"lib fix {SECRET}")
    _git(lib, "checkout", "-q", "main")
    return lib


def _read_nested(rel: str) -> str:
    return (
        "import subprocess\n"
        f'out = subprocess.run(["git", "-C", "{rel}", "log", "--all", "-p"], capture_output=True,'
        " text=True)\n"
        'print("rc", out.returncode)\n'
        'print("seen", out.stdout.replace("\\n", " | ")[-800:])\n'
    )


@pytest.mark.heavy
# Won against 03d6e12, stopped since (83aef20, eeb56a9, c76164f: now a plain test): WON:
# find_git_dirs stops queueing folders once it has seen MAX_ENTRIES (5,000) entries, counting the
# root's own listing first. Phase 1 makes 5,001 entries (links) in the work tree's root; before
# phase 2 the guard then never looks below the root, so a nested task repository of the image
# (vendor/lib/.git, found and pruned in phase 1) is neither pruned nor locked: it is bound whole
# and git -C vendor/lib log --all -p shows its future. The threat model lists 'past 5,000 entries'
# as left, but not that the candidate can cause it.
def test_an_earlier_phase_floods_the_root_so_a_nested_repository_is_bound_whole(
    tmp_path: Path, seccomp: None
) -> None:
    work = tmp_path / "work"
    lib = _nested(work, "vendor/lib")
    flood = (
        "import os\nfor i in range(5001):\n    os.symlink('x', 'junk%05d' % i)\n"
        'print("made", len(os.listdir(".")))\n'
    )
    first, _ = _phase(tmp_path, work, flood, 1)
    assert first.stdout.startswith("made 50"), first.stdout + first.stderr[-2000:]
    assert str(lib / ".git") in _sources(tmp_path, 1)  # control: in phase 1 it was pruned
    second, _ = _phase(tmp_path, work, _read_nested("vendor/lib"), 2)
    assert "seen" in second.stdout, second.stdout + second.stderr[-2000:]
    assert str(work / ".git") in _sources(tmp_path, 2)  # the task itself is still pruned
    assert SECRET not in second.stdout, second.stdout


@pytest.mark.heavy
# Won against 03d6e12, stopped since (83aef20, eeb56a9, c76164f: now a plain test): WON
# (documented as left in docs/threat-model.md): a nested repository of the image four folders
# below the read-write root (a/b/c/d/.git) is below MAX_DEPTH = 3, so find_git_dirs never finds
# it; it is bound whole and git -C a/b/c/d log --all -p shows its future. The same nested
# repository three folders down (a/b/c/.git) is pruned (control).
def test_a_nested_repository_deeper_than_the_guard_looks_is_bound_whole(
    tmp_path: Path, seccomp: None
) -> None:
    work = tmp_path / "work"
    _nested(work, "a/b/c/d")
    shallow = work / "x" / "y" / "z"
    shallow.mkdir(parents=True)
    _git(shallow, "init", "-q", "-b", "main")
    _commit(shallow, "s.txt", "s\n", "s")
    script = _read_nested("a/b/c/d")
    proc, _ = _phase(tmp_path, work, script, 1)
    assert "seen" in proc.stdout, proc.stdout + proc.stderr[-2000:]
    sources = _sources(tmp_path, 1)
    assert str(shallow / ".git") in sources  # control: three folders down is found and pruned
    assert SECRET not in proc.stdout, proc.stdout


# ------------------------------------------------------- F: honest work with the first line on

_RUN = """\
import subprocess
def run(*argv):
    p = subprocess.run(list(argv), capture_output=True, text=True)
    print(argv[1] + ":" + (argv[2] if len(argv) > 2 else ""), p.returncode,
          (p.stdout + p.stderr).replace("\\n", " | ")[:400])
"""


def _answers(proc: subprocess.CompletedProcess) -> dict[str, tuple[int, str]]:
    out: dict[str, tuple[int, str]] = {}
    for line in proc.stdout.splitlines():
        parts = line.split(" ", 2)
        if len(parts) >= 2 and parts[1].lstrip("-").isdigit():
            out[parts[0]] = (int(parts[1]), parts[2] if len(parts) > 2 else "")
    return out


@pytest.mark.heavy
def test_honest_git_in_the_box_works(tmp_path: Path, seccomp: None) -> None:
    """Stopped from breaking: status, diff, log, blame, add and diff --cached work in the box
    (the index came along, the base's history is all there)."""
    work = tmp_path / "work"
    ids = _task(work)
    script = _RUN + (
        'run("git", "status", "--short")\n'
        'open("a.txt", "w").write("changed\\n"); open("new.txt", "w").write("new\\n")\n'
        'run("git", "diff", "--stat")\nrun("git", "log", "--oneline")\n'
        'run("git", "blame", "HEAD", "--", "a.txt")\nrun("git", "add", "new.txt")\n'
        'run("git", "diff", "--cached", "--name-only")\n'
        'run("git", "show", "HEAD~1:a.txt")\n'
    )
    proc, _ = _phase(tmp_path, work, script)
    got = _answers(proc)
    assert len(got) == 7, proc.stdout + proc.stderr[-2000:]
    assert got["status:--short"] == (0, ""), got
    assert got["diff:--stat"][0] == 0 and "a.txt" in got["diff:--stat"][1], got
    assert got["log:--oneline"][0] == 0 and got["log:--oneline"][1].count("|") == 2, got
    assert got["blame:HEAD"][0] == 0 and ids["base"][:8] in got["blame:HEAD"][1], got
    assert got["add:new.txt"][0] == 0 and got["diff:--cached"] == (0, "new.txt | "), got
    assert got["show:HEAD~1:a.txt"] == (0, "old | "), got
    assert SECRET not in proc.stdout


@pytest.mark.heavy
@pytest.mark.xfail(
    strict=False,
    reason="BREAKS: the copy writes every kept tag peeled (_kept_refs: a tag's commit, not the "
    "tag object), so the image's annotated tags are lightweight in the box: plain git describe "
    "(annotated tags only) fails 'No annotated tags can describe ...', git tag -v and "
    "cat-file -t v0.9 see a commit. describe --tags still works.",
)
def test_plain_git_describe_in_the_box(tmp_path: Path, seccomp: None) -> None:
    work = tmp_path / "work"
    _task(work)
    outside = _git(work, "describe")
    script = _RUN + 'run("git", "describe")\nrun("git", "describe", "--tags")\n'
    proc, _ = _phase(tmp_path, work, script)
    got = _answers(proc)
    assert got["describe:--tags"][0] == 0, proc.stdout + proc.stderr[-2000:]  # control
    assert got["describe:"] == (0, outside + " | "), got


@pytest.mark.heavy
@pytest.mark.xfail(
    strict=False,
    reason="CHANGED (documented in the threat model): what the phase stages (git add) goes to "
    "the copy's index, which remove_copies deletes after finish_trace; a grader after the phase "
    "reading the task's own index (git diff --cached) sees the image's index, not the phase's "
    "staging, and objects the phase wrote are gone.",
)
def test_a_grader_after_the_phase_sees_what_the_phase_staged(tmp_path: Path, seccomp: None) -> None:
    work = tmp_path / "work"
    _task(work)
    script = (
        _RUN + 'open("new.txt", "w").write("new\\n")\nrun("git", "add", "new.txt")\n'
        'run("git", "diff", "--cached", "--name-only")\n'
    )
    proc, _ = _phase(tmp_path, work, script)
    assert _answers(proc)["diff:--cached"] == (0, "new.txt | "), proc.stdout  # control: staged
    assert _git(work, "diff", "--cached", "--name-only") == "new.txt"


@pytest.mark.heavy
def test_a_submodule_in_the_image(tmp_path: Path, seccomp: None) -> None:
    """A submodule absorbed into ``.git/modules/sub`` (as ``git submodule add`` makes it), whose
    upstream has a future branch: its future is absent in the box (stopped: ``modules/`` is not
    copied and find_git_dirs does not look inside ``.git``). But honest work breaks: the parent's
    ``git status``/``diff``/``stash`` and every git in ``sub`` fail with 'not a git repository:
    sub/../.git/modules/sub' (an xfail when they do)."""
    work = tmp_path / "work"
    _task(work)
    up = tmp_path / "up"
    up.mkdir()
    _git(up, "init", "-q", "-b", "main")
    _commit(up, "u.txt", "u\n", "u")
    _git(up, "checkout", "-q", "-b", "fix")
    _commit(up, "u.txt", f"{SECRET}\n", f"upstream fix {SECRET}")
    _git(up, "checkout", "-q", "main")
    _git(work, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(up), "sub")
    _git(work, "commit", "-q", "-m", "add sub")
    assert _git(work, "status", "--short") == ""  # outside the box: clean
    script = _RUN + (
        'run("git", "-C", "sub", "log", "--all", "-p")\nrun("git", "submodule", "status")\n'
        'run("git", "status", "--short")\nrun("git", "diff", "--stat")\n'
    )
    proc, _ = _phase(tmp_path, work, script)
    got = _answers(proc)
    assert len(got) == 4, proc.stdout + proc.stderr[-2000:]
    assert SECRET not in proc.stdout, proc.stdout
    if got["status:--short"][0] != 0 or got["diff:--stat"][0] != 0:
        pytest.xfail(f"BREAKS: git status/diff in the parent with a submodule: {got}")


# ------------------------------------------------- G: many prepared repositories (a slow start)

_MANY = 100
_MAKE_MANY = f"""\
import os
for i in range({_MANY}):
    g = "many/r%03d/.git" % i
    for sub in ("objects/pack", "objects/info", "refs/heads", "refs/tags"):
        os.makedirs(g + "/" + sub)
    open(g + "/HEAD", "w").write("ref: refs/heads/main\\n")
    open(g + "/config", "w").write("[core]\\n\\trepositoryformatversion = 0\\n")
    if i < 2:  # a sparse index of the largest size the copy reads
        with open(g + "/index", "wb") as fh:
            fh.truncate(256 << 20)
print("made", len(os.listdir("many")))
"""


@pytest.mark.heavy
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # pygit2 Index
# Won against 03d6e12, stopped since (83aef20, eeb56a9, c76164f: now a plain test): WON (a slow
# start, no cap): nothing bounds how many repositories one phase start copies. Phase 1 makes 100
# unborn git directories (HEAD, config, objects/, refs/: a few entries each, made in well under a
# second; two with a sparse 256 MiB index); before phase 2 prune_copy runs git several times per
# repository and reads each sparse index whole (_read_regular up to _INDEX_LIMIT, then pygit2
# again): seconds per 100 here, and the count is bounded only by find_git_dirs' entry cap (5,000
# at 03d6e12: ~2,500 repositories; 1,000,000 in an uncommitted change seen while this was
# written), each sparse index adding seconds more.
def test_many_prepared_repositories_slow_the_next_start(tmp_path: Path, seccomp: None) -> None:
    work = tmp_path / "work"
    _task(work)
    first, _ = _phase(tmp_path, work, _MAKE_MANY, 1)
    assert first.stdout.strip() == f"made {_MANY}", first.stdout + first.stderr[-2000:]
    began = time.monotonic()
    binds = git_guard.before_phase([work], tmp_path / "raw2.trace")
    took = time.monotonic() - began
    copies = git_prune.copies_path(tmp_path / "raw2.trace")
    made = len([p for p in copies.iterdir() if not p.name.endswith(".hidden")])
    git_prune.remove_copies(tmp_path / "raw2.trace")
    assert binds and made >= 1  # control: the start ran and copied
    # the safe outcome: a cap on the repositories copied, or a start that stays cheap
    assert made <= _MANY // 2 or took < 3.0, f"{made} copies in {took:.1f} s"


# ----------------------------------------------- H: an honest image the first line could refuse


@pytest.mark.heavy
def test_an_image_cloned_with_shared_objects_works_in_the_box(
    tmp_path: Path, seccomp: None
) -> None:
    """An honest image made with ``git clone --shared`` (or ``--reference``: a common way to
    save space) keeps ``objects/info/alternates`` naming a store outside the task. At 03d6e12
    pack-objects follows the alternate and the box's git works on the base, the future absent
    (asserted). A first line that refuses any alternate hides the whole repository: an xfail
    (BREAKS) when git status in the box fails."""
    upstream = tmp_path / "upstream"
    ids = _task(upstream)
    work = tmp_path / "work"
    subprocess.run(
        ["git", "clone", "-q", "--shared", "-b", "main", str(upstream), str(work)],
        check=True,
        env=_ENV,
    )
    assert (work / ".git" / "objects" / "info" / "alternates").exists()
    script = _RUN + (
        'run("git", "status", "--short")\nrun("git", "log", "--oneline")\n'
        f'run("git", "show", "{ids["future"]}")\n'
    )
    proc, _ = _phase(tmp_path, work, script)
    got = _answers(proc)
    assert len(got) == 3, proc.stdout + proc.stderr[-2000:]
    assert SECRET not in proc.stdout, proc.stdout
    if got["status:--short"] != (0, "") or got["log:--oneline"][0] != 0:
        pytest.xfail(f"BREAKS: an image with an alternate, in the box: {got}")


# ------------------------------------------------ I: references the copy could mistake (unit)


def test_tags_of_tags_symbolic_remotes_odd_names_and_a_shallow_file_naming_the_future(
    tmp_path: Path,
) -> None:
    """Stopped: a tag of a tag of the future, a tag of a tag of the base, ``origin/HEAD``
    symbolic to the future branch, loose references whose names hold a space or a newline
    (naming the future), a tag of a tree of the future, and a ``shallow`` file naming the
    future: the copy holds exactly what the base reaches, its packed-refs only well-formed
    lines of commits the base reaches, its shallow file no future id."""
    work = tmp_path / "work"
    ids = _task(work)
    future, base = ids["future"], ids["base"]
    _git(work, "tag", "-a", "-m", "t1", "inner-future", future)
    _git(work, "tag", "-a", "-m", f"outer {SECRET}", "outer-future", "inner-future")
    _git(work, "tag", "-a", "-m", "t1", "inner-base", base)
    _git(work, "tag", "-a", "-m", "t2", "outer-base", "inner-base")
    _git(work, "tag", "future-tree", f"{future}^{{tree}}")
    _git(work, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/fix")
    heads = work / ".git" / "refs" / "heads"
    (heads / "with space").write_text(future + "\n")
    (heads / f"with\nnewline {base} x").write_text(future + "\n")
    (work / ".git" / "shallow").write_text(f"{future}\n")
    copy = git_prune.prune_copy(work / ".git", tmp_path / "copy")
    held = subprocess.run(
        ["git", "--git-dir", str(copy.path), "cat-file", "--batch-all-objects", "--batch-check"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    reach = subprocess.run(
        ["git", "--no-replace-objects", "rev-list", "--objects", base],
        cwd=work,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert {x.split(" ")[0] for x in held.splitlines()} == {
        x.split(" ")[0] for x in reach.splitlines()
    }
    lines = (copy.path / "packed-refs").read_text().splitlines()[1:]
    names = {line.split(" ", 1)[1] for line in lines}
    assert "refs/tags/inner-base" in names  # control: an annotated tag of the base is kept
    # (a tag of a tag of the base, refs/tags/outer-base, is dropped at 03d6e12: %(*objecttype)
    # peels one level, so its kind is 'tag' — honest, lost, harmless; not asserted either way)
    assert all(line.split(" ")[0] in reach for line in lines), lines
    assert not names & {"refs/tags/outer-future", "refs/tags/future-tree"}, names
    assert not any(" " in n or "\n" in n for n in names), names
    assert (copy.path / "shallow").read_text() == ""
    text = b"".join(p.read_bytes() for p in copy.path.rglob("*") if p.is_file())
    assert SECRET.encode() not in text and future.encode() not in text


# ----------------------------------- E2, E3: an earlier phase moves a nested repository away

_DEEP = "/".join(["d"] * 70)
_MOVE = (
    f'import os\nos.makedirs("{_DEEP}")\nos.rename("vendor", "{_DEEP}/vendor")\n'
    f'print("moved", os.path.isdir("{_DEEP}/vendor/lib/.git"))\n'
)


def _git_state(rows: list) -> list:
    return [r for r in rows if isinstance(r, dict) and r.get("kind") == "git_state"]


@pytest.mark.heavy
# Won against 03d6e12, stopped since (83aef20, eeb56a9, c76164f: now a plain test): WON at
# 03d6e12: phase 1 renames vendor/ (the parent of the nested repository's mount point: allowed,
# the mount moves with it) 70 folders down; before phase 2 find_git_dirs does not look that deep
# (MAX_DEPTH 3), so vendor/lib/.git is bound whole and its future branch shows, and nothing says
# so (no git_state row in either phase). Safe outcome: the future absent, or phase 2's trace has a
# git_state row (an uncommitted change seen while writing reports the unsearched folder as a
# problem).
def test_an_earlier_phase_moves_a_nested_repository_deeper(tmp_path: Path, seccomp: None) -> None:
    work = tmp_path / "work"
    _nested(work, "vendor/lib")
    first, _ = _phase(tmp_path, work, _MOVE, 1)
    assert first.stdout.strip() == "moved True", first.stdout + first.stderr[-2000:]
    second, rows = _phase(tmp_path, work, _read_nested(f"{_DEEP}/vendor/lib"), 2)
    assert "seen" in second.stdout, second.stdout + second.stderr[-2000:]
    assert SECRET not in second.stdout or _git_state(rows), second.stdout[-600:]


@pytest.mark.heavy
# Won against 03d6e12, stopped since (83aef20, eeb56a9, c76164f: now a plain test): WON (a
# detection lost): compare() reads the pruned copy (the snapshot's 'source') for 'the git
# directory was moved, removed, replaced or linked', and the copy never moves: a phase that
# renames the folder holding a guarded repository (vendor/ -> 70 folders down) leaves no git_state
# row. Bound whole, the same rename was seen (the box path's own entry).
def test_moving_a_guarded_repository_away_is_a_change(
    tmp_path: Path, seccomp: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = tmp_path / "whole"
    _nested(whole / "work", "vendor/lib")
    monkeypatch.setenv(git_prune.ENV_TASK_REPOS, "whole")
    proc, rows = _phase(whole, whole / "work", _MOVE, 1)
    assert proc.stdout.strip() == "moved True" and _git_state(rows), rows  # control: seen whole
    monkeypatch.delenv(git_prune.ENV_TASK_REPOS)
    work = tmp_path / "work"
    lib = _nested(work, "vendor/lib")
    proc, rows = _phase(tmp_path, work, _MOVE, 1)
    assert proc.stdout.strip() == "moved True", proc.stdout + proc.stderr[-2000:]
    assert str(lib / ".git") in _sources(tmp_path, 1)  # control: it was guarded, as a copy
    assert not (lib / ".git").exists()  # control: it is gone from where it was guarded
    assert _git_state(rows), rows


# ------------------------------ J: a task repository a phase sees through a read-only folder


@pytest.mark.heavy
# Won against 03d6e12, stopped since (83aef20, eeb56a9, c76164f: now a plain test): WON: the first
# line prunes only task repositories in a phase's READ-WRITE folders
# (before_phase(spec.read_write)); one reached through a read-only bind is bound whole.
# harness/executors/phases.py::_prepare runs the candidate's prepare command (traced, with
# train_network) with read_only=(paths.root, ...) and read_write=(cache, evidence):
# paths.candidate = paths.root/'candidate' (the train phase's read-write folder, where its task
# repositories are pruned) is seen whole there — when a task repository is already in it at
# prepare time (not checked here: the layout is mimicked, not run through _prepare) — so git -C
# candidate/work log --all -p shows the future; the prepare phase may write it into the cache,
# which the train phase then reads (read-only, whole).
def test_the_prepare_phase_sees_the_candidates_task_repository_whole(
    tmp_path: Path, seccomp: None
) -> None:
    root = tmp_path / "run"
    work = root / "candidate" / "work"
    _task(work)
    cache = tmp_path / "cache"
    cache.mkdir()
    evidence = root / "evidence" / "prepare"
    evidence.mkdir(parents=True)
    # the prepare phase's spec as harness/executors/phases.py::_prepare makes it
    spec = SandboxSpec(
        cwd=root / "candidate",
        read_only=(root,),
        read_write=(cache, evidence),
        trace=tmp_path / "raw.trace",
    )
    script = (
        "import subprocess\n"
        'out = subprocess.run(["git", "-C", "work", "log", "--all", "-p"], capture_output=True,'
        " text=True)\n"
        f'open("{cache}/loot", "w").write(out.stdout)\n'
        'print("rc", out.returncode, "bytes", len(out.stdout))\n'
    )
    proc = subprocess.run(
        accounted(wrap(spec, ["python3", "-c", script])),
        env=sandbox_env(dict(_ENV)),
        capture_output=True,
        text=True,
        timeout=180,
    )
    (tmp_path / "ev").mkdir()
    finish_trace(spec, tmp_path / "ev")
    assert proc.stdout.startswith("rc 0 bytes"), proc.stdout + proc.stderr[-2000:]  # it ran
    assert "base" in (cache / "loot").read_text()  # control: git read the task repository
    assert SECRET not in (cache / "loot").read_text()


@pytest.mark.heavy
def test_a_linked_worktree_in_the_image(tmp_path: Path, seccomp: None) -> None:
    """The image has a linked worktree ``wt`` (``git worktree add``: its ``.git`` a file naming
    ``.git/worktrees/wt``, on a branch at the base) and the future on ``fix``: the future is
    absent in the box (stopped: the copy has no ``worktrees/``, find_git_dirs leaves a ``.git``
    file alone, and ``worktrees/wt`` in the copy would name the copy's store anyway). Honest work
    in ``wt`` breaks — git there says it is not a repository (an xfail when it does)."""
    work = tmp_path / "work"
    ids = _task(work)
    _git(work, "worktree", "add", "-q", "-b", "side", "wt", ids["base"])
    assert _git(work / "wt", "status", "--short") == ""  # outside the box: a working worktree
    script = _RUN + (
        'run("git", "-C", "wt", "log", "--all", "-p")\nrun("git", "worktree", "list")\n'
        'run("git", "status", "--short")\n'
    )
    proc, _ = _phase(tmp_path, work, script)
    got = _answers(proc)
    assert len(got) == 3, proc.stdout + proc.stderr[-2000:]
    assert SECRET not in proc.stdout, proc.stdout
    assert got["status:--short"][0] == 0, got  # the main work tree's git still works
    if got["-C:wt"][0] != 0:
        pytest.xfail(f"BREAKS: git in a linked worktree of the image: {got}")
