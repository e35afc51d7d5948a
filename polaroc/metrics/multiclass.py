"""Hand & Till's (2001) multiclass AUC from the long log, and the measures around it.

Hand & Till (2001, §3) define, for two classes ``i`` and ``j`` of a c-class problem,
A(i|j): the probability that a label-j sample has a lower class-i score than a
label-i sample (ties counting one half). It is the binary AUC of the class-i scores
with the label-i rows as positives and the label-j rows as negatives, so it needs
the log's class-i rows. A(i, j) = [A(i|j) + A(j|i)]/2 and their eq. 7 averages it
over the class pairs: M = 2/(c(c−1)) Σ_{i<j} A(i, j).

Everything here is computed from the long log (one row per model, fold, sample,
class) by group-by aggregations; there is no pivot to a wide score matrix, no Python
loop over classes, and no assumption that scores are probabilities.

How A(i|j) is counted
---------------------
Each (group, class i) block of scores is ordered once. In that order, for a row y
whose label is not i, the number of label-i rows scored above it plus half those
tied with it is ``n_i − (p_<(y) + p_≤(y))/2``, where ``p_<`` and ``p_≤`` count the
label-i rows strictly below y and at or below y (both read at y's tie run).
Summing it over the label-j rows gives the Mann–Whitney count U(i|j) and
A(i|j) = U(i|j)/(n_i n_j) (Hand & Till 2001, eq. 2–3). The same pass yields Wu &
Flach's (2005) Rs⁺ and Rs⁻ per pair, and DeLong's placement values of the
one-vs-rest problem, so M, the multiclass sAUC, the one-vs-rest AUCs and the
two-class standard errors all come from one ordering of each block.

Awkward input (see the design contract)
---------------------------------------
* Pairs are over the label values that have samples in the group; A(i|j) needs
  class-i score rows with label-i samples among them. A pair appears when at least
  one direction can be computed and ``a`` averages the directions the log holds,
  so a binary log that holds only the positive class's rows gives the plain AUC.
* A class with no samples in a group is left out of that group's pairs (its scores
  are not used); ``n_classes`` reports the labels with samples. A label that is
  never logged as a class still pairs with the others through their scores.
* A NaN score makes every direction computed from its class block NaN (and so M);
  null scores, labels and classes drop the row.
* A log without a class column is binary: its label is the positive indicator.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import Literal, Unpack

import polars as pl

from polaroc.core.args import validated
from polaroc.core.batches import bounded_plan
from polaroc.core.blocks import (
    FLAG_COUNTS,
    USABLE,
    c1_table,
    c2_table,
    checked_keys,
    directions,
    duplicate_rows,
    keyed_blocks,
    m_table,
    one_vs_rest,
    pairs,
    read_classes,
    row_flags,
    threshold_c1,
    unique_keys,
    within_keys,
)
from polaroc.core.inputs import ColumnLike, FrameLike, LogColumns
from polaroc.core.log import LogNames, columns_of
from polaroc.core.names import CLASS

__all__ = ["multiclass_auc", "pairwise_auc", "proportion_correct"]


# ------------------------------------------------------------------ public API


@validated
def pairwise_auc(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None = None,
    weight: ColumnLike | None = None,
    max_rows: int | Literal["auto"] | None = "auto",
    **columns: Unpack[LogNames],
) -> pl.LazyFrame:
    """Hand & Till's (2001) pairwise separability table: one row per group and class pair.

    For the unordered pair of classes ``class_i < class_j``:

    ``a_i_j``
        A(i|j), the probability that a label-j sample has a lower class-i score than
        a label-i sample, ties counting ½ (Hand & Till 2001, §3): the binary AUC of
        the class-i scores of the label-i (positive) and label-j (negative) rows.
    ``a_j_i``
        A(j|i), the same with the class-j scores.
    ``a``
        A(i, j), the mean of the directions the log holds (one of them when the log
        lacks a class's rows, e.g. a binary log with only the positive class).
    ``n_i``, ``n_j``
        Samples of each label (rows of that label in the scores used; in a complete
        log, the number of samples).
    ``sauc_i_j``, ``sauc_j_i``, ``sauc``
        Wu & Flach's (2005) scored AUC of the same two binary problems and their
        mean (see :func:`multiclass_auc`).

    The table shows which classes a model separates well even when M is mediocre.

    Parameters
    ----------
    log
        ``DataFrame`` or ``LazyFrame`` in the long format: one row per (model,
        fold, sample, class). Scores need not be probabilities. A log without a
        class column is binary (its label is the positive indicator).
    by
        Grouping columns; default ``(dataset, model, repeat, fold)`` of the columns
        the log has (``model`` and ``fold`` always); ``by=()`` is one group.
    weight
        Case weights, a column name or an expression (finite, ``>= 0``; default none;
        give every class row of a sample its weight). A(i|j) then counts each (label-i
        row, label-j row) pair with weight w_i·w_j, ties ½, over W_i·W_j: the weighted
        binary AUC (:func:`polaroc.auc`) of the two classes. ``n_i``/``n_j`` become the
        labels' total weights (``Float64``). Hand & Till define no weighted M; this is
        the pairwise weighting of scikit-learn's ``sample_weight``, so integer weights
        equal repeated samples. Null and zero weights drop the row; a negative, NaN or
        infinite weight raises ``ValueError``.
    max_rows
        Bound the memory of the query, with :func:`polaroc.evaluate`'s rule and meaning:
        ``"auto"`` (default) computes whole groups of ``by`` a batch at a time when ``log``
        scans files, and runs the plain plan over an in-memory frame; ``None`` is one
        query; a number is the rows of a batch.
    **columns
        Names of the log's columns, as keywords: ``model``, ``fold``, ``class_``,
        ``score``, ``label``, ``sample``, ``dataset``, ``repeat`` (each defaults to its
        own name).

    Returns
    -------
    pl.LazyFrame
        Pairs of label values that both have samples in the group and at least one
        computable direction. ``class_i``/``class_j`` have the class column's dtype
        (strings for categorical or string classes). A NaN score makes the
        directions computed from its class NaN; rows with a null score, label or
        class are ignored.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> log = pl.DataFrame({
    ...     "model": "m", "fold": 0,
    ...     "sample": [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3],
    ...     "class": ["a", "b", "c"] * 4,
    ...     "label": ["a"] * 3 + ["b"] * 3 + ["c"] * 3 + ["c"] * 3,
    ...     "score": [0.7, 0.2, 0.1, 0.3, 0.4, 0.3, 0.2, 0.5, 0.3, 0.1, 0.1, 0.8],
    ... })
    >>> table = pr.pairwise_auc(log).sort("class_i", "class_j")
    >>> table.select("class_i", "class_j", "a_i_j", "a_j_i", "a", "n_i", "n_j").collect()
    shape: (3, 7)
    ┌─────────┬─────────┬───────┬───────┬───────┬─────┬─────┐
    │ class_i ┆ class_j ┆ a_i_j ┆ a_j_i ┆ a     ┆ n_i ┆ n_j │
    │ ---     ┆ ---     ┆ ---   ┆ ---   ┆ ---   ┆ --- ┆ --- │
    │ str     ┆ str     ┆ f64   ┆ f64   ┆ f64   ┆ i64 ┆ i64 │
    ╞═════════╪═════════╪═══════╪═══════╪═══════╪═════╪═════╡
    │ a       ┆ b       ┆ 1.0   ┆ 1.0   ┆ 1.0   ┆ 1   ┆ 1   │
    │ a       ┆ c       ┆ 1.0   ┆ 1.0   ┆ 1.0   ┆ 1   ┆ 2   │
    │ b       ┆ c       ┆ 0.5   ┆ 0.75  ┆ 0.625 ┆ 1   ┆ 2   │
    └─────────┴─────────┴───────┴───────┴───────┴─────┴─────┘

    Classes a and b are separated perfectly, b and c only partly: the class-b
    scores rank the two c samples on both sides of the b sample.
    """
    names = columns_of(columns, caller="pairwise_auc")
    return bounded_plan(log, partial(_pairwise, by=by, columns=names, weight=weight), max_rows)


@validated
def multiclass_auc(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None = None,
    weight: ColumnLike | None = None,
    max_rows: int | Literal["auto"] | None = "auto",
    **columns: Unpack[LogNames],
) -> pl.LazyFrame:
    """Hand & Till's M, the multiclass scored AUC and one-vs-rest AUCs, per group.

    ``auc``
        Hand & Till's (2001) M, eq. 7: the mean of A(i, j) over the class pairs of
        the group (see :func:`pairwise_auc`). Pairs are over the label values with
        samples in the group, so a fold that lacks a class still has an M. For two
        classes it is the binary AUC of the positive class (both directions are
        equal when the two classes' scores are complementary). Invariant under any
        strictly increasing transformation of the scores (Hand & Till 2001, §4).
    ``sauc``
        Multiclass scored AUC: the same pairwise average applied to Wu & Flach's
        (2005, Definition 1) sAUC. For the pair (i, j), sAUC(i|j) is the mean over
        (label-i row x, label-j row y) of the class-i scores of (x − y)·[x > y];
        sAUC(i, j) averages the directions the log holds and ``sauc`` averages the
        pairs. With two classes and one direction it is the binary sAUC.
    ``auc_ovr_macro``, ``auc_ovr_weighted``
        One-vs-rest AUCs — class i's scores, label-i rows against all other rows —
        averaged with equal weights or weighted by the number of label-i samples;
        scikit-learn's ``roc_auc_score(multi_class="ovr", average="macro" |
        "weighted")``. These are *not* M: they depend on the class mix of the "rest".
    ``n_classes``
        The number of label values with samples in the group (the classes M uses).

    Parameters
    ----------
    log
        ``DataFrame`` or ``LazyFrame`` in the long format (one row per model, fold,
        sample and class); scores need not be probabilities. A log without a class
        column is binary.
    by
        Grouping columns; default ``(dataset, model, repeat, fold)`` of the columns
        the log has (``model`` and ``fold`` always); ``by=()`` is one group.
    weight
        Case weights, a column name or an expression (default none): every A(i|j) and
        sAUC(i|j) weights its pairs w_i·w_j (see :func:`pairwise_auc`), the one-vs-rest
        AUCs are scikit-learn's with ``sample_weight`` and ``auc_ovr_weighted`` weights
        the classes by their total weight.
    max_rows
        Bound the memory of the query, with :func:`polaroc.evaluate`'s rule and meaning:
        ``"auto"`` (default) computes whole groups of ``by`` a batch at a time when ``log``
        scans files, and runs the plain plan over an in-memory frame; ``None`` is one
        query; a number is the rows of a batch.
    **columns
        Names of the log's columns, as keywords: ``model``, ``fold``, ``class_``,
        ``score``, ``label``, ``sample``, ``dataset``, ``repeat`` (each defaults to its
        own name).

    Returns
    -------
    pl.LazyFrame
        One row per group with usable rows. ``auc``/``sauc`` are null for a group
        with fewer than two classes; a NaN score makes them NaN.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> log = pl.DataFrame({
    ...     "model": "m", "fold": 0,
    ...     "sample": [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3],
    ...     "class": ["a", "b", "c"] * 4,
    ...     "label": ["a"] * 3 + ["b"] * 3 + ["c"] * 3 + ["c"] * 3,
    ...     "score": [0.7, 0.2, 0.1, 0.3, 0.4, 0.3, 0.2, 0.5, 0.3, 0.1, 0.1, 0.8],
    ... })
    >>> pr.multiclass_auc(log).drop("model", "fold").collect()
    shape: (1, 5)
    ┌───────────┬───────┬──────────┬───────────────┬──────────────────┐
    │ n_classes ┆ auc   ┆ sauc     ┆ auc_ovr_macro ┆ auc_ovr_weighted │
    │ ---       ┆ ---   ┆ ---      ┆ ---           ┆ ---              │
    │ i64       ┆ f64   ┆ f64      ┆ f64           ┆ f64              │
    ╞═══════════╪═══════╪══════════╪═══════════════╪══════════════════╡
    │ 3         ┆ 0.875 ┆ 0.333333 ┆ 0.847222      ┆ 0.854167         │
    └───────────┴───────┴──────────┴───────────────┴──────────────────┘

    M = (1 + 1 + 0.625)/3, the mean of the pairwise table's ``a``
    (:func:`pairwise_auc`).
    """
    names = columns_of(columns, caller="multiclass_auc")
    plan = partial(_multiclass, by=by, columns=names, weight=weight)
    return bounded_plan(log, plan, max_rows)


@validated
def proportion_correct(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None = None,
    threshold: float = 0.5,
    max_rows: int | Literal["auto"] | None = "auto",
    **columns: Unpack[LogNames],
) -> pl.LazyFrame:
    """Hand & Till's two proportion-correct measures, C₁ and C₂, per group.

    ``c1``
        The proportion of samples whose highest-scoring class is their label
        (Hand & Till 2001, §4; ``1 − error`` of :func:`polaroc.evaluate`). Tied top
        scores count 1/k; a sample with one score row (binary logs) is assigned its
        row's class iff ``score >= threshold``.
    ``c2``
        The pairwise proportion correct: for each pair of classes, the share of the
        pair's samples whose own-class score beats the other class's score (ties
        ½), averaged over the pairs (Hand & Till 2001, §3–4, "pairwise confusion
        matrix"). Needs each sample's scores for both classes of a pair; null for
        logs with one score row per sample.
    ``n``
        Samples in the group.

    Both compare scores *across classes* for the same sample, so, unlike M, they
    assume the classes' scores are on a common scale (e.g. probabilities), and they
    depend on the class priors. The ``sample`` column ties a sample's rows together
    and is required for a log with a class column.

    Parameters
    ----------
    log
        ``DataFrame`` or ``LazyFrame`` in the long format.
    by
        Grouping columns; default ``(dataset, model, repeat, fold)`` of the columns
        the log has (``model`` and ``fold`` always); ``by=()`` is one group.
    threshold
        A number, used only for samples with a single score row: predicted to be
        that row's class iff ``score >= threshold``.
    max_rows
        Bound the memory of the query, with :func:`polaroc.evaluate`'s rule and meaning:
        ``"auto"`` (default) computes whole groups of ``by`` a batch at a time when ``log``
        scans files, and runs the plain plan over an in-memory frame; ``None`` is one
        query; a number is the rows of a batch.
    **columns
        Names of the log's columns, as keywords: ``model``, ``fold``, ``class_``,
        ``score``, ``label``, ``sample``, ``dataset``, ``repeat`` (each defaults to its
        own name).

    Returns
    -------
    pl.LazyFrame
        by…, ``n``, ``c1``, ``c2``. A NaN score makes the group's values NaN.

    Raises
    ------
    ValueError
        The log has a class column but no sample column.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> log = pl.DataFrame({
    ...     "model": "m", "fold": 0,
    ...     "sample": [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3],
    ...     "class": ["a", "b", "c"] * 4,
    ...     "label": ["a"] * 3 + ["b"] * 3 + ["c"] * 3 + ["c"] * 3,
    ...     "score": [0.7, 0.2, 0.1, 0.3, 0.4, 0.3, 0.2, 0.5, 0.3, 0.1, 0.1, 0.8],
    ... })
    >>> pr.proportion_correct(log).collect()
    shape: (1, 5)
    ┌───────┬──────┬─────┬──────┬──────────┐
    │ model ┆ fold ┆ n   ┆ c1   ┆ c2       │
    │ ---   ┆ ---  ┆ --- ┆ ---  ┆ ---      │
    │ str   ┆ i32  ┆ i64 ┆ f64  ┆ f64      │
    ╞═══════╪══════╪═════╪══════╪══════════╡
    │ m     ┆ 0    ┆ 4   ┆ 0.75 ┆ 0.888889 │
    └───────┴──────┴─────┴──────┴──────────┘
    """
    names = columns_of(columns, caller="proportion_correct")
    plan = partial(_proportion_correct, by=by, threshold=threshold, columns=names)
    return bounded_plan(log, plan, max_rows)


# ------------------------------------------------------------------ unbounded plans
# Each returns its table's plan over the whole log and the columns its groups are cut
# along (``by``), for ``bounded_plan``.


def _pairwise(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None,
    columns: LogColumns,
    weight: ColumnLike | None,
) -> tuple[pl.LazyFrame, list[str]]:
    parsed, frame = read_classes(log, by=by, columns=columns, weight=weight)
    by_ = parsed.groups
    sums, dups = keyed_blocks(frame, parsed, by_, weighted=weight is not None)
    dirs = directions(sums, by_, weighted=weight is not None)
    table = checked_keys(pairs(dirs, by_), dups, frame, parsed, by_)
    pair_columns = ("class_i", "class_j", "a_i_j", "a_j_i", "a", "n_i", "n_j")
    sauc = ("sauc_i_j", "sauc_j_i", "sauc")
    return table.select(*parsed.by, *pair_columns, *sauc), parsed.by


def _multiclass(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None,
    columns: LogColumns,
    weight: ColumnLike | None,
) -> tuple[pl.LazyFrame, list[str]]:
    parsed, frame = read_classes(log, by=by, columns=columns, weight=weight)
    by_ = parsed.groups
    sums, dups = keyed_blocks(frame, parsed, by_, weighted=weight is not None)
    sums = sums.cache()
    weighted = weight is not None
    dirs = directions(sums, by_, weighted=weighted)
    table = m_table(sums, dirs, by_).join(
        one_vs_rest(dirs, by_, weighted=weighted), on=by_, how="left", nulls_equal=True
    )
    metrics = ("n_classes", "auc", "sauc", "auc_ovr_macro", "auc_ovr_weighted")
    return checked_keys(table, dups, frame, parsed, by_).select(*parsed.by, *metrics), parsed.by


def _proportion_correct(
    log: FrameLike, *, by: str | Iterable[str] | None, threshold: float, columns: LogColumns
) -> tuple[pl.LazyFrame, list[str]]:
    sample = columns.sample
    parsed, frame = read_classes(log, by=by, columns=columns)
    if not parsed.has_class:
        flagged = frame.with_columns(row_flags(columns, False, threshold))
        keyed = parsed.has(sample)  # repeated keys are counted in the same aggregation
        within = within_keys(parsed, parsed.groups)
        extra = duplicate_rows(within, sample) if keyed else []
        counts = flagged.group_by([*parsed.groups, CLASS]).agg(*FLAG_COUNTS, *extra)
        table = threshold_c1(counts, parsed.groups, keyed=keyed)
        if keyed:
            table = unique_keys(table, frame, parsed.groups, within, sample)
        table = table.select(*parsed.by, "n", "c1")
        return table.with_columns(pl.lit(None, pl.Float64).alias("c2")), parsed.by
    if not parsed.has(sample):
        msg = (
            f"proportion_correct needs the {sample!r} column to tie a sample's class rows "
            f"together, and the log has none (it has: {', '.join(parsed.schema.names())}); "
            "pass sample=<column> or add a sample id."
        )
        raise ValueError(msg)
    by_ = parsed.groups
    within = within_keys(parsed, by_)
    frame = frame.filter(USABLE).cache()
    table = c1_table(frame, by_, sample, threshold, within).join(
        c2_table(frame, by_, sample), on=by_, how="left", nulls_equal=True
    )
    table = unique_keys(table, frame, by_, within, sample)
    return table.select(*parsed.by, "n", "c1", "c2"), parsed.by
