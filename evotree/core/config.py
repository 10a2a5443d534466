"""``evotree.toml``: the workspace configuration, as validated dataclasses.

Every field carries its help text; every error names the key, the line and the fix. The
configuration that judges a version is always read from the champion's tree (see
:func:`evotree.core.workspace.Workspace.config`), never from the candidate's branch.
"""

from __future__ import annotations

import difflib
import functools
import re
import tomllib
import types
import typing
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any


from evotree.core.errors import ConfigError

__all__ = [
    "CONFIG_FILE",
    "DOMAINS",
    "Config",
    "WorkspaceSection",
    "PhaseSection",
    "TrainSection",
    "EvalSection",
    "ProtectSection",
    "BudgetSection",
    "GatesSection",
    "ExecutorSection",
    "SandboxSection",
    "ToolsSection",
    "SANDBOX_MODES",
    "parse_config",
    "read_config_text",
]

CONFIG_FILE = "evotree.toml"
DOMAINS = ("custom", "math", "gym")
EXECUTORS = ("local", "ray", "slurm")
SANDBOX_MODES = ("bwrap", "off")


def _help(text: str) -> dict[str, str]:
    return {"help": text}


@dataclass
class WorkspaceSection:
    # --- what this workspace trains
    domain: str = field(default="custom", metadata=_help("Domain template: custom, math or gym."))
    # --- where things live (relative to the repository root)
    worktree_dir: str = field(
        default=".evotree/worktrees", metadata=_help("Where version worktrees are created.")
    )
    runs_dir: str = field(default=".evotree/runs", metadata=_help("Where run evidence is written."))

    def __post_init__(self) -> None:
        if self.domain not in DOMAINS:
            raise _value_error("workspace.domain", f"one of {', '.join(DOMAINS)}", self.domain)
        for key in ("worktree_dir", "runs_dir"):
            value = getattr(self, key)
            if not value:
                raise _value_error(f"workspace.{key}", "a non-empty path", value)


@dataclass
class PhaseSection:
    command: str = field(
        default="", metadata=_help("Shell command of the phase, run in the exported tree.")
    )
    timeout_seconds: int = field(default=3600, metadata=_help("Wall-clock limit of the phase."))

    def __post_init__(self) -> None:
        if self.timeout_seconds <= 0:
            raise _value_error(
                "timeout_seconds", "a positive number of seconds", self.timeout_seconds
            )


@dataclass
class TrainSection(PhaseSection):
    prepare: str = field(
        default="",
        metadata=_help(
            "Command run before the train phase, in a sandbox of its own that may write the "
            "workspace's shared cache ($EVOTREE_CACHE_DIR, e.g. a warmed-up base model) and reads the "
            "candidate's tree; the train phase then reads the cache only. Taken from the champion's "
            "policy, like every command; run installed code (python -P -m ...), never a file of the "
            "candidate's tree: whatever it runs can write the cache. Empty: no preparation."
        ),
    )
    headline_signal: str = field(
        default="",
        metadata=_help(
            "The train signal that reports show first (its group first), e.g. reward_mean; empty: "
            "the signal named reward, else the first whose name says reward."
        ),
    )


@dataclass
class EvalSection(PhaseSection):
    judge_paths: list[str] = field(
        default_factory=lambda: ["judge/"],
        metadata=_help(
            "Judge code and hidden splits: taken from the champion for the eval phase, "
            "never exported into a candidate's run directory."
        ),
    )
    hide_until_finalize: bool = field(
        default=False,
        metadata=_help(
            "EvoPolicyGym's visibility boundary (set by `evotree init --protocol evopolicygym`): "
            "validation and held-out figures are computed and kept but left out of every output "
            "(CLI and agent server) until `evotree finalize` has recorded the search's one held-out "
            "evaluation (docs/domains/gym.md)."
        ),
    )
    judge_trains: bool = field(
        default=False,
        metadata=_help(
            "The judge phase runs the fixed training before it scores (RSIBench-Data's shape, set by "
            "`evotree init --protocol rsibench-data`): its wall and CPU time, measured by evotree, "
            "are counted as training (run records' train_seconds and judge_train_seconds, usage "
            "train_hours and judge_train_hours; docs/protocols/budgets.md)."
        ),
    )
    finalize_retrain: bool = field(
        default=False,
        metadata=_help(
            "`evotree finalize` retrains the selected version clean before it judges it once on the "
            "held-out split (AI4AI-Bench's formal retrain, set by `evotree init --protocol ai4ai`): "
            "its train phase runs again from the selected commit, in the sandbox, with a fresh seed, "
            "charged to the finalize account (never to the search's budgets). False: the judge reads "
            "the selected run's trained candidate, or the commit itself (EvoPolicyGym's shape)."
        ),
    )
    normalize: dict = field(  # type: ignore[type-arg]  (a plain dict: the parser checks it as a table)
        default_factory=dict,
        metadata=_help(
            "[eval.normalize]: unusable, start, optimum (raw metric values), direction (max/min), "
            "start_score (0.1), failed_as_zero: a normalized score shown beside the raw one."
        ),
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        for path in self.judge_paths:
            if not path or path.startswith("/") or ".." in path.split("/"):
                raise _value_error("eval.judge_paths", "relative paths inside the repository", path)
        from evotree.core.normalize import NormalizeError, parse_normalize

        try:
            parse_normalize(self.normalize)
        except NormalizeError as exc:
            raise _FieldError(f"eval.normalize.{exc.key}", str(exc)) from None
        except TypeError as exc:  # a key of the wrong kind reaches the dataclass
            raise _FieldError("eval.normalize", str(exc)) from None

    @property
    def normalization(self) -> Any:
        """The :class:`~evotree.core.normalize.NormalizeSpec` of ``[eval.normalize]``, or None."""
        from evotree.core.normalize import parse_normalize

        return parse_normalize(self.normalize)


@dataclass
class ProtectSection:
    paths: list[str] = field(
        default_factory=lambda: ["evotree.toml", "judge/", "gates/"],
        metadata=_help(
            "Paths a candidate version may not change (judge, gate policy, hidden data)."
        ),
    )
    # --- the patch gate (evotree audit): what a candidate's own diff may add
    max_file_bytes: int = field(
        default=1_000_000, metadata=_help("Added or changed files larger than this fail.")
    )
    max_row_lines: int = field(
        default=200,
        metadata=_help(
            "Added lines of one literal row shape (CSV/JSON records) a text file may gain."
        ),
    )
    max_line_chars: int = field(
        default=20_000, metadata=_help("Longest added line a text file may have.")
    )
    patch_allow: list[str] = field(
        default_factory=list, metadata=_help("Paths exempt from the patch gate (not from `paths`).")
    )
    max_line_numbers: int = field(
        default=128,
        metadata=_help("Numeric literals one added line may hold (a weight vector on one line)."),
    )
    max_file_numbers: int = field(
        default=1000,
        metadata=_help("Numeric literals the added lines of one text file may hold in all."),
    )
    max_encoded_chars: int = field(
        default=2048,
        metadata=_help("Characters of base64/hex runs and byte escapes one text file may gain."),
    )
    # --- the pristine base and the allowlists (docs/gates.md, "The pristine base")
    base: str = field(
        default="root",
        metadata=_help(
            "What a candidate's patch is measured from: \"root\" (the root version's first commit), "
            '"champion", a root version id or a full commit id.'
        ),
    )
    editable: list[str] = field(
        default_factory=list,
        metadata=_help("Globs of the only paths a patch may change (empty: any path but `paths`)."),
    )
    editable_keys: list[str] = field(
        default_factory=list,
        metadata=_help(
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
                raise _value_error(f"protect.{key}", "a positive integer", getattr(self, key))
        for key in ("paths", "patch_allow", "editable"):
            for path in getattr(self, key):
                if not path or path.startswith("/") or ".." in path.split("/"):
                    raise _value_error(
                        f"protect.{key}", "relative paths inside the repository", path
                    )
        for entry in self.editable_keys:
            file, sep, keys = entry.partition(":")
            if not sep or not file or not keys or file.startswith("/") or ".." in file.split("/"):
                raise _value_error(
                    "protect.editable_keys", '"FILE:KEY-GLOB" (e.g. "recipe.toml:train.*")', entry
                )
        if not re.fullmatch(
            r"root|champion|[0-9a-f]{40}|[A-Za-z0-9][A-Za-z0-9._-]{0,63}", self.base
        ):
            raise _value_error(
                "protect.base",
                '"root", "champion", a root version id or a full commit id',
                self.base,
            )


@dataclass
class BudgetSection:
    # --- per run
    max_wall_seconds: int = field(
        default=3600, metadata=_help("Wall-clock limit of one run (both phases).")
    )
    # --- per version (0: unlimited)
    max_runs_per_version: int = field(
        default=20, metadata=_help("Runs (seeds included) per version.")
    )
    max_episodes: int = field(
        default=0,
        metadata=_help("Episodes (recorded rollouts) per version; gym: 128 as in EvoPolicyGym."),
    )
    max_steps: int = field(default=0, metadata=_help("Training steps per version (0: unlimited)."))
    max_wall_hours: float = field(
        default=0.0, metadata=_help("Wall-clock hours per version (0: unlimited).")
    )
    max_gpu_hours: float = field(
        default=0.0, metadata=_help("GPU hours per version (0: unlimited).")
    )
    # --- per tree (0: unlimited)
    tree_max_episodes: int = field(
        default=0, metadata=_help("Episodes over the whole tree (0: unlimited).")
    )
    tree_max_steps: int = field(
        default=0, metadata=_help("Training steps over the whole tree (0: unlimited).")
    )
    tree_max_wall_hours: float = field(
        default=0.0, metadata=_help("Wall-clock hours over the whole tree.")
    )
    tree_max_gpu_hours: float = field(default=0.0, metadata=_help("GPU hours over the whole tree."))
    # --- money and the search clock (docs/protocols/budgets.md)
    usd_per_gpu_hour: float = field(
        default=0.0,
        metadata=_help("Price of one GPU hour in USD ([executor].gpus per run x its wall hours)."),
    )
    usd_per_cpu_hour: float = field(
        default=0.0,
        metadata=_help("Price of one CPU hour in USD ([executor].cpus per run x its wall hours)."),
    )
    max_usd: float = field(
        default=0.0,
        metadata=_help(
            "USD per version: its runs at the prices above plus agent spend recorded for it (0: unlimited)."
        ),
    )
    tree_max_usd: float = field(
        default=0.0,
        metadata=_help(
            "USD over the whole tree: runs plus recorded agent/API spend (evotree spend record)."
        ),
    )
    tree_max_search_hours: float = field(
        default=0.0,
        metadata=_help(
            "Search clock: hours from the workspace's init; no run starts or runs past its end (0: none)."
        ),
    )
    charge_invalid: bool = field(
        default=False,
        metadata=_help(
            "Charge invalid candidates (train exit 65) like any other run; by default they cost nothing."
        ),
    )

    def __post_init__(self) -> None:
        import math

        for key in ("max_wall_seconds", "max_runs_per_version"):
            if getattr(self, key) <= 0:
                raise _value_error(f"budget.{key}", "a positive integer", getattr(self, key))
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool):
                continue
            if isinstance(value, float) and not math.isfinite(value):
                raise _value_error(
                    f"budget.{f.name}", "a finite number, 0 (unlimited) or more", value
                )
            if value < 0:
                raise _value_error(f"budget.{f.name}", "0 (unlimited) or more", value)


@dataclass
class GatesSection:
    min_delta: float = field(
        default=0.002,
        metadata=_help(
            "Lower CI bound of Δ vs champion must exceed this "
            "(score units: 0.002 = 0.2 points of a 0-1 score)."
        ),
    )
    alpha: float = field(
        default=0.025,
        metadata=_help(
            "One-sided false-promotion level over all looks at a candidate (CIs shown at 1 - 2 alpha)."
        ),
    )
    min_tasks: int = field(default=20, metadata=_help("Minimum evaluated tasks for a comparison."))
    min_seeds: int = field(
        default=1,
        metadata=_help(
            "Candidate seeds at the score gate's first look (looks at x1, 2, 3, 4, 6, 8, 12, 16 ...)."
        ),
    )
    champion_seeds: int = field(
        default=4, metadata=_help("Runs of the champion since its promotion the score gate needs.")
    )
    bootstrap_samples: int = field(
        default=10_000, metadata=_help("Paired bootstrap resamples (B).")
    )
    require_signoff: bool = field(
        default=True, metadata=_help("Promotion needs a human's signed approval.")
    )
    allowed_signers: str = field(
        default="gates/allowed_signers",
        metadata=_help("Allowed-signers file, read from the champion's tree."),
    )
    train_approval_above_seconds: int = field(
        default=0,
        metadata=_help("Runs budgeted above this many seconds need approval first (0: never)."),
    )

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1:
            raise _value_error("gates.alpha", "a number in (0, 1)", self.alpha)
        if self.bootstrap_samples < 100:
            raise _value_error("gates.bootstrap_samples", "at least 100", self.bootstrap_samples)
        for key in ("min_tasks", "min_seeds", "champion_seeds"):
            if getattr(self, key) < 1:
                raise _value_error(f"gates.{key}", "at least 1", getattr(self, key))
        if self.train_approval_above_seconds < 0:
            raise _value_error(
                "gates.train_approval_above_seconds", "0 or more", self.train_approval_above_seconds
            )


@dataclass
class ExecutorSection:
    kind: str = field(default="local", metadata=_help("Executor: local (processes), ray or slurm."))
    jobs: int = field(default=1, metadata=_help("Runs executed at once by the local executor."))
    address: str = field(default="", metadata=_help("Ray cluster address ('' starts a local one)."))
    cpus: float = field(default=1.0, metadata=_help("CPUs per run (Ray resources)."))
    gpus: float = field(default=0.0, metadata=_help("GPUs per run (Ray resources)."))
    memory_gb: float = field(default=0.0, metadata=_help("Memory per run in GiB (0: unspecified)."))
    evidence_uri: str = field(
        default="",
        metadata=_help(
            "Where Ray workers write evidence: a path or fsspec URL all nodes reach "
            "('' = .evotree/store, one machine only)."
        ),
    )
    max_retries: int = field(
        default=1,
        metadata=_help(
            "Ray: new attempts of a run whose worker or node died (not of failed code)."
        ),
    )
    sync_seconds: float = field(
        default=10.0,
        metadata=_help("Ray: how often a worker copies its partial evidence to the store."),
    )

    def __post_init__(self) -> None:
        if self.kind not in EXECUTORS:
            raise _value_error("executor.kind", f"one of {', '.join(EXECUTORS)}", self.kind)
        if self.jobs < 1:
            raise _value_error("executor.jobs", "at least 1", self.jobs)
        for key in ("cpus", "gpus", "memory_gb"):
            if getattr(self, key) < 0:
                raise _value_error(f"executor.{key}", "0 or more", getattr(self, key))
        if self.max_retries < 0:
            raise _value_error("executor.max_retries", "0 or more", self.max_retries)
        if self.sync_seconds <= 0:
            raise _value_error(
                "executor.sync_seconds", "a positive number of seconds", self.sync_seconds
            )


@dataclass
class SandboxSection:
    # --- isolation of the train and judge phases (evotree.harness.sandbox)
    mode: str = field(
        default="bwrap",
        metadata=_help(
            '"bwrap": every phase runs in a bubblewrap sandbox (runs are refused where it cannot '
            'start); "off": no isolation, and every run and gate report says so.'
        ),
    )
    train_network: bool = field(
        default=False, metadata=_help("The train phase may use the network.")
    )
    eval_network: bool = field(
        default=False, metadata=_help("The judge (eval) phase may use the network.")
    )
    trace: bool = field(
        default=True,
        metadata=_help(
            "Record every process the train and prepare phases run (argv, directory, exit code) and "
            "every connect attempt into the run's evidence (exec_trace.jsonl, read by the audit), with "
            "a tracer outside the sandbox that the phase cannot switch off (a seccomp user-notification "
            "filter; strace where that cannot start); about +5-12 % CPU on a phase that runs 1,000 git "
            "commands (BENCHMARKS.md §21). Where no tracer can run, phases run untraced and the run "
            "says so."
        ),
    )
    agent_network: bool = field(
        default=False,
        metadata=_help(
            "`evotree agent --network` may give the agent's sandbox the network (an agent CLI that "
            "calls a model API needs it); without this, the agent runs offline."
        ),
    )
    # --- limits of each phase (0: unlimited)
    memory_mb: int = field(
        default=32768,
        metadata=_help("Private memory of a phase's processes in MiB (RLIMIT_DATA, each process)."),
    )
    max_processes: int = field(
        default=8192,
        metadata=_help("Processes and threads (RLIMIT_NPROC; the kernel does not limit root)."),
    )
    max_output_mb: int = field(
        default=32768, metadata=_help("Largest file a phase may write, in MiB (RLIMIT_FSIZE).")
    )
    # --- what else a phase sees, and what the judge gets of the candidate
    read_paths: list[str] = field(
        default_factory=list,
        metadata=_help(
            "Absolute folders outside the repository both phases may read (datasets, model caches)."
        ),
    )
    candidate_max_files: int = field(
        default=100_000,
        metadata=_help("Files of the candidate copied for the judge (regular files only)."),
    )
    candidate_max_mb: int = field(
        default=65536, metadata=_help("MiB of the candidate copied for the judge.")
    )
    pass_env: list[str] = field(
        default_factory=list,
        metadata=_help(
            "Names of evotree's environment variables a phase also gets (e.g. HF_TOKEN for a real "
            "training run). Every other variable is dropped: a phase gets only PATH, HOME, TMPDIR, "
            "LANG/LC_*, TZ, TERM, the GPU selection and evotree's own EVOTREE_* (sockets such as "
            "SSH_AUTH_SOCK only when listed here)."
        ),
    )

    def __post_init__(self) -> None:
        if self.mode not in SANDBOX_MODES:
            raise _value_error("sandbox.mode", f"one of {', '.join(SANDBOX_MODES)}", self.mode)
        for key in ("memory_mb", "max_processes", "max_output_mb"):
            if getattr(self, key) < 0:
                raise _value_error(f"sandbox.{key}", "0 (unlimited) or more", getattr(self, key))
        for key in ("candidate_max_files", "candidate_max_mb"):
            if getattr(self, key) < 1:
                raise _value_error(f"sandbox.{key}", "a positive integer", getattr(self, key))
        for path in self.read_paths:
            if not path.startswith("/") or ".." in path.split("/"):
                raise _value_error("sandbox.read_paths", "absolute paths without ..", path)
        for name in self.pass_env:
            if (
                not isinstance(name, str)
                or not name.replace("_", "a").isalnum()
                or not name.isascii()
                or name[0].isdigit()
                or name.startswith("EVOTREE_")
            ):
                raise _value_error(
                    "sandbox.pass_env", "names of environment variables (not EVOTREE_*)", name
                )


@dataclass
class ToolsSection:
    # --- the programs a sign-off runs (evotree.core.safegit): absolute, owned by root
    git: str = field(
        default="",
        metadata=_help(
            "Absolute path of the git that promote, approve-run, verify and harness promote run "
            '(owned by root, as is every folder above it); "": the first of /usr/bin, /bin, '
            "/usr/sbin, /sbin, /usr/local/bin. PATH is never consulted."
        ),
    )
    ssh_keygen: str = field(
        default="",
        metadata=_help(
            "Absolute path of the ssh-keygen that makes and checks signatures (same rules as git)."
        ),
    )

    def __post_init__(self) -> None:
        for key in ("git", "ssh_keygen"):
            value = getattr(self, key)
            if value and (not value.startswith("/") or ".." in value.split("/")):
                raise _value_error(f"tools.{key}", 'an absolute path without .. (or "")', value)


@dataclass
class ShareSection:
    # --- evidence that travels (evotree.harness.share, evotree.harness.provenance)
    max_object_mb: int = field(
        default=256,
        metadata=_help(
            "`evotree pull`: largest single git object or stored file accepted, in MiB (refused before it is written)."
        ),
    )
    max_total_mb: int = field(
        default=8192,
        metadata=_help("`evotree pull`: most MiB one pull may fetch and write in all."),
    )
    runner_keys: str = field(
        default="gates/runner_keys",
        metadata=_help(
            "Allowed-signers file (on the champion's commit) of the runner machines whose signed runs count here."
        ),
    )

    def __post_init__(self) -> None:
        for key in ("max_object_mb", "max_total_mb"):
            if getattr(self, key) < 1:
                raise _value_error(f"share.{key}", "a positive integer", getattr(self, key))
        if self.runner_keys.startswith("/") or ".." in self.runner_keys.split("/"):
            raise _value_error(
                "share.runner_keys", "a path inside the repository", self.runner_keys
            )


@dataclass
class SqlSection:
    # --- `evotree sql`, evotree.query and the MCP server's sql tool (evotree.harness.query)
    timeout_seconds: float = field(
        default=30.0, metadata=_help("Wall-clock limit of one SQL query.")
    )
    memory_mb: int = field(
        default=2048, metadata=_help("Memory limit of one SQL query's DuckDB, in MiB.")
    )

    def __post_init__(self) -> None:
        if not (self.timeout_seconds > 0) or self.timeout_seconds > 86400:
            raise _value_error(
                "sql.timeout_seconds", "seconds between 0 and 86400", self.timeout_seconds
            )
        if self.memory_mb < 16:
            raise _value_error("sql.memory_mb", "at least 16 (MiB)", self.memory_mb)


@dataclass
class AutopilotSection:
    # --- `evotree autopilot` (evotree.verbs.autopilot): proposals from a declared search space
    recipe: str = field(
        default="",
        metadata=_help(
            "File (in the version's tree) whose `NAME = number` lines the knobs change (e.g. recipe.toml, policy.py)."
        ),
    )
    max_proposals: int = field(
        default=8, metadata=_help("Proposals tried at most in one autopilot session.")
    )
    max_runs: int = field(
        default=0,
        metadata=_help(
            "Runs (candidates and champion re-runs) one session may start (0: no limit)."
        ),
    )
    patience: int = field(
        default=3,
        metadata=_help(
            "Post-peak rule: stop after this many proposals in a row that the gate did not pass."
        ),
    )
    futility: int = field(
        default=0,
        metadata=_help(
            "Futility rule: stop after this many proposals in a row not passed before any promotion (0: patience)."
        ),
    )
    seed: int = field(
        default=0, metadata=_help("Seed of the knob proposals' sequence (fixed in advance).")
    )
    #: ``[autopilot.knobs.NAME]``: low, high, step (numbers) and optionally file (default: ``recipe``)
    knobs: dict = field(default_factory=dict)  # type: ignore[type-arg]

    def __post_init__(self) -> None:
        import math

        for key in ("max_proposals", "max_runs", "patience", "futility", "seed"):
            if getattr(self, key) < 0:
                raise _value_error(f"autopilot.{key}", "0 or more", getattr(self, key))
        if self.recipe.startswith("/") or ".." in self.recipe.split("/"):
            raise _value_error("autopilot.recipe", "a path inside the repository", self.recipe)
        for name, knob in self.knobs.items():
            key = f"autopilot.knobs.{name}"
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                raise _value_error(
                    key,
                    "a name of letters, digits and _ (the NAME of a `NAME = number` line)",
                    name,
                )
            if not isinstance(knob, dict):
                raise _value_error(key, "a table {low, high, step}", knob)
            unknown = set(knob) - {"low", "high", "step", "file"}
            if unknown:
                raise _value_error(key, "only low, high, step and file", sorted(unknown))
            nums = [knob.get(k) for k in ("low", "high", "step")]
            if not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                for v in nums
            ):
                raise _value_error(key, "finite numbers low, high and step", knob)
            low, high, step = nums
            if not (low < high and step > 0):
                raise _value_error(key, "low < high and step > 0", knob)
            file = knob.get("file", self.recipe)
            if (
                not isinstance(file, str)
                or not file
                or file.startswith("/")
                or ".." in file.split("/")
            ):
                raise _value_error(
                    f"{key}.file", "a path inside the repository (or set autopilot.recipe)", file
                )


@dataclass
class Config:
    """The whole ``evotree.toml``; every section optional, defaults as documented."""

    workspace: WorkspaceSection = field(default_factory=WorkspaceSection)
    train: TrainSection = field(default_factory=lambda: TrainSection(command="python train.py"))
    eval: EvalSection = field(default_factory=lambda: EvalSection(command="python eval.py"))
    protect: ProtectSection = field(default_factory=ProtectSection)
    budget: BudgetSection = field(default_factory=BudgetSection)
    gates: GatesSection = field(default_factory=GatesSection)
    executor: ExecutorSection = field(default_factory=ExecutorSection)
    sandbox: SandboxSection = field(default_factory=SandboxSection)
    tools: ToolsSection = field(default_factory=ToolsSection)
    share: ShareSection = field(default_factory=ShareSection)
    sql: SqlSection = field(default_factory=SqlSection)
    autopilot: AutopilotSection = field(default_factory=AutopilotSection)
    #: ``[interventions]``: class = [path or "file:region" globs] (evotree.core.interventions); a
    #: plain table, because the order of its classes decides ties
    interventions: dict = field(default_factory=dict)  # type: ignore[type-arg]


class _FieldError(Exception):
    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


def _value_error(key: str, expected: str, actual: Any) -> _FieldError:
    return _FieldError(key, f"expected {expected}, actually: {actual!r}")


def parse_config(text: str, *, source: str = CONFIG_FILE) -> Config:
    """Parse and validate the text of an ``evotree.toml``.

    Raises :class:`ConfigError` whose message names the file, line and key and how to fix it.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = _line_from_decode_error(str(exc))
        raise ConfigError(
            f"{source}:{line or '?'}: not valid TOML: {exc}",
            fix=f"fix the syntax of {source} at line {line or '?'}",
            path=source,
            line=line,
            key=None,
        ) from None
    except ValueError as exc:  # an integer of more digits than Python converts (sys.int_info)
        raise ConfigError(
            f"{source}: a value is out of range: {str(exc)[:200]}",
            fix=f"use numbers of at most 18 digits in {source}",
            path=source,
            line=None,
            key=None,
        ) from None
    except RecursionError:  # arrays or inline tables nested thousands deep
        raise ConfigError(
            f"{source}: values are nested too deeply to read",
            fix=f"no key of {source} needs nested arrays; use a flat list",
            path=source,
            line=None,
            key=None,
        ) from None
    sections: dict[str, Any] = {}
    config_fields = {f.name: f for f in fields(Config)}
    for name, value in data.items():
        if name not in config_fields:
            raise _config_error(
                text, source, name, f"unknown section [{name}]", list(config_fields)
            )
        if name == "interventions":  # a plain table, checked by its own parser
            from evotree.core.intervention_rules import parse_rules

            if not isinstance(value, dict):
                raise _config_error(
                    text, source, name, f"[{name}] must be a table, actually: {value!r}", []
                )
            parse_rules(value, source=f"{source} [interventions]")
            sections[name] = dict(value)
            continue
        section_type = _section_type(config_fields[name])
        if not isinstance(value, dict):
            raise _config_error(
                text, source, name, f"[{name}] must be a table, actually: {value!r}", []
            )
        sections[name] = _build_section(text, source, name, section_type, value)
    return Config(**sections)


#: The resolved annotations of a configuration dataclass, once per class: resolving them compiles
#: every annotation's text, which cost more than the rest of a parse (read only, never mutated).
_type_hints = functools.cache(typing.get_type_hints)


def _section_type(f: Any) -> type:
    return _type_hints(Config)[f.name]


def _build_section(
    text: str, source: str, name: str, section_type: type, values: dict[str, Any]
) -> Any:
    hints = _type_hints(section_type)
    known = {f.name: f for f in fields(section_type)}
    kwargs: dict[str, Any] = {}
    for key, value in values.items():
        full = f"{name}.{key}"
        if key not in known:
            raise _config_error(
                text, source, full, f"unknown key {full!r}", [f"{name}.{k}" for k in known]
            )
        expected = hints[key]
        if (
            isinstance(value, int)
            and not isinstance(value, bool)
            and not _INT_MIN <= value <= _INT_MAX
        ):
            raise _config_error(
                text,
                source,
                full,
                f"{full}: {str(value)[:24]}… is out of range (at most {_INT_MAX})",
                [],
            )
        if not _type_ok(value, expected):
            raise _config_error(
                text,
                source,
                full,
                f"{full}: expected {_type_name(expected)}, actually: {value!r}",
                [],
            )
        kwargs[key] = float(value) if expected is float else value
    if name in ("train", "eval") and "command" not in kwargs:
        kwargs["command"] = getattr(Config(), name).command
    try:
        return section_type(**kwargs)
    except _FieldError as exc:
        key = exc.key if "." in exc.key else f"{name}.{exc.key}"
        raise _config_error(text, source, key, f"{key}: {exc}", []) from None


#: every integer of evotree.toml fits a signed 64-bit integer (JSON, SQLite, Parquet store it)
_INT_MIN, _INT_MAX = -(2**63), 2**63 - 1


def read_config_text(path: Path | str, *, source: str | None = None) -> str:
    """The text of an ``evotree.toml`` on disk; :class:`ConfigError` when it is not UTF-8 or unreadable."""
    shown = source or str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(
            f"{shown}: cannot be read ({exc.strerror or exc})",
            fix=f"check {shown} exists and is a readable file",
            path=shown,
            line=None,
            key=None,
        ) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ConfigError(
            f"{shown}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})",
            fix=f"save {shown} as UTF-8 (TOML files are UTF-8)",
            path=shown,
            line=line,
            key=None,
        ) from None


def _type_ok(value: Any, expected: Any) -> bool:
    origin = typing.get_origin(expected)
    if origin in (list,):
        (item,) = typing.get_args(expected)
        return isinstance(value, list) and all(_type_ok(v, item) for v in value)
    if origin in (typing.Union, types.UnionType):
        return any(_type_ok(value, a) for a in typing.get_args(expected))
    if expected is bool:
        return isinstance(value, bool)
    if expected is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if expected is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if expected is type(None):
        return value is None
    return isinstance(value, expected)


def _type_name(expected: Any) -> str:
    origin = typing.get_origin(expected)
    if origin is list:
        return f"a list of {_type_name(typing.get_args(expected)[0])}"
    return {str: "a string", int: "an integer", float: "a number", bool: "true or false"}.get(
        expected, str(expected)
    )


def _config_error(
    text: str, source: str, key: str, message: str, choices: list[str]
) -> ConfigError:
    line = locate_key(text, key)
    hint = ""
    close = difflib.get_close_matches(key, choices, n=1)
    if close:
        hint = f" (did you mean {close[0]!r}?)"
    return ConfigError(
        f"{source}:{line or '?'}: {message}{hint}",
        fix=f"edit {source} line {line or '?'} (key {key!r}); `evotree config --help` lists every key",
        path=source,
        key=key,
        line=line,
    )


_TABLE_RE = re.compile(r"^\s*\[\s*([A-Za-z0-9_.\-\"' ]+?)\s*\]\s*(#.*)?$")
_KEY_RE = re.compile(r"^\s*([A-Za-z0-9_\-\"']+)\s*=")


def locate_key(text: str, dotted: str) -> int | None:
    """1-based line where ``section.key`` (or ``[section]`` for a bare section) is defined."""
    section, _, key = dotted.partition(".")
    current = ""
    for number, line in enumerate(text.splitlines(), start=1):
        table = _TABLE_RE.match(line)
        if table:
            current = table.group(1).strip().strip("\"'")
            if not key and current == section:
                return number
            continue
        m = _KEY_RE.match(line)
        if not m:
            continue
        name = m.group(1).strip("\"'")
        if key and current == section and name == key:
            return number
        if not key and current == "" and name == section:
            return number
    return None


def _line_from_decode_error(message: str) -> int | None:
    m = re.search(r"line (\d+)", message)
    return int(m.group(1)) if m else None
