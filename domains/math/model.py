"""Loading the policy: the local tiny model, a Hugging Face model already on this machine, or a
trained candidate's ``output/model``. Nothing here downloads anything (``HF_HUB_OFFLINE``).

torch and transformers are imported inside the functions.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from evotree.domains.math.data import WORDS
from evotree.harness.tiny_lm import DEFAULT_WORDS
from evotree.harness.tiny_lm import build_tiny_tokenizer

__all__ = [
    "ModelUnavailable",
    "check_model_name",
    "load_policy",
    "load_trained",
    "offline",
    "tiny_tokenizer",
]


class ModelUnavailable(RuntimeError):
    """The recipe's model cannot be loaded on this machine (never downloaded)."""


def offline() -> None:
    """Forbid every download from the Hugging Face Hub in this process."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")


def tiny_tokenizer() -> Any:
    """The tiny tokenizer: every word and character of the math prompts is a known token."""

    missing = [w for w in WORDS if w not in DEFAULT_WORDS]
    return build_tiny_tokenizer((*DEFAULT_WORDS, *missing))


def _prepare_tokenizer(tokenizer: Any) -> Any:
    tokenizer.padding_side = "left"
    if tokenizer.pad_token_id is None:
        if tokenizer.eos_token_id is None:
            raise ModelUnavailable("the tokenizer has neither a pad nor an end-of-sequence token")
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def check_model_name(name: str, *, cwd: Path) -> str:
    """What to load for a recipe's ``model`` (not "tiny"): an existing directory (absolute, or
    relative to ``cwd``), or else a model name for the local cache. A name that can only be a
    path (``./x``, ``/x``, ``~/x``, ``a/b/c``) but is no directory raises
    :class:`ModelUnavailable` at once, before anything heavy is imported."""
    path = Path(name).expanduser()
    if not path.is_absolute():
        path = cwd / path
    if path.is_dir():
        return str(path)
    if name.startswith((".", "/", "~")) or name.count("/") > 1:
        raise ModelUnavailable(f"model = {name!r}: no such directory ({path})")
    return name


def load_policy(name: str, *, cwd: Path, tiny: dict[str, int], seed: int) -> tuple[Any, Any, str]:
    """``(model, tokenizer, description)`` for a recipe's ``model``.

    ``"tiny"`` builds :func:`evotree.harness.tiny_lm.build_tiny_causal_lm` with the ``[tiny]`` shape and
    ``seed`` (the train phase passes the run's training seed, so each run seed starts from other
    random weights); anything else is a directory (absolute, or relative to ``cwd``) or a model name
    in the local Hugging Face cache. Raises :class:`ModelUnavailable` with the reason.
    """
    offline()
    if name == "tiny":
        from evotree.harness.tiny_lm import build_tiny_causal_lm

        tokenizer = _prepare_tokenizer(tiny_tokenizer())
        try:
            model = build_tiny_causal_lm(tokenizer, seed=seed, **tiny)
        except ValueError as exc:
            raise ModelUnavailable(f"[tiny]: {exc}") from None
        params = sum(p.numel() for p in model.parameters())
        return model, tokenizer, f"tiny (built locally, {params:,} parameters)"
    source = check_model_name(name, cwd=cwd)
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(source, local_files_only=True)
    except (OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelUnavailable(
            f"model = {name!r} cannot be loaded from this machine ({first}); evotree never downloads "
            "models: give a directory with the model (config.json, weights, tokenizer), or put the "
            "model in the local Hugging Face cache first"
        ) from None
    _prepare_tokenizer(tokenizer)
    if model.generation_config is not None and model.generation_config.pad_token_id is None:
        model.generation_config.pad_token_id = tokenizer.pad_token_id
    params = sum(p.numel() for p in model.parameters())
    return model, tokenizer, f"{source} ({params:,} parameters)"


#: Below this many parameters a model runs on one CPU thread by default: intra-op parallelism
#: does not pay for tiny matrices, and spinning threads are slow on a busy machine.
SMALL_MODEL_PARAMETERS = 20_000_000


def set_cpu_threads(model: Any, requested: int) -> int:
    """Set torch's CPU threads (``requested``, or 0: one for small models, else unchanged)."""
    import torch

    if requested > 0:
        torch.set_num_threads(requested)
    elif sum(p.numel() for p in model.parameters()) < SMALL_MODEL_PARAMETERS:
        torch.set_num_threads(1)
    return torch.get_num_threads()


def load_trained(model_dir: Path) -> tuple[Any, Any]:
    """The candidate's trained model and tokenizer from ``output/model`` (safetensors only:
    loading a candidate's weights must not run a pickle)."""
    offline()
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = _prepare_tokenizer(
        AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
    )
    model = AutoModelForCausalLM.from_pretrained(
        str(model_dir), local_files_only=True, use_safetensors=True
    )
    model.eval()
    return model, tokenizer
