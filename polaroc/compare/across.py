"""Comparing models across data sets on their per-data-set mean of a metric.

Demšar (2006) recommends non-parametric tests over data sets rather than pooled fold
results: the Wilcoxon signed-rank test for two classifiers, and the Friedman test
with the Nemenyi post-hoc test (and its critical difference) for several. Each table
here first averages the metric over the folds of every (data set, model), so it
takes a per-fold table or one that is already one row per (data set, model).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Literal

import polars as pl

from polaroc.compare._dist import (
    binom_half_p,
    chi2_sf,
    f_sf,
    normal_sf,
    signed_rank_tails,
    studentized_range_ppf,
    studentized_range_sf,
)
from polaroc.compare.fold_table import (
    DIGITS,
    VALUE,
    Adjust,
    Alternative,
    FoldTable,
    check_adjust,
    check_alpha,
    check_alternative,
    checked,
    compared,
    metric_expr,
    negligible,
    non_finite,
    pair_differences,
    poisoned,
    settled_difference,
    two_sided,
    with_adjusted,
    with_float_df,
)
from polaroc.core.args import validated
from polaroc.core.inputs import ColumnLike, FrameLike, as_lazy, as_names, require_columns
from polaroc.core.sums import fixed_mean

__all__ = ["friedman_test", "mean_ranks", "nemenyi_test", "sign_test", "wilcoxon_test"]

_EXACT_MAX_N = 50  # exact signed-rank p-values up to this many data sets (as scipy)
_SQRT2 = math.sqrt(2.0)


def dataset_means(
    table: FrameLike,
    *,
    metric: ColumnLike,
    by: str | Iterable[str] | None,
    model: str,
    dataset: str,
    min_datasets: int = 2,
) -> FoldTable:
    """Per (by…, dataset, model) the mean of the metric over its rows, checked balanced.

    Every model must have every data set within a by group (``ValueError`` naming the
    missing (model, dataset) pairs; for a ``LazyFrame`` at collection). The result
    is a ``FoldTable`` whose "fold" is the data set.
    """
    frame = as_lazy(table, argument="table")
    schema = frame.collect_schema()
    group = as_names(by)
    require_columns(schema, [*group, model, dataset], what="per-fold table")
    value = metric_expr(metric, schema)
    name = value.meta.output_name(raise_if_undetermined=False) or "metric"
    keys = [*group, dataset, model]
    means = frame.group_by(keys).agg(fixed_mean(value).alias(VALUE))
    means = checked(table, means, by=group, model=model, fold=dataset, min_folds=min_datasets)
    return FoldTable(frame=means, by=group, model=model, fold=dataset, metric=name)


# ------------------------------------------------------------------------ Wilcoxon


@validated
def wilcoxon_test(
    table: FrameLike,
    metric: ColumnLike = "auc",
    *,
    by: str | Iterable[str] | None = (),
    alpha: float = 0.05,
    method: Literal["auto", "exact", "asymptotic"] = "auto",
    adjust: Adjust = None,
    alternative: Alternative = "two-sided",
    model: str = "model",
    dataset: str = "dataset",
) -> pl.LazyFrame:
    """Wilcoxon signed-rank test for every pair of models over the data sets.

    For each data set i, dᵢ is the difference of the two models' mean metric.
    The |dᵢ| are ranked (ties get average ranks); R⁺ sums the ranks of positive
    differences and R⁻ of negative ones, zero differences splitting their ranks
    evenly between the two (Demšar 2006, §3.1.3; scipy's ``zero_method="zsplit"``).
    Under H₀ (equal performance) R⁺ is symmetric about N(N + 1)/4. Differences are
    compared to 12 significant digits (and are zero within 1e-12 of the means'
    size), so floating-point noise neither breaks ties nor makes zeros non-zero.

    Parameters
    ----------
    table
        Per-fold table with a ``dataset`` column (or one row per data set and
        model); the metric is averaged over the rows of each (data set, model).
    metric
        Column name or expression.
    by
        Groups tested separately (keyword-only). ``None`` and ``()`` (default) mean
        one group: the data sets are the sample, so the data set is never a by key.
    alpha
        Significance level of ``reject``.
    method
        ``"exact"``: the exact null distribution of R⁺ (exact without ties or zero
        differences; otherwise conservative, as scipy); ``"asymptotic"``: the normal
        approximation z = (R⁺ − N(N+1)/4) / σ with σ² = N(N+1)(2N+1)/24 less the tie
        correction Σ(t³ − t)/48, no continuity correction; ``"auto"`` (default):
        exact when N ≤ 50 with no ties and no zero differences, else asymptotic.
    adjust
        A ``statsmodels`` ``multipletests`` method — ``"holm"``, ``"bonferroni"``,
        ``"sidak"``, ``"hochberg"``, ``"hommel"``, ``"fdr_bh"`` or ``"fdr_by"``: add
        ``p_adjusted``, adjusted across the model pairs of each ``by`` group (m counts
        every pair; a NaN p-value stays NaN and counts as p = 1), and base ``reject`` on it.
    alternative
        ``"two-sided"`` (default), ``"greater"`` (H₁: a > b) or ``"less"`` (H₁: a < b)
        for ``p_value`` (as ``scipy.stats.wilcoxon``).
    model, dataset
        Column names of the table.

    Returns
    -------
    pl.LazyFrame
        One row per unordered model pair: by…, ``model_a`` < ``model_b``, ``n``
        (data sets used), ``estimate`` (mean of the differences a − b),
        ``statistic`` (min(R⁺, R⁻) two-sided, R⁺ one-sided, as scipy), ``p_value``,
        [``p_adjusted``], ``reject``, then ``r_plus`` (ranks where a > b),
        ``r_minus``, ``zstatistic`` (the normal approximation's z) and ``method``. A data set where
        either
        mean is null is left out of that pair; a NaN makes the pair's statistics
        NaN and ``reject`` null.

    Raises
    ------
    ValueError, TypeError
        Missing columns, a non-numeric metric, a model missing a data set, or fewer
        than two data sets (for a ``LazyFrame``: at collection, as ``ComputeError``).

    Notes
    -----
    ``p_value`` equals ``scipy.stats.wilcoxon(a, b, zero_method="zsplit",
    correction=False, method=...)`` for ``"exact"`` and ``"asymptotic"``. Exact
    p-values come from a small dynamic program run on the result rows
    (``map_batches``); the normal tail is computed in Polars.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> table = pl.DataFrame({
    ...     "dataset": [f"d{i}" for i in range(8)] * 2,
    ...     "model": ["c45"] * 8 + ["nb"] * 8,
    ...     "auc": [0.76, 0.83, 0.91, 0.70, 0.88, 0.79, 0.95, 0.81,
    ...             0.739, 0.796, 0.922, 0.655, 0.853, 0.772, 0.898, 0.801],
    ... })
    >>> pr.wilcoxon_test(table, "auc").select(
    ...     "model_a", "model_b", "n", "statistic", "p_value", "r_plus", "r_minus", "method"
    ... ).collect()
    shape: (1, 8)
    ┌─────────┬─────────┬─────┬───────────┬───────────┬────────┬─────────┬────────┐
    │ model_a ┆ model_b ┆ n   ┆ statistic ┆ p_value   ┆ r_plus ┆ r_minus ┆ method │
    │ ---     ┆ ---     ┆ --- ┆ ---       ┆ ---       ┆ ---    ┆ ---     ┆ ---    │
    │ str     ┆ str     ┆ i64 ┆ f64       ┆ f64       ┆ f64    ┆ f64     ┆ str    │
    ╞═════════╪═════════╪═════╪═══════════╪═══════════╪════════╪═════════╪════════╡
    │ c45     ┆ nb      ┆ 8   ┆ 2.0       ┆ 0.0234375 ┆ 34.0   ┆ 2.0     ┆ exact  │
    └─────────┴─────────┴─────┴───────────┴───────────┴────────┴─────────┴────────┘
    """
    check_alpha(alpha)
    check_adjust(adjust)
    check_alternative(alternative)
    if method not in ("auto", "exact", "asymptotic"):
        msg = f"method must be 'auto', 'exact' or 'asymptotic', got {method!r}"
        raise ValueError(msg)
    ft = dataset_means(table, metric=metric, by=by, model=model, dataset=dataset)
    by_ = ft.by
    keys = [*by_, "model_a", "model_b"]
    pairs = pair_differences(ft).select(
        *keys, settled_difference().alias("_pr_d"), _pr_raw=pl.col("_pr_diff")
    )
    pairs = pairs.with_columns(_pr_size=pl.col("_pr_d").abs())
    pairs = pairs.with_columns(
        _pr_rank=pl.col("_pr_size").rank("average").over(keys),
        # each tie group of size t contributes t rows of (t² − 1): Σ(t³ − t) in all
        _pr_tie=(pl.len().over([*keys, "_pr_size"]) ** 2 - 1).cast(pl.Float64),
    )
    r, dd = pl.col("_pr_rank"), pl.col("_pr_d")
    stats = pairs.group_by(keys).agg(
        n=pl.len().cast(pl.Int64),
        estimate=fixed_mean(pl.col("_pr_raw")),
        r_plus=r.filter(dd > 0).sum() + r.filter(dd == 0).sum() / 2.0,
        r_minus=r.filter(dd < 0).sum() + r.filter(dd == 0).sum() / 2.0,
        _pr_ties=pl.col("_pr_tie").sum(),
        _pr_untied=(pl.col("_pr_tie") == 0).all() & (dd != 0).all(),
        _pr_nan=non_finite(dd).any(),
    )
    n = pl.col("n").cast(pl.Float64)
    sigma = ((n * (n + 1) * (2 * n + 1) - pl.col("_pr_ties") / 2.0) / 24.0).sqrt()
    z = pl.when(sigma > 0).then((pl.col("r_plus") - n * (n + 1) / 4.0) / sigma)
    if method == "auto":
        use_exact = pl.col("_pr_untied") & (pl.col("n") <= _EXACT_MAX_N)
    else:
        use_exact = pl.lit(method == "exact")
    chosen = pl.when(use_exact).then(pl.lit("exact")).otherwise(pl.lit("asymptotic"))
    r_plus, zc = pl.col("r_plus"), pl.col("zstatistic")
    exact = two_sided(*signed_rank_tails(r_plus, pl.col("n")), alternative)
    asymptotic = two_sided(normal_sf(zc), normal_sf(-zc), alternative)
    out = stats.with_columns(zstatistic=z, method=chosen).with_columns(
        p_value=pl.when(pl.col("method") == "exact").then(exact).otherwise(asymptotic)
    )
    # scipy's statistic: min(R⁺, R⁻) two-sided, R⁺ one-sided
    statistic = pl.min_horizontal("r_plus", "r_minus") if alternative == "two-sided" else r_plus
    out = out.with_columns(statistic=statistic)
    columns = [*keys, "n", "estimate", "statistic", "p_value", "r_plus", "r_minus"]
    columns += ["zstatistic", "method", "_pr_nan"]
    out = with_adjusted(out, columns, by_, alpha, adjust)
    return poisoned(out, "_pr_nan", keep=[*keys, "n"], nulled=["method"]).sort(keys)


# ------------------------------------------------------------------------ sign test


@validated
def sign_test(
    table: FrameLike,
    metric: ColumnLike = "auc",
    *,
    by: str | Iterable[str] | None = (),
    alpha: float = 0.05,
    adjust: Adjust = None,
    alternative: Alternative = "two-sided",
    higher_is_better: bool | None = None,
    model: str = "model",
    dataset: str = "dataset",
) -> pl.LazyFrame:
    """Sign test for every pair of models over the data sets: count wins, losses and ties.

    On each data set one model wins (higher mean metric; the test is two-sided, so
    "higher" only names the side). Under H₀ each wins with probability ½, so the
    number of wins of a is Binomial(N, ½). Ties count half for each model; with an
    odd number of ties one is dropped (Demšar 2006, §3.1.3). The p-value is the exact
    two-sided binomial test of wins_a + ⌊ties/2⌋ successes in
    wins_a + wins_b + 2⌊ties/2⌋ trials. Means equal to 1e-12 of their size tie.

    Parameters
    ----------
    table
        Per-fold table with a ``dataset`` column (or one row per data set and
        model); the metric is averaged over the rows of each (data set, model).
    metric
        Column name or expression.
    by
        Groups tested separately (keyword-only). ``None`` and ``()`` (default) mean
        one group: the data sets are the sample, so the data set is never a by key.
    alpha
        Significance level of ``reject``.
    adjust
        A ``statsmodels`` ``multipletests`` method — ``"holm"``, ``"bonferroni"``,
        ``"sidak"``, ``"hochberg"``, ``"hommel"``, ``"fdr_bh"`` or ``"fdr_by"``: add
        ``p_adjusted``, adjusted across the model pairs of each ``by`` group (m counts
        every pair; a NaN p-value stays NaN and counts as p = 1), and base ``reject`` on it.
    alternative
        ``"two-sided"`` (default), ``"greater"`` (H₁: a > b) or ``"less"`` (H₁: a < b)
        for ``p_value`` (as ``scipy.stats.binomtest``
        on the data sets where a > b).
    higher_is_better
        Whether a higher metric is better, for ``wins_a``/``wins_b`` (data sets where
        each model is the better one). ``None`` (default): the metric registry's
        direction (:func:`polaroc.core.registry.lookup`; a column it does not know
        needs ``higher_is_better``). A metric best at a target value (a calibration
        slope) is compared on its distance from the target. ``statistic`` and
        ``alternative`` always read a − b of what is compared.
    model, dataset
        Column names of the table.

    Returns
    -------
    pl.LazyFrame
        One row per unordered model pair: by…, ``model_a`` < ``model_b``,
        ``wins_a``, ``wins_b``, ``ties``, ``p_value``, ``reject`` (and
        ``p_adjusted``). A data set where either mean is null is left out of that
        pair; a NaN mean makes the counts null, ``p_value`` NaN and ``reject`` null.

    Raises
    ------
    ValueError, TypeError
        As :func:`wilcoxon_test`.

    Notes
    -----
    ``p_value`` equals ``scipy.stats.binomtest(k, n, 0.5).pvalue`` (computed with
    scipy's binomial distribution on the result rows only).

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> table = pl.DataFrame({
    ...     "dataset": [f"d{i}" for i in range(8)] * 2,
    ...     "model": ["c45"] * 8 + ["nb"] * 8,
    ...     "auc": [0.76, 0.83, 0.91, 0.70, 0.88, 0.79, 0.95, 0.81,
    ...             0.739, 0.796, 0.922, 0.655, 0.853, 0.772, 0.898, 0.81],
    ... })
    >>> pr.sign_test(table, "auc").select(
    ...     "model_a", "model_b", "n", "p_value", "wins_a", "wins_b", "ties"
    ... ).collect()
    shape: (1, 7)
    ┌─────────┬─────────┬─────┬─────────┬────────┬────────┬──────┐
    │ model_a ┆ model_b ┆ n   ┆ p_value ┆ wins_a ┆ wins_b ┆ ties │
    │ ---     ┆ ---     ┆ --- ┆ ---     ┆ ---    ┆ ---    ┆ ---  │
    │ str     ┆ str     ┆ i64 ┆ f64     ┆ i64    ┆ i64    ┆ i64  │
    ╞═════════╪═════════╪═════╪═════════╪════════╪════════╪══════╡
    │ c45     ┆ nb      ┆ 8   ┆ 0.125   ┆ 6      ┆ 1      ┆ 1    │
    └─────────┴─────────┴─────┴─────────┴────────┴────────┴──────┘
    """
    check_alpha(alpha)
    check_adjust(adjust)
    check_alternative(alternative)
    value, higher = compared(metric, higher_is_better)
    ft = dataset_means(table, metric=value, by=by, model=model, dataset=dataset)
    keys = [*ft.by, "model_a", "model_b"]
    pairs = pair_differences(ft).select(*keys, settled_difference().alias("_pr_d"))
    dd = pl.col("_pr_d")
    nan = non_finite(dd).any()
    above, below = (dd > 0).sum().cast(pl.Int64), (dd < 0).sum().cast(pl.Int64)
    counts = pairs.group_by(keys).agg(
        n=pl.len().cast(pl.Int64),
        _pr_above=above,
        _pr_below=below,
        ties=(dd == 0).sum().cast(pl.Int64),
        _pr_nan=nan,
    )
    wins_a, wins_b = ("_pr_above", "_pr_below") if higher else ("_pr_below", "_pr_above")
    half = pl.col("ties") // 2
    k = pl.col("_pr_above") + half  # data sets where a > b, ties split (scipy's binomtest k)
    trials = pl.col("_pr_above") + pl.col("_pr_below") + 2 * half
    out = counts.with_columns(
        wins_a=pl.col(wins_a),
        wins_b=pl.col(wins_b),
        statistic=k.cast(pl.Float64),
        p_value=binom_half_p(k, trials, alternative),
    ).with_columns(estimate=(pl.col("wins_a") - pl.col("wins_b")).cast(pl.Float64))
    columns = [*keys, "n", "estimate", "statistic", "p_value", "wins_a", "wins_b", "ties"]
    out = with_adjusted(out, [*columns, "_pr_nan"], ft.by, alpha, adjust)
    out = poisoned(out, "_pr_nan", keep=[*keys, "n"], nulled=["wins_a", "wins_b", "ties"])
    return out.sort(keys)


# ------------------------------------------------------------- Friedman, Nemenyi


def _ranked(ft: FoldTable, higher_is_better: bool) -> pl.LazyFrame:
    """Rank the models within each (by…, data set): 1 = best, ties averaged.

    Data sets where some model's mean is null are left out (complete blocks).
    """
    block = [*ft.by, ft.fold]
    complete = ft.frame.filter(pl.col(VALUE).is_not_null().all().over(block))
    y = pl.col(VALUE).round_sig_figs(DIGITS)
    return complete.with_columns(
        _pr_rank=y.rank("average", descending=higher_is_better).over(block),
        _pr_tie=(pl.len().over([*block, y]) ** 2 - 1).cast(pl.Float64),
        _pr_nan=y.is_nan().any().over(ft.by) if ft.by else y.is_nan().any(),
    )


def _rank_summary(ft: FoldTable, higher_is_better: bool) -> pl.LazyFrame:
    """Per by group and model: mean rank; with N (data sets) and k (models)."""
    ranked = _ranked(ft, higher_is_better)
    per_model = ranked.group_by([*ft.by, ft.model]).agg(
        mean_rank=pl.col("_pr_rank").mean(),
        _pr_rank_sum=pl.col("_pr_rank").sum(),
        _pr_nan=pl.col("_pr_nan").any(),
    )
    sizes = [
        pl.col(ft.fold).n_unique().cast(pl.Int64).alias("n"),
        pl.col(ft.model).n_unique().cast(pl.Int64).alias("n_models"),
        pl.col("_pr_tie").sum().alias("_pr_ties"),
    ]
    counts = ranked.group_by(ft.by).agg(sizes) if ft.by else ranked.select(sizes)
    if ft.by:
        return per_model.join(counts, on=ft.by)
    return per_model.join(counts, how="cross")


def _critical_difference(alpha: float) -> pl.Expr:
    # Demšar (2006) eq. for the Nemenyi test: CD = q_α √(k(k+1) / (6N)), with q_α the
    # studentized range quantile (k means, infinite df) divided by √2.
    k = pl.col("n_models")
    q = studentized_range_ppf(1.0 - alpha, k, float("inf")) / _SQRT2
    return q * (k * (k + 1) / (6.0 * pl.col("n"))).sqrt()


@validated
def mean_ranks(
    table: FrameLike,
    metric: ColumnLike = "auc",
    *,
    by: str | Iterable[str] | None = (),
    alpha: float = 0.05,
    higher_is_better: bool | None = None,
    model: str = "model",
    dataset: str = "dataset",
) -> pl.LazyFrame:
    """Each model's average rank over the data sets, with Nemenyi's critical difference.

    Within every data set the models are ranked on their mean metric (1 = best;
    ties — equal to 12 significant digits — share the average rank); a model's
    mean rank over the N data sets is what the Friedman test compares and what a
    critical-difference diagram plots (Demšar 2006, §3.2.2).

    Parameters
    ----------
    table, metric, by, model, dataset
        As for :func:`friedman_test`.
    alpha
        Level of the critical difference ``cd``.
    higher_is_better
        ``True`` for AUC-like metrics (rank 1 = highest), ``False`` for error rates
        and costs; ``None`` (default): the metric registry's direction (a column it
        does not know needs ``higher_is_better``). A metric best at a target value
        (a calibration slope, best at 1) is ranked on its distance from the target.

    Returns
    -------
    pl.LazyFrame
        One row per (by group, model), best first: by…, ``model``, ``mean_rank``,
        ``n`` (data sets), ``n_models``, ``cd`` (two models whose mean ranks differ by
        more than ``cd`` differ at level α by the Nemenyi test).

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> table = pl.DataFrame({
    ...     "dataset": ["d1", "d2", "d3", "d4"] * 3,
    ...     "model": ["a"] * 4 + ["b"] * 4 + ["c"] * 4,
    ...     "auc": [0.9, 0.8, 0.85, 0.7, 0.8, 0.82, 0.75, 0.6, 0.7, 0.6, 0.65, 0.5],
    ... })
    >>> pr.mean_ranks(table, "auc").collect()
    shape: (3, 5)
    ┌───────┬───────────┬─────┬──────────┬──────────┐
    │ model ┆ mean_rank ┆ n   ┆ n_models ┆ cd       │
    │ ---   ┆ ---       ┆ --- ┆ ---      ┆ ---      │
    │ str   ┆ f64       ┆ i64 ┆ i64      ┆ f64      │
    ╞═══════╪═══════════╪═════╪══════════╪══════════╡
    │ a     ┆ 1.25      ┆ 4   ┆ 3        ┆ 1.657247 │
    │ b     ┆ 1.75      ┆ 4   ┆ 3        ┆ 1.657247 │
    │ c     ┆ 3.0       ┆ 4   ┆ 3        ┆ 1.657247 │
    └───────┴───────────┴─────┴──────────┴──────────┘
    """
    check_alpha(alpha)
    value, higher = compared(metric, higher_is_better)
    ft = dataset_means(table, metric=value, by=by, model=model, dataset=dataset)
    summary = _rank_summary(ft, higher)
    nan = pl.lit(float("nan"))
    return summary.select(
        *ft.by,
        ft.model,
        mean_rank=pl.when(pl.col("_pr_nan")).then(nan).otherwise(pl.col("mean_rank")),
        n="n",
        n_models="n_models",
        cd=_critical_difference(alpha),
    ).sort([*ft.by, "mean_rank", ft.model])


def friedman_test(
    table: FrameLike,
    metric: ColumnLike = "auc",
    *,
    by: str | Iterable[str] | None = (),
    higher_is_better: bool | None = None,
    model: str = "model",
    dataset: str = "dataset",
) -> pl.LazyFrame:
    """Friedman's test that k models perform equally over N data sets.

    With Rⱼ the mean rank of model j over the data sets (:func:`mean_ranks`),
    χ²_F = 12N / (k(k+1)) · [Σⱼ Rⱼ² − k(k+1)²/4] is chi² with k − 1 df under H₀, and
    Iman & Davenport's F_F = (N − 1)χ²_F / (N(k − 1) − χ²_F) is F with k − 1 and
    (k − 1)(N − 1) df — less conservative; Demšar (2006, §3.2.2) recommends it. Tied
    ranks divide χ²_F by 1 − Σ(t³ − t) / (k(k² − 1)N) (as ``scipy.stats.
    friedmanchisquare``; no change without ties).

    Parameters
    ----------
    table
        Per-fold table with a ``dataset`` column, or one row per (data set, model);
        the metric is averaged over each (data set, model). Every model needs every
        data set, and there must be at least two data sets.
    metric
        Column name or expression.
    by
        Groups tested separately (keyword-only). ``None`` and ``()`` (default) mean
        one group: the data sets are the sample, so the data set is never a by key.
    higher_is_better
        Only the ranks' direction (``None``: the metric registry's, as
        :func:`mean_ranks`): the statistic does not depend on it.
    model, dataset
        Column names of the table.

    Returns
    -------
    pl.LazyFrame
        One row per by group: by…, ``n`` (data sets), ``statistic`` (χ²_F), ``df``
        (k − 1), ``p_value``, then ``n_models``, ``f_iman_davenport``, ``df_num``,
        ``df_den``, ``p_value_iman_davenport``. Data sets where a model's
        mean is null are left out; a NaN makes the statistics NaN.

        * When every data set ranks the models alike (perfect concordance, e.g.
          two models and one always ahead), χ²_F = N(k − 1) is finite and
          ``p_value`` is its chi² tail, but Iman–Davenport's denominator
          N(k − 1) − χ²_F is zero: ``f_iman_davenport`` and
          ``p_value_iman_davenport`` are null, never
          +inf and 0. For two models use :func:`sign_test` or
          :func:`wilcoxon_test`, the tests Demšar (2006, §3.1) recommends for a pair.
        * When every data set ties all models, there is no ranking: ``statistic`` and
          the p-values are null.

    Raises
    ------
    ValueError, TypeError
        As :func:`wilcoxon_test`.

    Notes
    -----
    The chi² and F tails are computed with scipy (``map_batches``) on the result
    rows only.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> table = pl.DataFrame({
    ...     "dataset": ["d1", "d2", "d3", "d4"] * 3,
    ...     "model": ["a"] * 4 + ["b"] * 4 + ["c"] * 4,
    ...     "auc": [0.9, 0.8, 0.85, 0.7, 0.8, 0.82, 0.75, 0.6, 0.7, 0.6, 0.65, 0.5],
    ... })
    >>> pr.friedman_test(table, "auc").select(
    ...     "n", "statistic", "df", "p_value", "f_iman_davenport", "p_value_iman_davenport"
    ... ).collect()
    shape: (1, 6)
    ┌─────┬───────────┬─────┬──────────┬──────────────────┬────────────────────────┐
    │ n   ┆ statistic ┆ df  ┆ p_value  ┆ f_iman_davenport ┆ p_value_iman_davenport │
    │ --- ┆ ---       ┆ --- ┆ ---      ┆ ---              ┆ ---                    │
    │ i64 ┆ f64       ┆ f64 ┆ f64      ┆ f64              ┆ f64                    │
    ╞═════╪═══════════╪═════╪══════════╪══════════════════╪════════════════════════╡
    │ 4   ┆ 6.5       ┆ 2.0 ┆ 0.038774 ┆ 13.0             ┆ 0.006592               │
    └─────┴───────────┴─────┴──────────┴──────────────────┴────────────────────────┘
    """
    value, higher = compared(metric, higher_is_better)
    ft = dataset_means(table, metric=value, by=by, model=model, dataset=dataset)
    summary = _rank_summary(ft, higher)
    k = pl.col("n_models").cast(pl.Float64)
    n = pl.col("n").cast(pl.Float64)
    aggs = [
        pl.col("n").first(),
        pl.col("n_models").first(),
        (pl.col("_pr_rank_sum") ** 2).sum().alias("_pr_ss"),
        pl.col("_pr_ties").first(),
        pl.col("_pr_nan").any(),
    ]
    per_group = summary.group_by(ft.by).agg(aggs) if ft.by else summary.select(aggs)
    c = 1.0 - pl.col("_pr_ties") / (k * (k * k - 1.0) * n)
    chi2 = (12.0 / (k * n * (k + 1.0)) * pl.col("_pr_ss") - 3.0 * n * (k + 1.0)) / c
    df1 = pl.col("n_models") - 1
    df2 = df1 * (pl.col("n") - 1)
    all_tied = negligible(c, pl.lit(1.0)).fill_null(False)  # every block one tie: no ranking
    # Perfect concordance (every data set ranks the models alike) makes
    # N(k − 1) − χ² zero: Iman–Davenport's F is undefined there, not +inf.
    gap = n * (k - 1.0) - pl.col("statistic")
    concordant = negligible(gap, n * (k - 1.0)).fill_null(False)
    out = per_group.with_columns(
        statistic=pl.when((df1 > 0) & ~all_tied).then(chi2), df=df1
    ).with_columns(
        p_value=chi2_sf(pl.col("statistic"), pl.col("df")),
        f_iman_davenport=pl.when(~concordant).then((n - 1.0) * pl.col("statistic") / gap),
        df_num=df1,
        df_den=df2,
    )
    out = out.with_columns(
        p_value_iman_davenport=f_sf(pl.col("f_iman_davenport"), pl.col("df_num"), pl.col("df_den"))
    )
    columns = ["n", "statistic", "df", "p_value", "n_models", "f_iman_davenport", "df_num"]
    columns += ["df_den", "p_value_iman_davenport"]
    out = out.select(*ft.by, *columns, "_pr_nan")
    keep = [*ft.by, "n", "n_models", "df", "df_num", "df_den"]
    out = with_float_df(poisoned(out, "_pr_nan", keep=keep))
    return out.sort(ft.by) if ft.by else out


def rank_pairs(ranks: pl.LazyFrame, by: list[str], model: str) -> pl.LazyFrame:
    """Every unordered pair of :func:`mean_ranks`' models, with the scale of their difference.

    One row per (by…, ``model_a`` < ``model_b``): ``mean_rank_a``, ``mean_rank_b``,
    ``n`` (data sets), ``n_models``, ``cd`` and ``_pr_scale`` = √(k(k + 1)/(6N)), the
    standard error of a difference of two mean ranks under H₀ (Demšar 2006, §3.2.2),
    which Nemenyi's test and the comparisons with a control divide it by.
    """
    left = ranks.rename({model: "model_a", "mean_rank": "mean_rank_a"})
    right = ranks.select(*by, model_b=model, mean_rank_b="mean_rank")
    pairs = (left.join(right, on=by) if by else left.join(right, how="cross")).filter(
        pl.col("model_a") < pl.col("model_b")
    )
    k = pl.col("n_models")
    return pairs.with_columns(_pr_scale=(k * (k + 1) / (6.0 * pl.col("n"))).sqrt())


@validated
def nemenyi_test(
    table: FrameLike,
    metric: ColumnLike = "auc",
    *,
    by: str | Iterable[str] | None = (),
    alpha: float = 0.05,
    adjust: Adjust = None,
    higher_is_better: bool | None = None,
    model: str = "model",
    dataset: str = "dataset",
) -> pl.LazyFrame:
    """Nemenyi's post-hoc test after Friedman's: every pair of models by mean rank.

    Two models differ when their mean ranks differ by at least the critical
    difference CD = q_α √(k(k+1)/(6N)), q_α being the studentized range quantile
    for k means and infinite df divided by √2 (Demšar 2006, §3.2.2; his Table 5a
    lists q_0.05 = 1.960, 2.343, 2.569, … for k = 2, 3, 4, …). The p-value is the
    studentized range tail at |Rₐ − R_b| √2 / √(k(k+1)/(6N)).

    Parameters
    ----------
    table, metric, by, model, dataset
        As for :func:`friedman_test`.
    alpha
        Level of ``cd`` and ``reject``.
    adjust
        As :func:`wilcoxon_test`'s (Nemenyi's p-values already hold the family-wise
        level; an adjustment on top is more conservative still).
    higher_is_better
        As :func:`mean_ranks` (``None``: the metric registry's direction).

    Returns
    -------
    pl.LazyFrame
        One row per unordered model pair: by…, ``model_a`` < ``model_b``,
        ``n`` (data sets), ``estimate`` (mean rank a − b; negative when a ranks
        better), ``statistic`` (|Rₐ − R_b|·√2 / √(k(k+1)/(6N)), a studentized range),
        ``p_value``, [``p_adjusted``], ``reject``, ``mean_rank_a``, ``mean_rank_b``,
        ``cd``. The Nemenyi p-values already control the family-wise error over all
        pairs; ``adjust`` is accepted for uniformity with the other pairwise tables.

    Notes
    -----
    ``cd`` and ``p_value`` use scipy's studentized range on the result rows only.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> table = pl.DataFrame({
    ...     "dataset": ["d1", "d2", "d3", "d4"] * 3,
    ...     "model": ["a"] * 4 + ["b"] * 4 + ["c"] * 4,
    ...     "auc": [0.9, 0.8, 0.85, 0.7, 0.8, 0.82, 0.75, 0.6, 0.7, 0.6, 0.65, 0.5],
    ... })
    >>> pr.nemenyi_test(table, "auc").select(
    ...     "model_a", "model_b", "estimate", "cd", "p_value", "reject"
    ... ).collect()
    shape: (3, 6)
    ┌─────────┬─────────┬──────────┬──────────┬──────────┬────────┐
    │ model_a ┆ model_b ┆ estimate ┆ cd       ┆ p_value  ┆ reject │
    │ ---     ┆ ---     ┆ ---      ┆ ---      ┆ ---      ┆ ---    │
    │ str     ┆ str     ┆ f64      ┆ f64      ┆ f64      ┆ bool   │
    ╞═════════╪═════════╪══════════╪══════════╪══════════╪════════╡
    │ a       ┆ b       ┆ -0.5     ┆ 1.657247 ┆ 0.759287 ┆ false  │
    │ a       ┆ c       ┆ -1.75    ┆ 1.657247 ┆ 0.035557 ┆ true   │
    │ b       ┆ c       ┆ -1.25    ┆ 1.657247 ┆ 0.180509 ┆ false  │
    └─────────┴─────────┴──────────┴──────────┴──────────┴────────┘
    """
    check_alpha(alpha)
    check_adjust(adjust)
    ranks = mean_ranks(
        table, metric, by=by, alpha=alpha, higher_is_better=higher_is_better,
        model=model, dataset=dataset,
    )  # fmt: skip
    group = as_names(by)
    pairs = rank_pairs(ranks, group, model)
    k = pl.col("n_models")
    diff = pl.col("mean_rank_a") - pl.col("mean_rank_b")
    keys = [*group, "model_a", "model_b"]
    statistic = diff.abs() * _SQRT2 / pl.col("_pr_scale")
    out = pairs.with_columns(estimate=diff, statistic=statistic).with_columns(
        p_value=studentized_range_sf(pl.col("statistic"), k, float("inf"))
    )
    columns = [*keys, "n", "estimate", "statistic", "p_value", "mean_rank_a", "mean_rank_b", "cd"]
    return with_adjusted(out, columns, group, alpha, adjust).sort(keys)
