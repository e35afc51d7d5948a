"""Hand's H-measure and the Kolmogorov–Smirnov statistic: two readings of the ROC curve.

Both are read from a group's (score, positive[, weight]) rows sorted once by score, with
the running counts of positives and negatives at the end of each tie run: the points of
:func:`polaroc.roc_curve`, in counts.

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
   with no such point left is concave, i.e. the hull. :data:`NEIGHBOUR_PASSES`
   neighbour passes, then :data:`SPAN_PASSES` passes that also test the chords to the
   points 2, 4, … 64 away (for long cascades), and a final check: a chain that is still
   not concave gives null, never a wrong value. A continuous curve of 12,500 points per
   class is concave after about 10 passes.

**KS** = max_t |F₊(t) − F₋(t)|, the two-sample Kolmogorov–Smirnov statistic of the
positives' against the negatives' scores (the largest vertical distance of the ROC
curve from the diagonal, in absolute value), read from the same sorted rows: the
largest |n₋·cpos − n₊·cneg| at the end of a tie run over n₊·n₋ (exact integers
without weights).
"""

from __future__ import annotations

import polars as pl

from polaroc.core.inputs import NAN, ColumnLike, binary_expr

__all__ = ["h_measure", "ks_statistic"]

NEIGHBOUR_PASSES = 16
SPAN_PASSES = 2
HULL_PASSES = NEIGHBOUR_PASSES + SPAN_PASSES
SPANS = (1, 2, 4, 8, 16, 32, 64)

_E = pl.element()
_X = _E.struct.field("x")
_Y = _E.struct.field("y")


def _rows(s: pl.Expr, p: pl.Expr, w: pl.Expr | None, *, descending: bool) -> pl.Expr:
    """One list per group: the ``{t, y[, w]}`` rows sorted by score (one sort)."""
    row = pl.struct(t=s, y=p) if w is None else pl.struct(t=s, y=p, w=w)
    return row.sort_by(s, descending=descending).implode()


def _roc_points(weighted: bool) -> pl.Expr:
    """Inside ``list.eval`` on ``{t, y[, w]}`` rows by descending score: the ROC points.

    ``x`` = negatives, ``y`` = positives (running counts, or running weights) at the
    last row of each tie run. Rows with a null ``t`` (a null score or label) sort last
    and end no run. A new two-field struct is filtered: cheaper than adding the counts
    to the rows' struct (``struct.with_fields``) and filtering that.
    """
    t, y = _E.struct.field("t"), _E.struct.field("y")
    if weighted:
        w = _E.struct.field("w")
        pos, neg = pl.when(y).then(w).otherwise(0.0), pl.when(y).then(0.0).otherwise(w)
    else:  # exact integer counts (UInt32: a list holds fewer than 2³² rows)
        pos, neg = y, ~y
    end = t.ne_missing(t.shift(-1)) & t.is_not_null()
    return pl.struct(x=neg.cum_sum(), y=pos.cum_sum()).filter(end)


def _run_ends() -> pl.Expr:
    """Inside ``list.eval`` on the ROC points: the hull candidates (step 1).

    A point is kept when its tie run holds a positive and the next one a negative, and
    the last point (n₋, n₊) always. The origin (0, 0), the hull's first vertex, is not
    stored: the steps after read it as the fill of a shift (a list's own literal
    element costs more than the chord tests).
    """
    dy0 = _Y - _Y.shift(1, fill_value=0)  # positives of the run (the first from (0, 0))
    dx1 = _X.shift(-1) - _X  # negatives of the next run; null at the last point
    return _E.filter(((dy0 > 0) & (dx1 > 0)) | dx1.is_null())


def _roc_hull_candidates(rows: pl.Expr, weighted: bool) -> pl.Expr:
    """Per group: (0, 0) and the ROC points that may be hull vertices, in counts."""
    in_order = rows.list.eval(_E.sort_by(_E.struct.field("t"), descending=True, nulls_last=True))
    return in_order.list.eval(_roc_points(weighted)).list.eval(_run_ends())


def _below_chord(span: int) -> pl.Expr:
    """Whether a point is on or below the chord between its neighbours ``span`` away.

    Before the first ``span`` points the left neighbour is the origin, itself a hull
    vertex: a point below any chord between points of the curve is not a vertex.
    """
    x, y = _X.cast(pl.Float64), _Y.cast(pl.Float64)  # UInt32 counts: products need more
    dx0, dy0 = x - x.shift(span, fill_value=0.0), y - y.shift(span, fill_value=0.0)
    dx1, dy1 = x.shift(-span) - x, y.shift(-span) - y
    return (dx0 * dy1 - dy0 * dx1 >= 0.0).fill_null(False)


def _reflex() -> pl.Expr:
    return pl.any_horizontal(*(_below_chord(span) for span in SPANS))


def _hull(points: pl.Expr) -> pl.Expr:
    """The ROC convex hull's vertices from the candidates (see the module's docstring)."""
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


def _rates(severity_ratio: float | None) -> pl.Expr:
    """Inside ``list.eval`` on a hull in counts: rates ``g0``, ``g1`` and the constants.

    ``pi1`` = π₁, ``b`` = β = 1 + 1/SR, ``ok``: both classes present and the chain concave
    (else H is null), repeated on every vertex. H is computed in short steps (this,
    :func:`_cost_ranges`, :func:`_h_of_ranges`, :func:`_clamped`), each materialised:
    ``list.eval`` has no common-subexpression elimination, so a step reads the constants
    as fields of every vertex (elementwise, not as repeated aggregations) and no step
    uses a result twice.
    """
    n_neg, n_pos = _X.last(), _Y.last()
    pi1 = n_pos / (n_pos + n_neg)
    sr = pi1 / (1.0 - pi1) if severity_ratio is None else pl.lit(float(severity_ratio))
    ok = (n_neg > 0.0) & (n_pos > 0.0) & _concave()
    return pl.struct(g0=_X / n_neg, g1=_Y / n_pos, pi1=pi1, b=1.0 + 1.0 / sr, ok=ok)


def _cost_ranges() -> pl.Expr:
    """Per hull vertex: the cost ratios ``lo`` to ``hi`` for which it is the optimal point.

    They are the slopes of its two hull edges in cost terms (1 at the last vertex); the
    first stored vertex's edge starts at the origin, whose range is 0 to its ``lo``.
    """
    f = _E.struct.field
    g0, g1, pi1 = f("g0"), f("g1"), f("pi1")
    d1 = pi1 * (g1 - g1.shift(1, fill_value=0.0))
    d0 = (1.0 - pi1) * (g0 - g0.shift(1, fill_value=0.0))
    lo = d1 / (d1 + d0)
    return _E.struct.with_fields(lo=lo, hi=lo.shift(-1, fill_value=1.0))


def _h_of_ranges() -> pl.Expr:
    """H = 1 − L/L_max: each vertex's share of L over its cost range (Hand 2009, eq. 10–12)."""
    f = _E.struct.field
    pi1, lo, hi = f("pi1"), f("lo"), f("hi")
    pi0 = 1.0 - pi1
    b0, b1, _, k1 = _beta_parts(f("b"))
    pieces = pi0 * (1.0 - f("g0")) * (b0(hi) - b0(lo)) + pi1 * f("g1") * (b1(hi) - b1(lo))  # type: ignore[operator]
    origin = pi0 * b0(lo)  # type: ignore[operator]  # the origin's share: cost ratios 0 to lo₁
    worst = pi0 * b0(pi1) + pi1 * (k1 - b1(pi1))  # type: ignore[operator]
    loss = pieces.sum() + origin.first()
    return pl.when(f("ok").first()).then(1.0 - loss / worst.first())


def _clamped() -> pl.Expr:
    """Rounding below 0 by less than 1e-12 is 0 (on the one-element list of H)."""
    return pl.when((_E < 0.0) & (_E > -1e-12)).then(0.0).otherwise(_E)


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
        if w is None:  # the raw rows: an unlabelled row gets a null score (sorted last)
            rows = pl.struct(t=pl.when(p.is_not_null()).then(s), y=p).implode()
        else:
            rows = pl.struct(t=s, y=p, w=w).implode()
        points = _roc_hull_candidates(rows, w is not None)
        ranges = _hull(points).list.eval(_rates(severity_ratio)).list.eval(_cost_ranges())
        h = ranges.list.eval(_h_of_ranges()).list.eval(_clamped()).list.first()
        return h if w is not None else _nan_if_nan_score(s, p, h)

    return binary_expr(
        score, positive, build, name="h_measure", weight=weight, two_classes=True, raw=True
    )


def _nan_if_nan_score(s: pl.Expr, p: pl.Expr, value: pl.Expr) -> pl.Expr:
    """``value``, or NaN for a group with both classes and a NaN score (raw rows)."""
    scored = p.filter(s.is_not_null())
    both = scored.any() & (~scored).any()  # each ``any`` stops at its first hit
    return pl.when(both & (s.is_nan() & p.is_not_null()).any()).then(NAN).otherwise(value)


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
        t, y = _E.struct.field("t"), _E.struct.field("y")
        if w is None:
            n_pos = y.sum().cast(pl.Float64)
            n_neg = pl.len().cast(pl.Float64) - n_pos
            step = pl.when(y).then(n_neg).otherwise(-n_pos)
        else:
            wt = _E.struct.field("w")
            n_pos, n_neg = wt.filter(y).sum(), wt.filter(~y).sum()
            step = pl.when(y).then(n_neg * wt).otherwise(-n_pos * wt)
        # n₊·n₋·(F₊ − F₋) as one running sum (exact integers without weights), read at
        # the end of each tie run
        end = t.ne_missing(t.shift(-1))
        gap = step.cum_sum().filter(end).abs().max() / (n_pos * n_neg)
        ks = pl.when((n_pos > 0.0) & (n_neg > 0.0)).then(gap)
        return _rows(s, p, w, descending=False).list.eval(ks).list.first()

    return binary_expr(score, positive, build, name="ks_statistic", weight=weight, two_classes=True)
