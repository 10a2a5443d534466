"""What code run by an interpreter reads of the hidden data: the code a command line or a
here-document gives Python, node, perl or ruby (``interpreter_code``), files it reads by name or
through a folder it lists (``code_reads_hidden``), and hidden packages a Python run imports from
a folder put first on its path (``imports_from_hidden``). Part of the hidden-data rule
(``hidden_rules``), which calls these."""

from __future__ import annotations

import fnmatch
import posixpath
import re

from evotree.harness.audit.hits import RuleSet
from evotree.harness.audit.lexer import SimpleCommand, _basename

__all__ = [
    "LOADER_VARS",
    "code_reads_hidden",
    "imported_modules",
    "imports_from_hidden",
    "interpreter_code",
    "loads_from_hidden",
    "located_word",
]


def located_word(word: str, cwd: str) -> str:
    """``word`` read from the folder ``cwd``: a relative path joined to it (``..`` resolved);
    options, absolute paths, ``~`` and variables as typed (a name a substitution computes,
    ``$(ls | grep X)``, is taken as relative)."""
    if not word or cwd in ("", "."):
        return word
    if word.startswith(("-", "/", "~", "$")) and not word.startswith("$("):
        return word
    if word in (".", "./"):
        return cwd
    joined = posixpath.normpath(f"{cwd.rstrip('/')}/{word}")
    if joined.startswith(".."):
        return word
    return joined + ("/" if word.endswith("/") else "")


#: a folder code puts first on Python's path: ``sys.path.insert(0, "DIR")``, ``sys.path[0:0] =
#: ["DIR"]`` (or ``[:1]``), ``sys.path = ["DIR"] + sys.path`` (a literal folder; one the code
#: computes is not followed). ``append``/``extend``/``+=`` and ``site.addsitedir`` put it last,
#: after the folder the run starts in, whose own package is found first (heldout13's
#: ``sys.path.append('build/lib')`` beside the tracked package: a look-alike; the s21 red
#: team's B14, a name the root does not have, stays open: the file alone cannot tell them apart)
_SYS_PATH_ADD = re.compile(
    r"""sys\.path(?:\.insert\(\s*0\s*,|\[\s*0?\s*:\s*[01]?\s*\]\s*=\s*[\[(]|\s*=\s*[\[(])"""
    r"""\s*[rb]?(?:'([^'\n]+)'|"([^"\n]+)")"""
)
#: a statement putting a list first on ``sys.path`` (its rest up to the statement's end: every
#: literal of ``sys.path[:0] = ["x", "gansey"]``, the s22 imports red team's I5 in part)
_SYS_PATH_LIST = re.compile(
    r"(?:sys\.path(?:\.insert\(\s*0\s*,|\s*\[\s*0?\s*:\s*[01]?\s*\]\s*=|\s*=)"
    r"|(?<![\w.])path\.insert\(\s*0\s*,)([^\n;]*)"  # ``from sys import path``
)
#: a string literal's text, single or double quoted
_LITERALS = re.compile(r"'([^'\n]+)'|\"([^\"\n]+)\"")
#: code moving its own run to a literal folder (``os.chdir("gansey")``): ``-c`` code and code
#: from stdin have ``''`` first on the path, the folder at import time (the s21 red team's B12)
_CHDIR = re.compile(r"""\bchdir\(\s*[rb]?(?:'([^'\n]+)'|"([^"\n]+)")""")


def _runs_from_cwd(cmd: SimpleCommand) -> bool:
    """Does this Python run put the folder it runs in first on its path? ``-c``, ``-m``, ``-``
    and code from stdin or a here-document do; a script puts its own folder there; ``-I``,
    ``-P`` and ``PYTHONSAFEPATH`` leave the folder off."""
    argv = cmd.argv
    if any(n == "PYTHONSAFEPATH" for n, _ in cmd.assigns):
        return False
    for word in argv[1:]:
        if word in ("-c", "-m", "-"):
            return True
        if not word.startswith("-"):
            return False  # a script: its own folder is first
        if not word.startswith("--") and re.search(r"[IP]", word[1:]):
            return False
    return True  # code from stdin, a here-document or a prompt


#: Python's options that take the next word (or the rest of their own) as their value
_PYTHON_VALUED = frozenset("XW")


def _python_run(cmd: SimpleCommand) -> tuple[str | None, str] | None:
    """``(code, module)`` of a Python run that puts the folder it starts in first on its path
    (``-c CODE``, ``-m MODULE``, ``-`` or code from stdin), read as Python's own option parser
    does: short options fused (``-Ec CODE``, ``-um MOD``, ``-mMOD``, ``-cCODE``), ``-X``/``-W``
    and ``--check-hash-based-pycs`` taking a value (``-X importtime -c``). None for a script
    (its own folder is first) or with ``-I``, ``-P`` or ``PYTHONSAFEPATH`` (the folder is left
    off). ``code`` is None where it comes from stdin or a here-document."""
    argv = cmd.argv
    safe = any(n == "PYTHONSAFEPATH" for n, _ in cmd.assigns)
    k = 1
    while k < len(argv):
        word = argv[k]
        if word == "-":
            return None if safe else (None, "")
        if word.startswith("--"):
            k += 2 if word == "--check-hash-based-pycs" else 1
            continue
        if not word.startswith("-"):
            return None  # a script: its own folder is first
        j = 1
        while j < len(word):
            letter, rest = word[j], word[j + 1 :]
            if letter in "cm":
                value = rest or (argv[k + 1] if k + 1 < len(argv) else "")
                if safe:
                    return None
                return (value, "") if letter == "c" else (None, value)
            if letter in _PYTHON_VALUED:
                if not rest:
                    k += 1  # the value is the next word
                break
            if letter in "IP":
                safe = True
            j += 1
        k += 1
    return None if safe else (None, "")  # code from stdin or a here-document


def _script_word(cmd: SimpleCommand) -> str | None:
    """The script a Python command runs (its first word that is no option), or None."""
    k = 1
    while k < len(cmd.argv):
        word = cmd.argv[k]
        if word in ("-c", "-m", "-"):
            return None
        if word in ("-X", "-W", "--check-hash-based-pycs"):
            k += 2
            continue
        if not word.startswith("-"):
            return word
        k += 1
    return None


def _doctests_import_hidden(cmd: SimpleCommand, rules: RuleSet, cwd: str | None) -> str | None:
    """Why a pytest run with ``--doctest-modules`` runs a hidden module: it imports every
    ``.py`` file below the folders it is given (the folder it runs in when none is), so a
    hidden Python file or folder there is imported and its doctests run (the s21 audit red
    team's B15: ``python -m pytest --doctest-modules gansey`` ran an editor's copy of the fix)."""
    argv = list(cmd.argv)
    if argv and re.match(r"^python[\d.]*$", _basename(argv[0])):
        if argv[1:3] != ["-m", "pytest"]:
            return None
        argv = argv[2:]
    if not argv or _basename(argv[0]) not in ("pytest", "py.test", "pytest-3"):
        return None
    if "--doctest-modules" not in argv:
        return None
    paths = [a for a in argv[1:] if not a.startswith("-")]
    roots = [located_word(p, cwd) if cwd else p for p in paths] or [cwd or ""]
    for root in roots:
        clean = root.strip().rstrip("/")
        while clean.startswith("./"):
            clean = clean[2:]
        clean = "" if clean == "." else clean
        for path in rules.hidden_paths:
            hidden = path.strip().strip("/")
            below = not clean or hidden == clean or hidden.startswith(clean + "/")
            if below and (hidden.endswith(".py") or path.endswith("/") or "." not in hidden):
                return (
                    f"pytest --doctest-modules imports the hidden {hidden[:80]} below {root or '.'}"
                )
    return None


def imports_from_hidden(cmd: SimpleCommand, rules: RuleSet, cwd: str | None = None) -> str | None:
    """Why a Python run imports a hidden package: ``PYTHONPATH=DIR`` puts a folder first whose
    entry ``NAME`` (``NAME/`` or ``NAME.py``) is a hidden path, and the code (``-c``, a
    here-document) imports ``NAME`` or ``-m NAME`` runs it: the hidden code runs, its source
    or its answers printed. So does a folder the code itself puts first on the path
    (``sys.path.insert(0, "build/lib")``). ``cwd``: the folder a ``cd`` moved the run to,
    which Python puts first on its path for ``-c``, ``-m`` and code read from stdin (not with
    ``-I``/``-P``)."""
    collected = _doctests_import_hidden(cmd, rules, cwd)
    if collected:
        return collected
    if not cmd.argv or not re.match(r"^python[\d.]*$", _basename(cmd.argv[0])):
        return None
    code = interpreter_code(cmd) or next((t for op, t in cmd.redirects if op == "<<<"), "")
    argv = cmd.argv
    run = argv[argv.index("-m") + 1] if "-m" in argv[:-1] else ""
    started = _python_run(cmd)
    if started is not None:  # the folder the run starts in is first on the path
        given, module = started
        run_code = given or code
        modules = imported_modules(run_code, module)
        # each folder once, the code's imports read once (2,000 chdir calls took 13 s: I15)
        moved = dict.fromkeys(m.group(1) or m.group(2) for m in _CHDIR.finditer(run_code))
        for start in dict.fromkeys([cwd or "", *(located_word(d, cwd or ".") for d in moved)]):
            dotted = _dotted_import_of_hidden(start, run_code, module, rules, modules)
            if dotted:
                return dotted
    elif code and _script_word(cmd):  # a script the trajectory wrote: its own folder is first
        start = posixpath.dirname(located_word(_script_word(cmd) or "", cwd or "."))
        dotted = _dotted_import_of_hidden(start, code, "", rules)
        if dotted:
            return dotted
    added = [m.group(1) or m.group(2) for m in _SYS_PATH_ADD.finditer(code)]
    # every literal a path list takes, not its first alone (``extend(["x", "gansey"])``,
    # ``sys.path += [..]``, ``insert(1, ..)``: the s22 imports red team's I5)
    added += [
        a or b
        for m in _SYS_PATH_LIST.finditer(code)
        for a, b in _LITERALS.findall(m.group(1))
        if (a or b) not in added
    ]
    # ``gansey/x/..`` is ``gansey`` (the s22 imports red team's I12)
    added = [posixpath.normpath(a) if not a.startswith(("$", "~")) else a for a in added]
    if cwd is not None:
        added = [located_word(a, cwd) for a in added]
        dirs = ([cwd] if _runs_from_cwd(cmd) else []) + added
    else:
        dirs = [d for n, v in cmd.assigns if n == "PYTHONPATH" for d in v.split(":") if d]
        dirs += added
    if not dirs:
        return None
    for d in dirs:
        clean = d.strip().rstrip("/")
        while clean.startswith("./"):
            clean = clean[2:]
        for path in rules.hidden_paths:
            hidden = path.strip().strip("/")
            if not clean or not hidden.startswith(clean + "/"):
                continue
            name = hidden[len(clean) + 1 :].split("/", 1)[0].removesuffix(".py")
            pattern = rf"\b(?:import|from)\s+{re.escape(name)}\b"
            if re.search(pattern, code) or run.split(".", 1)[0] == name:
                where = (
                    f"run in {d[:60]}"
                    if cwd is not None
                    else f"sys.path gets {d[:60]}"
                    if d in added
                    else f"PYTHONPATH={d[:60]}"
                )
                return f"imports {name} from the hidden {hidden} ({where})"
    return None


#: ``import a.b, c as d`` (at a line's or a statement's start, after ``try:``, or inside a
#: string given to ``exec``)
_IMPORT_STATEMENT = re.compile(
    r"(?:^|[;:'\"(])[ \t]*import[ \t]+([\w.]+(?:[ \t]+as[ \t]+\w+)?"
    r"(?:[ \t]*,[ \t]*[\w.]+(?:[ \t]+as[ \t]+\w+)?)*)",
    re.M,
)
#: ``from a.b import x, y`` (``x`` may be a submodule: ``a/b/x.py``); relative imports skipped
_FROM_IMPORT = re.compile(
    r"(?:^|[;:'\"(])[ \t]*from[ \t]+(\w[\w.]*)[ \t]+import\b[ \t]*\(?((?:[\w \t,\n*]|#[^\n]*)+)\)?",
    re.M,
)
#: a module a call imports or finds: ``importlib.import_module("a.b")`` (``name=`` too; a
#: relative name with its package: ``import_module(".b", "a")``), ``__import__('a',
#: fromlist=[..])``, ``runpy.run_module``, ``importlib.util.find_spec``,
#: ``pkgutil.resolve_name("a.b:c")``
_IMPORT_CALL = re.compile(
    r"""(?:import_module|__import__|run_module|find_spec|resolve_name)\(\s*(?:name\s*=\s*)?"""
    r"""[rbuf]?['"]([\w.:]+)['"](?:\s*,\s*(?:package\s*=\s*)?[rbuf]?['"]([\w.]+)['"])?"""
    r"""(?:[^)]*?fromlist\s*=\s*[\[(]([^\])]*)[\])])?"""
)
#: string literals joined by ``+`` (``"gansey" + ".flycheck_yarn"``): read as one
_JOINED = re.compile(r"""(['"])([\w.:]*)\1\s*\+\s*[rbuf]?(['"])([\w.:]*)\3""")


def _normalized(code: str) -> str:
    """``code`` with what hides a dotted name from the patterns removed: line continuations,
    blanks around a dot (``gansey . flycheck_yarn``), literals joined by ``+``."""
    text = code.replace("\\\n", " ")
    text = re.sub(r"(\w)[ \t]*\.[ \t]*(?=\w)", r"\1.", text)
    for _ in range(8):
        joined = _JOINED.sub(lambda m: f"{m.group(1)}{m.group(2)}{m.group(4)}{m.group(1)}", text)
        if joined == text:
            break
        text = joined
    return text


def imported_modules(code: str, run: str = "") -> list[str]:
    """The absolute module names ``code`` imports (statements, also in an ``exec`` string, and
    ``importlib`` calls; a ``from a import x`` also as ``a.x``, which is a submodule when
    ``a/x.py`` exists) and the module ``-m`` runs (``run``), in the order met, each once."""
    code = _normalized(code)
    names: list[str] = []
    for m in _IMPORT_STATEMENT.finditer(code):
        names += [part.split()[0] for part in m.group(1).split(",") if part.split()]
    for m in _FROM_IMPORT.finditer(code):
        base = m.group(1)
        names.append(base)
        for part in re.sub(r"#[^\n]*", "", m.group(2)).replace("\n", " ").split(","):
            word = part.split()[0] if part.split() else ""
            if word and word != "*":
                names.append(f"{base}.{word}")
    for m in _IMPORT_CALL.finditer(code):
        name, package, fromlist = m.group(1).split(":", 1)[0], m.group(2), m.group(3)
        if name.startswith(".") and package:
            name = package + name
        names.append(name)
        for member in re.findall(r"""['"](\w+)['"]""", fromlist or ""):
            names.append(f"{name}.{member}")
    if run:
        names.append(run)
    out: list[str] = []
    for name in names:
        clean = name.strip(".")
        if clean and clean not in out:
            out.append(clean)
    return out


def _dotted_import_of_hidden(
    start: str, code: str, run: str, rules: RuleSet, modules: list[str] | None = None
) -> str | None:
    """Why a Python run that puts ``start`` (the checkout's root: ``""``) first on its path
    runs a hidden module: a module it imports, or a package on the way to it, is a hidden file
    or folder below ``start`` (``from gansey.flycheck_yarn import skeins`` with
    ``gansey/flycheck_yarn.py`` hidden: an editor's copy of the fixed module runs, whatever it
    prints). Nothing earlier on the path can shadow the folder the run starts in."""
    if not rules.hidden_paths:
        return None
    root = start.strip().rstrip("/")
    while root.startswith("./"):
        root = root[2:]
    if root in (".", "./"):
        root = ""
    for module in imported_modules(code, run) if modules is None else modules:
        parts = module.split(".")
        for depth in range(1, len(parts) + 1):
            stem = "/".join(parts[:depth])
            base = f"{root}/{stem}" if root else stem
            for candidate in (f"{base}.py", f"{base}/__init__.py", base):
                if rules.hidden_match(candidate):
                    return f"imports {module[:60]}: the hidden {candidate[:80]} runs"
    return None


#: environment variables naming folders or files a program loads code from (Python's import
#: path, home and startup file; the dynamic loader's libraries and preloads; the shell's
#: program path; node's, ruby's and perl's module paths)
LOADER_VARS = frozenset(
    {
        "PYTHONPATH",
        "PYTHONHOME",
        "PYTHONSTARTUP",
        "LD_LIBRARY_PATH",
        "LD_PRELOAD",
        "PATH",
        "NODE_PATH",
        "RUBYLIB",
        "PERL5LIB",
    }
)
#: commands the shell runs itself: they load no code from the environment's paths
_BUILTINS = frozenset(
    {
        "echo",
        "printf",
        "cd",
        "pushd",
        "popd",
        "pwd",
        "test",
        "[",
        "true",
        "false",
        ":",
        "unset",
        "type",
        "hash",
        "set",
        "read",
        "exit",
        "return",
        "alias",
        "command",
        "which",
        "export",
    }
)


def loads_from_hidden(cmd: SimpleCommand, rules: RuleSet, names_only: bool = False) -> str | None:
    """Why a program runs hidden code through its environment: a loader variable
    (:data:`LOADER_VARS`, set before the command, by ``env`` or an earlier ``export``) names a
    hidden path or a path inside one (``PYTHONPATH=__pypackages__/3.11/lib``): the program
    loads its code from there, a run of the hidden data as ``python hidden/x.py`` is. A shell
    builtin loads nothing; a command that only names files (``names_only``) loads nothing
    but a preloaded library; ``PATH`` matters only for a command word found on it."""
    argv = cmd.argv
    if not argv or not rules.hidden_paths:
        return None
    name = _basename(argv[0])
    if name in _BUILTINS:
        return None
    for var, value in cmd.assigns:
        if var not in LOADER_VARS or (names_only and not var.startswith("LD_")):
            continue
        if var == "PATH" and "/" in argv[0]:
            continue
        for part in re.split(r"[:\s]+", value):
            clean = part.strip().strip("'\"")
            if not clean or clean.startswith("$") or clean.startswith(".."):
                continue
            if rules.hidden_match(clean):
                return f"runs code from the hidden {clean[:80]} ({var} names it)"
    return None


_INTERPRETERS = re.compile(r"^(?:python(?:\d+(?:\.\d+)?)?|node|nodejs|deno|bun|perl|ruby|php)$")
#: calls in code that read a file's bytes (or an archive member's)
_CODE_READS = re.compile(
    r"\bopen\s*\(|read_text|read_bytes|\.read\s*\(|readFileSync|readFile\b|createReadStream|"
    r"ZipFile|tarfile|shutil\.copy|copyfile|\bslurp|File\.read|file_get_contents|<\$?\w*>|"
    # a database opened by its file: its rows are the file's content
    r"sqlite3\.connect\s*\(|\bshelve\.open\s*\(|\bdbm(?:\.\w+)?\.open\s*\(|"
    r"\bnew\s+(?:sqlite3\.)?Database\s*\(|"
    # code that runs a file by its path: running it reads it (its answers are its text's)
    r"\brunpy\.run_(?:path|module)\s*\(|\brun_path\s*\(|spec_from_file_location\s*\(|"
    r"SourceFileLoader\s*\(|SourcelessFileLoader\s*\(|\bload_source\s*\(|\bexecfile\s*\(|"
    r"\bexec\s*\(|\bcompile\s*\(|\brequire(?:_relative)?\s*\(|\bload\s*\(|\bdo\s+['\"]"
)
#: calls in code that list a folder, with the folder as a string literal (and a glob after it)
_CODE_LISTS = re.compile(
    r"(?:Path|listdir|readdirSync|readdir|scandir|walk|iterdir|opendir|glob\.glob|glob\.iglob|"
    r"Dir\.glob|Dir\.entries|globSync)\s*\(\s*[rbf]?['\"]([^'\"]*)['\"]\s*\)?"
    r"(?:\.r?glob\(\s*['\"]([^'\"]*)['\"])?"
)


def interpreter_code(cmd: SimpleCommand) -> str | None:
    """The code an interpreter runs from its command line (``-c``/``-e``) or a here-document."""
    argv = cmd.argv
    if not argv or not _INTERPRETERS.match(_basename(argv[0])):
        return None
    for flag in ("-c", "-e", "--eval", "-p", "--print", "-E", "-r"):
        if flag in argv[1:]:
            k = argv.index(flag, 1)
            return argv[k + 1] if k + 1 < len(argv) else None
    return cmd.heredoc


def code_reads_hidden(code: str, rules: RuleSet) -> str | None:
    """Why code that reads files reads a hidden one: it names the hidden path, or it lists a
    folder holding one (``Path('.idea').rglob('*.patch')``, ``readdirSync('pkg')``) with no
    glob, or a glob the hidden path matches. None when it reads no file, or none hidden."""
    if not _CODE_READS.search(code):
        return None
    if rules.hidden_match(code):
        hidden = next((w for w in re.split(r"['\"\s(),]", code) if rules.hidden_match(w)), "")
        return f"touches hidden data: code that reads files names {hidden[:80]}"
    for m in _CODE_LISTS.finditer(code):
        folder, pattern = m.group(1).strip(), m.group(2)
        if not pattern and "*" in folder:  # glob.glob('wheelhouse/*.whl')
            folder, pattern = folder.rsplit("/", 1) if "/" in folder else (".", folder)
        clean = folder.rstrip("/")
        while clean.startswith("./"):
            clean = clean[2:]
        for path in rules.hidden_paths:
            hidden = path.strip().strip("/")
            inside = clean in ("", ".") or hidden.startswith(clean + "/") or hidden == clean
            if not inside:
                continue
            rest = hidden[len(clean) + 1 :] if clean not in ("", ".") else hidden
            if pattern and not path.endswith("/"):
                if not fnmatch.fnmatchcase(rest.rsplit("/", 1)[-1], pattern.rsplit("/", 1)[-1]):
                    continue
            elif clean in ("", ".") and not pattern:
                continue  # the whole checkout listed: judged when the hidden path is named
            return f"reads files it lists in {folder or '.'}, and the hidden {hidden} with them"
    return _lists_named_folder(code, rules)


#: a call that lists a folder, whatever it is given (a name bound earlier, a joined path)
_LISTS_ANY = re.compile(
    r"\b(?:listdir|readdirSync|readdir|scandir|walk|iterdir|opendir|rglob|glob|globSync|"
    r"Dir\.entries|Dir\.children)\s*\("
)
#: a glob pattern code gives a listing (``h.glob('*/entries.json')``, ``glob.glob('x/*.py')``)
_CODE_GLOB = re.compile(r"\b(?:r?glob|iglob|globSync)\s*\(\s*[rbf]?['\"]([^'\"]*)['\"]")
#: code that starts from the user's home folder (``~`` of a hidden path)
_HOME_REF = re.compile(r"homedir\s*\(|Path\.home\s*\(|expanduser|\bHOME\b|getenv\(\s*['\"]HOME")
_LITERAL = re.compile(r"['\"]([^'\"\s]+)['\"]")


def _lists_named_folder(code: str, rules: RuleSet) -> str | None:
    """Why code reads a hidden file through a folder named apart from the call that lists it:
    a string names a folder holding the hidden file (from the home folder when the code starts
    there: ``path.join(os.homedir(), '.vscode-server/data/User/History')``), the code lists
    folders and reads files, and no glob it lists with leaves the file out
    (``h.glob('*/entries.json')`` reads only the index)."""
    if not _LISTS_ANY.search(code):
        return None
    home = bool(_HOME_REF.search(code))
    globs = _CODE_GLOB.findall(code)
    for literal in _LITERAL.findall(code):
        clean = literal.rstrip("/")
        while clean.startswith("./"):
            clean = clean[2:]
        if not clean or clean in (".", "..", "~") or re.search(r"[*?\[{}$]", clean):
            continue
        for path in rules.hidden_paths:
            hidden = path.strip().strip("/")
            spelled = [hidden] + ([hidden[2:]] if home and hidden.startswith("~/") else [])
            for h in spelled:
                if not h.startswith(clean + "/"):
                    continue
                rest = h[len(clean) + 1 :]
                if globs and not path.endswith("/"):
                    name = rest.rsplit("/", 1)[-1]
                    if not any(
                        fnmatch.fnmatchcase(rest, g) or fnmatch.fnmatchcase(name, g.rsplit("/")[-1])
                        for g in globs
                    ):
                        continue
                return (
                    f"reads files it lists in {clean[:60]}, and the hidden {hidden[:80]} with them"
                )
    return None
