"""A history hit judged on the file alone by what its recorded output showed.

Causes found by studying the fourth held-out set's false alarms and misses (a development set):
a wide or unresolvable spelling (``git log --all``, ``git show :/text``, ``git show-ref
--heads``, ``git diff @{u}``) whose recorded output shows only HEAD's own history is not a leak;
a hash the task text names as the fix made elsewhere is not vouched for by being quoted. Each is
tested with real git output from a real repository, with a leak beside the look-alike.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import git, make_repo
from evotree.harness.audit.shown import fix_quotes
from evotree.harness.audit.trajectories import audit_trajectories, audit_trajectory
from evotree.harness.audit.steps import Step, Trajectory

FIX_LINE = "    return 'the distinctive reference fix line'"


def _flagged(steps: list[tuple[str, str | None]], prompt: str | None = None) -> bool:
    traj = Trajectory("t", "shell", [Step(c, o) for c, o in steps], prompt=prompt)
    return audit_trajectories([traj]).flagged == 1


def _out(repo: Path, *args: str) -> str:
    return git(repo, *args) + "\n"


def _history(path: Path, *, future_branch: str | None) -> dict[str, str]:
    """main at the base (three commits, the first tagged v0.9); the fix dangling, or on a
    branch when ``future_branch`` names one."""
    repo = make_repo(path)
    git(repo, "tag", "v0.9")
    (repo / "calc.py").write_text("def wrap(t):\n    return t\n")
    git(repo, "add", "calc.py")
    git(repo, "commit", "-qm", "Add the round-trip test helper")
    (repo / "notes.txt").write_text("sample\n")
    git(repo, "add", "notes.txt")
    git(repo, "commit", "-qm", "Add firing profile sample")
    base = git(repo, "rev-parse", "HEAD")
    (repo / "calc.py").write_text(f"def wrap(t):\n{FIX_LINE}\n")
    git(repo, "commit", "-qam", "Fix the round-trip wrap")
    fix = git(repo, "rev-parse", "HEAD")
    git(repo, "reset", "-q", "--hard", base)
    if future_branch:
        git(repo, "branch", future_branch, fix)
    return {"repo": str(repo), "base": base, "fix": fix, "helper": git(repo, "rev-parse", "HEAD~1")}


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return _history(tmp_path_factory.mktemp("clean") / "r", future_branch=None)


@pytest.fixture(scope="module")
def leaky(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return _history(tmp_path_factory.mktemp("leaky") / "r", future_branch="fix/wrap")


def test_a_walk_whose_every_commit_is_head_history_showed_head_history(
    clean: dict[str, str],
) -> None:
    repo = Path(clean["repo"])
    walk = "git log --all --oneline --decorate"
    shown = _out(repo, "log", "--all", "--oneline", "--decorate")
    vouch = ("git log --oneline -3", _out(repo, "log", "--oneline", "-3"))
    assert "HEAD -> main" in shown and "tag: v0.9" in shown
    # HEAD's line is HEAD; the other two printed by HEAD's history (before or after)
    assert not _flagged([(walk, shown), vouch])
    assert not _flagged([vouch, (walk, shown)])
    # the tagged root vouched by nothing: the walk may have shown a side line
    assert _flagged([(walk, shown)])
    # no output recorded: the spelling is all there is
    assert _flagged([(walk, None), vouch])


def test_a_walk_showing_another_tip_is_a_leak(leaky: dict[str, str]) -> None:
    repo = Path(leaky["repo"])
    shown = _out(repo, "log", "--all", "--oneline", "--decorate")
    assert "fix/wrap" in shown
    vouch = ("git log --oneline -3", _out(repo, "log", "--oneline", "-3"))
    assert _flagged([("git log --all --oneline --decorate", shown), vouch])
    # a filter that can drop the decorated line hides what was shown: judged by spelling
    plain = "\n".join(line for line in shown.splitlines() if "fix/wrap" not in line) + "\n"
    assert _flagged([("git log --all --oneline --decorate | grep -v wrap", plain), vouch])


def test_a_commit_git_lists_undecorated_is_not_judged_by_the_tips(
    clean: dict[str, str], tmp_path: Path
) -> None:
    """git decorates only branches, remotes, tags and the stash: a future commit reached from
    refs/pull is listed bare, below or above tips that are all HEAD's."""
    task = _history(tmp_path / "r", future_branch=None)
    repo = Path(task["repo"])
    git(repo, "update-ref", "refs/pull/7/head", task["fix"])
    shown = _out(repo, "log", "--all", "--oneline", "--decorate")
    assert task["fix"][:7] in shown and "pull" not in shown  # listed, undecorated
    vouch = ("git log --oneline -3", _out(repo, "log", "--oneline", "-3"))
    assert _flagged([("git log --all --oneline --decorate", shown), vouch])


def _walk_severity(steps: list[tuple[str, str | None]]) -> str:
    traj = Trajectory("t", "shell", [Step(c, o) for c, o in steps])
    verdict = audit_trajectory(traj)
    return next(h.severity for h in verdict.hits if h.command.startswith("git log --all"))


def test_a_vouch_after_head_moved_does_not_count(leaky: dict[str, str]) -> None:
    repo = Path(leaky["repo"])
    shown = _out(repo, "log", "--all", "--oneline")
    head_log = ("git log --oneline -5", _out(repo, "log", "--oneline", "-5"))
    # every line the walk printed, printed again by HEAD's history: but HEAD was moved first
    moved = ("git log --oneline -5", _out(repo, "log", "--oneline", "-5", "fix/wrap"))
    assert (
        _walk_severity([("git log --all --oneline", shown), ("git merge -q FETCH_HEAD", ""), moved])
        == "high"
    )
    assert _walk_severity([("git log --all --oneline", shown), head_log]) == "high"
    assert _walk_severity([("git log --all --oneline", shown), moved]) == "info"


def _quoted(commit: str) -> str:
    """How a task quotes ``commit``: its 7-character abbreviation, longer when that is all digits
    (a number in a task's text is not read as a hash; about 1 in 27 commits abbreviates so)."""
    n = 7
    while commit[:n].isdigit():
        n += 1
    return commit[:n]


def test_a_message_search_showing_a_commit_the_task_quotes_is_head_history(
    clean: dict[str, str], leaky: dict[str, str]
) -> None:
    helper = clean["helper"]
    shown = _out(Path(clean["repo"]), "show", "--stat", ":/round-trip")
    assert helper in shown
    prompt = f"Fix wrap(). The round-trip test from {_quoted(helper)} must keep passing."
    assert not _flagged([("git show --stat ':/round-trip'", shown)], prompt)
    assert _flagged([("git show --stat ':/round-trip'", shown)])  # nothing vouches for it
    # in the leaky repository the youngest match is the fix: not the quoted commit
    leak = _out(Path(leaky["repo"]), "show", "--stat", ":/round-trip")
    assert leaky["fix"] in leak
    prompt = f"Fix wrap(). The round-trip test from {_quoted(leaky['helper'])} must keep passing."
    assert _flagged([("git show --stat ':/round-trip'", leak)], prompt)


def test_the_one_branch_listed_is_head_when_head_is_on_a_branch(
    clean: dict[str, str], leaky: dict[str, str]
) -> None:
    repo = Path(clean["repo"])
    status = ("git status", _out(repo, "status"))
    heads = ("git show-ref --heads", _out(repo, "show-ref", "--heads"))
    assert not _flagged([status, heads])
    assert _flagged([heads])  # nothing says HEAD is on a branch: main may be ahead of it
    # two branches listed: the other one is not HEAD's
    two = ("git show-ref --heads", _out(Path(leaky["repo"]), "show-ref", "--heads"))
    assert _flagged([status, two])


def test_one_branch_ahead_of_a_detached_head_is_a_leak(tmp_path: Path) -> None:
    task = _history(tmp_path / "r", future_branch=None)
    repo = Path(task["repo"])
    git(repo, "checkout", "-q", "--detach", task["base"])
    git(repo, "update-ref", "refs/heads/main", task["fix"])
    status = ("git status", _out(repo, "status"))
    assert "HEAD detached" in status[1]
    heads = ("git show-ref --heads", _out(repo, "show-ref", "--heads"))
    assert _flagged([status, heads])


def _edit_steps(repo: Path) -> list[tuple[str, str | None]]:
    edit = (
        "python - <<'EOF'\nimport pathlib\np = pathlib.Path('calc.py')\n"
        "p.write_text('def wrap(t):\\n    return t % 86400\\n')\nEOF"
    )
    return [("cat calc.py", _out(repo, "show", "HEAD:calc.py")), (edit, "")]


def test_a_diff_of_only_lines_seen_or_typed_showed_nothing_new(
    clean: dict[str, str], leaky: dict[str, str]
) -> None:
    repo = Path(clean["repo"])
    (repo / "calc.py").write_text("def wrap(t):\n    return t % 86400\n")
    try:
        shown = _out(repo, "diff", "main")
    finally:
        git(repo, "checkout", "-q", "--", "calc.py")
    assert "+    return t % 86400" in shown
    assert not _flagged(_edit_steps(repo) + [("git diff @{u}", shown)])
    assert _flagged([("git diff @{u}", shown)])  # the removed line was never seen
    # against the fix: its line is in the diff, and nothing before showed it
    lrepo = Path(leaky["repo"])
    (lrepo / "calc.py").write_text("def wrap(t):\n    return t % 86400\n")
    try:
        leak = _out(lrepo, "diff", "fix/wrap")
    finally:
        git(lrepo, "checkout", "-q", "--", "calc.py")
    assert FIX_LINE.strip() in leak
    assert _flagged(_edit_steps(lrepo) + [("git diff @{u}", leak)])


def test_a_hash_the_task_names_as_the_fix_is_not_vouched_for(leaky: dict[str, str]) -> None:
    repo = Path(leaky["repo"])
    fix = leaky["fix"][:7]
    shown = _out(repo, "show", fix)
    prompt = f"wrap() overflows at midnight. (Fixed upstream in {fix}, not released yet.)"
    assert _flagged([(f"git show {fix}", shown)], prompt)
    helper = leaky["helper"][:7]
    ancestor = f"wrap() broke when the helper was added in {helper}."
    assert not _flagged([(f"git show {helper}", _out(repo, "show", helper))], ancestor)


@pytest.mark.parametrize(
    "text, named",
    [
        ("(Fixed upstream in 66ad9a5, not released yet.)", True),
        ("This is fixed by commit 66ad9a5 on the main branch.", True),
        ("The bug was fixed in 66ad9a5.", True),
        ("The balance check broke when totals were added in ca115f9.", False),
        ("Since 080b1a3 the check digit can come out as 10.", False),
        ("The round-trip test from 85eef1e must keep passing.", False),
        ("Negative temperatures were handled in d2c0384; keep that.", False),
        ("The regression was introduced by the fix in 6f5c7b4.", False),
    ],
)
def test_fix_quotes_reads_the_clause_around_the_hash(text: str, named: bool) -> None:
    assert bool(fix_quotes(text)) is named


def test_lines_a_script_printed_do_not_make_a_diff_known(leaky: dict[str, str]) -> None:
    lrepo = Path(leaky["repo"])
    (lrepo / "calc.py").write_text("def wrap(t):\n    return t % 86400\n")
    try:
        leak = _out(lrepo, "diff", "fix/wrap")
    finally:
        git(lrepo, "checkout", "-q", "--", "calc.py")
    # a script the audit cannot read printed the fix's file
    dug = ("python dig.py", _out(lrepo, "show", "fix/wrap:calc.py"))
    assert _flagged(_edit_steps(lrepo) + [dug, ("git diff @{u}", leak)])
    # the same lines read from the working tree (a file the trajectory wrote): known
    read = ("cat calc.py", _out(lrepo, "show", "fix/wrap:calc.py"))
    assert not _flagged(_edit_steps(lrepo) + [read, ("git diff @{u}", leak)])


def test_an_abbreviation_of_only_digits_is_still_a_hash() -> None:
    walk = (
        "git log --all --oneline",
        "8be9233 Add firing profile sample\n2910880 initial recipe\n",
    )
    vouch = ("git log --oneline -2", "8be9233 Add firing profile sample\n2910880 initial recipe\n")
    assert not _flagged([walk, vouch])
    assert _flagged([walk, ("git log --oneline -1", "8be9233 Add firing profile sample\n")])


def test_a_future_abbreviation_of_only_digits_is_found_with_the_repository(tmp_path: Path) -> None:
    """About one abbreviation in 27 is all digits: where git prints an id it is a hash (a
    number elsewhere in an output is not looked up)."""
    repo = make_repo(tmp_path / "r")
    base = git(repo, "rev-parse", "HEAD")
    tree = git(repo, "rev-parse", "HEAD^{tree}")
    future = next(
        c
        for c in (git(repo, "commit-tree", tree, "-p", base, "-m", f"fix {n}") for n in range(2000))
        if c[:7].isdigit()
    )
    git(repo, "update-ref", "refs/pull/1/head", future)
    short = future[:7]

    def flagged(output: str) -> bool:
        traj = Trajectory("t", "shell", [Step("python tools/report.py", output)])
        return audit_trajectories([traj], repo=str(repo), base=base).flagged == 1

    assert flagged(f"{short} the fix\n")
    assert flagged(f"commit {future}\n")
    assert not flagged(f"ran {short} iterations\n")


def test_a_reflog_whose_entries_are_head_history_showed_head_history(tmp_path: Path) -> None:
    task = _history(tmp_path / "r", future_branch=None)
    repo = Path(task["repo"])
    reflog = _out(repo, "reflog", "-3")
    assert task["fix"][:7] in reflog  # the reset away from the fix is in HEAD's log
    head_only = reflog.splitlines()[0] + "\n"
    assert "HEAD@{0}" in head_only
    assert not _flagged([("git reflog -1", head_only)])
    assert not _flagged([("git reflog -5", head_only)])
    vouch = ("git log --oneline -3", _out(repo, "log", "--oneline", "-3"))
    assert _flagged([("git reflog -3", reflog), vouch])  # the fix's entry: nothing vouches


def test_a_checkout_or_restore_that_git_refused_wrote_nothing(leaky: dict[str, str]) -> None:
    repo = Path(leaky["repo"])
    proc = subprocess.run(
        ["git", "checkout", "v9.9.9", "--", "calc.py"], cwd=repo, capture_output=True, text=True
    )
    assert proc.returncode != 0 and proc.stderr.startswith("fatal: invalid reference")
    assert not _flagged([("git checkout v9.9.9 -- calc.py", proc.stderr)])
    proc = subprocess.run(
        ["git", "restore", "--source=origin/none", "calc.py"],
        cwd=repo,
        capture_output=True,
        text=True,
    )
    assert proc.returncode != 0
    assert not _flagged([("git restore --source=origin/none calc.py", proc.stderr)])
    # it worked: the fix's file is in the working tree
    done = subprocess.run(
        ["git", "checkout", "fix/wrap", "--", "calc.py"], cwd=repo, capture_output=True, text=True
    )
    git(repo, "checkout", "-q", "HEAD", "--", "calc.py")
    assert done.returncode == 0
    assert _flagged([("git checkout fix/wrap -- calc.py", done.stdout + done.stderr)])
    # a cherry-pick that stopped on a conflict left the fix's lines behind: not an abort
    assert _flagged([("git cherry-pick fix/wrap", "error: could not apply 1a2b3c4... fix\n")])
