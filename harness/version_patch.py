"""A version's patch against the pristine base: what it changes, its hash, what the rules say.

AI4AI-Bench measures a candidate as one source patch applied to the frozen start and retrained
from scratch; the patch is checked before the retrain. Here the *base* is ``[protect].base``
of the configuration in force (default ``"root"``: the first commit of the root version ``v0``,
recorded in the ledger at ``evotree init`` and never moved), so a child of a version that
added ``warm.npy`` carries ``warm.npy`` in its own patch. One function, :func:`version_patch`
(defined in :mod:`evotree.harness.audit.protected`, re-exported here), serves the audit
(``audit.patch_*`` findings), the protected gate and the check before a run.

The patch hash (:attr:`VersionPatch.sha256`) is the SHA-256 of a canonical listing of the tree
delta base -> candidate (no rename detection; one line per changed path with modes and blob
ids, which are git's content hashes), preceded by both tree ids. ``git diff`` text is not
hashed: its bytes depend on the local git configuration and on id abbreviation.
"""

from __future__ import annotations

from evotree.harness.audit.protected import (
    BLOCKING,
    PATCH_FORMAT,
    VersionPatch,
    patch_digest,
    patch_sha256,
    resolve_base,
    version_patch,
)

__all__ = [
    "BLOCKING",
    "PATCH_FORMAT",
    "VersionPatch",
    "patch_digest",
    "patch_sha256",
    "resolve_base",
    "version_patch",
]
