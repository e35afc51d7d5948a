"""Wu & Flach's (2005) scored AUC.

The AUC counts how often a positive is scored above a negative; the scored AUC also
weighs each such pair by *how far* above: sAUC = (1 / n⁺n⁻) Σ (x − y)·[x > y] over
all (positive x, negative y) pairs. Wu & Flach (2005, Definition 1) split it as
sAUC = Rs⁺ − Rs⁻ with Rs⁺ = Σ x·[x > y] / (n⁺n⁻) and Rs⁻ = Σ y·[x > y] / (n⁺n⁻),
and show (their Table 2 and §3) that for scores in [0, 1],
M⁺ − M⁻ ≤ sAUC ≤ AUC, M± being the mean score of each class.

Both are read from the group's counts at thresholds (``polaroc.core.counts``): with the
scores in ascending order, Rs⁺ sums each positive's score times the number of
negatives strictly below it, and Rs⁻ each negative's score times the number of
positives strictly above it. Tied pairs contribute nothing, as [x > y] says.
"""

from __future__ import annotations

import polars as pl

from polaroc.core import counts as c
from polaroc.core.inputs import NAN, ColumnLike, binary_expr

__all__ = ["sauc", "sauc_parts"]


def _weighted(count: pl.Expr, value: pl.Expr) -> pl.Expr:
    # count · value, skipping empty runs so that a score of ±inf with no samples
    # behind it does not turn the sum into 0 · inf = NaN.
    return pl.when(count > 0).then(count * value)


def _pairs() -> pl.Expr:
    return (c.N_POS * c.N_NEG).cast(pl.Float64)


# Scores are summed relative to one of the group's own finite scores, c: sAUC's sums
# Σ x·[x > y] and Σ y·[x > y] each carry c times the number of ordered pairs, which
# cancels in their difference only in exact arithmetic. Centred, a constant added to
# every score (1e12, say) changes nothing: x − c is exact for nearby floats.
_OFFSET = c.THRESHOLD.filter(c.THRESHOLD.is_finite()).first().fill_null(0.0)
_CENTRED = c.THRESHOLD - _OFFSET


def _ordered() -> pl.Expr:
    """The share of pairs with the positive strictly above the negative."""
    return _weighted(c.POS, c.NEG_BELOW).sum() / _pairs()


def _r_pos_centred() -> pl.Expr:
    return _weighted(c.POS * c.NEG_BELOW, _CENTRED).sum() / _pairs()


def _r_neg_centred() -> pl.Expr:
    return _weighted(c.NEG * c.POS_ABOVE, _CENTRED).sum() / _pairs()


def _r_pos() -> pl.Expr:
    return _r_pos_centred() + _OFFSET * _ordered()


def _r_neg() -> pl.Expr:
    return _r_neg_centred() + _OFFSET * _ordered()


def _sauc() -> pl.Expr:
    return _r_pos_centred() - _r_neg_centred()


def _mean(count: pl.Expr, total: pl.Expr) -> pl.Expr:
    return _OFFSET + _weighted(count, _CENTRED).sum() / total


def _both_classes(value: pl.Expr) -> pl.Expr:
    return pl.when((c.N_POS > 0) & (c.N_NEG > 0)).then(value)


def sauc(score: ColumnLike, positive: ColumnLike, *, weight: ColumnLike | None = None) -> pl.Expr:
    """Scored AUC of Wu & Flach (2005): mean over all pairs of ``(x − y)·[x > y]``.

    ``x`` runs over the positives' scores and ``y`` over the negatives'. Unlike the
    AUC it depends on the score values, not only on their order, so it is meant for
    scores on a common scale (e.g. probabilities).

    Parameters
    ----------
    score, positive
        As for :func:`polaroc.auc` (score first, then the positive indicator).
    weight
        Optional case weights (as for :func:`polaroc.auc`). Wu & Flach define no
        weighted sAUC; here each pair counts with weight w₊·w₋, as in the weighted AUC:
        ``Σ w₊w₋ (x − y)·[x > y] / (W₊W₋)``, so integer weights equal repeating rows.

    Returns
    -------
    pl.Expr
        ``Float64`` named ``sauc``: null for a group without positives or negatives,
        NaN for a NaN score; an infinite score gives an infinite or NaN sAUC.

    Examples
    --------
    Wu & Flach's (2005) worked example:

    >>> import polars as pl
    >>> import polaroc as pr
    >>> df = pl.DataFrame({
    ...     "score": [0.95, 0.86, 0.84, 0.89, 0.15, 0.13, 0.10],
    ...     "label": [True, True, True, False, False, False, False],
    ... })
    >>> df.select(pr.auc("score", "label"), pr.sauc("score", "label"))
    shape: (1, 2)
    ┌──────────┬────────┐
    │ auc      ┆ sauc   │
    │ ---      ┆ ---    │
    │ f64      ┆ f64    │
    ╞══════════╪════════╡
    │ 0.833333 ┆ 0.5725 │
    └──────────┴────────┘
    """
    reduction = _both_classes(_sauc())
    return binary_expr(
        score,
        positive,
        lambda s, p, w=None: c.reduce_counts(s, p, reduction, w),
        name="sauc",
        weight=weight,
        two_classes=True,
    )


def sauc_parts(
    score: ColumnLike, positive: ColumnLike, *, weight: ColumnLike | None = None
) -> pl.Expr:
    """The parts of the scored AUC: Rs⁺, Rs⁻, sAUC, M⁺ and M⁻ as one struct.

    Fields ``r_pos``, ``r_neg``, ``sauc``, ``mean_pos``, ``mean_neg``. See
    :func:`sauc`; ``sauc = r_pos − r_neg`` (Wu & Flach 2005, Definition 1) and
    ``mean_pos``/``mean_neg`` are the mean scores of the positives and negatives,
    the bounds of their Table 2.

    Parameters
    ----------
    score, positive
        As for :func:`polaroc.auc`.
    weight
        Optional case weights, as for :func:`sauc`; ``mean_pos``/``mean_neg`` are then
        weighted means.

    Returns
    -------
    pl.Expr
        Struct of five ``Float64`` fields named ``sauc_parts``; a null struct for a
        group without positives or negatives, NaN fields for a NaN score.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> df = pl.DataFrame({
    ...     "score": [0.95, 0.86, 0.84, 0.89, 0.15, 0.13, 0.10],
    ...     "label": [True, True, True, False, False, False, False],
    ... })
    >>> df.select(pr.sauc_parts("score", "label")).unnest("sauc_parts")
    shape: (1, 5)
    ┌──────────┬──────────┬────────┬──────────┬──────────┐
    │ r_pos    ┆ r_neg    ┆ sauc   ┆ mean_pos ┆ mean_neg │
    │ ---      ┆ ---      ┆ ---    ┆ ---      ┆ ---      │
    │ f64      ┆ f64      ┆ f64    ┆ f64      ┆ f64      │
    ╞══════════╪══════════╪════════╪══════════╪══════════╡
    │ 0.741667 ┆ 0.169167 ┆ 0.5725 ┆ 0.883333 ┆ 0.3175   │
    └──────────┴──────────┴────────┴──────────┴──────────┘
    """
    reduction = _both_classes(
        pl.struct(
            r_pos=_r_pos(),
            r_neg=_r_neg(),
            sauc=_sauc(),
            mean_pos=_mean(c.POS, c.N_POS),
            mean_neg=_mean(c.NEG, c.N_NEG),
        )
    )
    nan = pl.struct(
        [pl.lit(NAN).alias(f) for f in ("r_pos", "r_neg", "sauc", "mean_pos", "mean_neg")]
    )
    return binary_expr(
        score,
        positive,
        lambda s, p, w=None: c.reduce_counts(s, p, reduction, w),
        name="sauc_parts",
        if_nan=nan,
        weight=weight,
        two_classes=True,
    )
