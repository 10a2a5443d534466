"""What the tree learned: skill verifications, lessons, negative evidence, incidents.

Kept on ``refs/evotree/memory`` with the same mechanics as the ledger.
"""
