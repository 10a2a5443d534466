"""`evotree init` says what it did with files it moved: judge files leave the checkout with a line."""

from __future__ import annotations

from pathlib import Path

from conftest import Cli, make_repo


def test_init_names_the_judge_files_it_moved_out_of_the_checkout(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "w", commit=False)
    (repo / "judge").mkdir()
    (repo / "judge" / "eval.py").write_text("print('judge')\n")
    (repo / "evotree.toml").write_text(
        '[eval]\ncommand = "python judge/eval.py"\njudge_paths = ["judge/"]\n'
    )
    out = Cli(repo)("init").output
    assert "moved 1 judge file(s)" in out and "judge/eval.py" in out and "refs/evotree/judge" in out
    assert not (repo / "judge" / "eval.py").exists()
