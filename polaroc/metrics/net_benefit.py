"""Decision curves: the net benefit of acting on a model's probabilities, threshold by threshold.

A clinician who treats a patient when the predicted risk reaches a threshold probability
pₜ says, by choosing pₜ, that a missed case (a false negative) costs (1 − pₜ)/pₜ times as
much as an unnecessary treatment (a false positive). Vickers & Elkin (2006, eq. 1) weigh
the true positives against the false positives at that exchange rate:

    net benefit(pₜ) = TP/n − FP/n · pₜ/(1 − pₜ),

with TP and FP the samples predicted positive (``score >= pₜ``) among the n samples. The
decision curve plots it against pₜ beside the two strategies that need no model: treat
everyone (TP = the positives, FP = the negatives) and treat no one (net benefit 0). A
model is worth using at the thresholds where its curve lies above both.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Unpack

import numpy as np
import polars as pl

from polaroc.core.args import validated
from polaroc.core.inputs import FrameLike, fail_if
from polaroc.core.log import LogNames, columns_of, read_log, usable_weight
from polaroc.core.names import POSITIVE, SCORE
from polaroc.metrics._curves import as_grid, curve_lists, rate_of
from polaroc.metrics.scoring import not_probability

__all__ = ["decision_curve"]

NAN = float("nan")
_E = pl.element()

DEFAULT_THRESHOLDS = np.arange(1, 100) / 100
"""0.01, 0.02, …, 0.99: the threshold probabilities of :func:`decision_curve` by default."""


def _thresholds(thresholds: Sequence[float] | np.ndarray | pl.Series | None) -> np.ndarray:
    """The threshold probabilities, sorted and distinct, each strictly between 0 and 1."""
    if thresholds is None:
        return DEFAULT_THRESHOLDS
    grid = as_grid(thresholds)
    if not ((grid > 0.0) & (grid < 1.0)).all():
        msg = (
            "thresholds must be threshold probabilities strictly between 0 and 1 (at 1 a "
            "false positive would cost infinitely much), e.g. np.arange(1, 100) / 100; "
            f"got {grid[(grid <= 0.0) | (grid >= 1.0)].tolist()}"
        )
        raise ValueError(msg)
    return grid


def _message(name: str) -> str:
    return (
        f"polaroc: decision_curve reads the score column {name!r} as probabilities of the "
        "positive class (net benefit weighs a threshold probability), and it holds values "
        "outside [0, 1]. Calibrate the scores first, or compare rankings with pr.roc_curve."
    )


def _points() -> pl.Expr:
    """Inside ``list.eval`` on a curve at a grid: the net benefit at each grid threshold.

    The curve runs from its origin (threshold +inf) down to its end (−inf, every sample
    predicted positive), so its last point holds the totals of positives and negatives.
    """
    t = _E.struct.field("threshold")
    tp, fp = _E.struct.field("tp"), _E.struct.field("fp")
    n_pos, n_neg = tp.last(), fp.last()
    n = n_pos + n_neg
    odds = t / (1.0 - t)
    return pl.struct(
        threshold=t,
        net_benefit=rate_of(tp, n) - rate_of(fp, n) * odds,
        net_benefit_all=rate_of(pl.repeat(n_pos, pl.len()), n)
        - rate_of(pl.repeat(n_neg, pl.len()), n) * odds,
        both=(n_pos > 0) & (n_neg > 0),
    ).filter(t.is_finite())  # the grid's points, not the curve's two ends


@validated
def decision_curve(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None = None,
    thresholds: Sequence[float] | np.ndarray | pl.Series | None = None,
    weight: str | pl.Expr | None = None,
    positive_class: Any = None,
    **columns: Unpack[LogNames],
) -> pl.LazyFrame:
    """Net benefit of each group's probabilities over threshold probabilities (a decision curve).

    At each threshold probability pₜ, ``net_benefit`` = TP/n − FP/n · pₜ/(1 − pₜ)
    (Vickers & Elkin 2006, eq. 1), a sample predicted positive iff ``score >= pₜ``; and
    ``net_benefit_all`` the same for treating every sample, π − (1 − π) · pₜ/(1 − pₜ)
    with π the group's share of positives. Treating no one has net benefit 0. Equal,
    fold by fold, to the ``dcurves`` package's ``dca(data, outcome, modelnames,
    thresholds)`` (its ``net_benefit`` of the model and of ``"all"``), which reads one
    model on one data set.

    Parameters
    ----------
    log
        Score log in the contract's long format, binary: a log without a class column
        (the label is the positive indicator), or the positive class's rows (a log with
        both classes' rows keeps those of ``positive_class``, by default the larger class
        value). Scores must be probabilities in ``[0, 1]``.
    by
        Keyword-only grouping columns; ``None`` (default) = (dataset, model, repeat,
        fold) of the columns the log has (``model`` and ``fold`` always): one curve per
        fold. ``()`` = one group, a name or names = those.
    thresholds
        Threshold probabilities, each strictly between 0 and 1 (sorted, repeats
        dropped); default 0.01, 0.02, …, 0.99.
    weight
        A case-weight column or expression (finite, ``>= 0``): TP, FP and n are then
        sums of weights, so integer weights equal repeated rows. Null or zero weights
        drop the row.
    positive_class
        The positive class of a log holding both classes' rows (default: the larger
        class value of each data set); with more than two classes, the class read
        against the rest.
    **columns
        Names of the log's columns, as keywords: ``model``, ``fold``, ``class_``,
        ``score``, ``label``, ``sample``, ``dataset``, ``repeat`` (each defaults to its
        own name).

    Returns
    -------
    pl.LazyFrame
        One row per group and threshold: by…, ``threshold``, ``net_benefit``,
        ``net_benefit_all``, sorted by group and rising threshold. Both are null for a
        group with one class only (π is 0 or 1: there is nothing to decide) and NaN for
        a group holding a NaN score.

    Raises
    ------
    ValueError
        A missing column, thresholds outside (0, 1), a log of more than two classes
        without ``positive_class``, or (when the query runs) a score outside ``[0, 1]``
        or a negative, NaN or infinite weight.
    TypeError
        A column name that is not a string, ``thresholds`` that are not numbers.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> log = pl.DataFrame({
    ...     "model": "m", "fold": 0,
    ...     "score": [0.1, 0.2, 0.4, 0.6, 0.8, 0.9],
    ...     "label": [0, 0, 1, 0, 1, 1],
    ... })
    >>> pr.decision_curve(log, thresholds=[0.1, 0.5]).collect()
    shape: (2, 5)
    ┌───────┬──────┬───────────┬─────────────┬─────────────────┐
    │ model ┆ fold ┆ threshold ┆ net_benefit ┆ net_benefit_all │
    │ ---   ┆ ---  ┆ ---       ┆ ---         ┆ ---             │
    │ str   ┆ i32  ┆ f64       ┆ f64         ┆ f64             │
    ╞═══════╪══════╪═══════════╪═════════════╪═════════════════╡
    │ m     ┆ 0    ┆ 0.1       ┆ 0.444444    ┆ 0.444444        │
    │ m     ┆ 0    ┆ 0.5       ┆ 0.166667    ┆ 0.0             │
    └───────┴──────┴───────────┴─────────────┴─────────────────┘
    """
    grid = _thresholds(thresholds)
    names = columns_of(columns, caller="decision_curve")
    data = read_log(log, by=by, columns=names, weight=weight, positive_class=positive_class)
    frame = data.binary(data.unique(), caller="decision_curve")
    usable = pl.col(SCORE).is_not_null() & pl.col(POSITIVE).is_not_null()
    if weight is not None:
        usable = usable & usable_weight()
    check = fail_if(not_probability(pl.col(SCORE)).any(), _message(names.score))
    keys = list(data.groups)
    curves = curve_lists(
        frame.filter(usable).filter(check), keys, grid, weighted=weight is not None
    )
    nan = pl.col("has_nan")
    return (
        curves.with_columns(pl.col("curve").list.eval(_points()))
        .explode("curve")
        .unnest("curve")
        .select(
            *data.by,
            "threshold",
            *(
                pl.when(pl.col("both")).then(pl.when(nan).then(NAN).otherwise(pl.col(c))).alias(c)
                for c in ("net_benefit", "net_benefit_all")
            ),
        )
        .sort([*data.by, "threshold"], maintain_order=True)
    )
