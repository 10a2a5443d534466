"""A tiny causal language model and its tokenizer, built locally from a config (no download).

Used by the TRL hook tests and benchmarks, and later by the math domain (GRPO on arithmetic).
Nothing here touches the network: the tokenizer is a ``tokenizers`` WordLevel model over a
fixed vocabulary, the model a randomly initialised Llama of a few hundred thousand parameters.
Both are deterministic: the same arguments (and ``seed``) give the same vocabulary and weights.

::

    from evotree.harness.tiny_lm import build_tiny_tokenizer, build_tiny_causal_lm
    tok = build_tiny_tokenizer()
    model = build_tiny_causal_lm(tok, seed=0)
    tok.decode(tok("what is 2+3?")["input_ids"])      # 'what is 2+3?' (lossless on the charset)

Tokenization: known words (``what``, ``is``, ``answer``, ...) are one token each, everything else
in the charset is one token per character (each digit is its own token, so numbers are spelled
digit by digit), and text outside the charset maps to ``<unk>``. Decoding concatenates tokens,
so any text made of the charset round-trips exactly.

torch and transformers are imported inside the functions: importing this module is free.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable
from typing import Any

__all__ = [
    "BOS",
    "CHARSET",
    "CHAT_TEMPLATE",
    "DEFAULT_WORDS",
    "EOS",
    "PAD",
    "UNK",
    "build_tiny_causal_lm",
    "build_tiny_tokenizer",
    "tiny_vocabulary",
]

PAD, BOS, EOS, UNK = "<pad>", "<bos>", "<eos>", "<unk>"
SPECIAL_TOKENS = (PAD, BOS, EOS, UNK)

#: Whole-word tokens (lower case). Other words are spelled letter by letter.
DEFAULT_WORDS: tuple[str, ...] = (
    "what",
    "is",
    "the",
    "answer",
    "sum",
    "of",
    "and",
    "plus",
    "minus",
    "times",
    "compute",
    "result",
    "solve",
    "question",
    "user",
    "assistant",
    "system",
)
#: Every character that has its own token: digits, operators, punctuation, space, newline, a-z.
CHARSET: str = (
    string.digits + "+-*/=?.,:;()<>[]!'\" \n" + string.ascii_lowercase + string.ascii_uppercase
)

#: A minimal chat template (for conversational datasets): ``role: content`` lines.
CHAT_TEMPLATE = (
    "{% for message in messages %}{{ message['role'] }}: {{ message['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant: {% endif %}"
)


def tiny_vocabulary(
    words: Iterable[str] = DEFAULT_WORDS, *, extra_chars: str = ""
) -> dict[str, int]:
    """Token -> id, in a fixed order: special tokens, words, then characters (no duplicates)."""
    vocab: dict[str, int] = {}
    for token in (*SPECIAL_TOKENS, *words, *CHARSET, *extra_chars):
        if token and token not in vocab:
            vocab[token] = len(vocab)
    return vocab


def build_tiny_tokenizer(
    words: Iterable[str] = DEFAULT_WORDS,
    *,
    extra_chars: str = "",
    padding_side: str = "left",
    model_max_length: int = 256,
):  # -> transformers.PreTrainedTokenizerFast
    """A word/character-level fast tokenizer built in memory (no files, no download).

    ``words`` are single tokens (longest match first); other characters of :data:`CHARSET` (plus
    ``extra_chars``) are one token each. Special tokens: ``<pad>`` (id 0), ``<bos>``, ``<eos>``,
    ``<unk>``; no special token is added when encoding, so prompts are exactly their text. A
    simple chat template (:data:`CHAT_TEMPLATE`) is set for conversational prompts.
    """
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words = tuple(w for w in words if w)
    for word in words:
        if any(c not in CHARSET + extra_chars for c in word):
            raise ValueError(f"word {word!r} has characters outside the tokenizer's charset")
    vocab = tiny_vocabulary(words, extra_chars=extra_chars)
    # Longest words first, then any single character: a regex alternation takes the first match.
    alternatives = [re.escape(w) for w in sorted(set(words), key=lambda w: (-len(w), w))]
    pattern = "|".join([*alternatives, r"[\s\S]"]) if alternatives else r"[\s\S]"
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token=UNK))
    backend.pre_tokenizer = pre_tokenizers.Split(Regex(pattern), behavior="isolated")
    backend.decoder = decoders.Fuse()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        pad_token=PAD,
        bos_token=BOS,
        eos_token=EOS,
        unk_token=UNK,
        padding_side=padding_side,
        model_max_length=model_max_length,
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def build_tiny_causal_lm(
    tokenizer: Any,
    *,
    hidden_size: int = 64,
    num_layers: int = 2,
    num_heads: int = 4,
    num_kv_heads: int = 2,
    intermediate_size: int = 256,
    max_position_embeddings: int = 256,
    seed: int = 0,
):  # -> transformers.LlamaForCausalLM
    """A randomly initialised Llama-style causal LM sized for ``tokenizer`` (float32, CPU).

    The defaults give ~130K parameters. The same ``seed`` gives the same weights (the global
    torch RNG state is saved and restored, so building a model does not disturb the caller's).
    """
    import torch
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    if hidden_size % num_heads or num_heads % num_kv_heads:
        raise ValueError(
            f"hidden_size ({hidden_size}) must be divisible by num_heads ({num_heads}), "
            f"and num_heads by num_kv_heads ({num_kv_heads})"
        )
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=intermediate_size,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        num_key_value_heads=num_kv_heads,
        max_position_embeddings=max_position_embeddings,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        tie_word_embeddings=True,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)
    model.generation_config = GenerationConfig(
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    return model
