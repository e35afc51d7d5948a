"""Resampling tests between two ROC curves: pROC's bootstrap and Venkatraman tests.

Both run every replicate in one lazy plan: a replicate column is crossed with the
samples and the random numbers come from a counter-based generator (a hash of the
group, replicate, sample position and seed), as :func:`polaroc.bootstrap` does, so
nothing loops over replicates in Python and the result does not depend on row order
or engine.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from functools import partial
from typing import Any, Unpack

import polars as pl

from polaroc.compare._boot_auc import boot_auc_sd
from polaroc.compare.delong import (
    Alternative,
    TwoModels,
    check_alternative,
    nan_unless_degenerate,
    tail_p,
    two_models,
)
from polaroc.compare.fold_table import Adjust, check_adjust, check_alpha, with_adjusted
from polaroc.core.args import validated
from polaroc.core.inputs import FrameLike
from polaroc.core.log import POSITIVE, SCORE, LogNames, columns_of, read_log
from polaroc.metrics.binary import auc
from polaroc.metrics.draws import (
    MIXED,
    REPLICATE,
    STRATUM,
    UNIT,
    check_replicates,
    cluster_units,
    replicates,
    seed_of,
    uniform,
)

__all__ = ["bootstrap_test", "venkatraman_test"]

SIDE = "_pr_side"  # 0: model a, 1: model b (unpaired rows)
SCORE_B = f"{SCORE}_b"
_BOOT = pl.Struct({"sd_diff": pl.Float64, "n_boot": pl.Int64})
_K = "_pr_k"
_STRATUM_CODE = "_pr_stratum_code"  # 0: positives only, 1: negatives only, 2: both


def _stacked(two: TwoModels, model: str, model_a: Any) -> pl.LazyFrame:
    """Unpaired rows with ``_pr_side`` 0 (model a) or 1 (model b)."""
    side = pl.when(pl.col(model) == model_a).then(0).otherwise(1).cast(pl.Int8)
    return two.rows.with_columns(side.alias(SIDE))


def _header(
    out: pl.LazyFrame,
    by: list[str],
    two: TwoModels,
    model_a: Any,
    model_b: Any,
    head: list[str],
    extras: list[str],
    alpha: float,
    adjust: str | None,
) -> pl.LazyFrame:
    """The comparison table's columns in order, with ``reject`` and ``p_adjusted``."""
    out = out.with_columns(model_a=pl.lit(model_a, two.dtype), model_b=pl.lit(model_b, two.dtype))
    columns = [*by, "model_a", "model_b", "n", "estimate", *head, "p_value", *extras]
    # m counts every group's test: one adjustment across the table's rows
    out = with_adjusted(out, columns, [], alpha, adjust)
    return out.sort(by) if by else out


def _per_group(frame: pl.LazyFrame, keys: list[str], **aggs: pl.Expr) -> pl.LazyFrame:
    return frame.group_by(keys).agg(**aggs) if keys else frame.select(**aggs)


@validated
def bootstrap_test(
    log: FrameLike,
    model_a: Any,
    model_b: Any,
    *,
    n_boot: int = 2000,
    paired: bool = True,
    seed: int | None = None,
    by: str | Iterable[str] | None = None,
    alternative: Alternative = "two-sided",
    alpha: float = 0.05,
    adjust: Adjust = None,
    positive_class: Any = None,
    cluster: str | None = None,
    **columns: Unpack[LogNames],
) -> pl.LazyFrame:
    """Bootstrap test of H₀: AUC_a = AUC_b (pROC's ``roc.test(method="bootstrap")``).

    The positives and the negatives are resampled with replacement separately (a
    stratified bootstrap, pROC's default ``boot.stratified=TRUE``) ``n_boot`` times;
    paired, both models are read on the same drawn samples, unpaired, each model's
    samples are drawn independently. With s the standard deviation of the replicates'
    AUC_a − AUC_b, D = (AUC_a − AUC_b) / s is compared with the standard normal
    (Hanley & McNeil 1983 in the bootstrap form of Robin et al. 2011, pROC; Carpenter &
    Bithell 2000 on bootstrap inference). Every replicate is computed at once in one
    lazy plan (no Python loop), with a counter-based generator: the same ``seed``
    gives the same replicates, whatever the row order or engine.

    Parameters
    ----------
    log
        Score log, read as by :func:`polaroc.delong_test` (paired on (``dataset``,
        ``repeat``, ``fold``, ``sample``) when ``paired``; a two-class log through
        its positive class).
    model_a, model_b
        Values of the ``model`` column to compare; ``estimate`` is AUC_a − AUC_b.
    n_boot
        Replicates (pROC's ``boot.n``, default 2000).
    paired
        ``True`` (default) for two models scored on the same samples.
    seed
        Seed of the draws; ``None`` draws a fresh one (results then vary run to run).
    by
        Keyword-only grouping, as for :func:`polaroc.delong_test` (``None``, the
        default: one test per data set, or over the pooled folds of a log without a
        ``dataset`` column; ``()`` one test; a ``repeat`` column is always added).
    alternative
        ``"two-sided"`` (default), ``"greater"`` (H₁: AUC_a > AUC_b) or ``"less"``.
    alpha, adjust
        Level of ``reject``; p-value adjustment across the rows, as in
        :func:`polaroc.delong_test`.
    positive_class
        As for :func:`polaroc.delong_test`: ``None`` reads a two-class log through
        its larger class value.
    cluster
        A column grouping samples into clusters (several samples per patient, image or
        user), or ``None`` (default). Each replicate then draws whole clusters of the
        group, every sample of a drawn cluster (Davison & Hinkley 1997, §3.8; Field &
        Welsh 2007) — paired, both models read the same drawn clusters — so that ``s``
        accounts for the correlation within clusters (Obuchowski 1997 for the AUC). The
        strata generalise the samples': a cluster of positives only is drawn among
        those, one of negatives only among those, one holding both among the mixed
        ones, each stratum keeping its number of clusters; with every sample its own
        cluster the replicates, for a given seed, are exactly those without
        ``cluster``. The column must hold no null and one value per sample (the same
        for both models); the log needs its ``sample`` column.
    **columns
        Names of the log's columns, as keywords: ``model``, ``fold``, ``class_``,
        ``score``, ``label``, ``sample``, ``dataset``, ``repeat`` (each defaults to its
        own name).

    Returns
    -------
    pl.LazyFrame
        One row per group: by…, ``model_a``, ``model_b``, ``n`` (samples: pairs, or
        both models' samples), ``estimate``, ``statistic`` (D), ``p_value``,
        [``p_adjusted``], ``reject``, ``auc_a``, ``auc_b``, ``sd_diff`` (s),
        ``n_boot`` (replicates with both AUCs defined), and the class read as in
        :func:`polaroc.delong_test` (a log with a class column). A degenerate group
        (fewer than one positive or negative) gives null statistics, even holding a
        NaN score; otherwise a NaN score gives NaN ones; s = 0 gives D = 0 when the
        AUCs are equal (as pROC), else ±inf.

    Examples
    --------
    >>> import numpy as np
    >>> import polars as pl
    >>> import polaroc as pr
    >>> rng = np.random.default_rng(0)
    >>> y = rng.random(300) < 0.4
    >>> log = pl.concat([
    ...     pl.DataFrame({"model": m, "fold": 0, "sample": np.arange(300),
    ...                   "score": rng.normal(size=300) + shift * y, "label": y})
    ...     for m, shift in [("a", 1.2), ("b", 0.8)]
    ... ])
    >>> out = pr.bootstrap_test(log, "a", "b", n_boot=500, seed=1).collect()
    >>> out.select("n", "estimate", "statistic", "p_value", "n_boot").with_columns(
    ...     pl.col(pl.Float64).round(3)
    ... )
    shape: (1, 5)
    ┌─────┬──────────┬───────────┬─────────┬────────┐
    │ n   ┆ estimate ┆ statistic ┆ p_value ┆ n_boot │
    │ --- ┆ ---      ┆ ---       ┆ ---     ┆ ---    │
    │ i64 ┆ f64      ┆ f64       ┆ f64     ┆ i64    │
    ╞═════╪══════════╪═══════════╪═════════╪════════╡
    │ 300 ┆ 0.079    ┆ 2.053     ┆ 0.04    ┆ 500    │
    └─────┴──────────┴───────────┴─────────┴────────┘
    """
    check_replicates(n_boot, "n_boot")
    check_alternative(alternative)
    check_alpha(alpha)
    check_adjust(adjust)
    seed = seed_of(seed)
    two = two_models(
        log, model_a, model_b, by=by, paired=paired, positive_class=positive_class,
        caller="bootstrap_test", names=columns,
    )  # fmt: skip
    model = columns_of(columns).model
    group = two.group
    nan = pl.col(SCORE).is_nan().any()
    key = pl.struct(*group).hash(seed) if group else pl.lit(0, pl.UInt64)
    fields: list[pl.Expr] = []
    if cluster is not None:
        side_of = None if paired else (model, model_a)
        clustered = _with_clusters(log, two, by, positive_class, columns, cluster, side_of)
        two = replace(two, rows=clustered)
        fields = [pl.col(_STRATUM_CODE).alias("stratum"), pl.col(UNIT).alias("unit")]
    if paired:
        rows = two.rows
        aucs = {"auc_a": auc(SCORE, POSITIVE), "auc_b": auc(SCORE_B, POSITIVE)}
        nan = nan | pl.col(SCORE_B).is_nan().any()
        packed = pl.struct(*fields, a=SCORE, b=SCORE_B, positive=POSITIVE, key=key).sort_by(
            two.keys
        )
    else:
        rows = _stacked(two, model, model_a)
        side = pl.col(SIDE)
        s, p = pl.col(SCORE), pl.col(POSITIVE)
        aucs = {
            "auc_a": auc(s.filter(side == 0), p.filter(side == 0)),
            "auc_b": auc(s.filter(side == 1), p.filter(side == 1)),
        }
        packed = pl.struct(
            *fields,
            a=pl.when(side == 0).then(s),
            b=pl.when(side == 1).then(s),
            positive=p,
            key=key,
        ).sort_by([SIDE, *two.keys])
    core = partial(boot_auc_sd, n_boot=n_boot, seed=seed, paired=paired)
    boot = packed.map_batches(core, return_dtype=_BOOT, returns_scalar=True).alias("_pr_boot")
    point = _per_group(rows, group, **aucs, n=pl.len().cast(pl.Int64), _pr_nan=nan, _pr_boot=boot)
    joined = point.unnest("_pr_boot")
    diff = pl.col("auc_a") - pl.col("auc_b")
    sd = pl.col("sd_diff")
    statistic = (
        pl.when(sd > 0)
        .then(pl.col("estimate") / sd)
        .when(pl.col("estimate") == 0)
        .then(0.0)
        .when(sd.is_not_null())
        .then(pl.col("estimate").sign() * float("inf"))
    )
    out = joined.with_columns(estimate=diff).with_columns(statistic=statistic)
    out = out.with_columns(p_value=tail_p(pl.col("statistic"), alternative))
    values = ["estimate", "statistic", "p_value", "auc_a", "auc_b", "sd_diff"]
    out = nan_unless_degenerate(out, values)
    extras = ["auc_a", "auc_b", "sd_diff", "n_boot"]
    out = _header(out, group, two, model_a, model_b, ["statistic"], extras, alpha, adjust)
    return two.finish(out)


def _with_clusters(
    log: FrameLike,
    two: TwoModels,
    by: str | Iterable[str] | None,
    positive_class: Any,
    columns: LogNames,
    cluster: str,
    side_of: tuple[str, Any] | None,
) -> pl.LazyFrame:
    """The two models' rows with each row's cluster stratum (0, 1, 2) and number in it.

    ``side_of``: ``None`` for paired rows, else the model column and model a (the
    unpaired rows get their side, each side's clusters numbered apart).

    The log reading checks the cluster column (present, no null, one value per sample);
    each row finds its cluster by its sample's keys. The clusters are numbered by
    :func:`polaroc.metrics.draws.cluster_units` within the group (and side, unpaired),
    their first sample's position among its label's samples in key order as the
    unclustered draws number them.
    """
    names = columns_of(columns, caller="bootstrap_test")
    parsed = read_log(
        log, by=by, unit="dataset", columns=names, positive_class=positive_class,
        cluster=cluster, paired=side_of is None,
    )  # fmt: skip
    if not parsed.has_sample:
        msg = (
            f"bootstrap_test with cluster={cluster!r} needs the {names.sample!r} column to "
            "find each sample's cluster; add a sample id or pass sample=<column>."
        )
        raise ValueError(msg)
    rows = two.rows if side_of is None else _stacked(two, *side_of)
    if cluster not in two.keys:
        of_sample = parsed.frame.select(*dict.fromkeys([*two.keys, cluster])).unique()
        rows = rows.join(of_sample, on=two.keys, how="left", nulls_equal=True)
    groups = two.group if side_of is None else [*two.group, SIDE]
    position = pl.int_range(pl.len(), dtype=pl.Int64).over([*groups, POSITIVE], order_by=two.keys)
    rows = rows.with_columns(position.alias(UNIT))
    numbered = cluster_units(rows, groups, POSITIVE, cluster, position=UNIT)
    code = pl.when(MIXED).then(2).when(STRATUM).then(0).otherwise(1).cast(pl.Int8)
    return numbered.with_columns(code.alias(_STRATUM_CODE)).drop(STRATUM, MIXED)


# ------------------------------------------------------------------------- Venkatraman


def _errors_paired(rank_a: str, rank_b: str) -> pl.Expr:
    """Venkatraman & Begg's (1996) E: Σₓ |e_b(x) − e_a(x)| over the rank cut-offs x.

    With ranks 1…n, e(x) = #{positives ranked ≤ x} + #{negatives ranked > x}, the
    errors of the rule "positive above x"; e(x) − n₋ is the running sum of +1 per
    positive and −1 per negative in rank order, so the two models' error curves are
    two cumulative sums of the same ±1 labels, each in its own model's rank order.
    """
    sign = pl.when(pl.col(POSITIVE)).then(1).otherwise(-1).cast(pl.Int64)
    return (sign.sort_by(rank_b).cum_sum() - sign.sort_by(rank_a).cum_sum()).abs().sum()


@validated
def venkatraman_test(
    log: FrameLike,
    model_a: Any,
    model_b: Any,
    *,
    n_perm: int = 2000,
    paired: bool = True,
    seed: int | None = None,
    by: str | Iterable[str] | None = None,
    alpha: float = 0.05,
    adjust: Adjust = None,
    positive_class: Any = None,
    **columns: Unpack[LogNames],
) -> pl.LazyFrame:
    """Venkatraman's permutation test that two ROC curves are equal (pROC ``method="venkatraman"``).

    Unlike the AUC tests it compares whole curves. Paired (Venkatraman & Begg 1996):
    each model's scores are replaced by their ranks (ties broken in sample order, as
    pROC's ``ties.method="first"``) and E = Σₓ |e_b(x) − e_a(x)|, e(x) the number of
    errors (positives ranked ≤ x plus negatives ranked > x) at each rank cut-off x.
    Under H₀ the two models' ranks of a sample are exchangeable: each permutation
    swaps them with probability ½ per sample (breaking ties at random, as pROC does)
    and recomputes E. Unpaired (Venkatraman 2000): the positives' ranks of the two
    models are pooled and shuffled, so are the negatives', and E is the area between
    the two curves drawn against the mixture of the positive and negative rank
    distributions (weighted by the share of positives π, computed as pROC 1.18 does,
    (n₊ₐ + n₊ᵦ) / (2 nₐ): the same as the pooled share when the models have as many
    samples, and kept so that the numbers are pROC's when they do not). The p-value is
    the share of permutations with E ≥ the observed E (one-sided by construction; no
    ``alternative``). All permutations run in one lazy plan (no Python loop), with a
    counter-based generator seeded by ``seed`` (Robin et al. 2011, pROC).

    Parameters
    ----------
    log
        Score log, read as by :func:`polaroc.delong_test`.
    model_a, model_b
        Values of the ``model`` column to compare; ``estimate`` is AUC_a − AUC_b
        (for orientation; the test is not about the AUCs).
    n_perm
        Permutations (pROC's ``boot.n``, default 2000).
    paired
        ``True`` (default) for two models scored on the same samples.
    seed
        Seed of the permutations; ``None`` draws a fresh one.
    by, alpha, adjust, positive_class
        As for :func:`polaroc.bootstrap_test`.
    **columns
        Names of the log's columns, as keywords: ``model``, ``fold``, ``class_``,
        ``score``, ``label``, ``sample``, ``dataset``, ``repeat`` (each defaults to its
        own name).

    Returns
    -------
    pl.LazyFrame
        One row per group: by…, ``model_a``, ``model_b``, ``n``, ``estimate``
        (AUC_a − AUC_b), ``statistic`` (E), ``p_value``, [``p_adjusted``],
        ``reject``, ``auc_a``, ``auc_b``, ``n_perm``, and the class read as in
        :func:`polaroc.delong_test` (a log with a class column). A degenerate group
        gives null statistics, even holding a NaN score; otherwise a NaN score NaN
        ones.

    Examples
    --------
    >>> import numpy as np
    >>> import polars as pl
    >>> import polaroc as pr
    >>> rng = np.random.default_rng(0)
    >>> y = rng.random(200) < 0.5
    >>> log = pl.concat([
    ...     pl.DataFrame({"model": m, "fold": 0, "sample": np.arange(200),
    ...                   "score": rng.normal(size=200) + shift * y, "label": y})
    ...     for m, shift in [("a", 1.5), ("b", 0.5)]
    ... ])
    >>> out = pr.venkatraman_test(log, "a", "b", n_perm=500, seed=1).collect()
    >>> out.select("n", "statistic", "p_value", "n_perm")
    shape: (1, 4)
    ┌─────┬───────────┬─────────┬────────┐
    │ n   ┆ statistic ┆ p_value ┆ n_perm │
    │ --- ┆ ---       ┆ ---     ┆ ---    │
    │ i64 ┆ f64       ┆ f64     ┆ i64    │
    ╞═════╪═══════════╪═════════╪════════╡
    │ 200 ┆ 4386.0    ┆ 0.0     ┆ 500    │
    └─────┴───────────┴─────────┴────────┘
    """
    check_replicates(n_perm, "n_perm")
    check_alpha(alpha)
    check_adjust(adjust)
    seed = seed_of(seed)
    two = two_models(
        log, model_a, model_b, by=by, paired=paired, positive_class=positive_class,
        caller="venkatraman_test", names=columns,
    )  # fmt: skip
    model = columns_of(columns).model
    group = two.group
    if paired:
        out = _venkatraman_paired(two, n_perm, seed)
    else:
        out = _venkatraman_unpaired(two, model, model_a, n_perm, seed)
    extras = ["auc_a", "auc_b", "n_perm"]
    out = _header(out, group, two, model_a, model_b, ["statistic"], extras, alpha, adjust)
    return two.finish(out)


def _venkatraman_paired(two: TwoModels, n_perm: int, seed: int) -> pl.LazyFrame:
    group, keys = two.group, two.keys
    nan = (pl.col(SCORE).is_nan() | pl.col(SCORE_B).is_nan()).any()
    ranked = (
        two.rows.sort(keys)
        .with_columns(_pr_r=_rank_first(SCORE, group), _pr_s=_rank_first(SCORE_B, group))
        .cache()
    )
    point = _per_group(
        ranked,
        group,
        n=pl.len().cast(pl.Int64),
        auc_a=auc(SCORE, POSITIVE),
        auc_b=auc(SCORE_B, POSITIVE),
        statistic=_errors_paired("_pr_r", "_pr_s").cast(pl.Float64),
        _pr_nan=nan,
    )
    # pROC: R3 = q·(R + u₁ − ½) + (1 − q)·S, S3 = q·(S + u₂ − ½) + (1 − q)·R, q a fair coin.
    number = pl.int_range(pl.len(), dtype=pl.Int64)
    numbered = ranked.with_columns((number.over(group) if group else number).alias(_K)).select(
        *group, _K, POSITIVE, "_pr_r", "_pr_s"
    )
    crossed = numbered.join(replicates(n_perm), how="cross")
    hashed = [*group, REPLICATE, _K]
    coin = uniform(hashed, seed) < 0.5
    r, s = pl.col("_pr_r").cast(pl.Float64), pl.col("_pr_s").cast(pl.Float64)
    permuted = crossed.with_columns(
        _pr_r3=pl.when(coin).then(r + uniform(hashed, seed + 1) - 0.5).otherwise(s),
        _pr_s3=pl.when(coin).then(s + uniform(hashed, seed + 2) - 0.5).otherwise(r),
    )
    perms = _per_group(permuted, [*group, REPLICATE], _pr_e=_errors_paired("_pr_r3", "_pr_s3"))
    return _p_value(point, perms, group, n_perm)


def _rank_first(score: str, group: list[str]) -> pl.Expr:
    """Ranks 1…n of ``score`` within the group, ties in row order (R's ``"first"``).

    The rows are sorted by their keys (fold, sample) first, so ties go in sample order.
    """
    rank = pl.col(score).rank("ordinal").cast(pl.Int64)
    return rank.over(group) if group else rank


def _p_value(
    point: pl.LazyFrame, perms: pl.LazyFrame, group: list[str], n_perm: int
) -> pl.LazyFrame:
    joined = (
        perms.join(point.select(*group, "statistic"), on=group, how="left", nulls_equal=True)
        if group
        else perms.join(point.select("statistic"), how="cross")
    )
    counted = _per_group(
        joined,
        group,
        _pr_hits=(pl.col("_pr_e") >= pl.col("statistic")).sum().cast(pl.Int64),
    )
    out = (
        point.join(counted, on=group, how="left", nulls_equal=True)
        if group
        else pl.concat([point, counted], how="horizontal")
    )
    defined = pl.col("auc_a").is_not_null() & pl.col("auc_b").is_not_null()
    out = out.with_columns(
        estimate=pl.col("auc_a") - pl.col("auc_b"),
        p_value=pl.when(defined).then(pl.col("_pr_hits") / float(n_perm)),
        statistic=pl.when(defined).then("statistic"),
        n_perm=pl.lit(n_perm, pl.Int64),
    )
    return nan_unless_degenerate(out, ["estimate", "statistic", "p_value", "auc_a", "auc_b"])


def _venkatraman_unpaired(
    two: TwoModels, model: str, model_a: Any, n_perm: int, seed: int
) -> pl.LazyFrame:
    group = two.group
    side = pl.col(SIDE)
    rows = _stacked(two, model, model_a).sort([SIDE, *two.keys])
    rank = pl.col(SCORE).rank("ordinal").over([*group, SIDE]).cast(pl.Float64)
    ranked = rows.with_columns(_pr_rank=rank).cache()
    s, p = pl.col(SCORE), pl.col(POSITIVE)
    point = _per_group(
        ranked,
        group,
        n=pl.len().cast(pl.Int64),
        auc_a=auc(s.filter(side == 0), p.filter(side == 0)),
        auc_b=auc(s.filter(side == 1), p.filter(side == 1)),
        _pr_nan=s.is_nan().any(),
    )
    observed = _unpaired_area(ranked, group)
    point = (
        point.join(observed, on=group, how="left", nulls_equal=True)
        if group
        else pl.concat([point, observed], how="horizontal")
    )
    # Venkatraman (2000): within each class, the two models' (jittered) ranks are pooled
    # and a random subset of the model-a size goes to model a (pROC shuffles and splits).
    number = pl.int_range(pl.len(), dtype=pl.Int64).over([*group, POSITIVE])
    crossed = ranked.select(*group, SIDE, POSITIVE, "_pr_rank", number.alias(_K)).join(
        replicates(n_perm), how="cross"
    )
    hashed = [*group, POSITIVE, REPLICATE, _K]
    cell = [*group, REPLICATE, POSITIVE]
    size_a = (side == 0).sum().over(cell)
    order = uniform(hashed, seed).rank("ordinal").over(cell)
    permuted = crossed.with_columns(
        _pr_rank=pl.col("_pr_rank") + uniform(hashed, seed + 1) - 0.5,
        _pr_side=pl.when(order <= size_a).then(0).otherwise(1).cast(pl.Int8),
    )
    perms = _unpaired_area(permuted, [*group, REPLICATE]).rename({"statistic": "_pr_e"})
    return _p_value(point, perms, group, n_perm)


def _unpaired_area(frame: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
    """Venkatraman's (2000) unpaired statistic, as pROC's ``venkatraman.unpaired.stat``.

    Per model, at each rank cut-off x: F(x), G(x) the shares of positives and of
    negatives ranked ≤ x, the mixture p(x) = π F + (1 − π) G and the error
    e(x) = π F + (1 − π)(1 − G); the statistic is the trapezoid area of
    |e_a − e_b| over the sorted union of both models' p, each e linearly interpolated
    between its own points (undefined outside them, where the segment is dropped).
    π is the positives' share as pROC 1.18 computes it, (n₊ₐ + n₊ᵦ) / (2 nₐ).
    """
    side, positive = pl.col(SIDE), pl.col(POSITIVE)
    within = [*keys, SIDE]
    cases = positive.sum().over(within).cast(pl.Float64)
    controls = (~positive).sum().over(within).cast(pl.Float64)
    n_a = (side == 0).sum().cast(pl.Float64)
    pi = positive.sum().cast(pl.Float64) / (2.0 * n_a)
    pi = pi.over(keys) if keys else pi
    ordered = {"order_by": pl.col("_pr_rank")}
    f = positive.cast(pl.Int64).cum_sum().over(within, **ordered) / cases  # type: ignore[arg-type]
    g = (~positive).cast(pl.Int64).cum_sum().over(within, **ordered) / controls  # type: ignore[arg-type]
    pi_ = pl.col("_pr_pi")
    points = frame.with_columns(_pr_pi=pi, _pr_f=f, _pr_g=g).select(
        *keys,
        SIDE,
        _pr_x=pi_ * pl.col("_pr_f") + (1.0 - pi_) * pl.col("_pr_g"),
        _pr_y=pi_ * pl.col("_pr_f") + (1.0 - pi_) * (1.0 - pl.col("_pr_g")),
    )
    by_x = {"order_by": pl.col("_pr_x")}

    def other(column: str, fill: str) -> pl.Expr:
        # the other model's point at or before (forward) / at or after (backward) each x
        value = pl.when(side == 1).then(pl.col(column))
        a = pl.when(side == 0).then(pl.col(column))
        mine_b = value.fill_null(strategy=fill).over(keys or None, **by_x)  # type: ignore[arg-type]
        mine_a = a.fill_null(strategy=fill).over(keys or None, **by_x)  # type: ignore[arg-type]
        return pl.when(side == 0).then(mine_b).otherwise(mine_a)

    x0, y0 = other("_pr_x", "forward"), other("_pr_y", "forward")
    x1, y1 = other("_pr_x", "backward"), other("_pr_y", "backward")
    x = pl.col("_pr_x")
    there = pl.when(x1 == x0).then(y0).otherwise(y0 + (x - x0) * (y1 - y0) / (x1 - x0))
    gap = points.with_columns(_pr_d=(pl.col("_pr_y") - there).abs())
    prev_x = pl.col("_pr_x").shift(1).over(keys or None, **by_x)  # type: ignore[arg-type]
    prev_d = pl.col("_pr_d").shift(1).over(keys or None, **by_x)  # type: ignore[arg-type]
    area = ((pl.col("_pr_d") + prev_d) * (pl.col("_pr_x") - prev_x) / 2.0).sum()
    return _per_group(gap, keys, statistic=area)
