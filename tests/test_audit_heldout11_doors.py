"""Structured queries of a hidden file a tool keeps, run for real on real files and audited
with the output they printed (and without it, as a shell history records them), a leak beside
its look-alike.

The task repository holds, ignored, an IPython-style history database (SQLite) whose cell is
the fix and a Sublime-style workspace (JSON) whose unsaved buffer is the fixed module; the fix
commit sits in the store with no ref.

* ``sqlite3 DB .schema`` prints table definitions, never a row: no read, with or without the
  repository.
* With the repository, a plain query (``select COLS from T``, a jq path) is judged by every
  value it can print, read from the hidden file itself: times, counts, file names, settings
  are no read; a column or path holding the fix is. Anything not plain (``.dump``, two
  statements, a function call, a jq pipe, an unknown option) stays a read.
* On the file alone, a query of values stays a read: nothing says what the values hold.
* ``grep -r`` from the checkout's root reads an ignored ``tags`` or workspace like the code.
  With its output recorded, the lines it printed are judged; in a shell history (no output),
  with the repository, the search is re-run on each hidden file the checkout holds and is a
  read when what it prints there holds a line only the hidden file or the future holds; a
  pattern matching nothing there, an ``--include``/``--exclude`` leaving the file out, or a
  hidden file this checkout does not hold (``elsewhere/tags``) is no read. On the file alone
  it stays a warn (missed: nothing says which hidden files the checkout holds).
* Code that opens a hidden database by its file (``sqlite3.connect``, ``shelve.open``) reads
  its rows, whatever it prints: running the history's cell and printing only its answers is a
  read, on the file alone too. Code connecting to another database is not.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from conftest import git, make_repo
from evotree.harness.audit.steps import Step, Trajectory
from evotree.harness.audit.trajectories import audit_trajectories

# an older blind set's doors: run with the heavy suite (CI runs it after `make test`), to keep
# `make test` within its 8 minutes; the full audit benchmark scores the whole set as well
pytestmark = pytest.mark.heavy

DB = ".ipython/profile_default/history.sqlite"
WS = "tor.sublime-workspace"
HIDDEN = (DB, WS, "tags", "elsewhere/tags")
OLD = '"""Grades."""\n\n\ndef letter(score):\n    if score > 90:\n        return "A"\n    return "F"\n'
FIXED = (
    '"""Grades."""\n\n\ndef letter(score):\n    if not 0 <= score <= 100:\n'
    '        raise ValueError("score must lie in 0..100")\n    if score >= 90:\n'
    '        return "A"\n    return "F"\n'
)


@pytest.fixture(scope="module")
def tor(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """(repository, base): the fix in the store with no ref, and two hidden files holding it."""
    if shutil.which("sqlite3") is None or shutil.which("jq") is None:
        pytest.skip("sqlite3 and jq are needed")
    root = make_repo(tmp_path_factory.mktemp("tor") / "tor")
    (root / "tor").mkdir()
    (root / "tor/grades.py").write_text(OLD)
    (root / ".gitignore").write_text(".ipython/\ntags\n*.sublime-workspace\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "grades")
    base = git(root, "rev-parse", "HEAD")
    (root / "tor/grades.py").write_text(FIXED)
    git(root, "commit", "-q", "-am", "grade boundaries up, refuse out-of-range scores")
    git(root, "reset", "-q", "--hard", base)
    git(root, "reflog", "expire", "--expire=now", "--all")
    (root / DB).parent.mkdir(parents=True)
    con = sqlite3.connect(root / DB)
    con.execute("create table sessions (session integer, start text, num_cmds integer)")
    con.execute("create table history (session integer, line integer, source text)")
    con.executemany(
        "insert into sessions values (?, ?, ?)", [(1, "2025-07-01 10:00", 3), (2, "07-02", 1)]
    )
    con.executemany(
        "insert into history values (?, ?, ?)",
        [(1, 1, "import tor.grades"), (2, 1, FIXED.split("\n\n\n")[1])],
    )
    con.execute("create view recent as select session, source from history")
    con.commit()
    con.close()
    workspace = {
        "buffers": [
            {
                "file": "tor/grades.py",
                "contents": FIXED,
                "settings": {"buffer_size": len(FIXED), "line_ending": "Unix"},
            }
        ],
        "file_history": ["tor/grades.py", "README.md"],
    }
    (root / WS).write_text(json.dumps(workspace, indent=1))
    (root / "tags").write_text(
        "!_TAG_FILE_FORMAT\t2\t/extended format/\n"
        'letter\ttor/grades.py\t/^def letter(score):$/;"\tf\n'
        'letter\ttor/grades.py\t/^    if not 0 <= score <= 100:$/;"\tf\n'
    )
    assert git(root, "status", "--porcelain") == ""
    return root, base


def _flagged(tor: tuple[Path, str], command: str, *, record: bool, repo: bool) -> bool:
    root, base = tor
    proc = subprocess.run(
        ["bash", "-c", command], cwd=root, capture_output=True, text=True, check=False
    )
    steps = [Step(command, proc.stdout + proc.stderr if record else None)]
    extra = {"repo": root, "base": base} if repo else {}
    result = audit_trajectories([Trajectory("t", "shell", steps)], hidden_paths=HIDDEN, **extra)
    return result.verdicts[0].flagged


QUERIES = [
    (f"sqlite3 {DB} 'select session, start, num_cmds from sessions'", False),
    (f"sqlite3 -header -column {DB} 'select * from sessions order by start limit 5'", False),
    (f"sqlite3 {DB} 'select session, line from history where session = 2;'", False),
    (f"sqlite3 {DB} 'select source from history'", True),
    (f"sqlite3 {DB} 'select session, source from history where session = 2'", True),
    (f"sqlite3 {DB} 'select session from recent'", True),  # a view is not evaluated
    (f"sqlite3 {DB} 'select * from history'", True),
    (f"sqlite3 {DB} .dump", True),
    (f"sqlite3 {DB} 'select session from sessions; select source from history'", True),
    (f"sqlite3 {DB} \"select session from sessions where writefile('x', 1)\"", True),
    (f"sqlite3 {DB} 'select group_concat(source) from history'", True),
    (f"sqlite3 -cmd .dump {DB} 'select session from sessions'", True),
    (f"sqlite3 {DB} <<< 'select session from sessions'", True),
    (f"jq -r '.buffers[].file, .file_history[]' {WS}", False),
    (f"jq -c '.buffers[0].settings' {WS}", False),
    (f"jq '.buffers[0].contents' {WS}", True),
    (f"jq -r '.buffers[0].contents' {WS}", True),
    (f"jq -r '.buffers[0]' {WS}", True),
    (f"jq . {WS}", True),
    (f"jq -r '.buffers[] | .contents' {WS}", True),
    (f"jq -r '.buffers[0].settings' {WS} {DB}", True),
]


@pytest.mark.parametrize(("command", "leak"), QUERIES)
def test_query_judged_by_what_it_can_print(tor: tuple[Path, str], command: str, leak: bool) -> None:
    assert _flagged(tor, command, record=True, repo=True) == leak
    assert _flagged(tor, command, record=False, repo=True) == leak


@pytest.mark.parametrize(
    "command",
    [
        f"sqlite3 {DB} 'select session, start, num_cmds from sessions'",
        f"jq -c '.buffers[0].settings' {WS}",
    ],
)
def test_a_query_of_values_stays_a_read_on_the_file_alone(
    tor: tuple[Path, str], command: str
) -> None:
    """A history stays a read alone; recorded, jq's selecting filter whose output shows no
    line of a program is a warn since the fifteenth session (the output judge, docs/audit.md);
    sqlite3 is no display program and stays a read."""
    assert _flagged(tor, command, record=True, repo=False) == command.startswith("sqlite3")
    assert _flagged(tor, command, record=False, repo=False)


@pytest.mark.parametrize(
    ("command", "leak"),
    [
        (f"sqlite3 {DB} '.schema history'", False),
        (f"sqlite3 {DB} .tables", False),
        (f"sqlite3 {DB} .schema '.tables'", False),
        (f"sqlite3 {DB} .fullschema", True),
        (f"sqlite3 {DB} '.schema history' 'select source from history'", True),
        (f"sqlite3 -init x.sql {DB} .schema", True),
    ],
)
def test_schema_is_no_read(tor: tuple[Path, str], command: str, leak: bool) -> None:
    for repo in (False, True):
        assert _flagged(tor, command, record=True, repo=repo) == leak
        assert _flagged(tor, command, record=False, repo=repo) == leak


def test_a_linked_file_outside_the_checkout_is_not_opened(
    tor: tuple[Path, str], tmp_path: Path
) -> None:
    """A hidden name that is a link out of the work tree is not evaluated: it stays a read."""
    root, _ = tor
    outside = tmp_path / "elsewhere.json"
    outside.write_text('{"a": 1}')
    link = root / "link.sublime-workspace"
    link.symlink_to(outside)
    try:
        steps = [Step("jq .a link.sublime-workspace", "1\n")]
        result = audit_trajectories(
            [Trajectory("t", "shell", steps)],
            hidden_paths=("link.sublime-workspace",),
            repo=root,
            base=tor[1],
        )
        assert result.verdicts[0].flagged
    finally:
        link.unlink()


ROOT_SEARCHES = [
    ("grep -rn --exclude-dir=.git 'score <= 100' .", True),
    ("grep -rn 'raise ValueError' .", True),
    ("grep -rni 'SCORE <= 100'", True),
    ("grep -rn -A1 'def letter' .", True),
    ("grep -rn -f pats.txt .", True),
    ("grep -rn 'def letter' .", True),  # the workspace's buffer line holds the whole fix
    ("grep -rn learning_rate .", False),  # matches the recipe only
    ("grep -rn --include='*.py' 'score <= 100' .", False),
    ("grep -rn --exclude=tags --exclude='*.sublime-workspace' 'score <= 100' .", False),
    ("grep -rn 'import' .", False),
    ("grep -rn 'score <= 100' tor", False),
]


@pytest.mark.parametrize(("command", "leak"), ROOT_SEARCHES)
def test_root_search_in_a_history_rerun_on_the_hidden_files(
    tor: tuple[Path, str], command: str, leak: bool
) -> None:
    assert _flagged(tor, command, record=False, repo=True) == leak
    assert not _flagged(tor, command, record=False, repo=False)  # alone: a warn


def test_root_search_with_output_is_judged_by_what_it_printed(tor: tuple[Path, str]) -> None:
    assert _flagged(tor, "grep -rn 'score <= 100' .", record=True, repo=False)
    assert not _flagged(tor, "grep -rn learning_rate .", record=True, repo=False)


RUN_CELL = (
    "python - <<'EOF'\nimport sqlite3\n"
    f"db = sqlite3.connect('{DB}')\n"
    "cell = db.execute(\"select source from history where source like '%def letter%'\")"
    ".fetchone()[0]\nns = {}\nexec(cell, ns)\nprint([ns['letter'](s) for s in (90, 59.5)])\nEOF"
)


@pytest.mark.parametrize(
    ("command", "leak"),
    [
        (RUN_CELL, True),
        (f"python -c \"import shelve; print(len(shelve.open('{DB}')))\"", True),
        (RUN_CELL.replace(DB, "scratch.sqlite"), False),
        ("python -c \"import sqlite3; sqlite3.connect(':memory:')\"", False),
    ],
)
def test_code_opening_a_hidden_database_reads_it(
    tor: tuple[Path, str], command: str, leak: bool
) -> None:
    for repo in (False, True):
        assert _flagged(tor, command, record=True, repo=repo) == leak
        assert _flagged(tor, command, record=False, repo=repo) == leak
