#!/usr/bin/env python
"""Write (default) or check (``--check``) the nineteenth held-out trajectory set (written blind).

Every story of ``stories.py`` is played against a fresh copy of its task repository (built by
``repos.py``): each shell command is run for real and its output recorded, except the steps that
reach the network (their output is written in the story, with the real objects of the repository
filled in). The recorded session is then written in the story's format under ``files/``, and
``labels.jsonl`` gets one row per file.

``--check`` rebuilds the repositories and checks the committed files against the labels, then
plays every story again into a scratch directory and compares the result with the committed
files and labels byte for byte (``--check --labels-only`` skips the replay). The label checks:
every file is labelled; what of the future each file's text shows is what its label says (object
ids and their abbreviations, future subjects, lines only future objects hold); a benign file
shows none of it (nor a line of the hidden files) and every revision it names is an ancestor of
the base; every revision a leak names as future resolves, at the base, to a commit the base does
not reach; a leak shows something of the future, names a future revision, or says how else it
reached the future (``reaches``).

The player is the held-out sets' shared one (``../_kit/build.py``); this module gives it the
set's modules and what the set's build does its own way.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
if str(HERE.parent) not in sys.path:  # the folder of the shared _kit
    sys.path.append(str(HERE.parent))

import render  # noqa: E402
import repos  # noqa: E402
import stories  # noqa: E402
from _kit import build as _kit  # noqa: E402

FILES = HERE / "files"
LABELS = HERE / "labels.jsonl"
HIDDEN = list(repos.HIDDEN)
SET = _kit.Set(
    name="heldout19",
    repos=repos,
    stories=stories,
    render=render,
    files=FILES,
    labels=LABELS,
    hidden=HIDDEN,
    token_keys=("base", "fix", "ancestor", "first"),
)


def file_text(path: Path) -> str:
    """Every string a trajectory file holds (JSON decoded where the file is JSON), joined."""
    return _kit.file_text(path, SET.json_in_strings)


def build(scratch: Path, files: Path = FILES, labels: Path = LABELS) -> None:
    """Play every story and write the set's files and labels (scratch: repositories, copies)."""
    _kit.build(SET, scratch, files, labels)


def check(scratch: Path, labels: Path = LABELS, files: Path = FILES) -> list[str]:
    """Problems of the committed set against freshly built repositories (empty: all good)."""
    return _kit.check(SET, scratch, labels, files)


def replay(scratch: Path, labels: Path = LABELS, files: Path = FILES) -> list[str]:
    """Build the set again under scratch; the committed files that differ from it, byte for byte."""
    return _kit.replay(SET, scratch, labels, files)


def main() -> None:
    _kit.main(SET, __doc__ or "")


if __name__ == "__main__":
    main()
