"""The tiny model's supervised warm-up: a base model that is not random, built once and cached.

GRPO from random weights learns the answer format and then one constant answer; the same tiny
model after a short supervised warm-up on the *train region's* facts answers unseen facts of
the judge's region well enough for GRPO to climb from there. The warm-up is part of the domain,
not of a version's tree:

* **Data**: every train-region fact (:func:`evotree.domains.math.data.in_judge_region` false)
  of the version's ``math.toml`` operators and operand range, in every phrasing (template) and,
  for ``+`` and ``*``, both operand orders. Never a judge-region fact (tested).
* **Training**: teacher forcing on the answer (``" 7"`` + eos) after the prompt, AdamW, fixed
  batches drawn from a ``torch.Generator`` seeded with the warm-up's own seed (``[warmup] seed``,
  not the run's seed: every run and version shares one base), one CPU thread (the same
  arithmetic on every machine with this torch build).
* **Stop on a measured level**: every ``eval_every`` steps the greedy (teacher-forced argmax)
  accuracy on all warm-up problems is measured; training stops when it reaches
  ``target_accuracy`` (or at ``max_steps``, the cap). What was reached is in ``warmup.json``.
* **Cache**: the result is stored under ``<cache>/math-warmup/<key>/`` where ``key`` is a
  SHA-256 of everything that determines the weights (the problems' text, the tokenizer's
  vocabulary, the ``[tiny]`` shape, the ``[warmup]`` settings, :data:`WARMUP_FORMAT`, and the
  torch and transformers versions). The same key gives the same weights; any version or run
  whose key matches loads it instead of training. Written atomically (a temporary folder
  renamed into place), one builder per key at a time (a lock file; the others wait, then load).

The cache folder (:func:`cache_root`): ``$EVOTREE_CACHE_DIR``, else ``$XDG_CACHE_HOME/evotree``,
else ``~/.cache/evotree``. It lies outside every version's tree. A sandboxed train phase sees
neither the host's ``$XDG_CACHE_HOME`` nor its ``$HOME``: there the harness must give the phase
the folder (``$EVOTREE_CACHE_DIR``, bound into the sandbox), or build the warm-up on the host
first (``python -m evotree.domains.math.warmup DIR`` or :func:`prepare`); otherwise the phase
builds the warm-up itself in its private ``/tmp``, each run again (correct, only slower).

torch and transformers are imported inside the functions.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from evotree.domains.math.data import (
    OPS,
    SplitSpec,
    _answer,
    _facts,
    fact_key,
    format_prompt,
    in_judge_region,
)
from evotree.domains.math.settings import WarmupSettings
from evotree.harness.tiny_lm import build_tiny_causal_lm
from evotree.domains.math.model import ModelUnavailable
from evotree.domains.math.model import _prepare_tokenizer
from evotree.domains.math.model import offline
from evotree.domains.math.model import tiny_tokenizer
from evotree.domains.math import RECIPE_FILE
from evotree.domains.math import TRAIN_FILE
from evotree.domains.math.settings import load_recipe
from evotree.domains.math.settings import load_train_split
from evotree.domains.math.settings import SettingsError

__all__ = [
    "CACHE_SUBDIR",
    "ENV_CACHE_DIR",
    "MAX_EXAMPLES",
    "WARMUP_FORMAT",
    "WarmupResult",
    "WarmupSettings",
    "build_warm_model",
    "cache_root",
    "ensure_warm_model",
    "load_warm_model",
    "load_warm_policy",
    "main",
    "prepare",
    "warmup_examples",
    "warmup_key",
]

#: Bumped whenever the warm-up's algorithm changes (it is part of the key: old entries are ignored).
WARMUP_FORMAT = 1
#: The environment variable that names the cache folder (the harness sets it for a phase).
ENV_CACHE_DIR = "EVOTREE_CACHE_DIR"
#: The math warm-ups' folder inside the cache folder.
CACHE_SUBDIR = "math-warmup"
MANIFEST = "warmup.json"
#: At most this many warm-up prompts (a wide operand range is sampled down to it).
MAX_EXAMPLES = 20_000


@dataclass(frozen=True)
class WarmupResult:
    """A warm model in the cache: its folder, key, and whether this call trained it."""

    path: Path
    key: str
    trained: bool
    manifest: dict[str, Any]


# ---------------------------------------------------------------------------- data
def warmup_examples(spec: SplitSpec) -> list[tuple[str, str, tuple[str, int, int]]]:
    """``(prompt, completion, fact)`` for every train-region fact of ``spec``'s operators and
    operand range, in every template and (``+``, ``*``) both operand orders; sorted, so the list
    depends only on the operators and the range (not on ``spec.seed`` or ``num_problems``).
    A range with more than :data:`MAX_EXAMPLES` of them gives a fixed sample of that many."""
    out = []
    for op, a, b in _facts(spec):
        if in_judge_region(op, a, b):
            continue
        orders = [(a, b)] if op == "-" or a == b else [(a, b), (b, a)]
        for x, y in orders:
            for template in OPS[op][1]:
                out.append(
                    (
                        format_prompt(template.format(a=x, b=y)),
                        f" {_answer(op, x, y)}",
                        fact_key(op, x, y),
                    )
                )
    out.sort()
    if len(out) > MAX_EXAMPLES:  # a fixed sample (the same on every machine), still sorted
        out = sorted(
            random.Random(f"evotree-math/warmup/{WARMUP_FORMAT}").sample(out, MAX_EXAMPLES)
        )
    return out


# ---------------------------------------------------------------------------- the key and the cache
def cache_root(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The cache folder: ``explicit``, ``$EVOTREE_CACHE_DIR``, ``$XDG_CACHE_HOME/evotree`` or
    ``~/.cache/evotree``, in that order."""
    if explicit:
        return Path(explicit).expanduser()
    if os.environ.get(ENV_CACHE_DIR):
        return Path(os.environ[ENV_CACHE_DIR]).expanduser()
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]).expanduser() / "evotree"
    return Path.home() / ".cache" / "evotree"


def _versions() -> dict[str, str]:
    import torch
    import transformers

    return {"torch": torch.__version__, "transformers": transformers.__version__}


def warmup_key(
    spec: SplitSpec, tiny: dict[str, int], settings: WarmupSettings, tokenizer: Any
) -> tuple[str, dict]:
    """``(key, inputs)``: the SHA-256 (hex) of everything that determines the warm weights, and
    those inputs (the problems as a digest)."""
    examples = warmup_examples(spec)
    data = hashlib.sha256("\n".join(f"{p}\t{c}" for p, c, _ in examples).encode()).hexdigest()
    vocab = hashlib.sha256(json.dumps(sorted(tokenizer.get_vocab().items())).encode()).hexdigest()
    inputs = {
        "format": WARMUP_FORMAT,
        "data": data,
        "examples": len(examples),
        "vocabulary": vocab,
        "tiny": dict(sorted(tiny.items())),
        "settings": {k: v for k, v in asdict(settings).items() if k != "enabled"},
        **_versions(),
    }
    key = hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()
    return key, inputs


# ---------------------------------------------------------------------------- training
def _encode(tokenizer: Any, examples: Sequence[tuple[str, str, Any]]) -> tuple[Any, Any, Any]:
    """``(input_ids, attention_mask, labels)``: right-padded; labels only on the answer and eos."""
    import torch

    rows, labels = [], []
    for prompt, completion, _ in examples:
        p = tokenizer(prompt, add_special_tokens=False)["input_ids"]
        c = tokenizer(completion, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
        rows.append(p + c)
        labels.append([-100] * len(p) + c)
    width = max(len(r) for r in rows)
    pad = tokenizer.pad_token_id
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    lab = torch.full((len(rows), width), -100, dtype=torch.long)
    for i, (r, l) in enumerate(zip(rows, labels, strict=True)):
        ids[i, : len(r)] = torch.tensor(r)
        mask[i, : len(r)] = 1
        lab[i, : len(l)] = torch.tensor(l)
    return ids, mask, lab


def _accuracy(model: Any, ids: Any, mask: Any, labels: Any, batch: int = 512) -> float:
    """Share of examples whose every answer token (and the eos) is the argmax: what greedy
    decoding would answer, exactly."""
    import torch

    right = 0
    with torch.no_grad():
        for start in range(0, len(ids), batch):
            sl = slice(start, start + batch)
            logits = model(input_ids=ids[sl], attention_mask=mask[sl]).logits[:, :-1]
            target = labels[sl][:, 1:]
            ok = (logits.argmax(-1) == target) | (target == -100)
            right += int(ok.all(dim=1).sum())
    return right / len(ids)


def build_warm_model(
    spec: SplitSpec,
    tiny: dict[str, int],
    settings: WarmupSettings,
    tokenizer: Any,
    *,
    log: Callable[[str], None] | None = None,
    probe: Sequence[tuple[str, str, Any]] | None = None,
) -> tuple[Any, dict[str, Any]]:
    """Train the warm model (not cached): ``(model, report)``. ``probe``: extra examples whose
    accuracy is logged alongside (for experiments; it never changes the training)."""
    import torch

    say = log or (lambda message: None)
    started = time.monotonic()
    examples = warmup_examples(spec)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        model = build_tiny_causal_lm(tokenizer, seed=settings.seed, **tiny)
        ids, mask, labels = _encode(tokenizer, examples)
        probe_t = _encode(tokenizer, probe) if probe else None
        optimizer = torch.optim.AdamW(
            model.parameters(), lr=settings.learning_rate, weight_decay=settings.weight_decay
        )
        generator = torch.Generator().manual_seed(settings.seed)
        model.train()
        step, accuracy, history = 0, 0.0, []
        while True:
            if step % settings.eval_every == 0 or step == settings.max_steps:
                model.eval()
                accuracy = _accuracy(model, ids, mask, labels)
                entry = {"step": step, "accuracy": round(accuracy, 4)}
                if probe_t is not None:
                    entry["probe_accuracy"] = round(_accuracy(model, *probe_t), 4)
                history.append(entry)
                say(
                    f"warm-up step {step}: accuracy {accuracy:.3f} on {len(examples)} train-region problems"
                    + (f", probe {entry['probe_accuracy']:.3f}" if probe_t is not None else "")
                )
                model.train()
                if accuracy >= settings.target_accuracy or step >= settings.max_steps:
                    break
            index = torch.randint(len(ids), (settings.batch_size,), generator=generator)
            out = model(input_ids=ids[index], attention_mask=mask[index], labels=labels[index])
            optimizer.zero_grad(set_to_none=True)
            out.loss.backward()
            optimizer.step()
            step += 1
    finally:
        torch.set_num_threads(threads)
    model.eval()
    report = {
        "steps": step,
        "accuracy": accuracy,
        "reached_target": accuracy >= settings.target_accuracy,
        "examples": len(examples),
        "seconds": round(time.monotonic() - started, 2),
        "history": history,
    }
    return model, report


# ---------------------------------------------------------------------------- the cache
def load_warm_model(path: Path) -> Any:
    """The cached warm model (safetensors only)."""
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(
        str(path), local_files_only=True, use_safetensors=True
    )


def _complete(path: Path, key: str) -> dict[str, Any] | None:
    try:
        manifest = json.loads((path / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    if manifest.get("key") != key or not (path / "model.safetensors").is_file():
        return None
    return manifest


def ensure_warm_model(
    spec: SplitSpec,
    tiny: dict[str, int],
    settings: WarmupSettings,
    tokenizer: Any,
    *,
    cache: str | os.PathLike[str] | None = None,
    log: Callable[[str], None] | None = None,
) -> WarmupResult:
    """The warm model's cached folder, trained first when no complete entry has its key.

    One builder per key at a time: a run that finds another one building the same key waits for
    it (a lock file beside the entries) and then loads its result. When the cache folder cannot
    be written, the model is kept in a temporary folder of this process (the caller loads it
    from there; the next run trains again) and the log says so.
    """
    say = log or (lambda message: None)
    key, inputs = warmup_key(spec, tiny, settings, tokenizer)
    root = cache_root(cache) / CACHE_SUBDIR
    target = root / key
    manifest = _complete(target, key)
    if manifest is not None:
        say(
            f"warm-up {key[:12]} reused from the cache ({target}; trained {manifest['steps']} steps to "
            f"accuracy {manifest['accuracy']:.3f})"
        )
        return WarmupResult(target, key, False, manifest)
    try:
        root.mkdir(parents=True, exist_ok=True)
        lock = open(root / f".{key}.lock", "a")  # noqa: SIM115 - held until the entry is written
    except OSError as exc:
        say(
            f"warm-up {key[:12]} not in the cache, and the cache folder {root} cannot be written ({exc}): "
            "training it for this run only"
        )
        model, report = build_warm_model(spec, tiny, settings, tokenizer, log=say)
        staging = Path(tempfile.mkdtemp(prefix="evotree-warmup-"))
        atexit.register(shutil.rmtree, staging, ignore_errors=True)
        manifest = {"key": key, "inputs": inputs, **report}
        _save(model, staging, manifest)
        return WarmupResult(staging, key, True, manifest)
    with lock:
        _acquire(
            lock, lambda: say(f"warm-up {key[:12]}: another run is building it; waiting for it")
        )
        manifest = _complete(target, key)
        if manifest is not None:  # built by the run we waited for
            say(
                f"warm-up {key[:12]} reused from the cache ({target}; built by another run meanwhile)"
            )
            return WarmupResult(target, key, False, manifest)
        say(f"warm-up {key[:12]} not in the cache ({target}): training it")
        model, report = build_warm_model(spec, tiny, settings, tokenizer, log=say)
        manifest = {"key": key, "inputs": inputs, **report}
        staging = Path(tempfile.mkdtemp(prefix=f".{key[:12]}-", dir=root))
        try:
            _save(model, staging, manifest)
            if target.exists():  # an incomplete entry (a builder killed mid-way, before locks)
                shutil.rmtree(target)
            os.rename(staging, target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    say(
        f"warm-up {key[:12]}: {report['steps']} steps, accuracy {report['accuracy']:.3f}, "
        f"{report['seconds']:.1f} s; cached in {target}"
    )
    return WarmupResult(target, key, True, manifest)


def _acquire(handle: Any, waiting: Callable[[], None]) -> None:
    """An exclusive lock on ``handle`` (blocking; ``waiting()`` is called first when it must wait)."""
    try:
        import fcntl
    except (
        ImportError
    ):  # pragma: no cover - not POSIX: no lock, builders may race (same key, same weights)
        return
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        waiting()
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)


def load_warm_policy(
    spec: SplitSpec,
    tiny: dict[str, int],
    settings: WarmupSettings,
    *,
    log: Callable[[str], None] | None = None,
    cache: str | os.PathLike[str] | None = None,
) -> tuple[Any, Any, str, WarmupResult]:
    """``(model, tokenizer, description, warm-up)``: the tiny model after its supervised warm-up
    (:func:`ensure_warm_model`: from the cache, or trained and cached first), for the train
    split ``spec``, the ``[tiny]`` shape and the ``[warmup]`` settings. Raises
    :class:`evotree.domains.math.model.ModelUnavailable` when the shape cannot be built."""

    offline()
    tokenizer = _prepare_tokenizer(tiny_tokenizer())
    try:
        result = ensure_warm_model(spec, tiny, settings, tokenizer, cache=cache, log=log)
    except ValueError as exc:
        raise ModelUnavailable(f"[tiny]: {exc}") from None
    model = load_warm_model(result.path)
    model.config._name_or_path = (
        ""  # the cache is no model path of the run's (TRL saves a copy when it needs one)
    )
    params = sum(p.numel() for p in model.parameters())
    manifest = result.manifest
    how = "reused from the cache" if not result.trained else "trained now and cached"
    return (
        model,
        tokenizer,
        (
            f"tiny ({params:,} parameters) after its warm-up {result.key[:12]} ({how}: "
            f"{manifest['steps']} steps to train-region accuracy {manifest['accuracy']:.3f})"
        ),
        result,
    )


def _save(model: Any, folder: Path, manifest: dict[str, Any]) -> None:
    model.save_pretrained(folder, safe_serialization=True)
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")


def prepare(
    tree: Path,
    *,
    cache: str | os.PathLike[str] | None = None,
    log: Callable[[str], None] | None = None,
) -> WarmupResult | None:
    """Build (or find) the warm-up a version's tree asks for, e.g. on the host before its runs:
    None when its recipe does not use one (another model, or ``[warmup] enabled = false``).
    Raises :class:`evotree.domains.math.settings.SettingsError` for an invalid recipe or math.toml."""

    recipe = load_recipe(Path(tree) / RECIPE_FILE)
    if not recipe.is_tiny or not recipe.warmup.enabled:
        return None
    spec = load_train_split(Path(tree) / TRAIN_FILE)
    return ensure_warm_model(
        spec, recipe.tiny, recipe.warmup, tiny_tokenizer(), cache=cache, log=log
    )


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m evotree.domains.math.warmup [TREE] [--cache DIR]``: build the warm-up of a
    version's tree (default: the current directory) into the cache; print its folder."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m evotree.domains.math.warmup", description=main.__doc__
    )
    parser.add_argument("tree", nargs="?", default=".")
    parser.add_argument("--cache", default=None, help="the cache folder (default: see cache_root)")
    args = parser.parse_args(argv)
    try:
        result = prepare(
            Path(args.tree),
            cache=args.cache,
            log=lambda m: print(f"evotree math warmup: {m}", file=sys.stderr, flush=True),
        )
    except SettingsError as exc:
        print(f"evotree math warmup: {exc}", file=sys.stderr)
        return 65
    if result is None:
        print("evotree math warmup: this recipe uses no warm-up", file=sys.stderr)
        return 0
    print(result.path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
