"""Protected paths: which paths a candidate's patch may not change, and how a path is matched.

Protected paths (``audit.protected_path``, critical) are ``[protect].paths`` (default
``evotree.toml``, ``judge/``, ``gates/``), ``[eval].judge_paths``, ``[gates].allowed_signers`` and
the analyzers' files (:data:`ANALYZER_PATHS`). Globs (:func:`glob_match`) mean the same in the audit,
the protected gate and the check before a run; a look-alike spelling of a protected path (NFKC,
ignorable code points, case, trailing dots and spaces) is the protected path (:func:`_canonical`).
Used by :mod:`evotree.harness.audit.patch_gate` and :mod:`evotree.harness.version_patch`.
"""

from __future__ import annotations

import fnmatch
import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any

import pygit2

from evotree.core.findings import Finding
from evotree.core.globs import glob_regex

__all__ = ["ANALYZER_PATHS", "glob_match", "protected_patterns", "protected_touches"]

#: Files of the analyzers (an analyzer version's thresholds and plug-ins; ``harness.toml`` is
#: the thresholds file's persisted name) a policy branch has no business changing.
ANALYZER_PATHS = ("harness.toml", "analyzers.py", ".evotree/")
#: how many paths a finding lists
_SAMPLE = 20


def protected_patterns(config: Any) -> list[str]:
    """Every protected path of a configuration: protect.paths, judge paths, signers, the policy
    file itself (even where ``paths`` leaves it out) and the analyzers' files."""
    patterns = [*config.protect.paths, *config.eval.judge_paths]
    signers = getattr(config.gates, "allowed_signers", "")
    if signers:
        patterns.append(signers)
    patterns.append("evotree.toml")
    patterns += ANALYZER_PATHS
    return list(dict.fromkeys(p for p in patterns if p))


def glob_match(path: str, pattern: str, *, fold: bool = False) -> bool:
    """Whether ``pattern`` covers the repository path ``path``.

    Patterns are anchored at the repository root. ``dir/`` (or a pattern that names a folder)
    covers everything under it; ``**`` crosses folders (``data/**``, ``**/helper.py``); ``*``,
    ``?`` and ``[...]`` / ``[!...]`` match within one path segment. ``fold``: ignore case.
    """
    bare = pattern.rstrip("/")
    if not bare:
        return False
    regex = glob_regex(bare, fold=fold)
    if regex.fullmatch(path):
        return True
    parts = path.split("/")
    return any(regex.fullmatch("/".join(parts[:k])) for k in range(1, len(parts)))


#: code points file systems ignore in names (HFS+) or that render as nothing: ``ju\u200cdge/``
_IGNORABLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    "\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]"
)


def _canonical(path: str) -> str:
    """The name a forgiving file system would read: NFKC (NFD and full-width forms fold), no
    ignorable code points, case folded, trailing dots and spaces of each segment dropped (what
    Windows does). A protected path written any of these ways is the protected path."""
    text = _IGNORABLE.sub("", unicodedata.normalize("NFKC", path)).casefold()
    return "/".join(
        seg if seg in (".", "..") else (seg.rstrip(" .") or seg) for seg in text.split("/")
    )


def _match(path: str, patterns: Iterable[str]) -> str | None:
    """The first protected pattern that covers ``path``: :func:`glob_match` ignoring case, or
    (as before) ``fnmatch`` where ``*`` also crosses folders: a denylist errs on the wide side.
    The path is also compared in its :func:`_canonical` form (look-alike spellings of a
    protected path that a file system would merge with it)."""
    canonical = _canonical(path)
    for pattern in patterns:
        bare = pattern.rstrip("/")
        if (
            glob_match(path, pattern, fold=True)
            or fnmatch.fnmatchcase(path, pattern)
            or fnmatch.fnmatchcase(path, bare + "/*")
        ):
            return pattern
        if canonical != path and bare and glob_match(canonical, _canonical(bare), fold=True):
            return pattern
    return None


def _editable(path: str, patterns: Iterable[str]) -> bool:
    """An allowlist matches exactly: case-sensitive, ``*`` within one folder."""
    return any(glob_match(path, p) for p in patterns)


def protected_touches(
    repo: pygit2.Repository, old: pygit2.Commit, new: pygit2.Commit, protected: Sequence[str]
) -> list[dict[str, Any]]:
    """``{path, status, pattern}`` of every file under a protected pattern that differs between the trees."""
    diff = repo.diff(old.tree, new.tree)
    diff.find_similar()
    touched: list[dict[str, Any]] = []
    for delta in diff.deltas:
        for path in dict.fromkeys([delta.old_file.path, delta.new_file.path]):
            pattern = _match(path, protected)
            if pattern is not None:
                touched.append({"path": path, "status": delta.status_char(), "pattern": pattern})
                break
    return touched


def _protected_finding(
    touched: list[dict[str, Any]], common: dict[str, str], version: str | None
) -> Finding:
    return Finding(
        layer="audit",
        code="audit.protected_path",
        severity="critical",
        title=f"the candidate changes {len(touched)} protected path(s): "
        f"{', '.join(t['path'] for t in touched[:3])}{' ...' if len(touched) > 3 else ''}",
        evidence={**common, "count": len(touched), "paths": touched[:_SAMPLE]},
        suggestion="revert the changes to the judge, hidden data, gates and harness on the candidate's "
        "branch; change them on the champion (a reviewed promotion), never from a candidate",
        version=version,
    )


def _holds_protected(folder: str, patterns: Iterable[str]) -> str | None:
    """The first protected pattern under the folder ``folder`` (``.`` is the root): a link to
    ``.`` or to ``evo`` (holding ``evo/judge/``) reads protected files through the link."""
    canon = _canonical(folder)
    for pattern in patterns:
        bare = _canonical(pattern.rstrip("/"))
        if canon in ("", ".") or bare.startswith(canon + "/"):
            return pattern
    return None
