"""`evotree export mlflow --tracking-uri bogus://x`: one line saying what and how, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Cli


@pytest.mark.heavy
def test_an_unsupported_tracking_uri_is_a_clear_error(ws: object, repo: Path) -> None:
    pytest.importorskip("mlflow")
    from evotree.cli.main import cli

    result = Cli(repo).runner.invoke(
        cli, ["-C", str(repo), "export", "mlflow", "--tracking-uri", "bogus://x"]
    )
    assert result.exit_code not in (0, 1), result.output
    assert (
        "Traceback" not in result.output
        and "bogus://x" in result.output
        and "fix:" in result.output
    )
