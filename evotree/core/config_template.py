"""The commented ``evotree.toml`` that ``evotree init --domain DOMAIN`` writes, and
:func:`toml_value`, through which every templated TOML file (this one and the domains') takes the
values it interpolates, escaped by tomli_w. The parser and the sections' defaults and help are
:mod:`evotree.core.config`."""

from __future__ import annotations

from typing import Any

import tomli_w

from evotree.core.config_phases import DOMAINS
from evotree.core.errors import ConfigError, EvotreeError
from evotree.core.safegit import system_program

__all__ = ["render_template", "toml_value"]

_DOMAIN_COMMANDS = {
    "custom": ("python train.py", "python eval.py"),
    "math": ("python -P -m evotree.domains.math.train", "python -P -m evotree.domains.math.judge"),
    "gym": ("python -P -m evotree.domains.gym.train", "python -P -m evotree.domains.gym.judge"),
}
#: ``[train] prepare`` of a new workspace: the math domain's warm-up, built once into the shared cache
_DOMAIN_PREPARE = {"math": "python -P -m evotree.domains.math.warmup ."}

_TEMPLATE = """\
# evotree workspace configuration.
#
# evotree reads this file from the CHAMPION's tree, never from a candidate's branch:
# a candidate version cannot change what judges it. Change it on the champion (or promote a
# version that changes it) for a new policy to take effect. Every key is optional.

[workspace]
# Domain template: "custom", "math" (TRL GRPO on a tiny local model) or "gym" (policy as code).
domain = {domain}
# Where version worktrees are created (relative to the repository root).
worktree_dir = ".evotree/worktrees"
# Where run evidence is written (ignored by git).
runs_dir = ".evotree/runs"

[train]
# Train phase: runs in the version's exported tree (no .git), sees only the train split.
command = {train}
timeout_seconds = 3600
# Run first, with the workspace's shared cache ($EVOTREE_CACHE_DIR) writable; the train phase
# then reads the cache only (a candidate's code cannot change what later runs start from).
prepare = {prepare}
# The signal your train script records that reports show first (e.g. "reward_mean"); empty: reward.
headline_signal = ""

[eval]
# Judge phase: runs in the CHAMPION's tree (never the candidate's), after training has ended;
# the only phase that reads hidden splits. The candidate's exported tree is $EVOTREE_CANDIDATE_DIR.
command = {eval}
timeout_seconds = 3600
# Judge code and hidden splits (validation, held-out): never exported into a candidate's run.
judge_paths = ["judge/"]
# EvoPolicyGym's visibility boundary (`evotree init --protocol evopolicygym` sets it): validation and
# held-out figures left out of every output until `evotree finalize` (docs/domains/gym.md).
hide_until_finalize = false
# The judge phase runs the fixed training (RSIBench-Data, `evotree init --protocol rsibench-data`):
# its time, measured by evotree, counts as training (docs/protocols/budgets.md).
judge_trains = false
# finalize retrains the selected version clean (train phase again, fresh seed, its own account)
# before its one held-out evaluation (AI4AI-Bench, `evotree init --protocol ai4ai`).
finalize_retrain = false
# A normalized score beside the raw one (AI4AI-Bench's scale): raw metric values of an unusable
# model (0), the starting algorithm (start_score, 0.1) and the optimum (1.0); direction "max"
# or "min"; failed_as_zero = true scores a failed formal run 0. Empty: none. E.g.
# normalize = {{ unusable = 0.0, start = 0.42, optimum = 0.9, direction = "max", failed_as_zero = true }}
normalize = {{}}

[protect]
# Paths a candidate version may not change: the judge, the gate policy, hidden data.
paths = ["evotree.toml", "judge/", "gates/"]
# Patch gate: a candidate's diff may not add data, weights or binaries, files over
# max_file_bytes, more than max_row_lines lines of one row shape (records pasted into code)
# or lines over max_line_chars. patch_allow exempts paths from the gate.
max_file_bytes = 1000000
max_row_lines = 200
max_line_chars = 20000
patch_allow = []
# Payloads however encoded: numeric literals per added line and per file (weights as a JSON
# array), characters of base64/hex runs and byte escapes per file.
max_line_numbers = 128
max_file_numbers = 1000
max_encoded_chars = 2048
# The patch is measured from the pristine base: "root" (the root version's first commit),
# "champion", a root version id or a full commit id; it is checked before any run trains it.
base = "root"
# Allowlists (empty: off): the only paths a patch may change (globs; ** crosses folders), and
# "FILE:KEY-GLOB" entries for a TOML/JSON file that may change only at those dotted keys.
editable = []
editable_keys = []

[budget]
# A run that would exceed a budget is refused before it starts; one that exceeds while
# running is stopped and marked budget_exceeded. Failed runs are charged; refused ones are not.
# Wall-clock seconds of one run (train + judge).
max_wall_seconds = 3600
# Per version (0: unlimited): runs (seeds included), episodes (recorded rollouts; EvoPolicyGym
# uses 128), training steps, wall-clock hours, GPU hours.
max_runs_per_version = 20
max_episodes = {max_episodes}
max_steps = 0
max_wall_hours = 0.0
max_gpu_hours = 0.0
# Over the whole tree (0: unlimited).
tree_max_episodes = 0
tree_max_steps = 0
tree_max_wall_hours = 0.0
tree_max_gpu_hours = 0.0
# Money (docs/protocols/budgets.md): prices per GPU hour and CPU hour ([executor].gpus / cpus per
# run x its wall hours), USD per version and over the tree (runs + agent spend recorded with
# `evotree spend record`), and the search clock (hours from init). 0: free / unlimited. A run is
# reserved at its worst-case cost before it starts; one that would cross a budget is refused.
usd_per_gpu_hour = 0.0
usd_per_cpu_hour = 0.0
max_usd = 0.0
tree_max_usd = 0.0
tree_max_search_hours = 0.0
# Charge invalid candidates (train exit 65) like other runs (default: they cost nothing).
charge_invalid = false

[gates]
# Score gate (docs/gates.md): one-sided p (delta <= min_delta) below alpha, spent over
# sequential looks at min_seeds x 1, 2, 3, 4, 6, 8, 12, 16 ... candidate seeds (up to the run
# budget less champion_seeds) with group-sequential thresholds, on at least min_tasks tasks,
# against the champion re-run champion_seeds times since its promotion; the run-to-run
# spread is pooled over the comparable runs of the tree. A comparison stops (futile) when even
# a true delta one SE above the observed one would pass at the last look with under 40 %.
# min_delta: a change must be better by more than this (score units; 0.002 = 0.2 points of a
# 0-1 score) so that changes within noise of zero are not promoted on a first comparison.
min_delta = 0.002
alpha = 0.025
min_tasks = 20
min_seeds = 1
champion_seeds = 4
bootstrap_samples = 10000
# Promotion needs a human's signed approval, checked against this allowed-signers file
# (read from the champion's tree).
require_signoff = true
allowed_signers = "gates/allowed_signers"
# Runs budgeted above this many seconds need `evotree approve-run` first (0: never).
train_approval_above_seconds = 0

[executor]
# "local" runs processes on this machine; "ray" schedules runs on a Ray cluster.
kind = "local"
jobs = 1
address = ""
cpus = 1.0
gpus = 0.0
memory_gb = 0.0
# Ray: evidence store all nodes can reach (a path, or an fsspec URL such as s3://bucket/evotree);
# "" = .evotree/store on this machine. Worker/node deaths are retried max_retries times.
evidence_uri = ""
max_retries = 1
sync_seconds = 10.0

[sandbox]
# Every train and judge phase runs in a bubblewrap sandbox: it sees the system read-only, the
# Python environment read-only, its own run folders and nothing else (no repository, no other
# worktree, no home directory, no judge data); no network; its processes end with the phase.
# Where bubblewrap cannot start (apt-get install bubblewrap), `evotree run` refuses.
# "off" runs phases without isolation; runs and gate reports then say so.
mode = "bwrap"
train_network = false
eval_network = false
# record every process the train phase runs and every connect attempt (a tracer outside the
# sandbox the phase cannot switch off) into the run's evidence, for the audit; ~+5-12 % CPU
trace = true
# `evotree agent --network` (an agent CLI calling a model API needs it); off: agents run offline.
agent_network = false
# Limits of each phase (0: unlimited): private memory per process (MiB), processes and
# threads (not applied to root by the kernel), largest file written (MiB).
memory_mb = 32768
max_processes = 8192
max_output_mb = 32768
# Absolute folders outside the repository that both phases may read (datasets, model caches).
read_paths = []
# Environment variables of evotree's a phase also gets; every other one is dropped (a phase gets
# PATH, HOME, TMPDIR, LANG/LC_*, TZ, TERM, the GPU selection and EVOTREE_*). E.g. ["HF_TOKEN"].
pass_env = []
# The judge reads a copy of the candidate's folder: regular files only (links, FIFOs and
# devices are refused and noted on the run), at most this many files and MiB.
candidate_max_files = 100000
candidate_max_mb = 65536

[tools]
# The git and ssh-keygen that sign-offs (promote, approve-run, verify, analyzers promote) run:
# absolute paths owned by root, resolved when the workspace was initialized; PATH is never
# consulted for them. "" looks in /usr/bin, /bin, /usr/sbin, /sbin, /usr/local/bin.
git = {git}
ssh_keygen = {ssh_keygen}

[share]
# `evotree pull`: the largest object (a run over 256 MiB goes to a store, not git) and the most
# MiB one pull accepts; over either, refused before it is written.
max_object_mb = 256
max_total_mb = 8192
# Runs recorded by another machine count here only when signed by a key listed in this
# allowed-signers file (on the champion's commit; docs/cluster.md): team machines, Ray nodes.
runner_keys = "gates/runner_keys"

[sql]
# `evotree sql` and the agents' sql tool: a query past these limits stops with a clear error.
timeout_seconds = 30.0
memory_mb = 2048

[autopilot]
# `evotree autopilot`: the search space it proposes from, one `NAME = number` line of the recipe
# file per knob, moved by whole steps within [low, high] (docs/gates.md, "The decision goal").
recipe = ""
max_proposals = 8
# Runs one session may start, champion re-runs included (0: no limit).
max_runs = 0
# Post-peak: stop after this many proposals in a row the gates did not pass since a promotion.
patience = 3
# Futility: as many before any promotion (0: patience).
futility = 0
# The knob proposals' sequence is drawn from this seed, fixed in advance.
seed = 0
# The knobs: none here; replace this line with one table per knob, e.g.
knobs = {{}}
# [autopilot.knobs.learning_rate]
# low = 1e-4
# high = 2e-3
# step = 2.5e-4

# [interventions]
# What kind of change each version makes, for the search statistics (evotree report --tree):
# class = [path globs, or "FILE:REGION" globs], the first class whose rule matches a changed
# path wins (docs/protocols/search-statistics.md). Uncomment to classify, e.g.:
# algorithm = ["train.py:def loss*", "objective/**"]
# hyperparameter = ["recipe.toml", "*.yaml"]
# data = ["data/**", "build_data.py"]
"""


def render_template(domain: str = "custom") -> str:
    """The commented ``evotree.toml`` written by ``evotree init --domain DOMAIN``."""
    if domain not in DOMAINS:
        raise ConfigError(
            f"unknown domain {domain!r}; expected one of {', '.join(DOMAINS)}",
            fix="pass --domain custom, math or gym",
            key="workspace.domain",
        )
    train, evaluate = _DOMAIN_COMMANDS[domain]
    max_episodes = 128 if domain == "gym" else 0
    prepare = _DOMAIN_PREPARE.get(domain, "")
    values = {
        "domain": domain,
        "train": train,
        "eval": evaluate,
        "max_episodes": max_episodes,
        "prepare": prepare,
        "git": _system_path("git"),
        "ssh_keygen": _system_path("ssh-keygen"),
    }
    return _TEMPLATE.format(**{name: toml_value(value) for name, value in values.items()})


def toml_value(value: Any) -> str:
    """``value`` written as a TOML value by tomli_w (a string quoted and escaped, a number, a
    list). The commented templates (``evotree.toml`` and the domains' files) keep their comments
    for the user as literal text, which a TOML writer would drop, and take every value they
    interpolate from here, so that none is escaped by hand. A list stays on one line."""
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    return tomli_w.dumps({"v": value}).removeprefix("v = ").removesuffix("\n")


def _system_path(name: str) -> str:
    """The system program ``name`` recorded in a new ``[tools]`` ("" when there is none)."""
    try:
        return system_program(name)
    except EvotreeError:
        return ""
