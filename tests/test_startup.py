"""Start-up stays light: heavy libraries are imported only by the commands that use them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

HEAVY = (
    "torch",
    "trl",
    "transformers",
    "duckdb",
    "scipy",
    "ray",
    "pyarrow",
    "numpy",
    "git",
    "vllm",
    "pandas",
    "matplotlib",
)

_PROBE = """
import json, sys
from click.testing import CliRunner
from evotree.cli.main import cli
args = json.loads(sys.argv[1])
result = CliRunner().invoke(cli, args, catch_exceptions=False)
print(json.dumps({"code": result.exit_code, "modules": sorted(sys.modules)}))
"""


def _modules_after(args: list[str], cwd: Path) -> tuple[int, set[str]]:
    proc = subprocess.run(
        [sys.executable, "-P", "-c", _PROBE, json.dumps(args)],
        cwd=cwd,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    return data["code"], {m.split(".")[0] for m in data["modules"]}


def test_help_imports_nothing_heavy_not_even_pygit2(tmp_path: Path) -> None:
    code, modules = _modules_after(["--help"], tmp_path)
    assert code == 0
    assert not modules & set(HEAVY), modules & set(HEAVY)
    assert "pygit2" not in modules and "rich" not in modules


def test_tree_and_branch_import_nothing_heavy(ws: Any, repo: Path) -> None:
    for args in (
        ["-C", str(repo), "tree"],
        ["-C", str(repo), "tree", "--json"],
        ["-C", str(repo), "branch", "-m", "x", "--json"],
        ["-C", str(repo), "log"],
    ):
        code, modules = _modules_after(args, repo)
        assert code == 0, args
        assert not modules & set(HEAVY), (args, modules & set(HEAVY))
