"""A step's hits judged by its own output and the steps before it: git printed only an error
(nothing shown), ``git branch -v`` listed only the current branch, the upstream named is the one
``git status`` showed at HEAD, a walk of every reference ran inside a single-branch clone the
trajectory made of the task repository.
"""

from __future__ import annotations

import os
import re
from typing import Any

from evotree.harness.audit.commands import Hit
from evotree.harness.audit.git_argv import _git_split
from evotree.harness.audit.revisions import is_head_relative
from evotree.harness.audit.shells import LOGIN, runs_body
from evotree.harness.audit.unwrap import parse_shell

__all__ = [
    "by_step_output",
    "in_own_clone",
    "index_held_changes",
    "single_branch_clones",
    "upstream_after",
]

#: ``git status -sb``'s first line without ``[ahead N]``/``[behind N]``; ``git status``'s
#: "up to date": the upstream is the very commit HEAD is at
_STATUS_SAME = re.compile(
    r"^## [^\s.]+(?:\.(?!\.)[^\s.]+)*\.\.\.(\S+)\s*$|"
    r"^Your branch is up to date with '([^']+)'\.",
    re.M,
)
#: commands after which the upstream may no longer be HEAD's
_MOVES_UPSTREAM = re.compile(
    r"\bgit\b.*\b(?:switch|checkout|fetch|pull|branch\s+(?:-u|--set-upstream"
    r"|--set-upstream-to)|remote|update-ref|symbolic-ref)\b"
)
_UPSTREAM_SPELLING = re.compile(r"^(?:HEAD|@|[\w.-]+)?@\{(?:u|upstream)\}$", re.I)


def single_branch_clones(command: str, clones: dict[str, str]) -> None:
    """Record ``git clone --single-branch [--branch B] . DEST``: DEST holds only B (HEAD when
    no branch is named), and no tags with ``--no-tags``; anything else written to DEST
    forgets it."""
    if "clone" not in command and not clones:
        return
    for cmd in parse_shell(command):
        argv = list(cmd.argv)
        if not argv or os.path.basename(argv[0]) != "git":
            continue
        sub, args = _git_split(argv)
        if sub != "clone":
            continue
        words = [
            a
            for k, a in enumerate(args)
            if not a.startswith("-")
            and not (k and args[k - 1] in ("-b", "--branch", "-o", "--origin", "--depth"))
        ]
        if len(words) < 2:
            continue
        dest = os.path.normpath(words[1])
        clones.pop(dest, None)
        if words[0] in (".", "./") and "--single-branch" in args and "--no-tags" in args:
            branch = next(
                (args[k + 1] for k, a in enumerate(args[:-1]) if a in ("-b", "--branch")),
                next((a.split("=", 1)[1] for a in args if a.startswith("--branch=")), "HEAD"),
            )
            clones[dest] = branch


def in_own_clone(hit: Hit, clones: dict[str, str]) -> Hit:
    """A walk of every reference (``git -C DEST log --all``) inside a single-branch clone the
    trajectory made of this repository reads that one branch: a candidate for it (judged in the
    task repository; HEAD's history without it when the branch is HEAD)."""
    if (
        hit.code != "audit.git_history_leak"
        or not hit.refs
        or not all(r.startswith("*refs:") for r in hit.refs)
    ):
        return hit
    words = hit.command.split()
    where = next((words[k + 1] for k, w in enumerate(words[:-1]) if w == "-C"), None)
    branch = clones.get(os.path.normpath(where)) if where else None
    if branch is None:
        return hit
    rule = f"{hit.rule} (in a single-branch clone of {branch})"
    if is_head_relative(branch):
        return Hit(hit.code, "info", rule, hit.command)
    return Hit(hit.code, "info", rule, hit.command, refs=(branch,), candidate=True)


def by_step_output(hits: list[Hit], step: Any, upstream: str) -> list[Hit]:
    """A step's hits lowered by what its output (or an earlier ``git status``) showed: git
    printed only an error; ``git branch -v`` listed only the current branch; the upstream named
    is the one ``git status`` showed at HEAD."""
    if step.output is not None and _printed_nothing(step.command, step.output):
        hits = [
            Hit(
                h.code,
                "info",
                h.rule + " (git printed only an error: nothing shown)",
                h.command,
                h.revisions,
            )
            if h.code == "audit.git_history_leak"
            else h
            for h in hits
        ]
    if step.output is not None:
        hits = [
            Hit(
                h.code,
                "info",
                h.rule + " (the output lists only the current branch)",
                h.command,
                h.revisions,
            )
            if h.rule.startswith("git branch -v") and _only_current_branch(step.output)
            else h
            for h in hits
        ]
    if upstream:
        hits = [
            Hit(
                h.code,
                "info",
                h.rule + f" (git status showed the upstream {upstream} is HEAD)",
                h.command,
                h.revisions,
            )
            if h.code == "audit.git_history_leak"
            and h.refs
            and all(_names_upstream(r, upstream) for r in h.refs)
            else h
            for h in hits
        ]
    return hits


def upstream_after(step: Any, upstream: str) -> str:
    """The upstream known to be HEAD after ``step`` ('' when none is, or HEAD may have left it)."""
    if step.command and _MOVES_UPSTREAM.search(step.command):
        upstream = ""
    if step.output and re.search(r"\bgit\b.*\bstatus\b", step.command or ""):
        m = _STATUS_SAME.search(step.output)
        if m:
            upstream = m.group(1) or m.group(2)
    return upstream


def _names_upstream(ref: str, upstream: str) -> bool:
    """Does ``ref`` (``@{u}``, ``main@{upstream}``, ``origin/main``, with ``:path``) name the
    upstream git status showed at HEAD?"""
    rev = ref.split(":", 1)[0]
    return bool(_UPSTREAM_SPELLING.match(rev)) or rev in (
        upstream,
        "remotes/" + upstream,
        "refs/remotes/" + upstream,
    )


def _only_current_branch(output: str) -> bool:
    """Did ``git branch -v`` print only the branch HEAD is on (``* main 1a2b3c4 subject``)?"""
    lines = [
        line for line in output.splitlines() if line.strip() and not _WRAPPER.match(line.strip())
    ]
    return len(lines) == 1 and lines[0].startswith("* ")


#: git's own words for "there was nothing to show" (a step whose output is only these, or nothing,
#: showed nothing); and the lines tools wrap around an output (Codex exec, SWE-agent)
_NOTHING = re.compile(r"^(?:fatal|error|warning): |^No stash entries found\.?$|^usage: git ")
#: as ``shown.HARNESS_FRAMING`` less ``[exit N]``: here a step whose output is only ``[exit N]``
#: showed something (its status); kept apart until that difference is judged on the benchmark
_WRAPPER = re.compile(
    r"^(?:Chunk ID: \w+|Wall time: [\d.]+ seconds|Process exited with code \d+|"
    r"Original token count: \d+|Output:|OBSERVATION:|"
    r"<returncode>\d+</returncode>|</?output>|Exit code: \d+)$"
)
#: git commands that only display (their whole effect is their output)
_DISPLAY = frozenset(
    {
        "log",
        "show",
        "diff",
        "reflog",
        "describe",
        "ls-tree",
        "cat-file",
        "rev-list",
        "grep",
        "shortlog",
        "whatchanged",
        "name-rev",
        "rev-parse",
        "blame",
        "diff-tree",
        "cherry",
        "range-diff",
        "show-branch",
        "for-each-ref",
        "show-ref",
        "annotate",
    }
)
#: git commands that write nothing when they fail on what they were given (no such revision, a
#: path the revision lacks); merge, cherry-pick, rebase and am leave conflicts behind instead
_ABORTS = frozenset(
    {"checkout", "restore", "switch", "reset", "archive", "format-patch", "worktree", "read-tree"}
)
_FILTERS = frozenset({"head", "tail", "grep", "sed", "cut", "sort", "uniq", "cat", "less", "more"})


def _printed_nothing(command: str, output: str) -> bool:
    """Did a step that only displays (git's display commands, ``stash list|show``, filters such
    as ``head``) print only git's errors (no such revision, no stash entries)? Then it showed
    nothing, whatever it named: judged by what was seen."""
    if len(output) > 4096 or not any(w in output for w in ("fatal: ", "error: ", "No stash ent")):
        return False  # (git's complaints are short)
    cmds = parse_shell(command)
    if not cmds:
        return False
    for cmd in cmds:
        if not cmd.argv:
            return False
        name = os.path.basename(cmd.argv[0])
        if name == "git":
            sub, args = _git_split(cmd.argv)
            if not (
                sub in _DISPLAY
                or sub in _ABORTS
                or sub in ("stash", "notes")
                and args[:1] in (["list"], ["show"])
            ):
                return False
            if any(op in (">", ">>", ">|") for op, _ in cmd.redirects):
                return False  # written to a file, not printed
        elif runs_body(cmd.argv, LOGIN):
            continue  # ``bash -lc '...'``: its inner commands are judged on their own above
        elif name not in _FILTERS:
            return False
    lines = [line.strip() for line in output.splitlines()]
    # an empty output proves nothing (a reader may not have recorded it): git must have said so
    return any(_NOTHING.match(line) for line in lines) and all(
        not line or _WRAPPER.match(line) or _NOTHING.match(line) for line in lines
    )


#: ``git status`` (long or short form) listing changes staged in the index
_STAGED_STATUS = re.compile(r"^Changes to be committed:|^[MADRC][ MD] \S", re.M)
#: lines of a diff: git's, ``diff -r``'s, ``diff -u``'s
_DIFF_LINES = re.compile(
    r"^(?:diff |@@ |[<>] |\d+(?:,\d+)?[acd]\d+(?:,\d+)?$|[-+](?![-+]{2}))", re.M
)
#: what may change the work tree's files (an edit before a comparison shows its own change)
_WRITES = re.compile(
    r"\bsed\s+-i|\bperl\s+-[a-z]*i|>|\bpatch\b|\bapply\b|write_text|\.write\(|\bcp\b|\bmv\b|"
    r"\btee\b|\btruncate\b|str_replace|\bcreate\b|\binsert\b|end_of_edit|\bcheckout\b|"
    r"\brestore\b|\breset\b|\bstash\b"
)


def index_held_changes(steps: Any, k: int, command: str) -> str | None:
    """On the file alone, with no staging of the trajectory's own before step ``k``: do the
    recorded outputs show that the index held changes when the trajectory started? ``git
    status`` listing staged changes (any step up to ``k``), a non-empty ``git diff --cached``
    (``--staged``, ``diff-index --cached -p``) at step ``k``, or a comparison of the index's
    files with the work tree (``checkout-index`` then ``diff``) that printed differences before
    any step could have edited a file. At the start of a task the index is the base's tree: a
    change staged there came from elsewhere. Returns the reason, or None."""
    for j in range(min(k + 1, len(steps))):
        step = steps[j]
        out = step.output or ""
        if out and "status" in (step.command or "") and _STAGED_STATUS.search(out):
            return f"step {j + 1}'s git status listed changes staged before the trajectory began"
    out = steps[k].output or "" if k < len(steps) else ""
    if not out or not _DIFF_LINES.search(out):
        return None
    if re.search(r"\bdiff(?:-index)?\b.*(?:--cached|--staged)", command):
        return "it printed a diff of the index against HEAD that the trajectory did not stage"
    if "checkout-index" in command and not any(_WRITES.search(s.command or "") for s in steps[:k]):
        return "it compared the index's files with the untouched work tree and printed differences"
    return None
