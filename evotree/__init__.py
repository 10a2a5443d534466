"""evotree: a git-native version-tree experiment manager for RL post-training.

``import evotree`` gives the Python API (:mod:`evotree.api`): ``evotree.open``, ``evotree.init``,
``evotree.branch``, ``evotree.run``, ``evotree.compare``, ``evotree.diagnose``, ``evotree.query_df``, …
(see ``docs/api.md``). The names are loaded on first use, so importing ``evotree`` stays cheap:
trainer agents call the CLI hundreds of times.

The installed packages, by layer (``docs/architecture.md``): :mod:`evotree.core` at the bottom;
:mod:`evotree.skills`, :mod:`evotree.memory`; :mod:`evotree.harness`; :mod:`evotree.domains` and
:mod:`evotree.diagnostics`; :mod:`evotree.gates`; the application (:mod:`evotree.report`,
:mod:`evotree.api`, :mod:`evotree.demo`, :mod:`evotree.cli`) on top.
"""

from typing import Any

from evotree.core import __version__

__all__ = [
    "InitResult",
    "PruneResult",
    "TreeView",
    "VersionDetail",
    "Workspace",
    "__version__",
    "abandon",
    "branch",
    "compare",
    "diagnose",
    "gates",
    "init",
    "log",
    "merge",
    "open",
    "prune_worktrees",
    "query",
    "query_df",
    "restore_worktree",
    "run",
    "runs",
    "show",
    "tree",
]


def __getattr__(name: str) -> Any:
    """Load the API on first use of one of its names (PEP 562)."""
    if name in __all__:
        import evotree.api as api

        return getattr(api, name)
    raise AttributeError(f"module 'evotree' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
