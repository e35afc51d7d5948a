"""Wu & Flach's (2005) scored AUC.

The AUC counts how often a positive is scored above a negative; the scored AUC also
weighs each such pair by *how far* above: sAUC = (1 / n⁺n⁻) Σ (x − y)·[x > y] over
all (positive x, negative y) pairs. Wu & Flach (2005, Definition 1) split it as
sAUC = Rs⁺ − Rs⁻ with Rs⁺ = Σ x·[x > y] / (n⁺n⁻) and Rs⁻ = Σ y·[x > y] / (n⁺n⁻),
and show (their Table 2 and §3) that for scores in [0, 1],
M⁺ − M⁻ ≤ sAUC ≤ AUC, M± being the mean score of each class.

Both are read from the group's counts (``polaroc.core.counts``) by the core's formula
(:func:`polaroc.core.formulas.sauc_parts`): for each negative score y, the positives'
scores strictly above it minus y times their number. Tied pairs contribute nothing, as
[x > y] says.
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from polaroc.core import counts
from polaroc.core import formulas as f
from polaroc.core.args import validated
from polaroc.core.counts import Counts
from polaroc.core.inputs import NAN, ColumnLike, binary_expr

__all__ = ["sauc", "sauc_parts"]


def _of_counts(
    s: pl.Expr, p: pl.Expr, w: pl.Expr | None, value: Callable[[Counts], pl.Expr]
) -> pl.Expr:
    """``value`` of the group's counts, or null for a group without positives or negatives.

    Weighted, the weights arrive divided by their largest (``binary_expr``'s pair metrics).
    """
    k = counts.listed()
    both = (k.n_pos > 0) & (k.n_neg > 0)
    return counts.per_group(pl.when(both).then(value(k)), s, p, w)


@validated
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
    return binary_expr(
        score,
        positive,
        lambda s, p, w=None: _of_counts(s, p, w, lambda k: f.sauc_parts(k)["sauc"]),
        name="sauc",
        weight=weight,
        two_classes=True,
    )


@validated
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
    nan = pl.struct(
        [pl.lit(NAN).alias(f) for f in ("r_pos", "r_neg", "sauc", "mean_pos", "mean_neg")]
    )
    return binary_expr(
        score,
        positive,
        lambda s, p, w=None: _of_counts(
            s, p, w, lambda k: pl.struct([v.alias(n) for n, v in f.sauc_parts(k).items()])
        ),
        name="sauc_parts",
        if_nan=nan,
        weight=weight,
        two_classes=True,
    )
