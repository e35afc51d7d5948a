"""Confidence intervals on one ROC curve: the AUC, the curve, a threshold's coordinates.

pROC's ``ci.auc`` (DeLong), ``ci.se`` / ``ci.sp`` (a stratified bootstrap band of the
curve) and ``ci.thresholds`` (the bootstrap interval of sensitivity and specificity at
given thresholds) as an expression and two lazy tables (Robin et al. 2011). The
bootstrap tables draw every replicate at once (:mod:`polaroc.metrics.draws`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal, Unpack

import polars as pl
from scipy.stats import norm

from polaroc.core import counts
from polaroc.core.args import validated
from polaroc.core.inputs import ColumnLike, FrameLike, LogColumns
from polaroc.core.log import POSITIVE, SCORE, LogNames, columns_of, read_log
from polaroc.metrics.binary import auc, auc_se
from polaroc.metrics.draws import REPLICATE, check_replicates, seed_of, stratified_draws

__all__ = ["auc_ci", "coords_ci", "roc_ci"]

INF = float("inf")


def _check_level(level: float) -> float:
    if isinstance(level, bool) or not isinstance(level, int | float) or not 0 < level < 1:
        msg = f"level must be in (0, 1), e.g. 0.95 for a 95% interval; got {level!r}"
        raise ValueError(msg)
    return float(level)


@validated
def auc_ci(
    score: ColumnLike,
    positive: ColumnLike,
    *,
    level: float = 0.95,
    method: Literal["delong", "hanley_mcneil"] = "delong",
    cluster: ColumnLike | None = None,
) -> pl.Expr:
    """The AUC with its normal-theory confidence interval (pROC's ``ci.auc``).

    ci = AUC ∓ z₍₁₊level₎/₂ · SE, with SE DeLong's (DeLong, DeLong & Clarke-Pearson
    1988; pROC's ``ci.auc(method="delong")``) or Hanley & McNeil's (1982), clipped to
    [0, 1] as pROC clips it. Score first, then the positive indicator (scikit-learn's
    order is the reverse).

    Parameters
    ----------
    score, positive
        As for :func:`polaroc.auc`.
    level
        Confidence level (default 0.95).
    method
        ``"delong"`` (default) or ``"hanley_mcneil"``, as for :func:`polaroc.auc_se`.
    cluster
        Cluster ids (``"delong"`` only): Obuchowski's (1997) clustered SE, as for
        :func:`polaroc.auc_se`.

    Returns
    -------
    pl.Expr
        Aggregating struct expression named ``auc_ci`` with fields ``auc``,
        ``ci_low``, ``ci_high``: works in ``select``, ``group_by().agg()`` and
        ``over()``. A degenerate group is null; the bounds are null where the SE is
        (e.g. DeLong's with fewer than two positives or negatives); NaN scores give NaN.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> df = pl.DataFrame({
    ...     "score": [0.95, 0.86, 0.84, 0.89, 0.15, 0.13, 0.10],
    ...     "label": [True, True, True, False, False, False, False],
    ... })
    >>> df.select(pr.auc_ci("score", "label")).unnest("auc_ci")
    shape: (1, 3)
    ┌──────────┬──────────┬─────────┐
    │ auc      ┆ ci_low   ┆ ci_high │
    │ ---      ┆ ---      ┆ ---     │
    │ f64      ┆ f64      ┆ f64     │
    ╞══════════╪══════════╪═════════╡
    │ 0.833333 ┆ 0.468116 ┆ 1.0     │
    └──────────┴──────────┴─────────┘
    """
    z = float(norm.ppf((1.0 + _check_level(level)) / 2.0))
    value = auc(score, positive)
    half = z * auc_se(score, positive, method=method, cluster=cluster)
    return pl.struct(
        value.alias("auc"),
        (value - half).clip(0.0, 1.0).alias("ci_low"),
        (value + half).clip(0.0, 1.0).alias("ci_high"),
    ).alias("auc_ci")


# ------------------------------------------------------------------ bootstrap tables


def _binary_rows(
    log: FrameLike,
    by: str | Iterable[str] | None,
    positive_class: Any,
    caller: str,
    columns: LogColumns,
    cluster: str | None = None,
) -> tuple[pl.LazyFrame, list[str], list[str], list[str]]:
    """The usable rows of the positive class, the groups, the order keys and the class shown.

    The rows hold group…, keys, the class column (for a log with one), score and
    positive; the repeated-key check runs over every class's rows. The order keys
    number a group's samples for the draws: (dataset, model, repeat, fold, sample) of
    those the log has, but the groups'. With ``cluster``, the rows hold that column,
    checked by the log reading.
    """
    parsed = read_log(log, by=by, columns=columns, positive_class=positive_class, cluster=cluster)
    frame = parsed.binary(parsed.unique(), caller=caller)
    keys = [c for c in parsed.keys if c not in parsed.by]
    shown = [parsed.class_] if parsed.has_class else []
    usable = pl.col(SCORE).is_not_null() & pl.col(POSITIVE).is_not_null()
    kept = [*parsed.groups, *keys, *shown, *([cluster] if cluster else [])]
    rows = frame.filter(usable).select(*dict.fromkeys(kept), SCORE, POSITIVE)
    return rows, parsed.groups, [*parsed.groups, *keys], shown


def _finish(
    rows: pl.LazyFrame,
    groups: list[str],
    out: pl.LazyFrame,
    axis: str,
    at: list[float],
    values: list[str],
    shown: list[str],
) -> pl.LazyFrame:
    """One row per group and point, the contract's policies applied, sorted.

    A group without positives or negatives has null bounds; one holding a NaN score
    NaN bounds (the bootstrap of a NaN-scored group is not a number). ``shown``: the
    class column, whose value (the positive class read) follows the group's columns.
    """
    positive = pl.col(POSITIVE)
    flags = rows.group_by(groups).agg(
        *(pl.col(c).first() for c in shown),
        _pr_nan=pl.col(SCORE).is_nan().any(),
        _pr_ok=positive.any() & (~positive).any(),
    )
    grid = flags.join(pl.LazyFrame({axis: at}, schema={axis: pl.Float64}), how="cross")
    full = grid.join(out, on=[*groups, axis], how="left", nulls_equal=True)
    nan = pl.lit(float("nan"))
    voided = [
        pl.when(~pl.col("_pr_ok")).then(None).when("_pr_nan").then(nan).otherwise(c).alias(c)
        for c in values
    ]
    user = [g for g in groups if not g.startswith("_pr_")]
    out = full.select(*user, *shown, axis, *voided).unique(maintain_order=True)
    return out.sort(*user, axis)


def _quantiles(value: pl.Expr, level: float) -> dict[str, pl.Expr]:
    """PROC's summary of the replicates: R's type-7 quantiles (linear interpolation)."""
    tail = (1.0 - level) / 2.0
    return {
        "low": value.quantile(tail, interpolation="linear"),
        "median": value.quantile(0.5, interpolation="linear"),
        "high": value.quantile(1.0 - tail, interpolation="linear"),
    }


def _points(drawn: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
    """Every replicate's ROC points as (specificity, sensitivity), threshold by threshold.

    The table evaluator counts each replicate's scores (``collapse``: one entry per
    distinct score and class); at each, sensitivity = TP/N₊ and specificity = TN/N₋
    (the negatives below it) as pROC computes them (so equal inputs compare equal),
    and the threshold above every score adds (specificity 1, sensitivity 0).
    """
    rows = drawn.select(*keys, SCORE, POSITIVE)
    groups, found = counts.table(rows, keys, usable=pl.lit(True), collapse=True)
    c = counts.columns(weighted=True)
    points = found.join(groups.select(counts.GID, *keys), on=counts.GID).select(
        *keys,
        sensitivity=c.tp / c.n_pos,
        specificity=c.neg_below / c.n_neg,
    )
    start = groups.select(*keys, sensitivity=pl.lit(0.0), specificity=pl.lit(1.0))
    return pl.concat([points, start])


def _rates_at(drawn: pl.LazyFrame, keys: list[str], at: list[float]) -> pl.LazyFrame:
    """Each replicate's sensitivity and specificity at the thresholds ``at``.

    The list evaluator's entries at the thresholds (:func:`polaroc.core.counts.at_thresholds`):
    sensitivity = TP/N₊ (scored ``>= t``), specificity = TN/N₋ (scored below ``t``).
    """
    thresholds = pl.lit(pl.Series([list(dict.fromkeys([-INF, *at]))], dtype=pl.List(pl.Float64)))
    k = counts.listed()
    rates = pl.struct(threshold=k.score, _pr_se=k.tp / k.n_pos, _pr_sp=(k.n_neg - k.fp) / k.n_neg)
    entries = counts.in_list(pl.col(SCORE), pl.col(POSITIVE))
    at_grid = counts.at_thresholds(pl.col("_pr_entries"), thresholds).list.eval(rates)
    wanted = pl.LazyFrame({"threshold": at}, schema={"threshold": pl.Float64}).unique()
    return (
        drawn.group_by(keys)
        .agg(entries.alias("_pr_entries"))
        .select(*keys, at_grid.alias("_pr_rates"))
        .explode("_pr_rates")
        .unnest("_pr_rates")
        .join(wanted, on="threshold", how="semi", nulls_equal=True)
    )


def _read_off(
    points: pl.LazyFrame, keys: list[str], x: str, y: str, at: list[float]
) -> pl.LazyFrame:
    """``y`` at ``x = v`` for each v of ``at`` on every replicate's curve, as pROC's ``coords``.

    At a point of the curve the best ``y`` there; between two points linear
    interpolation along the curve (from the lowest ``y`` at the nearest lower ``x`` to
    the highest at the nearest higher ``x``): pROC's ``coords(input=x, ret=y)``.
    """
    ends = points.group_by([*keys, x]).agg(_pr_lo=pl.col(y).min(), _pr_hi=pl.col(y).max()).sort(x)
    targets = (
        points.select(keys)
        .unique()
        .join(pl.LazyFrame({"_pr_v": at}, schema={"_pr_v": pl.Float64}), how="cross")
        .sort("_pr_v")
    )
    lower = targets.join_asof(
        ends.rename({x: "_pr_x0", "_pr_lo": "_pr_y0", "_pr_hi": "_pr_top"}),
        left_on="_pr_v",
        right_on="_pr_x0",
        by=keys,
        strategy="backward",
        check_sortedness=False,
    )
    both = lower.sort("_pr_v").join_asof(
        ends.rename({x: "_pr_x1", "_pr_hi": "_pr_y1"}).drop("_pr_lo"),
        left_on="_pr_v",
        right_on="_pr_x1",
        by=keys,
        strategy="forward",
        check_sortedness=False,
    )
    x0, x1, y0, y1, v = (pl.col(c) for c in ("_pr_x0", "_pr_x1", "_pr_y0", "_pr_y1", "_pr_v"))
    value = (
        pl.when(x0 == v).then(pl.col("_pr_top")).otherwise(y1 + (v - x1) / (x0 - x1) * (y0 - y1))
    )
    return both.select(*keys, pl.col("_pr_v").alias(x), value.alias(y))


@validated
def roc_ci(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None = None,
    specificities: Sequence[float] | None = None,
    sensitivities: Sequence[float] | None = None,
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int | None = None,
    positive_class: Any = None,
    cluster: str | None = None,
    **columns: Unpack[LogNames],
) -> pl.LazyFrame:
    """Bootstrap confidence band of a ROC curve (pROC's ``ci.se`` / ``ci.sp``).

    The positives and the negatives of each group are resampled with replacement
    separately (stratified, pROC's default) ``n_boot`` times; on each replicate's
    curve the sensitivity is read at the given specificities (or the specificity at
    the given sensitivities) as pROC's ``coords`` reads it (the best value at a point
    of the curve, linear interpolation between points), and the band is the
    replicates' (1 − level)/2, ½ and (1 + level)/2 quantiles (R's default type 7): the
    percentile interval (Carpenter & Bithell 2000; Robin et al. 2011). All replicates
    run in one lazy plan. Draw it with :func:`polaroc.report.plot_inference.roc_band`.

    Parameters
    ----------
    log
        Score log in the contract's long format, read as one binary problem: the
        positive class's scores (see ``positive_class``).
    by
        Grouping; ``None`` (default) is ``(dataset, model, repeat, fold)`` of the
        columns the log has; ``()`` one curve over all rows.
    specificities, sensitivities
        The points at which to read the curve: give one of them. Neither: the
        specificities 0, 0.1, …, 1 (pROC's default; note that R's ``seq(0, 1, 0.1)``
        holds 0.30000000000000004 where this holds 0.3).
    n_boot
        Replicates (default 2000, pROC's).
    level
        Confidence level of the band (default 0.95).
    seed
        Seed of the draws; ``None`` draws a fresh one.
    positive_class
        For a log with a ``class`` column: the class whose scores are read, positive
        where ``label == positive_class`` (one-vs-rest for more classes). Default: the
        larger class value of each data set (1 over 0, ``True`` over ``False``); a log of
        more than two classes needs it. The output's ``class`` column states the class
        read. A log without a class column is binary: its label is the indicator.
    cluster
        A column grouping samples into clusters (several samples per patient, image or
        user), or ``None`` (default). Each replicate then draws whole clusters, every
        row of a drawn cluster (Davison & Hinkley 1997, §3.8; Field & Welsh 2007): a
        cluster of positives only among those, one of negatives only among those, a
        cluster holding both among the mixed ones, each stratum keeping its number of
        clusters; with every sample its own cluster the band is, for a given seed,
        exactly the one without ``cluster``. A cluster is a value of the column within
        a group of ``by``; it must hold no null and one value per sample.
    **columns
        Names of the log's columns, as keywords: ``model``, ``fold``, ``class_``,
        ``score``, ``label``, ``sample``, ``dataset``, ``repeat`` (each defaults to its
        own name). The samples are numbered for the draws in (dataset, model, repeat,
        fold, sample) order.

    Returns
    -------
    pl.LazyFrame
        by…, ``class`` (for a log with a class column: the positive class read),
        ``specificity`` (or ``sensitivity``), ``low``, ``median``, ``high``; sorted.
        Replicates whose curve is undefined (a group without positives or negatives) are
        left out, so such a group has null bounds.

    Examples
    --------
    >>> import numpy as np
    >>> import polars as pl
    >>> import polaroc as pr
    >>> rng = np.random.default_rng(0)
    >>> y = rng.random(200) < 0.4
    >>> log = pl.DataFrame({"model": "m", "fold": 0, "sample": np.arange(200),
    ...                     "score": rng.normal(size=200) + y, "label": y})
    >>> band = pr.roc_ci(log, specificities=[0.5, 0.9], n_boot=500, seed=1).collect()
    >>> band.select("specificity", "low", "median", "high").with_columns(pl.col("low",
    ...     "median", "high").round(2))
    shape: (2, 4)
    ┌─────────────┬──────┬────────┬──────┐
    │ specificity ┆ low  ┆ median ┆ high │
    │ ---         ┆ ---  ┆ ---    ┆ ---  │
    │ f64         ┆ f64  ┆ f64    ┆ f64  │
    ╞═════════════╪══════╪════════╪══════╡
    │ 0.5         ┆ 0.89 ┆ 0.96   ┆ 0.99 │
    │ 0.9         ┆ 0.21 ┆ 0.36   ┆ 0.57 │
    └─────────────┴──────┴────────┴──────┘
    """
    if specificities is not None and sensitivities is not None:
        msg = "roc_ci reads the curve at specificities or at sensitivities: give one of them"
        raise ValueError(msg)
    x, y = (
        ("sensitivity", "specificity")
        if sensitivities is not None
        else (
            "specificity",
            "sensitivity",
        )
    )
    chosen = sensitivities if sensitivities is not None else specificities
    at = [i / 10 for i in range(11)] if chosen is None else [float(v) for v in chosen]
    if not at or any(not 0.0 <= v <= 1.0 for v in at):
        msg = f"roc_ci reads {x} values in [0, 1]; got {at!r}"
        raise ValueError(msg)
    check_replicates(n_boot, "n_boot")
    seed = seed_of(seed)
    names = columns_of(columns, caller="roc_ci")
    rows, groups, order, shown = _binary_rows(log, by, positive_class, "roc_ci", names, cluster)
    drawn = stratified_draws(rows, [*groups, POSITIVE], order, n_boot, seed, cluster=cluster)
    keys = [*groups, REPLICATE]
    valid = (
        drawn.group_by(keys)
        .agg(_pr_ok=pl.col(POSITIVE).any() & (~pl.col(POSITIVE)).any())
        .filter("_pr_ok")
    )
    read = _read_off(_points(drawn, keys), keys, x, y, at).join(
        valid.drop("_pr_ok"), on=keys, nulls_equal=True
    )
    out = read.group_by([*groups, x]).agg(**_quantiles(pl.col(y), level))
    return _finish(rows, groups, out, x, at, ["low", "median", "high"], shown)


@validated
def coords_ci(
    log: FrameLike,
    thresholds: Sequence[float],
    *,
    by: str | Iterable[str] | None = None,
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int | None = None,
    positive_class: Any = None,
    cluster: str | None = None,
    **columns: Unpack[LogNames],
) -> pl.LazyFrame:
    """Bootstrap intervals of sensitivity and specificity at given thresholds.

    pROC's ``ci.thresholds`` (and ``ci.coords(input="threshold")``): on ``n_boot``
    stratified bootstrap replicates (positives and negatives resampled separately),
    sensitivity = P(score ≥ t | positive) and specificity = P(score < t | negative)
    at each threshold t — a sample is predicted positive iff its score ≥ t, as
    :func:`polaroc.confusion` and pROC — summarised by the replicates'
    (1 − level)/2, ½ and (1 + level)/2 quantiles (percentile intervals; Carpenter &
    Bithell 2000; Robin et al. 2011). All replicates run in one lazy plan.

    Parameters
    ----------
    log
        Score log, read as one binary problem, as for :func:`polaroc.roc_ci`.
    thresholds
        The thresholds (one or more numbers).
    by, n_boot, level, seed, positive_class, cluster
        As for :func:`polaroc.roc_ci` (``by=None``: ``(dataset, model, repeat, fold)`` of the
        columns the log has; keyword-only; ``cluster=``: whole clusters are drawn).
    **columns
        Names of the log's columns, as keywords: ``model``, ``fold``, ``class_``,
        ``score``, ``label``, ``sample``, ``dataset``, ``repeat`` (each defaults to its
        own name).

    Returns
    -------
    pl.LazyFrame
        by…, ``class`` (for a log with a class column), ``threshold``,
        ``specificity_low``, ``specificity_median``, ``specificity_high``,
        ``sensitivity_low``, ``sensitivity_median``, ``sensitivity_high``; sorted.

    Examples
    --------
    >>> import numpy as np
    >>> import polars as pl
    >>> import polaroc as pr
    >>> rng = np.random.default_rng(0)
    >>> y = rng.random(200) < 0.4
    >>> log = pl.DataFrame({"model": "m", "fold": 0, "sample": np.arange(200),
    ...                     "score": rng.normal(size=200) + y, "label": y})
    >>> out = pr.coords_ci(log, [0.5], n_boot=500, seed=1).collect()
    >>> out.select("threshold", "sensitivity_low", "sensitivity_high").with_columns(
    ...     pl.col("sensitivity_low", "sensitivity_high").round(2))
    shape: (1, 3)
    ┌───────────┬─────────────────┬──────────────────┐
    │ threshold ┆ sensitivity_low ┆ sensitivity_high │
    │ ---       ┆ ---             ┆ ---              │
    │ f64       ┆ f64             ┆ f64              │
    ╞═══════════╪═════════════════╪══════════════════╡
    │ 0.5       ┆ 0.59            ┆ 0.8              │
    └───────────┴─────────────────┴──────────────────┘
    """
    at = [float(t) for t in thresholds]
    if not at:
        msg = "coords_ci needs at least one threshold"
        raise ValueError(msg)
    check_replicates(n_boot, "n_boot")
    seed = seed_of(seed)
    names = columns_of(columns, caller="coords_ci")
    rows, groups, order, shown = _binary_rows(log, by, positive_class, "coords_ci", names, cluster)
    drawn = stratified_draws(rows, [*groups, POSITIVE], order, n_boot, seed, cluster=cluster)
    keys = [*groups, REPLICATE]
    rates = _rates_at(drawn, keys, at)
    summary = {}
    for name, column in (("specificity", "_pr_sp"), ("sensitivity", "_pr_se")):
        for k, v in _quantiles(pl.col(column).filter(pl.col(column).is_finite()), level).items():
            summary[f"{name}_{k}"] = v
    out = rates.group_by([*groups, "threshold"]).agg(**summary)
    return _finish(rows, groups, out, "threshold", at, list(summary), shown)
