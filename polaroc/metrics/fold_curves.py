"""Combining the ROC results of cross-validation folds: pooled and averaged curves.

Bradley (1997, §6, "Remark") names the two ways of combining the folds' ROC results:

*pooling*
    one group curve from all folds' raw counts together (:func:`pooled_roc`); it
    assumes every fold's classifier puts its thresholds in the same places, and when
    the folds' score scales differ it depresses the AUC;
*averaging*
    one AUC per fold, then their mean and standard deviation, which estimates the
    AUC and its spread but gives no curve.

Fawcett (2006, §8) gives averaged *curves*: vertical averaging (mean TPR of the fold
curves at fixed FPRs) and threshold averaging (mean point of the fold curves at fixed
thresholds), both in :func:`average_roc`. :func:`pooling_table` puts the mean ± sd of
the fold AUCs next to the pooled AUC so the pooling bias is visible.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import partial
from typing import Literal, Unpack

import numpy as np
import polars as pl

from polaroc.core import counts
from polaroc.core.args import validated
from polaroc.core.batches import bounded_plan
from polaroc.core.inputs import (
    ColumnLike,
    FrameLike,
    LogColumns,
    as_int,
    as_lazy,
    as_names,
    is_integer,
)
from polaroc.core.log import LogNames, columns_of, pooled_by
from polaroc.core.names import POSITIVE, SCORE, WEIGHT
from polaroc.core.sums import fixed_mean, fixed_std
from polaroc.metrics._curves import (
    NAN,
    as_grid,
    curve_input,
    curve_lists,
    points_from_counts,
    with_rates,
)
from polaroc.metrics.binary import auc
from polaroc.metrics.curves import roc_curve

__all__ = ["average_roc", "pooled_roc", "pooling_table"]

INF = float("inf")
_E = pl.element()
_F = pl.field


# ------------------------------------------------------------------ combining folds


def _outer_by(log: FrameLike, by: str | Iterable[str] | None, columns: LogColumns) -> list[str]:
    """The groups folds are combined within: ``by``, else the default without the fold.

    By default the folds of every repeat are combined (one curve per model from all
    its (repeat, fold) test partitions); ``by`` holding ``repeat`` combines the folds of
    each repeat on their own.
    """
    if by is not None:
        return as_names(by)
    return pooled_by(as_lazy(log).collect_schema(), columns)


@validated
def pooled_roc(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None = None,
    drop_intermediate: bool = False,
    thresholds: Sequence[float] | np.ndarray | pl.Series | None = None,
    weight: ColumnLike | None = None,
    max_rows: int | Literal["auto"] | None = "auto",
    **columns: Unpack[LogNames],
) -> pl.LazyFrame:
    """Bradley's pooled ROC curve: all folds' scores together, one curve per group.

    This is :func:`polaroc.roc_curve` grouped without the fold: the folds' true- and
    false-positive counts are summed at every threshold (Bradley 1997, §6, "pooling").
    When the folds' classifiers put their scores on different scales, a threshold
    means different things in different folds, and the pooled curve (and its AUC)
    falls below the folds' own; compare with :func:`pooling_table` and
    :func:`average_roc`.

    Parameters
    ----------
    log
        Score log in the contract's long format.
    by
        Groups to pool within (keyword-only); ``None`` (default) = ``model`` (with
        ``dataset`` first when the log
        has one): the default of :func:`polaroc.roc_curve` without the fold and the
        repeat, so a repeated cross-validation pools all its (repeat, fold) test
        partitions; pass ``by=("model", "repeat")`` for one curve per repeat.
    drop_intermediate, thresholds
        As for :func:`polaroc.roc_curve`.
    weight
        Optional case weights (a column name or an expression), as for
        :func:`polaroc.roc_curve` (the pooled counts are sums of weights).
    max_rows
        Bound the memory of the query, with :func:`polaroc.evaluate`'s rule and meaning:
        ``"auto"`` (default) computes whole groups of ``by`` (all the folds of a model; a
        model larger than a batch is a batch of its own) a batch at a time when ``log``
        scans files, and runs the plain plan over an in-memory frame; ``None`` is one
        query; a number is the rows of a batch.
    **columns
        Names of the log's columns, as keywords: ``model``, ``fold``, ``class_``,
        ``score``, ``label``, ``sample``, ``dataset``, ``repeat`` (each defaults to its
        own name).

    Returns
    -------
    pl.LazyFrame
        The columns of :func:`polaroc.roc_curve`, one curve per group (and class).

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> log = pl.DataFrame({
    ...     "model": "m",
    ...     "fold": [1, 1, 1, 1, 2, 2, 2, 2],
    ...     "score": [0.4, 0.3, 0.2, 0.1, 0.9, 0.8, 0.7, 0.6],
    ...     "label": [True, False, True, False, True, False, True, False],
    ... })
    >>> pr.pooled_roc(log, drop_intermediate=True).head(4).collect()
    shape: (4, 6)
    ┌───────┬───────────┬──────┬──────┬─────┬─────┐
    │ model ┆ threshold ┆ fpr  ┆ tpr  ┆ tp  ┆ fp  │
    │ ---   ┆ ---       ┆ ---  ┆ ---  ┆ --- ┆ --- │
    │ str   ┆ f64       ┆ f64  ┆ f64  ┆ i64 ┆ i64 │
    ╞═══════╪═══════════╪══════╪══════╪═════╪═════╡
    │ m     ┆ inf       ┆ 0.0  ┆ 0.0  ┆ 0   ┆ 0   │
    │ m     ┆ 0.9       ┆ 0.0  ┆ 0.25 ┆ 1   ┆ 0   │
    │ m     ┆ 0.8       ┆ 0.25 ┆ 0.25 ┆ 1   ┆ 1   │
    │ m     ┆ 0.7       ┆ 0.25 ┆ 0.5  ┆ 2   ┆ 1   │
    └───────┴───────────┴──────┴──────┴─────┴─────┘

    Each fold ranks its scores equally well (AUC 0.75), but fold 2's negatives
    outrank fold 1's positives once pooled:

    >>> pr.pooled_roc(log).group_by("model").agg(pr.trapezoid_auc("fpr", "tpr")).collect()
    shape: (1, 2)
    ┌───────┬───────────────┐
    │ model ┆ trapezoid_auc │
    │ ---   ┆ ---           │
    │ str   ┆ f64           │
    ╞═══════╪═══════════════╡
    │ m     ┆ 0.625         │
    └───────┴───────────────┘
    """
    return roc_curve(
        log,
        by=_outer_by(log, by, columns_of(columns, caller="pooled_roc")),
        drop_intermediate=drop_intermediate,
        thresholds=thresholds,
        weight=weight,
        max_rows=max_rows,
        **columns,
    )


def _fold_input(
    log: FrameLike,
    by: str | Iterable[str] | None,
    columns: LogColumns,
    weight: ColumnLike | None = None,
) -> tuple[pl.LazyFrame, list[str], list[str]]:
    """Rows, the per-fold curve keys, and the keys the folds are combined within."""
    outer = _outer_by(log, by, columns)
    if columns.fold in outer:
        msg = f"`by` must not hold the fold column {columns.fold!r}; folds are combined within by"
        raise ValueError(msg)
    # a fold is a (repeat, fold) pair when the log has repeats (fold ids restart in each)
    schema = as_lazy(log).collect_schema()
    repeat = [columns.repeat] if columns.repeat in schema and columns.repeat not in outer else []
    frame, keys = curve_input(log, [*outer, *repeat, columns.fold], columns, weight)
    return frame, keys, [k for k in keys if k not in {columns.fold, *repeat}]


def _join(left: pl.LazyFrame, right: pl.LazyFrame, on: list[str]) -> pl.LazyFrame:
    if not on:
        return left.join(right, how="cross")
    return left.join(right, on=on, how="left", nulls_equal=True)


@validated
def pooling_table(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None = None,
    max_rows: int | Literal["auto"] | None = "auto",
    **columns: Unpack[LogNames],
) -> pl.LazyFrame:
    """Averaged against pooled AUC per group: Bradley's two ways of combining folds.

    ``auc_mean`` and ``auc_sd`` are the mean and standard deviation (``ddof = 1``) of
    the folds' AUCs ("averaging"; Bradley 1997, §6, takes the sd as the AUC's
    standard error and §9.3 compares it with SE(W)), ``auc_pooled`` is the AUC of all
    folds' scores together ("pooling"), and ``pooling_bias = auc_pooled − auc_mean``
    is negative when the folds' score scales differ.

    Parameters
    ----------
    log
        Score log in the contract's long format.
    by
        Groups the folds are combined within; default ``model`` (with ``dataset``
        first when the log has one). A log with a class column adds ``class``
        (one-vs-rest AUCs, as in :func:`polaroc.roc_curve`). With a ``repeat``
        column, a fold is a (repeat, fold) pair and the default combines them all;
        ``by`` holding ``repeat`` combines each repeat's folds.
    max_rows
        Bound the memory of the query, with :func:`polaroc.evaluate`'s rule and meaning:
        ``"auto"`` (default) computes whole groups of ``by`` (all the folds of a model; a
        model larger than a batch is a batch of its own) a batch at a time when ``log``
        scans files, and runs the plain plan over an in-memory frame; ``None`` is one
        query; a number is the rows of a batch.
    **columns
        Names of the log's columns, as keywords: ``model``, ``fold``, ``class_``,
        ``score``, ``label``, ``sample``, ``dataset``, ``repeat`` (each defaults to its
        own name).

    Returns
    -------
    pl.LazyFrame
        One row per group: the keys, ``n_folds`` (folds with an AUC), ``n_degenerate``
        (folds with one class only, whose AUC is null and left out of the mean),
        ``auc_mean``, ``auc_sd``, ``auc_pooled``, ``pooling_bias``. A NaN score makes
        its fold's AUC, and so the mean and the pooled AUC, NaN.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> log = pl.DataFrame({
    ...     "model": "m",
    ...     "fold": [1, 1, 1, 1, 2, 2, 2, 2],
    ...     "score": [0.4, 0.3, 0.2, 0.1, 0.9, 0.8, 0.7, 0.6],
    ...     "label": [True, False, True, False, True, False, True, False],
    ... })
    >>> pr.pooling_table(log).collect()
    shape: (1, 7)
    ┌───────┬─────────┬──────────────┬──────────┬────────┬────────────┬──────────────┐
    │ model ┆ n_folds ┆ n_degenerate ┆ auc_mean ┆ auc_sd ┆ auc_pooled ┆ pooling_bias │
    │ ---   ┆ ---     ┆ ---          ┆ ---      ┆ ---    ┆ ---        ┆ ---          │
    │ str   ┆ i64     ┆ i64          ┆ f64      ┆ f64    ┆ f64        ┆ f64          │
    ╞═══════╪═════════╪══════════════╪══════════╪════════╪════════════╪══════════════╡
    │ m     ┆ 2       ┆ 0            ┆ 0.75     ┆ 0.0    ┆ 0.625      ┆ -0.125       │
    └───────┴─────────┴──────────────┴──────────┴────────┴────────────┴──────────────┘
    """
    names = columns_of(columns, caller="pooling_table")
    return bounded_plan(log, partial(_pooling_table, by=by, columns=names), max_rows)


def _pooling_table(
    log: FrameLike, *, by: str | Iterable[str] | None, columns: LogColumns
) -> tuple[pl.LazyFrame, list[str]]:
    """:func:`pooling_table`'s plan over the whole log, and the groups the folds are combined in."""
    frame, keys, outer = _fold_input(log, by, columns)
    fold_auc = frame.group_by(keys).agg(auc(SCORE, POSITIVE))
    averaged = fold_auc.group_by(outer).agg(
        n_folds=pl.col("auc").count().cast(pl.Int64),
        n_degenerate=pl.col("auc").null_count().cast(pl.Int64),
        auc_mean=fixed_mean(pl.col("auc")),  # the folds in one order: the same bits always
        auc_sd=fixed_std(pl.col("auc")),
    )
    pooled = frame.group_by(outer).agg(auc(SCORE, POSITIVE).alias("auc_pooled"))
    table = _join(averaged, pooled, outer)
    table = table.with_columns(pooling_bias=pl.col("auc_pooled") - pl.col("auc_mean"))
    return table.sort(outer, maintain_order=True), _batch_keys(outer, columns)


# ------------------------------------------------------------------ averaged curves


def _fpr_grid(grid: int | Sequence[float] | np.ndarray) -> np.ndarray:
    if is_integer(grid):
        points = as_int(grid, argument="`grid`", minimum=2, what="a number of points")
        return np.linspace(0.0, 1.0, points)
    values = np.unique(np.asarray(grid, dtype=float))
    if values.size == 0 or not ((values >= 0.0) & (values <= 1.0)).all():
        msg = "for vertical averaging `grid` must hold false-positive rates in [0, 1]"
        raise ValueError(msg)
    return values


def _tpr_at(fpr_grid: np.ndarray) -> pl.Expr:
    """TPR of a curve list at each grid FPR (Fawcett 2006, Algorithm 4, TPR_FOR_FPR).

    The curve's last point with ``fpr <= x`` (the top of a vertical run) is joined to
    the next point by a straight line; a curve with null rates gives null.
    """
    x, y = _E.struct.field("fpr"), _E.struct.field("tpr")
    at = pl.lit(pl.Series(fpr_grid, dtype=pl.Float64))
    i = x.search_sorted(at, side="right").cast(pl.Int64) - 1
    j = pl.min_horizontal(i + 1, pl.len().cast(pl.Int64) - 1)
    x0, y0, x1, y1 = x.gather(i), y.gather(i), x.gather(j), y.gather(j)
    tpr = pl.when(x1 > x0).then(y0 + (y1 - y0) * (at - x0) / (x1 - x0)).otherwise(y0)
    defined = x.is_not_null().all() & y.is_not_null().all()
    return pl.struct(fpr=at, tpr=pl.when(defined).then(tpr))


def _vertical(
    frame: pl.LazyFrame, keys: list[str], fpr_grid: np.ndarray, *, weighted: bool = False
) -> pl.LazyFrame:
    curves = curve_lists(frame, keys, weighted=weighted)
    points = pl.col("curve").list.eval(_tpr_at(fpr_grid)).alias("point")
    return (
        curves.select(*keys, "has_nan", points)
        .explode("point")
        .unnest("point")
        .with_columns(tpr=pl.when(pl.col("has_nan")).then(NAN).otherwise(pl.col("tpr")))
    )


def _threshold(
    frame: pl.LazyFrame,
    keys: list[str],
    outer: list[str],
    grid: int | Sequence[float] | np.ndarray,
    *,
    weighted: bool = False,
) -> pl.LazyFrame:
    score, positive = pl.col(SCORE), pl.col(POSITIVE)
    weight = pl.col(WEIGHT) if weighted else None
    entries = counts.in_list(score, positive, weight)
    folds = frame.group_by(keys).agg(has_nan=score.is_nan().any(), entries=entries)
    if is_integer(grid):
        size = as_int(grid, argument="`grid`", minimum=1, what="a number of thresholds")
        # Fawcett's sampling: evenly spaced ranks among the group's distinct scores.
        pooled = frame.group_by(outer).agg(grid=counts.spread_thresholds(score, size))
        folds = _join(folds, pooled, outer)
        values = pl.concat_list(pl.lit(-INF), pl.col("grid")).list.unique()
    else:
        points = as_grid(grid).tolist()  # type: ignore[arg-type]  # a bool: as_grid's TypeError
        values = pl.lit(pl.Series([[-INF, *points]], dtype=pl.List(pl.Float64)))
    at_grid = counts.at_thresholds(pl.col("entries"), values)
    curve = (
        at_grid.list.eval(points_from_counts())
        .list.eval(with_rates())
        .list.eval(_E.struct.with_fields(point=pl.int_range(pl.len())))
    )
    rates = pl.when(pl.col("has_nan")).then(NAN)
    defined = pl.col("fpr").is_not_null() & pl.col("tpr").is_not_null()
    return (
        folds.select(*keys, "has_nan", curve.alias("curve"))
        .explode("curve")
        .unnest("curve")
        .with_columns(
            fpr=rates.otherwise(pl.when(defined).then("fpr")),
            tpr=rates.otherwise(pl.when(defined).then("tpr")),
        )
    )


def _band(name: str, level: float) -> list[pl.Expr]:
    """Mean, sd and the central ``level`` percentile band of ``name`` over folds."""
    v = pl.col(name)
    tail = (1.0 - level) / 2.0

    def quantile(q: float) -> pl.Expr:
        # Polars sorts NaN last instead of propagating it; a NaN fold makes the band NaN.
        return pl.when(v.is_nan().any()).then(NAN).otherwise(v.quantile(q, "linear"))

    return [
        v.mean(),
        v.std().alias(f"{name}_sd"),
        quantile(tail).alias(f"{name}_low"),
        quantile(1.0 - tail).alias(f"{name}_high"),
    ]


def _n_folds() -> pl.Expr:
    return pl.col("tpr").count().cast(pl.Int64).alias("n_folds")


@validated
def average_roc(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None = None,
    method: Literal["vertical", "threshold"] = "vertical",
    grid: int | Sequence[float] | np.ndarray = 101,
    level: float = 0.95,
    weight: ColumnLike | None = None,
    max_rows: int | Literal["auto"] | None = "auto",
    **columns: Unpack[LogNames],
) -> pl.LazyFrame:
    """The folds' ROC curves averaged into one curve per group, with a pointwise band.

    ``method="vertical"`` (Fawcett 2006, §8.1, Algorithm 4)
        At each false-positive rate of ``grid`` (an int: that many evenly spaced
        values in ``[0, 1]``), every fold's TPR is read off its curve — from its last
        point with ``fpr <= x``, interpolating linearly to the next — and the TPRs are
        averaged. Since every fold curve is integrated over the same FPR axis, the
        area under the averaged curve is (up to the grid's resolution) the mean of the
        fold AUCs: the curve Bradley's "averaging" lacks.
    ``method="threshold"`` (Fawcett 2006, §8.2, Algorithm 5)
        At each threshold (an int: that many of the group's distinct pooled scores,
        taken at evenly spaced ranks as Fawcett samples them; or the given values),
        every fold's point is found with
        the rule of :func:`polaroc.confusion` (``score >= threshold``) and the folds'
        FPRs and TPRs are averaged. The thresholds also include ``+inf`` (the point
        (0, 0)) and ``-inf`` (the point (1, 1)). Threshold averaging presumes the folds'
        scores are on one scale, as pooling does.

    Parameters
    ----------
    log
        Score log in the contract's long format.
    by
        Groups the folds are combined within; default ``model`` (with ``dataset``
        first when the log has one), plus ``class`` for a log with a class column.
        With a ``repeat`` column, a fold is a (repeat, fold) pair (fold ids restart
        in each repeat) and the default averages over all of them — Fawcett's
        averaging over every test partition; ``by`` holding ``repeat`` averages each
        repeat's folds on their own.
    method
        ``"vertical"`` (default) or ``"threshold"``.
    grid
        The FPRs (vertical) or thresholds (threshold) to average at; an int asks for
        that many, placed as described above.
    level
        Coverage of the percentile band, e.g. 0.95 for the 2.5th to 97.5th percentile
        of the folds' values (linear interpolation, as ``numpy.percentile``).
    weight
        Optional case weights (a column name or an expression): each fold's curve is its
        weighted curve (as :func:`polaroc.roc_curve` with ``weight``); the folds are
        still averaged with equal weight, as Fawcett's algorithms do.
    max_rows
        Bound the memory of the query, with :func:`polaroc.evaluate`'s rule and meaning:
        ``"auto"`` (default) computes whole groups of ``by`` (all the folds of a model; a
        model larger than a batch is a batch of its own) a batch at a time when ``log``
        scans files, and runs the plain plan over an in-memory frame; ``None`` is one
        query; a number is the rows of a batch.
    **columns
        Names of the log's columns, as keywords: ``model``, ``fold``, ``class_``,
        ``score``, ``label``, ``sample``, ``dataset``, ``repeat`` (each defaults to its
        own name).

    Returns
    -------
    pl.LazyFrame
        One row per group and grid point, in curve order. Vertical: the keys, ``fpr``,
        ``tpr`` (mean), ``tpr_sd``, ``tpr_low``, ``tpr_high``, ``n_folds``. Threshold:
        the keys, ``threshold``, ``fpr``, ``tpr`` (means), ``fpr_sd``, ``fpr_low``,
        ``fpr_high``, ``tpr_sd``, ``tpr_low``, ``tpr_high``, ``n_folds``. The sd is
        the folds' standard deviation (``ddof = 1``) and the band is ``mean ± sd`` or
        ``[low, high]``. ``n_folds`` counts the folds with a defined curve: a
        one-class fold is left out, and a fold with a NaN score makes the group's
        values NaN.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> log = pl.DataFrame({
    ...     "model": "m",
    ...     "fold": [1, 1, 1, 1, 2, 2, 2, 2],
    ...     "score": [0.9, 0.7, 0.6, 0.2, 0.8, 0.6, 0.5, 0.1],
    ...     "label": [True, False, True, False, True, True, False, False],
    ... })
    >>> pr.average_roc(log, grid=5).collect()
    shape: (5, 7)
    ┌───────┬──────┬──────┬──────────┬─────────┬──────────┬─────────┐
    │ model ┆ fpr  ┆ tpr  ┆ tpr_sd   ┆ tpr_low ┆ tpr_high ┆ n_folds │
    │ ---   ┆ ---  ┆ ---  ┆ ---      ┆ ---     ┆ ---      ┆ ---     │
    │ str   ┆ f64  ┆ f64  ┆ f64      ┆ f64     ┆ f64      ┆ i64     │
    ╞═══════╪══════╪══════╪══════════╪═════════╪══════════╪═════════╡
    │ m     ┆ 0.0  ┆ 0.75 ┆ 0.353553 ┆ 0.5125  ┆ 0.9875   ┆ 2       │
    │ m     ┆ 0.25 ┆ 0.75 ┆ 0.353553 ┆ 0.5125  ┆ 0.9875   ┆ 2       │
    │ m     ┆ 0.5  ┆ 1.0  ┆ 0.0      ┆ 1.0     ┆ 1.0      ┆ 2       │
    │ m     ┆ 0.75 ┆ 1.0  ┆ 0.0      ┆ 1.0     ┆ 1.0      ┆ 2       │
    │ m     ┆ 1.0  ┆ 1.0  ┆ 0.0      ┆ 1.0     ┆ 1.0      ┆ 2       │
    └───────┴──────┴──────┴──────────┴─────────┴──────────┴─────────┘
    """
    names = columns_of(columns, caller="average_roc")
    if method not in ("vertical", "threshold"):
        msg = f"method must be 'vertical' or 'threshold', got {method!r}"
        raise ValueError(msg)
    plan = partial(
        _average_roc, by=by, columns=names, weight=weight, method=method, grid=grid, level=level
    )
    return bounded_plan(log, plan, max_rows)


def _average_roc(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None,
    columns: LogColumns,
    weight: ColumnLike | None,
    method: Literal["vertical", "threshold"],
    grid: int | Sequence[float] | np.ndarray,
    level: float,
) -> tuple[pl.LazyFrame, list[str]]:
    """:func:`average_roc`'s plan over the whole log, and the groups the folds are combined in."""
    frame, keys, outer = _fold_input(log, by, columns, weight)
    weighted = weight is not None
    if method == "vertical":
        points = _vertical(frame, keys, _fpr_grid(grid), weighted=weighted)
        stats = [*_band("tpr", level), _n_folds()]
        table = points.group_by(*outer, "fpr").agg(stats).sort(*outer, "fpr")
        return table, _batch_keys(outer, columns)
    points = _threshold(frame, keys, outer, grid, weighted=weighted)
    stats = [
        pl.col("threshold").first(),
        *_band("fpr", level),
        *_band("tpr", level),
        _n_folds(),
    ]
    averaged = points.group_by(*outer, "point").agg(stats).sort(*outer, "point")
    table = averaged.select(
        *outer,
        "threshold",
        "fpr",
        "tpr",
        pl.exclude(*outer, "threshold", "fpr", "tpr", "point"),
    )
    return table, _batch_keys(outer, columns)


def _batch_keys(outer: list[str], columns: LogColumns) -> list[str]:
    """The log columns batches are cut along: the combined groups' keys but the class."""
    return [k for k in outer if k != columns.class_]
