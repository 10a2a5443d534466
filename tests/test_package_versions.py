"""run.json's ``packages``: read from the dist-info folders along sys.path without importing
importlib.metadata, and the same answers importlib.metadata gives."""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path

import pytest

from evotree.harness import records
from evotree.harness.records import package_versions


def _reference() -> dict[str, str]:
    found = {}
    for name, distribution in records._PACKAGES.items():
        try:
            found[name] = metadata.version(distribution)
        except (metadata.PackageNotFoundError, FileNotFoundError):
            # not installed; or a folder with no METADATA: importlib.metadata answers None or,
            # once importlib_metadata's finder is loaded (a suite imports it), MetadataNotFound
            continue
    return found


def test_the_installed_packages_read_as_importlib_metadata_reads_them() -> None:
    versions = package_versions()
    assert versions == {k: v for k, v in _reference().items() if v is not None}
    assert "evotree" in versions and "duckdb" in versions


def _dist(folder: Path, dirname: str, version: str, *, egg: bool = False) -> None:
    target = folder / dirname
    target.mkdir(parents=True)
    header = f"Metadata-Version: 2.1\nName: x\nVersion: {version}\n\nVersion: 9.9.9 (the body)\n"
    (target / ("PKG-INFO" if egg else "METADATA")).write_text(header)


def test_first_on_the_path_wins_with_names_normalized(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    _dist(first, "Evotree_RL-7.0.dist-info", "7.0")  # case and separator differ from evotree-rl
    _dist(second, "evotree_rl-8.0.dist-info", "8.0")
    _dist(
        second, "trl.egg-info", "3.1", egg=True
    )  # an egg-info folder: PKG-INFO, no version in its name
    # a folder without METADATA: importlib.metadata answers None for it, this reads it as not
    # installed (run.json's packages are strings)
    (second / "peft-1.0.dist-info").mkdir()
    (first / "not-a-folder.txt").write_text("x")
    monkeypatch.setattr(sys, "path", [str(tmp_path / "missing"), str(first), str(second)])
    versions = package_versions()
    assert versions == {"evotree": "7.0", "trl": "3.1"}
    assert versions == {k: v for k, v in _reference().items() if v is not None}
