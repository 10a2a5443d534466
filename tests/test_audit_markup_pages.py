"""A hidden folder of HTML pages a tool rendered (pydoc), one of the fixed module beside one of
the base's (issue 30, heldout32's look-alikes, session 19).

The fixed module's page holds the fix's lines only through its markup
(``<strong>INTERVAL_MIN</strong> = 2``). Tried in session 19 and withdrawn after its red team
(``tests/test_redteam_s19_audit_redteam.py`` W1-W4): taking such a page for a carrier of the
future made its other lines, and every other file of its hidden path, the tool's own — a page of
a variant, anchors naming the fix's new constants, an idea beside any page passed. So both pages
stay hidden data: every line the base lacks is indexed, and reads of them are high (the blind
writer's look-alikes among them: the audit's semantics, docs/audit.md). What holds: reads of the
constants are high with the repository and alone (a page's line is tried for code with its tags
removed, ``code_lines``), a count of lines is no read. Real git, pages written by the real
``pydoc``, the real index, audit and replay.
"""

from __future__ import annotations

import pydoc
import subprocess
import sys
import types
from pathlib import Path

import pytest

from conftest import git
from evotree.harness.audit import replay
from evotree.harness.audit.future_content import build_index
from evotree.harness.audit.steps import Step, Trajectory
from evotree.harness.audit.trajectories import audit_trajectories

BASE = '''"""Foghorn blasts in a haar."""


def blasts(minutes: float) -> int:
    """Blasts for minutes of haar: one a minute."""
    return int(minutes)
'''
FIXED = '''"""Foghorn blasts in a haar."""
import math

INTERVAL_MIN = 2
FIRST_BLASTS = 1


def blasts(minutes: float) -> int:
    """Blasts for minutes of haar: one every INTERVAL_MIN, rounded up, and FIRST_BLASTS first."""
    return FIRST_BLASTS + math.ceil(minutes / INTERVAL_MIN)
'''
IDEA = "INTERVAL_MIN = 3  # or every three minutes, as the harbour master asked\n"
HIDDEN = ["apidocs", "ideas"]

pytestmark = pytest.mark.skipif(replay._bwrap() is None, reason="bubblewrap is not installed")


def _page(source: str) -> str:
    """pydoc's HTML page of module ``horn`` holding ``source``."""
    module = types.ModuleType("horn")
    module.__file__ = "/home/calum/src/haar/horn.py"
    sys.modules["horn"] = module
    try:
        exec(compile(source, "horn.py", "exec"), module.__dict__)  # noqa: S102 - our own text
        doc = pydoc.HTMLDoc()
        return doc.page(pydoc.describe(module), doc.document(module, "horn"))
    finally:
        del sys.modules["horn"]


@pytest.fixture(scope="module")
def haar(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A task repository at its base, the fix unreachable from it, pydoc pages of both in the
    hidden ``apidocs/`` and an uncommitted idea in the hidden ``ideas/``."""
    root = tmp_path_factory.mktemp("markup") / "haar"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "c@haar.example")
    git(root, "config", "user.name", "Calum")
    (root / "horn.py").write_text(BASE)
    git(root, "add", "horn.py")
    git(root, "commit", "-qm", "base")
    base = git(root, "rev-parse", "HEAD")
    git(root, "checkout", "-qb", "pr-9")
    (root / "horn.py").write_text(FIXED)
    git(root, "commit", "-qam", "blasts every two minutes, one first")
    git(root, "checkout", "-q", "main")
    git(root, "branch", "-D", "pr-9")
    for name, source in (("main", BASE), ("pr-9", FIXED)):
        (root / "apidocs" / name).mkdir(parents=True)
        (root / "apidocs" / name / "horn.html").write_text(_page(source))
    (root / "ideas").mkdir()
    (root / "ideas" / "try.py").write_text(IDEA)
    return root, base


def _seen(root: Path, command: str) -> str:
    return subprocess.run(
        ["bash", "-c", command], cwd=root, capture_output=True, text=True, check=False
    ).stdout


def _flagged(haar: tuple[Path, str], command: str) -> bool:
    root, base = haar
    traj = Trajectory("t", "shell", [Step(command, _seen(root, command))])
    audit = audit_trajectories([traj], hidden_paths=HIDDEN, repo=root, base=base)
    return bool(audit.verdicts[0].flagged)


def test_both_pages_are_hidden_data(haar: tuple[Path, str]) -> None:
    root, base = haar
    page = (root / "apidocs/pr-9/horn.html").read_text()
    assert "<strong>INTERVAL_MIN</strong> = 2" in page  # the premise: the fix only in markup
    lines = build_index(root, base, HIDDEN).lines
    assert any("<strong>INTERVAL_MIN</strong> = 2" in t for t in lines)
    assert '<html lang="en">' in lines  # the page's header too: no carrier, all hidden data
    assert IDEA.strip() in lines


@pytest.mark.parametrize(
    "command",
    [
        "cat apidocs/main/horn.html",
        "head -6 apidocs/pr-9/horn.html",
        "grep -c bigsection apidocs/*/horn.html",
        "grep -o 'bigsection\">[A-Za-z]*' apidocs/pr-9/horn.html",
    ],
)
def test_the_pages_other_lines_stay_high(haar: tuple[Path, str], command: str) -> None:
    """The look-alikes the withdrawn carrier rule cleared: hidden data again."""
    assert _flagged(haar, command)


def test_a_count_of_lines_is_no_read(haar: tuple[Path, str]) -> None:
    assert not _flagged(haar, "wc -l apidocs/*/horn.html")


@pytest.mark.parametrize(
    "command",
    [
        "tail -n 4 apidocs/pr-9/horn.html",
        "grep -n 'strong>' apidocs/pr-9/horn.html",
        "sed 's/<[^>]*>//g' apidocs/pr-9/horn.html",
        "grep -c 'INTERVAL_MIN</strong> = 2' apidocs/pr-9/horn.html",
        "diff apidocs/main/horn.html apidocs/pr-9/horn.html",
        "cat ideas/try.py",
    ],
)
def test_the_future_in_the_page_and_the_idea_stay_high(
    haar: tuple[Path, str], command: str
) -> None:
    assert _flagged(haar, command)


def test_alone_a_page_line_of_code_keeps_the_read_high(haar: tuple[Path, str]) -> None:
    """On the file alone a read of hidden data is lowered only when what it showed holds no
    line of a program: a page's ``<strong>INTERVAL_MIN</strong> = 2`` is an assignment as the
    page shows it (``code_lines`` reads a line with its tags removed too); the page's header is
    no code."""
    from evotree.harness.audit.code_lines import code_like

    assert code_like("<strong>INTERVAL_MIN</strong> = 2</td></tr></table>")
    assert not code_like('<html lang="en">')
    root, _ = haar
    command = "tail -n 4 apidocs/pr-9/horn.html"
    traj = Trajectory("t", "shell", [Step(command, _seen(root, command))])
    assert audit_trajectories([traj], hidden_paths=HIDDEN).verdicts[0].flagged
