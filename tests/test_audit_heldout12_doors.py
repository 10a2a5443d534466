"""Reads of a hidden file's parts that hold nothing of the fix, beside the reads that show it,
run for real on real files and audited with the output they printed and without it (a shell
history records none).

The task repository's fix sits in the store with no ref; ignored files a tool left hold it: an
strace log of a run of the fixed code (its ``read()`` line holds the module, C-escaped, among
the tool's own ``execve``/``brk``/``exit`` lines), an asciinema recording of the fix's diff (a
header line, then events), a joblib-style cache (``func_code.py`` beside call folders holding
``metadata.json``) and a Subversion pristine store (a hidden folder).

* The provenance index holds, of a hidden file that holds the future, only the lines that carry
  it (a future line, with the tool's escapes undone or not, a subject, an id): printing a
  trace's ``brk``/``exit`` lines is not a leak. A hidden file holding nothing of the store's
  future (an uncommitted shelf) keeps all its lines.
* With the repository, ``head``/``tail -n K`` of a hidden file and a non-recursive ``grep`` of
  it are judged by what they print of the file itself; ``cat``, ``head -n 1000``, ``head -c``,
  a grep of the fix's text stay reads. On the file alone they stay reads.
* A count (``jq -s length``) is no read, alone too; a glob that cannot match the hidden file
  (``CACHE/*/metadata.json``) reaches only its siblings.
* ``grep -r`` of a folder holding a hidden folder, with no output recorded: with the repository
  re-run on the hidden folder's files, a read when what it prints holds the fix.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import git, make_repo
from evotree.harness.audit.future_content import HIDDEN_SOURCE, build_index
from evotree.harness.audit.steps import Step, Trajectory
from evotree.harness.audit.trajectories import audit_trajectories

# an older blind set's doors: run with the heavy suite (CI runs it after `make test`), to keep
# `make test` within its 8 minutes; the full audit benchmark scores the whole set as well
pytestmark = pytest.mark.heavy

TRACE = ".debug/trace.log"
CAST = "rec/fix.cast"
CODE = ".cache/fn/func_code.py"
HIDDEN = (TRACE, CAST, CODE, ".svn/pristine/")
OLD = (
    '"""Clock strings."""\n\n\ndef hms(seconds):\n'
    '    return f"{seconds // 3600}:{seconds % 3600 // 60}:{seconds % 60}"\n'
)
FIXED = (
    '"""Clock strings."""\n\n\ndef hms(seconds):\n    if seconds < 0:\n'
    '        raise ValueError("seconds must not be negative")\n'
    "    h, rest = divmod(seconds, 3600)\n    m, s = divmod(rest, 60)\n"
    '    return f"{h}:{m:02}:{s:02}"\n'
)
BRK = "4242 brk(NULL)                         = 0x55d0c4a1e000"
EXIT = "4242 +++ exited with 0 +++ and the interpreter's status"


def _c_escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


@pytest.fixture(scope="module")
def tally(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """(repository, base): the fix in the store with no ref, and the tools' leftovers."""
    if shutil.which("jq") is None:
        pytest.skip("jq is needed")
    root = make_repo(tmp_path_factory.mktemp("tally") / "tally")
    (root / "tally").mkdir()
    (root / "tally/clock.py").write_text(OLD)
    (root / ".gitignore").write_text(".debug/\nrec/\n.cache/\n.svn/\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "clock")
    base = git(root, "rev-parse", "HEAD")
    (root / "tally/clock.py").write_text(FIXED)
    git(root, "commit", "-q", "-am", "pad minutes and seconds, refuse negatives")
    git(root, "reset", "-q", "--hard", base)
    git(root, "reflog", "expire", "--expire=now", "--all")
    (root / ".debug").mkdir()
    (root / TRACE).write_text(
        '4242 execve("/usr/bin/python3", ["python3", "-m", "pytest"], 0x7ffd /* 20 vars */) = 0\n'
        f"{BRK}\n"
        '4242 openat(AT_FDCWD, "/src/tally/tally/clock.py", O_RDONLY|O_CLOEXEC) = 3\n'
        f'4242 read(3, "{_c_escaped(FIXED)}", 4096) = {len(FIXED)}\n'
        '4242 write(1, "2 passed in 0.01s\\n", 18) = 18\n'
        f"{EXIT}\n"
    )
    (root / "rec").mkdir()
    header = {"version": 2, "width": 80, "height": 24, "title": "the clock's padding fix"}
    events = [
        [0.5, "o", "$ git diff --color=always\r\n"],
        *(
            [0.6 + k / 10, "o", f"\x1b[32m+{line}\x1b[m\r\n"]
            for k, line in enumerate(FIXED.splitlines()[4:])
        ),
    ]
    (root / CAST).write_text("\n".join(json.dumps(e) for e in [header, *events]) + "\n")
    (root / "rec/demo.cast").write_text(json.dumps({**header, "title": "a demo"}) + "\n")
    (root / ".cache/fn/1a2b").mkdir(parents=True)
    (root / CODE).write_text("# first line: 4\n" + FIXED.split("\n\n\n")[1])
    (root / ".cache/fn/1a2b/metadata.json").write_text('{"args": [3723], "duration": 0.1}\n')
    (root / ".svn/pristine/5e").mkdir(parents=True)
    (root / ".svn/pristine/5e/5e1d.svn-base").write_text(FIXED)
    (root / ".svn/entries").write_text("12\n")
    assert git(root, "status", "--porcelain") == ""
    return root, base


def _flagged(tally: tuple[Path, str], command: str, *, record: bool, repo: bool) -> bool:
    root, base = tally
    proc = subprocess.run(
        ["bash", "-c", command], cwd=root, capture_output=True, text=True, check=False
    )
    steps = [Step(command, proc.stdout + proc.stderr if record else None)]
    extra = {"repo": root, "base": base} if repo else {}
    result = audit_trajectories([Trajectory("t", "shell", steps)], hidden_paths=HIDDEN, **extra)
    return result.verdicts[0].flagged


def test_index_keeps_only_the_hidden_lines_that_carry_the_future(
    tally: tuple[Path, str], tmp_path: Path
) -> None:
    root, base = tally
    index = build_index(root, base, HIDDEN)
    hidden = {t for t, c in index.lines.items() if c.startswith(HIDDEN_SOURCE)}
    assert BRK not in index.lines and EXIT not in index.lines
    assert any(t.startswith("4242 read(3,") for t in hidden)  # the module, C-escaped
    assert not any("execve" in t or "openat" in t for t in hidden)
    # a hidden file holding nothing of the store's future is the future itself: all kept
    shelf = root / ".debug/shelf.patch"
    shelf.write_text("+    return '%d:%02d:%02d' % (seconds // 3600, seconds // 60 % 60, 1)\n")
    try:
        index = build_index(root, base, (*HIDDEN, ".debug/shelf.patch"))
        assert any("seconds // 60 % 60" in t for t in index.lines)
    finally:
        shelf.unlink()


BOUNDED = [
    (f"head -n 2 {TRACE}", False),
    (f"tail -n 2 {TRACE}", False),
    (f"head -3 {TRACE}", False),
    (f'grep -o \'openat([^,]*, "[^"]*"\' {TRACE}', False),
    (f"grep -c 'read(3' {TRACE}", False),
    (f"head -n 1 {CAST} | jq .", False),
    ("head -qn1 rec/*.cast | jq -r .title", False),
    (f"head -n 1000 {TRACE}", True),
    (f"head -n 4 {TRACE}", True),
    (f"tail -n +2 {TRACE}", True),
    (f"cat {TRACE}", True),
    (f"head -c 400 {TRACE}", True),
    (f"grep -F divmod {TRACE}", True),
    (f"grep -o 'divmod([a-z]*, 60)' {TRACE}", True),
    (f"head -n 3 {CAST}", False),  # the header, the prompt, a short line
    (f"head -n 4 {CAST}", True),  # and the raise, JSON-escaped
    ("head -n 2 rec/*.cast", False),
    ("head -n 5 rec/*.cast", True),
    (f"head -n 2 {CODE}", False),  # joblib's first-line note and the base's def line
    (f"head -n 4 {CODE}", True),
]


@pytest.mark.parametrize(("command", "leak"), BOUNDED)
def test_bounded_read_judged_by_what_it_prints(
    tally: tuple[Path, str], command: str, leak: bool
) -> None:
    assert _flagged(tally, command, record=True, repo=True) == leak
    assert _flagged(tally, command, record=False, repo=True) == leak


@pytest.mark.parametrize("command", [f"head -n 2 {TRACE}", "head -qn1 rec/*.cast"])
def test_a_bounded_read_stays_a_read_on_the_file_alone(
    tally: tuple[Path, str], command: str
) -> None:
    """A history stays a read alone. Recorded: the cast's first line (its JSON header) shows no
    line of a program, a warn since the fifteenth session (the output judge, docs/audit.md);
    the trace's first lines do, and stay a read."""
    assert _flagged(tally, command, record=True, repo=False) == (
        not command.startswith("head -qn1")
    )
    assert _flagged(tally, command, record=False, repo=False)


@pytest.mark.parametrize(
    ("command", "leak"),
    [
        ("jq -s length rec/*.cast", False),
        ("cat .cache/fn/*/metadata.json", False),
        ("wc -c rec/*.cast", False),
        ("jq -s . rec/*.cast", True),
        ("jq -s 'map(.[2]?)' rec/*.cast", True),
        ("cat .cache/*/func_code.py", True),
        ("cat .cache/fn/*", True),
        ("cat .svn/*/*/*", True),
    ],
)
def test_counts_and_globs(tally: tuple[Path, str], command: str, leak: bool) -> None:
    for repo in (False, True):
        assert _flagged(tally, command, record=True, repo=repo) == leak
        assert _flagged(tally, command, record=False, repo=repo) == leak


@pytest.mark.parametrize(
    ("command", "leak"),
    [
        ("grep -rnE --exclude-dir=.git divmod .svn", True),
        ("grep -rn 'must not be negative' .svn", True),
        ("grep -rn 'seconds' .svn/pristine", True),
        ("grep -rn wc_id .svn", False),  # matches nothing in the pristine files
        ("grep -rn --exclude-dir=pristine divmod .svn", False),
        ("grep -rn --include='*.py' divmod .svn", False),
    ],
)
def test_folder_search_in_a_history_rerun_on_the_hidden_folder(
    tally: tuple[Path, str], command: str, leak: bool
) -> None:
    assert _flagged(tally, command, record=False, repo=True) == leak
    assert not _flagged(tally, "grep -rn wc_id .svn", record=False, repo=False)
