"""One ordering per (group, class) block: the private core of the per-fold and multiclass tables.

Both :func:`polaroc.evaluate` and the multiclass tables (:func:`polaroc.pairwise_auc`,
:func:`polaroc.multiclass_auc`, :func:`polaroc.proportion_correct`) read a long log the same
way: its scores are ordered once per (group, class) block, and from that one ordering come
Hand & Till's (2001) directions A(i|j), M, Wu & Flach's (2005) scored AUC per pair, the
one-vs-rest placement values behind DeLong's standard error, the null counts, and the
proportion correct C₁/C₂. This module holds that machinery; the public modules only
assemble its tables.

How A(i|j) is counted
---------------------
Each (group, class i) block of scores is ordered once. In that order, for a row y
whose label is not i, the number of label-i rows scored above it plus half those
tied with it is ``n_i − (p_<(y) + p_≤(y))/2``, where ``p_<`` and ``p_≤`` count the
label-i rows strictly below y and at or below y (both read at y's tie run).
Summing it over the label-j rows gives the Mann–Whitney count U(i|j) and
A(i|j) = U(i|j)/(n_i n_j) (Hand & Till 2001, eq. 2–3).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import polars as pl

from polaroc.core import counts
from polaroc.core import formulas as f
from polaroc.core.counts import GID, NR, TOP, W
from polaroc.core.inputs import NAN, ColumnLike, FrameLike, LogColumns, fail_if
from polaroc.core.log import (
    Log,
    first_keys,
    key_columns,
    read_log,
    repeated_key_message,
    usable_weight,
)
from polaroc.core.names import CLASS as CLASS  # re-exported for scale/ (new code: _names)
from polaroc.core.names import (
    DUP,
    NAN_FLAG,
    ONE_GROUP,
    POSITIVE,
    SCALE,
    SCORE,
    WEIGHT,
)
from polaroc.core.names import LABEL as LABEL
from polaroc.core.sums import ExactSum, fixed_mean

# ----------------------------------------------------------------------- input


def read_classes(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None,
    columns: LogColumns,
    need: tuple[str, ...] = (),
    weight: ColumnLike | None = None,
    check_labels: bool = True,
) -> tuple[Log, pl.LazyFrame]:
    """Validate ``log`` and return it with comparable ``_pr_class``/``_pr_label`` columns.

    All rows are kept; filter with :data:`USABLE` to drop those with a null score,
    label or class. A log without a class column is binary: its class is the
    positive value (``True`` or ``1``) and its label the 0/1 or Boolean indicator,
    so ``label == class`` marks the positives as ``read_log`` does. With a
    ``weight`` column the frame also carries ``_pr_weight`` (see ``read_log``).
    ``check_labels=False`` leaves the labels' check to the caller (see
    :func:`labels_checked`).
    """
    parsed = read_log(
        log, by=by, columns=columns, need=need, weight=weight, check_labels=check_labels
    )
    return parsed, parsed.with_classes()


def labels_checked(table: pl.LazyFrame, sums: pl.LazyFrame, by: Sequence[str]) -> pl.LazyFrame:
    """``table``, or a ``DataError`` naming the label values with no score row for their class.

    The check of :func:`polaroc.core.log.labels_without_class` read from the ordering's
    own sums (per block and label value) instead of a second read of the log: within
    each group of ``by`` holding two or more class values, every label value must be
    one of them.
    """
    classes = sums.group_by(by).agg(pl.col(CLASS).unique().alias("_pr_classes"))
    labels = sums.select(*by, LABEL).unique()
    missing = (
        labels.join(classes, on=list(by), how="left", nulls_equal=True)
        .filter(pl.col("_pr_classes").list.len() > 1)
        .filter(~pl.col(LABEL).is_in(pl.col("_pr_classes")))
    )
    shown = [c for c in by if c != ONE_GROUP]
    listed = first_keys([*shown, LABEL])
    message = pl.concat_str(
        pl.lit("polaroc: the log has label values with no score row for their class: "),
        listed,
        pl.lit(
            "; every label value needs the scores of its own class (as scikit-learn "
            "requires): add those rows, or drop the samples of that label."
        ),
    )
    found = missing.select(pl.len().alias(_COUNT), message.alias(_MESSAGE))
    return (
        table.join(found, how="cross")
        .filter(fail_if(pl.col(_COUNT).first() > 0, pl.col(_MESSAGE).first()))
        .drop(_COUNT, _MESSAGE)
    )


USABLE = pl.all_horizontal(pl.col(SCORE, LABEL, CLASS).is_not_null())


# ------------------------------------------------------ one ordering per block


def block_tables(
    frame: pl.LazyFrame,
    by: list[str],
    extra: Sequence[pl.Expr] = (),
    *,
    collapse: bool = False,
    weighted: bool = False,
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """Order each (group, class) block's scores once; return ``(keys, sums)``.

    The table evaluator (:func:`polaroc.core.counts.table`) on the blocks, the label
    keeping the negatives apart. ``keys`` has one row per block: by…, ``_pr_class``
    and the ``extra`` aggregations, evaluated over all the block's rows (usable or
    not) in the same pass. ``sums`` has one row per block and label value of the usable
    rows, with the sums of :func:`block_sums` and ``_pr_nan`` (the label's rows hold a
    NaN).

    ``collapse=True`` first collapses the rows that share (group, class, score, label)
    into one entry with a count (a hash aggregation): much cheaper when scores are
    heavily tied, dearer when they are distinct. The ``extra`` aggregations must then be
    sums, counts-as-sums or ``any`` (as :data:`FLAG_COUNTS` are). ``weighted=True``
    reads case weights from ``_pr_weight``: each row stands for its weight (divided by
    the block's largest, ``_pr_scale``), so every sum becomes a sum over pairs weighted
    w_i·w_j. Rows with a null or zero weight are left out of the ordering (kept in the
    ``extra`` aggregations); a zero-weight NaN score still makes its block NaN.
    """
    usable = (USABLE & usable_weight()) if weighted else USABLE
    groups, entries = counts.table(
        frame,
        [*by, CLASS],
        usable=usable,
        positive=pl.col(LABEL) == pl.col(CLASS),
        label=LABEL,
        extra=extra,
        collapse=collapse,
        weighted=weighted,
    )
    sums = block_sums(entries, [GID], weighted=collapse or weighted)
    sums = sums.join(groups.select(GID, *by, CLASS, *([SCALE] if weighted else [])), on=GID)
    return groups.drop(GID, SCALE, strict=False), sums.drop(GID)


def block_sums(
    entries: pl.LazyFrame, keys: Sequence[str], *, weighted: bool = False, exact: bool = True
) -> pl.LazyFrame:
    """Per (block, label): the sums every pairwise quantity is read from.

    ``entries`` are the table evaluator's (a block: ``keys``).

    "Positive" means ``label == class``. ``n`` counts the label's rows (weights); the
    others are the core's pair sums (:func:`polaroc.core.formulas.pair_terms`) over the
    label's entries: ``t``/``tt`` (negatives: twice the positives each outranks, ties ½,
    and its square), ``q``/``qq`` (positives: twice the negatives each outranks, over
    all the block's negatives), ``gap`` (the scored AUC's Σ (x − y)·[x > y]) and ``ap``
    (each positive's precision) — :func:`polaroc.core.formulas.pair_summands`, each row's
    value a column and its weight applied in the aggregation.

    ``exact``: the float sums are :class:`~polaroc.core.sums.ExactSum` (the same bits in
    any order); ``False`` for entries of one block from several score ranges (the big
    groups of :mod:`polaroc.scale`), whose bounds differ from range to range: plain sums.
    """
    # each row is one class: the class's value where the row is of it (a null elsewhere,
    # skipped by the sums), its weight applied in the aggregation
    positive = pl.col(POSITIVE)
    values = {
        name: pl.when(positive if cls == "pos" else ~positive).then(value).alias(name)
        for name, (cls, value) in f.pair_summands(counts.columns(weighted=weighted)).items()
    }
    real = weighted and entries.collect_schema()[W].is_float()
    # Every float sum is exact (ExactSum: the same bits whatever order the rows come in,
    # whatever the threads); the units bound the terms: the group's positives' scores
    # above its lowest (``_pr_top``) each sAUC term, its rows or weight (``_pr_cnr``) a
    # count, 1 a precision. Integer counts are summed as integers, their squares in 128 bits.
    w, nr, one = pl.col(W), pl.col(NR).cast(pl.Float64), pl.lit(1.0)
    top = pl.col(TOP)

    def times_w(name: str) -> pl.Expr:
        return w * pl.col(name) if weighted else pl.col(name)

    if not exact:
        sums_of = [times_w(k).sum().alias(k) for k in values]
        size = w.sum() if weighted else pl.len().cast(pl.Int64)
        return (
            entries.select(
                *keys,
                LABEL,
                pl.col(SCORE).is_nan().alias(NAN_FLAG),
                *([W] if weighted else []),
                *values.values(),
            )
            .group_by(*keys, LABEL)
            .agg(pl.col(NAN_FLAG).any(), size.alias("n"), *sums_of)
        )
    # a precision, a weight and the counts are finite whatever the scores; a gap is not
    # (an infinite score): only its sum keeps the float sum that stands in for it
    exact_sums = [
        ExactSum("gap", times_w("gap"), top),
        ExactSum("ap", times_w("ap"), one, finite=True),
    ]
    if real:  # a row counts ``_pr_w`` times, a real weight (at most 1)
        exact_sums += [
            ExactSum("n", w, one, finite=True),
            ExactSum("q", times_w("q"), nr, finite=True),
            ExactSum("qq", times_w("qq"), nr * nr, finite=True),
            ExactSum("t", times_w("t"), nr, finite=True),
            ExactSum("tt", times_w("tt"), nr * nr, finite=True),
        ]
        plain: list[pl.Expr] = []
    else:  # integers (a collapsed entry counts ``_pr_w`` times): squares in 128 bits
        w128 = w.cast(pl.Int128) if weighted else pl.lit(1, pl.Int128)

        def squares(name: str) -> pl.Expr:
            root = {"qq": "q", "tt": "t"}[name]
            return (w128 * pl.col(root).cast(pl.Int128) ** 2).sum().cast(pl.Float64).alias(name)

        plain = [
            (w.sum() if weighted else pl.len().cast(pl.Int64)).alias("n"),
            times_w("q").sum().alias("q"),
            squares("qq"),
            times_w("t").sum().alias("t"),
            squares("tt"),
        ]
    sums = (
        entries.select(
            *keys,
            LABEL,
            pl.col(SCORE).is_nan().alias(NAN_FLAG),
            *([W] if weighted else []),
            NR,
            TOP,
            *values.values(),
        )
        .group_by(*keys, LABEL)
        .agg(pl.col(NAN_FLAG).any(), *plain, *(a for e in exact_sums for a in e.aggs()))
    )
    order = [*keys, LABEL, NAN_FLAG, "n", *f.PAIR_SUMS]
    return sums.with_columns(e.result() for e in exact_sums).select(order)


def blocks(frame: pl.LazyFrame, by: list[str]) -> pl.LazyFrame:
    """The ``sums`` of :func:`block_tables`."""
    return block_tables(frame, by)[1]


def keyed_blocks(
    frame: pl.LazyFrame, parsed: Log, by: list[str], *, weighted: bool = False
) -> tuple[pl.LazyFrame, pl.LazyFrame | None]:
    """The ``sums`` of :func:`block_tables`, and per group whether a key may repeat.

    For a log with a sample column, the ordering's own per-block aggregation also
    counts the block's (dataset, model, repeat, fold, sample) keys
    (:func:`duplicate_rows`); the second table has by…, ``_pr_dup`` per group, for
    :func:`checked_keys`. ``None`` without a sample column.
    """
    sample = parsed.columns.sample
    if not parsed.has(sample):
        return block_tables(frame, by, weighted=weighted)[1], None
    extra = duplicate_rows(within_keys(parsed, by), sample)
    keys, sums = block_tables(frame, by, extra, weighted=weighted)
    return sums, keys.group_by(by).agg(pl.col(DUP).any())


def checked_keys(
    table: pl.LazyFrame,
    dups: pl.LazyFrame | None,
    frame: pl.LazyFrame,
    parsed: Log,
    by: list[str],
) -> pl.LazyFrame:
    """``table`` (rows per group of ``by``, never empty: use ``Log.groups``), or a repeat.

    Fails as :func:`unique_keys` if a key of ``frame`` (the log :func:`keyed_blocks`
    read) repeats. The check runs on ``dups`` (every group with rows), joined to
    ``table`` as a filter, so it fires even when ``table`` has no row for the group
    (e.g. every group of a pairwise table is degenerate).
    """
    if dups is None:
        return table
    sample = parsed.columns.sample
    checked = unique_keys(dups, frame, by, within_keys(parsed, by), sample)
    return table.join(checked, on=by, how="semi", nulls_equal=True)


def directions(sums: pl.LazyFrame, by: list[str], *, weighted: bool | None = None) -> pl.LazyFrame:
    """One row per group, class i and label j ≠ i present in the class-i block.

    ``sums`` is the output of :func:`blocks`. Columns: by…, ``_pr_class`` (i),
    ``_pr_label`` (j), ``n_i`` (label-i rows in the block), ``n_j`` (label-j rows),
    ``a`` = A(i|j), ``sauc`` = Wu & Flach's sAUC of the same binary problem, and the
    block's one-vs-rest sums ``n_neg``, ``pos_t``, ``pos_tt``, ``neg_t``, ``neg_tt``.
    ``a`` is null when the block has no label-i rows, NaN when it holds a NaN score.
    """
    block = [*by, CLASS]
    is_pos = pl.col(LABEL) == pl.col(CLASS)

    def block_total(value: str, where: pl.Expr) -> pl.Expr:
        return pl.when(where).then(pl.col(value)).otherwise(0).sum().over(block)

    with_block = sums.with_columns(
        pl.col(NAN_FLAG).any().over(block),
        n_i=block_total("n", is_pos),
        n_neg=block_total("n", ~is_pos),
        pos_t=block_total("q", is_pos),
        pos_tt=block_total("qq", is_pos),
        neg_t=block_total("t", ~is_pos),
        neg_tt=block_total("tt", ~is_pos),
    ).filter(~is_pos)
    n_i, n_j = pl.col("n_i"), pl.col("n")
    # the label-j rows' side of the pairs: 2U = 2·n_i·n_j − Σ_j pos_below2
    won2 = 2.0 * (n_i * n_j).cast(pl.Float64) - pl.col("t")
    # weighted: the block's sums are of scaled weights (``None``: read it from the schema)
    scaled = SCALE in sums.collect_schema() if weighted is None else weighted

    def computed(value: pl.Expr) -> pl.Expr:
        return pl.when(pl.col(NAN_FLAG)).then(NAN).when(n_i > 0).then(value)

    def reported(total: pl.Expr) -> pl.Expr:  # a class's total weight, unscaled
        return total * pl.col(SCALE) if scaled else total

    return with_block.select(
        *by,
        CLASS,
        LABEL,
        reported(n_i).alias("n_i"),
        reported(n_j).alias("n_j"),
        computed(f.auc_of(won2, n_i, n_j)).alias("a"),
        computed(f.sauc_of(pl.col("gap"), n_i, n_j)).alias("sauc"),
        "n_neg",
        "pos_t",
        "pos_tt",
        "neg_t",
        "neg_tt",
        NAN_FLAG,
        *([SCALE] if scaled else []),
    )


def _ordered_pair() -> tuple[pl.Expr, pl.Expr]:
    """The unordered pair {class, label} as (smaller, larger)."""
    c, lab = pl.col(CLASS), pl.col(LABEL)
    first = c < lab
    return (
        pl.when(first).then(c).otherwise(lab).alias("class_i"),
        pl.when(first).then(lab).otherwise(c).alias("class_j"),
    )


def pairs(dirs: pl.LazyFrame, by: list[str]) -> pl.LazyFrame:
    """Hand & Till's pairwise table from :func:`directions` (computable directions only)."""
    lo, hi = _ordered_pair()
    forward = pl.col(CLASS) == pl.col("class_i")  # the direction (i|j) uses class-i scores
    backward = ~forward

    def count_of(label_is_class: pl.Expr) -> pl.Expr:
        # rows of a label: n_i in the direction scored by that class, n_j in the other
        return pl.when(label_is_class).then(pl.col("n_i")).otherwise(pl.col("n_j")).max()

    table = (
        dirs.filter(pl.col("n_i") > 0)
        .with_columns(lo, hi)
        .group_by([*by, "class_i", "class_j"])
        .agg(
            pl.col("a").filter(forward).first().alias("a_i_j"),
            pl.col("a").filter(backward).first().alias("a_j_i"),
            count_of(forward).alias("n_i"),
            count_of(backward).alias("n_j"),
            pl.col("sauc").filter(forward).first().alias("sauc_i_j"),
            pl.col("sauc").filter(backward).first().alias("sauc_j_i"),
        )
    )
    return table.with_columns(
        pl.mean_horizontal("a_i_j", "a_j_i").alias("a"),
        pl.mean_horizontal("sauc_i_j", "sauc_j_i").alias("sauc"),
    )


def labels_present(sums: pl.LazyFrame, by: list[str]) -> pl.LazyFrame:
    """Every group with usable rows, and the number of label values it holds."""
    return sums.group_by(by).agg(pl.col(LABEL).n_unique().cast(pl.Int64).alias("n_classes"))


def m_table(sums: pl.LazyFrame, dirs: pl.LazyFrame, by: list[str]) -> pl.LazyFrame:
    """Per group: ``n_classes``, ``auc`` (M) and ``sauc``; ``dirs`` is :func:`directions`."""
    # the pairs come in a group-by's order: a fixed-order mean, the same bits in any order
    per_pair = (
        pairs(dirs, by)
        .group_by(by)
        .agg(fixed_mean(pl.col("a")).alias("auc"), fixed_mean(pl.col("sauc")).alias("sauc"))
    )
    return labels_present(sums, by).join(per_pair, on=by, how="left", nulls_equal=True)


def average_precision_table(sums: pl.LazyFrame, by: list[str]) -> pl.LazyFrame:
    """Per group: ``average_precision`` of the block of the larger class value.

    From the ``ap`` sums of :func:`block_tables` (each positive's precision at its
    tie run): AP = Σ precision / n⁺ (the core's average_precision_of),
    scikit-learn's ``average_precision_score``. The
    block of the larger class value is the positive class of a binary log (1 or
    ``True``; the only block of a log without a class column). Null without
    positives or negatives, NaN when the block holds a NaN score.
    """
    block = [*by, CLASS]
    positives = sums.with_columns(
        _rest=pl.col("n").sum().over(block) - pl.col("n"),
        _nan=pl.col(NAN_FLAG).any().over(block),
    ).filter(pl.col(LABEL) == pl.col(CLASS))
    n = pl.col("n")
    ap = (
        pl.when(pl.col("_nan"))
        .then(NAN)
        .otherwise(f.average_precision_of(pl.col("ap"), n, pl.col("_rest")))
    )
    return positives.group_by(by).agg(ap.sort_by(CLASS).last().alias("average_precision"))


def per_class(dirs: pl.LazyFrame, by: list[str], *, weighted: bool | None = None) -> pl.LazyFrame:
    """Per group and class: the one-vs-rest AUC and its DeLong variance.

    The class-i block's positives are the label-i rows and its negatives every other
    row, so the AUC is Σ_j U(i|j) / (n_i Σ_j n_j). DeLong, DeLong & Clarke-Pearson's
    (1988) variance is S₁₀/n_i + S₀₁/n_neg, from the placement values' sums.
    """
    n_i, n_neg = pl.col("n_i").cast(pl.Float64), pl.col("n_neg").cast(pl.Float64)
    if SCALE in dirs.collect_schema() if weighted is None else weighted:  # scaled sums
        n_i = n_i / pl.col(SCALE)
    per = dirs.filter(pl.col("n_i") > 0).group_by([*by, CLASS]).agg(pl.all().exclude(LABEL).first())
    var = f.delong_variance(
        n_i, n_neg, *(pl.col(c) for c in ("pos_t", "pos_tt", "neg_t", "neg_tt"))
    )
    auc = f.auc_of(pl.col("pos_t"), n_i, n_neg)
    nan = pl.col(NAN_FLAG)
    return per.select(
        *by,
        CLASS,
        "n_i",
        "n_neg",
        pl.when(nan).then(NAN).otherwise(auc).alias("auc"),
        pl.when(nan).then(NAN).otherwise(var).alias("var_delong"),
    )


def one_vs_rest(dirs: pl.LazyFrame, by: list[str], *, weighted: bool | None = None) -> pl.LazyFrame:
    """Per group: the macro and prevalence-weighted means of the one-vs-rest AUCs."""
    weight = pl.col("n_i").cast(pl.Float64)
    return (
        per_class(dirs, by, weighted=weighted)
        .group_by(by)
        .agg(
            pl.col("auc").mean().alias("auc_ovr_macro"),
            ((pl.col("auc") * weight).sum() / weight.sum()).alias("auc_ovr_weighted"),
        )
    )


# ------------------------------------------------------ proportion correct


def row_flags(
    columns: LogColumns | Mapping[str, str],
    has_class: bool,
    threshold: float,
    *,
    weighted: bool = False,
) -> list[pl.Expr]:
    """Per-row flags that :data:`FLAG_COUNTS` aggregates per (group, class) block.

    ``n_null_score``, ``n_null_label`` (label or class null), ``_rows`` (usable),
    ``_correct`` (usable, and ``score >= threshold`` agrees with ``label == class``)
    and ``_nan`` (usable with a NaN score). Computed as columns before the group-by:
    Polars aggregates plain columns much faster than expressions. With ``weighted``
    (aggregate with :data:`WEIGHTED_FLAG_COUNTS`): a usable row also needs a non-null
    weight above 0, ``_correct`` and ``_wrows`` are its weight, and
    ``n_null_weight`` flags a null weight.
    """
    if not isinstance(columns, LogColumns):  # a mapping of names (scale/'s older callers)
        columns = LogColumns().with_names(**columns)
    score, label = pl.col(SCORE), pl.col(LABEL)
    null_label = pl.col(columns.label).is_null()
    if has_class:
        null_label = null_label | pl.col(columns.class_).is_null()
    agrees = (score >= threshold) == (label == pl.col(CLASS))
    usable = (USABLE & usable_weight()) if weighted else USABLE
    flags = [
        pl.col(columns.score).is_null().alias("n_null_score"),
        null_label.alias("n_null_label"),
        usable.alias("_rows"),
        (usable & agrees).alias("_correct"),
        (usable & score.is_nan()).alias("_nan"),
    ]
    if weighted:
        w = pl.col(WEIGHT)
        flags[3] = pl.when(usable & agrees).then(w).otherwise(0.0).alias("_correct")
        flags += [
            pl.when(usable).then(w).otherwise(0.0).alias("_wrows"),
            w.is_null().alias("n_null_weight"),
        ]
    return flags


FLAG_COUNTS = [
    pl.col("n_null_score", "n_null_label", "_rows", "_correct").sum(),
    pl.col("_nan").any(),
]
WEIGHTED_FLAG_COUNTS = [*FLAG_COUNTS, pl.col("_wrows", "n_null_weight").sum()]


def threshold_c1(
    counts: pl.LazyFrame, by: list[str], *, keyed: bool = False, weighted: bool = False
) -> pl.LazyFrame:
    """Per group, from :data:`FLAG_COUNTS` per block: ``n``, ``c1`` and the null counts.

    Without a ``sample`` column each row is a sample: ``n`` is the largest class
    block's usable rows, and ``c1`` is defined where the group holds one class value
    (a binary log), every row then being a sample judged at the threshold. With
    ``keyed``, the blocks also carry :func:`duplicate_rows`, flagged per group. With
    ``weighted`` (from :data:`WEIGHTED_FLAG_COUNTS`), ``c1`` is the weighted share
    correct and ``n_null_weight`` is added.
    """
    rows = pl.col("_rows").cast(pl.Int64)
    total = pl.col("_wrows") if weighted else rows
    one_class = pl.col(CLASS).is_not_null().sum() == 1
    c1 = (
        pl.when(pl.col("_nan").any())
        .then(NAN)
        .when(one_class & (total.sum() > 0))
        .then(pl.col("_correct").sum() / total.sum())
    )
    return counts.group_by(by).agg(
        rows.max().alias("n"),
        c1.alias("c1"),
        pl.col("n_null_score", "n_null_label").sum().cast(pl.Int64),
        *([pl.col(DUP).any()] if keyed else []),
        *([pl.col("n_null_weight").sum().cast(pl.Int64)] if weighted else []),
    )


def c1_table(
    frame: pl.LazyFrame,
    by: list[str],
    sample: str,
    threshold: float,
    within: Sequence[str] = (),
    *,
    weighted: bool = False,
    weight_name: str = "weight",
    check: bool = True,
) -> pl.LazyFrame:
    """Per group: ``n`` samples and ``c1``, the proportion of samples classified correctly.

    ``frame`` holds the usable rows. A sample is assigned the class of its highest
    score (Hand & Till's C₁); when k classes share the top score the sample counts
    1/k correct (the expected value of breaking the tie at random), and a sample
    whose own class is not scored counts as wrong. A sample with a single score row
    (a binary log holding only the positive class's rows) is assigned that row's
    class iff ``score >= threshold``.

    A sample is a (``within``…, ``sample``) key within its group: ``within`` are
    the key columns (dataset, model, repeat, fold) not in ``by``, since sample ids
    are unique only within a (model, repeat, fold). The same aggregation flags, in
    ``_pr_dup``, the groups with a sample holding two rows of one class (a repeated
    key); see :func:`unique_keys`. ``check=False`` leaves the flag out, for a caller
    whose ordering of the blocks flags repeated keys already (:func:`duplicate_rows`):
    a count of distinct classes per sample costs this aggregation Polars' fast path.

    With ``weighted``, ``frame`` carries ``_pr_weight`` and ``c1`` is the mean
    weighted by each sample's weight. A sample's weight must be the same on all its
    class rows (the AUC weights each row, the error each sample: one rule for both),
    else a :class:`DataError` names ``weight_name``; samples whose weight is null or
    0 are then left out (unless a row holds a NaN score, which makes the group NaN).
    """
    score, pos = pl.col(SCORE), pl.col(LABEL) == pl.col(CLASS)
    keys = [*by, *within, sample]
    per_row = frame.with_columns(
        pl.when(pos).then(score).alias("_own"),
        pl.when(~pos).then(score).alias("_other"),
        ((score >= threshold) == pos).cast(pl.Float64).alias("_single"),
        score.is_nan().alias("_nan"),
    )
    per_sample = per_row.group_by(keys).agg(
        pl.col("_own", "_other").max(),
        pl.len().alias("_rows"),
        pl.col("_single").first(),
        pl.col("_nan").any(),
        *([(pl.col(CLASS).n_unique() < pl.len()).alias(DUP)] if check else []),
        *(
            [pl.col(WEIGHT).first(), (pl.col(WEIGHT).n_unique() > 1).alias(_MIXED)]
            if weighted
            else []
        ),
    )
    if weighted:
        mixed = pl.col(_MIXED).any()
        w = pl.col(WEIGHT)
        per_sample = per_sample.filter(fail_if(mixed, mixed_weight_message(weight_name))).filter(
            w.is_not_null() & ((w > 0.0) | pl.col("_nan"))
        )
    per_sample = per_sample.cache()
    own, other = pl.col("_own"), pl.col("_other")
    # rare: the own class ties the best other class; count the classes tied with it
    tied = per_sample.filter(own == other).select(*keys, own)
    ties = (
        frame.join(tied, on=keys, nulls_equal=True)
        .filter(~pos & (score == own))
        .group_by(keys)
        .agg(pl.len().alias("_k"))
    )
    correct = (
        pl.when(pl.col("_rows") == 1)
        .then(pl.col("_single"))
        .when(own.is_null())
        .then(0.0)
        .when(other.is_null() | (own > other))
        .then(1.0)
        .when(own == other)
        .then(1.0 / (1 + pl.col("_k")))
        .otherwise(0.0)
    )
    if weighted:
        w = pl.col(WEIGHT)
        share: pl.Expr = pl.when(w.sum() > 0).then((correct * w).sum() / w.sum())
    else:
        share = correct.mean()
    c1 = pl.when(pl.col("_nan").any()).then(NAN).otherwise(share)
    dup = pl.col(DUP)
    return (
        per_sample.join(ties, on=keys, how="left", nulls_equal=True)
        .group_by(by)
        .agg(
            pl.len().cast(pl.Int64).alias("n"),
            c1.alias("c1"),
            *([dup.any().alias(DUP)] if check else []),
        )
    )


_MIXED = "_pr_mixed_weight"


def mixed_weight_message(name: str) -> str:
    """The error for a sample whose class rows carry different weights."""
    return (
        f"polaroc: the weight column {name!r} gives one sample different weights on its "
        "class rows; a case weight belongs to the sample, so give every class row of a "
        f"sample the same weight, e.g. pl.col({name!r}).first().over(<keys>, 'sample')."
    )


# ------------------------------------------------------------- unique keys


def within_keys(parsed: Log, by: Sequence[str]) -> list[str]:
    """The key columns but the sample and class that ``by`` does not hold."""
    sample = parsed.columns.sample
    return [k for k in key_columns(parsed.schema, parsed.columns) if k not in {*by, sample}]


def duplicate_rows(within: Sequence[str], sample: str) -> list[pl.Expr]:
    """Per (group, class) block of rows: whether a (``within``…, sample) key may repeat.

    An extra aggregation of :func:`block_tables` (not with ``collapse``, whose extras
    must be sums): one hash count of the block's keys, the sample ids themselves when
    ``within`` is empty, else a hash of the key (two keys sharing a hash only make the
    block a suspect). :func:`unique_keys` then counts the suspects' keys exactly.
    """
    key = pl.struct(*within, sample).hash() if within else pl.col(sample)
    return [(key.n_unique() < pl.len()).alias(DUP)]


def unique_keys(
    table: pl.LazyFrame,
    frame: pl.LazyFrame,
    by: Sequence[str],
    within: Sequence[str],
    sample: str,
) -> pl.LazyFrame:
    """``table`` without its ``_pr_dup`` flag; a :class:`DataError` if a key repeats.

    The contract's keys (dataset, model, repeat, fold, sample, class) name at most one
    row. ``table`` flags, per group, whether a key may repeat (a cheap count made in an
    aggregation the caller runs anyway: :func:`duplicate_rows` or :func:`c1_table`);
    only the flagged groups' rows of ``frame`` (the log as :func:`read_classes` gives
    it) are counted per key here, so a valid log pays for a join against no group. The
    error names the first three repeated keys (sorted).
    """
    shown = [c for c in by if c != ONE_GROUP]
    names = [*shown, *within, sample]
    suspects = table.filter(pl.col(DUP)).select(by)
    key = [*by, *within, sample, CLASS]
    repeated = (
        frame.select(key)
        .join(suspects, on=list(by), how="semi", nulls_equal=True)
        .group_by(key)
        .agg(pl.len().alias(_COUNT))
        .filter(pl.col(_COUNT) > 1)
    )
    found = repeated.select(
        pl.len().alias(_COUNT), repeated_key_message(names, first_keys(names)).alias(_MESSAGE)
    )
    # the check filters ``table``'s own rows (as every input check does), so that it runs
    # however the caller joins the result
    failing = pl.col(_COUNT).first() > 0
    return (
        table.join(found, how="cross")
        .filter(fail_if(failing, pl.col(_MESSAGE).first()))
        .drop(_COUNT, _MESSAGE, DUP)
    )


_COUNT, _MESSAGE = "_pr_n", "_pr_message"


def c2_table(frame: pl.LazyFrame, by: list[str], sample: str) -> pl.LazyFrame:
    """Per group: ``c2``, Hand & Till's pairwise proportion correct.

    For the pair (i, j), a label-i sample is correct when its class-i score beats
    its class-j score (ties ½), and a label-j sample when its class-j score beats
    its class-i score: the "pairwise confusion matrix" of Hand & Till (2001, §3–4).
    ``c2`` is the mean over the pairs of label values with samples in the group of
    the proportion correct among the pair's compared samples. (Their eq. 11 gives
    its value for the normal model of §4; here it is normalised by the number of
    pairs so that it lies in [0, 1].) Null where no sample has scores for both
    classes of any pair.
    """
    score, pos, own = pl.col(SCORE), pl.col(LABEL) == pl.col(CLASS), pl.col("_own")
    # each row next to its sample's own-class score
    with_own = frame.with_columns(pl.when(pos).then(score).alias("_own")).with_columns(
        own.max().over([*by, sample])
    )
    compared = with_own.filter(~pos & own.is_not_null()).with_columns(
        ((own > score).cast(pl.Float64) + 0.5 * (own == score).cast(pl.Float64)).alias("_wins"),
        (score.is_nan() | own.is_nan()).alias("_nan"),
    )
    wins = compared.group_by([*by, LABEL, CLASS]).agg(
        pl.col("_wins").sum(), pl.len().alias("_m"), pl.col("_nan").any()
    )
    # a pair needs samples of both labels: keep comparisons against classes that are labels
    labels = frame.select(*by, pl.col(LABEL).alias(CLASS)).unique()
    lo, hi = _ordered_pair()
    per_pair = (
        wins.join(labels, on=[*by, CLASS], how="semi", nulls_equal=True)
        .group_by([*by, lo, hi])
        .agg(
            pl.when(pl.col("_nan").any())
            .then(NAN)
            .otherwise(pl.col("_wins").sum() / pl.col("_m").sum())
            .alias("_c2")
        )
    )
    return per_pair.group_by(by).agg(pl.col("_c2").mean().alias("c2"))
