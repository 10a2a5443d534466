"""The wheel installs one namespace, and works outside the checkout.

A wheel is built from a copy of the tracked sources and installed into a fresh virtualenv that
lives outside the checkout. That virtualenv gets evotree's dependencies by a ``.pth`` line
pointing at the test's own site-packages (no download), while evotree itself comes only from
the wheel: the development install's editable finder is in a ``.pth`` file of that folder, and
Python does not process ``.pth`` files of folders added that way.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT, git, make_repo

from evotree.report.ci import DISTRIBUTION


def _copy_sources(dest: Path) -> Path:
    """The tracked (and untracked, not ignored) files of the checkout, as they are on disk."""
    listed = (
        subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for rel in filter(None, listed):
        source = ROOT / rel
        if source.is_file() and not source.is_symlink():
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return dest


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("wheel")
    src = _copy_sources(base / "src")
    out = base / "dist"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--disable-pip-version-check",
            "-w",
            str(out),
            str(src),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    (found,) = out.glob("*.whl")
    return found


def _top_level_names(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    return {n.split("/")[0] for n in names if not n.split("/")[0].endswith((".dist-info", ".data"))}


@pytest.mark.heavy
def test_the_wheel_installs_only_evotree(wheel: Path) -> None:
    assert wheel.name.startswith(DISTRIBUTION.replace("-", "_") + "-")
    assert _top_level_names(wheel) == {"evotree"}
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        entry_points = next(
            archive.read(n).decode() for n in names if n.endswith("entry_points.txt")
        )
    for module in (
        "evotree/harness/records.py",
        "evotree/diagnostics/stats.py",
        "evotree/gates/verify.py",
        "evotree/domains/gym/judge.py",
        "evotree/core/ledger.py",
        "evotree/cli/main.py",
        "evotree/core/schemas/memory_entry.schema.json",
    ):
        assert module in names, module
    assert "evotree = evotree.cli.main:main" in entry_points


def test_top_level_name_check_fails_on_a_stray_package(tmp_path: Path) -> None:
    """The check above can fail: a wheel with a second top-level package is caught."""
    stray = tmp_path / "stray-0.1-py3-none-any.whl"
    with zipfile.ZipFile(stray, "w") as archive:
        archive.writestr("evotree/__init__.py", "")
        archive.writestr("harness/__init__.py", "")
        archive.writestr("stray-0.1.dist-info/METADATA", "")
    assert _top_level_names(stray) == {"evotree", "harness"}


def _fresh_venv(where: Path, wheel: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    python = where / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    (site / "zz_test_dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--quiet",
            "--no-deps",
            "--disable-pip-version-check",
            str(wheel),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    return where


@pytest.mark.heavy
def test_wheel_in_a_fresh_venv_beside_a_users_own_skills_and_domains(
    wheel: Path, tmp_path: Path
) -> None:
    venv = _fresh_venv(tmp_path / "venv", wheel)
    python, evotree = venv / "bin" / "python", venv / "bin" / "evotree"
    work = make_repo(tmp_path / "work")
    for package in (
        "skills",
        "domains",
        "harness",
    ):  # the user's own packages, named like evotree's folders
        (work / package).mkdir()
        (work / package / "__init__.py").write_text(
            f"raise ImportError('the user\\'s own {package}')\n"
        )
    (work / "skills" / "__init__.py").write_text("USERS_OWN = True\n")
    (work / "domains" / "__init__.py").write_text("USERS_OWN = True\n")
    (work / "harness").rename(work / "harness_not_here")  # `import harness` must fail by itself
    git(work, "add", "-A")
    git(work, "commit", "--quiet", "-m", "the user's own packages")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}:/usr/bin:/bin"

    def sh(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            list(args), cwd=work, env=env, capture_output=True, text=True, timeout=300
        )

    where = sh(
        str(python),
        "-c",
        "import evotree, evotree.harness, evotree.skills; "
        "print(evotree.__file__); print(evotree.skills.__file__)",
    )
    assert where.returncode == 0, where.stderr
    assert all(str(venv) in line for line in where.stdout.split()), where.stdout
    assert str(ROOT) not in where.stdout
    assert sh(str(python), "-c", "import harness").returncode != 0
    assert sh(str(python), "-c", "import skills; assert skills.USERS_OWN").returncode == 0
    init = sh(str(evotree), "init", "--domain", "gym")
    assert init.returncode == 0, init.stderr
    assert git(work, "status", "--porcelain") == ""  # init committed the template it wrote
    run = sh(str(evotree), "run", "v0", "--json")
    assert run.returncode == 0, run.stderr + run.stdout
    assert '"status": "succeeded"' in run.stdout.replace(
        '"status":"succeeded"', '"status": "succeeded"'
    )
