"""A name is not a read: commands that name a hidden path without printing its bytes.

The hidden-path rule (``audit.hidden_data_read``) judges what a command does with the hidden
file it names. Listing it (``ls``, ``tree``, ``find`` without a reader, ``unzip -l``,
``tar -t``, ``python -m zipfile -l``), asking git about it (``git check-ignore``,
``git status``, ``git ls-files``), measuring it (``du``, ``stat``, ``file``), hashing it
(``sha256sum``), testing it (``test -f``) or deleting it (``rm``, ``find -delete``) shows its
name, size or digest, never its content. Reading a wheel's or an egg's metadata members
(``unzip -p x.whl pkg.dist-info/METADATA``) shows a name and a version, not code.

Everything else fails closed: a program not known to print only names is a read (``cat``,
``cp``, ``mv``, ``wc``, ``git add``, ``unzip`` extracting, ``unzip -p`` of a code member or of
every member, a redirection feeding the file to any program).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from evotree.harness.audit.lexer import SimpleCommand, _basename

__all__ = ["names_only"]

#: programs that print a file's name, size, type, digest or nothing, never its bytes
_NAMERS = frozenset(
    {
        "ls",
        "tree",
        "stat",
        "du",
        "file",
        "rm",
        "rmdir",
        "touch",
        "test",
        "[",
        "realpath",
        "readlink",
        "basename",
        "dirname",
        "sha1sum",
        "sha224sum",
        "sha256sum",
        "sha384sum",
        "sha512sum",
        "shasum",
        "md5sum",
        "b2sum",
        "cksum",
        "sum",
        "zipinfo",
    }
)
#: git commands that say whether a path is ignored, tracked, changed or removed
_GIT_NAMERS = frozenset({"check-ignore", "status", "ls-files", "clean", "rm"})
#: find's actions that print or run something on what it finds
_FIND_ACTIONS = ("-exec", "-execdir", "-ok", "-okdir")
#: members of a built distribution that describe it (name, version, file list), not its code
_METADATA_MEMBER = re.compile(r"^[^/]*\.(?:dist-info|egg-info)/(?!.*\.pyw?$)[^/]+$|^EGG-INFO/")
_PYTHON = re.compile(r"^python(?:\d+(?:\.\d+)?)?$")


def _git_subcommand(argv: Sequence[str]) -> str:
    """The git subcommand after git's own options (``git -C dir status``: ``status``)."""
    k = 1
    while k < len(argv) and argv[k].startswith("-"):
        k += 2 if argv[k] in ("-C", "-c", "--git-dir", "--work-tree") else 1
    return argv[k] if k < len(argv) else ""


def _unzip_names_only(argv: Sequence[str]) -> bool:
    """``unzip -l/-v/-t/-Z`` lists or tests; ``unzip -p/-c ARCHIVE MEMBER...`` prints only the
    members named, so it is no read of code when every member named is metadata."""
    opts = [a for a in argv[1:] if a.startswith("-")]
    letters = "".join(o[1:] for o in opts if not o.startswith("--"))
    if any(c in letters for c in "lvtZ"):
        return True
    if not any(c in letters for c in "pc"):
        return False  # extraction writes the archive's files into reach
    plain = [a for a in argv[1:] if not a.startswith("-")]
    members = plain[1:]
    return bool(members) and all(_METADATA_MEMBER.match(m.lstrip("./")) for m in members)


def _tar_lists(argv: Sequence[str]) -> bool:
    """``tar -tf x`` / ``tar tf x`` / ``tar --list``: names only (``-O``/``-x`` read)."""
    first = argv[1] if len(argv) > 1 else ""
    letters = first.lstrip("-") if not first.startswith("--") else ""
    shorts = "".join(a[1:] for a in argv[1:] if a.startswith("-") and not a.startswith("--"))
    if any(a.startswith(("--to-command", "--use-compress-program", "-I")) for a in argv[1:]):
        return False  # runs a program on the archive or its members
    if "--list" in argv or "t" in letters or "t" in shorts:
        return not ("O" in letters + shorts or "--to-stdout" in argv or "x" in letters + shorts)
    return False


def names_only(cmd: SimpleCommand) -> bool:
    """Does this command only list, stat, hash, test or delete what it names (module doc)?
    A command fed by a here-document or an input redirection is judged a read."""
    argv = cmd.argv
    if not argv or cmd.heredoc is not None:
        return False
    if any(op in ("<", "<>", "<<<") for op, _ in cmd.redirects):
        return False
    name = _basename(argv[0])
    if name in _NAMERS:
        return True
    if name == "find":
        runs = [argv[k + 1] for k, a in enumerate(argv[:-1]) if a in _FIND_ACTIONS]
        return all(_basename(r) in _NAMERS for r in runs) and not any(
            a in ("-fls", "-fprint", "-fprintf") for a in argv
        )
    if name == "git":
        return _git_subcommand(argv) in _GIT_NAMERS
    if name == "unzip":
        return _unzip_names_only(argv)
    if name in ("tar", "bsdtar"):
        return _tar_lists(argv)
    if _PYTHON.match(name):
        # ``python -m zipfile -l x.whl`` / ``python -m tarfile -l x.tgz``: names only
        return (
            len(argv) >= 4
            and argv[1] == "-m"
            and argv[2] in ("zipfile", "tarfile")
            and argv[3] in ("-l", "--list")
        )
    return False
