"""Packaging promises: layout, extras, console script, CPU torch pin, README commands, CI."""

from __future__ import annotations

import configparser
import os
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT

PACKAGES = ("evotree", "harness", "diagnostics", "skills", "memory", "gates", "domains")


def _setup_cfg() -> configparser.ConfigParser:
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    return cfg


def test_layout_matches_design_card() -> None:
    for name in (*PACKAGES, "tests"):
        assert (ROOT / name).is_dir(), name
    for name in PACKAGES:
        assert (ROOT / name / "__init__.py").is_file(), name
    assert (ROOT / "setup.cfg").is_file() and (ROOT / "pyproject.toml").is_file()


def test_distribution_extras_and_console_script() -> None:
    cfg = _setup_cfg()
    assert cfg["metadata"]["name"] == "evotree-rl"  # `evotree` on the index is another project
    assert "evotree = evotree.cli.main:main" in cfg["options.entry_points"]["console_scripts"]
    extras = cfg["options.extras_require"]
    for extra in ("llm", "gym", "ray", "vllm", "dev"):
        assert extra in extras, extra
    for dep in ("torch", "transformers", "trl", "peft"):
        assert dep in extras["llm"], dep
    assert "gymnasium" in extras["gym"] and "ray" in extras["ray"] and "vllm" in extras["vllm"]
    mapped = cfg["options"]["package_dir"]
    for name in PACKAGES[1:]:
        assert f"evotree.{name} = {name}" in mapped, name  # installed under the evotree namespace


def test_cpu_constraints_pin_torch() -> None:
    lines = [
        line.strip()
        for line in (ROOT / "constraints" / "cpu.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert "torch==2.13.0" in lines


def _bootstrap_dry_run(tmp_path: Path, *, gpu: bool) -> str:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    if gpu:
        fake = bin_dir / "nvidia-smi"
        fake.write_text("#!/bin/sh\necho 'GPU 0: Fake'\n")
        fake.chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "EVOTREE_BOOTSTRAP_DRY_RUN": "1",
        "EVOTREE_VENV": str(tmp_path / "venv"),
    }
    proc = subprocess.run(
        ["bash", str(ROOT / "scripts" / "bootstrap"), "dev,llm"],
        env=env,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_bootstrap_uses_cpu_constraints_without_gpu(tmp_path: Path) -> None:
    out = _bootstrap_dry_run(tmp_path, gpu=False)
    assert "-c constraints/cpu.txt" in out and "-e .[dev,llm]" in out


def test_bootstrap_skips_cpu_pin_with_gpu(tmp_path: Path) -> None:
    out = _bootstrap_dry_run(tmp_path, gpu=True)
    assert "constraints/cpu.txt" not in out and "-e .[dev,llm]" in out


def test_readme_opens_with_the_two_commands_and_ci_runs_the_test_one() -> None:
    readme = (ROOT / "README.md").read_text()
    assert readme.startswith("# evotree\n\n```bash\n"), "the README must open with the commands"
    first_block = readme.split("```")[1].splitlines()[1:]
    commands = [line.split("#")[0].strip() for line in first_block if line.split("#")[0].strip()]
    assert commands == ["make demo", "make test"]
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test" in ci
    makefile = (ROOT / "Makefile").read_text()
    assert "scripts/bootstrap" in makefile


@pytest.mark.parametrize("doc", ["docs/architecture.md", "docs/cli.md"])
def test_docs_exist(doc: str) -> None:
    assert len((ROOT / doc).read_text()) > 500
