"""Bootstrap standard errors and percentile intervals for any metric of a per-group table.

Hand & Till (2001, §3) recommend the bootstrap for M, whose pairwise terms A(i|j)
are dependent and have no simple variance (Efron & Tibshirani 1993). Here the
resampling is one lazy plan:

1. within each group, samples are numbered per label (the strata) by their id;
2. all replicates are drawn at once: for replicate ``b`` and draw ``k`` of a stratum
   of ``n`` samples, the sample drawn is ``hash(group, label, b, k; seed) mod n`` —
   a counter-based generator, so the draw is reproducible, independent of row
   order and engine, and needs no Python loop. The model is left out of the hash,
   so models that scored the same samples of a fold are resampled alike (a paired
   bootstrap: replicate-wise differences between models are meaningful);
3. the draws are joined back to every row of the drawn sample (a multiclass sample's
   class rows travel together), giving one resampled log with a replicate column;
4. the statistic (default :func:`polaroc.evaluate`) runs once on that log, grouped
   by the groups and the replicate, and the replicates are summarised.

With ``cluster=`` the units of steps 1–3 are clusters (several samples of one patient):
numbered within the stratum of the labels they hold
(:func:`polaroc.metrics.draws.cluster_units`), drawn by the same hash, every row of a
drawn cluster joined back (Davison & Hinkley 1997, §3.8; Field & Welsh 2007).

Memory and time grow with ``n_boot`` × the log's rows: the resampled log is
``n_boot`` copies of it in size.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Unpack

import polars as pl

from polaroc.core.args import validated
from polaroc.core.inputs import FrameLike, as_int, as_lazy
from polaroc.core.log import LogNames, columns_of, read_log, unique_rows
from polaroc.core.names import REPLICATE
from polaroc.core.sums import fixed_std  # the same bits in any order of the replicates
from polaroc.evaluation.per_fold import evaluate
from polaroc.metrics.draws import (
    DRAW,
    MIXED,
    SIZE,
    STRATUM,
    UNIT,
    cluster_units,
    draw_table,
    seed_of,
)

__all__ = ["bootstrap"]

_OFFSET = "_pr_offset"
_TOTAL = "_pr_total"
_J = "_pr_j"  # a sample's number within its cluster
_WIDTH = "_pr_width"  # the most samples in a cluster

Statistic = Callable[[pl.LazyFrame, list[str]], pl.LazyFrame]


def _check_arguments(n_boot: int, seed: int | None) -> tuple[int, int]:
    """``n_boot`` (at least 2 replicates) and the seed of the draws (``None``: a fresh one)."""
    n_boot = as_int(n_boot, argument="n_boot", minimum=2, what="a number of replicates")
    return n_boot, seed_of(seed)


def resample(
    log: FrameLike,
    *,
    by: Sequence[str],
    label: str,
    sample: str | None,
    n_boot: int,
    seed: int,
    shared: Sequence[str] = (),
    cluster: str | None = None,
    design: Sequence[str] = (),
) -> pl.LazyFrame:
    """Stratified bootstrap replicates of ``log`` as one frame with a replicate column.

    Within each group of ``by``, the samples of each label are drawn with
    replacement (as many as the stratum holds) ``n_boot`` times. ``sample`` ties a
    sample's rows together; ``None`` means every row is a sample (numbered in row
    order). ``design``: the columns that name a sample with ``sample`` in a group of
    ``by`` (dataset, repeat, fold not in ``by``: sample ids restart in each), so that
    a group pooling folds keeps the samples of different folds apart. In the result
    the ``sample`` column (or a new ``"sample"`` column)
    numbers the draws, unique within a group across every replicate (replicate b's
    ids follow replicate b − 1's), so a replicate is a valid log for every table,
    whatever its key check; rows with a null
    sample id are not resampled. The draws do not depend on the ``shared`` columns
    of ``by``: groups that differ only in them (e.g. two models scored on the same
    fold) draw the same sample positions in every replicate.

    With ``cluster``, the units drawn are the clusters of each group, every sample of
    a drawn cluster with all its rows, stratified by the labels a cluster holds
    (:func:`polaroc.metrics.draws.cluster_units`); a drawn cluster's samples get ids
    (draw id) · w + j, w the most samples in a cluster, j the sample's number in it.
    """
    strata = [*by, label]
    frame = as_lazy(log)
    if sample is None:
        sample = "sample"
        number = pl.int_range(pl.len(), dtype=pl.Int64).over(strata)
        within = pl.int_range(pl.len(), dtype=pl.Int64)
    else:  # a sample is (design…, sample): numbered in that order (a null id: no number)
        key = pl.col(sample)
        if design:
            key = pl.when(key.is_not_null()).then(pl.struct(*design, sample))
        number = key.rank("dense").over(strata).cast(pl.Int64) - 1
        within = key.rank("dense").cast(pl.Int64) - 1
    rows = frame.with_columns(number.alias(UNIT))
    keys = strata
    hashed: list[str | pl.Expr] = [c for c in strata if c not in shared]
    if cluster is not None:
        rows = cluster_units(rows, by, label, cluster, position=UNIT)
        rows = rows.with_columns(within.over([*by, cluster]).alias(_J))
        keys = [*by, STRATUM, MIXED]
        hashed = [*(c for c in by if c not in shared), pl.col(STRATUM).alias(label)]
    rows = rows.cache()
    sizes = rows.group_by(keys).agg((pl.col(UNIT).max() + 1).alias(SIZE))
    # the strata's draws are numbered one after the other within a group, and the
    # replicates one after the other: a drawn sample's id is unique within its group
    # across all replicates, so each replicate, and all of them together, is a log
    # with unique keys for every table (whose key checks know nothing of replicates)
    before = pl.col(SIZE).cum_sum() - pl.col(SIZE)
    total = pl.col(SIZE).sum()
    sizes = sizes.with_columns(
        (before.over(by) if by else before).alias(_OFFSET),
        (total.over(by) if by else total).alias(_TOTAL),
    )
    draws = draw_table(sizes, hashed, n_boot, seed)
    drawn = draws.join(rows.drop(sample, strict=False), on=[*keys, UNIT], nulls_equal=True)
    ids = pl.col(_OFFSET) + pl.col(REPLICATE) * pl.col(_TOTAL) + pl.col(DRAW)
    if cluster is not None:
        width = rows.select((pl.col(_J).max() + 1).alias(_WIDTH))
        drawn = drawn.join(width, how="cross")
        ids = ids * pl.col(_WIDTH) + pl.col(_J)
    return drawn.with_columns(ids.alias(sample)).drop(
        UNIT, SIZE, DRAW, _OFFSET, _TOTAL, STRATUM, MIXED, _J, _WIDTH, strict=False
    )


def _void_incomplete(
    replicates: pl.LazyFrame,
    frame: pl.LazyFrame,
    drawn: pl.LazyFrame,
    by: list[str],
    label: str,
) -> pl.LazyFrame:
    """``replicates`` with a null value where the replicate lost one of its group's labels.

    Only a clustered replicate can: a label held only by clusters of several labels is
    missing from the replicates that draw none of them, and the statistic must not be
    read on fewer classes than the group has.
    """
    labels = pl.col(label).drop_nulls().n_unique().alias("_pr_labels")
    drawn_labels = drawn.group_by([*by, REPLICATE]).agg(labels)
    if by:
        full = frame.group_by(by).agg(labels.alias("_pr_all"))
        counted = drawn_labels.join(full, on=by, how="left", nulls_equal=True)
    else:
        counted = drawn_labels.join(frame.select(labels.alias("_pr_all")), how="cross")
    complete = pl.col("_pr_labels") == pl.col("_pr_all")
    flags = counted.select(*by, REPLICATE, complete.alias("_pr_complete"))
    kept = pl.when(pl.col("_pr_complete")).then(pl.col("_v")).alias("_v")
    joined = replicates.join(flags, on=[*by, REPLICATE], how="left", nulls_equal=True)
    return joined.with_columns(kept).drop("_pr_complete")


def _long(
    table: pl.LazyFrame, index: list[str], metrics: Sequence[str], value: str
) -> pl.LazyFrame:
    values = [pl.col(m).cast(pl.Float64) for m in metrics]
    return table.select(*index, *values).unpivot(
        on=list(metrics), index=index, variable_name="metric", value_name=value
    )


@validated
def bootstrap(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None = None,
    metrics: str | Sequence[str] = ("auc",),
    statistic: Statistic | None = None,
    n_boot: int = 2000,
    seed: int | None = None,
    alpha: float = 0.05,
    threshold: float = 0.5,
    cluster: str | None = None,
    **columns: Unpack[LogNames],
) -> pl.LazyFrame:
    """Bootstrap standard errors and percentile intervals, per group and metric.

    Samples are resampled with replacement within each group, stratified by label
    (each replicate keeps the group's class counts), and the statistic is
    recomputed on every replicate: the standard error is the replicates' standard
    deviation and the interval the ``alpha/2`` and ``1 − alpha/2`` quantiles of
    their values (Efron & Tibshirani's percentile interval). Hand & Till (2001,
    §3) recommend this for M, whose pairwise terms are dependent.

    ``n_boot = 2000`` by default (the package's one default, pROC's): about 200
    replicates give a standard error to within a few per cent, but a 95% percentile
    interval rests on the ~50 most extreme replicates at each end, for which Efron &
    Tibshirani advise 1000 or more. Time and memory grow with ``n_boot`` × the log's
    rows (the replicates are one resampled log), so lower it for large logs when only
    the SE is needed.

    Parameters
    ----------
    log
        ``DataFrame`` or ``LazyFrame`` in the long format. A log with a class
        column needs the ``sample`` column, so that a sample's class rows are
        resampled together; in a log without one, every row is a sample.
    by
        Grouping columns (keyword-only); ``None`` (default) = ``(dataset, model, repeat,
        fold)`` of the columns the log has (``model`` and ``fold`` always); ``by=()`` is
        one group.
    metrics
        Columns of the statistic's table to summarise (default ``"auc"``, i.e. M).
    statistic
        ``statistic(log, by) -> LazyFrame`` with one row per ``by`` group; default
        ``pr.evaluate(log, by=by, threshold=threshold, **columns)``. Any table
        function works, e.g. ``lambda log, by: pr.multiclass_auc(log, by=by)``.
    n_boot
        Number of replicates.
    seed
        Seed of the draws: the same seed gives the same replicates (with the same
        Polars version, whose hash function the draws use); ``None`` (default) draws a
        fresh one (NumPy's convention).
    alpha
        The interval is the central ``1 − alpha`` percentile interval.
    threshold
        Passed to the default statistic.
    cluster
        A column grouping samples into clusters (several samples per patient, image or
        user), or ``None`` (default: every sample on its own). Each replicate then draws
        whole clusters — every sample of a drawn cluster with all its rows, every model
        alike — the cluster bootstrap (Davison & Hinkley 1997, §3.8; Field & Welsh
        2007), whose spread accounts for the correlation within clusters that makes
        the samples' bootstrap too narrow (Obuchowski 1997 for the AUC). A cluster is a
        value of the column within a group of ``by`` (a patient seen in two folds pooled
        by ``by=()`` is one cluster). The stratification generalises the samples': a
        cluster whose samples hold one label is drawn among that label's clusters, the
        clusters holding several labels among themselves, each stratum keeping its
        number of clusters; with every sample its own cluster the replicates, for a
        given seed, are exactly those without ``cluster``. A replicate that misses a
        class gives the statistic's null and is not counted in ``n_boot``. The column
        must hold no null and one value per sample (all its class rows and models).
    **columns
        Names of the log's columns, as keywords: ``model``, ``fold``, ``class_``,
        ``score``, ``label``, ``sample``, ``dataset``, ``repeat`` (each defaults to its
        own name).

    Returns
    -------
    pl.LazyFrame
        by…, ``metric``, ``estimate`` (the statistic on the log itself), ``se``,
        ``ci_low``, ``ci_high``, ``n_boot`` (replicates with a non-null value),
        sorted by group and metric.

    Raises
    ------
    ValueError
        A metric is not a column of the statistic's table; the log has a class
        column but no sample column; ``n_boot``, ``seed`` or ``alpha`` is invalid;
        the ``cluster`` column is missing, holds a null or varies within a sample.

    Examples
    --------
    >>> import numpy as np
    >>> import polars as pl
    >>> import polaroc as pr
    >>> rng = np.random.default_rng(0)
    >>> y = rng.random(200) < 0.5
    >>> log = pl.DataFrame({"model": "m", "fold": 0, "score": rng.normal(size=200) + y, "label": y})
    >>> out = pr.bootstrap(log, metrics=["auc", "error"], n_boot=200, seed=1).collect()
    >>> out.select("metric", "estimate", "se", "ci_low", "ci_high", "n_boot")
    shape: (2, 6)
    ┌────────┬──────────┬──────────┬──────────┬──────────┬────────┐
    │ metric ┆ estimate ┆ se       ┆ ci_low   ┆ ci_high  ┆ n_boot │
    │ ---    ┆ ---      ┆ ---      ┆ ---      ┆ ---      ┆ ---    │
    │ str    ┆ f64      ┆ f64      ┆ f64      ┆ f64      ┆ i64    │
    ╞════════╪══════════╪══════════╪══════════╪══════════╪════════╡
    │ auc    ┆ 0.784801 ┆ 0.030045 ┆ 0.732366 ┆ 0.844234 ┆ 200    │
    │ error  ┆ 0.295    ┆ 0.030946 ┆ 0.225    ┆ 0.350125 ┆ 200    │
    └────────┴──────────┴──────────┴──────────┴──────────┴────────┘

    Five samples per patient, sharing the patient's effect on the score and mostly
    the patient's label: resampling patients gives the wider standard error.

    >>> rng = np.random.default_rng(0)
    >>> patient = np.repeat(np.arange(40), 5)
    >>> y = rng.random(200) < rng.choice([0.2, 0.8], 40)[patient]
    >>> score = y + rng.normal(size=40)[patient] + rng.normal(size=200)
    >>> log = pl.DataFrame({"model": "m", "fold": 0, "sample": np.arange(200),
    ...                     "patient": patient, "score": score, "label": y})
    >>> [round(pr.bootstrap(log, n_boot=500, seed=1, cluster=c).collect()["se"].item(), 3)
    ...  for c in (None, "patient")]
    [0.036, 0.047]
    """
    n_boot, seed = _check_arguments(n_boot, seed)
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    names = columns_of(columns, caller="bootstrap")
    model, label, sample = names.model, names.label, names.sample
    parsed = read_log(log, by=by, columns=names, cluster=cluster)
    if parsed.has_class and not parsed.has(sample):
        msg = (
            f"bootstrap needs the {sample!r} column to resample a sample's class rows "
            f"together, and the log has none (it has: {', '.join(parsed.schema.names())}); "
            "pass sample=<column> or add a sample id."
        )
        raise ValueError(msg)
    if statistic is None:

        def statistic(frame: pl.LazyFrame, groups: list[str]) -> pl.LazyFrame:
            return evaluate(frame, by=groups, threshold=threshold, **columns)

    # repeated keys are refused here, in the user's columns (a replicate's check would
    # name the replicate column and list one key once per replicate)
    frame = parsed.frame.select(parsed.schema.names()).filter(
        unique_rows(parsed.schema, parsed.columns)
    )
    point = statistic(frame, parsed.by)
    available = point.collect_schema().names()
    unknown = [m for m in metrics if m not in available]
    if unknown:
        msg = (
            f"the statistic's table has no column {', '.join(map(repr, unknown))}; "
            f"choose metrics among: {', '.join(available)}"
        )
        raise ValueError(msg)

    drawn = resample(
        frame,
        by=parsed.by,
        label=label,
        sample=sample if parsed.has(sample) else None,
        n_boot=n_boot,
        seed=seed,
        shared=[model],
        cluster=cluster,
        design=[
            c
            for c in (names.dataset, names.repeat, names.fold)
            if parsed.has(c) and c not in parsed.by
        ],
    )
    keys = [*parsed.by, REPLICATE]
    replicates = _long(statistic(drawn, keys), keys, metrics, "_v")
    if cluster is not None:
        replicates = _void_incomplete(replicates, frame, drawn, parsed.by, label)
    v = pl.col("_v")
    summary = replicates.group_by([*parsed.by, "metric"]).agg(
        fixed_std(v).alias("se"),
        v.quantile(alpha / 2, interpolation="linear").alias("ci_low"),
        v.quantile(1 - alpha / 2, interpolation="linear").alias("ci_high"),
        v.is_not_null().sum().cast(pl.Int64).alias("n_boot"),
    )
    estimate = _long(point, parsed.by, metrics, "estimate")
    return estimate.join(summary, on=[*parsed.by, "metric"], how="left", nulls_equal=True).sort(
        *parsed.by, "metric"
    )
