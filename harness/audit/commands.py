"""Shell commands, parsed properly, and the leak rules applied to each simple command.

The code lives in other modules, and this one keeps what joins them — the keyword
:func:`prefilter`, :func:`classify_step` (one step of a trajectory, with its context, own
stashes and ORIG_HEAD) and :func:`classify_command` — and offers the audit's entry points
(``__all__``) in one place:

* :mod:`evotree.harness.audit.lexer` — the lexer (:class:`SimpleCommand`, :class:`LineJoiner`);
* :mod:`evotree.harness.audit.unwrap` — :func:`parse_shell` and the unwrapping of wrappers,
  variables, aliases, written files, Makefiles and interpreters (:class:`ShellContext`);
* :mod:`evotree.harness.audit.rules` — :func:`classify` over the rule sets (revisions, git,
  network, internals, hidden data, test writes; :class:`Hit`, :class:`RuleSet` in
  :mod:`evotree.harness.audit.hits`).

:func:`parse_shell` turns one command line (as an agent issued it) into the simple commands it
runs: it splits at ``|``, ``&&``, ``||``, ``;``, ``&`` and newlines, enters subshells
``( ... )`` and groups ``{ ...; }``, command substitutions ``$( ... )`` and backticks, process
substitutions ``<( ... )``, honours single/double quotes, backslashes and ``$'...'``, skips
comments and here-document bodies (but parses a body fed to a shell: ``bash <<EOF``), keeps
redirections apart from arguments, drops ``NAME=value`` prefixes and shell keywords
(``if``, ``then``, ``while``, ``!``, ...), and unwraps the wrappers a command hides behind:
``env``, ``sudo``, ``timeout``, ``nice``, ``nohup``, ``time``, ``command``, ``exec``,
``xargs``, ``stdbuf``, ``watch``, ``bash|sh|zsh -c "..."`` (also ``-lc``), ``eval`` and
``python -c "..."`` (its ``os.system``/``subprocess`` calls, ``open()`` and URL fetches, read
with :mod:`ast`). A hand-written lexer, not bashlex: it never gives up on odd input (an
unterminated quote ends at the end of the line; bashlex rejects 4 of the 253 commands of the
labeled corpus), and it is faster (measured on that corpus: 19 µs per command against bashlex's
176 µs, both uncached, on the shared 2-core machine).

:func:`classify` applies the leak rules to one :class:`SimpleCommand` and returns
:class:`Hit` s. The rules (``docs/audit.md`` has the table):

* ``audit.git_history_leak`` — history or references beyond the task's base: ``git log`` /
  ``rev-list`` / ``shortlog`` / ``rev-parse`` with ``--all``, ``--branches``, ``--remotes``,
  ``--tags``, ``--reflog``, ``--glob``, ``-g``; ``git reflog``, ``fsck``, ``cat-file``,
  ``for-each-ref``, ``show-ref``, ``ls-remote``-less ref listings, ``stash show|list|apply|pop``,
  ``bundle``; ``git show|diff|checkout|switch|restore|cherry-pick|merge|rebase|reset|ls-tree|
  blame|grep|archive|format-patch|worktree add`` naming a revision that is not HEAD-relative
  (a hash, ``rev:path``, ``refs/...``, ``origin/...``, ``x@{n}``; for ``switch``,
  ``cherry-pick``, ``merge`` and ``rebase`` any name) — high. A hash may be cleared later
  (:mod:`evotree.harness.audit.trajectories`): when the task repository shows it is an ancestor of
  the base, or when the trajectory first saw it in the output of ordinary HEAD history. Pickaxe
  (``-S``, ``-G``, ``--grep``) over HEAD's history alone is a warn: it cannot see the future.
* ``audit.git_internals_read`` — reading ``.git/objects``, ``refs``, ``packed-refs``, ``logs``,
  ``ORIG_HEAD``, ... with any program, or searching ``.git`` recursively — high.
* ``audit.network_fetch`` — ``curl``, ``wget``, ``aria2c``, httpie, ``nc``, ``scp``/``ssh``/
  ``rsync host:``, ``git fetch|pull|clone|ls-remote|remote update``, ``pip download``,
  ``pip install`` of a URL, Python ``urlopen``/``requests`` — high; ``pip install NAME`` warn.
* ``audit.hidden_data_read`` — any argument or redirection naming a hidden path (the caller's
  list: ``[eval].judge_paths``, hidden test folders) — high.
* ``audit.test_write`` — writing, moving, deleting or editing in place ``conftest.py``,
  ``sitecustomize.py``, ``usercustomize.py``, ``*.pth``, or a file under ``tests/``, ``test/``,
  ``testing/`` (redirections, ``tee``, ``cp``/``mv``/``install``/``ln``/``rsync`` targets,
  ``sed -i``, ``perl -i``, ``touch``, ``rm``, ``truncate``, ``dd of=``, ``git rm``,
  Python ``open(..., "w")``) — high; a ``test_*.py`` elsewhere — warn.

Ordinary use of the current history is not a leak: ``git status``, ``git diff``,
``git log -3``, ``git log -p -- file``, ``git show HEAD~1``, ``git blame``.

What a parser cannot see is not claimed: ``g=git; $g log --all`` (a command held in a
variable), a script file run with ``bash x.sh`` whose content is not in the trajectory.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from evotree.harness.audit.git_argv import _GIT_WORDS, _git_split
from evotree.harness.audit.git_scopes import (
    AM_SESSION,
    BISECT_SCOPE,
    BISECT_START,
    REBASE_SESSION,
)
from evotree.harness.audit.hidden_rules import located_hits, next_cwd
from evotree.harness.audit.hits import Hit, RuleSet
from evotree.harness.audit.internals_rules import counted_only
from evotree.harness.audit.lexer import LineJoiner, SimpleCommand, _basename, unfinished
from evotree.harness.audit.network_rules import is_loopback
from evotree.harness.audit.revisions import BASE_NAMES, HEX_REV, _rev_kind, is_head_relative
from evotree.harness.audit.rules import classify
from evotree.harness.audit.shell_context import LISTED_REFS, ShellContext
from evotree.harness.audit.unwrap import _parse_cached, parse_shell

# The audit's entry points, importable from here (``__all__``): callers need not know which of
# the modules above defines each.
__all__ = [
    "Hit",
    "ShellContext",
    "SimpleCommand",
    "RuleSet",
    "parse_shell",
    "classify",
    "classify_command",
    "classify_step",
    "is_head_relative",
    "is_loopback",
    "prefilter",
    "unfinished",
    "LineJoiner",
    "HEX_REV",
    "LISTED_REFS",
]


# ----------------------------------------------------------------------------- prefilter
#: Substrings (of the lower-cased command, quotes and backslashes removed) without which no rule
#: can fire: program names of the rules, git, test paths, URL schemes, Python's fetchers, and
#: shell features that can spell a word indirectly (eval, ``${``). A plain ``in`` per keyword is
#: ~5x faster than one alternation regex. ``_SQL_PREFILTER`` in
#: :mod:`evotree.harness.audit.version_audit` must stay a superset (tested).
PREFILTER_KEYWORDS = (
    "git",
    "curl",
    "wget",
    "aria2",
    "http",
    "fetch",
    "ftp",
    "ssh",
    "scp",
    "rsync",
    "nc",
    "telnet",
    "socat",
    "w3m",
    "lynx",
    "links",
    "xh",
    "socket",
    "urlopen",
    "requests",
    "urllib",
    "pip",
    "test",
    "conftest",
    "customize",
    ".pth",
    "pyc",
    "eval",
    "base64",
    "xxd",
    "perl",
    "${",
    "fromhex",
    "unhexlify",
    "decode",
    "rot13",
    "rot_13",
    "openssl",
    "|rev",
    "| rev",
    "exec",
    "apply_patch",
    "str_replace_editor",
    "end_of_edit",
    "base32",
    "basenc",
    "connect()",
    "open()",
    "dulwich",
    "zlib",
    "printf",
    "$(",
    "`",
    # a program run from code, its name built there (``['g' + 'it', 'log']``)
    "subprocess",
    "popen",
    "system(",
    "spawn",
)
#: what else makes a command worth parsing: a definition at the start of a command (``a=gi``,
#: ``export R=origin/fix``: a later step may run it), a program named by escapes (``\x67``,
#: ``\147``), a forge client (gh, hub, glab), make (a Makefile the trajectory wrote)
_PREFILTER_RE = re.compile(
    r"(?:^|[;&|(\n]\s*)(?:export\s+|declare\s+(?:-\w+\s+)*|local\s+|readonly\s+)?"
    r"[A-Za-z_][A-Za-z0-9_]*\+?=|\\(?:x[0-9a-fA-F]|[0-7]{3})|"
    r"(?:^|[\s;&|(])(?:gh|hub|glab|g?make)(?=\s|$)"
)
#: a command name the audit may not resolve (``$X``, ``"${a[0]}"``) given git's words
_VAR_GIT_RE = re.compile(
    r"(?:^|[;&|(\n]\s*)[\"']?\$\{?[A-Za-z_]\w*(?:\[[^\]]*\])?\}?[\"']?\s+(?:"
    + "|".join(sorted(_GIT_WORDS, key=len, reverse=True))
    + r")\b"
)
_UNQUOTE = str.maketrans("", "", "\"'\\")


def prefilter(command: str, needles: Iterable[str] = ()) -> bool:
    """Cheap test: can ``command`` possibly trigger a rule? (False = certainly not.)

    Quotes and backslashes are removed first, so ``g"i"t`` and ``g\\it`` still pass.
    """
    if "$'" in command:  # ANSI-C quoting can spell anything
        return True
    flat = (
        command.translate(_UNQUOTE)
        if ('"' in command or "'" in command or "\\" in command)
        else command
    )
    flat = flat.lower()
    for keyword in PREFILTER_KEYWORDS:
        if keyword in flat:
            return True
    if (
        "=" in command
        or "\\" in command
        or "make" in command
        or "gh" in command
        or "hub" in command
        or "glab" in command
    ):
        # the unquoted text too: a forge client or make inside ``bash -lc 'gh pr view 17'``
        if _PREFILTER_RE.search(command) or _PREFILTER_RE.search(flat):
            return True
    if "$" in command and _VAR_GIT_RE.search(command):
        return True
    return any(n and n.lower() in flat for n in needles)


@lru_cache(maxsize=65536)
def _hits_cached(text: str, rules: RuleSet) -> tuple[Hit, ...]:
    cmds = _parse_cached(text)[0]
    out: list[Hit] = []
    cwd: str | None = None
    for cmd in cmds:
        out += located_hits(cmd, cwd, rules, _counted(classify(cmd, rules), cmd, cmds))
        cwd = next_cwd(cmd, cwd)
    return tuple(out)


def _counted(hits: list[Hit], cmd: SimpleCommand, cmds: Sequence[SimpleCommand]) -> list[Hit]:
    """A read of git's internals whose whole output went into ``wc`` printed a count: warn."""
    if not any(h.code == "audit.git_internals_read" and h.severity == "high" for h in hits):
        return hits
    if not counted_only(cmd, cmds):
        return hits
    return [
        Hit(h.code, "warn", f"{h.rule} (only counted: the output went into wc)", h.command)
        if h.code == "audit.git_internals_read" and h.severity == "high"
        else h
        for h in hits
    ]


def classify_step(
    text: str, rules: RuleSet, context: ShellContext, output: str | None = None
) -> list[Hit]:
    """The hits of one step of a trajectory: parsed with the trajectory's ``context`` when a
    definition (variable, alias, script) is involved, otherwise memoized by text — agents repeat
    ``git status``, ``git diff`` and test runs all the time. ``output`` (what the step printed,
    when recorded) tells whether a ``git stash`` saved anything."""
    sets_orig = not context.state.get("orig_head_own") and bool(_ORIG_SETTERS.search(text))
    hits = _classify_in_context(text, rules, context, output)
    if sets_orig:  # git reset / merge / rebase / pull / am write ORIG_HEAD after reading their
        # arguments: `git reset --hard ORIG_HEAD` reads the image's ORIG_HEAD
        context.state["orig_head_own"] = True
    return hits


#: a step that may change the folder later steps run in
_MOVES_CWD = re.compile(r"(?:^|[\s;&|(])(?:cd|pushd|popd)(?:\s|$)")


def _classify_in_context(
    text: str, rules: RuleSet, context: ShellContext, output: str | None
) -> list[Hit]:
    start = context.state.get("cwd")
    cwd: str | None = start if isinstance(start, str) else None
    if (
        cwd is None
        and not context.relevant(text)
        and "stash" not in text
        and "ORIG_HEAD" not in text
        and "bisect" not in text
        and not _SESSION_WORD.search(text)
        and not _branch_state(text, context)
    ):
        found, defines = _parse_cached(text)
        if not defines:
            if _MOVES_CWD.search(text):
                for cmd in found:
                    cwd = next_cwd(cmd, cwd)
                _keep_cwd(context, cwd)
            return list(_hits_cached(text, rules))
    hits: list[Hit] = []
    cmds = parse_shell(text, context)
    for cmd in cmds:
        found = located_hits(cmd, cwd, rules, _counted(classify(cmd, rules), cmd, cmds))
        cwd = next_cwd(cmd, cwd)
        if cmd.argv and _basename(cmd.argv[0]) == "git" and any("stash" in w for w in cmd.argv):
            found = _own_stash(cmd, found, context, output)
        if context.state.get("orig_head_own"):
            found = [
                Hit(h.code, "info", h.rule + " (ORIG_HEAD this trajectory set itself)", h.command)
                if h.refs and all(r.startswith("ORIG_HEAD") for r in h.refs)
                else h
                for h in found
            ]
        if cmd.argv and _basename(cmd.argv[0]) == "git":
            found = _own_branches(cmd, found, context)
            found = _own_bisect(cmd, found, context)
            found = _own_session(cmd, found, context)
        if (
            cmd.argv
            and _basename(cmd.argv[0]) == "git"
            and _git_split(cmd.argv)[0] in _ORIG_SETTER_SUBS
        ):
            context.state["orig_head_own"] = True  # later commands of this step read its own
        hits += found
    _keep_cwd(context, cwd)
    return hits


def _keep_cwd(context: ShellContext, cwd: str | None) -> None:
    """Carry the folder a step's ``cd`` moved to into the steps after it (a shell history, an
    agent's persistent shell): their relative paths are judged from there too. An agent whose
    every command runs in a fresh shell did not move, so this only adds paths to judge."""
    if cwd is None:
        context.state.pop("cwd", None)
    else:
        context.state["cwd"] = cwd


_ORIG_SETTER_SUBS = frozenset({"reset", "merge", "rebase", "pull", "am"})
#: a step that may make a branch of the trajectory's own (switch -c, checkout -b, branch NAME)
_MAKES_BRANCH = re.compile(
    r"\b(?:switch|checkout)\b[^|;&\n]*\s(?:-[A-Za-z]*[bBcC]|--create|"
    r"--force-create)\b|\bbranch\s+(?:-[fq]\s+)*[^-\s]"
)


def _branch_state(text: str, context: ShellContext) -> bool:
    """Must this step be read with the trajectory's own branches? (it makes one, or moves once
    the trajectory has one)"""
    own = context.state.get("own_branches")
    if isinstance(own, dict) and own:
        return (
            "switch" in text
            or "checkout" in text
            or "branch" in text
            or any(n in text for n in own)
        )
    moves = "switch" in text or "checkout" in text or "branch" in text
    return moves and bool(_MAKES_BRANCH.search(text))


_CREATE = {"switch": ("-c", "-C", "--create", "--force-create"), "checkout": ("-b", "-B")}


def _own_branches(cmd: SimpleCommand, hits: list[Hit], context: ShellContext) -> list[Hit]:
    """Branches the trajectory made are its own work: ``git switch -c try`` records ``try`` and
    that the trajectory left the branch it started on. A later switch to its own branch is no
    hit; a switch to another plain name (``git switch main``) once it has left its starting branch
    is most likely the way back, and is left to the task repository to judge (a candidate)."""
    sub, args = _git_split(cmd.argv)
    own = context.state.get("own_branches")
    own = dict(own) if isinstance(own, dict) else {}
    if sub in _CREATE:
        opts = _CREATE[sub]
        name = next(
            (
                args[k + 1]
                for k, a in enumerate(args[:-1])
                if a in opts or re.fullmatch(r"-[A-Za-z]*", a) and "-" + a[-1:] in opts
            ),
            None,
        )
        if name is not None:
            own[name] = True
            context.state["own_branches"] = own
            if len([a for a in args if not a.startswith("-")]) <= 1:  # from HEAD: the start is left
                context.state["left_start"] = True
            return hits
    elif sub == "branch":
        names = [a for a in args if not a.startswith("-")]
        if names and not any(a.startswith("-") and a not in ("-f", "--force", "-q") for a in args):
            own[names[0]] = True
            context.state["own_branches"] = own
        return hits
    if not own:
        return hits
    out = []
    for h in hits:
        names = [
            re.sub(r"(?:[~^]\d*)+$", "", part.lstrip("^"))
            for ref in h.refs
            for part in re.split(r"\.\.\.?", ref.split(":", 1)[0])
            if part
        ]
        if (
            h.code == "audit.git_history_leak"
            and names
            and any(n in own for n in names)
            and all(n in own or n in BASE_NAMES or is_head_relative(n) for n in names)
        ):
            out.append(Hit(h.code, "info", h.rule + " (a branch this trajectory made)", h.command))
            continue
        word = h.refs[0] if len(h.refs) == 1 else None
        if (
            sub in ("switch", "checkout")
            and word is not None
            and h.code == "audit.git_history_leak"
            and _rev_kind(word) == "name"
        ):
            if context.state.get("left_start"):
                out.append(
                    Hit(
                        h.code,
                        "info",
                        f"git {sub} {word}: back from the trajectory's own "
                        "branch (resolved in the task repository)",
                        h.command,
                        refs=h.refs,
                        candidate=True,
                    )
                )
                continue
        out.append(h)
    return out


def _own_bisect(cmd: SimpleCommand, hits: list[Hit], context: ShellContext) -> list[Hit]:
    """A bisect the trajectory started (``git bisect start``, which clears any left over) or
    ended (``git bisect reset``) is its own: later bisect steps move only between the revisions
    it named (judged at ``start``). Before that, a bisect in progress is the image's."""
    sub, args = _git_split(cmd.argv)
    if sub != "bisect":
        return hits
    if context.state.get("bisect_own"):
        hits = [
            Hit(h.code, "info", h.rule + " (a bisect this trajectory started or reset)", h.command)
            if h.refs == (BISECT_SCOPE,)
            else h
            for h in hits
            if h.refs != (BISECT_START,)
        ]
    if args[:1] in (["start"], ["reset"]):
        context.state["bisect_own"] = True
    return hits


_SESSION_WORD = re.compile(r"\b(?:am|rebase)\b")


def _own_session(cmd: SimpleCommand, hits: list[Hit], context: ShellContext) -> list[Hit]:
    """A ``git am`` or rebase session the trajectory started (``git am FILE``, ``git rebase
    X``) or ended (``--abort``, ``--quit``) is its own: its later ``--continue``/``--skip``/
    ``--show-current-patch`` show or commit its own patches. Before that, a stopped session is
    the image's."""
    sub, args = _git_split(cmd.argv)
    if sub not in ("am", "rebase"):
        return hits
    scope = AM_SESSION if sub == "am" else REBASE_SESSION
    if context.state.get(f"session_own_{sub}"):
        hits = [
            Hit(h.code, "info", h.rule + " (a session this trajectory started)", h.command)
            if h.refs == (scope,)
            else h
            for h in hits
        ]
    if not any(h.refs == (scope,) for h in hits):
        context.state[f"session_own_{sub}"] = True  # it started, aborted or quit one
    return hits


#: commands that write ORIG_HEAD: after one of them, ORIG_HEAD is the trajectory's own HEAD
_ORIG_SETTERS = re.compile(r"\bgit\b[^|;&\n]*\b(reset|merge|rebase|pull|am)\b")
_STASH_REF = re.compile(r"^(?:refs/)?stash(?:@\{(\d+)\})?$")


def _stash_index(word: str) -> int | None:
    if word.isdigit():
        return int(word)
    m = _STASH_REF.match(
        word.split(":", 1)[0].rstrip("^~0123456789") if "@{" not in word else word.split(":", 1)[0]
    )
    return (int(m.group(1)) if m.group(1) else 0) if m else None


def _own_stash(
    cmd: SimpleCommand, hits: list[Hit], context: ShellContext, output: str | None
) -> list[Hit]:
    """Stashes the trajectory made itself are its own work, not foreign history: count them
    (``git stash`` / ``push`` / ``save``; ``pop`` / ``drop`` take one off) and let ``list``,
    ``show``, ``apply``, ``pop`` of an own entry (``stash@{k}``, k below the count) through."""
    own = int(context.state.get("stash_own", 0))  # type: ignore[call-overload]
    sub, args = _git_split(cmd.argv)
    if sub == "stash":
        action = args[0] if args and not args[0].startswith("-") else "push"
        if action in ("push", "save"):
            if not (output and "No local changes to save" in output):
                context.state["stash_own"] = own + 1
            return hits
        if action == "clear":
            context.state["stash_own"] = 0
            return hits
        if action in ("list", "show", "apply", "pop", "drop", "branch"):
            rest = [a for a in args[1:] if not a.startswith("-")]
            if action == "branch":
                rest = rest[1:]
            index = _stash_index(rest[0]) if rest else 0
            mine = own > 0 and (action == "list" or (index is not None and index < own))
            if action in ("pop", "drop") and mine:
                context.state["stash_own"] = own - 1
            if mine:
                return [
                    Hit(
                        h.code,
                        "info",
                        h.rule + " (a stash this trajectory made)",
                        h.command,
                        h.revisions,
                    )
                    if h.severity == "high" and "stash" in h.rule
                    else h
                    for h in hits
                ]
        return hits
    # git show / diff / checkout stash@{k}: the trajectory's own stash is its own work
    refs = [w for w in args if "stash" in w and _stash_index(w) is not None]
    if refs and own and all((_stash_index(w) or 0) < own for w in refs):
        return [
            Hit(h.code, "info", h.rule + " (a stash this trajectory made)", h.command, h.revisions)
            if h.severity == "high" and any(w in h.rule for w in refs)
            else h
            for h in hits
        ]
    return hits


def classify_command(text: str, rules: RuleSet = RuleSet()) -> list[Hit]:
    """Parse one command line and apply the rules to each simple command it runs (a trajectory
    of one step: what the line defines or stashes counts for the rest of it). Candidates (revisions
    only the task repository can judge) are left out: there is no repository here."""
    return [h for h in classify_step(text, rules, ShellContext()) if not h.candidate]
