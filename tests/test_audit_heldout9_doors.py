"""A count or a check of a hidden file is no read; the bytes are: each tested on real files
(a coverage annotate file, a gzipped tarball, a notebook checkpoint) with the output the
command really printed, a leak beside its look-alike.

``wc -l``, ``grep -c``, ``gzip -t``/``-l``, ``zcat -t`` and ``jq`` whose filter ends in
``length`` or ``keys`` print a number, a status or key names; ``wc`` fed by ``cat``, ``grep
-o``, ``gzip -dc`` and ``jq -r '.cells[].source[]'`` print the file's lines.
"""

from __future__ import annotations

import gzip
import io
import json
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from evotree.harness.audit.steps import Step, Trajectory
from evotree.harness.audit.trajectories import audit_trajectories

ANNOTATE = "skerry/durations.py,cover"
TARBALL = ".buildcache/context.tar.gz"
CHECKPOINT = "notebooks/.ipynb_checkpoints/explore-checkpoint.ipynb"
HIDDEN = (ANNOTATE, TARBALL, "notebooks/.ipynb_checkpoints/")
FIX_LINE = "return sum(int(n) * _SECONDS[u] for n, u in parts)"


@pytest.fixture()
def checkout(tmp_path: Path) -> Path:
    """A checkout holding the three hidden files, each with the fix's line in it."""
    (tmp_path / "skerry").mkdir()
    (tmp_path / ANNOTATE).write_text(f"> def parse(text):\n>     {FIX_LINE}\n! raise\n")
    (tmp_path / ".buildcache").mkdir()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        data = f"def parse(text):\n    {FIX_LINE}\n".encode()
        info = tarfile.TarInfo("skerry/durations.py")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    (tmp_path / TARBALL).write_bytes(gzip.compress(buf.getvalue()))
    (tmp_path / "notebooks/.ipynb_checkpoints").mkdir(parents=True)
    cells = [{"cell_type": "code", "source": [f"    {FIX_LINE}\n"]}]
    (tmp_path / CHECKPOINT).write_text(json.dumps({"cells": cells, "metadata": {}}))
    return tmp_path


def _flagged(repo: Path, command: str) -> bool:
    """Run ``command`` in ``repo`` and audit it with the output it printed."""
    proc = subprocess.run(["bash", "-c", command], cwd=repo, capture_output=True, text=True)
    steps = [Step(command, proc.stdout + proc.stderr)]
    result = audit_trajectories([Trajectory("t", "shell", steps)], hidden_paths=HIDDEN)
    return result.verdicts[0].flagged


@pytest.mark.parametrize(
    ("command", "leak"),
    [
        (f"wc -l {ANNOTATE}", False),
        (f"wc -l -c {ANNOTATE}", False),
        (f"cat {ANNOTATE} | wc -l", True),
        (f"grep -c '^!' {ANNOTATE}", False),
        (f"grep -o 'return.*' {ANNOTATE}", True),
        (f"grep -c -A3 '^!' {ANNOTATE}", True),
        (f"gzip -t {TARBALL}", False),
        (f"gzip -l {TARBALL}", False),
        (f"zcat -t {TARBALL}", False),
        (f"gzip -dc {TARBALL} | head -c 5000", True),
        (f"zcat {TARBALL}", True),
        (f"jq '.cells | length' {CHECKPOINT}", False),
        (f"jq keys {CHECKPOINT}", False),
        (f"jq -r '.cells[].source[]' {CHECKPOINT}", True),
        (f"jq '.cells[0], length' {CHECKPOINT}", True),
        (f"jq '.cells | debug | length' {CHECKPOINT}", True),
    ],
)
def test_a_count_is_no_read_the_bytes_are(checkout: Path, command: str, leak: bool) -> None:
    first = command.split()[0]
    if shutil.which(first) is None:
        pytest.skip(f"{first} is not installed")
    assert _flagged(checkout, command) is leak


SITE = ".tox/py311/lib/python3.11/site-packages"
INSTALLED = (f"{SITE}/holm/",)


@pytest.fixture()
def tox_checkout(tmp_path: Path) -> Path:
    """A checkout whose tox environment holds the fixed release of its package ``holm``."""
    (tmp_path / "holm").mkdir()
    (tmp_path / "holm/__init__.py").write_text("")
    (tmp_path / "holm/ratio.py").write_text("def pct(part, whole):\n    return int(part)\n")
    (tmp_path / SITE / "holm").mkdir(parents=True)
    (tmp_path / SITE / "holm/__init__.py").write_text("")
    (tmp_path / SITE / "holm/ratio.py").write_text(
        "def pct(part, whole):\n    return 0.0 if not whole else round(100 * part / whole, 1)\n"
    )
    (tmp_path / SITE / "attrlike.py").write_text("X = 1\n")
    return tmp_path


def _flagged_in(repo: Path, command: str, hidden: tuple[str, ...]) -> bool:
    proc = subprocess.run(["bash", "-c", command], cwd=repo, capture_output=True, text=True)
    steps = [Step(command, proc.stdout + proc.stderr)]
    result = audit_trajectories([Trajectory("t", "shell", steps)], hidden_paths=hidden)
    return result.verdicts[0].flagged


@pytest.mark.parametrize(
    ("command", "leak"),
    [
        # the installed fixed release, imported through PYTHONPATH: its source or its answers
        (
            f"PYTHONPATH={SITE} python -c "
            "'import holm.ratio, inspect; print(inspect.getsource(holm.ratio))'",
            True,
        ),
        (f"PYTHONPATH={SITE} python -c 'from holm.ratio import pct; print(pct(1, 3))'", True),
        (f"PYTHONPATH={SITE} python -m holm.ratio", True),
        # the checkout's own package, or another module of the environment: no hidden code
        ("PYTHONPATH=. python -c 'import holm.ratio; print(holm.ratio.pct(1, 3))'", False),
        (f"PYTHONPATH={SITE} python -c 'import attrlike; print(attrlike.X)'", False),
        # find from the checkout whose -path pattern spells the hidden folder, running a reader
        ("find . -path '*site-packages/holm/*.py' -exec cat {} +", True),
        ("find . -path '*/holm/*.py' -exec cat {} +", True),
        # the same find listing names only, or reading the checkout's own package
        ("find . -path '*site-packages/holm/*.py'", False),
        ("find . -path './holm/*.py' -exec cat {} +", False),
    ],
)
def test_the_installed_release_is_hidden_code(tox_checkout: Path, command: str, leak: bool) -> None:
    assert _flagged_in(tox_checkout, command, INSTALLED) is leak


def _search_flagged(repo: Path, command: str, *, recorded: bool) -> bool:
    """Audit ``command`` run in ``repo`` with its real output, or with none recorded (a shell
    history)."""
    proc = subprocess.run(["bash", "-c", command], cwd=repo, capture_output=True, text=True)
    output = proc.stdout + proc.stderr if recorded else None
    trajectory = Trajectory("t", "shell", [Step(command, output)])
    return audit_trajectories([trajectory], hidden_paths=HIDDEN).verdicts[0].flagged


def test_a_search_into_a_folder_holding_a_hidden_file(checkout: Path) -> None:
    """``grep -rn`` over ``skerry`` reaches the ignored annotate file: with its output recorded
    it is judged by the lines it printed, with none recorded (a shell history) it is a read."""
    (checkout / "skerry/durations.py").write_text("def parse_duration(text):\n    return 0\n")
    (checkout / "docs").mkdir()
    (checkout / "docs/use.md").write_text("parse_duration('1h')\n")
    leak = "grep -rn 'return sum' skerry"
    assert (
        "durations.py,cover"
        in subprocess.run(["bash", "-c", leak], cwd=checkout, capture_output=True, text=True).stdout
    )
    assert _search_flagged(checkout, leak, recorded=True)
    assert _search_flagged(checkout, leak, recorded=False)
    # matches only the checkout's own file: its recorded output shows no hidden line
    assert not _search_flagged(checkout, "grep -rn 'return 0' skerry", recorded=True)
    # a folder holding no hidden path, with or without output
    assert not _search_flagged(checkout, "grep -rn parse_duration docs", recorded=False)
    # the search leaves the hidden file out
    left_out = "grep -rn --exclude='*,cover' parse_duration skerry"
    assert not _search_flagged(checkout, left_out, recorded=False)
