"""How a git command line reads: the subcommand after git's global options (:func:`_git_split`),
its positional words (:func:`_positionals`: options and their values skipped), and
:class:`_GitCall`, the one git command a judge of the leak rules is deciding on."""

from __future__ import annotations

import re
from collections.abc import Sequence

from evotree.harness.audit.hits import Hit
from evotree.harness.audit.revisions import is_head_relative


#: git's global options that take a value (before the subcommand)
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
        #: the configuration git's ``-c`` options set for this command, by lower-case key
        self.config: dict[str, list[str]] = {}

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


def _git_sub_index(argv: Sequence[str]) -> int:
    """The index of git's subcommand in ``argv``, after the global options (-1: none)."""
    k = 1
    while k < len(argv):
        word = argv[k]
        if word in _GIT_GLOBAL_ARG:
            k += 2
            continue
        if word.startswith("-"):
            k += 1
            continue
        return k
    return -1


#: git subcommands that read history or references: after a command name the audit could not
#: resolve (``$X log --all``, ``$(unknown) show origin/fix``) the words are judged as git's
_GIT_WORDS = frozenset(
    {
        "log",
        "show",
        "diff",
        "cat-file",
        "rev-list",
        "reflog",
        "for-each-ref",
        "show-ref",
        "ls-remote",
        "fetch",
        "checkout",
        "restore",
        "switch",
        "reset",
        "cherry-pick",
        "merge",
        "stash",
        "notes",
        "ls-tree",
        "rev-parse",
        "archive",
        "bundle",
        "format-patch",
        "diff-tree",
        "whatchanged",
        "shortlog",
        "fsck",
        "pull",
        "clone",
        "show-branch",
        "blame",
        "fast-export",
        "verify-pack",
        "unpack-objects",
        "name-rev",
        "describe",
        "range-diff",
        "rebase",
        "diff-index",
        "merge-tree",
        "pack-objects",
        "fmt-merge-msg",
        "unpack-file",
    }
)
