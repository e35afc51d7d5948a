"""Precision–recall: average precision and the precision–recall curve.

On very unbalanced problems the ROC view hides how many false positives come with
each true positive; precision, ``tp / (tp + fp)``, shows them. Both quantities here
are read from the same counts at thresholds as the ROC curve and the AUC
(``polaroc.core.counts``): at threshold ``t`` a sample is predicted positive iff
``score >= t``, ``tp``/``fp`` count the positives/negatives scored ``>= t``, and

* precision ``P(t) = tp(t) / (tp(t) + fp(t))``, recall ``R(t) = tp(t) / n⁺``.

Tied scores are one step: lowering ``t`` past a run of ties moves recall and
precision by the whole run at once.

Why a step-wise sum and no trapezoid. Davis & Goadrich (2006) show that the
precision–recall space is not linear like ROC space: between two achievable points
precision does not vary linearly with recall (moving along the ROC segment between
them, ``tp`` and ``fp`` grow together, so precision follows a hyperbola), and the
straight line between two PR points overstates the area. Average precision avoids
any interpolation: it weights each threshold's precision by the recall it adds,
``AP = Σₙ (Rₙ − Rₙ₋₁) Pₙ``, which is scikit-learn's ``average_precision_score``.
For the same reason there is no vertically averaged PR curve over folds here:
averaging precisions at fixed recalls needs exactly the interpolation Davis &
Goadrich warn against (and a fold's precision at a recall it does not reach is
undefined). :func:`pooled_pr_curve` pools the folds' counts instead, as Bradley
(1997, §6) pools ROC counts; the mean of the folds' :func:`average_precision` is the
per-fold summary.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Unpack

import polars as pl

from polaroc.core import counts
from polaroc.core import formulas as f
from polaroc.core.args import validated
from polaroc.core.counts import Counts
from polaroc.core.inputs import ColumnLike, FrameLike, LogColumns, as_lazy, as_names, binary_expr
from polaroc.core.log import LogNames, columns_of, pooled_by
from polaroc.core.names import POSITIVE, SCORE, WEIGHT
from polaroc.metrics._curves import curve_input, explode_curves, rate_of

__all__ = ["average_precision", "pooled_pr_curve", "pr_curve"]

NAN = float("nan")

_E = pl.element()


def _precision_sum(k: Counts) -> pl.Expr:
    """Σ over a group's positives of the precision at their score (the core's term)."""
    return f.pair_terms(k)["ap"].sum()


def _unweighted(s: pl.Expr, p: pl.Expr) -> pl.Expr:
    """Average precision of the group's filtered rows, from its entries."""
    k = counts.listed()
    value = f.average_precision_of(_precision_sum(k), k.n_pos, k.n_neg)
    return counts.per_group(value, s, p, scores=False)


def _weighted(s: pl.Expr, p: pl.Expr, w: pl.Expr) -> pl.Expr:
    """Per group ``{value, bad_weight}``: weighted AP from the raw columns (``raw_weight``).

    The rows are the columns as they are, the policies applied as weights by
    ``counts.class_weights``; an entry of weight 0 adds no term. No weight is rescaled:
    each term is a weight times a ratio of sums, so 1e160 or 1e-170 neither overflow
    nor underflow.
    """
    k = counts.listed()
    value = f.average_precision_of(_precision_sum(k), k.n_pos, k.n_neg)
    checked = pl.struct(value=value, bad_weight=_E.struct.field("bad").first())
    return counts.per_group(checked, s, p, w, scores=False)


@validated
def average_precision(
    score: ColumnLike, positive: ColumnLike, *, weight: ColumnLike | None = None
) -> pl.Expr:
    """Average precision: ``AP = Σₙ (Rₙ − Rₙ₋₁) Pₙ`` over the group's thresholds.

    ``Pₙ`` and ``Rₙ`` are the precision and recall at the n-th threshold (every
    distinct score, predicted positive iff ``score >= threshold``), so AP is the
    mean of the precisions reached at each positive, tied positives sharing their
    run's precision. It equals scikit-learn's ``average_precision_score(y_true,
    y_score, sample_weight=w)``. It is a step-wise sum, not the trapezoidal area
    under the PR points: Davis & Goadrich (2006, §4–5) show that linear interpolation
    between PR points is wrong (precision is not linear in recall between two
    operating points) and overestimates the area; the step sum needs no
    interpolation.

    Parameters
    ----------
    score
        Column name or expression; higher means more evidence for the positive class.
        Note the order: score first, unlike scikit-learn's ``(y_true, y_score)``.
    positive
        Boolean column (or 0/1 integers) marking the positive samples.
    weight
        Optional case weights (finite, ``>= 0``): ``tp`` and ``fp`` are then sums of
        weights, as scikit-learn's ``sample_weight``. Integer weights equal repeating
        rows, weight 0 removes the row, a null weight drops it; a negative, NaN or
        infinite weight raises an error naming the column when the query runs.

    Returns
    -------
    pl.Expr
        ``Float64`` named ``average_precision``: null for a group without positives
        or without negatives (the contract's degenerate group; scikit-learn returns
        1.0 for a group of positives only and warns for one without positives), NaN
        if the group holds a NaN score.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> df = pl.DataFrame({
    ...     "score": [0.9, 0.8, 0.7, 0.6, 0.5, 0.4],
    ...     "label": [True, False, True, True, False, False],
    ... })
    >>> df.select(pr.average_precision("score", "label"), pr.auc("score", "label"))
    shape: (1, 2)
    ┌───────────────────┬──────────┐
    │ average_precision ┆ auc      │
    │ ---               ┆ ---      │
    │ f64               ┆ f64      │
    ╞═══════════════════╪══════════╡
    │ 0.805556          ┆ 0.777778 │
    └───────────────────┴──────────┘

    That is (1/1 + 2/3 + 3/4) / 3: the precision at each positive, averaged.
    """
    if weight is not None:
        return binary_expr(
            score,
            positive,
            _weighted,
            name="average_precision",
            weight=weight,
            raw_weight=True,
        )

    return binary_expr(score, positive, _unweighted, name="average_precision", two_classes=True)


# ------------------------------------------------------------------ curves


def _pr_points(k: Counts) -> pl.Expr:
    """A group's entries (ascending) → its PR points, then scikit-learn's end point.

    The points keep the ascending threshold order of ``precision_recall_curve``
    (recall falling); the end point ``(recall 0, precision 1)`` has a null threshold.
    """
    has_pos = k.n_pos > 0
    return pl.struct(
        threshold=k.score.append(pl.lit(None, pl.Float64)),
        precision=f.precision(k).append(pl.lit(1.0)),
        recall=rate_of(k.tp, k.n_pos).append(pl.when(has_pos).then(pl.lit(0.0))),
        tp=k.tp.append(pl.lit(0)),
        fp=k.fp.append(pl.lit(0)),
    )


def _pr_table(
    log: FrameLike, by: str | Iterable[str] | None, columns: LogColumns, weight: ColumnLike | None
) -> pl.LazyFrame:
    frame, keys = curve_input(log, by, columns, weight)
    score, positive = pl.col(SCORE), pl.col(POSITIVE)
    w = None if weight is None else pl.col(WEIGHT)
    points = _pr_points(counts.listed())
    curve = counts.in_list(score, positive, w).list.eval(points)
    curves = frame.group_by(keys).agg(has_nan=score.is_nan().any(), curve=curve)
    return explode_curves(curves, keys, ("threshold", "precision", "recall", "tp", "fp"))


@validated
def pr_curve(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None = None,
    weight: ColumnLike | None = None,
    **columns: Unpack[LogNames],
) -> pl.LazyFrame:
    """The precision–recall curve of each group, as a long table of points.

    One point per distinct score ``t`` in ascending order — predicted positive iff
    ``score >= t``, precision ``tp / (tp + fp)``, recall ``tp / n⁺`` — then the end
    point with precision 1, recall 0 and a null threshold: the points, in order, of
    scikit-learn's ``precision_recall_curve(y_true, y_score, sample_weight=w)`` (its
    default ``drop_intermediate=False``). Tied scores are one step. Points are not
    joined by straight lines in PR space (Davis & Goadrich 2006); see
    :func:`average_precision` for the area.

    A log with a class column gives one one-vs-rest curve per class (a ``class``
    column is added to the keys), as :func:`polaroc.roc_curve`.

    Parameters
    ----------
    log
        Score log (``DataFrame`` or ``LazyFrame``) in the contract's long format.
    by
        Grouping columns (keyword-only); ``None`` (default) = ``(dataset, model,
        repeat, fold)`` of the columns the log has (``model`` and ``fold`` always);
        ``by=()`` gives one curve for the whole log (per class).
    weight
        Case weights, a column name or an expression (finite, ``>= 0``; default none):
        ``tp``/``fp`` are then sums of weights (``Float64``); zero-weight rows are
        dropped (their scores are no thresholds, as in scikit-learn), null-weight rows
        too. A negative, NaN or infinite weight raises ``ValueError`` (for a
        ``LazyFrame``, when collected).
    **columns
        Names of the log's columns, as keywords: ``model``, ``fold``, ``class_``,
        ``score``, ``label``, ``sample``, ``dataset``, ``repeat`` (each defaults to its
        own name).

    Returns
    -------
    pl.LazyFrame
        One row per group and point: the keys, ``threshold``, ``precision``,
        ``recall`` (``Float64``), ``tp``, ``fp`` (``Int64``; ``Float64`` when
        weighted). A group without positives has null recall (scikit-learn sets it to
        1 with a warning); a group holding a NaN score is one point with NaN values
        and null counts. Rows with a null score or label are ignored.

    Raises
    ------
    ValueError
        A column is missing, or (for a ``DataFrame``) a weight is negative, NaN or
        infinite.
    TypeError
        The score or weight is not numeric, or the label cannot be compared with the
        class.

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
    >>> pr.pr_curve(log).collect()
    shape: (5, 7)
    ┌───────┬──────┬───────────┬───────────┬──────────┬─────┬─────┐
    │ model ┆ fold ┆ threshold ┆ precision ┆ recall   ┆ tp  ┆ fp  │
    │ ---   ┆ ---  ┆ ---       ┆ ---       ┆ ---      ┆ --- ┆ --- │
    │ str   ┆ i32  ┆ f64       ┆ f64       ┆ f64      ┆ i64 ┆ i64 │
    ╞═══════╪══════╪═══════════╪═══════════╪══════════╪═════╪═════╡
    │ m     ┆ 0    ┆ 0.1       ┆ 0.6       ┆ 1.0      ┆ 3   ┆ 2   │
    │ m     ┆ 0    ┆ 0.3       ┆ 0.75      ┆ 1.0      ┆ 3   ┆ 1   │
    │ m     ┆ 0    ┆ 0.8       ┆ 0.666667  ┆ 0.666667 ┆ 2   ┆ 1   │
    │ m     ┆ 0    ┆ 0.9       ┆ 1.0       ┆ 0.333333 ┆ 1   ┆ 0   │
    │ m     ┆ 0    ┆ null      ┆ 1.0       ┆ 0.0      ┆ 0   ┆ 0   │
    └───────┴──────┴───────────┴───────────┴──────────┴─────┴─────┘
    """
    return _pr_table(log, by, columns_of(columns, caller="pr_curve"), weight)


@validated
def pooled_pr_curve(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None = None,
    weight: ColumnLike | None = None,
    **columns: Unpack[LogNames],
) -> pl.LazyFrame:
    """The pooled precision–recall curve: all folds' scores together, one curve per group.

    This is :func:`pr_curve` grouped without the fold: the folds' ``tp`` and ``fp``
    are summed at every threshold, as Bradley (1997, §6) pools ROC counts. Like a
    pooled ROC curve it presumes the folds' scores share one scale. Vertical
    averaging of PR curves is not offered: it needs precision at recalls a fold's
    curve does not pass through, i.e. interpolation in PR space, which Davis &
    Goadrich (2006) show is not linear; average the folds' :func:`average_precision`
    instead.

    Parameters
    ----------
    log
        Score log in the contract's long format.
    by
        Groups to pool within (keyword-only); ``None`` (default) = ``model`` (with
        ``dataset`` first when the log
        has one): the default of :func:`pr_curve` without the fold and the repeat, so
        a repeated cross-validation pools all its (repeat, fold) test partitions into
        one curve per model, as :func:`polaroc.pooled_roc`; pass
        ``by=("model", "repeat")`` for one curve per repeat.
    weight
        As for :func:`pr_curve`.
    **columns
        Names of the log's columns, as keywords: ``model``, ``fold``, ``class_``,
        ``score``, ``label``, ``sample``, ``dataset``, ``repeat`` (each defaults to its
        own name).

    Returns
    -------
    pl.LazyFrame
        The columns of :func:`pr_curve`, one curve per group (and class).

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> log = pl.DataFrame({
    ...     "model": "m",
    ...     "fold": [1, 1, 1, 2, 2, 2],
    ...     "score": [0.9, 0.5, 0.2, 0.8, 0.6, 0.1],
    ...     "label": [True, False, True, True, True, False],
    ... })
    >>> pr.pooled_pr_curve(log).collect()
    shape: (7, 6)
    ┌───────┬───────────┬───────────┬────────┬─────┬─────┐
    │ model ┆ threshold ┆ precision ┆ recall ┆ tp  ┆ fp  │
    │ ---   ┆ ---       ┆ ---       ┆ ---    ┆ --- ┆ --- │
    │ str   ┆ f64       ┆ f64       ┆ f64    ┆ i64 ┆ i64 │
    ╞═══════╪═══════════╪═══════════╪════════╪═════╪═════╡
    │ m     ┆ 0.1       ┆ 0.666667  ┆ 1.0    ┆ 4   ┆ 2   │
    │ m     ┆ 0.2       ┆ 0.8       ┆ 1.0    ┆ 4   ┆ 1   │
    │ m     ┆ 0.5       ┆ 0.75      ┆ 0.75   ┆ 3   ┆ 1   │
    │ m     ┆ 0.6       ┆ 1.0       ┆ 0.75   ┆ 3   ┆ 0   │
    │ m     ┆ 0.8       ┆ 1.0       ┆ 0.5    ┆ 2   ┆ 0   │
    │ m     ┆ 0.9       ┆ 1.0       ┆ 0.25   ┆ 1   ┆ 0   │
    │ m     ┆ null      ┆ 1.0       ┆ 0.0    ┆ 0   ┆ 0   │
    └───────┴───────────┴───────────┴────────┴─────┴─────┘
    """
    names = columns_of(columns, caller="pooled_pr_curve")
    outer = pooled_by(as_lazy(log).collect_schema(), names) if by is None else as_names(by)
    return _pr_table(log, outer, names, weight)
