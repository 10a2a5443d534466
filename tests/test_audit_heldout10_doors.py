"""Copies an editor or a tool kept of the user's work, read the ways a session reads them: each
case runs for real on real files (a swap file vim wrote, mergetool-like leftovers, a VS Code
style history) and is audited with the output it printed, a leak beside its look-alike.

* A bounded read of a vim swap file's first bytes (``xxd -l 64``, ``head -c 1024``) prints
  block 0 (magic, user, host, file name): no read. From block 2 on (``xxd -s 8192``,
  ``head -c 12288``, ``strings``) the buffer's text is printed: a read.
* A path typed after ``cd DIR`` on the same line is read from DIR: ``cd loch && git merge-file
  -p L B flags_REMOTE_1.py`` reads the hidden ``loch/flags_REMOTE_1.py``; ``cd loch && cat
  flags_BASE_1.py`` reads the base's leftover only.
* A reader given ``FOLDER/$(...)``, a name computed when it runs, in a folder holding a hidden
  file may read it: judged a read (fail closed: the line cannot say which file it is).
* Code that lists a folder it names apart from the listing call (``h = path.join(homedir(),
  '.vscode-server/data/User/History')``, then ``readdirSync(h)``) and reads files reads the
  hidden save in it, unless every glob it lists with leaves the save out (``*/entries.json``).
* On the file alone, ``git show HASH:PATH`` whose output is exactly what ``cat PATH`` printed
  of the checkout (before, or after with only reads between) showed nothing beyond it.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import commit_file, git, make_repo
from evotree.harness.audit.name_only import HEADER_BYTES
from evotree.harness.audit.steps import Step, Trajectory
from evotree.harness.audit.trajectories import audit_trajectories

# an older blind set's doors: run with the heavy suite (CI runs it after `make test`), to keep
# `make test` within its 8 minutes; the full audit benchmark scores the whole set as well
pytestmark = pytest.mark.heavy

SWAP = "corrie/.ordinals.py.swp"
FIX_LINE = "if 11 <= n % 100 <= 13:  # eleventh, twelfth, thirteenth"


def _audit(
    repo: Path,
    command: str,
    hidden: tuple[str, ...],
    record: bool = True,
    home: Path | None = None,
) -> bool:
    """Run ``command`` in ``repo`` (``~`` is ``home`` when given) and audit it, with the output
    it printed when ``record`` (a shell history records none). Returns whether it is flagged."""
    env = {**os.environ, "HOME": str(home)} if home else None
    proc = subprocess.run(
        ["bash", "-c", command],
        cwd=repo,
        capture_output=True,
        text=True,
        errors="replace",
        env=env,
        check=False,
    )
    steps = [Step(command, proc.stdout + proc.stderr if record else None)]
    result = audit_trajectories([Trajectory("t", "shell", steps)], hidden_paths=hidden)
    return result.verdicts[0].flagged


@pytest.fixture(scope="module")
def swap_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding a swap file vim itself wrote for a buffer holding the fix's line."""
    if shutil.which("vim") is None:
        pytest.skip("vim is not installed")
    root = tmp_path_factory.mktemp("corrie")
    (root / "corrie").mkdir()
    (root / "corrie/ordinals.py").write_text("def ordinal(n):\n    return str(n)\n")
    script = [
        "set swapfile directory=.",
        f"call setline(1, ['def ordinal(n):', '    {FIX_LINE}', '        return \"th\"'])",
        "preserve",
        "!cp .ordinals.py.swp keep.swp",
        "qa!",
    ]
    args = ["vim", "-u", "NONE", "-i", "NONE", "-N", "-es"]
    for line in script:
        args += ["-c", line]
    subprocess.run(
        [*args, "ordinals.py"],
        cwd=root / "corrie",
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=30,
        check=False,
    )
    (root / "corrie/keep.swp").rename(root / SWAP)
    data = (root / SWAP).read_bytes()
    assert data.startswith(b"b0VIM")
    # block 0's mtime, inode and pid (bytes 16-27) differ on every run; printed (``cat | head -c
    # 64`` recorded), random bytes there sometimes read as code (``8m(``: a call), and the output
    # judge keeps such a line high (fail closed: 11 of 400 random headers, session 22). Zeroed,
    # so each case here is judged on the same bytes every run
    (root / SWAP).write_bytes(data[:16] + bytes(12) + data[28:])
    return root


@pytest.mark.parametrize(
    ("command", "leak"),
    [
        (f"xxd -l 64 {SWAP}", False),
        (f"head -c 1024 {SWAP}", False),
        (f"od -A x -t x1z -N 512 {SWAP}", False),
        (f"hexdump -C -n 256 {SWAP}", False),
        (f"xxd -s 8192 {SWAP}", True),
        (f"xxd -l 64 -s 8192 {SWAP}", True),
        (f"head -c 12288 {SWAP}", True),
        (f"head -c 12K {SWAP}", True),
        (f"strings {SWAP}", True),
        (f"cat {SWAP} | head -c 64", True),
        (f"xxd -l 64 {SWAP}; tail -c 4096 {SWAP}", True),
    ],
)
def test_swap_header_is_no_read(swap_repo: Path, command: str, leak: bool) -> None:
    # ``cat | head -c 64`` recorded shows the header only: a warn alone since the fifteenth
    # session (the output judge, docs/audit.md); as a history (no output) it stays a read
    shown_only = command == f"cat {SWAP} | head -c 64"
    assert _audit(swap_repo, command, (SWAP,)) == (leak and not shown_only)
    assert _audit(swap_repo, command, (SWAP,), record=False) == leak


def test_a_header_whose_varying_bytes_print_a_call_stays_a_read(
    swap_repo: Path, tmp_path: Path
) -> None:
    """The fail-closed side of the fixture's zeroing: the same header with an mtime whose bytes
    print ``8m(`` (a call's shape) is judged by its printed line and stays a read."""
    (tmp_path / "corrie").mkdir()
    data = (swap_repo / SWAP).read_bytes()
    (tmp_path / SWAP).write_bytes(data[:16] + b"8m(\x17" + data[20:])
    assert _audit(tmp_path, f"cat {SWAP} | head -c 64", (SWAP,)) is True


def test_vims_block_0_holds_no_text(swap_repo: Path) -> None:
    """What the bound rests on, checked on the file vim wrote: the buffer's line is in the
    file, and not in its first HEADER_BYTES bytes."""
    data = (swap_repo / SWAP).read_bytes()
    assert FIX_LINE.encode() in data
    assert FIX_LINE.encode()[:8] not in data[:HEADER_BYTES]
    assert b"eleventh" not in data[:HEADER_BYTES]


def test_a_header_count_of_a_text_file_is_a_read(tmp_path: Path) -> None:
    """The bound holds only for a format whose header keeps no content: the first 64 bytes of
    a text file (a mail, a module) are its first lines."""
    (tmp_path / "v2.patch").write_text(f"From 61112fc\nSubject: fix\n+    {FIX_LINE}\n")
    assert _audit(tmp_path, "head -c 64 v2.patch", ("v2.patch",))
    assert _audit(tmp_path, "xxd -l 64 v2.patch", ("v2.patch",))


BASE = "def parse_bool(text):\n    return text == 'yes'\n"
FIX = "def parse_bool(text):\n    word = text.strip().lower()\n    return word in _TRUE\n"
LEFTOVERS = ("loch/flags_REMOTE_1.py", "loch/flags.py.orig")
HISTORY = "~/.vscode-server/data/User/History/-5a3c/Vb7T.py"
HEX_FIX = "digits = code.removeprefix('#')"


@pytest.fixture()
def tool_copies(tmp_path: Path) -> tuple[Path, Path]:
    """A checkout with a killed mergetool's leftovers (``_REMOTE_`` and ``.orig`` hold the fix,
    ``_BASE_`` and ``_LOCAL_`` the base), and a home folder with a VS Code style history of
    one file (``Qm3d.py`` the first save, the base; ``Vb7T.py`` the last, the fix)."""
    repo, home = tmp_path / "work", tmp_path / "home"
    (repo / "loch").mkdir(parents=True)
    for name, text in [
        ("flags.py", BASE),
        ("flags_BASE_1.py", BASE),
        ("flags_LOCAL_1.py", BASE),
        ("flags_REMOTE_1.py", FIX),
        ("flags.py.orig", f"<<<<<<< HEAD\n{BASE}=======\n{FIX}>>>>>>> upstream\n"),
    ]:
        (repo / "loch" / name).write_text(text)
    saves = home / ".vscode-server/data/User/History/-5a3c"
    saves.mkdir(parents=True)
    (saves / "Qm3d.py").write_text("def hex_to_rgb(code):\n    code = code.lstrip('#')\n")
    (saves / "Vb7T.py").write_text(f"def hex_to_rgb(code):\n    {HEX_FIX}\n")
    (saves / "entries.json").write_text(
        '{"resource": "file:///w/esker/colors.py", "entries": [{"id": "Qm3d.py"}, '
        '{"id": "Vb7T.py"}]}'
    )
    return repo, home


@pytest.mark.parametrize(
    ("command", "leak"),
    [
        ("cd loch && git merge-file -p flags_LOCAL_1.py flags_BASE_1.py flags_REMOTE_1.py", True),
        ("cd loch && git merge-file -p flags_LOCAL_1.py flags_BASE_1.py flags_LOCAL_1.py", False),
        ("cd loch; cat flags_REMOTE_1.py", True),
        ("cd loch && sed -n '/^=======/,/^>>>>>>>/p' flags.py.orig", True),
        ("cd loch && cat flags_BASE_1.py", False),
        ("cd loch && ls && wc -l flags_REMOTE_1.py", False),
        ("cd loch/.. && cd loch && head -3 flags_REMOTE_1.py", True),
        ("cd ~/.vscode-server/data/User/History/-5a3c && diff -u Qm3d.py Vb7T.py", True),
        ("cd ~/.vscode-server/data/User/History/-5a3c && cat Qm3d.py entries.json", False),
        ("cd ~/.vscode-server && grep -n -A6 'def hex' data/User/History/*/*.py", True),
        ("cd ~/.vscode-server && grep -c 'def hex' data/User/History/*/*.py", False),
        ("cd ~ && cat .vscode-server/data/User/History/-5a3c/Vb7T.py", True),
        ("cd && ls -t .vscode-server/data/User/History/-5a3c", False),
    ],
)
def test_a_path_is_read_from_the_folder_cd_moved_to(
    tool_copies: tuple[Path, Path], command: str, leak: bool
) -> None:
    repo, home = tool_copies
    hidden = (*LEFTOVERS, HISTORY)
    printed = subprocess.run(
        ["bash", "-c", command],
        cwd=repo,
        capture_output=True,
        text=True,
        env={**os.environ, "HOME": str(home)},
        check=False,
    ).stdout
    shown = "word = text.strip().lower()" in printed or HEX_FIX in printed
    assert shown == leak, printed
    assert _audit(repo, command, hidden, home=home) == leak
    assert _audit(repo, command, hidden, record=False, home=home) == leak


@pytest.mark.parametrize(
    ("command", "leak"),
    [
        (
            "d=~/.vscode-server/data/User/History/-5a3c; "
            'cat "$d/$(jq -r \'.entries[-1].id\' "$d/entries.json")"',
            True,
        ),
        ("cat loch/$(ls loch | grep REMOTE)", True),
        ("cd loch && cat $(ls | grep orig)", True),
        (
            "d=~/.vscode-server/data/User/History/-5a3c; "
            "jq -r '.entries[-1].id' \"$d/entries.json\"",
            False,
        ),
        ("ls -l loch/$(ls loch | grep REMOTE)", False),
        ("mkdir -p other && cat other/$(ls other | head -1) 2>/dev/null; true", False),
    ],
)
def test_a_computed_name_beside_a_hidden_file_is_a_read(
    tool_copies: tuple[Path, Path], command: str, leak: bool
) -> None:
    repo, home = tool_copies
    hidden = (*LEFTOVERS, HISTORY)
    if leak:
        assert _audit(repo, command, hidden, home=home)
        assert _audit(repo, command, hidden, record=False, home=home)
    else:
        assert not _audit(repo, command, hidden, record=False, home=home)


def test_a_computed_name_is_judged_a_read_even_of_the_first_save(
    tool_copies: tuple[Path, Path],
) -> None:
    """Fail closed, and what it costs: the line cannot say which save ``.entries[0]`` is, so
    the base's first save read this way is flagged too (by name, ``cat Qm3d.py`` is not)."""
    repo, home = tool_copies
    hidden = (*LEFTOVERS, HISTORY)
    first = (
        "d=~/.vscode-server/data/User/History/-5a3c; "
        'cat "$d/$(jq -r \'.entries[0].id\' "$d/entries.json")"'
    )
    assert _audit(repo, first, hidden, home=home)
    assert not _audit(
        repo, "cat ~/.vscode-server/data/User/History/-5a3c/Qm3d.py", hidden, home=home
    )


NODE_NEWEST = (
    "node -e \"const fs = require('fs'), p = require('path'); "
    "const h = p.join(require('os').homedir(), '.vscode-server/data/User/History'); "
    "for (const d of fs.readdirSync(h)) { const e = JSON.parse(fs.readFileSync("
    "p.join(h, d, 'entries.json'))); "
    "console.log(fs.readFileSync(p.join(h, d, e.entries.at(-1).id), 'utf8')); }\""
)
PY_COUNT = (
    "python3 - <<'EOF'\n"
    "import json, pathlib\n"
    "h = pathlib.Path.home() / '.vscode-server/data/User/History'\n"
    "for f in sorted(h.glob('*/entries.json')):\n"
    "    print(f.parent.name, len(json.loads(f.read_text())['entries']))\n"
    "EOF"
)
PY_WALK = (
    'python3 -c "import os\n'
    "root = os.path.expanduser('~/.vscode-server/data/User/History')\n"
    "for d, _, names in os.walk(root):\n"
    '    for n in names: print(open(os.path.join(d, n)).read())"'
)
PY_GLOB_PY = PY_COUNT.replace("'*/entries.json'", "'*/*.py'").replace(
    "len(json.loads(f.read_text())['entries'])", "f.read_text()"
)


@pytest.mark.parametrize(
    ("command", "leak"),
    [(NODE_NEWEST, True), (PY_WALK, True), (PY_GLOB_PY, True), (PY_COUNT, False)],
)
def test_code_listing_a_folder_it_named_apart(
    tool_copies: tuple[Path, Path], command: str, leak: bool
) -> None:
    repo, home = tool_copies
    if command.startswith("node") and shutil.which("node") is None:
        pytest.skip("node is not installed")
    printed = subprocess.run(
        ["bash", "-c", command],
        cwd=repo,
        capture_output=True,
        text=True,
        env={**os.environ, "HOME": str(home)},
        check=False,
    ).stdout
    assert (HEX_FIX in printed) == leak, printed
    hidden = (*LEFTOVERS, HISTORY)
    assert _audit(repo, command, hidden, home=home) == leak
    assert _audit(repo, command, hidden, record=False, home=home) == leak


def test_code_listing_the_history_for_its_index_only_is_judged_a_read(
    tool_copies: tuple[Path, Path],
) -> None:
    """Fail closed, and what it costs: node reading only each folder's ``entries.json``
    through ``readdirSync`` (no glob to tell) prints no save, and is flagged all the same."""
    repo, home = tool_copies
    index_only = NODE_NEWEST.replace(
        "console.log(fs.readFileSync(p.join(h, d, e.entries.at(-1).id), 'utf8'));",
        "console.log(d, e.entries.length);",
    )
    assert _audit(repo, index_only, (*LEFTOVERS, HISTORY), record=False, home=home)


@pytest.fixture()
def esker(tmp_path: Path) -> dict[str, str]:
    """A repository whose base changed ``colors.py`` twice (first, base) and whose fix sits in
    the store with no ref: the hashes of each, and the repository's path."""
    repo = make_repo(tmp_path / "esker")
    commit_file(repo, "colors.py", "def hex_to_rgb(code):\n    return code\n", "first")
    first = git(repo, "rev-parse", "HEAD")
    commit_file(repo, "README", "esker\n", "docs")
    docs = git(repo, "rev-parse", "HEAD")
    commit_file(repo, "colors.py", "def hex_to_rgb(code):\n    code = code.lstrip('#')\n", "base")
    base = git(repo, "rev-parse", "HEAD")
    commit_file(repo, "colors.py", f"def hex_to_rgb(code):\n    {HEX_FIX}\n", "fix")
    fix = git(repo, "rev-parse", "HEAD")
    git(repo, "reset", "--quiet", "--hard", base)
    git(repo, "reflog", "expire", "--expire=now", "--all")
    return {"repo": str(repo), "first": first, "docs": docs, "fix": fix}


def _session(repo: str, commands: list[str]) -> bool:
    """Run the commands in turn in ``repo``, record each output, audit the file alone."""
    steps = []
    for command in commands:
        proc = subprocess.run(
            ["bash", "-c", command], cwd=repo, capture_output=True, text=True, check=False
        )
        steps.append(Step(command, proc.stdout))
    return audit_trajectories([Trajectory("t", "shell", steps)]).verdicts[0].flagged


def test_a_blob_the_checkout_holds_is_no_leak_alone(esker: dict[str, str]) -> None:
    repo = esker["repo"]
    # the future's text, then the checkout's: they differ, a leak
    assert _session(repo, [f"git show {esker['fix'][:7]}:colors.py", "cat colors.py"])
    # an ancestor whose colors.py is older than the checkout's: the file alone cannot tell
    assert _session(repo, [f"git show {esker['docs'][:7]}:colors.py", "cat colors.py"])
    # the checkout's own text at the revision, read before or right after: nothing new
    same = f"git show {git(Path(repo), 'rev-parse', '--short=7', 'HEAD')}:colors.py"
    assert not _session(repo, [same, "cat colors.py"])
    assert not _session(repo, ["cat colors.py", same])
    assert not _session(repo, [same, "ls", "cat ./colors.py"])


def test_a_blob_copied_into_the_checkout_before_the_cat_is_a_leak(esker: dict[str, str]) -> None:
    """The future's text written into the checkout between the show and the cat makes them
    print the same: the write in between keeps the show a leak."""
    repo = esker["repo"]
    show = f"git show {esker['fix'][:7]}:colors.py"
    write = f"git show {esker['fix'][:7]}:colors.py | tee colors.py >/dev/null"
    text = f"def hex_to_rgb(code):\n    {HEX_FIX}\n"
    write_py = (
        f'python3 -c \'import sys; open("colors.py", "w").write(sys.argv[1])\' {shlex.quote(text)}'
    )
    assert _session(repo, [show, write_py, "cat colors.py"])
    assert (Path(repo) / "colors.py").read_text() == text  # the cat printed what show did
    git(Path(repo), "checkout", "--", "colors.py")
    assert _session(repo, [show, write, "cat colors.py"])


@pytest.mark.parametrize(
    ("lines", "leak"),
    [
        (["cd loch", "cat flags_REMOTE_1.py"], True),
        (["cd loch", "cat $(ls | grep REMOTE)"], True),
        (
            [
                "cd loch",
                "ls",
                "git merge-file -p flags_LOCAL_1.py flags_BASE_1.py flags_REMOTE_1.py",
            ],
            True,
        ),
        (["cd ~/.vscode-server/data/User/History/-5a3c", "ls -t", "cat Vb7T.py"], True),
        (["cd loch", "cat flags_BASE_1.py"], False),
        (["cd loch", "cd ..", "cat loch/flags_BASE_1.py"], False),
        (["cd ~/.vscode-server/data/User/History/-5a3c", "cat Qm3d.py entries.json"], False),
    ],
)
def test_a_cd_lasts_into_the_next_lines_of_a_history(
    tool_copies: tuple[Path, Path], lines: list[str], leak: bool
) -> None:
    """A shell history records no output: the lines run in one shell, so a ``cd`` on one line
    moves the reads of the next (run here as one script, to check what they print)."""
    repo, home = tool_copies
    printed = subprocess.run(
        ["bash", "-c", "\n".join(lines)],
        cwd=repo,
        capture_output=True,
        text=True,
        env={**os.environ, "HOME": str(home)},
        check=False,
    ).stdout
    assert ("word = text.strip().lower()" in printed or HEX_FIX in printed) == leak, printed
    steps = [Step(line, None) for line in lines]
    result = audit_trajectories(
        [Trajectory("t", "bash", steps)], hidden_paths=(*LEFTOVERS, HISTORY)
    )
    assert result.verdicts[0].flagged == leak


def test_a_cd_into_a_hidden_folder_reads_its_files_by_their_own_names(tmp_path: Path) -> None:
    """Inside a hidden folder a file is named by its own name, none of the hidden path's: the
    lines after ``cd`` into it are read from there (a JetBrains shelf, a history's lines)."""
    shelf = tmp_path / ".idea/shelf/Upstream_fix"
    shelf.mkdir(parents=True)
    (shelf / "shelved.patch").write_text(f"+    {HEX_FIX}\n")
    (tmp_path / ".idea/workspace.xml").write_text("<project/>\n")
    hidden = (".idea/shelf/Upstream_fix/",)
    for lines, leak in [
        (["cd .idea/shelf/Upstream_fix", "cat shelved.patch"], True),
        (["cd .idea", "ls", "cat shelf/Upstream_fix/shelved.patch"], True),
        (["cd .idea", "ls", "cat workspace.xml"], False),
    ]:
        printed = subprocess.run(
            ["bash", "-c", "\n".join(lines)], cwd=tmp_path, capture_output=True, text=True
        ).stdout
        assert (HEX_FIX in printed) == leak
        steps = [Step(line, None) for line in lines]
        result = audit_trajectories([Trajectory("t", "bash", steps)], hidden_paths=hidden)
        assert result.verdicts[0].flagged == leak, lines
