"""Operating points: the threshold to use, chosen on each group's empirical ROC curve.

A ROC curve lists every achievable (specificity, sensitivity) pair; an operating point
is the one a criterion picks (Bradley 1997, §1–2):

* Neyman–Pearson: the best specificity among the points whose sensitivity reaches a
  target, or the best sensitivity among those whose specificity does;
* Youden's J = sensitivity + specificity − 1, the point farthest above the diagonal;
* minimum misclassification cost ``Fp · C_Fp + Fn · C_Fn`` (Bradley 1997, eq. 6).

Every point is a threshold of the curve (:func:`polaroc.roc_curve`) with the rule of
:func:`polaroc.confusion`: predicted positive iff ``score >= threshold``, so
``pr.sensitivity(score, positive, threshold=<the threshold>)`` reproduces the
sensitivity reported. The first point of a curve (nothing predicted positive) has
threshold ``+inf``. Ties between points go to the higher sensitivity, then to the
higher threshold.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Unpack, cast

import numpy as np
import polars as pl

from polaroc.core.args import validated
from polaroc.core.inputs import FrameLike, LogColumns
from polaroc.core.log import LogNames, columns_of
from polaroc.metrics._curves import NAN, as_grid, confusion, curve_input, curve_lists, rate_of

__all__ = ["min_cost_point", "neyman_pearson_point", "youden_point"]

_E = pl.element()
_F = pl.field
OUTPUT = ("threshold", "sensitivity", "specificity", "cost")


def _point_fields(cost_fp: float, cost_fn: float, normalize: bool) -> pl.Expr:
    """Curve structs → ``{threshold, sensitivity, specificity, cost}`` (in ``list.eval``)."""
    counts = confusion()
    tp, fn, tn = counts["tp"], counts["fn"], counts["tn"]
    n_pos, n_neg, fp = counts["n_pos"], counts["n_neg"], counts["fp"]
    cost = fp * float(cost_fp) + fn * float(cost_fn)
    return pl.struct(
        threshold=_E.struct.field("threshold"),
        sensitivity=rate_of(tp, n_pos),
        specificity=rate_of(tn, n_neg),
        cost=rate_of(cost, n_pos + n_neg) if normalize else cost,
    )


def operating_point(
    log: FrameLike,
    by: str | Iterable[str] | None,
    objective: pl.Expr,
    extra: dict[str, pl.Expr],
    *,
    thresholds: Sequence[float] | np.ndarray | pl.Series | None,
    cost_fp: float,
    cost_fn: float,
    normalize: bool,
    columns: LogColumns,
) -> pl.LazyFrame:
    """Per curve, the point maximising ``objective`` (null where infeasible).

    ``objective`` and ``extra`` are written with ``pl.field`` over the fields of
    :func:`_point_fields`; ``extra`` are reported next to the standard columns.
    """
    if cost_fp < 0 or cost_fn < 0:
        msg = f"costs must be non-negative, got cost_fp={cost_fp!r}, cost_fn={cost_fn!r}"
        raise ValueError(msg)
    frame, keys = curve_input(log, by, columns)
    grid = None if thresholds is None else as_grid(thresholds)
    curves = curve_lists(frame, keys, grid)
    points = pl.col("curve").list.eval(
        _point_fields(cost_fp, cost_fn, normalize).struct.with_fields(_objective=objective, **extra)
    )
    order = [_E.struct.field(f) for f in ("_objective", "sensitivity", "threshold")]
    feasible = points.list.eval(_E.filter(_E.struct.field("_objective").is_not_null()))
    best = feasible.list.eval(_E.sort_by(order, descending=True, nulls_last=True).first())
    best = best.list.first()
    reported = [*OUTPUT, *extra]
    nan_group = pl.when(pl.col("has_nan")).then(NAN)
    return (
        curves.select(*keys, "has_nan", best.alias("best"))
        .unnest("best")
        .select(*keys, *(nan_group.otherwise(pl.col(name)).alias(name) for name in reported))
        .sort(keys, maintain_order=True)
    )


@validated
def youden_point(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None = None,
    thresholds: Sequence[float] | np.ndarray | pl.Series | None = None,
    cost_fp: float = 1.0,
    cost_fn: float = 1.0,
    normalize: bool = False,
    **columns: Unpack[LogNames],
) -> pl.LazyFrame:
    """The point of each curve maximising Youden's J = sensitivity + specificity − 1.

    J is the vertical distance of the point above the chance diagonal; its maximum
    is the point where a line of slope 1 touches the curve, which is also the
    minimum-cost point when ``C_Fp · n⁻ = C_Fn · n⁺``.

    Parameters
    ----------
    log
        Score log in the contract's long format.
    by
        Grouping columns (keyword-only), as for :func:`polaroc.roc_curve`: ``None``
        (default) = ``(dataset, model, repeat, fold)`` of the columns the log has, ``()``
        one group; one point per curve, so per class for a log with a class column.
    thresholds
        Choose among the points of a fixed threshold grid instead of every distinct
        score (see :func:`polaroc.roc_curve`).
    cost_fp, cost_fn, normalize
        The costs the ``cost`` column reports at the point: ``Fp · C_Fp + Fn · C_Fn``
        (Bradley 1997, eq. 6), divided by the number of samples if ``normalize``.
    **columns
        Names of the log's columns, as keywords: ``model``, ``fold``, ``class_``,
        ``score``, ``label``, ``sample``, ``dataset``, ``repeat`` (each defaults to its
        own name).

    Returns
    -------
    pl.LazyFrame
        One row per curve: the keys, ``threshold``, ``sensitivity``,
        ``specificity``, ``cost``, ``youden_j``. Null for a one-class group, NaN for
        a group holding a NaN score.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> log = pl.DataFrame({
    ...     "model": "m",
    ...     "fold": 0,
    ...     "score": [0.9, 0.8, 0.7, 0.6, 0.55, 0.5, 0.4, 0.3],
    ...     "label": [True, False, True, True, False, True, False, False],
    ... })
    >>> pr.youden_point(log).collect()
    shape: (1, 7)
    ┌───────┬──────┬───────────┬─────────────┬─────────────┬──────┬──────────┐
    │ model ┆ fold ┆ threshold ┆ sensitivity ┆ specificity ┆ cost ┆ youden_j │
    │ ---   ┆ ---  ┆ ---       ┆ ---         ┆ ---         ┆ ---  ┆ ---      │
    │ str   ┆ i32  ┆ f64       ┆ f64         ┆ f64         ┆ f64  ┆ f64      │
    ╞═══════╪══════╪═══════════╪═════════════╪═════════════╪══════╪══════════╡
    │ m     ┆ 0    ┆ 0.5       ┆ 1.0         ┆ 0.5         ┆ 2.0  ┆ 0.5      │
    └───────┴──────┴───────────┴─────────────┴─────────────┴──────┴──────────┘
    """
    j = _F("sensitivity") + _F("specificity") - 1.0
    return operating_point(
        log,
        by,
        j,
        {"youden_j": j},
        thresholds=thresholds,
        cost_fp=cost_fp,
        cost_fn=cost_fn,
        normalize=normalize,
        columns=columns_of(columns, caller="youden_point"),
    )


@validated
def neyman_pearson_point(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None = None,
    min_sensitivity: float | None = None,
    min_specificity: float | None = None,
    thresholds: Sequence[float] | np.ndarray | pl.Series | None = None,
    cost_fp: float = 1.0,
    cost_fn: float = 1.0,
    normalize: bool = False,
    **columns: Unpack[LogNames],
) -> pl.LazyFrame:
    """The Neyman–Pearson point of each curve: one rate constrained, the other maximised.

    With ``min_sensitivity`` the point of highest specificity among those with
    sensitivity ``>= min_sensitivity`` (the false-negative rate is fixed and the
    false-positive rate minimised, Bradley 1997, §2); with ``min_specificity``,
    the reverse. Give exactly one. The constraint is met on the curve's own points,
    so the reported rate can exceed the target.

    Parameters
    ----------
    log
        Score log in the contract's long format.
    by
        Grouping columns (keyword-only), as for :func:`polaroc.roc_curve`: ``None``
        (default) = ``(dataset, model, repeat, fold)`` of the columns the log has, ``()``
        one group.
    min_sensitivity, min_specificity
        The target, in ``[0, 1]``.
    thresholds, cost_fp, cost_fn, normalize
        As for :func:`youden_point`.
    **columns
        Names of the log's columns, as keywords: ``model``, ``fold``, ``class_``,
        ``score``, ``label``, ``sample``, ``dataset``, ``repeat`` (each defaults to its
        own name).

    Returns
    -------
    pl.LazyFrame
        One row per curve: the keys, ``threshold``, ``sensitivity``,
        ``specificity``, ``cost``. Null for a one-class group, NaN for a group
        holding a NaN score.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> log = pl.DataFrame({
    ...     "model": "m",
    ...     "fold": 0,
    ...     "score": [0.9, 0.8, 0.7, 0.6, 0.55, 0.5, 0.4, 0.3],
    ...     "label": [True, False, True, True, False, True, False, False],
    ... })
    >>> pr.neyman_pearson_point(log, min_specificity=0.9).collect()
    shape: (1, 6)
    ┌───────┬──────┬───────────┬─────────────┬─────────────┬──────┐
    │ model ┆ fold ┆ threshold ┆ sensitivity ┆ specificity ┆ cost │
    │ ---   ┆ ---  ┆ ---       ┆ ---         ┆ ---         ┆ ---  │
    │ str   ┆ i32  ┆ f64       ┆ f64         ┆ f64         ┆ f64  │
    ╞═══════╪══════╪═══════════╪═════════════╪═════════════╪══════╡
    │ m     ┆ 0    ┆ 0.9       ┆ 0.25        ┆ 1.0         ┆ 3.0  │
    └───────┴──────┴───────────┴─────────────┴─────────────┴──────┘
    """
    if (min_sensitivity is None) == (min_specificity is None):
        msg = "give exactly one of min_sensitivity and min_specificity"
        raise ValueError(msg)
    # exactly one of the two is given (checked above)
    target = cast(float, min_sensitivity if min_specificity is None else min_specificity)
    if not 0.0 <= float(target) <= 1.0:
        msg = f"the Neyman–Pearson target must be a rate in [0, 1], got {target!r}"
        raise ValueError(msg)
    constrained, maximised = (
        ("sensitivity", "specificity")
        if min_specificity is None
        else ("specificity", "sensitivity")
    )
    objective = pl.when(_F(constrained) >= float(target)).then(_F(maximised))
    return operating_point(
        log,
        by,
        objective,
        {},
        thresholds=thresholds,
        cost_fp=cost_fp,
        cost_fn=cost_fn,
        normalize=normalize,
        columns=columns_of(columns, caller="neyman_pearson_point"),
    )


@validated
def min_cost_point(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None = None,
    cost_fp: float = 1.0,
    cost_fn: float = 1.0,
    normalize: bool = False,
    thresholds: Sequence[float] | np.ndarray | pl.Series | None = None,
    **columns: Unpack[LogNames],
) -> pl.LazyFrame:
    """The point of each curve with the least misclassification cost (Bradley 1997, eq. 6).

    The cost at a threshold is ``Fp · C_Fp + Fn · C_Fn``; the minimum is taken over
    the curve's points, i.e. the empirical optimum for this sample. Only the ratio
    ``λ = C_Fp / C_Fn`` decides the point. For calibrated probabilities of the
    positive class, Bayes' rule predicts positive when ``P(+|x) > λ / (1 + λ)``
    (Aslan, Yıldız & Alpaydın 2009, §II-B, with their loss λ for a false positive
    and 1 for a false negative), so the empirical threshold found here should lie
    near ``θ = λ / (1 + λ)``; for uncalibrated scores only the empirical one is
    meaningful.

    Parameters
    ----------
    log
        Score log in the contract's long format.
    by
        Grouping columns (keyword-only), as for :func:`polaroc.roc_curve`: ``None``
        (default) = ``(dataset, model, repeat, fold)`` of the columns the log has, ``()``
        one group.
    cost_fp, cost_fn
        Cost of one false positive and of one false negative (non-negative).
    normalize
        Report the cost per sample instead of the total.
    thresholds
        As for :func:`youden_point`.
    **columns
        Names of the log's columns, as keywords: ``model``, ``fold``, ``class_``,
        ``score``, ``label``, ``sample``, ``dataset``, ``repeat`` (each defaults to its
        own name).

    Returns
    -------
    pl.LazyFrame
        One row per curve: the keys, ``threshold``, ``sensitivity``,
        ``specificity``, ``cost``. The cost is defined for a one-class group too
        (where one of the rates is null); a group holding a NaN score gives NaN.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> log = pl.DataFrame({
    ...     "model": "m",
    ...     "fold": 0,
    ...     "score": [0.9, 0.8, 0.7, 0.6, 0.55, 0.5, 0.4, 0.3],
    ...     "label": [True, False, True, True, False, True, False, False],
    ... })
    >>> pr.min_cost_point(log, cost_fp=1.0, cost_fn=5.0).collect()
    shape: (1, 6)
    ┌───────┬──────┬───────────┬─────────────┬─────────────┬──────┐
    │ model ┆ fold ┆ threshold ┆ sensitivity ┆ specificity ┆ cost │
    │ ---   ┆ ---  ┆ ---       ┆ ---         ┆ ---         ┆ ---  │
    │ str   ┆ i32  ┆ f64       ┆ f64         ┆ f64         ┆ f64  │
    ╞═══════╪══════╪═══════════╪═════════════╪═════════════╪══════╡
    │ m     ┆ 0    ┆ 0.5       ┆ 1.0         ┆ 0.5         ┆ 2.0  │
    └───────┴──────┴───────────┴─────────────┴─────────────┴──────┘
    """
    return operating_point(
        log,
        by,
        -_F("cost"),
        {},
        thresholds=thresholds,
        cost_fp=cost_fp,
        cost_fn=cost_fn,
        normalize=normalize,
        columns=columns_of(columns, caller="min_cost_point"),
    )
