"""AI4AI-Bench's scoring: with `[eval.normalize] failed_as_zero = true` a crashed
formal run counts 0 in every normalized mean — the version's headline in `tree`, each side of
`compare` (and so the score gate's numbers) — instead of being dropped (a mean biased upward)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evotree.core.normalize import NormalizeSpec, normalize_score, normalized_mean

CRASH_ON_SEED_1 = (
    "import os, sys\nif os.environ.get('EVOTREE_SEED') == '1':\n    raise SystemExit(1)\n"
)


def test_normalized_mean_counts_failures_only_when_configured() -> None:
    strict = NormalizeSpec(unusable=0.0, start=0.5, optimum=1.0, failed_as_zero=True)
    lenient = NormalizeSpec(unusable=0.0, start=0.5, optimum=1.0)
    runs = [("succeeded", 1.0), ("crashed", None), ("failed", 0.9), ("cancelled", None)]
    assert normalized_mean(runs, strict) == pytest.approx((1.0 + 0.0 + 0.0) / 3)
    assert normalized_mean(runs, lenient) == pytest.approx(1.0)
    assert (
        normalized_mean([("failed", None)], lenient) is None
        and normalized_mean([("failed", None)], strict) == 0.0
    )


@pytest.mark.heavy
def test_a_crashed_formal_run_counts_zero_in_tree_and_compare(tmp_path: Path) -> None:
    from conftest import Cli, git
    from test_runs import TRAIN, make_run_repo

    from evotree.core.workspace import Workspace

    normalize = (
        "[eval.normalize]\nunusable = 0.0\nstart = 0.5\noptimum = 1.0\nfailed_as_zero = true\n"
    )
    repo = make_run_repo(tmp_path / "w", budget="max_runs_per_version = 20\n" + normalize)
    cli = Cli(repo)
    cli("run", "v0", "--seeds", "2")
    v1 = cli.json("branch", "-m", "crashes on one seed")["id"]
    tree_dir = repo / ".evotree" / "worktrees" / v1
    (tree_dir / "train.py").write_text(CRASH_ON_SEED_1 + TRAIN)
    (tree_dir / "recipe.toml").write_text("skill = 0.8\nsteps = 3\n")
    git(tree_dir, "commit", "-qam", "skill 0.8; seed 1 crashes")
    cli(
        "run", v1, "--seeds", "2", code=37
    )  # one of its two formal runs fails (exit 37: a run failed)
    spec = Workspace.open(repo).config.eval.normalization
    from evotree.core.workspace import Workspace as W

    statuses = sorted(r["status"] for r in W.open(repo).resolve(v1).runs)
    assert statuses == ["failed", "succeeded"], statuses
    tree = {v["id"]: v for v in cli.json("tree")["versions"]}
    headline = tree[v1]["headline"]
    alone = normalize_score(headline["value"], spec)  # what dropping the crash would show
    assert alone is not None and alone > 0
    assert headline["normalized"] == pytest.approx(alone / 2)  # the crash counts 0
    compare = cli.json("compare", "v0", v1)
    assert compare["normalized"]["b"] == pytest.approx(normalize_score(compare["mean_b"], spec) / 2)
    assert compare["normalized"]["a"] == pytest.approx(
        normalize_score(compare["mean_a"], spec), rel=1e-6
    )
    # a version whose every formal run crashes: no raw score, and 0 in AI4AI's normalized mean
    v2 = cli.json("branch", "-m", "crashes always")["id"]
    crash_dir = repo / ".evotree" / "worktrees" / v2
    (crash_dir / "train.py").write_text("raise SystemExit(1)\n" + TRAIN)
    git(crash_dir, "commit", "-qam", "crash")
    cli("run", v2, "--seeds", "1", code=37)
    stats = cli.json("report", "--tree")
    setting = stats["settings"][0]
    rows = {r["id"]: r for r in setting["versions"]}
    assert rows[v1]["normalized"] == pytest.approx(alone / 2) and rows[v2]["normalized"] == 0.0
    assert (
        rows[v2]["score"] is None and not rows[v2]["valid"]
    )  # no raw score: never scored 0 on the raw scale
    assert setting["normalized"] == {
        "mean": pytest.approx(alone / 4),
        "counted": 2,
        "candidates": 2,
        "failed_as_zero": True,
    }
    assert stats["rates"]["normalized"]["mean"] == pytest.approx(alone / 4)
    assert "normalized mean of the candidates" in cli("report", "--tree").output


# ---------------------------------------------------------------------------- intervention classes by what the diff changes
def _classify(tmp_path: Path, before: str, after: str) -> object:
    import tomllib

    import pygit2
    from conftest import git, make_repo

    from evotree.core.interventions import classify_changes, diff_units, parse_rules
    from evotree.domains.protocols import AI4AI_TRAIN, _AI4AI_TOML

    rules = parse_rules(tomllib.loads(_AI4AI_TOML.format(start=0.79))["interventions"])
    repo_dir = make_repo(tmp_path / "r")
    (repo_dir / "train.py").write_text(before or AI4AI_TRAIN)
    git(repo_dir, "add", "-A")
    git(repo_dir, "commit", "-qm", "before")
    old = git(repo_dir, "rev-parse", "HEAD").strip()
    (repo_dir / "train.py").write_text(after)
    git(repo_dir, "commit", "-qam", "after")
    repo = pygit2.Repository(str(repo_dir))
    units = diff_units(repo, repo.get(old).tree, repo.head.peel(pygit2.Commit).tree)
    return classify_changes(units, rules)


LOOP = "def train_own(rows, lr):\n    w = 0.0\n    for x in rows:\n        w -= lr * (w - x)\n    return w\n"


def test_a_crash_or_an_io_hack_in_train_py_is_not_algorithm_level(tmp_path: Path) -> None:
    from evotree.domains.protocols import AI4AI_TRAIN

    crash = _classify(tmp_path / "a", "", "raise SystemExit(0)\n" + AI4AI_TRAIN)
    assert crash.primary == "other" and "algorithm" not in crash.classes
    io_hack = _classify(
        tmp_path / "b",
        LOOP,
        LOOP.replace("    return w\n", "    open('/tmp/x', 'w').write('1')\n    return w\n"),
    )
    assert io_hack.primary == "other", io_hack  # inside a function, and still not the learning
    exits = _classify(
        tmp_path / "c", LOOP, LOOP.replace("    return w\n", "    sys.exit(3)\n    return w\n")
    )
    assert exits.primary == "other"
    comment = _classify(
        tmp_path / "d", LOOP, LOOP.replace("    w = 0.0\n", "    # start at zero\n    w = 0.0\n")
    )
    assert comment.primary == "other"
    # the learning itself: a change to the update of a function of train.py
    update = _classify(
        tmp_path / "e", LOOP, LOOP.replace("w -= lr * (w - x)", "w -= 0.5 * lr * (w - x) ** 3")
    )
    assert update.primary == "algorithm", update
    # a top-level change of the script (how the fixed trainer is called) is not algorithm-level either
    top = _classify(
        tmp_path / "f",
        "",
        AI4AI_TRAIN.replace('seed=int(os.environ.get("EVOTREE_SEED", "0"))', "seed=1"),
    )
    assert top.primary == "other"


# ---------------------------------------------------------------------------- finalize's outcome, AI4AI's mean over trials
def test_a_search_without_a_held_out_score_counts_zero_in_the_trials_mean() -> None:
    from types import SimpleNamespace

    from evotree.gates.finalize import final_normalized, trials_mean

    def ws(**normalize: object) -> object:
        spec = NormalizeSpec(unusable=0.5, start=0.79, optimum=0.9, **normalize)  # type: ignore[arg-type]
        return SimpleNamespace(config=SimpleNamespace(eval=SimpleNamespace(normalization=spec)))

    strict, lenient = ws(failed_as_zero=True), ws()
    assert final_normalized(strict, "finalized", 0.9) == pytest.approx(1.0)
    assert final_normalized(strict, "finalized", 0.79) == pytest.approx(0.1)
    assert final_normalized(strict, "heldout_failed", None) == 0.0
    assert final_normalized(strict, "no_ok_submit", None) == 0.0
    assert (
        final_normalized(strict, "not_finalized", None) is None
    )  # evotree's failure is no outcome
    assert final_normalized(lenient, "heldout_failed", None) is None
    outcomes = [
        {"status": "finalized", "normalized": 0.4},
        {"status": "heldout_failed", "normalized": 0.0},
        {"status": "finalized", "normalized": 0.2},
        {"status": "not_finalized"},
        None,
        {"status": "heldout_failed", "normalized": None},
    ]
    mean = trials_mean(outcomes)
    assert mean["mean"] == pytest.approx(0.2) and mean["trials"] == 3 and mean["pending"] == 2
    assert mean["unscored"] == 1 and mean["statuses"] == {"finalized": 2, "heldout_failed": 2}
    assert trials_mean([])["mean"] is None


def test_the_quick_headline_takes_the_place_of_the_hidden_one_only(tmp_path: Path) -> None:
    """verbs.policy.shown while hidden: the judge's headline is taken out and the train phase's
    headline signal put in its place, in dicts and in dataclasses; a shown headline is kept."""
    from types import SimpleNamespace

    import pyarrow as pa
    import pyarrow.parquet as pq

    from evotree.verbs.policy import shown

    # what with_quick_metrics reads of a workspace: the trusted configuration, the runs directory
    ws = SimpleNamespace(
        root=tmp_path,
        config=SimpleNamespace(
            train=SimpleNamespace(headline_signal="quick_accuracy"),
            workspace=SimpleNamespace(runs_dir="runs"),
        ),
    )
    run_dir = tmp_path / "runs" / "v0-s0-x"
    run_dir.mkdir(parents=True)
    pq.write_table(
        pa.table(
            {
                "run_id": ["forged"] * 3,
                "phase": ["train", "train", "eval"],
                "step": [1, 2, 9],
                "metric": ["quick_accuracy"] * 3,
                "value": [0.5, 0.7, 0.99],
            }
        ),
        run_dir / "signals.parquet",
    )
    data = {
        "runs": [
            {
                "run_id": "v0-s0-x",
                "version": "v0",
                "seed": 0,
                "status": "succeeded",
                "headline": {"metric": "validation/mean_score", "value": 0.81},
            },
            {
                "run_id": "v0-s1-y",
                "version": "v0",
                "seed": 1,
                "status": "succeeded",
                "headline": {"metric": "validation/mean_score", "value": 0.8},
            },
        ]
    }
    out = shown(ws, data, hide=True)
    first, second = out["runs"]
    assert first["headline"] == {
        "metric": "quick/quick_accuracy",
        "value": 0.7,
        "phase": "train",
    }  # its last step
    assert second["headline"] is None  # no signal recorded: nothing, and never the judge's
    assert (
        data["runs"][0]["headline"]["metric"] == "validation/mean_score"
    )  # the input is not changed
    assert shown(ws, data, hide=False) is data  # not hidden: as it is
