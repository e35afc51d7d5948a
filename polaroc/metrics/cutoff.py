"""Metrics of the decisions at one threshold, read from the confusion counts.

Each is an aggregating expression built on the four counts of :func:`polaroc.confusion`
(predicted positive iff ``score >= threshold``; with ``weight=`` the counts are sums of
case weights, as scikit-learn's ``sample_weight``). The formulas (Tp, Fp, Tn, Fn as in
Bradley 1997; n₊ = Tp + Fn, n₋ = Tn + Fp, n = n₊ + n₋):

* F_β = (1 + β²) Tp / ((1 + β²) Tp + β² Fn + Fp) (van Rijsbergen 1979), F₁ for β = 1;
* MCC = (Tp·Tn − Fp·Fn) / √((Tp+Fp)(Tp+Fn)(Tn+Fp)(Tn+Fn)) (Matthews 1975);
* Cohen's κ = (p_o − p_e) / (1 − p_e) (Cohen 1960), p_o the accuracy and
  p_e = [(Tp+Fp) n₊ + (Tn+Fn) n₋] / n² the agreement expected by chance;
* balanced accuracy = (Tp/n₊ + Tn/n₋) / 2 (Brodersen et al. 2010);
* LR+ = (Tp/n₊) / (Fp/n₋) and LR− = (Fn/n₊) / (Tn/n₋) (likelihood ratios of a
  diagnostic test, e.g. Deeks & Altman 2004).

Each equals its scikit-learn counterpart on the predictions ``score >= threshold``.
Input policies as for :func:`polaroc.auc`: null rows ignored, a NaN score gives NaN, and
a group without positives or without negatives gives null.
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from polaroc.core.args import validated
from polaroc.core.inputs import NAN, ColumnLike, binary_expr
from polaroc.metrics.binary import confusion_counts

__all__ = [
    "balanced_accuracy",
    "cohen_kappa",
    "f1",
    "fbeta",
    "lr_negative",
    "lr_positive",
    "mcc",
]

Counts = dict[str, pl.Expr]
_E = pl.element()


def _at_threshold(
    score: ColumnLike,
    positive: ColumnLike,
    formula: Callable[[Counts], pl.Expr],
    *,
    name: str,
    threshold: float | pl.Expr,
    weight: ColumnLike | None,
) -> pl.Expr:
    """``formula`` of the ``Float64`` counts; null unless both classes are present."""

    def build(s: pl.Expr, p: pl.Expr, w: pl.Expr | None = None) -> pl.Expr:
        # the four counts once, as one struct; the formula reads its fields (an
        # aggregation has no common-subexpression elimination: written on the sums,
        # MCC would sum every cell three or four times)
        k = {f: _E.struct.field(f).cast(pl.Float64) for f in ("tp", "fp", "tn", "fn")}
        both = (k["tp"] + k["fn"] > 0) & (k["tn"] + k["fp"] > 0)
        if w is None:
            counts = _cell_codes(s, p, threshold).implode().list.eval(_code_counts())
            value = pl.when(_E.struct.field("nan")).then(NAN).otherwise(formula(k))
        else:
            cells = confusion_counts(s, p, threshold, w)
            counts = pl.struct([v.alias(f) for f, v in cells.items()]).implode()
            value = formula(k)
        result: pl.Expr = counts.list.eval(pl.when(both).then(value)).list.first()
        return result

    return binary_expr(score, positive, build, name=name, weight=weight, two_classes=True, raw=True)


def _cell_codes(s: pl.Expr, p: pl.Expr, threshold: float | pl.Expr) -> pl.Expr:
    """Per raw row: its cell as 2·predicted + positive, plus 4 for a NaN score.

    Null for a row with a null score or label (it counts nowhere). One small integer
    column gathered into each group's list costs less than four sums over the groups.
    A NaN score is predicted positive (Polars orders NaN above every number).
    """
    u8 = pl.UInt8
    return (s >= threshold).cast(u8) * 2 + p.cast(u8) + s.is_nan().cast(u8) * 4


def _code_counts() -> pl.Expr:
    """Inside ``list.eval`` on cell codes: ``{tp, fp, tn, fn, nan}``."""

    def cell(code: int) -> pl.Expr:
        return (_E.eq(code) | _E.eq(code + 4)).sum()

    return pl.struct(tp=cell(3), fp=cell(2), tn=cell(0), fn=cell(1), nan=(_E >= 4).any())


def fbeta_of(beta: float) -> Callable[[Counts], pl.Expr]:
    b2 = float(beta) ** 2

    def formula(k: Counts) -> pl.Expr:
        top = (1.0 + b2) * k["tp"]
        return top / (top + b2 * k["fn"] + k["fp"])

    return formula


@validated
def fbeta(
    score: ColumnLike,
    positive: ColumnLike,
    *,
    beta: float,
    threshold: float | pl.Expr = 0.5,
    weight: ColumnLike | None = None,
) -> pl.Expr:
    """F_β score at a threshold: ``(1 + β²) Tp / ((1 + β²) Tp + β² Fn + Fp)``.

    The weighted harmonic mean of precision and recall, recall counting β times as much
    (van Rijsbergen 1979, ch. 7). Equals scikit-learn's
    ``fbeta_score(y_true, score >= threshold, beta=beta, sample_weight=w)``, including
    its value 0 when nothing is predicted positive (``zero_division`` 0).

    Parameters
    ----------
    score
        Column name or expression; predicted positive iff ``score >= threshold``.
    positive
        Boolean (or 0/1) positive indicator. Note the order: score first.
    beta
        Weight of recall, ``> 0``.
    threshold
        A number, or a scalar expression.
    weight
        Optional case weights (finite, ``>= 0``): the counts are sums of weights.

    Returns
    -------
    pl.Expr
        ``Float64`` named ``fbeta``: null for a group without positives or negatives,
        NaN for a group holding a NaN score.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> df = pl.DataFrame({"score": [0.9, 0.8, 0.6, 0.3, 0.1], "label": [1, 0, 1, 1, 0]})
    >>> df.select(pr.fbeta("score", "label", beta=2.0))
    shape: (1, 1)
    ┌──────────┐
    │ fbeta    │
    │ ---      │
    │ f64      │
    ╞══════════╡
    │ 0.666667 │
    └──────────┘
    """
    if not beta > 0:
        msg = f"beta must be positive, got {beta!r}"
        raise ValueError(msg)
    return _at_threshold(
        score, positive, fbeta_of(beta), name="fbeta", threshold=threshold, weight=weight
    )


@validated
def f1(
    score: ColumnLike,
    positive: ColumnLike,
    *,
    threshold: float | pl.Expr = 0.5,
    weight: ColumnLike | None = None,
) -> pl.Expr:
    """F₁ score at a threshold: ``2 Tp / (2 Tp + Fn + Fp)``, :func:`fbeta` with β = 1.

    The harmonic mean of precision and recall (van Rijsbergen 1979). Equals
    scikit-learn's ``f1_score(y_true, score >= threshold, sample_weight=w)``.

    Parameters
    ----------
    score, positive, threshold, weight
        As for :func:`fbeta`.

    Returns
    -------
    pl.Expr
        ``Float64`` named ``f1``; null for a one-class group, NaN with a NaN score.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> df = pl.DataFrame({"score": [0.9, 0.8, 0.6, 0.3, 0.1], "label": [1, 0, 1, 1, 0]})
    >>> df.select(pr.f1("score", "label"))
    shape: (1, 1)
    ┌──────────┐
    │ f1       │
    │ ---      │
    │ f64      │
    ╞══════════╡
    │ 0.666667 │
    └──────────┘
    """
    return _at_threshold(
        score, positive, fbeta_of(1.0), name="f1", threshold=threshold, weight=weight
    )


def mcc_of(k: Counts) -> pl.Expr:
    tp, fp, tn, fn = k["tp"], k["fp"], k["tn"], k["fn"]
    den = ((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)).sqrt()
    return pl.when(den > 0).then((tp * tn - fp * fn) / den).otherwise(0.0)


@validated
def mcc(
    score: ColumnLike,
    positive: ColumnLike,
    *,
    threshold: float | pl.Expr = 0.5,
    weight: ColumnLike | None = None,
) -> pl.Expr:
    """Matthews correlation coefficient at a threshold (Matthews 1975).

    ``MCC = (Tp·Tn − Fp·Fn) / √((Tp+Fp)(Tp+Fn)(Tn+Fp)(Tn+Fn))``, the Pearson
    correlation of the 0/1 prediction with the 0/1 label: 1 perfect, 0 chance, −1
    inverted. When every sample is predicted in one class the denominator is 0 and the
    value is 0, as scikit-learn's ``matthews_corrcoef(y_true, score >= threshold,
    sample_weight=w)``, which it equals.

    Parameters
    ----------
    score, positive, threshold, weight
        As for :func:`fbeta`.

    Returns
    -------
    pl.Expr
        ``Float64`` named ``mcc``; null for a one-class group, NaN with a NaN score.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> df = pl.DataFrame({"score": [0.9, 0.8, 0.6, 0.3, 0.1], "label": [1, 0, 1, 1, 0]})
    >>> df.select(pr.mcc("score", "label"))
    shape: (1, 1)
    ┌──────────┐
    │ mcc      │
    │ ---      │
    │ f64      │
    ╞══════════╡
    │ 0.166667 │
    └──────────┘
    """
    return _at_threshold(score, positive, mcc_of, name="mcc", threshold=threshold, weight=weight)


def kappa_of(k: Counts) -> pl.Expr:
    tp, fp, tn, fn = k["tp"], k["fp"], k["tn"], k["fn"]
    n = tp + fp + tn + fn
    observed = (tp + tn) / n
    expected = ((tp + fp) * (tp + fn) + (tn + fn) * (tn + fp)) / (n * n)
    return (observed - expected) / (1.0 - expected)


@validated
def cohen_kappa(
    score: ColumnLike,
    positive: ColumnLike,
    *,
    threshold: float | pl.Expr = 0.5,
    weight: ColumnLike | None = None,
) -> pl.Expr:
    """Cohen's κ of the prediction and the label at a threshold (Cohen 1960, eq. 1).

    ``κ = (p_o − p_e) / (1 − p_e)``: the accuracy ``p_o`` corrected for the agreement
    ``p_e = [(Tp+Fp)(Tp+Fn) + (Tn+Fn)(Tn+Fp)] / n²`` expected if prediction and label
    were independent with the same margins. Equals scikit-learn's
    ``cohen_kappa_score(y_true, score >= threshold, sample_weight=w)``.

    Parameters
    ----------
    score, positive, threshold, weight
        As for :func:`fbeta`.

    Returns
    -------
    pl.Expr
        ``Float64`` named ``cohen_kappa``; null for a one-class group, NaN with a NaN
        score.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> df = pl.DataFrame({"score": [0.9, 0.8, 0.6, 0.3, 0.1], "label": [1, 0, 1, 1, 0]})
    >>> df.select(pr.cohen_kappa("score", "label"))
    shape: (1, 1)
    ┌─────────────┐
    │ cohen_kappa │
    │ ---         │
    │ f64         │
    ╞═════════════╡
    │ 0.166667    │
    └─────────────┘
    """
    return _at_threshold(
        score, positive, kappa_of, name="cohen_kappa", threshold=threshold, weight=weight
    )


def balanced_of(k: Counts) -> pl.Expr:
    return (k["tp"] / (k["tp"] + k["fn"]) + k["tn"] / (k["tn"] + k["fp"])) / 2.0


@validated
def balanced_accuracy(
    score: ColumnLike,
    positive: ColumnLike,
    *,
    threshold: float | pl.Expr = 0.5,
    weight: ColumnLike | None = None,
) -> pl.Expr:
    """Balanced accuracy at a threshold: the mean of sensitivity and specificity.

    ``(Tp/n₊ + Tn/n₋) / 2`` (Brodersen et al. 2010), the accuracy on a sample in which
    both classes weigh the same; ``(1 + Youden's J) / 2``. Equals scikit-learn's
    ``balanced_accuracy_score(y_true, score >= threshold, sample_weight=w)``.

    Parameters
    ----------
    score, positive, threshold, weight
        As for :func:`fbeta`.

    Returns
    -------
    pl.Expr
        ``Float64`` named ``balanced_accuracy``; null for a one-class group, NaN with a
        NaN score.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> df = pl.DataFrame({"score": [0.9, 0.8, 0.6, 0.3, 0.1], "label": [1, 0, 1, 1, 0]})
    >>> df.select(pr.balanced_accuracy("score", "label"))
    shape: (1, 1)
    ┌───────────────────┐
    │ balanced_accuracy │
    │ ---               │
    │ f64               │
    ╞═══════════════════╡
    │ 0.583333          │
    └───────────────────┘
    """
    return _at_threshold(
        score, positive, balanced_of, name="balanced_accuracy", threshold=threshold, weight=weight
    )


def _lr_positive(k: Counts) -> pl.Expr:
    n_pos, n_neg = k["tp"] + k["fn"], k["tn"] + k["fp"]
    return pl.when(k["fp"] > 0).then(k["tp"] * n_neg / (k["fp"] * n_pos))


def _lr_negative(k: Counts) -> pl.Expr:
    n_pos, n_neg = k["tp"] + k["fn"], k["tn"] + k["fp"]
    return pl.when(k["tn"] > 0).then(k["fn"] * n_neg / (k["tn"] * n_pos))


@validated
def lr_positive(
    score: ColumnLike,
    positive: ColumnLike,
    *,
    threshold: float | pl.Expr = 0.5,
    weight: ColumnLike | None = None,
) -> pl.Expr:
    """Positive likelihood ratio at a threshold: ``sensitivity / (1 − specificity)``.

    ``LR+ = (Tp/n₊) / (Fp/n₋)``: how much a positive prediction multiplies the odds of
    being positive (Deeks & Altman 2004). Equals the first value of scikit-learn's
    ``class_likelihood_ratios(y_true, score >= threshold, sample_weight=w)``.

    Degenerate cases: with no false positive (``Fp = 0``) the ratio is undefined and
    the value is null (scikit-learn: NaN with a warning), also when ``Tp = 0``; a group
    without positives or negatives is null.

    Parameters
    ----------
    score, positive, threshold, weight
        As for :func:`fbeta`.

    Returns
    -------
    pl.Expr
        ``Float64`` named ``lr_positive``; NaN with a NaN score.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> df = pl.DataFrame({"score": [0.9, 0.8, 0.6, 0.3, 0.1], "label": [1, 0, 1, 1, 0]})
    >>> df.select(pr.lr_positive("score", "label"))
    shape: (1, 1)
    ┌─────────────┐
    │ lr_positive │
    │ ---         │
    │ f64         │
    ╞═════════════╡
    │ 1.333333    │
    └─────────────┘
    """
    return _at_threshold(
        score, positive, _lr_positive, name="lr_positive", threshold=threshold, weight=weight
    )


@validated
def lr_negative(
    score: ColumnLike,
    positive: ColumnLike,
    *,
    threshold: float | pl.Expr = 0.5,
    weight: ColumnLike | None = None,
) -> pl.Expr:
    """Negative likelihood ratio at a threshold: ``(1 − sensitivity) / specificity``.

    ``LR− = (Fn/n₊) / (Tn/n₋)``: how much a negative prediction multiplies the odds of
    being positive (Deeks & Altman 2004). Equals the second value of scikit-learn's
    ``class_likelihood_ratios(y_true, score >= threshold, sample_weight=w)``.

    Degenerate cases: with no true negative (``Tn = 0``) the ratio is undefined and the
    value is null (scikit-learn: NaN with a warning); a group without positives or
    negatives is null.

    Parameters
    ----------
    score, positive, threshold, weight
        As for :func:`fbeta`.

    Returns
    -------
    pl.Expr
        ``Float64`` named ``lr_negative``; NaN with a NaN score.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> df = pl.DataFrame({"score": [0.9, 0.8, 0.6, 0.3, 0.1], "label": [1, 0, 1, 1, 0]})
    >>> df.select(pr.lr_negative("score", "label"))
    shape: (1, 1)
    ┌─────────────┐
    │ lr_negative │
    │ ---         │
    │ f64         │
    ╞═════════════╡
    │ 0.666667    │
    └─────────────┘
    """
    return _at_threshold(
        score, positive, _lr_negative, name="lr_negative", threshold=threshold, weight=weight
    )
