"""The count schema, written once, and its two evaluators.

Every rank-based number of polaroc is a function of one table: for each group (a
(model, fold), or a (group, class) block of a multiclass log) and each of its distinct
scores, the (weighted) positives and negatives at that score and those strictly below
and above it — what scikit-learn's ``confusion_matrix_at_thresholds`` is to its curves.
:class:`Counts` names those quantities as Polars expressions; the formulas of
:mod:`polaroc.core.formulas` are written against it and never see how they were counted.

Two evaluators fill it in:

:func:`in_list`
    inside a group's list (``group_by().agg()``, ``select``, ``over``): the group's rows
    are sorted once in the list and collapsed to one entry per distinct score holding
    the running counts; :func:`listed` reads them as a :class:`Counts`. Options: raw
    rows (nulls counting nowhere), case weights, descending order, a fixed grid
    (:func:`on_grid`), given thresholds (:func:`at_thresholds`). The aggregating
    expressions (``pr.auc``, ``pr.gini``, ``pr.sauc``, ``pr.average_precision``,
    ``pr.auc_se``, ``pr.h_measure``, ``pr.ks_statistic``, ``pr.partial_auc``) and the
    curves read it.
:func:`table`
    over a table: each group's rows are sorted once in a list, exploded, and every row
    gets the running counts of its score's run (an *entry* per row); :func:`columns`
    reads them. Options, not paths of their own: ``collapse`` counts the rows of each
    (group, score, label) first (an entry then stands for them: cheaper on heavily tied
    scores), ``count``/``weighted`` make an entry stand for a multiplicity or a case
    weight, ``label`` keeps the negatives' labels apart (Hand & Till's A(i|j) needs the
    label-j rows of a class-i block), and :func:`with_offsets` adds the counts of the
    score ranges below and above (the big groups of :mod:`polaroc.scale`). ``pr.evaluate``,
    ``pr.pairwise_auc``, ``pr.multiclass_auc``, DeLong's placement values, the bootstrap
    bands' ROC points and the big-group sums read it.

An entry is either one distinct score (the list) or a set of rows at one score (the
table): its own weights are ``pos``/``neg``; ``pos_at``/``neg_at`` are the whole score's
(the same for a collapsed entry). Every quantity is a ratio in which the scale of the
weights cancels; so that products of counts neither overflow (weights of 1e160) nor
underflow (1e-170), the table evaluator divides a group's weights by its largest (1 for
unweighted counts, which stay exact integers), and the list evaluator takes the weights
as given: its formulas are written as ratios (the AUC, average precision, KS), or receive
weights already divided by their largest (``polaroc.core.inputs.binary_expr`` does so for
the pair metrics).

No Polars fast path stands beside the evaluators: the former ones (the AUC from the
positives' mid-rank sums, average precision from the sorted rows' run starts, KS from one
signed running sum) measured within 10 % of them, or slower (``docs/architecture.md``).
The one declared fast path is the NumPy evaluator of bootstrap replicates,
:mod:`polaroc.core.replicates`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from polaroc.core.names import POSITIVE, SCALE, SCORE, WEIGHT

__all__ = [
    "GID",
    "TOP",
    "Counts",
    "at_thresholds",
    "bucket_of",
    "class_weights",
    "columns",
    "entries",
    "heavily_tied",
    "in_list",
    "listed",
    "on_grid",
    "per_group",
    "placed",
    "range_breaks",
    "range_offsets",
    "sorted_rows",
    "spread_thresholds",
    "table",
    "with_offsets",
]

_E = pl.element()
_F = _E.struct.field


@dataclass(frozen=True)
class Counts:
    """The count schema at an entry of a group, as expressions.

    ``score``
        The entry's score (one distinct score of the group; ``−0.0`` and ``0.0`` are one).
    ``centred``
        The score minus the group's ``offset`` (one of its finite scores): the sAUC's sums
        of scores are taken centred, so that a constant added to every score cannot swamp
        their differences.
    ``pos``, ``neg``
        The entry's own positives and negatives (weights).
    ``pos_at``, ``neg_at``
        The positives and negatives at the entry's score (the whole tie run).
    ``pos_below``, ``neg_below``, ``pos_above``, ``neg_above``
        Positives and negatives scored strictly below / above the entry's score.
    ``tp``, ``fp``
        Positives and negatives scored at or above it: the confusion counts when it is the
        threshold (predicted positive iff ``score >= threshold``).
    ``at_or_above``
        ``tp + fp``: the samples scored at or above it.
    ``pos_upto``, ``neg_upto``
        Positives and negatives scored at or below it (the empirical distribution
        functions, times the class totals).
    ``pos_below2``, ``neg_below2``
        Twice the positives (negatives) below, a tie counting ½: ``2·pos_below + pos_at``.
        A negative's ``pos_below2`` is twice the positives it outranks, a positive's
        ``neg_below2`` twice the negatives it outranks.
    ``pos_scores_above``
        The positives' centred scores strictly above, summed (the sAUC).
    ``n_pos``, ``n_neg``
        The group's totals.

    Each evaluator gives every field its cheapest expression (no common-subexpression
    elimination runs inside a list, so a formula pays for every field it reads).
    """

    score: pl.Expr
    centred: pl.Expr
    offset: pl.Expr
    pos: pl.Expr
    neg: pl.Expr
    pos_at: pl.Expr
    neg_at: pl.Expr
    pos_below: pl.Expr
    neg_below: pl.Expr
    pos_above: pl.Expr
    neg_above: pl.Expr
    tp: pl.Expr
    fp: pl.Expr
    at_or_above: pl.Expr
    pos_upto: pl.Expr
    neg_upto: pl.Expr
    pos_below2: pl.Expr
    neg_below2: pl.Expr
    pos_scores_above: pl.Expr
    n_pos: pl.Expr
    n_neg: pl.Expr


def _offset(x: pl.Expr) -> pl.Expr:
    """One of the group's finite scores (its first, in score order; 0 without any)."""
    return x.filter(x.is_finite()).first().fill_null(0.0)


# ----------------------------------------------------------------- in a group's list


def sorted_rows(
    score: pl.Expr,
    positive: pl.Expr,
    weight: pl.Expr | None = None,
    *,
    nulls_last: bool = False,
    descending: bool = False,
) -> pl.Expr:
    """Return, per group, the list of ``{threshold, positive[, weight]}`` in score order.

    The pairs are gathered into one list per group and sorted there by their score
    (``sort_by`` inside ``list.eval``): measured at 1.1–1.3x the cost of sorting the
    score column alone, about 15 % less than ``sort_by`` in the aggregation (which
    evaluates the score expression twice). Ascending (``descending``: the reverse);
    null scores first (``nulls_last``: last).
    """
    row = pl.struct(threshold=score, positive=positive)
    if weight is not None:
        row = pl.struct(threshold=score, positive=positive, weight=weight)
    in_order = _E.sort_by(_F("threshold"), descending=descending, nulls_last=nulls_last)
    return row.implode().list.eval(in_order)


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
    x, y, w = _F("threshold"), _F("positive"), _F("weight")
    usable = pl.when(x.is_nan()).then(w * float("nan")).when(x.is_not_null()).then(w)
    pos = pl.when(y).then(usable).otherwise(0.0).fill_null(0.0)
    neg = pl.when(~y).then(usable).otherwise(0.0).fill_null(0.0)
    bad = ((w.min() < 0.0) | ~w.nan_max().is_finite()).fill_null(False)
    return pos, neg, bad


def entries(*, weighted: bool = False, scores: bool = True, raw: bool = False) -> pl.Expr:
    """Inside ``list.eval`` on :func:`sorted_rows`: the rows with their running counts.

    Each row's ``cpos``/``cneg`` (and ``score``, ``bad``) and ``end``, whether it ends its
    score's run: :func:`in_list` keeps the ends, one entry per distinct score (a second
    ``list.eval``: measured about 7 % cheaper than filtering in this one).
    """
    x, y = _F("threshold"), _F("positive")
    fields: dict[str, pl.Expr] = {"score": x} if scores else {}
    end = x.ne_missing(x.shift(-1))
    if weighted:
        pos, neg, bad = class_weights()
        fields.update(cpos=pos.cum_sum(), cneg=neg.cum_sum(), bad=bad)
        end = end | x.is_null()
    else:  # exact Int64 counts (products of counts are formed from them)
        fields.update(cpos=y.cast(pl.Int64).cum_sum(), cneg=(~y).cast(pl.Int64).cum_sum())
        if raw:  # null scores sort last (in_list): they add to no running count before them
            end = end & x.is_not_null()
    fields["end"] = end
    return pl.struct([v.alias(k) for k, v in fields.items()])


def in_list(
    score: pl.Expr,
    positive: pl.Expr,
    weight: pl.Expr | None = None,
    *,
    scores: bool = True,
    raw: bool = False,
    descending: bool = False,
) -> pl.Expr:
    """The list evaluator: per group, one entry per distinct score in ascending order.

    Each entry holds ``score`` (with ``scores``), ``cpos`` and ``cneg``: the positives and
    negatives at or below it (``UInt32`` counts, or sums of weights); :func:`listed`
    reads them as a :class:`Counts`. ``score`` and ``positive`` are ``Float64`` and
    ``Boolean``; ``raw``: they may hold nulls, and a row with either null counts nowhere
    (its score is taken as null, and a null score makes no entry). With a ``weight``
    the rows are taken as they are (:func:`class_weights` applies the policies, nulls
    included) and every entry also holds ``bad``, whether a weight of the group is
    negative, NaN or infinite (each null-score row is an entry of its own with no
    weight, so that a group of null scores still carries it). ``descending``: the
    entries from the highest score down, their running counts those at or above each
    (read them with ``listed(descending=True)``).
    """
    found = entries(weighted=weight is not None, scores=scores, raw=raw)
    raw = raw and weight is None
    if raw:  # an unlabelled row has no score, and null scores sort last
        score = pl.when(positive.is_not_null()).then(score)
    rows = sorted_rows(score, positive, weight, nulls_last=raw, descending=descending)
    return rows.list.eval(found).list.eval(_E.filter(_F("end")))


def per_group(
    reduction: pl.Expr,
    score: pl.Expr,
    positive: pl.Expr,
    weight: pl.Expr | None = None,
    *,
    scores: bool = True,
    raw: bool = False,
) -> pl.Expr:
    """``reduction`` (written on :func:`listed`) over each group's :func:`in_list` entries."""
    entries = in_list(score, positive, weight, scores=scores, raw=raw)
    return entries.list.eval(reduction).list.first()


def listed(*, descending: bool = False) -> Counts:
    """The :class:`Counts` of :func:`in_list`'s entries, inside ``list.eval``.

    Counts are as the evaluator gives them, ``Int64`` (exact) or, weighted, ``Float64``
    (no cast: a list has no common-subexpression elimination, so a cast would run at
    every reference); with the running counts ``C`` at or below each score and ``C'``
    below it (``C`` shifted by one entry)::

        pos = C₊ − C₊'   pos_below = C₊'   pos_above = n₊ − C₊   tp = n₊ − C₊'
        pos_below2 = C₊ + C₊'              (and the same for the negatives)

    ``descending``: entries from the highest score down, ``C`` the counts at or above
    (``tp = C₊``, ``pos_above = C₊'``, ``pos_below = n₊ − C₊``).
    """
    cp, cn = _F("cpos"), _F("cneg")
    cp1, cn1 = cp.shift(1, fill_value=0), cn.shift(1, fill_value=0)
    n_pos, n_neg = cp.last(), cn.last()
    x = _F("score")
    offset = _offset(x)
    centred = x - offset
    pos, neg = cp - cp1, cn - cn1
    if descending:
        # the positives' centred scores strictly above: a running sum of the entries before
        own = pl.when(pos > 0).then(pos * centred).otherwise(0.0)
        return Counts(
            score=x, centred=centred, offset=offset, pos=pos, neg=neg, pos_at=pos,
            neg_at=neg, pos_below=n_pos - cp, neg_below=n_neg - cn, pos_above=cp1,
            neg_above=cn1, tp=cp, fp=cn, at_or_above=cp + cn, pos_upto=n_pos - cp1,
            neg_upto=n_neg - cn1,
            pos_below2=2 * n_pos - cp - cp1, neg_below2=2 * n_neg - cn - cn1,
            pos_scores_above=own.cum_sum().shift(1, fill_value=0.0), n_pos=n_pos, n_neg=n_neg,
        )  # fmt: skip
    # the positives' centred scores strictly above: a reverse running sum of the entries
    # above (never a difference: an infinite score must not turn into inf − inf)
    own = pl.when(pos > 0).then(pos * centred).otherwise(0.0)
    above = own.cum_sum(reverse=True).shift(-1, fill_value=0.0)
    return Counts(
        score=x,
        centred=centred,
        offset=offset,
        pos=pos,
        neg=neg,
        pos_at=pos,
        neg_at=neg,
        pos_below=cp1,
        neg_below=cn1,
        pos_above=n_pos - cp,
        neg_above=n_neg - cn,
        tp=n_pos - cp1,
        fp=n_neg - cn1,
        at_or_above=(n_pos + n_neg) - (cp1 + cn1),
        pos_upto=cp,
        neg_upto=cn,
        pos_below2=cp + cp1,
        neg_below2=cn + cn1,
        pos_scores_above=above,
        n_pos=n_pos,
        n_neg=n_neg,
    )


def at_thresholds(found: pl.Expr, thresholds: pl.Expr) -> pl.Expr:
    """Per group: entries (as :func:`in_list`'s) at the given thresholds instead of its scores.

    ``found`` is a group's :func:`in_list` list, ``thresholds`` a list of distinct
    thresholds per group, the first ``-inf``. Each threshold t becomes an entry whose
    running counts (``Float64``) make :func:`listed`'s ``tp``/``fp`` the samples scored
    ``>= t`` (predicted positive iff ``score >= threshold``): the thresholds are merged
    into the scores (a threshold before a score equal to it), and the counts of the
    scores strictly below each are carried up to it. (Fawcett's 2006 threshold averaging
    reads every fold at one grid.)
    """
    scored = found.list.eval(
        pl.struct(
            score=_F("score"),
            cpos=_F("cpos").cast(pl.Float64),
            cneg=_F("cneg").cast(pl.Float64),
            given=pl.lit(False),
        )
    )
    given = thresholds.list.eval(
        pl.struct(
            score=_E,
            cpos=pl.lit(None, pl.Float64),
            cneg=pl.lit(None, pl.Float64),
            given=pl.lit(True),
        )
    )
    merged = pl.concat_list(scored, given).list.eval(_E.sort_by(_F("score"), ~_F("given")))
    return merged.list.eval(_carried())


def _carried() -> pl.Expr:
    """Inside ``list.eval`` on merged scores and thresholds: entries at the thresholds."""
    is_given = _F("given")
    below = {k: _F(k).forward_fill().fill_null(0.0) for k in ("cpos", "cneg")}
    last = {k: _F(k).max().fill_null(0.0) for k in ("cpos", "cneg")}
    # an entry's running counts are those below the next threshold
    carried = [below[k].filter(is_given).shift(-1).fill_null(last[k]).alias(k) for k in below]
    return pl.struct(_F("score").filter(is_given).alias("score"), *carried)


def spread_thresholds(score: pl.Expr, size: int) -> pl.Expr:
    """``size`` thresholds among a group's distinct scores, at evenly spaced ranks.

    Fawcett's (2006, §8.2) sampling of the thresholds of threshold averaging.
    """
    levels = pl.lit(pl.Series(np.linspace(0.0, 1.0, size)))
    distinct = score.unique().sort()
    picks = (levels * (distinct.len() - 1)).round().cast(pl.Int64)
    return distinct.gather(picks)


def on_grid(
    frame: pl.LazyFrame, keys: Sequence[str], grid: Sequence[float], *, weighted: bool = False
) -> pl.LazyFrame:
    """The grid option: per group (``keys``), entries at ``-inf`` and each ``grid`` value.

    Each row is only binned against the grid (bin j: ``[grid[j-1], grid[j])``) and counted
    per (group, bin) by a hash aggregation, so the memory per group does not grow with
    its rows. Entry ``-inf`` then ``grid[k]`` hold as running counts the rows scored below
    the next grid value: :func:`listed` reads them as scores moved down to the grid (a
    score between two grid values predicted positive at the lower one). Columns: the
    keys, ``has_nan``, ``entries``. ``weighted``: sums of ``_pr_weight``.
    """
    score, positive = pl.col(SCORE), pl.col(POSITIVE)
    w = pl.col(WEIGHT)
    pos = pl.when(positive).then(w).otherwise(0.0).sum() if weighted else positive.sum()
    neg = pl.when(positive).then(0.0).otherwise(w).sum() if weighted else (~positive).sum()
    dtype = pl.Float64 if weighted else pl.Int64
    per_bin = (
        frame.with_columns(_pr_bin=score.bin_intervals(list(grid), labels=False).cast(pl.Int64))
        .group_by(*keys, "_pr_bin")
        .agg(
            pos=pos.cast(dtype),
            neg=neg.cast(dtype),
            has_nan=score.is_nan().any(),
        )
    )
    bins = per_bin.group_by(keys).agg(
        pl.col("has_nan").any(), entries=pl.struct("_pr_bin", "pos", "neg")
    )
    return bins.with_columns(pl.col("entries").list.eval(_grid_entries(grid)))


def _grid_entries(grid: Sequence[float]) -> pl.Expr:
    """Sparse ``{bin, pos, neg}`` per grid bin → entries at ``-inf`` and the grid values.

    The sentinel bin ``-1`` lets every lookup find a bin at or below it.
    """
    ordered = _E.sort_by(_F("_pr_bin"))
    bins = pl.lit(-1, pl.Int64).append(ordered.struct.field("_pr_bin"))
    cpos = pl.lit(0).append(ordered.struct.field("pos").cum_sum())
    cneg = pl.lit(0).append(ordered.struct.field("neg").cum_sum())
    upto = pl.lit(pl.Series(range(len(grid) + 1), dtype=pl.Int64))
    at_or_below = bins.search_sorted(upto, side="right").cast(pl.Int64) - 1
    scores = pl.lit(pl.Series([float("-inf"), *grid], dtype=pl.Float64))
    return pl.struct(score=scores, cpos=cpos.gather(at_or_below), cneg=cneg.gather(at_or_below))


# ------------------------------------------------------------------- over a table

GID = "_pr_group_no"  # a group's number in the table evaluator's output
W = "_pr_w"  # the rows (or weight) an entry stands for
OFFSET = "_pr_off"
TOP = "_pr_top"  # a bound of the group's sAUC terms (see :func:`table`)
_ROWS = "_pr_rows"
_ABOVE = "_pr_above"
# the running counts of an entry's score run (see :func:`columns`)
PB, PU, RB, RU, NP, NR, SA = (f"_pr_c{k}" for k in ("pb", "pu", "rb", "ru", "np", "nr", "sa"))
ENTRY_COLUMNS = (PB, PU, RB, RU, NP, NR, SA)


def table(
    frame: pl.LazyFrame,
    keys: Sequence[str],
    *,
    usable: pl.Expr,
    positive: pl.Expr | None = None,
    label: str | None = None,
    extra: Sequence[pl.Expr] = (),
    collapse: bool = False,
    weighted: bool = False,
    count: str | None = None,
    carry: Sequence[str] = (),
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """The table evaluator: order each group's scores once; return ``(groups, entries)``.

    ``frame`` has ``_pr_score`` (``Float64``), the ``keys``, the positive flag (the
    ``Boolean`` column ``_pr_positive``, or ``positive``: an expression of the keys and
    ``label``, such as label = class) and, as the options ask, ``label``,
    ``_pr_weight`` or ``count``. ``groups``
    has one row per group: the keys, ``_pr_gid`` and the ``extra`` aggregations,
    evaluated over all the group's rows (``usable`` or not) in the same pass (and
    ``_pr_scale``, weighted). ``entries`` has one row per ``usable`` row (per collapsed
    set of rows with ``collapse``): ``_pr_gid``, ``label``, the score, the positive flag,
    ``_pr_w`` (what the entry stands for, when not one row) and the running counts
    :func:`columns` reads.

    ``collapse=True`` first counts the rows that share (group, score, label or positive
    flag): much cheaper when scores are heavily tied, dearer when they are distinct. The
    ``extra`` aggregations are then applied twice (to the rows, then to their per-score
    results), so they must be sums, counts-as-sums or ``any``. ``weighted``: an entry
    stands for its rows' case weights (``_pr_weight``), divided by the group's largest;
    ``count``: for a number of rows (a column of multiplicities). The group numbers of
    both outputs come from one cached evaluation (group-by output order is not
    deterministic: never match them across evaluations). ``carry`` names columns each
    entry keeps from its row (e.g. a sample id, to sum a sample's entries without
    joining them back); not with ``collapse``.
    """
    keys = list(keys)
    if carry and collapse:
        msg = "table(carry=...) keeps each row's columns: an entry of collapsed rows has none"
        raise ValueError(msg)
    score = pl.col(SCORE)
    flag = pl.col(POSITIVE) if positive is None else positive.alias(POSITIVE)
    labels: list[str | pl.Expr] = [label] if label else []
    if not extra:  # nothing to count in unusable rows: drop them before the ordering
        frame = frame.filter(usable)
    stands_for = collapse or weighted or count is not None
    if collapse:  # (``label`` tells the positives apart where it is given)
        size = (
            pl.col(WEIGHT).sum()
            if weighted
            else pl.col(count).cast(pl.Int64).sum()
            if count
            else pl.len().cast(pl.Int64)
        )
        frame = frame.group_by(*keys, SCORE, *(labels or [flag])).agg(size.alias(W), *extra)
        flag = flag if label else pl.col(POSITIVE)
    fields: list[str | pl.Expr] = [SCORE, *labels, flag, *carry]
    if collapse:
        fields.append(W)
    elif weighted:
        fields.append(pl.col(WEIGHT).alias(W))
    elif count is not None:
        fields.append(pl.col(count).cast(pl.Int64).alias(W))
    scale = [pl.col(W if collapse else WEIGHT).max().alias(SCALE)] if weighted else []
    rows = pl.struct(fields)
    # sorted inside one list per group: cheaper than ``sort_by`` in the aggregation.
    # Real weights are summed in running sums: tied rows ordered by what is summed
    # (flag, weight), so that the sums, and so every count, have the same bits
    # whatever order the rows came in (float addition is not associative).
    ties = [_F(POSITIVE), _F(W)] if weighted else []
    in_order = _E.sort_by(_F(SCORE), *ties)
    top = pl.col(SCALE)
    ordered = (
        frame.group_by(keys)
        .agg(rows.implode().list.eval(in_order).alias(_ROWS), *extra, *scale)
        .with_columns(
            pl.int_range(pl.len(), dtype=pl.UInt32).alias(GID),
            *([pl.when(top > 0.0).then(top).otherwise(1.0).alias(SCALE)] if weighted else []),
        )
        .cache()
    )
    groups = ordered.drop(_ROWS)
    # The positives' centred scores at or above each row: a reverse running sum within
    # the group (cheaper in the sorted list than a window over the exploded rows), in a
    # list of its own (as a struct field it rebuilds every group's rows).
    x = _F(SCORE)
    offset = _offset(x)
    centred = x - offset
    scores = centred * _F(W) if stands_for else centred
    above = pl.when(_F(POSITIVE)).then(scores).otherwise(0.0).cum_sum(reverse=True)
    flat = (
        ordered.select(
            GID,
            _ROWS,
            pl.col(_ROWS).list.eval(above).alias(_ABOVE),
            pl.col(_ROWS).list.eval(offset).list.first().alias(OFFSET),
            *([SCALE] if weighted else []),
        )
        # the positives' centred scores above the lowest finite one: each at least 0, so
        # their sum bounds every sAUC term of the group (the unit of its exact sums)
        .with_columns(pl.col(_ABOVE).list.first().fill_null(0.0).alias(TOP))
        .explode(_ROWS, _ABOVE)
        .unnest(_ROWS)
    )
    if weighted:  # the group's weights (and sums of weights) divided by its largest
        scaled = (W, _ABOVE, TOP)
        flat = flat.with_columns((pl.col(c) / top).alias(c) for c in scaled).drop(SCALE)
    if extra:
        flat = flat.filter(score.is_not_null() & pl.col(POSITIVE).is_not_null())
    if weighted and (extra or collapse):  # rows (or tied runs) of null or zero weight
        w = pl.col(W)
        flat = flat.filter(w.is_not_null() & ((w > 0.0) | score.is_nan()))
    return groups, _runs(flat, weighted=stands_for)


def _runs(rows: pl.LazyFrame, *, weighted: bool) -> pl.LazyFrame:
    """The exploded groups of :func:`table` with each row's running counts.

    With the rows of a group in ascending score order and ``p`` a row's positives
    (``_pr_w`` or 1 for a positive row, else 0): ``_pr_cpb``/``_pr_cpu`` are the
    positives strictly below / at or below the row's tie run, ``_pr_crb``/``_pr_cru``
    the rows (weights) likewise, ``_pr_cnp``/``_pr_cnr`` the group's positives and rows,
    ``_pr_csa`` the positives' centred scores strictly above the run. (Shifts and fills
    are cheaper here, on the flat rows, than inside each group's list.)
    """
    gid, score, pos = pl.col(GID), pl.col(SCORE), pl.col(POSITIVE)
    w = pl.col(W) if weighted else pl.lit(1, pl.Int64)
    p = pl.when(pos).then(w).otherwise(0) if weighted else pos.cast(pl.Int64)
    # rows of the table before this one (all groups; the group's start is subtracted
    # below) — real weights within their group: a float running sum over all groups
    # would round each group's counts by the groups before it, whose order is arbitrary
    real = weighted and rows.collect_schema()[W].is_float()
    row = (
        (w.cum_sum().over(GID) if real else w.cum_sum()) - w
        if weighted
        else pl.int_range(pl.len(), dtype=pl.Int64)
    )
    first, last = gid.ne_missing(gid.shift(1)), gid.ne_missing(gid.shift(-1))
    marks = rows.with_columns(
        _first=first,
        _last=last,
        _start=first | score.ne_missing(score.shift(1)),
        _end=last | score.ne_missing(score.shift(-1)),
        _row=row,
        _cpos=p.cum_sum().over(GID) if real else p.cum_sum(),
    )
    at_first = pl.col("_first")
    in_group = marks.with_columns(
        _i=pl.col("_row") - pl.when(at_first).then(pl.col("_row")).forward_fill(),
        _cp=pl.col("_cpos") - pl.when(at_first).then(pl.col("_cpos") - p).forward_fill(),
    )
    start, end, i, cp = pl.col("_start"), pl.col("_end"), pl.col("_i"), pl.col("_cp")
    # the positives' scores strictly above the tie run: the next row's running sum
    next_above = pl.when(pl.col("_last")).then(0.0).otherwise(pl.col(_ABOVE).shift(-1))
    return in_group.with_columns(
        pl.when(start).then(cp - p).forward_fill().alias(PB),
        pl.when(end).then(cp).backward_fill().alias(PU),
        pl.when(start).then(i).forward_fill().alias(RB),
        pl.when(end).then(i + w).backward_fill().alias(RU),
        pl.when(pl.col("_last")).then(cp).backward_fill().alias(NP),
        pl.when(pl.col("_last")).then(i + w).backward_fill().alias(NR),
        pl.when(end).then(next_above).backward_fill().alias(SA),
    ).drop("_first", "_last", "_start", "_end", "_row", "_cpos", "_i", "_cp", _ABOVE)


def columns(*, weighted: bool = False) -> Counts:
    """The :class:`Counts` of :func:`table`'s (or :func:`with_offsets`') entries, as columns.

    With ``p_<``, ``p_≤`` the positives below / at or below the entry's run, ``r_<``,
    ``r_≤`` the rows likewise and ``n₊``, ``n`` the group's totals::

        pos_below = p_<    neg_below = r_< − p_<    pos_at = p_≤ − p_<
        pos_below2 = p_< + p_≤    neg_below2 = (r_< − p_<) + (r_≤ − p_≤)

    ``weighted``: the entries carry ``_pr_w`` (a weight or a multiplicity).
    """
    pb, pu, rb, ru, n_pos, n_rows = (pl.col(c) for c in (PB, PU, RB, RU, NP, NR))
    w = pl.col(W) if weighted else pl.lit(1, pl.Int64)
    positive = pl.col(POSITIVE)
    n_neg = n_rows - n_pos
    x = pl.col(SCORE)
    offset = pl.col(OFFSET)
    return Counts(
        score=x,
        centred=x - offset,
        offset=offset,
        pos=pl.when(positive).then(w).otherwise(0),
        neg=pl.when(positive).then(0).otherwise(w),
        pos_at=pu - pb,
        neg_at=(ru - pu) - (rb - pb),
        pos_below=pb,
        neg_below=rb - pb,
        pos_above=n_pos - pu,
        neg_above=n_neg - (ru - pu),
        tp=n_pos - pb,
        fp=n_neg - (rb - pb),
        at_or_above=n_rows - rb,
        pos_upto=pu,
        neg_upto=ru - pu,
        pos_below2=pb + pu,
        neg_below2=(rb - pb) + (ru - pu),
        pos_scores_above=pl.col(SA),
        n_pos=n_pos,
        n_neg=n_neg,
    )


# ---------------------------------------------------- the table's buckets option


def range_breaks(quantiles: Sequence[float | None]) -> pl.Series:
    """The buckets option's boundaries: the distinct ``quantiles`` of a group's scores, sorted.

    (Sampled score quantiles, e.g. from a cluster engine; missing ones dropped.)
    """
    found = [q for q in quantiles if q is not None]
    return pl.Series(SCORE, found, pl.Float64).unique().sort()


def bucket_of(breaks: pl.Series) -> pl.Expr:
    """The buckets option: a score's range, the number of ``breaks`` at or below it.

    NaN falls in the last range (Polars orders NaN above every number), a null score in 0.
    """
    bucket = pl.lit(breaks).search_sorted(pl.col(SCORE), side="right").cast(pl.Int64)
    return pl.when(pl.col(SCORE).is_null()).then(0).otherwise(bucket)


def range_offsets(totals: pl.LazyFrame, keys: Sequence[str], by_range: str) -> pl.LazyFrame:
    """The buckets option: per group (``keys``) and score range, what lies outside the range.

    A group too big for one worker is cut into ranges of scores (``by_range``, ascending
    integers); :func:`table` counts each range's entries on its own, and
    :func:`with_offsets` makes them the whole group's. ``totals`` has one row per
    (group, range): ``_pr_p`` positives, ``_pr_r`` rows (both counts) and ``_pr_s`` the
    positives' score sum. The offsets: positives and rows below the range
    (``_pr_pb0``, ``_pr_rb0``), the group's totals (``_pr_np0``, ``_pr_nr0``), the
    positives above the range and their score sum (``_pr_pa0``, ``_pr_sa0``; summed
    downwards from the top, never a difference: an infinite score must not turn into
    inf − inf).
    """
    keys = list(keys)
    p, r, sums = pl.col("_pr_p"), pl.col("_pr_r"), pl.col("_pr_s")
    return totals.sort(*keys, by_range).select(
        *keys,
        by_range,
        (p.cum_sum() - p).over(keys).alias("_pr_pb0"),
        (r.cum_sum() - r).over(keys).alias("_pr_rb0"),
        p.sum().over(keys).alias("_pr_np0"),
        r.sum().over(keys).alias("_pr_nr0"),
        (p.cum_sum(reverse=True) - p).over(keys).alias("_pr_pa0"),
        sums.cum_sum(reverse=True).shift(-1, fill_value=0.0).over(keys).alias("_pr_sa0"),
    )


def with_offsets(entries: pl.LazyFrame, offsets: pl.LazyFrame, on: Sequence[str]) -> pl.LazyFrame:
    """``entries`` of one score range of their groups, counted within the whole groups.

    ``offsets`` are :func:`range_offsets` (per range, ``on``): the running counts of
    the ranges below are added to the entries', the group's totals replace the range's,
    and the positives' scores above the range join the sum of those above each entry
    (centred on the range's own offset, as the entries' are).
    """
    lower = {PB: "_pr_pb0", PU: "_pr_pb0", RB: "_pr_rb0", RU: "_pr_rb0"}
    above = pl.when(pl.col("_pr_pa0") > 0).then(pl.col(OFFSET) * pl.col("_pr_pa0")).otherwise(0.0)
    joined = entries.join(offsets, on=list(on), how="left")
    return joined.with_columns(
        *((pl.col(c) + pl.col(o)).alias(c) for c, o in lower.items()),
        pl.col("_pr_np0").alias(NP),
        pl.col("_pr_nr0").alias(NR),
        (pl.col(SA) + (pl.col("_pr_sa0") - above)).alias(SA),
        (pl.col(TOP) + (pl.col("_pr_sa0") - above)).alias(TOP),  # the bound, too
    ).drop("_pr_pb0", "_pr_rb0", "_pr_np0", "_pr_nr0", "_pr_pa0", "_pr_sa0")


def placed(
    frame: pl.LazyFrame,
    keys: Sequence[str],
    value: Callable[[Counts], pl.Expr],
    *,
    weighted: bool = False,
    score: str = SCORE,
    name: str = "placement",
) -> pl.LazyFrame:
    """``frame``'s rows with ``value`` of their score's entry (column ``name``).

    The rows of each group (``keys``) that share a score and a class are one entry of
    the table evaluator (``collapse``); ``value`` (a formula on :func:`columns`, e.g.
    DeLong's placement values) is computed per entry and joined back to the rows on
    (keys…, score, positive flag): DeLong's tests in ``compare/`` pair two models'
    placements by sample. ``frame`` holds usable rows with the column ``score`` (default
    ``_pr_score``), ``_pr_positive`` and, ``weighted``, ``_pr_weight``.
    """
    keys = list(keys)
    frame = frame.cache()  # counted, then joined to: read once
    rows = frame.select(
        *keys, pl.col(score).alias(SCORE), POSITIVE, *([WEIGHT] if weighted else [])
    )
    groups, found = table(rows, keys, usable=pl.lit(True), collapse=True, weighted=weighted)
    at = "_pr_at"  # a row's score, to join its entry's value back
    per_score = found.join(groups.select(GID, *keys), on=GID).select(
        *keys, pl.col(SCORE).alias(at), POSITIVE, value(columns(weighted=True)).alias(name)
    )
    joined = frame.with_columns(pl.col(score).alias(at)).join(
        per_score, on=[*keys, at, POSITIVE], how="left", nulls_equal=True
    )
    return joined.drop(at)


# ------------------------------------------------------------ the collapse decision

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
    value. ``pr.evaluate`` asks it of an in-memory log (a larger sample, a smaller share
    and more rows per value) to choose the table evaluator's ``collapse`` option.
    """
    head = scores.head(sample)
    distinct = head.n_unique()
    return (distinct <= share * head.len()) & (distinct * per_value <= scores.len())
