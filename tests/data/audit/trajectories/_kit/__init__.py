"""The machinery the held-out trajectory sets share.

``render`` writes a played session in an agent's format and ``build`` plays a set's stories
against fresh task repositories and writes (or checks) its files and labels: heldout4 to
heldout11 use both. ``repos`` holds the git helpers that build a set's task repositories and
the future index of what their bases do not reach: heldout5 to heldout11 use it (heldout4 keeps
its own). ``steps`` holds the format tables (file ending, working folder, rotation order, shell
histories) and step constructors (``B``, ``READ``, ``WRITE``, ``EDIT``, ``GREP``) the stories
are written with: heldout8 to heldout11 use it (heldout5 to heldout7 keep their own, which
differ: heldout5's working folders, their ``GREP`` without ``ignored``, their ``WEB`` step).
Each set's ``render.py``, ``build.py``, ``repos.py`` and ``stories.py`` pass the kit or keep
what differs in that set (its clocks, versions, epoch, contents, doors and own steps), so every
set still rebuilds byte-identical.
"""
