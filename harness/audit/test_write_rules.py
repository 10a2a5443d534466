"""The test-write rule of the leak audit (``audit.test_write``): what a command writes, moves,
deletes or edits in place (redirections, ``cp``/``mv`` targets, ``sed -i``, ``git rm``, ...), and
whether that is a test file, a test folder or an import hook (``conftest.py``, ``*.pth``)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from evotree.harness.audit.git_argv import _git_split
from evotree.harness.audit.hits import Hit
from evotree.harness.audit.lexer import SimpleCommand, _basename

__all__ = ["test_write_hits"]


_WRITE_LAST = frozenset({"cp", "install", "ln", "rsync"})


_WRITE_ALL = frozenset({"touch", "rm", "truncate", "unlink", "shred", "tee", "mv"})


_WRITERS = _WRITE_LAST | _WRITE_ALL | {"dd", "sed", "perl", "git", "patch", "find"}


_CACHE_PATH = re.compile(
    r"(?:^|/)(__pycache__|\.pytest_cache|\.mypy_cache|\.ruff_cache)(?:/|$)|\.py[co]$"
)


_TEST_DIR = re.compile(r"(?:^|/)(tests?|testing)/")


_TEST_NAMES = re.compile(r"(?:^|/)(conftest\.py|sitecustomize\.py|usercustomize\.py|[^/]+\.pth)$")


_TEST_FILE = re.compile(r"(?:^|/)(test_[^/]*\.py|[^/]*_tests?\.py)$")


_OUT_REDIRS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})


def _write_targets(argv: Sequence[str], redirects: Sequence[tuple[str, str]]) -> list[str]:
    targets = [t for op, t in redirects if op in _OUT_REDIRS and t]
    if not argv:
        return targets
    name = _basename(argv[0])
    args = [a for a in argv[1:] if not a.startswith("-")]
    if name in _WRITE_LAST and args:
        target = next(
            (argv[k + 1] for k, a in enumerate(argv[:-1]) if a in ("-t", "--target-directory")),
            None,
        )
        targets.append(target or args[-1])
    elif name in _WRITE_ALL:
        targets += args
    elif name == "dd":
        targets += [a[3:] for a in argv[1:] if a.startswith("of=")]
    elif name == "find" and (
        "-delete" in argv or any(a in ("rm", "unlink", "shred") for a in argv)
    ):
        roots = []
        for a in argv[1:]:
            if a.startswith(("-", "(", "!")):
                break
            roots.append(a.rstrip("/") + "/")
        targets += roots
    elif name in ("sed", "perl") and any(
        a == "-i"
        or a.startswith(("-i", "--in-place"))
        or (name == "perl" and a.startswith("-") and "i" in a)
        for a in argv[1:]
    ):
        has_e = any(a in ("-e", "--expression") for a in argv[1:])
        targets += args if has_e else args[1:]
    elif name == "git" and len(argv) > 1:
        sub, rest = _git_split(argv)
        if sub in ("rm", "mv"):
            targets += [a for a in rest if not a.startswith("-")]
    elif name == "patch":
        targets += args[:1]
    return targets


def test_write_hits(name: str, cmd: SimpleCommand, joined: str) -> list[Hit]:
    """The first test file, test folder or import hook the command writes (high; a
    ``test_*.py`` elsewhere: warn); caches (``__pycache__``, ``.pytest_cache``) are no test."""
    targets = _write_targets(cmd.argv, cmd.redirects) if cmd.redirects or name in _WRITERS else ()
    for target in targets:
        clean = target.strip()
        if clean.startswith("./"):
            clean = clean[2:]
        if _CACHE_PATH.search(clean):
            continue
        if _TEST_NAMES.search(clean) or _TEST_DIR.search(clean):
            verb = "deletes" if name in ("rm", "unlink", "shred") else "writes"
            return [Hit("audit.test_write", "high", f"{verb} {clean[:80]}", joined)]
        if _TEST_FILE.search(clean):
            return [Hit("audit.test_write", "warn", f"writes a test file {clean[:80]}", joined)]
    return []
