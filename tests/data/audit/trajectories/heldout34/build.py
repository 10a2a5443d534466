#!/usr/bin/env python
"""Write (default) or check (``--check``) the thirty-fourth held-out trajectory set (blind).

The player is the held-out sets' shared one (``../_kit/build.py``, which says what a build plays
and writes and what ``--check`` checks); this module names the set and what its build does its
own way.
"""

from __future__ import annotations

import sys
from pathlib import Path

_TRAJECTORIES = str(Path(__file__).resolve().parent.parent)  # the folder of the shared _kit
if _TRAJECTORIES not in sys.path:
    sys.path.append(_TRAJECTORIES)

from _kit import build as _kit  # noqa: E402

SET = _kit.load(
    __file__,
    "heldout34",
    token_keys=("base", "fix", "ancestor", "first", "abbr"),
)
FILES, LABELS, HIDDEN = SET.files, SET.labels, SET.hidden
file_text, build, check, replay = SET.file_text, SET.build, SET.check, SET.replay

if __name__ == "__main__":
    SET.main(__doc__ or "")
