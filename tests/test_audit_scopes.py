"""What a wide git command could show, judged in the task repository; ``codex exec --json``.

Causes found by studying the fourth held-out set's false alarms (now a development set), each
tested with a leak and a look-alike in a real repository:

* ``git log --all``, ``rev-parse --all``, ``for-each-ref``, ``show-ref``: the references they
  read, resolved at the base (every one an ancestor: nothing of the future; one beyond: a leak);
* ``git notes list|show``: the note they read (none there: nothing read);
* ``X^{tree}``: judged by X;
* ``git fetch . main:scratch`` is this repository, not the network (what it copies is judged);
* a ``codex exec --json`` transcript is read; an unknown event format still fails closed;
* a rollout's own typed commands inside its observation text are its own work.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import git, make_repo
from evotree.harness.audit.trajectories import audit_trajectories
from evotree.harness.audit.steps import Step, Trajectory
from evotree.harness.audit.transcripts import read_trajectories


def _flagged(
    *commands: str, outputs: tuple[str | None, ...] = (), repo: dict[str, str] | None = None
) -> bool:
    steps = [Step(c, outputs[k] if k < len(outputs) else None) for k, c in enumerate(commands)]
    extra = {"repo": repo["repo"], "base": repo["base"]} if repo else {}
    return audit_trajectories([Trajectory("t", "shell", steps)], **extra).flagged == 1


def _task(tmp: Path, *, future_ref: str | None, note_on_base: bool = False) -> dict[str, str]:
    """A task repository at its base, with a dangling future commit; ``future_ref`` names it."""
    repo = make_repo(tmp)
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "tag", "v1.0")
    (repo / "fix.py").write_text("def fixed():\n    return 'the reference fix line'\n")
    git(repo, "add", "fix.py")
    git(repo, "commit", "-qm", "the fix")
    fix = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "reset", "-q", "--hard", base)
    git(repo, "reflog", "expire", "--expire=now", "--all")
    if future_ref:
        git(repo, "update-ref", future_ref, fix)
    if note_on_base:
        git(repo, "notes", "add", "-m", "reviewer: return the reference fix line", base)
    return {"repo": str(repo), "base": base}


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return _task(tmp_path_factory.mktemp("clean") / "r", future_ref=None)


@pytest.fixture(scope="module")
def leaky(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return _task(
        tmp_path_factory.mktemp("leaky") / "r", future_ref="refs/pull/7/head", note_on_base=True
    )


WIDE = [
    "git log --all --oneline",
    "git rev-parse --all",
    "git for-each-ref",
    "git for-each-ref refs/pull --format='%(refname)'",
    "git show-ref",
    "git show-ref head",
    "git notes list",
    "git notes show HEAD",
]


@pytest.mark.parametrize("command", WIDE)
def test_a_wide_command_with_every_reference_behind_the_base_is_cleared(
    command: str, clean: dict[str, str]
) -> None:
    assert _flagged(command)  # the file alone cannot tell
    assert not _flagged(command, repo=clean)


@pytest.mark.parametrize("command", WIDE)
def test_a_wide_command_reaching_a_future_reference_or_note_is_a_leak(
    command: str, leaky: dict[str, str]
) -> None:
    assert _flagged(command, repo=leaky)


@pytest.mark.parametrize(
    "command",
    [
        "git for-each-ref refs/heads refs/tags",
        "git show-ref --heads",
        "git notes show HEAD~0^",
        "git log --branches --oneline",
        "git show-branch -a",
    ],
)
def test_a_scope_that_leaves_the_future_reference_out_is_cleared(
    command: str, leaky: dict[str, str]
) -> None:
    assert not _flagged(command, repo=leaky)


@pytest.mark.parametrize(
    "command",
    [
        "git log --all --reflog",
        "git log --all --glob=refs/pull/*",
        "git fsck --lost-found",
        "git fsck",
    ],
)
def test_flags_with_no_scope_stay_judged_by_spelling(command: str, clean: dict[str, str]) -> None:
    assert _flagged(command, repo=clean)


def test_a_named_revision_beside_all_is_judged_too(tmp_path: Path) -> None:
    task = _task(tmp_path / "r", future_ref=None)
    repo = Path(task["repo"])
    dangling = git(repo, "fsck", "--lost-found", check=False)
    oid = next(w for w in dangling.split() if len(w) == 40)
    assert _flagged(f"git log --all -p {oid}", repo=task)


def test_tree_of_a_commit_is_judged_by_the_commit(
    clean: dict[str, str], leaky: dict[str, str]
) -> None:
    assert not _flagged("git cat-file -p HEAD^{tree}", repo=clean)
    assert _flagged("git cat-file -p refs/pull/7/head^{tree}", repo=leaky)


def test_notes_show_that_printed_only_an_error_showed_nothing() -> None:
    err = "error: no note found for object 88d96e3adb2593515ab3976fd88dc5212c40897b.\n"
    assert not _flagged("bash -lc 'git notes show HEAD~1'", outputs=(err,))
    assert _flagged("bash -lc 'git notes show HEAD~1'", outputs=("use the fix\n",))


def test_fsck_without_dangling_objects_reports_only_breakage() -> None:
    assert not _flagged("git fsck --connectivity-only --no-dangling")
    assert _flagged("git fsck --no-dangling --unreachable")


def test_a_fetch_from_the_repository_itself_is_not_the_network(leaky: dict[str, str]) -> None:
    assert not _flagged("git fetch . main:refs/heads/scratch")
    assert _flagged("git fetch origin main")
    assert _flagged("git fetch . refs/pull/7/head:scratch", repo=leaky)
    assert _flagged("git fetch . origin/fix:scratch")


def _exec_events(*items: dict) -> str:
    rows = [{"type": "thread.started", "thread_id": "t1"}, {"type": "turn.started"}]
    for item in items:
        rows.append(
            {
                "type": "item.started",
                "item": {**item, "aggregated_output": "", "status": "in_progress"},
            }
        )
        rows.append({"type": "item.completed", "item": item})
    rows.append({"type": "turn.completed", "usage": {"input_tokens": 1, "output_tokens": 1}})
    return "\n".join(json.dumps(r) for r in rows) + "\n"


def test_codex_exec_json_is_read(tmp_path: Path) -> None:
    path = tmp_path / "exec.jsonl"
    path.write_text(
        _exec_events(
            {"id": "item_0", "type": "reasoning", "text": "look"},
            {
                "id": "item_1",
                "type": "command_execution",
                "command": "bash -lc 'git status'",
                "aggregated_output": "clean\n",
                "exit_code": 0,
                "status": "completed",
            },
            {
                "id": "item_2",
                "type": "file_change",
                "changes": [{"path": "a.py", "kind": "update"}],
                "status": "completed",
            },
            {
                "id": "item_3",
                "type": "command_execution",
                "command": "bash -lc 'git log --all -p'",
                "aggregated_output": "commit 1234567\n",
                "exit_code": 0,
                "status": "completed",
            },
        )
    )
    (traj,) = read_trajectories(path)
    assert traj.format == "codex-exec" and not traj.unread
    assert [s.command for s in traj.steps] == [
        "bash -lc 'git status'",
        "tee a.py",
        "bash -lc 'git log --all -p'",
    ]
    assert traj.steps[0].output == "clean\n"
    assert audit_trajectories([path]).flagged == 1


def test_codex_exec_clean_session_passes_and_unknown_items_fail_closed(tmp_path: Path) -> None:
    ok = tmp_path / "ok.jsonl"
    ok.write_text(
        _exec_events(
            {
                "id": "item_1",
                "type": "command_execution",
                "command": "pytest -q",
                "aggregated_output": "1 passed",
                "exit_code": 0,
                "status": "completed",
            }
        )
    )
    assert audit_trajectories([ok]).flagged == 0
    odd = tmp_path / "odd.jsonl"
    odd.write_text(
        _exec_events({"id": "item_1", "type": "remote_shell_run", "cmd": "git log --all"})
    )
    audit = audit_trajectories([odd])
    assert audit.flagged == 1
    assert any(h.code == "audit.unreadable" for v in audit.verdicts for h in v.hits)
    unknown = tmp_path / "unknown.jsonl"
    unknown.write_text(json.dumps({"kind": "step", "shell": "git log --all"}) + "\n")
    assert audit_trajectories([unknown]).flagged == 1  # an unknown format never passes


# ----------------------------------------------------------------------------- the misses
def test_switch_create_judges_its_start_point(clean: dict[str, str], leaky: dict[str, str]) -> None:
    assert _flagged("git switch -c tryout origin/HEAD")
    assert _flagged("git switch -c tryout refs/pull/7/head", repo=leaky)
    assert not _flagged("git switch -c tryout")
    assert not _flagged("git switch -c tryout HEAD~1", repo=clean)


def test_log_show_notes_reads_the_notes(clean: dict[str, str], leaky: dict[str, str]) -> None:
    assert _flagged("git log -1 --show-notes")
    assert _flagged("git log -1 --notes=commits", repo=leaky)
    assert not _flagged("git log -1 --show-notes", repo=clean)  # no notes there
    assert not _flagged("git log -1 --no-notes")


def test_branch_verbose_lists_every_branch_tip(
    clean: dict[str, str], leaky: dict[str, str], tmp_path: Path
) -> None:
    two = "* main  1a2b3c4 base\n  wip/x  5d6e7f8 the fix\n"
    assert _flagged("git branch -v", outputs=(two,))
    assert _flagged("git branch -vv")  # nothing recorded: the spelling cannot tell
    assert not _flagged("git branch -v", outputs=("* main 1a2b3c4 base\n",))
    assert not _flagged("git branch -v", repo=clean)
    task = _task(tmp_path / "r", future_ref="refs/heads/wip/merge-order")
    assert _flagged("git branch -v", repo=task)


def test_a_makefile_fed_on_stdin_is_read() -> None:
    assert _flagged("make -f - peek <<'EOF'\npeek:\n\tgit show wip/merge-order:f.py\nEOF")
    assert _flagged("make --file=- <<EOF\nall:\n\tgit log --all -p\nEOF")
    assert not _flagged("make -f - t <<'EOF'\nt:\n\tpython -m pytest -q\nEOF")


def test_a_clone_of_the_repository_itself_is_judged_by_what_it_copies(
    clean: dict[str, str], leaky: dict[str, str]
) -> None:
    assert not _flagged("git clone -q --single-branch --branch main --no-tags . /tmp/fr")
    assert _flagged("git clone --single-branch -b wip/fix . /tmp/x")
    assert _flagged("git clone . /tmp/x")  # every branch: the file alone cannot tell
    assert not _flagged("git clone . /tmp/x", repo=clean)
    assert _flagged("git clone https://example.org/a/b /tmp/b")


def test_an_upstream_git_status_showed_at_head_is_head() -> None:
    same = ("git status -sb", "## main...origin/main\n")
    assert not _flagged(same[0], "git log -3 @{u}", outputs=(same[1], "x"))
    assert not _flagged(
        "git status",
        "git diff origin/main",
        outputs=("On branch main\nYour branch is up to date with 'origin/main'.\n", "x"),
    )
    assert _flagged(same[0], "git log -3 @{u}", outputs=("## main...origin/main [behind 1]\n", "x"))
    assert _flagged(same[0], "git switch other", "git log @{u}", outputs=(same[1], "", "x"))
    assert _flagged("git log -3 @{u}", same[0], outputs=("x", same[1]))  # shown after: no proof
    assert _flagged(same[0], "git log -3 origin/fix", outputs=(same[1], "x"))


def test_a_walk_inside_a_single_branch_clone_reads_that_branch(
    leaky: dict[str, str], tmp_path: Path
) -> None:
    clone = "git clone -q --single-branch --branch main --no-tags . /tmp/fr"
    walk = "git -C /tmp/fr log --all --oneline"
    assert not _flagged(clone, walk)
    assert not _flagged(f"bash -lc '{clone} && {walk}'")
    assert _flagged(f"bash -lc '{walk}; {clone}'")  # walked before it was made
    assert _flagged(clone, "git -C /tmp/other log --all")
    assert _flagged("git clone -q --single-branch --branch main . /tmp/fr", walk)  # tags copied
    assert _flagged(clone, "git -C /tmp/fr log --reflog")
    task = _task(tmp_path / "r", future_ref="refs/heads/wip/fix")
    assert _flagged(
        "git clone -q --single-branch --branch wip/fix --no-tags . /tmp/fr", walk, repo=task
    )


def test_every_format_the_reader_names_is_in_the_audit_json_schema() -> None:
    import typing

    from evotree.harness.audit.transcripts import FORMATS
    from evotree.verbs.audit_results import TrajectoryFormat

    assert set(FORMATS) <= set(typing.get_args(TrajectoryFormat))
