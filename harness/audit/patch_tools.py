"""GNU patch's dry run and quilt's queue: which of their commands read a hidden patch.

* ``patch --dry-run -pN <PATCH`` checks the patch without changing a file and prints the
  files it would patch and each hunk's fate (``checking file x``, ``Hunk #1 FAILED at 3.``),
  never a line of the patch: it names the patch, as ``git apply --stat`` does. It prints the
  text leading up to a diff (a mail's ``From:``/``Subject:`` headers and description: the
  fix's subject) with ``-v``/``--verbose`` and whenever it cannot find the file to patch (a
  wrong ``-p``; with none, a patch of ``a/``/``b/`` paths is never found). So a dry run with
  no strip level, ``--verbose``, ``-o`` (the patched file written out), a here-document, or an
  option not known here is a read; one whose recorded output holds that header text is a read
  by its output (:func:`printed_patch_header`).
* quilt keeps a queue's patches in ``$QUILT_PATCHES`` (``patches/``): ``quilt push`` applies
  them, ``header`` prints a patch's header, ``fold``, ``diff``, ``refresh``, ``graph``,
  ``grep``, ``annotate`` and ``mail`` read them, without naming the patch's file
  (:func:`quilt_reads_hidden`). ``series``, ``applied``, ``unapplied``, ``top``, ``next``,
  ``previous`` and ``files`` print names.

Checked with GNU patch 2.7.6 and quilt 0.66 (``tests/test_audit_heldout14_doors.py``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from evotree.harness.audit.hits import Hit, RuleSet
from evotree.harness.audit.lexer import SimpleCommand, _basename

__all__ = ["patch_dry_run", "printed_patch_header", "quilt_hit", "quilt_reads_hidden"]

#: patch's options that print no line of the patch in a dry run and take no value
_QUIET_FLAGS = frozenset(
    {
        "-s",
        "--silent",
        "--quiet",
        "-f",
        "--force",
        "-t",
        "--batch",
        "-N",
        "--forward",
        "-R",
        "--reverse",
        "-E",
        "--remove-empty-files",
        "-l",
        "--ignore-whitespace",
        "-u",
        "--unified",
        "-c",
        "--context",
        "-n",
        "--normal",
        "--binary",
        "-Z",
        "--set-utc",
        "-T",
        "--set-time",
        "--no-backup-if-mismatch",
        "--posix",
        "--dry-run",
    }
)
#: patch's options that take a value, none of which prints a line of the patch in a dry run
_QUIET_VALUED = {"-p": "strip", "--strip": "strip", "-F": "", "--fuzz": "", "-d": ""}
_QUIET_VALUED |= {"--directory": "", "-r": "", "--reject-file": "", "--reject-format": ""}
_QUIET_VALUED |= {"-i": "input", "--input": "input"}


def patch_dry_run(cmd: SimpleCommand) -> bool:
    """Is this ``patch --dry-run`` with a strip level, fed its patch by ``<`` or ``-i``, with
    only options known to print no line of it (module doc)? Anything else is not."""
    argv = cmd.argv
    if not argv or _basename(argv[0]) != "patch" or cmd.heredoc is not None:
        return False
    if any("<" in op and op != "<" for op, _ in cmd.redirects):
        return False  # a here-string or a descriptor: the patch is not a file named here
    seen: set[str] = set()
    plain: list[str] = []
    k = 1
    while k < len(argv):
        word = argv[k]
        name, eq, _ = word.partition("=")
        if word in _QUIET_FLAGS:
            seen.add(word)
        elif word.startswith("--") and name in _QUIET_VALUED and eq:
            seen.add(_QUIET_VALUED[name])
        elif word in _QUIET_VALUED and k + 1 < len(argv):
            seen.add(_QUIET_VALUED[word])
            k += 1
        elif re.fullmatch(r"-[pFdri].+", word) and word[:2] in _QUIET_VALUED:
            seen.add(_QUIET_VALUED[word[:2]])
        elif word.startswith("-") and word != "-":
            return False  # -v, -o, --merge, -D, -e, a cluster: not known to be quiet
        else:
            plain.append(word)
        k += 1
    return "--dry-run" in seen and "strip" in seen and len(plain) <= 2


#: what patch prints before the header text of a diff it cannot place (or with --verbose)
_LEADING_TEXT = re.compile(r"^The text leading up to this was:$", re.M)


def printed_patch_header(command: str, output: str | None) -> bool:
    """Did a patch run print the text leading up to a diff (the mail header: the fix's subject
    and description)? Judged on the output of a command line that runs ``patch``."""
    return (
        output is not None
        and bool(re.search(r"(?:^|[\s;|&(/'\"`])patch\s", command))
        and bool(_LEADING_TEXT.search(output))
    )


#: quilt's commands that apply, print or read the queue's patches
_QUILT_READS = frozenset(
    {"push", "fold", "header", "diff", "refresh", "graph", "grep", "annotate", "mail"}
)


def _quilt_folder(cmd: SimpleCommand) -> str:
    """The queue's folder: ``QUILT_PATCHES=DIR`` before the command, else ``patches``."""
    folder = dict(cmd.assigns).get("QUILT_PATCHES", "patches")
    return folder.strip().removeprefix("./").rstrip("/") or "patches"


def quilt_reads_hidden(cmd: SimpleCommand, rules: RuleSet) -> str | None:
    """The finding's phrase when a quilt command that reads the queue's patches (module doc)
    runs on a queue folder holding a hidden path; None otherwise."""
    argv: Sequence[str] = cmd.argv
    if not argv or _basename(argv[0]) != "quilt":
        return None
    k = 1
    while k < len(argv) and argv[k].startswith("-"):
        k += 2 if argv[k] == "--quiltrc" else 1
    if k >= len(argv) or argv[k] not in _QUILT_READS:
        return None
    folder = _quilt_folder(cmd)
    for path in rules.hidden_paths:
        hidden = path.strip().removeprefix("./").rstrip("/")
        if hidden == folder or hidden.startswith(folder + "/"):
            return f"quilt {argv[k]} reads the queue in {folder}/, the hidden {hidden[:80]} in it"
    return None


def quilt_hit(cmd: SimpleCommand, rules: RuleSet, joined: str) -> list[Hit]:
    """The high hit of :func:`quilt_reads_hidden`, or none."""
    why = quilt_reads_hidden(cmd, rules)
    return [Hit("audit.hidden_data_read", "high", why, joined)] if why else []
