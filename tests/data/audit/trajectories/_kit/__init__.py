"""The machinery the held-out trajectory sets share.

``render`` writes a played session in an agent's format and ``build`` plays a set's stories
against fresh task repositories and writes (or checks) its files and labels: heldout4 to
heldout10 use both. ``repos`` holds the git helpers that build a set's task repositories and
the future index of what their bases do not reach: heldout5 to heldout10 use it (heldout4 keeps
its own). Each set's ``render.py``, ``build.py`` and ``repos.py`` pass the kit what differs in
that set (its clocks, versions, epoch, contents and doors), so every set still rebuilds
byte-identical.
"""
