"""The core layer: errors, ref names, the git layer, the ledger, the workspace, its config, the
version-tree verbs and the record types every layer shares (findings, JSON schemas).

Nothing here imports any other evotree package: every layer above builds on it
(``tests/test_layers.py`` checks the rule).
"""

__version__ = "0.1.0"
