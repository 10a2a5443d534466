"""Gate policy, evidence gates, human sign-off, signatures, ``verify`` and the trust root.

Reads the policy from the champion's tree, never from the candidate's copy. Importing this
package has no side effect: what the layers below need from it is passed in by the verb layer.
"""
