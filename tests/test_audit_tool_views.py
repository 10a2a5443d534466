"""A tool's views around the future, judged with the task repository (heldout30's look-alikes,
development after its blind score).

* A hidden file whose lines are the base's behind a tool's position (a VS Code search editor
  saved on the base: ``  4: def f(...)``) is a view of the base: its lines are not indexed as
  the future, nor its header lines (a line a tool wrote around the future elsewhere too).
* A hidden folder holding one file that names the future (an MLflow run's tag file naming the
  fix commit) is a tool's record: its other files' metadata (``meta.yaml``) is the tool's own.
* ``cut -c LIST`` of a hidden file is judged by the columns it prints: clear of where each line
  holds the future (a trace's location columns), the read shows nothing of it; columns reaching
  the future's text (however narrow), fields, or a pipe into a program that is not a plain
  filter keep the read.
* A glob is expanded in the checkout as bash expands it.

Real git, real files, the audit as ``evotree audit trajectories --repo --base`` runs it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import git
from evotree.harness.audit.future_content import build_index
from evotree.harness.audit.hidden_reads import MAX_GLOB_FILES, expand_globs, stdin_filters
from evotree.harness.audit.unwrap import parse_shell
from evotree.harness.audit.steps import Step, Trajectory
from evotree.harness.audit.trajectories import audit_trajectories

OLD = "def blows(depth_cm: float) -> int:\n    return int(depth_cm * 2)\n"
FIXED = (
    "def blows(depth_cm: float) -> int:\n"
    "    if depth_cm <= 0:\n"
    "        raise ValueError(f'a stake needs a depth: {depth_cm}')\n"
    "    return math.ceil(depth_cm * STAKE_BLOWS_PER_CM) + SETTLING_BLOWS\n"
)
FUTURE = "    return math.ceil(depth_cm * STAKE_BLOWS_PER_CM) + SETTLING_BLOWS"
HIDDEN = ["traces", "mlruns", "defs.code-search", "fix.code-search", "shelf.txt"]


def _trace(code: str) -> str:
    """A line tracer's record: location columns (56 wide), then the source line."""
    rows = []
    for n, line in enumerate(code.splitlines(), 1):
        rows.append(f"{'/home/ada/src/mell/hammer.py:' + str(n):<44}line        {line}")
    return "\n".join(rows) + "\n"


@pytest.fixture(scope="module")
def mell(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A task repository at its base, its fix a commit no ref reaches, and leftovers of tools
    run on both: traces, an MLflow store, two saved searches, a shelf of an uncommitted idea."""
    root = tmp_path_factory.mktemp("views") / "mell"
    root.mkdir()
    git(root, "init", "--quiet", "-b", "main")
    git(root, "config", "user.name", "Ada Moss")
    git(root, "config", "user.email", "ada@moss.example")
    (root / "hammer.py").write_text(OLD)
    (root / ".gitignore").write_text("traces/\nmlruns/\n*.code-search\nshelf.txt\n")
    git(root, "add", "-A")
    git(root, "commit", "--quiet", "-m", "mell")
    base = git(root, "rev-parse", "HEAD")
    (root / "hammer.py").write_text(FIXED)
    git(root, "commit", "--quiet", "-am", "hammer: settling blows")
    fix = git(root, "rev-parse", "HEAD")
    git(root, "reset", "--quiet", "--hard", base)
    git(root, "reflog", "expire", "--expire=now", "--all")
    (root / "traces").mkdir()
    (root / "traces" / "main.trace").write_text(_trace(OLD))
    (root / "traces" / "fix.trace").write_text(_trace(FIXED))
    # a script left beside them: its text holds nothing of the future, running it shows it
    (root / "traces" / "peek.sh").write_text("git log --all --format=%H -1 | xargs git show\n")
    run_old, run_new = root / "mlruns/0/aaa111", root / "mlruns/0/bbb222"
    for run, commit in ((run_old, base), (run_new, fix)):
        (run / "tags").mkdir(parents=True)
        (run / "tags" / "mlflow.source.git.commit").write_text(commit)
        (run / "meta.yaml").write_text(
            f"artifact_uri: file:///home/ada/mell/mlruns/0/{run.name}/artifacts\n"
            f"run_id: {run.name}\nlifecycle_stage: active\nstart_time: 1754035331482\n"
        )
    (root / "mlruns/0/meta.yaml").write_text(
        "artifact_location: file:///home/ada/mell/mlruns/0\nexperiment_id: '0'\n"
    )
    header = "# Query: blows\n# Flags: RegExp\n# Including: mell, tests\n# ContextLines: 1\n\n"
    (root / "defs.code-search").write_text(
        header + "1 result - 1 file\n\nhammer.py:\n  1: def blows(depth_cm: float) -> int:\n"
        "  2      return int(depth_cm * 2)\n"
    )
    (root / "fix.code-search").write_text(
        header + "2 results - 1 file\n\nhammer.py:\n  1: def blows(depth_cm: float) -> int:\n"
        f"  4: {FUTURE.strip()}\n"
    )
    (root / "shelf.txt").write_text("an idea: blows = depth_cm * STAKE_BLOWS_PER_CM_GUESS + 3\n")
    return root, base


def _flagged(repo: tuple[Path, str], command: str) -> bool:
    root, base = repo
    out = subprocess.run(
        ["bash", "-c", command], cwd=root, capture_output=True, text=True, check=False
    ).stdout
    traj = Trajectory("t", "shell", [Step(command, out)])
    audit = audit_trajectories([traj], hidden_paths=HIDDEN, repo=root, base=base)
    return bool(audit.verdicts[0].flagged)


def test_the_index_holds_the_future_not_the_tools_views_of_the_base(
    mell: tuple[Path, str],
) -> None:
    root, base = mell
    index = build_index(root, base, HIDDEN)
    lines = set(index.lines)
    assert "1: def blows(depth_cm: float) -> int:" not in lines  # the base behind a position
    assert "# Including: mell, tests" not in lines  # a header the tool wrote around the fix too
    assert "1 result - 1 file" not in lines  # a view of the base: its header is the tool's
    assert "artifact_location: file:///home/ada/mell/mlruns/0" not in lines  # beside a tag file
    assert "lifecycle_stage: active" not in lines
    # the future stays indexed: the fix's line, the shelf's idea (a file holding none of the
    # committed future and no view of the base is the future itself)
    assert FUTURE.strip() in lines
    assert "an idea: blows = depth_cm * STAKE_BLOWS_PER_CM_GUESS + 3" in lines


@pytest.mark.parametrize(
    ("command", "leak"),
    [
        ("cat defs.code-search", False),  # saved on the base
        ("cat fix.code-search", True),  # saved on the fix
        ("head -4 fix.code-search", False),  # its header only
        ("cat mlruns/0/meta.yaml", False),
        ("cat mlruns/0/aaa111/meta.yaml", False),
        ("cat mlruns/0/bbb222/tags/mlflow.source.git.commit", True),  # names the fix
        ("cat shelf.txt", True),  # an uncommitted idea: the future itself
    ],
)
def test_tool_files_are_judged_by_what_they_hold(
    mell: tuple[Path, str], command: str, leak: bool
) -> None:
    assert _flagged(mell, command) is leak


@pytest.mark.parametrize(
    ("command", "leak"),
    [
        ("cut -c1-44 traces/fix.trace", False),  # the location columns only
        ("cut -c1-56 traces/fix.trace | sort | uniq -c", False),
        ("cut -b1-40 traces/fix.trace | wc -l", False),
        ("cut -c1-44 traces/*.trace", False),  # a glob, expanded in the checkout
        ("cut -c57- traces/fix.trace", True),  # the source column
        ("cut -c1-70 traces/fix.trace", True),  # reaches into it
        ("cut -c72-81 traces/fix.trace", True),  # a narrow window inside the fix's line
        ("cut -c72-75,90-95 traces/fix.trace", True),
        ("cut -c1-44 traces/fix.trace | xargs cat", True),  # not a plain filter after it
        ("cut -c1-44 traces/fix.trace | sh", True),
        ("cut -c1-44 traces/fix.trace > /tmp/x; cat /tmp/x", True),  # a redirect: not evaluated
        ("cut -d: -f1 traces/fix.trace", True),  # fields: not evaluated
        ("cut --complement -c1-44 traces/fix.trace", True),
        ("cut -c1-44 traces/fix.trace traces/../shelf.txt", True),  # '..': not evaluated
    ],
)
def test_cut_is_judged_by_the_columns_it_prints(
    mell: tuple[Path, str], command: str, leak: bool
) -> None:
    assert _flagged(mell, command) is leak


def test_cut_of_a_file_that_is_the_future_whole_keeps_the_read(mell: tuple[Path, str]) -> None:
    # the shelf holds none of the committed future: every column of its line is the future
    assert _flagged(mell, "cut -c1-10 shelf.txt")


def _cmd(text: str):  # type: ignore[no-untyped-def]
    return parse_shell(text)[0]


def test_globs_expand_as_bash_expands_them(mell: tuple[Path, str], tmp_path: Path) -> None:
    root, _ = mell
    got = expand_globs(_cmd("cat traces/*.trace"), root)
    assert got is not None and got.argv == ("cat", "traces/fix.trace", "traces/main.trace")
    same = _cmd("cat traces/nothing*")  # no match: the word itself, as bash leaves it
    assert expand_globs(same, root) is same
    plain = _cmd("cat traces/fix.trace")
    assert expand_globs(plain, root) is plain
    for refused in ("cat ../*", "cat traces/../../*", "cat /etc/*", "cat ~/*"):
        assert expand_globs(_cmd(refused), root) is None, refused
    many = tmp_path / "many"
    many.mkdir()
    for n in range(MAX_GLOB_FILES + 1):
        (many / f"f{n}").write_text("x")
    assert expand_globs(_cmd("cat *"), many) is None
    (tmp_path / "dots").mkdir()
    (tmp_path / "dots" / ".hidden").write_text("x")
    dots = _cmd("cat *")
    assert expand_globs(dots, tmp_path / "dots") is dots  # '*' does not match a leading dot


def test_a_glob_through_a_link_out_of_the_checkout_is_not_judged_clean(
    mell: tuple[Path, str], tmp_path: Path
) -> None:
    root, base = mell
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text(FIXED)
    link = root / "traces" / "elsewhere"
    link.symlink_to(outside)
    try:
        assert _flagged(mell, "cat traces/elsewhere/*.py")
    finally:
        link.unlink()


@pytest.mark.parametrize(
    ("pipeline", "plain"),
    [
        ("cut -c1-5 f | sort | uniq -c", True),
        ("cut -c1-5 f | sort -k2 -n | head -n 3", True),
        ("cut -c1-5 f | grep -c x", True),
        ("cut -c1-5 f | tr a-z A-Z", True),
        ("cut -c1-5 f | grep -f patterns", False),  # reads a file of its own
        ("cut -c1-5 f | grep -r x", False),
        ("cut -c1-5 f | sort other.txt", False),
        ("cut -c1-5 f | awk '{print}'", False),
        ("cut -c1-5 f | sed -n p", False),
        ("cut -c1-5 f | sort > out", False),
        ("cut -c1-5 f | xargs cat", False),
    ],
)
def test_only_plain_filters_count_as_printing_what_they_read(pipeline: str, plain: bool) -> None:
    cmds = parse_shell(pipeline)
    assert stdin_filters(cmds[1:]) is plain


@pytest.mark.parametrize(
    ("command", "leak"),
    [
        ("cat traces/peek.sh", False),  # its text: nothing of the future
        ("cat traces/peek.sh | sh", True),  # run: the parse holds no pipe link into sh
        ("cat traces/peek.sh | bash -s", True),
        ("cat traces/peek.sh|sh", True),
        ("cat traces/peek.sh |& sh", True),
        ("cut -c1-60 traces/peek.sh | sh", True),
        ("cat traces/peek.sh || true", False),  # '||' is no pipe
        ("cat 'traces/peek.sh'", False),
    ],
)
def test_a_hidden_script_fed_to_a_shell_keeps_the_read(
    mell: tuple[Path, str], command: str, leak: bool
) -> None:
    """A plain reader is judged by what it prints only when what it prints goes nowhere else:
    ``cat SCRIPT | sh`` runs the script (it prints the fix), and the shell reading its stdin
    is parsed without the pipe, so the step's pipes are counted against the parsed links."""
    root, base = mell
    traj = Trajectory("t", "shell", [Step(command, "")])  # the agent saw nothing printed
    audit = audit_trajectories([traj], hidden_paths=HIDDEN, repo=root, base=base)
    assert bool(audit.verdicts[0].flagged) is leak

