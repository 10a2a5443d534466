"""The report shows every signal a run recorded (grouped, the headline first), not only `reward`,
and the single-file HTML stays small: plotly.js's basic partial bundle, inlined once."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from conftest import Cli, commit_file, git, make_repo, validate

from evotree.core.versions import create_version
from evotree.core.workspace import Workspace, init_workspace
from evotree.gates.runs import run_versions
from evotree.report.signals import (
    MAX_POINTS,
    group_of,
    order_signals,
    pick_headline,
    plot_name,
    thin,
)

# A custom recipe's own metrics (docs/domains/custom.md): no signal is named `reward`.
TRAIN = """\
import json, math, tomllib
from evotree.harness import get_recorder, seed_everything
rec = get_recorder()
seed = seed_everything()
recipe = tomllib.load(open("recipe.toml", "rb"))
skill, steps = float(recipe["skill"]), int(recipe["steps"])
for step in range(1, steps + 1):
    rec.signal(step, reward_mean=skill * step / steps + 0.01 * seed, loss=1.0 / step, train_acc=min(1.0, skill * step / 10))
json.dump({"skill": skill}, open("model.json", "w"))
"""
JUDGE = """\
import json, os
from evotree.harness import get_recorder
rec = get_recorder()
model = json.load(open(os.path.join(os.environ["EVOTREE_CANDIDATE_DIR"], "model.json")))
for i in range(20):
    rec.eval_result("validation", f"t{i}", 1.0 if i < model["skill"] * 20 else 0.0)
"""
CONFIG = """\
[train]
command = "python train.py"
headline_signal = "train_acc"
[eval]
command = "python judge/eval.py"
judge_paths = ["judge/"]
"""
STEPS = 600  # more than MAX_POINTS: the series are thinned


@pytest.fixture(scope="module")
def sws(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """v0 and v1 of a custom recipe, three seeds each: six runs recording reward_mean, loss, train_acc;
    the recipe declares train_acc its headline signal."""
    repo = make_repo(tmp_path_factory.mktemp("signals") / "w")
    (repo / "recipe.toml").write_text(f"skill = 0.5\nsteps = {STEPS}\n")
    (repo / "train.py").write_text(TRAIN)
    (repo / "judge").mkdir()
    (repo / "judge" / "eval.py").write_text(JUDGE)
    (repo / "evotree.toml").write_text(CONFIG)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "custom recipe")
    init_workspace(repo)
    ws = Workspace.open(repo)
    v1 = create_version(ws, hypothesis="more skill")
    commit_file(
        ws.root / v1.worktree, "recipe.toml", f"skill = 0.8\nsteps = {STEPS}\n", "more skill"
    )
    records = run_versions(ws, ["v0", "v1"], seeds=3, jobs=2)
    assert [r.status for r in records] == ["succeeded"] * 6, [(r.error, r.notes) for r in records]
    return ws


# ------------------------------------------------------------------ grouping and order (pure)
def test_groups_and_headline_order() -> None:
    assert (
        group_of("reward_mean") == "reward"
        and group_of("loss") == "loss"
        and group_of("train_acc") == "accuracy"
    )
    assert (
        group_of("rewards/accuracy_reward/mean") == "rewards"
        and group_of("completions/mean_length") == "completions"
    )
    assert (
        group_of("learning_rate") == "learning rate"
        and group_of("kl") == "kl"
        and group_of("zzz") == "other"
    )
    metrics = ["train_acc", "loss", "reward_mean", "entropy", "grad_norm", "zzz"]
    # no declaration, no `reward`: the first name that says reward leads
    assert pick_headline(metrics, None)[0] == "reward_mean"
    # a declared headline leads, even one whose group would come late
    headline, why = pick_headline(metrics, "loss")
    assert headline == "loss" and "declared" in why
    ordered = order_signals(metrics, "loss")
    assert [g["group"] for g in ordered] == [
        "loss",
        "reward",
        "accuracy",
        "entropy",
        "gradient",
        "other",
    ]
    assert order_signals(["b_loss", "a_loss", "val_loss"], "val_loss")[0]["metrics"] == [
        "val_loss",
        "a_loss",
        "b_loss",
    ]
    # declared but never recorded: said, and the usual fallback applies
    assert pick_headline(["reward", "loss"], "nope") == (
        "reward",
        "the signal named reward (the declared 'nope' was not recorded)",
    )
    assert pick_headline(["loss"], None)[0] is None
    assert plot_name("learning rate") == "signals-learning-rate"


def test_thin_keeps_the_shape_and_the_last_point() -> None:
    points = [[s, float(s % 7)] for s in range(1, 1001)]
    out = thin(points, 100)
    assert len(out) <= 100 and out[-1] == [1000, float(1000 % 7)]
    assert out[0] == [6, sum(s % 7 for s in range(1, 12)) / 11] and isinstance(
        out[0][0], int
    )  # steps 1..11
    assert thin(points[:50], 100) == points[:50]


# ------------------------------------------------------------------ the reports
@pytest.mark.heavy
def test_every_recorded_signal_is_in_json_markdown_and_html(sws: Workspace, tmp_path: Path) -> None:
    cli = Cli(sws.root)
    report = cli.json(
        "report", "v1", "--format", "json", "--no-audit", "--out", str(tmp_path / "r.json")
    )["report"]
    validate(report, "report")
    signals = report["curves"]["signals"]
    # the declared headline's group first, then the families in their order
    assert [g["group"] for g in signals["groups"]] == ["accuracy", "reward", "loss"]
    assert signals["headline"] == "train_acc" and "declared" in signals["headline_source"]
    assert {m for g in signals["groups"] for m in g["metrics"]} == {
        "reward_mean",
        "loss",
        "train_acc",
    }
    # the means over each version's three runs, thinned to MAX_POINTS, ending at the last step
    loss = signals["series"]["loss"]
    assert (
        set(loss) == {"v0", "v1"}
        and len(loss["v1"]) <= MAX_POINTS
        and loss["v1"][-1] == [STEPS, 1.0 / STEPS]
    )
    summary = signals["summary"]
    assert (
        summary["train_acc"]["v1"]["last"] == pytest.approx(1.0)
        and summary["train_acc"]["v0"]["runs"] == 3
    )
    assert summary["reward_mean"]["v0"]["last"] == pytest.approx(
        0.5 + 0.01
    )  # seeds 0, 1, 2: mean 0.01
    assert summary["loss"]["v0"]["steps"] == STEPS
    # no signal named `reward`: the old reward curve is empty, the signals are not
    assert report["curves"]["reward"] == {}

    md = cli.json(
        "report", "v1", "--no-audit", "--out", f"{tmp_path}/md/"
    )  # a folder: report.md and PNGs
    text = Path(md["path"]).read_text()
    for metric in ("reward_mean", "loss", "train_acc"):
        assert f"`{metric}`" in text
    assert text.index("★ `train_acc`") < text.index("`reward_mean`") < text.index("`loss`")
    plots = md["report"]["plots"]
    assert {"signals-reward", "signals-loss", "signals-accuracy"} <= set(plots)
    for name in ("signals-reward", "signals-loss", "signals-accuracy"):
        png = Path(md["path"]).parent / plots[name]
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f'src="{plots[name]}"' in text

    html = cli.json(
        "report", "v1", "--no-audit", "--format", "html", "--out", str(tmp_path / "r.html")
    )
    page = Path(html["path"]).read_text()
    rows = re.findall(r'<tr class="signal" data-metric="([^"]+)" data-group="([^"]+)"', page)
    assert rows == [("train_acc", "accuracy"), ("reward_mean", "reward"), ("loss", "loss")]
    drawn = dict(
        re.findall(
            r'<script type="application/json" data-plot="([^"]+)">(.*?)</script>', page, re.S
        )
    )
    assert {"signals-reward", "signals-loss", "signals-accuracy"} <= set(drawn)
    for name, spec in drawn.items():
        figure = json.loads(spec)
        assert {t.get("type", "scatter") for t in figure["data"]} <= {"scatter", "bar"}, (
            name
        )  # in the bundle
    loss_figure = json.loads(drawn["signals-loss"])
    assert {t["name"] for t in loss_figure["data"]} == {"v0", "v1"}
    assert loss_figure["data"][0]["y"][-1] == pytest.approx(1.0 / STEPS)


@pytest.mark.heavy
def test_html_for_six_runs_is_small_and_inlines_the_partial_bundle_once(
    sws: Workspace, tmp_path: Path
) -> None:
    from evotree.report.interactive import BUNDLE

    if not BUNDLE.is_file():
        pytest.skip(
            f"the install did not fetch plotly.js's basic bundle ({BUNDLE}): scripts/fetch-plotly-basic"
        )
    out = tmp_path / "r.html"
    Cli(sws.root).json("report", "v1", "--no-audit", "--format", "html", "--out", str(out))
    size = out.stat().st_size
    assert size < 2 * 2**20, f"{size / 2**20:.2f} MiB"
    page = out.read_text()
    assert page.count("* plotly.js (basic - minified) v") == 1  # the partial bundle, once
    assert "* plotly.js v" not in page  # not the full one
    assert page.count("<script") - page.count('<script type="application/json"') == 3
    assert "default-src 'none'" in page and "<link" not in page and "<script src" not in page
    assert len(BUNDLE.read_bytes()) < 1_300_000


def test_the_fetched_bundle_is_the_pinned_one_with_the_trace_types_used() -> None:
    from evotree.report.interactive import BUNDLE, BUNDLE_SHA256, TRACE_TYPES

    if not BUNDLE.is_file():
        pytest.skip(
            f"the install did not fetch plotly.js's basic bundle ({BUNDLE}): scripts/fetch-plotly-basic"
        )
    data = BUNDLE.read_bytes()
    assert hashlib.sha256(data).hexdigest() == BUNDLE_SHA256
    assert (BUNDLE.parent / "LICENSE.plotly").read_text().startswith("MIT License")
    text = data.decode()
    registered = set(re.findall(r'moduleType:"trace",name:"([a-z0-9]+)"', text))
    assert set(TRACE_TYPES) <= registered and "box" not in registered
    assert "</script" not in text.lower() and "<!--" not in text  # safe inline in a <script>


def test_a_bundle_with_another_hash_is_never_inlined(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import evotree.report.interactive as interactive

    forged = tmp_path / "plotly-basic.min.js"
    forged.write_text("alert('not plotly')")
    monkeypatch.setattr(interactive, "BUNDLE", forged)
    assert "alert('not plotly')" not in interactive.plotly_js()
