"""The git history rules of the leak audit (``audit.git_history_leak``): :func:`_git_rules`
runs each judge of one git command in turn — the network, the subcommands that read beyond the
base by nature (reflog, fsck, ``for-each-ref``, ``cat-file``), listings (stash, branch, tag,
worktree), bisect, and the subcommands that take revisions, each word judged by its spelling."""

from __future__ import annotations

import re
from collections.abc import Sequence

from evotree.harness.audit import static as _static
from evotree.harness.audit.git_argv import _git_split, _GitCall, _positionals
from evotree.harness.audit.git_scopes import (
    _ALL_REFS,
    _ALL_REFS_PREFIX,
    AM_SESSION,
    BISECT_SCOPE,
    BISECT_START,
    REBASE_SESSION,
    _notes_scope,
    _refs_scope,
    scope_refs,
    _shown_notes,
    _walk_scope,
)
from evotree.harness.audit.hits import Hit
from evotree.harness.audit.lexer import SimpleCommand
from evotree.harness.audit.network_rules import _git_network
from evotree.harness.audit.revisions import _hashes, is_head_relative, _rev_kind


#: options that search history by content or message (over HEAD's history alone: a warn)
_PICKAXE_PREFIX = ("-S", "-G", "--grep", "--find-object", "--pickaxe-regex", "-L")

#: subcommands that take revisions, each judged by its spelling
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
        "fast-export",
        "read-tree",
        "diff-index",
        "merge-tree",
    }
)


#: diff options that print names and counts only, no content
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


#: subcommands that move to (or apply) what they name
_REF_SUBS = frozenset({"switch", "cherry-pick", "merge", "rebase", "revert", "pull"})


#: subcommands that read beyond the base by nature, and why (None: judged by what they name)
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
    "rev-parse": None,
    "notes": "git notes reads notes attached to other commits",
    "replace": "git replace rewrites what commits resolve to",
    "pack-objects": None,
    "fmt-merge-msg": None,
    "unpack-file": None,
}


#: the rule of a read of a bundle file (cleared when the trajectory created that file itself)
BUNDLE_READ = "git bundle reads a bundle file's references and objects"
_BUNDLE_OPTS = frozenset({"-q", "--quiet", "--progress", "--all-progress", "--no-progress"})


def _bundle(call: _GitCall) -> None:
    """``git bundle create FILE REVS``: packs the history ``git log REVS`` walks, judged as that
    walk is (``HEAD~1..HEAD``, ``main`` on HEAD's history: nothing beyond the base; ``--all``,
    a tag or branch beyond the base: high). ``verify`` / ``list-heads`` / ``unbundle`` of a
    FILE print or unpack its references and objects: high (:data:`BUNDLE_READ`), unless the
    trajectory created FILE itself (the judge's call)."""
    args = call.args
    if not args:
        return
    if args[0] == "create":
        rest = [a for a in args[1:] if a not in _BUNDLE_OPTS and not a.startswith("--version")]
        revs = rest[1:]
        if not revs:
            return
        for hit in _git_rules(("git", "log", *revs), call.joined):
            call.hits.append(
                Hit(
                    hit.code,
                    hit.severity,
                    hit.rule.replace("git log", "git bundle create", 1),
                    call.joined,
                    hit.revisions,
                    refs=hit.refs,
                    candidate=hit.candidate,
                )
            )
        return
    files = [a for a in args[1:] if not a.startswith("-")]
    what = files[0] if files else ""
    call.hit("high", f"{BUNDLE_READ}: {what}")


#: ``for-each-ref`` format atoms that print what a reference points at (its commit's message,
#: its hash, its tree or parents, its author): a listing with one reads every listed reference
_CONTENT_ATOM = re.compile(
    r"%\(\*?(?:contents|subject|body|trailers|objectname|tree|parent|describe|"
    r"author|committer|tagger|creator|signature|raw)"
)


def _format_value(args: Sequence[str]) -> str | None:
    """The value of ``--format`` / ``--pretty`` (``=VALUE`` or the next word) in ``args``."""
    for k, word in enumerate(args):
        name, eq, value = word.partition("=")
        if name in ("--format", "--pretty"):
            if eq:
                return value
            return args[k + 1] if k + 1 < len(args) else ""
    return None


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


def _git_rules(argv: Sequence[str], joined: str, fed: list[str] | None = None) -> list[Hit]:
    """The hits of one git command: each judge in turn, until one has decided. ``fed``: the
    lines its input is given in the command line, when it is."""
    sub, args = _git_split(argv)
    if not sub:
        return []
    call = _GitCall(sub, args, joined, fed)
    call.config = _command_config(argv)
    for judge in (
        _git_index,
        _git_tag_messages,
        _git_network,
        _git_always,
        _git_listings,
        _git_bisect,
        _git_session,
        _git_revisions,
    ):
        if judge(call):
            break
    return call.hits


#: the rule of a read of the index's staged blobs
INDEX_READ = "reads the index's staged blobs, not the work tree's files"
#: ``:path``, ``:0:path`` .. ``:3:path``: a blob of the index (``:/text`` is a message search)
_INDEX_WORD = re.compile(r"^:(?:[0-3]:)?(?!/)(.+)$")
#: options that make the subcommand read the index's blobs (not the work tree's files)
_INDEX_FLAGS = {
    "diff": ("--cached", "--staged"),
    "diff-index": ("--cached",),
    "grep": ("--cached",),
}


def _git_index(call: _GitCall) -> bool:
    """Reads of the index's staged blobs (``git show :path``, ``git diff --cached``,
    ``checkout-index``, ``update-index --no-skip-worktree``): a warn on the file alone (dropped
    when the trajectory staged something itself first), whose reference scope (``*index:PATH``)
    the task repository judges: a staged blob that the base's tree does not hold and a commit
    beyond the base holds is future content. Never decides alone: the command's other words are
    judged as well."""
    sub, args = call.sub, call.args
    paths: list[str] | None = None
    if sub in ("show", "cat-file", "unpack-file", "archive", "diff", "grep"):
        head = args[: args.index("--")] if "--" in args else args
        words = [m.group(1) for m in map(_INDEX_WORD.match, head) if m]
        if words:
            paths = words
    if paths is None and any(a in _INDEX_FLAGS.get(sub, ()) for a in args):
        paths = args[args.index("--") + 1 :] if "--" in args else [""]
    if paths is None and sub == "checkout-index":
        listed = [a for a in args if not a.startswith("-")]
        paths = listed if listed and "-a" not in args and "--all" not in args else [""]
    if paths is None and sub == "update-index" and "--no-skip-worktree" in args:
        paths = [a for a in args if not a.startswith("-")] or [""]
    if paths is None:
        return False
    call.hits.append(
        Hit(
            call.code,
            "warn",
            f"{INDEX_READ} (git {sub})",
            call.joined,
            refs=tuple(f"*index:{p.removeprefix('./')}" for p in paths),
        )
    )
    return False


#: a --format atom that prints a reference's message (an annotated tag's text)
_CONTENTS_ATOM = re.compile(r"%\(\*?(?:contents|body)")
#: ``git tag -nN`` with N > 1: more than each tag message's first line
_TAG_LINES = re.compile(r"^-n0*(?:[2-9]|[1-9][0-9]+)$")
_TAG_WRITES = frozenset({"-a", "-s", "-m", "-F", "-d", "--delete", "-f", "--force", "-u"})


def _git_tag_messages(call: _GitCall) -> bool:
    """Reads of annotated tags' text (``git tag -nN``, ``--format=%(contents)`` on ``tag`` or
    ``for-each-ref``, ``cat-file tag|-p T``, ``show T``, ``verify-tag T``, ``tag -v T``): a
    candidate whose scope (``*tagmsg:PATTERNS`` / ``*tagmsg-rev:T``) the task repository judges:
    a tag object whose message holds a future commit's line, subject or id is future content,
    whatever commit the tag points at. Never decides alone."""
    sub, args = call.sub, call.args
    refs: list[str] = []
    values = {k + 1 for k, a in enumerate(args) if a in ("--format", "--sort", "--points-at")}
    words = [a for k, a in enumerate(args) if not a.startswith("-") and k not in values]
    contents = any(_CONTENTS_ATOM.search(a) for a in args)
    if sub == "tag" and "-v" in args:
        refs = [f"*tagmsg-rev:{w}" for w in words]
    elif sub == "tag" and not _TAG_WRITES.intersection(args):
        if contents or any(_TAG_LINES.match(a) for a in args):
            refs = ["*tagmsg:" + ",".join(f"refs/tags/{w}" for w in words)]
            if not words:
                refs = ["*tagmsg:refs/tags/"]
    elif sub == "for-each-ref" and contents:
        refs = ["*tagmsg:" + ",".join(words)]
    elif sub == "cat-file" and ("tag" in args or "-p" in args):
        refs = [f"*tagmsg-rev:{w}" for w in words if w != "tag"]
    elif sub in ("show", "verify-tag"):
        head = args[: args.index("--")] if "--" in args else args
        refs = [f"*tagmsg-rev:{w}" for w in head if not w.startswith("-") and ":" not in w]
    if not refs:
        return False
    call.hits.append(
        Hit(
            call.code,
            "info",
            f"git {sub} reads annotated tag messages: judged in the task repository",
            call.joined,
            refs=tuple(refs),
            candidate=True,
        )
    )
    return False


def _command_config(argv: Sequence[str]) -> dict[str, list[str]]:
    """The configuration git's own options set for this one command (``-c key=value``), by
    lower-case key: settings such as ``showbranch.default`` name revisions no argument shows."""
    config: dict[str, list[str]] = {}
    k = 1
    while k < len(argv) - 1 and argv[k].startswith("-"):
        word = argv[k]
        if word == "-c":
            key, _, value = argv[k + 1].partition("=")
            config.setdefault(key.lower(), []).append(value)
        k += (
            2
            if word
            in (
                "-C",
                "-c",
                "--git-dir",
                "--work-tree",
                "--namespace",
                "--exec-path",
                "--super-prefix",
                "--config-env",
            )
            else 1
        )
    return config


def _git_always(call: _GitCall) -> bool:
    """Subcommands that read beyond the base by nature (reflog, fsck, for-each-ref, ...), and
    rev-parse / cat-file, judged by what they name."""
    sub, args = call.sub, call.args
    if sub not in _ALWAYS:
        return False
    if sub == "rev-parse":
        _rev_parse(call)
        return True
    if sub == "cat-file":
        _cat_file(call)
        return True
    if sub == "pack-objects":
        _pack_objects(call)
        return True
    if sub == "fmt-merge-msg":
        _fed_revisions(call, "fmt-merge-msg")
        return True
    if sub == "unpack-file":
        for word in _positionals(args, sub)[0]:
            call.hit(
                "high",
                f"git unpack-file {word} writes out an object (not a file of HEAD's tree)",
                _hashes(word),
                refs=(word,),
            )
        return True
    if sub == "bundle":
        _bundle(call)
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
    if sub == "replace" and all(a in ("-l", "--list") or a.startswith("--format") for a in args):
        # lists the replace references: what they replace and with what, judged in the task
        # repository by the replacements
        call.hit("high", "git replace -l lists replaced commits", refs=("*refs:refs/replace/",))
        return True
    if sub in ("for-each-ref", "show-ref", "notes"):
        refs = _notes_scope(args) if sub == "notes" else _refs_scope(sub, args)
        if why:
            call.hit("high", why, refs=refs)
        return True
    if why:
        call.hit("high", why)
    return True


def _rev_parse(call: _GitCall) -> None:
    """rev-parse: a flag that lists references reads them all; a named revision prints its id
    (never a clean provenance)."""
    args = call.args
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
        return
    pos, _ = _positionals(
        [
            a
            for a in args
            if a not in ("--verify", "-q", "--quiet", "--short") and not a.startswith("--short=")
        ],
        "rev-parse",
    )
    for word in pos:  # what it prints is the id of what it names: never a clean provenance
        if not is_head_relative(word):
            call.hit(
                "warn",
                f"git rev-parse {word} names a revision outside HEAD's history",
                _hashes(word),
                refs=(word,),
            )


def _cat_file(call: _GitCall) -> None:
    """cat-file: a batch is judged by its input; a named object by ancestry (with the
    repository), a word that is not one by what it turns out to be."""
    args = call.args
    if any(a.startswith(("--batch", "--buffer")) for a in args):
        _cat_file_batch(call)
        return
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


def _pack_objects(call: _GitCall) -> None:
    """``git pack-objects`` packs the objects (or, with ``--revs``, the revisions) named on its
    input, or every reference's (``--all``, ``--branches``, ...): it reads any object it is
    given, so its input is judged like ``cat-file --batch``'s."""
    flag = next((a for a in call.args if a in _ALL_REFS or a.startswith(_ALL_REFS_PREFIX)), None)
    if flag:
        call.hit(
            "high",
            f"git pack-objects {flag} packs the objects of references beyond the base",
            refs=scope_refs(flag),
        )
        return
    _fed_revisions(call, "pack-objects")


def _fed_revisions(call: _GitCall, sub: str) -> None:
    """A subcommand that reads the revisions or objects named on its input (``pack-objects``,
    ``fmt-merge-msg --log``, ``diff-tree --stdin``): each fed line's first word judged as a
    revision when the command line writes them; high when it does not (a pipe from another
    command: ``git branch --format=%(objectname) | ...`` names every branch)."""
    if call.fed is None:
        call.hit("high", f"git {sub} reads revisions from its input, which the audit cannot see")
        return
    for line in call.fed:
        word = line.split()[0] if line.split() else ""
        kind = _rev_kind(word) if word else None
        if kind in ("hash", "ref"):
            call.hit(
                "high",
                f"git {sub} reads {word}, named on its input (outside HEAD's history)",
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
    if sub in ("branch", "tag") and _lists_content(call):
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


def _lists_content(call: _GitCall) -> bool:
    """``git branch`` / ``git tag`` listing with a ``--format`` that prints what each reference
    points at (``%(contents)``, ``%(subject)``, ``%(objectname)``, ...): a walk of every listed
    reference (judged in the task repository by the references it lists)."""
    fmt = _format_value(call.args)
    if fmt is None or not _CONTENT_ATOM.search(fmt):
        return False
    if any(a.startswith(("--merged", "--points-at", "--contains")) for a in call.args):
        return False  # filtered by a revision: judged by what it names (below)
    if any(
        a in ("-d", "-D", "-m", "-M", "-c", "-C", "--delete", "--move", "--copy") for a in call.args
    ):
        return False
    if call.sub == "tag":
        scope = "*refs:refs/tags/"
    elif any(a in ("-a", "--all") for a in call.args):
        scope = "*refs:refs/heads/,refs/remotes/"
    elif any(a in ("-r", "--remotes") for a in call.args):
        scope = "*refs:refs/remotes/"
    else:
        scope = "*refs:refs/heads/"
    call.hit(
        "high",
        f"git {call.sub} --format={fmt[:40]} prints what every listed reference points at",
        refs=(scope,),
    )
    return True


#: ``git bisect`` subcommands that neither read nor move within a bisect in progress
_BISECT_QUIET = frozenset({"terms", "help", "-h", "--help"})


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


#: the options of ``git am`` / ``git rebase`` that read or apply the patch of the session
#: already in progress (not one the command starts)
_SESSION_STEPS = {
    "--show-current-patch": "shows",
    "--continue": "commits",
    "--skip": "moves on from",
    "--resolved": "commits",
    "-r": "commits",
    "--edit-todo": "shows the todo list of",
}
#: of those, the ones that print nothing of the patch (an agent continues its own rebase every
#: day): a warn on the file alone, raised when the task repository's stopped session holds a
#: commit beyond the base
_SESSION_QUIET = frozenset({"--continue", "--skip", "--resolved", "-r"})


def _git_session(call: _GitCall) -> bool:
    """``git am`` / ``git rebase`` steps of a session in progress (``--show-current-patch``,
    ``--continue``, ``--skip``, ...): a stopped am or rebase the trajectory did not start holds
    someone's patch, which these show or commit (:data:`AM_SESSION`, resolved in the task
    repository: 'absent' when none is stopped there; lowered when the trajectory started or
    aborted the session itself). ``--abort``/``--quit`` read nothing; a new ``git am FILE`` or
    ``git rebase X`` is judged by what it names."""
    if call.sub not in ("am", "rebase"):
        return False
    step = next(
        (a.split("=", 1)[0] for a in call.args if a.split("=", 1)[0] in _SESSION_STEPS), None
    )
    if step is None or call.sub == "am" and step == "--edit-todo":
        return call.sub == "am"
    call.hit(
        "warn" if step in _SESSION_QUIET else "high",
        f"git {call.sub} {step} {_SESSION_STEPS[step]} the patch of a stopped {call.sub} "
        "(someone's change, not the task's base)",
        refs=(AM_SESSION if call.sub == "am" else REBASE_SESSION,),
    )
    return True


#: options that print content whatever else is given (a patch, words of one, a raw blob)
_PATCH_OPTIONS = (
    "-p",
    "--patch",
    "-u",
    "--patch-with-stat",
    "--patch-with-raw",
    "--cc",
    "-c",
    "-m",
    "--word-diff",
    "--color-words",
    "--function-context",
    "-W",
    "--ext-diff",
    "--textconv",
    "--binary",
    "--full-diff",
)


def _names_only(sub: str, args: Sequence[str]) -> bool:
    """``git diff``/``show``/``log``/``whatchanged`` with a stat or names option and nothing
    that prints a patch: what it shows of a commit is its message, the files' names and counts
    — never their content. On the file alone a commit id it names is then a warn (the audit
    cannot place the id: an ancestor the agent found in its log looks the same as the future);
    with the task repository, an id beyond the base is raised to high (:func:`resolve_refs`)."""
    if sub not in ("diff", "show", "log", "whatchanged"):
        return False
    return any(a.split("=", 1)[0] in _STAT_ONLY for a in args) and not any(
        a.split("=", 1)[0] in _PATCH_OPTIONS
        or re.fullmatch(r"-U\d*|--unified(=.*)?", a)
        or re.fullmatch(r"-[a-zA-Z]*[pucmW][a-zA-Z]*", a)  # bundled: -pR, -sp, ...
        or a.startswith(("--format", "--pretty", "--notes", "--show-notes", "--expand-tabs"))
        for a in args
    )


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
    if sub == "show-branch":
        revs += call.config.get("showbranch.default", [])
        if not revs:
            # no revision given: git shows showbranch.default's (set in config the command
            # line may not show: the environment's GIT_CONFIG_*), else every local branch's
            # tip and subject: a warn, raised when the task repository has a local branch
            # beyond the base
            call.hit(
                "warn",
                "git show-branch with no revision shows every local branch (or the revisions "
                "showbranch.default names)",
                refs=("*refs:refs/heads/",),
            )
            return True
    # git diff --stat / --name-only (no patch) shows file names and counts, no content; so
    # does git show / log with them, of a commit named by its id (and its message)
    names_only = _names_only(sub, args)
    for word in revs:
        kind = _rev_kind(word)
        if kind in ("hash", "ref"):
            severity, what = (
                ("warn", "names the files and counts of")
                if names_only and (sub == "diff" or (kind == "hash" and ":" not in word))
                else ("high", "reads")
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
    if "--stdin" in args and (sub in _REV_SUBS or sub in _REF_SUBS):
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
        "fast-export",
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
