"""``evotree.toml``'s sections of what a search may spend and what a version must show:
``[budget]`` (per version and over the tree), ``[gates]`` (the evidence a promotion needs) and
``[autopilot]`` (its proposals and stop rules). Each field carries its default and its help; each
section checks its values when built (:func:`evotree.core.config.parse_config` names the key and
line)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields

from evotree.core.config_fields import field_help, value_error

__all__ = ["AutopilotSection", "BudgetSection", "GatesSection"]


@dataclass
class BudgetSection:
    # --- per run
    max_wall_seconds: int = field(
        default=3600, metadata=field_help("Wall-clock limit of one run (both phases).")
    )
    # --- per version (0: unlimited)
    max_runs_per_version: int = field(
        default=20, metadata=field_help("Runs (seeds included) per version.")
    )
    max_episodes: int = field(
        default=0,
        metadata=field_help(
            "Episodes (recorded rollouts) per version; gym: 128 as in EvoPolicyGym."
        ),
    )
    max_steps: int = field(
        default=0, metadata=field_help("Training steps per version (0: unlimited).")
    )
    max_wall_hours: float = field(
        default=0.0, metadata=field_help("Wall-clock hours per version (0: unlimited).")
    )
    max_gpu_hours: float = field(
        default=0.0, metadata=field_help("GPU hours per version (0: unlimited).")
    )
    # --- per tree (0: unlimited)
    tree_max_episodes: int = field(
        default=0, metadata=field_help("Episodes over the whole tree (0: unlimited).")
    )
    tree_max_steps: int = field(
        default=0, metadata=field_help("Training steps over the whole tree (0: unlimited).")
    )
    tree_max_wall_hours: float = field(
        default=0.0, metadata=field_help("Wall-clock hours over the whole tree.")
    )
    tree_max_gpu_hours: float = field(
        default=0.0, metadata=field_help("GPU hours over the whole tree.")
    )
    # --- money and the search clock (docs/protocols/budgets.md)
    usd_per_gpu_hour: float = field(
        default=0.0,
        metadata=field_help(
            "Price of one GPU hour in USD ([executor].gpus per run x its wall hours)."
        ),
    )
    usd_per_cpu_hour: float = field(
        default=0.0,
        metadata=field_help(
            "Price of one CPU hour in USD ([executor].cpus per run x its wall hours)."
        ),
    )
    max_usd: float = field(
        default=0.0,
        metadata=field_help(
            "USD per version: its runs at the prices above plus agent spend recorded for it (0: unlimited)."
        ),
    )
    tree_max_usd: float = field(
        default=0.0,
        metadata=field_help(
            "USD over the whole tree: runs plus recorded agent/API spend (evotree spend record)."
        ),
    )
    tree_max_search_hours: float = field(
        default=0.0,
        metadata=field_help(
            "Search clock: hours from the workspace's init; no run starts or runs past its end (0: none)."
        ),
    )
    charge_invalid: bool = field(
        default=False,
        metadata=field_help(
            "Charge invalid candidates (train exit 65) like any other run; by default they cost nothing."
        ),
    )

    def __post_init__(self) -> None:
        import math

        for key in ("max_wall_seconds", "max_runs_per_version"):
            if getattr(self, key) <= 0:
                raise value_error(f"budget.{key}", "a positive integer", getattr(self, key))
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool):
                continue
            if isinstance(value, float) and not math.isfinite(value):
                raise value_error(
                    f"budget.{f.name}", "a finite number, 0 (unlimited) or more", value
                )
            if value < 0:
                raise value_error(f"budget.{f.name}", "0 (unlimited) or more", value)


@dataclass
class GatesSection:
    min_delta: float = field(
        default=0.002,
        metadata=field_help(
            "Lower CI bound of Δ vs champion must exceed this "
            "(score units: 0.002 = 0.2 points of a 0-1 score)."
        ),
    )
    alpha: float = field(
        default=0.025,
        metadata=field_help(
            "One-sided false-promotion level over all looks at a candidate (CIs shown at 1 - 2 alpha)."
        ),
    )
    min_tasks: int = field(
        default=20, metadata=field_help("Minimum evaluated tasks for a comparison.")
    )
    min_seeds: int = field(
        default=1,
        metadata=field_help(
            "Candidate seeds at the score gate's first look (looks at x1, 2, 3, 4, 6, 8, 12, 16 ...)."
        ),
    )
    champion_seeds: int = field(
        default=4,
        metadata=field_help("Runs of the champion since its promotion the score gate needs."),
    )
    bootstrap_samples: int = field(
        default=10_000, metadata=field_help("Paired bootstrap resamples (B).")
    )
    require_signoff: bool = field(
        default=True, metadata=field_help("Promotion needs a human's signed approval.")
    )
    allowed_signers: str = field(
        default="gates/allowed_signers",
        metadata=field_help("Allowed-signers file, read from the champion's tree."),
    )
    train_approval_above_seconds: int = field(
        default=0,
        metadata=field_help(
            "Runs budgeted above this many seconds need approval first (0: never)."
        ),
    )

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1:
            raise value_error("gates.alpha", "a number in (0, 1)", self.alpha)
        if self.bootstrap_samples < 100:
            raise value_error("gates.bootstrap_samples", "at least 100", self.bootstrap_samples)
        for key in ("min_tasks", "min_seeds", "champion_seeds"):
            if getattr(self, key) < 1:
                raise value_error(f"gates.{key}", "at least 1", getattr(self, key))
        if self.train_approval_above_seconds < 0:
            raise value_error(
                "gates.train_approval_above_seconds", "0 or more", self.train_approval_above_seconds
            )


@dataclass
class AutopilotSection:
    # --- `evotree autopilot` (evotree.verbs.autopilot): proposals from a declared search space
    recipe: str = field(
        default="",
        metadata=field_help(
            "File (in the version's tree) whose `NAME = number` lines the knobs change (e.g. recipe.toml, policy.py)."
        ),
    )
    max_proposals: int = field(
        default=8, metadata=field_help("Proposals tried at most in one autopilot session.")
    )
    max_runs: int = field(
        default=0,
        metadata=field_help(
            "Runs (candidates and champion re-runs) one session may start (0: no limit)."
        ),
    )
    patience: int = field(
        default=3,
        metadata=field_help(
            "Post-peak rule: stop after this many proposals in a row that the gate did not pass."
        ),
    )
    futility: int = field(
        default=0,
        metadata=field_help(
            "Futility rule: stop after this many proposals in a row not passed before any promotion (0: patience)."
        ),
    )
    seed: int = field(
        default=0, metadata=field_help("Seed of the knob proposals' sequence (fixed in advance).")
    )
    #: ``[autopilot.knobs.NAME]``: low, high, step (numbers) and optionally file (default: ``recipe``)
    knobs: dict = field(default_factory=dict)  # type: ignore[type-arg]

    def __post_init__(self) -> None:
        import math

        for key in ("max_proposals", "max_runs", "patience", "futility", "seed"):
            if getattr(self, key) < 0:
                raise value_error(f"autopilot.{key}", "0 or more", getattr(self, key))
        if self.recipe.startswith("/") or ".." in self.recipe.split("/"):
            raise value_error("autopilot.recipe", "a path inside the repository", self.recipe)
        for name, knob in self.knobs.items():
            key = f"autopilot.knobs.{name}"
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                raise value_error(
                    key,
                    "a name of letters, digits and _ (the NAME of a `NAME = number` line)",
                    name,
                )
            if not isinstance(knob, dict):
                raise value_error(key, "a table {low, high, step}", knob)
            unknown = set(knob) - {"low", "high", "step", "file"}
            if unknown:
                raise value_error(key, "only low, high, step and file", sorted(unknown))
            nums = [knob.get(k) for k in ("low", "high", "step")]
            if not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                for v in nums
            ):
                raise value_error(key, "finite numbers low, high and step", knob)
            low, high, step = nums
            if not (low < high and step > 0):
                raise value_error(key, "low < high and step > 0", knob)
            file = knob.get("file", self.recipe)
            if (
                not isinstance(file, str)
                or not file
                or file.startswith("/")
                or ".." in file.split("/")
            ):
                raise value_error(
                    f"{key}.file", "a path inside the repository (or set autopilot.recipe)", file
                )
