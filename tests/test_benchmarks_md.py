"""BENCHMARKS.md is generated from the summary records in bench/results: it must be current,
and a record that cannot be shown (a long cell, an unknown verdict, a missing page) is refused."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location(
    "make_benchmarks", ROOT / "bench" / "make_benchmarks.py"
)
make_benchmarks = importlib.util.module_from_spec(_spec)
sys.modules["make_benchmarks"] = make_benchmarks
_spec.loader.exec_module(make_benchmarks)


def test_benchmarks_md_is_what_the_records_say() -> None:
    assert make_benchmarks.main(["--check"]) == 0, (
        "BENCHMARKS.md is stale: run `make benchmarks-md`"
    )


def test_the_screen_fits_one_screen_and_every_row_has_a_page() -> None:
    rows = make_benchmarks.collect()
    assert rows, "no summary records in bench/results"
    assert len(make_benchmarks.render(rows).splitlines()) <= 60
    for row in rows:
        assert (ROOT / row.page).is_file(), row
        assert (ROOT / row.script).is_file(), row


def _record(tmp_path: Path, **target: str) -> Path:
    record = {
        "benchmark": "x",
        "script": "bench/make_benchmarks.py",
        "command": "x",
        "date": "2026-12-04",
        "commit": "abc",
        "page": "docs/benchmarks/README.md",
        "targets": [{"target": "t", "figure": "f", "verdict": "met", **target}],
    }
    path = tmp_path / "x.json"
    path.write_text(json.dumps(record))
    return path


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"verdict": "great"}, "verdict must be one of"),
        ({"figure": "x" * 200}, "characters \\(at most"),
        ({"target": "a | b"}, "may not contain"),
        ({"figure": ""}, "non-empty string"),
    ],
)
def test_a_record_that_cannot_be_shown_is_refused(
    tmp_path: Path, bad: dict, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(make_benchmarks, "ROOT", tmp_path)
    (tmp_path / "docs" / "benchmarks").mkdir(parents=True)
    (tmp_path / "docs" / "benchmarks" / "README.md").write_text("x")
    with pytest.raises(make_benchmarks.RecordError, match=message):
        make_benchmarks.rows_of(_record(tmp_path, **bad))


def test_a_raw_output_without_targets_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "raw.json"
    path.write_text(json.dumps({"samples": [1, 2, 3]}))
    assert make_benchmarks.rows_of(path) == []
