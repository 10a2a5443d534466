"""The writer machinery the held-out trajectory sets (heldout4 to heldout8) share.

``render`` writes a played session in an agent's format, ``build`` plays a set's stories against
fresh task repositories and writes (or checks) its files and labels. Each set's ``render.py`` and
``build.py`` are thin modules that pass the kit what differs in that set, so every set still
rebuilds byte-identical.
"""
