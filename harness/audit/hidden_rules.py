"""The hidden-data rule of the leak audit (``audit.hidden_data_read``): a word naming a hidden
path (exclusions are no read), and recursive reads (``grep -r``, ``find -exec cat``,
``find | xargs cat``, wildcards) that start in a folder holding one."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from evotree.harness.audit.bytecode_rules import CACHE_TAG, is_cache_path, lists_only
from evotree.harness.audit.hidden_code import (
    code_reads_hidden,
    imports_from_hidden,
    interpreter_code,
    loads_from_hidden,
    located_word,
)
from evotree.harness.audit.hits import GLOB_CHARS, Hit, RuleSet, part_match
from evotree.harness.audit.lexer import SimpleCommand, _basename
from evotree.harness.audit.name_only import names_only
from evotree.harness.audit.patch_tools import quilt_hit
from evotree.harness.audit.shells import SCRIPT, body_is_last, runs_body

__all__ = [
    "ROOT_SEARCH_TAG",
    "PRINTED_TAG",
    "hidden_printed_lines",
    "SEARCH_TAG",
    "folder_search_files",
    "cwd_near_hidden",
    "hidden_hits",
    "located_hits",
    "next_cwd",
    "root_search_files",
    "root_search_folders",
    "printed_hidden_files",
    "printed_hidden_lines",
    "unseen_search",
]

#: ends the warn of a recursive search whose matching lines may include a hidden path's
SEARCH_TAG = " (only the lines a search matches)"
#: the same, when the hidden path is a file the search reaches (not a folder the grader adds)
_FILE_SEARCH_TAG = " (only the lines a search matches, a hidden file among them)"
#: a ``grep -r`` from the checkout's root that reaches a hidden file: judged with the repository
#: how the rule of a search that printed lines of a hidden path opens
PRINTED_TAG = "prints lines of the hidden"
ROOT_SEARCH_TAG = " (a search from the checkout's root: its matching lines of the hidden file)"


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


def _reads_folder_holding(
    argv: Sequence[str], rules: RuleSet
) -> tuple[str, str, bool | None] | None:
    """(folder, hidden path, whole files) when a recursive read (``find DIR -exec cat``,
    ``grep -r P DIR``, ``rg``/``ag``, ``cat DIR/*/...``) starts in a folder below the checkout's
    root that holds a hidden path (``tests`` holds ``tests/hidden/``) and leaves it in (no
    exclusion, no ``-maxdepth`` above it): it reads the hidden files too, whole (cat, head)
    or only the lines a search matches (grep, rg: ``whole`` is False). The whole checkout
    (``.``) is every session's search root: a hidden path under it is judged when named, and
    a ``grep -r`` from it that reaches a hidden *file* is a search of the root (``whole`` is
    None), a warn the task repository judges (it knows which hidden files the checkout
    holds and what the pattern matches in them)."""
    if not argv:
        return None
    name = _basename(argv[0])
    skip = [argv[k] for k in _excluded(argv) if k < len(argv)]
    # grep matches --exclude globs to a file's own name and --exclude-dir globs to a folder's:
    # a path it is given there (``--exclude-dir=tests/hidden``) leaves nothing out
    grep_r = (
        name in ("grep", "egrep", "fgrep")
        and any(
            a in ("--recursive", "--dereference-recursive")
            or re.fullmatch(r"-[A-Za-z]*[rR][A-Za-z]*", a)
            for a in argv[1:]
        )
        and not any(a.startswith("--exclude-from") for a in argv[1:])
    )
    if not grep_r and any(
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
        found = _find_matches_hidden_file(argv, roots, depth, rules)
        if found:
            return found[0], found[1], whole
    elif name in ("grep", "egrep", "fgrep", "zgrep") and any(
        a in ("--recursive", "--dereference-recursive")
        or re.fullmatch(r"-[A-Za-z]*[rR][A-Za-z]*", a)
        for a in argv[1:]
    ):
        pos = [a for a in argv[1:] if not a.startswith("-")]
        has_e = any(a in ("-e", "-f") or a.startswith(("--regexp", "--file")) for a in argv[1:])
        roots = pos if has_e else pos[1:]
        root_files = root_search_files(argv, rules.hidden_paths) or root_search_folders(
            argv, rules.hidden_paths
        )
        if root_files:
            return ".", root_files[0], None
    elif name in ("rg", "ag", "ack"):
        roots = [a for a in argv[1:] if not a.startswith("-")][1:]
    elif name in _CONTENT_READERS:
        # a wildcard in a folder's place (``tests/*/x.py``, ``tests/**``) descends into it
        roots = [
            a.split("*", 1)[0]
            for a in argv[1:]
            if re.search(r"\*\*", a) or (re.search(r"\*[^/]*/", a) and _glob_reaches(a, rules))
        ]
    below = _hidden_below(roots, skip, depth, rules, argv if grep_r else None)
    return (*below, whole) if below else None


def _glob_reaches(glob: str, rules: RuleSet) -> bool:
    """Can a glob with a wildcard in a folder's place and no ``**`` (``roman/*/metadata.json``)
    match a hidden file, or a file inside a hidden folder? The shell matches it part by part,
    so each part must match the hidden path's part at the same depth: a hidden file needs as
    many parts, a hidden folder fewer (its files' names are unknown)."""
    parts = [p for p in glob.strip().split("/") if p not in ("", ".")]
    for path in rules.hidden_paths:
        hidden = [p for p in path.strip().split("/") if p not in ("", ".")]
        folder = path.endswith("/")
        if (len(parts) > len(hidden) if folder else len(parts) == len(hidden)) and all(
            part_match(h, g) for h, g in zip(hidden, parts)
        ):
            return True
    return False


def _hidden_below(
    roots: Sequence[str],
    skip: Sequence[str],
    depth: int | None,
    rules: RuleSet,
    grep: Sequence[str] | None = None,
) -> tuple[str, str] | None:
    """(folder, hidden path) for the first of ``roots`` (folders below the checkout's root) that
    holds a hidden path a walk to ``depth`` reaches and the ``skip`` globs leave in (``grep``:
    the line of a recursive grep, whose own rules say what it leaves out)."""
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
            if grep is not None:
                if (
                    _dirs_left_out(grep, hidden + "/x")
                    if path.endswith("/")
                    else _grep_skips(grep, hidden)
                ):
                    continue  # grep skips the file, or every file of the folder
            elif not path.endswith("/") and _glob_leaves_out(skip, hidden):
                continue  # ``--exclude='*,cover'``: a glob left out that the hidden path matches
            # a glob root (``sl*``, ``s?ides``) is the folder it names on the hidden path (the
            # s20 red team's A7): matched part by part, as the shell expands it
            at = _glob_ancestor(clean, hidden) if GLOB_CHARS.search(clean) else clean
            # a file under the hidden path lies one level below the path's own parts
            below = hidden[len(at) + 1 :].count("/") + 2
            if hidden.startswith(at + "/") and (depth is None or depth >= below):
                return clean, hidden
    return None


def _glob_ancestor(glob: str, hidden: str) -> str:
    """The folder on ``hidden``'s path the glob ``glob`` names part by part (``sl*`` names
    ``slides`` of ``slides/_minted-regatta``), or ``glob`` itself where it names none."""
    parts, hparts = glob.split("/"), hidden.split("/")
    if len(parts) < len(hparts) and all(part_match(h, g) for h, g in zip(hparts, parts)):
        return "/".join(hparts[: len(parts)])
    return glob


def root_search_files(argv: Sequence[str], hidden_paths: Sequence[str]) -> list[str]:
    """The hidden *files* a ``grep -r`` from the checkout's root (``.``, or no folder: GNU
    grep searches ``.``) reads: grep knows no ignore file, so an ignored ``tags`` or
    workspace is searched like the code. None are when the search starts elsewhere, for a
    hidden folder (:func:`root_search_folders`), or when every ``--include`` glob, an
    ``--exclude`` or an ``--exclude-dir`` of a folder on its path leaves the file out."""
    if not _root_grep(argv):
        return []
    found = []
    for path in hidden_paths:
        hidden = path.strip().removeprefix("./")
        if not hidden or hidden.endswith("/") or hidden.startswith(("/", "~", "..")):
            continue
        if _grep_skips(argv, hidden):
            continue
        found.append(hidden)
    return found


def root_search_folders(
    argv: Sequence[str], hidden_paths: Sequence[str], workdir: str | None = None
) -> list[str]:
    """The hidden *folders* a ``grep -r`` from the checkout's root reaches (an ``--exclude-dir``
    of the folder or of a folder above it leaves one out). Whether it read them depends on
    the checkout holding them (a grader's folder is added after the run): only a trusted
    task repository can say, so the rule is info until the search is re-run there. A path
    declared without a trailing ``/`` is a folder too when the checkout ``workdir`` holds it
    as one (PEP 582's ``__pypackages__``): its files are searched, not one file's lines.
    With no checkout to say, such a path is one when the grep's ``--include``/``--exclude``
    globs leave it out as a file (they match a folder's files, whose names are unknown)."""
    if not _root_grep(argv):
        return []
    found = []
    for path in hidden_paths:
        folder = path.strip().removeprefix("./").rstrip("/")
        if not folder or folder.startswith(("/", "~", "..")):
            continue
        if workdir is not None:
            held = (Path(workdir) / folder).is_dir()
        else:
            held = _grep_skips(argv, folder)  # not searched as a file: maybe a folder
        if not path.strip().endswith("/") and not held:
            continue
        if _dirs_left_out(argv, folder + "/x"):
            continue
        found.append(folder)
    return found


def _root_grep(argv: Sequence[str]) -> bool:
    """Is this a ``grep -r`` from the checkout's root (``.``, or no folder given)?"""
    if (
        not argv
        or _basename(argv[0]) not in ("grep", "egrep", "fgrep")
        or not any(
            a in ("--recursive", "--dereference-recursive")
            or re.fullmatch(r"-[A-Za-z]*[rR][A-Za-z]*", a)
            for a in argv[1:]
        )
    ):
        return False
    pos = [a for a in argv[1:] if not a.startswith("-")]
    has_e = any(a in ("-e", "-f") or a.startswith(("--regexp", "--file")) for a in argv[1:])
    roots = (pos if has_e else pos[1:]) or ["."]
    return any(r.strip().rstrip("/") in (".", "") for r in roots)


#: the most files of a hidden folder a search is re-run on (a larger folder: judged a read)
_FOLDER_FILES = 500


def folder_search_files(argv: Sequence[str], hidden: str, workdir: str) -> list[str] | None:
    """The files of the hidden folder ``hidden`` of ``workdir`` that a ``grep -r`` reaching it
    searches (its ``--include`` globs and excluded globs applied to each name), as paths
    relative to ``workdir``; [] when the folder is not in the checkout (the grader's, added
    after the run); None when it holds more than :data:`_FOLDER_FILES` files."""
    root = Path(workdir).resolve()
    top = (root / hidden.strip().strip("/").removeprefix("./")).resolve()
    if not top.is_dir() or root not in top.parents:
        return []
    files = []
    for path in sorted(top.rglob("*")):
        if not path.is_file() or path.is_symlink():
            continue
        rel = path.relative_to(root).as_posix()
        if _grep_skips(argv, rel):
            continue
        files.append(rel)
        if len(files) > _FOLDER_FILES:
            return None
    return files


#: find's tests of a file's name or path, whose pattern a hidden file's name can be matched to
_NAME_TESTS = {"-name": False, "-iname": False, "-path": True, "-ipath": True, "-wholename": True}


def _find_matches_hidden_file(
    argv: Sequence[str], roots: Sequence[str], depth: int | None, rules: RuleSet
) -> tuple[str, str] | None:
    """(root, hidden file) when a ``find`` that runs a reader starts at the checkout (or a
    folder above a hidden *file*) and its name tests would match that file: no name test at all
    (``-newer X -type f``: every file), or a ``-name``/``-path`` pattern the file's name or path
    matches (``-name '*.rej'``). Patterns left out (``-not -name``, ``-prune``) do not count."""
    skip = _excluded(argv)
    # ``-iname``/``-ipath`` ignore case: both sides folded (the s22 glob red team's G11)
    tests = [
        (argv[k + 1].lower() if a in ("-iname", "-ipath") else argv[k + 1], _NAME_TESTS[a])
        for k, a in enumerate(argv[:-1])
        if a in _NAME_TESTS and k + 1 not in skip
    ]
    folded = any(a in ("-iname", "-ipath") for a in argv)
    for root in roots or ["."]:
        clean = root.strip().rstrip("/")
        while clean.startswith("./"):
            clean = clean[2:]
        if clean.startswith(("/", "~", "$", "..")):
            continue
        for path in rules.hidden_paths:
            hidden = path.strip().strip("/")
            if path.endswith("/"):
                # a folder's files are unknown: a ``-path`` pattern that spells the folder and
                # any file name in it (``-path '*site-packages/holm/*.py'``) reaches them
                if _path_test_reaches_folder(clean, hidden, depth, tests):
                    return clean or ".", hidden
                continue
            if clean not in ("", ".") and not hidden.startswith(clean + "/"):
                continue
            rest = hidden if clean in ("", ".") else hidden[len(clean) + 1 :]
            if depth is not None and depth < rest.count("/") + 1:
                continue
            base = hidden.rsplit("/", 1)[-1]
            full = f"{clean or '.'}/{rest}"
            whole = hidden.lower() if folded else hidden
            if folded:
                full, base = full.lower(), base.lower()
            if not tests or any(
                fnmatch.fnmatch(full if is_path else base, pat)
                or (is_path and fnmatch.fnmatch(whole, pat))
                for pat, is_path in tests
            ):
                return clean or ".", hidden
    return None


def _grep_skips(argv: Sequence[str], rel: str) -> bool:
    """Does a recursive grep leave the file ``rel`` out? Of its ``--include`` and ``--exclude``
    globs matched against the file's own name (not its path: ``--exclude='.cache/*'`` skips
    nothing grep finds by recursion), the last one matching wins; when none matches, the file
    is searched unless the first of them is an ``--include``. Every file below a folder an
    ``--exclude-dir`` glob matches is skipped. Globs in an ``--exclude-from`` file are not known
    here: nothing is skipped for them."""
    name = rel.rsplit("/", 1)[-1]
    first: str | None = None
    last: str | None = None
    for k, word in enumerate(argv):
        opt, eq, value = word.partition("=")
        if opt not in ("--include", "--exclude"):
            continue
        glob = value if eq else argv[k + 1] if k + 1 < len(argv) else ""
        first = first or opt
        if glob and fnmatch.fnmatchcase(name, glob):
            last = opt
    if last == "--exclude" or (last is None and first == "--include"):
        return True
    return _dirs_left_out(argv, rel)


def _dirs_left_out(argv: Sequence[str], rel: str) -> bool:
    """Does a grep ``--exclude-dir=GLOB`` (or ``--exclude-dir GLOB``) skip a folder on the way
    to ``rel``? A recursive grep skips every subfolder whose own name matches the glob, so the
    file is not searched when any folder part of its path does (``.cache`` for
    ``.cache/pre-commit/patch``)."""
    globs = []
    for k, word in enumerate(argv):
        name, eq, value = word.partition("=")
        if name == "--exclude-dir":
            globs.append(value if eq else argv[k + 1] if k + 1 < len(argv) else "")
    folders = [p for p in rel.strip().removeprefix("./").split("/")[:-1] if p not in ("", ".")]
    return any(
        fnmatch.fnmatchcase(part, g.strip().rstrip("/")) for g in globs if g for part in folders
    )


def _glob_leaves_out(skip: Sequence[str], hidden: str) -> bool:
    """Does an excluded glob (``--exclude=*,cover``, ``-g '!*.ipynb'``) match the hidden file's
    name or its path? (Folders are left out by ``--exclude-dir``, named: judged before.)"""
    for word in skip:
        glob = word.split("=", 1)[1] if word.startswith("--") and "=" in word else word
        glob = glob.lstrip("!").strip().rstrip("/")
        name = hidden.rsplit("/", 1)[-1]
        if glob and (fnmatch.fnmatch(name, glob) or fnmatch.fnmatch(hidden, glob)):
            return True
    return False


def _path_test_reaches_folder(
    clean: str, hidden: str, depth: int | None, tests: Sequence[tuple[str, bool]]
) -> bool:
    """Does a ``find -path`` pattern whose last part is a glob match a file inside the hidden
    folder ``hidden``, for a find started at ``clean``? The file's name is unknown, so the
    glob's last part stands for it (``*.py`` for ``x.py``)."""
    if clean not in ("", ".") and not hidden.startswith(clean + "/"):
        return False
    rest = hidden if clean in ("", ".") else hidden[len(clean) + 1 :]
    if depth is not None and depth < rest.count("/") + 2:
        return False
    for pat, is_path in tests:
        last = pat.rsplit("/", 1)[-1]
        if not is_path or "/" not in pat or not re.search(r"[*?\[]", last):
            continue
        probe = re.sub(r"\[[^\]]*\]|[*?]", "x", last)
        full = f"{clean or '.'}/{rest}/{probe}"
        if fnmatch.fnmatch(full, pat) or fnmatch.fnmatch(f"{hidden}/{probe}", pat):
            return True
    return False


def _edits_in_place(argv: Sequence[str]) -> bool:
    """``sed -i ...``: an edit (judged as a write), not a read of what it is given."""
    return (
        bool(argv)
        and _basename(argv[0]) == "sed"
        and any(a == "-i" or a.startswith(("-i", "--in-place")) for a in argv[1:])
    )


def _filter_keeps(grep: Sequence[str], name: str) -> bool:
    """Would ``grep [-v] [-i] PATTERN`` in a pipe of names keep ``name``? Its pattern is tried
    on the name (a pattern Python cannot read keeps it: fail closed)."""
    opts = [a for a in grep[1:] if a.startswith("-") and a != "-"]
    plain = [a for a in grep[1:] if not a.startswith("-")]
    pattern = next((grep[k + 1] for k, a in enumerate(grep[:-1]) if a == "-e"), None)
    pattern = pattern if pattern is not None else (plain[0] if plain else "")
    letters = "".join(o[1:] for o in opts if not o.startswith("--"))
    invert = "v" in letters or "--invert-match" in opts
    flags = re.I if "i" in letters or "--ignore-case" in opts else 0
    if "F" in letters or "--fixed-strings" in opts:
        found = (pattern.lower() in name.lower()) if flags else (pattern in name)
    else:
        try:
            found = (
                re.search(pattern.replace("\\(", "(").replace("\\)", ")"), name, flags) is not None
            )
        except re.error:
            return True
    return found != invert


def _reads_what_ls_listed(cmd: SimpleCommand, rules: RuleSet) -> tuple[str, str, bool] | None:
    """``ls DIR | grep P | xargs -I{} cat DIR/{}`` (or ``ls | xargs cat`` in the folder): a
    reader run by xargs on names ``ls`` listed, when a hidden file is an entry of DIR and every
    filter on the way keeps its name."""
    if not cmd.argv or _basename(cmd.argv[0]) not in _CONTENT_READERS or _edits_in_place(cmd.argv):
        return None
    src, filters, hops = cmd.stdin, [], 0
    while src is not None and src.argv and _basename(src.argv[0]) in ("grep", "egrep", "sort"):
        if _basename(src.argv[0]) != "sort":
            filters.append(src.argv)
        src, hops = src.stdin, hops + 1
        if hops > 4:
            return None
    if src is None or not src.argv or _basename(src.argv[0]) != "ls":
        return None
    folders = [a for a in src.argv[1:] if not a.startswith("-")] or ["."]
    for folder in folders:
        clean = folder.rstrip("/")
        while clean.startswith("./"):
            clean = clean[2:]
        clean = clean or "."
        for path in rules.hidden_paths:
            if path.endswith("/"):
                continue  # a folder: a reader given its name reads nothing
            hidden = path.strip().strip("/")
            parent, _, name = hidden.rpartition("/")
            if (parent or ".") != clean:
                continue
            if clean != "." and not any(w.startswith(clean + "/") for w in cmd.argv[1:]):
                continue  # the names reach the reader relative to here, not DIR's
            if all(_filter_keeps(f, name) for f in filters):
                return clean, hidden, True
    return None


def _reads_what_find_found(
    cmd: SimpleCommand, rules: RuleSet
) -> tuple[str, str, bool | None] | None:
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


def _only_caches(word: str, rules: RuleSet) -> bool:
    """Is every hidden path ``word`` names a bytecode cache (``pkg/__pycache__/``, ``*.pyc``)?
    The trajectory may build such a cache itself; a judge's folder it cannot."""
    matched = [p for p in rules.hidden_paths if RuleSet(hidden_paths=(p,)).hidden_match(word)]
    return bool(matched) and all(is_cache_path(p) for p in matched)


#: programs that print, compare or copy the files they are given
_FILE_READERS = _CONTENT_READERS | {"diff", "cmp", "cp", "jq", "view", "vim", "vi", "nano"}
#: where a word's last part is computed when the command runs: ``$(...)``, backquotes, ``$VAR``
_COMPUTED = re.compile(r"\$\(|`|\$\{?[A-Za-z_]")


def _computed_name_beside(cmd: SimpleCommand, rules: RuleSet) -> str | None:
    """Why a reader given ``FOLDER/$(...)`` (a name computed when it runs: ``cat
    "$d/$(jq -r '.entries[-1].id' "$d/entries.json")"``) may read a hidden file: FOLDER holds
    one, and the name the command computes cannot be told from the line (fail closed)."""
    if not cmd.argv or _basename(cmd.argv[0]) not in _FILE_READERS or _edits_in_place(cmd.argv):
        return None
    files = [p.strip().strip("/") for p in rules.hidden_paths if not p.endswith("/")]
    for word in cmd.argv[1:]:
        m = _COMPUTED.search(word)
        if not m or word.startswith("-"):
            continue
        folder = word[: m.start()]
        if not folder.endswith("/") or "/" in word[m.start() :].split(")", 1)[-1]:
            continue  # the computed part is not the last part (``$(pwd)/x``, ``$D/sub/x``)
        folder = folder.rstrip("/")
        while folder.startswith("./"):
            folder = folder[2:]
        for hidden in files:
            parent = hidden.rsplit("/", 1)[0] if "/" in hidden else "."
            while parent.startswith("./"):
                parent = parent[2:]
            if folder == parent or folder.endswith("/" + parent):
                return (
                    f"reads a file whose name is computed when it runs, in {folder[:60]},"
                    f" which holds the hidden {hidden[:80]}"
                )
    return None


def _named_hidden(cmd: SimpleCommand, rules: RuleSet, joined: str) -> list[Hit] | None:
    """The hit of a word or redirection naming a hidden path: info when the command only names
    it, high when it reads it; [] when none is named; None when it is a shell's script (judged
    by the commands in it, not here)."""
    argv = cmd.argv
    skip = _excluded(argv)
    hidden = next(
        (
            w
            for k, w in [*enumerate(argv), *((-1, t) for _, t in cmd.redirects)]
            if k not in skip and (rules.hidden_match(w) or rules.bare_glob_match(w))
        ),
        None,
    )
    if hidden is None:
        return []
    cache = _only_caches(hidden, rules)
    outside = hidden.startswith("..") or "/../" in hidden
    if not outside and (names_only(cmd) or (cache and lists_only(cmd))):
        # a name is not a read: a listing, a digest, a deletion, git's ignore check; a
        # folder outside the checkout (``../judge``) is the grader's, its names too
        return [
            Hit(
                "audit.hidden_data_read",
                "info",
                f"names hidden data without reading it: {hidden[:80]}",
                joined,
            )
        ]
    if runs_body(argv, SCRIPT) and body_is_last(argv) and hidden == argv[-1]:
        return None  # the body parse_shell parsed: judged by its commands
    tag = ""
    if "*" in hidden:  # a glob: say which hidden path it reaches
        tag = "".join(
            f" (a glob reaching {p.strip('/')})"
            for p in rules.hidden_paths
            if RuleSet(hidden_paths=(p,)).hidden_match(hidden)
        )[:120]
    tag += f" {CACHE_TAG}" if cache else ""  # last: the judge reads it at the end
    return [
        Hit("audit.hidden_data_read", "high", f"touches hidden data: {hidden[:80]}{tag}", joined)
    ]


def hidden_hits(cmd: SimpleCommand, rules: RuleSet, joined: str, found: bool) -> list[Hit]:
    """A word or redirection naming a hidden path (high); failing that, and unless ``found``
    (the command already has a hidden-data hit), a recursive read that starts in a folder
    holding one (high when it reads whole files, warn for a search's matching lines)."""
    if not rules.hidden_paths:
        return []
    argv = cmd.argv
    hits: list[Hit] = []
    if rules.mentions_hidden(joined) or any(rules.bare_glob_match(w) for w in argv[1:]):
        named = _named_hidden(cmd, rules, joined)
        if named is None or named:
            return named or []
    if found:
        return []
    queue = quilt_hit(cmd, rules, joined)
    if queue:
        return queue
    imported = imports_from_hidden(cmd, rules)
    if imported:
        return [Hit("audit.hidden_data_read", "high", imported, joined)]
    loaded = loads_from_hidden(cmd, rules, names_only(cmd))
    if loaded:
        return [Hit("audit.hidden_data_read", "high", loaded, joined)]
    code = interpreter_code(cmd)
    if code is not None:
        read = code_reads_hidden(code, rules)
        if read:
            return [Hit("audit.hidden_data_read", "high", read, joined)]
    computed = _computed_name_beside(cmd, rules)
    if computed:
        return [Hit("audit.hidden_data_read", "high", computed, joined)]
    inside = (
        _reads_folder_holding(argv, rules)
        or _reads_what_find_found(cmd, rules)
        or (cmd.xargs and cmd.stdin is not None and _reads_what_ls_listed(cmd, rules))
    )
    if inside and names_only(cmd):
        # ``find DIR | xargs wc -l``, ``wc -c DIR/*``: counts of what it reaches, as a count of
        # a hidden file named outright is (a count that depends on the future is the replay's)
        folder, hidden, _ = inside
        return [
            Hit(
                "audit.hidden_data_read",
                "info",
                f"names hidden data without reading it: counts of {folder}, the hidden {hidden}"
                " with it",
                joined,
            )
        ]
    if inside:
        folder, hidden, whole = inside
        files = {p.strip().strip("/") for p in rules.hidden_paths if not p.endswith("/")}
        if whole is None:
            tag = ROOT_SEARCH_TAG
        else:
            tag = "" if whole else _FILE_SEARCH_TAG if hidden in files else SEARCH_TAG
        # a root search reaching only hidden folders: every session's ``grep -rn P .`` does
        # when a grader's folder is declared, so it is info until a checkout holding the
        # folder says what it printed there
        severity = "high" if whole else "info" if whole is None and hidden not in files else "warn"
        hits.append(
            Hit(
                "audit.hidden_data_read",
                severity,
                f"reads {folder} recursively, and the hidden {hidden} with it{tag}",
                joined,
            )
        )
    return hits


#: programs whose output prefixes each line printed with the file it came from, typed bare or
#: as a shell's script (``bash -lc 'grep -rn P dir'``: how Codex runs every command)
_SEARCH_WORD = re.compile(r"(?:^|[\s;|&(/'\"`])(?:grep|egrep|fgrep|zgrep|rg|ag|ack)\s")


def unseen_search(hit: Hit, output: str | None) -> Hit:
    """A recursive search into a folder holding a hidden *file* is a warn when its output is
    recorded (the lines it printed are judged by ``printed_hidden_lines``); with no output
    recorded (a shell history) what it printed is unknown, so it is judged a read: high. A
    hidden folder (the grader's ``tests/hidden/``, added after the run) stays a warn."""
    if output is not None or hit.severity != "warn" or not hit.rule.endswith(_FILE_SEARCH_TAG):
        return hit
    rule = (
        hit.rule[: -len(_FILE_SEARCH_TAG)] + " (no output recorded: the lines it printed unknown)"
    )
    return replace(hit, severity="high", rule=rule)


#: what opens a search's output line of a file: ``path:N:``, a context line's ``path-N-``, ``path:``
_PRINTED = r"(?::\d+:|-\d+-|:)(?!\d*$)(.*)$"


def _printed_pattern(path: str) -> re.Pattern[str] | None:
    """The output lines a search prints of the hidden path ``path`` or of a file under it
    (a folder is one whether it is declared with a trailing ``/`` or not: mutmut's
    ``mutants``); None for an empty path."""
    hidden = path.strip().strip("/")
    while hidden.startswith("./"):
        hidden = hidden[2:]
    if not hidden:
        return None
    below = r"/[^:\n]*" if path.endswith("/") else r"(?:/[^:\n]*)?"
    return re.compile(r"^(?:\./)?" + re.escape(hidden) + below + _PRINTED, re.M)


def hidden_printed_lines(output: str, hidden_paths: Sequence[str]) -> list[str]:
    """The text of every line a search's ``output`` printed of a hidden path (its file and
    line-number prefix cut): what a recorded search showed of hidden files, for the task
    repository's provenance index to judge."""
    found: list[str] = []
    for path in hidden_paths:
        pattern = _printed_pattern(path)
        if pattern is not None:
            found += [m.group(1) for m in pattern.finditer(output)]
    return found


def printed_hidden_files(output: str, hidden_paths: Sequence[str], root: Path) -> list[str]:
    """The files of the checkout ``root`` whose lines a search's ``output`` printed under a
    hidden path, each once, in the order printed: where the search's selection is re-done.
    A line's path is read up to the first ``:N:``/``-N-``/``:`` after which the path is a
    file (the longest one otherwise: not a file, the caller keeps the read)."""
    found: list[str] = []
    for path in hidden_paths:
        hidden = path.strip().strip("/")
        while hidden.startswith("./"):
            hidden = hidden[2:]
        if not hidden:
            continue
        below = r"/[^:\n]*" if path.endswith("/") else r"(?:/[^:\n]*)?"
        line = re.compile(r"^(?:\./)?(" + re.escape(hidden) + below + r")" + _PRINTED, re.M)
        cut = re.compile(r"(?::\d+:|-\d+-|:)")
        for m in line.finditer(output):
            text = m[0].removeprefix("./")
            name = m[1]
            for c in cut.finditer(text):
                if c.start() >= len(hidden) and (root / text[: c.start()]).is_file():
                    name = text[: c.start()]
                    break
            if name not in found:
                found.append(name)
    return found


def printed_hidden_lines(command: str, output: str | None, rules: RuleSet) -> list[Hit]:
    """A search whose recorded output prints lines of a hidden file (``./fallow/#grid.py#:6:
    ...``, ``path-3-`` context lines, a file under a hidden folder): high, judged by the
    output, whatever the command left in or out. A count (``path:3``) or a list of names
    (``grep -l``) prints no line."""
    if not rules.hidden_paths or not output or not _SEARCH_WORD.search(command):
        return []
    for path in rules.hidden_paths:
        pattern = _printed_pattern(path)
        for m in pattern.finditer(output) if pattern is not None else ():
            hidden = path.strip().strip("/").removeprefix("./")
            return [
                Hit(
                    "audit.hidden_data_read",
                    "high",
                    f"{PRINTED_TAG} {hidden} (the search's output names it)",
                    command[:200],
                    output=m.group(0)[:200],
                )
            ]
    return []


def next_cwd(cmd: SimpleCommand, cwd: str | None) -> str | None:
    """The folder the commands after ``cmd`` run in, within one command line: ``cd DIR`` and
    ``pushd DIR`` move to DIR (relative to the folder before), a bare ``cd`` to ``~``; ``cd -``
    and ``popd`` to a folder the line does not say (None: paths are taken as typed)."""
    argv = cmd.argv
    if not argv or argv[0] not in ("cd", "pushd", "popd"):
        return cwd
    words = [a for a in argv[1:] if a not in ("-L", "-P", "-e", "--")]
    if argv[0] == "popd" or words[:1] == ["-"] or len(words) > 1:
        return None
    if not words:
        return "~"
    return located_word(words[0], cwd) if cwd else words[0]


def cwd_near_hidden(cwd: str, rules: RuleSet) -> bool:
    """Is ``cwd`` a folder above a hidden path, or inside a hidden folder (where a file is named
    by its own name, none of the hidden path's)? A folder the line cannot place (absolute, a
    variable) counts as near."""
    clean = cwd.strip().rstrip("/")
    while clean.startswith("./"):
        clean = clean[2:]
    if clean in ("", "."):
        return False
    if clean.startswith("/") or "$" in clean:
        return True
    for path in rules.hidden_paths:
        hidden = path.strip().strip("/")
        while hidden.startswith("./"):
            hidden = hidden[2:]
        if hidden.startswith(clean + "/") or hidden == clean:
            return True
        if path.endswith("/") and clean.startswith(hidden + "/"):
            return True
    return False


def _located(cmd: SimpleCommand, cwd: str) -> SimpleCommand:
    """``cmd`` with every relative path word (and redirection, and the commands a pipe feeds
    it from) read from ``cwd``."""
    return SimpleCommand(
        (cmd.argv[0], *(located_word(w, cwd) for w in cmd.argv[1:])) if cmd.argv else (),
        tuple((op, located_word(t, cwd)) for op, t in cmd.redirects),
        cmd.heredoc,
        cmd.assigns,
        stdin=_located(cmd.stdin, cwd) if cmd.stdin is not None else None,
        grouped=cmd.grouped,
        xargs=cmd.xargs,
    )


def located_hits(cmd: SimpleCommand, cwd: str | None, rules: RuleSet, hits: list[Hit]) -> list[Hit]:
    """The hidden-data hits of ``cmd`` run after ``cd cwd`` on the same line
    (``cd loch && git merge-file -p L B flags_REMOTE_1.py``, ``cd ~/.vscode-server && grep -A6
    P data/User/History/*/*.py``): its relative paths read from there, judged as if typed whole.
    Added to ``hits`` only when the paths as typed had no hidden-data hit of their own."""
    if not cwd or not rules.hidden_paths or not cmd.argv:
        return hits
    if not cwd.startswith(("/", "~", "$")) and cwd.strip("./"):
        # ``cd build && grep -r P .`` searches build, not the checkout's root: judged below
        hits = [h for h in hits if not h.rule.endswith(ROOT_SEARCH_TAG)]
    if any(h.code == "audit.hidden_data_read" for h in hits):
        return hits
    imported = imports_from_hidden(cmd, rules, cwd)
    if imported:
        joined = " ".join(cmd.argv)[:200]
        return hits + [Hit("audit.hidden_data_read", "high", imported, joined)]
    moved = _located(cmd, cwd)
    if moved == cmd:
        return hits
    joined = " ".join(moved.argv) + "".join(f" {op}{t}" for op, t in moved.redirects)
    found = hidden_hits(moved, rules, joined, False)
    return hits + [
        replace(h, rule=f"run in {cwd[:60]}: {h.rule}", command=" ".join(cmd.argv)[:200])
        for h in found
    ]
