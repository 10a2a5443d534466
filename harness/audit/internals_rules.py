"""The git internals rule of the leak audit (``audit.git_internals_read``): any program but git
reading ``.git/objects``, ``refs``, ``packed-refs``, ``logs``, ``ORIG_HEAD``, ``SQUASH_MSG``,
``MERGE_MSG``, ``AUTO_MERGE``, ... (at any depth
below ``.git``: a mirror or submodule store kept inside it has the same folders), the files of a
stopped ``git am`` or rebase (``.git/rebase-apply/*``, ``.git/rebase-merge/*`` but their
counters), git itself run in a repository kept inside ``.git`` (``git -C .git/reference/x.git``),
or searching ``.git`` recursively; ``git commit --no-edit`` with no message of its own (it
takes ``SQUASH_MSG``/``MERGE_MSG``) unless the trajectory started a merge itself."""

from __future__ import annotations

import re
from collections.abc import Sequence

from evotree.harness.audit.hits import Hit
from evotree.harness.audit.lexer import SimpleCommand

__all__ = ["LEFT_MESSAGE", "PACK_LISTING", "counted_only", "internals_hits", "traced_open_hit"]


#: the rule of a commit that takes its message from a merge or squash git left behind
LEFT_MESSAGE = "takes the message of a merge or squash left in .git (SQUASH_MSG, MERGE_MSG)"

_GIT_INTERNAL = re.compile(
    r"(?:^|[\s/'\"=(:,])\.git/(?:[^\s'\"]*/)?(objects|refs|packed-refs|logs|ORIG_HEAD|"
    r"FETCH_HEAD|MERGE_HEAD|worktrees|modules|rr-cache|lost-found|shallow|index|"
    r"SQUASH_MSG|MERGE_MSG|AUTO_MERGE|CHERRY_PICK_HEAD|REVERT_HEAD|REBASE_HEAD)\b"
)
#: options that give ``git commit`` its message (or reuse the last commit's): with none of
#: them, ``--no-edit`` takes the message git left in .git/SQUASH_MSG or MERGE_MSG
_COMMIT_MESSAGE = re.compile(
    r"^(?:-[a-zA-Z]*[mFCc]|--(?:message|file|reuse-message|reedit-message|amend|fixup|squash)"
    r"\b)"
)
#: the alternates file names the stores the object store borrows from: a path, no object
_ALTERNATES = re.compile(r"\.git/objects/info/(?:http-)?alternates$")
#: a stopped ``git am`` / rebase: its folder, and a file in it (or a glob over them)
_SESSION = re.compile(r"(?:^|[\s/'\"=(:,])\.git/(rebase-apply|rebase-merge)(?:/(\S*))?")
#: the files of a stopped am or rebase that hold counters and flags, not the patch, its message,
#: its commit ids or the todo list
_SESSION_COUNTERS = frozenset(
    {
        "next",
        "last",
        "msgnum",
        "end",
        "head-name",
        "interactive",
        "quiet",
        "verbose",
        "threeway",
        "sign",
        "signoff",
        "utf8",
        "keep",
        "keepcr",
        "scissors",
        "quoted-cr",
        "no_inbody_headers",
        "messageid",
        "applying",
        "rebasing",
        "apply-opt",
        "strategy",
        "strategy_opts",
        "allow_rerere_autoupdate",
        "gpg_sign_opt",
        "drop_redundant_commits",
        "keep_redundant_commits",
        "reschedule-failed-exec",
        "no-reschedule-failed-exec",
    }
)
#: git subcommands that read (apply) a patch file named on their command line
_GIT_PATCH_READERS = frozenset({"apply", "am", "show", "cat-file"})


_RECURSIVE = frozenset(
    {
        "find",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "ag",
        "ack",
        "tree",
        "tar",
        "cp",
        "rsync",
        "du",
        "zip",
        "strings",
        "zgrep",
        "git-filter-repo",
    }
)


#: the rule of a listing of the object store's pack folder (names, no object)
PACK_LISTING = (
    "lists the object store's folders (pack names, sizes, two-digit folders: no object id "
    "or content)"
)
_LISTS = frozenset({"ls", "stat", "du"})
#: the store's folders whose listing names no object: packs (``pack-<checksum>.pack|idx|rev|
#: promisor|keep``: the checksum of the pack file, not an object id) and ``info``
_PACK_FOLDER = re.compile(
    r"(?:^|/)\.git/objects(?:/(?:pack|info)(?:/(?:pack-[0-9a-f]*)?\*?"
    r"(?:\.(?:pack|idx|rev|promisor|keep|mtimes|bitmap))?)?)?/?$"
)
#: git subcommands that print every object id of a pack (or unpack it)
_PACK_READERS = frozenset({"show-index", "verify-pack", "index-pack", "unpack-objects"})


def _lists_pack_names(words: Sequence[str]) -> bool:
    """``ls [-la] .git/objects/pack`` (or ``.git/objects``, ``pack/*.idx``): names and sizes
    only. Recursive (``-R``), or a loose-object folder (``.git/objects/ab``: the rest of each
    object's id), is a read."""
    paths = [w for w in words if not w.startswith("-")]
    if any(
        w.startswith("-") and "R" in w.lstrip("-")[:8] and not w.startswith("--") for w in words
    ):
        return False
    if "--recursive" in words:
        return False
    return bool(paths) and all(_PACK_FOLDER.search(p.rstrip("/") or p) for p in paths)


def counted_only(cmd: SimpleCommand, cmds: Sequence[SimpleCommand]) -> bool:
    """Does ``cmd``'s whole output go into ``wc`` (``git show-index < idx | wc -l``)? Then the
    step printed a count, not what was read (``tee`` or a redirection would keep it)."""
    if any(op in (">", ">>", ">|", "&>", "&>>") for op, _ in cmd.redirects):
        return False
    readers = [c for c in cmds if c.stdin is not None and c.stdin == cmd]
    return (
        len(readers) == 1
        and bool(readers[0].argv)
        and readers[0].argv[0].rsplit("/", 1)[-1] == "wc"
        and not [a for a in readers[0].argv[1:] if not a.startswith("-")]
    )


def traced_open_hit(argv: Sequence[str], joined: str) -> Hit:
    """The runtime trace saw a program other than git open git storage (``open() PATH``), or
    let an open go on that it could not pin or follow (``open() PATH --unseen WHY``): what the
    kernel opened then is not known."""
    target = argv[1] if len(argv) > 1 else "?"
    if len(argv) > 3 and argv[2] == "--unseen":
        return Hit(
            "audit.git_internals_read",
            "high",
            f"an open the runtime trace could not see ({argv[3][:80]}): {target[:80]}",
            joined,
        )
    return Hit(
        "audit.git_internals_read",
        "high",
        f"git storage read without git (runtime trace): {target[:80]}",
        joined,
    )


def internals_hits(name: str, cmd: SimpleCommand, joined: str) -> list[Hit]:
    """Reading ``.git``'s internals with any program but git's own (``git show|cat-file`` of a
    path under ``.git`` counts), or searching or listing ``.git``."""
    argv = cmd.argv
    words = list(argv[1:]) + [t for _, t in cmd.redirects]
    if name == "git" and "--no-edit" in argv:
        return _left_message(argv, joined)
    if ".git" not in joined:
        return []
    if name == "git":
        return _git_in_internals(argv, words, joined)
    session = _session_file(words)
    if session and name not in ("ls", "stat", "test", "[", "rm", "mkdir"):
        return [
            Hit(
                "audit.git_internals_read",
                "high",
                f"reads a stopped am or rebase's patch, message or commit ids: {session[:80]}",
                joined,
            )
        ]
    internal = next((w for w in words if _GIT_INTERNAL.search(w)), None)
    if internal and _ALTERNATES.search(internal.rstrip("/")):
        return [
            Hit(
                "audit.git_internals_read",
                "warn",
                f"reads the alternates file (a path: what reads the store it names is judged "
                f"by itself): {internal[:80]}",
                joined,
            )
        ]
    if internal and name in _LISTS and _lists_pack_names(argv[1:]):
        return [
            Hit(
                "audit.git_internals_read",
                "warn",
                f"{PACK_LISTING}: {internal[:80]}",
                joined,
            )
        ]
    if internal:
        return [
            Hit("audit.git_internals_read", "high", f"reads git internals: {internal[:80]}", joined)
        ]
    if (
        name in _RECURSIVE
        and "-prune" not in words
        and any(w.rstrip("/") == ".git" or w.rstrip("/").endswith("/.git") for w in words)
    ):
        return [Hit("audit.git_internals_read", "high", f"{name} searches .git", joined)]
    if name == "ls" and any(w.rstrip("/").endswith(".git") for w in words):
        return [Hit("audit.git_internals_read", "warn", "lists .git", joined)]
    return []


def _left_message(argv: Sequence[str], joined: str) -> list[Hit]:
    """``git commit --no-edit`` with no message of its own: git commits with the message a
    merge or ``merge --squash`` left (``.git/SQUASH_MSG`` names the squashed commits' ids,
    subjects and bodies) and prints its subject."""
    k = next((i for i, a in enumerate(argv) if a == "commit"), -1)
    if k < 0 or any(_COMMIT_MESSAGE.match(a) for a in argv[k + 1 :]):
        return []
    return [
        Hit(
            "audit.git_internals_read",
            "high",
            f"{LEFT_MESSAGE}: git commit --no-edit with no message of its own",
            joined,
        )
    ]


def _session_file(words: Sequence[str]) -> str | None:
    """The word naming a file of a stopped am or rebase that is not a counter (a glob over the
    folder counts); None when none does (the folder itself: a listing of names)."""
    for word in words:
        for m in _SESSION.finditer(word):
            tail = (m.group(2) or "").strip("/")
            if tail and tail.split("/")[0] not in _SESSION_COUNTERS:
                return word
    return None


def _git_in_internals(argv: Sequence[str], words: Sequence[str], joined: str) -> list[Hit]:
    """git itself on git's storage: ``show``/``cat-file`` of a path under ``.git``, a patch of a
    stopped am applied (``git apply .git/rebase-apply/patch``), or any git command run in a
    repository kept inside ``.git`` (``-C``/``--git-dir``: a mirror's or submodule's store,
    whose references are not HEAD's history)."""
    k, inner = 1, None
    while k < len(argv) and argv[k].startswith("-"):
        word = argv[k]
        value = None
        if word in ("-C", "--git-dir") and k + 1 < len(argv):
            value, k = argv[k + 1], k + 1
        elif word.startswith("--git-dir="):
            value = word.split("=", 1)[1]
        elif word == "-c":
            k += 1
        if value is not None and re.search(r"(?:^|/)\.git/.", value.rstrip("/") + "/"):
            if not re.fullmatch(r"(?:\./)?\.git(?:/\.?)?", value.rstrip("/")):
                inner = value
        k += 1
    sub = argv[k] if k < len(argv) else ""
    if sub in _PACK_READERS:
        pack = next((w for w in words if _GIT_INTERNAL.search(w)), None)
        if pack:
            return [
                Hit(
                    "audit.git_internals_read",
                    "high",
                    f"git {sub} reads a pack of the object store (every object id in it): "
                    f"{pack[:80]}",
                    joined,
                )
            ]
    if inner is not None:
        return [
            Hit(
                "audit.git_internals_read",
                "high",
                f"git {sub} runs in a repository kept inside .git ({inner[:60]}): "
                "another store's references",
                joined,
            )
        ]
    if sub not in _GIT_PATCH_READERS:
        return []
    session = _session_file(words)
    if session:
        return [
            Hit(
                "audit.git_internals_read",
                "high",
                f"git {sub} reads a stopped am or rebase's patch: {session[:80]}",
                joined,
            )
        ]
    if sub not in ("show", "cat-file"):
        return []
    internal = next((w for w in words if _GIT_INTERNAL.search(w)), None)
    if internal:
        return [
            Hit("audit.git_internals_read", "high", f"reads git internals: {internal[:80]}", joined)
        ]
    return []
