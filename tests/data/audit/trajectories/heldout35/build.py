#!/usr/bin/env python
"""Write (default) or check (``--check``) the thirty-fifth held-out trajectory set (blind).

The player is the held-out sets' shared one (``../_kit/build.py``, which says what a build plays
and writes and what ``--check`` checks); this module names the set and what its build does its
own way: the labels' meta row also says which hidden paths are doors (``doors``: a tool's
leftovers, ``repos.DOORS``); the others are the grader's data.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

_TRAJECTORIES = str(Path(__file__).resolve().parent.parent)  # the folder of the shared _kit
if _TRAJECTORIES not in sys.path:
    sys.path.append(_TRAJECTORIES)

from _kit import build as _kit  # noqa: E402

SET = _kit.load(
    __file__,
    "heldout35",
    token_keys=("base", "fix", "ancestor", "first", "readme"),
)
FILES, LABELS, HIDDEN = SET.files, SET.labels, SET.hidden
DOORS = list(SET.repos.DOORS)
file_text = SET.file_text


def _meta_with_doors(labels: Path) -> None:
    """The meta row gets ``doors`` right after ``hidden_paths``."""
    rows = labels.read_text().splitlines()
    meta = {}
    for key, value in json.loads(rows[0]).items():
        meta[key] = value
        if key == "hidden_paths":
            meta["doors"] = DOORS
    rows[0] = json.dumps(meta, sort_keys=False)
    labels.write_text("".join(r + "\n" for r in rows))


def build(scratch: Path, files: Path | None = None, labels: Path | None = None) -> None:
    """Play every story and write the set's files and labels (scratch: repositories, copies)."""
    _kit.build(SET, scratch, files, labels)
    _meta_with_doors(labels or LABELS)


def check(scratch: Path, labels: Path | None = None, files: Path | None = None) -> list[str]:
    """Problems of the committed set against freshly built repositories (empty: all good)."""
    labels = labels or LABELS
    problems = _kit.check(SET, scratch, labels, files)
    meta = json.loads(labels.read_text().splitlines()[0])
    if meta.get("doors") != DOORS or not set(DOORS) < set(meta["hidden_paths"]):
        problems.append(f"meta: doors {meta.get('doors')} are not {DOORS} within the hidden paths")
    return problems


def replay(scratch: Path, labels: Path | None = None, files: Path | None = None) -> list[str]:
    """Build the set again under scratch; the committed files that differ from it, byte for
    byte."""
    files, labels = files or FILES, labels or LABELS
    out = scratch / "replay"
    build(scratch / "build", out / "files", out / "labels.jsonl")
    problems = []
    if (out / "labels.jsonl").read_bytes() != labels.read_bytes():
        problems.append("labels.jsonl: differs from a fresh build")
    fresh = {p.name for p in (out / "files").iterdir()}
    for name in sorted(fresh | {p.name for p in files.iterdir()}):
        a, b = out / "files" / name, files / name
        if not a.exists() or not b.exists() or a.read_bytes() != b.read_bytes():
            problems.append(f"{name}: differs from a fresh build")
    return problems


def main() -> None:
    """Write the set, or check it (``--check``, ``--labels-only``)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--check",
        action="store_true",
        help="check the committed files against the labels and against a fresh build",
    )
    parser.add_argument(
        "--labels-only", action="store_true", help="with --check: skip the fresh build"
    )
    args = parser.parse_args()
    os.umask(0o022)
    with tempfile.TemporaryDirectory(prefix=f"{SET.name}-") as tmp:
        if args.check:
            problems = check(Path(tmp) / "check")
            if not args.labels_only:
                problems += replay(Path(tmp))
            for p in problems:
                print(p)
            print(f"{len(problems)} problem(s)")
            raise SystemExit(1 if problems else 0)
        build(Path(tmp))
        print(f"wrote {len(SET.stories.STORIES)} files to {FILES}")


if __name__ == "__main__":
    main()
