"""Seeds are real: ``evotree.harness.seeding`` (``seed_everything``, ``run_seed``, ``derive_seed``),
and the run's seed reaching a custom domain's train phase through ``evotree run``. The bundled
domains are tested in test_domain_math.py and test_domain_gym.py (runs at two seeds differ, the
same seed repeats)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import commit_file
from test_runs import make_run_repo

from evotree.core.versions import create_version
from evotree.core.workspace import Workspace
from evotree.gates.runs import run_versions
from evotree.harness import seed_everything
from evotree.harness.layout import ENV_SEED
from evotree.harness.seeding import SEED_MAX, derive_seed, run_seed


def draws() -> tuple[list[float], list[float]]:
    return [random.random() for _ in range(3)], np.random.rand(3).tolist()


def test_seed_everything_reads_the_run_seed_and_seeds_random_numpy_and_torch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    torch = pytest.importorskip("torch")
    monkeypatch.setenv(ENV_SEED, "7")
    assert seed_everything() == 7
    first = (*draws(), torch.rand(3).tolist())
    assert seed_everything(7) == 7
    assert (
        *draws(),
        torch.rand(3).tolist(),
    ) == first  # the same seed: the same numbers, in all three
    monkeypatch.setenv(ENV_SEED, "8")
    assert seed_everything() == 8
    other = (*draws(), torch.rand(3).tolist())
    assert all(
        a != b for a, b in zip(first, other, strict=True)
    )  # another seed: other numbers, in all three
    monkeypatch.delenv(ENV_SEED)
    assert run_seed() == 0 and seed_everything() == 0  # outside `evotree run`: seed 0
    assert run_seed(default=5) == 5


def test_bad_seeds_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    for raw in ("x", "-1", "1.5"):
        monkeypatch.setenv(ENV_SEED, raw)
        with pytest.raises(ValueError, match=ENV_SEED):
            run_seed()
    with pytest.raises(ValueError, match="seed"):
        seed_everything(SEED_MAX + 1)
    with pytest.raises(ValueError, match="seed"):
        seed_everything(-1)
    with pytest.raises(TypeError):
        seed_everything(True)  # type: ignore[arg-type]


def test_derive_seed_is_stable_across_processes_and_separates_its_parts() -> None:
    # hash randomization does not touch it: the same in another interpreter with another PYTHONHASHSEED
    code = "from evotree.harness.seeding import derive_seed; print(derive_seed('math/train', 0, 1))"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONHASHSEED": "4242"},
    ).stdout
    assert int(out) == derive_seed("math/train", 0, 1)
    seeds = {derive_seed("math/train", r, s) for r in range(5) for s in range(5)}
    assert len(seeds) == 25 and all(0 <= s < 2**31 for s in seeds)
    assert derive_seed(1, 2) != derive_seed(2, 1) and derive_seed("1") != derive_seed(1)
    assert 0 <= derive_seed("x", bits=8) < 256


def test_torch_false_does_not_import_torch() -> None:
    code = (
        "import sys; from evotree.harness import seed_everything; seed_everything(3, torch=False); "
        "print('torch' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={k: v for k, v in os.environ.items() if k != ENV_SEED},
    ).stdout
    assert out.strip() == "False"


#: A custom train script that draws its rewards from Python's and NumPy's generators after
#: seed_everything(): the run's seed decides them.
SEEDED_TRAIN = """\
import random
import numpy as np
from evotree.harness import get_recorder, seed_everything
seed = seed_everything()
rec = get_recorder()
for step in range(1, 4):
    rewards = [round(random.random(), 6) for _ in range(2)] + [round(float(x), 6) for x in np.random.rand(2)]
    rec.rollout_group(step, group_id=f"g{step}", task_id="t1", rewards=rewards)
rec.signal(0, seed=seed)
open("model.json", "w").write('{"skill": 0.5}')
"""


@pytest.mark.heavy
def test_a_custom_domain_gets_the_run_seed(tmp_path: Path) -> None:
    """``evotree run V --seeds 2``: seeds 0 and 1 give other rollouts; seed 0 again the same ones."""
    ws = Workspace.open(make_run_repo(tmp_path / "w"))
    rec = create_version(ws, hypothesis="seeded rewards")
    commit_file(ws.root / rec.worktree, "train.py", SEEDED_TRAIN, "seeded train")
    s0, s1 = run_versions(ws, [rec.id], seeds=2)
    (again,) = run_versions(ws, [rec.id], seeds=1)
    assert all(r.status == "succeeded" for r in (s0, s1, again)), (s0.error, s1.error, again.error)

    def rewards(record) -> list[float]:
        rows = [
            json.loads(line)
            for line in (
                ws.root
                / ".evotree"
                / "runs"
                / record.run_id
                / "evidence"
                / "train"
                / "rollouts.jsonl"
            )
            .read_text()
            .splitlines()
        ]
        return [r["reward"] for r in sorted(rows, key=lambda r: (r["step"], r["sample_index"]))]

    def seed_signal(record) -> float:
        rows = [
            json.loads(line)
            for line in (
                ws.root
                / ".evotree"
                / "runs"
                / record.run_id
                / "evidence"
                / "train"
                / "signals.jsonl"
            )
            .read_text()
            .splitlines()
        ]
        return next(r["value"] for r in rows if r["metric"] == "seed")

    assert [seed_signal(r) for r in (s0, s1, again)] == [0, 1, 0]
    assert rewards(s0) != rewards(s1)
    assert rewards(s0) == rewards(again) and len(rewards(s0)) == 12
