"""A part of a hidden container, judged by what the command can print of it.

A core dump, a release archive: one hidden file holding many parts, of which only some may be
the task's future. ``strings`` of a core cut by ``head -n K`` prints the core's first strings
(the program, its arguments, its environment); ``tar -xOf ARCHIVE MEMBER`` prints one member
(a release's ``PKG-INFO``). With the task repository the audit computes what such a command
prints from the checkout's file, read-only, as :func:`~evotree.harness.audit.hidden_queries.
read_prints` does for ``head``/``grep``, and the caller judges it by the provenance index.

Evaluated forms (anything else returns None: the caller keeps the read):

* ``strings`` with ``-a``/``--all`` and a minimum length (``-n K``, ``-nK``, ``-K``,
  ``--bytes=K``) of hidden files: binutils' default 7-bit scan of the whole file (runs of
  printable ASCII or tab, each printed on a line);
* ``tar`` extracting to stdout (``-x``/``--extract``/``--get`` with ``-O``/``--to-stdout``, old
  style ``xzOf`` too; ``-z``/``-j``/``-J``/``-a``, ``-v``) of a hidden archive, the members named
  (a folder's name: the members under it, as GNU tar matches), every member when none is; a
  wildcard, ``-C``, an option not known here: None;
* ``zcat``/``gunzip -c``/``gzip -dc``/``bzcat``/``xzcat`` of a hidden archive piped into such a
  ``tar`` reading stdin (``-f -`` or no ``-f``);
* each followed in its pipe only by ``head``/``tail`` with line options (``-n K``, ``-K``,
  ``--lines=K``), which cut what it printed. Another command after it (``grep``, ``cat``,
  ``sh``): None.
"""

from __future__ import annotations

import re
import tarfile
from collections.abc import Sequence
from pathlib import Path

from evotree.harness.audit.hidden_queries import line_count
from evotree.harness.audit.lexer import SimpleCommand, _basename

__all__ = ["inside_word", "part_prints", "piped_after"]

#: the largest hidden file or archive content evaluated (a larger one: the read is kept)
MAX_BYTES = 256 * 1024 * 1024
_DECOMPRESS = {"zcat": (), "gzcat": (), "bzcat": (), "xzcat": (), "gunzip": ("-c",)}
_TAR_FLAGS = frozenset("xOzjJavp")
_TAR_LONG = frozenset(
    {
        "--extract",
        "--get",
        "--to-stdout",
        "--gzip",
        "--gunzip",
        "--ungzip",
        "--bzip2",
        "--xz",
        "--auto-compress",
        "--verbose",
        "--no-same-owner",
        "--no-same-permissions",
    }
)


def inside_word(word: str) -> str | None:
    """``word`` as a path relative to the checkout (``./`` dropped), or None when it is empty,
    absolute, starts with ``~`` or ``$`` or climbs with ``..``: a word the audit does not
    resolve in the checkout."""
    rel = word.removeprefix("./")
    if not rel or rel.startswith(("/", "~", "$")) or ".." in rel.split("/"):
        return None
    return rel


def hidden_file(word: str, root: Path, hidden: Sequence[str]) -> Path | None:
    """The checkout's file a word names when it is a hidden path (or under a hidden folder)."""
    rel = inside_word(word)
    if rel is None:
        return None
    if re.search(r"[*?\[]", rel):
        return None
    path = (root / rel).resolve()
    if root not in path.parents or not path.is_file():
        return None
    inner = path.relative_to(root).as_posix()
    if any(inner == h or inner.startswith(h + "/") for h in hidden):
        return path
    return None


def _strings(argv: Sequence[str], root: Path, hidden: Sequence[str]) -> str | None:
    """What binutils ``strings`` prints of hidden files (options: ``-a``, a minimum length)."""
    least, files, k = 4, [], 1
    while k < len(argv):
        word = argv[k]
        value = None
        if word in ("-a", "--all", "-"):
            pass
        elif word.startswith("--bytes="):
            value = word.split("=", 1)[1]
        elif word == "-n" or word == "--bytes":
            k += 1
            value = argv[k] if k < len(argv) else ""
        elif re.fullmatch(r"-n\d+|-\d+", word):
            value = word.lstrip("-n")
        elif word.startswith("-"):
            return None
        else:
            files.append(word)
        if value is not None:
            if not value.isdigit() or int(value) < 1:
                return None
            least = int(value)
        k += 1
    paths = [hidden_file(w, root, hidden) for w in files]
    if not paths or any(p is None for p in paths):
        return None
    found = re.compile(rb"[\t\x20-\x7e]{%d,}" % least)
    out: list[str] = []
    for path in paths:
        assert path is not None
        if path.stat().st_size > MAX_BYTES:
            return None
        out += [m.group().decode("ascii") for m in found.finditer(path.read_bytes())]
    return "".join(line + "\n" for line in out)


def _tar_args(argv: Sequence[str]) -> tuple[str | None, list[str]] | None:
    """(archive or None for stdin, members) of a ``tar`` extracting to stdout; None else."""
    flags: set[str] = set()
    archive: str | None = None
    members: list[str] = []
    words = list(argv[1:])
    if words and not words[0].startswith("-"):
        words[0] = "-" + words[0]  # old style: ``tar xzOf A``
    k = 0
    while k < len(words):
        word = words[k]
        if word == "--":
            members += words[k + 1 :]
            break
        if word.startswith("--"):
            name, eq, value = word.partition("=")
            if name == "--file":
                if not eq:
                    k += 1
                    value = words[k] if k < len(words) else ""
                archive = value
            elif word in _TAR_LONG:
                flags.add({"--to-stdout": "O", "--extract": "x", "--get": "x"}.get(word, "z"))
            else:
                return None
        elif word.startswith("-") and len(word) > 1:
            j = 1
            while j < len(word):
                c = word[j]
                if c == "f":
                    archive = word[j + 1 :] or (words[k + 1] if k + 1 < len(words) else "")
                    if not word[j + 1 :]:
                        k += 1
                    break
                if c not in _TAR_FLAGS:
                    return None
                flags.add(c)
                j += 1
        else:
            members.append(word)
        k += 1
    if not {"x", "O"} <= flags or any(re.search(r"[*?\[]", m) for m in members):
        return None
    return (None if archive in (None, "-") else archive), members


def _members(path: Path, members: Sequence[str]) -> str | None:
    """The contents tar prints of the members named (all when none is) of an archive."""
    wanted = [m.removeprefix("./").rstrip("/") for m in members]
    out: list[str] = []
    total = 0
    try:
        with tarfile.open(path, "r:*") as tar:
            for info in tar:
                name = info.name.removeprefix("./").rstrip("/")
                if wanted and not any(name == w or name.startswith(w + "/") for w in wanted):
                    continue
                if not info.isfile():
                    continue
                total += info.size
                if total > MAX_BYTES:
                    return None
                data = tar.extractfile(info)
                if data is None:
                    continue
                out.append(data.read().decode("utf-8", "replace"))
    except (OSError, tarfile.TarError, EOFError, ValueError):
        return None
    return "".join(out)


def piped_after(cmds: Sequence[SimpleCommand], cmd: SimpleCommand) -> list[SimpleCommand]:
    """The commands ``cmd``'s output is piped through, in order (the parser's copies: the
    next one's ``stdin`` equals, not is, the one before it)."""
    chain: list[SimpleCommand] = []
    at = next((i for i, c in enumerate(cmds) if c is cmd), -1)
    last = cmd
    for nxt in cmds[at + 1 :] if at >= 0 else ():
        if nxt.stdin is None or nxt.stdin != last:
            break
        chain.append(nxt)
        last = nxt
    return chain


def _cut(text: str, filters: Sequence[SimpleCommand]) -> str | None:
    """What ``head``/``tail`` with line options after it leave of ``text``; None for another
    filter or a redirection."""
    for cmd in filters:
        name = _basename(cmd.argv[0]) if cmd.argv else ""
        parsed = line_count(cmd.argv) if name in ("head", "tail") else None
        if parsed is None or parsed[2] or cmd.redirects or cmd.heredoc is not None:
            return None
        count, plus, _ = parsed
        lines = text.splitlines()
        if name == "head":
            lines = lines[:count]
        elif plus:
            lines = lines[max(count - 1, 0) :]
        else:
            lines = lines[-abs(count) :] if count else []
        text = "".join(line + "\n" for line in lines)
    return text


def part_prints(
    cmds: Sequence[SimpleCommand],
    cmd: SimpleCommand,
    workdir: str | Path,
    hidden_paths: Sequence[str],
) -> str | None:
    """What ``cmd`` (one of the parsed ``cmds`` of a step) and the ``head``/``tail`` it is
    piped into print of a hidden container of ``workdir``; None when not evaluated here."""
    name = _basename(cmd.argv[0]) if cmd.argv else ""
    root = Path(workdir).resolve()
    hidden = [p.strip().strip("/").removeprefix("./") for p in hidden_paths if p.strip("/ ")]
    chain = piped_after(cmds, cmd)
    printed: str | None = None
    if name == "strings":
        printed = _strings(cmd.argv, root, hidden)
    elif name == "tar":
        parsed = _tar_args(cmd.argv)
        if parsed is None or parsed[0] is None:
            return None
        path = hidden_file(parsed[0], root, hidden)
        printed = _members(path, parsed[1]) if path else None
    elif name in _DECOMPRESS or (name == "gzip" and len(cmd.argv) > 1):
        words = [w for w in cmd.argv[1:] if not w.startswith("-")]
        opts = "".join(w[1:] for w in cmd.argv[1:] if re.fullmatch(r"-[a-z]+", w))
        need = "dc" if name == "gzip" else "".join(_DECOMPRESS[name])[1:]
        unknown = set(opts) - set("dcfq")
        if len(words) != 1 or unknown or not set(need) <= set(opts) or not chain:
            return None
        tar = bool(chain[0].argv) and _basename(chain[0].argv[0]) == "tar"
        parsed = _tar_args(chain[0].argv) if tar else None
        path = hidden_file(words[0], root, hidden)
        if parsed is None or parsed[0] is not None or path is None:
            return None
        printed, chain = _members(path, parsed[1]), chain[1:]
    if printed is None:
        return None
    return _cut(printed, chain)
