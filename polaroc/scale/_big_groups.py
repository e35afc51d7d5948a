"""Groups too big for one worker: the per-fold table from per-distinct-score counts.

Every quantity of the per-fold table is a sum over the entries of a (group, class)
block of the count schema (:mod:`polaroc.core.counts`), given the counts of positives
and negatives strictly below and above each score. So a block can be cut into ranges of
scores (*buckets*, the buckets option of the table evaluator): each bucket's rows are
counted on their own (:func:`polaroc.core.counts.table`) and moved into their block by
the counts of the buckets below and above it (*offsets*, one small table:
:func:`polaroc.core.counts.range_offsets`, :func:`~polaroc.core.counts.with_offsets`);
the per-bucket partial sums of the core's formulas add up to the block's sums exactly
(integers for the counts, so the AUC's 2U is exact). The sums are then assembled into
the table by the same Polars code as :func:`polaroc.evaluate`
(:func:`polaroc.core.blocks.directions`, ``m_table``, ``per_class``, ``threshold_c1``).

The functions here are the Polars steps; :mod:`polaroc.scale.distributed` runs
them on the engine's partitions. Group ids (``_pr_gid``) replace the ``by`` keys
on the engine, so that no engine ever groups by a null or a float key of the log.
"""

from __future__ import annotations

import polars as pl

from polaroc.core import counts
from polaroc.core.blocks import (
    CLASS,
    LABEL,
    USABLE,
    block_sums,
    c1_table,
    directions,
    read_classes,
    row_flags,
    threshold_c1,
    within_keys,
)
from polaroc.core.formulas import PAIR_SUMS
from polaroc.core.inputs import LogColumns
from polaroc.core.log import SCORE
from polaroc.evaluation.per_fold import per_fold_table, probability_parts, score_sum
from polaroc.metrics.scoring import brier_loss, log_loss_terms, not_probability

GID = "_pr_gid"
BUCKET = "_pr_bucket"
PART = "_pr_part"
W = "_pr_w"
FLAGS = ("n_null_score", "n_null_label", "_rows", "_correct", "_nan")
SUM_COLUMNS = ("n", *PAIR_SUMS)
BLOCK = (GID, CLASS)


def normalised_score() -> pl.Expr:
    """The score with −0.0 and 0.0 as one value (Polars folds ``x + 0.0`` away)."""
    score = pl.col(SCORE)
    return pl.when(score == 0.0).then(0.0).otherwise(score).alias(SCORE)


def tagged_rows(
    frame: pl.DataFrame, big: pl.DataFrame, by: list[str], columns: LogColumns, threshold: float
) -> pl.LazyFrame:
    """The rows of the big groups with ``_pr_gid``, class, label, score and the row flags."""
    parsed, lf = read_classes(frame, by=by, columns=columns)
    names = {"score": columns.score, "label": columns.label, "class_": columns.class_}
    return (
        lf.join(big.lazy().select(*by, GID), on=by, how="inner", nulls_equal=True)
        .with_columns(row_flags(names, parsed.has_class, threshold))
        .with_columns(normalised_score())
    )


def row_counts(
    frame: pl.DataFrame, big: pl.DataFrame, by: list[str], columns: LogColumns, threshold: float
) -> pl.DataFrame:
    """Rows per (group id, class, label, distinct score), with the row flags summed.

    Applied to each partition of the log (a combiner), then again to the
    engine-shuffled partial counts by :func:`recount`.
    """
    rows = tagged_rows(frame, big, by, columns, threshold)
    return recount(rows.with_columns(pl.lit(1, pl.Int64).alias(W)))


def recount(rows: pl.LazyFrame | pl.DataFrame) -> pl.DataFrame:
    """Sum ``_pr_w`` and the flags of equal (group id, class, label, score) rows."""
    sums = [pl.col(W, *FLAGS).cast(pl.Int64).sum()]
    return rows.lazy().group_by(GID, CLASS, LABEL, SCORE).agg(*sums).collect()


def with_bucket(rows: pl.DataFrame, breaks: pl.Series) -> pl.DataFrame:
    """Bucket of each score: the number of ``breaks`` at or below it (NaN: the last)."""
    return rows.with_columns(counts.bucket_of(breaks).alias(BUCKET))


def bucket_totals(counts: pl.DataFrame) -> pl.DataFrame:
    """Per (group id, class, bucket, label): usable rows, positives' score sum, flags.

    Also the row sums of the scoring rules over the usable rows (count × the row's
    value, as :func:`polaroc.metrics.scoring.group_scores` adds them row by row):
    ``_brier`` = Σ (s − y)², ``_log`` = Σ −log clip(given), ``_bad`` = rows outside
    ``[0, 1]``; :func:`probability_scores` turns them into the group's values.
    """
    usable = USABLE
    positive = pl.col(LABEL) == pl.col(CLASS)
    w, s = pl.col(W), pl.col(SCORE)
    return (
        counts.lazy()
        .group_by(*BLOCK, BUCKET, LABEL)
        .agg(
            w.filter(usable).sum().alias(W),
            (s * w).filter(usable & positive).sum().alias("_s"),
            pl.col(*FLAGS).sum(),
            (brier_loss(s, positive) * w).filter(usable).sum().alias("_brier"),
            (log_loss_terms(s, positive) * w).filter(usable).sum().alias("_log"),
            w.filter(usable & not_probability(s)).sum().cast(pl.Int64).alias("_bad"),
        )
        .collect()
    )


def probability_scores(totals: pl.DataFrame) -> pl.DataFrame:
    """Per group id: the scoring rules' parts from :func:`bucket_totals`.

    The bucket totals summed per (group id, class) block into the sums
    :func:`polaroc.evaluation.per_fold.probability_parts` reads from ``pr.evaluate``'s rows, so
    that one rule (:func:`polaroc.evaluation.per_fold.per_fold_table`) turns both into
    ``brier``, ``log_loss`` and ``n_not_probability``.
    """
    cls, lab, w = pl.col(CLASS), pl.col(LABEL), pl.col(W)
    positive = lab == cls
    present = totals.lazy().filter((w > 0) & cls.is_not_null() & lab.is_not_null())
    blocks = present.group_by(GID, CLASS).agg(
        w.sum().alias("_rows"),
        (pl.col("_nan").sum() > 0).alias("_nan"),
        pl.col("_brier").sum().alias(score_sum("brier")),
        pl.col("_log").sum().alias(score_sum("log")),
        w.sum().alias(score_sum("w")),
        pl.col("_bad").sum().alias(score_sum("bad")),
        pl.col("_log").filter(positive).sum().alias(score_sum("log_pos")),
        w.filter(positive).sum().alias(score_sum("w_pos")),
    )
    return probability_parts(blocks, [GID], has_class=True).collect()


# 2U and the placement sums are Int64: exact while 2·n₊·n₋ (their bound) stays below 2⁶³
_INT64_PAIRS = 2.0**62


def check_range(totals: pl.DataFrame) -> None:
    """Raise if a block's pair count could overflow the 64-bit sums (never wrap silently)."""
    positive = pl.col(LABEL) == pl.col(CLASS)
    w = pl.col(W).cast(pl.Float64)
    pairs = (
        totals.filter(pl.col(LABEL).is_not_null() & pl.col(CLASS).is_not_null())
        .group_by(*BLOCK)
        .agg((w.filter(positive).sum() * w.filter(~positive).sum()).alias("_pairs"))
    )
    largest = pairs["_pairs"].max()
    if isinstance(largest, float) and largest >= _INT64_PAIRS:
        msg = (
            f"a group holds {largest:.3g} (positive, negative) pairs: more than the 64-bit "
            "counts of the exact AUC hold (4.6e18); split it with a finer by="
        )
        raise ValueError(msg)


def offsets(totals: pl.DataFrame) -> pl.DataFrame:
    """Per (group id, class, bucket): what lies below and above it in its block.

    ``totals`` are the summed :func:`bucket_totals` of every partition; the offsets are
    the counting core's (:func:`polaroc.core.counts.range_offsets`).
    """
    positive = pl.col(LABEL) == pl.col(CLASS)
    w = pl.col(W)
    per_bucket = (
        totals.lazy()
        .filter(pl.col(LABEL).is_not_null() & pl.col(CLASS).is_not_null())
        .group_by(*BLOCK, BUCKET)
        .agg(
            w.filter(positive).sum().alias("_pr_p"),
            w.sum().alias("_pr_r"),
            pl.col("_s").filter(positive).sum().alias("_pr_s"),
        )
    )
    return counts.range_offsets(per_bucket, BLOCK, BUCKET).collect()


def bucket_sums(rows: pl.DataFrame, offset: pl.DataFrame) -> pl.DataFrame:
    """Per (group id, class, label): one bucket's share of the sums of ``block_sums``.

    ``rows`` holds the rows of one or more (group id, class, bucket) partitions (each
    distinct (label, score) once, counted ``_pr_w`` times), ``offset`` their
    :func:`offsets`. Each bucket is counted by the table evaluator
    (:func:`polaroc.core.counts.table`, positives meaning label = class) and its entries
    moved into their whole block by the offsets (:func:`polaroc.core.counts.with_offsets`):
    the sums are the core's pair sums, exact integers for the counts.
    """
    blk = [*BLOCK, BUCKET]
    groups, entries = counts.table(
        rows.lazy(),
        blk,
        usable=USABLE,
        positive=pl.col(LABEL) == pl.col(CLASS),
        label=LABEL,
        count=W,
    )
    entries = entries.join(groups.select(counts.GID, *blk), on=counts.GID)
    entries = counts.with_offsets(entries, offset.lazy(), on=blk)
    return block_sums(entries, BLOCK, weighted=True, exact=False).collect()


def sample_c1(
    frame: pl.DataFrame, gid: str, by: list[str], columns: LogColumns, threshold: float
) -> pl.DataFrame:
    """``n`` and ``c1`` (the per-sample proportion correct) of a part of a group's samples.

    ``frame`` holds every row of its samples (the engine partitions by a hash of the
    sample id) with ``gid`` and ``_pr_part`` columns.
    """
    parsed, lf = read_classes(frame, by=[gid, PART], columns=columns)
    within = within_keys(parsed, [gid, PART])
    usable = lf.filter(USABLE)
    return c1_table(usable, [gid, PART], columns.sample, threshold, within).collect()


def combine_c1(parts: pl.DataFrame) -> pl.DataFrame:
    """Per group id: samples ``n`` and ``c1`` from the parts of :func:`sample_c1`."""
    n = pl.col("n").cast(pl.Int64)
    c1 = (pl.col("c1") * n).sum() / n.sum()
    return parts.group_by(GID).agg(n.sum().alias("n"), c1.alias("c1"))


def assemble(
    sums: pl.DataFrame,
    flags: pl.DataFrame,
    big: pl.DataFrame,
    by: list[str],
    c1: pl.DataFrame | None,
    scores: pl.DataFrame,
) -> pl.DataFrame:
    """The per-fold table of the big groups, as :func:`polaroc.evaluate` assembles it.

    ``sums``: per (group id, class, label) the sums of ``core.blocks.block_sums``; ``flags``:
    per (group id, class) the row flags; ``big``: by…, ``_pr_gid``; ``c1``: per
    group id ``n`` and ``c1`` for logs judged per sample (else ``None``).
    """
    keys = big.select(*by, GID).lazy()
    named = sums.lazy().join(keys, on=GID).drop(GID)
    dirs = directions(named, by).cache()
    flag_sums = flags.lazy().join(keys, on=GID).with_columns(pl.col("_nan") > 0)
    counts = threshold_c1(flag_sums.drop(GID), by)
    if c1 is not None:
        per_sample = c1.lazy().join(keys, on=GID).drop(GID)
        counts = counts.drop("n", "c1").join(per_sample, on=by, how="left", nulls_equal=True)
    scores_of = scores.lazy().join(keys, on=GID).drop(GID)
    table = per_fold_table(counts, named, dirs, scores_of, by)
    table = table.with_columns(pl.col("n_not_probability").fill_null(0))
    return table.collect()
