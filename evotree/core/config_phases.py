"""``evotree.toml``'s sections of what a version runs and what it may touch: ``[workspace]``,
``[train]``, ``[eval]`` (the phases' commands and the judge's paths) and ``[protect]`` (the paths
and limits of the patch gate). Each field carries its default and its help; each section checks
its values when built (:func:`evotree.core.config.parse_config` names the key and line)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from evotree.core.config_fields import FieldError, field_help, value_error

__all__ = [
    "DOMAINS",
    "EvalSection",
    "PhaseSection",
    "ProtectSection",
    "TrainSection",
    "WorkspaceSection",
]

DOMAINS = ("custom", "math", "gym")


@dataclass
class WorkspaceSection:
    # --- what this workspace trains
    domain: str = field(
        default="custom", metadata=field_help("Domain template: custom, math or gym.")
    )
    # --- where things live (relative to the repository root)
    worktree_dir: str = field(
        default=".evotree/worktrees", metadata=field_help("Where version worktrees are created.")
    )
    runs_dir: str = field(
        default=".evotree/runs", metadata=field_help("Where run evidence is written.")
    )

    def __post_init__(self) -> None:
        if self.domain not in DOMAINS:
            raise value_error("workspace.domain", f"one of {', '.join(DOMAINS)}", self.domain)
        for key in ("worktree_dir", "runs_dir"):
            value = getattr(self, key)
            if not value:
                raise value_error(f"workspace.{key}", "a non-empty path", value)


@dataclass
class PhaseSection:
    command: str = field(
        default="", metadata=field_help("Shell command of the phase, run in the exported tree.")
    )
    timeout_seconds: int = field(
        default=3600, metadata=field_help("Wall-clock limit of the phase.")
    )

    def __post_init__(self) -> None:
        if self.timeout_seconds <= 0:
            raise value_error(
                "timeout_seconds", "a positive number of seconds", self.timeout_seconds
            )


@dataclass
class TrainSection(PhaseSection):
    prepare: str = field(
        default="",
        metadata=field_help(
            "Command run before the train phase, in a sandbox of its own that may write the "
            "workspace's shared cache ($EVOTREE_CACHE_DIR, e.g. a warmed-up base model) and reads the "
            "candidate's tree; the train phase then reads the cache only. Taken from the champion's "
            "policy, like every command; run installed code (python -P -m ...), never a file of the "
            "candidate's tree: whatever it runs can write the cache. Empty: no preparation."
        ),
    )
    headline_signal: str = field(
        default="",
        metadata=field_help(
            "The train signal that reports show first (its group first), e.g. reward_mean; empty: "
            "the signal named reward, else the first whose name says reward."
        ),
    )


@dataclass
class EvalSection(PhaseSection):
    judge_paths: list[str] = field(
        default_factory=lambda: ["judge/"],
        metadata=field_help(
            "Judge code and hidden splits: taken from the champion for the eval phase, "
            "never exported into a candidate's run directory."
        ),
    )
    hide_until_finalize: bool = field(
        default=False,
        metadata=field_help(
            "EvoPolicyGym's visibility boundary (set by `evotree init --protocol evopolicygym`): "
            "validation and held-out figures are computed and kept but left out of every output "
            "(CLI and agent server) until `evotree finalize` has recorded the search's one held-out "
            "evaluation (docs/domains/gym.md)."
        ),
    )
    judge_trains: bool = field(
        default=False,
        metadata=field_help(
            "The judge phase runs the fixed training before it scores (RSIBench-Data's shape, set by "
            "`evotree init --protocol rsibench-data`): its wall and CPU time, measured by evotree, "
            "are counted as training (run records' train_seconds and judge_train_seconds, usage "
            "train_hours and judge_train_hours; docs/protocols/budgets.md)."
        ),
    )
    finalize_retrain: bool = field(
        default=False,
        metadata=field_help(
            "`evotree finalize` retrains the selected version clean before it judges it once on the "
            "held-out split (AI4AI-Bench's formal retrain, set by `evotree init --protocol ai4ai`): "
            "its train phase runs again from the selected commit, in the sandbox, with a fresh seed, "
            "charged to the finalize account (never to the search's budgets). False: the judge reads "
            "the selected run's trained candidate, or the commit itself (EvoPolicyGym's shape)."
        ),
    )
    normalize: dict = field(  # type: ignore[type-arg]  (a plain dict: the parser checks it as a table)
        default_factory=dict,
        metadata=field_help(
            "[eval.normalize]: unusable, start, optimum (raw metric values), direction (max/min), "
            "start_score (0.1), failed_as_zero: a normalized score shown beside the raw one."
        ),
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        for path in self.judge_paths:
            if not path or path.startswith("/") or ".." in path.split("/"):
                raise value_error("eval.judge_paths", "relative paths inside the repository", path)
        from evotree.core.normalize import NormalizeError, parse_normalize

        try:
            parse_normalize(self.normalize)
        except NormalizeError as exc:
            raise FieldError(f"eval.normalize.{exc.key}", str(exc)) from None
        except TypeError as exc:  # a key of the wrong kind reaches the dataclass
            raise FieldError("eval.normalize", str(exc)) from None

    @property
    def normalization(self) -> Any:
        """The :class:`~evotree.core.normalize.NormalizeSpec` of ``[eval.normalize]``, or None."""
        from evotree.core.normalize import parse_normalize

        return parse_normalize(self.normalize)


@dataclass
class ProtectSection:
    paths: list[str] = field(
        default_factory=lambda: ["evotree.toml", "judge/", "gates/"],
        metadata=field_help(
            "Paths a candidate version may not change (judge, gate policy, hidden data)."
        ),
    )
    # --- the patch gate (evotree audit): what a candidate's own diff may add
    max_file_bytes: int = field(
        default=1_000_000, metadata=field_help("Added or changed files larger than this fail.")
    )
    max_row_lines: int = field(
        default=200,
        metadata=field_help(
            "Added lines of one literal row shape (CSV/JSON records) a text file may gain."
        ),
    )
    max_line_chars: int = field(
        default=20_000, metadata=field_help("Longest added line a text file may have.")
    )
    patch_allow: list[str] = field(
        default_factory=list,
        metadata=field_help("Paths exempt from the patch gate (not from `paths`)."),
    )
    max_line_numbers: int = field(
        default=128,
        metadata=field_help(
            "Numeric literals one added line may hold (a weight vector on one line)."
        ),
    )
    max_file_numbers: int = field(
        default=1000,
        metadata=field_help("Numeric literals the added lines of one text file may hold in all."),
    )
    max_encoded_chars: int = field(
        default=2048,
        metadata=field_help(
            "Characters of base64/hex runs and byte escapes one text file may gain."
        ),
    )
    # --- the pristine base and the allowlists (docs/gates.md, "The pristine base")
    base: str = field(
        default="root",
        metadata=field_help(
            "What a candidate's patch is measured from: \"root\" (the root version's first commit), "
            '"champion", a root version id or a full commit id.'
        ),
    )
    editable: list[str] = field(
        default_factory=list,
        metadata=field_help(
            "Globs of the only paths a patch may change (empty: any path but `paths`)."
        ),
    )
    editable_keys: list[str] = field(
        default_factory=list,
        metadata=field_help(
            '"FILE:KEY-GLOB" entries: FILE (TOML or JSON) may change only at these dotted keys.'
        ),
    )

    def __post_init__(self) -> None:
        for key in (
            "max_file_bytes",
            "max_row_lines",
            "max_line_chars",
            "max_line_numbers",
            "max_file_numbers",
            "max_encoded_chars",
        ):
            if getattr(self, key) < 1:
                raise value_error(f"protect.{key}", "a positive integer", getattr(self, key))
        for key in ("paths", "patch_allow", "editable"):
            for path in getattr(self, key):
                if not path or path.startswith("/") or ".." in path.split("/"):
                    raise value_error(
                        f"protect.{key}", "relative paths inside the repository", path
                    )
        for entry in self.editable_keys:
            file, sep, keys = entry.partition(":")
            if not sep or not file or not keys or file.startswith("/") or ".." in file.split("/"):
                raise value_error(
                    "protect.editable_keys", '"FILE:KEY-GLOB" (e.g. "recipe.toml:train.*")', entry
                )
        if not re.fullmatch(
            r"root|champion|[0-9a-f]{40}|[A-Za-z0-9][A-Za-z0-9._-]{0,63}", self.base
        ):
            raise value_error(
                "protect.base",
                '"root", "champion", a root version id or a full commit id',
                self.base,
            )
