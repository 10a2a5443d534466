"""The trajectory audit and hash ancestry: which trajectories reached beyond the task.

:func:`audit_trajectory` runs every step's command through the cheap :func:`prefilter`, parses
only the candidates (:func:`evotree.harness.audit.commands.parse_shell`) and applies the leak rules.
Then two checks about commit hashes:

* **Clearing by ancestry or provenance.** A rule that fired only because a command named a hash
  (``git show 1a2b3c4``) is dropped when the task repository shows that every such hash is the
  task's base or an ancestor of it; without a repository it becomes ``info`` when the hash was
  first printed by an earlier step that broke no rule (``git log -3`` printed it: HEAD's own
  history), and stays ``high`` otherwise.
* **Hash ancestry** (:class:`~evotree.harness.audit.ancestry.Ancestry`). Every hex word of 7-40
  characters in the outputs, the observation text and the commands is looked up in the task
  repository; one that names a commit that is neither the base nor an ancestor of it is an
  ``audit.future_hash`` finding (high): the trajectory saw a commit from the task's future,
  however it got there.

:func:`audit_trajectories` audits many trajectories (files or :class:`Trajectory` objects) and
returns :class:`TrajectoryAudit`: per-trajectory verdicts, the rate of trajectories that used
git history, and findings grouped by code and run.
"""

from __future__ import annotations

import os
import re
import time
import weakref
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from evotree.core.findings import Finding, Severity
from evotree.harness.audit.alone_output import (
    displayed_whole,
    names_unchanged,
    seen_before,
    shows_nothing_new,
)
from evotree.harness.audit.code_lines import code_like
from evotree.harness.audit.shown import HARNESS_FRAMING, MOVES_HEAD
from evotree.harness.audit.ancestry import Ancestry, content_hits, future_hashes, resolve_refs
from evotree.harness.audit.bytecode_provenance import (
    FutureBytecode,
    future_bytecode,
    named_future_bytecode,
)
from evotree.harness.audit.bytecode_rules import BYTECODE_READ, CACHE_TAG
from evotree.harness.audit.commands import (
    _MOVES_CWD,
    Hit,
    RuleSet,
    ShellContext,
    classify_step,
    prefilter,
)
from evotree.harness.audit.errors import UnreadableTrajectory
from evotree.harness.audit.hidden_reads import expand_globs, names_uncovered, whole_prints
from evotree.harness.audit.python_prints import program_prints
from evotree.harness.audit.hidden_queries import (
    holds_index_line,
    query_values,
    read_prints,
    search_prints,
)
from evotree.harness.audit.hidden_parts import part_prints, piped_after
from evotree.harness.audit.hidden_selected import (
    Selection,
    grep_selection,
    selections,
    shell_expands,
    strings_selects,
    whole_file,
)
from evotree.harness.audit.hidden_rules import (
    PRINTED_TAG,
    ROOT_SEARCH_TAG,
    hidden_printed_lines,
    SEARCH_TAG,
    cwd_near_hidden,
    folder_search_files,
    printed_hidden_files,
    printed_hidden_lines,
    root_search_files,
    root_search_folders,
    unseen_search,
)
from evotree.harness.audit.history_rules import BUNDLE_READ, INDEX_READ
from evotree.harness.audit.own_steps import built, made_bundle, staged, started_merge
from evotree.harness.audit.internals_rules import LEFT_MESSAGE
from evotree.harness.audit.patch_tools import printed_patch_header
from evotree.harness.audit.lexer import SimpleCommand, _basename
from evotree.harness.audit.unwrap import parse_shell
from evotree.harness.audit.step_outputs import (
    by_step_output,
    index_held_changes,
    in_own_clone,
    single_branch_clones,
    upstream_after,
)
from evotree.harness.audit.replay import replay_hits
from evotree.harness.audit.steps import Trajectory
from evotree.harness.audit.verdicts import (
    EXAMPLES,
    HISTORY_CODES,
    TrajectoryVerdict,
    findings_from_verdicts,
)
from evotree.harness.audit.trajectory_provenance import (
    CopiedLines,
    ListedNames,
    Shown,
    by_what_followed,
    clear_reason,
    may_print_tag_message,
    named_tags,
)
from evotree.harness.audit.transcripts import read_trajectories

__all__ = [
    "TrajectoryVerdict",
    "TrajectoryAudit",
    "audit_trajectory",
    "audit_trajectories",
    "findings_from_verdicts",
    "read_or_unreadable",
    "HISTORY_CODES",
]


def audit_trajectory(
    traj: Trajectory,
    rules: RuleSet = RuleSet(),
    ancestry: Ancestry | None = None,
    graders: RuleSet | None = None,
) -> TrajectoryVerdict:
    """Apply the leak rules to every step of ``traj``, then clear or confirm named hashes.
    ``graders``: the rules over the grader's data alone (among ``rules``' hidden paths): a
    step that reads it keeps its read, whatever it printed (nothing clears or lowers it)."""
    verdict = TrajectoryVerdict(
        traj.id, traj.format, traj.source, traj.task_id, traj.run_id, traj.phase, len(traj.steps)
    )
    for why in traj.unread[:EXAMPLES]:  # nothing passes unread
        verdict.hits.append(
            Hit("audit.unreadable", "high", f"unreadable: {why}", traj.source or traj.id)
        )
    step_hits = _step_hits(traj, rules)
    judge = _HitJudge(traj, step_hits, ancestry, verdict)
    if graders is not None and graders.hidden_paths:
        judge.grader_steps = {
            k
            for k, hits in enumerate(_step_hits(traj, graders))
            if any(h.code == "audit.hidden_data_read" and h.severity == "high" for h in hits)
        }
    # clear hits that rest only on hashes shown to be in the task's own history
    for k, hits in enumerate(step_hits):
        kept = [judged for hit in hits if (judged := judge.judge(hit, k)) is not None]
        verdict.hits += kept
    if ancestry is not None:
        _add_ancestry_hits(verdict, traj, ancestry)
        verdict.hits += replay_hits(traj, ancestry)
    return verdict


#: the file-alone warn of ``git show --stat`` / ``git log --stat`` of a commit id
_STAT_SHOW = re.compile(r"git (?:show|log|whatchanged) \S+ names the files and counts of ")
#: a command that writes into a git directory (``--output=.git/HEAD``, ``> .git/HEAD``)
_WRITES_GIT = re.compile(r"(?:--output[= ]\S*|>\|?\s*)\S*\.git/")
#: git's own header of a commit it shows (``commit <id>``, decorated or not)
_COMMIT_HEADER = re.compile(r"^commit [0-9a-f]{7,64}(?: \(.*\))?$")


#: what ``git show --stat`` / ``git log --stat`` print besides a commit's message: its
#: header, a stat line, the summary
_STAT_FRAME = re.compile(
    r"^(?:commit [0-9a-f]{7,64}\b.*|Author: .*|Date: .*|Merge: .*|AuthorDate: .*|Commit: .*|"
    r"CommitDate: .*| \S.* \| +(?:\d+ ?[+-]*|Bin .*)| \d+ files? changed.*)$"
)


def _stat_shows_more(output: str | None) -> str | None:
    """What a recorded ``--stat`` output showed beyond names, counts and a message of prose
    (None when nothing): no commit header (a blob or tree id prints its content), or a line of
    its message that is a line of a program (a fix pasted into a commit message)."""
    if output is None:
        return None
    lines = [
        ln for ln in output.splitlines() if ln.strip() and not HARNESS_FRAMING.match(ln.strip())
    ]
    if not lines:
        return None
    if not any(ln.startswith("commit ") for ln in lines):
        return "its output is no commit's: a blob or tree id prints the object"
    for line in lines:
        if _STAT_FRAME.match(line):
            continue
        text = line[4:] if line.startswith("    ") else line
        if code_like(text):
            return f"its output shows a line of a program: {text.strip()[:80]!r}"
    return None


def _step_hits(traj: Trajectory, rules: RuleSet) -> list[list[Hit]]:
    """The hits of each step: the rules applied to its command in the shell context the steps
    before it left, lowered by what its output showed and by the clones the trajectory made."""
    # a folder holding a hidden path, or a glob or find that may reach one without naming it
    needles = (
        (*rules.hidden_needles, *rules.hidden_folders, "*", "?", "-exec", "xargs", "grep", "quilt")
        if rules.hidden_paths
        else ()
    )
    step_hits: list[list[Hit]] = []
    context = ShellContext()  # variables, aliases and scripts carry over between steps
    upstream = ""  # an upstream git status showed at HEAD (no ahead/behind), until HEAD moves
    clones: dict[str, str] = {}  # single-branch clones of this repository: folder -> branch
    for step in traj.steps:
        hits: list[Hit] = []
        if step.command and (
            context.relevant(step.command)
            or prefilter(step.command, needles)
            or (rules.hidden_paths and _moves_or_computes(step.command, context, rules))
        ):
            hits = classify_step(step.command, rules, context, step.output)
        if hits:
            hits = [unseen_search(h, step.output) for h in by_step_output(hits, step, upstream)]
            if printed_patch_header(step.command, step.output):
                hits = [_header_shown(h) for h in hits]
        if not any(h.code == "audit.hidden_data_read" and h.severity == "high" for h in hits):
            hits += printed_hidden_lines(step.command or "", step.output, rules)
        made: dict[str, str] = {}
        single_branch_clones(step.command, made)
        if hits and (clones or made):
            # a clone made earlier in this step counts for the commands after it
            cmd = step.command
            here = {
                **clones,
                **{d: b for d, b in made.items() if 0 <= cmd.find(f" . {d}") < cmd.find(f"-C {d}")},
            }
            hits = [in_own_clone(h, here) for h in hits]
        upstream = upstream_after(step, upstream)
        clones.update(made)
        for dest in [
            d
            for d in clones
            if d not in made and f" {d}" in step.command and "clone" in step.command
        ]:
            clones.pop(dest)  # cloned over with something else
        step_hits.append(hits)
    return step_hits


def _header_shown(hit: Hit) -> Hit:
    """A patch named, not read (a dry run), whose output shows patch printed the text leading
    up to its diff (a mail header: the fix's subject): a read, high."""
    if hit.code != "audit.hidden_data_read" or hit.severity != "info":
        return hit
    return replace(hit, severity="high", rule=hit.rule + " (patch printed the patch's header)")


def _moves_or_computes(command: str, context: ShellContext, rules: RuleSet) -> bool:
    """Must a step be parsed for its folder, whatever the prefilter says? It changes the folder
    later steps run in (``cd``), or, run in a folder a ``cd`` moved to, it computes a name
    (``cat $(ls | grep REMOTE)``) or that folder is near a hidden path (inside a hidden folder,
    ``cat shelved.patch`` names none of the hidden path's parts)."""
    cwd = context.state.get("cwd")
    return bool(_MOVES_CWD.search(command)) or (
        isinstance(cwd, str) and ("$" in command or "`" in command or cwd_near_hidden(cwd, rules))
    )


#: the rule of a hit that only names a hidden file (a listing, a count)
NAMED_ONLY = "names hidden data without reading it"


def _pipes(command: str) -> int:
    """How many ``|`` (``|&`` too; not ``||``) ``command`` holds anywhere, quoted or not: a
    count no quoting can hide a pipe from (a quoted one only makes a read stay high)."""
    return len(re.findall(r"(?<!\|)\|(?!\|)", command))


#: hidden-data reads judged by what they print of the checkout's file, with the task repository
_EVALUATED = re.compile(
    r"(?:\S*/)?(?:sqlite3|jq|head|tail|e?grep|fgrep|strings|tar|g?zcat|bzcat|xzcat|gunzip|gzip|cat|sed|awk|diff)\s"
)


def _reads_cache(hit: Hit) -> bool:
    """A read of a ``.pyc`` or of a hidden path that is a bytecode cache."""
    return hit.code == "audit.hidden_data_read" and (
        hit.rule.startswith(BYTECODE_READ) or hit.rule.endswith(CACHE_TAG)
    )


def _what(hit: Hit) -> str:
    """What a hit's future id names: a staged blob for an index read, a tag object for a read
    of tag messages, else a commit."""
    if any(r.startswith("*index:") for r in hit.refs):
        return "staged blob"
    return "tag object" if any(r.startswith("*tagmsg") for r in hit.refs) else "commit"


def _naming(rule: str, hidden: str) -> str:
    """A root search's rule naming the hidden file it was re-run on, in place of the first
    hidden path the spelling reached (which the checkout may not hold)."""
    return re.sub(
        r" and the hidden .+? with it",
        lambda _m: f" and the hidden {hidden} with it",
        rule,
        count=1,
    )


def _holds(
    values: Sequence[str],
    index: Any,
    own: str = "",
    *,
    inside: bool = False,
    parts: bool = False,
) -> bool:
    """Does what a read of a hidden file printed hold the future: a line of the provenance
    index (:func:`holds_index_line`), or, finer, a piece of a line a future commit adds that
    the base's files nowhere hold and the trajectory's ``own`` text does not, in the text as
    printed or with its encodings undone (:meth:`ProvenanceIndex.shows_piece`: a line cut
    behind an offset, XML-escaped)? A read is cleared only when it printed neither."""
    if holds_index_line(values, index.lines, inside=inside, parts=parts):
        return True
    return any(index.shows_piece(value, own) for value in values)


class _HitJudge:
    """Judges each step's hits by what the trajectory did around them and, with a task
    repository, by ancestry; a hit cleared is recorded on the verdict with why."""

    def __init__(
        self,
        traj: Trajectory,
        step_hits: list[list[Hit]],
        ancestry: Ancestry | None,
        verdict: TrajectoryVerdict,
    ) -> None:
        self.traj, self.step_hits, self.ancestry, self.verdict = traj, step_hits, ancestry, verdict
        self.listed, self.copied = ListedNames(traj), CopiedLines(traj, step_hits)
        self.shown = Shown(traj, step_hits)
        #: steps that read the grader's data (:func:`audit_trajectory`'s ``graders``)
        self.grader_steps: set[int] = set()

    def judge(self, hit: Hit, k: int) -> Hit | None:
        """The hit as kept (raised, lowered or as it was), or None when it is dropped."""
        if k in self.grader_steps and hit.code == "audit.hidden_data_read":
            if hit.severity == "high":
                return hit  # the grader's data: a read is a leak, whatever it printed
        if hit.rule.startswith(INDEX_READ) and self.ancestry is None:
            if staged(self.traj, k, hit.command):
                return None  # the index holds what the trajectory staged itself
            held = index_held_changes(self.traj.steps, k, self.traj.steps[k].command or "")
            if held is not None:
                return Hit(hit.code, "high", f"{hit.rule}: {held}", hit.command, refs=hit.refs)
        if _reads_cache(hit) and built(self.traj, k, hit.command):
            self.verdict.cleared.append(
                {**hit.to_dict(), "why": "the trajectory built that bytecode itself before"}
            )
            return None
        if hit.rule.startswith(BUNDLE_READ) and made_bundle(self.traj, k, hit):
            self.verdict.cleared.append(
                {**hit.to_dict(), "why": "the trajectory created that bundle itself before"}
            )
            return None
        if hit.rule.startswith(LEFT_MESSAGE) and started_merge(self.traj, k):
            self.verdict.cleared.append(
                {**hit.to_dict(), "why": "the trajectory started the merge or squash itself"}
            )
            return None
        if hit.rule.startswith(NAMED_ONLY) and self._oracle_selects_future(hit, k):
            rule = hit.rule.replace(NAMED_ONLY, "counts or names the matches of hidden data")
            why = " (an oracle): the lines it selects, re-done on the checkout, hold the future"
            return replace(hit, severity="high", rule=rule + why)
        if self._query_shows_no_future(hit, k):
            self.verdict.cleared.append(
                {
                    **hit.to_dict(),
                    "why": "a query of the hidden file whose every printable value holds no "
                    "line of the provenance index (metadata, not the file's code)",
                }
            )
            return None
        if self._program_shows_no_future(hit, k):
            self.verdict.cleared.append(
                {
                    **hit.to_dict(),
                    "why": "a Python program that can only print, re-done on the checkout's "
                    "files: what it printed holds no line of the provenance index",
                }
            )
            return None
        if hit.rule.startswith(PRINTED_TAG) and self._printed_no_future(k):
            self.verdict.cleared.append(
                {
                    **hit.to_dict(),
                    "why": "the lines the search printed of hidden paths hold no line of the "
                    "provenance index (the tool's own text, not the future's)",
                }
            )
            return None
        if hit.rule.endswith(ROOT_SEARCH_TAG):
            return self._root_search(hit, k)
        if hit.rule.endswith(SEARCH_TAG) and hit.severity == "warn":
            searched = self._folder_search(hit, k)
            if searched is not hit:
                return searched
        hit = by_what_followed(hit, k, self.listed, self.copied)
        if (
            self.ancestry is None
            and hit.code == "audit.hidden_data_read"
            and hit.severity == "high"
        ):
            hit = self._alone_by_output(hit, k)
        if self.ancestry is None and _STAT_SHOW.match(hit.rule) and hit.severity == "warn":
            hit = self._stat_id_printed_before(hit, k)
        ancestry = self.ancestry
        if hit.refs and hit.code == "audit.git_history_leak" and ancestry is not None:
            state, cid = resolve_refs(hit, ancestry)
            if state == "future":
                return Hit(
                    hit.code,
                    "high",
                    f"{hit.rule.split(':')[0] if hit.candidate else hit.rule} "
                    f"(resolves to {_what(hit)} {cid[:12]}, beyond the base)",
                    hit.command,
                    hit.revisions or (cid[:12],),
                    refs=hit.refs,
                )
            if state in ("ancestor", "absent") and ancestry.trusted:
                why = (
                    "resolves to the base or its ancestor"
                    if state == "ancestor"
                    else "names nothing in the task repository (no such stash or stopped session)"
                )
                self.verdict.cleared.append({**hit.to_dict(), "why": why})
                return None
        if hit.candidate:
            # the spelling alone cannot judge it, and no repository said it is beyond the base
            return None
        return self._by_provenance(hit, k)

    def _alone_by_output(self, hit: Hit, k: int) -> Hit:
        """On the file alone, a read of hidden data whose recorded output shows nothing the
        file can tie to the future (:func:`shows_nothing_new`) is lowered to a warn."""
        step = self.traj.steps[k]
        if not names_unchanged(s.command for s in self.traj.steps[: k + 1]):
            return hit  # a name may run the agent's own program
        # seen: what the task said and what the checkout's own files showed (never what the
        # agent printed itself: its guesses would vouch for themselves)
        why = shows_nothing_new(
            step.command or "", step.output, seen_before(self.traj.prompt, self._pristine_reads(k))
        )
        if why is None:
            return hit
        return replace(hit, severity="warn", rule=f"{hit.rule} (file alone: {why})")

    def _pristine_reads(self, k: int) -> list[str | None]:
        """What plain reads of the checkout's own files printed while nothing could have
        changed them: the outputs of the steps, other than ``k``, that display whole lines,
        touch no hidden data and break no rule, before the first step that could write (any
        other program). Their lines are the base's text, whenever the trajectory showed it."""
        out: list[str | None] = []
        for j, step in enumerate(self.traj.steps):
            if not displayed_whole(step.command or ""):
                break
            if j != k and self.shown.quiet(j):
                out.append(step.output)
        return out

    def _stat_id_printed_before(self, hit: Hit, k: int) -> Hit:
        """``git show --stat ID`` is a warn alone only while nothing in the trajectory printed
        ID (git's own ``commit ID`` header aside) and every step before it broke no rule and
        moved nothing: an id some output listed came from somewhere — a walk of other
        references, a script, another repository, a moved HEAD — and is judged as any other
        (high; cleared when what printed it was HEAD's own listing)."""
        rule = hit.rule.replace("names the files and counts of", "reads")
        for j, step in enumerate(self.traj.steps[: k + 1]):
            command = step.command or ""
            if (j < k and not self.shown.quiet(j)) or (
                MOVES_HEAD.search(command) or _WRITES_GIT.search(command)
            ):
                # HEAD may have moved, or a step broke a rule: its history is not the base's
                return replace(hit, severity="high", rule=f"{rule} (after a step that may have "
                               "moved HEAD or broke a rule)")  # fmt: skip
        shown = _stat_shows_more(self.traj.steps[k].output)
        if shown is not None:
            return replace(hit, severity="high", rule=f"{rule} ({shown})")
        outputs = [s.output or "" for s in self.traj.steps[: k + 1]]
        ids = [w.lower() for w in hit.revisions if len(w) >= 4]
        for output in outputs:
            for line in output.splitlines():
                if _COMMIT_HEADER.match(line.strip()):
                    continue
                low = line.lower()
                if any(i in low for i in ids):
                    return replace(hit, severity="high", rule=f"{rule} (its id printed before)")
        return hit

    def _own(self, k: int) -> str:
        """What the trajectory was told (its prompt) and typed up to step ``k``: text of its
        own, not the future's, wherever a hidden file repeats it."""
        typed = [s.command or "" for s in self.traj.steps[: k + 1]]
        return "\n".join([self.traj.prompt or "", *typed])

    def _root_search(self, hit: Hit, k: int) -> Hit:
        """A ``grep -r`` from the checkout's root that reaches hidden files or folders: a warn
        when its output is recorded (the lines it printed are judged) or when no trusted
        repository says the checkout holds one; else the search is re-run on each hidden file
        the checkout holds and each file of each hidden folder it holds (a hidden path the
        checkout holds as a folder is one, however declared), and high when what it prints
        holds a line of the provenance index or what it selects holds the future (or it
        cannot be re-run)."""
        ancestry = self.ancestry
        workdir = ancestry.repo.workdir if ancestry is not None and ancestry.trusted else None
        if self.traj.steps[k].output is not None or ancestry is None or not workdir:
            return hit
        for cmd in parse_shell(self.traj.steps[k].command or ""):
            joined = " ".join(cmd.argv) + "".join(f" {op}{t}" for op, t in cmd.redirects)
            if joined != hit.command:
                continue
            for hidden in root_search_files(cmd.argv, ancestry.hidden_paths):
                if not (Path(workdir) / hidden).is_file():
                    continue  # not in this checkout
                printed = search_prints(cmd.argv, workdir, hidden)
                if printed is None:
                    why = f": not re-run on {hidden}, a read"
                    return replace(hit, severity="high", rule=_naming(hit.rule, hidden) + why)
                lines = [re.sub(r"^\d+[:-]", "", ln) for ln in printed.splitlines()]
                if _holds(lines, ancestry.index(), self._own(k), inside=True):
                    why = f": re-run on {hidden}, prints what only the hidden file holds"
                    return replace(hit, severity="high", rule=_naming(hit.rule, hidden) + why)
                if not self._selected_clean(self._grep_selection(cmd, workdir, hidden, k), k):
                    why = f": re-run on {hidden}, selects lines holding the future (or not re-done)"
                    return replace(hit, severity="high", rule=_naming(hit.rule, hidden) + why)
            for folder in root_search_folders(cmd.argv, ancestry.hidden_paths, workdir):
                files = folder_search_files(cmd.argv, folder, workdir)  # [] if not checked out
                if files is None:
                    why = f": {folder} too large to re-run the search on, a read"
                    return replace(hit, severity="high", rule=_naming(hit.rule, folder) + why)
                for rel in files:
                    printed = search_prints(cmd.argv, workdir, rel)
                    if printed is None:
                        why = f": not re-run on {rel}, a read"
                        return replace(hit, severity="high", rule=_naming(hit.rule, rel) + why)
                    lines = [re.sub(r"^\d+[:-]", "", ln) for ln in printed.splitlines()]
                    if _holds(lines, ancestry.index(), self._own(k), inside=True):
                        why = f": re-run on {rel}, prints what only the hidden folder holds"
                        return replace(hit, severity="high", rule=_naming(hit.rule, rel) + why)
                    if not self._selected_clean(self._grep_selection(cmd, workdir, rel, k), k):
                        why = (
                            f": re-run on {rel}, selects lines holding the future (or not re-done)"
                        )
                        return replace(hit, severity="high", rule=_naming(hit.rule, rel) + why)
        return hit

    def _folder_search(self, hit: Hit, k: int) -> Hit:
        """A ``grep -r`` of a folder holding a hidden folder, with no output recorded and a
        trusted task repository whose checkout holds that folder: the search is re-run on each
        of its files, and it is high when what it prints holds a line of the provenance index
        (or it cannot be re-run). Else a warn: a recorded output is judged by what it printed,
        a folder the checkout lacks is the grader's (added after the run)."""
        ancestry = self.ancestry
        workdir = ancestry.repo.workdir if ancestry is not None and ancestry.trusted else None
        named = re.search(r" and the hidden (.+?) with it", hit.rule)
        if self.traj.steps[k].output is not None or ancestry is None or not workdir or not named:
            return hit
        for cmd in parse_shell(self.traj.steps[k].command or ""):
            joined = " ".join(cmd.argv) + "".join(f" {op}{t}" for op, t in cmd.redirects)
            if joined != hit.command:
                continue
            files = folder_search_files(cmd.argv, named[1], workdir)
            if files is None:
                why = f": {named[1]} too large to re-run the search on, a read"
                return replace(hit, severity="high", rule=hit.rule + why)
            for rel in files:
                printed = search_prints(cmd.argv, workdir, rel)
                if printed is None:
                    return replace(hit, severity="high", rule=hit.rule + f": not re-run on {rel}")
                lines = [re.sub(r"^\d+[:-]", "", ln) for ln in printed.splitlines()]
                if _holds(lines, ancestry.index(), self._own(k), inside=True):
                    why = f": re-run on {rel}, prints what only the hidden folder holds"
                    return replace(hit, severity="high", rule=hit.rule + why)
                if not self._selected_clean(self._grep_selection(cmd, workdir, rel, k), k):
                    why = f": re-run on {rel}, selects lines holding the future (or not re-done)"
                    return replace(hit, severity="high", rule=hit.rule + why)
        return hit

    def _grep_selection(
        self, cmd: SimpleCommand, workdir: str, rel: str, k: int
    ) -> list[Selection] | None:
        """The lines a recursive grep of step ``k`` selects of the hidden file ``rel`` (None:
        not re-done: a word the shell expands, an option not known)."""
        if shell_expands(self.traj.steps[k].command or ""):
            return None
        picked = grep_selection(cmd.argv, Path(workdir), rel)
        return None if picked is None else [picked]

    def _printed_no_future(self, k: int) -> bool:
        """With a trusted task repository: does every line step ``k``'s recorded search printed
        of a hidden path hold no line of the provenance index, and every line it selected of
        each such file (grep re-run on it; every line for another search) nothing of the
        future?"""
        ancestry, output = self.ancestry, self.traj.steps[k].output
        if ancestry is None or not ancestry.trusted or not output or not ancestry.hidden_paths:
            return False
        lines = hidden_printed_lines(output, ancestry.hidden_paths)
        if not lines or _holds(lines, ancestry.index(), self._own(k), inside=True):
            return False
        workdir = ancestry.repo.workdir
        if not workdir:
            return False
        files = printed_hidden_files(output, ancestry.hidden_paths, Path(workdir))
        if not files:
            return False
        raw = self.traj.steps[k].command or ""
        greps = [
            c
            for c in parse_shell(raw)
            if c.argv and _basename(c.argv[0]) in ("grep", "egrep", "fgrep")
        ]
        if shell_expands(raw):
            greps = []  # not re-run: every line of each file it printed lines of
        chosen: list[Selection] = []
        for rel in files:
            # what the search selected of each hidden file it printed lines of, re-done: grep
            # re-run on it (one grep in the step), else every line of the file
            picked = grep_selection(greps[0].argv, Path(workdir), rel) if len(greps) == 1 else None
            if picked is None:
                lines = whole_file(Path(workdir) / rel)
                if lines is None:
                    return False  # not in this checkout: not re-done, a read
                picked = Selection(rel, lines, True)
            chosen.append(picked)
        return self._selected_clean(chosen, k)

    def _program_shows_no_future(self, hit: Hit, k: int) -> bool:
        """A high hidden-data read by a step that runs one print-only Python program, its
        output recorded: with a trusted task repository, does what it printed hold no line of
        the provenance index (:mod:`evotree.harness.audit.python_prints`)?"""
        ancestry, step = self.ancestry, self.traj.steps[k]
        if (
            ancestry is None
            or not ancestry.trusted
            or hit.code != "audit.hidden_data_read"
            or hit.severity != "high"
            or step.output is None
            or not ancestry.hidden_paths
            or not ancestry.repo.workdir
        ):
            return False
        commands = [s.command or "" for s in self.traj.steps]
        workdir, hidden = ancestry.repo.workdir, ancestry.hidden_paths
        printed = program_prints(
            step.command or "", step.output, workdir, hidden, commands, earlier=commands[:k]
        )
        index = ancestry.index()
        # the program selects the values it prints (whole files, whole JSON values)
        return (
            printed is not None
            and not _holds(printed, index, self._own(k), inside=True, parts=True)
            and index.selected_future(printed, self._own(k)) is None
        )

    def _query_shows_no_future(self, hit: Hit, k: int) -> bool:
        """A high hidden-data read that is a plain ``sqlite3``/``jq`` query of a hidden file, a
        ``head``/``tail -n K`` of it, a non-recursive ``grep`` of it, a ``cat`` or read-only
        ``sed -n`` of one file under it (not piped on): with a trusted task
        repository, does nothing it can print hold a line of the provenance index
        (:mod:`evotree.harness.audit.hidden_queries`)?"""
        ancestry = self.ancestry
        if (
            ancestry is None
            or not ancestry.trusted
            or hit.code != "audit.hidden_data_read"
            or hit.severity != "high"
            or not ancestry.hidden_paths
            or not ancestry.repo.workdir
            or not re.match(_EVALUATED, hit.command)
        ):
            return False
        if shell_expands(self.traj.steps[k].command or ""):
            return False  # the words re-run are not the ones the program got
        cmds = parse_shell(self.traj.steps[k].command or "")
        for cmd in cmds:
            joined = " ".join(cmd.argv) + "".join(f" {op}{t}" for op, t in cmd.redirects)
            if joined != hit.command or cmd.redirects or cmd.heredoc is not None:
                continue
            workdir, hidden = ancestry.repo.workdir, ancestry.hidden_paths
            if names_uncovered(cmd, workdir, hidden):
                return False  # the index did not read the file whole: what it printed is unknown
            index, own = ancestry.index(), self._own(k)
            part = part_prints(cmds, cmd, workdir, hidden)  # strings | head, tar -xO MEMBER
            if part is not None:
                if _holds([part], index, own, inside=True):
                    return False
                if _basename(cmd.argv[0]) == "strings":
                    chosen = strings_selects(cmd.argv, piped_after(cmds, cmd), workdir, hidden)
                    return chosen is not None and self._selected_clean(chosen, k)
                # tar -xO: what it prints is the members it selects, verbatim
                return index.selected_future(part.splitlines(), own) is None
            piped = (
                any(c.stdin == cmd for c in cmds)
                or cmd.xargs
                or cmd.grouped
                # a pipe the parse holds no link for (``cat f | sh``: a shell reading a script
                # on stdin is parsed without it) feeds something not judged here
                or _pipes(self.traj.steps[k].command or "") > sum(c.stdin is not None for c in cmds)
            )
            globbed = expand_globs(cmd, workdir)  # the checkout's files a glob names
            if globbed is None:
                return False
            cmd = globbed
            whole = None if piped else whole_prints(cmd.argv, workdir, hidden)  # cat, sed -n, diff
            if whole is not None:
                if _holds([whole], index, own, inside=True):
                    return False
                return self._selected_clean(selections(cmd, workdir, hidden), k)
            values = query_values(cmd.argv, workdir, hidden)
            if values is not None:
                # a structured query selects the values it prints, whole
                return not _holds(values, index, own) and index.selected_future(values, own) is None
            printed = read_prints(cmd.argv, workdir, hidden)  # head/tail -n K, a grep
            if printed is not None:
                pieces = any(  # grep -o: the matches, pieces of lines
                    w == "--only-matching" or re.fullmatch(r"-[A-Za-z]*o[A-Za-z]*", w)
                    for w in cmd.argv[1:]
                )
                if _holds(printed, index, own, inside=True, parts=pieces):
                    return False
                return self._selected_clean(selections(cmd, workdir, hidden), k)
            if _basename(cmd.argv[0]) in ("awk", "head", "tail"):
                # awk 'NR==K', head/tail -c K: what they print is in the lines they select
                chosen = selections(cmd, workdir, hidden)
                if chosen and not any(c.whole for c in chosen):
                    lines = [line for c in chosen for line in c.lines]
                    if _holds(lines, index, own, inside=True):
                        return False
                    return self._selected_clean(chosen, k)
        return False

    def _oracle_selects_future(self, hit: Hit, k: int) -> bool:
        """A ``grep`` that only names a hidden file (``-c`` prints a count, ``-l`` a name, ``-q``
        nothing) still selects its matching lines: with a trusted task repository, do the lines
        it selects of the checkout's hidden file hold the future (a probe of the fix, one
        candidate at a time)?"""
        ancestry = self.ancestry
        if ancestry is None or not ancestry.trusted or not ancestry.repo.workdir:
            return False
        for cmd in parse_shell(self.traj.steps[k].command or ""):
            joined = " ".join(cmd.argv) + "".join(f" {op}{t}" for op, t in cmd.redirects)
            if joined != hit.command or not cmd.argv:
                continue
            if _basename(cmd.argv[0]) not in ("grep", "egrep", "fgrep"):
                continue
            chosen = selections(cmd, ancestry.repo.workdir, ancestry.hidden_paths)
            if chosen and shell_expands(self.traj.steps[k].command or ""):
                # the probe is not what its words say: every line of the file it named
                root = Path(ancestry.repo.workdir)
                whole = [(c.path, whole_file(root / c.path)) for c in chosen]
                chosen = [Selection(p, lines or [], True) for p, lines in whole]
            if chosen and not self._selected_clean(chosen, k):
                return True
        return False

    def _selected_clean(self, chosen: Sequence[Selection] | None, k: int) -> bool:
        """With the task repository: does each line a command selected of each hidden file
        (:mod:`evotree.harness.audit.hidden_selected`) hold nothing of the future? None (the
        selection not re-done): no."""
        if chosen is None or self.ancestry is None:
            return False
        index, own = self.ancestry.index(), self._own(k)
        for chose in chosen:
            if index.selected_future(chose.lines, own) is None:
                continue
            if chose.matches is None or index.future_only(chose.matches) is not None:
                return False  # a read of future lines, or an oracle probing the future's text
        return True

    def _by_provenance(self, hit: Hit, k: int) -> Hit | None:
        """A high history hit on hashes or tags: cleared when every hash is the base or its
        ancestor, lowered when HEAD's own history printed them first; then judged by what its
        output showed."""
        names = named_tags(hit) if not hit.revisions else ()
        if names and may_print_tag_message(hit, self.traj.steps[k].output):
            names = ()  # a tag behind HEAD may carry the future in its message
        if (
            (hit.revisions or names)
            and hit.severity == "high"
            and hit.code == "audit.git_history_leak"
        ):
            reason = clear_reason(hit, k, self.traj, self.step_hits, self.ancestry, names)
            if reason == "ancestor":
                self.verdict.cleared.append(
                    {**hit.to_dict(), "why": "every hash is the base or its ancestor"}
                )
                return None
            if reason == "seen":
                what = "hash" if hit.revisions else "tag"
                hit = Hit(
                    hit.code,
                    "info",
                    hit.rule + f" ({what} first printed by HEAD's own history)",
                    hit.command,
                    hit.revisions,
                )
        return self.shown.judge(hit, k)


#: the work tree's .pyc files compiled from the future, per task repository (walked once)
_BYTECODE: weakref.WeakKeyDictionary[Ancestry, list[FutureBytecode]] = weakref.WeakKeyDictionary()


def _future_bytecode(ancestry: Ancestry) -> list[FutureBytecode]:
    if ancestry not in _BYTECODE:
        _BYTECODE[ancestry] = future_bytecode(
            ancestry.repo.workdir, ancestry.repo, ancestry.index()
        )
    return _BYTECODE[ancestry]


def _add_ancestry_hits(verdict: TrajectoryVerdict, traj: Trajectory, ancestry: Ancestry) -> None:
    """Content provenance and hash ancestry: what the trajectory saw of the task's future."""
    verdict.hits += content_hits(traj, ancestry)
    verdict.hits += named_future_bytecode(
        traj, _future_bytecode(ancestry), "touches bytecode of a future version of a module"
    )
    future = future_hashes(traj, ancestry)
    if future:
        verdict.future_hashes = future
        verdict.hits.append(
            Hit(
                "audit.future_hash",
                "high",
                f"saw {len(future)} commit(s) or object(s) not behind the task's base",
                future[0],
                tuple(future[:EXAMPLES]),
            )
        )


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


def read_or_unreadable(path: str | os.PathLike[str]) -> list[Trajectory]:
    """The trajectories of one file; a file whose content no reader knows (unknown format,
    binary, no valid line) becomes one trajectory with nothing but the reason it could not be
    read, which :func:`audit_trajectory` turns into an ``audit.unreadable`` hit (high). A file
    that cannot be opened still raises :class:`AuditInputError` (exit 29)."""
    try:
        return read_trajectories(path)
    except UnreadableTrajectory as exc:
        return [Trajectory(Path(path).name, "unknown", source=str(path), unread=[exc.message])]


def audit_trajectories(
    items: Iterable[str | os.PathLike[str] | Trajectory],
    *,
    hidden_paths: Sequence[str] = (),
    repo: str | os.PathLike[str] | None = None,
    base: str | None = None,
    version: str | None = None,
    ancestries: dict[str, Ancestry] | None = None,
    door_paths: Sequence[str] = (),
    grader_paths: Sequence[str] = (),
) -> TrajectoryAudit:
    """Audit trajectory files (any format of :mod:`evotree.harness.audit.transcripts`) or objects.

    Hidden paths have a role (docs/audit.md). ``hidden_paths``: paths no trajectory may touch;
    with the task repository a read is judged by what it showed of the file (its distinctive
    lines). ``door_paths``: a tool's leftovers that may hold the future fix: with the task
    repository a read whose output shows nothing of the committed future is cleared, as the
    content of a door counts only for the future it carries. ``grader_paths``: the grader's
    data (hidden tests, expected values): a read of its content is a leak whatever it printed,
    with the repository or not. A path declared twice takes the stricter role. ``repo``/``base``:
    the task repository and base commit for hash ancestry (``base`` defaults to the
    repository's HEAD). ``ancestries``: task id -> :class:`Ancestry`, for trajectories of
    several tasks (evotree runs).
    """
    started = time.perf_counter()
    hidden_all = (*hidden_paths, *door_paths, *grader_paths)
    rules = RuleSet(hidden_paths=tuple(dict.fromkeys(hidden_all)))
    graders = RuleSet(hidden_paths=tuple(grader_paths)) if grader_paths else None
    default = (
        Ancestry(
            repo, base, hidden_paths=hidden_paths, door_paths=door_paths, grader_paths=grader_paths
        )
        if repo is not None
        else None
    )
    verdicts: list[TrajectoryVerdict] = []
    totals: Counter[str | None] = Counter()
    steps = nbytes = 0
    for item in items:
        trajs = [item] if isinstance(item, Trajectory) else read_or_unreadable(Path(item))
        for traj in trajs:
            ancestry = (ancestries or {}).get(traj.task_id or "", default)
            verdict = audit_trajectory(traj, rules, ancestry, graders)
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
