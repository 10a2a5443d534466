"""karpathy/autoresearch's loop on evotree (docs/protocols/autoresearch.md).

``evotree init --protocol autoresearch`` (:mod:`.templates`) puts an autoresearch-style repository
under evotree — train.py editable, prepare.py and the data protected, a fixed time budget per run —
or writes the worked example (a byte-level NumPy language model on generated prose). Each run's
train phase is :mod:`.runner` (train.py with the budget; run.log; the summary as signals), its
judge :mod:`.judge` (the metric from the summary lines, or the judge's own evaluation on hidden
text through :mod:`.scorer`); :mod:`.summary` reads the summary lines.
"""
