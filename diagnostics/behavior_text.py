"""Behavior analyzers of the rollouts' texts, read from a bounded sample of early and late
groups: template collapse (within-group diversity) and repetition within a text."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from evotree.diagnostics.findings import (
    AnalysisContext,
    Analyzer,
    Finding,
    Shared,
    check_order,
    check_range,
    query,
    register_analyzer,
)
from evotree.diagnostics.behavior_rollouts import is_gym_run
from evotree.diagnostics.signal_series import shared_groups, using
from evotree.diagnostics.thresholds import help_field
from evotree.harness.compaction import sql_string

__all__ = [
    "Diversity",
    "DiversityThresholds",
    "Repetition",
    "RepetitionThresholds",
    "ngrams_sql",
    "text_sample",
]


def text_sample(
    con: Any,
    context: AnalysisContext,
    run_id: str,
    *,
    sample_groups: int,
    seed: int,
    max_chars: int,
) -> tuple[Shared, dict[str, Any]]:
    """The shared text sample of a run (see the behavior layer's doc): one row per text with ``win``
    ('early'/'late'), ``step``, ``group_id``, ``rid`` (row id) and ``words`` (list of words)."""
    groups = shared_groups(con, context, run_id)
    per_step, _ = query(
        con,
        "SELECT step, count(*) FROM __run_groups__ WHERE step IS NOT NULL GROUP BY step "
        "ORDER BY step",
        groups,
    )
    half = max(1, sample_groups // 2)
    steps = [s for s, _ in per_step]
    counts = np.array([c for _, c in per_step], dtype=np.int64)
    info: dict[str, Any] = {
        "sample_groups": sample_groups,
        "seed": seed,
        "max_chars": max_chars,
        "run_groups": int(counts.sum()),
        "run_steps": len(steps),
    }
    if not steps:
        late_first = early_last = None
    else:
        from_end = np.cumsum(counts[::-1])
        late_first_i = (
            len(steps) - 1 - int(np.searchsorted(from_end, half))
        )  # first step of the late window
        late_first_i = max(late_first_i, 0)
        late_first = steps[late_first_i]
        early_last_i = min(int(np.searchsorted(np.cumsum(counts), half)), late_first_i - 1)
        early_last = steps[early_last_i] if early_last_i >= 0 else None
    info.update({"early_last_step": early_last, "late_first_step": late_first})
    key = f"text_sample_{int(sample_groups)}_{int(seed)}_{int(max_chars)}"
    parts = []
    for win, cond in (
        ("early", f"step <= {early_last}" if early_last is not None else None),
        ("late", f"step >= {late_first}" if late_first is not None else None),
    ):
        if cond is None:
            continue
        # IN over (step, group_id) keeps the step range prunable (a SEMI JOIN was 5x slower)
        parts.append(
            f"SELECT '{win}' AS win, step, group_id, text FROM _rollouts "
            f"WHERE run_id = {sql_string(run_id)} AND phase = 'train' AND {cond} AND text IS NOT NULL "
            f"AND (step, group_id) IN (SELECT (step, group_id) FROM {groups.alias} WHERE {cond} "
            f"ORDER BY hash(step, group_id, {int(seed)}) LIMIT {half})"
        )
    if not parts:
        parts.append(
            "SELECT 'late' AS win, NULL::BIGINT AS step, NULL AS group_id, NULL AS text WHERE false"
        )
    # split at spaces after turning tabs and line breaks into spaces (plain replace and split are
    # ~3x faster than a regex split)
    lowered = f"lower(left(text, {int(max_chars)}))"
    for ch in (9, 10, 13):
        lowered = f"replace({lowered}, chr({ch}), ' ')"
    sql = (
        f"SELECT win, step, group_id, row_number() OVER () AS rid, list_filter(string_split("
        f"{lowered}, ' '), lambda w: w <> '') AS words FROM (" + " UNION ALL ".join(parts) + ")"
    )
    # the groups table is named by its alias inside: materialized with the temp table substituted
    shown = f"WITH {groups.alias} AS ({groups.sql}) {sql}"
    executed = sql.replace(f"FROM {groups.alias} WHERE", f"FROM {groups.table} WHERE")
    return context.shared(con, run_id, "text_sample", executed, key=key, shown=shown), info


def ngrams_sql(words: str, n: int) -> str:
    """SQL: the list of hashed word ``n``-grams of the list ``words`` (64-bit ``hash`` of the n
    words: a collision merges two n-grams with probability ~1e-19 per pair)."""
    parts = ", ".join(f"{words}[i + {k}]" if k else f"{words}[i]" for k in range(n))
    return f"list_transform(range(1, greatest(len({words}) - {n - 2}, 1)), lambda i: hash({parts}))"


@dataclass(frozen=True)
class DiversityThresholds:
    ngram: int = help_field(
        2, "distinct-n and the pairwise similarity use word n-grams of this size"
    )
    collapse_similarity: float = help_field(
        0.8, "a group whose texts have at least this mean pairwise Jaccard similarity is collapsed"
    )
    warn_fraction: float = help_field(0.3, "collapsed share of late groups above this: warn")
    high_fraction: float = help_field(0.6, "collapsed share of late groups above this: high")
    max_texts_per_group: int = help_field(
        16, "pairs are formed among at most this many texts of a group"
    )
    min_words: int = help_field(
        3,
        "groups whose texts average fewer words than this are not judged: a one- or "
        "two-word answer (a number) has no template to collapse onto",
    )
    sample_groups: int = help_field(2000, "groups whose texts are read (half early, half late)")
    seed: int = help_field(0, "seed of the group order within a boundary step")
    max_chars: int = help_field(4000, "texts are cut to this many characters")

    def __post_init__(self) -> None:
        owner = "behavior.diversity"
        if self.min_words < 1:
            raise ValueError(f"need min_words >= 1 in {owner}, actually: {self.min_words}")
        check_range(owner, "collapse_similarity", self.collapse_similarity, 0.0, 1.0)
        check_range(owner, "warn_fraction", self.warn_fraction, 0.0, 1.0)
        check_range(owner, "high_fraction", self.high_fraction, 0.0, 1.0)
        check_order(owner, warn_fraction=self.warn_fraction, high_fraction=self.high_fraction)
        if (
            self.ngram < 1
            or self.max_texts_per_group < 2
            or self.sample_groups < 1
            or self.max_chars < 1
        ):
            raise ValueError(
                f"need ngram >= 1, max_texts_per_group >= 2, sample_groups >= 1, max_chars >= 1 "
                f"in {owner}"
            )


@register_analyzer
class Diversity(Analyzer):
    """Within-group diversity of the texts: template collapse when a group's texts are near-identical.

    Per sampled group with at least two texts: distinct-n (distinct word n-grams / all word
    n-grams over its texts) and the mean pairwise Jaccard similarity of the texts' n-gram sets
    (two empty texts: 1). A group is collapsed when that similarity is at least
    ``collapse_similarity``; the collapsed share of the late groups decides. Groups whose texts
    average fewer than ``min_words`` words are left out (short answers: the behavior layer's doc); their count
    is in the evidence (``short_groups``), and with none left nothing is reported.
    """

    name = "behavior.diversity"
    layer = "behavior"
    codes = ("behavior.template_collapse",)
    thresholds_type = DiversityThresholds

    def analyze(
        self, con: Any, *, run_id: str, version: str | None, context: AnalysisContext | None = None
    ) -> list[Finding]:
        t = self.thresholds
        with using(context) as ctx:
            if is_gym_run(con, run_id, ctx):
                return []
            texts, info = text_sample(
                con, ctx, run_id, sample_groups=t.sample_groups, seed=t.seed, max_chars=t.max_chars
            )
            rows, shown = self._similarity(con, texts)
            by = {
                win: {
                    "groups": n,
                    "mean_similarity": sim,
                    "collapsed_groups": c,
                    "collapsed_fraction": c / n,
                    "mean_distinct_n": dn,
                }
                for win, n, sim, c, dn in rows
                if n
            }
            late = by.get("late")
            if not late or late["collapsed_fraction"] <= t.warn_fraction:
                return []
            short, shown_short = self._short_groups(con, texts)
        for win, n_short in short:
            if win in by:
                by[win]["short_groups"] = n_short
        frac = late["collapsed_fraction"]
        early = by.get("early")
        contrast = f" (early steps: {early['collapsed_fraction']:.0%})" if early else ""
        # texts shorter than one n-gram have no n-grams: distinct-n is undefined (None)
        distinct = late["mean_distinct_n"]
        distinct_text = (
            f"{distinct:.2f}" if distinct is not None else "n/a (texts shorter than one n-gram)"
        )
        return [
            self.finding(
                "behavior.template_collapse",
                "high" if frac > t.high_fraction else "warn",
                f"{frac:.0%} of sampled late groups are near-identical (mean pairwise similarity "
                f"{late['mean_similarity']:.2f}, distinct-{t.ngram} {distinct_text}){contrast}",
                run_id=run_id,
                version=version,
                evidence={
                    "late": late,
                    "early": early,
                    "ngram": t.ngram,
                    "collapse_similarity": t.collapse_similarity,
                    "min_words": t.min_words,
                    "warn": t.warn_fraction,
                    "high": t.high_fraction,
                    "sample": info,
                    "query": shown,
                    "query_short": shown_short,
                },
                suggestion="the samples of a prompt have collapsed onto one template, so their rewards are "
                "equal and carry no signal: raise the temperature, filter zero-variance groups "
                "(StdGroupFilter), or penalize duplicated samples",
                skills=["StdGroupFilter"],
            )
        ]

    def _similarity(self, con: Any, texts: Shared) -> tuple[list[tuple[Any, ...]], str]:
        """Per window (early, late): groups judged, their mean pairwise Jaccard similarity of
        word n-gram sets, the collapsed ones and the mean distinct-n; and the query."""
        t = self.thresholds
        grams = ngrams_sql("words", t.ngram)
        return query(
            con,
            (
                "WITH t0 AS (SELECT win, step, group_id, rid, words FROM __text_sample__ QUALIFY row_number() "
                f"OVER (PARTITION BY win, step, group_id ORDER BY rid) <= {int(t.max_texts_per_group)}), "
                "t1 AS (SELECT * FROM t0 QUALIFY avg(len(words)) OVER (PARTITION BY win, step, group_id) "
                f">= {int(t.min_words)}), "
                "g AS MATERIALIZED (SELECT win, dense_rank() OVER (ORDER BY win, step, group_id) AS gk, rid, "
                f"{grams} AS grams FROM t1), "
                "x AS MATERIALIZED (SELECT DISTINCT gk, rid, unnest(grams) AS x FROM g), "
                "kx AS (SELECT gk, rid, count(*) AS k FROM x GROUP BY ALL), "
                "k AS (SELECT g.win, g.gk, g.rid, coalesce(kx.k, 0) AS k, len(g.grams) AS n "
                "FROM g LEFT JOIN kx USING (gk, rid)), "
                "i AS (SELECT a.gk, a.rid AS ra, b.rid AS rb, count(*) AS inter FROM x AS a JOIN x AS b "
                "ON a.gk = b.gk AND a.x = b.x AND a.rid < b.rid GROUP BY ALL), "
                "p AS (SELECT a.win, a.gk, CASE WHEN a.k + b.k = 0 THEN 1.0 ELSE coalesce(i.inter, 0) / "
                "(a.k + b.k - coalesce(i.inter, 0)) END AS jaccard FROM k AS a JOIN k AS b ON a.gk = b.gk AND "
                "a.rid < b.rid LEFT JOIN i ON i.gk = a.gk AND i.ra = a.rid AND i.rb = b.rid), "
                "s AS (SELECT win, gk, avg(jaccard) AS similarity FROM p GROUP BY ALL), "
                "d AS (SELECT gk, count(DISTINCT x) AS grams_distinct FROM x GROUP BY gk), "
                "n AS (SELECT gk, sum(n) AS grams FROM k GROUP BY gk) "
                "SELECT s.win, count(*) AS groups, avg(s.similarity) AS mean_similarity, "
                f"count(*) FILTER (WHERE s.similarity >= {float(t.collapse_similarity)!r}) AS collapsed, "
                "avg(coalesce(d.grams_distinct, 0) / nullif(n.grams, 0)) AS mean_distinct_n "
                "FROM s LEFT JOIN d USING (gk) JOIN n USING (gk) GROUP BY s.win ORDER BY s.win"
            ),
            texts,
        )

    def _short_groups(self, con: Any, texts: Shared) -> tuple[list[tuple[Any, ...]], str]:
        """Per window: the groups left out for texts averaging under ``min_words``; the query."""
        t = self.thresholds
        return query(
            con,
            (
                "SELECT win, count(*) FILTER (WHERE words < "
                + str(int(t.min_words))
                + ") AS short FROM ("
                "SELECT win, step, group_id, avg(len(words)) AS words FROM __text_sample__ GROUP BY ALL) "
                "GROUP BY win ORDER BY win"
            ),
            texts,
        )


@dataclass(frozen=True)
class RepetitionThresholds:
    ngram: int = help_field(3, "repeats are counted over word n-grams of this size")
    repeated_fraction: float = help_field(
        0.5, "a text is repetitive when at least this share of its n-grams are repeats"
    )
    min_words: int = help_field(20, "shorter texts are not judged")
    warn_fraction: float = help_field(0.1, "repetitive share of late texts above this: warn")
    high_fraction: float = help_field(0.3, "repetitive share of late texts above this: high")
    sample_groups: int = help_field(2000, "groups whose texts are read (half early, half late)")
    seed: int = help_field(0, "seed of the group order within a boundary step")
    max_chars: int = help_field(4000, "texts are cut to this many characters")

    def __post_init__(self) -> None:
        owner = "behavior.repetition"
        for name in ("repeated_fraction", "warn_fraction", "high_fraction"):
            check_range(owner, name, getattr(self, name), 0.0, 1.0)
        check_order(owner, warn_fraction=self.warn_fraction, high_fraction=self.high_fraction)
        if self.ngram < 1 or self.min_words < 1 or self.sample_groups < 1 or self.max_chars < 1:
            raise ValueError(f"need ngram, min_words, sample_groups and max_chars >= 1 in {owner}")


@register_analyzer
class Repetition(Analyzer):
    """Repeated n-grams within a text (degenerate loops).

    Per sampled text of at least ``min_words`` words: 1 - distinct n-grams / n-grams. A text is
    repetitive at ``repeated_fraction`` or more; the repetitive share of the late texts decides.
    """

    name = "behavior.repetition"
    layer = "behavior"
    codes = ("behavior.repetition_high",)
    thresholds_type = RepetitionThresholds

    def analyze(
        self, con: Any, *, run_id: str, version: str | None, context: AnalysisContext | None = None
    ) -> list[Finding]:
        t = self.thresholds
        with using(context) as ctx:
            if is_gym_run(con, run_id, ctx):
                return []
            texts, info = text_sample(
                con, ctx, run_id, sample_groups=t.sample_groups, seed=t.seed, max_chars=t.max_chars
            )
            grams = ngrams_sql("words", t.ngram)
            rows, shown = query(
                con,
                (
                    "WITH r AS (SELECT win, 1 - count(DISTINCT x) / count(x) AS repeated FROM (SELECT win, rid, "
                    f"unnest({grams}) AS x FROM __text_sample__ WHERE len(words) >= {int(t.min_words)}) "
                    "GROUP BY win, rid HAVING count(x) > 0) "
                    f"SELECT win, count(*) AS texts, count(*) FILTER (WHERE repeated >= {float(t.repeated_fraction)!r}) "
                    "AS repetitive, avg(repeated) AS mean_repeated FROM r GROUP BY win ORDER BY win"
                ),
                texts,
            )
        by = {
            win: {
                "texts": n,
                "repetitive_texts": k,
                "repetitive_fraction": k / n,
                "mean_repeated_fraction": m,
            }
            for win, n, k, m in rows
            if n
        }
        late = by.get("late")
        if not late or late["repetitive_fraction"] <= t.warn_fraction:
            return []
        frac = late["repetitive_fraction"]
        early = by.get("early")
        contrast = f" (early steps: {early['repetitive_fraction']:.0%})" if early else ""
        return [
            self.finding(
                "behavior.repetition_high",
                "high" if frac > t.high_fraction else "warn",
                f"{frac:.0%} of sampled late texts repeat themselves (>= {t.repeated_fraction:.0%} of their "
                f"{t.ngram}-grams are repeats){contrast}",
                run_id=run_id,
                version=version,
                evidence={
                    "late": late,
                    "early": early,
                    "ngram": t.ngram,
                    "repeated_fraction": t.repeated_fraction,
                    "min_words": t.min_words,
                    "warn": t.warn_fraction,
                    "high": t.high_fraction,
                    "sample": info,
                    "query": shown,
                },
                suggestion="completions loop on the same phrases until the length limit: penalize overlong "
                "outputs (OverlongPenalty), add a repetition penalty at sampling, check the stop tokens",
                skills=["OverlongPenalty"],
            )
        ]
