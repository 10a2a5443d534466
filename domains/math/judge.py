"""The math domain's judge: ``python -P -m evotree.domains.math.judge`` in the champion's tree.

Reads the hidden ``judge/math.toml`` of the champion, builds its validation and held-out
problems (:func:`evotree.domains.math.data.hidden_splits`), loads the candidate's trained model from
``$EVOTREE_CANDIDATE_DIR/output/model`` and samples it ``samples`` (= k) times per problem
with a fixed seed, on the splits in ``$EVOTREE_JUDGE_SPLITS`` (default ``validation``;
``heldout`` only when asked). Each sample is one eval row:
``eval_result(split, task_id, 1.0 or 0.0, sample_index=i)``, so a split's mean score is its
Avg@k (the run's headline on validation) and pass@k follows from the rows.

Signals at step 0, per split: ``SPLIT/avg@K``, ``SPLIT/pass@J`` for each ``pass_at`` J
(unbiased: ``1 - C(n-c, J) / C(n, J)`` per problem with c correct of n samples, averaged),
``SPLIT/well_formed`` (share of samples that are exactly a number) and ``SPLIT/problems``.

Deterministic: the same model and judge/math.toml give the same samples (torch's generator is
seeded per split, batches are fixed). Exit 1 when the candidate has no model or the judge's
configuration is broken.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evotree.harness.layout import ENV_CANDIDATE_DIR, ENV_JUDGE_SPLITS
from evotree.domains.math import JUDGE_FILE
from evotree.domains.math import MODEL_DIR
from evotree.domains.math.data import SplitError
from evotree.domains.math.data import hidden_splits
from evotree.domains.math.data import is_correct
from evotree.domains.math.data import is_well_formed
from evotree.domains.math.model import load_trained
from evotree.domains.math.model import set_cpu_threads
from evotree.domains.math.settings import HIDDEN_SPLITS
from evotree.domains.math.settings import SettingsError
from evotree.domains.math.settings import load_judge_settings
from evotree.harness.recorder import get_recorder

__all__ = ["main", "pass_at_k", "sample_completions"]


def _say(message: str) -> None:
    print(f"evotree math judge: {message}", file=sys.stderr, flush=True)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k of one problem with ``c`` correct among ``n`` samples (Chen et al. 2021)."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n, actually n={n}, c={c}, k={k}")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def sample_completions(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[str],
    *,
    samples: int,
    temperature: float,
    top_p: float,
    max_new_tokens: int,
    seed: int,
    batch_size: int,
) -> list[list[str]]:
    """``samples`` completions per prompt (decoded, special tokens dropped), seeded."""
    import torch

    device = next(model.parameters()).device
    generator_seed = int(seed)
    torch.manual_seed(generator_seed)
    if device.type == "cuda":
        torch.cuda.manual_seed_all(generator_seed)
    sampling = temperature > 0
    eos = model.generation_config.eos_token_id if model.generation_config is not None else None
    if eos is None:
        eos = tokenizer.eos_token_id
    out: list[list[str]] = []
    for start in range(0, len(prompts), batch_size):
        chunk = list(prompts[start : start + batch_size])
        enc = tokenizer(chunk, return_tensors="pt", padding=True, add_special_tokens=False).to(
            device
        )
        kwargs: dict[str, Any] = {
            "max_new_tokens": max_new_tokens,
            "num_return_sequences": samples,
            "pad_token_id": tokenizer.pad_token_id,
            "eos_token_id": eos,
            "do_sample": sampling,
        }
        if sampling:
            kwargs.update(temperature=temperature, top_p=top_p, top_k=0)
        else:
            kwargs["num_return_sequences"] = 1
        with torch.no_grad():
            generated = model.generate(**enc, **kwargs)
        new = generated[:, enc["input_ids"].shape[1] :]
        texts = tokenizer.batch_decode(new, skip_special_tokens=True)
        per = kwargs["num_return_sequences"]
        for i in range(len(chunk)):
            group = texts[i * per : (i + 1) * per]
            out.append(group * samples if per == 1 else group)
    return out


def main(cwd: Path | None = None) -> int:
    cwd = Path(cwd or os.getcwd())

    try:
        settings = load_judge_settings(cwd / JUDGE_FILE)
        splits = hidden_splits(settings.splits["validation"], settings.splits["heldout"])
    except (SettingsError, SplitError) as exc:
        _say(f"the judge's configuration cannot be used: {exc}")
        return 1
    candidate = os.environ.get(ENV_CANDIDATE_DIR)
    if not candidate or not Path(candidate).is_dir():
        _say(f"${ENV_CANDIDATE_DIR} does not name the candidate's directory ({candidate!r})")
        return 1
    model_dir = Path(candidate) / MODEL_DIR
    if not (model_dir / "config.json").is_file():
        _say(
            f"the candidate has no trained model: {MODEL_DIR}/ is missing or incomplete in {candidate} "
            "(the train phase saves it there when training ends)"
        )
        return 1
    wanted = [
        s.strip() for s in os.environ.get(ENV_JUDGE_SPLITS, "validation").split(",") if s.strip()
    ]
    for split in wanted:
        if split not in HIDDEN_SPLITS:
            _say(
                f"split {split!r} has no problems in the math domain (it has {', '.join(HIDDEN_SPLITS)}); "
                "not scored"
            )
    wanted = [s for s in HIDDEN_SPLITS if s in wanted]

    import torch

    try:
        model, tokenizer = load_trained(model_dir)
    except (OSError, ValueError) as exc:
        _say(f"cannot load the candidate's model from {model_dir}: {exc}")
        return 1
    if torch.cuda.is_available():
        model.to("cuda")
    else:
        set_cpu_threads(model, settings.cpu_threads)
    rec = get_recorder()
    n = settings.samples
    table = [
        (
            split,
            len(splits[split]),
            _score_split(model, tokenizer, settings, split, splits[split], rec),
        )
        for split in wanted
    ]
    rec.close()
    _print_table(table, n, settings.pass_at)
    return 0


def _score_split(
    model: Any, tokenizer: Any, settings: Any, split: str, problems: list[Any], rec: Any
) -> dict[str, float]:
    """Sample ``settings.samples`` completions per problem of ``split``, record each score and
    return the split's metrics (avg@n, pass@k, the well-formed share)."""
    n = settings.samples
    completions = sample_completions(
        model,
        tokenizer,
        [p.prompt for p in problems],
        samples=n,
        temperature=settings.temperature,
        top_p=settings.top_p,
        max_new_tokens=settings.max_new_tokens,
        seed=settings.seed + HIDDEN_SPLITS.index(split),
        batch_size=settings.batch_size,
    )
    correct_counts, well_formed = [], 0
    for problem, texts in zip(problems, completions, strict=True):
        correct = 0
        for i, text in enumerate(texts):
            score = 1.0 if is_correct(text, problem.answer) else 0.0
            correct += int(score)
            well_formed += is_well_formed(text)
            rec.eval_result(split, problem.task_id, score, sample_index=i)
        correct_counts.append(correct)
    avg = sum(correct_counts) / (n * len(problems))
    metrics = {
        f"{split}/avg@{n}": avg,
        f"{split}/problems": len(problems),
        f"{split}/well_formed": well_formed / (n * len(problems)),
    }
    for k in settings.pass_at:
        metrics[f"{split}/pass@{k}"] = sum(pass_at_k(n, c, k) for c in correct_counts) / len(
            problems
        )
    rec.signal(0, **metrics)
    return metrics


def _print_table(table: list[tuple[str, int, dict[str, float]]], n: int, ks: Any) -> None:
    """The judge's summary on stdout: one row per split."""
    print(
        f"{'split':10s} {'problems':>8s} {f'avg@{n}':>8s} "
        + " ".join(f"{f'pass@{k}':>8s}" for k in ks)
        + f" {'well-formed':>11s}"
    )
    for split, count, metrics in table:
        print(
            f"{split:10s} {count:8d} {metrics[f'{split}/avg@{n}']:8.3f} "
            + " ".join(f"{metrics[f'{split}/pass@{k}']:8.3f}" for k in ks)
            + f" {metrics[f'{split}/well_formed']:11.3f}"
        )


if __name__ == "__main__":
    sys.exit(main())
