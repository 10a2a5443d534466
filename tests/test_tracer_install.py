"""The seccomp tracer is built by the install (into the venv), found there first, and never taken
from a folder someone else could write."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from evotree.harness import sandbox, sandbox_tracer_build


def test_the_installed_tracer_is_used_and_a_writable_folder_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if sandbox_tracer_build.find_compiler() is None:
        pytest.skip("no C compiler here: strace is the fallback (sandbox.NO_COMPILER)")
    folder = tmp_path / "libexec"
    built = sandbox.build_tracer(folder)
    assert built is not None and built.parent == folder and os.access(built, os.X_OK)
    assert (folder.stat().st_mode & 0o777) == 0o700
    monkeypatch.setattr(sandbox, "INSTALLED_TRACER_DIR", folder)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "no-cache"))
    assert sandbox.compiled_tracer() == built
    assert not (tmp_path / "no-cache").exists()  # nothing built again at first use
    folder.chmod(
        0o777
    )  # a folder others may write: its binary is not trusted, one is built privately
    again = sandbox.compiled_tracer()
    assert again is not None and again.parent == tmp_path / "no-cache" / "evotree"


def test_the_build_step_of_the_install_says_where_it_put_the_tracer() -> None:
    proc = subprocess.run(
        [sys.executable, "-P", "-m", "evotree.harness.sandbox", "build-tracer"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if sandbox_tracer_build.find_compiler() is None:
        assert proc.returncode == 1 and "C compiler" in proc.stderr
    else:
        assert proc.returncode == 0 and Path(proc.stdout.strip()).name.startswith("seccomp-trace-")
