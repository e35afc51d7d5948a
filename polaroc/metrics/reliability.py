"""Calibration: do the scores mean what they say? Reliability curves, ECE, Brier, log loss.

A model is calibrated when, among the samples it scores ``p``, a share ``p`` is positive.
The reliability curve bins the scores and sets the mean score of each bin (``prob_pred``)
against its share of positives (``prob_true``), the points of scikit-learn's
``calibration_curve``. The expected calibration error is the count-weighted mean gap of the
bins, ECE = Σ_b (n_b / n) |prob_true_b − prob_pred_b|, and the maximum calibration error
MCE = max_b |prob_true_b − prob_pred_b| (Naeini, Cooper & Hauskrecht 2015; for several
classes on the top label: the highest score of each sample and whether its class is the
label, Guo, Pleiss, Sun & Weinberger 2017, §2).

Binning, as scikit-learn: ``"uniform"`` cuts [0, 1] into ``n_bins`` equal bins at
``np.linspace(0, 1, n_bins + 1)``; ``"quantile"`` at the group's score percentiles
``np.percentile(scores, np.linspace(0, 100, n_bins + 1))`` (linear interpolation); a score
equal to an inner edge falls in the lower bin (``np.searchsorted(edges, score)``, side
left), and empty bins are dropped.

Weights (``weight=``, the case weight of each sample): every mean becomes a weighted mean
(``prob_pred`` = Σ w s / Σ w and ``prob_true`` = Σ w y / Σ w in a bin; Brier and log loss
as scikit-learn's ``sample_weight``), the ECE weighs each bin by its total weight, and the
quantile edges are the weighted quantiles, the smallest score whose share of the weight at
or below it reaches q (numpy's ``quantile(scores, q, weights=w, method="inverted_cdf")``):
integer weights then equal repeated rows of weight 1 and scaling the weights changes
nothing, which no interpolated quantile can give (unit weights may therefore move the
quantile edges from scikit-learn's interpolated ones; the uniform edges never move). A
weight of 0 drops the row, a null weight too.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, Unpack

import numpy as np
import polars as pl

from polaroc.core.args import validated
from polaroc.core.inputs import ColumnLike, FrameLike, LogColumns, fail_if
from polaroc.core.log import (
    POSITIVE,
    SCORE,
    LogNames,
    columns_of,
    read_log,
    unique_rows,
    usable_weight,
)
from polaroc.core.names import WEIGHT
from polaroc.metrics.scoring import group_scores, not_probability, probability_message

__all__ = ["calibration", "calibration_curve"]

Strategy = Literal["uniform", "quantile"]
NAN = float("nan")


def _check_bins(n_bins: int, strategy: str) -> None:
    if isinstance(n_bins, bool) or not isinstance(n_bins, int) or n_bins < 1:
        msg = f"n_bins must be a positive integer, got {n_bins!r}"
        raise ValueError(msg)
    if strategy not in ("uniform", "quantile"):
        msg = f"strategy must be 'uniform' or 'quantile', got {strategy!r}"
        raise ValueError(msg)


def _weighted_quantile(s: pl.Expr, w: pl.Expr, q: float) -> pl.Expr:
    """The smallest score whose share of the weight at or below it is at least ``q``.

    numpy's ``quantile(s, q, weights=w, method="inverted_cdf")``: the inverse of the
    weighted empirical distribution function. Tied scores share one value, so the order
    of the weights within a tie does not matter.
    """
    share = w.sort_by(s).cum_sum() / w.sum()
    return s.sort().filter(share >= q).first()


def _bin_of(
    s: pl.Expr, keys: list[str], n_bins: int, strategy: str, w: pl.Expr | None = None
) -> pl.Expr:
    """The 0-based bin of each score: the number of inner edges strictly below it."""
    inner = np.linspace(0.0, 1.0, n_bins + 1)[1:-1]
    if strategy == "uniform":
        edges = [pl.lit(float(e)) for e in inner]
    elif w is None:
        edges = [s.quantile(float(q), interpolation="linear").over(keys) for q in inner]
    else:
        edges = [_weighted_quantile(s, w, float(q)).over(keys) for q in inner]
    if not edges:
        return pl.lit(0, pl.Int64)
    return pl.sum_horizontal([(s > e).cast(pl.Int64) for e in edges])


def binned(
    frame: pl.LazyFrame,
    keys: list[str],
    s: str,
    y: str,
    n_bins: int,
    strategy: str,
    weight: str | None = None,
) -> pl.LazyFrame:
    """Per (keys, bin): ``prob_pred``, ``prob_true``, ``n`` of scores ``s`` and outcomes ``y``.

    With a ``weight`` column the two means are weighted and the bin's total weight is
    the column ``weight``. A group holding a NaN score gets NaN ``prob_pred`` and
    ``prob_true`` in every bin.
    """
    score, outcome = pl.col(s), pl.col(y).cast(pl.Float64)
    nan = score.is_nan().any().over(keys)
    w = None if weight is None else pl.col(weight)
    if w is None:
        sums = {"prob_pred": score.mean(), "prob_true": outcome.mean()}
    else:
        sums = {
            "prob_pred": (score * w).sum() / w.sum(),
            "prob_true": (outcome * w).sum() / w.sum(),
            "weight": w.sum(),
        }
    return (
        frame.with_columns(bin=_bin_of(score, keys, n_bins, strategy, w), _pr_nan=nan)
        .group_by(*keys, "bin")
        .agg(**sums, n=pl.len().cast(pl.Int64), _pr_nan=pl.col("_pr_nan").first())
        .with_columns(
            pl.when(pl.col("_pr_nan")).then(NAN).otherwise(pl.col(c)).alias(c)
            for c in ("prob_pred", "prob_true")
        )
        .drop("_pr_nan")
    )


def _probabilities(  # type: ignore[no-untyped-def]
    log: FrameLike, by: str | Iterable[str] | None, columns: LogColumns, weight: ColumnLike | None
):
    """The validated log, its usable rows (probabilities checked) and the group keys.

    With a ``weight`` column the rows carry ``_pr_weight``; rows with a null or zero
    weight are dropped (a NaN score is kept: it still makes its group NaN).
    """
    data = read_log(log, by=by, columns=columns, weight=weight)
    usable = pl.col(SCORE).is_not_null() & pl.col(POSITIVE).is_not_null()
    if weight is not None:
        usable = usable & usable_weight()
    check = fail_if(not_probability(pl.col(SCORE)).any(), probability_message(repr(columns.score)))
    frame = data.frame.filter(unique_rows(data.schema, data.columns)).filter(usable).filter(check)
    return data, frame, list(data.groups)


@validated
def calibration_curve(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None = None,
    n_bins: int = 5,
    strategy: Strategy = "uniform",
    weight: ColumnLike | None = None,
    **columns: Unpack[LogNames],
) -> pl.LazyFrame:
    """Reliability curve of each group: mean score against share of positives per score bin.

    The points of scikit-learn's ``calibration_curve(y_true, y_prob, n_bins=n_bins,
    strategy=strategy)`` (its ``prob_pred`` and ``prob_true``), with the bins' index and
    count; see the module docstring for the bins. A log with a class column gives one
    curve per class (``class`` joins the keys): the class-``i`` scores, positive where
    ``label == i``; filter the class you want (for a binary log, the positive class).

    Parameters
    ----------
    log
        Score log (``DataFrame`` or ``LazyFrame``) in the contract's long format; scores
        must be probabilities in ``[0, 1]``.
    by
        Keyword-only grouping columns; ``None`` (default) = (dataset, model, repeat, fold)
        of the columns the log has (``model`` and ``fold`` always), ``()`` = one group,
        a name or names = those.
    n_bins
        Number of bins (before empty ones are dropped).
    strategy
        ``"uniform"`` (equal-width bins on [0, 1]) or ``"quantile"`` (equal-count bins
        from the group's score percentiles; weighted quantiles with ``weight``).
    weight
        Case weights, a column name or an expression (finite, ``>= 0``): ``prob_pred``
        and ``prob_true`` are then weighted means and the bin's total weight is the
        extra column ``weight`` (see the module docstring). Null or zero weights drop
        the row.
    **columns
        Names of the log's columns, as keywords: ``model``, ``fold``, ``class_``,
        ``score``, ``label``, ``sample``, ``dataset``, ``repeat`` (each defaults to its
        own name).

    Returns
    -------
    pl.LazyFrame
        One row per group and non-empty bin: by…, ``bin`` (0-based, ``Int64``),
        ``prob_pred`` (mean score), ``prob_true`` (share of positives), ``n`` (rows in
        the bin) and, with ``weight``, ``weight`` (their total weight), sorted. A group
        holding a NaN score has NaN ``prob_pred`` and ``prob_true``.

    Raises
    ------
    ValueError
        A column is missing, a bad ``n_bins``/``strategy``, or (when the query runs) a
        score outside ``[0, 1]`` or a negative, NaN or infinite weight.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> log = pl.DataFrame({
    ...     "model": "m", "fold": 0,
    ...     "score": [0.1, 0.2, 0.4, 0.6, 0.8, 0.9],
    ...     "label": [0, 0, 1, 0, 1, 1],
    ... })
    >>> pr.calibration_curve(log, n_bins=2).collect()
    shape: (2, 6)
    ┌───────┬──────┬─────┬───────────┬───────────┬─────┐
    │ model ┆ fold ┆ bin ┆ prob_pred ┆ prob_true ┆ n   │
    │ ---   ┆ ---  ┆ --- ┆ ---       ┆ ---       ┆ --- │
    │ str   ┆ i32  ┆ i64 ┆ f64       ┆ f64       ┆ i64 │
    ╞═══════╪══════╪═════╪═══════════╪═══════════╪═════╡
    │ m     ┆ 0    ┆ 0   ┆ 0.233333  ┆ 0.333333  ┆ 3   │
    │ m     ┆ 0    ┆ 1   ┆ 0.766667  ┆ 0.666667  ┆ 3   │
    └───────┴──────┴─────┴───────────┴───────────┴─────┘
    """
    _check_bins(n_bins, strategy)
    names = columns_of(columns, caller="calibration_curve")
    data, frame, keys = _probabilities(log, by, names, weight)
    if data.has_class and data.class_ not in keys:
        keys.append(data.class_)
    w = None if weight is None else WEIGHT
    curve = binned(frame, keys, SCORE, POSITIVE, n_bins, strategy, w)
    out = [k for k in keys if k in data.by or k == data.class_]
    sizes = ["n"] if weight is None else ["n", "weight"]
    return curve.sort(*keys, "bin").select(*out, "bin", "prob_pred", "prob_true", *sizes)


def _gaps(curve: pl.LazyFrame, keys: list[str], size: str = "n") -> pl.LazyFrame:
    """Per group: ECE (the ``size``-weighted mean gap of the bins) and MCE (the largest)."""
    gap = (pl.col("prob_true") - pl.col("prob_pred")).abs()
    n = pl.col(size).cast(pl.Float64)
    return curve.group_by(keys).agg(ece=(n * gap).sum() / n.sum(), mce=gap.max())


def sample_message(sample: str, names: Iterable[str]) -> str:
    """The error for a multiclass group's top-label ECE in a log without sample ids."""
    return (
        f"polaroc: calibration's top-label ece and mce of a group of three or more classes "
        f"need the sample column {sample!r} to tie each sample's class rows together (its "
        f"highest score), and the log has none (it has: {', '.join(names)}); add a sample "
        f"id column or pass sample=<column>. The Brier score and log loss need no sample "
        f"ids: pr.evaluate(log) gives them per fold."
    )


def _top_label(
    frame: pl.LazyFrame, keys: list[str], class_: str, sample: str, weight: str | None
) -> pl.LazyFrame:
    """Guo et al.'s top label: per (keys, sample), the highest score and its row's fields.

    Ties go to the smallest class; the row gives whether its class is the label and,
    with ``weight``, its weight.
    """
    order = [pl.col(SCORE), pl.col(class_)]

    def top(column: str) -> pl.Expr:
        return pl.col(column).sort_by(order, descending=[True, False]).first().alias(column)

    fields = [top(POSITIVE)] if weight is None else [top(POSITIVE), top(weight)]
    return frame.group_by(*keys, sample).agg(pl.col(SCORE).max(), *fields)


@validated
def calibration(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None = None,
    n_bins: int = 10,
    strategy: Strategy = "uniform",
    weight: ColumnLike | None = None,
    **columns: Unpack[LogNames],
) -> pl.LazyFrame:
    """Per group: the Brier score, log loss, expected and maximum calibration error.

    Binary groups (two classes; a log with or without the negative class's rows): on the
    positive class's scores (a log with a class column: the larger class value's rows, as
    :func:`polaroc.evaluate`'s average precision; without: the label is the indicator),

    * ``brier`` = Σ w (s − y)² / Σ w: scikit-learn's ``brier_score_loss(y, s,
      sample_weight=w)`` (w = 1 without weights, here and below);
    * ``log_loss`` = −Σ w log(probability given to the outcome) / Σ w, the probabilities
      clipped to ``[eps, 1 − eps]``: scikit-learn's ``log_loss(y, s, sample_weight=w)``;
    * ``ece`` = Σ_b (W_b / W) |prob_true_b − prob_pred_b| and ``mce`` = max_b of the
      same gap over :func:`calibration_curve`'s bins (Naeini et al. 2015), W_b the
      bin's total weight (its count without weights).

    Groups of three or more classes (needs every class's score rows):

    * ``brier`` = Σ over samples of w Σ_k (s_k − [y = k])² / Σ w (scikit-learn's
      multiclass ``brier_score_loss``, not halved);
    * ``log_loss`` = −Σ w log(true class's score) / Σ w (clipped as above);
    * ``ece``, ``mce`` on the top label (Guo et al. 2017, eq. 3 and 5): each sample's
      highest score (ties: the smallest class) against whether that class is its label,
      binned as above. Finding a sample's highest score needs its class rows tied
      together by the ``sample`` column: a log with a class column but none raises
      when the query meets a group of three or more classes (binary groups need no
      sample ids).

    Parameters
    ----------
    log
        Score log in the contract's long format; scores must be probabilities.
    by
        Keyword-only grouping columns; ``None`` (default) = (dataset, model, repeat, fold)
        of the columns the log has (``model`` and ``fold`` always), ``()`` = one group,
        a name or names = those.
    n_bins, strategy
        The bins of the ECE and MCE (see :func:`calibration_curve`).
    weight
        Case weights, a column name or an expression (finite, ``>= 0``; one weight per
        sample, on each of its class rows): every mean above is then weighted, the
        quantile edges too (see the module docstring). Integer weights equal repeated
        rows, a weight of 0 (or null) drops the row, scaling the weights changes
        nothing.
    **columns
        Names of the log's columns, as keywords: ``model``, ``fold``, ``class_``,
        ``score``, ``label``, ``sample``, ``dataset``, ``repeat`` (each defaults to its
        own name).

    Returns
    -------
    pl.LazyFrame
        One row per group: by…, ``n_classes``, ``brier``, ``log_loss``, ``ece``,
        ``mce`` (lower is better for all four). Null for a group with one class only,
        NaN for a group holding a NaN score.

    Raises
    ------
    ValueError
        A missing column, bad ``n_bins``/``strategy``, or, when the query runs: a score
        outside ``[0, 1]`` (naming the column), a negative, NaN or infinite weight, or a
        group of three or more classes in a log without the ``sample`` column (naming it).

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> log = pl.DataFrame({
    ...     "model": "m", "fold": 0,
    ...     "score": [0.1, 0.2, 0.4, 0.6, 0.8, 0.9],
    ...     "label": [0, 0, 1, 0, 1, 1],
    ... })
    >>> pr.calibration(log, n_bins=2).collect()
    shape: (1, 7)
    ┌───────┬──────┬───────────┬──────────┬──────────┬─────┬─────┐
    │ model ┆ fold ┆ n_classes ┆ brier    ┆ log_loss ┆ ece ┆ mce │
    │ ---   ┆ ---  ┆ ---       ┆ ---      ┆ ---      ┆ --- ┆ --- │
    │ str   ┆ i32  ┆ i64       ┆ f64      ┆ f64      ┆ f64 ┆ f64 │
    ╞═══════╪══════╪═══════════╪══════════╪══════════╪═════╪═════╡
    │ m     ┆ 0    ┆ 2         ┆ 0.136667 ┆ 0.414932 ┆ 0.1 ┆ 0.1 │
    └───────┴──────┴───────────┴──────────┴──────────┴─────┴─────┘
    """
    _check_bins(n_bins, strategy)
    names = columns_of(columns, caller="calibration")
    class_, label = names.class_, names.label
    data, frame, keys = _probabilities(log, by, names, weight)
    w = None if weight is None else WEIGHT
    size = "n" if w is None else "weight"
    if data.has_class:
        top_class = pl.col(class_) == pl.col(class_).max().over(keys)
        per_group = group_scores(frame, keys, class_=class_, label=label, weight=w)
    else:
        top_class, per_group = pl.lit(True), group_scores(frame, keys, weight=w)
    two = binned(frame.filter(top_class), keys, SCORE, POSITIVE, n_bins, strategy, w)
    gaps = _gaps(two, keys, size).rename({"ece": "_pr_ece2", "mce": "_pr_mce2"})
    table = per_group.join(gaps, on=keys, how="left", nulls_equal=True)
    if data.has_class and data.has(names.sample):
        top = _top_label(frame, keys, class_, names.sample, w)
        gaps_k = _gaps(binned(top, keys, SCORE, POSITIVE, n_bins, strategy, w), keys, size)
        table = table.join(
            gaps_k.rename({"ece": "_pr_ece_k", "mce": "_pr_mce_k"}),
            on=keys,
            how="left",
            nulls_equal=True,
        )
    else:
        if data.has_class:
            message = sample_message(names.sample, data.schema.names())
            table = table.filter(fail_if((pl.col("n_classes") > 2).any(), message))
        table = table.with_columns(
            _pr_ece_k=pl.lit(None, pl.Float64), _pr_mce_k=pl.lit(None, pl.Float64)
        )
    many = pl.col("n_classes") > 2
    defined = pl.col("brier").is_not_null() | pl.col("brier").is_nan()
    nan = pl.col("brier").is_nan()

    def pick(name: str) -> pl.Expr:
        value = pl.when(many).then(pl.col(f"_pr_{name}_k")).otherwise(pl.col(f"_pr_{name}2"))
        return pl.when(defined).then(pl.when(nan).then(NAN).otherwise(value)).alias(name)

    return table.select(*data.by, "n_classes", "brier", "log_loss", pick("ece"), pick("mce")).sort(
        data.by or [], maintain_order=True
    )
