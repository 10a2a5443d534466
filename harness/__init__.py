"""Running a version: export of the committed tree, train and judge phases, evidence, budgets,
the recorder SDK, seeding from the run's seed, TRL hooks, executors, and audits of what runs saw.

Reads the workspace and domains; never decides promotion (that is :mod:`evotree.gates`). Any Python
subprocess it starts goes through :mod:`evotree.core.proc` so user folders cannot shadow packages.
"""

from evotree.harness.recorder import Recorder, RecorderError, get_recorder
from evotree.harness.seeding import seed_everything

__all__ = ["Recorder", "RecorderError", "get_recorder", "seed_everything"]
