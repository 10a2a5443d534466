"""The domains of the real-loop benchmark (bench/bench_real_loop.py) and the judges of truth.

A :class:`Domain` writes one workspace of its kind into a fresh git repository (the same files,
knobs and hidden judge for every workspace of one benchmark invocation: the hidden seeds are
fixed in advance) and says which file the knobs change and what a neutral effect is:

- **gym**: three Core-16 environments, the policy of :data:`evotree.demo.GYM_POLICY` with a random
  action at ``EPSILON`` (two runs of one policy differ, as two training runs do), six knobs;
- **math**: the math domain's GRPO recipe (trl.GRPOTrainer on the warmed-up tiny model), shrunk to
  a few steps, with three knobs of ``recipe.toml``: ``learning_rate``, ``num_generations`` (the
  group size; 24 completions per step, a multiple of every value) and ``temperature``;
- **autoresearch**: the worked example of ``evotree init --protocol autoresearch`` (a NumPy
  byte-level language model trained for a fixed CPU-second budget, judged on hidden text) with
  its two knobs of ``train.py``: ``LR`` (a real one) and ``INIT_SCALE`` (one that does not help).

Truth: the gym domain's policies are re-judged in this process on the held-out pool with the
domain's own episode and scoring code (:class:`GymTruth`); a trained recipe's truth needs
training, so math and autoresearch recipes are re-run as real ``evotree run --heldout`` runs at
seeds no search run uses, in a workspace of their own (:class:`WorkspaceTruth`): the mean
held-out score over those seeds, with its standard error.
"""

from __future__ import annotations

import re
import shutil
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchlib import git

from evotree.verbs.autopilot import Knob, Proposal, apply_proposal

GYM_ENVS = ("Acrobot-v1", "MountainCarContinuous-v0", "HalfCheetah-v5")
#: the math recipe's knobs: (low, high, step); the v0 values are the shrunk recipe's below
MATH_KNOBS = {
    "learning_rate": (1e-4, 2.1e-3, 4e-4),
    "num_generations": (2, 8, 2),
    "temperature": (0.6, 1.4, 0.2),
}
#: autoresearch's knobs: LR (0.0002 is too small for a budget of seconds), INIT_SCALE (no help)
AUTORESEARCH_KNOBS = {"LR": (2e-4, 1.4e-3, 4e-4), "INIT_SCALE": (0.7, 1.3, 0.1)}
#: hidden seeds of the math judge (validation, held-out): fixed in advance, in the judge's range
MATH_JUDGE_SEEDS = (1_234_567_001, 1_234_567_002)
AUTORESEARCH_JUDGE_SEEDS = (7_654_321, 7_654_322)
IDENTITY = ("bench", "bench@evotree-bench.invalid")


def new_repo(path: Path) -> Path:
    """An empty git repository at ``path`` with the benchmark's identity."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", IDENTITY[0])
    git(path, "config", "user.email", IDENTITY[1])
    return path


def autopilot_section(
    text: str,
    recipe: str,
    knobs: dict[str, tuple[float, float, float]],
    *,
    max_proposals: int,
    patience: int,
    seed: int,
) -> str:
    """``text`` (an evotree.toml) with its ``[autopilot]`` set to ``knobs`` over ``recipe``
    (the template's section replaced, or a new one appended)."""
    if "\n[autopilot]\n" in text:
        head, _, _ = text.partition("\n[autopilot]\n")
        # keep what follows the template's section (its commented [interventions])
        tail = text.split("\n[autopilot]\n", 1)[1]
        rest = tail[tail.index("\n# [interventions]") :] if "\n# [interventions]" in tail else ""
        text = head + "\n" + rest
    lines = [
        "",
        "[autopilot]",
        f'recipe = "{recipe}"',
        f"max_proposals = {max_proposals}",
        f"patience = {patience}",
        f"seed = {seed}",
    ]
    for name, (low, high, step) in knobs.items():
        lines += [
            "",
            f"[autopilot.knobs.{name}]",
            f"low = {low!r}",
            f"high = {high!r}",
            f"step = {step!r}",
        ]
    return text.rstrip("\n") + "\n" + "\n".join(lines) + "\n"


def apply_text(text: str, recipe: str, proposal: Proposal, knobs: dict[str, Knob]) -> str | None:
    """``text`` (the recipe file) with ``proposal`` applied as the autopilot applies it, or None
    when it changes nothing (a knob at a bound moved back onto itself)."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / recipe
        path.write_text(text)
        apply_proposal(
            Proposal(proposal.key, proposal.kind, proposal.summary, dict(proposal.data)),
            Path(folder),
            knobs,
        )
        new = path.read_text()
    return None if new == text else new


@dataclass
class Domain:
    """One domain of the benchmark: how to make its workspace, its knobs and its truth."""

    name: str
    recipe: str
    knob_ranges: dict[str, tuple[float, float, float]]
    start: str
    neutral: float
    #: writes the domain's files into a fresh repository and initializes it (signers given)
    make: Callable[[Path, list[str], int, int, int], dict[str, Any]]
    #: what the workspace's [gates] / [budget] allow one version (greedy-k's k is capped by it)
    max_runs_per_version: int = 20
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def knobs(self) -> dict[str, Knob]:
        return {
            name: Knob(name, float(lo), float(hi), float(st), self.recipe)
            for name, (lo, hi, st) in self.knob_ranges.items()
        }

    def workspace(
        self,
        path: Path,
        signers: list[str],
        *,
        seed: int = 0,
        max_proposals: int = 8,
        patience: int = 3,
    ) -> dict[str, Any]:
        """A fresh workspace of this domain at ``path`` (v0 = :attr:`start`), initialized."""
        return self.make(new_repo(path), signers, seed, max_proposals, patience)


# ---------------------------------------------------------------------------- gym
def gym_domain(
    *,
    epsilon: float,
    validation: int,
    heldout: int,
    judge_seed: int,
    neutral: float = 0.01,
    max_runs_per_version: int = 20,
) -> Domain:
    """Three Core-16 environments with a parameterized policy (module doc);
    ``max_runs_per_version`` is the workspace's ``[budget]`` cap of runs one version may take
    (the template's 20 unless a lever study raises it; recorded in the settings only then)."""
    from evotree.api import init as evotree_init
    from evotree.demo import GYM_KNOBS, gym_files, gym_policy

    start = gym_policy(EPSILON=epsilon)
    ranges = {name: spec for env in GYM_ENVS for name, spec in GYM_KNOBS[env].items()}

    def make(
        repo: Path, signers: list[str], seed: int, max_proposals: int, patience: int
    ) -> dict[str, Any]:
        judge = gym_files(
            repo,
            GYM_ENVS,
            policy=start,
            validation=validation,
            heldout=heldout,
            train=1,
            max_proposals=max_proposals,
            patience=patience,
            seed=seed,
            judge_seed=judge_seed,
        )
        if max_runs_per_version != 20:
            set_budget_cap(repo / "evotree.toml", max_runs_per_version)
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "gym workspace")
        evotree_init(repo, domain="gym", signers=signers)
        return judge

    return Domain(
        "gym",
        "policy.py",
        ranges,
        start,
        neutral,
        make,
        max_runs_per_version,
        {
            "envs": list(GYM_ENVS),
            "epsilon": epsilon,
            "validation_episodes": validation,
            "heldout_episodes": heldout,
            "judge_seed": judge_seed,
            **(
                {} if max_runs_per_version == 20 else {"max_runs_per_version": max_runs_per_version}
            ),
        },
    )


def set_budget_cap(config: Path, runs: int) -> None:
    """Set ``[budget] max_runs_per_version`` in the workspace's ``evotree.toml`` to ``runs``
    (the one line the template has; refuses a file without exactly one)."""
    text = config.read_text()
    new, count = re.subn(
        r"(?m)^max_runs_per_version = \d+$", f"max_runs_per_version = {int(runs)}", text
    )
    if count != 1:
        raise ValueError(f"{config}: expected one max_runs_per_version line, found {count}")
    config.write_text(new)


# ---------------------------------------------------------------------------- math
def math_recipe(*, steps: int, batch: int = 24, generations: int = 4) -> str:
    """The math template's recipe shrunk for the benchmark: ``steps`` GRPO steps of ``batch``
    completions in groups of ``generations`` (every other key the template's default)."""
    from evotree.domains.math.templates import RECIPE_TOML

    text = RECIPE_TOML
    for key, value in (
        ("max_steps", steps),
        ("per_device_train_batch_size", batch),
        ("num_generations", generations),
    ):
        text, n = re.subn(rf"(?m)^{key} = \d+$", f"{key} = {value}", text, count=1)
        assert n == 1, key
    return text


def math_domain(*, steps: int, neutral: float = 0.01) -> Domain:
    """The math recipe on three knobs (module doc), ``steps`` GRPO steps a run."""
    from evotree.domains.math.templates import render_judge_toml

    from evotree.api import init as evotree_init
    from evotree.core.config_template import render_template

    start = math_recipe(steps=steps)

    def make(
        repo: Path, signers: list[str], seed: int, max_proposals: int, patience: int
    ) -> dict[str, Any]:
        text = autopilot_section(
            render_template("math"),
            "recipe.toml",
            MATH_KNOBS,
            max_proposals=max_proposals,
            patience=patience,
            seed=seed,
        )
        (repo / "evotree.toml").write_text(text)
        (repo / "recipe.toml").write_text(start)
        (repo / "judge").mkdir()
        (repo / "judge" / "math.toml").write_text(render_judge_toml(*MATH_JUDGE_SEEDS))
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "math workspace")
        evotree_init(repo, domain="math", signers=signers)
        return {}

    return Domain(
        "math",
        "recipe.toml",
        dict(MATH_KNOBS),
        start,
        neutral,
        make,
        20,
        {
            "max_steps": steps,
            "per_device_train_batch_size": 24,
            "num_generations": 4,
            "judge_seeds": list(MATH_JUDGE_SEEDS),
        },
    )


# ---------------------------------------------------------------------------- autoresearch
def autoresearch_domain(*, budget: float, neutral: float = 0.01) -> Domain:
    """The autoresearch worked example at a ``budget`` of CPU seconds a run (module doc)."""
    from evotree.domains.autoresearch.templates import example_files, materialize

    from evotree.core.workspace import init_workspace

    files = example_files(budget, seeds=AUTORESEARCH_JUDGE_SEEDS)
    start = files["train.py"]

    def make(
        repo: Path, signers: list[str], seed: int, max_proposals: int, patience: int
    ) -> dict[str, Any]:
        for rel, text in files.items():
            if rel == "evotree.toml":
                text = autopilot_section(
                    text,
                    "train.py",
                    AUTORESEARCH_KNOBS,
                    max_proposals=max_proposals,
                    patience=patience,
                    seed=seed,
                )
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            (repo / rel).write_text(text)
        git(repo, "add", "prepare.py", "train.py", "program.md", "data", "evotree.toml")
        git(repo, "commit", "-qm", "an autoresearch repository")  # judge/ never committed
        init_workspace(repo, domain="custom", template=materialize, signers=signers)
        return {}

    return Domain(
        "autoresearch",
        "train.py",
        dict(AUTORESEARCH_KNOBS),
        start,
        neutral,
        make,
        12,
        {"time_budget_cpu_seconds": budget, "judge_seeds": list(AUTORESEARCH_JUDGE_SEEDS)},
    )


# ---------------------------------------------------------------------------- truth
class GymTruth:
    """A policy's true value: the held-out pool, every episode played ``repeats`` times, in this
    process with the domain's own code (no run saw the pool)."""

    def __init__(self, judge: dict[str, Any], repeats: int) -> None:
        self.judge, self.repeats = judge, repeats
        self.cache: dict[str, tuple[float, float | None]] = {}
        self.runs = 0

    def true(self, text: str) -> tuple[float, float | None]:
        from evotree.demo import gym_truth

        if text not in self.cache:
            self.cache[text] = (
                float(gym_truth(text, self.judge, repeats=self.repeats, split="heldout")),
                None,
            )
        return self.cache[text]


#: a run that failed for the machine, not the recipe (the shared tree's harness being edited):
#: its seed is run again, after a pause
INFRASTRUCTURE = ("SandboxUnavailable",)


def run_seeds(
    session: Any,
    version: str,
    *,
    seeds: int,
    seed_start: int,
    jobs: int | None = None,
    heldout: bool = False,
    retries: int = 2,
    pause: float = 20.0,
) -> tuple[list[Any], int]:
    """``seeds`` runs of ``version`` from ``seed_start``; a run that failed for the machine
    (:data:`INFRASTRUCTURE`) is run again at its seed up to ``retries`` times. The runs kept
    and the number of runs started (what the ledger holds)."""
    import time

    records = list(
        session.run([version], seeds=seeds, seed_start=seed_start, jobs=jobs, heldout=heldout)
    )
    started = len(records)
    for _ in range(retries):
        bad = [
            r
            for r in records
            if r.status != "succeeded" and any(word in (r.error or "") for word in INFRASTRUCTURE)
        ]
        if not bad:
            break
        time.sleep(pause)
        records = [r for r in records if r not in bad]
        for r in bad:
            again = session.run([version], seeds=1, seed_start=r.seed, jobs=jobs, heldout=heldout)
            started += len(again)
            records += again
    return records, started


def heldout_mean(ws_root: Path, run_id: str) -> float | None:
    """The mean held-out score of one run, from its ``evals.parquet`` (None: no held-out score)."""
    import duckdb

    path = ws_root / ".evotree" / "runs" / run_id / "evals.parquet"
    if not path.exists():
        return None
    row = (
        duckdb.connect()
        .execute(
            "SELECT avg(score) FILTER (WHERE isfinite(score)) FROM read_parquet(?) "
            "WHERE phase = 'eval' AND split = 'heldout'",
            [str(path)],
        )
        .fetchone()
    )
    return None if row is None or row[0] is None else float(row[0])


class WorkspaceTruth:
    """A trained recipe's true value: ``seeds`` real ``evotree run --heldout`` runs of it (at seeds
    from ``seed_start``, which no search run uses) in a workspace of its own; the mean held-out
    score and its standard error. Cached by the recipe's text."""

    def __init__(
        self,
        domain: Domain,
        root: Path,
        *,
        seeds: int,
        seed_start: int = 1000,
        jobs: int | None = None,
        share_from: Path | None = None,
    ) -> None:
        from evotree.verbs import Session

        self.domain, self.seeds, self.seed_start, self.jobs = domain, seeds, seed_start, jobs
        self.root = root
        domain.workspace(root, [])
        if share_from is not None:
            share_cache(share_from, root)
        self.session = Session(root)
        self.cache: dict[str, tuple[float, float | None]] = {}
        self.runs = 0

    def _version(self, text: str) -> str:
        if text == self.domain.start:
            return "v0"
        record = self.session.branch("truth of a champion", parent="v0")
        worktree = self.session.open().absolute(record.worktree)
        (worktree / self.domain.recipe).write_text(text)
        self.session.commit(record.id, "a champion of the benchmark")
        return record.id

    def true(self, text: str) -> tuple[float, float | None]:
        if text not in self.cache:
            version = self._version(text)
            records, started = run_seeds(
                self.session,
                version,
                seeds=self.seeds,
                seed_start=self.seed_start,
                jobs=self.jobs,
                heldout=True,
            )
            self.runs += started
            values = [
                v
                for r in records
                if r.status == "succeeded"
                for v in [heldout_mean(self.root, r.run_id)]
                if v is not None
            ]
            if not values:
                raise RuntimeError(
                    f"no held-out score for a {self.domain.name} champion: "
                    f"{[(r.status, r.error) for r in records]}"
                )
            se = statistics.stdev(values) / len(values) ** 0.5 if len(values) > 1 else None
            self.cache[text] = (statistics.fmean(values), se)
        return self.cache[text]


def share_cache(source: Path, target: Path) -> None:
    """Copy ``source``'s shared cache (the math warm-up, built once) into the workspace
    ``target`` before its first run: every workspace of one benchmark starts from the same warm
    model (the warm-up's key is its settings, the same everywhere) without training it again.
    The workspace's own state there (``trust.json``) is not copied."""
    src, dst = source / ".evotree" / "cache", target / ".evotree" / "cache"
    if not src.is_dir():
        return
    for entry in src.iterdir():
        if entry.is_dir() and not (dst / entry.name).exists():
            shutil.copytree(entry, dst / entry.name, symlinks=True)
