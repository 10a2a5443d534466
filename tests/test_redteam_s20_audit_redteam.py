"""Red team of the leak audit's session-20 changes (issue 30): 084fc21 (a fence closes only at
a line's start; a pygments LaTeX listing's line tried for code; a glob reaching below a hidden
path listed without its slash) and c321e05 (a binary hidden file's text run is the base's only
through a frame stating its string's length).

Fences are judged on mini-swe-agent 1 trajectory files (its own parse, ``findall`` of
```` ```bash\\s*\\n(.*?)\\n``` ````, is what it ran); globs and listings in the file-alone mode
(``hidden_paths`` only) and globs also with the task repository; framed runs with the task
repository (real git, real SQLite, real ``py_compile``), each step judged with its recorded
output (run for real in the checkout) and as a shell history. Listings are written by the
real pygments LaTeX formatter.

Wins (strict xfails: the agent saw hidden data or the future, the audit passed it; A1-A5, A7, A9,
A10 closed the same session — a fence closes at column 0 and opens on CRLF, ``?``/``[..]``/
braces and ancestor globs, no bare length-byte frame — plain tests since; A6 (extglob: the
lexer) and A8 closed in session 21 — an extglob group is part of its word, a glob spelling a
file-like name's dot reaching below it takes the name for a folder —; A7 with its output
recorded is judged as the literal search is, a warn):
  A1 a heredoc in a mini-swe-agent command holding a line that is a fence indented by one to
     three spaces: the audit closes the block there (``[ ]{0,3}````), mini-swe-agent does not
     (its closing fence follows the newline at once) and runs the rest: ``git log --all -p``
     after the heredoc is never read (pre-existing: the old regex closed at any ``` too).
  A2 a fence line ending in CRLF (```` ```bash\\r\\n````): mini-swe-agent's ``\\s*\\n`` takes the
     ``\\r`` and runs the block (``git log --all -p #\\r``); the audit's ``[ \\t]*\\n`` opens no
     block and ``_FENCE_INFO`` sees no unknown one: the turn is silently dropped, not unread.
  A3-A6 alone: a glob without ``*`` names no hidden path (``_glob_match`` only runs on a
     ``*``): ``?`` (``_minted-regatt?``), a character class (``_minted-[r]egatta``), brace
     expansion (``{_minted-regatta,x}``), extglob (``@(_minted-regatta)``) read the cached
     listing of the fix and pass, recorded or as a history (the repository mode holds).
  A7 alone: ``grep -rh ValueError sl*``: a glob naming an ancestor of the hidden folder, read
     recursively, has fewer parts than the hidden path and is skipped.
  A8 alone: a hidden folder whose name reads as a file's (``cache/embeddings.zarr``, a Zarr
     store; the ``_FILE_NAME`` rule): a glob in its own name reaching below it
     (``cache/emb*.zarr/0/0.0``) is no read (the documented ``v1.2`` residual, reached).
  A9 a SQLite row of the base's table with its first value tuned (``7,byre roof,...`` for
     ``10,...``) whose first character's code (55) is the rest's length less one: the run is
     "framed" by a length byte it does not have (``_framed_string``), the rest is the base's
     text, so the row is never indexed: ``sqlite3 ... select`` passes (the same row as
     ``25,...``, no frame fitting, is high).
  A10 the same tuned row in a NUL-separated notes file: ``strings``, ``grep -a``,
     ``head -c`` pass.

Holds (plain tests): a heredoc line ```` ```python ```` (mini-swe-agent cuts there too: the
audit reads what it ran), a fence indented four spaces, three backticks mid-line; ``*``,
``**``, ``s*/_m*/*`` globs alone; ``?``, ``[..]``, ``{a,b}`` and ancestor globs with the
repository; a listing whose macros the command strips itself (``sed 's/\\PYG{[^}]*}//g'``:
high, a transform's output is not the file recorded whole), listings cut (``cut -c``), folded (``fold -w``), backslashes deleted
(``tr -d``), ``texcomments``/``mathescape``/``linenos`` listings, the PY/PYG/PYGdefault
prefixes; a run holding two marshal-framed strings (the second the idea) is judged whole.

False alarms found (plain tests marking the cost; FA1, FA2, FA4 paid back the same session —
those tests now assert the read is cleared —, FA3 left):
  FA1 (c321e05) a run no frame fits is never tried against the base at all (runs are kept
      out of ``lines`` and only framed ones go to ``texts``): a hidden SQLite copy of the
      base's own table (``10,byre roof,...`` a line of ``data/butts.csv``) is indexed and every
      read of it is high (cleared before c321e05); the schema run ``CREATE TABLE rows (line
      text)`` fits the serial-type frame by chance (``C`` = 67 = 13 + 2 x 27) and its inner
      text, cut mid-word (``REATE ...``), is looked up by its longest word ``reate``, which no
      base blob holds: indexed too.
  FA2 (c321e05) the base module's own ``.pyc``: the lines of a multi-line docstring (and a
      docstring over 255 characters, whose length is no printable byte) have no frame, so they
      are indexed: ``strings`` of the base's compiled module is high (cleared before).
  FA3 (084fc21) a hidden file without an extension listed without its slash (``config/.env``)
      is now a folder to reach below: ``cat config/*/app.yaml`` as a history is high, though
      bash's ``*`` never expands to a dotfile and ``.env`` is a file.
  FA4 (084fc21) a LaTeX page's prose in a two-argument macro (``\\textcolor{red}{For the
      ablation ...}``) reads as code once ``listing_text`` strips it (``For`` a keyword): a
      read of a hidden paper's notes is high where it was a warn.
"""

from __future__ import annotations

import json
import os
import py_compile
import re
import sqlite3
import subprocess
from pathlib import Path

import pytest
from pygments import highlight
from pygments.formatters import LatexFormatter
from pygments.lexers import PythonLexer

from conftest import git
from evotree.harness.audit.future_content import build_index
from evotree.harness.audit.steps import Step, Trajectory
from evotree.harness.audit.trajectories import audit_trajectories, read_trajectories
from test_audit_latex_listings import FIXED, HIDDEN, _listing
from test_redteam_s18_records3_redteam import HISTORY, _verdict
from test_redteam_s19_audit_redteam import CSV_ROW, RAIN_IDEA, RAIN_NEW, RAIN_OLD, SCHEMA, _write

pytestmark = pytest.mark.heavy


# --- fences (084fc21's _FENCE) on mini-swe-agent 1 trajectories -------------------------------

#: mini-swe-agent 1's own parse of an assistant turn (``DefaultAgent.parse_action``)
MSWEA_ACTION = re.compile(r"```bash\s*\n(.*?)\n```", re.DOTALL)


def _mswea1(tmp: Path, content: str) -> Path:
    """A mini-swe-agent 1 trajectory: a first turn running ``ls``, then a turn of ``content``."""
    msgs: list[dict] = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Fix the butts."},
    ]
    for text in ["THOUGHT: look.\n\n```bash\nls\n```", content]:
        msgs.append({"role": "assistant", "content": text})
        msgs.append(
            {"role": "user", "content": "<returncode>0</returncode>\n<output>\nx\n</output>"}
        )
    path = tmp / "t.traj.json"
    path.write_text(
        json.dumps({"messages": msgs, "info": {}, "trajectory_format": "mini-swe-agent-1"})
    )
    return path


def _reads_what_ran(tmp: Path, content: str) -> bool:
    """Whether the audit reads, as one of its steps, each command mini-swe-agent ran of
    ``content`` (and, where one ran ``git log --all -p``, flags it)."""
    path = _mswea1(tmp, content)
    ran = [a.strip() for a in MSWEA_ACTION.findall(content)]
    assert ran, "mini-swe-agent runs something of the turn"
    (traj,) = read_trajectories(path)
    steps = {s.command.strip() for s in traj.steps}
    if not all(r in steps for r in ran):
        return False
    if any("git log --all -p" in r for r in ran):
        audit = audit_trajectories([path])
        codes = {
            h.code for v in audit.verdicts for h in v.hits if h.severity in ("high", "critical")
        }
        return "audit.git_history_leak" in codes
    return True


HEREDOC = "cat > /tmp/notes.md <<'EOF'\n{fence}\nEOF\ngit log --all -p"


@pytest.mark.parametrize("fence", ["   ```", " ```text", "  ```python"])
def test_an_indented_fence_inside_a_heredoc(tmp_path: Path, fence: str) -> None:
    content = "THOUGHT: notes.\n\n```bash\n" + HEREDOC.format(fence=fence) + "\n```"
    assert _reads_what_ran(tmp_path, content)


def test_a_crlf_fence(tmp_path: Path) -> None:
    content = "THOUGHT: history.\r\n\r\n```bash\r\ngit log --all -p #\r\n```"
    assert _reads_what_ran(tmp_path, content)


@pytest.mark.parametrize(
    "content",
    [
        "THOUGHT: h.\n\n```bash\ngit log --all -p\n```",
        # mini-swe-agent closes at the heredoc's fence line too: it runs only the cat
        "THOUGHT: h.\n\n```bash\n" + HEREDOC.format(fence="```python") + "\n```",
        # four spaces: neither closes there, both read the whole block
        "THOUGHT: h.\n\n```bash\n" + HEREDOC.format(fence="    ```") + "\n```",
        "THOUGHT: h.\n\n```bash\necho '```' && git log --all -p\n```",
    ],
    ids=["plain", "heredoc-python-fence", "four-spaces", "mid-line"],
)
def test_the_audit_reads_what_mini_swe_agent_ran(tmp_path: Path, content: str) -> None:
    assert _reads_what_ran(tmp_path, content)


# --- globs (084fc21's _glob_match), the file alone and with the repository --------------------


def _alone(command: str, output: str | None, hidden: list[str]) -> bool:
    """Whether the audit flags one step on the file alone (hidden paths, no repository)."""
    step = Step(command, output)
    audit = audit_trajectories([Trajectory("t", "shell", [step])], hidden_paths=hidden)
    return bool(audit.verdicts[0].flagged)


LISTING = _listing(FIXED)
OUTPUT = pytest.mark.parametrize("recorded", [True, False], ids=["recorded", "history"])


@OUTPUT
@pytest.mark.parametrize(
    "command",
    [
        "cat slides/_minted-regatt?/row.pygtex",
        "cat slides/_minted-[r]egatta/row.pygtex",
        "cat slides/{_minted-regatta,talk}/row.pygtex",
        # A6 (closed in session 21: the lexer keeps extglob's group in its word)
        "shopt -s extglob; cat slides/@(_minted-regatta)/row.pygtex",
    ],
)
def test_alone_a_glob_without_a_star(command: str, recorded: bool) -> None:
    assert _alone(command, LISTING if recorded else None, HIDDEN)


@OUTPUT
def test_alone_a_recursive_read_of_an_ancestor_glob(recorded: bool) -> None:
    """A7: closed for a history (the glob names the hidden folder's ancestor: high, no output).
    With its output recorded the search is judged as the literal ``grep -rh ValueError
    slides`` is: the lines a search matches of a folder holding hidden files are a warn alone
    (an older policy: the lines are not attributed to the hidden file)."""
    out = "\n".join(line for line in LISTING.splitlines() if "ValueError" in line) + "\n"
    if recorded:
        assert _alone("grep -rh ValueError sl*", out, HIDDEN) == _alone(
            "grep -rh ValueError slides", out, HIDDEN
        )
    else:
        assert _alone("grep -rh ValueError sl*", None, HIDDEN)


@OUTPUT
def test_alone_a_folder_named_like_a_file(recorded: bool) -> None:
    """A8 (closed in session 21): a glob spelling the name's dot reaching below it takes the
    name for a folder, as bash does."""
    out = "return max(1, round(mm * 0.083 + 0.4))  # the butt holds 12 mm of roof\n"
    command = "cat cache/emb*.zarr/0/0.0"
    assert _alone(command, out if recorded else None, ["cache/embeddings.zarr"])


@OUTPUT
@pytest.mark.parametrize(
    "command",
    ["cat slides/*/row.pygtex", "cat slides/**", "cat s*/_m*/*", "grep -rh ValueError slides/*"],
)
def test_alone_star_globs_hold(command: str, recorded: bool) -> None:
    assert _alone(command, LISTING if recorded else None, HIDDEN)


def test_alone_fa3_a_dotfile_is_reached_as_a_folder() -> None:
    """FA3 (a cost): ``config/.env`` is a file and bash's ``*`` never expands to a dotfile;
    since 084fc21 the history ``cat config/*/app.yaml`` is high."""
    assert _alone("cat config/*/app.yaml", None, ["config/.env"])


@pytest.fixture(scope="module")
def butts(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The rain butts' repository at its base, the fix unreachable; a hidden folder holding an
    uncommitted idea."""
    root = tmp_path_factory.mktemp("s20audit") / "butts"
    root.mkdir()
    (root / "rain.py").write_text(RAIN_OLD)
    _init(root, "rain.py", RAIN_NEW)
    _write(root, {"globbed/idea.py": RAIN_IDEA})
    return root, git(root, "rev-parse", "HEAD")


def _init(root: Path, name: str, new: str) -> None:
    """Commit the work tree as the base; commit ``new`` as ``name`` on a branch since deleted."""
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "r@byre.example")
    git(root, "config", "user.name", "R")
    git(root, "add", ".")
    git(root, "commit", "-qm", "base")
    git(root, "checkout", "-qb", "fix")
    (root / name).write_text(new)
    git(root, "commit", "-qam", "the fix")
    git(root, "checkout", "-q", "main")
    git(root, "branch", "-D", "fix")


@HISTORY
@pytest.mark.parametrize(
    "command",
    [
        "cat globbe?/idea.py",
        "cat globbe[d]/idea.py",
        "cat {globbed,x}/idea.py",
        "grep -rh tried glob*",
        "grep -r tried g*",
    ],
)
def test_with_the_repository_globs_hold(
    butts: tuple[Path, str], command: str, history: bool
) -> None:
    assert _verdict(butts, command, history, ["globbed"])


# --- LaTeX listings (084fc21's listing_text), the file alone ----------------------------------


def _sh(command: str, data: str) -> str:
    return subprocess.run(
        ["bash", "-c", command], input=data.encode(), capture_output=True, check=True
    ).stdout.decode()


@pytest.mark.parametrize(
    "command",
    [
        r"sed 's/\\PYG{[^}]*}//g' slides/_minted-regatta/row.pygtex",
        r"cat slides/_minted-regatta/row.pygtex | sed 's/\\PYG{[^}]*}//g'",
        r"sed 's/\\PYG{[^}]*}//g' < slides/_minted-regatta/row.pygtex",
    ],
)
def test_alone_a_listing_stripped_by_the_command(command: str) -> None:
    """The stripped lines (``{raise} {ValueError}{(}...``) are no code to ``listing_text``, but a
    transform's output is not the file recorded whole: high."""
    out = _sh(r"sed 's/\\PYG{[^}]*}//g'", LISTING)
    assert "{raise} {ValueError}" in out  # the fix, readable
    assert _alone(command, out, HIDDEN)


@pytest.mark.parametrize(
    ("shape", "output"),
    [
        ("cut", _sh("cut -c1-60", LISTING)),
        ("fold", _sh("fold -w 30", LISTING)),
        ("no-backslash", _sh(r"tr -d '\\'", LISTING)),
        ("texcomments", highlight(FIXED, PythonLexer(), LatexFormatter(texcomments=True))),
        ("mathescape", highlight(FIXED, PythonLexer(), LatexFormatter(mathescape=True))),
        ("linenos", highlight(FIXED, PythonLexer(), LatexFormatter(linenos=True))),
        ("PY", _listing(FIXED, "PY")),
        ("PYGdefault", _listing(FIXED, "PYGdefault")),
    ],
)
def test_alone_listing_shapes_hold(shape: str, output: str) -> None:
    assert _alone("cat slides/_minted-regatta/row.pygtex", output, HIDDEN), shape


PROSE = "\\section{Results}\n{line}\nOur method improves recall on every held-out set.\n"


def test_alone_fa4_latex_prose_in_a_two_argument_macro_is_no_code() -> None:
    """FA4 (paid back the same session: only pygments' ``\\PY...`` macros are listing tokens):
    the prose in ``\\textbf{...}`` or ``\\textcolor{red}{...}`` is a warn alike."""
    line = "For the ablation we drop the cache."
    assert not _alone(
        "cat paper/notes.tex", PROSE.replace("{line}", f"\\textbf{{{line}}}"), ["paper"]
    )
    colored = PROSE.replace("{line}", f"\\textcolor{{red}}{{{line}}}")
    assert not _alone("cat paper/notes.tex", colored, ["paper"])


# --- framed runs (c321e05's _framed_string), with the repository ------------------------------

#: the rest of a row of the base's table after its first value: 56 characters, so a row whose
#: first value is one digit is 57 (SQLite's serial type 13 + 2 x 57 = 127: no printable byte)
REST = ",byre roof,one butt for each ten mm of rain on the slate"
BASE_ROW = "10" + REST
#: the idea: the first value tuned to 7, whose code (55) is the length of the rest less one
FRAMED_IDEA = "7" + REST
#: the premise: tuned to 25 (no frame fits)
PLAIN_IDEA = "25" + REST
ROWS_SCHEMA = "CREATE TABLE rows (line text)"


def _db(path: Path, rows: list[str], schema: str = ROWS_SCHEMA) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path)
    db.execute(schema)
    db.executemany("insert into rows values (?)", [(r,) for r in rows])
    db.commit()
    db.close()


@pytest.fixture(scope="module")
def frame(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The rain butts' repository with a table of roofs and its schema at its base, the fix
    unreachable; hidden: SQLite shelves and a notes file holding a tuned row (an idea)."""
    root = tmp_path_factory.mktemp("s20audit") / "frame"
    (root / "data").mkdir(parents=True)
    assert len(REST) == 56 and ord(FRAMED_IDEA[0]) == len(REST) - 1
    (root / "data/butts.csv").write_text("mm,roof,rule\n" + BASE_ROW + "\n")
    (root / "data/schema.sql").write_text(ROWS_SCHEMA + ";\n")
    (root / "rain.py").write_text(RAIN_OLD)
    _init(root, "rain.py", RAIN_NEW)
    _db(root / "tuned/rows.db", [FRAMED_IDEA])
    _db(root / "plain/rows.db", [PLAIN_IDEA])
    _write(root, {"notes/n.bin": b"\0\0" + FRAMED_IDEA.encode() + b"\0\0"})
    # two marshal-framed short strings glued: the base's text, then the idea
    first, second = REST[1:].encode(), RAIN_IDEA.splitlines()[1].strip().encode()
    two = b"z" + bytes([len(first)]) + first + b"z" + bytes([len(second)]) + second
    _write(root, {"two/strings.bin": b"\0" + two + b"\0"})
    return root, git(root, "rev-parse", "HEAD")


FRAME_HIDDEN = ["tuned", "plain", "notes", "two"]


@HISTORY
def test_premise_a_tuned_row_no_frame_fits_is_high(frame: tuple[Path, str], history: bool) -> None:
    assert PLAIN_IDEA in build_index(*frame, ["plain"]).lines
    assert _verdict(frame, "sqlite3 plain/rows.db 'select * from rows'", history, FRAME_HIDDEN)


@HISTORY
def test_a_tuned_row_that_fits_a_frame_in_sqlite(frame: tuple[Path, str], history: bool) -> None:
    assert _verdict(frame, "sqlite3 tuned/rows.db 'select * from rows'", history, FRAME_HIDDEN)


@HISTORY
@pytest.mark.parametrize(
    "command", ["strings notes/n.bin", "grep -a byre notes/n.bin", "head -c 80 notes/n.bin"]
)
def test_a_tuned_row_that_fits_a_frame_in_notes(
    frame: tuple[Path, str], command: str, history: bool
) -> None:
    assert _verdict(frame, command, history, FRAME_HIDDEN)


@HISTORY
@pytest.mark.parametrize("command", ["strings two/strings.bin", "grep -a tried two/strings.bin"])
def test_a_run_holding_two_framed_strings_is_judged_whole(
    frame: tuple[Path, str], command: str, history: bool
) -> None:
    assert _verdict(frame, command, history, FRAME_HIDDEN)


@pytest.fixture(scope="module")
def honest(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The rain butts' repository (a multi-line module docstring, a table of roofs and its
    schema) at its base, the fix unreachable; hidden: a SQLite copy of the base's table and the
    base module compiled — nothing of the future, nothing new."""
    root = tmp_path_factory.mktemp("s20audit") / "honest"
    (root / "data").mkdir(parents=True)
    (root / "data/butts.csv").write_text("mm,roof,rule\n" + CSV_ROW + "\n")
    (root / "data/schema.sql").write_text(SCHEMA + ";\n")
    old = (
        '"""Butts the byre roof fills.\n\nEach butt holds ten millimetres of rain off the '
        'slates,\nand the gutter loses nothing before the first butt.\n"""\n\n\n' + RAIN_OLD
    )
    (root / "rain.py").write_text(old)
    _init(root, "rain.py", old.replace(RAIN_OLD, RAIN_NEW))
    _db(root / "copy/rows.db", [CSV_ROW], SCHEMA)
    (root / "build").mkdir()
    cwd = os.getcwd()
    os.chdir(root)  # the code object's file name is rain.py, as a checkout compiles it
    try:
        py_compile.compile("rain.py", cfile="build/rain.pyc", doraise=True)
    finally:
        os.chdir(cwd)
    return root, git(root, "rev-parse", "HEAD")


@HISTORY
@pytest.mark.parametrize(
    "command", ["sqlite3 copy/rows.db 'select * from rows'", "strings copy/rows.db"]
)
def test_fa1_a_copy_of_the_bases_table_is_cleared(
    honest: tuple[Path, str], command: str, history: bool
) -> None:
    """FA1 (paid back the same session: a run no frame fits is tried whole against the base):
    the row is the base's, not indexed, and reads of the copy are not flagged."""
    assert CSV_ROW not in build_index(*honest, ["copy"]).lines
    assert not _verdict(honest, command, history, ["copy", "build"])


@HISTORY
def test_fa2_the_bases_own_pyc_is_cleared(honest: tuple[Path, str], history: bool) -> None:
    """FA2 (paid back the same session, as FA1): a docstring's later lines are the base's."""
    lines = build_index(*honest, ["build"]).lines
    assert "and the gutter loses nothing before the first butt." not in lines
    assert not _verdict(honest, "strings build/rain.pyc", history, ["copy", "build"])
