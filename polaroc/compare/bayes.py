"""Bayesian comparison of two models: the correlated t test and the signed-rank test.

Instead of a p-value, each test gives the posterior probabilities of three regions
of the difference a − b: a is practically better (> rope), the two are practically
equivalent (within ±rope, the *region of practical equivalence*), b is practically
better (< −rope). Benavoli, Corani, Demšar & Zaffalon (2017) argue for them over
null-hypothesis tests. Corani & Benavoli (2015) give the correlated t test for the
(repeated) folds of one data set; Benavoli et al. (2014) the signed-rank test across
data sets. Both equal baycomp 1.0.3's ``CorrelatedTTest`` and ``SignedRankTest``.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import AbstractContextManager, nullcontext

import numpy as np
import polars as pl

from polaroc.compare._dist import t_sf
from polaroc.compare.across import dataset_means
from polaroc.compare.fold_table import (
    ROUNDING,
    check_integer,
    negligible,
    non_finite,
    pair_differences,
    poisoned,
    read_fold_table,
    settled_difference,
)
from polaroc.core.args import validated
from polaroc.core.inputs import ColumnLike, FrameLike
from polaroc.core.sums import fixed_mean, fixed_var

__all__ = ["bayes_signed_rank", "bayes_ttest"]

_PROBABILITIES = ("p_a_higher", "p_rope", "p_b_higher")
_CHUNK = 1 << 22  # posterior weights held in memory at once (floats), ~32 MB an array


def _check_rope(rope: float) -> None:
    if not rope >= 0:
        msg = f"rope must be a half-width >= 0 of the region of practical equivalence, got {rope!r}"
        raise ValueError(msg)


# ------------------------------------------------------------------ correlated t


@validated(defaults={"rope": "Benavoli et al. (2017): a ROPE of 0.01 on an AUC"})
def bayes_ttest(
    table: FrameLike,
    metric: ColumnLike = "auc",
    *,
    rope: float = 0.01,
    test_train_ratio: float | None = None,
    by: str | Iterable[str] | None = None,
    model: str = "model",
    fold: str = "fold",
    repeat: str = "repeat",
    dataset: str = "dataset",
) -> pl.LazyFrame:
    """Correlated Bayesian t test for every pair of models on one data set's folds.

    The n = r·k differences dᵢ = aᵢ − bᵢ over the (repeat, fold) blocks are
    modelled as correlated normals with correlation ρ = n_test/(n_test + n_train)
    (the folds share training data). Under the matching non-informative prior the
    posterior of the mean difference μ is Student's t with n − 1 degrees of freedom,
    location d̄ and scale √((1/n + ρ/(1 − ρ))·S²), S² the sample variance of the dᵢ
    (Corani & Benavoli 2015, Theorem 1 and eq. 9; ρ/(1 − ρ) = n_test/n_train is
    Nadeau & Bengio's correction). The three probabilities are P(μ > rope),
    P(|μ| ≤ rope) and P(μ < −rope) under that posterior.

    Parameters
    ----------
    table
        Per-fold table: one row per (by…, model, [repeat,] fold), e.g. ``pr.evaluate``'s.
        A ``repeat`` column makes it a repeated cross-validation (fold ids may restart
        in each repeat); every model needs every fold of every repeat.
    metric
        Column name or expression (``estimate`` is a − b of it).
    rope
        Half-width of the region of practical equivalence, in the metric's units
        (0 gives ``p_rope`` 0 and splits the posterior at 0).
    test_train_ratio
        n_test/n_train of one split; ``None`` (default) means 1/(k − 1) for k folds
        (of one repeat) — k-fold cross-validation, baycomp's default.
    by
        Groups tested separately (keyword-only). ``None`` (default) means
        ``"dataset"`` when the table has that column, else one group; ``()`` one group.
    model, fold, repeat, dataset
        Column names of the table.

    Returns
    -------
    pl.LazyFrame
        One row per unordered model pair: by…, ``model_a`` < ``model_b``, ``n``
        (blocks used), ``estimate`` (mean a − b), ``p_a_higher`` = P(a − b > rope),
        ``p_rope``, ``p_b_higher`` = P(a − b < −rope).

        * A block where either value is null is left out; fewer than two: null.
        * Zero variance (all differences equal up to rounding): the posterior is a
          point mass at d̄, so each probability is 0 or 1 (½ and ½ when rope = 0 and
          d̄ = 0), as baycomp.
        * A NaN value makes the pair's probabilities NaN.

    Raises
    ------
    ValueError
        Missing columns, ``rope < 0``, an unbalanced design (for a ``LazyFrame``:
        ``ComputeError`` at collection).
    TypeError
        A non-numeric metric.

    Notes
    -----
    baycomp's ``CorrelatedTTest(x=a, y=b, rope, runs=r).probs()`` returns
    (``p_a_higher``, ``p_rope``, ``p_b_higher``) in this order. The t tails are
    scipy's, computed on the result rows only.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> table = pl.DataFrame({
    ...     "model": ["knn"] * 5 + ["mlp"] * 5,
    ...     "fold": [1, 2, 3, 4, 5] * 2,
    ...     "auc": [0.81, 0.79, 0.84, 0.80, 0.83, 0.86, 0.85, 0.88, 0.84, 0.86],
    ... })
    >>> pr.bayes_ttest(table, "auc", rope=0.01).collect()
    shape: (1, 7)
    ┌─────────┬─────────┬─────┬──────────┬────────────┬──────────┬────────────┐
    │ model_a ┆ model_b ┆ n   ┆ estimate ┆ p_a_higher ┆ p_rope   ┆ p_b_higher │
    │ ---     ┆ ---     ┆ --- ┆ ---      ┆ ---        ┆ ---      ┆ ---        │
    │ str     ┆ str     ┆ i64 ┆ f64      ┆ f64        ┆ f64      ┆ f64        │
    ╞═════════╪═════════╪═════╪══════════╪════════════╪══════════╪════════════╡
    │ knn     ┆ mlp     ┆ 5   ┆ -0.044   ┆ 0.001061   ┆ 0.004582 ┆ 0.994356   │
    └─────────┴─────────┴─────┴──────────┴────────────┴──────────┴────────────┘
    """
    _check_rope(rope)
    if test_train_ratio is not None and not test_train_ratio >= 0:
        msg = f"test_train_ratio must be n_test / n_train >= 0, got {test_train_ratio!r}"
        raise ValueError(msg)
    ft = read_fold_table(
        table, metric=metric, by=by, model=model, fold=fold, dataset=dataset, repeat=repeat,
        folds_per_repeat=2 if test_train_ratio is None else 1,
    )  # fmt: skip
    keys = [*ft.by, "model_a", "model_b"]
    d = pl.col("_pr_diff")
    scale = pl.max_horizontal(pl.col("_pr_a").abs().max(), pl.col("_pr_b").abs().max())
    n = d.count().cast(pl.Int64)
    stats = (
        pair_differences(ft)
        .group_by(keys)
        .agg(
            n=n,
            estimate=fixed_mean(d),
            _pr_var=fixed_var(d),
            _pr_constant=negligible(d.max() - d.min(), scale),
            _pr_zero=negligible(fixed_mean(d), scale),
            _pr_folds=pl.col("_pr_folds").first(),
            _pr_nan=non_finite(d).any(),
        )
    )
    ratio = (
        1.0 / (pl.col("_pr_folds") - 1.0)
        if test_train_ratio is None
        else pl.lit(float(test_train_ratio))
    )
    out = stats.with_columns(_posterior_t(rope, ratio)).select(
        *keys, "n", "estimate", *_PROBABILITIES, "_pr_nan"
    )
    return poisoned(out, "_pr_nan", keep=[*keys, "n"]).sort(keys)


def _posterior_t(rope: float, ratio: pl.Expr) -> list[pl.Expr]:
    """P(μ > rope), P(|μ| ≤ rope), P(μ < −rope) for μ ~ t(n − 1, d̄, scale)."""
    n, m = pl.col("n").cast(pl.Float64), pl.col("estimate")
    scale = ((1.0 / n + ratio) * pl.col("_pr_var")).sqrt()
    df = n - 1.0
    above = t_sf((rope - m) / scale, df)
    below = t_sf((m + rope) / scale, df)
    # A point mass at d̄ when the differences do not vary (baycomp's var == 0 rule).
    point_above = (m > rope).cast(pl.Float64)
    point_below = (m < -rope).cast(pl.Float64)
    if rope == 0:
        half = pl.col("_pr_zero").cast(pl.Float64) * 0.5
        point_above = pl.when(pl.col("_pr_zero")).then(half).otherwise(point_above)
        point_below = pl.when(pl.col("_pr_zero")).then(half).otherwise(point_below)
    usable = pl.col("n") > 1
    constant = pl.col("_pr_constant").fill_null(value=False)
    p_a = pl.when(usable).then(pl.when(constant).then(point_above).otherwise(above))
    p_b = pl.when(usable).then(pl.when(constant).then(point_below).otherwise(below))
    p_rope = pl.lit(0.0) if rope == 0 else 1.0 - p_a - p_b
    return [
        p_a.alias("p_a_higher"),
        pl.when(usable).then(p_rope).alias("p_rope"),
        p_b.alias("p_b_higher"),
    ]


# ---------------------------------------------------------------- signed rank


@validated(defaults={"rope": "Benavoli et al. (2017): a ROPE of 0.01 on an AUC"})
def bayes_signed_rank(
    table: FrameLike,
    metric: ColumnLike = "auc",
    *,
    rope: float = 0.01,
    prior: float = 0.5,
    n_samples: int = 50000,
    seed: int | None = None,
    by: str | Iterable[str] | None = (),
    model: str = "model",
    dataset: str = "dataset",
) -> pl.LazyFrame:
    """Bayesian signed-rank test for every pair of models over the data sets.

    The differences dᵢ = aᵢ − bᵢ of the models' mean metric on N data sets get a
    Dirichlet-process posterior whose prior is a pseudo-observation at 0 of weight
    ``prior``: a posterior sample is a weight vector w ~ Dirichlet(prior, 1, …, 1)
    on (0, d₁, …, d_N), and its probability that a is practically better is
    θ₊ = Σᵢⱼ wᵢwⱼ·H(dᵢ + dⱼ − 2·rope) (H the step function, ½ at 0); θ₋ likewise
    with −dᵢ − dⱼ, and θ_rope = 1 − θ₊ − θ₋ (Benavoli, Mangili, Corani, Zaffalon &
    Ruggeri 2014, eqs. 9–11, with the rope of Benavoli et al. 2017, §4). Each
    reported probability is the share of posterior samples in which that region is
    the most probable of the three (as Benavoli et al. 2017 and baycomp report them).

    Parameters
    ----------
    table
        Per-fold table with a ``dataset`` column (or one row per data set and
        model); the metric is averaged over the rows of each (data set, model).
    metric
        Column name or expression.
    rope
        Half-width of the region of practical equivalence (0: ``p_rope`` is 0).
    prior
        Weight of the prior pseudo-observation at 0 (baycomp's default 0.5).
    n_samples
        Posterior samples per model pair.
    seed
        Seed of the one random stream (``numpy.random.default_rng``) that draws every
        pair's samples; ``None``: fresh entropy.
    by
        Groups tested separately (keyword-only). ``None`` and ``()`` (default) mean
        one group: the data sets are the sample, so the data set is never a by key.
    model, dataset
        Column names of the table.

    Returns
    -------
    pl.LazyFrame
        One row per unordered model pair: by…, ``model_a`` < ``model_b``, ``n``
        (data sets used), ``estimate`` (mean of the differences a − b),
        ``p_a_higher``, ``p_rope``, ``p_b_higher``.

        * A data set where either mean is null is left out of that pair.
        * A sample in which two regions tie for the largest probability counts
          half to each (baycomp gives it to the first; this keeps the test
          symmetric in a and b, and only matters for degenerate inputs such as
          all differences 0 with rope 0).
        * A NaN mean makes the pair's probabilities NaN.

    Raises
    ------
    ValueError, TypeError
        As :func:`polaroc.wilcoxon_test`; ``rope < 0``, ``prior <= 0`` or
        ``n_samples < 1``.

    Notes
    -----
    All pairs are sampled at once: the Dirichlet weights are normalised Gamma draws
    (exponentials for the data sets, Gamma(prior) for the pseudo-observation, two
    streams of one seed) over an array of every pair × sample × data set, pairs with
    fewer data sets padded with zero weight. The array is filled in chunks of pairs
    only to bound memory: the streams, hence the result, do not depend on the chunk
    size. The quadratic forms γᵀHγ of all samples of a pair are one matrix product
    (N + 1 columns). For a fixed seed the result depends on the set of pairs (they
    share the streams). Agrees with baycomp's ``SignedRankTest(x=a, y=b, rope,
    prior).probs()`` within Monte Carlo error.

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
    >>> out = pr.bayes_signed_rank(table, "auc", rope=0.01, seed=0).collect()
    >>> out.select("model_a", "model_b", "n", "p_a_higher", "p_rope", "p_b_higher").with_columns(
    ...     pl.col("^p_.*$").round(2)
    ... )
    shape: (1, 6)
    ┌─────────┬─────────┬─────┬────────────┬────────┬────────────┐
    │ model_a ┆ model_b ┆ n   ┆ p_a_higher ┆ p_rope ┆ p_b_higher │
    │ ---     ┆ ---     ┆ --- ┆ ---        ┆ ---    ┆ ---        │
    │ str     ┆ str     ┆ i64 ┆ f64        ┆ f64    ┆ f64        │
    ╞═════════╪═════════╪═════╪════════════╪════════╪════════════╡
    │ c45     ┆ nb      ┆ 8   ┆ 0.98       ┆ 0.02   ┆ 0.0        │
    └─────────┴─────────┴─────┴────────────┴────────┴────────────┘
    """
    _check_rope(rope)
    if not prior > 0:
        msg = f"prior must be a weight > 0 of the pseudo-observation at 0, got {prior!r}"
        raise ValueError(msg)
    n_samples = check_integer(n_samples, "n_samples", minimum=1)
    seed = None if seed is None else check_integer(seed, "seed", minimum=0)
    ft = dataset_means(table, metric=metric, by=by, model=model, dataset=dataset)
    keys = [*ft.by, "model_a", "model_b"]
    pairs = pair_differences(ft).select(*keys, ft.fold, settled_difference())
    dd = pl.col("_pr_diff")
    stats = pairs.group_by(keys).agg(
        n=dd.count().cast(pl.Int64),
        _pr_diff=dd.sort_by(ft.fold),
        _pr_nan=non_finite(dd).any(),
    )
    stats = stats.with_columns(estimate=pl.col("_pr_diff").list.mean())  # in data-set order

    def sample(s: pl.Series) -> pl.Series:
        return _signed_rank_shares(s, rope, prior, n_samples, seed)

    # Sorted, then one batch of every pair: the draw is reproducible for a seed.
    shares = pl.col("_pr_diff").map_batches(
        sample, return_dtype=pl.Struct(dict.fromkeys(_PROBABILITIES, pl.Float64))
    )
    out = (
        stats.sort(keys)
        .with_columns(shares.alias("_pr_p"))
        .select(*keys, "n", "estimate", pl.col("_pr_p").struct.unnest(), "_pr_nan")
    )
    return poisoned(out, "_pr_nan", keep=[*keys, "n"])


def _signed_rank_shares(
    diffs: pl.Series, rope: float, prior: float, n_samples: int, seed: int | None
) -> pl.Series:
    """Share of posterior samples in which each region wins, for every pair (row) at once."""
    rows = len(diffs)
    lengths = diffs.list.len().fill_null(0).to_numpy().astype(np.int64)
    width = int(lengths.max(initial=0)) + 1  # + the prior pseudo-observation at 0
    # One row per pair: (0, d₁, …, d_N), padded with NaN that gets weight 0.
    values = np.full((rows, width), np.nan)
    values[:, 0] = 0.0
    flat = diffs.explode().drop_nulls().to_numpy().astype(float)
    owner = np.repeat(np.arange(rows), lengths)
    position = np.arange(len(flat)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    values[owner, 1 + position] = flat
    real = np.arange(width) <= lengths[:, None]
    usable = (lengths > 0) & ~np.isnan(np.where(real, values, 0.0)).any(axis=1)
    values[~usable] = np.where(real[~usable], 0.0, np.nan)
    regions = _region_matrices(values, rope)
    # Dirichlet(prior, 1, …, 1) weights are independent Gamma draws divided by their sum:
    # Gamma(1) = exponential for the data sets, Gamma(prior) for the pseudo-observation,
    # each from its own stream of one seed, consumed in pair order.
    streams = np.random.SeedSequence(seed).spawn(2)
    data_rng, prior_rng = (np.random.default_rng(s) for s in streams)
    out = np.full((rows, 3), np.nan)
    step = max(1, _CHUNK // (n_samples * width))
    for start in range(0, rows, step):  # chunks of pairs, only to bound memory
        part = slice(start, min(rows, start + step))
        size = (real[part].shape[0], n_samples, width)
        gamma = data_rng.standard_exponential(size)
        gamma[:, :, 0] = prior_rng.standard_gamma(prior, size[:2])
        gamma *= real[part, None, :]
        out[part] = _winner_shares(gamma, regions[part], rope)
    out[~usable] = np.nan
    missing = pl.Series(lengths == 0)
    columns = [
        pl.Series(name, out[:, i]).set(missing, None) for i, name in enumerate(_PROBABILITIES)
    ]
    return pl.struct(columns, eager=True).alias(diffs.name)


def _region_matrices(values: np.ndarray, rope: float) -> np.ndarray:
    """Per pair, [H(dᵢ + dⱼ − 2·rope) | H(−dᵢ − dⱼ − 2·rope)] side by side (H(0) = ½).

    The sums are compared exactly as written, as baycomp does; NaN padding gives 0.
    """
    sums = values[:, :, None] + values[:, None, :]
    with np.errstate(invalid="ignore"):
        above = (sums > 2.0 * rope) + 0.5 * (sums == 2.0 * rope)
        below = (sums < -2.0 * rope) + 0.5 * (sums == -2.0 * rope)
    return np.concatenate([above, below], axis=2)


def _one_blas_thread() -> AbstractContextManager[object]:
    """Limit BLAS to one thread when threadpoolctl (a scikit-learn dependency) is there."""
    try:
        from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]  # no hints shipped
    except ImportError:  # pragma: no cover
        return nullcontext()
    limits: AbstractContextManager[object] = threadpool_limits(1, user_api="blas")
    return limits


def _winner_shares(gamma: np.ndarray, regions: np.ndarray, rope: float) -> np.ndarray:
    """Shares of samples (axis 1) in which P(a higher), P(rope), P(b higher) is largest.

    θ₊ = wᵀ H₊ w with w = γ / Σγ, i.e. γᵀ H₊ γ / (Σγ)²: one batched matrix product
    for both regions.
    """
    width = gamma.shape[2]
    with _one_blas_thread():  # many tiny products: threads only add overhead
        products = np.matmul(gamma, regions)  # (pairs, samples, 2·width)
    total = gamma.sum(axis=2) ** 2
    p_a = np.einsum("psi,psi->ps", gamma, products[:, :, :width]) / total
    p_b = np.einsum("psi,psi->ps", gamma, products[:, :, width:]) / total
    p_rope = 1.0 - p_a - p_b if rope > 0 else np.zeros_like(p_a)
    probs = np.stack([p_a, p_rope, p_b], axis=2)
    best = probs >= probs.max(axis=2, keepdims=True) - ROUNDING  # ties share the sample
    shares: np.ndarray = (best / best.sum(axis=2, keepdims=True)).mean(axis=1)
    return shares
