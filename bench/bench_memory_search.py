#!/usr/bin/env python
"""Benchmark: memory search on SQLite FTS5 against the hand-written BM25 it replaced.

Hand-written code is kept only with a measured reason. ``evotree memory search``
now ranks with SQLite FTS5 (standard-library ``sqlite3``, an in-memory index built from the
entries, ``bm25()``). The baseline is the previous pure-Python BM25 (inverted index + scoring),
kept here, in this script only, as ``old_bm25_search`` (with the old tokenizer it used; the new
one is memoized per word and gives the same tokens, which the script checks). Both apply the
same matching rules (every word, ``word*`` prefix, compound words), so the hit sets must be
identical; only the engine and its idf differ (FTS5 clamps the idf of a word in more than half
the entries to 1e-6; the old code used Lucene's ``log(1 + (N - df + 0.5) / (df + 0.5))``).

For each size (default 1,000 and 10,000 entries) the script writes N generated entries into a
real workspace through the library (``MemoryEntry`` + ``MemoryStore.append``, one memory commit),
reads them back with ``list_entries`` (what ``search`` does), then times, interleaved in an order
rotated every repetition (warm-up discarded):

- ``fts5``: ``evotree.memory.read.search_entries`` for each query of a fixed set (limit 20,
  the CLI's default), summed over the set;
- ``old-bm25``: the baseline, same queries, same limit;
- ``bm25-new-tokenizer``: the old BM25 on the new tokenizer (engine against engine);
- ``tokenize``: only cutting every entry into tokens with the new tokenizer (the floor).

It also times ``list_entries`` (reading the entries from git, the same for both) and checks the
results: same hit sets for every query, top-1 agreement and top-10 overlap of the rankings.

    .venv/bin/python bench/bench_memory_search.py [--sizes 1000 10000] [--repeats 9]
        [--warmup 1] [--seed 0] [--json PATH]
"""

from __future__ import annotations

import argparse
import math
import random
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import benchlib as bl  # first: isolates git's configuration before pygit2 is imported

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from evotree.core.workspace import Workspace, init_workspace
from evotree.memory.model import InvalidMemory, MemoryEntry
from evotree.memory.read import (
    _WORD,
    SearchHit,
    _document,
    list_entries,
    search_entries,
    tokenize,
)
from evotree.memory.store import MemoryStore

QUERIES = [
    "reward",  # common word
    "dead groups",  # two words
    "StdGroupFilter",  # an identifier (camelCase)
    "std group filter",  # its parts
    "kl penalty",
    "entropy*",  # prefix
    "overlong-penalty",  # compound word
    "signal.dead_groups_high",  # a finding code
    "learning rate warmup",  # three words
    "zorblax",  # a rare word
    "nothing-like-this",  # no hit
]
_SKILLS = [
    "StdGroupFilter",
    "OverlongPenalty",
    "KLAnnealing",
    "EntropyBonus",
    "RewardClipping",
    "LengthNormalizer",
    "DynamicSampling",
    "TokenLevelLoss",
]
_CODES = [
    "signal.dead_groups_high",
    "signal.entropy_collapse",
    "behavior.length_blowup",
    "behavior.format_drift",
    "reward.hacking_suspected",
    "signal.kl_spike",
]
_RL = [
    "reward",
    "policy",
    "rollout",
    "group",
    "groups",
    "dead",
    "advantage",
    "kl",
    "entropy",
    "clip",
    "batch",
    "tokenizer",
    "sampler",
    "filter",
    "std",
    "threshold",
    "learning",
    "rate",
    "warmup",
    "schedule",
    "verifier",
    "format",
    "length",
    "penalty",
    "overlong",
    "temperature",
    "judge",
    "dataset",
    "math",
    "code",
    "answers",
    "variance",
    "collapse",
    "spike",
    "gain",
    "loss",
]


def _vocabulary(rng: random.Random, n: int) -> list[str]:
    syllables = [
        "ka",
        "lo",
        "mi",
        "ne",
        "ru",
        "ta",
        "vo",
        "zi",
        "pe",
        "sa",
        "do",
        "fu",
        "gri",
        "bel",
        "tor",
    ]
    words = {"".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))) for _ in range(n * 2)}
    return sorted(words)[:n]


def make_entries(n: int, seed: int, ws: Workspace) -> list[MemoryEntry]:
    """``n`` entries like a long-lived tree's memory: lessons, skill verifications, negative evidence."""
    rng = random.Random(seed)
    filler = _vocabulary(rng, 4000)
    weights = [1 / (k + 1) for k in range(len(filler))]  # Zipf-like word frequencies

    def sentence(words: int) -> str:
        out = []
        for _ in range(words):
            out.append(rng.choice(_RL) if rng.random() < 0.35 else rng.choices(filler, weights)[0])
        return " ".join(out)

    domain = ws.config.workspace.domain
    entries = []
    for i in range(n):
        created = f"2026-{1 + i // 28 // 24 % 12:02d}-{1 + i // 24 % 28:02d}T{i % 24:02d}:00:{i % 60:02d}Z"
        common: dict[str, Any] = {
            "domain": domain,
            "workspace": "bench0000",
            "created_at": created,
            "created_by": "Bench Runner <bench@example.com>",
            "version": f"v{i // 3 + 1}",
        }
        roll = rng.random()
        if i == n // 2:
            text = "zorblax: the dead groups vanished once the std threshold was raised"
        else:
            text = sentence(rng.randint(12, 60))
        if roll < 0.4:
            entries.append(
                MemoryEntry(
                    kind="lesson",
                    text=text,
                    tags=rng.sample(["grpo", "manual", "math"], 2),
                    **common,
                )
            )
        elif roll < 0.75:
            skill = rng.choice(_SKILLS)
            delta = round(rng.uniform(-0.05, 0.12), 4)
            entries.append(
                MemoryEntry(
                    kind="skill_verification",
                    skill=skill,
                    text=f"{skill} in {domain}: delta {delta:+.4g}; {text}",
                    data={
                        "delta": delta,
                        "ci": [delta - 0.03, delta + 0.03],
                        "p_value": rng.random() / 10,
                        "significant": delta > 0.03,
                        "feedback": sentence(8),
                    },
                    **common,
                )
            )
        else:
            codes = rng.sample(_CODES, rng.randint(0, 3))
            entries.append(
                MemoryEntry(
                    kind="negative_evidence",
                    text=f"abandoned: {text}",
                    data={
                        "decision": "abandoned",
                        "reason": sentence(6),
                        "findings": {"codes": codes, "worst": "high" if codes else None},
                        "skills": rng.sample(_SKILLS, rng.randint(0, 2)),
                    },
                    **common,
                )
            )
    return entries


# ----------------------------------------------------------------------------- baseline
# memory/read.py before FTS5, verbatim but for the names: its tokenizer (no memo) and its
# hand-written BM25. ``old_bm25_search`` is the named baseline; ``bm25_on_new_tokenizer`` runs
# the same BM25 on today's (memoized, same output) tokenizer, to separate engine and tokenizer.
_K1 = 1.2
_B = 0.75
_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def _old_stem(token: str) -> str:
    if len(token) > 4 and token.endswith("ies"):
        return token[:-3] + "y"
    if len(token) > 3 and token.endswith("s") and not token.endswith("ss"):
        return token[:-1]
    return token


def old_tokenize(text: str) -> list[str]:
    out: list[str] = []
    for match in _WORD.finditer(text):
        word = match.group(0)
        whole = _old_stem(word.lower())
        out.append(whole)
        pieces = [
            p for chunk in re.split(r"[._-]", word) for p in (_PART.findall(chunk) or [chunk])
        ]
        if len(pieces) > 1:
            out.extend(_old_stem(p.lower()) for p in pieces if p)
            out.extend(
                _old_stem(chunk.lower())
                for chunk in re.split(r"[._-]", word)
                if chunk and chunk != word
            )
    return out


def _old_strings(value: Any) -> Any:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _old_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _old_strings(item)


def old_document(entry: MemoryEntry) -> list[str]:
    parts = [
        entry.text,
        entry.kind.replace("_", " "),
        entry.version or "",
        entry.domain,
        entry.skill or "",
        " ".join(entry.tags),
        *_old_strings(entry.data),
    ]
    return old_tokenize(" ".join(parts))


def old_bm25_search(
    entries: list[MemoryEntry], text: str, *, limit: int | None = None
) -> list[SearchHit]:
    return _bm25(entries, text, limit, old_tokenize, old_document)


def bm25_on_new_tokenizer(
    entries: list[MemoryEntry], text: str, *, limit: int | None = None
) -> list[SearchHit]:
    return _bm25(entries, text, limit, tokenize, _document)


def _bm25(
    entries: list[MemoryEntry], text: str, limit: int | None, tokenize_fn: Any, document_fn: Any
) -> list[SearchHit]:
    wanted: list[tuple[str, bool, list[str]]] = []
    for raw in (t for t in re.split(r"\s+", (text or "").strip()) if t):
        prefix = raw.endswith("*")
        words = _WORD.findall(raw.rstrip("*"))
        for k, word in enumerate(words):
            is_prefix = prefix and k == len(words) - 1
            tokens = tokenize_fn(word)
            wanted.append((tokens[0], is_prefix, list(dict.fromkeys(tokens[1:]))))
    if not wanted:
        raise InvalidMemory(f"search: expected words to search for, actually: {text!r}")
    docs = [Counter(document_fn(e)) for e in entries]
    lengths = [sum(d.values()) for d in docs]
    n = len(docs)
    avg = (sum(lengths) / n) if n else 0.0
    postings: dict[str, list[int]] = {}
    for i, doc in enumerate(docs):
        for token in doc:
            postings.setdefault(token, []).append(i)
    vocabulary = sorted(postings)
    terms: list[tuple[str, list[str]]] = []
    for whole, prefix, parts in wanted:
        if prefix:
            terms.append((whole, [t for t in vocabulary if t.startswith(whole)]))
        elif whole in postings or not parts:
            terms.append((whole, [whole] if whole in postings else []))
        else:
            terms.extend((part, [part] if part in postings else []) for part in parts)
    expanded = [group for _, group in terms]
    hits = []
    candidate_sets = [
        set().union(*(postings[t] for t in group)) if group else set() for group in expanded
    ]
    matching = set.intersection(*candidate_sets) if candidate_sets else set()
    for i in matching:
        score = 0.0
        matched = []
        for token, group in terms:
            hit = False
            for t in group:
                tf = docs[i].get(t, 0)
                if not tf:
                    continue
                hit = True
                df = len(postings[t])
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                score += idf * tf * (_K1 + 1) / (tf + _K1 * (1 - _B + _B * lengths[i] / (avg or 1)))
            if hit:
                matched.append(token)
        hits.append(SearchHit(entry=entries[i], score=score, matched=matched))
    hits.sort(key=lambda h: (-h.score, h.entry.created_at, h.entry.id))
    return hits[:limit] if limit is not None else hits


# ----------------------------------------------------------------------------- measuring
def agreement(entries: list[MemoryEntry]) -> dict[str, Any]:
    if any(old_document(e) != _document(e) for e in entries):
        raise SystemExit("the memoized tokenizer differs from the old one")
    per_query = {}
    for q in QUERIES:
        new = [h.entry.id for h in search_entries(entries, q)]
        old = [h.entry.id for h in old_bm25_search(entries, q)]
        if set(new) != set(old):
            raise SystemExit(f"hit sets differ for {q!r}: fts5 {len(new)}, old {len(old)}")
        top = min(10, len(new))
        per_query[q] = {
            "hits": len(new),
            "same_top1": new[:1] == old[:1],
            "top10_overlap": (len(set(new[:10]) & set(old[:10])) / top) if top else 1.0,
            "same_order": new == old,
        }
    return per_query


def measure(n: int, args: argparse.Namespace, root: Path) -> dict[str, Any]:
    repo = root / f"mem{n}"
    repo.mkdir()
    bl.git(repo, "init", "--quiet", "-b", "main")
    bl.git(repo, "config", "user.name", bl.IDENTITY[0])
    bl.git(repo, "config", "user.email", bl.IDENTITY[1])
    (repo / "recipe.toml").write_text("[grpo]\nlearning_rate = 1e-5\n")
    bl.git(repo, "add", "-A")
    bl.git(repo, "commit", "--quiet", "-m", "recipe")
    init_workspace(repo)
    ws = Workspace.open(repo)
    t0 = time.perf_counter()
    made = make_entries(n, args.seed, ws)
    MemoryStore(ws.git).append(made, actor=ws.git.identity(), what=f"bench {n} entries")
    print(f"  {n} entries written in {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    load = []
    for _ in range(3):
        t0 = time.perf_counter()
        entries = list_entries(ws)
        load.append(time.perf_counter() - t0)
    assert len(entries) == n, (len(entries), n)

    def run_all(fn: Any) -> float:
        t0 = time.perf_counter()
        for q in QUERIES:
            fn(entries, q, limit=20)
        return time.perf_counter() - t0

    def tokenize_only() -> float:
        t0 = time.perf_counter()
        for _ in QUERIES:
            [_document(e) for e in entries]
        return time.perf_counter() - t0

    samples = bl.interleave(
        {
            "fts5": lambda: run_all(search_entries),
            "old-bm25": lambda: run_all(old_bm25_search),
            "bm25-new-tokenizer": lambda: run_all(bm25_on_new_tokenizer),
            "tokenize": tokenize_only,
        },
        repeats=args.repeats,
        warmup=args.warmup,
        label=f"{n} entries",
    )
    per_query = {}
    for q in QUERIES:  # one query at a time, for the table (interleaved too)
        s = bl.interleave(
            {
                "fts5": lambda q=q: _time(search_entries, entries, q),
                "old-bm25": lambda q=q: _time(old_bm25_search, entries, q),
                "bm25-new-tokenizer": lambda q=q: _time(bm25_on_new_tokenizer, entries, q),
            },
            repeats=max(3, args.repeats // 3),
            warmup=1,
        )
        per_query[q] = {k: bl.summary(v) for k, v in s.items()}
    return {
        "entries": n,
        "queries": len(QUERIES),
        "list_entries": bl.summary(load),
        "seconds": {k: bl.summary(v) for k, v in samples.items()},
        "ratio_fts5_over_old": bl.summary(samples["fts5"])["median"]
        / bl.summary(samples["old-bm25"])["median"],
        "paired_ratio_fts5_over_old": bl.paired_ratio(samples["fts5"], samples["old-bm25"]),
        "paired_ratio_fts5_over_bm25_new_tokenizer": bl.paired_ratio(
            samples["fts5"], samples["bm25-new-tokenizer"]
        ),
        "per_query": per_query,
        "agreement": agreement(entries),
        "samples": samples,
    }


def _time(fn: Any, entries: list[MemoryEntry], q: str) -> float:
    t0 = time.perf_counter()
    fn(entries, q, limit=20)
    return time.perf_counter() - t0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None, help="also write the results as JSON here")
    args = parser.parse_args()
    env = bl.environment()
    import sqlite3

    env["sqlite"] = sqlite3.sqlite_version
    results = []
    with tempfile.TemporaryDirectory(prefix="evotree-bench-memsearch-") as tmp:
        for n in args.sizes:
            r = measure(n, args, Path(tmp))
            results.append(r)
            s = r["seconds"]
            bl.print_table(
                f"{n} entries, {r['queries']} queries a repetition (limit 20)",
                [
                    ("fts5", s["fts5"]),
                    ("old-bm25 (baseline)", s["old-bm25"]),
                    ("bm25 on the new tokenizer", s["bm25-new-tokenizer"]),
                    ("tokenize only (new)", s["tokenize"]),
                    ("list_entries (read, once)", r["list_entries"]),
                ],
                note=f"fts5 / old-bm25 = {r['ratio_fts5_over_old']:.2f}x "
                f"(paired {r['paired_ratio_fts5_over_old']:.2f}x); fts5 / bm25 on the new "
                f"tokenizer: paired {r['paired_ratio_fts5_over_bm25_new_tokenizer']:.2f}x; "
                f"per search: fts5 "
                f"{s['fts5']['median'] / r['queries'] * 1000:.1f} ms, old "
                f"{s['old-bm25']['median'] / r['queries'] * 1000:.1f} ms",
            )
            print(
                f"\n  {'query':24} {'hits':>5} {'fts5 ms':>8} {'old ms':>8} {'bm25-new':>8} "
                f"{'fts5/old':>8} top1 top10 order"
            )
            for q, a in r["agreement"].items():
                pq = r["per_query"][q]
                f, o, e = (pq[k]["median"] for k in ("fts5", "old-bm25", "bm25-new-tokenizer"))
                print(
                    f"  {q:24} {a['hits']:>5} {f * 1000:8.1f} {o * 1000:8.1f} {e * 1000:8.1f} {f / o:8.2f} "
                    f"{'same' if a['same_top1'] else 'diff':>4} {a['top10_overlap']:5.0%} "
                    f"{'same' if a['same_order'] else 'diff'}"
                )
    env["loadavg_at_end"] = bl.os.getloadavg()
    bl.write_json(
        args.json,
        {
            "benchmark": "memory_search",
            "environment": env,
            "params": vars(args),
            "results": results,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
