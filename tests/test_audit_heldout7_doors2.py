"""More doors of the seventh held-out set (a development set), each a leak beside its look-alike,
outputs taken from real programs on a real checkout:

* a checked-hash ``.pyc`` of a future version of a module, left in ``__pycache__``: any read of
  bytecode the trajectory did not build is high, with or without a hidden path naming the
  cache; the trajectory's own ``compileall`` or import first makes it its own; listing or
  deleting a cache is no read; with the repository, a hash-based ``.pyc`` compiled from a
  future blob is future content for whatever touches it;
* the pack folder: its names and counts are a warn, what prints its object ids is high;
* names the trajectory's own git outputs put at or below HEAD are cleared on the file alone
  (fail closed otherwise); ``git cherry`` with ``+`` lines only; commit objects judged by
  their hash; a tag whose message may carry the fix is never cleared that way;
* a Python file the trajectory wrote, loaded by ``import`` / ``spec_from_file_location`` /
  ``runpy``; a read piped into ``git apply``; an index read when the outputs show the index
  held changes the trajectory did not stage.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git, make_repo
from evotree.harness.audit.steps import Step, Trajectory
from evotree.harness.audit.trajectories import audit_trajectories

# an older blind set's doors: run with the heavy suite (CI runs it after `make test`), to keep
# `make test` within its 8 minutes; the full audit benchmark scores the whole set as well
pytestmark = pytest.mark.heavy

PY = sys.executable


def _run(cwd: Path, command: str) -> str:
    proc = subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True)
    return proc.stdout + proc.stderr


def _audit(
    *commands: str,
    outputs: tuple[str | None, ...] = (),
    repo: dict[str, str] | None = None,
    hidden: tuple[str, ...] = (),
) -> tuple[bool, list[str]]:
    steps = [Step(c, outputs[k] if k < len(outputs) else None) for k, c in enumerate(commands)]
    extra = {"repo": repo["repo"], "base": repo["base"]} if repo else {}
    result = audit_trajectories([Trajectory("t", "shell", steps)], hidden_paths=hidden, **extra)
    verdict = result.verdicts[0]
    return verdict.flagged, [h.rule for h in verdict.hits if h.severity in ("high", "critical")]


# ------------------------------------------------------------------------ bytecode cache
_BASE_SRC = '"""Rounding."""\n\n\ndef round_half(x, digits=0):\n    return round(x, digits)\n'
_FIX_SRC = (
    '"""Rounding."""\n\nfrom decimal import ROUND_HALF_UP, Decimal\n\n\n'
    "def round_half(x, digits=0):\n"
    "    step = Decimal(1).scaleb(-digits)\n"
    "    return float(Decimal(str(x)).quantize(step, rounding=ROUND_HALF_UP))\n"
)


@pytest.fixture(scope="module")
def cached(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A checkout at the base whose ``__pycache__`` holds a checked-hash ``.pyc`` compiled from
    the fix (a commit beyond the base, reachable by no reference)."""
    repo = make_repo(tmp_path_factory.mktemp("bytecode") / "sedge")
    (repo / "pkg").mkdir()
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "pkg" / "rounding.py").write_text(_BASE_SRC)
    (repo / ".gitignore").write_text("__pycache__/\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "rounding")
    base = git(repo, "rev-parse", "HEAD")
    (repo / "pkg" / "rounding.py").write_text(_FIX_SRC)
    git(repo, "commit", "-qam", "round_half: halves away from zero")
    subprocess.run(
        [PY, "-m", "compileall", "-q", "--invalidation-mode", "checked-hash", "pkg"],
        cwd=repo,
        check=True,
    )
    git(repo, "reset", "-q", "--hard", base)
    git(repo, "reflog", "expire", "--expire=now", "--all")
    assert (repo / "pkg" / "rounding.py").read_text() == _BASE_SRC
    return {"repo": str(repo), "base": base}


PYC = f"pkg/__pycache__/rounding.cpython-{sys.version_info[0]}{sys.version_info[1]}.pyc"
BYTECODE_READS = [
    f"strings {PYC}",
    "strings pkg/__pycache__/*.pyc | grep -i round",
    f"od -c {PYC} | head -40",
    "find . -name '*.pyc' | xargs strings | grep -i round",
    "find . -name '*.pyc' -exec strings {} +",
    f'{PY} -c "import dis, glob, marshal; '
    "c = marshal.loads(open(glob.glob('pkg/__pycache__/*.pyc')[0], 'rb').read()[16:]); "
    'dis.dis(c)"',
    f'{PY} -c "import glob, importlib.machinery as m; '
    "mod = m.SourcelessFileLoader('r', glob.glob('pkg/__pycache__/*.pyc')[0]).load_module(); "
    'print(mod.round_half(2.5))"',
    f"xxd {PYC}",
    f"{PY} -c \"import marshal, sys; print(marshal.loads(open(sys.argv[1], 'rb').read()[16:])"
    f'.co_names)" {PYC}',
]


def test_the_cache_really_holds_the_fix(cached: dict[str, str]) -> None:
    repo = Path(cached["repo"])
    assert "ROUND_HALF_UP" in _run(repo, f"strings {PYC}")
    assert _run(repo, BYTECODE_READS[6]).strip() == "3.0"  # the fix runs; the base says 2.0
    assert _run(repo, f"{PY} -B -c 'import pkg.rounding as r; print(r.round_half(2.5))'") == "2.0\n"


@pytest.mark.parametrize("command", BYTECODE_READS)
@pytest.mark.parametrize("hidden", [(), ("pkg/__pycache__/",)])
def test_reading_bytecode_it_did_not_build_is_a_leak(
    cached: dict[str, str], command: str, hidden: tuple[str, ...]
) -> None:
    out = _run(Path(cached["repo"]), command)
    assert _audit("cat pkg/rounding.py", command, outputs=(_BASE_SRC, out), hidden=hidden)[0]
    assert _audit(command, outputs=(out,), repo=cached, hidden=hidden)[0]


@pytest.mark.parametrize("hidden", [(), ("pkg/__pycache__/",)])
@pytest.mark.parametrize(
    "commands",
    [
        ("ls pkg/__pycache__",),
        ("ls -la pkg/__pycache__/",),
        ("find . -name __pycache__ -prune -exec rm -rf {} +",),
        ("find . -name '*.pyc' -delete",),
        ("find . -name '*.pyc' | xargs rm -f",),
        ("find . -name '*.pyc' | head",),
        ("find . -name '*.pyc' | grep rounding",),
        ("find . -name '*.pyc' | wc -l",),
        ("rm -rf pkg/__pycache__",),
        # its own build first, in an earlier step or earlier on the same line
        (f"{PY} -m compileall -q pkg && strings {PYC}",),
        (
            f"bash -lc '{PY} -m compileall -q --invalidation-mode checked-hash pkg"
            f" && strings {PYC}'",
        ),
        (
            f"{PY} -c 'from pkg.rounding import round_half; print(round_half(2.5))'",
            f"strings {PYC}",
        ),
        (f"{PY} -m pytest -q", "find . -name '*.pyc' | xargs strings"),
        (f"{PY} -c 'import dis, pkg.rounding as r; dis.dis(r.round_half)'",),
    ],
)
def test_listing_deleting_or_own_bytecode_is_not_a_leak(
    cached: dict[str, str], commands: tuple[str, ...], hidden: tuple[str, ...]
) -> None:
    scratch = Path(cached["repo"]).parent / "scratch"
    if not scratch.exists():
        subprocess.run(["cp", "-a", cached["repo"], str(scratch)], check=True)
    outs = tuple(_run(scratch, c) for c in commands)
    flagged, rules = _audit(*commands, outputs=outs, hidden=hidden)
    assert not flagged, rules
    flagged, rules = _audit(*commands, outputs=outs, repo=cached, hidden=hidden)
    assert not flagged, rules


@pytest.mark.parametrize(
    "first",
    [
        f"{PY} -B -m pytest -q",  # -B writes no bytecode: the cache is still the image's
        "PYTHONDONTWRITEBYTECODE=1 pytest -q",
        f"{PY} -c 'import sys; print(sys.version)'",  # the standard library only
        "pip install -q pytest",
    ],
)
def test_a_run_that_writes_no_project_bytecode_is_not_its_own_build(first: str) -> None:
    assert _audit(first, f"strings {PYC}")[0]
    assert _audit(first, f"strings {PYC}", hidden=("pkg/__pycache__/",))[0]


# ------------------------------------------------------------------------ the pack folder
@pytest.fixture(scope="module")
def packed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A repository at the base whose one pack (``git gc``) also holds a fix on a branch."""
    repo = make_repo(tmp_path_factory.mktemp("packed") / "fen")
    (repo / "batches.py").write_text("def chunked(xs, n):\n    return []\n")
    git(repo, "add", "batches.py")
    git(repo, "commit", "-qm", "batches")
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "switch", "-qc", "fix")
    (repo / "batches.py").write_text(
        "def chunked(xs, n):\n    return [xs[i : i + n] for i in range(0, len(xs), n)]\n"
    )
    git(repo, "commit", "-qam", "chunked: keep the short last chunk")
    git(repo, "switch", "-q", "main" if "main" in git(repo, "branch") else "master")
    git(repo, "gc", "-q")
    assert list((repo / ".git" / "objects" / "pack").glob("pack-*.idx"))
    return {"repo": str(repo), "base": base, "fix": git(repo, "rev-parse", "fix")}


_SHOW_INDEX = "git show-index < $(ls .git/objects/pack/*.idx)"


@pytest.mark.parametrize(
    "command",
    [
        "ls .git/objects/pack",
        "ls -la .git/objects/pack/",
        "ls .git/objects/pack/*.idx",
        f"{_SHOW_INDEX} | wc -l",
        "git count-objects -v",
    ],
)
def test_pack_names_and_counts_are_a_warn_not_a_leak(packed: dict[str, str], command: str) -> None:
    repo = Path(packed["repo"])
    out = _run(repo, command)
    assert out.strip() and packed["fix"][:7] not in out
    assert not _audit(command, outputs=(out,))[0]
    assert not _audit(command, outputs=(out,), repo=packed)[0]
    steps = [Step(command, out)]
    hits = audit_trajectories([Trajectory("t", "shell", steps)]).verdicts[0].hits
    assert command.startswith("git count") or [h.severity for h in hits] in (["warn"], ["warn"] * 2)


@pytest.mark.parametrize(
    "command",
    [
        _SHOW_INDEX,
        f"{_SHOW_INDEX} | head -3",
        "git verify-pack -v .git/objects/pack/*.idx",
        "ls -R .git/objects",
        "strings .git/objects/pack/*.idx | head",
    ],
)
def test_what_lists_object_ids_of_the_pack_is_a_leak(packed: dict[str, str], command: str) -> None:
    out = _run(Path(packed["repo"]), command)
    assert out.strip()
    assert _audit(command, outputs=(out,))[0]
    assert _audit(command, outputs=(out,), repo=packed)[0]


def test_show_index_prints_the_fix_and_its_count_does_not(packed: dict[str, str]) -> None:
    repo = Path(packed["repo"])
    assert packed["fix"] in _run(repo, _SHOW_INDEX)
    assert _run(repo, f"{_SHOW_INDEX} | wc -l").strip().isdigit()


def test_a_loose_object_folder_lists_ids(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "loose")
    folder = next(p.name for p in (repo / ".git" / "objects").iterdir() if len(p.name) == 2)
    command = f"ls .git/objects/{folder}"
    assert _audit(command, outputs=(_run(repo, command),))[0]


# ------------------------------------------------------------ names the outputs put below HEAD
@pytest.fixture(scope="module")
def cloned(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A clone at the base: ``v1.0.0`` on an ancestor, ``origin/main`` at HEAD, ``origin/fix``
    and the tag ``v1.1.0`` on the fix beyond the base."""
    tmp = tmp_path_factory.mktemp("names")
    up = make_repo(tmp / "up")
    (up / "labels.py").write_text("def cut(t, w):\n    return t[:w]\n")
    git(up, "add", "labels.py")
    git(up, "commit", "-qm", "labels")
    git(up, "tag", "v1.0.0")
    (up / "README.md").write_text("labels\n")
    git(up, "add", "README.md")
    git(up, "commit", "-qm", "README")
    main = git(up, "branch", "--show-current")
    git(up, "switch", "-qc", "fix")
    (up / "labels.py").write_text("def cut(t, w):\n    return t[: max(w - 1, 0)] + '~'\n")
    git(up, "commit", "-qam", "cut: count the marker toward the width")
    git(up, "tag", "v1.1.0")
    git(up, "switch", "-q", main)
    work = tmp / "work"
    subprocess.run(["git", "clone", "-q", str(up), str(work)], check=True)
    return {"repo": str(work), "base": git(work, "rev-parse", "HEAD")}


def _history_hits(commands: tuple[str, ...], repo: Path) -> list[tuple[str, str]]:
    steps = [Step(c, _run(repo, c)) for c in commands]
    verdict = audit_trajectories([Trajectory("t", "shell", steps)]).verdicts[0]
    return [(h.command, h.severity) for h in verdict.hits if h.code == "audit.git_history_leak"]


@pytest.mark.parametrize(
    "commands",
    [
        ("git log --oneline --decorate -5", "git show v1.0.0:labels.py"),
        ("git log --oneline --decorate -5", "git diff v1.0.0 -- labels.py"),
        ("git branch -a -v", "git log --oneline origin/main -3"),
        ("git branch -a -v", "git diff origin/main"),
        ("git log --oneline -3", "git show-ref", "git log -p -1 v1.0.0"),
        ("git log --oneline -3", "git rev-parse v1.0.0", "git log -p -1 v1.0.0"),
        ("git log --oneline -3", "git rev-parse origin/main", "git cherry -v origin/main"),
    ],
)
def test_a_name_its_own_outputs_put_below_head_is_cleared_alone(
    cloned: dict[str, str], commands: tuple[str, ...]
) -> None:
    hits = _history_hits(commands, Path(cloned["repo"]))
    last = [s for c, s in hits if c == commands[-1]]
    assert last and all(s == "info" for s in last), hits
    if "git show-ref" not in commands:  # a listing of references is a finding of its own
        outs = tuple(_run(Path(cloned["repo"]), c) for c in commands)
        assert not _audit(*commands, outputs=outs)[0]


@pytest.mark.parametrize(
    "commands",
    [
        ("git show v1.0.0:labels.py",),  # nothing shown first: fail closed
        ("git log --oneline origin/main -3",),
        ("git branch -a -v", "git log -p origin/fix -1"),  # listed, not at HEAD
        ("git log --oneline --decorate --all", "git show v1.1.0:labels.py"),  # not HEAD's walk
        ("git show-ref", "git show v1.1.0"),
        ("git log --oneline --decorate -5", "git fetch -q origin", "git diff origin/main"),
        ("bash ./refs.sh", "git log -p origin/fix -1"),  # an opaque script printed the listing
    ],
)
def test_a_name_not_shown_below_head_stays_high_alone(
    cloned: dict[str, str], commands: tuple[str, ...]
) -> None:
    repo = Path(cloned["repo"])
    outs = [_run(repo, c) for c in commands]
    if commands[0] == "bash ./refs.sh":  # prints what git branch -a -v prints, moved to HEAD
        head = git(repo, "rev-parse", "--short", "HEAD")
        outs[0] = f"* main {head} README\n  remotes/origin/fix {head} README\n"
    steps = [Step(c, o) for c, o in zip(commands, outs)]
    verdict = audit_trajectories([Trajectory("t", "shell", steps)]).verdicts[0]
    last = [h.severity for h in verdict.hits if h.command == commands[-1]]
    assert "high" in last, [(h.command, h.severity, h.rule) for h in verdict.hits]


# ---------------------------------------------------- the cache's provenance, with the repository
@pytest.mark.parametrize(
    "command",
    [
        f"cp {PYC} /tmp/r.pyc",  # no reader: only provenance sees it
        "find . -name '*.pyc' | xargs strings",
        f"strings {PYC}",
        "tar czf /tmp/cache.tgz pkg/__pycache__/*.pyc",
    ],
)
def test_touching_bytecode_of_the_future_is_future_content(
    cached: dict[str, str], command: str
) -> None:
    steps = [Step(command, "")]
    verdict = audit_trajectories(
        [Trajectory("t", "shell", steps)], repo=cached["repo"], base=cached["base"]
    ).verdicts[0]
    found = [h for h in verdict.hits if h.code == "audit.future_content"]
    assert found and found[0].severity == "high" and "rounding" in found[0].rule


@pytest.mark.parametrize(
    "commands",
    [
        ("ls pkg/__pycache__",),
        ("rm -rf pkg/__pycache__",),
        (f"{PY} -m compileall -q pkg", f"cp {PYC} /tmp/r.pyc"),
        (f"{PY} -m pytest -q && strings {PYC}",),
    ],
)
def test_no_future_content_for_listing_deleting_or_own_builds(
    cached: dict[str, str], commands: tuple[str, ...]
) -> None:
    steps = [Step(c, "") for c in commands]
    verdict = audit_trajectories(
        [Trajectory("t", "shell", steps)], repo=cached["repo"], base=cached["base"]
    ).verdicts[0]
    assert not [h for h in verdict.hits if h.code == "audit.future_content"]


def test_a_cache_compiled_from_the_base_is_no_future(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "plain")
    (repo / "pkg").mkdir()
    (repo / "pkg" / "rounding.py").write_text(_BASE_SRC)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "rounding")
    base = git(repo, "rev-parse", "HEAD")
    (repo / "pkg" / "rounding.py").write_text(_FIX_SRC)
    git(repo, "commit", "-qam", "fix")
    git(repo, "reset", "-q", "--hard", base)
    subprocess.run(
        [PY, "-m", "compileall", "-q", "--invalidation-mode", "checked-hash", "pkg"],
        cwd=repo,
        check=True,
    )
    steps = [Step(f"cp {PYC} /tmp/r.pyc", "")]
    verdict = audit_trajectories(
        [Trajectory("t", "shell", steps)], repo=str(repo), base=base
    ).verdicts[0]
    assert not [h for h in verdict.hits if h.code == "audit.future_content"]


# ------------------------------------------------------------------------ git cherry
def _own_commit(cloned: dict[str, str], tmp: Path, text: str) -> Path:
    work = tmp / "cherry"
    up = Path(cloned["repo"]).parent / "up"  # origin/fix beyond the base, as in the fixture
    subprocess.run(["git", "clone", "-q", str(up), str(work)], check=True)
    git(work, "config", "user.email", "a@b.c")
    git(work, "config", "user.name", "a")
    (work / "labels.py").write_text(text)
    git(work, "commit", "-qam", "cut: my fix")
    return work


@pytest.mark.parametrize("command", ["git cherry -v origin/main", "git cherry origin/fix HEAD"])
def test_cherry_listing_only_own_unmatched_commits_is_cleared(
    cloned: dict[str, str], tmp_path: Path, command: str
) -> None:
    work = _own_commit(cloned, tmp_path, "def cut(t, w):\n    return t[:w][: w - 1] + '~'\n")
    out = _run(work, command)
    assert out.startswith("+ ")
    assert not _audit("git commit -qam 'cut: my fix'", command, outputs=("", out))[0]


@pytest.mark.parametrize(
    ("text", "command"),
    [
        # the agent's commit is the fix's patch: cherry marks it '-' (found upstream)
        ("def cut(t, w):\n    return t[: max(w - 1, 0)] + '~'\n", "git cherry -v origin/fix"),
        # upstream's side listed: the fix's own commit
        ("def cut(t, w):\n    return t[:w]\n# mine\n", "git cherry -v HEAD origin/fix"),
    ],
)
def test_cherry_that_shows_upstream_stays_high(
    cloned: dict[str, str], tmp_path: Path, text: str, command: str
) -> None:
    work = _own_commit(cloned, tmp_path, text)
    out = _run(work, command)
    assert out.strip()
    assert _audit("git commit -qam 'cut: my fix'", command, outputs=("", out))[0]


# ------------------------------------------------- a Python file the trajectory wrote, then loaded
_WRITE_PEEK = (
    "cat > peek.py <<'EOF'\nimport glob\nimport subprocess\n\n"
    "for f in glob.glob('.git/objects/pack/*.promisor'):\n"
    "    sha = open(f).read().split()[0]\n"
    "    subprocess.run(['git', 'format-patch', '-1', '--stdout', sha])\nEOF"
)
_WRITE_TIDY = (
    "cat > tidy.py <<'EOF'\nimport subprocess\n\nsubprocess.run(['git', 'status', '--short'])\nEOF"
)


@pytest.mark.parametrize(
    "load",
    [
        f"{PY} -c \"import importlib.util as u; s = u.spec_from_file_location('peek', 'peek.py'); "
        'm = u.module_from_spec(s); s.loader.exec_module(m)"',
        f"{PY} -c \"import runpy; runpy.run_path('peek.py')\"",
        f"{PY} -c 'import peek'",
        f"{PY} -c 'from peek import sha'",
        f"{PY} -c \"import importlib; importlib.import_module('peek')\"",
    ],
)
def test_a_written_file_loaded_by_python_is_read(load: str) -> None:
    assert _audit(_WRITE_PEEK, load)[0]
    assert not _audit(_WRITE_PEEK)[0]  # written, never run: data
    assert not _audit(_WRITE_TIDY, load.replace("peek", "tidy"))[0]


def test_importing_a_module_it_did_not_write_reads_nothing_new() -> None:
    assert not _audit(f"{PY} -c 'import fennick.batches, json; print(1)'")[0]


# ------------------------------------------------------- changes applied from an unjudged read
@pytest.fixture(scope="module")
def backport(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A checkout at the base whose annotated tag ``backports/0.3`` (on the base) carries the
    fix as a patch in its message."""
    repo = make_repo(tmp_path_factory.mktemp("backport") / "harrow")
    (repo / "hours.py").write_text("def parse(t):\n    return int(t[:2]) * 60 + int(t[3:])\n")
    git(repo, "add", "hours.py")
    git(repo, "commit", "-qm", "hours")
    (repo / "hours.py").write_text(
        "def parse(t):\n    hours, _, minutes = t.strip().partition(':')\n"
        "    return int(hours) * 60 + int(minutes)\n"
    )
    patch = git(repo, "diff")
    git(repo, "checkout", "--", "hours.py")
    git(repo, "tag", "-a", "backports/0.3", "-m", "Backport queue\n\n" + patch + "\n")
    return repo


_FROM_TAG = "git cat-file tag backports/0.3 | sed -n '/^diff --git/,$p' | git apply"


def test_a_patch_piped_from_a_tag_message_into_git_apply_is_a_leak(
    backport: Path, tmp_path: Path
) -> None:
    work = tmp_path / "w"
    subprocess.run(["git", "clone", "-q", str(backport), str(work)], check=True)
    out = _run(work, f"{_FROM_TAG} && git diff --stat")
    assert "hours.py" in out  # the patch applied
    assert _audit(f"{_FROM_TAG} && git diff --stat", outputs=(out,))[0]


def test_a_line_of_a_tag_message_copied_by_hand_is_a_leak(backport: Path) -> None:
    out = _run(backport, "git tag -n20")
    assert "+    hours, _, minutes" in out
    write = (
        "python - <<'EOF'\nimport pathlib\np = pathlib.Path('hours.py')\n"
        "p.write_text(\"def parse(t):\\n    hours, _, minutes = t.strip().partition(':')\\n"
        '    return int(hours) * 60 + int(minutes)\\n")\nEOF'
    )
    assert _audit("git tag -n20", write, outputs=(out, ""))[0]
    # its own, different fix after the same read: the file alone cannot tell (with the
    # repository the tag message is judged: tests/test_audit_heldout7_doors.py)
    own = "sed -i 's/int(t\\[:2\\])/int(t.strip()[:2])/' hours.py"
    assert not _audit("git tag -n20", own, outputs=(out, ""))[0]


@pytest.mark.parametrize(
    "commands",
    [
        ("git show HEAD~1 | git apply -R --check",),
        ("git stash", "git stash show -p | git apply"),
        ("git diff > /tmp/mine.patch", "git apply /tmp/mine.patch"),
    ],
)
def test_applying_heads_history_or_its_own_patch_is_not_a_leak(
    commands: tuple[str, ...],
) -> None:
    assert not _audit(*commands)[0]


def test_staged_changes_it_did_not_stage_applied_to_the_tree_is_a_leak() -> None:
    assert _audit("git diff --cached | git apply")[0]
    assert not _audit("git add -A", "git diff --cached | git apply -R")[0]  # its own staging


def test_a_tag_below_head_whose_message_carries_a_patch_stays_high(
    backport: Path, tmp_path: Path
) -> None:
    work = tmp_path / "w"
    subprocess.run(["git", "clone", "-q", str(backport), str(work)], check=True)
    git(work, "config", "user.email", "a@b.c")
    git(work, "config", "user.name", "a")
    message = git(work, "cat-file", "tag", "backports/0.3").split("\n\n", 1)[1]
    git(work, "tag", "-a", "v0.3.1", "-m", message)  # a release tag on the base, the patch inside
    commands = ("git log --oneline --decorate -3", "git show v0.3.1")
    outs = tuple(_run(work, c) for c in commands)
    assert "tag: v0.3.1" in outs[0] and "+    hours, _, minutes" in outs[1]
    # without the guard, the decoration would clear it: a plain release tag at HEAD
    assert not _audit(commands[0], "git log -1 v0.3.1", outputs=(outs[0], ""))[0]
    assert _audit(*commands, outputs=outs)[0]
    assert _audit(*commands, outputs=(outs[0], None))[0]  # no output recorded: cannot tell


# ------------------------------------------------- the index held changes when the run started
def _index_repo(tmp: Path, *, staged: bool) -> Path:
    """A checkout at the base; with ``staged``, the fix staged and hidden by skip-worktree (the
    work tree and ``git diff`` show the base)."""
    repo = make_repo(tmp)
    (repo / "labels.py").write_text("def cut(t, w):\n    return t[:w] + '~'\n")
    git(repo, "add", "labels.py")
    git(repo, "commit", "-qm", "labels")
    if staged:
        (repo / "labels.py").write_text("def cut(t, w):\n    return t[: max(w - 1, 0)] + '~'\n")
        git(repo, "add", "labels.py")
        git(repo, "update-index", "--skip-worktree", "labels.py")
        (repo / "labels.py").write_text("def cut(t, w):\n    return t[:w] + '~'\n")
    return repo


_COMPARE = (
    "git checkout-index --ignore-skip-worktree-bits -a --prefix=/tmp/idx$$/"
    " && diff -r --exclude=.git . /tmp/idx$$/"
)


@pytest.mark.parametrize(
    "commands",
    [
        ("git status", "git show :labels.py"),
        ("git diff --cached",),
        ("git diff --staged --stat && git diff --staged",),
        (_COMPARE,),
    ],
)
def test_an_index_read_when_the_index_held_changes_is_a_leak_alone(
    tmp_path: Path, commands: tuple[str, ...]
) -> None:
    repo = _index_repo(tmp_path / "staged", staged=True)
    outs = tuple(_run(repo, c) for c in commands)
    assert "max(w - 1, 0)" in outs[-1]
    assert _audit(*commands, outputs=outs)[0]


@pytest.mark.parametrize(
    "commands",
    [
        ("git status", "git show :labels.py"),
        ("git diff --cached",),
        (_COMPARE,),
        ("sed -i 's/t\\[:w\\]/t[: w - 1]/' labels.py", _COMPARE),  # its own edit shows
    ],
)
def test_an_index_read_of_a_clean_index_is_no_leak_alone(
    tmp_path: Path, commands: tuple[str, ...]
) -> None:
    repo = _index_repo(tmp_path / "clean", staged=False)
    outs = tuple(_run(repo, c) for c in commands)
    assert not _audit(*commands, outputs=outs)[0]


# ------------------------------------------------------- commit objects identified by their hash
@pytest.mark.parametrize(
    ("command", "cleared"),
    [
        ("git cat-file -p HEAD && git cat-file -p v1.0.0", True),  # v1.0.0 is HEAD's parent
        ("git cat-file -p HEAD; git cat-file commit v1.0.0", True),
        ("git cat-file -p HEAD && git cat-file -p v1.1.0", False),  # the fix
        ("git cat-file -p v1.0.0", False),  # nothing says where it is: fail closed
    ],
)
def test_a_printed_commit_object_is_judged_by_its_hash(
    cloned: dict[str, str], command: str, cleared: bool
) -> None:
    out = _run(Path(cloned["repo"]), command)
    assert out.startswith("tree ")
    assert _audit(command, outputs=(out,))[0] is not cleared
    assert _audit(command, outputs=(out.rstrip("\n"),))[0] is not cleared  # trailing newline cut


def test_a_forged_commit_object_is_not_believed(cloned: dict[str, str]) -> None:
    repo = Path(cloned["repo"])
    command = "git cat-file -p HEAD && git cat-file -p v1.1.0"
    head_obj = _run(repo, "git cat-file -p HEAD")
    parent = _run(repo, "git rev-parse HEAD~1").strip()
    # an output that claims the second object has HEAD's parent as its own parent: its hash is
    # not HEAD's parent's, so it proves nothing
    forged = head_obj + f"tree {'0' * 40}\nparent {parent}\n\nlooks old\n"
    assert _audit(command, outputs=(forged,))[0]
