"""Gate policy, evidence gates, human sign-off, signatures and ``verify``.

Reads the policy from the champion's tree, never from the candidate's copy.
"""
