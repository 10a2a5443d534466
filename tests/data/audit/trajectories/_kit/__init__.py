"""The machinery the held-out trajectory sets share.

``render`` writes a played session in an agent's format and ``build`` plays a set's stories
against fresh task repositories and writes (or checks) its files and labels: heldout4 to
heldout18 use both. ``repos`` holds the git helpers that build a set's task repositories and
the future index of what their bases do not reach: heldout5 to heldout18 use it (heldout4 keeps
its own). ``steps`` holds the format tables (file ending, working folder, rotation order, shell
histories) and step constructors (``B``, ``READ``, ``WRITE``, ``EDIT``, ``GREP``) the stories
are written with: heldout8 to heldout18 use it (heldout5 to heldout7 keep their own, which
differ: heldout5's working folders, their ``GREP`` without ``ignored``, their ``WEB`` step).
From heldout9 to heldout18 the kit also holds what each set's modules had copied from the set
before: ``build.load`` and the :class:`build.Set`'s commands (a set's ``build.py`` only names
itself and its options), ``steps.Stories`` (the story list with its format rotation, the honest
session and a leak's tail), ``steps.PYTEST`` and the agents' Python edits
(``steps.replace_text``, ``steps.replace_texts``), and ``repos.git_env_offline``,
``repos.Repo.base`` (with the set's ``pytest_ini``), ``repos.stamp``, ``repos.leftover``
and ``repos.exclude``.
Each set's ``render.py``, ``build.py``, ``repos.py`` and ``stories.py`` pass the kit or keep
what differs in that set (its clocks, versions, epoch, contents, doors and own steps), so every
set still rebuilds byte-identical.
"""
