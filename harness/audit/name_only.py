"""A name is not a read: commands that name a hidden path without printing its bytes.

The hidden-path rule (``audit.hidden_data_read``) judges what a command does with the hidden
file it names. Listing it (``ls``, ``tree``, ``find`` without a reader, ``unzip -l``,
``tar -t``, ``python -m zipfile -l``), asking git about it (``git check-ignore``,
``git status``, ``git ls-files``; ``git apply --stat`` of a patch: names and counts, not
applied; ``patch --dry-run -pN``: the files it would patch, see ``patch_tools``), measuring it (``du``, ``stat``, ``file``), hashing it
(``sha256sum``), testing it (``test -f``) or deleting it (``rm``, ``find -delete``) shows its
name, size or digest, never its content. So does counting it or checking it: ``wc -l`` (a
count option only), ``grep -c`` (a count of matching lines), ``gzip -t``/``-l`` (an integrity
check, sizes), ``jq FILTER`` whose filter ends in ``length`` or ``keys`` (a number, key names;
``-s`` slurps the inputs into one array first: ``jq -s length`` counts a recording's events),
``sqlite3 DB .schema`` (and ``.tables``, ``.indexes``: table definitions and names, no row).
Reading a wheel's or an egg's metadata members (``unzip -p x.whl pkg.dist-info/METADATA``) shows
a name and a version, not code. So does a bounded read of a format's header where the format
keeps no content there: the first ``HEADER_BYTES`` bytes or fewer of a vim swap file
(``xxd -l 64``, ``head -c 512``, ``od -N``, ``hexdump -n``, no offset) are block 0 (magic,
version, user, host, pid, file name); vim stores the buffer's text from block 2 on.

Everything else fails closed: a program not known to print only names is a read (``cat``,
``cp``, ``mv``, ``wc`` with no count option, ``grep -c -o``, ``jq '.cells'``, ``git add``,
``unzip`` extracting, ``unzip -p`` of a code member or of every member, ``head -c 4096`` or
``xxd -s 8192`` of a swap file, a header read of any other file, a redirection feeding the file
to any program).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from evotree.harness.audit.hidden_queries import SCHEMA_COMMAND, sqlite_files_and_args
from evotree.harness.audit.lexer import SimpleCommand, _basename
from evotree.harness.audit.patch_tools import patch_dry_run

__all__ = ["HEADER_BYTES", "names_only"]

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
#: gzip-family programs and their options that test an archive or list its sizes, no bytes
_GZIPS = frozenset({"gzip", "gunzip", "zcat", "pigz", "bzip2", "xz"})
_GZIP_CHECKS = frozenset({"--test", "--list", "--verbose"})
#: a jq filter whose last stage prints a number or key names, never a value
_JQ_COUNT = re.compile(r"(?:^|\|)\s*(?:length|keys|keys_unsorted|utf8bytelength)\s*$")


def _counts_only(name: str, argv: Sequence[str]) -> bool:
    """``wc -l|-c|-w|-m|-L``, ``grep -c``, ``gzip -t|-l`` and ``jq '… | length'`` print a
    count or a check of what they name. Any option that prints lines (``grep -o``, ``-A``),
    a second jq filter file (``-f``) or a raw jq option other than ``-r``/``-c`` is a read."""
    opts = [a for a in argv[1:] if a.startswith("-") and a != "-"]
    if name == "wc":
        shorts = "".join(o[1:] for o in opts if not o.startswith("--"))
        longs = [o for o in opts if o.startswith("--")]
        return (
            bool(opts)
            and set(shorts) <= set("lcwmL")
            and all(
                o in ("--lines", "--bytes", "--words", "--chars", "--max-line-length")
                for o in longs
            )
        )
    if name in ("grep", "egrep", "fgrep"):
        shorts = "".join(o[1:] for o in opts if not o.startswith("--"))
        longs = [o for o in opts if o.startswith("--")]
        return (
            ("c" in shorts or "--count" in longs)
            and set(shorts) <= set("ciEFGwxsh")
            and all(o in ("--count", "--ignore-case") for o in longs)
        )
    if name in _GZIPS:
        letters = "".join(o[1:] for o in opts if not o.startswith("--"))
        longs = [o for o in opts if o.startswith("--")]
        return (
            bool(set(letters) & set("tl") or set(longs) & _GZIP_CHECKS)
            and set(letters) <= set("tlv")
            and set(longs) <= _GZIP_CHECKS
        )
    if name == "jq":
        plain = [a for a in argv[1:] if not a.startswith("-")]
        return (
            bool(plain)
            and all(
                o in ("-r", "-c", "-M", "-s", "--raw-output", "--compact-output", "--slurp")
                for o in opts
            )
            and bool(_JQ_COUNT.search(plain[0]))
            and not re.search(r"\b(?:debug|stderr|input|inputs|error|halt_error)\b", plain[0])
        )
    return False


#: the most bytes from a vim swap file's start that hold no text of the buffer: block 0 (magic,
#: version, page size, times, inode, pid, user, host, file name) takes at least 1,032 of the
#: page (1,048 bytes or more); the buffer's lines are stored from block 2 on
HEADER_BYTES = 1024
#: a vim swap file's name: ``.NAME.swp`` and the later ``.swo`` … ``.swa``, ``.svz`` … ``.saa``
_VIM_SWAP = re.compile(r"^\.[^/]+\.(?:sw[a-p]|s[a-v][a-z])$")
#: per program: the options that bound the count of bytes read from the start
_LIMITS = {
    "xxd": ("-l", "-len", "--len"),
    "head": ("-c", "--bytes"),
    "od": ("-N", "--read-bytes"),
    "hexdump": ("-n",),
    "hd": ("-n",),
}
#: the options each program may also carry, none of which moves the start or adds input
_HEADER_SAFE = {
    "xxd": frozenset({"-g", "-c", "-cols", "-u", "-p", "-ps", "-e", "-C", "-g1", "-g2", "-g4"}),
    "head": frozenset({"-q", "--quiet", "--silent"}),
    "od": frozenset({"-A", "-t", "-c", "-x", "-a", "-b", "-d", "-o", "-v", "-An", "-Ax", "-Ad"}),
    "hexdump": frozenset({"-C", "-c", "-x", "-b", "-d", "-o", "-v"}),
    "hd": frozenset({"-C", "-c", "-x", "-b", "-d", "-o", "-v"}),
}

#: the options above that take a value (a column count, an address radix, a type)
_LAYOUT_VALUE = {"xxd": ("-g", "-c", "-cols"), "od": ("-A", "-t")}


def _header_only(name: str, argv: Sequence[str]) -> bool:
    """``xxd -l N`` / ``head -c N`` / ``od -N N`` / ``hexdump -n N`` of vim swap files only, N
    at most ``HEADER_BYTES`` and no offset (``-s``, ``-j``): the bytes of block 0, no text.
    Anything unknown on the line (another option, a unit suffix, a negative count) is a read."""
    if name not in _LIMITS:
        return False
    limit: int | None = None
    files: list[str] = []
    k = 1
    while k < len(argv):
        word = argv[k]
        opt, eq, val = word.partition("=")
        attached = next(
            (word[len(o) :] for o in _LIMITS[name] if len(o) == 2 and word.startswith(o)), ""
        )
        if opt in _LIMITS[name] or attached:
            if eq:
                value = val
            elif attached:
                value = attached
            else:
                k += 1
                value = argv[k] if k < len(argv) else ""
            if not value.isdigit():
                return False
            limit = int(value) if limit is None else min(limit, int(value))
        elif word.startswith("-") and word != "-":
            if word not in _HEADER_SAFE[name]:
                return False
            if word in _LAYOUT_VALUE.get(name, ()):
                k += 1  # its value is a layout, not a place in the file
        else:
            files.append(word)
        k += 1
    return (
        limit is not None
        and limit <= HEADER_BYTES
        and bool(files)
        and all(_VIM_SWAP.match(_basename(f)) for f in files)
    )


def _git_subcommand(argv: Sequence[str]) -> str:
    """The git subcommand after git's own options (``git -C dir status``: ``status``)."""
    k = 1
    while k < len(argv) and argv[k].startswith("-"):
        k += 2 if argv[k] in ("-C", "-c", "--git-dir", "--work-tree") else 1
    return argv[k] if k < len(argv) else ""


#: ``git apply`` options that turn applying off and print names, counts or a check
_APPLY_REPORTS = frozenset({"--stat", "--numstat", "--summary", "--check"})
#: ``git apply`` options that change which lines of the patch are taken or how they are matched,
#: none of which prints a line or applies (``-v``, ``--whitespace``, ``--apply`` are left out)
_APPLY_QUIET = re.compile(
    r"^(?:-z|-R|--reverse|--recount|--allow-empty|--unidiff-zero|--inaccurate-eof"
    r"|--ignore-space-change|--ignore-whitespace|--no-add|--cached|--index|-q|--quiet"
    r"|-p\d+|-C\d+|--directory=.+|--include=.+|--exclude=.+)$"
)


def _apply_reports_only(argv: Sequence[str]) -> bool:
    """``git apply --stat|--numstat|--summary|--check PATCH`` reads the patch without applying
    it and prints file names, counts and (``--check``) where it fails, never a line of it.
    git prints a line the patch adds when it checks whitespace (``--whitespace=warn``, or
    ``-c apply.whitespace=...``) and hunks with ``-v``; ``--apply`` applies as well: each of
    those, git's own ``-c``/``--config-env``, or any option not known here is a read."""
    k = 1
    while k < len(argv) and argv[k].startswith("-"):
        if argv[k] in ("-c", "--config-env") or argv[k].startswith("--config-env="):
            return False
        k += 2 if argv[k] in ("-C", "--git-dir", "--work-tree") else 1
    opts = [a for a in argv[k + 1 :] if a.startswith("-") and a != "-"]
    return bool(set(opts) & _APPLY_REPORTS) and all(
        o in _APPLY_REPORTS or _APPLY_QUIET.match(o) for o in opts
    )


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
    if _basename(argv[0]) == "patch":
        return patch_dry_run(cmd)  # fed by ``<`` as patch always is
    if any(op in ("<", "<>", "<<<") for op, _ in cmd.redirects):
        return False
    name = _basename(argv[0])
    if name in _NAMERS or _counts_only(name, argv) or _header_only(name, argv):
        return True
    if name == "sqlite3":
        parsed = sqlite_files_and_args(argv)
        return parsed is not None and all(SCHEMA_COMMAND.match(a) for a in parsed[1])
    if name == "find":
        runs = [argv[k + 1] for k, a in enumerate(argv[:-1]) if a in _FIND_ACTIONS]
        return all(_basename(r) in _NAMERS for r in runs) and not any(
            a in ("-fls", "-fprint", "-fprintf") for a in argv
        )
    if name == "git":
        sub = _git_subcommand(argv)
        return sub in _GIT_NAMERS or (sub == "apply" and _apply_reports_only(argv))
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
