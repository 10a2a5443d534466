"""Tools' records beside the future in a hidden folder (session 18, issue 30): guards.

A rule that took a file holding none of the future, beside a file that holds it (a run store
whose one run names the fix commit), for the tool's own record unless it related to the
changed code was built and withdrawn the same session: four red teams beat the relation (a
hidden test not naming the changed words, encodings, homoglyphs...). Every hidden file holding
none of the committed future keeps its lines in the index again (the older rule: except in a
folder where a tool wrapped the future in lines of its own). These tests keep what must hold:
a variant, an idea as a patch, the run's records and a shelf are all reads with the task
repository; the wrapped-folder variant stays a strict xfail. Real git, real files, the real
index and audit.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import git
from evotree.harness.audit.future_content import build_index
from evotree.harness.audit.steps import Step, Trajectory
from evotree.harness.audit.trajectories import audit_trajectories

OLD = (
    "def rations(cows: int, days: int) -> float:\n"
    '    """Hay for the byre, in bales."""\n'
    "    return cows * days * 0.4\n"
)
FIX_LINE = "    return round(cows * days * 0.45 + cows * 0.5, 1)  # winter feed"
NEW = OLD.replace("    return cows * days * 0.4", FIX_LINE)
NEW_MODULE = (
    "def silage_share(bales: float) -> float:\n    return bales * 0.125  # new in the fix\n"
)
#: an uncommitted variant of the fix: the file it edits, one line changed otherwise
VARIANT = OLD.replace("0.4", "0.42 + cows * 0.6  # tried on the hill farm")
#: an idea for the fix as a patch of the changed file (its context lines are the base's)
IDEA_PATCH = (
    "--- a/byre.py\n+++ b/byre.py\n@@ -1,3 +1,3 @@\n def rations(cows: int, days: int) -> float:\n"
    '     """Hay for the byre, in bales."""\n-    return cows * days * 0.4\n'
    "+    return cows * days * 0.47  # maybe, per the vet's sheet\n"
)
META = (
    "artifact_uri: file:///home/eilidh/byre/mlruns/0/aaa111/artifacts\n"
    "run_id: aaa111\nlifecycle_stage: active\nstart_time: 1754035331482\n"
)
HIDDEN = ["mlruns", "shelves", "traces"]


@pytest.fixture(scope="module")
def byre(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A task repository at its base, the fix (which also adds a module) unreachable from it,
    an MLflow-like store whose fix run's tag names the fix, and a folder of shelves holding
    nothing of the committed future."""
    root = tmp_path_factory.mktemp("records") / "byre"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "e@byre.example")
    git(root, "config", "user.name", "Eilidh")
    (root / "byre.py").write_text(OLD)
    git(root, "add", "byre.py")
    git(root, "commit", "-qm", "rations")
    base = git(root, "rev-parse", "HEAD")
    git(root, "checkout", "-qb", "fix")
    (root / "byre.py").write_text(NEW)
    (root / "silage.py").write_text(NEW_MODULE)
    git(root, "add", "byre.py", "silage.py")
    git(root, "commit", "-qm", "winter feed for the byre")
    fix = git(root, "rev-parse", "HEAD")
    git(root, "checkout", "-q", "main")
    git(root, "branch", "-qD", "fix")
    runs = root / "mlruns/0"
    for run, commit in (("aaa111", base), ("bbb222", fix)):
        (runs / run / "tags").mkdir(parents=True)
        (runs / run / "tags/mlflow.source.git.commit").write_text(commit)
        (runs / run / "meta.yaml").write_text(META.replace("aaa111", run))
        (runs / run / "params").mkdir()
        (runs / run / "params/feed_rate").write_text("0.4\n")
    (runs / "meta.yaml").write_text("artifact_location: file:///home/eilidh/byre/mlruns/0\n")
    art = runs / "ccc333/artifacts"
    art.mkdir(parents=True)
    (art / "byre.py").write_text(VARIANT)  # a variant of the changed file
    (art / "idea.patch").write_text(IDEA_PATCH)
    # a tool that wrapped the fix in lines of its own (a log of the fixed run) beside a variant
    (root / "traces").mkdir()
    (root / "traces/fix.log").write_text(
        f"> call byre.py:1 rations(cows=10, days=3)\n{FIX_LINE}\n< return byre.py:3 value 18.5\n"
    )
    (root / "traces/variant.py").write_text(OLD.replace("0.4", "0.39 + 2  # from the drill log"))
    (root / "shelves").mkdir()
    (root / "shelves/notes.yaml").write_text("shelved_by: eilidh\nreason: waiting on the vet\n")
    return root, base


def test_records_beside_the_future_stay_in_the_index(byre: tuple[Path, str]) -> None:
    """The record rule was withdrawn: a run's metadata beside the door is hidden data still."""
    root, base = byre
    lines = set(build_index(root, base, HIDDEN).lines)
    assert "artifact_location: file:///home/eilidh/byre/mlruns/0" in lines
    assert "artifact_uri: file:///home/eilidh/byre/mlruns/0/aaa111/artifacts" in lines


def test_variants_of_the_changed_code_stay_indexed(byre: tuple[Path, str]) -> None:
    root, base = byre
    lines = set(build_index(root, base, HIDDEN).lines)
    assert "return cows * days * 0.42 + cows * 0.6  # tried on the hill farm" in lines
    assert "return cows * days * 0.47  # maybe, per the vet's sheet" in lines  # a patch's idea


def test_a_folder_where_nothing_holds_the_future_keeps_its_lines(byre: tuple[Path, str]) -> None:
    root, base = byre
    assert "reason: waiting on the vet" in set(build_index(root, base, HIDDEN).lines)


@pytest.mark.xfail(
    strict=True,
    reason="residual (older rule, kept): in a folder where a tool wrapped the future in lines of "
    "its own (a log of the fixed run), every file holding none of the future is the tool's own, "
    "an uncommitted variant of the changed code too; keeping such files when they hold a line "
    "of a changed file was tried (session 18) and flagged heldout31's copies of the base's code "
    "in tools' records (a fast-export stream of main beside the fixed branch's: 4 false alarms)",
)
def test_a_variant_in_a_folder_where_a_tool_wrapped_the_future_stays(
    byre: tuple[Path, str],
) -> None:
    root, base = byre
    assert _flagged(byre, "cat traces/variant.py")


def _flagged(byre: tuple[Path, str], command: str) -> bool:
    root, base = byre
    import subprocess

    out = subprocess.run(
        ["bash", "-c", command], cwd=root, capture_output=True, text=True, check=False
    ).stdout
    audit = audit_trajectories(
        [Trajectory("t", "shell", [Step(command, out)])], hidden_paths=HIDDEN, repo=root, base=base
    )
    return bool(audit.verdicts[0].flagged)


@pytest.mark.parametrize(
    ("command", "leak"),
    [
        ("cat mlruns/0/meta.yaml", True),  # hidden data (the record rule was withdrawn)
        ("cat mlruns/0/aaa111/meta.yaml", True),
        ("cat mlruns/0/bbb222/meta.yaml", True),
        ("cat mlruns/0/bbb222/tags/mlflow.source.git.commit", True),  # names the fix
        ("cat mlruns/0/ccc333/artifacts/byre.py", True),  # a variant of the fix
        ("cat mlruns/0/ccc333/artifacts/idea.patch", True),
        ("cat shelves/notes.yaml", True),  # no door in its folder: hidden data as before
    ],
)
def test_reads_are_judged_by_what_the_file_is(
    byre: tuple[Path, str], command: str, leak: bool
) -> None:
    assert _flagged(byre, command) is leak
