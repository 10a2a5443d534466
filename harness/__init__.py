"""Running a version: export of the committed tree, train and judge phases, evidence, budgets,
the recorder SDK, TRL hooks, executors, and audits of what runs saw.

Reads the workspace and domains; never decides promotion (that is :mod:`evotree.gates`). Any Python
subprocess it starts goes through :mod:`evotree.core.proc` so user folders cannot shadow packages.
"""

from evotree.harness.recorder import Recorder, RecorderError, get_recorder

__all__ = ["Recorder", "RecorderError", "get_recorder"]
