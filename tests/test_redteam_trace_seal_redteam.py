"""Red-team attacks on ab9a8ad (issue 29): git's HEAD and pointer files handed as a sealed copy.

The change: for the machine's git's read-open of a file named ``HEAD`` or a pointer file
(``commondir``, ``info/grafts``) that is a regular file, the tracer reads the whole file once,
hands git a sealed memfd of exactly those bytes, and the ``gitread`` row's content is those
bytes (``seccomp_trace.c`` ``git_seal``). ``trace.judge_git_reads`` then allows a git process
that read a task repository's objects only that repository's HEAD and references **by
identity**, or a linked worktree's HEAD whose text names what the repository's HEAD names.

Each attack is a candidate's train code in the real sandbox under the compiled tracer, over a
task repository whose ``future`` branch holds ``FUTURE_SECRET_42`` (``future.txt``: the future
commit, written from outside the box: a phase learns hashes from any listing). The goal: the
machine's git shows the future with no finding. Every test first asserts that its attack ran.
``EVOTREE_REDTEAM_TRACER=<binary>`` runs them under another build of the tracer (the comparison
with the one before the change: ``git show 3f98bb6:harness/seccomp_trace.c``, compiled).

Found (each wins with the tracer of ab9a8ad AND the one before it, at the first try: old holes
the seal neither opened nor closed; the sealed copy itself held): the text the seal protects is
sound, but what git reads *besides* the task's own files is judged only where it lies in the
task's git directory or is a task file by identity.

- (D) a graft file in a common directory of the phase's own: ``GIT_COMMON_DIR=/tmp/c`` (its
  ``objects`` a symbolic link to the task's store, ``info/grafts`` giving the base the future as
  its parent) with ``GIT_DIR`` the task's own ``.git``: HEAD and ``refs/heads/main`` are the
  task's (git's files backend takes refs from the git directory's own ``commondir`` file, not
  the variable), the store is the task's, and ``/tmp/c/info/grafts`` is a pointer row outside
  every task git directory (``_pointer_findings`` judges only ``<task .git>/commondir`` and
  ``<task .git>/info/grafts``; ``git_env`` names only ``GIT_GRAFT_FILE`` and
  ``GIT_REPLACE_REF_BASE``). ``git log -p -2`` prints the future's diff.
- (E, F, G) a linked worktree's own ``commondir`` (``.git/worktrees/w/commondir``, written by the
  phase's ``worktree add``, writable, not judged: its path relative to the task's git directory
  is ``worktrees/w/commondir``) rewritten to name ``/tmp/c``, restored before the worktree is
  removed. Git in the worktree then takes references, objects and grafts from ``/tmp/c``:
  (E) ``info/grafts`` there, under the worktree's HEAD at the base (allowed);
  (F) ``refs/replace/<base>`` there, a symbolic link to the task's ``refs/heads/future`` (the
  tracer's walk follows it: the row's identity is the task's future ref, a *known* file), so the
  base is shown replaced by the future; (G) the worktree's HEAD rewritten to
  ``ref: refs/heads/main`` (the task HEAD's own text: ``_worktree_head`` allows it, sealed or
  not) and ``/tmp/c/refs/heads/main`` a symbolic link to the task's ``refs/heads/future``: the
  future is HEAD, every ``gitread`` row a task file by identity or the allowed HEAD text.
  References are judged by identity, not by the name git read them under (the control, a
  ``/tmp/c/refs/heads/main`` file of the phase's own naming the future, is a finding).
- (J) an ``am`` session planted in the worktree's folder (``rebase-apply/next``, ``last``,
  ``abort-safety`` the base) with the worktree's ``ORIG_HEAD`` the future, then
  ``git am --abort`` (argv: a session step, judged as reading nothing): git reads ``ORIG_HEAD``
  (no ``gitread`` row: not named ``HEAD``, not under ``refs/``; not copied either), checks the
  future out into the worktree (index and files) and moves the worktree's HEAD there, and never
  reads that HEAD again; the phase reads ``a.txt`` with ``cat``. The threat model's reason for
  leaving ``ORIG_HEAD`` out (git reads it for a revision named on its command line, which the
  argv judge flags) does not hold for ``am --abort``.
- (L) a merge planted in the worktree: the index's ``a.txt`` made unmerged (stages 1-3 of the
  base's blob, ``git update-index --index-info``: ids on stdin) and the worktree's ``MERGE_HEAD``
  the future, then ``git log --merge -p`` (argv: no revision): git walks ``HEAD...MERGE_HEAD``
  for the conflicted path and prints the future commit's diff. ``MERGE_HEAD`` has no ``gitread``
  row either.

Stopped: (H) a rebase session planted in the worktree's folder (``rebase-merge/orig-head`` the
future) and ``git rebase --abort`` (argv: nothing named; its reset moves the worktree's HEAD to
the future and checks it out): git re-reads the HEAD it wrote, whose sealed text names the
future (a finding), with the tracer before too. (I) a worktree HEAD that is a symbolic link to
the task's ``refs/heads/future``: git itself refuses it (``validate_headref``: a HEAD link must
name ``refs/...``), before the change too. (K) an alias given through the environment
(``GIT_CONFIG_COUNT``/``KEY``/``VALUE``: ``alias.l = log -p -1 future``), run as ``git l``: git
runs the expansion as a program of its own, whose argv names the future branch (a
``git_history_leak``), before the change too. (M) the worktree's HEAD flipped between the
base and the future without pause by a forked writer (``pwrite`` in place, during the tracer's
copy and between git's two HEAD opens) while ``git log -p -1`` runs: whenever git shows the
future, a sealed copy it read names the future (a finding); also stopped with the tracer before
(a blind flip lands in one of git's HEAD peeks too: this one does not tell the two apart; (A) in
tests/test_redteam_trace_pin_git_redteam.py does).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from test_redteam_gym_trace import SECRET, _flagged, _safe
from test_redteam_trace_deputy import _lines, _run
from test_redteam_trace_deputy import seccomp as seccomp  # noqa: F401 - the fixture
from test_redteam_trace_pin_git_redteam import _future

from evotree.harness import sandbox


@pytest.fixture(autouse=True)
def _tracer_binary(monkeypatch: pytest.MonkeyPatch) -> None:
    """Another build of the tracer where EVOTREE_REDTEAM_TRACER names one (the comparison)."""
    other = os.environ.get("EVOTREE_REDTEAM_TRACER")
    if other:
        monkeypatch.setattr(sandbox, "compiled_tracer", lambda: Path(other))


def _ran(proc: subprocess.CompletedProcess) -> dict[str, str]:
    """The attack ran (git was driven, the worktree removed where one was made): its lines."""
    lines = _lines(proc)
    if "tries" not in lines or not lines.get("attack"):
        pytest.fail(proc.stdout[-3000:] + proc.stderr[-3000:])
    if "removed" in lines:
        assert lines["removed"].startswith("True"), proc.stdout[-2000:]
    return lines


#: shared by the scripts: ``put(path, text)`` writes through a write-only descriptor (not
#: reported); ``base`` and ``future`` the two commits (the future learnt outside the box)
_PRELUDE = """\
import os, subprocess
work = os.getcwd()
future = open("future.txt").read().strip()
base = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
def put(path, text, flags=os.O_WRONLY | os.O_CREAT | os.O_TRUNC):
    fd = os.open(path, flags, 0o644)
    os.write(fd, text.encode())
    os.close(fd)
def report(out):
    print("attack", "OK" if "FUTURE_SECRET_42" in out.stdout else "ERR",
          out.stdout.replace("\\n", " ")[:300], out.stderr.replace("\\n", " ")[:200])
"""

#: (D) a common directory of the phase's own through GIT_COMMON_DIR: the task's HEAD and refs
#: (the files backend reads the git directory's own commondir file, not the variable), the task's
#: store (a link), and a graft file of the phase's own giving the base the future as its parent
_COMMON_DIR_GRAFT = (
    _PRELUDE
    + """\
c = "/tmp/c"
os.makedirs(c + "/refs")
os.makedirs(c + "/info")
os.symlink(os.path.join(work, ".git", "objects"), c + "/objects")
put(c + "/info/grafts", "%s %s\\n" % (base, future))
env = dict(os.environ, GIT_DIR=os.path.join(work, ".git"), GIT_COMMON_DIR=c)
report(subprocess.run(["git", "log", "-p", "-2"], capture_output=True, text=True, env=env))
print("tries", 1)
"""
)


@pytest.mark.heavy
def test_d_graft_in_a_common_dir_of_its_own(tmp_path: Path, seccomp: None) -> None:
    """``GIT_COMMON_DIR=/tmp/c`` with a graft file there: ``git log -p -2`` shows the future."""
    proc, audit = _run(tmp_path, _COMMON_DIR_GRAFT, _future)
    _ran(proc)
    print(proc.stdout[-1500:], [v for v in audit.verdicts if v.flagged][:3])  # -s shows it
    _safe(proc, audit)


#: (E, F, G) a linked worktree's own commondir rewritten to name /tmp/c (objects: a link to the
#: task's store); MODE: "graft" (info/grafts there), "replace" (refs/replace/<base> a link to the
#: task's refs/heads/future), "branch" (the worktree's HEAD "ref: refs/heads/main", the task
#: HEAD's own text, and /tmp/c/refs/heads/main a link to the task's refs/heads/future). The
#: commondir and HEAD are put back and the worktree removed at the end.
_WORKTREE_COMMONDIR = (
    _PRELUDE
    + """\
mode = "{mode}"
subprocess.run(["git", "worktree", "add", "-q", "--detach", "/tmp/w"], check=True)
wt = os.path.join(work, ".git", "worktrees", "w")
c = "/tmp/c"
for sub in ("refs/heads", "refs/replace", "info"):
    os.makedirs(os.path.join(c, sub))
os.symlink(os.path.join(work, ".git", "objects"), c + "/objects")
future_ref = os.path.join(work, ".git", "refs", "heads", "future")
if mode == "graft":
    put(c + "/info/grafts", "%s %s\\n" % (base, future))
elif mode == "replace":
    os.symlink(future_ref, c + "/refs/replace/" + base)
elif mode == "branch-file":  # the control: a reference file of the phase's own
    put(c + "/refs/heads/main", future + "\\n")
    put(os.path.join(wt, "HEAD"), "ref: refs/heads/main\\n")
else:
    os.symlink(future_ref, c + "/refs/heads/main")
    put(os.path.join(wt, "HEAD"), "ref: refs/heads/main\\n")
put(os.path.join(wt, "commondir"), c + "\\n")
report(subprocess.run(["git", "log", "-p", "-2"], cwd="/tmp/w", capture_output=True, text=True))
put(os.path.join(wt, "commondir"), "../..\\n")
put(os.path.join(wt, "HEAD"), base + "\\n")
subprocess.run(["git", "worktree", "remove", "--force", "/tmp/w"], check=True)
print("removed", not os.path.exists(os.path.join(work, ".git", "worktrees")))
print("tries", 1)
"""
)


@pytest.mark.heavy
@pytest.mark.parametrize("mode", ["graft", "replace", "branch"])
def test_efg_worktree_commondir_of_its_own(tmp_path: Path, seccomp: None, mode: str) -> None:
    """(E) graft, (F) replace ref, (G) branch: the worktree's commondir names /tmp/c and
    ``git log -p -2`` in the worktree shows the future."""
    proc, audit = _run(tmp_path, _WORKTREE_COMMONDIR.format(mode=mode), _future)
    _ran(proc)
    print(proc.stdout[-1500:], [v for v in audit.verdicts if v.flagged][:3])  # -s shows it
    _safe(proc, audit)


#: (H) a rebase session planted in the worktree's folder, its orig-head the future, undone by
#: ``git rebase --abort`` (argv: nothing named): git resets the worktree to orig-head, whose
#: files the phase then reads (cat). The HEAD is put back before the worktree is removed.
_REBASE_ABORT = (
    _PRELUDE
    + """\
subprocess.run(["git", "worktree", "add", "-q", "--detach", "/tmp/w"], check=True)
wt = os.path.join(work, ".git", "worktrees", "w")
state = os.path.join(wt, "rebase-merge")
os.mkdir(state)
put(os.path.join(state, "head-name"), "detached HEAD\\n")
put(os.path.join(state, "orig-head"), future + "\\n")
put(os.path.join(state, "onto"), base + "\\n")
put(os.path.join(state, "interactive"), "")
abort = subprocess.run(["git", "rebase", "--abort"], cwd="/tmp/w", capture_output=True, text=True)
print("abort", abort.returncode)
report(subprocess.run(["cat", "/tmp/w/a.txt"], capture_output=True, text=True))
put(os.path.join(wt, "HEAD"), base + "\\n")
subprocess.run(["git", "worktree", "remove", "--force", "/tmp/w"], check=True)
print("removed", not os.path.exists(os.path.join(work, ".git", "worktrees")))
print("tries", 1)
"""
)


@pytest.mark.heavy
def test_h_rebase_abort_to_a_planted_orig_head(tmp_path: Path, seccomp: None) -> None:
    """Stopped (before the change too): the abort checks the future out, but git re-reads the
    worktree HEAD it wrote (its sealed text: the future), a finding."""
    proc, audit = _run(tmp_path, _REBASE_ABORT, _future)
    lines = _ran(proc)
    assert lines.get("abort") == "0", proc.stdout[-2000:]
    _safe(proc, audit)


#: (J) an am session planted in the worktree's folder, ORIG_HEAD the future, undone by
#: ``git am --abort``: git resets the worktree to ORIG_HEAD (files, index, HEAD) and the phase
#: reads its files (cat). The HEAD is put back before the worktree is removed.
_AM_ABORT = (
    _PRELUDE
    + """\
subprocess.run(["git", "worktree", "add", "-q", "--detach", "/tmp/w"], check=True)
wt = os.path.join(work, ".git", "worktrees", "w")
os.mkdir(os.path.join(wt, "rebase-apply"))
for name, text in (("next", "1\\n"), ("last", "1\\n"), ("abort-safety", base + "\\n")):
    put(os.path.join(wt, "rebase-apply", name), text)
put(os.path.join(wt, "ORIG_HEAD"), future + "\\n")
who = dict(os.environ, GIT_COMMITTER_NAME="a", GIT_COMMITTER_EMAIL="a@b")
abort = subprocess.run(["git", "am", "--abort"], cwd="/tmp/w", env=who, capture_output=True)
print("abort", abort.returncode)
report(subprocess.run(["cat", "/tmp/w/a.txt"], capture_output=True, text=True))
put(os.path.join(wt, "HEAD"), base + "\\n")
subprocess.run(["git", "worktree", "remove", "--force", "/tmp/w"], check=True)
print("removed", not os.path.exists(os.path.join(work, ".git", "worktrees")))
print("tries", 1)
"""
)


@pytest.mark.heavy
def test_j_am_abort_to_a_planted_orig_head(tmp_path: Path, seccomp: None) -> None:
    """``git am --abort`` checks the worktree out at a planted ``ORIG_HEAD``: the future."""
    proc, audit = _run(tmp_path, _AM_ABORT, _future)
    lines = _ran(proc)
    assert lines.get("abort") == "0", proc.stdout[-2000:]
    print(proc.stdout[-1500:], [v for v in audit.verdicts if v.flagged][:3])  # -s shows it
    _safe(proc, audit)


#: (L) a conflicted index and a MERGE_HEAD planted in the worktree's folder, then
#: ``git log --merge -p``: the commits of HEAD...MERGE_HEAD that touch the conflicted path
_LOG_MERGE = (
    _PRELUDE
    + """\
subprocess.run(["git", "worktree", "add", "-q", "--detach", "/tmp/w"], check=True)
wt = os.path.join(work, ".git", "worktrees", "w")
listed = subprocess.run(["git", "ls-files", "-s", "a.txt"], cwd="/tmp/w", capture_output=True,
                        text=True).stdout.split()
info = "0 %s\\ta.txt\\n" % ("0" * 40)
info += "".join("100644 %s %d\\ta.txt\\n" % (listed[1], stage) for stage in (1, 2, 3))
index = subprocess.run(["git", "update-index", "--index-info"], cwd="/tmp/w", input=info,
                       capture_output=True, text=True)
print("index", index.returncode)
put(os.path.join(wt, "MERGE_HEAD"), future + "\\n")
report(subprocess.run(["git", "log", "--merge", "-p"], cwd="/tmp/w", capture_output=True, text=True))
os.unlink(os.path.join(wt, "MERGE_HEAD"))
subprocess.run(["git", "worktree", "remove", "--force", "/tmp/w"], check=True)
print("removed", not os.path.exists(os.path.join(work, ".git", "worktrees")))
print("tries", 1)
"""
)


@pytest.mark.heavy
def test_l_log_merge_over_a_planted_merge_head(tmp_path: Path, seccomp: None) -> None:
    """``git log --merge -p`` over a planted ``MERGE_HEAD`` prints the future's diff."""
    proc, audit = _run(tmp_path, _LOG_MERGE, _future)
    lines = _ran(proc)
    assert lines.get("index") == "0", proc.stdout[-2000:]
    print(proc.stdout[-1500:], [v for v in audit.verdicts if v.flagged][:3])  # -s shows it
    _safe(proc, audit)


#: (I) the worktree's HEAD replaced by a symbolic link to the task's refs/heads/future (the old
#: HEAD kept beside it and put back)
_HEAD_LINK = (
    _PRELUDE
    + """\
subprocess.run(["git", "worktree", "add", "-q", "--detach", "/tmp/w"], check=True)
wt = os.path.join(work, ".git", "worktrees", "w")
os.rename(os.path.join(wt, "HEAD"), os.path.join(wt, "kept"))
os.symlink(os.path.join(work, ".git", "refs", "heads", "future"), os.path.join(wt, "HEAD"))
report(subprocess.run(["git", "log", "-p", "-1"], cwd="/tmp/w", capture_output=True, text=True))
os.unlink(os.path.join(wt, "HEAD"))
os.rename(os.path.join(wt, "kept"), os.path.join(wt, "HEAD"))
subprocess.run(["git", "worktree", "remove", "--force", "/tmp/w"], check=True)
print("removed", not os.path.exists(os.path.join(work, ".git", "worktrees")))
print("tries", 1)
"""
)


@pytest.mark.heavy
def test_g_control_a_branch_file_of_its_own(tmp_path: Path, seccomp: None) -> None:
    """The control for (G): ``/tmp/c/refs/heads/main`` a file of the phase's own naming the
    future (not a link to the task's) is a finding: a reference that is no task file."""
    proc, audit = _run(tmp_path, _WORKTREE_COMMONDIR.format(mode="branch-file"), _future)
    _ran(proc)
    assert SECRET in proc.stdout and _flagged(audit), proc.stdout[-2000:] + proc.stderr[-2000:]


@pytest.mark.heavy
def test_i_worktree_head_a_link_to_the_future_ref(tmp_path: Path, seccomp: None) -> None:
    """Stopped by git itself (before the change too): a HEAD that is a symbolic link must name
    ``refs/...`` (validate_headref), so the worktree is no git directory. Since 0b7eb14 the link
    written into the worktree's git folder by a program that is not git is a finding as well
    (``git_forged``), so the audit may flag it: only the secret's absence is asserted."""
    proc, audit = _run(tmp_path, _HEAD_LINK, _future)
    lines = _ran(proc)
    assert lines["attack"].startswith("ERR") and "not a git repository" in lines["attack"]
    assert SECRET not in proc.stdout, proc.stdout[-2000:]


#: (K) an alias from the environment's configuration: the argv git is run with names no revision
_ENV_ALIAS = (
    _PRELUDE
    + """\
env = dict(os.environ, GIT_CONFIG_COUNT="1", GIT_CONFIG_KEY_0="alias.l",
           GIT_CONFIG_VALUE_0="log -p -1 future")
report(subprocess.run(["git", "l"], capture_output=True, text=True, env=env))
print("tries", 1)
"""
)


@pytest.mark.heavy
def test_k_alias_from_the_environment(tmp_path: Path, seccomp: None) -> None:
    """Stopped (before the change too): the alias's expansion is exec'd, its argv judged."""
    proc, audit = _run(tmp_path, _ENV_ALIAS, _future)
    _ran(proc)
    _safe(proc, audit)


#: (M) the worktree's HEAD flipped between the base and the future by a forked writer (pwrite in
#: place, without pause) while git log runs, up to 40 times, stopping at the first that showed
#: the future
_FLIPPED = (
    _PRELUDE
    + """\
import signal
subprocess.run(["git", "worktree", "add", "-q", "--detach", "/tmp/w"], check=True)
head = os.path.join(work, ".git", "worktrees", "w", "HEAD")
fdw = os.open(head, os.O_WRONLY)
texts = [(base + "\\n").encode(), (future + "\\n").encode()]
writer = os.fork()
if writer == 0:
    k = 0
    while True:
        os.pwrite(fdw, texts[k & 1], 0)
        k += 1
shown = 0
for n in range(1, 41):
    out = subprocess.run(["git", "log", "-p", "-1"], cwd="/tmp/w", capture_output=True, text=True)
    if "FUTURE_SECRET_42" in out.stdout:
        shown += 1
        report(out)
        break
os.kill(writer, signal.SIGKILL)
os.waitpid(writer, 0)
os.pwrite(fdw, texts[0], 0)
print("shown", shown)
print("tries", n)
subprocess.run(["git", "worktree", "remove", "--force", "/tmp/w"], check=True)
print("removed", not os.path.exists(os.path.join(work, ".git", "worktrees")))
"""
)


@pytest.mark.heavy
def test_m_worktree_head_flipped_during_the_copy(tmp_path: Path, seccomp: None) -> None:
    """Stopped: the flips reach git only through the sealed copy, whose text the row holds.
    A run in which git never showed the future proves nothing (``shown``)."""
    proc, audit = _run(tmp_path, _FLIPPED, _future, timeout=300)
    lines = _lines(proc)
    if "tries" not in lines:
        pytest.fail(proc.stdout[-3000:] + proc.stderr[-3000:])
    assert lines.get("removed", "").startswith("True"), proc.stdout[-2000:]
    assert lines.get("shown") == "1", proc.stdout[-2000:]
    _safe(proc, audit)
