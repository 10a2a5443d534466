"""The policy's process imports only the evotree modules it runs.

``python -m evotree.domains.gym.worker`` imports the ``evotree.domains.gym`` package first; its
``__init__`` imports the judge's settings, templates and references only where they are used,
so a policy process does not load (or, without bytecode, compile) them at every start
(docs/benchmarks/gym-judge.md, "Policy process start-up").
"""

from __future__ import annotations

import json
import subprocess
import sys

from evotree.domains.gym.runner import worker_env

#: what the policy's process imports of evotree before it is ready (the worker's ``main`` adds
#: ``catalog``, ``epg`` and ``episode``); a new one here is a cost at every policy start
ALLOWED = {
    "evotree",
    "evotree.core",
    "evotree.core.errors",
    "evotree.domains",
    "evotree.domains.gym",
    "evotree.domains.gym.catalog",
    "evotree.domains.gym.epg",
    "evotree.domains.gym.episode",
    "evotree.domains.gym.wire",
    "evotree.domains.gym.worker",
}

_LIST = (
    "import json, sys\n"
    "import evotree.domains.gym.worker\n"
    "from evotree.domains.gym import catalog, epg, episode\n"
    "print(json.dumps(sorted(m for m in sys.modules if m.startswith('evotree'))))\n"
)


def _evotree_modules(code: str) -> set[str]:
    """The evotree modules a fresh interpreter has loaded after running ``code``."""
    proc = subprocess.run(
        [sys.executable, "-P", "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env=worker_env(),
        check=True,
    )
    return set(json.loads(proc.stdout))


def test_policy_process_imports_none_of_the_judges_modules() -> None:
    loaded = _evotree_modules(_LIST)
    assert loaded <= ALLOWED, sorted(loaded - ALLOWED)
    assert "evotree.domains.gym.settings" not in loaded


def test_package_names_still_import() -> None:
    """The package's own names load what they need when used, not at import."""
    code = (
        "import json, sys\n"
        "from evotree.domains.gym import JUDGE_FILE, POLICY_FILE, materialize, references_text\n"
        "assert callable(materialize) and callable(references_text)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('evotree'))))\n"
    )
    loaded = _evotree_modules(code)
    assert "evotree.domains.gym.templates" not in loaded
    assert "evotree.domains.gym.scoring" not in loaded
