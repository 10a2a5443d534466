"""What a step's recorded output showed, judged on the file alone by where its objects came from.

A rule that fires on a wide or unresolvable revision (``git log --all``, ``git show :/text``,
``git diff @{u}``) cannot tell from the spelling whether git printed anything beyond the task's
base. When the output was recorded, it often can:

* **Every commit it shows is vouched for.** A commit is vouched for when the task's prompt
  quotes it (not as the fix: see :func:`fix_quotes`) or git run on HEAD's own history printed it
  (``git log -3``) before anything moved HEAD; in a decorated walk the line marked ``HEAD`` is
  HEAD itself. An undecorated line is not judged by the tips around it: git (2.38 on)
  decorates only branches, remotes, tags and the stash, so a commit reached from
  ``refs/pull/*`` or ``refs/original/*`` is listed bare.
* **The one branch there is, is HEAD's.** A listing of ``refs/heads`` that prints one branch,
  in a trajectory whose outputs show HEAD is on a branch (``git status``'s ``On branch``, an
  ``@{u}`` that resolved), lists HEAD.
* **A diff of only known lines.** ``git diff REV`` whose removed and added lines the trajectory
  had already seen (an output of a step that broke no rule) or typed itself showed nothing new.

Each returns the reason (a phrase for the finding) or ``None``; the caller lowers the hit to info.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Sequence

from evotree.harness.audit.git_argv import _git_split
from evotree.harness.audit.shells import LOGIN, is_shell, runs_body
from evotree.harness.audit.steps import Trajectory
from evotree.harness.audit.unwrap import parse_shell

__all__ = [
    "MOVES_HEAD",
    "Vouched",
    "fix_quotes",
    "shows_only_vouched",
    "one_branch_is_head",
    "diff_shows_known",
    "blob_is_the_checkouts",
    "names_below_head",
    "cherry_marks_none",
    "printed_commits_below_head",
]

_HEX = re.compile(r"(?<![0-9A-Za-z])[0-9a-f]{7,40}(?![0-9A-Za-z])")
#: git commands after which HEAD may be somewhere else (its history no longer the base's)
MOVES_HEAD = re.compile(
    r"\bgit\b.*\b(?:reset|checkout|switch|merge|rebase|pull|cherry-pick|am|"
    r"update-ref|symbolic-ref|bisect|worktree|filter-branch|replace)\b"
)
#: a clause of the task text that names a commit as the fix, elsewhere than the base (the base
#: has the bug, so a commit said to fix it is not behind it): "Fixed upstream in 66ad9a5"
_FIX_CLAUSE = re.compile(
    r"\b(?:fix(?:ed|es)?|patch(?:ed|es)?|resolv(?:ed|es)|solved|corrected)\b[^.;\n]{0,40}?"
    r"\b(?:in|by|at|with)\s+(?:commit\s+|upstream\s+)?`?([0-9a-f]{7,40})\b",
    re.I,
)
_NOT_OURS = re.compile(
    r"\b(?:upstream|unreleased|not (?:yet )?(?:released|merged|in)|pending|"
    r"later|next release|on (?:the )?(?:main|master|develop) branch)\b",
    re.I,
)
_BREAKS = re.compile(r"\b(?:broke|break|regress\w*|introduc\w*|since|caused|added|keep)\b", re.I)
#: lines a harness wraps around a step's output (Codex, SWE-agent, mini-swe-agent, evotree's
#: ``[exit N]``): never the step's own output; the replay sets them aside too
HARNESS_FRAMING = re.compile(
    r"^(?:Chunk ID: \w+|Wall time: [\d.]+ seconds|Process exited with code \d+|"
    r"Original token count: \d+|Output:|OBSERVATION:|\[exit \d+\]|"
    r"<returncode>\d+</returncode>|</?output>|Exit code: \d+)$"
)
#: filters that only cut an output from its end or page it (no line of the middle dropped)
_CUTTERS = frozenset({"head", "cat", "less", "more"})
_WALKERS = frozenset(
    {"log", "show", "whatchanged", "rev-list", "rev-parse", "for-each-ref", "show-ref", "reflog"}
)
#: ``git reflog``'s newest entry of HEAD's log: HEAD itself
_REFLOG_HEAD = re.compile(r"^([0-9a-f]{7,40}) (?:\([^)]*\) )?HEAD@\{0\}: ")
_COMMIT_LINE = re.compile(r"^[*|\\/ ]*commit ([0-9a-f]{7,40})(?: \((.*)\))?\s*$")
_ONELINE = re.compile(r"^[*|\\/ ]*([0-9a-f]{7,40})(?: \(([^)]*)\))?(?:\s|$)")
_GRAPH_ONLY = re.compile(r"^[*|\\/ _.-]+$")
_HEAD_DECOR = re.compile(r"(?:^|, )HEAD(?: -> [^,]+)?(?:,|$)")


def fix_quotes(prompt: str | None) -> frozenset[str]:
    """Hashes the task text names as the fix made elsewhere ("Fixed upstream in 66ad9a5, not
    released yet"): quoted by the task, yet not behind the base."""
    found: set[str] = set()
    for sentence in re.split(r"(?<=[.!?])\s+|\n", prompt or ""):
        for m in _FIX_CLAUSE.finditer(sentence):
            if _NOT_OURS.search(sentence) or not _BREAKS.search(sentence):
                found.add(m.group(1))
    return frozenset(found)


class Vouched:
    """Commits a trajectory shows are HEAD's own: quoted by the prompt (not as the fix), or
    printed by git on HEAD's history at a step that broke no rule, while HEAD had not moved."""

    def __init__(
        self, traj: Trajectory, quiet: Callable[[int], bool], head_git: Callable[[str], bool]
    ) -> None:
        words: set[str] = set()
        fixes = fix_quotes(traj.prompt)
        # (a number in the task's text is not a hash; git's own output may abbreviate to digits)
        words.update(
            w for w in _HEX.findall(traj.prompt or "") if w not in fixes and not w.isdigit()
        )
        for j, step in enumerate(traj.steps):
            command = step.command or ""
            if MOVES_HEAD.search(command):
                break  # HEAD may be elsewhere from here on: its history is not the base's
            if step.output and quiet(j) and head_git(command):
                words.update(_HEX.findall(step.output))
        self.words = frozenset(words)

    def __contains__(self, word: str) -> bool:
        if word in self.words:
            return True
        return any(w.startswith(word) or word.startswith(w) for w in self.words)


def _single_git(command: str) -> tuple[str, list[str]] | None:
    """(subcommand, arguments) when ``command`` runs one git command whose output reaches the
    record whole or cut from its end (``| head``), inside ``bash -lc`` or not; else None."""
    found = None
    for cmd in parse_shell(command):
        if not cmd.argv:
            return None
        name = os.path.basename(cmd.argv[0])
        if runs_body(cmd.argv, LOGIN):
            continue
        if name == "git":
            if found is not None or any(op in (">", ">>", ">|") for op, _ in cmd.redirects):
                return None
            found = _git_split(cmd.argv)
        elif name not in _CUTTERS:
            return None
    return found


def _records(output: str) -> list[tuple[str, str | None]] | None:
    """(hash, decoration or None) of each commit or reference an output lists; None when a
    line of it belongs to no listed object (what it is cannot be judged)."""
    records: list[tuple[str, str | None]] = []
    in_commit = False
    for raw in output.splitlines():
        line = raw.rstrip()
        if not line.strip() or HARNESS_FRAMING.match(line.strip()) or _GRAPH_ONLY.match(line):
            continue
        m = _COMMIT_LINE.match(line)
        if m:
            records.append((m.group(1), m.group(2)))
            in_commit = True
            continue
        if in_commit:
            continue  # the commit's header, message and diff
        m = _REFLOG_HEAD.match(line)
        if m:
            records.append((m.group(1), "HEAD"))
            continue
        m = _ONELINE.match(line)
        if m:
            records.append((m.group(1), m.group(2)))
            continue
        words = _HEX.findall(line)  # `refs/heads/main dfc499b subject` (for-each-ref formats)
        if len(words) != 1:
            return None
        records.append((words[0], None))
    return records


def shows_only_vouched(command: str, output: str | None, vouched: Vouched) -> str | None:
    """Every commit a display step's output lists is vouched for (or, in a decorated walk,
    below a vouched tip): it showed HEAD's own history, whatever the revision's spelling."""
    if not output or not output.strip():
        return None
    split = _single_git(command)
    if split is None or split[0] not in _WALKERS:
        return None
    records = _records(output)
    if not records:
        return None
    head = {w for w, d in records if d and _HEAD_DECOR.search(d)}  # HEAD, wherever it recurs
    for word, _ in records:
        if not (word in vouched or word in head):
            return None
    return "every commit the output lists is HEAD, quoted by the task or printed by HEAD's history"


_ON_BRANCH = (
    re.compile(r"(?m)^On branch (\S+)$"),
    re.compile(r"(?m)^## ([^.\s]+)(?:\.\.\.|$)"),
    re.compile(r"(?m)^\* (?!\()(\S+)"),
)
_UPSTREAM_NAMED = re.compile(r"(?m)^(?:refs/remotes/)?[\w.-]+/[\w./-]+\s*$")


def _head_branch(traj: Trajectory) -> str | None:
    """The branch the outputs show HEAD is on ('' when on one, name unknown; None when nothing
    says HEAD is on a branch)."""
    for step in traj.steps:
        command, out = step.command or "", step.output or ""
        if not out or "git" not in command or "fatal:" in out:
            continue
        if re.search(r"\bstatus\b", command):
            for pattern in _ON_BRANCH[:2]:
                m = pattern.search(out)
                if m:
                    return m.group(1)
        if re.search(r"\bbranch\b", command) and "-r" not in command.split():
            m = _ON_BRANCH[2].search(out)
            if m:
                return m.group(1)
        if re.search(
            r"\brev-parse\b.*(?:--symbolic-full-name|--abbrev-ref)\b.*@\{u(?:pstream)?\}", command
        ) and _UPSTREAM_NAMED.search(out):
            return ""  # HEAD's branch has an upstream: HEAD is on a branch
    return None


def one_branch_is_head(command: str, output: str | None, traj: Trajectory) -> str | None:
    """A listing of local branches (``show-ref --heads``, ``for-each-ref refs/heads``) that
    printed one branch and nothing else of ``refs/``, when HEAD is on a branch: that branch is
    HEAD's."""
    if not output or not re.search(r"\b(?:show-ref|for-each-ref)\b", command):
        return None
    refs = re.findall(r"(?m)^[0-9a-f]{40} (refs/\S+)\s*$", output)
    others = re.findall(r"\brefs/(?:tags|remotes|notes|stash|pull|original|keep)\S*", output)
    heads = [r for r in refs if r.startswith("refs/heads/")]
    if len(refs) != 1 or len(heads) != 1 or others and not _only_upstream(others, output):
        return None
    branch = _head_branch(traj)
    if branch is None or branch and heads[0] != f"refs/heads/{branch}":
        return None
    return f"the one branch listed ({heads[0][11:]}) is the branch HEAD is on"


def _only_upstream(others: Sequence[str], output: str) -> bool:
    """``refs/remotes/...`` printed alone on a line (``rev-parse --symbolic-full-name @{u}``
    in the same step), not as a listed reference with an id."""
    return all(o.startswith("refs/remotes/") for o in others) and not re.search(
        r"(?m)^[0-9a-f]{40} refs/remotes/", output
    )


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text.translate(str.maketrans("", "", "\"'\\"))).strip()


_READERS = frozenset(
    {
        "cat",
        "head",
        "tail",
        "sed",
        "nl",
        "grep",
        "rg",
        "less",
        "more",
        "awk",
        "ls",
        "wc",
        "bat",
        "view",
        "open",
    }
)


def _reads_files(command: str) -> bool:
    """Does ``command`` only read files (``cat``, ``sed -n``, an agent's Read tool)? Its output
    is the working tree; a script's output could be anything it dug up."""
    cmds = parse_shell(command)
    return bool(cmds) and all(
        cmd.argv and (os.path.basename(cmd.argv[0]) in _READERS or is_shell(cmd.argv[0]))
        for cmd in cmds
    )


def diff_shows_known(
    k: int, traj: Trajectory, quiet: Callable[[int], bool], head_git: Callable[[str], bool]
) -> str | None:
    """``git diff REV`` whose every removed and added line the trajectory had seen before (a
    file read, or git on HEAD's history, at a step that broke no rule) or typed itself: it
    showed nothing the trajectory did not already have."""
    step = traj.steps[k]
    split = _single_git(step.command or "")
    if split is None or split[0] != "diff" or not step.output or "\n@@ " not in step.output:
        return None
    known = " \n ".join(
        _flat(s.output or "")
        for j, s in enumerate(traj.steps[:k])
        if quiet(j) and (_reads_files(s.command or "") or head_git(s.command or ""))
    )
    typed = " \n ".join(_flat(s.command or "") for s in traj.steps[:k])
    changed = 0
    for line in step.output.splitlines():
        if line[:1] not in "+-" or line.startswith(("+++", "---")):
            continue
        text = _flat(line[1:])
        if not text:
            continue
        if text not in known and text not in typed:
            return None
        changed += 1
    return "the diff shows only lines the trajectory had seen or typed itself" if changed else None


#: programs that print the files they are given and write nothing
_PLAIN_READERS = frozenset({"cat", "head", "tail", "nl", "grep", "rg", "ls", "wc", "less", "more"})


def _plain_reads(command: str) -> list[list[str]] | None:
    """The argument lists of ``command`` when it only prints files (no ``sed``, ``awk`` or a
    redirection that could write one); None otherwise."""
    out = []
    for cmd in parse_shell(command):
        if not cmd.argv:
            return None
        name = os.path.basename(cmd.argv[0])
        if runs_body(cmd.argv, LOGIN):
            continue
        if name not in _PLAIN_READERS or any(op.startswith(">") for op, _ in cmd.redirects):
            return None
        out.append(list(cmd.argv))
    return out or None


def _path_word(word: str) -> str:
    while word.startswith("./"):
        word = word[2:]
    return word


def blob_is_the_checkouts(k: int, traj: Trajectory, quiet: Callable[[int], bool]) -> str | None:
    """``git show REV:PATH`` whose output is, line for line, what ``cat PATH`` printed of the
    checkout at a step that broke no rule: before it, or after it with nothing but reads in
    between (the file unchanged since). That revision's PATH is the checkout's own text: the
    read showed nothing the checkout did not hold."""
    step = traj.steps[k]
    split = _single_git(step.command or "")
    if split is None or split[0] not in ("show", "cat-file") or not (step.output or "").strip():
        return None
    specs = [a for a in split[1] if not a.startswith("-") and a != "blob"]
    if len(specs) != 1 or ":" not in specs[0] or specs[0].startswith(":"):
        return None
    path = _path_word(specs[0].split(":", 1)[1])
    shown = (step.output or "").rstrip()
    if not path:
        return None
    for j, other in enumerate(traj.steps):
        if j == k or not quiet(j) or (other.output or "").rstrip() != shown:
            continue
        reads = _plain_reads(other.command or "")
        if reads != [["cat", path]] and reads != [["cat", "./" + path]]:
            continue
        if j > k and not all(
            quiet(m) and _plain_reads(traj.steps[m].command or "") is not None
            for m in range(k + 1, j)
        ):
            continue
        when = "before" if j < k else "after, nothing written between"
        return f"prints {path} as the checkout holds it (cat {path}, a step {when})"
    return None


#: a line of ``git branch -v`` / ``-a -v`` / ``-vv``: the branch (or remote branch), its commit
_BRANCH_V = re.compile(r"^([* ]) (?:\([^)]*\)|(\S+))\s+([0-9a-f]{7,40}) ")
#: a line of ``git show-ref`` / ``git for-each-ref`` (default format): commit, reference
_REF_LINE = re.compile(r"^([0-9a-f]{40}) (?:commit\t)?refs/(?:heads|tags|remotes)/(\S+)$")
#: commands after which a name may point elsewhere than the outputs before showed
_MOVES_REFS = re.compile(
    r"\bgit\b.*\b(?:fetch|pull|update-ref|remote\s+update|tag\s+-[a-z]*f|branch\s+-[a-z]*[fm]|"
    r"push)\b"
)


def _decorated(decoration: str) -> list[str]:
    """The names of a decoration (``HEAD -> main, tag: v1.0.0, origin/main``), HEAD left out."""
    names = []
    for part in decoration.split(", "):
        part = part.strip().removeprefix("tag: ").removeprefix("HEAD -> ")
        if part and part != "HEAD" and not part.startswith("grafted"):
            names.append(part)
    return names


def _named_commits(command: str, output: str) -> tuple[dict[str, str], set[str]]:
    """(name -> commit, commits marked as HEAD) that one git command's output shows: ``git branch
    -v`` lines (``*`` is HEAD's branch), ``show-ref`` / ``for-each-ref`` lines, decorated
    ``git log`` lines (a line decorated ``HEAD`` is HEAD), ``git rev-parse NAME...``."""
    split = _single_git(command)
    named: dict[str, str] = {}
    heads: set[str] = set()
    if split is None or not output:
        return named, heads
    sub, args = split
    lines = [ln.rstrip() for ln in output.splitlines() if ln.strip()]
    if sub == "branch":
        for line in lines:
            m = _BRANCH_V.match(line)
            if m and m.group(1) == "*":
                heads.add(m.group(3))
            if m and m.group(2):
                named[re.sub(r"^remotes/", "", m.group(2))] = m.group(3)
    elif sub in ("show-ref", "for-each-ref"):
        for line in lines:
            m = _REF_LINE.match(line.strip())
            if m:
                named[m.group(2).removesuffix("^{}")] = m.group(1)
    elif sub == "rev-parse":
        words = [a for a in args if not a.startswith("-")]
        hexes = [ln.strip() for ln in lines if re.fullmatch(r"[0-9a-f]{40}", ln.strip())]
        if words and len(words) == len(hexes) == len(lines):
            named.update(zip(words, hexes))
    elif sub in _WALKERS:
        for word, decoration in _records(output) or []:
            if decoration and _HEAD_DECOR.search(decoration):
                heads.add(word)
            for name in _decorated(decoration or ""):
                named[name] = word
    return named, heads


def names_below_head(
    names: Sequence[str],
    k: int,
    traj: Trajectory,
    vouched: Vouched,
    quiet: Callable[[int], bool],
    head_git: Callable[[str], bool],
) -> str | None:
    """Every name is shown, by git's own output at a step before ``k`` (before anything moved
    HEAD or references), at or below HEAD: decorated on a walk of HEAD's own history that
    broke no rule (``git log --oneline --decorate`` printed ``(tag: v1.0.0)``), or listed at a
    commit HEAD's history printed or that the listing marks as HEAD (``git branch -a -v``:
    ``remotes/origin/main`` at the ``*`` branch's commit)."""
    if not names:
        return None
    proven: dict[str, int] = {}
    for j, step in enumerate(traj.steps[:k]):
        command, output = step.command or "", step.output or ""
        if _MOVES_REFS.search(command):
            proven.clear()  # a name may point elsewhere now
            continue
        if MOVES_HEAD.search(command):
            break  # what later outputs show is about where HEAD went
        if not output or "git" not in command or "fatal:" in output:
            continue
        named, heads = _named_commits(command, output)
        below_head = quiet(j) and head_git(command)  # a walk of HEAD's own history
        for name, commit in named.items():
            if below_head or commit in heads or commit in vouched:
                proven.setdefault(name, j)
    if not all(n in proven for n in names):
        return None
    j = max(proven[n] for n in names)
    return f"{', '.join(names)} shown at or below HEAD by step {j + 1}'s git output"


_CHERRY_LINE = re.compile(r"^\+ [0-9a-f]{7,40}(?: .*)?$")


def cherry_marks_none(command: str, output: str | None) -> str | None:
    """``git cherry [-v] UPSTREAM [HEAD]`` lists commits of HEAD's side only, each marked ``+``
    (no equivalent patch upstream) or ``-`` (one there): an output of ``+`` lines alone showed
    HEAD's own commits and found none of them upstream. A ``-`` line, another head, or an
    output that is not such a list is not judged here."""
    split = _single_git(command)
    if split is None or split[0] != "cherry" or not output:
        return None
    words = [a for a in split[1] if not a.startswith("-")]
    if len(words) > 2 or len(words) == 2 and words[1] not in ("HEAD", "@"):
        return None
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    lines = [ln for ln in lines if not HARNESS_FRAMING.match(ln)]
    if not lines or not all(_CHERRY_LINE.match(ln) for ln in lines):
        return None
    return "git cherry listed only HEAD's own commits, none marked as found upstream"


_TREE_LINE = re.compile(r"^tree [0-9a-f]{40}$", re.M)
_PARENT_LINE = re.compile(r"^parent ([0-9a-f]{40})$", re.M)


def _commit_id(body: str) -> str:
    data = body.encode("utf-8", "surrogateescape")
    return hashlib.sha1(b"commit %d\x00" % len(data) + data).hexdigest()  # noqa: S324 - git's id


def printed_commits_below_head(command: str, output: str | None, vouched: Vouched) -> str | None:
    """A step of ``git cat-file -p|commit REV`` commands only, whose output is the commit
    objects they printed, in order: each object's id is the hash of its text, as git computes
    it. When every REV that is not HEAD-relative printed a commit that is HEAD, a parent HEAD's
    own object in the same step names, or a commit HEAD's history printed, it showed nothing
    beyond HEAD. Annotated tags (an ``object``/``type`` header) are not judged here."""
    if not output or "tree " not in output:
        return None
    revs: list[str] = []
    for cmd in parse_shell(command):
        if not cmd.argv:
            return None
        name = os.path.basename(cmd.argv[0])
        if runs_body(cmd.argv, LOGIN):
            continue
        if name != "git" or any(op in (">", ">>", ">|") for op, _ in cmd.redirects):
            return None
        sub, args = _git_split(cmd.argv)
        words = [a for a in args if a not in ("-p", "commit")]
        if sub != "cat-file" or len(words) != 1 or words[0].startswith("-"):
            return None
        revs.append(words[0])
    text = "\n".join(ln for ln in output.split("\n") if not HARNESS_FRAMING.match(ln.strip()))
    starts = [m.start() for m in _TREE_LINE.finditer(text)]
    if not revs or len(starts) != len(revs) or starts[0] != len(text) - len(text.lstrip()):
        return None
    bodies = [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)])]
    bodies = [b if b.endswith("\n") else b + "\n" for b in bodies]
    ids = [_commit_id(b) for b in bodies]
    below: set[str] = set()
    for rev, body, oid in zip(revs, bodies, ids):
        if re.fullmatch(r"(?:HEAD|@)(?:[~^]\d*)*", rev):
            below.add(oid)
            below.update(_PARENT_LINE.findall(body))
    for rev, oid in zip(revs, ids):
        if not re.fullmatch(r"(?:HEAD|@)(?:[~^]\d*)*", rev) and oid not in below:
            if oid not in vouched:
                return None
    return "every commit object it printed hashes to HEAD, HEAD's parent or HEAD's history"
