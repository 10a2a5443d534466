"""Gate policy, evidence gates, human sign-off, signatures and ``verify``.

Reads the policy from the champion's tree, never from the candidate's copy.
"""

from evotree.gates.voids import register as _register_voids

_register_voids()  # the harness validates run.voided events through this layer's signed policy
