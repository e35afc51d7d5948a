"""Each rank-based formula once, written against the count schema.

Every function here takes a :class:`~polaroc.core.counts.Counts` (fields as expressions)
or sums of its entries, never rows: the same formula runs inside a group's list
(:func:`polaroc.core.counts.in_list`, the expressions and the curves) and over a table
(:func:`polaroc.core.counts.table`, ``pr.evaluate`` and the multiclass tables). Weighted
and unweighted counts go through the same formula (unweighted counts are unit weights).

A formula is written on the pairs it counts. For a positive entry, ``neg_below2`` is
twice the negatives it outranks (ties ½): summed over the positives it is 2U, twice the
Mann–Whitney count (Bradley 1997, eq. 7; Hand & Till 2001, eq. 3). For a negative,
``pos_below2`` is twice the positives it outranks, so the label-j rows of a class-i block
give Hand & Till's A(i|j) from the negatives' side: 2U = 2·n_i·n_j − Σ_j pos_below2.
DeLong, DeLong & Clarke-Pearson's (1988) placement values are the same counts divided by
the other class's total: V₁₀ = neg_below2/(2n₋) for a positive, V₀₁ = 1 − pos_below2/(2n₊)
for a negative (Sun & Xu 2014 read them as mid-rank differences).
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from polaroc.core.counts import Counts

__all__ = [
    "PAIR_SUMS",
    "auc",
    "auc_of",
    "average_precision_of",
    "concave",
    "curve_points",
    "delong_variance",
    "h_measure_of_hull",
    "hanley_mcneil_se",
    "hull",
    "hull_candidates",
    "ks",
    "pair_summands",
    "pair_terms",
    "placements",
    "precision",
    "sauc_of",
    "sauc_parts",
]

NAN = float("nan")
_E = pl.element()
_F = _E.struct.field


def _both(n_pos: pl.Expr, n_neg: pl.Expr) -> pl.Expr:
    """Both classes present (NaN > 0: a class holding a NaN weight counts as present)."""
    return (n_pos > 0) & (n_neg > 0)


# ------------------------------------------------------------- per-entry terms

# the sums :func:`pair_terms` gives, over a group's (or a block label's) entries
PAIR_SUMS = ("q", "qq", "t", "tt", "gap", "ap")


def _when_some(count: pl.Expr, value: pl.Expr) -> pl.Expr:
    """``count · value``, null (skipped by sums) where ``count`` is 0.

    A score of ±inf with nothing behind it must add nothing, not 0 · inf = NaN.
    """
    return pl.when(count > 0).then(count * value)


def _beaten_by(c: Counts) -> pl.Expr:
    """Per negative score y: Σ over the positives x > y of (x − y), for one negative.

    The positives' scores strictly above, minus y times their number (scores centred: the
    offset cancels; Wu & Flach 2005, Def. 1).
    """
    beneath = pl.when(c.pos_above > 0).then(c.centred * c.pos_above).otherwise(0.0)
    return c.pos_scores_above - beneath


def gap(c: Counts) -> pl.Expr:
    """An entry's share of Σ (x − y)·[x > y] over the pairs: its negatives' excess.

    Null (skipped by sums) for an entry without negatives: a score of ±inf with nothing
    behind it must add nothing, not 0 · inf = NaN.
    """
    return _when_some(c.neg, _beaten_by(c))


def precision(c: Counts) -> pl.Expr:
    """The precision with the entry's score as the threshold: tp / (tp + fp).

    Every threshold is the score of at least one sample, so tp + fp > 0.
    """
    return c.tp / c.at_or_above


def pair_summands(c: Counts) -> dict[str, tuple[str, pl.Expr]]:
    """The sums every pair quantity is read from, as (class, value) per entry.

    Each sum is Σ over the entries of the class's weight (``pos`` or ``neg``) times the
    value. ``q``/``qq``: Σ and Σ² over the positives of ``neg_below2`` (twice the
    negatives each outranks: 2U, and DeLong's V₁₀ times 2n₋); ``t``/``tt``: the same over
    the negatives of ``pos_below2``; ``gap``: the sAUC's numerator (Σ over the negatives of
    the positives' score excess above them); ``ap``: Σ over the positives of the
    precision at their score (average precision times n₊; Davis & Goadrich 2006, §4:
    scikit-learn's step sum Σ Δrecall · precision).
    """
    q, t = c.neg_below2, c.pos_below2
    return {
        "q": ("pos", q),
        "qq": ("pos", q.cast(pl.Float64) ** 2),
        "t": ("neg", t),
        "tt": ("neg", t.cast(pl.Float64) ** 2),
        "gap": ("neg", _beaten_by(c)),
        "ap": ("pos", precision(c)),
    }


def pair_terms(c: Counts) -> dict[str, pl.Expr]:
    """:func:`pair_summands` as each entry's share (the class's weight times the value).

    A share is null (skipped by sums) for an entry without that class: a value of ±inf
    or 0/0 there adds nothing.
    """
    return {name: _when_some(getattr(c, cls), v) for name, (cls, v) in pair_summands(c).items()}


# ----------------------------------------------------------- from the sums


def auc_of(won2: pl.Expr, n_pos: pl.Expr, n_neg: pl.Expr) -> pl.Expr:
    """The AUC, U/(n₊n₋), from 2U (``won2``): P(pos > neg) + ½ P(tie) over the pairs."""
    return won2 / (2.0 * n_pos.cast(pl.Float64) * n_neg.cast(pl.Float64))


def auc(c: Counts) -> pl.Expr:
    """The AUC of a group's entries: the mean of the positives' placements V₁₀.

    Written as a ratio (each positive's share of the negatives it outranks, weighted by
    the positive), so that no two weights are multiplied; null without both classes.
    """
    v10, _ = placements(c)
    return pl.when(_both(c.n_pos, c.n_neg)).then((c.pos * v10).sum() / c.n_pos)


def sauc_of(gap_sum: pl.Expr, n_pos: pl.Expr, n_neg: pl.Expr) -> pl.Expr:
    """Wu & Flach's (2005) scored AUC: Σ (x − y)·[x > y] over the pairs, over their number."""
    return gap_sum / (n_pos.cast(pl.Float64) * n_neg.cast(pl.Float64))


def sauc_parts(c: Counts) -> dict[str, pl.Expr]:
    """Rs⁺, Rs⁻, sAUC = Rs⁺ − Rs⁻ (Wu & Flach 2005, Def. 1) and the classes' mean scores.

    Rs⁺ = Σ x·[x > y] / (n₊n₋) and Rs⁻ = Σ y·[x > y] / (n₊n₋), summed centred on the
    group's offset c: Rs± = centred sum + c · (share of ordered pairs).
    """
    pairs = c.n_pos.cast(pl.Float64) * c.n_neg.cast(pl.Float64)
    ordered = (c.neg * c.pos_above).sum() / pairs
    r_pos = _when_some(c.neg, c.pos_scores_above).sum() / pairs
    r_neg = _when_some(c.neg * c.pos_above, c.centred).sum() / pairs
    return {
        "r_pos": r_pos + c.offset * ordered,
        "r_neg": r_neg + c.offset * ordered,
        "sauc": sauc_of(gap(c).sum(), c.n_pos, c.n_neg),
        "mean_pos": c.offset + _when_some(c.pos, c.centred).sum() / c.n_pos,
        "mean_neg": c.offset + _when_some(c.neg, c.centred).sum() / c.n_neg,
    }


def average_precision_of(precision_sum: pl.Expr, n_pos: pl.Expr, n_neg: pl.Expr) -> pl.Expr:
    """Average precision, Σ over the positives of their precision / n₊ (null without a class)."""
    return pl.when(_both(n_pos, n_neg)).then(precision_sum / n_pos.cast(pl.Float64))


def placements(c: Counts) -> tuple[pl.Expr, pl.Expr]:
    """DeLong et al.'s (1988) placement values at an entry: ``(V₁₀, V₀₁)``.

    V₁₀ = (negatives below + ½ tied)/n₋ for a positive, V₀₁ = (positives above + ½
    tied)/n₊ = 1 − (positives below + ½ tied)/n₊ for a negative. The AUC is the mean of
    V₁₀ over the positives (and of V₀₁ over the negatives).
    """
    v10 = c.neg_below2 / (2.0 * c.n_neg.cast(pl.Float64))
    v01 = 1.0 - c.pos_below2 / (2.0 * c.n_pos.cast(pl.Float64))
    return v10, v01


def delong_variance(
    n_pos: pl.Expr, n_neg: pl.Expr, q: pl.Expr, qq: pl.Expr, t: pl.Expr, tt: pl.Expr
) -> pl.Expr:
    """DeLong et al.'s (1988) variance of the AUC, S₁₀/n₊ + S₀₁/n₋, from the pair sums.

    V₁₀ = q/(2n₋) for each positive and V₀₁ = 1 − t/(2n₊) for each negative (their
    sums and sums of squares from ``q``, ``qq``, ``t``, ``tt`` of :func:`pair_terms`);
    S₁₀ and S₀₁ are their sample variances. This is the per-sample formula of
    :func:`polaroc.core.structural.structural_covariance` (every sample its own
    cluster, two labels) read from the block's sums of squares instead of its samples,
    for the tables that hold no sample rows. Null with fewer than two positives or
    negatives.
    """
    n_pos, n_neg = n_pos.cast(pl.Float64), n_neg.cast(pl.Float64)
    v10_sum, v10_sq = q / (2 * n_neg), qq / (2 * n_neg) ** 2
    v01_sum = n_neg - t / (2 * n_pos)
    v01_sq = n_neg - t / n_pos + tt / (2 * n_pos) ** 2
    s10 = (v10_sq - v10_sum**2 / n_pos) / (n_pos - 1)
    s01 = (v01_sq - v01_sum**2 / n_neg) / (n_neg - 1)
    return pl.when((n_pos > 1) & (n_neg > 1)).then(s10 / n_pos + s01 / n_neg)


def delong_variance_of(c: Counts) -> pl.Expr:
    """:func:`delong_variance` of a group's entries."""
    sums = {k: v.sum() for k, v in pair_terms(c).items() if k in ("q", "qq", "t", "tt")}
    return delong_variance(c.n_pos, c.n_neg, **sums)


def hanley_mcneil_se(theta: pl.Expr, n_pos: pl.Expr, n_neg: pl.Expr) -> pl.Expr:
    """``SE(W)`` of Hanley & McNeil (1982), Bradley (1997) eq. 10–12, from θ and the counts.

    Assumes exponential score distributions through Q₁ = θ/(2 − θ), Q₂ = 2θ²/(1 + θ).
    """
    n_pos, n_neg = n_pos.cast(pl.Float64), n_neg.cast(pl.Float64)
    q1 = theta / (2.0 - theta)
    q2 = 2.0 * theta**2 / (1.0 + theta)
    var = theta * (1.0 - theta) + (n_pos - 1.0) * (q1 - theta**2) + (n_neg - 1.0) * (q2 - theta**2)
    return (var / (n_pos * n_neg)).sqrt()


def ks(c: Counts) -> pl.Expr:
    """The two-sample Kolmogorov–Smirnov statistic, max over the scores of |F₊ − F₋|.

    F(t) is the class's share at or below t: |F₊ − F₋| = |C₊·n₋ − C₋·n₊| / (n₊n₋), with
    ``C`` the counts at or below (exact integers without weights).
    """
    n_pos, n_neg = c.n_pos, c.n_neg
    gaps = (c.pos_upto * n_neg - c.neg_upto * n_pos).abs()
    return pl.when(_both(n_pos, n_neg)).then(gaps.max() / (n_pos * n_neg))


# ------------------------------------------------------------------ curves


def curve_points(c: Counts) -> dict[str, pl.Expr]:
    """A group's ROC points in counts, one per entry: the threshold, ``tp`` and ``fp``."""
    return {"threshold": c.score, "tp": c.tp, "fp": c.fp}


def confusion(tp: pl.Expr, fp: pl.Expr, n_pos: pl.Expr, n_neg: pl.Expr) -> dict[str, pl.Expr]:
    """A point's confusion counts: ``tp``, ``fp``, ``tn``, ``fn`` and the class totals."""
    return {"tp": tp, "fp": fp, "tn": n_neg - fp, "fn": n_pos - tp, "n_pos": n_pos, "n_neg": n_neg}


# ------------------------------------------------------- the H-measure's hull
#
# Hand (2009): H = 1 − L/L_max with L the minimum misclassification loss integrated over
# the cost ratio c ~ Beta(2, 1 + 1/SR) (Hand & Anagnostopoulos 2014), read from the ROC
# convex hull. The hull is found on the ROC points in counts (x = negatives, y = positives
# at or above the threshold, from (0, 0) by descending threshold; exact integers without
# weights, so collinear points are recognised exactly).

NEIGHBOUR_PASSES = 16
SPAN_PASSES = 2
HULL_PASSES = NEIGHBOUR_PASSES + SPAN_PASSES
SPANS = (1, 2, 4, 8, 16, 32, 64)
_X, _Y = _F("x"), _F("y")


def hull_candidates(c: Counts, dtype: pl.DataType | type[pl.DataType]) -> pl.Expr:
    """The hull's candidate vertices, ``{x, y}`` = (fp, tp) stored as ``dtype``.

    Inside ``list.eval`` on a group's entries from the highest score down. A vertex other
    than the two ends is reached by a step holding a positive and left by a step holding
    a negative (after a flat step the hull is flat from there on; a point with a point
    straight above it lies below the hull): an entry with positives whose next (lower)
    entry has negatives, and the last point (n₋, n₊). The origin (0, 0), the hull's first
    vertex, is not stored: the steps after read it as the fill of a shift.
    """
    next_neg = c.neg.shift(-1)
    keep = ((c.pos > 0) & (next_neg > 0)) | next_neg.is_null()
    return pl.struct(x=c.fp.cast(dtype), y=c.tp.cast(dtype)).filter(keep)


def _below_chord(span: int) -> pl.Expr:
    """Whether a point is on or below the chord between its neighbours ``span`` away.

    Before the first ``span`` points the left neighbour is the origin, itself a hull
    vertex: a point below any chord between points of the curve is not a vertex.
    """
    x, y = _X.cast(pl.Float64), _Y.cast(pl.Float64)  # counts: products need more
    dx0, dy0 = x - x.shift(span, fill_value=0.0), y - y.shift(span, fill_value=0.0)
    dx1, dy1 = x.shift(-span) - x, y.shift(-span) - y
    return (dx0 * dy1 - dy0 * dx1 >= 0.0).fill_null(False)


def _reflex() -> pl.Expr:
    return pl.any_horizontal(*(_below_chord(span) for span in SPANS))


def concave() -> pl.Expr:
    """Inside ``list.eval`` on hull points: no point on or below a chord of its neighbours."""
    return ~_reflex().any()


def hull(points: pl.Expr) -> pl.Expr:
    """The ROC convex hull's vertices from the candidates, by peeling.

    Every point that lies on or below the chord between its neighbours is not a hull
    vertex and is dropped, all at once (dropping neighbouring such points together is
    safe: a chain that turns up at both lies below the chord of its ends).
    :data:`NEIGHBOUR_PASSES` neighbour passes, then :data:`SPAN_PASSES` passes that also
    test the chords to the points 2, 4, … 64 away (for long cascades); a chain still not
    concave after them gives null (:func:`h_measure_of_hull`), never a wrong value.
    """
    for k in range(HULL_PASSES):
        keep = ~_below_chord(1) if k < NEIGHBOUR_PASSES else ~_reflex()
        points = points.list.eval(_E.filter(keep))
    return points


def _beta_parts(
    b: pl.Expr,
) -> tuple[Callable[[pl.Expr], pl.Expr], Callable[[pl.Expr], pl.Expr], pl.Expr]:
    """``b0(x)``, ``b1(x)`` (partial Beta integrals for α = 2) and ``k1``.

    α = 2 is an integer: I_x(3, β) = 1 − (1 − x)^β (1 + βx + β(β + 1)x²/2) and
    I_x(2, 1 + β) = 1 − (1 − x)^(1+β) (1 + (1 + β)x), so H is pure Polars.
    """
    k0 = 2.0 / (2.0 + b)  # B(3, β) / B(2, β)
    k1 = b / (2.0 + b)  # B(2, 1 + β) / B(2, β)

    def b0(x: pl.Expr) -> pl.Expr:  # ∫₀ˣ c u(c) dc = I_x(3, β) B(3, β)/B(2, β)
        return k0 * (1.0 - (1.0 - x) ** b * (1.0 + b * x + b * (b + 1.0) / 2.0 * x * x))

    def b1(x: pl.Expr) -> pl.Expr:  # ∫₀ˣ (1 − c) u(c) dc = I_x(2, 1 + β) B(2, 1 + β)/B(2, β)
        return k1 * (1.0 - (1.0 - x) ** (1.0 + b) * (1.0 + (1.0 + b) * x))

    return b0, b1, k1


def _rates(severity_ratio: float | None) -> pl.Expr:
    """Inside ``list.eval`` on a hull in counts: rates ``g0``, ``g1`` and the constants.

    ``pi1`` = π₁, ``b`` = β = 1 + 1/SR, ``ok``: both classes present and the chain
    concave, repeated on every vertex. Each step is materialised (``list.eval`` has no
    common-subexpression elimination): a step reads the constants as fields of every
    vertex and no step uses a result twice.
    """
    n_neg, n_pos = _X.last(), _Y.last()
    pi1 = n_pos / (n_pos + n_neg)
    sr = pi1 / (1.0 - pi1) if severity_ratio is None else pl.lit(float(severity_ratio))
    ok = (n_neg > 0.0) & (n_pos > 0.0) & concave()
    return pl.struct(g0=_X / n_neg, g1=_Y / n_pos, pi1=pi1, b=1.0 + 1.0 / sr, ok=ok)


def _cost_ranges() -> pl.Expr:
    """Per hull vertex: the cost ratios ``lo`` to ``hi`` for which it is the optimal point.

    They are the slopes of its two hull edges in cost terms (1 at the last vertex); the
    first stored vertex's edge starts at the origin, whose range is 0 to its ``lo``.
    """
    g0, g1, pi1 = _F("g0"), _F("g1"), _F("pi1")
    d1 = pi1 * (g1 - g1.shift(1, fill_value=0.0))
    d0 = (1.0 - pi1) * (g0 - g0.shift(1, fill_value=0.0))
    lo = d1 / (d1 + d0)
    return _E.struct.with_fields(lo=lo, hi=lo.shift(-1, fill_value=1.0))


def _h_of_ranges() -> pl.Expr:
    """H = 1 − L/L_max: each vertex's share of L over its cost range (Hand 2009, eq. 10–12)."""
    pi1, lo, hi = _F("pi1"), _F("lo"), _F("hi")
    pi0 = 1.0 - pi1
    b0, b1, k1 = _beta_parts(_F("b"))
    pieces = pi0 * (1.0 - _F("g0")) * (b0(hi) - b0(lo))
    pieces = pieces + pi1 * _F("g1") * (b1(hi) - b1(lo))
    origin = pi0 * b0(lo)  # the origin's share: cost ratios 0 to lo₁
    worst = pi0 * b0(pi1) + pi1 * (k1 - b1(pi1))
    loss = pieces.sum() + origin.first()
    return pl.when(_F("ok").first()).then(1.0 - loss / worst.first())


def _clamped() -> pl.Expr:
    """Rounding below 0 by less than 1e-12 is 0 (on the one-element list of H)."""
    return pl.when((_E < 0.0) & (_E > -1e-12)).then(0.0).otherwise(_E)


def h_measure_of_hull(vertices: pl.Expr, severity_ratio: float | None) -> pl.Expr:
    """Hand's H from a group's hull vertices (a list of ``{x, y}``); null if not concave."""
    ranges = vertices.list.eval(_rates(severity_ratio)).list.eval(_cost_ranges())
    return ranges.list.eval(_h_of_ranges()).list.eval(_clamped()).list.first()
