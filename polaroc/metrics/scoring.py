"""Proper scoring rules: the Brier score and the log loss, as aggregating expressions.

AUC judges only the order of the scores; a proper scoring rule judges the scores as
probabilities (Brier 1950; Good 1952; Gneiting & Raftery 2007): it is minimised in
expectation by reporting the true probability of the positive class. Both rules are
means over samples, so they are one pass over a group's rows (no sort).

Input policies, as for the other binary expressions: rows with a null score or label
are ignored, a NaN score makes the group's value NaN, a group without positives or
without negatives gives null (the contract's degenerate group), and a score outside
``[0, 1]`` is not a probability (also on a row whose label is null): the query raises a
``ValueError`` naming the column.

:func:`group_scores` is the per-group table behind :func:`polaroc.calibration` and
:func:`polaroc.evaluate`'s ``brier`` and ``log_loss`` columns.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from polaroc.core.args import validated
from polaroc.core.inputs import ColumnLike, binary_expr, describe, fail_if, to_expr
from polaroc.core.log import POSITIVE, SCORE

__all__ = ["brier_score", "group_scores", "log_loss"]

# scikit-learn's log_loss clips the probabilities to [eps, 1 - eps], eps of float64
EPS = float(np.finfo(np.float64).eps)


def not_probability(s: pl.Expr) -> pl.Expr:
    """Whether a ``Float64`` score lies outside ``[0, 1]`` (NaN and null: no)."""
    return ((s < 0.0) | (s > 1.0)) & ~s.is_nan()


def probability_message(name: str) -> str:
    """The error for a score column holding values outside ``[0, 1]``."""
    return (
        f"polaroc: the score column {name} holds values outside [0, 1]; the Brier score and "
        "the log loss need probabilities of the positive class. Rescale the scores first "
        f"(e.g. with a calibration model), or use a ranking metric such as pr.auc({name}, ...)."
    )


def _mean(values: pl.Expr, w: pl.Expr | None) -> pl.Expr:
    return values.mean() if w is None else (values * w).sum() / w.sum()


def _probability_rule(
    score: ColumnLike,
    positive: ColumnLike,
    loss: object,
    name: str,
    weight: ColumnLike | None,
) -> pl.Expr:
    column = describe(to_expr(score, argument="score"))

    def build(s: pl.Expr, p: pl.Expr, w: pl.Expr | None = None) -> pl.Expr:
        if w is not None:  # rows with a null or zero weight already dropped
            return rule(s, p, _mean(loss(s, p), w))  # type: ignore[operator]
        # unweighted: the rows as they are (no filtered copies); a row with a null score
        # or label has a null term, which the mean skips
        return rule(s, p, loss(s, p).mean())  # type: ignore[operator]

    def rule(s: pl.Expr, p: pl.Expr, value: pl.Expr) -> pl.Expr:
        """Null without both classes; the range check as one ``any`` (NaN and null skipped).

        Each ``any`` stops at its first hit in a group (a group holding both classes is
        settled after a few rows); ``any`` of the range test costs less than ``min`` and
        ``max`` of the scores.
        """
        scored = p.filter(s.is_not_null())
        both = scored.any() & (~scored).any()
        checked = fail_if(not_probability(s).any(), probability_message(column))
        return pl.when(checked & both).then(value)

    return binary_expr(score, positive, build, name=name, weight=weight, two_classes=True, raw=True)


def brier_loss(s: pl.Expr, p: pl.Expr) -> pl.Expr:
    """Per row: ``(s − y)²`` with ``y`` the 0/1 positive indicator (null with a null label).

    Written as ``(1 − s)²`` for a positive and ``s²`` for a negative (the same floats:
    ``s − 1 = −(1 − s)`` exactly): choosing between two float columns costs less in a
    group-by than casting the indicator to ``Float64``.
    """
    return pl.when(p).then(1.0 - s).when(~p).then(s) ** 2


def log_loss_terms(s: pl.Expr, p: pl.Expr) -> pl.Expr:
    """Per row: ``−log`` of the probability given to the true class, clipped as scikit-learn.

    scikit-learn builds ``[1 − s, s]`` and clips both to ``[eps, 1 − eps]`` (``eps`` of
    ``float64``) before taking logs, so a confident wrong score costs at most ``−log eps``.
    """
    given = pl.when(p).then(s).when(~p).then(1.0 - s)  # null with a null label
    return -given.clip(EPS, 1.0 - EPS).log()


@validated
def brier_score(
    score: ColumnLike, positive: ColumnLike, *, weight: ColumnLike | None = None
) -> pl.Expr:
    """Brier score: the mean squared difference between the score and the 0/1 outcome.

    ``BS = Σ wᵢ (sᵢ − yᵢ)² / Σ wᵢ`` (Brier 1950, eq. 1 for two classes, halved as usual
    for a binary outcome), a strictly proper scoring rule: lower is better, 0 is
    perfect, 0.25 is the constant score 0.5. Equals scikit-learn's
    ``brier_score_loss(y_true, y_proba, sample_weight=w)`` (note its order: the label first).

    Parameters
    ----------
    score
        Probability of the positive class, in ``[0, 1]`` (column name or expression).
    positive
        Boolean (or 0/1) positive indicator.
    weight
        Optional case weights (finite, ``>= 0``); integer weights equal repeated rows, a
        weight of 0 drops the row.

    Returns
    -------
    pl.Expr
        ``Float64`` named ``brier_score``: null for a group without positives or without
        negatives, NaN for a group holding a NaN score.

    Raises
    ------
    ValueError
        When the query runs, if a score lies outside ``[0, 1]`` (the message names the
        column).

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> df = pl.DataFrame({"score": [0.9, 0.8, 0.3, 0.1], "label": [1, 0, 1, 0]})
    >>> df.select(pr.brier_score("score", "label"))
    shape: (1, 1)
    ┌─────────────┐
    │ brier_score │
    │ ---         │
    │ f64         │
    ╞═════════════╡
    │ 0.2875      │
    └─────────────┘
    """
    return _probability_rule(score, positive, brier_loss, "brier_score", weight)


@validated
def log_loss(
    score: ColumnLike, positive: ColumnLike, *, weight: ColumnLike | None = None
) -> pl.Expr:
    """Log loss (cross-entropy): the mean of ``−log`` of the probability given to the outcome.

    ``LL = −Σ wᵢ [yᵢ log sᵢ + (1 − yᵢ) log(1 − sᵢ)] / Σ wᵢ`` (Good 1952), the logarithmic
    scoring rule: strictly proper, lower is better, ``log 2 ≈ 0.693`` for the constant 0.5.
    The probabilities are clipped to ``[eps, 1 − eps]`` (``eps`` ≈ 2.2e-16) as in
    scikit-learn's ``log_loss(y_true, y_proba, sample_weight=w)``, which it equals (note
    its order: the label first); a score of exactly 0 for a positive costs ``−log eps ≈ 36``.

    Parameters
    ----------
    score, positive, weight
        As for :func:`brier_score`.

    Returns
    -------
    pl.Expr
        ``Float64`` named ``log_loss``: null for a group without positives or without
        negatives, NaN for a group holding a NaN score.

    Raises
    ------
    ValueError
        When the query runs, if a score lies outside ``[0, 1]`` (naming the column).

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> df = pl.DataFrame({"score": [0.9, 0.8, 0.3, 0.1], "label": [1, 0, 1, 0]})
    >>> df.select(pr.log_loss("score", "label"))
    shape: (1, 1)
    ┌──────────┐
    │ log_loss │
    │ ---      │
    │ f64      │
    ╞══════════╡
    │ 0.756033 │
    └──────────┘
    """
    return _probability_rule(score, positive, log_loss_terms, "log_loss", weight)


def group_scores(
    frame: pl.LazyFrame,
    keys: list[str],
    *,
    class_: str | None = None,
    label: str | None = None,
    weight: str | None = None,
) -> pl.LazyFrame:
    """Per group: ``n_classes``, ``brier``, ``log_loss``, ``n_not_probability``.

    ``frame`` holds the log's usable rows with the internal ``_pr_score`` and
    ``_pr_positive`` columns (``class_``, ``label`` the class and label columns, ``None`` for
    a log without a class column;
    ``weight`` an optional ``Float64`` weight column). Binary groups (two classes): mean
    (s − y)² and the clipped log loss over the positive class's rows (the larger class
    value's; every row without a class column). Three or more classes: Brier summed over
    classes, log loss of the true class's score, per sample. Null for a one-class group or
    a group with a score outside ``[0, 1]`` (counted in ``n_not_probability``); NaN for a
    group holding a NaN score. The one copy behind :func:`polaroc.calibration` and
    :func:`polaroc.evaluate`'s ``brier`` and ``log_loss``.
    """
    s, y = pl.col(SCORE), pl.col(POSITIVE)
    w = y.cast(pl.Float64) * 0.0 + 1.0 if weight is None else pl.col(weight)  # one per row
    if class_ is not None and label is not None:
        n_classes = pl.max_horizontal(pl.col(class_).n_unique(), pl.col(label).n_unique())
        top = pl.col(class_) == pl.col(class_).max()
        two = pl.col(label).n_unique() > 1
    else:
        n_classes, top = y.n_unique(), pl.lit(True)
        two = y.any() & (~y).any()

    def mean(values: pl.Expr, rows: pl.Expr) -> pl.Expr:
        return (values * w).filter(rows).sum() / w.filter(rows).sum()

    brier2, loss2 = mean(brier_loss(s, y), top), mean(log_loss_terms(s, y), top)
    brier_k = (brier_loss(s, y) * w).sum() / w.filter(y).sum()
    loss_k = mean(log_loss_terms(s, y), y)
    many = n_classes > 2
    bad = not_probability(s).sum().cast(pl.Int64)

    def rule(binary: pl.Expr, several: pl.Expr) -> pl.Expr:
        value = pl.when(many).then(several).otherwise(binary)
        return pl.when(two & (bad == 0)).then(
            pl.when(s.is_nan().any()).then(float("nan")).otherwise(value)
        )

    return frame.group_by(keys).agg(
        n_classes=n_classes.cast(pl.Int64),
        brier=rule(brier2, brier_k),
        log_loss=rule(loss2, loss_k),
        n_not_probability=bad,
    )
