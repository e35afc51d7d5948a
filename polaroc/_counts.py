"""Counts at thresholds: the one ordering every rank-based quantity is read from.

For each group the scores are ordered once and tied scores are collapsed into one
row per distinct score (the *threshold*), holding the number of positives and
negatives with exactly that score and the running totals from the bottom up::

    threshold  pos  neg  cpos  cneg
    0.10         0    1     0     1
    0.13         0    1     0     2
    ...

This is the table behind scikit-learn's ``_binary_clf_curve``; here it is a Polars
list of structs per group, so every quantity below is a reduction over it, evaluated
with ``list.agg`` and therefore usable in ``select``, ``group_by().agg()`` and
``over()``:

* the Mann–Whitney count ``U`` (ties scored ½) and with it the AUC;
* DeLong et al.'s (1988) placement values and the variance of the AUC;
* Wu & Flach's (2005) ``Rs+`` and ``Rs−`` (Definition 1), and so the scored AUC;
* the empirical ROC curve (read from the top down).

Collapsing ties first also makes heavily tied logs cheap: the reductions run over
distinct scores, not rows.
"""

from __future__ import annotations

import polars as pl

__all__ = ["CNEG", "CPOS", "NEG", "POS", "THRESHOLD", "reduce_counts", "threshold_counts"]

_E = pl.element()
_F = pl.field

THRESHOLD = _E.struct.field("threshold")
POS = _E.struct.field("pos")
NEG = _E.struct.field("neg")
CPOS = _E.struct.field("cpos")
CNEG = _E.struct.field("cneg")


def threshold_counts(score: pl.Expr, positive: pl.Expr) -> pl.Expr:
    """Return, per group, the ascending list of ``{threshold, pos, neg, cpos, cneg}``.

    ``score`` must be a non-null ``Float64`` and ``positive`` a non-null ``Boolean``
    (see ``_input.binary_expr``). All counts are ``Int64``.
    """
    rows = pl.struct(threshold=score, positive=positive).sort_by(score).implode()
    x = _E.struct.field("threshold")
    last_of_tie = x.ne_missing(x.shift(-1))
    collapse = (
        _E.struct.with_fields(
            cpos=_F("positive").cast(pl.Int64).cum_sum(),
            cnt=pl.int_range(1, pl.len() + 1, dtype=pl.Int64),
        )
        .filter(last_of_tie)
        .struct.with_fields(cneg=_F("cnt") - _F("cpos"))
        .struct.with_fields(
            pos=_F("cpos") - _F("cpos").shift(1, fill_value=0),
            neg=_F("cneg") - _F("cneg").shift(1, fill_value=0),
        )
        .struct.field("threshold", "pos", "neg", "cpos", "cneg")
    )
    return rows.list.eval(pl.struct(collapse))


def reduce_counts(score: pl.Expr, positive: pl.Expr, reduction: pl.Expr) -> pl.Expr:
    """Evaluate ``reduction`` (written with ``POS``, ``NEG``, ...) over a group's counts."""
    return threshold_counts(score, positive).list.agg(reduction)


# Reductions shared by several metrics (all over one group's counts).
N_POS = CPOS.last()
N_NEG = CNEG.last()
NEG_BELOW = CNEG - NEG  # negatives scored strictly below the threshold
POS_ABOVE = N_POS - CPOS  # positives scored strictly above the threshold
# Mann–Whitney U: pairs (positive above negative), ties counting one half.
U = (POS * (NEG_BELOW + 0.5 * NEG)).sum()
AUC = U / (N_POS * N_NEG).cast(pl.Float64)
