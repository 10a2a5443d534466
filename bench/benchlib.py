"""Shared helpers of the evotree benchmarks (bench/bench_*.py).

Import this module FIRST: like tests/conftest.py it isolates git's configuration (a temp HOME,
no system or global config) before pygit2 is imported anywhere, because libgit2 reads the
location of the global configuration once, when it starts. Every benchmark then works on real
git repositories in a temp folder, runs the real ``evotree`` console script of this
interpreter's virtualenv as a subprocess, and times baseline and candidate interleaved in the
same run (the machine is noisy): only medians and same-run ratios are reported.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# ----------------------------------------------------------------------------- environment
_HOME = Path(tempfile.mkdtemp(prefix="evotree-bench-home-"))
os.environ["HOME"] = str(_HOME)
os.environ["XDG_CONFIG_HOME"] = str(_HOME / ".config")
os.environ["GIT_CONFIG_NOSYSTEM"] = "1"
os.environ["GIT_CONFIG_GLOBAL"] = str(_HOME / ".gitconfig")
for _var in (
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "PYTHONPATH",
):
    os.environ.pop(_var, None)
(_HOME / ".gitconfig").write_text("[init]\n\tdefaultBranch = main\n")
atexit.register(shutil.rmtree, _HOME, ignore_errors=True)

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
_SCRIPT = Path(sys.executable).parent / "evotree"
#: The command a user (or agent) types: the virtualenv's ``evotree`` console script.
EVOTREE: list[str] = [str(_SCRIPT)] if _SCRIPT.exists() else [PYTHON, "-m", "evotree"]
IDENTITY = ("Bench Runner", "bench@example.com")


def cleanup_home() -> None:
    shutil.rmtree(_HOME, ignore_errors=True)


# ----------------------------------------------------------------------------- git helpers
def git(repo: Path, *args: str, check: bool = True) -> str:
    proc = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=False)
    if check and proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed in {repo}: {proc.stderr.strip()}")
    return proc.stdout


def evotree(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([*EVOTREE, *args], cwd=repo, capture_output=True, text=True, check=False)
    if check and proc.returncode != 0:
        raise RuntimeError(
            f"evotree {' '.join(args)} failed ({proc.returncode}): "
            f"{proc.stderr.strip() or proc.stdout.strip()}"
        )
    return proc


_WORDS = (
    "reward",
    "policy",
    "rollout",
    "group",
    "advantage",
    "kl",
    "entropy",
    "clip",
    "batch",
    "tokenizer",
    "sampler",
    "filter",
    "std",
    "threshold",
    "lr",
    "warmup",
    "schedule",
    "verifier",
    "format",
    "length",
    "penalty",
    "temperature",
    "beam",
    "judge",
    "dataset",
)


def _py_file(rng: random.Random, lines: int) -> str:
    out = [
        '"""Module of the training recipe (generated for the benchmark)."""',
        "",
        "import math",
        "",
    ]
    while len(out) < lines:
        name = "_".join(rng.sample(_WORDS, 2))
        args = ", ".join(rng.sample(_WORDS, 3))
        out += [
            f"def {name}({args}):",
            f'    """Compute the {name.replace("_", " ")} term."""',
            (
                f"    value = {rng.choice(_WORDS)} * {rng.random():.6f}"
                f" + math.log1p(abs({rng.choice(_WORDS)}))"
            ),
            f"    return value if value > {rng.random():.3f} else -value",
            "",
        ]
    return "\n".join(out) + "\n"


def make_recipe_repo(path: Path, *, files: int = 200, seed: int = 0) -> Path:
    """A git repository holding a realistic small RL recipe: ``files`` files (~2 KB each).

    Python modules in a few packages, TOML/YAML configs, a few small data files and tests,
    committed once on ``main`` by the benchmark identity.
    """
    rng = random.Random(seed)
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "--quiet", "-b", "main")
    git(path, "config", "user.name", IDENTITY[0])
    git(path, "config", "user.email", IDENTITY[1])
    packages = [
        "recipe",
        "recipe/rewards",
        "recipe/data",
        "recipe/models",
        "recipe/filters",
        "configs",
        "scripts",
        "tests",
        "judge",
        "data",
    ]
    (path / "README.md").write_text("# GRPO recipe\n\nGenerated for the evotree benchmarks.\n")
    (path / "recipe.toml").write_text(
        "[grpo]\nlearning_rate = 1e-5\nnum_generations = 8\n\n[filters]\nstd_group_filter = false\n"
    )
    made = 2
    i = 0
    while made < files:
        pkg = packages[i % len(packages)]
        d = path / pkg
        d.mkdir(parents=True, exist_ok=True)
        if pkg == "configs":
            (d / f"exp_{i:04d}.yaml").write_text(
                "".join(f"{w}: {rng.random():.5f}\n" for w in rng.sample(_WORDS, 12)) * 4
            )
        elif pkg == "data":
            (d / f"prompts_{i:04d}.jsonl").write_text(
                "".join(
                    json.dumps(
                        {
                            "prompt": " ".join(rng.choices(_WORDS, k=20)),
                            "answer": rng.randint(0, 999),
                        }
                    )
                    + "\n"
                    for _ in range(12)
                )
            )
        else:
            if not (d / "__init__.py").exists():
                (d / "__init__.py").write_text("")
                made += 1
            (d / f"mod_{i:04d}.py").write_text(_py_file(rng, rng.randint(40, 90)))
        made += 1
        i += 1
    git(path, "add", "-A")
    git(path, "commit", "--quiet", "-m", "initial recipe")
    return path


def tracked_files(repo: Path) -> int:
    return len(git(repo, "ls-files", "-z").split("\0")) - 1


# ----------------------------------------------------------------------------- populating
@contextlib.contextmanager
def no_worktree_porcelain() -> Iterator[None]:
    """Skip ``git worktree add/prune`` inside evotree's own library calls.

    Used only to build large trees quickly: a version created and later abandoned through
    the real library leaves exactly the same refs, ledger records and (no) worktree as one
    created with a worktree and abandoned; the only difference is that the abandon event's
    ``data.worktree_removed`` is null instead of the removed path (nothing reads it).
    """
    from evotree.core.gitio import Git

    saved = Git.add_worktree, Git.prune_worktrees
    Git.add_worktree = lambda self, path, branch: None  # type: ignore[method-assign]
    Git.prune_worktrees = lambda self: None  # type: ignore[method-assign]
    try:
        yield
    finally:
        Git.add_worktree, Git.prune_worktrees = saved  # type: ignore[method-assign]


_REASONS = (
    "reward curve flat after 200 steps; the {a} change did not help",
    "diverged: KL blew up at step {n}, {a} too aggressive",
    "no gain over the parent on the held-out split ({a})",
    "superseded by a sibling that combines {a} and {b}",
)


def _hypothesis(rng: random.Random, n: int) -> str:
    a, b, c = rng.sample(_WORDS, 3)
    return (
        f"v{n}: raise {a} {rng.choice(['by 2x', 'to 0.1', 'slightly', 'per group'])} "
        f"and gate on {b}; "
        f"expect steadier {c} and +{rng.randint(1, 9)}% pass@1"
    )


@dataclass
class Population:
    versions: int
    active: int
    abandoned: int
    seconds: float
    max_depth: int
    ids: list[str] = field(default_factory=list)


def populate(
    repo: Path,
    n: int,
    *,
    active: int,
    seed: int = 0,
    progress: Callable[[int, float], None] | None = None,
) -> Population:
    """Add ``n`` versions to the workspace at ``repo`` through evotree's own library.

    Every version is made by :func:`evotree.core.versions.create_version` (30 % from the champion,
    the rest from one of the 50 newest versions, so the tree branches and deepens like a
    search). All but the last ``active`` are then abandoned with
    :func:`evotree.core.versions.abandon_version`, which keeps their branch; for those, git's
    worktree porcelain is skipped (:func:`no_worktree_porcelain`), the end state being the
    same. The last ``active`` versions get real worktrees and stay active.
    """
    from evotree.core.versions import abandon_version, create_version
    from evotree.core.workspace import Workspace

    rng = random.Random(seed)
    ws = Workspace.open(repo)
    ids = [r.id for r in ws.ledger.versions()]
    depth = {r.id: 0 for r in ws.ledger.versions()}
    champion = ws.champion()
    started = time.perf_counter()
    made: list[str] = []
    fast = max(0, n - active)
    with no_worktree_porcelain():
        for i in range(fast):
            parent = champion if rng.random() < 0.3 or len(ids) < 2 else rng.choice(ids[-50:])
            number = len(ids)
            record = create_version(ws, hypothesis=_hypothesis(rng, number), parent=parent)
            a, b = rng.sample(_WORDS, 2)
            abandon_version(
                ws, record.id, reason=rng.choice(_REASONS).format(a=a, b=b, n=rng.randint(10, 900))
            )
            ids.append(record.id)
            made.append(record.id)
            depth[record.id] = depth[parent] + 1
            if progress is not None and (i + 1) % 1000 == 0:
                progress(i + 1, time.perf_counter() - started)
    for _ in range(n - fast):
        parent = champion if rng.random() < 0.3 or len(ids) < 2 else rng.choice(ids[-50:])
        record = create_version(ws, hypothesis=_hypothesis(rng, len(ids)), parent=parent)
        ids.append(record.id)
        made.append(record.id)
        depth[record.id] = depth[parent] + 1
    return Population(
        versions=len(ids),
        active=n - fast,
        abandoned=fast,
        seconds=time.perf_counter() - started,
        max_depth=max(depth.values()),
        ids=made,
    )


def check_state(repo: Path, *, versions: int, worktrees: int) -> dict[str, int]:
    """Cross-check ledger, branches and worktrees with git itself; raise on a mismatch."""
    from evotree.core.workspace import Workspace

    ws = Workspace.open(repo)
    records = ws.ledger.versions()
    branches = len(git(repo, "for-each-ref", "--format=%(refname)", "refs/heads/evotree/").split())
    listed = git(repo, "worktree", "list", "--porcelain").count("\nworktree ") + 1
    state = {
        "ledger_versions": len(records),
        "evotree_branches": branches,
        "git_worktrees_incl_main": listed,
        "ledger_events": int(ws.ledger.meta().get("events", 0)),
    }
    expected = {
        "ledger_versions": versions,
        "evotree_branches": versions,
        "git_worktrees_incl_main": worktrees + 1,
    }
    for key, want in expected.items():
        if state[key] != want:
            raise RuntimeError(f"populated state is wrong: {key} = {state[key]}, expected {want}")
    on_disk = sum(1 for r in records if r.worktree and ws.absolute(r.worktree).exists())
    if on_disk != worktrees:
        raise RuntimeError(f"{on_disk} recorded worktrees exist on disk, expected {worktrees}")
    return state


# ----------------------------------------------------------------------------- timing
def timed_run(cmd: list[str], cwd: Path, *, stdout: Any = subprocess.PIPE) -> tuple[float, str]:
    """Run ``cmd`` and return (wall seconds, stdout); raise if it fails."""
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, stdout=stdout, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(
            f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.decode(errors='replace')}"
        )
    out = proc.stdout.decode(errors="replace") if isinstance(proc.stdout, bytes) else ""
    return elapsed, out


def interleave(
    variants: dict[str, Callable[[], float | dict[str, float]]],
    *,
    repeats: int,
    warmup: int,
    label: str = "",
) -> dict[str, list[float]]:
    """Run every variant once per repetition, in an order rotated each repetition.

    Each variant callable does its own untimed setup/cleanup and returns the seconds of its
    timed part (or a dict of named seconds, for one run timed at several points).
    ``warmup`` extra repetitions run first and are discarded.
    """
    names = list(variants)
    samples: dict[str, list[float]] = {}
    total = warmup + repeats
    for rep in range(total):
        shift = rep % len(names)
        for name in names[shift:] + names[:shift]:
            result = variants[name]()
            if rep >= warmup:
                for key, seconds in (
                    result.items() if isinstance(result, dict) else [(name, result)]
                ):
                    samples.setdefault(key, []).append(seconds)
        if label and (rep + 1) % 5 == 0:
            print(f"  {label}: repetition {rep + 1}/{total}", file=sys.stderr, flush=True)
    return samples


def summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "n": len(ordered),
        "median": statistics.median(ordered),
        "min": ordered[0],
        "max": ordered[-1],
        "mean": statistics.fmean(ordered),
        "p90": ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))],
    }


def paired_ratio(candidate: list[float], baseline: list[float]) -> float:
    """Median of the per-repetition ratios (each pair ran back to back)."""
    return statistics.median(c / b for c, b in zip(candidate, baseline))


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.1f}"


def print_table(title: str, rows: list[tuple[str, dict[str, float]]], *, note: str = "") -> None:
    print(f"\n{title}")
    width = max(len(name) for name, _ in rows)
    print(f"  {'':{width}}  {'median ms':>9}  {'min ms':>8}  {'max ms':>8}  {'n':>3}")
    for name, s in rows:
        print(
            f"  {name:{width}}  {ms(s['median']):>9}  {ms(s['min']):>8}"
            f"  {ms(s['max']):>8}  {s['n']:>3}"
        )
    if note:
        print(f"  {note}")


# ----------------------------------------------------------------------------- reporting
def environment() -> dict[str, Any]:
    import pygit2

    try:
        commit = git(ROOT, "rev-parse", "HEAD").strip()
        dirty = bool(git(ROOT, "status", "--porcelain", "--", "evotree").strip())
    except RuntimeError:
        commit, dirty = "unknown", False
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "loadavg_at_start": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "git": git(ROOT, "--version").strip(),
        "pygit2": pygit2.__version__,
        "libgit2": pygit2.LIBGIT2_VERSION,
        "evotree_commit": commit,
        "evotree_dirty": dirty,
        "evotree_command": EVOTREE,
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def write_json(path: str | None, payload: dict[str, Any]) -> None:
    if not path:
        return
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(payload, indent=2) + "\n")
    print(f"\nwrote {target}")


@contextlib.contextmanager
def workdir(keep: bool, prefix: str) -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix=prefix)).resolve()
    try:
        yield path
    finally:
        if keep:
            print(f"kept the benchmark repositories in {path}")
        else:
            shutil.rmtree(path, ignore_errors=True)
        cleanup_home()
