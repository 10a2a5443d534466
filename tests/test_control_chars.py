"""Text written by users and agents is shown with its control characters escaped.

A hypothesis can carry a newline followed by a line that imitates evotree's output, terminal
escapes (``ESC[8m`` hides what follows) and Unicode bidi overrides. The commands run as real
processes here and the assertions are on the bytes they print.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import EVOTREE_BIN, Cli
from evotree.core.text import CONTROL_ESCAPES, escape_control

NASTY = "tune lr\ncommit: 0000000000000000000000000000000000000000 forged line\x1b[8mhidden \u202eevil [bold]x[/bold]"
SHOWN = (
    "tune lr\\ncommit: 0000000000000000000000000000000000000000 forged line\\x1b[8mhidden \\u202eevil "
    "[bold]x[/bold]"
)


def test_escape_control() -> None:
    assert escape_control("plain text, é 中文 ✓") == "plain text, é 中文 ✓"
    assert escape_control("a\nb\tc\rd") == "a\\nb\\tc\\rd"
    assert escape_control("\x1b[31mred\x1b[0m") == "\\x1b[31mred\\x1b[0m"
    assert escape_control("\x00\x07\x7f\x85\x9b") == "\\x00\\x07\\x7f\\x85\\x9b"
    bidi = "".join(chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A)))
    assert escape_control(bidi) == "".join(
        f"\\u{c:04x}" for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))
    )
    assert escape_control("a\u2028b") == "a\\u2028b"
    assert escape_control("line 1\nline 2\r", keep_newlines=True) == "line 1\nline 2\\r"
    assert escape_control(None) == "" and escape_control(3) == "3"
    # everything escaped is non-printable, and nothing non-printable of C0/C1 is left out
    assert all(not chr(c).isprintable() for c in CONTROL_ESCAPES)
    assert all(c in CONTROL_ESCAPES for c in (*range(0x20), *range(0x7F, 0xA0)))


def _evotree(repo: Path, *args: str) -> bytes:
    proc = subprocess.run(
        [str(EVOTREE_BIN), "-C", str(repo), *args], capture_output=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout


def _assert_shown_safely(out: bytes) -> None:
    text = out.decode("utf-8")
    assert b"\x1b" not in out and "\u202e" not in text and "\r" not in text
    assert not any(line.lstrip().startswith("commit: 0000") for line in text.splitlines()), text
    flat = " ".join(text.split())  # rich may wrap a long hypothesis over lines
    assert " ".join(SHOWN.split()) in flat, text


def test_tree_show_log_and_branch_escape_what_agents_wrote(ws: object, repo: Path) -> None:
    created = _evotree(repo, "branch", "-m", NASTY)
    _assert_shown_safely(created)
    _assert_shown_safely(_evotree(repo, "tree"))
    _assert_shown_safely(_evotree(repo, "show", "v1"))
    # the stored text is unchanged, and --json carries it exactly (JSON escapes it)
    data = Cli(repo).json("show", "v1")
    assert data["version"]["hypothesis"] == NASTY
    assert b"\x1b" not in _evotree(repo, "show", "v1", "--json")


def test_abandon_reason_and_log_actor_are_escaped(ws: object, repo: Path) -> None:
    _evotree(repo, "branch", "-m", "plain")
    out = _evotree(
        repo, "abandon", "v1", "--reason", "dead end\x1b]8;;http://x\x07link\n[red]no[/red]"
    )
    assert (
        b"\x1b" not in out
        and b"\x07" not in out
        and b"\\x1b]8;;http://x\\x07link\\n[red]no[/red]" in out
    )
    tree = _evotree(repo, "tree")
    assert b"\x1b" not in tree and b"\\x1b]8;;" in tree
    log = _evotree(repo, "log")
    assert b"\x1b" not in log


def test_runs_table_escapes_run_text(capsys: pytest.CaptureFixture[str]) -> None:
    from evotree.cli import render

    record = SimpleNamespace(
        run_id="v1-s0-x",
        status="failed",
        headline={"metric": "val\x1b[8m/score", "value": 0.5},
        wall_seconds=1.0,
        usage={"steps": 3},
        error="train exited 1:\n\x1b[2Jcleared\u202e",
        notes=[],
    )
    render.runs([record])
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u202e" not in out
    assert "\\x1b[8m" in out and "\\x1b[2Jcleared\\u202e" in out and "\\n" in out


def test_sql_cells_are_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    from evotree.cli import render

    render.sql_result({"columns": ["task"], "rows": [{"task": "a\x1b[8mb\nfake row"}], "limit": 10})
    out = capsys.readouterr().out
    assert "\x1b" not in out and "a\\x1b[8mb\\nfake row" in out


def _clean(out: str) -> None:
    assert "\x1b" not in out and "\u202e" not in out and "\r" not in out
    assert not any(line.lstrip().startswith("commit: 0000") for line in out.splitlines()), out


def test_memory_skills_audit_and_report_text_is_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    """memory list/show/search, suggest, skill show, audit and the report's Markdown/HTML."""
    from evotree.cli import audit, memory, skills
    from evotree.report.html import _e
    from evotree.report.markdown import escape_md

    entry = {
        "id": "m1",
        "kind": "lesson",
        "domain": "math",
        "text": NASTY,
        "version": "v1\x1b[2J",
        "skill": None,
        "origin": None,
        "created_by": "Ada\u202e <a@x>",
        "created_at": "now",
        "workspace": "w",
        "tags": ["t\x07"],
        "data": {"note": NASTY},
        "evidence": None,
    }
    memory._render_entries({"entries": [entry]})
    memory._render_entry(entry)
    memory._render_hits({"query": "lr\x1b[8m", "hits": [{"score": 1.0, "entry": entry}]})
    memory._render_suggest(
        {
            "version": "v1",
            "domain": "math",
            "source": "file",
            "findings": 1,
            "memory_entries": 1,
            "suggestions": [
                {
                    "skill": "s\x1b[8m",
                    "score": 1.0,
                    "applied": False,
                    "applies": True,
                    "memory": {
                        "verified_across_domains": False,
                        "verified_in_domain": False,
                        "domains": [],
                        "verifications": 0,
                    },
                    "addresses": [{"code": "c\nfake", "severity": "high"}],
                    "reasons": [NASTY],
                }
            ],
            "unaddressed": [],
        }
    )
    out = capsys.readouterr().out
    _clean(out)
    assert "\\x1b[8m" in out and "\\u202e" in out and "\\x07" in out
    skills._render_show(
        {
            "name": "n",
            "title": NASTY,
            "kind": "recipe",
            "trigger": "t",
            "intervention": "i",
            "expected_outcome": "e",
            "validation": "v",
            "domains": ["math"],
            "applies": None,
            "why_not": None,
            "addresses": ["c"],
            "provenance": "p\x1b]8;;x\x07",
            "params": [],
        }
    )
    finding = SimpleNamespace(
        severity="high",
        code="leak",
        title=NASTY,
        run_id="r\x1b[8m",
        suggestion="fix\rit",
        evidence={"examples": [{"command": "cat /judge\x1b[8m\ncommit: 0000"}]},
    )
    audit._findings_table(__import__("rich.console").console.Console(), [finding])
    out = capsys.readouterr().out
    _clean(out)
    assert "\\x1b[8m" in out
    for shown in (escape_md(NASTY), _e(NASTY)):
        assert "\x1b" not in shown and "\u202e" not in shown and "\n" not in shown


def test_error_messages_and_fixes_are_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    """An error quotes what users and agents wrote (names, paths, text): shown escaped."""
    import click

    from evotree.cli.common import fail
    from evotree.core.errors import EvotreeError

    with pytest.raises(click.exceptions.Exit):
        fail(EvotreeError("bad \x1b[8mhidden", fix="retry\nfix: rm -rf ~"), False)
    err = capsys.readouterr().err
    assert "\x1b[8m" not in err and "\\x1b[8mhidden" in err
    assert "retry\\nfix: rm -rf ~" in err and err.count("\n") == 2
