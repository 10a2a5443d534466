"""Red team of the leak audit's session-19 changes with the task repository (issue 30).

Attacks on 17782f3 (a hidden page carries the future in its markup text; the wrapped-folder
rule; the replay keeps a page's tags), 0e042b8 (``diff`` judged by its hidden operands' whole
text), 58bb1e4/08c09a8 (binary hidden files indexed by their text runs, tar members, UTF-16,
the two glued characters). Each step is judged with its recorded output (the command run for
real in the checkout) and as a shell history (output None). Real git, real files (pages by the
real ``pydoc``), the real index, audit and replay.

Closed the same session (their tests plain guards now): W1-W4 by withdrawing 17782f3's markup
carrier and tag-keeping rotation whole; W7 and W8 by clearing a ``diff`` only when its hidden
operand is the same bytes as the checkout's file it is compared with; W5 in session 20 (a run
is cleared only through a frame that says its string's length: marshal's, a SQLite record's).
Open: W6 (pre-existing wrapped-folder residual), W7's ``cat`` (pre-existing).

Wins (strict xfails when found: the agent saw hidden data of the future, the audit passed it):
  W1 a pydoc page of a variant sharing one line with the fix (``INTERVAL_MIN = 2`` in
     ``<strong>``) is a carrier since 17782f3: its other lines (``FIRST_BLASTS = 0``, its
     docstring naming the fix's new constants) are noise; flagged before 17782f3.
  W2 a Sphinx-like page of the fix is a carrier: its lines holding no whole future line, the
     anchors ``id="horn.FIRST_BLASTS"`` naming the fix's new constants, are noise (grep -o,
     grep -c of an id, grep '<dt'); flagged before 17782f3.
  W3 pydoc's page of the fix makes its hidden path a wrapped folder: an uncommitted idea in
     another folder of the same hidden path is noise (cat, head, diff); the wrapped-folder
     rule's known residual, now reached by any page — even one not about the fix, whose
     boilerplate shows one line the fix adds (a licence line, ``&quot;`` undone); flagged
     before 17782f3.
  W4 a page past the index's 200-file cap (a built site): grep -c of an id naming the fix's
     new constant on a carrier line passes (an oracle, judged info; grep -q && echo is high
     since 0ec24b1) — the oracle judge finds the matched text in no future line and the
     replay now rotates the text between the tags only (17782f3), so the count reads the
     same in both worlds; the replay flagged it before 17782f3.
  W5 a binary hidden file holding an idea two characters off a base text: its run less two
     glued characters is the base's (58bb1e4's _GLUE), never indexed — NUL-separated notes
     (``1+int(mm // 10)  # ...``: strings, grep -a, head -c pass) and a SQLite shelf's row of
     the base's table with its first value tuned (``25,byre roof,...`` for ``10,...``: the
     sqlite3 select, strings, grep -a pass; the schema is the base's).
  W6 (pre-existing, 54107c7: the plain-text forms of W1 and W3) a variant module sharing
     lines with the fix: its own lines (``FIRST_BLASTS = 0``, its docstring) are noise; an idea
     beside a text file holding the licence line as is: noise.
  W7 ``diff rain.py short/rain.py`` of a run's saved copy of a base module whose one change is
     an idea line shorter than a distinctive line (``return mm // 9``): the operand holds no
     index line, so the diff is cleared (0e042b8; high before) and prints exactly the idea
     (``cat`` of it passed before: the distinctive-line filter's residual).
  W8 a fix that only deletes a line (the gutter's loss): ``diff rain.py runs/r3/rain.py`` of
     a run's saved copy of the fixed module prints the deleted line — the fix itself; the
     copy holds no index line (the fix adds none), so the diff is cleared (0e042b8; high
     before; ``cat`` shows only the base's lines, the fix readable by comparing).

Holds (plain tests): a BOM-less UTF-16 idea whose first character is not Latin-1 (the index
reads one-character runs, but head/tail/grep -a/sed/cat/strings -el/diff stay high: the replay
rotates it), UTF-32; a tar member after a 6 MiB one or past 200 members, a wheel inside a
tar, read by tar -xO, funzip or Python; an attribute printed by grep -o from a carrier line
(in the cap: the line is indexed and rotated whole; past it: high); ``diff`` of a clean hidden
file against ``.git/logs/HEAD`` or ``packed-refs``; diff forms not evaluated (-D, -e, -n, --ed,
--label, --line-format, --unified without =, -U3, piped, xargs, ``..`` in an operand); the
saved script replaced by the idea (mv, cp, ln -sf) before a diff of it.
"""

from __future__ import annotations

import gzip
import io
import shutil
import sqlite3
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest

from conftest import git
from evotree.harness.audit.future_content import build_index
from evotree.harness.audit.steps import Step, Trajectory
from evotree.harness.audit.trajectories import audit_trajectories
from test_audit_diff_reads import RUN, smirr  # noqa: F401 - a fixture
from test_audit_markup_pages import BASE as HORN_BASE
from test_audit_markup_pages import FIXED as HORN_FIXED
from test_audit_markup_pages import IDEA as HORN_IDEA
from test_audit_markup_pages import _page
from test_redteam_s18_records3_redteam import HISTORY, _verdict

pytestmark = pytest.mark.heavy


def _repo(root: Path, name: str, old: str, new: str, subject: str, added: str = "") -> str:
    """A repository at its base (``name`` holding ``old``), the fix (``new``) committed on a
    branch since deleted (unreachable, its objects kept): the base's id."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "r@byre.example")
    git(root, "config", "user.name", "R")
    (root / name).write_text(old)
    git(root, "add", name)
    git(root, "commit", "-qm", "base")
    base = git(root, "rev-parse", "HEAD")
    git(root, "checkout", "-qb", "fix")
    (root / name).write_text(new)
    if added:  # a module the fix adds
        (root / "gauge.py").write_text(added)
        git(root, "add", "gauge.py")
    git(root, "commit", "-qam", subject)
    git(root, "checkout", "-q", "main")
    git(root, "branch", "-D", "fix")
    return base


def _write(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            path.write_bytes(data)
        else:
            path.write_text(data)


def _tar(members: list[tuple[str, bytes]], gz: bool = False) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(buf.getvalue(), mtime=0) if gz else buf.getvalue()


def _wheel(idea: str) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("butts/rain.py", idea)
    return buf.getvalue()


# --- the rain butts: binary hidden files (58bb1e4, 08c09a8) -----------------------------------

RAIN_OLD = (
    "def butts(mm: float) -> int:\n"
    '    """Butts the byre roof fills with mm of rain."""\n'
    "    return int(mm // 10)  # one butt for each ten mm of rain\n"
)
RAIN_FIX = "    return max(1, round(mm * 0.083 + 0.4))  # the butt holds 12 mm of roof"
RAIN_NEW = RAIN_OLD.replace(RAIN_OLD.splitlines()[2], RAIN_FIX)
RAIN_IDEA = (
    "def butts(mm: float) -> int:\n"
    "    return int(mm * 0.09) + 1  # tried on the byre roof after the storm\n"
)
IDEA_LINE = RAIN_IDEA.splitlines()[1].strip()
#: an idea differing from a base line in its first two characters: one butt more
GLUE_IDEA = "1+int(mm // 10)  # one butt for each ten mm of rain"
#: a note beginning with a curly apostrophe (U+2019): a NUL is not every other byte
U16_IDEA = "\u2019tis the byre roof\n" + RAIN_IDEA
BIG_LOG = b"".join(b"step %07d ok\n" % k for k in range(400_000))  # 6 MiB, gzips small
#: a run's saved copy of the base's module with one idea: a line shorter than a distinctive one
SHORT_COPY = RAIN_OLD.replace(RAIN_OLD.splitlines()[2], "    return mm // 9")
RAIN_HIDDEN = ["glue", "wide", "wide32", "bigtar", "manytar", "ziptar", "plain"]


@pytest.fixture(scope="module")
def rain(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The rain butts' repository at its base, the fix unreachable; hidden shelves holding an
    uncommitted idea in binary forms."""
    root = tmp_path_factory.mktemp("s19audit") / "rain"
    base = _repo(root, "rain.py", RAIN_OLD, RAIN_NEW, "butts by the roof's catch")
    assert len(BIG_LOG) > 4 << 20
    _write(
        root,
        {
            # a NUL-separated record of notes (a shelve, a find -print0 list)
            "glue/notes.bin": b"\0\0" + GLUE_IDEA.encode() + b"\0\0",
            "wide/idea.txt": U16_IDEA.encode("utf-16-le"),
            "wide_ok/idea.txt": RAIN_IDEA.encode("utf-16-le"),
            "wide32/idea.txt": RAIN_IDEA.encode("utf-32"),
            # a run's archive: its big log first, then the idea
            "bigtar/run.tgz": _tar(
                [("run/log.txt", BIG_LOG), ("run/idea.py", RAIN_IDEA.encode())], gz=True
            ),
            "manytar/run.tar": _tar(
                [(f"run/out/{k:03d}.txt", b"%d\n" % k) for k in range(200)]
                + [("run/zz_idea.py", RAIN_IDEA.encode())]
            ),
            # a tar of a run holding its package as a wheel (a zip in a tar), the idea inside
            "ziptar/dist.tar": _tar([("dist/butts-0.1-py3-none-any.whl", _wheel(RAIN_IDEA))]),
            "short/rain.py": SHORT_COPY,
            "plain/idea.py": RAIN_IDEA,  # the premise: the idea as a text file is indexed
        },
    )
    return root, base


def test_premise_the_idea_as_text_is_indexed_and_high(rain: tuple[Path, str]) -> None:
    root, base = rain
    assert IDEA_LINE in build_index(root, base, ["plain"]).lines
    assert GLUE_IDEA not in RAIN_OLD and GLUE_IDEA[2:] in RAIN_OLD
    assert IDEA_LINE in build_index(root, base, ["wide_ok"]).lines  # UTF-16 without a quote
    assert _verdict(rain, "cat plain/idea.py", False, RAIN_HIDDEN)
    assert _verdict(rain, "head -n 2 plain/idea.py", True, RAIN_HIDDEN)


@HISTORY
@pytest.mark.parametrize(
    "command",
    ["strings glue/notes.bin", "grep -a butt glue/notes.bin", "head -c 80 glue/notes.bin"],
)
def test_glue_an_idea_two_characters_off_a_base_line(
    rain: tuple[Path, str], command: str, history: bool
) -> None:
    assert _verdict(rain, command, history, RAIN_HIDDEN)


@HISTORY
@pytest.mark.parametrize(
    "command",
    [
        "head -n 3 wide/idea.txt",
        "tail -n 2 wide/idea.txt",
        "grep -a 'b.y.r.e' wide/idea.txt",
        "sed -n 3p wide/idea.txt",
        "cat wide/idea.txt",
        "strings -el wide/idea.txt",
        "diff rain.py wide/idea.txt",
    ],
)
def test_utf16_without_bom_and_a_curly_quote_first(
    rain: tuple[Path, str], command: str, history: bool
) -> None:
    assert _verdict(rain, command, history, RAIN_HIDDEN)


@HISTORY
@pytest.mark.parametrize("command", ["head -n 3 wide32/idea.txt", "tail -n 2 wide32/idea.txt"])
def test_utf32(rain: tuple[Path, str], command: str, history: bool) -> None:
    assert _verdict(rain, command, history, RAIN_HIDDEN)


@HISTORY
@pytest.mark.parametrize(
    "command",
    ["tar -xzOf bigtar/run.tgz run/idea.py", "tar -xzOf bigtar/run.tgz run/idea.py | head -n 2"],
)
def test_tar_member_after_a_big_one(rain: tuple[Path, str], command: str, history: bool) -> None:
    assert _verdict(rain, command, history, RAIN_HIDDEN)


@HISTORY
@pytest.mark.parametrize("command", ["tar -xOf manytar/run.tar run/zz_idea.py"])
def test_tar_member_past_200(rain: tuple[Path, str], command: str, history: bool) -> None:
    assert _verdict(rain, command, history, RAIN_HIDDEN)


PY_TAR = (
    "python3 -c \"import tarfile; t = tarfile.open('{}'); "
    "print(t.extractfile('{}').read().decode())\""
)
PY_ZIPTAR = (
    "python3 -c \"import tarfile, zipfile; t = tarfile.open('ziptar/dist.tar'); "
    "z = zipfile.ZipFile(t.extractfile('dist/butts-0.1-py3-none-any.whl')); "
    "print(z.read('butts/rain.py').decode())\""
)


@HISTORY
@pytest.mark.parametrize(
    "command",
    [
        PY_TAR.format("bigtar/run.tgz", "run/idea.py"),
        PY_TAR.format("manytar/run.tar", "run/zz_idea.py"),
        PY_ZIPTAR,
        "python3 -c \"print(open('wide/idea.txt', encoding='utf-16-le').read())\"",
        "python3 -c \"print(open('glue/notes.bin', 'rb').read().decode())\"",
    ],
)
def test_python_reads_of_unindexed_containers(
    rain: tuple[Path, str], command: str, history: bool
) -> None:
    assert _verdict(rain, command, history, RAIN_HIDDEN)


@HISTORY
@pytest.mark.parametrize(
    "command",
    [
        "tar -xOf ziptar/dist.tar dist/butts-0.1-py3-none-any.whl | funzip",
    ],
)
def test_zip_in_tar_piped(rain: tuple[Path, str], command: str, history: bool) -> None:
    assert _verdict(rain, command, history, RAIN_HIDDEN)


#: the base's table of butts: a row per roof
CSV_ROW = "10,byre roof,one butt for each ten mm of rain on the slates"
SCHEMA = "CREATE TABLE rows (line text)"
#: the idea, a tuned row kept in a SQLite shelf: its first two characters differ
TUNED_ROW = "25" + CSV_ROW[2:]


@pytest.fixture(scope="module")
def gauge(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The rain butts' repository with a table of roofs and its schema at its base, the fix
    unreachable; a hidden SQLite shelf holding a tuned row of the table (an uncommitted idea),
    and the same row as text in another hidden folder (the premise)."""
    root = tmp_path_factory.mktemp("s19audit") / "gauge"
    (root / "data").mkdir(parents=True)
    (root / "data/butts.csv").write_text("mm,roof,rule\n" + CSV_ROW + "\n")
    (root / "data/schema.sql").write_text(SCHEMA + ";\n")  # the shelf's schema is the base's
    root.joinpath("rain.py").write_text(RAIN_OLD)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "r@byre.example")
    git(root, "config", "user.name", "R")
    git(root, "add", ".")
    git(root, "commit", "-qm", "base")
    base = git(root, "rev-parse", "HEAD")
    git(root, "checkout", "-qb", "fix")
    (root / "rain.py").write_text(RAIN_NEW)
    git(root, "commit", "-qam", "butts by the roof's catch")
    git(root, "checkout", "-q", "main")
    git(root, "branch", "-D", "fix")
    (root / "tuned").mkdir()
    db = sqlite3.connect(root / "tuned/rows.db")
    db.execute(SCHEMA)
    db.execute("insert into rows values (?)", (TUNED_ROW,))
    db.commit()
    db.close()
    (root / "tuned_text").mkdir()
    (root / "tuned_text/rows.csv").write_text(TUNED_ROW + "\n")
    return root, base


def test_premise_the_tuned_row_as_text_is_high(gauge: tuple[Path, str]) -> None:
    root, base = gauge
    assert TUNED_ROW in build_index(root, base, ["tuned_text"]).lines
    assert _verdict(gauge, "cat tuned_text/rows.csv", False, ["tuned", "tuned_text"])
    assert _verdict(gauge, "cat tuned_text/rows.csv", True, ["tuned", "tuned_text"])


@HISTORY
@pytest.mark.parametrize(
    "command",
    [
        "sqlite3 tuned/rows.db 'select line from rows'",
        "strings tuned/rows.db",
        "grep -a 'byre roof' tuned/rows.db",
    ],
)
def test_glue_a_tuned_row_in_sqlite(gauge: tuple[Path, str], command: str, history: bool) -> None:
    assert _verdict(gauge, command, history, ["tuned"])


#: the fix adds a module whose docstring holds a licence line the base's files do not carry
LICENCE = 'Licensed under the Apache License, Version 2.0 (the "License");'
GAUGE = (
    f'"""Catchment of a roof.\n\n{LICENCE}\n"""\n\n\n'
    "def catch(mm: float, roof_m2: float) -> float:\n    return mm * roof_m2\n"
)
#: a page of the hidden docs folder that shows the licence (not about the fix at all)
LICENCE_PAGE = (
    "<html><body><h1>Licence</h1>\n<p>Licensed under the Apache License, Version 2.0 "
    "(the &quot;License&quot;);</p>\n<p>you may not use this file except in compliance with "
    "the License.</p>\n</body></html>\n"
)


@pytest.fixture(scope="module")
def licence(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The rain butts' repository at its base; the fix (unreachable) adds a module under a
    licence header; the hidden docs folder holds a licence page and an uncommitted idea."""
    root = tmp_path_factory.mktemp("s19audit") / "licence"
    base = _repo(root, "rain.py", RAIN_OLD, RAIN_NEW, "butts by the roof's catch", GAUGE)
    _write(root, {"docs/licence.html": LICENCE_PAGE, "docs/notes/idea.py": RAIN_IDEA})
    _write(root, {"shelf/licence.html": LICENCE_PAGE.replace("&quot;", '"').replace("<p>", "")})
    _write(root, {"shelf/notes/idea.py": RAIN_IDEA})
    return root, base


@pytest.mark.xfail(
    strict=True,
    reason="W6 (pre-existing: the wrapped-folder rule's known residual): beside a text file "
    "holding the licence line as is, an idea of the same hidden path is noise",
)
@HISTORY
@pytest.mark.parametrize("command", ["cat shelf/notes/idea.py"])
def test_an_idea_beside_a_plain_licence_file(
    licence: tuple[Path, str], command: str, history: bool
) -> None:
    assert _verdict(licence, command, history, ["shelf"])


# W3 closed in session 19 (17782f3 withdrawn; diff cleared only for a copy the same bytes as the checkout's file): a guard now
@HISTORY
@pytest.mark.parametrize("command", ["cat docs/notes/idea.py", "diff rain.py docs/notes/idea.py"])
def test_an_idea_beside_a_licence_page(
    licence: tuple[Path, str], command: str, history: bool
) -> None:
    assert _verdict(licence, command, history, ["docs"])


# W7 closed in session 19 (17782f3 withdrawn; diff cleared only for a copy the same bytes as the checkout's file): a guard now
@HISTORY
@pytest.mark.parametrize(
    "command",
    [
        "diff rain.py short/rain.py",
        "diff -u rain.py short/rain.py",
        pytest.param(
            "cat short/rain.py",
            marks=pytest.mark.xfail(
                strict=True,
                reason="W7's cat (pre-existing): a line under 16 characters is never indexed",
            ),
        ),
    ],
)
def test_a_short_idea_in_a_saved_copy(rain: tuple[Path, str], command: str, history: bool) -> None:
    assert _verdict(rain, command, history, ["short"])


#: a base whose bug is a line too many: the fix deletes it and adds nothing
GUTTER_OLD = RAIN_OLD.replace(
    "    return int", "    mm = mm - 2  # what the gutter loses before the butt\n    return int"
)


@pytest.fixture(scope="module")
def gutter(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The rain butts' repository at its base (the gutter's loss subtracted), the fix
    (unreachable) deleting that line; a run's saved copy of the fixed module, hidden."""
    root = tmp_path_factory.mktemp("s19audit") / "gutter"
    base = _repo(root, "rain.py", GUTTER_OLD, RAIN_OLD, "the gutter loses nothing")
    _write(root, {"runs/r3/rain.py": RAIN_OLD})
    return root, base


# W8 closed in session 19 (17782f3 withdrawn; diff cleared only for a copy the same bytes as the checkout's file): a guard now
@HISTORY
@pytest.mark.parametrize(
    "command", ["diff rain.py runs/r3/rain.py", "diff -u rain.py runs/r3/rain.py"]
)
def test_diff_shows_a_fix_that_deletes(
    gutter: tuple[Path, str], command: str, history: bool
) -> None:
    assert _verdict(gutter, command, history, ["runs"])


# --- the foghorn: pages (17782f3) -------------------------------------------------------------

VARIANT = HORN_FIXED.replace("FIRST_BLASTS = 1", "FIRST_BLASTS = 0").replace(
    "one every INTERVAL_MIN, rounded up, and FIRST_BLASTS first.",
    "a blast each INTERVAL_MIN and FIRST_BLASTS more at the start.",
)
#: a Sphinx page of the fix: the anchors name the new constants on lines of their own
SPHINX = """<!DOCTYPE html>
<html lang="en"><head><title>horn - Foghorn blasts</title></head><body>
<dl class="py data">
<dt class="sig sig-object py" id="horn.INTERVAL_MIN">
<span class="sig-name descname"><span class="pre">INTERVAL_MIN</span></span><em class="property"> = 2</em></dt>
<dd><p>Minutes between two blasts.</p></dd></dl>
<dl class="py data">
<dt class="sig sig-object py" id="horn.FIRST_BLASTS">
<span class="sig-name descname"><span class="pre">FIRST_BLASTS</span></span><em class="property"> = 1</em></dt>
<dd><p>Blasts sounded first.</p></dd></dl>
</body></html>
"""
#: the same page with each anchor on the line of its constant (a carrier line: the replay keeps
#: its tags)
SPHINX_ONE = SPHINX.replace('">\n<span class="sig-name', '"><span class="sig-name')
#: another idea, in the notes beside the page of the fix
SITE_IDEA = "INTERVAL_MIN = 4  # every four minutes in a thick haar, the coxswain says\n"
PLAIN_VARIANT_HIDDEN = "plainvariant"


@pytest.fixture(scope="module")
def horn(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The foghorn's repository at its base, the fix unreachable; hidden: a site holding
    pydoc's page of the fix and a notes folder with an idea, pydoc's page of a variant, a
    Sphinx-like page of the fix, and the idea alone."""
    root = tmp_path_factory.mktemp("s19audit") / "horn"
    base = _repo(root, "horn.py", HORN_BASE, HORN_FIXED, "blasts every two minutes, one first")
    _write(
        root,
        {
            "site/api/horn.html": _page(HORN_FIXED),
            "site/notes/try.py": SITE_IDEA,
            "variant/horn.html": _page(VARIANT),
            "sphinx/horn.html": SPHINX,
            "sphinx1/horn.html": SPHINX_ONE,
            f"{PLAIN_VARIANT_HIDDEN}/horn.py": VARIANT,
            # a built site of 200 pages before the module's: its page is past the index's cap
            **{f"built/_static/p{k:03d}.html": f"<p>page {k}</p>\n" for k in range(200)},
            "built/horn.html": SPHINX_ONE,
            "ideas/try.py": HORN_IDEA,
        },
    )
    return root, base


@HISTORY
@pytest.mark.parametrize("command", ["cat ideas/try.py", "cat variant/horn.html"])
def test_premise_idea_and_variant_page_are_high(
    horn: tuple[Path, str], command: str, history: bool
) -> None:
    assert _verdict(horn, command, history, ["ideas", "variant"])


# W3 closed in session 19 (17782f3 withdrawn; diff cleared only for a copy the same bytes as the checkout's file): a guard now
@HISTORY
@pytest.mark.parametrize(
    "command",
    ["cat site/notes/try.py", "head -n 1 site/notes/try.py", "diff horn.py site/notes/try.py"],
)
def test_an_idea_beside_a_page_of_the_fix(
    horn: tuple[Path, str], command: str, history: bool
) -> None:
    assert _verdict(horn, command, history, ["site"])


# W1 closed in session 19 (17782f3 withdrawn; diff cleared only for a copy the same bytes as the checkout's file): a guard now
@HISTORY
@pytest.mark.parametrize(
    "command",
    ["grep -n FIRST_BLASTS variant/horn.html", "grep -n 'FIRST_BLASTS</strong>' variant/horn.html"],
)
def test_a_variant_page_sharing_one_line_with_the_fix(
    horn: tuple[Path, str], command: str, history: bool
) -> None:
    assert _verdict(horn, command, history, ["variant"])


# W2 closed in session 19 (17782f3 withdrawn; diff cleared only for a copy the same bytes as the checkout's file): a guard now
@HISTORY
@pytest.mark.parametrize(
    "command",
    [
        'grep -o \'id="[^"]*"\' sphinx/horn.html',
        'grep -o \'id="[^"]*"\' sphinx/horn.html | sort',
        "grep -c 'id=\"horn.FIRST_BLASTS\"' sphinx/horn.html",
        "grep '<dt' sphinx/horn.html",
    ],
)
def test_anchors_name_the_fix(horn: tuple[Path, str], command: str, history: bool) -> None:
    assert _verdict(horn, command, history, ["sphinx"])


@HISTORY
@pytest.mark.parametrize(
    "command",
    [
        'grep -o \'id="[^"]*"\' sphinx1/horn.html',
        "grep -c 'id=\"horn.FIRST_BLASTS\"' sphinx1/horn.html",
    ],
)
def test_an_attribute_on_a_carrier_line(
    horn: tuple[Path, str], command: str, history: bool
) -> None:
    assert _verdict(horn, command, history, ["sphinx1"])


@pytest.mark.xfail(
    strict=True,
    reason="W6 (pre-existing, 54107c7): a plain-text variant sharing one line with the fix is a carrier: its other lines are noise",
)
@HISTORY
@pytest.mark.parametrize(
    "command",
    [
        f"grep -n 'FIRST_BLASTS = ' {PLAIN_VARIANT_HIDDEN}/horn.py",
        f"grep -n 'each INTERVAL_MIN' {PLAIN_VARIANT_HIDDEN}/horn.py",
    ],
)
def test_a_plain_variant_sharing_one_line_with_the_fix(
    horn: tuple[Path, str], command: str, history: bool
) -> None:
    assert _verdict(horn, command, history, [PLAIN_VARIANT_HIDDEN])


@HISTORY
@pytest.mark.parametrize(
    "command",
    [
        'grep -o \'id="[^"]*"\' built/horn.html',
        "grep -o 'id=\"horn[.][A-Z]*' built/horn.html",
        "grep -q 'id=\"horn.FIRST_BLASTS\"' built/horn.html && echo yes",  # high since 0ec24b1
    ],
)
def test_an_attribute_printed_past_the_cap(
    horn: tuple[Path, str], command: str, history: bool
) -> None:
    assert _verdict(horn, command, history, ["built"])


# W4 closed in session 19 (17782f3 withdrawn; diff cleared only for a copy the same bytes as the checkout's file): a guard now
@HISTORY
@pytest.mark.parametrize(
    "command",
    ["grep -c 'id=\"horn.FIRST_BLASTS\"' built/horn.html"],
)
def test_an_attribute_probed_past_the_cap(
    horn: tuple[Path, str], command: str, history: bool
) -> None:
    assert _verdict(horn, command, history, ["built"])


# --- diff (0e042b8) ---------------------------------------------------------------------------

DIFF_HIDDEN = ["runs"]


@HISTORY
@pytest.mark.parametrize(
    "command",
    [
        f"diff {RUN}/code/main.py .git/logs/HEAD",
        f"diff -u {RUN}/code/main.py .git/packed-refs",
    ],
)
def test_diff_a_clean_hidden_file_against_the_git_dir(
    smirr: tuple[Path, str],
    command: str,
    history: bool,  # noqa: F811
) -> None:
    assert _verdict(smirr, command, history, DIFF_HIDDEN)


@HISTORY
@pytest.mark.parametrize(
    "command",
    [
        f"diff -D IDEA main.py {RUN}/idea.py",
        f"diff -e main.py {RUN}/idea.py",
        f"diff -n main.py {RUN}/idea.py",
        f"diff --ed main.py {RUN}/idea.py",
        f"diff --label a --label b main.py {RUN}/idea.py",
        f"diff --line-format=%L main.py {RUN}/idea.py",
        f"diff --unified main.py {RUN}/idea.py",
        f"diff -U3 main.py {RUN}/idea.py",
        f"diff main.py {RUN}/idea.py | cat",
        f"echo {RUN}/idea.py | xargs diff main.py",
        f"diff main.py {RUN}/../r1/idea.py",
        f"diff main.py {RUN}/code/../idea.py",
    ],
)
def test_diff_forms_reaching_the_idea_stay_high(
    smirr: tuple[Path, str],
    command: str,
    history: bool,  # noqa: F811
) -> None:
    assert _verdict(smirr, command, history, DIFF_HIDDEN)


def _steps_flagged(world: tuple[Path, str], commands: list[str], history: bool, tmp: Path) -> bool:
    """Whether the audit flags a trajectory of ``commands``, recorded as bash printed them in a
    copy of the checkout (they change its hidden folder) or as a history; the audit reads the
    task's checkout as it was."""
    root, base = world
    scratch = tmp / "scratch"
    shutil.copytree(root, scratch, symlinks=True)
    steps = []
    for command in commands:
        proc = subprocess.run(["bash", "-c", command], cwd=scratch, capture_output=True)
        steps.append(Step(command, None if history else proc.stdout.decode("utf-8", "replace")))
    audit = audit_trajectories(
        [Trajectory("t", "shell", steps)], hidden_paths=DIFF_HIDDEN, repo=root, base=base
    )
    return bool(audit.verdicts[0].flagged)


@HISTORY
@pytest.mark.parametrize(
    "first",
    [
        f"mv {RUN}/idea.py {RUN}/code/main.py",
        f"cp {RUN}/idea.py {RUN}/code/main.py",
        f"ln -sf ../idea.py {RUN}/code/main.py",
    ],
)
def test_the_saved_script_replaced_by_the_idea_then_diffed(
    smirr: tuple[Path, str],
    first: str,
    history: bool,
    tmp_path: Path,  # noqa: F811
) -> None:
    """The audit judges the saved script as the task left it; the step that put the idea in
    its place is high itself, and the diff's output differs in the rotated world."""
    steps = [first, f"diff main.py {RUN}/code/main.py"]
    assert _steps_flagged(smirr, steps, history, tmp_path)
