"""The trace's judge of git command lines: the spelling the audit's git rules judge for each git
exec row (:func:`judge_git_spellings`: git's server side as ``log --all``, ``-`` as ``@{-1}``,
no revision as ``@{u}``, git describe's ``x-g<hex>`` as ``<hex>``), and the environment variables that show git another history wherever
it runs (:func:`_history_env`)."""

from __future__ import annotations

import posixpath
import re
from typing import Any

from evotree.harness.audit.git_argv import _git_split, _positionals
from evotree.harness.audit.trace_identity import _dashed

__all__ = ["GIT_SERVERS", "OWN_REPOSITORY", "judge_git_spellings", "own_path"]

#: the key of an exec row that ran in a repository of the phase's own: its git directory
#: (sealed by :func:`evotree.harness.audit.trace_own.mark_own_repositories`)
OWN_REPOSITORY = "own_repository"


#: git's server side: each advertises every reference with its hash and serves (or, for
#: receive-pack, accepts) the objects any of them reaches; judged as reading every reference
GIT_SERVERS = frozenset({"upload-pack", "receive-pack", "upload-archive", "http-backend", "daemon"})
#: subcommands for which a lone ``-`` is ``@{-1}`` (the branch HEAD's reflog was on before)
_DASH_IS_PREVIOUS = frozenset({"checkout", "switch", "merge", "rebase", "cherry-pick", "revert"})
#: subcommands that, given no revision, act on the current branch's upstream (``@{u}``)
_UPSTREAM_BY_DEFAULT = frozenset({"merge", "rebase", "cherry"})
#: options after which such a subcommand names no revision at all (a step of one in progress)
_IN_PROGRESS = frozenset(
    {"--abort", "--continue", "--quit", "--skip", "--edit-todo", "--show-current-patch", "--root"}
)


def judge_git_spellings(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Give each git exec row the spelling the audit's git rules judge, in place.

    Some git commands read beyond HEAD without naming a revision: git's server side
    (``upload-pack``, ``receive-pack``, ``upload-archive``, ``http-backend``, ``daemon``, under
    any name: ``git-upload-pack`` selects its subcommand by its own name) advertises every
    reference and serves what they reach, so it is judged as ``git log --all``; a lone ``-`` of
    ``checkout``/``switch``/``merge``/``rebase``/``cherry-pick``/``revert`` (and ``worktree add
    PATH -``) is ``@{-1}``, the reflog's previous branch; ``merge``, ``rebase`` and ``cherry``
    with no revision act on the upstream, which any config (the repository's, ``~/.gitconfig``,
    ``GIT_CONFIG_*`` in the environment, none of which the trace holds) may have set: they are
    judged as naming ``@{u}``. A revision word in git describe's spelling, ``<anything>-g<hex>``
    (``x-g1a2b3c4d``, ``v1.0-3-g1a2b3c4d^0``, ``a..x-g1a2b:f.txt``), names the object its
    abbreviation names (git's ``get_describe_name``: whatever comes before ``-g``, when no
    reference has that name): it is judged as the abbreviation. The argv as run is kept as ``argv_run``, and ``judged_as`` says
    why. A program named ``git-<server>`` that is not git (the separate ``git-http-backend``) is
    judged the same way.

    A row marked ``own_repository`` (:mod:`evotree.harness.audit.trace_own`: a git process that
    read only a repository of the phase's own, or a program given files of one) is judged for
    the ids its words name only: ``: <argv>``, each path in that git directory spelled
    ``(own repository)/<path in it>``."""
    for row in rows:
        if row.get("kind") != "exec":
            continue
        argv = [str(a) for a in row.get("argv") or []]
        if not argv:
            continue
        name = posixpath.basename(argv[0])
        own = row.get(OWN_REPOSITORY)
        if isinstance(own, str) and own.startswith("/"):
            judged, why = _in_own_repository(row, argv, own)
        elif name != "git":
            dashed = _dashed(name) or _dashed(str(row.get("exe") or "").removesuffix(" (deleted)"))
            if not dashed or dashed[0] not in GIT_SERVERS:
                continue
            judged: list[str] | None = ["git", "log", "--all"]
            why = f"git {dashed[0]} advertises every reference and serves what they reach"
        else:
            judged, why = _judged_git(argv)
        if judged is not None and judged != argv:
            row.setdefault("argv_run", argv)
            row["argv"] = judged
            row["judged_as"] = why
    return rows


_PREVIOUS = "'-' is @{-1} (the reflog's previous branch)"
_DESCRIBE = "git describe's spelling <anything>-g<hex> names the object its abbreviation names"
#: git describe's spelling of an abbreviation: whatever, ``-g``, 4 hex digits or more
_DESCRIBED = re.compile(r"^.*-g([0-9a-fA-F]{4,64})$", re.S)
#: what may follow a revision's name: ``~N``, ``^N``, ``^{type}``, ``@{...}``
_REV_SUFFIX = re.compile(r"(?:[~^][0-9]*|\^\{[^}]*\}|@\{[^}]*\})*$")


def _described_words(rest: list[str], sub: str) -> list[str]:
    """``rest`` with each positional word (before ``--``; options and their values left as they
    are) read as git reads a describe spelling in it (:func:`_described`)."""
    pos = set(_positionals(rest, sub)[0])
    cut = rest.index("--") if "--" in rest else len(rest)
    return [_described(w) if k < cut and w in pos else w for k, w in enumerate(rest)]


def _described(word: str) -> str:
    """``word`` with each revision in it spelled ``<anything>-g<hex>`` replaced by ``<hex>`` in
    lower case (ends of ``A..B`` / ``A...B``, a leading ``^``, a suffix ``~N``/``^N``/``^{..}``/
    ``@{..}`` and a ``:path`` kept)."""
    if word.startswith((":", "-")):
        return word  # an index path or a message search; an option
    rev, colon, path = word.partition(":")
    out: list[str] = []
    for part in re.split(r"(\.\.\.?)", rev):
        if part in ("..", "..."):
            out.append(part)
            continue
        body = part.lstrip("^")
        lead = part[: len(part) - len(body)]
        suffix = _REV_SUFFIX.search(body)
        tail = suffix.group(0) if suffix else ""
        name = body[: len(body) - len(tail)]
        m = _DESCRIBED.match(name)
        out.append(lead + (m.group(1).lower() if m else name) + tail)
    return "".join(out) + colon + path


def _judged_git(argv: list[str]) -> tuple[list[str] | None, str]:
    """The spelling judged for one git command line and why (``None``: judged as run)."""
    sub, rest = _git_split(argv)
    described = _described_words(rest, sub)
    judged, why = _judged_rest(argv, sub, described)
    if described == rest:
        return judged, why
    if judged is None:
        return argv[: len(argv) - len(rest)] + described, _DESCRIBE
    return judged, f"{_DESCRIBE}; {why}"


def _judged_rest(argv: list[str], sub: str, rest: list[str]) -> tuple[list[str] | None, str]:
    """The rules of :func:`judge_git_spellings` but the describe spelling, over ``rest`` (the
    subcommand's arguments, describe spellings already read as abbreviations)."""
    head = argv[: len(argv) - len(_git_split(argv)[1])]
    if sub in GIT_SERVERS:
        return ["git", "log", "--all"], (
            f"git {sub} advertises every reference and serves what they reach"
        )
    if sub == "worktree" and rest[:1] == ["add"]:
        pos, _ = _positionals(rest[1:], sub)
        if len(pos) >= 2 and pos[1] == "-":
            at = len(rest) - 1 - rest[::-1].index("-")
            return head + rest[:at] + ["@{-1}"] + rest[at + 1 :], _PREVIOUS
        return None, ""
    if sub in _DASH_IS_PREVIOUS:
        cut = rest.index("--") if "--" in rest else len(rest)
        if "-" in rest[:cut]:
            fixed = [("@{-1}" if (k < cut and w == "-") else w) for k, w in enumerate(rest)]
            return head + fixed, _PREVIOUS
    in_progress = _IN_PROGRESS.intersection(w.split("=", 1)[0] for w in rest)
    if sub in _UPSTREAM_BY_DEFAULT and not in_progress:
        pos, _ = _positionals(rest, sub)
        if not pos:
            return head + rest + [
                "@{u}"
            ], f"git {sub} with no revision acts on the upstream (@{{u}})"
    return None, ""


def _history_env(row: dict[str, Any]) -> list[str]:
    """The variables of ``git_env`` judged wherever git runs (``GIT_COMMON_DIR`` and
    ``GIT_INDEX_FILE`` are judged by the repository whose objects git read: trace_beside)."""
    return [
        str(v)
        for v in row.get("git_env") or ()
        if not str(v).startswith(("GIT_COMMON_DIR=", "GIT_INDEX_FILE="))
    ]


def _history_finding(row: dict[str, Any]) -> dict[str, Any]:
    """The machine's git run with a variable that shows it another history (a graft file, another
    base of replacement references: ``git_env``, read from the environment the kernel copied)."""
    command = " ".join(str(a) for a in row.get("argv") or ["git"])[:200]
    names = ", ".join(v[:120] for v in _history_env(row))
    change = f"git ({command}) ran with {names}: a history other than its refs'"
    return {"kind": "git_state", "path": str(row.get("path")), "change": change}


def _in_own_repository(row: dict[str, Any], argv: list[str], own: str) -> tuple[list[str], str]:
    """The spelling judged for a row that ran in a repository of the phase's own (``own``: its
    git directory): its words, run by nothing (``:``), paths in ``own`` without their ``.git``."""
    words = []
    for word in argv:
        path = own_path(word, row)
        if path is not None and (path == own or path.startswith(own + "/")):
            word = "(own repository)" + path[len(own) :]
        words.append(word)
    why = (
        f"ran in a repository of the phase's own ({own[:200]}), none of a task's: "
        "judged for the ids it names"
    )
    return [":", *words], why


def own_path(word: str, row: dict[str, Any]) -> str | None:
    """``word`` of an exec row as an absolute, normalized path (a relative one from the row's
    working directory), or None where it is no plain path (spaces, quotes, shell or glob
    characters, a ``..`` part, no working directory for a relative one)."""
    if not word or any(c in word for c in " \t\n'\"=$`;|&<>(){}*?[]\\"):
        return None
    if ".." in word.split("/"):
        return None
    if not word.startswith("/"):
        cwd = row.get("cwd")
        if not isinstance(cwd, str) or not cwd.startswith("/"):
            return None
        word = posixpath.join(cwd, word)
    return posixpath.normpath(word)
