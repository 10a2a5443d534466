"""`[train] prepare`: a phase before training that alone may write the shared cache.

The prepare command (the champion's policy) runs in a sandbox with the workspace's cache
(`.evotree/cache`, `$EVOTREE_CACHE_DIR`) writable; the train phase -- the candidate's code --
then reads the cache and cannot change it, so no version alters what later runs start from.
Real bwrap, real runs of a custom domain.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import Cli, git, make_repo
from evotree.core.workspace import init_workspace
from evotree.harness.sandbox import check_sandbox

pytestmark = pytest.mark.skipif(not check_sandbox().ok, reason="bubblewrap cannot start here")

TRAIN = """\
import json, os
from evotree.harness import get_recorder
rec = get_recorder()
cache = os.environ["EVOTREE_CACHE_DIR"]
seen = open(os.path.join(cache, "base.txt")).read().strip()
try:
    open(os.path.join(cache, "base.txt"), "w").write("poisoned")
    wrote = True
except OSError:
    wrote = False
rec.signal(1, reward_mean=1.0 if seen == "warm" else 0.0)
json.dump({"seen": seen, "wrote": wrote}, open("model.json", "w"))
"""

JUDGE = """\
import json, os
from evotree.harness import get_recorder
rec = get_recorder()
model = json.load(open(os.path.join(os.environ["EVOTREE_CANDIDATE_DIR"], "model.json")))
rec.eval_result("validation", "t0", 1.0 if model["seen"] == "warm" and not model["wrote"] else 0.0)
"""

CONFIG = """\
[train]
command = "python train.py"
prepare = "test -f $EVOTREE_CACHE_DIR/base.txt || echo warm > $EVOTREE_CACHE_DIR/base.txt; echo prepared"

[eval]
command = "python judge/eval.py"
judge_paths = ["judge/"]
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "ws")
    (repo / "train.py").write_text(TRAIN)
    (repo / "judge").mkdir()
    (repo / "judge" / "eval.py").write_text(JUDGE)
    (repo / "evotree.toml").write_text(CONFIG)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "trainer, judge, prepare")
    init_workspace(repo)
    return repo


def test_prepare_writes_the_cache_and_the_train_phase_only_reads_it(repo: Path) -> None:
    runs = Cli(repo).json("run", "v0", "--seeds", "2")["runs"]
    assert [r["status"] for r in runs] == ["succeeded", "succeeded"], runs
    for run in runs:
        assert set(run["phases"]) == {"prepare", "train", "eval"}
        assert run["headline"]["value"] == 1.0  # saw the warm cache, and could not write it
        model = json.loads(
            (repo / ".evotree" / "runs" / run["run_id"] / "candidate" / "model.json").read_text()
        )
        assert model == {"seen": "warm", "wrote": False}
    assert (repo / ".evotree" / "cache" / "base.txt").read_text().strip() == "warm"


def test_a_failing_prepare_stops_the_run_before_training(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "failing")
    (repo / "train.py").write_text(TRAIN)
    (repo / "judge").mkdir()
    (repo / "judge" / "eval.py").write_text(JUDGE)
    (repo / "evotree.toml").write_text(CONFIG.replace('echo prepared"', 'exit 3"'))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a prepare that fails")
    init_workspace(repo)
    (run,) = Cli(repo).json("run", "v0", code=37)["runs"]  # 37: a run of the request failed
    assert run["status"] == "failed" and "prepare phase exited with 3" in (run["error"] or "")
    assert "train" not in run["phases"]
