"""The rule sets of the leak audit, applied to one simple command (:func:`classify`).

Revisions (:func:`is_head_relative` and how a word names one), git's rules
(``audit.git_history_leak``), and the other rules: git internals, network fetches (with
loopback), hidden data, writes to tests. :class:`Hit` is what a rule returns; :class:`RuleSet`
what the rules know about the task. Moved out of :mod:`evotree.harness.audit.commands`, which re-exports these names.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from evotree.harness.audit import static as _static
from evotree.harness.audit.lexer import SimpleCommand, _basename

__all__ = ["Hit", "RuleSet", "HEX_REV", "is_head_relative", "is_loopback", "classify"]


@dataclass(frozen=True)
class Hit:
    """One rule that fired on one simple command."""

    code: str  # audit.git_history_leak, ...
    severity: str  # info | warn | high | critical
    rule: str  # short name of the rule: "git log --all", "reads .git/packed-refs", ...
    command: str  # the simple command, re-joined
    revisions: tuple[str, ...] = ()  # revisions named (may be cleared by ancestry / provenance)
    #: the output line that shows the leak (content provenance), quoted
    output: str = ""
    #: every revision expression the hit rests on, as typed (``v1.1.0``, ``ORIG_HEAD:f``,
    #: ``A..B``): resolved in the task repository when there is one, and judged by ancestry
    refs: tuple[str, ...] = ()
    #: True for a revision the spelling alone cannot judge (``git show v1.1.0`` may name a path):
    #: kept only when the task repository resolves it to a commit beyond the base
    candidate: bool = False

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "code": self.code,
            "severity": self.severity,
            "rule": self.rule,
            "command": self.command,
        }
        if self.revisions:
            out["revisions"] = list(self.revisions)
        if self.output:
            out["output"] = self.output
        if self.refs:
            out["refs"] = list(self.refs)
        return out


@dataclass(frozen=True)
class RuleSet:
    """What the rules need to know about the task: its hidden paths."""

    hidden_paths: tuple[str, ...] = ()
    _hidden_re: tuple[re.Pattern[str], ...] = field(
        default=(), init=False, repr=False, compare=False
    )
    _needles: tuple[str, ...] = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        patterns = []
        for path in self.hidden_paths:
            clean = path.strip().strip("/")
            if clean.startswith("./"):
                clean = clean[2:]
            if not clean:
                continue
            patterns.append(
                re.compile(r"(?:^|[\s/'\"=(:,])" + re.escape(clean) + r"(?=$|[/\s'\"),:])")
            )
        object.__setattr__(self, "_hidden_re", tuple(patterns))
        object.__setattr__(
            self,
            "_needles",
            tuple(p.strip("/").rsplit("/", 1)[-1] for p in self.hidden_paths if p.strip("/")),
        )

    def mentions_hidden(self, text: str) -> bool:
        """Cheap test: could ``text`` name a hidden path at all (its last component occurs)?"""
        return any(n in text for n in self.hidden_needles)

    def hidden_match(self, word: str) -> bool:
        """True when ``word`` names a hidden path (or a file under one)."""
        return any(p.search(word) for p in self._hidden_re)

    @property
    def hidden_needles(self) -> tuple[str, ...]:
        """Plain strings the prefilter must let through (a hidden path's last component)."""
        return self._needles


# ----------------------------------------------------------------------------- revisions
HEX_REV = re.compile(r"^[0-9a-f]{7,40}$")
#: (``HEAD@{0}`` and ``@{0}`` are the newest entry of HEAD's or its branch's log: HEAD itself)
_HEAD_REL = re.compile(r"^(HEAD|@)?(?:@\{0\})?([~^][0-9]*)*$")
#: a release tag's spelling (v1.2.3, 2.0.1, v3.1-rc1): a revision, not a path
_TAG_LIKE = re.compile(r"^v?\d+(?:\.\d+)+(?:[-.+]?[A-Za-z][\w.]*)?$")
#: references git's own operations write (the image's ORIG_HEAD may point at the future fix)
_SPECIAL_HEADS = (
    "ORIG_HEAD",
    "FETCH_HEAD",
    "MERGE_HEAD",
    "CHERRY_PICK_HEAD",
    "REVERT_HEAD",
    "REBASE_HEAD",
    "BISECT_HEAD",
    "AUTO_MERGE",
)


#: ``:/text``: git searches the messages of commits reachable from *any* reference
_MESSAGE_SEARCH = re.compile(r"^:/[^/\s]")
#: branch namespaces by convention (git-flow and forges): ``fix/integral-windup`` names a
#: branch, not a path, when its last part has no file extension
_BRANCH_NS = re.compile(
    r"^(?:fix|fixes|hotfix|bugfix|bug|feature|feat|release|pr|pull|wip|topic|"
    r"issue|chore|backport|patch)/[^.:]+$"
)


#: a plain name one of whose parts says it is a change (``fix-midnight``, ``pr-17``,
#: ``windup_hotfix``): a branch, not a file or folder (those have extensions or plain names)
_BRANCH_WORD = re.compile(
    r"^(?=[^./:]*$)(?:[A-Za-z0-9]+[-_])*(?:fix|fixes|hotfix|bugfix|pr|wip|"
    r"backport)(?:[-_][A-Za-z0-9]+)*$"
)


#: spellings git resolves as references, never as paths: ``refs/...``, remote branches by
#: convention, a bisect's terms (``bisect/fixed`` is ``refs/bisect/fixed``) and another
#: worktree's HEAD (``worktrees/NAME/HEAD``, ``main-worktree/HEAD``)
_REF_NAMESPACES = (
    "refs/",
    "origin/",
    "upstream/",
    "remotes/",
    "bisect/",
    "worktrees/",
    "main-worktree/",
)


#: the names a task's own branch usually has (``git log -p main`` reads HEAD's history there)
BASE_NAMES = frozenset({"main", "master", "trunk", "develop", "development", "default"})


def is_head_relative(rev: str) -> bool:
    """``HEAD``, ``HEAD~3``, ``@^``, ``HEAD~2..HEAD``, ``HEAD:path``: the task's own history."""
    rev = rev.strip()
    if not rev:
        return True
    if _MESSAGE_SEARCH.match(rev):
        return False  # :/text: the youngest commit whose message matches, reachable from any ref
    if ":" in rev and not rev.startswith(":"):
        rev = rev.split(":", 1)[0]
    elif rev.startswith(":"):  # :path is the index
        return True
    for part in re.split(r"\.\.\.?", rev):
        part = part.lstrip("^")
        if part and not _HEAD_REL.match(part):
            return False
        if part in ("",):
            continue
    return True


def _rev_kind(word: str) -> str | None:
    """'hash' / 'ref' when ``word`` certainly names a revision outside HEAD; 'name' when it may
    be a branch or a path; None when it is HEAD-relative or clearly a path."""
    if is_head_relative(word):
        return None
    if _MESSAGE_SEARCH.match(word):
        return "ref"
    base = word.split(":", 1)[0] if ":" in word else word
    parts = [p.lstrip("^") for p in re.split(r"\.\.\.?", base) if p]
    parts = [re.sub(r"([~^][0-9]*)+$", "", p) for p in parts]
    kinds = set()
    for part in parts:
        if not part or _HEAD_REL.match(part):
            continue
        if HEX_REV.match(part):
            kinds.add("hash")
        elif (
            part.startswith(_REF_NAMESPACES)
            or "@{" in part
            or ":" in word
            or ".." in word
            or part in _SPECIAL_HEADS
            or part in ("stash", "-")
            or _TAG_LIKE.match(part)
            or part.endswith("^{}")
            or "^{" in part
            or _BRANCH_NS.match(part)
            or _BRANCH_WORD.search(part)
        ):
            kinds.add("ref")
        elif "/" in part or "." in part or part.startswith("*"):
            continue  # a path
        else:
            kinds.add("name")
    if "hash" in kinds:
        return "hash"
    if "ref" in kinds:
        return "ref"
    return "name" if "name" in kinds else None


def _hashes(word: str) -> tuple[str, ...]:
    base = word.split(":", 1)[0]
    return tuple(
        h
        for h in (re.sub(r"([~^][0-9]*)+$", "", p.lstrip("^")) for p in re.split(r"\.\.\.?", base))
        if HEX_REV.match(h)
    )


# ----------------------------------------------------------------------------- git rules
_GIT_GLOBAL_ARG = frozenset(
    {
        "-C",
        "-c",
        "--git-dir",
        "--work-tree",
        "--namespace",
        "--exec-path",
        "--super-prefix",
        "--config-env",
    }
)
_ALL_REFS = frozenset(
    {
        "--all",
        "--branches",
        "--remotes",
        "--tags",
        "--reflog",
        "--glob",
        "-g",
        "--walk-reflogs",
        "--bisect",
        "--alternate-refs",
        "--indexed-objects",
        "--exclude-hidden",
        "--disk-usage",
    }
)
_ALL_REFS_PREFIX = ("--branches=", "--remotes=", "--tags=", "--glob=", "--exclude-hidden=")
_PICKAXE_PREFIX = ("-S", "-G", "--grep", "--find-object", "--pickaxe-regex", "-L")
# options of git subcommands that take a separate argument (not a revision)
_GIT_OPT_ARG = frozenset(
    {
        "-n",
        "--max-count",
        "--skip",
        "--since",
        "--until",
        "--after",
        "--before",
        "--author",
        "--committer",
        "--format",
        "--pretty",
        "-S",
        "-G",
        "--grep",
        "-L",
        "-m",
        "-e",
        "-f",
        "-U",
        "--date",
        "-o",
        "--output",
        "--prefix",
        "--remote",
        "-b",
        "-B",
        "-c",
        "-C",
        "--orphan",
        "-s",
        "--source",
        "--strategy",
        "-X",
        "--abbrev",
        "--diff-filter",
        "--find-object",
        "--encoding",
        "--exec",
        "--onto",
        "--conflict",
        "--pathspec-from-file",
        "--message",
        "--file",
        "--template",
    }
)
_REV_SUBS = frozenset(
    {
        "show",
        "diff",
        "checkout",
        "restore",
        "reset",
        "ls-tree",
        "blame",
        "grep",
        "archive",
        "format-patch",
        "log",
        "shortlog",
        "whatchanged",
        "rev-list",
        "show-branch",
        "difftool",
        "annotate",
        "name-rev",
        "describe",
        "cherry",
        "range-diff",
        "diff-tree",
        "merge-base",
        "read-tree",
    }
)
_STAT_ONLY = frozenset(
    {
        "--stat",
        "--shortstat",
        "--numstat",
        "--name-only",
        "--name-status",
        "--dirstat",
        "--compact-summary",
        "--summary",
    }
)
_REF_SUBS = frozenset({"switch", "cherry-pick", "merge", "rebase", "revert", "pull"})
_ALWAYS = {
    "reflog": "git reflog lists commits beyond the base",
    "fsck": "git fsck finds dangling and unreachable objects",
    "cat-file": None,
    "for-each-ref": "git for-each-ref lists every reference",
    "show-ref": "git show-ref lists every reference",
    "bundle": "git bundle packs references beyond the base",
    "unpack-objects": "git unpack-objects reads raw packs",
    "verify-pack": "git verify-pack lists packed objects",
    "count-objects": None,
    "fast-export": "git fast-export dumps history",
    "rev-parse": None,
    "notes": "git notes reads notes attached to other commits",
    "replace": "git replace rewrites what commits resolve to",
}
#: a reference scope: the references a wide command lists or walks, as a pseudo-revision the
#: task repository resolves (:meth:`evotree.harness.audit.trajectories.Ancestry.resolve`):
#: ``*refs:P1,P2`` (every reference under the prefixes or globs; none: all), ``*show-ref:``
#: (``git show-ref``'s tail-matched patterns after ``;``), ``*notes:REF:OBJ`` (a note on OBJ, or
#: any note, in the notes reference REF). Without the repository the hit stays as spelled.
SCOPE = "*"
_SCOPE_OF_FLAG = {
    "--all": "*refs:",
    "--branches": "*refs:refs/heads/",
    "--tags": "*refs:refs/tags/",
    "--remotes": "*refs:refs/remotes/",
}


def scope_refs(flag: str) -> tuple[str, ...]:
    """The reference scope a walk flag (``--all``, ``--branches``, ...) reads, if it has one."""
    token = _SCOPE_OF_FLAG.get(flag)
    return (token,) if token else ()


_NET_SUBS = frozenset(
    {"fetch", "pull", "clone", "ls-remote", "fetch-pack", "remote-https", "http-fetch"}
)
#: hub's own commands (all reach GitHub)
_HUB_NET = frozenset(
    {
        "pr",
        "pull-request",
        "issue",
        "browse",
        "api",
        "ci-status",
        "compare",
        "create",
        "fork",
        "release",
        "sync",
        "delete",
        "gist",
        "am",
        "apply",
        "cherry-pick",
    }
)
#: commands of gh / glab that stay on this machine
_FORGE_LOCAL = frozenset(
    {"help", "version", "completion", "config", "alias", "extension", "ext", "--version"}
)


def _reflog_top_only(args: Sequence[str]) -> bool:
    """``git reflog [show] -n 1 [HEAD]``: only the newest entry of HEAD's reflog, which is the
    commit HEAD is at now (the base, or the trajectory's own commit)."""
    rest = list(args[1:] if args[:1] == ["show"] else args)
    limit = None
    refs = []
    k = 0
    while k < len(rest):
        word = rest[k]
        if re.fullmatch(r"-\d+", word):
            limit = int(word[1:])
        elif word in ("-n", "--max-count") and k + 1 < len(rest):
            limit = int(rest[k + 1]) if rest[k + 1].isdigit() else None
            k += 1
        elif re.fullmatch(r"(?:-n|--max-count=)\d+", word):
            limit = int(word.split("=", 1)[-1] if "=" in word else word[2:])
        elif not word.startswith("-"):
            refs.append(word)
        k += 1
    if args and args[0] in ("expire", "delete", "exists", "list", "drop", "write"):
        return False
    return limit == 1 and all(r in ("HEAD", "@", "HEAD@{0}", "@{0}") for r in refs)


def _git_split(argv: Sequence[str]) -> tuple[str, list[str]]:
    """(subcommand, its arguments) after git's global options."""
    k = 1
    while k < len(argv):
        word = argv[k]
        if word in _GIT_GLOBAL_ARG:
            k += 2
            continue
        if word.startswith("-"):
            k += 1
            continue
        return word, list(argv[k + 1 :])
    return "", []


#: options that are plain flags for these subcommands (elsewhere they take a value)
_FLAGS_OF = {
    "checkout": frozenset({"-f", "-m", "-p", "-q"}),
    "switch": frozenset({"-f", "-m", "-q"}),
    "reset": frozenset({"-q", "-p"}),
    "restore": frozenset({"-p", "-q", "-m"}),
    "cherry-pick": frozenset({"-e", "-x", "-n"}),
    "merge": frozenset({"-e", "-n", "-q"}),
}


_CLUSTER = re.compile(r"-[A-Za-z]{2,}")


def _positionals(args: Sequence[str], sub: str = "") -> tuple[list[str], list[str]]:
    """(positional words before ``--``, words after ``--``), skipping options and their values."""
    pos: list[str] = []
    flags = _FLAGS_OF.get(sub, frozenset())
    k = 0
    while k < len(args):
        word = args[k]
        if word == "--":
            return pos, list(args[k + 1 :])
        if word.startswith("-") and len(word) > 1:
            name = word.split("=", 1)[0]
            if _CLUSTER.fullmatch(word) and all("-" + c in flags for c in word[1:-1]):
                name = "-" + word[-1]  # -qb NAME: flags, then an option that takes a value
            k += 2 if name in _GIT_OPT_ARG and name not in flags and "=" not in word else 1
            continue
        pos.append(word)
        k += 1
    return pos, []


class _GitCall:
    """One git command being judged: its subcommand, its arguments and the hits so far."""

    code = "audit.git_history_leak"

    def __init__(
        self, sub: str, args: list[str], joined: str, fed: list[str] | None = None
    ) -> None:
        self.sub, self.args, self.joined = sub, args, joined
        self.hits: list[Hit] = []
        #: the lines written in the command line that feed its input (None: not known)
        self.fed = fed

    def hit(
        self, severity: str, rule: str, revisions: tuple[str, ...] = (), refs: tuple[str, ...] = ()
    ) -> None:
        self.hits.append(Hit(self.code, severity, rule, self.joined, revisions, refs=refs))

    def candidate(self, word: str) -> None:
        """A word in a revision's place that its spelling cannot judge (a path, or a branch or tag
        name): kept only if the task repository resolves it beyond the base."""
        if word and not is_head_relative(word) and not word.startswith("-"):
            self.hits.append(
                Hit(
                    self.code,
                    "info",
                    f"git {self.sub} {word}: resolved in the task repository",
                    self.joined,
                    refs=(word,),
                    candidate=True,
                )
            )


def _git_rules(argv: Sequence[str], joined: str, fed: list[str] | None = None) -> list[Hit]:
    """The hits of one git command: each judge in turn, until one has decided. ``fed``: the
    lines its input is given in the command line, when it is."""
    sub, args = _git_split(argv)
    if not sub:
        return []
    call = _GitCall(sub, args, joined, fed)
    for judge in (_git_network, _git_always, _git_listings, _git_bisect, _git_revisions):
        if judge(call):
            break
    return call.hits


def _git_network(call: _GitCall) -> bool:
    """fetch / pull / clone / ls-remote / remote update / submodule update reach the network."""
    sub, args, joined = call.sub, call.args, call.joined
    if sub == "ls-remote" and "--get-url" in args:
        return True  # prints the remote's URL from the local config; contacts nothing
    if sub == "clone" and _local_clone(call):
        return True
    if sub in ("fetch", "pull") and _local_remote(args):
        # the repository itself (``git fetch . main:scratch``): no network; what it copies is a
        # revision of this repository, judged like any other
        pos, _ = _positionals(args, sub)
        for spec in pos[1:]:
            src = spec.lstrip("+").split(":", 1)[0]
            kind = _rev_kind(src)
            if kind in ("hash", "ref"):
                call.hit(
                    "high",
                    f"git {sub} . {src} copies a revision outside HEAD's history",
                    _hashes(src),
                    refs=(src,),
                )
            elif src and not is_head_relative(src):
                call.candidate(src)
        return True
    if sub in _NET_SUBS:
        call.hits.append(
            Hit("audit.network_fetch", "high", f"git {sub} reaches the network", joined)
        )
        return sub != "pull"  # (pull also merges: judged as a move below)
    if sub == "remote" and call.args and args[0] in ("update", "add", "set-url"):
        call.hits.append(
            Hit(
                "audit.network_fetch",
                "high" if args[0] == "update" else "warn",
                f"git remote {args[0]}",
                joined,
            )
        )
        return True
    if (
        sub == "remote"
        and args[:1] in (["show"], ["prune"])
        and (args[0] == "prune" or "-n" not in args)
        and len([a for a in args if not a.startswith("-")]) > 1
    ):
        # (show -n: only the local configuration; prune asks the remote, dry run or not)
        call.hits.append(
            Hit(
                "audit.network_fetch",
                "high",
                f"git remote {args[0]} contacts the remote (lists its branches)",
                joined,
            )
        )
        return True
    if sub == "submodule" and "update" in args:
        call.hits.append(
            Hit("audit.network_fetch", "warn", "git submodule update may fetch", joined)
        )
        return True
    return False


def _local_remote(args: Sequence[str]) -> bool:
    """Is the repository a fetch or pull names this repository itself (``.``, ``./``)?"""
    pos, _ = _positionals(args)
    return bool(pos) and pos[0] in (".", "./", "file://.")


def _local_clone(call: _GitCall) -> bool:
    """``git clone [--single-branch --branch X] . DEST``: a copy of this repository, not the
    network; it copies the branch it names (or every branch, and the tags unless
    ``--no-tags``), judged in the task repository."""
    args = call.args
    branch = None
    pos: list[str] = []
    k = 0
    while k < len(args):
        word = args[k]
        if word in (
            "-b",
            "--branch",
            "-o",
            "--origin",
            "-c",
            "--config",
            "--depth",
            "-u",
            "--upload-pack",
            "--reference",
            "--separate-git-dir",
            "--template",
            "-j",
            "--jobs",
            "--filter",
            "--bundle-uri",
            "--server-option",
        ):
            if word in ("-b", "--branch") and k + 1 < len(args):
                branch = args[k + 1]
            k += 2
            continue
        if word.startswith("--branch="):
            branch = word.split("=", 1)[1]
        elif not word.startswith("-"):
            pos.append(word)
        k += 1
    if not pos or pos[0] not in (".", "./", "file://."):
        return False
    if "--single-branch" in args:
        kind = _rev_kind(branch) if branch else None
        if branch and kind in ("hash", "ref"):
            call.hit(
                "high",
                f"git clone . --branch {branch} copies a revision outside HEAD's history",
                _hashes(branch),
                refs=(branch,),
            )
        elif branch and not is_head_relative(branch):
            call.candidate(branch)
        return True
    scope = (
        "*refs:"
        if "--mirror" in args
        else "*refs:refs/heads/" + ("" if "--no-tags" in args else ",refs/tags/")
    )
    call.hit("high", "git clone . copies every branch of this repository", refs=(scope,))
    return True


def _refs_scope(sub: str, args: Sequence[str]) -> tuple[str, ...]:
    """The references ``for-each-ref`` / ``show-ref`` list, as a scope token (:data:`SCOPE`)."""
    pos, _ = _positionals([a for a in args if a not in ("--heads", "--tags", "--branches")], sub)
    if sub == "for-each-ref":
        if any(
            a.split("=", 1)[0]
            in ("--contains", "--no-contains", "--merged", "--no-merged", "--points-at")
            for a in args
        ):
            return ()  # filtered by a revision: judged by spelling
        return ("*refs:" + ",".join(pos),)
    prefixes = [
        p
        for f, p in (
            ("--heads", "refs/heads/"),
            ("--branches", "refs/heads/"),
            ("--tags", "refs/tags/"),
        )
        if f in args
    ]
    if any(
        a in ("--verify", "--exists", "--exclude-existing") or a.startswith("--exclude-existing")
        for a in args
    ):
        return ()
    return ("*show-ref:" + ",".join(prefixes) + ";" + ",".join(pos),)


def _notes_scope(args: Sequence[str]) -> tuple[str, ...]:
    """``git notes [--ref R] list|show [OBJ]``: the note it reads, as a scope token; () for
    the other notes subcommands."""
    ref = "refs/notes/commits"
    rest: list[str] = []
    k = 0
    while k < len(args):
        word = args[k]
        if word == "--ref" and k + 1 < len(args):
            ref = args[k + 1]
            k += 2
            continue
        if word.startswith("--ref="):
            ref = word.split("=", 1)[1]
        elif not word.startswith("-"):
            rest.append(word)
        k += 1
    if not ref.startswith("refs/"):
        ref = "refs/notes/" + ref
    action = rest[0] if rest else "list"
    if action not in ("list", "show") or len(rest) > 2:
        return ()
    obj = rest[1] if len(rest) > 1 else ("HEAD" if action == "show" else "")
    return (f"*notes:{ref}:{obj}",)


def _git_always(call: _GitCall) -> bool:
    """Subcommands that read beyond the base by nature (reflog, fsck, for-each-ref, ...), and
    rev-parse / cat-file, judged by what they name."""
    sub, args = call.sub, call.args
    if sub not in _ALWAYS:
        return False
    if sub == "rev-parse":
        flag = next(
            (
                a
                for a in args
                if a in _ALL_REFS
                or a.startswith(_ALL_REFS_PREFIX)
                or a in ("--symbolic-full-name",)
                and "--all" in args
            ),
            None,
        )
        if flag:
            call.hit(
                "high",
                f"git rev-parse {flag} lists references beyond the base",
                refs=scope_refs(flag),
            )
            return True
        pos, _ = _positionals(
            [
                a
                for a in args
                if a not in ("--verify", "-q", "--quiet", "--short")
                and not a.startswith("--short=")
            ],
            sub,
        )
        for word in pos:  # what it prints is the id of what it names: never a clean provenance
            if not is_head_relative(word):
                call.hit(
                    "warn",
                    f"git rev-parse {word} names a revision outside HEAD's history",
                    _hashes(word),
                    refs=(word,),
                )
        return True
    if sub == "cat-file":
        if any(a.startswith(("--batch", "--buffer")) for a in args):
            _cat_file_batch(call)
            return True
        objects = [
            a for a in args if not a.startswith("-") and a not in ("blob", "tree", "commit", "tag")
        ]
        for word in objects:
            kind = _rev_kind(word)
            if kind:  # a hash, or a ref: resolved and judged by ancestry with the repository
                call.hit(
                    "high",
                    f"git cat-file {word} reads an object outside HEAD's history",
                    _hashes(word),
                    refs=(word,),
                )
            elif not is_head_relative(word):
                call.candidate(word)
        return True
    if sub == "reflog" and _reflog_top_only(args):
        return True  # HEAD@{0} alone: the commit HEAD is at now
    if (
        sub == "fsck"
        and "--no-dangling" in args
        and not any(a in ("--unreachable", "--lost-found", "--dangling") for a in args)
    ):
        call.hit("warn", "git fsck --no-dangling reports only broken objects (no dangling ones)")
        return True
    why = _ALWAYS[sub]
    if sub in ("for-each-ref", "show-ref", "notes"):
        refs = _notes_scope(args) if sub == "notes" else _refs_scope(sub, args)
        if why:
            call.hit("high", why, refs=refs)
        return True
    if why:
        call.hit("high", why)
    return True


def _cat_file_batch(call: _GitCall) -> None:
    """``git cat-file --batch`` reads the objects named on its input: when the input is written
    in the command (a here-document, a here-string, ``printf``/``echo`` piped in), each line's
    object is judged like a revision (``HEAD:path`` is HEAD's own); otherwise the audit cannot
    see what it reads (``--batch-all-objects``: every object)."""
    lines = None if any(a.startswith("--batch-all-objects") for a in call.args) else call.fed
    if lines is None:
        call.hit("high", "git cat-file --batch reads the object store directly")
        return
    for line in lines:
        word = line.split()[0] if line.split() else ""
        kind = _rev_kind(word) if word else None
        if kind in ("hash", "ref"):
            call.hit(
                "high",
                f"git cat-file --batch reads {word}, an object outside HEAD's history",
                _hashes(word),
                refs=(word,),
            )
        elif word and not is_head_relative(word):
            call.candidate(word)


def _fed_lines(cmd: SimpleCommand) -> list[str] | None:
    """The lines written in the command line that feed ``cmd``'s input (a here-document, a
    here-string, or ``printf``/``echo`` of literals piped in); None when they are not."""
    text = next((t for op, t in cmd.redirects if op == "<<<"), cmd.heredoc)
    src = cmd.stdin
    if (
        text is None
        and src is not None
        and not src.stdin
        and not src.grouped
        and "$" not in " ".join(src.argv)
        and not any(op in ("<", "<<<") for op, _ in src.redirects)
    ):
        out = _static.source_output(cmd.stdin.argv)
        text = out.decode("utf-8", "replace") if out is not None else None
    if text is None or "$" in text or "`" in text:
        return None
    return [line for line in text.splitlines() if line.strip()]


def _git_listings(call: _GitCall) -> bool:
    """stash, branch, tag and worktree add: what they list or check out."""
    sub, args = call.sub, call.args
    if sub == "stash":
        action = args[0] if args else ""
        if action in ("show", "list", "apply", "pop", "branch"):
            # judged in the task repository when there is one: no stash there, nothing read
            rest = [a for a in args[1:] if not a.startswith("-")][1 if action == "branch" else 0 :]
            ref = (
                "refs/stash"
                if action == "list" or not rest
                else f"stash@{{{rest[0]}}}"
                if rest[0].isdigit()
                else rest[0]
            )
            call.hit(
                "high", f"git stash {action} reads stashed work (not the task's base)", refs=(ref,)
            )
        return True
    if sub == "branch":
        if any(
            a in ("-a", "-r", "--all", "--remotes", "--contains", "--merged", "--no-merged")
            for a in args
        ):
            call.hit("warn", "git branch lists other branches")
        elif any(a in ("-v", "-vv", "--verbose") for a in args) and not any(
            a
            in (
                "-d",
                "-D",
                "-m",
                "-M",
                "-c",
                "-C",
                "--delete",
                "--move",
                "--copy",
                "--show-current",
                "--list",
            )
            or not a.startswith("-")
            for a in args
        ):
            # each local branch's tip and subject: another branch's subject is its commit's
            call.hit(
                "high",
                "git branch -v prints the tip commit and subject of every branch",
                refs=("*refs:refs/heads/",),
            )
        return True
    if sub == "tag" and any(a in ("--contains", "--merged", "--points-at") for a in args):
        pos, _ = _positionals([a for a in args if a not in ("--merged", "--points-at")], sub)
        if "--contains" not in args and all(is_head_relative(p) for p in pos):
            return True  # tags on HEAD or behind it: HEAD's own history
        call.hit("warn", "git tag lists tags by commit")
        return True
    if sub == "worktree" and args[:1] == ["add"]:
        pos, _ = _positionals(args[1:])
        for word in pos[1:]:
            kind = _rev_kind(word)
            if kind:
                call.hit(
                    "high" if kind != "name" else "warn",
                    f"git worktree add of revision {word}",
                    _hashes(word),
                    refs=(word,),
                )
            else:
                call.candidate(word)
        return True
    return False


#: ``git bisect`` subcommands that neither read nor move within a bisect in progress
_BISECT_QUIET = frozenset({"terms", "help", "-h", "--help"})
#: the reference scope of a bisect in progress: its terms' commits (``refs/bisect/*``)
BISECT_SCOPE = "*refs:refs/bisect/"
#: where ``git bisect reset`` returns: the branch or commit ``BISECT_START`` names
BISECT_START = "*bisect-start:"


def _git_bisect(call: _GitCall) -> bool:
    """``git bisect``: ``start`` judges the revisions it names; ``reset [COMMIT]`` goes back to
    where the bisect started (or to COMMIT, judged); every other subcommand (``log``,
    ``visualize``, ``run``, ``replay``, ``good``/``bad``/``skip`` and custom terms) reads or
    checks out the commits of the bisect in progress, which a bisect the trajectory did not
    start may have beyond the base (:data:`BISECT_SCOPE`, resolved in the task repository;
    lowered when the trajectory started or reset the bisect itself)."""
    if call.sub != "bisect":
        return False
    args = call.args
    action = args[0] if args else ""
    if action in _BISECT_QUIET:
        return True
    if action in ("start", "reset"):
        pos = [a for a in args[1:] if not a.startswith("-")]
        if "--" in args[1:]:
            pos = [a for a in args[1 : args.index("--")] if not a.startswith("-")]
        if action == "reset" and not pos:
            # back to the branch (or commit) BISECT_START names: the base's, unless the bisect
            # was started elsewhere; only the task repository can say
            call.hits.append(
                Hit(
                    call.code,
                    "info",
                    "git bisect reset returns to where the bisect started (BISECT_START)",
                    call.joined,
                    refs=(BISECT_START,),
                    candidate=True,
                )
            )
        for word in pos:
            kind = _rev_kind(word)
            if kind in ("hash", "ref"):
                call.hit(
                    "high",
                    f"git bisect {action} {word} names a revision outside HEAD's history",
                    _hashes(word),
                    refs=(word,),
                )
            elif kind == "name":
                call.candidate(word)
        return True
    what = "reads" if action in ("log", "visualize", "view") else "checks out commits of"
    call.hit(
        "high",
        f"git bisect {action or '(no subcommand)'} {what} the bisect in progress "
        "(refs/bisect/*: its commits may be beyond the base)",
        refs=(BISECT_SCOPE,),
    )
    return True


def _git_revisions(call: _GitCall) -> bool:
    """The subcommands that take revisions: walks of every reference, moves (switch, merge, ...),
    and each revision word judged by its spelling."""
    sub, args = call.sub, call.args
    if sub not in _REV_SUBS and sub not in _REF_SUBS:
        return False
    if _walks_every_ref(call):
        return True
    notes = _shown_notes(sub, args)
    if notes:
        call.hit(
            "high",
            f"git {sub} --show-notes shows notes (text outside the base's history)",
            refs=(f"*notes:{notes}:",),
        )
    if (
        sub == "merge-base"
        and any(is_head_relative(p) for p in _positionals(args, sub)[0])
        and not any(a in ("--fork-point", "--octopus") for a in args)
    ):
        return True  # a common ancestor of HEAD and X is HEAD's own history
    if sub in _REF_SUBS:
        _git_moves(call)
        return True
    revs = _revision_words(sub, args)
    # git diff --stat / --name-only (no patch) shows file names and counts, no content
    names_only = (
        sub == "diff"
        and any(a.split("=", 1)[0] in _STAT_ONLY for a in args)
        and not any(
            a in ("-p", "--patch", "-u", "--patch-with-stat", "--patch-with-raw") for a in args
        )
    )
    for word in revs:
        kind = _rev_kind(word)
        if kind in ("hash", "ref"):
            severity, what = (
                ("warn", "names the files and counts of") if names_only else ("high", "reads")
            )
            call.hit(
                severity,
                f"git {sub} {word} {what} a revision outside HEAD's history",
                _hashes(word),
                refs=(word if word != "-" else "@{-1}",),
            )
        elif kind == "name" and sub in _NAME_WARNS:
            call.hit(
                "warn",
                f"git {sub} {word}: a branch or tag name (or a path) — not HEAD",
                (),
                refs=(word,),
            )
        elif kind == "name" or kind is None:
            call.candidate(word)
    pickaxe = next((a for a in args if a.startswith(_PICKAXE_PREFIX)), None)
    if pickaxe and not call.hits and sub in ("log", "whatchanged", "rev-list", "shortlog"):
        call.hit(
            "warn",
            f"git {sub} {pickaxe.split('=', 1)[0][:9]} searches history (HEAD's only: "
            "no future commits)",
        )
    return True


#: subcommands where a bare name (a branch, a tag or a path) is a warn on its own
_NAME_WARNS = frozenset(
    {
        "show",
        "checkout",
        "diff",
        "log",
        "ls-tree",
        "archive",
        "format-patch",
        "whatchanged",
        "shortlog",
        "rev-list",
        "restore",
        "diff-tree",
        "grep",
        "reset",
    }
)


def _walks_every_ref(call: _GitCall) -> bool:
    """--stdin (revisions the audit cannot see), describe --contains, and --all / --branches /
    --remotes / ... : high, and nothing more to judge."""
    sub, args = call.sub, call.args
    if "--stdin" in args and sub in (
        "log",
        "rev-list",
        "shortlog",
        "whatchanged",
        "show",
        "cherry-pick",
        "diff",
        "name-rev",
        "describe",
    ):
        # the revisions come from a pipe (`echo master | git log -p --stdin`): the audit cannot
        # see which, and branch and tag names are exactly what it must not allow
        call.hit("high", f"git {sub} --stdin reads revisions the audit cannot see")
        return True
    if sub == "describe" and any(a in ("--contains", "--contain") for a in args):
        call.hit(
            "high",
            "git describe --contains names the references that contain a commit (its future)",
        )
        return True
    flag = next(
        (
            a
            for a in args
            if a in _ALL_REFS
            or a.startswith(_ALL_REFS_PREFIX)
            or sub == "show-branch"
            and a in ("-a", "-r")
        ),
        None,
    )
    if flag and sub in (
        "log",
        "shortlog",
        "whatchanged",
        "rev-list",
        "show-branch",
        "show",
        "name-rev",
        "grep",
        "diff",
        "cherry",
    ):
        # not describe: --tags / --all only widen the names it may use for a tag *behind*
        # the commit
        call.hit(
            "high",
            f"git {sub} {flag} walks references beyond the base",
            refs=_walk_scope(sub, args),
        )
        return True
    return False


def _shown_notes(sub: str, args: Sequence[str]) -> str | None:
    """The notes reference ``git log|show|whatchanged --notes[=REF]`` / ``--show-notes[=REF]``
    asks for (None: none asked for; git's default display is left to content provenance)."""
    if sub not in ("log", "show", "whatchanged") or "--no-notes" in args:
        return None
    for word in args:
        name, eq, value = word.partition("=")
        if name in ("--notes", "--show-notes", "--standard-notes"):
            ref = value if eq and value else "commits"
            return ref if ref.startswith("refs/") else "refs/notes/" + ref
    return None


def _walk_scope(sub: str, args: list[str]) -> tuple[str, ...]:
    """What a walk of every reference reads, for the task repository to judge: the scopes of
    its flags and the revisions it names besides; () (judged by spelling) when a flag has no
    scope (``--reflog``, ``--glob``, ...)."""
    if sub == "show-branch":
        flags = [a for a in args if a in ("-a", "-r", "--all", "--remotes")]
        scopes = [
            (
                "*refs:refs/remotes/"
                if f in ("-r", "--remotes")
                else "*refs:refs/heads/,refs/remotes/"
            )
            for f in flags
        ]
    else:
        flags = [a for a in args if a in _ALL_REFS or a.startswith(_ALL_REFS_PREFIX)]
        if any(f not in _SCOPE_OF_FLAG for f in flags):
            return ()
        scopes = [_SCOPE_OF_FLAG[f] for f in flags]
    words = [w for w in _positionals(args, sub)[0] if not is_head_relative(w)]
    return tuple(dict.fromkeys(scopes)) + tuple(words)


def _git_moves(call: _GitCall) -> None:
    """switch / cherry-pick / merge / rebase / revert (and pull's merge) to what they name."""
    sub, args = call.sub, call.args
    if sub == "pull":
        return
    if sub in ("merge", "rebase", "cherry-pick", "revert") and any(
        a in ("--abort", "--continue", "--skip", "--quit") for a in args
    ):
        return
    pos, _ = _positionals(args, sub)
    if sub == "switch" and any(a in ("--create", "--force-create") for a in args):
        pos = pos[1:]  # the new branch name; a start point after it is a revision
        # (-c / -C / --orphan take the name as their value: already left out of pos)
    for word in pos:
        kind = _rev_kind(word)
        if kind is None and sub == "switch" and word == "-":
            kind = "ref"
        if kind:
            call.hit(
                "high",
                f"git {sub} {word} moves to a revision outside the task's base",
                _hashes(word),
                refs=(word if word != "-" else "@{-1}",),
            )
        else:
            call.candidate(word)


def _revision_words(sub: str, args: list[str]) -> list[str]:
    """The words of a revision-taking subcommand that stand where a revision goes."""
    if sub == "restore":
        revs = [a.split("=", 1)[1] for a in args if a.startswith("--source=")]
        revs += [args[k + 1] for k, a in enumerate(args[:-1]) if a in ("-s", "--source")]
        revs += [
            a[2:] for a in args if a.startswith("-s") and len(a) > 2 and not a.startswith("--")
        ]
        return revs
    pos, _ = _positionals(args, sub)
    if sub == "grep":
        has_e = any(a == "-e" or a.startswith("-e") for a in args)
        return pos if has_e else pos[1:]
    if sub == "checkout":  # with -b/-B/--orphan the new name was consumed as the option's value
        return pos
    if sub == "reset":
        if any(a in ("--hard", "--soft", "--mixed", "--keep", "--merge") for a in args):
            return pos[:1]
        return [p for p in pos if _rev_kind(p) in ("hash", "ref")]
    if sub in ("blame", "annotate"):
        return [p for p in pos if _rev_kind(p) in ("hash", "ref")]
    if sub == "archive":
        return pos[:1]
    revs = pos
    if sub == "format-patch" and not any(re.fullmatch(r"-\d+", a) or a == "--root" for a in args):
        # one <since> alone means since..HEAD: the commits HEAD has that <since> lacks
        revs = [w for w in revs if ".." in w] if len(revs) == 1 else revs
    if sub in ("log", "shortlog", "whatchanged", "rev-list", "cherry", "format-patch"):
        # A..HEAD lists only commits HEAD reaches (A merely subtracts)
        revs = [
            w
            for w in revs
            if not (re.search(r"(?<!\.)\.\.(?!\.)", w) and is_head_relative(w.split("..", 1)[1]))
        ]
        revs = [w for w in revs if not w.startswith("^")]
    return revs


# ----------------------------------------------------------------------------- other rules
_GIT_INTERNAL = re.compile(
    r"(?:^|[\s/'\"=(:,])\.git/(objects|refs|packed-refs|logs|ORIG_HEAD|FETCH_HEAD|MERGE_HEAD|"
    r"worktrees|modules|rr-cache|lost-found|shallow|index)\b"
)
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
_NET = frozenset(
    {
        "curl",
        "wget",
        "aria2c",
        "http",
        "https",
        "httpie",
        "lynx",
        "links",
        "w3m",
        "nc",
        "ncat",
        "netcat",
        "telnet",
        "scp",
        "sftp",
        "ssh",
        "ftp",
        "socat",
        "wget2",
        "xh",
        "connect()",
    }
)  # connect(): a connect the runtime trace saw (harness/audit/trace.py)
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


# options that take a value, per network program (the value is not a host)
_NET_OPT_ARG = {
    "curl": frozenset(
        {
            "-H",
            "--header",
            "-d",
            "--data",
            "--data-raw",
            "--data-binary",
            "--data-urlencode",
            "--data-ascii",
            "--json",
            "-X",
            "--request",
            "-o",
            "--output",
            "-u",
            "--user",
            "-A",
            "--user-agent",
            "-e",
            "--referer",
            "-b",
            "--cookie",
            "-c",
            "--cookie-jar",
            "-F",
            "--form",
            "--form-string",
            "-w",
            "--write-out",
            "-m",
            "--max-time",
            "--connect-timeout",
            "-T",
            "--upload-file",
            "--resolve",
            "--connect-to",
            "-E",
            "--cert",
            "--key",
            "--cacert",
            "--capath",
            "-K",
            "--config",
            "-r",
            "--range",
            "-y",
            "--speed-time",
            "-Y",
            "--speed-limit",
            "-z",
            "--time-cond",
            "--retry",
            "--retry-delay",
            "--retry-max-time",
            "--limit-rate",
            "-C",
            "--continue-at",
            "--interface",
            "--dns-servers",
            "-U",
            "--proxy-user",
            "--max-filesize",
            "--trace",
            "--trace-ascii",
            "--stderr",
            "-D",
            "--dump-header",
            "--oauth2-bearer",
            "--variable",
            "--unix-socket",
            "--abstract-unix-socket",
            "-Q",
            "--quote",
            "--mail-from",
            "--mail-rcpt",
            "-t",
            "--telnet-option",
            "--local-port",
            "--max-redirs",
            "--expect100-timeout",
            "--happy-eyeballs-timeout-ms",
            "--output-dir",
            "--create-file-mode",
            "--etag-save",
            "--etag-compare",
            "--aws-sigv4",
            "--hostpubmd5",
            "--pubkey",
            "--request-target",
            "--keepalive-time",
            "--parallel-max",
            "-P",
            "--ftp-port",
        }
    ),
    "wget": frozenset(
        {
            "-O",
            "--output-document",
            "-o",
            "--output-file",
            "-a",
            "--append-output",
            "-P",
            "--directory-prefix",
            "-U",
            "--user-agent",
            "--header",
            "--post-data",
            "--post-file",
            "--body-data",
            "--body-file",
            "--method",
            "-e",
            "--execute",
            "-t",
            "--tries",
            "-T",
            "--timeout",
            "-w",
            "--wait",
            "--user",
            "--password",
            "-B",
            "--base",
            "-Q",
            "--quota",
            "--limit-rate",
            "-l",
            "--level",
            "--load-cookies",
            "--save-cookies",
            "-A",
            "--accept",
            "-R",
            "--reject",
            "-D",
            "--domains",
            "--referer",
            "--ca-certificate",
            "--certificate",
        }
    ),
    "ssh": frozenset(
        {
            "-p",
            "-i",
            "-l",
            "-o",
            "-F",
            "-L",
            "-R",
            "-D",
            "-b",
            "-c",
            "-E",
            "-e",
            "-m",
            "-O",
            "-Q",
            "-S",
            "-W",
            "-w",
            "-B",
            "-I",
        }
    ),
    "scp": frozenset({"-P", "-i", "-o", "-F", "-c", "-l", "-S", "-D", "-X"}),
    "nc": frozenset(
        {"-p", "-s", "-w", "-i", "-q", "-X", "-x", "-I", "-O", "-T", "-V", "-M", "-m", "-e", "-c"}
    ),
    "http": frozenset(
        {
            "-a",
            "--auth",
            "-A",
            "--auth-type",
            "-o",
            "--output",
            "--session",
            "--session-read-only",
            "--pretty",
            "-s",
            "--style",
            "-p",
            "--print",
            "--verify",
            "--cert",
            "--cert-key",
            "--timeout",
            "--max-redirects",
            "--ssl",
            "--ciphers",
            "--format-options",
            "--default-scheme",
            "-P",
            "--response-charset",
            "--response-mime",
            "--chunked-size",
        }
    ),
}
for _alias, _base in (
    ("ncat", "nc"),
    ("netcat", "nc"),
    ("telnet", "nc"),
    ("sftp", "scp"),
    ("https", "http"),
    ("httpie", "http"),
    ("xh", "http"),
    ("wget2", "wget"),
    ("aria2c", "wget"),
):
    _NET_OPT_ARG[_alias] = _NET_OPT_ARG[_base]
#: options whose value is itself a host the traffic goes to (a proxy, a jump host)
_NET_HOST_OPT = frozenset({"-x", "--proxy", "--preproxy", "-J", "--url"})
_LOOPBACK_HOST = re.compile(
    r"^(localhost|localhost\.localdomain|[\w.-]*\.localhost|ip6-localhost|ip6-loopback|"
    r"127(?:\.\d{1,3}){1,3}|::1|0\.0\.0\.0|0|::ffff:127(?:\.\d{1,3}){3}|"
    r"\$\(hostname[^)]*\)|\$\{?HOSTNAME\}?)$",
    re.I,
)


def _net_targets(name: str, argv: Sequence[str]) -> tuple[list[str], bool]:
    """(the hosts / URLs a network program reaches, whether it reads targets from a file)."""
    with_arg = _NET_OPT_ARG.get(name, frozenset())
    targets: list[str] = []
    from_file = False
    k = 1
    positional: list[str] = []
    while k < len(argv):
        word = argv[k]
        if word == "--":
            positional += argv[k + 1 :]
            break
        if word.startswith("--"):
            opt, eq, value = word.partition("=")
            if opt in ("--input-file", "-i") or opt == "--config":
                from_file = True
            if opt in _NET_HOST_OPT:
                if eq:
                    targets.append(value)
                elif k + 1 < len(argv):
                    targets.append(argv[k + 1])
                k += 1 if eq else 2
                continue
            k += 2 if opt in with_arg and not eq else 1
            continue
        if word.startswith("-") and len(word) > 1:
            # a cluster of short flags: the first one that takes a value takes the rest (or the next word)
            for j, letter in enumerate(word[1:], 1):
                opt = "-" + letter
                if opt in with_arg or opt in _NET_HOST_OPT:
                    value = word[j + 1 :]
                    if not value and k + 1 < len(argv):
                        value = argv[k + 1]
                        k += 1
                    if opt in _NET_HOST_OPT:
                        targets.append(value)
                    if opt in ("-K",) or (name in ("wget", "wget2", "aria2c") and opt == "-i"):
                        from_file = True
                    break
            k += 1
            continue
        positional.append(word)
        k += 1
    if name in ("http", "https", "httpie", "xh"):
        pos = [p for p in positional if not re.fullmatch(r"[A-Z]+", p)]
        targets += [("localhost" + p if p.startswith(":") else p) for p in pos[:1]]
    elif name in ("nc", "ncat", "netcat", "telnet"):
        targets += positional[:1]
    elif name == "socat":
        for addr in positional:
            parts = addr.split(":")
            if (
                parts[0].upper().startswith(("TCP", "UDP", "SSL", "OPENSSL", "PROXY", "SOCKS"))
                and len(parts) > 1
            ):
                targets.append(parts[1])
    elif name in ("ssh",):
        targets += positional[:1]
    elif name in ("scp", "sftp", "rsync"):
        targets += [p.split(":", 1)[0] for p in positional if ":" in p and not p.startswith("/")]
        if name == "sftp":
            targets += positional[:1]
    else:
        targets += positional
    return targets, from_file


def _host(target: str) -> str:
    t = target.strip().strip("'\"")
    t = re.sub(r"^[A-Za-z][A-Za-z0-9+.-]*://", "", t)
    t = t.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    if "@" in t:
        t = t.rsplit("@", 1)[1]
    if t.startswith("["):
        return t[1 : t.find("]")] if "]" in t else t[1:]
    if t.count(":") > 1 and not t.startswith("$("):
        return t  # a bare IPv6 address
    return t.split(":", 1)[0] if not t.startswith("$(") else t[: t.find(")") + 1] if ")" in t else t


def is_loopback(target: str) -> bool:
    """True when a URL / host names this machine (``localhost``, ``127.0.0.1``, ``[::1]``,
    ``0.0.0.0``, ``$(hostname)``): a server the trajectory started itself, not the network."""
    return bool(_LOOPBACK_HOST.match(_host(target)))


def _net_rule(name: str, argv: Sequence[str], joined: str) -> Hit | None:
    targets, from_file = _net_targets(name, argv)
    targets = [t for t in targets if t]
    if not targets and not from_file:
        return None  # curl --version, ssh -V: no host, nothing fetched
    if targets and not from_file and all(is_loopback(t) for t in targets):
        return Hit("audit.network_fetch", "info", f"{name} to this machine (loopback) only", joined)
    if name == "connect()":
        return Hit(
            "audit.network_fetch", "high", f"connect() to {targets[0]} (runtime trace)", joined
        )
    return Hit("audit.network_fetch", "high", f"{name} reaches the network", joined)


#: options whose value is a path or pattern left out of the command's reach
_EXCLUDE_OPTS = frozenset(
    {
        "--exclude",
        "--exclude-dir",
        "--exclude-from",
        "--ignore",
        "--ignore-dir",
        "--exclude-vcs-ignores",
        "--anchored-exclude",
    }
)
#: readers a ``find -exec`` may run on what it finds
_SEARCHERS = frozenset({"grep", "egrep", "fgrep", "zgrep", "rg", "ag", "ack"})
_CONTENT_READERS = frozenset(
    {
        "cat",
        "head",
        "tail",
        "grep",
        "egrep",
        "fgrep",
        "sed",
        "awk",
        "less",
        "more",
        "nl",
        "strings",
        "xxd",
        "od",
        "hexdump",
        "tac",
        "bat",
        "wc",
    }
)


def _excluded(argv: Sequence[str]) -> set[int]:
    """Positions of the words that name what a command leaves out (``--exclude=./judge``,
    ``--exclude-dir hidden``, find's ``-not -path P`` / ``-path P -prune``, rg's ``-g '!P'``):
    an exclusion is not a read."""
    out: set[int] = set()
    for k, word in enumerate(argv):
        name = word.split("=", 1)[0]
        if name in _EXCLUDE_OPTS:
            out.add(k)
            if "=" not in word:
                out.add(k + 1)
        elif (
            word in ("-path", "-wholename", "-name", "-iname", "-ipath", "-regex")
            and k + 1 < len(argv)
            and (argv[k - 1] in ("!", "-not", "\\!") or list(argv[k + 2 : k + 3]) == ["-prune"])
        ):
            out.add(k + 1)
        elif (
            word in ("-g", "--glob", "--iglob")
            and argv[k + 1 : k + 2]
            and argv[k + 1].startswith("!")
        ):
            out.add(k + 1)
        elif (
            name in ("--glob", "--iglob")
            and word.split("=", 1)[1:2]
            and word.split("=", 1)[1].startswith("!")
        ):
            out.add(k)
    return out


def _reads_folder_holding(argv: Sequence[str], rules: RuleSet) -> tuple[str, str, bool] | None:
    """(folder, hidden path, whole files) when a recursive read (``find DIR -exec cat``,
    ``grep -r P DIR``, ``rg``/``ag``, ``cat DIR/*/...``) starts in a folder below the checkout's
    root that holds a hidden path (``tests`` holds ``tests/hidden/``) and leaves it in (no
    exclusion, no ``-maxdepth`` above it): it reads the hidden files too, whole (cat, head)
    or only the lines a search matches (grep, rg: ``whole`` is False). The whole checkout
    (``.``) is every session's search root: a hidden path under it is judged when named."""
    if not argv:
        return None
    name = _basename(argv[0])
    skip = [argv[k] for k in _excluded(argv) if k < len(argv)]
    if any(
        rules.hidden_match(w) or rules.hidden_match(w + "/") or rules.mentions_hidden(w)
        for w in skip
    ):
        return None  # the hidden path is left out
    depth = None
    whole = name not in _SEARCHERS
    roots: list[str] = []
    if name == "find":
        runs = [
            _basename(argv[k + 1])
            for k, a in enumerate(argv[:-1])
            if a in ("-exec", "-execdir", "-ok", "-okdir")
            and not _edits_in_place(argv[k + 1 : k + 4])
        ]
        if not any(r in _CONTENT_READERS for r in runs):
            return None
        whole = any(r in _CONTENT_READERS and r not in _SEARCHERS for r in runs)
        depth = next(
            (
                int(argv[k + 1])
                for k, a in enumerate(argv[:-1])
                if a == "-maxdepth" and argv[k + 1].isdigit()
            ),
            None,
        )
        for word in argv[1:]:
            if word.startswith(("-", "(", "!")):
                break
            roots.append(word)
    elif name in ("grep", "egrep", "fgrep", "zgrep") and any(
        a in ("--recursive", "--dereference-recursive")
        or re.fullmatch(r"-[A-Za-z]*[rR][A-Za-z]*", a)
        for a in argv[1:]
    ):
        pos = [a for a in argv[1:] if not a.startswith("-")]
        has_e = any(a in ("-e", "-f") or a.startswith(("--regexp", "--file")) for a in argv[1:])
        roots = pos if has_e else pos[1:]
    elif name in ("rg", "ag", "ack"):
        roots = [a for a in argv[1:] if not a.startswith("-")][1:]
    elif name in _CONTENT_READERS:
        # a wildcard in a folder's place (``tests/*/x.py``, ``tests/**``) descends into it
        roots = [a.split("*", 1)[0] for a in argv[1:] if re.search(r"\*[^/]*/|\*\*", a)]
    for root in roots:
        clean = root.strip().rstrip("/")
        while clean.startswith("./"):
            clean = clean[2:]
        if not clean or clean in (".", "..") or clean.startswith(("/", "~", "$")):
            continue
        for path in rules.hidden_paths:
            hidden = path.strip().strip("/")
            if hidden.startswith("./"):
                hidden = hidden[2:]
            # a file under the hidden path lies one level below the path's own parts
            below = hidden[len(clean) + 1 :].count("/") + 2
            if hidden.startswith(clean + "/") and (depth is None or depth >= below):
                return clean, hidden, whole
    return None


def _edits_in_place(argv: Sequence[str]) -> bool:
    """``sed -i ...``: an edit (judged as a write), not a read of what it is given."""
    return (
        bool(argv)
        and _basename(argv[0]) == "sed"
        and any(a == "-i" or a.startswith(("-i", "--in-place")) for a in argv[1:])
    )


def _reads_what_find_found(cmd: SimpleCommand, rules: RuleSet) -> tuple[str, str, bool] | None:
    """``find DIR ... | xargs cat``: the reader runs on what find listed (its roots, as the
    audit reads xargs), judged as ``find DIR ... -exec cat {} +`` would be."""
    src = cmd.stdin
    hops = 0
    while (
        src is not None
        and src.argv
        and _basename(src.argv[0]) in ("grep", "sort", "head", "tail")
        and hops < 4
    ):
        if rules.mentions_hidden(" ".join(src.argv)):
            return None  # a filter on the way names the hidden path (``| grep -v hidden``)
        src = src.stdin
        hops += 1
    if (
        src is None
        or not src.argv
        or _basename(src.argv[0]) != "find"
        or not cmd.argv
        or _basename(cmd.argv[0]) not in _CONTENT_READERS
        or _edits_in_place(cmd.argv)
    ):
        return None
    roots = {w.rstrip("/") for w in src.argv[1:]}
    if not any(w.endswith("/") and w.rstrip("/") in roots for w in cmd.argv[1:]):
        return None  # not xargs's expansion of the listing
    return _reads_folder_holding([*src.argv, "-exec", cmd.argv[0], "{}", "+"], rules)


def classify(cmd: SimpleCommand, rules: RuleSet = RuleSet()) -> list[Hit]:
    """The leak rules that fire on one simple command (module doc)."""
    argv = cmd.argv
    joined = " ".join(argv) + "".join(f" {op}{t}" for op, t in cmd.redirects)
    hits: list[Hit] = []
    name = _basename(argv[0]) if argv else ""
    if (
        name == "hub" and len(argv) > 1
    ):  # hub wraps git: git's rules, and its own commands reach GitHub
        sub, _ = _git_split(argv)
        if sub in _HUB_NET:
            hits.append(Hit("audit.network_fetch", "high", f"hub {sub} reaches GitHub", joined))
        hits += _git_rules(("git", *argv[1:]), joined)
    elif name in ("gh", "glab", "tea", "lab"):
        words = [a for a in argv[1:] if not a.startswith("-")]
        if words and words[0] not in _FORGE_LOCAL:
            hits.append(
                Hit(
                    "audit.network_fetch",
                    "high",
                    f"{name} {' '.join(words[:2])} reaches the forge "
                    "(pull requests, patches, the repository's future)",
                    joined,
                )
            )
    if name == "open()":  # the runtime trace saw a program other than git open git storage
        target = argv[1] if len(argv) > 1 else "?"
        hits.append(
            Hit(
                "audit.git_internals_read",
                "high",
                f"git storage read without git (runtime trace): {target[:80]}",
                joined,
            )
        )
        return hits
    if name == "git":
        hits += _git_rules(argv, joined, _fed_lines(cmd) if "cat-file" in argv else None)
    elif name in _NET:
        hit = _net_rule(name, argv, joined)
        if hit is not None:
            hits.append(hit)
    elif name in ("pip", "pip3", "uv", "conda") and len(argv) > 1:
        words = [a for a in argv[1:] if not a.startswith("-")]
        action = words[0] if words else ""
        if name == "uv" and action == "pip":
            words = words[1:]
            action = words[0] if words else ""
        if action == "download":
            hits.append(
                Hit("audit.network_fetch", "high", f"{name} download fetches packages", joined)
            )
        elif action == "install":
            urls = [
                w for w in words[1:] if re.match(r"^(git\+|https?://|ftp://)", w) or "@ http" in w
            ]
            if urls:
                hits.append(
                    Hit(
                        "audit.network_fetch",
                        "high",
                        f"{name} install from a URL: {urls[0]}",
                        joined,
                    )
                )
            elif words[1:] and not all(
                w in (".", "-e") or w.startswith((".", "/")) for w in words[1:]
            ):
                hits.append(
                    Hit(
                        "audit.network_fetch",
                        "warn",
                        f"{name} install reaches the package index",
                        joined,
                    )
                )
    # .git internals (any program but git's own --git-dir)
    words = list(argv[1:]) + [t for _, t in cmd.redirects]
    if ".git" in joined and (
        name != "git" or any(w.startswith(("show", "cat")) for w in argv[1:2])
    ):
        internal = next((w for w in words if _GIT_INTERNAL.search(w)), None)
        if internal:
            hits.append(
                Hit(
                    "audit.git_internals_read",
                    "high",
                    f"reads git internals: {internal[:80]}",
                    joined,
                )
            )
        elif (
            name in _RECURSIVE
            and "-prune" not in words
            and any(w.rstrip("/") == ".git" or w.rstrip("/").endswith("/.git") for w in words)
        ):
            hits.append(Hit("audit.git_internals_read", "high", f"{name} searches .git", joined))
        elif name == "ls" and any(w.rstrip("/").endswith(".git") for w in words):
            hits.append(Hit("audit.git_internals_read", "warn", "lists .git", joined))
    # hidden data
    if rules.hidden_paths and rules.mentions_hidden(joined):
        skip = _excluded(argv)
        hidden = next(
            (
                w
                for k, w in [*enumerate(argv), *((-1, t) for _, t in cmd.redirects)]
                if k not in skip and rules.hidden_match(w)
            ),
            None,
        )
        if hidden:
            hits.append(
                Hit("audit.hidden_data_read", "high", f"touches hidden data: {hidden[:80]}", joined)
            )
    if rules.hidden_paths and not any(h.code == "audit.hidden_data_read" for h in hits):
        inside = _reads_folder_holding(argv, rules) or _reads_what_find_found(cmd, rules)
        if inside:
            folder, hidden, whole = inside
            hits.append(
                Hit(
                    "audit.hidden_data_read",
                    "high" if whole else "warn",
                    f"reads {folder} recursively, and the hidden {hidden} with it"
                    + ("" if whole else " (only the lines a search matches)"),
                    joined,
                )
            )
    # writes to tests
    for target in _write_targets(argv, cmd.redirects) if cmd.redirects or name in _WRITERS else ():
        clean = target.strip()
        if clean.startswith("./"):
            clean = clean[2:]
        if _CACHE_PATH.search(clean):
            continue
        if _TEST_NAMES.search(clean) or _TEST_DIR.search(clean):
            verb = "deletes" if name in ("rm", "unlink", "shred") else "writes"
            hits.append(Hit("audit.test_write", "high", f"{verb} {clean[:80]}", joined))
            break
        if _TEST_FILE.search(clean):
            hits.append(Hit("audit.test_write", "warn", f"writes a test file {clean[:80]}", joined))
            break
    return hits
