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
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

import numpy as np
import polars as pl

from polaroc._input import FrameLike, LogColumns, fail_if
from polaroc._log import POSITIVE, SCORE, read_log, unique_rows
from polaroc.metrics.scoring import group_scores, not_probability, probability_message

__all__ = ["calibration", "calibration_curve"]

Strategy = Literal["uniform", "quantile"]
NAN = float("nan")
_CONF, _HIT = "_pr_confidence", "_pr_hit"


def _check_bins(n_bins: int, strategy: str) -> None:
    if isinstance(n_bins, bool) or not isinstance(n_bins, int) or n_bins < 1:
        msg = f"n_bins must be a positive integer, got {n_bins!r}"
        raise ValueError(msg)
    if strategy not in ("uniform", "quantile"):
        msg = f"strategy must be 'uniform' or 'quantile', got {strategy!r}"
        raise ValueError(msg)


def _bin_of(s: pl.Expr, keys: list[str], n_bins: int, strategy: str) -> pl.Expr:
    """The 0-based bin of each score: the number of inner edges strictly below it."""
    inner = np.linspace(0.0, 1.0, n_bins + 1)[1:-1]
    if strategy == "uniform":
        edges = [pl.lit(float(e)) for e in inner]
    else:
        edges = [s.quantile(float(q), interpolation="linear").over(keys) for q in inner]
    if not edges:
        return pl.lit(0, pl.Int64)
    return pl.sum_horizontal([(s > e).cast(pl.Int64) for e in edges])


def binned(
    frame: pl.LazyFrame, keys: list[str], s: str, y: str, n_bins: int, strategy: str
) -> pl.LazyFrame:
    """Per (keys, bin): ``prob_pred``, ``prob_true``, ``n`` of scores ``s`` and outcomes ``y``.

    A group holding a NaN score gets NaN ``prob_pred`` and ``prob_true`` in every bin.
    """
    score = pl.col(s)
    nan = score.is_nan().any().over(keys)
    return (
        frame.with_columns(bin=_bin_of(score, keys, n_bins, strategy), _pr_nan=nan)
        .group_by(*keys, "bin")
        .agg(
            prob_pred=score.mean(),
            prob_true=pl.col(y).cast(pl.Float64).mean(),
            n=pl.len().cast(pl.Int64),
            _pr_nan=pl.col("_pr_nan").first(),
        )
        .with_columns(
            pl.when(pl.col("_pr_nan")).then(NAN).otherwise(pl.col(c)).alias(c)
            for c in ("prob_pred", "prob_true")
        )
        .drop("_pr_nan")
    )


def _probabilities(log: FrameLike, by: str | Iterable[str] | None, columns: LogColumns):  # type: ignore[no-untyped-def]
    """The validated log, its usable rows (probabilities checked) and the group keys."""
    data = read_log(log, by=by, columns=columns)
    usable = pl.col(SCORE).is_not_null() & pl.col(POSITIVE).is_not_null()
    check = fail_if(not_probability(pl.col(SCORE)).any(), probability_message(repr(columns.score)))
    frame = data.frame.filter(unique_rows(data.schema, data.columns)).filter(usable).filter(check)
    return data, frame, list(data.groups)


def calibration_curve(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None = None,
    n_bins: int = 5,
    strategy: Strategy = "uniform",
    model: str = "model",
    fold: str = "fold",
    class_: str = "class",
    score: str = "score",
    label: str = "label",
    dataset: str = "dataset",
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
        from the group's score percentiles).
    model, fold, class_, score, label, dataset
        Names of the log's columns.

    Returns
    -------
    pl.LazyFrame
        One row per group and non-empty bin: by…, ``bin`` (0-based, ``Int64``),
        ``prob_pred`` (mean score), ``prob_true`` (share of positives), ``n`` (rows in
        the bin), sorted. A group holding a NaN score has NaN ``prob_pred`` and
        ``prob_true``.

    Raises
    ------
    ValueError
        A column is missing, a bad ``n_bins``/``strategy``, or (when the query runs) a
        score outside ``[0, 1]``.

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
    columns = LogColumns(
        model=model, fold=fold, class_=class_, score=score, label=label, dataset=dataset
    )
    data, frame, keys = _probabilities(log, by, columns)
    if data.has_class and data.class_ not in keys:
        keys.append(data.class_)
    curve = binned(frame, keys, SCORE, POSITIVE, n_bins, strategy)
    out = [k for k in keys if k in data.by or k == data.class_]
    return curve.sort(*keys, "bin").select(*out, "bin", "prob_pred", "prob_true", "n")


def _gaps(curve: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
    gap = (pl.col("prob_true") - pl.col("prob_pred")).abs()
    n = pl.col("n").cast(pl.Float64)
    return curve.group_by(keys).agg(ece=(n * gap).sum() / n.sum(), mce=gap.max())


def calibration(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None = None,
    n_bins: int = 10,
    strategy: Strategy = "uniform",
    model: str = "model",
    fold: str = "fold",
    class_: str = "class",
    score: str = "score",
    label: str = "label",
    dataset: str = "dataset",
    sample: str = "sample",
) -> pl.LazyFrame:
    """Per group: the Brier score, log loss, expected and maximum calibration error.

    Binary groups (two classes; a log with or without the negative class's rows): on the
    positive class's scores (a log with a class column: the larger class value's rows, as
    :func:`polaroc.evaluate`'s average precision; without: the label is the indicator),

    * ``brier`` = mean (s − y)²: scikit-learn's ``brier_score_loss(y, s)``;
    * ``log_loss`` = −mean log of the probability given to the outcome, clipped to
      ``[eps, 1 − eps]``: scikit-learn's ``log_loss(y, s)``;
    * ``ece``, ``mce``: the count-weighted mean and the maximum of
      |prob_true − prob_pred| over :func:`calibration_curve`'s bins.

    Groups of three or more classes (needs every class's score rows):

    * ``brier`` = mean over samples of Σ_k (s_k − [y = k])² (scikit-learn's multiclass
      ``brier_score_loss``, not halved);
    * ``log_loss`` = −mean log of the true class's score (clipped as above);
    * ``ece``, ``mce`` on the top label (Guo et al. 2017, eq. 3 and 5): each sample's
      highest score (ties: the smallest class) against whether that class is its label,
      binned as above. This needs the ``sample`` column; without one they are null.

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
    model, fold, class_, score, label, dataset, sample
        Names of the log's columns.

    Returns
    -------
    pl.LazyFrame
        One row per group: by…, ``n_classes``, ``brier``, ``log_loss``, ``ece``,
        ``mce`` (lower is better for all four). Null for a group with one class only,
        NaN for a group holding a NaN score.

    Raises
    ------
    ValueError
        A missing column, bad ``n_bins``/``strategy``, or (when the query runs) a score
        outside ``[0, 1]``, naming the column.

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
    columns = LogColumns(
        model=model,
        fold=fold,
        class_=class_,
        score=score,
        label=label,
        dataset=dataset,
        sample=sample,
    )
    data, frame, keys = _probabilities(log, by, columns)
    s, y = pl.col(SCORE), pl.col(POSITIVE)
    if data.has_class:
        top_class = pl.col(class_) == pl.col(class_).max().over(keys)
        per_group = group_scores(frame, keys, class_=class_, label=label)
    else:
        top_class, per_group = pl.lit(True), group_scores(frame, keys)
    two = binned(frame.filter(top_class), keys, SCORE, POSITIVE, n_bins, strategy)
    gaps = _gaps(two, keys).rename({"ece": "_pr_ece2", "mce": "_pr_mce2"})
    table = per_group.join(gaps, on=keys, how="left", nulls_equal=True)
    if data.has_class and data.has(columns.sample):
        order = [s, pl.col(class_)]
        top = frame.group_by(*keys, columns.sample).agg(
            pl.col(SCORE).max().alias(_CONF),
            y.sort_by(order, descending=[True, False]).first().alias(_HIT),
        )
        gaps_k = _gaps(binned(top, keys, _CONF, _HIT, n_bins, strategy), keys)
        table = table.join(
            gaps_k.rename({"ece": "_pr_ece_k", "mce": "_pr_mce_k"}),
            on=keys,
            how="left",
            nulls_equal=True,
        )
    else:
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
