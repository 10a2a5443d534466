"""``python -m evotree``: the CLI, protected against a user's own ``skills/`` or ``domains/``.

``python -m`` puts the current directory first on ``sys.path``; inside a user's repository
that would let a folder named ``skills/`` shadow evotree's package. Drop it (unless evotree
itself is being run from its own source folder) before anything else is imported.
"""

import os
import sys
from pathlib import Path

_here = Path(__file__).resolve().parent.parent
if sys.path and sys.path[0] in ("", os.getcwd()) and Path(sys.path[0] or ".").resolve() != _here:
    del sys.path[0]

from evotree.cli.main import main  # noqa: E402

if __name__ == "__main__":
    main()
