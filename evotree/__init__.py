"""evotree: a git-native version-tree experiment manager for RL post-training.

Kept import-light on purpose: trainer agents call the CLI hundreds of times, so importing
``evotree`` loads nothing heavy. Library entry points live in their modules
(``evotree.workspace``, ``evotree.versions``, ``evotree.ledger``, ``evotree.config``).
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
