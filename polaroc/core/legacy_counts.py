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

The AUC alone (and Hanley & McNeil's SE, a function of it) needs less: the sum of
the positives' mid-ranks, read from the same sorted pairs by :func:`rank_stats`
without the collapsing step.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polaroc.core.names import POSITIVE as POSITIVE_COLUMN
from polaroc.core.names import SCORE as SCORE_COLUMN
from polaroc.core.names import WEIGHT as WEIGHT_COLUMN

__all__ = [
    "CNEG",
    "COUNT_NEG",
    "COUNT_NEG_BELOW",
    "COUNT_POS",
    "COUNT_POS_ABOVE",
    "COUNT_SCORE",
    "CPOS",
    "NEG",
    "POS",
    "THRESHOLD",
    "TIE_RUN",
    "TIE_SAMPLE",
    "average_precision_of",
    "class_weights",
    "delong_variance_of",
    "heavily_tied",
    "placements",
    "precision_term",
    "rank_stats",
    "rank_summary",
    "reduce_counts",
    "reduce_ranks",
    "score_counts",
    "sorted_rows",
    "threshold_counts",
    "weighted_auc",
]

_E = pl.element()
_F = pl.field

THRESHOLD = _E.struct.field("threshold")
POS = _E.struct.field("pos")
NEG = _E.struct.field("neg")
CPOS = _E.struct.field("cpos")
CNEG = _E.struct.field("cneg")


def sorted_rows(
    score: pl.Expr, positive: pl.Expr, weight: pl.Expr | None = None, *, nulls_last: bool = False
) -> pl.Expr:
    """Return, per group, the list of ``{threshold, positive}`` structs in ascending score order.

    The pairs are gathered into one list per group and sorted there by their score
    (``sort_by`` inside ``list.eval``): measured at 1.1–1.3x the cost of sorting the
    score column alone, about 15 % less than ``sort_by`` in the aggregation (which
    evaluates the score expression twice), and every later step reads this order
    instead of sorting again. Null scores sort first (``nulls_last``: last). With a
    ``weight`` the structs also carry it (field ``weight``).
    """
    row = pl.struct(threshold=score, positive=positive)
    if weight is not None:
        row = pl.struct(threshold=score, positive=positive, weight=weight)
    rows = row.implode()
    return rows.list.eval(_E.sort_by(_E.struct.field("threshold"), nulls_last=nulls_last))


# A group's scores count as heavily tied when a sample of them repeats a lot and the
# group has several rows per distinct value: then counting the distinct (score,
# positive) pairs by hashing is cheaper than sorting every row. Measured on 80 groups
# of uniformly tied scores (counting time / sorting time): 0.92-0.97 from 8 to 64 rows
# per value in groups of 12,500 rows, 0.99-1.03 in groups of 125,000 rows.
TIE_SAMPLE = 2048
TIE_RUN = 8


def heavily_tied(
    scores: pl.Expr, *, sample: int = TIE_SAMPLE, share: float = 0.5, per_value: int = TIE_RUN
) -> pl.Expr:
    """Whether ``scores`` look heavily tied, judged from a sample (cheap).

    True when the first ``sample`` scores hold at most ``share`` times as many
    distinct values as scores and there are at least ``per_value`` scores per such
    value. Used per group inside ``list.eval`` and, with a larger sample, a smaller
    share and more rows per value, on a whole log by ``pr.evaluate``.
    """
    head = scores.head(sample)
    distinct = head.n_unique()
    return (distinct <= share * head.len()) & (distinct * per_value <= scores.len())


def _ranks_of_sorted_rows() -> pl.Expr:
    """Inside ``list.eval`` on rows sorted by score: the fields of :func:`rank_stats`."""
    x = _E.struct.field("threshold").set_sorted()
    y = _E.struct.field("positive")
    scored = x.is_not_null()
    return pl.struct(
        rank_sum=x.rank("average").filter(y).sum(),
        n_pos=(y & scored).sum().cast(pl.Int64),
        n_neg=(~y & scored).sum().cast(pl.Int64),
        nan=x.last().is_nan().fill_null(False),
    )


def _ranks_of_sorted_counts() -> pl.Expr:
    """Inside ``list.eval`` on ``{threshold, positive, count}`` sorted by score: the same.

    A tie run spans the rows ranked ``below + 1 .. upto`` (rows counted by ``count``),
    so each of its rows has the mid-rank ``(below + 1 + upto) / 2``.
    """
    x, y = _E.struct.field("threshold"), _E.struct.field("positive")
    count = pl.when(x.is_not_null()).then(_E.struct.field("count").cast(pl.Int64)).otherwise(0)
    upto_row = count.cum_sum()
    below = pl.when(x.ne_missing(x.shift(1))).then(upto_row - count).forward_fill()
    upto = pl.when(x.ne_missing(x.shift(-1))).then(upto_row).backward_fill()
    mid_rank = (below + upto + 1).cast(pl.Float64) / 2.0
    return pl.struct(
        rank_sum=(mid_rank * count).filter(y).sum(),
        n_pos=count.filter(y).sum(),
        n_neg=count.filter(~y).sum(),
        nan=x.last().is_nan().fill_null(False),
    )


def rank_stats(score: pl.Expr, positive: pl.Expr) -> pl.Expr:
    """Return, per group, a one-element list of ``{rank_sum, n_pos, n_neg, nan}``.

    ``rank_sum`` is the sum of the positives' mid-ranks among all scores. Each
    group's rows are read by one of two exact paths, chosen per group from a sample
    of its first :data:`TIE_SAMPLE` scores:

    * sort the (score, positive) pairs (:func:`sorted_rows`) and rank them: flagged
      as sorted, ``rank("average")`` skips its own argsort and only resolves the tie
      runs, so the AUC costs about one sort;
    * when the scores are heavily tied (the sample's distinct values are at most
      half the sample and an eighth of the group), collapse the ties first: count each
      distinct (score, positive) pair (a hash aggregation), sort the counts and
      give each run its mid-rank — cheaper than sorting every row.

    The other path gets an empty slice (free) and the two partial results are added.
    ``score``/``positive`` may hold nulls: a row with either null gets a null score
    and counts nowhere. ``nan`` tells whether a usable score is NaN (NaN sorts last).
    Read the fields with :func:`reduce_ranks`.
    """
    usable = pl.when(positive.is_not_null()).then(score)
    rows = pl.struct(threshold=usable, positive=positive).implode()
    tied = heavily_tied(_E.struct.field("threshold"))

    def none_if(condition: pl.Expr) -> pl.Expr:  # how many rows a path takes: all or none
        return pl.when(condition).then(0).otherwise(pl.len())

    by_rows = _E.head(none_if(tied))
    in_order = by_rows.sort_by(by_rows.struct.field("threshold"))
    sorted_path = rows.list.eval(in_order).list.eval(_ranks_of_sorted_rows())
    pairs = _E.head(none_if(~tied)).value_counts(name="count")
    counted = pl.struct(
        _E.struct.field("pair").struct.field("threshold", "positive"), _E.struct.field("count")
    )
    counts_path = (
        rows.list.eval(pairs.struct.rename_fields(["pair", "count"]))
        .list.eval(counted)
        .list.eval(_E.sort_by(_E.struct.field("threshold")))
        .list.eval(_ranks_of_sorted_counts())
    )
    f = _E.struct.field
    total = pl.struct(
        rank_sum=f("rank_sum").sum(),
        n_pos=f("n_pos").sum(),
        n_neg=f("n_neg").sum(),
        nan=f("nan").any(),
    )
    return sorted_path.list.concat(counts_path).list.eval(total)


def class_weights() -> tuple[pl.Expr, pl.Expr, pl.Expr]:
    """Inside ``list.eval`` on raw ``{threshold, positive, weight}`` rows: ``(pos, neg, bad)``.

    ``pos``/``neg`` are each row's weight as a positive/negative (``Float64``, 0 for the
    other class) under the contract's policies, with no row removed: a row with a null
    score, label or weight weighs 0 (a weight-0 row adds nothing to any sum: it is the
    row removed), and a usable row with a NaN score weighs NaN, so the sums turn NaN and
    its class counts as present (Polars orders NaN above 0, so ``n > 0`` holds): a group
    with a NaN score is NaN when it has both classes (weights of 0 included) and null
    otherwise, the contract's "degenerate precedes NaN". ``bad`` (a scalar) tells
    whether a weight of the rows (any row) is negative, NaN or infinite: two
    reductions over the weights already in the list.
    """
    x, y, w = _E.struct.field("threshold"), _E.struct.field("positive"), _E.struct.field("weight")
    usable = pl.when(x.is_nan()).then(w * float("nan")).when(x.is_not_null()).then(w)
    pos = pl.when(y).then(usable).otherwise(0.0).fill_null(0.0)
    neg = pl.when(~y).then(usable).otherwise(0.0).fill_null(0.0)
    bad = ((w.min() < 0.0) | ~w.nan_max().is_finite()).fill_null(False)
    return pos, neg, bad


def weighted_auc(score: pl.Expr, positive: pl.Expr, weight: pl.Expr) -> pl.Expr:
    """Per group: ``{value, bad_weight}``, the weighted AUC read from the rows in score order.

    Each (positive, negative) pair counts w₊·w₋, ties ½ (scikit-learn's
    ``roc_auc_score(..., sample_weight=w)``). Read per tie run r: with P_r the run's
    positive weight and C_r the negatives' running weight at its end, twice the
    Mann–Whitney count is Σ_r P_r·(C_{r−1} + C_r) (Bradley 1997, eq. 7, with weights:
    the negatives below the run, twice, plus the run's own), and the AUC that sum over
    2·W₊·W₋. It is summed as Σ_r P_r·((C_{r−1} + C_r)/W₋) / W₊: every factor is at most
    2 and no two weights are multiplied, so weights of 1e160 or 1e-170 give the value
    of weights near 1 without rescaling them first.

    The columns are read as they are (``Float64`` score, ``Boolean`` positive,
    ``Float64`` weight, all nullable), so the rows are gathered into the group's list
    once and no filtered copy is made: :func:`class_weights` applies the contract's
    policies as weights, and ``bad_weight`` is its check (the caller raises; see
    ``_input.binary_expr``'s ``raw_weight``).

    ``value`` is null when either class has no weight. Four ``list.eval`` steps (no
    common-subexpression elimination inside them): sort; the running sums, the
    last-of-run flag and the check; the runs' ends (one row per distinct score); the
    sum. Measured with ``benchmarks/bench_weights.py`` (see ``benchmarks/README.md``).
    """
    x = _E.struct.field("threshold")
    pos, neg, bad = class_weights()
    # null scores sort first and weigh 0; each is kept as a "run" of its own, so that a
    # group of null scores still has rows to carry ``bad`` to the end
    last = x.ne_missing(x.shift(-1)) | x.is_null()
    runs = pl.struct(cneg=neg.cum_sum(), cpos=pos.cum_sum(), last=last, bad=bad)
    rows = sorted_rows(score, positive, weight)
    ends = rows.list.eval(runs).list.eval(_E.filter(_E.struct.field("last")))
    cneg, cpos = _E.struct.field("cneg"), _E.struct.field("cpos")
    n_pos, n_neg = cpos.last(), cneg.last()
    run_pos = cpos - cpos.shift(1, fill_value=0.0)
    u = (run_pos * ((cneg.shift(1, fill_value=0.0) + cneg) / n_neg)).sum() / n_pos
    auc = pl.when((n_pos > 0) & (n_neg > 0)).then(0.5 * u)  # NaN > 0: a NaN class is present
    result = pl.struct(value=auc, bad_weight=_E.struct.field("bad").first())
    return ends.list.eval(result).list.first()


def reduce_ranks(score: pl.Expr, positive: pl.Expr, reduction: pl.Expr) -> pl.Expr:
    """Evaluate ``reduction`` (written with ``RANK_SUM``, ``R_POS``, ...) on :func:`rank_stats`.

    The statistics are computed once and the reduction reads them as often as it
    likes (an aggregation has no common-subexpression elimination).
    """
    return rank_stats(score, positive).list.eval(reduction).list.first()


def threshold_counts(score: pl.Expr, positive: pl.Expr, weight: pl.Expr | None = None) -> pl.Expr:
    """Return, per group, the ascending list of ``{threshold, cpos, cneg, pos, neg}``.

    ``score`` must be a non-null ``Float64`` and ``positive`` a non-null ``Boolean``
    (see ``_input.binary_expr``). All counts are ``Int64``. With a ``weight``
    (non-null, non-negative ``Float64``) the counts are sums of case weights
    (``Float64``), as scikit-learn's ``_binary_clf_curve`` with ``sample_weight``: every
    reduction written with ``POS``, ``NEG``, ... then gives the weighted quantity.
    """
    if weight is not None:
        return _weighted_threshold_counts(score, positive, weight)
    rows = sorted_rows(score, positive)
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
        # drop, not re-wrap: re-selecting the fields into a new struct would evaluate
        # the whole chain once per field (no common-subexpression elimination here)
        .struct.drop(["positive", "cnt"])
    )
    return rows.list.eval(collapse)


def _weighted_threshold_counts(score: pl.Expr, positive: pl.Expr, weight: pl.Expr) -> pl.Expr:
    # The same ordering as the unweighted counts; the running sums add weights, and
    # the negatives' sum is accumulated on its own (not total − positives) so that a
    # class's count is exact when the other class's weights are large.
    x, w = _E.struct.field("threshold"), _F("weight")
    last_of_tie = x.ne_missing(x.shift(-1))
    collapse = (
        _E.struct.with_fields(
            cpos=pl.when(_F("positive")).then(w).otherwise(0.0).cum_sum(),
            cneg=pl.when(_F("positive")).then(0.0).otherwise(w).cum_sum(),
        )
        .filter(last_of_tie)
        .struct.with_fields(
            pos=_F("cpos") - _F("cpos").shift(1, fill_value=0.0),
            neg=_F("cneg") - _F("cneg").shift(1, fill_value=0.0),
        )
        .struct.drop(["positive", "weight"])
    )
    return sorted_rows(score, positive, weight).list.eval(collapse)


def reduce_counts(
    score: pl.Expr, positive: pl.Expr, reduction: pl.Expr, weight: pl.Expr | None = None
) -> pl.Expr:
    """Evaluate ``reduction`` (written with ``POS``, ``NEG``, ...) over a group's counts.

    With a ``weight`` the counts are sums of case weights (see :func:`threshold_counts`).
    """
    return threshold_counts(score, positive, weight).list.agg(reduction)


# Reductions shared by several metrics (all over one group's counts).
N_POS = CPOS.last()
N_NEG = CNEG.last()
NEG_BELOW = CNEG - NEG  # negatives scored strictly below the threshold
POS_ABOVE = N_POS - CPOS  # positives scored strictly above the threshold
# Mann–Whitney U: pairs (positive above negative), ties counting one half.
U = (POS * (NEG_BELOW + 0.5 * NEG)).sum()
AUC = U / (N_POS * N_NEG).cast(pl.Float64)

# Fields of ``rank_stats`` (read inside ``reduce_ranks``).
RANK_SUM = _E.struct.field("rank_sum")
R_POS = _E.struct.field("n_pos").cast(pl.Float64)
R_NEG = _E.struct.field("n_neg").cast(pl.Float64)
R_NAN = _E.struct.field("nan")


def hanley_mcneil_se(theta: pl.Expr, n_pos: pl.Expr, n_neg: pl.Expr) -> pl.Expr:
    """``SE(W)`` of Hanley & McNeil (1982), Bradley (1997) eq. 10–12, from θ and the counts.

    The one copy of the formula: :func:`polaroc.auc_se` and :func:`polaroc.evaluate` use it.
    """
    n_pos, n_neg = n_pos.cast(pl.Float64), n_neg.cast(pl.Float64)
    q1 = theta / (2.0 - theta)
    q2 = 2.0 * theta**2 / (1.0 + theta)
    var = theta * (1.0 - theta) + (n_pos - 1.0) * (q1 - theta**2) + (n_neg - 1.0) * (q2 - theta**2)
    return (var / (n_pos * n_neg)).sqrt()


# ----------------------------------------------------------- the table-level core
#
# One representation for every rank-based quantity of a table: per (group, distinct
# score) the positives' and negatives' (weighted) counts. The expression paths above
# (``rank_stats``, ``threshold_counts``) and the block sums of ``_blocks`` are faster
# evaluations of the same numbers; the tests check them equal to this core.

# the columns of ``score_counts``
COUNT_SCORE, COUNT_POS, COUNT_NEG = "score", "n_pos", "n_neg"
COUNT_NEG_BELOW, COUNT_POS_ABOVE = "neg_below", "pos_above"
_AT = "_pr_at"  # a row's distinct score, to join the per-score placements back


def score_counts(
    frame: pl.LazyFrame,
    keys: Sequence[str],
    *,
    weighted: bool = False,
    score: str = SCORE_COLUMN,
    count: str | None = None,
) -> pl.LazyFrame:
    """Per (keys…, distinct score): ``n_pos``, ``n_neg``, ``neg_below``, ``pos_above``.

    ``frame`` holds usable rows (non-null score and positive indicator) with the
    internal columns ``_pr_score`` (or the column ``score``), ``_pr_positive`` and,
    with ``weighted``, ``_pr_weight``. Counts are ``Int64``; weighted they are sums of
    the group's weights divided by its largest (``Float64``; every quantity read from
    them is a ratio the scale cancels, and the products of 1e160 weights cannot
    overflow). ``count`` names an integer column of row multiplicities (rows already
    counted, as the big-group combiner of ``scale/`` leaves them): the counts are then
    its sums, exact integers. ``neg_below`` counts the group's negatives scored
    strictly below the score and ``pos_above`` its positives strictly above. Rows
    come sorted by keys, then ``score`` (NaN last, −0.0 and 0.0 one score). Read with
    :func:`rank_summary` and :func:`placements`.
    """
    keys = list(keys)
    pos = pl.col(POSITIVE_COLUMN)
    if weighted:
        w = pl.col(WEIGHT_COLUMN)
        top = pl.when(w.max() > 0.0).then(w.max()).otherwise(1.0)
        frame = frame.with_columns((w / (top.over(keys) if keys else top)).alias(WEIGHT_COLUMN))
        w_col = pl.col(WEIGHT_COLUMN)
        n_pos = pl.when(pos).then(w_col).otherwise(0.0).sum()
        n_neg = pl.when(pos).then(0.0).otherwise(w_col).sum()
    elif count is not None:
        m = pl.col(count).cast(pl.Int64)
        n_pos = m.filter(pos).sum()
        n_neg = m.filter(~pos).sum()
    else:
        n_pos = pos.sum().cast(pl.Int64)
        n_neg = (~pos).sum().cast(pl.Int64)
    distinct = (pl.col(score) + 0.0).alias(COUNT_SCORE)  # -0.0 and 0.0 group as one score
    counts = (
        frame.group_by(*keys, distinct)
        .agg(n_pos.alias(COUNT_POS), n_neg.alias(COUNT_NEG))
        .sort(*keys, COUNT_SCORE, nulls_last=True)
    )

    def over(value: pl.Expr) -> pl.Expr:
        return value.over(keys) if keys else value

    p, n = pl.col(COUNT_POS), pl.col(COUNT_NEG)
    return counts.with_columns(
        over(n.cum_sum() - n).alias(COUNT_NEG_BELOW),
        over(p.sum() - p.cum_sum()).alias(COUNT_POS_ABOVE),
    )


def precision_term(pos: pl.Expr, pos_at_or_above: pl.Expr, rows_at_or_above: pl.Expr) -> pl.Expr:
    """One distinct score's share of Σ precision over the positives: ``pos`` × its precision.

    The score's ``pos`` positives are predicted positive first at that score, where the
    precision is (positives at or above) / (rows at or above); average precision is
    the sum of these terms over the scores divided by n⁺ (:func:`average_precision_of`).
    The one formula of scikit-learn's step sum Σ Δrecall · precision (Davis & Goadrich
    2006, §4): every path — the core, the expression, the block sums of ``pr.evaluate``
    and the big-group buckets — reads its precisions through it.
    """
    return pos * (pos_at_or_above / rows_at_or_above)


def delong_variance_of(
    pos: pl.Expr,
    neg: pl.Expr,
    neg_below: pl.Expr,
    pos_above: pl.Expr,
    n_pos: pl.Expr,
    n_neg: pl.Expr,
    auc: pl.Expr,
) -> pl.Expr:
    """DeLong et al.'s (1988) variance of the AUC, S₁₀/n⁺ + S₀₁/n⁻, from per-score counts.

    With placement values V₁₀(x) = P(negative < x) + ½ P(negative = x) for each
    positive x and V₀₁(y) = P(positive > y) + ½ P(positive = y) for each negative y,
    S₁₀ and S₀₁ are their sample variances. A placement value is constant within a
    tie run, so the sums run over the distinct scores weighted by their ``pos`` and
    ``neg`` counts. ``n_pos``, ``n_neg`` (``Float64``) are the class totals and
    ``auc`` the group's AUC; null with fewer than two positives or negatives. The
    one formula: :func:`rank_summary` and ``pr.auc_se`` read it.
    """
    v10 = (neg_below + 0.5 * neg) / n_neg  # a positive's placement among the negatives
    v01 = (pos_above + 0.5 * pos) / n_pos  # a negative's placement among the positives
    s10 = (pos * (v10 - auc) ** 2).sum() / (n_pos - 1.0)
    s01 = (neg * (v01 - auc) ** 2).sum() / (n_neg - 1.0)
    return pl.when((n_pos > 1) & (n_neg > 1)).then(s10 / n_pos + s01 / n_neg)


def average_precision_of(precision_sum: pl.Expr, n_pos: pl.Expr, n_neg: pl.Expr) -> pl.Expr:
    """Average precision from Σ :func:`precision_term` and the class totals.

    Null for a group without positives or without negatives (the contract's degenerate
    group); the caller makes it NaN for a group holding a NaN score.
    """
    both = (n_pos > 0) & (n_neg > 0)
    return pl.when(both).then(precision_sum / n_pos.cast(pl.Float64))


def rank_summary(counts: pl.LazyFrame, keys: Sequence[str]) -> pl.LazyFrame:
    """Per group of :func:`score_counts`: the rank-based quantities of the group.

    Columns keys…, ``n_pos``, ``n_neg``, ``auc``, ``sauc``, ``average_precision``,
    ``var_delong``. ``auc`` is the Mann–Whitney count over the pairs, ties ½ (Bradley 1997, eq. 7);
    ``sauc`` Wu & Flach's (2005) Σ (x − y)·[x > y] over the pairs, from per-score sums
    centred on the group's first finite score; ``average_precision`` scikit-learn's
    step sum Σ Δrecall·precision; ``var_delong`` DeLong et al.'s (1988) S₁₀/m + S₀₁/n
    from the placement values of :func:`placements` (read per distinct score, each
    counted as often as it occurs). Null for a group without positives or negatives
    (precedence over NaN), NaN for a group holding a NaN score.
    """
    keys = list(keys)
    x, p, n = (
        pl.col(COUNT_SCORE),
        pl.col(COUNT_POS).cast(pl.Float64),
        pl.col(COUNT_NEG).cast(pl.Float64),
    )
    below, above = (
        pl.col(COUNT_NEG_BELOW).cast(pl.Float64),
        pl.col(COUNT_POS_ABOVE).cast(pl.Float64),
    )
    n_pos, n_neg = p.sum(), n.sum()
    pairs = n_pos * n_neg
    u = (p * (below + 0.5 * n)).sum()
    offset = x.filter(x.is_finite()).first().fill_null(0.0)
    centred = x - offset
    # Σ over pairs x > y of x − y: each positive score gains the negatives below it,
    # each negative score loses the positives above it
    gaps = (p * below * centred).sum() - (n * above * centred).sum()
    # precision at each threshold t (rows scored >= t), the recall step its positives
    tp_at, all_at = above + p, above + p + (n_neg - below)
    ap = average_precision_of(precision_term(p, tp_at, all_at).sum(), n_pos, n_neg)
    auc = u / pairs
    var = delong_variance_of(p, n, below, above, n_pos, n_neg, auc)

    def ruled(value: pl.Expr) -> pl.Expr:
        return (
            pl.when((n_pos == 0) | (n_neg == 0))
            .then(None)
            .when(x.is_nan().any())
            .then(float("nan"))
            .otherwise(value)
        )

    return counts.group_by(keys or pl.lit(0).alias("_pr_all")).agg(
        n_pos.alias(COUNT_POS),
        n_neg.alias(COUNT_NEG),
        ruled(auc).alias("auc"),
        ruled(gaps / pairs).alias("sauc"),
        ruled(ap).alias("average_precision"),
        ruled(var).alias("var_delong"),
    )


def placements(
    frame: pl.LazyFrame,
    keys: Sequence[str],
    *,
    weighted: bool = False,
    score: str = SCORE_COLUMN,
    name: str = "placement",
) -> pl.LazyFrame:
    """``frame``'s rows with DeLong et al.'s (1988) placement value (column ``name``).

    For a positive row, V₁₀ = (negatives below + ½ tied) / n⁻; for a negative row,
    V₀₁ = (positives above + ½ tied) / n⁺ (weighted counts when ``weighted``): the
    AUC is the mean of V₁₀ over the positives and DeLong's variance is
    S₁₀/n⁺ + S₀₁/n⁻ over them. Read from :func:`score_counts` (of the column
    ``score``) joined back to the rows on (keys…, score); DeLong's tests in
    ``compare/`` pair two models' placements by sample. (Sun & Xu (2014) write the
    same values as differences of mid-ranks.)
    """
    keys = list(keys)
    frame = frame.cache()  # counted, then joined to: read once
    counts = score_counts(frame, keys, weighted=weighted, score=score)
    p, n = pl.col(COUNT_POS).cast(pl.Float64), pl.col(COUNT_NEG).cast(pl.Float64)
    total_pos = p.sum().over(keys) if keys else p.sum()
    total_neg = n.sum().over(keys) if keys else n.sum()
    per_score = counts.select(
        *keys,
        pl.col(COUNT_SCORE).alias(_AT),
        ((pl.col(COUNT_NEG_BELOW) + 0.5 * n) / total_neg).alias("_pr_v10"),
        ((pl.col(COUNT_POS_ABOVE) + 0.5 * p) / total_pos).alias("_pr_v01"),
    )
    rows = frame.with_columns((pl.col(score) + 0.0).alias(_AT))
    joined = rows.join(per_score, on=[*keys, _AT], how="left", nulls_equal=True)
    value = pl.when(pl.col(POSITIVE_COLUMN)).then(pl.col("_pr_v10")).otherwise(pl.col("_pr_v01"))
    return joined.with_columns(value.alias(name)).drop("_pr_v10", "_pr_v01", _AT)
