"""Red-team attacks on 66d31ff (issue 29): the tracer's ``git_layout`` seals and rows, in a git
directory, every pseudo-reference (a one-level name of capitals and ``_``) and every file of a
``sequencer/``, ``rebase-merge/`` or ``rebase-apply/`` session; the judge reads ids in either
case, ids and abbreviations (4+ hex digits) anywhere in a session file, and trees, blobs and tags
held only by future commits as beyond the base.

Each attack is a candidate's train code in the real sandbox under the compiled tracer, over a
task repository whose ``future`` branch holds ``FUTURE_SECRET_42`` (helpers and fixtures of
``tests/test_redteam_trace_beside_redteam.py``). The goal: the machine's git shows or applies
the future with no finding. Every test first asserts that its attack ran.

Found (xfail, each at the first try; the mechanism in each reason):

- (K) ``git log -p -1 my_head`` (also ``My_Head``, ``MY_HEAD1``) with the file in the task's
  ``.git/`` (the common dir: git looks a name not of pseudo-reference syntax up there, not in
  the worktree's folder): no ``gitread`` row (the rule wants ``[A-Z_]+``), no argv finding.
- (L) ``sequencer/todo`` = ``pick future`` (or ``pick refs/heads/future``): the file is rowed
  and its text judged, but only hex words are read; ``git cherry-pick --continue`` applies the
  future's change. (P, message-search) the same with ``pick :/the fix`` (a message search).
- (N) ``ORIG_HEAD`` = ``ref: my_head`` (``.git/my_head`` the future) and ``git am --abort``:
  the judge resolves ``my_head`` in the task repository after the phase (gone) and leaves it to
  a read that has no row.
- (S) ``pick <4 hex>^{commit}`` with the prefix made ambiguous by a blob the phase writes
  (``hash-object -w``): the judge's prefix lookup raises (taken as naming nothing), git's
  ``^{commit}`` lookup takes the commit; a plain prefix with ``core.disambiguate=committish``
  (set through ``GIT_CONFIG_*`` in the environment) too.

Stopped (plain tests): (M) ``GIT_DIR=.`` with the current folder the worktree's folder: git
opens ``./MY_HEAD`` (classified by the ``./`` rule); (P) todo words ``<abbrev>^{commit}`` and
``<ABBREV>~0``: read by the judge's ``_WORD`` (a finding); (R) a planted worktree reflog and
``git log -p -1 HEAD@{1}``/``@{1}``: git takes the old id of the newer entry (a line's start:
an id elsewhere on the line is not used), and the argv judge flags the reflog revision;
(T) the ambiguous ``<4 hex>^{commit}`` of (S) on git's command line: the argv judge flags
it; (U) a planted rebase session with ``exec git log -p -1 future`` (the exec's git: an
argv finding), and ``orig-head`` = ``future`` with ``rebase --abort`` (git refuses a non-hex
orig-head); (V) a git directory of the phase's own (``/tmp/g``,
no ``.git/`` in its path: ``MY_HEAD`` there has no row) borrowing the task's store by
alternates: a finding for the HEAD git read the task's objects through; (W) a per-worktree
reference (``refs/worktree/x``, ``refs/bisect/x``) naming the future on git's command line.

Cost (X, no attack): in a benign repository of some 210,000 files the judge's walk passes its
200,000-object limit and every tree or blob id a session file names is "beyond", the base's own
blob in a patch's ``index`` line too (a false finding, failing closed).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from test_redteam_gym_trace import SECRET, _flagged, _safe
from test_redteam_trace_beside_redteam import _PRELUDE, _ran, _show
from test_redteam_trace_beside_redteam import _tracer_binary as _tracer_binary  # noqa: F401
from test_redteam_trace_deputy import _run
from test_redteam_trace_deputy import seccomp as seccomp  # noqa: F401 - the fixture
from test_redteam_trace_pin_git_redteam import _future

#: (K) a pseudo-reference of the worktree's folder NOT all capitals, named on git's command
#: line: the machine's git (2.39) resolves any one-level name as a file of the git directory
_NAME = (
    _PRELUDE
    + """\
common = os.path.join(work, ".git", "{name}")
try:
    put(common, future + "\\n")
    print("common", "ok")
except OSError as e:
    print("common", "refused", e.errno)
report(subprocess.run(["git", "log", "-p", "-1", "{name}"], cwd="/tmp/w", capture_output=True,
                      text=True))
if os.path.exists(common):
    os.unlink(common)
done()
"""
)


@pytest.mark.heavy
@pytest.mark.parametrize("name", ["my_head", "My_Head", "MY_HEAD1"])
def test_k_pseudo_ref_not_all_capitals(tmp_path: Path, seccomp: None, name: str) -> None:
    """``git log -p -1 <name>``, ``<name>`` a file of the task's ``.git/`` naming the future."""
    proc, audit = _run(tmp_path, _NAME.format(name=name), _future)
    lines = _ran(proc)
    assert lines["attack"].startswith("OK"), proc.stdout[-2000:]
    _show(proc, audit)
    _safe(proc, audit)


#: (L) a cherry-pick session planted in the worktree's folder whose todo names the future by a
#: REFERENCE name (no hex word for the judge), then ``git cherry-pick --continue``
_SEQ_NAME = (
    _PRELUDE
    + """\
seq = os.path.join(wt, "sequencer")
os.mkdir(seq)
put(os.path.join(seq, "todo"), "pick %s x\\npick {rev} y\\n" % base)
put(os.path.join(seq, "head"), base + "\\n")
put(os.path.join(seq, "abort-safety"), base + "\\n")
put(os.path.join(seq, "opts"), "[options]\\n\\tno-commit = true\\n")
cont = subprocess.run(["git", "cherry-pick", "--continue"], cwd="/tmp/w", env=who,
                      capture_output=True, text=True)
print("continue", cont.returncode, cont.stderr.replace("\\n", " ")[:300])
report(subprocess.run(["cat", "/tmp/w/a.txt"], capture_output=True, text=True))
done()
"""
)


@pytest.mark.heavy
@pytest.mark.parametrize("rev", ["future", "refs/heads/future"])
def test_l_cherry_pick_todo_naming_a_reference(tmp_path: Path, seccomp: None, rev: str) -> None:
    """``git cherry-pick --continue`` over ``sequencer/todo`` = ``pick <the future's ref>``."""
    proc, audit = _run(tmp_path, _SEQ_NAME.format(rev=rev), _future)
    lines = _ran(proc)
    assert lines.get("continue", "").startswith("0"), proc.stdout[-2000:]
    _show(proc, audit)
    _safe(proc, audit)


#: (M) git run with its current folder inside the worktree's folder and GIT_DIR=. (the
#: residual "a bare name"): ``git log -p -1 MY_HEAD``
_IN_GITDIR = (
    _PRELUDE
    + """\
put(os.path.join(wt, "MY_HEAD"), future + "\\n")
env = dict(os.environ, GIT_DIR=".")
report(subprocess.run(["git", "log", "-p", "-1", "MY_HEAD", "--"], cwd=wt, env=env,
                      capture_output=True, text=True))
os.unlink(os.path.join(wt, "MY_HEAD"))
done()
"""
)


@pytest.mark.heavy
def test_m_git_dir_dot_inside_the_worktree_folder(tmp_path: Path, seccomp: None) -> None:
    """Stopped: ``GIT_DIR=. git log -p -1 MY_HEAD --`` with the current folder the worktree's
    folder shows the future, but git opens ``./MY_HEAD`` (a path starting ``./``: sealed, rowed,
    its text judged): a finding."""
    proc, audit = _run(tmp_path, _IN_GITDIR, _future)
    lines = _ran(proc)
    assert lines["attack"].startswith("OK"), proc.stdout[-2000:]
    assert SECRET in proc.stdout and _flagged(audit), proc.stdout[-2000:]


#: (N) ``ORIG_HEAD`` = ``ref: <name>`` with the name's file in the task's ``.git/`` (the common
#: dir) naming the future, then ``git am --abort`` (no name on the command line)
_AM_ABORT_REF = (
    _PRELUDE
    + """\
put(os.path.join(work, ".git", "{name}"), future + "\\n")
os.mkdir(os.path.join(wt, "rebase-apply"))
for name, text in (("next", "1\\n"), ("last", "1\\n"), ("abort-safety", base + "\\n")):
    put(os.path.join(wt, "rebase-apply", name), text)
put(os.path.join(wt, "ORIG_HEAD"), "ref: {name}\\n")
abort = subprocess.run(["git", "am", "--abort"], cwd="/tmp/w", env=who, capture_output=True)
print("abort", abort.returncode, abort.stderr.decode().replace("\\n", " ")[:300])
report(subprocess.run(["cat", "/tmp/w/a.txt"], capture_output=True, text=True))
os.unlink(os.path.join(work, ".git", "{name}"))
done()
"""
)


@pytest.mark.heavy
@pytest.mark.parametrize("name", ["my_head"])
def test_n_am_abort_to_an_orig_head_naming_a_lower_case_name(
    tmp_path: Path, seccomp: None, name: str
) -> None:
    """``git am --abort`` to ORIG_HEAD = ``ref: my_head``, ``.git/my_head`` the future."""
    proc, audit = _run(tmp_path, _AM_ABORT_REF.format(name=name), _future)
    lines = _ran(proc)
    assert lines.get("abort", "").startswith("0"), proc.stdout[-2000:]
    _show(proc, audit)
    _safe(proc, audit)


#: (P) a cherry-pick todo naming the future by an expression: TODO is a Python expression
_SEQ_EXPR = _SEQ_NAME.replace('"pick %s x\\npick {rev} y\\n" % base', "{todo}")


@pytest.mark.heavy
@pytest.mark.parametrize(
    "todo",
    [
        '"pick %s x\\npick %s^{commit} y\\n" % (base, future[:7])',
        '"pick %s x\\npick %s~0 y\\n" % (base, future[:7].upper())',
        '"pick %s x\\npick :/the fix y\\n" % base',
    ],
    ids=["abbrev-peel", "upper-abbrev-tilde", "message-search"],
)
def test_p_cherry_pick_todo_expressions(tmp_path: Path, seccomp: None, todo: str) -> None:
    """``git cherry-pick --continue`` over todo words that are no plain id: an abbreviation
    with ``^{commit}`` or ``~0`` (upper case) is stopped (the judge's ``_WORD`` reads it, a
    finding); a message search wins."""
    proc, audit = _run(tmp_path, _SEQ_EXPR.format(todo=todo), _future)
    lines = _ran(proc)
    assert lines.get("continue", "").startswith("0"), proc.stdout[-2000:]
    assert lines["attack"].startswith("OK"), proc.stdout[-2000:]
    _show(proc, audit)
    _safe(proc, audit)
    assert _flagged(audit), proc.stdout[-2000:]


#: (R) the worktree's reflog (``logs/HEAD``: the new id second on the line) naming the future,
#: then ``git log -p -1 HEAD@{0}``
_REFLOG = (
    _PRELUDE
    + """\
os.makedirs(os.path.join(wt, "logs"), exist_ok=True)
put(os.path.join(wt, "logs", "HEAD"), "%s %s a <a@b> 1 +0000\\tx\\n%s %s a <a@b> 2 +0000\\ty\\n"
    % ("0" * 40, future, future, base))
report(subprocess.run(["git", "log", "-p", "-1", "{rev}"], cwd="/tmp/w", capture_output=True,
                      text=True))
done()
"""
)


@pytest.mark.heavy
@pytest.mark.parametrize("rev", ["HEAD@{1}", "@{1}"], ids=["head-at-1", "at-1"])
def test_r_reflog_entry_naming_the_future(tmp_path: Path, seccomp: None, rev: str) -> None:
    """Stopped: ``git log -p -1 HEAD@{1}`` (or ``@{1}``) over a planted worktree reflog shows
    the future (git takes the OLD id of the newer entry, at a line's start: an id elsewhere on
    the line, or zeros, is not used), but the argv judge flags a reflog revision ("reads a
    revision outside HEAD's history")."""
    proc, audit = _run(tmp_path, _REFLOG.format(rev=rev), _future)
    lines = _ran(proc)
    assert lines["attack"].startswith("OK"), proc.stdout[-2000:]
    assert SECRET in proc.stdout and _flagged(audit), proc.stdout[-2000:]


#: (S) an abbreviation the judge cannot resolve but git can: the phase writes a blob whose id
#: starts with the future's first 4 hex digits (found by hashing, some 65,000 tries), so the
#: prefix is ambiguous in the store; ``^{commit}`` tells git's lookup to take the commit
_AMBIGUOUS = (
    _PRELUDE
    + """\
import hashlib
prefix = future[:4]
n = 0
while True:
    body = b"x%d\\n" % n
    if hashlib.sha1(b"blob %d\\0" % len(body) + body).hexdigest().startswith(prefix):
        break
    n += 1
made = subprocess.run(["git", "hash-object", "-w", "--stdin"], input=body, capture_output=True)
print("blob", made.stdout.decode().strip()[:4] == prefix, made.returncode)
seq = os.path.join(wt, "sequencer")
os.mkdir(seq)
put(os.path.join(seq, "todo"), "pick %s x\\npick %s{peel} y\\n" % (base, prefix))
put(os.path.join(seq, "head"), base + "\\n")
put(os.path.join(seq, "abort-safety"), base + "\\n")
put(os.path.join(seq, "opts"), "[options]\\n\\tno-commit = true\\n")
env = dict(who, **{env})
cont = subprocess.run(["git", "cherry-pick", "--continue"], cwd="/tmp/w", env=env,
                      capture_output=True, text=True)
print("continue", cont.returncode, cont.stderr.replace("\\n", " ")[:300])
report(subprocess.run(["cat", "/tmp/w/a.txt"], capture_output=True, text=True))
done()
"""
)


@pytest.mark.heavy
@pytest.mark.parametrize(
    "peel,env",
    [
        ("^{commit}", "{}"),
        (
            "",
            '{"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.disambiguate", '
            '"GIT_CONFIG_VALUE_0": "committish"}',
        ),
    ],
    ids=["peel", "core-disambiguate"],
)
def test_s_cherry_pick_todo_with_an_ambiguous_abbreviation(
    tmp_path: Path, seccomp: None, peel: str, env: str
) -> None:
    """``pick <4 hex>^{commit}`` (or a plain ``<4 hex>`` with ``core.disambiguate=committish``),
    the prefix shared by the future and a blob the phase wrote."""
    proc, audit = _run(tmp_path, _AMBIGUOUS.format(peel=peel, env=env), _future)
    lines = _ran(proc)
    assert lines.get("blob") == "True 0", proc.stdout[-2000:]
    assert lines.get("continue", "").startswith("0"), proc.stdout[-2000:]
    _show(proc, audit)
    _safe(proc, audit)


#: (T) the same ambiguous prefix on git's command line (the argv judge, no session file)
_AMBIGUOUS_ARGV = _AMBIGUOUS.split("seq = os.path.join")[0] + (
    """\
report(subprocess.run(["git", "log", "-p", "-1", prefix + "^{commit}"], cwd="/tmp/w",
                      capture_output=True, text=True))
done()
"""
)


@pytest.mark.heavy
def test_t_ambiguous_abbreviation_on_the_command_line(tmp_path: Path, seccomp: None) -> None:
    """Stopped: ``git log -p -1 <4 hex>^{commit}`` (the prefix shared by the future and a phase
    blob) shows the future, but the argv judge resolves the peeled name ("reads a revision
    outside HEAD's history")."""
    proc, audit = _run(tmp_path, _AMBIGUOUS_ARGV, _future)
    lines = _ran(proc)
    assert lines.get("blob") == "True 0", proc.stdout[-2000:]
    assert lines["attack"].startswith("OK"), proc.stdout[-2000:]
    assert SECRET in proc.stdout and _flagged(audit), proc.stdout[-2000:]


#: (U) a planted interactive rebase session: ``git-rebase-todo`` holds TODO, ``orig-head``
#: holds ORIG (``rebase --abort`` resets to it), then ``git rebase STEP``
_REBASE = (
    _PRELUDE
    + """\
state = os.path.join(wt, "rebase-merge")
os.mkdir(state)
for name, text in (("git-rebase-todo", {todo}), ("done", "pick %s x\\n" % base),
                   ("onto", base + "\\n"), ("orig-head", {orig} + "\\n"),
                   ("head-name", "detached HEAD\\n"), ("interactive", "")):
    put(os.path.join(state, name), text)
step = subprocess.run(["git", "rebase", "{step}"], cwd="/tmp/w", env=who, capture_output=True,
                      text=True)
print("step", step.returncode, (step.stdout + step.stderr).replace("\\n", " ")[:400])
report(subprocess.run(["cat", "/tmp/w/a.txt"], capture_output=True, text=True))
done()
"""
)


@pytest.mark.heavy
@pytest.mark.parametrize(
    "todo,orig,step",
    [
        ('"exec git log -p -1 future\\n"', "base", "--continue"),
        ('"break\\n"', '"future"', "--abort"),
    ],
    ids=["exec-line", "abort-to-a-ref-name"],
)
def test_u_rebase_session(tmp_path: Path, seccomp: None, todo: str, orig: str, step: str) -> None:
    """Stopped: an ``exec`` line running ``git log -p -1 future`` shows the future, but the git
    it starts is a process of its own, judged by its argv (a finding); ``orig-head`` = ``future``
    (a reference name) and ``rebase --abort``: git 2.39 refuses it ("invalid orig-head", a hex
    parse), the files stay at the base."""
    proc, audit = _run(tmp_path, _REBASE.format(todo=todo, orig=orig, step=step), _future)
    lines = _ran(proc)
    if step == "--continue":
        assert lines.get("step", "").startswith("0"), proc.stdout[-2000:]
        assert SECRET in proc.stdout and _flagged(audit), proc.stdout[-2000:]
    else:
        assert "invalid orig-head" in lines.get("step", ""), proc.stdout[-2000:]
        assert SECRET not in proc.stdout, proc.stdout[-2000:]


#: (V) a git directory of the phase's own at a path with no ``.git/`` or ``/worktrees/`` in it
#: (``/tmp/g``), its store borrowing the task's (``objects/info/alternates``), ``MY_HEAD`` there
_OWN_GITDIR = (
    _PRELUDE
    + """\
g = "/tmp/g"
for sub in ("refs/heads", "objects/info"):
    os.makedirs(os.path.join(g, sub))
put(os.path.join(g, "HEAD"), {head})
put(os.path.join(g, "config"), "[core]\\n\\trepositoryformatversion = 0\\n\\tbare = true\\n")
put(os.path.join(g, "objects", "info", "alternates"), os.path.join(work, ".git", "objects") + "\\n")
put(os.path.join(g, "MY_HEAD"), future + "\\n")
report(subprocess.run(["git", "--git-dir", g, "log", "-p", "-1", "MY_HEAD"], capture_output=True,
                      text=True))
done()
"""
)


@pytest.mark.heavy
@pytest.mark.parametrize("head", ['"ref: refs/heads/x\\n"', 'base + "\\n"'], ids=["unborn", "base"])
def test_v_pseudo_ref_of_an_own_git_dir_borrowing_the_store(
    tmp_path: Path, seccomp: None, head: str
) -> None:
    """Stopped: ``git --git-dir /tmp/g log -p -1 MY_HEAD`` (/tmp/g's store the task's, by
    alternates; ``/tmp/g/MY_HEAD`` is not classified: no row) shows the future, but git read the
    task's objects through a HEAD that is not the task repository's (unborn or the base): a
    finding."""
    proc, audit = _run(tmp_path, _OWN_GITDIR.format(head=head), _future)
    lines = _ran(proc)
    assert lines["attack"].startswith("OK"), proc.stdout[-2000:]
    assert SECRET in proc.stdout and _flagged(audit), proc.stdout[-2000:]
    hits = [h for v in audit.verdicts for h in v.hits if h.severity == "high"]
    assert any("HEAD that is not the task repository's" in h.command for h in hits), hits


#: (W) a per-worktree reference (``refs/worktree/``, ``refs/bisect/``: files of the worktree's
#: folder, no task reference) naming the future, named on git's command line
_WT_REF = (
    _PRELUDE
    + """\
os.makedirs(os.path.join(wt, "refs", "{kind}"))
put(os.path.join(wt, "refs", "{kind}", "x"), future + "\\n")
report(subprocess.run(["git", "log", "-p", "-1", "{name}"], cwd="/tmp/w", capture_output=True,
                      text=True))
done()
"""
)


@pytest.mark.heavy
@pytest.mark.parametrize(
    "kind,name",
    [("worktree", "worktree/x"), ("worktree", "refs/worktree/x"), ("bisect", "bisect/x")],
    ids=["worktree-short", "worktree-full", "bisect-short"],
)
def test_w_per_worktree_reference(tmp_path: Path, seccomp: None, kind: str, name: str) -> None:
    """Stopped: ``git log -p -1 worktree/x`` (or ``refs/worktree/x``, ``bisect/x``), the
    worktree's own reference the future, shows it, but the reference read and/or the argv name
    is a finding."""
    proc, audit = _run(tmp_path, _WT_REF.format(kind=kind, name=name), _future)
    lines = _ran(proc)
    assert lines["attack"].startswith("OK"), proc.stdout[-2000:]
    assert SECRET in proc.stdout and _flagged(audit), proc.stdout[-2000:]


def _big_repository(root: Path, files: int) -> tuple[str, str]:
    """Outside any box: a repository whose base commit holds ``files`` files (fast-import) and a
    ``future`` branch one file beyond; its base commit and the base's first blob."""
    lines = ["commit refs/heads/main\ncommitter a <a@b> 0 +0000\ndata 4\nbase\n"]
    for i in range(files):
        body = "%d\n" % i
        lines.append("M 100644 inline d%03d/f%06d\ndata %d\n%s\n" % (i // 1000, i, len(body), body))
    lines.append(
        "\ncommit refs/heads/future\ncommitter a <a@b> 1 +0000\ndata 7\nfuture\n"
        "from refs/heads/main\nM 100644 inline a.txt\ndata 17\nFUTURE_SECRET_42\n\n"
    )
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(
        ["git", "-C", str(root), "fast-import", "--quiet"],
        input="".join(lines).encode(),
        check=True,
    )

    def rev(name: str) -> str:
        return subprocess.run(
            ["git", "-C", str(root), "rev-parse", name], capture_output=True, text=True, check=True
        ).stdout.strip()

    return rev("main"), rev("main:d000/f000000")


@pytest.mark.heavy
def test_x_walk_limit_cost_on_a_benign_repository(tmp_path: Path) -> None:
    """The cost of failing closed (no attack): in a benign repository of some 210,000 files the
    walk of the future's trees passes 200,000 objects, so every tree or blob id a session file
    names is "beyond", the BASE's own blob too: a ``rebase-apply`` patch's ``index <old>..<new>``
    line (blob abbreviations of the base) in a candidate's own ``git am``/``rebase`` would be a
    finding. Measured, not changed."""
    from evotree.harness.audit.trace_beside import _Future

    base, blob = _big_repository(tmp_path / "big", 210_000)
    judge = _Future({"path": str(tmp_path / "big"), "head_commit": base})
    patch = "diff --git a/d000/f000000 b/d000/f000000\nindex %s..%s 100644\n" % (blob[:7], "0" * 7)
    ids = judge.ids(patch, anywhere=True)
    assert ids == [blob], ids
    assert judge.beyond(blob) and judge._walk_failed
