"""Compiled Python bytecode as a door (``audit.hidden_data_read``): a cached ``.pyc`` that the
trajectory did not build itself may be compiled from a version of the module it was never given.

A checked-hash ``.pyc`` (``--invalidation-mode checked-hash``) of a *future* version of a module,
left in ``__pycache__`` by the image, is not loaded by Python for the base's source (the hash
differs), but every reader of the file sees the future: ``strings`` prints its names and
constants, ``marshal.loads`` + ``dis`` its code, ``SourcelessFileLoader`` runs it, a decompiler
prints its source. No line of the fix's source need be printed.

* :func:`bytecode_hits` — a command that reads a ``.pyc`` (a reader or decompiler given one, a
  ``find -name '*.pyc'`` whose results a reader gets, Python code that opens, unmarshals or
  loads one, ``python x.pyc``) is high: it reads bytecode the trajectory did not build, unless
  the trajectory did build it (:func:`builds_bytecode` on what ran before; the caller judges).
  Listing a cache (``ls __pycache__``), deleting one (``rm``, ``find -delete``) and
  ``python -B`` are no read.
* :func:`builds_bytecode` — does a command text (re)write the bytecode of the project's own
  modules? ``compileall``, ``py_compile``, a test run, Python importing or running a module that
  is not in the standard library; not with ``-B`` or ``PYTHONDONTWRITEBYTECODE``. Importing a
  module whose checked-hash ``.pyc`` does not match its source recompiles and rewrites it.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence

from evotree.harness.audit.hits import Hit
from evotree.harness.audit.lexer import SimpleCommand, _basename

__all__ = [
    "BYTECODE_READ",
    "CACHE_TAG",
    "builds_bytecode",
    "bytecode_hits",
    "is_cache_path",
    "lists_only",
    "xargs_of",
]

#: the rule of a read of a ``.pyc`` (the judge clears it after the trajectory's own build)
BYTECODE_READ = "reads compiled bytecode (.pyc) the trajectory did not build"
#: appended to a hidden-path hit whose hidden path is a bytecode cache
CACHE_TAG = "(a bytecode cache)"

#: a ``.pyc`` file, or a file (or glob) inside a ``__pycache__`` folder
_PYC = re.compile(r"\.pyc\b|(?:^|/)__pycache__/[^\s/]")
#: programs that print a file's bytes, strings or decompiled source
_READERS = frozenset(
    {
        "cat",
        "strings",
        "od",
        "xxd",
        "hexdump",
        "hd",
        "head",
        "tail",
        "less",
        "more",
        "base64",
        "base32",
        "bat",
        "tac",
        "nl",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "sed",
        "awk",
        "vim",
        "vi",
        "nano",
        "pycdc",
        "pycdas",
        "uncompyle6",
        "decompyle3",
        "pydisasm",
        "pycdump",
        "xdis",
    }
)
#: readers whose first word that is no option is a pattern, not a file
_PATTERN_FIRST = frozenset({"grep", "egrep", "fgrep", "rg", "sed", "awk"})
#: programs that list or delete files without reading them
_LISTERS = frozenset({"ls", "stat", "du", "tree", "file", "find", "rm", "touch", "wc"})
_PYTHON = re.compile(r"^python(?:\d+(?:\.\d+)?)?$")
#: what Python code does with a .pyc it names: open, unmarshal, load, run
_PY_READS = re.compile(
    r"\bopen\s*\(|read_bytes|SourcelessFileLoader|marshal|load_module|exec_module|runpy|"
    r"spec_from_file_location|FileIO|mmap|shutil\.copy"
)


_PYC_IN_CODE = re.compile(r"[^\s'\"(),]*(?:\.pyc|__pycache__/)[^\s'\"(),]*")


def is_cache_path(word: str) -> bool:
    """Does ``word`` name a bytecode cache (a ``__pycache__`` folder, a ``.pyc``, a glob of
    them)?"""
    return "__pycache__" in word or bool(re.search(r"\.pyc\b", word))


def _python_code(cmd: SimpleCommand) -> str | None:
    """The code a Python command runs when it is on its command line or a here-document."""
    argv = cmd.argv
    if "-c" in argv[1:]:
        k = argv.index("-c", 1)
        return argv[k + 1] if k + 1 < len(argv) else None
    return cmd.heredoc


def _find_reads_pyc(find: SimpleCommand) -> bool:
    """``find ... -name '*.pyc'`` (or a path in ``__pycache__``): its results are bytecode."""
    argv = find.argv
    return any(
        a in ("-name", "-iname", "-path", "-ipath", "-wholename", "-regex")
        and k + 1 < len(argv)
        and is_cache_path(argv[k + 1])
        for k, a in enumerate(argv)
    ) or any(is_cache_path(a) for a in argv[1:] if not a.startswith("-"))


def xargs_of(cmd: SimpleCommand, find: SimpleCommand) -> bool:
    """Is ``cmd`` xargs's run on find's results (the audit puts find's roots, with a trailing
    ``/``, in place of the listed files), not a filter of the listing itself (``| head``,
    ``| grep x``: names only)?"""
    roots = {w.rstrip("/") for w in find.argv[1:] if not w.startswith("-")}
    return any(w.endswith("/") and w.rstrip("/") in roots for w in cmd.argv[1:])


def _pyc_word(cmd: SimpleCommand) -> str | None:
    """The ``.pyc`` (or file in a cache) this command reads, or None."""
    argv = cmd.argv
    if not argv:
        return None
    name = _basename(argv[0])
    words = [*argv[1:], *(t for op, t in cmd.redirects if op in ("<", "<>"))]
    if name in _READERS:
        if name in _PATTERN_FIRST:  # the first word that is no option is the pattern
            plain = [w for w in argv[1:] if not w.startswith("-")]
            words = [*plain[1:], *words[len(argv) - 1 :]]
        word = next((w for w in words if _PYC.search(w)), None)
        if word:
            return word
        src = cmd.stdin
        hops = 0
        while src is not None and src.argv and hops < 4:
            first = _basename(src.argv[0])
            if first == "find" and _find_reads_pyc(src) and xargs_of(cmd, src):
                # ``find ... -name '*.pyc' | xargs strings``: the reader gets find's results
                return " ".join(src.argv)
            if first not in ("grep", "sort", "head", "tail", "uniq"):
                break
            src, hops = src.stdin, hops + 1
        return None
    if name == "find" and _find_reads_pyc(cmd):
        runs = [
            _basename(argv[k + 1])
            for k, a in enumerate(argv[:-1])
            if a in ("-exec", "-execdir", "-ok", "-okdir")
        ]
        if any(r in _READERS or _PYTHON.match(r) for r in runs):
            return " ".join(argv)
        return None
    if _PYTHON.match(name):
        if "-m" in argv[1:3] and any(m in argv for m in ("compileall", "py_compile")):
            return None
        script = next((w for w in argv[1:] if not w.startswith("-")), "")
        if script.endswith(".pyc"):
            return script  # python runs the bytecode itself
        code = _python_code(cmd)
        given = next((w for w in argv[1:] if w != code and _PYC.search(w)), None)
        if given:
            return given  # a .pyc handed to the code or script (``sys.argv[1]``)
        if code and _PYC.search(code) and _PY_READS.search(code):
            found = _PYC_IN_CODE.search(code)
            return found.group(0) if found else "a .pyc"
    return None


def bytecode_hits(name: str, cmd: SimpleCommand, joined: str) -> list[Hit]:
    """A read of a ``.pyc``: high, as a read of data the task did not give (module doc); the
    judge clears it when the trajectory built the bytecode itself before."""
    if name in _LISTERS and name != "find":
        return []
    if cmd.stdin is None and "pyc" not in joined:  # (``__pycache__`` holds "pyc" too)
        return []
    word = _pyc_word(cmd)
    if word is None:
        return []
    return [Hit("audit.hidden_data_read", "high", f"{BYTECODE_READ}: {word[:80]}", joined)]


def lists_only(cmd: SimpleCommand) -> bool:
    """Does this command only list, stat or delete what it names (``ls __pycache__``,
    ``find . -name '*.pyc' -delete``), reading no file's content?"""
    argv = cmd.argv
    if not argv:
        return False
    name = _basename(argv[0])
    if name == "find":
        return not any(a in ("-exec", "-execdir", "-ok", "-okdir") for a in argv) or all(
            _basename(argv[k + 1]) == "rm"
            for k, a in enumerate(argv[:-1])
            if a in ("-exec", "-execdir", "-ok", "-okdir")
        )
    return name in _LISTERS and name != "wc"


#: options of Python, or the environment, that stop it writing bytecode
_NO_WRITE = re.compile(r"\bpython[\d.]*\s+(?:-\w+\s+)*-[A-Za-z]*B\b|PYTHONDONTWRITEBYTECODE=\S")
_BUILD_TOOLS = re.compile(r"\b(?:compileall|py_compile|pytest|py\.test|tox|nox)\b")
_PY_MODULE = re.compile(r"\bpython[\d.]*\s+(?:-[A-Za-z]+\s+)*-m\s+([A-Za-z_][\w.]*)")
_PY_SCRIPT = re.compile(r"\bpython[\d.]*\s+(?:-[A-Za-z]+\s+)*(?!-)[\w./-]+\.py\b")
_IMPORT = re.compile(
    r"\b(?:from\s+([A-Za-z_]\w*)[\w.]*\s+import\b|import\s+([A-Za-z_][\w.]*(?:\s*,\s*"
    r"[A-Za-z_][\w.]*)*))"
)
#: modules run with ``-m`` that import nothing of the project's
_NOT_PROJECT = frozenset({"pip", "venv", "virtualenv", "ensurepip"})


def _not_stdlib(module: str) -> bool:
    top = module.split(".", 1)[0]
    return top not in sys.stdlib_module_names and top not in _NOT_PROJECT


def builds_bytecode(text: str) -> bool:
    """Does this command text (re)write the project's own bytecode (module doc)? Read clause by
    clause: ``pip install pytest`` installs, ``python -B`` writes nothing."""
    if "py" not in text:
        return False
    return any(_clause_builds(c) for c in _CLAUSES.split(text) if "py" in c)


_CLAUSES = re.compile(r"&&|\|\||[;|\n]")
_INSTALLS = re.compile(r"\b(?:pip\d*|uv|poetry|conda|apt|apt-get)\s+(?:\S+\s+)*?(?:install|add)\b")


def _clause_builds(text: str) -> bool:
    if _NO_WRITE.search(text) or _INSTALLS.search(text):
        return False
    if _BUILD_TOOLS.search(text):
        return True
    if "python" not in text:
        return False
    if any(_not_stdlib(m.group(1)) for m in _PY_MODULE.finditer(text)):
        return True
    if _PY_SCRIPT.search(text):
        return True
    for m in _IMPORT.finditer(text):
        names: Sequence[str] = (
            [m.group(1)] if m.group(1) else [n.strip() for n in m.group(2).split(",")]
        )
        if any(_not_stdlib(n.split(" ", 1)[0]) for n in names):
            return True
    return False
