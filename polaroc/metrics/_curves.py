"""The curve tables' shared steps: curve lists per group, their points and rates.

Private to ``metrics/`` (``curves.py``, ``fold_curves.py``, ``precision_recall.py``,
``operating.py``, ``thresholds.py``). A curve of a group is its entries of the count
schema (:func:`polaroc.core.counts.in_list`, or :func:`polaroc.core.counts.on_grid` at a
fixed grid) read from the top down by the core's point formula
(:func:`polaroc.core.formulas.curve_points`), held as a list of structs per group until
the final ``explode``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import polars as pl

from polaroc.core import counts
from polaroc.core import formulas as f
from polaroc.core.inputs import ColumnLike, FrameLike, LogColumns
from polaroc.core.log import read_log, unique_rows, usable_weight
from polaroc.core.names import POSITIVE, SCORE, WEIGHT

__all__ = [
    "COUNT_FIELDS",
    "INF",
    "NAN",
    "as_grid",
    "confusion",
    "curve_input",
    "curve_lists",
    "explode_curves",
    "points_from_counts",
    "rate",
    "rate_of",
    "with_origin",
    "with_rates",
    "without_intermediate",
]

INF = float("inf")
NAN = float("nan")
_E = pl.element()
_F = pl.field


# ------------------------------------------------------------------ curve lists
# Each helper below is evaluated inside ``list.eval`` on one group's list.


def with_origin(threshold: pl.Expr, tp: pl.Expr, fp: pl.Expr) -> pl.Expr:
    """Descending ``threshold``, ``tp``, ``fp`` → the points from ``(0, 0)``.

    The first point (nothing predicted positive) has threshold ``+inf``, as in
    scikit-learn.
    """
    return pl.struct(
        threshold=pl.lit(INF).append(threshold),
        tp=pl.lit(0, pl.Int64).append(tp),
        fp=pl.lit(0, pl.Int64).append(fp),
    )


def points_from_counts() -> pl.Expr:
    """A group's entries (ascending) → its points, in descending threshold order."""
    point = f.curve_points(counts.listed())
    return with_origin(*(point[k].reverse() for k in ("threshold", "tp", "fp")))


def rate(count: pl.Expr, total: pl.Expr) -> pl.Expr:
    """Elementwise ``count / total``, null where ``total`` is 0."""
    return pl.when(total > 0).then(count / total)


def rate_of(count: pl.Expr, total: pl.Expr) -> pl.Expr:
    """``count / total`` inside ``list.eval``, for a ``count`` as long as the list.

    ``total`` is a scalar. Polars divides by a scalar through its reciprocal
    (``49 · (1/49) < 1``), so the total is first broadcast to the list's length and
    the quotient is correctly rounded. Null when ``total`` is 0.
    """
    return pl.when(total > 0).then(count / pl.repeat(total, pl.len()))


def with_rates() -> pl.Expr:
    """The points (from :func:`with_origin`) → the curve with ``fpr`` and ``tpr``.

    The last point holds ``(n⁻, n⁺)``. A rate with a zero denominator is null (a
    one-class group).
    """
    tp, fp = _E.struct.field("tp"), _E.struct.field("fp")
    return pl.struct(
        threshold=_E.struct.field("threshold"),
        fpr=rate_of(fp, fp.last()),
        tpr=rate_of(tp, tp.last()),
        tp=tp,
        fp=fp,
    )


def without_intermediate(curve: pl.Expr) -> pl.Expr:
    """Keep the corners of the curve: drop repeated points, then collinear ones.

    A repeated point (an empty grid bin) keeps its first, highest threshold. A point
    is dropped when the step into it and the step out of it are parallel (the cross
    product of the two count steps is 0, exact in integers).
    """
    tp, fp = _E.struct.field("tp"), _E.struct.field("fp")
    new = tp.ne_missing(tp.shift(1)) | fp.ne_missing(fp.shift(1))
    cross = (fp - fp.shift(1)) * (tp.shift(-1) - tp) - (tp - tp.shift(1)) * (fp.shift(-1) - fp)
    corner = cross.is_null() | (cross != 0)  # the ends have no step on one side
    return curve.list.eval(_E.filter(new)).list.eval(_E.filter(corner))


def confusion() -> dict[str, pl.Expr]:
    """Inside ``list.eval`` on a curve read from the top down: its confusion counts.

    ``tp``, ``fp``, ``tn``, ``fn`` at each point and the class totals ``n_pos``,
    ``n_neg`` (the last point predicts every sample positive).
    """
    tp, fp = _E.struct.field("tp"), _E.struct.field("fp")
    return f.confusion(tp, fp, tp.last(), fp.last())


# ------------------------------------------------------------------ table input


def curve_input(
    log: FrameLike,
    by: str | Iterable[str] | None,
    columns: LogColumns,
    weight: ColumnLike | None = None,
) -> tuple[pl.LazyFrame, list[str]]:
    """Validate ``log``; return its rows with a score and a label, and the curve keys.

    The keys are ``by`` plus, for a log with a class column, the class: each class
    gets its one-vs-rest curve from its own score rows (positives: ``label == class``).
    With a ``weight`` column the rows also carry ``_pr_weight``; rows with a null or
    zero weight are dropped. A key repeated in a log with a sample column is an error
    (the contract's unique keys), as in :func:`polaroc.evaluate`.
    """
    data = read_log(log, by=by, columns=columns, weight=weight)
    frame = data.frame.filter(unique_rows(data.schema, data.columns))
    keys = list(data.by)
    if data.has_class and data.class_ not in keys:
        keys.append(data.class_)
    usable = pl.col(SCORE).is_not_null() & pl.col(POSITIVE).is_not_null()
    if weight is not None:
        usable = usable & usable_weight()
    return frame.filter(usable), keys


def as_grid(thresholds: Sequence[float] | np.ndarray | pl.Series) -> np.ndarray:
    """A threshold grid as sorted distinct floats without ``-inf`` (always added)."""
    if isinstance(thresholds, str | bytes) or not isinstance(
        thresholds, Sequence | np.ndarray | pl.Series
    ):
        msg = f"`thresholds` must be a sequence of numbers, got {type(thresholds).__name__}"
        raise TypeError(msg)
    grid = np.unique(np.asarray(thresholds, dtype=float))
    if np.isnan(grid).any():
        msg = "`thresholds` holds NaN; a threshold grid must be numbers (±inf allowed)."
        raise ValueError(msg)
    grid = grid[grid > -INF]
    if grid.size == 0:
        msg = "`thresholds` needs at least one value above -inf, e.g. np.linspace(0, 1, 101)."
        raise ValueError(msg)
    return grid


def curve_lists(
    frame: pl.LazyFrame, keys: list[str], grid: np.ndarray | None = None, *, weighted: bool = False
) -> pl.LazyFrame:
    """One row per curve: the keys, ``has_nan`` and ``curve`` (list of curve structs).

    Without ``grid`` every distinct score is a threshold (one sort per group). With a
    grid the rows are only binned against it and counted per bin, so memory per group
    is constant in the number of rows. ``weighted``: the counts are sums of the
    ``_pr_weight`` column (``Float64``).
    """
    score, positive = pl.col(SCORE), pl.col(POSITIVE)
    weight = pl.col(WEIGHT) if weighted else None
    points = points_from_counts()
    if grid is None:
        entries = counts.in_list(score, positive, weight)
        curve = entries.list.eval(points).list.eval(with_rates())
        return frame.group_by(keys).agg(has_nan=score.is_nan().any(), curve=curve)
    binned = counts.on_grid(frame, keys, grid.tolist(), weighted=weighted)
    curve = pl.col("entries").list.eval(points).list.eval(with_rates())
    return binned.select(*keys, "has_nan", curve.alias("curve"))


# Fields of a curve point that count samples: null (not NaN) on a NaN group's row.
COUNT_FIELDS = ("tp", "fp", "tn", "fn", "n", "n_events")


def explode_curves(
    curves: pl.LazyFrame, keys: list[str], fields: Iterable[str], points: pl.Expr | None = None
) -> pl.LazyFrame:
    """The tidy table: one row per curve point, curves in key order.

    ``curves`` holds the keys, ``has_nan`` and ``curve`` (the list of point structs;
    ``points`` replaces it when given); the table has the keys and ``fields``. A group
    holding a NaN score has no curve: it is one row, its count fields
    (:data:`COUNT_FIELDS`) null and the others NaN.
    """
    fields = list(fields)
    curve = pl.col("curve") if points is None else points
    table = (
        curves.with_columns(curve.alias("curve"))
        .sort(keys, maintain_order=True)
        .select(*keys, "has_nan", "curve")
        .explode("curve")
        .unnest("curve")
    )
    nan_row = pl.col("has_nan")
    marked = [
        pl.when(~nan_row).then(pl.col(f)).alias(f)
        if f in COUNT_FIELDS
        else pl.when(nan_row).then(NAN).otherwise(pl.col(f)).alias(f)
        for f in fields
    ]
    index = pl.int_range(pl.len())
    first = (index.over(keys) if keys else index) == 0
    return table.filter(~nan_row | first).with_columns(marked).select(*keys, *fields)
