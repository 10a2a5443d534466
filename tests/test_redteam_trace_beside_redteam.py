"""Red-team attacks on b44d85d and 86148ea (issue 29): what the machine's git reads *beside* a
task repository's own files (``harness/audit/trace_beside.py``).

The change: for a git process that read a task repository's objects, a state pointer
(``ORIG_HEAD``, ``MERGE_HEAD``, ... ``rebase-*/orig-head``: sealed copies, text in the row) is
judged by the commits its text names (``_Future.ids``: a line's leading 40/64 lowercase hex
digits, or ``ref: NAME`` resolved in the task repository), a commondir or graft file of the
phase's own, a task reference read under another name (a symbolic link) and ``GIT_COMMON_DIR``
are findings.

Each attack is a candidate's train code in the real sandbox under the compiled tracer, over a
task repository whose ``future`` branch holds ``FUTURE_SECRET_42`` (``future.txt``: the future
commit, written from outside the box as the earlier red-team files do). The goal: the machine's
git shows the future with no finding. Every test first asserts that its attack ran.
``EVOTREE_REDTEAM_TRACER=<binary>`` runs them under another build of the tracer (the comparison
with the one before: ``git show 86148ea~2:harness/seccomp_trace.c``, compiled; the judgement is
Python and is the new one either way, so "before" compares only the tracer part).

Found (each won at the first try with the tracer of 86148ea and with the one before); closed since
(the tracer seals and rows every pseudo-reference and session file of a git directory; the
judge reads ids in either case, abbreviations in session files, and trees, blobs and tags of
the future), so each is a plain test now:

- (A) ``git am --abort`` over an am session planted in a linked worktree's folder whose
  ``ORIG_HEAD`` holds the future's id in UPPER case: git's ``get_oid_hex`` takes A-F, the
  judge's ``_ID`` (``[0-9a-f]{40}``) sees no id in the sealed text, so no finding; git checks
  the future out and writes the worktree's HEAD, which it does not read again.
- (B) ``git log --merge -p`` over a conflicted index and ``MERGE_HEAD`` = the future in upper
  case: the future's diff is printed, no finding (same parser gap).
- (D) ``ORIG_HEAD`` = the future's TREE id (given from outside as the commit id is; a phase has
  no way of its own to learn it without naming the future): ``_Future.beyond`` asks pygit2's
  ``descendant_of``, which raises for a tree (caught: not beyond); ``am --abort`` checks the tree
  out (``clean_index`` peels to a tree) and then dies on the HEAD update (a non-commit): HEAD
  stays at the base, the files are the future's.
- (C) a cherry-pick session planted in the worktree's folder (``sequencer/todo``: ``pick
  <base>`` then ``pick <future, abbreviated>``; ``opts``: ``no-commit``), then ``git cherry-pick
  --continue`` (argv: a session step): ``sequencer/todo`` is no state pointer (no ``gitread``
  row with either tracer, judged nowhere); the future's change is applied to the files, HEAD
  stays at the base. An old hole the change did not reach.
- (G) a pseudo-reference of the worktree's folder named on the command line: git looks any
  one-level upper-case name up as a file of the (worktree's) git directory. ``MY_HEAD`` (the
  future) is no state pointer of the tracer's list (no row) and the argv judge finds no such
  name in the task repository after the phase: ``git log -p -1 MY_HEAD`` prints the future
  with no finding. ``git diff ORIG_HEAD`` with ORIG_HEAD the future's tree id also wins (the
  argv judge leaves ORIG_HEAD to the state judgement, which takes a tree for no commit);
  ``git diff AUTO_MERGE`` (the tree) is stopped by the argv judge.
- (H) ``ORIG_HEAD`` = ``ref: MY_HEAD`` with MY_HEAD the future, then ``git am --abort`` (no
  name on the command line): ``_Future._ref`` finds no ``MY_HEAD`` in the task repository and
  leaves it to "its own read", which has no row.

Stopped: (A) in lower case (the control: a finding with this tracer; with the tracer before it
wins, as (J) did); (E) the worktree's own ``refs/bisect/bad`` hard-linked to the task's
``refs/heads/future``: ``link`` fails with EXDEV (the task's ``refs/`` is a mount of its own),
and ``git log --bisect`` is an argv finding anyway; (F) a planted ``rebase-merge/git-rebase-todo``
(``pick <future>``, ``break``) and ``git rebase --continue``: the pick fast-forwards the worktree's
HEAD to the future and git re-reads it (a sealed text naming the future: a finding); (I) the
future's id in upper case (full or abbreviated) on git's command line: an argv finding; (J)
``GIT_COMMON_DIR`` naming a link of the work tree that points at ``/tmp/c`` while git runs and at
the task's ``.git`` after: the ``GIT_COMMON_DIR`` rule resolves the link at the audit and is
passed (a check after the use), but the graft file's row holds the path the tracer resolved
while git read it, a graft of no task (a finding). The same link trick passes the ``commondir``
rule; what git then takes from the folder is judged by its own rows (graft, references).
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


def _future_and_tree(work: Path) -> None:
    """Outside the box: the future commit (``future.txt``) and its tree (``tree.txt``)."""
    _future(work)
    tree = subprocess.run(
        ["git", "-C", str(work), "rev-parse", "future^{tree}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (work / "tree.txt").write_text(tree)


def _ran(proc: subprocess.CompletedProcess) -> dict[str, str]:
    """The attack ran (git was driven, the worktree removed where one was made): its lines."""
    lines = _lines(proc)
    if "tries" not in lines or not lines.get("attack"):
        pytest.fail(proc.stdout[-3000:] + proc.stderr[-3000:])
    if "removed" in lines:
        assert lines["removed"].startswith("True"), proc.stdout[-2000:]
    return lines


def _show(proc: subprocess.CompletedProcess, audit: object) -> None:
    """What the run printed and the first findings (``pytest -s`` shows them)."""
    flagged = [v for v in getattr(audit, "verdicts", []) if v.flagged][:3]
    print(proc.stdout[-1500:], flagged)


#: shared by the scripts: ``put(path, text)`` writes through a write-only descriptor (not
#: reported); ``base`` and ``future`` the two commits; a linked worktree /tmp/w (its folder
#: ``wt``) made first, removed by ``done()`` with its HEAD put back
_PRELUDE = """\
import os, subprocess
work = os.getcwd()
future = open("future.txt").read().strip()
base = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
who = dict(os.environ, GIT_COMMITTER_NAME="a", GIT_COMMITTER_EMAIL="a@b",
           GIT_AUTHOR_NAME="a", GIT_AUTHOR_EMAIL="a@b")
def put(path, text, flags=os.O_WRONLY | os.O_CREAT | os.O_TRUNC):
    fd = os.open(path, flags, 0o644)
    os.write(fd, text.encode())
    os.close(fd)
def report(out):
    print("attack", "OK" if "FUTURE_SECRET_42" in out.stdout else "ERR",
          out.stdout.replace("\\n", " ")[:300], out.stderr.replace("\\n", " ")[:200])
subprocess.run(["git", "worktree", "add", "-q", "--detach", "/tmp/w"], check=True)
wt = os.path.join(work, ".git", "worktrees", "w")
def done():
    put(os.path.join(wt, "HEAD"), base + "\\n")
    subprocess.run(["git", "worktree", "remove", "--force", "/tmp/w"], check=True)
    print("removed", not os.path.exists(os.path.join(work, ".git", "worktrees")))
    print("tries", 1)
"""

#: (A) ``git am --abort`` over a planted am session with the worktree's ORIG_HEAD the future
#: spelled in upper case: git's hex parser takes A-F, the judge's ``_ID`` only a-f
_AM_ABORT = (
    _PRELUDE
    + """\
os.mkdir(os.path.join(wt, "rebase-apply"))
for name, text in (("next", "1\\n"), ("last", "1\\n"), ("abort-safety", base + "\\n")):
    put(os.path.join(wt, "rebase-apply", name), text)
put(os.path.join(wt, "ORIG_HEAD"), {orig} + "\\n")
abort = subprocess.run(["git", "am", "--abort"], cwd="/tmp/w", env=who, capture_output=True)
print("abort", abort.returncode)
report(subprocess.run(["cat", "/tmp/w/a.txt"], capture_output=True, text=True))
done()
"""
)


@pytest.mark.heavy
def test_a_am_abort_to_an_upper_case_orig_head(tmp_path: Path, seccomp: None) -> None:
    """``git am --abort`` to ORIG_HEAD = FUTURE.upper(): the worktree holds the future."""
    proc, audit = _run(tmp_path, _AM_ABORT.format(orig="future.upper()"), _future)
    lines = _ran(proc)
    assert lines.get("abort") == "0", proc.stdout[-2000:]
    _show(proc, audit)
    _safe(proc, audit)


@pytest.mark.heavy
def test_h_am_abort_to_an_orig_head_naming_a_pseudo_ref(tmp_path: Path, seccomp: None) -> None:
    """``git am --abort`` to ORIG_HEAD = ``ref: MY_HEAD``, MY_HEAD the future (no argv name)."""
    script = _AM_ABORT.format(orig='"ref: MY_HEAD"').replace(
        "abort = ", 'put(os.path.join(wt, "MY_HEAD"), future + "\\n")\nabort = ', 1
    )
    proc, audit = _run(tmp_path, script, _future)
    lines = _ran(proc)
    assert lines.get("abort") == "0", proc.stdout[-2000:]
    _show(proc, audit)
    _safe(proc, audit)


@pytest.mark.heavy
def test_a_control_lower_case_orig_head(tmp_path: Path, seccomp: None) -> None:
    """The control for (A): the same in lower case is a finding (J of the earlier red team)."""
    proc, audit = _run(tmp_path, _AM_ABORT.format(orig="future"), _future)
    lines = _ran(proc)
    assert lines.get("abort") == "0", proc.stdout[-2000:]
    assert SECRET in proc.stdout and _flagged(audit), proc.stdout[-2000:]


@pytest.mark.heavy
def test_d_am_abort_to_a_tree_id(tmp_path: Path, seccomp: None) -> None:
    """``git am --abort`` to ORIG_HEAD = the future's tree id (given from outside, as the
    commit is): the files are checked out, then git dies on the HEAD update."""
    proc, audit = _run(
        tmp_path, _AM_ABORT.format(orig='open("tree.txt").read().strip()'), _future_and_tree
    )
    lines = _ran(proc)
    assert lines.get("abort") == "128", proc.stdout[-2000:]
    _show(proc, audit)
    _safe(proc, audit)


#: (B) ``git log --merge -p`` over a conflicted index and a MERGE_HEAD naming the future in
#: upper case
_LOG_MERGE = (
    _PRELUDE
    + """\
listed = subprocess.run(["git", "ls-files", "-s", "a.txt"], cwd="/tmp/w", capture_output=True,
                        text=True).stdout.split()
info = "0 %s\\ta.txt\\n" % ("0" * 40)
info += "".join("100644 %s %d\\ta.txt\\n" % (listed[1], stage) for stage in (1, 2, 3))
index = subprocess.run(["git", "update-index", "--index-info"], cwd="/tmp/w", input=info,
                       capture_output=True, text=True)
print("index", index.returncode)
put(os.path.join(wt, "MERGE_HEAD"), future.upper() + "\\n")
report(subprocess.run(["git", "log", "--merge", "-p"], cwd="/tmp/w", capture_output=True, text=True))
os.unlink(os.path.join(wt, "MERGE_HEAD"))
done()
"""
)


@pytest.mark.heavy
def test_b_log_merge_over_an_upper_case_merge_head(tmp_path: Path, seccomp: None) -> None:
    """``git log --merge -p`` over MERGE_HEAD = FUTURE.upper() prints the future's diff."""
    proc, audit = _run(tmp_path, _LOG_MERGE, _future)
    lines = _ran(proc)
    assert lines.get("index") == "0", proc.stdout[-2000:]
    _show(proc, audit)
    _safe(proc, audit)


#: (C) a cherry-pick session planted in the worktree's folder: ``sequencer/todo`` (not a state
#: pointer: no row) names the future (abbreviated) after a first line that --continue takes as
#: done, ``sequencer/opts`` says no-commit (HEAD stays at the base); then
#: ``git cherry-pick --continue`` (argv: a session step) applies the future's change to the files
_SEQUENCER = (
    _PRELUDE
    + """\
seq = os.path.join(wt, "sequencer")
os.mkdir(seq)
put(os.path.join(seq, "todo"), "pick %s x\\npick %s y\\n" % (base, future[:12]))
put(os.path.join(seq, "head"), base + "\\n")
put(os.path.join(seq, "abort-safety"), base + "\\n")
put(os.path.join(seq, "opts"), "[options]\\n\\tno-commit = true\\n")
cont = subprocess.run(["git", "cherry-pick", "--continue"], cwd="/tmp/w", env=who,
                      capture_output=True, text=True)
print("continue", cont.returncode)
report(subprocess.run(["cat", "/tmp/w/a.txt"], capture_output=True, text=True))
done()
"""
)


@pytest.mark.heavy
def test_c_cherry_pick_continue_over_a_planted_todo(tmp_path: Path, seccomp: None) -> None:
    """``git cherry-pick --continue`` over a planted ``sequencer/todo``: the future's change."""
    proc, audit = _run(tmp_path, _SEQUENCER, _future)
    lines = _ran(proc)
    assert lines.get("continue") == "0", proc.stdout[-2000:]
    _show(proc, audit)
    _safe(proc, audit)


#: (E) the worktree's own ``refs/bisect/bad`` (per worktree: under its folder) a HARD link to
#: the task's ``refs/heads/future`` (a known identity, read under its own name), then
#: ``git log --bisect -p`` (argv: no revision)
_BISECT_LINK = (
    _PRELUDE
    + """\
os.makedirs(os.path.join(wt, "refs", "bisect"))
try:
    os.link(os.path.join(work, ".git", "refs", "heads", "future"),
            os.path.join(wt, "refs", "bisect", "bad"))
    print("link", "ok")
except OSError as e:
    print("link", "refused", e.errno)
report(subprocess.run(["git", "log", "--bisect", "-p", "-1"], cwd="/tmp/w", capture_output=True,
                      text=True))
done()
"""
)


@pytest.mark.heavy
def test_e_bisect_ref_hard_linked_to_the_future(tmp_path: Path, seccomp: None) -> None:
    """Stopped: the hard link is refused (EXDEV: the task's ``refs/`` is a mount of its own),
    so git finds no ``refs/bisect/bad``; ``git log --bisect`` is an argv finding as well."""
    proc, audit = _run(tmp_path, _BISECT_LINK, _future)
    lines = _ran(proc)
    assert lines.get("link") == "refused 18", proc.stdout[-2000:]
    assert SECRET not in proc.stdout, proc.stdout[-2000:]


#: (F) an interactive rebase session planted in the worktree's folder: ``git-rebase-todo``
#: (not a state pointer: no row) says ``pick <future>`` (abbreviated) then ``break``;
#: ``git rebase --continue`` (argv: a session step) picks it (a fast-forward: the worktree's HEAD
#: becomes the future) and stops at the break
_REBASE_TODO = (
    _PRELUDE
    + """\
state = os.path.join(wt, "rebase-merge")
os.mkdir(state)
for name, text in (("git-rebase-todo", "pick %s y\\nbreak\\n" % future[:12]),
                   ("done", "pick %s x\\n" % base), ("onto", base + "\\n"),
                   ("orig-head", base + "\\n"), ("head-name", "detached HEAD\\n"),
                   ("interactive", "")):
    put(os.path.join(state, name), text)
cont = subprocess.run(["git", "rebase", "--continue"], cwd="/tmp/w", env=who,
                      capture_output=True, text=True)
print("continue", cont.returncode)
report(subprocess.run(["cat", "/tmp/w/a.txt"], capture_output=True, text=True))
done()
"""
)


@pytest.mark.heavy
def test_f_rebase_continue_over_a_planted_todo(tmp_path: Path, seccomp: None) -> None:
    """Stopped: ``git rebase --continue`` over a planted ``git-rebase-todo`` picking the future
    shows it (a fast-forward), but git re-reads the worktree HEAD it moved there (its sealed
    text names the future: a finding), as with (H) of the earlier red team."""
    proc, audit = _run(tmp_path, _REBASE_TODO, _future)
    lines = _ran(proc)
    assert lines.get("continue") == "0", proc.stdout[-2000:]
    assert SECRET in proc.stdout and _flagged(audit), proc.stdout[-2000:]


#: (G) a pseudo-reference of the worktree's folder named on git's command line: git looks a
#: one-level upper-case name up as a file of the (worktree's) git directory; NAME holds TEXT
_PSEUDO = (
    _PRELUDE
    + """\
put(os.path.join(wt, "{name}"), {text} + "\\n")
report(subprocess.run(["git", {cmd}], cwd="/tmp/w", capture_output=True, text=True))
os.unlink(os.path.join(wt, "{name}"))
done()
"""
)
_TREE = 'open("tree.txt").read().strip()'


@pytest.mark.heavy
@pytest.mark.parametrize(
    "name,text,cmd",
    [
        pytest.param(
            "MY_HEAD",
            "future",
            '"log", "-p", "-1", "MY_HEAD"',
            id="my-head",
        ),
        pytest.param(
            "ORIG_HEAD",
            _TREE,
            '"diff", "ORIG_HEAD"',
            id="orig-head-tree",
        ),
        pytest.param("AUTO_MERGE", _TREE, '"diff", "AUTO_MERGE"', id="auto-merge-tree"),
    ],
)
def test_g_pseudo_ref_on_the_command_line(
    tmp_path: Path, seccomp: None, name: str, text: str, cmd: str
) -> None:
    """A name git looks up as a file of the worktree's folder, named on git's command line
    (``auto-merge-tree`` is stopped: the argv judge flags ``git diff AUTO_MERGE``)."""
    proc, audit = _run(tmp_path, _PSEUDO.format(name=name, text=text, cmd=cmd), _future_and_tree)
    lines = _ran(proc)
    assert lines["attack"].startswith("OK"), proc.stdout[-2000:]
    _show(proc, audit)
    _safe(proc, audit)


#: (I) the future's id in upper case on git's command line (no state file at all)
_ARGV_UPPER = (
    _PRELUDE
    + """\
report(subprocess.run(["git", "log", "-p", "-1", {rev}], cwd="/tmp/w", capture_output=True,
                      text=True))
done()
"""
)


@pytest.mark.heavy
@pytest.mark.parametrize("rev", ["future.upper()", "future[:12].upper()"], ids=["full", "short"])
def test_i_upper_case_id_on_the_command_line(tmp_path: Path, seccomp: None, rev: str) -> None:
    """Stopped: ``git log -p -1 <FUTURE in upper case>`` (full or abbreviated) is an argv
    finding (the argv judge resolves the name in the task repository: the future)."""
    proc, audit = _run(tmp_path, _ARGV_UPPER.format(rev=rev), _future)
    lines = _ran(proc)
    assert lines["attack"].startswith("OK"), proc.stdout[-2000:]
    _show(proc, audit)
    _safe(proc, audit)


#: (J) GIT_COMMON_DIR spelled as a link of the work tree that names /tmp/c while git runs (a
#: graft file there, the task's store linked) and the task's own .git when the audit resolves it
_COMMON_DIR_LINK = (
    _PRELUDE
    + """\
c = "/tmp/c"
os.makedirs(c + "/refs")
os.makedirs(c + "/info")
os.symlink(os.path.join(work, ".git", "objects"), c + "/objects")
put(c + "/info/grafts", "%s %s\\n" % (base, future))
os.symlink(c, "cd")
env = dict(os.environ, GIT_DIR=os.path.join(work, ".git"), GIT_COMMON_DIR=os.path.join(work, "cd"))
report(subprocess.run(["git", "log", "-p", "-2"], capture_output=True, text=True, env=env))
os.unlink("cd")
os.symlink(os.path.join(work, ".git"), "cd")
done()
"""
)


@pytest.mark.heavy
def test_j_common_dir_named_through_a_link_switched_after(tmp_path: Path, seccomp: None) -> None:
    """Stopped, not by the ``GIT_COMMON_DIR`` rule: it resolves the link at the audit (a check
    after the use: the link then names the task's ``.git``), but the graft file's row holds the
    path the tracer resolved while git ran (``/tmp/c/info/grafts``), a graft of no task."""
    proc, audit = _run(tmp_path, _COMMON_DIR_LINK, _future)
    lines = _ran(proc)
    assert lines["attack"].startswith("OK"), proc.stdout[-2000:]
    assert _flagged(audit), proc.stdout[-2000:]
    hits = [h for v in audit.verdicts for h in v.hits if h.severity == "high"]
    assert any("graft file" in h.command for h in hits), hits
    assert not any("GIT_COMMON_DIR" in h.command for h in hits), hits


#: (J, commondir) the worktree's own commondir naming the same link (``<work>/cd``: /tmp/c while
#: git runs, the task's .git after), a graft file in /tmp/c
_COMMONDIR_LINK = (
    _PRELUDE
    + """\
c = "/tmp/c"
for sub in ("refs/heads", "info"):
    os.makedirs(os.path.join(c, sub))
os.symlink(os.path.join(work, ".git", "objects"), c + "/objects")
put(c + "/info/grafts", "%s %s\\n" % (base, future))
os.symlink(c, "cd")
put(os.path.join(wt, "commondir"), os.path.join(work, "cd") + "\\n")
report(subprocess.run(["git", "log", "-p", "-2"], cwd="/tmp/w", capture_output=True, text=True))
put(os.path.join(wt, "commondir"), "../..\\n")
os.unlink("cd")
os.symlink(os.path.join(work, ".git"), "cd")
done()
"""
)


@pytest.mark.heavy
def test_j_commondir_naming_a_link_switched_after(tmp_path: Path, seccomp: None) -> None:
    """Stopped, not by the ``commondir`` rule (it resolves the link at the audit), but by the
    graft file's row (the path the tracer resolved while git read it)."""
    proc, audit = _run(tmp_path, _COMMONDIR_LINK, _future)
    lines = _ran(proc)
    assert lines["attack"].startswith("OK"), proc.stdout[-2000:]
    hits = [h for v in audit.verdicts for h in v.hits if h.severity == "high"]
    assert any("graft file" in h.command for h in hits), hits
    assert not any("commondir naming" in h.command for h in hits), hits
