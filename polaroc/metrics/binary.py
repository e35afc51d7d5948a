"""Binary classifier metrics as aggregating Polars expressions.

Every function takes the score first and the positive indicator second (note:
scikit-learn's order is ``(y_true, y_score)``), and returns an expression with one
value per group, so it works in ``select``, ``group_by().agg()`` and ``over()``, on
``DataFrame`` and ``LazyFrame``, with the in-memory and the streaming engine.

Input policies (see ``polaroc.core.inputs``): rows with a null score or label are
ignored; a NaN score makes the group's value NaN; a group without positives or
without negatives gives null; all counts are ``Int64``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import polars as pl

from polaroc.core import counts
from polaroc.core import formulas as f
from polaroc.core.args import validated
from polaroc.core.inputs import ColumnLike, binary_expr
from polaroc.core.structural import rank_placements, structural_covariance

__all__ = [
    "accuracy",
    "auc",
    "auc_se",
    "confusion",
    "cost",
    "error",
    "gini",
    "npv",
    "ppv",
    "sensitivity",
    "specificity",
]


_E = pl.element()


def _unweighted(
    score: ColumnLike, positive: ColumnLike, name: str, transform: Callable[[pl.Expr], pl.Expr]
) -> pl.Expr:
    """``transform`` of the AUC of the group's entries (:func:`polaroc.core.formulas.auc`).

    A degenerate group is null even with a NaN score (the contract: null precedes NaN).
    """
    value = transform(f.auc(counts.listed()))
    build = lambda s, p: counts.per_group(value, s, p, scores=False)  # noqa: E731
    return binary_expr(score, positive, build, name=name, two_classes=True)


def _weighted(
    transform: Callable[[pl.Expr], pl.Expr],
) -> Callable[[pl.Expr, pl.Expr, pl.Expr], pl.Expr]:
    """``transform`` of the weighted AUC, with the weight check: ``{value, bad_weight}``.

    Each (positive, negative) pair weighted w₊·w₋, ties ½, over W₊·W₋: read from the
    group's raw rows (``binary_expr``'s ``raw_weight``), nulls, NaN and the weight check
    applied as weights (:func:`polaroc.core.counts.class_weights`).
    """
    c = counts.listed()
    value = pl.struct(value=transform(f.auc(c)), bad_weight=_E.struct.field("bad").first())
    return lambda s, p, w: counts.per_group(value, s, p, w, scores=False)


@validated
def auc(score: ColumnLike, positive: ColumnLike, *, weight: ColumnLike | None = None) -> pl.Expr:
    """Area under the ROC curve: the Mann–Whitney probability of correct ranking.

    AUC = P(score of a positive > score of a negative) + ½ P(tie), over all
    (positive, negative) pairs of the group. This equals the trapezoidal area under
    the empirical ROC curve (Bradley 1997, eq. 7–9 and §9.3: it is the quantity the
    Wilcoxon rank test estimates) and Hand & Till's (2001) Â = (S₀ − n₀(n₀+1)/2)/(n₀n₁)
    (their eq. 3): read from the group's counts at its distinct scores (the counting core,
    ``polaroc.core.counts``), so that ties are exact.

    Parameters
    ----------
    score
        Column name or expression; higher means more evidence for the positive class.
        Any numeric dtype (compared as ``Float64``).
    positive
        Boolean column (or 0/1 integers) marking the positive samples. Note the
        order: score first, unlike scikit-learn's ``roc_auc_score(y_true, y_score)``.
    weight
        Optional case weights (column name or expression; finite, ``>= 0``). Each
        (positive, negative) pair then counts with weight w₊·w₋ (ties ½) and the sum
        is divided by W₊·W₋, the product of the classes' total weights: scikit-learn's
        ``roc_auc_score(y_true, y_score, sample_weight=w)``. Integer weights equal
        repeating rows; a null weight drops the row; a negative, NaN or infinite
        weight raises an error naming the column when the query runs.

    Returns
    -------
    pl.Expr
        ``Float64`` named ``auc``: null for a group without positives or negatives
        (or whose positives or negatives all have weight 0), NaN if the group holds a
        NaN score.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> df = pl.DataFrame({
    ...     "model": ["a"] * 4 + ["b"] * 4,
    ...     "score": [0.9, 0.8, 0.3, 0.1, 0.9, 0.4, 0.4, 0.2],
    ...     "label": [True, False, True, False, True, True, False, False],
    ... })
    >>> df.group_by("model").agg(pr.auc("score", "label")).sort("model")
    shape: (2, 2)
    ┌───────┬───────┐
    │ model ┆ auc   │
    │ ---   ┆ ---   │
    │ str   ┆ f64   │
    ╞═══════╪═══════╡
    │ a     ┆ 0.75  │
    │ b     ┆ 0.875 │
    └───────┴───────┘

    Weighted (a weight of 2 counts the row twice):

    >>> df.with_columns(w=pl.Series([2.0, 1.0, 1.0, 1.0] * 2)).group_by("model").agg(
    ...     pr.auc("score", "label", weight="w")
    ... ).sort("model")
    shape: (2, 2)
    ┌───────┬──────────┐
    │ model ┆ auc      │
    │ ---   ┆ ---      │
    │ str   ┆ f64      │
    ╞═══════╪══════════╡
    │ a     ┆ 0.833333 │
    │ b     ┆ 0.916667 │
    └───────┴──────────┘
    """
    if weight is not None:
        build = _weighted(lambda auc: auc)
        return binary_expr(score, positive, build, name="auc", weight=weight, raw_weight=True)
    return _unweighted(score, positive, "auc", lambda auc: auc)


@validated
def gini(score: ColumnLike, positive: ColumnLike, *, weight: ColumnLike | None = None) -> pl.Expr:
    """Gini coefficient (Somers' D of score on label): ``2 · AUC − 1``.

    Same arguments (including ``weight``: 2 · the weighted AUC − 1), null and NaN
    rules as :func:`auc`.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> df = pl.DataFrame({"score": [0.9, 0.8, 0.3, 0.1], "label": [1, 0, 1, 0]})
    >>> df.select(pr.gini("score", "label"))
    shape: (1, 1)
    ┌──────┐
    │ gini │
    │ ---  │
    │ f64  │
    ╞══════╡
    │ 0.5  │
    └──────┘
    """
    if weight is not None:
        build = _weighted(lambda auc: 2.0 * auc - 1.0)
        return binary_expr(score, positive, build, name="gini", weight=weight, raw_weight=True)
    return _unweighted(score, positive, "gini", lambda auc: 2.0 * auc - 1.0)


def _hanley_mcneil(s: pl.Expr, p: pl.Expr) -> pl.Expr:
    """Hanley & McNeil's SE from the group's AUC and class counts (read once each)."""
    c = counts.listed()
    sums = pl.struct(theta=f.auc(c), n_pos=c.n_pos, n_neg=c.n_neg)
    found = counts.per_group(sums, s, p, scores=False)
    theta, n_pos, n_neg = (found.struct.field(k) for k in ("theta", "n_pos", "n_neg"))
    return f.hanley_mcneil_se(theta, n_pos, n_neg)


def _clustered(s: pl.Expr, p: pl.Expr, c: pl.Expr) -> pl.Expr:
    """Obuchowski's (1997) SE: the placement values' covariance over clusters."""
    v = rank_placements(s, p)
    return structural_covariance(v, v, p, c).sqrt()


@validated
def auc_se(
    score: ColumnLike,
    positive: ColumnLike,
    *,
    method: Literal["delong", "hanley_mcneil"] = "delong",
    weight: ColumnLike | None = None,
    cluster: ColumnLike | None = None,
) -> pl.Expr:
    """Standard error of the AUC.

    ``"delong"``
        The nonparametric estimate of DeLong, DeLong & Clarke-Pearson (1988) from
        the placement values of each positive and negative (ties count one half).
        Needs at least two positives and two negatives; otherwise null.
    ``"hanley_mcneil"``
        ``SE(W)`` of Hanley & McNeil (1982), Bradley (1997) eq. 10–12, which assumes
        exponential score distributions through Q₁ = θ/(2 − θ) and Q₂ = 2θ²/(1 + θ).

    Parameters
    ----------
    score, positive
        As for :func:`auc`.
    method
        ``"delong"`` (default) or ``"hanley_mcneil"``.
    weight
        Case weights (as for :func:`auc`): accepted so that every binary expression
        takes ``weight=``, but the result is then null. Neither paper defines a
        variance for a case-weighted AUC (importance weights change the effective
        sample size in ways the formulas do not know); use :func:`polaroc.bootstrap`
        on the weighted :func:`polaroc.evaluate` instead, as ``evaluate(weight=...)``
        does for its standard-error columns. The weight column is still checked.
    cluster
        Cluster ids (a column name or an expression; ``"delong"`` only), for several
        samples per patient, image or user: Obuchowski's (1997, "Nonparametric analysis
        of clustered ROC curve data", Biometrics 53:567–578, eq. 3–6) variance, DeLong's
        placement values summed per cluster, with the covariance of a cluster's
        positives and negatives. A cluster is a value of the column within the group
        the expression aggregates; with every sample its own cluster it is DeLong's
        variance. Null with fewer than two clusters holding a positive (a negative);
        a scored row with a null cluster id fails the query (``ValueError``).

    Returns
    -------
    pl.Expr
        ``Float64`` named ``auc_se`` (null with ``weight``).

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> df = pl.DataFrame({
    ...     "score": [0.95, 0.86, 0.84, 0.89, 0.15, 0.13, 0.10],
    ...     "label": [True, True, True, False, False, False, False],
    ... })
    >>> df.select(
    ...     pr.auc_se("score", "label").alias("delong"),
    ...     pr.auc_se("score", "label", method="hanley_mcneil").alias("hanley_mcneil"),
    ... )
    shape: (1, 2)
    ┌──────────┬───────────────┐
    │ delong   ┆ hanley_mcneil │
    │ ---      ┆ ---           │
    │ f64      ┆ f64           │
    ╞══════════╪═══════════════╡
    │ 0.186339 ┆ 0.175111      │
    └──────────┴───────────────┘

    Several samples per patient: Obuchowski's SE over the patients.

    >>> df = df.with_columns(patient=pl.Series([0, 0, 1, 2, 2, 3, 3]))
    >>> df.select(pr.auc_se("score", "label", cluster="patient"))
    shape: (1, 1)
    ┌──────────┐
    │ auc_se   │
    │ ---      │
    │ f64      │
    ╞══════════╡
    │ 0.175682 │
    └──────────┘
    """
    if method not in {"delong", "hanley_mcneil"}:
        msg = f"method must be 'delong' or 'hanley_mcneil', got {method!r}"
        raise ValueError(msg)
    if cluster is not None and method != "delong":
        msg = (
            "cluster= is defined for method='delong' (Obuchowski's clustered variance); "
            "drop cluster= for Hanley & McNeil's SE, or use method='delong'"
        )
        raise ValueError(msg)
    if weight is not None:  # no variance is defined for case-weighted AUCs (see above)
        none = lambda s, p, w: pl.lit(None, pl.Float64)  # noqa: E731
        return binary_expr(score, positive, none, name="auc_se", if_nan=None, weight=weight)
    if cluster is not None:
        return binary_expr(
            score, positive, _clustered, name="auc_se", two_classes=True, cluster=cluster
        )
    if method == "delong":
        variance = f.delong_variance_of(counts.listed()).sqrt()
        build = lambda s, p: counts.per_group(variance, s, p, scores=False)  # noqa: E731
        return binary_expr(score, positive, build, name="auc_se", two_classes=True)
    return binary_expr(score, positive, _hanley_mcneil, name="auc_se", two_classes=True)


# ------------------------------------------------------------------ at a threshold


def confusion_counts(
    s: pl.Expr, p: pl.Expr, threshold: float | pl.Expr, w: pl.Expr | None = None
) -> dict[str, pl.Expr]:
    predicted = s >= threshold
    if w is not None:  # weighted counts: sums of the case weights in each cell
        return {
            "tp": pl.when(predicted & p).then(w).otherwise(0.0).sum(),
            "fp": pl.when(predicted & ~p).then(w).otherwise(0.0).sum(),
            "tn": pl.when(~predicted & ~p).then(w).otherwise(0.0).sum(),
            "fn": pl.when(~predicted & p).then(w).otherwise(0.0).sum(),
        }
    return {
        "tp": (predicted & p).sum().cast(pl.Int64),
        "fp": (predicted & ~p).sum().cast(pl.Int64),
        "tn": (~predicted & ~p).sum().cast(pl.Int64),
        "fn": (~predicted & p).sum().cast(pl.Int64),
    }


@validated
def confusion(
    score: ColumnLike,
    positive: ColumnLike,
    *,
    threshold: float | pl.Expr = 0.5,
    weight: ColumnLike | None = None,
) -> pl.Expr:
    """Confusion counts at a threshold: a struct of ``tp``, ``fp``, ``tn``, ``fn``.

    A sample is predicted positive iff ``score >= threshold``. These are Bradley's
    (1997) Tp, Fp, Tn, Fn from which eq. 1–6 are computed.

    Parameters
    ----------
    score, positive
        As for :func:`auc`.
    threshold
        A number, or a scalar expression (e.g. ``pl.col("score").median()``).
    weight
        Optional case weights (see :func:`auc`): each cell is then the sum of its
        samples' weights, and the four fields are ``Float64`` instead of ``Int64``
        (weights need not be integers), as scikit-learn's
        ``confusion_matrix(..., sample_weight=w)``.

    Returns
    -------
    pl.Expr
        Struct of four ``Int64`` fields (``Float64`` when weighted) named
        ``confusion``; a null struct if the group holds a NaN score (a NaN has no side
        of the threshold).

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> df = pl.DataFrame({"score": [0.9, 0.8, 0.3, 0.1], "label": [1, 0, 1, 0]})
    >>> df.select(pr.confusion("score", "label", threshold=0.5)).unnest("confusion")
    shape: (1, 4)
    ┌─────┬─────┬─────┬─────┐
    │ tp  ┆ fp  ┆ tn  ┆ fn  │
    │ --- ┆ --- ┆ --- ┆ --- │
    │ i64 ┆ i64 ┆ i64 ┆ i64 │
    ╞═════╪═════╪═════╪═════╡
    │ 1   ┆ 1   ┆ 1   ┆ 1   │
    └─────┴─────┴─────┴─────┘
    """
    return binary_expr(
        score,
        positive,
        lambda s, p, w=None: pl.struct(
            [k.alias(name) for name, k in confusion_counts(s, p, threshold, w).items()]
        ),
        name="confusion",
        if_nan=None,
        weight=weight,
    )


def _rate(
    score: ColumnLike,
    positive: ColumnLike,
    threshold: float | pl.Expr,
    numerator: tuple[str, ...],
    denominator: tuple[str, ...],
    name: str,
    weight: ColumnLike | None = None,
) -> pl.Expr:
    def build(s: pl.Expr, p: pl.Expr, w: pl.Expr | None = None) -> pl.Expr:
        k = confusion_counts(s, p, threshold, w)
        num = pl.sum_horizontal(k[f] for f in numerator)
        den = pl.sum_horizontal(k[f] for f in denominator)
        return pl.when(den > 0).then(num / den)

    return binary_expr(score, positive, build, name=name, weight=weight)


@validated
def accuracy(
    score: ColumnLike,
    positive: ColumnLike,
    *,
    threshold: float | pl.Expr = 0.5,
    weight: ColumnLike | None = None,
) -> pl.Expr:
    """Accuracy: ``(Tp + Tn) / n`` at a threshold (Bradley 1997, eq. 1).

    A sample is predicted positive iff ``score >= threshold``.

    Parameters
    ----------
    score, positive
        As for :func:`auc`.
    threshold
        A number, or a scalar expression.
    weight
        Optional case weights (see :func:`auc`): the counts are sums of weights.

    Returns
    -------
    pl.Expr
        ``Float64`` named ``accuracy``; null when the denominator is zero, NaN if the
        group holds a NaN score.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> df = pl.DataFrame({"score": [0.9, 0.8, 0.6, 0.1], "label": [1, 0, 1, 0]})
    >>> df.select(pr.accuracy("score", "label", threshold=0.5))
    shape: (1, 1)
    ┌──────────┐
    │ accuracy │
    │ ---      │
    │ f64      │
    ╞══════════╡
    │ 0.75     │
    └──────────┘
    """
    return _rate(
        score, positive, threshold, ("tp", "tn"), ("tp", "fp", "tn", "fn"), "accuracy", weight
    )


@validated
def error(
    score: ColumnLike,
    positive: ColumnLike,
    *,
    threshold: float | pl.Expr = 0.5,
    weight: ColumnLike | None = None,
) -> pl.Expr:
    """Error rate: ``(Fp + Fn) / n``, one minus the accuracy at a threshold (Bradley 1997, eq. 1).

    A sample is predicted positive iff ``score >= threshold``.

    Parameters
    ----------
    score, positive
        As for :func:`auc`.
    threshold
        A number, or a scalar expression.
    weight
        Optional case weights (see :func:`auc`): the counts are sums of weights.

    Returns
    -------
    pl.Expr
        ``Float64`` named ``error``; null when the denominator is zero, NaN if the
        group holds a NaN score.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> df = pl.DataFrame({"score": [0.9, 0.8, 0.6, 0.1], "label": [1, 0, 1, 0]})
    >>> df.select(pr.error("score", "label", threshold=0.5))
    shape: (1, 1)
    ┌───────┐
    │ error │
    │ ---   │
    │ f64   │
    ╞═══════╡
    │ 0.25  │
    └───────┘
    """
    return _rate(
        score, positive, threshold, ("fp", "fn"), ("tp", "fp", "tn", "fn"), "error", weight
    )


@validated
def sensitivity(
    score: ColumnLike,
    positive: ColumnLike,
    *,
    threshold: float | pl.Expr = 0.5,
    weight: ColumnLike | None = None,
) -> pl.Expr:
    """Sensitivity (true positive rate, recall): ``Tp / Cp`` at a threshold (Bradley 1997, eq. 2).

    A sample is predicted positive iff ``score >= threshold``.

    Parameters
    ----------
    score, positive
        As for :func:`auc`.
    threshold
        A number, or a scalar expression.
    weight
        Optional case weights (see :func:`auc`): the counts are sums of weights.

    Returns
    -------
    pl.Expr
        ``Float64`` named ``sensitivity``; null when the denominator is zero, NaN if the
        group holds a NaN score.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> df = pl.DataFrame({"score": [0.9, 0.8, 0.6, 0.1], "label": [1, 0, 1, 0]})
    >>> df.select(pr.sensitivity("score", "label", threshold=0.5))
    shape: (1, 1)
    ┌─────────────┐
    │ sensitivity │
    │ ---         │
    │ f64         │
    ╞═════════════╡
    │ 1.0         │
    └─────────────┘
    """
    return _rate(score, positive, threshold, ("tp",), ("tp", "fn"), "sensitivity", weight)


@validated
def specificity(
    score: ColumnLike,
    positive: ColumnLike,
    *,
    threshold: float | pl.Expr = 0.5,
    weight: ColumnLike | None = None,
) -> pl.Expr:
    """Specificity (true negative rate): ``Tn / Cn`` at a threshold (Bradley 1997, eq. 3).

    A sample is predicted positive iff ``score >= threshold``.

    Parameters
    ----------
    score, positive
        As for :func:`auc`.
    threshold
        A number, or a scalar expression.
    weight
        Optional case weights (see :func:`auc`): the counts are sums of weights.

    Returns
    -------
    pl.Expr
        ``Float64`` named ``specificity``; null when the denominator is zero, NaN if the
        group holds a NaN score.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> df = pl.DataFrame({"score": [0.9, 0.8, 0.6, 0.1], "label": [1, 0, 1, 0]})
    >>> df.select(pr.specificity("score", "label", threshold=0.5))
    shape: (1, 1)
    ┌─────────────┐
    │ specificity │
    │ ---         │
    │ f64         │
    ╞═════════════╡
    │ 0.5         │
    └─────────────┘
    """
    return _rate(score, positive, threshold, ("tn",), ("tn", "fp"), "specificity", weight)


@validated
def ppv(
    score: ColumnLike,
    positive: ColumnLike,
    *,
    threshold: float | pl.Expr = 0.5,
    weight: ColumnLike | None = None,
) -> pl.Expr:
    """Positive predictive value (precision): ``Tp / Rp`` at a threshold (Bradley 1997, eq. 4).

    A sample is predicted positive iff ``score >= threshold``.

    Parameters
    ----------
    score, positive
        As for :func:`auc`.
    threshold
        A number, or a scalar expression.
    weight
        Optional case weights (see :func:`auc`): the counts are sums of weights.

    Returns
    -------
    pl.Expr
        ``Float64`` named ``ppv``; null when the denominator is zero, NaN if the
        group holds a NaN score.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> df = pl.DataFrame({"score": [0.9, 0.8, 0.6, 0.1], "label": [1, 0, 1, 0]})
    >>> df.select(pr.ppv("score", "label", threshold=0.5))
    shape: (1, 1)
    ┌──────────┐
    │ ppv      │
    │ ---      │
    │ f64      │
    ╞══════════╡
    │ 0.666667 │
    └──────────┘
    """
    return _rate(score, positive, threshold, ("tp",), ("tp", "fp"), "ppv", weight)


@validated
def npv(
    score: ColumnLike,
    positive: ColumnLike,
    *,
    threshold: float | pl.Expr = 0.5,
    weight: ColumnLike | None = None,
) -> pl.Expr:
    """Negative predictive value: ``Tn / Rn`` at a threshold (Bradley 1997, eq. 5).

    A sample is predicted positive iff ``score >= threshold``.

    Parameters
    ----------
    score, positive
        As for :func:`auc`.
    threshold
        A number, or a scalar expression.
    weight
        Optional case weights (see :func:`auc`): the counts are sums of weights.

    Returns
    -------
    pl.Expr
        ``Float64`` named ``npv``; null when the denominator is zero, NaN if the
        group holds a NaN score.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> df = pl.DataFrame({"score": [0.9, 0.8, 0.6, 0.1], "label": [1, 0, 1, 0]})
    >>> df.select(pr.npv("score", "label", threshold=0.5))
    shape: (1, 1)
    ┌─────┐
    │ npv │
    │ --- │
    │ f64 │
    ╞═════╡
    │ 1.0 │
    └─────┘
    """
    return _rate(score, positive, threshold, ("tn",), ("tn", "fn"), "npv", weight)


@validated
def cost(
    score: ColumnLike,
    positive: ColumnLike,
    *,
    threshold: float | pl.Expr = 0.5,
    cost_fp: float = 1.0,
    cost_fn: float = 1.0,
    normalize: bool = False,
    weight: ColumnLike | None = None,
) -> pl.Expr:
    """Misclassification cost at a threshold: ``Fp · C_Fp + Fn · C_Fn`` (Bradley 1997, eq. 6).

    Parameters
    ----------
    score, positive
        As for :func:`auc`.
    threshold
        A number, or a scalar expression; predicted positive iff ``score >= threshold``.
    cost_fp, cost_fn
        Cost of one false positive and of one false negative.
    normalize
        Divide by the number of samples (expected cost per sample) instead of
        returning the total of eq. 6.
    weight
        Optional case weights (see :func:`auc`): ``Fp`` and ``Fn`` are sums of weights
        and ``normalize`` divides by the total weight.

    Returns
    -------
    pl.Expr
        ``Float64`` named ``cost``; NaN if the group holds a NaN score.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> df = pl.DataFrame({"score": [0.9, 0.8, 0.3, 0.1], "label": [1, 0, 1, 0]})
    >>> df.select(pr.cost("score", "label", cost_fp=1.0, cost_fn=5.0))
    shape: (1, 1)
    ┌──────┐
    │ cost │
    │ ---  │
    │ f64  │
    ╞══════╡
    │ 6.0  │
    └──────┘
    """

    def build(s: pl.Expr, p: pl.Expr, w: pl.Expr | None = None) -> pl.Expr:
        k = confusion_counts(s, p, threshold, w)
        total = k["fp"] * float(cost_fp) + k["fn"] * float(cost_fn)
        if not normalize:
            return total
        n = s.len() if w is None else w.sum()
        return pl.when(n > 0).then(total / n)

    return binary_expr(score, positive, build, name="cost", weight=weight)
