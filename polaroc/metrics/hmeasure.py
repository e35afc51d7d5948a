"""Hand's H-measure and the Kolmogorov–Smirnov statistic: two readings of the ROC curve.

Both are read from a group's counts (:func:`polaroc.core.counts.in_list`: one entry per
distinct score with the running counts of positives and negatives): the points of
:func:`polaroc.roc_curve`, in counts. Their formulas — the hull, its Beta integrals and
KS — are the core's (:mod:`polaroc.core.formulas`); this module holds the public
expressions.

**H-measure** (Hand 2009; Hand & Anagnostopoulos 2014). Hand shows that the AUC is the
expected minimum misclassification loss when the cost ratio c = c₀/(c₀ + c₁) is drawn
from a distribution that depends on the classifier itself (his eq. 6–8), so the AUC
compares classifiers with different yardsticks. H fixes the distribution: c ~ Beta(α, β)
with α = 2, β = 1 + 1/SR (SR the severity ratio of the two errors; Hand &
Anagnostopoulos 2014, §3), and

    H = 1 − L / L_max,

with L = ∫ min_t [c π₀ (1 − F₀(t)) + (1 − c) π₁ F₁(t)] u(c) dc the expected minimum
loss and L_max the loss of the better trivial classifier. The minimum over thresholds
is attained on the ROC convex hull: between two consecutive hull vertices the optimal
cost ratios form an interval whose ends are the slopes of the hull, so L is a sum over
hull vertices of incomplete Beta integrals. Those have closed forms here (α = 2 is an
integer: I_x(3, β) = 1 − (1 − x)^β (1 + βx + β(β + 1)x²/2) and
I_x(2, 1 + β) = 1 − (1 − x)^(1+β) (1 + (1 + β)x)), so H is pure Polars.

The hull is found on the ROC points in counts (false positives, true positives; exact
integers without weights, so collinear points are recognised exactly), from (0, 0) by
descending threshold. Points below the diagonal need no special case: the chord from
(0, 0) to (n₋, n₊) is part of the hull's region, so they are never vertices (Hand 2009
lets a classifier below chance count as on the diagonal; the hull is the same).

1. A vertex other than the two ends is reached by a step holding a positive and left
   by a step holding a negative (after a flat step the hull is flat from there on; a
   point with a point straight above it lies below the hull), so one pass keeps only
   the ends of positive runs followed by negatives (about a quarter of the points of a
   continuous score).
2. Peeling: every point that lies on or below the chord between its neighbours is not a
   hull vertex and is dropped, all at once (dropping neighbouring such points together
   is safe: a chain that turns up at both lies below the chord of its ends). A chain
   with no such point left is concave, i.e. the hull. ``NEIGHBOUR_PASSES`` (16)
   neighbour passes, then ``SPAN_PASSES`` (2) passes that also test the chords to the
   points 2, 4, … 64 away (for long cascades), and a final check: a chain that is still
   not concave gives null, never a wrong value. A continuous curve of 12,500 points per
   class is concave after about 10 passes.

**KS** = max_t |F₊(t) − F₋(t)|, the two-sample Kolmogorov–Smirnov statistic of the
positives' against the negatives' scores (the largest vertical distance of the ROC
curve from the diagonal, in absolute value): the largest |F₊ − F₋| over the distinct
scores.
"""

from __future__ import annotations

import polars as pl

from polaroc.core import counts
from polaroc.core import formulas as f
from polaroc.core.args import validated
from polaroc.core.formulas import HULL_PASSES
from polaroc.core.inputs import NAN, ColumnLike, binary_expr

__all__ = ["HULL_PASSES", "h_measure", "ks_statistic"]


@validated
def h_measure(
    score: ColumnLike,
    positive: ColumnLike,
    *,
    severity_ratio: float | None = None,
    weight: ColumnLike | None = None,
) -> pl.Expr:
    """Hand's H-measure: 1 − the expected minimum loss under Beta(2, 1 + 1/SR) cost ratios.

    H = 1 − L/L_max (Hand 2009, eq. 10–12; the Beta(2, 1 + 1/SR) weights of Hand &
    Anagnostopoulos 2014): L is the minimum misclassification loss, integrated over
    the cost ratio with a distribution fixed in advance (not, as the AUC's, depending on
    the classifier), read from the ROC convex hull; see the module docstring. 0 is no
    better than assigning everything to one class, 1 is perfect separation. Equals the R
    package hmeasure's ``H`` and the Python package ``hmeasure``'s ``h_score(y_true,
    y_score, severity_ratio=...)`` (note its order: the label first).

    Parameters
    ----------
    score
        Column name or expression; higher means more evidence for the positive class.
    positive
        Boolean (or 0/1) positive indicator.
    severity_ratio
        SR = cost of misclassifying a negative over that of a positive... as in the
        hmeasure packages; ``None`` (default) = π₁/π₀ of each group (the share of
        positives over that of negatives), the packages' default. Must be ``> 0``.
    weight
        Optional case weights (finite, ``>= 0``): the ROC curve and π₁ are then weighted
        (integer weights equal repeated rows).

    Returns
    -------
    pl.Expr
        ``Float64`` named ``h_measure``: null for a group without positives or
        negatives (or whose hull needed more than :data:`HULL_PASSES` passes), NaN for a
        group holding a NaN score.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> df = pl.DataFrame({
    ...     "score": [0.95, 0.86, 0.84, 0.89, 0.15, 0.13, 0.10],
    ...     "label": [1, 1, 1, 0, 0, 0, 0],
    ... })
    >>> df.select(pr.h_measure("score", "label"))
    shape: (1, 1)
    ┌───────────┐
    │ h_measure │
    │ ---       │
    │ f64       │
    ╞═══════════╡
    │ 0.636495  │
    └───────────┘
    """
    if severity_ratio is not None and not severity_ratio > 0:
        msg = f"severity_ratio must be positive (or None for π₁/π₀), got {severity_ratio!r}"
        raise ValueError(msg)

    def build(s: pl.Expr, p: pl.Expr, w: pl.Expr | None = None) -> pl.Expr:
        # unweighted: the raw rows (an unlabelled row counts nowhere)
        found = counts.in_list(s, p, w, scores=False, raw=w is None, descending=True)
        stored = pl.UInt32 if w is None else pl.Float64  # a list holds < 2³² rows
        candidates = found.list.eval(f.hull_candidates(counts.listed(descending=True), stored))
        h = f.h_measure_of_hull(f.hull(candidates), severity_ratio)
        return h if w is not None else _nan_if_nan_score(s, p, h)

    return binary_expr(
        score, positive, build, name="h_measure", weight=weight, two_classes=True, raw=True
    )


def _nan_if_nan_score(s: pl.Expr, p: pl.Expr, value: pl.Expr) -> pl.Expr:
    """``value``, or NaN for a group with both classes and a NaN score (raw rows)."""
    scored = p.filter(s.is_not_null())
    both = scored.any() & (~scored).any()  # each ``any`` stops at its first hit
    return pl.when(both & (s.is_nan() & p.is_not_null()).any()).then(NAN).otherwise(value)


@validated
def ks_statistic(
    score: ColumnLike, positive: ColumnLike, *, weight: ColumnLike | None = None
) -> pl.Expr:
    """Two-sample Kolmogorov–Smirnov statistic of the positives' vs the negatives' scores.

    ``D = max_t |F₊(t) − F₋(t)|`` over every threshold, F₊ and F₋ the empirical
    distribution functions of the two classes' scores: scipy's
    ``ks_2samp(scores[positive], scores[~positive]).statistic``. With scores that rank
    positives higher it is the largest ``tpr − fpr`` of the ROC curve (the maximum of
    Youden's J). With weights the distribution functions are weighted.

    Parameters
    ----------
    score, positive
        As for :func:`polaroc.auc` (score first).
    weight
        Optional case weights (finite, ``>= 0``; integer weights equal repeated rows).

    Returns
    -------
    pl.Expr
        ``Float64`` named ``ks_statistic``: null for a group without positives or
        negatives, NaN for a group holding a NaN score.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> df = pl.DataFrame({"score": [0.9, 0.8, 0.3, 0.1], "label": [1, 0, 1, 0]})
    >>> df.select(pr.ks_statistic("score", "label"))
    shape: (1, 1)
    ┌──────────────┐
    │ ks_statistic │
    │ ---          │
    │ f64          │
    ╞══════════════╡
    │ 0.5          │
    └──────────────┘
    """

    def build(s: pl.Expr, p: pl.Expr, w: pl.Expr | None = None) -> pl.Expr:
        return counts.per_group(f.ks(counts.listed()), s, p, w, scores=False)

    return binary_expr(score, positive, build, name="ks_statistic", weight=weight, two_classes=True)
