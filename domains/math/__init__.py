"""The math domain: GRPO (``trl.GRPOTrainer``) on verifiable arithmetic, judged by Avg@k / pass@k.

A version is a ``recipe.toml`` (model and GRPO knobs) and a ``math.toml`` (its train problems).
Its train phase (``python -P -m evotree.domains.math.train``, in the candidate's exported tree) trains
the model with the run's recorder (:mod:`evotree.harness.trl`: every reward batch becomes rollout
groups, every logged metric a signal) and saves it to ``output/model/``. The judge
(``python -P -m evotree.domains.math.judge``, in the champion's tree with the judge store
``refs/evotree/judge`` overlaid) samples that model ``k`` times on each hidden problem of
``judge/math.toml`` (validation; held-out when asked) and records one eval row per sample.
``evotree init`` moves ``judge/math.toml`` into the judge store: it is in no checkout. See
``docs/domains/math.md``.

Importing this package is cheap: torch, transformers and trl load only when something runs.
"""

from __future__ import annotations

from pathlib import Path

from evotree.domains import write_if_absent
from evotree.domains.math.data import HIDDEN_SEED_MIN
from evotree.domains.math.settings import SettingsError
from evotree.domains.math.settings import parse_judge_settings
from evotree.domains.math.templates import MATH_TOML
from evotree.domains.math.templates import RECIPE_TOML
from evotree.domains.math.templates import draw_hidden_seeds
from evotree.domains.math.templates import render_judge_toml

__all__ = [
    "ADAPTER_DIR",
    "JUDGE_FILE",
    "MODEL_DIR",
    "OUTPUT_DIR",
    "RECIPE_FILE",
    "TRAIN_FILE",
    "materialize",
]

RECIPE_FILE = "recipe.toml"
TRAIN_FILE = "math.toml"
JUDGE_FILE = "judge/math.toml"
#: What the train phase writes, relative to the candidate's directory.
OUTPUT_DIR = "output"
MODEL_DIR = "output/model"
ADAPTER_DIR = "output/adapter"


def materialize(
    root: Path, *, validation_seed: int | None = None, heldout_seed: int | None = None
) -> list[str]:
    """Write the math workspace files into ``root`` (never overwriting); return the paths written.

    ``recipe.toml`` (the v0 recipe) and ``math.toml`` (the train problems) are the candidate's;
    ``judge/math.toml`` (the validation and held-out seeds, sizes and Avg@k settings) is hidden.
    The hidden seeds are drawn at random unless given (they must be >= 1,000,000 and differ).
    """
    import tomllib

    root = Path(root)
    written: list[str] = []

    def write(rel: str, text: str) -> None:
        write_if_absent(root, rel, text, written)

    judge_text = None
    if not (root / JUDGE_FILE).exists():
        drawn = draw_hidden_seeds()
        seeds = (
            drawn[0] if validation_seed is None else validation_seed,
            drawn[1] if heldout_seed is None else heldout_seed,
        )
        judge_text = render_judge_toml(*seeds)
        try:  # given seeds are checked before anything is written
            parse_judge_settings(tomllib.loads(judge_text))
        except SettingsError as exc:
            from evotree.core.errors import EvotreeError

            raise EvotreeError(
                str(exc), fix=f"pass seeds from {HIDDEN_SEED_MIN:_} up, different from each other"
            ) from None
    write(RECIPE_FILE, RECIPE_TOML)
    write(TRAIN_FILE, MATH_TOML)
    if judge_text is not None:
        write(JUDGE_FILE, judge_text)
    return written
