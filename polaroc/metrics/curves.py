"""Empirical ROC curves and the areas read from them.

The curve of a group is its entries of the count schema (``polaroc.core.counts``) read
from the top down: at threshold ``t`` a sample is predicted positive iff ``score >= t`` (the
rule of :func:`polaroc.confusion`), so the point for ``t`` is
``(fp(t) / n⁻, tp(t) / n⁺)``. Lowering ``t`` past a run of tied scores moves the
point by all of the run's positives and negatives at once: ties are one diagonal step,
which is why the trapezoidal area under the curve equals the Mann–Whitney AUC with
ties counted one half (Bradley 1997, eq. 7–9 and §9.3).

Everything here is per group and pure Polars; each curve is held as a list of structs
per group until the final ``explode``, so a curve never needs a window function.
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
    as_lazy,
    binary_expr,
    describe,
    fail_if,
    require_columns,
    require_numeric,
    to_expr,
)
from polaroc.core.log import LogNames, columns_of
from polaroc.metrics._curves import (
    as_grid,
    curve_input,
    curve_lists,
    explode_curves,
    points_from_counts,
    rate,
    with_rates,
    without_intermediate,
)

__all__ = ["partial_auc", "roc_curve", "roc_points", "trapezoid_auc"]

_E = pl.element()


# ------------------------------------------------------------------ public


@validated
def roc_curve(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None = None,
    drop_intermediate: bool = False,
    thresholds: Sequence[float] | np.ndarray | pl.Series | None = None,
    weight: ColumnLike | None = None,
    max_rows: int | Literal["auto"] | None = "auto",
    **columns: Unpack[LogNames],
) -> pl.LazyFrame:
    """The empirical ROC curve of each group, as a long table of points.

    For each group the points run from ``(0, 0)`` (threshold ``+inf``: nothing
    predicted positive) to ``(1, 1)``, one per distinct score in descending order:
    at threshold ``t`` a sample is predicted positive iff ``score >= t`` (as in
    :func:`polaroc.confusion`), ``tp``/``fp`` count the positives/negatives scored
    ``>= t`` and ``tpr = tp / n⁺``, ``fpr = fp / n⁻``. Tied scores make one diagonal
    step, so the trapezoidal area under the points (Bradley 1997, eq. 7–9) equals
    :func:`polaroc.auc` exactly. With ``drop_intermediate=False`` the rows equal
    scikit-learn's ``roc_curve(y_true, y_score, drop_intermediate=False)``.

    A log with a class column gives one one-vs-rest curve per class (a ``class``
    column is added to the keys): the class-``i`` scores, positive where
    ``label == i``. For a binary log that holds both classes' rows, keep the positive
    class's curve with ``.filter(pl.col("class") == 1)``. A log without a class
    column has one curve per group, its ``label`` being the positive indicator.

    Parameters
    ----------
    log
        Score log (``DataFrame`` or ``LazyFrame``) in the contract's long format.
    by
        Grouping columns (keyword-only); ``None`` (default) = ``(dataset, model,
        repeat, fold)`` of the columns the log has (``model`` and ``fold`` always);
        ``by=()`` gives one curve for the whole log (per class).
    drop_intermediate
        Keep only the corners of each curve: points lying on the straight line
        between their neighbours are dropped (and, on a grid, repeated points, keeping
        the highest threshold). The polyline and its area are unchanged. This is the
        intent of scikit-learn's ``drop_intermediate=True``, which tests for equal
        consecutive steps instead of parallel ones and never drops the first point
        after ``(0, 0)``; on tied scores or at that first point scikit-learn may keep
        points that are dropped here, never the reverse.
    thresholds
        A fixed grid of thresholds evaluated instead of every distinct score. Rows are
        binned against the grid and counted per bin (no sort of the rows), so memory is
        constant per group: use it for huge groups. Every group then has the same
        thresholds: ``+inf`` (the point (0, 0)), the grid in descending order, and
        ``-inf`` (the point (1, 1)). The area under a grid curve is the trapezoid rule
        on those points, which underestimates a concave curve (Bradley 1997, §2).
    weight
        Case weights, a column name or an expression (finite, ``>= 0``; default none).
        ``tp``/``fp`` are then sums of weights (``Float64``) and the rows equal
        scikit-learn's ``roc_curve(..., sample_weight=w, drop_intermediate=False)``,
        which also drops zero-weight samples (their scores are no thresholds); a null
        weight drops the row. A negative, NaN or infinite weight raises ``ValueError``
        (for a ``LazyFrame``, when collected). With weights, ``drop_intermediate`` tests
        the steps for parallelism in floating point.
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
        One row per group and point: the keys, ``threshold``, ``fpr``, ``tpr``
        (``Float64``), ``tp``, ``fp`` (``Int64``; ``Float64`` when weighted). A group
        without negatives has null ``fpr`` (without positives, null ``tpr``); a group
        holding a NaN score is one point with NaN rates and null counts. Rows with a
        null score or label are ignored.

    Raises
    ------
    ValueError
        A column is missing, or the grid holds NaN.
    TypeError
        The score is not numeric, or the label cannot be compared with the class.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> log = pl.DataFrame({
    ...     "model": "m",
    ...     "fold": 0,
    ...     "score": [0.9, 0.8, 0.8, 0.3, 0.1],
    ...     "label": [True, True, False, True, False],
    ... })
    >>> pr.roc_curve(log).collect()
    shape: (5, 7)
    ┌───────┬──────┬───────────┬─────┬──────────┬─────┬─────┐
    │ model ┆ fold ┆ threshold ┆ fpr ┆ tpr      ┆ tp  ┆ fp  │
    │ ---   ┆ ---  ┆ ---       ┆ --- ┆ ---      ┆ --- ┆ --- │
    │ str   ┆ i32  ┆ f64       ┆ f64 ┆ f64      ┆ i64 ┆ i64 │
    ╞═══════╪══════╪═══════════╪═════╪══════════╪═════╪═════╡
    │ m     ┆ 0    ┆ inf       ┆ 0.0 ┆ 0.0      ┆ 0   ┆ 0   │
    │ m     ┆ 0    ┆ 0.9       ┆ 0.0 ┆ 0.333333 ┆ 1   ┆ 0   │
    │ m     ┆ 0    ┆ 0.8       ┆ 0.5 ┆ 0.666667 ┆ 2   ┆ 1   │
    │ m     ┆ 0    ┆ 0.3       ┆ 0.5 ┆ 1.0      ┆ 3   ┆ 1   │
    │ m     ┆ 0    ┆ 0.1       ┆ 1.0 ┆ 1.0      ┆ 3   ┆ 2   │
    └───────┴──────┴───────────┴─────┴──────────┴─────┴─────┘

    On a fixed grid (plus the two ends):

    >>> pr.roc_curve(log, thresholds=[0.25, 0.5, 0.75]).collect()
    shape: (5, 7)
    ┌───────┬──────┬───────────┬─────┬──────────┬─────┬─────┐
    │ model ┆ fold ┆ threshold ┆ fpr ┆ tpr      ┆ tp  ┆ fp  │
    │ ---   ┆ ---  ┆ ---       ┆ --- ┆ ---      ┆ --- ┆ --- │
    │ str   ┆ i32  ┆ f64       ┆ f64 ┆ f64      ┆ i64 ┆ i64 │
    ╞═══════╪══════╪═══════════╪═════╪══════════╪═════╪═════╡
    │ m     ┆ 0    ┆ inf       ┆ 0.0 ┆ 0.0      ┆ 0   ┆ 0   │
    │ m     ┆ 0    ┆ 0.75      ┆ 0.5 ┆ 0.666667 ┆ 2   ┆ 1   │
    │ m     ┆ 0    ┆ 0.5       ┆ 0.5 ┆ 0.666667 ┆ 2   ┆ 1   │
    │ m     ┆ 0    ┆ 0.25      ┆ 0.5 ┆ 1.0      ┆ 3   ┆ 1   │
    │ m     ┆ 0    ┆ -inf      ┆ 1.0 ┆ 1.0      ┆ 3   ┆ 2   │
    └───────┴──────┴───────────┴─────┴──────────┴─────┴─────┘
    """
    names = columns_of(columns, caller="roc_curve")
    grid = None if thresholds is None else as_grid(thresholds)
    plan = partial(
        _roc_curve, by=by, columns=names, grid=grid, drop_intermediate=drop_intermediate,
        weight=weight,
    )  # fmt: skip
    return bounded_plan(log, plan, max_rows)


def _roc_curve(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None,
    columns: LogColumns,
    grid: np.ndarray | None,
    drop_intermediate: bool,
    weight: ColumnLike | None,
) -> tuple[pl.LazyFrame, list[str]]:
    """:func:`roc_curve`'s plan over the whole log, and ``by`` (the curves' keys but the class)."""
    frame, keys = curve_input(log, by, columns, weight)
    curves = curve_lists(frame, keys, grid, weighted=weight is not None)
    curve = pl.col("curve")
    if drop_intermediate:
        curve = without_intermediate(curve)
    points = explode_curves(curves, keys, ("threshold", "fpr", "tpr", "tp", "fp"), curve)
    return points, [k for k in keys if k != columns.class_]


# ------------------------------------------------------------------ areas


def _segment_area(lo_fpr: float, hi_fpr: float) -> pl.Expr:
    """Trapezoidal area of a curve list between two FPR values (inside ``list.agg``)."""
    x, y = _E.struct.field("fpr"), _E.struct.field("tpr")
    x0, y0 = x.shift(1), y.shift(1)
    lo = pl.max_horizontal(x0, pl.lit(lo_fpr))
    hi = pl.min_horizontal(x, pl.lit(hi_fpr))
    slope = (y - y0) / (x - x0)
    y_lo = pl.when(lo == x0).then(y0).otherwise(y0 + slope * (lo - x0))
    y_hi = pl.when(hi == x).then(y).otherwise(y0 + slope * (hi - x0))
    area = pl.when(x0.is_not_null() & (hi > lo)).then((hi - lo) * (y_lo + y_hi) / 2.0)
    defined = x.is_not_null().all() & y.is_not_null().all()
    return pl.when(defined).then(area.sum())


@validated
def partial_auc(
    score: ColumnLike,
    positive: ColumnLike,
    *,
    max_fpr: float,
    min_fpr: float = 0.0,
    standardize: bool = True,
    weight: ColumnLike | None = None,
) -> pl.Expr:
    """Area under the ROC curve between two false-positive rates, optionally standardised.

    The area is the trapezoid rule on the group's curve (see :func:`roc_curve`),
    cut at ``min_fpr`` and ``max_fpr`` by linear interpolation. With
    ``standardize=True`` McClish's (1989) correction maps it to
    ``½ · (1 + (A − A_min) / (A_max − A_min))``, where ``A_max = max_fpr − min_fpr``
    (a perfect classifier) and ``A_min = (max_fpr² − min_fpr²) / 2`` (the diagonal),
    so 0.5 means chance and 1 perfect over the range. For ``min_fpr = 0`` this is
    scikit-learn's ``roc_auc_score(y_true, y_score, max_fpr=max_fpr)`` and pROC's
    ``auc(partial.auc = c(1, 1 - max_fpr), partial.auc.correct = TRUE)``; over the
    whole range ``[0, 1]`` both forms equal :func:`polaroc.auc`.

    Parameters
    ----------
    score, positive
        As for :func:`polaroc.auc` (score first, unlike scikit-learn).
    max_fpr, min_fpr
        The FPR range, ``0 <= min_fpr < max_fpr <= 1``.
    standardize
        Apply McClish's standardisation (default), else return the raw area (at
        most ``max_fpr − min_fpr``).
    weight
        Case weights (finite, ``>= 0``); default none. The curve's rates are then
        weighted counts, as :func:`roc_curve`'s, so the area equals scikit-learn's
        ``roc_auc_score(y, s, max_fpr=..., sample_weight=w)``.

    Returns
    -------
    pl.Expr
        ``Float64`` named ``partial_auc``: null for a group without positives or
        negatives, NaN for a group holding a NaN score.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> df = pl.DataFrame({
    ...     "score": [0.9, 0.8, 0.7, 0.6, 0.55, 0.5, 0.4, 0.3],
    ...     "label": [True, False, True, True, False, True, False, False],
    ... })
    >>> df.select(
    ...     pr.partial_auc("score", "label", max_fpr=0.5),
    ...     pr.partial_auc("score", "label", max_fpr=0.5, standardize=False).alias("raw"),
    ... )
    shape: (1, 2)
    ┌─────────────┬──────┐
    │ partial_auc ┆ raw  │
    │ ---         ┆ ---  │
    │ f64         ┆ f64  │
    ╞═════════════╪══════╡
    │ 0.666667    ┆ 0.25 │
    └─────────────┴──────┘
    """
    lo, hi = float(min_fpr), float(max_fpr)
    if not 0.0 <= lo < hi <= 1.0:
        msg = f"need 0 <= min_fpr < max_fpr <= 1, got min_fpr={min_fpr!r}, max_fpr={max_fpr!r}"
        raise ValueError(msg)

    def build(s: pl.Expr, p: pl.Expr, w: pl.Expr | None = None) -> pl.Expr:
        points = counts.in_list(s, p, w).list.eval(points_from_counts())
        area = points.list.eval(with_rates()).list.agg(_segment_area(lo, hi))
        if not standardize:
            return area
        min_area, max_area = (hi**2 - lo**2) / 2.0, hi - lo
        return 0.5 * (1.0 + (area - min_area) / (max_area - min_area))

    return binary_expr(score, positive, build, name="partial_auc", two_classes=True, weight=weight)


def _as_rate(expr: pl.Expr, dtype: pl.DataType, argument: str) -> pl.Expr:
    if not dtype.is_numeric():
        msg = (
            f"`{argument}` column {describe(expr)} has dtype {dtype}; it must hold numeric "
            "rates in [0, 1]."
        )
        raise TypeError(msg)
    return expr.cast(pl.Float64)


def trapezoid_auc(fpr: ColumnLike, tpr: ColumnLike) -> pl.Expr:
    """Area under a handful of ROC points by the trapezoid rule (Bradley 1997, eq. 7–9).

    The group's points are sorted by ``fpr`` (then ``tpr``), joined by straight
    lines and closed with ``(0, 0)`` and ``(1, 1)``, as in Bradley's experiment where
    each test partition gave 7–15 confusion matrices by varying the misclassification
    costs. Straight lines under a concave curve lose area, so few points
    underestimate the AUC (Bradley 1997, §2); on every point of an empirical curve
    (:func:`roc_curve`) it is exactly :func:`polaroc.auc`.

    Parameters
    ----------
    fpr, tpr
        Columns (or expressions) of false- and true-positive rates in ``[0, 1]``, in
        any order; :func:`roc_points` makes them from confusion counts.

    Returns
    -------
    pl.Expr
        ``Float64`` named ``trapezoid_auc``: null for a group without points, NaN if
        a rate is NaN. Rows with a null rate are ignored; a rate outside ``[0, 1]``
        raises a ``ComputeError`` when the query runs.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> points = pl.DataFrame({
    ...     "fold": [1, 1, 1, 2, 2],
    ...     "fpr": [0.5, 0.1, 0.2, 0.3, 0.0],
    ...     "tpr": [0.9, 0.4, 0.7, 0.8, 0.5],
    ... })
    >>> points.group_by("fold").agg(pr.trapezoid_auc("fpr", "tpr")).sort("fold")
    shape: (2, 2)
    ┌──────┬───────────────┐
    │ fold ┆ trapezoid_auc │
    │ ---  ┆ ---           │
    │ i64  ┆ f64           │
    ╞══════╪═══════════════╡
    │ 1    ┆ 0.79          │
    │ 2    ┆ 0.825         │
    └──────┴───────────────┘
    """
    fpr_in, tpr_in = to_expr(fpr, argument="fpr"), to_expr(tpr, argument="tpr")

    def plan(inputs: list[tuple[pl.Expr, pl.DataType]]) -> pl.Expr:
        (x, x_dtype), (y, y_dtype) = inputs
        x, y = _as_rate(x, x_dtype, "fpr"), _as_rate(y, y_dtype, "tpr")
        keep = x.is_not_null() & y.is_not_null()
        x, y = x.filter(keep), y.filter(keep)
        outside = (x.is_not_nan() & ((x < 0) | (x > 1))) | (y.is_not_nan() & ((y < 0) | (y > 1)))
        message = (
            "polaroc.trapezoid_auc: a false- or true-positive rate lies outside [0, 1]; "
            "pass rates, not counts (pr.roc_points turns confusion counts into rates)."
        )
        x, y = x.sort_by(x, y), y.sort_by(x, y)
        inner = ((x - x.shift(1)) * (y + y.shift(1))).sum() / 2.0
        area = x.first() * y.first() / 2.0 + inner + (1.0 - x.last()) * (1.0 + y.last()) / 2.0
        return pl.when(fail_if(outside.any(), message)).then(area)

    return pl.pipe_with_dtype([fpr_in, tpr_in], plan).alias("trapezoid_auc")


def roc_points(
    table: FrameLike,
    *,
    tp: str = "tp",
    fp: str = "fp",
    tn: str = "tn",
    fn: str = "fn",
) -> pl.LazyFrame:
    """Add ROC points to a table of confusion counts: ``fpr = fp/(fp+tn)``, ``tpr = tp/(tp+fn)``.

    One row per confusion matrix (e.g. per model, fold and threshold or cost setting,
    as in Bradley 1997, §4 and §6), with Bradley's eq. 2 (sensitivity, the TPR) and
    one minus eq. 3 (specificity), ready for :func:`trapezoid_auc`. The counts may be
    integers or, after pooling folds (Bradley's "pooling" averages the raw
    frequencies), floats.

    Parameters
    ----------
    table
        ``DataFrame`` or ``LazyFrame`` with the four count columns.
    tp, fp, tn, fn
        Names of the count columns.

    Returns
    -------
    pl.LazyFrame
        ``table`` with ``Float64`` columns ``fpr`` and ``tpr`` added; a rate is null
        when its denominator is 0.

    Raises
    ------
    ValueError
        A count column is missing.
    TypeError
        A count column is not numeric.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> counts = pl.DataFrame({
    ...     "fold": [1, 1, 1],
    ...     "cost_ratio": [0.5, 1.0, 2.0],
    ...     "tp": [9, 8, 5], "fp": [4, 2, 1], "tn": [6, 8, 9], "fn": [1, 2, 5],
    ... })
    >>> points = pr.roc_points(counts)
    >>> points.collect()
    shape: (3, 8)
    ┌──────┬────────────┬─────┬─────┬─────┬─────┬─────┬─────┐
    │ fold ┆ cost_ratio ┆ tp  ┆ fp  ┆ tn  ┆ fn  ┆ fpr ┆ tpr │
    │ ---  ┆ ---        ┆ --- ┆ --- ┆ --- ┆ --- ┆ --- ┆ --- │
    │ i64  ┆ f64        ┆ i64 ┆ i64 ┆ i64 ┆ i64 ┆ f64 ┆ f64 │
    ╞══════╪════════════╪═════╪═════╪═════╪═════╪═════╪═════╡
    │ 1    ┆ 0.5        ┆ 9   ┆ 4   ┆ 6   ┆ 1   ┆ 0.4 ┆ 0.9 │
    │ 1    ┆ 1.0        ┆ 8   ┆ 2   ┆ 8   ┆ 2   ┆ 0.2 ┆ 0.8 │
    │ 1    ┆ 2.0        ┆ 5   ┆ 1   ┆ 9   ┆ 5   ┆ 0.1 ┆ 0.5 │
    └──────┴────────────┴─────┴─────┴─────┴─────┴─────┴─────┘
    >>> points.group_by("fold").agg(pr.trapezoid_auc("fpr", "tpr")).collect()
    shape: (1, 2)
    ┌──────┬───────────────┐
    │ fold ┆ trapezoid_auc │
    │ ---  ┆ ---           │
    │ i64  ┆ f64           │
    ╞══════╪═══════════════╡
    │ 1    ┆ 0.83          │
    └──────┴───────────────┘
    """
    frame = as_lazy(table, argument="table")
    schema = frame.collect_schema()
    names = {"tp": tp, "fp": fp, "tn": tn, "fn": fn}
    require_columns(schema, list(names.values()), what="table")
    for role, name in names.items():
        require_numeric(schema, name, what=f"{role} count")
    k = {role: pl.col(name).cast(pl.Float64) for role, name in names.items()}
    return frame.with_columns(
        fpr=rate(k["fp"], k["fp"] + k["tn"]),
        tpr=rate(k["tp"], k["tp"] + k["fn"]),
    )
