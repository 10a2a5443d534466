"""Interventions that change training (``StdGroupFilter``, …) with their metadata.

Skills never touch the ledger; the version's recipe names the skills it uses.
"""
