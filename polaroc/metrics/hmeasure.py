"""Hand's H-measure and the Kolmogorov–Smirnov statistic: two readings of the ROC curve.

Both are read from a group's counts at thresholds (``polaroc._counts``), the ordering
:func:`polaroc.roc_curve` is read from.

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

The hull is found by peeling: every point that lies on or below the chord between its
neighbours (at distance 1 in the first passes, then also 2, 4, … 64 along the current
chain) is not a hull vertex and is dropped, all at once; after a pass in which nothing
is dropped the chain is concave, i.e. the hull. A curve of 10⁶ distinct scores needs
about 20 passes; after :data:`HULL_PASSES` passes a chain that is still not concave
gives null, never a wrong value.

**KS** = max_t |F₊(t) − F₋(t)|, the two-sample Kolmogorov–Smirnov statistic of the
positives' against the negatives' scores (the largest vertical distance of the ROC
curve from the diagonal, in absolute value).
"""

from __future__ import annotations

import polars as pl

from polaroc import _counts as c
from polaroc._input import ColumnLike, binary_expr

__all__ = ["h_measure", "ks_statistic"]

HULL_PASSES = 24
NEIGHBOUR_PASSES = 12
SPANS = (1, 2, 4, 8, 16, 32, 64)

_E = pl.element()
_X = _E.struct.field("x")
_Y = _E.struct.field("y")


def _roc_points() -> pl.Expr:
    """Inside ``list.eval`` on ascending counts: ROC points by ascending FPR, from (0, 0).

    The y coordinate is ``max(fpr, tpr)``: points below the diagonal count as on it
    (Hand 2009 lets a classifier below chance be inverted).
    """
    n_pos, n_neg = c.N_POS.cast(pl.Float64), c.N_NEG.cast(pl.Float64)
    # strictly above the threshold: the point of the next higher threshold
    x = (1.0 - c.CNEG.cast(pl.Float64) / n_neg).reverse().append(1.0)
    y = (1.0 - c.CPOS.cast(pl.Float64) / n_pos).reverse().append(1.0)
    pi1 = (n_pos / (n_pos + n_neg)).repeat_by(pl.len() + 1).explode()
    return pl.struct(x=x, y=pl.max_horizontal(x, y), pi1=pi1)


def _distinct() -> pl.Expr:
    return _E.filter(_X.ne_missing(_X.shift(1)) | _Y.ne_missing(_Y.shift(1)))


def _below_chord(span: int) -> pl.Expr:
    """Whether a point is on or below the chord between its neighbours ``span`` away."""
    dx0, dy0 = _X - _X.shift(span), _Y - _Y.shift(span)
    dx1, dy1 = _X.shift(-span) - _X, _Y.shift(-span) - _Y
    return (dx0 * dy1 - dy0 * dx1 >= 0.0).fill_null(False)


def _reflex() -> pl.Expr:
    return pl.any_horizontal(*(_below_chord(span) for span in SPANS))


def _hull(points: pl.Expr) -> pl.Expr:
    """The ROC convex hull's vertices (peeled, see the module's docstring).

    The first passes test the neighbours only (cheap, and they drop most points of a
    long curve); the later ones every span, on the few points left.
    """
    for k in range(HULL_PASSES):
        keep = ~_below_chord(1) if k < NEIGHBOUR_PASSES else ~_reflex()
        points = points.list.eval(_E.filter(keep))
    return points


def _beta_parts(b: pl.Expr) -> tuple[object, object, pl.Expr, pl.Expr]:
    """``b0(x)``, ``b1(x)`` (partial Beta integrals for α = 2) and their constants."""
    k0 = 2.0 / (2.0 + b)  # B(3, β) / B(2, β)
    k1 = b / (2.0 + b)  # B(2, 1 + β) / B(2, β)

    def b0(x: pl.Expr) -> pl.Expr:  # ∫₀ˣ c u(c) dc = I_x(3, β) B(3, β)/B(2, β)
        return k0 * (1.0 - (1.0 - x) ** b * (1.0 + b * x + b * (b + 1.0) / 2.0 * x * x))

    def b1(x: pl.Expr) -> pl.Expr:  # ∫₀ˣ (1 − c) u(c) dc = I_x(2, 1 + β) B(2, 1 + β)/B(2, β)
        return k1 * (1.0 - (1.0 - x) ** (1.0 + b) * (1.0 + (1.0 + b) * x))

    return b0, b1, k0, k1


def _h_of_hull(severity_ratio: float | None) -> pl.Expr:
    """Inside ``list.eval`` on one group's hull, with fields ``x``, ``y``, ``pi1``: H."""
    pi1 = _E.struct.field("pi1").first()
    pi0 = 1.0 - pi1
    sr = pi1 / pi0 if severity_ratio is None else pl.lit(float(severity_ratio))
    b = 1.0 + 1.0 / sr
    b0, b1, _, k1 = _beta_parts(b)
    g0, g1 = _X, _Y
    d1, d0 = pi1 * (g1 - g1.shift(1)), pi0 * (g0 - g0.shift(1))
    inner = (d1 / (d1 + d0)).slice(1)
    cost = pl.lit(0.0).append(inner).append(pl.lit(1.0))
    lo, hi = cost.head(pl.len()), cost.tail(pl.len())
    pieces = pi0 * (1.0 - g0) * (b0(hi) - b0(lo)) + pi1 * g1 * (b1(hi) - b1(lo))  # type: ignore[operator]
    loss = pieces.sum()
    worst = pi0 * b0(pi1) + pi1 * (k1 - b1(pi1))  # type: ignore[operator]
    h = 1.0 - loss / worst
    return pl.when((h < 0.0) & (h > -1e-12)).then(0.0).otherwise(h)


def _concave() -> pl.Expr:
    return ~_reflex().any()


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
        points = c.threshold_counts(s, p, w).list.eval(_roc_points()).list.eval(_distinct())
        # one pass over the hull (no common-subexpression elimination in an aggregation)
        pi1 = _E.struct.field("pi1").first()
        both = (pi1 > 0.0) & (pi1 < 1.0)
        h = pl.when(both & _concave()).then(_h_of_hull(severity_ratio))
        return _hull(points).list.eval(h).list.first()

    return binary_expr(score, positive, build, name="h_measure", weight=weight, two_classes=True)


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
    n_pos, n_neg = c.N_POS.cast(pl.Float64), c.N_NEG.cast(pl.Float64)
    gap = (c.CPOS.cast(pl.Float64) / n_pos - c.CNEG.cast(pl.Float64) / n_neg).abs().max()
    reduction = pl.when((c.N_POS > 0) & (c.N_NEG > 0)).then(gap)

    def build(s: pl.Expr, p: pl.Expr, w: pl.Expr | None = None) -> pl.Expr:
        return c.reduce_counts(s, p, reduction, w)

    return binary_expr(score, positive, build, name="ks_statistic", weight=weight, two_classes=True)
