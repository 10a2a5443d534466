"""Memory search on SQLite FTS5: ranking on a hand-checkable corpus, the fields searched, filters,
limit, ties, and adversarial queries (FTS5 syntax, quotes, control characters, unicode, very long,
empty) that must give hits or a clear ``InvalidMemory`` with a fix, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import Cli

import evotree.memory as memory
from evotree.core.errors import EvotreeError
from evotree.core.workspace import Workspace
from evotree.memory.model import InvalidMemory, MemoryEntry
from evotree.memory.read import SearchHit, search_entries


def _entry(text: str, n: int, *, kind: str = "lesson", **fields: Any) -> MemoryEntry:
    return MemoryEntry(
        kind=kind,
        text=text,
        version=fields.pop("version", None),
        domain=fields.pop("domain", "math"),
        workspace="w0",
        created_at=f"2026-01-01T00:00:{n:02d}Z",
        created_by="t <t@e>",
        **fields,
    )


# 8 entries: "reward" is in 6 (common: FTS5 gives it an idf of ~0), "kl" in 2 (rare).
CORPUS = [
    _entry("kl penalty kept the kl small while the reward rose", 0),  # kl ×2, reward ×1
    _entry("reward reward reward shaping with a kl term helped", 1),  # kl ×1, reward ×3
    _entry("reward hacking: the judge was fooled by long answers", 2),
    _entry("the reward model disagreed with the rule-based reward", 3),
    _entry("reward normalisation per group reduced variance", 4),
    _entry("overlong reward penalty shortened answers", 5),
    _entry("learning rate 1e-5 was stable", 6),
    _entry("dead end: nothing to see", 7, kind="negative_evidence"),
]


def _ids(hits: list[SearchHit]) -> list[str]:
    return [h.entry.id for h in hits]


def test_the_entry_with_more_of_the_rare_term_ranks_first() -> None:
    hits = search_entries(CORPUS, "kl reward")
    assert _ids(hits) == [CORPUS[0].id, CORPUS[1].id]  # 2× the rare word beats 3× the common one
    assert hits[0].score > hits[1].score > 0
    assert hits[0].matched == ["kl", "reward"]
    assert _ids(search_entries(CORPUS, "reward kl")) == _ids(hits)  # word order does not matter
    # every word must match; a repeated word counts once
    assert _ids(search_entries(CORPUS, "kl kl reward KL")) == _ids(hits)
    assert search_entries(CORPUS, "kl stable") == []
    # shorter entry first when the term frequency is the same
    short = _entry("entropy collapsed", 10)
    long = _entry(
        "entropy collapsed after the learning rate warm-up ended and the policy drifted", 11
    )
    assert _ids(search_entries([long, short], "entropy")) == [short.id, long.id]


def test_ties_keep_the_older_entry_first() -> None:
    newer = _entry("same words here", 30)
    older = _entry("same words here", 20)
    hits = search_entries([newer, older], "same words")
    assert _ids(hits) == [older.id, newer.id]
    assert hits[0].score == hits[1].score


def test_fields_searched_and_tokenization() -> None:
    skill = _entry(
        "verified on gsm8k",
        0,
        kind="skill_verification",
        skill="StdGroupFilter",
        data={
            "delta": 0.08,
            "feedback": "fewer dead_groups",
            "findings": [{"code": "signal.kl_spike"}],
        },
        tags=["grpo"],
        version="v3",
        domain="code",
    )
    other = _entry("unrelated lesson", 1)
    for query in (
        "StdGroupFilter",
        "std group filter",
        "stdgroup*",
        "grpo",
        "v3",
        "code",
        "skill verification",
        "dead groups",
        "dead_groups",
        "signal.kl_spike",
        "kl spike",
        "gsm8k",
        "verified",
    ):
        assert _ids(search_entries([skill, other], query)) == [skill.id], query
    assert _ids(search_entries([skill, other], "lesson")) == [other.id]  # the kind is searched too
    assert _ids(search_entries([skill, other], "std*")) == [skill.id]
    assert search_entries([skill, other], "stdgroupfilters") != []  # a plural s is dropped


def test_search_filters_by_kind_and_limits(ws: Workspace) -> None:
    lesson = memory.add_entry(ws, "dead groups hurt the signal")
    negative = memory.add_entry(ws, "dead groups everywhere, abandoned", kind="negative_evidence")
    assert set(_ids(memory.search(ws, "dead groups"))) == {lesson.id, negative.id}
    assert _ids(memory.search(ws, "dead groups", kind="negative_evidence")) == [negative.id]
    assert _ids(memory.search(ws, "dead groups", kind="lesson")) == [lesson.id]
    assert memory.search(ws, "dead groups", kind="incident") == []
    with pytest.raises(InvalidMemory):
        memory.search(ws, "dead", kind="gossip")
    assert len(memory.search(ws, "dead", limit=1)) == 1
    assert len(memory.search(ws, "dead", limit=None)) == 2
    # the filters of list_entries compose with search_entries
    assert _ids(
        search_entries(memory.list_entries(ws, version=None, domain="custom"), "abandoned")
    ) == [negative.id]


def test_limit() -> None:
    assert len(search_entries(CORPUS, "reward")) == 6
    assert (
        _ids(search_entries(CORPUS, "reward", limit=2))
        == _ids(search_entries(CORPUS, "reward"))[:2]
    )
    assert len(search_entries(CORPUS, "reward", limit=100)) == 6
    assert search_entries(CORPUS, "reward", limit=0) == []
    assert search_entries([], "reward") == []
    for bad in (-1, 1.5, True, "3"):
        with pytest.raises(InvalidMemory, match="limit") as info:
            search_entries(CORPUS, "reward", limit=bad)  # type: ignore[arg-type]
        assert info.value.fix


SYNTAX = [
    "NEAR(",
    "NEAR(kl reward, 2)",
    "NEAR(kl reward",
    "kl AND",
    "AND kl",
    "OR kl",
    "NOT kl",
    "kl NOT reward",
    "kl -reward",
    "-kl",
    "^kl",
    "kl^",
    "+kl",
    "body:kl",
    "{body}: kl",
    "{body created_at}: kl",
    "created_at:kl",
    "id:kl",
    'kl"reward',
    '"kl reward"',
    "'kl'",
    "(kl",
    "kl)",
    "(kl OR reward)",
    "kl*reward",
    "kl**",
    "**kl",
    "kl:*",
    "kl.*",
    "kl -",
    "kl \\",
    "kl;DROP TABLE docs;--",
    "kl' OR '1'='1",
    "kl\x00reward",
    "\x1b[31mkl\x1b[0m",
    "kl\u200breward",
    "kl\ud800",
    "klé reward",
    "k\u0142 kl",
    "kl 🙂 reward",
    "kl\r\nreward\t",
]


@pytest.mark.parametrize("query", SYNTAX)
def test_fts5_syntax_in_a_query_is_plain_text(query: str) -> None:
    """Operators, column filters and quotes are never FTS5 syntax: only the words count."""
    hits = search_entries(CORPUS, query)
    assert all(isinstance(h, SearchHit) and h.score > 0 for h in hits)
    # the same words typed plainly give the same hits
    from evotree.memory.read import _WORD

    plain = " ".join(_WORD.findall(query.replace("*", " ")))
    if plain and not query.rstrip().endswith("*"):
        assert _ids(hits) == _ids(search_entries(CORPUS, plain)), query


def test_operator_words_are_searched_as_words() -> None:
    entries = [_entry("not near and or: dead end", 0), _entry("dead groups", 1)]
    assert _ids(search_entries(entries, "NOT dead")) == [entries[0].id]
    assert _ids(search_entries(entries, "dead AND near")) == [entries[0].id]
    assert _ids(search_entries(entries, "dead OR groups")) == []  # "or" is a word here, not OR
    assert _ids(search_entries(entries, "dead -groups")) == [entries[1].id]  # "-" is no NOT


@pytest.mark.parametrize(
    "query",
    [
        "",
        "   ",
        "\t\n",
        "*",
        "**",
        '"',
        '""',
        "()",
        "-",
        "^",
        ":",
        "!!!",
        "\x00",
        "日本語",
        "🙂",
        "\ud800",
        "\u200b",
    ],
)
def test_a_query_without_words_is_a_clear_error(query: str) -> None:
    with pytest.raises(InvalidMemory, match="expected words") as info:
        search_entries(CORPUS, query)
    assert isinstance(info.value, EvotreeError) and info.value.fix


def test_a_query_that_is_not_text_is_a_clear_error() -> None:
    with pytest.raises(InvalidMemory, match="string") as info:
        search_entries(CORPUS, None)  # type: ignore[arg-type]
    assert info.value.fix


def test_very_long_queries() -> None:
    assert search_entries(CORPUS, "k" * 200_000) == []
    assert search_entries(CORPUS, " ".join(f"w{i}" for i in range(20_000))) == []
    assert search_entries(CORPUS, " ".join(f"w{i}*" for i in range(2_000))) == []
    assert _ids(search_entries(CORPUS, "kl " * 50_000)) == [CORPUS[0].id, CORPUS[1].id]


def test_cli_search_with_syntax_characters(repo: Path, ws: Workspace) -> None:
    run = Cli(repo)
    entry = memory.add_entry(ws, "near the kl limit or so the reward fell")
    for query in ("NEAR(kl", 'kl"', "NEAR kl OR reward*", "{reward}: kl"):
        out = run.json("memory", "search", query)
        assert [h["entry"]["id"] for h in out["hits"]] == [entry.id], query
        assert out["hits"][0]["score"] > 0
    error = run.json("memory", "search", '"', code=27)["error"]
    assert error["code"] == "memory_error" and "expected words" in error["message"] and error["fix"]
    table = run("memory", "search", "NEAR(", "kl")
    assert entry.id in table.stdout
    json.loads(run("memory", "search", "nothing*here", "--json").stdout)  # no hits: valid JSON
