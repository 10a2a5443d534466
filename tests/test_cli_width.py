"""Output piped to CI is not wrapped at 80 columns (one word per line in `diagnose` once)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Cli


def test_a_console_off_a_terminal_is_wide_unless_columns_says(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from evotree.cli.common import WIDE, console

    monkeypatch.delenv("COLUMNS", raising=False)
    assert console().width == WIDE
    monkeypatch.setenv("COLUMNS", "132")
    assert console().width == 132
    monkeypatch.setenv("COLUMNS", "not-a-number")
    assert console().width == WIDE


def test_a_long_line_reaches_a_pipe_whole(
    ws: object, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    hypothesis = "drop dead groups and " + " ".join(
        f"word{i}" for i in range(20)
    )  # ~140 characters
    Cli(repo).json("branch", "-m", hypothesis)
    out = Cli(repo)("tree").output
    assert any(hypothesis in line for line in out.splitlines()), out


def test_the_renderers_console_reads_columns_when_it_prints(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Not frozen at import: a process that imported the CLI under COLUMNS=80 (pytest-xdist's
    workers do) printed every later command at 80 columns."""
    from evotree.cli import render
    from evotree.cli.common import WIDE

    monkeypatch.setenv("COLUMNS", "61")
    assert render._console.width == 61
    assert render._table_console().width == 61
    monkeypatch.delenv("COLUMNS")
    assert render._console.width == WIDE
    assert render._table_console().width == WIDE
