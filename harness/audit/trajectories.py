"""The trajectory audit and hash ancestry: which trajectories reached beyond the task.

:func:`audit_trajectory` runs every step's command through the cheap :func:`prefilter`, parses
only the candidates (:func:`evotree.harness.audit.commands.parse_shell`) and applies the leak rules.
Then two checks about commit hashes:

* **Clearing by ancestry or provenance.** A rule that fired only because a command named a hash
  (``git show 1a2b3c4``) is dropped when the task repository shows that every such hash is the
  task's base or an ancestor of it; without a repository it becomes ``info`` when the hash was
  first printed by an earlier step that broke no rule (``git log -3`` printed it: HEAD's own
  history), and stays ``high`` otherwise.
* **Hash ancestry** (:class:`Ancestry`). Every hex word of 7-40 characters in the outputs,
  the observation text and the commands is looked up in the task repository; one that names a
  commit that is neither the base nor an ancestor of it is an ``audit.future_hash`` finding
  (high): the trajectory saw a commit from the task's future, however it got there.

:func:`audit_trajectories` audits many trajectories (files or :class:`Trajectory` objects) and
returns :class:`TrajectoryAudit`: per-trajectory verdicts, the rate of trajectories that used
git history, and findings grouped by code and run.
"""

from __future__ import annotations

import fnmatch
import os
import re
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evotree.core.findings import Finding, Severity, sort_findings
from evotree.harness.audit.commands import Hit, RuleSet, ShellContext, classify_step, prefilter
from evotree.harness.audit.errors import AuditInputError, UnreadableTrajectory
from evotree.harness.audit.future_content import at_hash_place
from evotree.harness.audit.rules import BASE_NAMES, SCOPE, _TAG_LIKE, _git_split, is_head_relative
from evotree.harness.audit.shown import (
    Vouched,
    diff_shows_known,
    fix_quotes,
    one_branch_is_head,
    shows_only_vouched,
)
from evotree.harness.audit.unwrap import _REF_LISTERS, parse_shell
from evotree.harness.audit.steps import Trajectory
from evotree.harness.audit.transcripts import read_trajectories
from evotree.harness.audit.future_content import scan_outputs

__all__ = [
    "Ancestry",
    "TrajectoryVerdict",
    "TrajectoryAudit",
    "audit_trajectory",
    "audit_trajectories",
    "findings_from_verdicts",
    "read_or_unreadable",
    "HISTORY_CODES",
]

#: Codes that count a trajectory as "using git history" for the rate.
HISTORY_CODES = frozenset(
    {
        "audit.git_history_leak",
        "audit.git_internals_read",
        "audit.future_hash",
        "audit.future_content",
    }
)
_HEX = re.compile(r"(?<![0-9A-Za-z])[0-9a-f]{7,40}(?![0-9A-Za-z])")
_EXAMPLES = 5
_UNQUOTE = str.maketrans("", "", "\"'\\")
HEX_WORD = re.compile(r"[0-9a-f]{7,40}")
_STASH = re.compile(r"^(?:refs/)?stash(?:@\{\d+\})?(?:[~^]\d*|\^\{\w*\})*$")


class Ancestry:
    """Answers "is this hash the base or an ancestor of it?" for one task repository."""

    def __init__(
        self, repo: str | os.PathLike[str], base: str | None = None, *, trusted: bool = True
    ) -> None:
        """``trusted=False`` for a repository and base the candidate's own train phase recorded:
        such an ancestry may find future hashes but never clears a hit (the candidate could have
        named the reference fix itself as the base)."""
        import pygit2

        self.trusted = trusted

        try:
            self.repo = pygit2.Repository(str(repo))
        except (pygit2.GitError, KeyError, ValueError) as exc:
            raise AuditInputError(
                f"{repo}: not a git repository ({exc})",
                fix="pass the task repository (--repo) the trajectory ran in",
            ) from None
        try:
            obj = self.repo.revparse_single(base or "HEAD")
            self.base = obj.peel(pygit2.Commit).id
        except (KeyError, ValueError, pygit2.GitError) as exc:
            raise AuditInputError(
                f"{repo}: base {base or 'HEAD'!r} is not a commit ({exc})",
                fix="pass the task's base commit (--base HASH)",
            ) from None
        self.path = str(repo)
        self._cache: dict[str, str] = {}
        self._index: Any = None

    def resolve(self, expr: str, *, both_ends: bool = False) -> tuple[str, str | None]:
        """Resolve a revision expression as git does, in this repository, and judge it by
        ancestry: ('ancestor' | 'future' | 'unknown', the future commit's id or None).

        ``rev:path`` is judged by ``rev``; ``A..B`` by ``B`` (what log shows; ``both_ends`` for
        diff, which shows both), ``A...B`` by both; ``^A`` excludes and is not judged. HEAD and
        ``@`` (and ``HEAD~2``, ``@^``) are the trajectory's HEAD: the base. Everything else —
        tags, branches, ``ORIG_HEAD``, ``FETCH_HEAD``, ``stash@{n}``, reflog selectors,
        ``@{-1}``, ``^{}`` — is what the repository says it is."""
        text = expr.strip()
        if text.startswith(SCOPE):
            return self._scope(text)
        if text.startswith(":/") and len(text) > 2:
            return self._resolve_one(text)  # a message search over every reference
        if text.startswith(":"):
            return "ancestor", None  # the index: the working copy's own
        depth = 0
        for at, ch in enumerate(text):  # rev:path — the first colon outside @{...}
            depth += ch == "{"
            depth -= ch == "}"
            if ch == ":" and depth <= 0:
                text = text[:at]
                break
        if "..." in text:
            ends = [e for e in text.split("...", 1)]
        elif ".." in text:
            left, right = text.split("..", 1)
            ends = [left, right] if both_ends else [right]
        else:
            ends = [text]
        states = []
        for end in ends:
            end = end or "HEAD"
            if end.startswith("^"):
                continue
            # X^{tree} / X^{commit} / X^{}: an object of commit X, judged by X
            end = re.sub(r"(?:\^\{(?:tree|commit|object|)\})+$", "", end) or "HEAD"
            states.append(self._resolve_one(end))
        future = next((cid for st, cid in states if st == "future"), None)
        if future is not None:
            return "future", future
        if states and all(st == "absent" for st, _ in states):
            return "absent", None
        if states and all(st in ("ancestor", "absent") for st, _ in states):
            return "ancestor", None
        return "unknown", None

    def _commit_state(self, oid: Any) -> tuple[str, str | None]:
        """The ancestry of the commit an object peels to ('unknown' when it peels to none)."""
        import pygit2

        try:
            commit = self.repo.get(oid).peel(pygit2.Commit)
        except (KeyError, ValueError, AttributeError, pygit2.GitError, pygit2.InvalidSpecError):
            return "unknown", None
        cid = commit.id
        if cid == self.base or self.repo.descendant_of(self.base, cid):
            return "ancestor", None
        return "future", str(cid)

    def _scope(self, token: str) -> tuple[str, str | None]:
        """A reference scope (:data:`evotree.harness.audit.rules.SCOPE`): 'future' when one of the
        references it reads (or the note it shows) is beyond the base, 'absent' when it reads
        none, 'ancestor' when every one is the base or behind it."""
        import pygit2

        kind, _, rest = token[1:].partition(":")
        if kind == "notes":
            ref, _, obj = rest.partition(":")
            if ref not in self.repo.references:
                return "absent", None
            if obj:
                spec = re.sub(r"^(HEAD|@)(?=$|[~^])", str(self.base), obj)
                try:
                    target = self.repo.revparse_single(spec).id
                    self.repo.lookup_note(str(target), ref)
                except KeyError:
                    return "absent", None  # no note on it: git printed an error, nothing shown
                except (ValueError, pygit2.GitError, pygit2.InvalidSpecError):
                    return "unknown", None
            # a note's text is in no commit of the base: reading one reads beyond it
            return "future", str(self.repo.references[ref].resolve().target)
        if kind == "bisect-start":
            return self._bisect_start()
        if kind == "refs":
            prefixes, tails = [p for p in rest.split(",") if p], []
        elif kind == "show-ref":
            head, _, tail = rest.partition(";")
            prefixes, tails = [p for p in head.split(",") if p], [t for t in tail.split(",") if t]
        else:
            return "unknown", None
        names = [
            n
            for n in self.repo.references
            if n.startswith("refs/")
            and (not prefixes or any(_ref_matches(n, p) for p in prefixes))
            and (not tails or any(n == t or n.endswith("/" + t) for t in tails))
        ]
        if not names:
            return "absent", None
        for name in names:
            try:
                oid = self.repo.references[name].resolve().target
            except (KeyError, ValueError, pygit2.GitError):
                return "unknown", None
            state = self._commit_state(oid)
            if state[0] != "ancestor":
                return state
        return "ancestor", None

    def _bisect_start(self) -> tuple[str, str | None]:
        """Where ``git bisect reset`` returns: the branch or commit ``BISECT_START`` names
        ('absent' when no bisect is in progress)."""
        import pygit2

        try:
            name = (Path(self.repo.path) / "BISECT_START").read_text().strip()
        except OSError:
            return "absent", None
        for spec in (f"refs/heads/{name}", name):
            try:
                return self._commit_state(self.repo.revparse_single(spec).id)
            except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
                continue
        return "unknown", None

    def _resolve_one(self, rev: str) -> tuple[str, str | None]:
        import pygit2

        key = "\x00" + rev
        cached = self._cache.get(key)
        if cached is not None:
            state, _, cid = cached.partition(" ")
            return state, cid or None
        spec = re.sub(r"^(HEAD|@)(?=$|[~^])", str(self.base), rev)
        if _STASH.match(rev) and "refs/stash" not in self.repo.references:
            self._cache[key] = "absent "
            return "absent", None  # the task repository holds no stash: there was nothing to read
        try:
            commit = self.repo.revparse_single(spec).peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError, AttributeError):
            result: tuple[str, str | None] = ("unknown", None)
        else:
            cid = commit.id
            result = (
                ("ancestor", None)
                if cid == self.base or self.repo.descendant_of(self.base, cid)
                else ("future", str(cid))
            )
        self._cache[key] = f"{result[0]} {result[1] or ''}"
        return result

    def index(self) -> Any:
        """The :class:`~evotree.harness.audit.future_content.ProvenanceIndex` of this repository and
        base (built once, on first use)."""
        if self._index is None:
            from evotree.harness.audit.future_content import build_index

            self._index = build_index(self.path, str(self.base))
        return self._index

    def status(self, word: str) -> str:
        """'ancestor' (the base or before it), 'future' (a commit not behind the base), or
        'unknown' (no such commit, ambiguous, or not a commit)."""
        cached = self._cache.get(word)
        if cached is not None:
            return cached
        import pygit2

        try:
            obj = self.repo.revparse_single(word)
            commit = obj.peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
            result = "unknown"
        else:
            cid = commit.id
            result = (
                "ancestor"
                if cid == self.base or self.repo.descendant_of(self.base, cid)
                else "future"
            )
        self._cache[word] = result
        return result


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


def _single_branch_clones(command: str, clones: dict[str, str]) -> None:
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


def _in_own_clone(hit: Hit, clones: dict[str, str]) -> Hit:
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


def _by_step_output(hits: list[Hit], step: Any, upstream: str) -> list[Hit]:
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


def _upstream_after(step: Any, upstream: str) -> str:
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


def _without_commands(text: str | None, commands: Sequence[str]) -> str | None:
    """The observation text without the commands the trajectory typed (each where it occurs in
    order): a line of its own command is its own work, not something an output showed."""
    if not text:
        return text
    parts, pos = [], 0
    for command in commands:
        at = text.find(command, pos) if command else -1
        if at < 0:
            continue
        parts.append(text[pos:at])
        pos = at + len(command)
    return "".join(parts) + text[pos:]


def _ref_matches(name: str, pattern: str) -> bool:
    """``git for-each-ref``'s pattern match: a glob, or a prefix ending at a ``/``."""
    if any(c in pattern for c in "*?["):
        return fnmatch.fnmatchcase(name, pattern)
    return name == pattern or name.startswith(pattern.rstrip("/") + "/")


@dataclass
class TrajectoryVerdict:
    """What the audit found in one trajectory."""

    id: str
    format: str
    source: str | None
    task_id: str | None
    run_id: str | None
    phase: str | None
    steps: int
    hits: list[Hit] = field(default_factory=list)
    cleared: list[dict[str, Any]] = field(
        default_factory=list
    )  # hits dropped by ancestry/provenance
    future_hashes: list[str] = field(default_factory=list)

    @property
    def worst(self) -> Severity | None:
        return max((Severity.parse(h.severity) for h in self.hits), default=None)

    @property
    def flagged(self) -> bool:
        """A hit of severity high or above: the trajectory leaked."""
        worst = self.worst
        return worst is not None and worst >= Severity.HIGH

    @property
    def uses_git_history(self) -> bool:
        return any(h.code in HISTORY_CODES and h.severity != "info" for h in self.hits)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "format": self.format,
            "source": self.source,
            "task_id": self.task_id,
            "run_id": self.run_id,
            "phase": self.phase,
            "steps": self.steps,
            "flagged": self.flagged,
            "uses_git_history": self.uses_git_history,
            "worst": self.worst.label if self.worst is not None else None,
            "hits": [h.to_dict() for h in self.hits],
            "cleared": self.cleared,
            "future_hashes": self.future_hashes,
        }


def audit_trajectory(
    traj: Trajectory, rules: RuleSet = RuleSet(), ancestry: Ancestry | None = None
) -> TrajectoryVerdict:
    """Apply the leak rules to every step of ``traj``, then clear or confirm named hashes."""
    verdict = TrajectoryVerdict(
        traj.id, traj.format, traj.source, traj.task_id, traj.run_id, traj.phase, len(traj.steps)
    )
    for why in traj.unread[:_EXAMPLES]:  # nothing passes unread
        verdict.hits.append(
            Hit("audit.unreadable", "high", f"unreadable: {why}", traj.source or traj.id)
        )
    needles = rules.hidden_needles
    step_hits: list[list[Hit]] = []
    context = ShellContext()  # variables, aliases and scripts carry over between steps
    upstream = ""  # an upstream git status showed at HEAD (no ahead/behind), until HEAD moves
    clones: dict[str, str] = {}  # single-branch clones of this repository: folder -> branch
    for step in traj.steps:
        hits: list[Hit] = []
        if step.command and (context.relevant(step.command) or prefilter(step.command, needles)):
            hits = classify_step(step.command, rules, context, step.output)
        if hits:
            hits = _by_step_output(hits, step, upstream)
        made: dict[str, str] = {}
        _single_branch_clones(step.command, made)
        if hits and (clones or made):
            # a clone made earlier in this step counts for the commands after it
            cmd = step.command
            here = {
                **clones,
                **{d: b for d, b in made.items() if 0 <= cmd.find(f" . {d}") < cmd.find(f"-C {d}")},
            }
            hits = [_in_own_clone(h, here) for h in hits]
        upstream = _upstream_after(step, upstream)
        clones.update(made)
        for dest in [
            d
            for d in clones
            if d not in made and f" {d}" in step.command and "clone" in step.command
        ]:
            clones.pop(dest)  # cloned over with something else
        step_hits.append(hits)
    listed, copied = _ListedNames(traj), _CopiedLines(traj, step_hits)
    shown = _Shown(traj, step_hits)
    # clear hits that rest only on hashes shown to be in the task's own history
    for k, hits in enumerate(step_hits):
        kept = []
        for hit in hits:
            hit = _by_what_followed(hit, k, listed, copied)
            if hit.refs and hit.code == "audit.git_history_leak" and ancestry is not None:
                state, cid = _resolve_refs(hit, ancestry)
                if state == "future":
                    hit = Hit(
                        hit.code,
                        "high",
                        f"{hit.rule.split(':')[0] if hit.candidate else hit.rule} "
                        f"(resolves to commit {cid[:12]}, beyond the base)",
                        hit.command,
                        hit.revisions or (cid[:12],),
                        refs=hit.refs,
                    )
                    kept.append(hit)
                    continue
                if state in ("ancestor", "absent") and ancestry.trusted:
                    why = (
                        "resolves to the base or its ancestor"
                        if state == "ancestor"
                        else "names nothing in the task repository (no such stash)"
                    )
                    verdict.cleared.append({**hit.to_dict(), "why": why})
                    continue
            if hit.candidate:
                continue  # the spelling alone cannot judge it, and no repository said it is beyond the base
            names = _named_tags(hit) if not hit.revisions else ()
            if (
                (hit.revisions or names)
                and hit.severity == "high"
                and hit.code == "audit.git_history_leak"
            ):
                reason = _clear_reason(hit, k, traj, step_hits, ancestry, names)
                if reason == "ancestor":
                    verdict.cleared.append(
                        {**hit.to_dict(), "why": "every hash is the base or its ancestor"}
                    )
                    continue
                if reason == "seen":
                    what = "hash" if hit.revisions else "tag"
                    hit = Hit(
                        hit.code,
                        "info",
                        hit.rule + f" ({what} first printed by HEAD's own history)",
                        hit.command,
                        hit.revisions,
                    )
            kept.append(shown.judge(hit, k))
        verdict.hits += kept
    if ancestry is not None:
        verdict.hits += _content_hits(traj, ancestry)
        future = _future_hashes(traj, ancestry)
        if future:
            verdict.future_hashes = future
            verdict.hits.append(
                Hit(
                    "audit.future_hash",
                    "high",
                    f"saw {len(future)} commit(s) not behind the task's base",
                    future[0],
                    tuple(future[:_EXAMPLES]),
                )
            )
    return verdict


#: git's own words for "there was nothing to show" (a step whose output is only these, or nothing,
#: showed nothing); and the lines tools wrap around an output (Codex exec, SWE-agent)
_NOTHING = re.compile(r"^(?:fatal|error|warning): |^No stash entries found\.?$|^usage: git ")
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
_SHELLS = frozenset({"bash", "sh", "zsh", "dash"})
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
        elif name in _SHELLS and any(a in ("-c", "-lc", "-ic", "-lic") for a in cmd.argv[1:3]):
            continue  # ``bash -lc '...'``: its inner commands are judged on their own above
        elif name not in _FILTERS:
            return False
    lines = [line.strip() for line in output.splitlines()]
    # an empty output proves nothing (a reader may not have recorded it): git must have said so
    return any(_NOTHING.match(line) for line in lines) and all(
        not line or _WRAPPER.match(line) or _NOTHING.match(line) for line in lines
    )


class _Shown:
    """A high history hit judged by what its step's recorded output showed
    (:mod:`evotree.harness.audit.shown`): only HEAD's own history there lowers it to info."""

    def __init__(self, traj: Trajectory, step_hits: Sequence[Sequence[Hit]]) -> None:
        self.traj, self.step_hits = traj, step_hits
        self._vouched: Vouched | None = None

    def quiet(self, j: int) -> bool:
        """Did step ``j`` break no rule (nothing warn or above, no name left unjudged)?"""
        return not any(
            Severity.parse(h.severity) >= Severity.WARN or h.candidate for h in self.step_hits[j]
        )

    def judge(self, hit: Hit, k: int) -> Hit:
        if hit.severity != "high" or hit.code != "audit.git_history_leak":
            return hit
        step = self.traj.steps[k]
        if step.output is None or not step.output.strip():
            return hit
        if self._vouched is None:
            self._vouched = Vouched(self.traj, self.quiet, _git_step)
        why = (
            shows_only_vouched(step.command, step.output, self._vouched)
            or one_branch_is_head(hit.command, step.output, self.traj)
            or diff_shows_known(k, self.traj, self.quiet, _git_step)
        )
        if why is None:
            return hit
        return Hit(
            hit.code, "info", f"{hit.rule} ({why})", hit.command, hit.revisions, refs=hit.refs
        )


def _unresolved(hit: Hit) -> bool:
    """A hit on a name the spelling could not judge (a plain or path-like word in a revision's
    place): what the trajectory did around it may say what it was."""
    return (
        hit.code == "audit.git_history_leak"
        and bool(hit.refs)
        and hit.severity != "high"
        and (hit.candidate or hit.severity == "warn")
        and "own branch" not in hit.rule
    )


def _ref_name(ref: str) -> str:
    return re.sub(r"(?:[~^]\d*)+$", "", ref.split(":", 1)[0])


def _by_what_followed(hit: Hit, k: int, listed: _ListedNames, copied: _CopiedLines) -> Hit:
    """An unresolved name judged by the trajectory around it: a name it read off its own listing
    of references, or a step whose output showed an added line the trajectory then wrote itself
    (it copied a change from that revision), is high."""
    if not _unresolved(hit) or all(_ref_name(r) in BASE_NAMES for r in hit.refs):
        return hit
    named = listed.names(hit, k)
    if named is not None:
        return Hit(
            hit.code,
            "high",
            f"{hit.rule.split(':')[0]} names {named[0]}, which step "
            f"{named[1] + 1}'s listing of references printed",
            hit.command,
            hit.revisions,
            refs=hit.refs,
        )
    line = copied.line(k)
    if line is not None:
        return Hit(
            hit.code,
            "high",
            f"{hit.rule.split(':')[0]}: its output showed a line the "
            f"trajectory wrote itself at step {line[1] + 1}",
            hit.command,
            hit.revisions,
            line[0],
            refs=hit.refs,
        )
    return hit


class _CopiedLines:
    """Lines a step's output *added* (a diff's ``+`` lines, distinctive ones) that the trajectory
    typed only later (an edit, a here-document, a patch) and never saw elsewhere (not in a
    ``cat`` of the file, not in any other step's output): it copied them from what that step
    showed."""

    _MIN = 16

    def __init__(self, traj: Trajectory, step_hits: Sequence[Sequence[Hit]]) -> None:
        self.traj = traj
        self.step_hits = step_hits
        self._typed: list[str] | None = None

    @staticmethod
    def _flat(text: str) -> str:
        return re.sub(r"\s+", " ", text.translate(_UNQUOTE)).strip()

    def _added(self, k: int) -> list[str]:
        out = self.traj.steps[k].output or ""
        lines: list[str] = []
        if "\n+" not in out and not out.startswith("+"):
            return lines
        for line in out.splitlines():
            if line.startswith("+") and not line.startswith("+++"):
                text = self._flat(line[1:])
                if len(text) >= self._MIN and sum(c.isalnum() for c in text) >= 8:
                    lines.append(text)
        return lines

    def line(self, k: int) -> tuple[str, int] | None:
        """(the line, the step that wrote it), or None."""
        added = self._added(k)
        if not added:
            return None
        if self._typed is None:
            self._typed = [self._flat(s.command or "") for s in self.traj.steps]
        steps = self.traj.steps
        for text in added:
            if any(text in self._typed[j] for j in range(k + 1)):
                continue  # typed before it was shown: the trajectory's own line
            if any(
                j != k and text in self._flat(steps[j].output or "")
                for j in range(len(steps))
                if not any(_unresolved(h) for h in self.step_hits[j])
            ):
                continue  # shown elsewhere too (the file as it is, HEAD's own history)
            later = next((j for j in range(k + 1, len(steps)) if text in self._typed[j]), None)
            if later is not None:
                return text, later
        return None


class _ListedNames:
    """Names a trajectory read off its own listings of references (``git branch``, ``git tag``,
    ``git for-each-ref``, ``git ls-remote``): a later command naming one (``git log -p windup``)
    names a reference, however path-like or plain its spelling, not HEAD's history. The branch
    it stood on (``* main``) and branches it made itself are left out."""

    _LISTERS = frozenset(
        {"branch", "tag", "for-each-ref", "show-ref", "ls-remote", "stash", "reflog", "remote"}
    )
    _PREFIX = re.compile(r"^(?:refs/(?:heads|tags|remotes)/|remotes/)")
    _LISTER_WORD = re.compile(
        r"\b(?:branch|tag|for-each-ref|show-ref|ls-remote|stash|reflog|"
        r"remote)\b"
    )

    def __init__(self, traj: Trajectory) -> None:
        self.traj = traj
        self._listings: list[int] | None = None

    def listings(self) -> list[int]:
        """The steps that ran a listing of references and printed something (found once)."""
        if self._listings is None:
            self._listings = []
            for j, step in enumerate(self.traj.steps):
                command = step.command or ""
                if (
                    step.output
                    and "git" in command
                    and self._LISTER_WORD.search(command)
                    and not _git_step(command)
                    and any(
                        cmd.argv
                        and os.path.basename(cmd.argv[0]) == "git"
                        and _git_split(cmd.argv)[0] in self._LISTERS
                        for cmd in parse_shell(command)
                    )
                ):
                    self._listings.append(j)
        return self._listings

    @staticmethod
    def _listed(output: str, name: str) -> bool:
        """Does a listing name ``name`` among the first words of a line (ids come first in
        ``show-ref`` / ``ls-remote``), not as the branch HEAD is on (``* main``)?"""
        pattern = (
            r"(?m)^(?![ \t]*\* )[ \t]*(?:\S+[ \t]+){0,2}['\"]?"
            r"(?:refs/(?:heads|tags|remotes)/|remotes/)?" + re.escape(name) + r"(?=[\s'\":,]|$)"
        )
        return re.search(pattern, output) is not None

    def names(self, hit: Hit, k: int) -> tuple[str, int] | None:
        """(the name, the listing step) when ``hit`` rests on a plain or path-like name that an
        earlier listing printed; None otherwise."""
        steps = self.traj.steps
        for ref in hit.refs:
            word = re.sub(r"(?:[~^]\d*)+$", "", ref.split(":", 1)[0])
            head = word.split("/", 1)[0]
            if len(word) < 2 or HEX_WORD.fullmatch(word):
                continue
            for j in self.listings():
                output = steps[j].output or ""
                if j >= k or head not in output:
                    continue
                # a name listed, or a branch of a remote listed (`git remote` printed `fork`)
                if self._listed(output, word) or "/" in word and self._listed(output, head):
                    return word, j
        return None


def _resolve_refs(hit: Hit, ancestry: Ancestry) -> tuple[str, str | None]:
    """The ancestry of every revision a hit rests on: 'future' (and the commit) when one is beyond
    the base, 'ancestor' when all are the base or behind it, 'unknown' otherwise."""
    both = hit.command.startswith(("git diff", "git difftool", "git range-diff"))
    states = [ancestry.resolve(ref, both_ends=both) for ref in hit.refs]
    future = next((s for s in states if s[0] == "future"), None)
    if future is not None:
        return future
    if states and all(s[0] == "absent" for s in states):
        return "absent", None
    if states and all(s[0] in ("ancestor", "absent") for s in states):
        return "ancestor", None
    return "unknown", None


def _named_tags(hit: Hit) -> tuple[str, ...]:
    """The release tags (``v2.2.0``) a hit rests on, when it rests on nothing else: a tag
    printed earlier by HEAD's own history (``git describe``, ``git tag --merged``) or quoted by
    the task is behind the base, as a hash printed there is."""
    names = []
    for ref in hit.refs:
        for part in re.split(r"\.\.\.?", ref.split(":", 1)[0]):
            part = re.sub(r"(?:[~^]\d*|\^\{\w*\})+$", "", part.lstrip("^"))
            if not part or is_head_relative(part):
                continue
            if not _TAG_LIKE.match(part):
                return ()
            names.append(part)
    return tuple(names)


def _shows_word(text: str | None, word: str) -> bool:
    pattern = r"(?<![\w.])" + re.escape(word) + r"(?![\w.])"
    return bool(text) and re.search(pattern, text or "") is not None


def _clear_reason(
    hit: Hit,
    k: int,
    traj: Trajectory,
    step_hits: Sequence[Sequence[Hit]],
    ancestry: Ancestry | None,
    names: Sequence[str] = (),
) -> str | None:
    if names:  # tags the repository could not judge (or there is none): only provenance clears them
        seen = all(_seen_before(name, k, traj, step_hits, exact=True) for name in names)
        return "seen" if seen else None
    if ancestry is not None:
        states = {ancestry.status(h) for h in hit.revisions}
        if states == {"ancestor"} and ancestry.trusted:
            return "ancestor"
        if "future" in states:
            return None
    # provenance: every hash quoted by the task's prompt or printed earlier by a step that broke no rule
    return "seen" if all(_seen_before(rev, k, traj, step_hits) for rev in hit.revisions) else None


def _seen_before(
    rev: str, k: int, traj: Trajectory, step_hits: Sequence[Sequence[Hit]], *, exact: bool = False
) -> bool:
    """Was ``rev`` quoted by the task's prompt, or printed before step ``k`` by git run on HEAD's
    own history (a step that broke no rule and named no revision it could not judge)?"""

    def shows(text: str | None) -> bool:
        return _shows_word(text, rev) if exact else bool(text) and rev in (text or "")

    if shows(traj.prompt) and not any(
        q.startswith(rev) or rev.startswith(q) for q in fix_quotes(traj.prompt)
    ):
        return True  # quoted by the task, and not as the fix made elsewhere
    for j in range(k):
        quiet = not any(
            Severity.parse(h.severity) >= Severity.WARN or h.candidate for h in step_hits[j]
        )
        if quiet and shows(traj.steps[j].output) and _git_step(traj.steps[j].command):
            return True
    return False


def _content_hits(traj: Trajectory, ancestry: Ancestry) -> list[Hit]:
    """Content provenance (:mod:`evotree.harness.audit.future_content`): outputs showing what only
    the task's future holds, whatever command printed them."""

    found = scan_outputs(
        ancestry.index(),
        [s.output for s in traj.steps],
        [s.command for s in traj.steps],
        _without_commands(traj.text, [s.command for s in traj.steps]),
    )
    hits = []
    for c in found:
        command = traj.steps[c.step].command if c.step >= 0 else "(observation text)"
        if c.kind == "object":
            kind = ancestry.index().objects.get(c.commit, "object")
            if kind in ("commit", "tag"):
                continue  # hash ancestry reports these (audit.future_hash), with commands and text too
            rule = f"output shows future {kind} {c.commit[:12]}"
        elif c.kind == "line":
            rule = f"output shows a line future commit {c.commit[:12]} adds: {c.what[:80]!r}"
        elif c.kind == "tag":
            rule = f"output shows tag {c.what} of future commit {c.commit[:12]}"
        else:
            rule = f"output shows the subject of future commit {c.commit[:12]}: {c.what[:80]!r}"
        hits.append(
            Hit("audit.future_content", c.severity, rule, command[:300], (c.commit,), c.line)
        )
    return hits


#: git commands whose output is not HEAD's history: remotes, other worktrees' HEADs
#: (``worktree list``), a bisect's commits (``bisect log``, ``bisect run``)
_NOT_HEADS = frozenset({"remote", "worktree", "bisect"})


def _git_step(command: str) -> bool:
    """Did this step run git itself on HEAD's own history? Only git's own output on HEAD's
    history (``git log -3``, ``git describe``) vouches for a hash or a tag; a script the audit
    cannot read may print any hash it dug up, and a listing of references (``git tag``,
    ``git branch -v``, ``git for-each-ref``) prints names and tips beyond the base."""
    ran_git = False
    for cmd in parse_shell(command):
        if not cmd.argv or os.path.basename(cmd.argv[0]) not in ("git", "hub"):
            continue
        ran_git = True
        sub, args = _git_split(cmd.argv)
        if sub == "branch" and not (
            "--show-current" in args
            or "--merged" in args
            and set(args) <= {"--merged", "HEAD", "--list", "-l"}
        ):
            return False  # a listing of branches: names beyond HEAD's history
        if sub == "tag" and not ("--merged" in args or "--points-at" in args):
            return False
        if sub in _REF_LISTERS and sub not in ("tag", "describe") or sub in _NOT_HEADS:
            return False
    return ran_git


def _future_hashes(traj: Trajectory, ancestry: Ancestry) -> list[str]:
    words: dict[str, None] = {}
    texts = [s.output for s in traj.steps if s.output] + [s.command for s in traj.steps]
    if traj.text:
        texts.append(traj.text)
    for text in texts:
        for m in _HEX.finditer(text):
            word = m.group(0)
            if not word.isdigit() or at_hash_place(text, m.start()):
                words.setdefault(word, None)
    return [w for w in words if ancestry.status(w) == "future"]


@dataclass
class TrajectoryAudit:
    """The audit of many trajectories (``evotree audit trajectories --json``)."""

    trajectories: int
    flagged: int
    git_history: int
    git_history_rate: float
    verdicts: list[TrajectoryVerdict]
    findings: list[Finding]
    steps: int = 0
    nbytes: int = 0
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return not any(f.rank >= Severity.HIGH for f in self.findings)

    def to_dict(self, *, all_verdicts: bool = False) -> dict[str, Any]:
        shown = self.verdicts if all_verdicts else [v for v in self.verdicts if v.hits or v.cleared]
        return {
            "v": 1,
            "passed": self.passed,
            "trajectories": self.trajectories,
            "flagged": self.flagged,
            "git_history": self.git_history,
            "git_history_rate": self.git_history_rate,
            "steps": self.steps,
            "bytes": self.nbytes,
            "seconds": round(self.seconds, 4),
            "findings": [f.to_dict() for f in self.findings],
            "verdicts": [v.to_dict() for v in shown],
        }


_TITLES = {
    "audit.git_history_leak": "read git history or references beyond the task's base",
    "audit.git_internals_read": "read git's internals (.git/objects, refs, packed-refs, logs)",
    "audit.future_hash": "saw commits that are not ancestors of the task's base",
    "audit.network_fetch": "fetched from the network",
    "audit.hidden_data_read": "touched hidden data (judge files, hidden tests, eval splits)",
    "audit.test_write": "wrote, moved or deleted tests, conftest.py or sitecustomize",
    "audit.unreadable": "could not be read whole (unknown format, or steps the readers cannot parse)",
    "audit.future_content": "saw in tool outputs what only the task's future holds (objects, subjects, tags, "
    "lines of future commits)",
}
_SUGGESTIONS = {
    "audit.git_history_leak": "sanitize the task repositories (`evotree audit repo PATH --sanitize`: only the base "
    "commit and its ancestors) and re-run; do not promote on this score",
    "audit.git_internals_read": "sanitize the task repositories and re-run; do not promote on this score",
    "audit.future_hash": "the task repository holds its own future: sanitize it and re-run",
    "audit.network_fetch": "run without network access; a fetched answer is not a learned one",
    "audit.hidden_data_read": "keep hidden data outside the candidate's reach (judge paths are exported only to "
    "the judge); re-run",
    "audit.test_write": "tests are the judge's: make them read-only or restore them before judging; re-run",
    "audit.future_content": "the task repository holds its own future: sanitize it (`evotree audit repo PATH "
    "--sanitize`) and re-run; do not promote on this score",
    "audit.unreadable": "convert the file to a format the audit reads (docs/audit.md) or extend the reader; "
    "an unread trajectory is not a clean one",
}


def read_or_unreadable(path: str | os.PathLike[str]) -> list[Trajectory]:
    """The trajectories of one file; a file whose content no reader knows (unknown format,
    binary, no valid line) becomes one trajectory with nothing but the reason it could not be
    read, which :func:`audit_trajectory` turns into an ``audit.unreadable`` hit (high). A file
    that cannot be opened still raises :class:`AuditInputError` (exit 29)."""
    try:
        return read_trajectories(path)
    except UnreadableTrajectory as exc:
        return [Trajectory(Path(path).name, "unknown", source=str(path), unread=[exc.message])]


def findings_from_verdicts(
    verdicts: Sequence[TrajectoryVerdict],
    *,
    version: str | None = None,
    totals: dict[str | None, int] | None = None,
) -> list[Finding]:
    """One finding per (code, run): the worst severity, counts, rules and a few examples."""
    groups: dict[tuple[str, str | None], list[tuple[TrajectoryVerdict, Hit]]] = {}
    for v in verdicts:
        for hit in v.hits:
            if hit.severity != "info":
                groups.setdefault((hit.code, v.run_id), []).append((v, hit))
    findings = []
    for (code, run_id), pairs in groups.items():
        worst = max(Severity.parse(h.severity) for _, h in pairs)
        trajs = {v.id for v, _ in pairs}
        high_trajs = {v.id for v, h in pairs if Severity.parse(h.severity) >= Severity.HIGH}
        total = (totals or {}).get(run_id)
        rules = Counter(
            h.rule.split(" (")[0] if code != "audit.git_history_leak" else _rule_key(h)
            for _, h in pairs
        )
        examples = []
        for v, h in pairs:
            if len(examples) >= _EXAMPLES:
                break
            if Severity.parse(h.severity) == worst:
                example = {
                    "trajectory": v.id,
                    "task_id": v.task_id,
                    "phase": v.phase,
                    "source": v.source,
                    "command": h.command[:300],
                    "rule": h.rule,
                }
                if h.output:
                    example["output"] = h.output
                examples.append(example)
        count = len(high_trajs) if worst >= Severity.HIGH else len(trajs)
        of = f" of {total}" if total else ""
        title = f"{count}{of} trajector{'y' if count == 1 else 'ies'} {_TITLES.get(code, code)}"
        evidence: dict[str, Any] = {
            "trajectories": count,
            "total": total,
            "rate": (count / total) if total else None,
            "commands": sum(1 for _ in pairs),
            "rules": dict(rules.most_common(10)),
            "examples": examples,
        }
        findings.append(
            Finding(
                layer="audit",
                code=code,
                severity=worst.label,
                title=title,
                evidence=evidence,
                suggestion=_SUGGESTIONS.get(code, ""),
                run_id=run_id,
                version=version,
            )
        )
    return sort_findings(findings)


def _rule_key(hit: Hit) -> str:
    """``git log --all`` / ``git show <rev>`` style key of a git rule."""
    words = hit.rule.split()
    if (
        len(words) >= 3
        and words[0] == "git"
        and (words[2].startswith("-") and words[2] in hit.rule[:40])
    ):
        return " ".join(words[:3])
    if len(words) >= 2 and words[0] == "git":
        return f"git {words[1]}" + (" <rev>" if "revision" in hit.rule else "")
    return hit.rule[:40]


def audit_trajectories(
    items: Iterable[str | os.PathLike[str] | Trajectory],
    *,
    hidden_paths: Sequence[str] = (),
    repo: str | os.PathLike[str] | None = None,
    base: str | None = None,
    version: str | None = None,
    ancestries: dict[str, Ancestry] | None = None,
) -> TrajectoryAudit:
    """Audit trajectory files (any format of :mod:`evotree.harness.audit.transcripts`) or objects.

    ``hidden_paths``: paths no trajectory may touch. ``repo``/``base``: the task repository and
    base commit for hash ancestry (``base`` defaults to the repository's HEAD). ``ancestries``:
    task id -> :class:`Ancestry`, for trajectories of several tasks (evotree runs).
    """
    started = time.perf_counter()
    rules = RuleSet(hidden_paths=tuple(hidden_paths))
    default = Ancestry(repo, base) if repo is not None else None
    verdicts: list[TrajectoryVerdict] = []
    totals: Counter[str | None] = Counter()
    steps = nbytes = 0
    for item in items:
        trajs = [item] if isinstance(item, Trajectory) else read_or_unreadable(Path(item))
        for traj in trajs:
            ancestry = (ancestries or {}).get(traj.task_id or "", default)
            verdict = audit_trajectory(traj, rules, ancestry)
            verdicts.append(verdict)
            totals[traj.run_id] += 1
            steps += len(traj.steps)
            nbytes += traj.nbytes
    flagged = sum(v.flagged for v in verdicts)
    history = sum(v.uses_git_history for v in verdicts)
    findings = findings_from_verdicts(verdicts, version=version, totals=dict(totals))
    return TrajectoryAudit(
        trajectories=len(verdicts),
        flagged=flagged,
        git_history=history,
        git_history_rate=history / len(verdicts) if verdicts else 0.0,
        verdicts=verdicts,
        findings=findings,
        steps=steps,
        nbytes=nbytes,
        seconds=time.perf_counter() - started,
    )
