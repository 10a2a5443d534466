"""``evotree init --protocol autoresearch``: the files and rules of karpathy/autoresearch's loop.

Two cases (docs/protocols/autoresearch.md):

* **an existing autoresearch-style repository** (``train.py`` and ``prepare.py`` already there,
  karpathy/autoresearch or a fork): only ``evotree.toml`` (train.py editable; prepare.py, the
  project files and program.md protected; the data cache outside the repository readable) and
  ``program.evotree.md`` (the loop with evotree's verbs) are written; the metric is read from the
  run's summary lines (``val_bpb:``), lower is better.
* **an empty repository**: the worked example — a byte-level language model in NumPy
  (train.py), a fixed prepare.py, generated prose as the data cache (data/), and hidden
  validation and held-out texts in the judge store (the decisive evaluation is the judge's own).
"""

from __future__ import annotations

import secrets
import shlex
from pathlib import Path

from evotree.core.config_template import toml_value
from evotree.domains import write_if_absent
from evotree.domains.autoresearch.corpus import generate

__all__ = ["DEFAULT_TIME_BUDGET", "EXAMPLE_MARKER", "example_files", "materialize", "program_md"]

#: seconds of training per run of the worked example (karpathy/autoresearch: 300 on a GPU)
DEFAULT_TIME_BUDGET = 30.0
#: a line of the example's prepare.py: tells the example from a user's own repository
EXAMPLE_MARKER = "The worked example of ``evotree init --protocol autoresearch``"
_HERE = Path(__file__).resolve().parent

#: the commented templates stay literal text (a TOML writer drops comments); every value they
#: take comes through toml_value (escaped by tomli_w): _example_toml, _repo_toml
_EXAMPLE_TOML = """\
# evotree.toml of an autoresearch-style repository (docs/protocols/autoresearch.md): the agent edits
# train.py only; every run trains for a fixed time budget; the judge decides on hidden text.
[workspace]
domain = "custom"

[train]
# program.md's "uv run train.py > run.log 2>&1" and "grep ^val_bpb: run.log": evotree's runner
# gives train.py the fixed time budget (seconds of training), writes run.log and records the summary
command = {command}
# program.md: a run far over its budget is killed and counted as a failure (a crash)
timeout_seconds = {timeout}

[eval]
# the decisive evaluation: bits per byte of the candidate's model on hidden text (judge/validation.txt;
# judge/heldout.txt with `evotree run --heldout`), asked byte by byte in the judge's nested sandbox;
# evotree records -val_bpb as the score (higher is better), val_bpb itself as judge/validation_val_bpb
command = "python -P -m evotree.domains.autoresearch.judge --metric val_bpb --direction min --hidden judge --streams 20"
judge_paths = ["judge/"]
timeout_seconds = 600

[protect]
# program.md: "Modify train.py - this is the only file you edit". A version whose patch (against v0)
# touches any other file (prepare.py, data/, program.md) is refused before it runs (exit 40,
# patch_rejected); `paths` are the policy files, judged by the protected gate
base = "root"
paths = ["evotree.toml", "judge/", "gates/"]
editable = ["train.py"]

[budget]
max_runs_per_version = 12
max_wall_seconds = {wall}

[gates]
# keep/discard: the score gate against the champion's re-runs at new seeds (its noise floor)
champion_seeds = 4
min_tasks = 20

[executor]
cpus = 1.0
"""

_REPO_TOML = """\
# evotree.toml of an autoresearch-style repository (docs/protocols/autoresearch.md): the agent edits
# train.py only; every run trains for prepare.py's fixed time budget (TIME_BUDGET, 300 s) on one GPU.
[workspace]
domain = "custom"

[train]
# program.md's "uv run train.py > run.log 2>&1": evotree's runner runs train.py, writes run.log and
# records its summary. The phase runs in a sandbox with a private HOME, without the repository's
# .venv and without the network: the data cache (prepare.py reads ~/.cache/autoresearch) and the
# flash-attention kernel (~/.cache/huggingface) are linked in from the read-only read_paths below,
# and the last "python" should be an interpreter with train.py's packages, outside the repository
# and readable in the sandbox (docs/protocols/autoresearch.md, "A GPU run of karpathy/autoresearch")
command = {command}
# program.md: "If a run exceeds 10 minutes, kill it and treat it as a failure"
timeout_seconds = 600

[eval]
# the metric from the run's summary lines (val_bpb, lower is better: recorded as -val_bpb)
command = "python -P -m evotree.domains.autoresearch.judge --metric val_bpb --direction min"
judge_paths = ["judge/"]

[protect]
# program.md: train.py is the only file you edit; prepare.py (data, tokenizer, evaluate_bpb), the
# project files and program.md are read-only: a version whose patch (against v0) touches any of them
# is refused before it runs (exit 40, patch_rejected). `paths`: the policy, judged by the protected gate
base = "root"
paths = ["evotree.toml", "judge/", "gates/"]
editable = ["train.py"]

[budget]
max_runs_per_version = 12
max_wall_seconds = 1200

[gates]
# one number per run (the summary's val_bpb): the runs are the units; the champion's re-runs at
# new seeds measure the noise floor
champion_seeds = 4
min_tasks = 1

[executor]
gpus = 1.0

[sandbox]
# the data cache (prepare.py), read-only; add the Python environment that has torch if it lives
# outside the system folders, and ~/.cache/huggingface for the flash-attention kernel
read_paths = {read_paths}
"""


def _example_toml(time_budget: float, timeout: int) -> str:
    """The worked example's evotree.toml: ``time_budget`` seconds of training a run."""
    runner = f"python -P -m evotree.domains.autoresearch.runner --time-budget {time_budget:g}"
    command = f"{runner} --threads 1 --metric val_bpb -- python train.py"
    return _EXAMPLE_TOML.format(
        command=toml_value(command), timeout=toml_value(timeout), wall=toml_value(timeout + 660)
    )


def _repo_toml(home: Path) -> str:
    """An autoresearch repository's evotree.toml: the caches under ``home`` linked into the
    sandbox's HOME (quoted for the shell, then for TOML: a home of any name)."""
    caches = [f"{home}/.cache/autoresearch", f"{home}/.cache/huggingface"]
    script = (
        f"mkdir -p $HOME/.cache && ln -sfn {shlex.quote(caches[0])} $HOME/.cache/autoresearch"
        f" && ln -sfn {shlex.quote(caches[1])} $HOME/.cache/huggingface && HF_HUB_OFFLINE=1"
        " exec python -P -m evotree.domains.autoresearch.runner --metric val_bpb -- python train.py"
    )
    return _REPO_TOML.format(
        command=toml_value(f"sh -c {shlex.quote(script)}"), read_paths=toml_value(caches)
    )


def program_md(metric: str = "val_bpb") -> str:
    """The agent's program.md: karpathy/autoresearch's loop with evotree's verbs."""
    return (_HERE / "program_template.md").read_text(encoding="utf-8").replace("{metric}", metric)


def example_files(
    time_budget: float = DEFAULT_TIME_BUDGET, *, seeds: tuple[int, int] | None = None
) -> dict[str, str]:
    """The worked example's files (path -> text); ``seeds``: the hidden texts' (drawn when None)."""
    if not time_budget > 0:
        raise ValueError(f"time_budget: a positive number of seconds, actually {time_budget!r}")
    if seeds is None:
        rng = secrets.SystemRandom()
        seeds = (rng.randint(1_000_000, 2_000_000_000), rng.randint(1_000_000, 2_000_000_000))
    timeout = int(
        4 * time_budget + 120
    )  # the budget is CPU seconds: a busy machine stretches the wall clock
    return {
        "prepare.py": (_HERE / "template_prepare.py").read_text(encoding="utf-8"),
        "train.py": (_HERE / "template_train.py").read_text(encoding="utf-8"),
        "program.md": program_md(),
        "data/train.txt": generate(1, 300_000),
        "data/val.txt": generate(2, 40_000),
        "evotree.toml": _example_toml(time_budget, timeout),
        "judge/validation.txt": generate(seeds[0], 12_000),
        "judge/heldout.txt": generate(seeds[1], 12_000),
    }


def materialize(root: Path, time_budget: float = DEFAULT_TIME_BUDGET) -> list[str]:
    """Write the protocol's files into ``root`` (never overwriting a file); the paths written.

    A repository that already has ``train.py`` and ``prepare.py`` (not the worked example's) is
    an autoresearch repository: only evotree.toml and program.evotree.md are added to it.
    """
    root = Path(root)
    written: list[str] = []
    prepare = root / "prepare.py"
    own = (
        (root / "train.py").is_file()
        and prepare.is_file()
        and EXAMPLE_MARKER not in prepare.read_text(encoding="utf-8", errors="replace")
    )
    if own:
        write_if_absent(root, "evotree.toml", _repo_toml(Path.home()), written)
        write_if_absent(root, "program.evotree.md", program_md(), written)
        return written
    for rel, text in example_files(time_budget).items():
        write_if_absent(root, rel, text, written)
    return written
