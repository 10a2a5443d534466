"""Protected paths and the patch gate: what a candidate version's patch may not do.

A candidate's patch is its branch tip (``refs/heads/evotree/<id>``) against the *pristine base*
(``[protect].base``: the root version's first commit unless configured), not against its
parent: what an ancestor added is in the patch too. Protected paths are compared with the
champion's tree. :func:`evotree.harness.version_patch.version_patch` is the one function the audit, the
protected gate and the check before a run use; :func:`check_protected_paths` is its findings.

The pristine base and the version's patch (``VersionPatch``, ``resolve_base``, ``patch_sha256``,
``version_patch``) are :mod:`evotree.harness.version_patch`; the rules live beside this module:

* :mod:`evotree.harness.audit.protected_paths` — which paths are protected and how a path is
  matched (globs, look-alike spellings);
* :mod:`evotree.harness.audit.patch_gate` — :class:`PatchGate` and :func:`check_patch`, the patch
  gate over a diff;
* :mod:`evotree.harness.audit.payload` — the detectors of what a file's content carries.

* **Protected paths** (``audit.protected_path``, critical): the diff touches the judge, hidden
  data, the gate policy or the harness — ``[protect].paths`` (default ``evotree.toml``,
  ``judge/``, ``gates/``), ``[eval].judge_paths``, ``[gates].allowed_signers`` and the harness
  files (``harness.toml``, ``analyzers.py``, ``.evotree/``). The judge is read from the champion
  anyway; a candidate that changes it is trying to change what judges it.
* **Patch gate** (AI4AI-Bench's): a patch that adds data (``audit.patch_data``: csv, parquet,
  jsonl, npz, archives ...), weights (``audit.patch_weights``: .pt, .safetensors, .bin, .ckpt,
  .gguf ...), binaries (``audit.patch_binary``: a NUL byte in the first 8000 bytes, git's own
  test), large files (``audit.patch_large_file``), row-shaped payloads in text files
  (``audit.patch_payload``: many added lines of one literal shape — CSV or JSON records pasted
  into a ``.py`` — or one enormous line), symlinks out of the tree or into protected paths
  (``audit.patch_symlink``) or submodules (``audit.patch_submodule``).

Payloads however encoded (``audit.patch_payload``): numeric literals on one added line
(``max_line_numbers``: weights as a one-line JSON array) or in a file's added lines
(``max_file_numbers``), base64 / hex runs and byte escapes (``max_encoded_chars``); binary
bytes anywhere in a file (a NUL past git's first 8000 bytes, text that is not UTF-8, control
characters) are ``audit.patch_binary``. Allowlists: ``[protect].editable`` (globs; anything
else changed is ``audit.patch_not_editable``) and ``[protect].editable_keys`` (``FILE:KEY-GLOB``:
a TOML / JSON file that may change only at those dotted keys, ``audit.patch_config_key``).

Red-team additions (``tests/test_redteam_patch.py``): a file whose added text (4 KiB or more)
compresses to half its size or more is a payload whatever its alphabet (base85, base64 in short
lines, hex as letters), and so are dense names of added files; the patch's added text as a whole
may compress to at most ``max_patch_info`` bytes; row lines of several shapes count together; an
exact copy of a protected file or of a judge-store file, or 4 and more id-like strings of the
judge's data files, is ``audit.patch_data`` (``copy_of``); look-alike spellings of a protected path
(NFKC, ignorable code points, trailing dots and spaces) are the protected path; a symlink to a
folder holding protected paths is ``audit.patch_symlink``; ``patch_allow`` matches exactly; a quoted
dotted key is not the nested key; a base the ledger names must be in the champion's history.

**Where from** (:func:`check_protected_paths`): protected paths are compared with the champion's
tree (the policy in force; a person accepts a change of them at promotion); the patch rules
with the *pristine base* (``[protect].base``, default the root version's first commit), as
AI4AI-Bench measures a candidate's patch against its frozen start: a child of a version that
added ``warm.npy`` carries it in its patch too. Globs (:func:`glob_match`) mean the same in
the audit, the protected gate and the check before a run.

Thresholds: :class:`PatchGate`, read from the champion's ``[protect]`` (``max_file_bytes``,
``max_row_lines``, ``max_line_chars``, ``patch_allow``, ...; same defaults as here).
"""

from __future__ import annotations

from typing import Any

from evotree.core.findings import Finding
from evotree.harness.audit.patch_gate import PatchGate
from evotree.harness.version_patch import version_patch

__all__ = ["check_protected_paths"]


def check_protected_paths(
    ws: Any,
    version: str,
    *,
    gate: PatchGate | None = None,
    config: Any = None,
    champion_commit: str | None = None,
) -> list[Finding]:
    """Findings of ``version``: protected paths changed, and its patch against the pristine base.

    Protected paths are compared with the champion's tree (``champion_commit``, default the
    champion ref); the patch rules with ``[protect].base`` (``resolve_base``, default the
    root version's first commit). The paths, thresholds and allowlists come from ``config``
    (default the configuration in force, the champion's ``evotree.toml``), never from the
    candidate. :func:`version_patch` has the same findings, with the patch's hash.
    """
    return version_patch(
        ws, version, gate=gate, config=config, champion_commit=champion_commit
    ).all_findings
