"""Content provenance: with the task repository and its base, tool outputs that
show what only the future holds — object ids, commit subjects, tag names, lines future commits add
— are a leak whatever printed them; what the agent wrote itself, or what the base already holds,
is not."""

from __future__ import annotations


import pytest

from conftest import git, make_repo
from evotree.harness.audit.future_content import build_index, scan_outputs
from evotree.harness.audit.trajectories import audit_trajectories
from evotree.harness.audit.steps import Step, Trajectory

FIX = (
    "def parse_date(text):\n"
    "    year, month, day = (int(part) for part in text.split('-'))\n"
    "    if month == 2 and day == 29 and not is_leap_year(year):\n"
    "        raise ValueError('no leap day in a common year')\n"
    "    return datetime.date(year, month, day)\n"
)
BUGGY = (
    "def parse_date(text):\n"
    "    year, month, day = (int(part) for part in text.split('-'))\n"
    "    return datetime.date(year, month, day)\n"
)


@pytest.fixture(scope="module")
def task(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Base on main (with an issue file quoting a title), the fix on a remote-tracking branch with
    a tag, a stash holding another future line."""
    repo = make_repo(tmp_path_factory.mktemp("prov") / "task")
    (repo / "dates.py").write_text(BUGGY)
    (repo / "ISSUE.md").write_text(
        "Parsing 2023-02-29 gives a date: Validate leap days in parse_date\n"
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "dates module")
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-qb", "fix")
    (repo / "dates.py").write_text(FIX)
    git(repo, "commit", "-qam", "Reject February 29 in common years (closes #12)")
    fix = git(repo, "rev-parse", "HEAD")
    git(repo, "tag", "v1.1.0")
    (repo / "dates.py").write_text(FIX + "# Validate leap days in parse_date\n")
    git(
        repo, "commit", "-qam", "Validate leap days in parse_date"
    )  # the title: in the base
    git(repo, "update-ref", "refs/remotes/origin/fix", "HEAD")
    git(repo, "checkout", "-q", "main")
    git(repo, "branch", "-qD", "fix")
    blob = git(repo, "rev-parse", f"{fix}:dates.py")
    return {"repo": str(repo), "base": base, "fix": fix, "blob": blob}


def _hits(task: dict[str, str], *steps: tuple[str, str | None]) -> list[tuple[str, str]]:
    traj = Trajectory("t", "shell", [Step(c, o) for c, o in steps])
    audit = audit_trajectories([traj], repo=task["repo"], base=task["base"])
    return [
        (h.severity, h.rule)
        for v in audit.verdicts
        for h in v.hits
        if h.code == "audit.future_content"
    ]


def test_index_holds_the_future_not_the_base(task: dict[str, str]) -> None:
    index = build_index(task["repo"], task["base"])
    assert task["fix"] in index.objects and index.objects[task["blob"]] == "blob"
    assert index.tags == {"v1.1.0": task["fix"]}
    assert "Reject February 29 in common years (closes #12)" in index.subjects
    assert "Validate leap days in parse_date" not in index.subjects  # quoted by the base's ISSUE.md
    assert "raise ValueError('no leap day in a common year')" in index.lines
    assert "return datetime.date(year, month, day)" not in index.lines  # the base has it
    assert index.object_for(task["fix"][:7]) == (task["fix"], "commit")
    assert index.object_for(task["base"][:7]) is None


def test_an_opaque_program_printing_future_lines_is_a_leak(task: dict[str, str]) -> None:
    out = (
        "    if month == 2 and day == 29 and not is_leap_year(year):\n"
        "        raise ValueError('no leap day in a common year')\n"
    )
    hits = _hits(task, ("python find_fix.py", out))
    assert hits and all(sev == "high" for sev, _ in hits) and "adds" in hits[0][1]


@pytest.mark.parametrize(
    "output",
    [
        "see v1.1.0 for the answer",
        "Reject February 29 in common years (closes #12)",
        "* 1234567 (HEAD) Reject February 29 in common years (closes #12)",
    ],
    ids=["tag", "subject", "subject-in-graph"],
)
def test_tags_and_subjects_in_outputs_are_leaks(task: dict[str, str], output: str) -> None:
    assert [sev for sev, _ in _hits(task, ("./tool", output))] == ["high"]


def test_future_ids_full_and_abbreviated(task: dict[str, str]) -> None:
    assert _hits(task, ("./tool", f"object {task['blob'][:9]} holds it"))[0][0] == "high"
    # a future commit id is audit.future_hash (hash ancestry), not reported twice
    traj = Trajectory("t", "shell", [Step("./tool", f"commit {task['fix']}")])
    codes = {
        h.code
        for v in audit_trajectories([traj], repo=task["repo"], base=task["base"]).verdicts
        for h in v.hits
    }
    assert codes == {"audit.future_hash"}


def test_look_alikes_are_not_leaks(task: dict[str, str]) -> None:
    # the agent wrote the same fix itself, then looked at it and diffed it (its blob id is the future's)
    write = (
        "str_replace_editor str_replace dates.py --old_str 'x' --new_str "
        '"    if month == 2 and day == 29 and not is_leap_year(year):\n'
        "        raise ValueError('no leap day in a common year')\""
    )
    shown = (
        "    if month == 2 and day == 29 and not is_leap_year(year):\n"
        "        raise ValueError('no leap day in a common year')\n"
    )
    diff = f"diff --git a/dates.py b/dates.py\nindex 1111111..{task['blob'][:7]} 100644\n+{shown}"
    assert _hits(task, (write, "ok"), ("cat dates.py", shown), ("git diff", diff)) == []
    # lines the base already has, the issue's own title, a hex word that names nothing
    assert (
        _hits(
            task,
            ("cat dates.py", BUGGY),
            ("cat ISSUE.md", "Validate leap days in parse_date"),
            ("echo", "build deadbeef1 done"),
        )
        == []
    )


def test_one_coinciding_line_is_a_warning(task: dict[str, str]) -> None:
    hits = _hits(task, ("pytest -q", "E   raise ValueError('no leap day in a common year')"))
    assert [sev for sev, _ in hits] == ["warn"]


def test_scan_reads_the_observation_text_when_steps_have_no_output(task: dict[str, str]) -> None:
    index = build_index(task["repo"], task["base"])
    found = scan_outputs(index, [None], ["ls"], text="log: v1.1.0 released")
    assert [(h.kind, h.step) for h in found] == [("tag", -1)]
