"""``evotree.toml``'s sections of where and how the phases run: ``[executor]`` (local, Ray or
Slurm), ``[sandbox]`` (bubblewrap and its limits), ``[tools]`` (the programs a sign-off runs),
``[share]`` (pushed and pulled evidence) and ``[sql]`` (the read-only query's limits). Each field
carries its default and its help; each section checks its values when built
(:func:`evotree.core.config.parse_config` names the key and line)."""

from __future__ import annotations

from dataclasses import dataclass, field

from evotree.core.config_fields import field_help, value_error

__all__ = [
    "EXECUTORS",
    "SANDBOX_MODES",
    "ExecutorSection",
    "SandboxSection",
    "ShareSection",
    "SqlSection",
    "ToolsSection",
]

EXECUTORS = ("local", "ray", "slurm")


SANDBOX_MODES = ("bwrap", "off")


@dataclass
class ExecutorSection:
    kind: str = field(
        default="local", metadata=field_help("Executor: local (processes), ray or slurm.")
    )
    jobs: int = field(
        default=1, metadata=field_help("Runs executed at once by the local executor.")
    )
    address: str = field(
        default="", metadata=field_help("Ray cluster address ('' starts a local one).")
    )
    cpus: float = field(default=1.0, metadata=field_help("CPUs per run (Ray resources)."))
    gpus: float = field(default=0.0, metadata=field_help("GPUs per run (Ray resources)."))
    memory_gb: float = field(
        default=0.0, metadata=field_help("Memory per run in GiB (0: unspecified).")
    )
    evidence_uri: str = field(
        default="",
        metadata=field_help(
            "Where Ray workers write evidence: a path or fsspec URL all nodes reach "
            "('' = .evotree/store, one machine only)."
        ),
    )
    max_retries: int = field(
        default=1,
        metadata=field_help(
            "Ray: new attempts of a run whose worker or node died (not of failed code)."
        ),
    )
    sync_seconds: float = field(
        default=10.0,
        metadata=field_help("Ray: how often a worker copies its partial evidence to the store."),
    )

    def __post_init__(self) -> None:
        if self.kind not in EXECUTORS:
            raise value_error("executor.kind", f"one of {', '.join(EXECUTORS)}", self.kind)
        if self.jobs < 1:
            raise value_error("executor.jobs", "at least 1", self.jobs)
        for key in ("cpus", "gpus", "memory_gb"):
            if getattr(self, key) < 0:
                raise value_error(f"executor.{key}", "0 or more", getattr(self, key))
        if self.max_retries < 0:
            raise value_error("executor.max_retries", "0 or more", self.max_retries)
        if self.sync_seconds <= 0:
            raise value_error(
                "executor.sync_seconds", "a positive number of seconds", self.sync_seconds
            )


@dataclass
class SandboxSection:
    # --- isolation of the train and judge phases (evotree.harness.sandbox)
    mode: str = field(
        default="bwrap",
        metadata=field_help(
            '"bwrap": every phase runs in a bubblewrap sandbox (runs are refused where it cannot '
            'start); "off": no isolation, and every run and gate report says so.'
        ),
    )
    train_network: bool = field(
        default=False, metadata=field_help("The train phase may use the network.")
    )
    eval_network: bool = field(
        default=False, metadata=field_help("The judge (eval) phase may use the network.")
    )
    trace: bool = field(
        default=True,
        metadata=field_help(
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
        metadata=field_help(
            "`evotree agent --network` may give the agent's sandbox the network (an agent CLI that "
            "calls a model API needs it); without this, the agent runs offline."
        ),
    )
    # --- limits of each phase (0: unlimited)
    memory_mb: int = field(
        default=32768,
        metadata=field_help(
            "Private memory of a phase's processes in MiB (RLIMIT_DATA, each process)."
        ),
    )
    max_processes: int = field(
        default=8192,
        metadata=field_help(
            "Processes and threads (RLIMIT_NPROC; the kernel does not limit root)."
        ),
    )
    max_output_mb: int = field(
        default=32768, metadata=field_help("Largest file a phase may write, in MiB (RLIMIT_FSIZE).")
    )
    # --- what else a phase sees, and what the judge gets of the candidate
    read_paths: list[str] = field(
        default_factory=list,
        metadata=field_help(
            "Absolute folders outside the repository both phases may read (datasets, model caches)."
        ),
    )
    candidate_max_files: int = field(
        default=100_000,
        metadata=field_help("Files of the candidate copied for the judge (regular files only)."),
    )
    candidate_max_mb: int = field(
        default=65536, metadata=field_help("MiB of the candidate copied for the judge.")
    )
    pass_env: list[str] = field(
        default_factory=list,
        metadata=field_help(
            "Names of evotree's environment variables a phase also gets (e.g. HF_TOKEN for a real "
            "training run). Every other variable is dropped: a phase gets only PATH, HOME, TMPDIR, "
            "LANG/LC_*, TZ, TERM, the GPU selection and evotree's own EVOTREE_* (sockets such as "
            "SSH_AUTH_SOCK only when listed here)."
        ),
    )

    def __post_init__(self) -> None:
        if self.mode not in SANDBOX_MODES:
            raise value_error("sandbox.mode", f"one of {', '.join(SANDBOX_MODES)}", self.mode)
        for key in ("memory_mb", "max_processes", "max_output_mb"):
            if getattr(self, key) < 0:
                raise value_error(f"sandbox.{key}", "0 (unlimited) or more", getattr(self, key))
        for key in ("candidate_max_files", "candidate_max_mb"):
            if getattr(self, key) < 1:
                raise value_error(f"sandbox.{key}", "a positive integer", getattr(self, key))
        for path in self.read_paths:
            if not path.startswith("/") or ".." in path.split("/"):
                raise value_error("sandbox.read_paths", "absolute paths without ..", path)
        for name in self.pass_env:
            if (
                not isinstance(name, str)
                or not name.replace("_", "a").isalnum()
                or not name.isascii()
                or name[0].isdigit()
                or name.startswith("EVOTREE_")
            ):
                raise value_error(
                    "sandbox.pass_env", "names of environment variables (not EVOTREE_*)", name
                )


@dataclass
class ToolsSection:
    # --- the programs a sign-off runs (evotree.core.safegit): absolute, owned by root
    git: str = field(
        default="",
        metadata=field_help(
            "Absolute path of the git that promote, approve-run, verify and analyzers promote run "
            '(owned by root, as is every folder above it); "": the first of /usr/bin, /bin, '
            "/usr/sbin, /sbin, /usr/local/bin. PATH is never consulted."
        ),
    )
    ssh_keygen: str = field(
        default="",
        metadata=field_help(
            "Absolute path of the ssh-keygen that makes and checks signatures (same rules as git)."
        ),
    )

    def __post_init__(self) -> None:
        for key in ("git", "ssh_keygen"):
            value = getattr(self, key)
            if value and (not value.startswith("/") or ".." in value.split("/")):
                raise value_error(f"tools.{key}", 'an absolute path without .. (or "")', value)


@dataclass
class ShareSection:
    # --- evidence that travels (evotree.harness.share, evotree.harness.provenance)
    max_object_mb: int = field(
        default=256,
        metadata=field_help(
            "`evotree pull`: largest single git object or stored file accepted, in MiB (refused before it is written)."
        ),
    )
    max_total_mb: int = field(
        default=8192,
        metadata=field_help("`evotree pull`: most MiB one pull may fetch and write in all."),
    )
    runner_keys: str = field(
        default="gates/runner_keys",
        metadata=field_help(
            "Allowed-signers file (on the champion's commit) of the runner machines whose signed runs count here."
        ),
    )

    def __post_init__(self) -> None:
        for key in ("max_object_mb", "max_total_mb"):
            if getattr(self, key) < 1:
                raise value_error(f"share.{key}", "a positive integer", getattr(self, key))
        if self.runner_keys.startswith("/") or ".." in self.runner_keys.split("/"):
            raise value_error("share.runner_keys", "a path inside the repository", self.runner_keys)


@dataclass
class SqlSection:
    # --- `evotree sql`, evotree.query and the MCP server's sql tool (evotree.harness.query)
    timeout_seconds: float = field(
        default=30.0, metadata=field_help("Wall-clock limit of one SQL query.")
    )
    memory_mb: int = field(
        default=2048, metadata=field_help("Memory limit of one SQL query's DuckDB, in MiB.")
    )

    def __post_init__(self) -> None:
        if not (self.timeout_seconds > 0) or self.timeout_seconds > 86400:
            raise value_error(
                "sql.timeout_seconds", "seconds between 0 and 86400", self.timeout_seconds
            )
        if self.memory_mb < 16:
            raise value_error("sql.memory_mb", "at least 16 (MiB)", self.memory_mb)
