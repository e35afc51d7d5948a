"""Paired comparison of models fold by fold: the k-fold cross-validated paired t test.

Aslan, Yıldız & Alpaydın (2009, §III) compare two learning algorithms by the K
per-fold differences of a metric computed on the same train/test splits; their
"AUC test" and "error test" are this test applied to the fold AUCs and fold error
rates, and their headline result (§IV-B) is how often the two tests agree.
"""

# ruff: noqa: PT028  (test_agreement is a library function, not a pytest test)

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import polars as pl

from polaroc.compare._dist import t_p_value, t_ppf
from polaroc.compare.fold_table import (
    Adjust,
    Alternative,
    adjusted,
    check_adjust,
    check_alpha,
    check_alternative,
    compared,
    decision,
    negligible,
    non_finite,
    pair_differences,
    poisoned,
    read_fold_table,
    with_adjusted,
)
from polaroc.compare.registry import comparison
from polaroc.core.args import validated
from polaroc.core.inputs import ColumnLike, FrameLike
from polaroc.core.sums import fixed_mean, fixed_std

__all__ = ["paired_ttest", "test_agreement"]

PairwiseTest = Callable[..., pl.LazyFrame]
"""A frequentist pairwise table: ``(table, metric, *, by, alpha, model, …) -> LazyFrame``."""


@validated
def paired_ttest(
    table: FrameLike,
    metric: ColumnLike = "auc",
    *,
    by: str | Iterable[str] | None = None,
    alpha: float = 0.05,
    adjust: Adjust = None,
    alternative: Alternative = "two-sided",
    correction: bool | None = None,
    test_train_ratio: float | None = None,
    model: str = "model",
    fold: str = "fold",
    dataset: str = "dataset",
    repeat: str = "repeat",
) -> pl.LazyFrame:
    """K-fold cross-validated paired t test for every pair of models.

    For models a and b with per-fold values A¹ᵢ, A²ᵢ (i = 1..K) the differences
    dᵢ = A¹ᵢ − A²ᵢ have mean m and standard deviation S, and t = √K·m/S follows
    Student's t with K − 1 degrees of freedom under H₀: E[d] = 0 (Aslan, Yıldız &
    Alpaydın 2009, §III, eqs. 1–2). The test is two-sided; the interval is
    m ± t₍₁₋α/₂, K−1₎·S/√K, and H₀ is rejected when p ≤ α (equivalently when t is
    outside (−t₍α/2₎, t₍α/2₎), their acceptance rule). This is
    ``scipy.stats.ttest_rel`` on the two per-fold vectors.

    **Repeated cross-validation.** A table with a ``repeat`` column pairs the models
    on (repeat, fold) and, by default, applies the corrected repeated k-fold t test
    (Nadeau & Bengio 2003; Bouckaert & Frank 2004): with n = r·K differences of mean
    m and variance S², t = m / √((1/n + n_test/n_train)·S²) on n − 1 df, where
    n_test/n_train = 1/(K − 1) for K folds per repeat unless ``test_train_ratio`` is
    given. The plain t (S²/n) on repeated folds misleads: the r·K differences are not
    independent (every training set overlaps every other, and each sample is tested
    once per repeat), so S²/n underestimates the variance of m and the test rejects
    far too often — more often the more repeats are added. Ask for it explicitly
    with ``correction=False``.

    Parameters
    ----------
    table
        Per-fold table: one row per (by…, model, fold) with a numeric metric column,
        e.g. the output of ``pr.evaluate``. Every model needs every fold within a
        ``by`` group (see Raises).
    metric
        Column name or expression to compare (any metric, higher- or lower-better:
        ``estimate`` is always a − b).
    by
        Columns whose groups are tested separately. ``None`` (default) means
        ``"dataset"`` when the table has that column, else one group; ``()`` one group
        (keyword-only).
    alpha
        Significance level of ``reject`` and of the confidence interval.
    adjust
        A ``statsmodels`` ``multipletests`` method — ``"holm"``, ``"bonferroni"``,
        ``"sidak"``, ``"hochberg"``, ``"hommel"``, ``"fdr_bh"`` or ``"fdr_by"``: add
        ``p_adjusted``, adjusted across the model pairs of each ``by`` group (m counts
        every pair; a NaN p-value stays NaN and counts as p = 1), and base ``reject`` on it.
    alternative
        ``"two-sided"`` (default), ``"greater"`` (H₁: a > b) or ``"less"`` (H₁: a < b)
        for ``p_value`` (as ``scipy.stats.ttest_rel``).
    correction
        Whether to use the corrected resampled t, whose variance of m is
        (1/n + n_test/n_train)·S² instead of S²/n (``statistic``, ``p_value`` and the
        interval use it). ``None`` (default): corrected when the table has a
        ``repeat`` column or ``test_train_ratio`` is given, plain otherwise.
        ``False`` asks for the uncorrected test explicitly (see above why it
        misleads on repeated folds).
    test_train_ratio
        n_test/n_train of the corrected test; default 1/(K − 1) for K folds per
        repeat (K-fold cross-validation). Giving it implies the correction.
    model, fold, dataset, repeat
        Column names of the table. ``repeat`` is used when the table has it and
        ``by`` does not name it.

    Returns
    -------
    pl.LazyFrame
        One row per unordered model pair, sorted: by…, ``model_a`` < ``model_b``
        (in the model column's order: lexical for strings, category order for Enum),
        ``n`` (folds, or (repeat, fold) pairs, used), ``estimate`` (mean a − b),
        ``statistic`` (t), ``df`` (n − 1), ``p_value``, [``p_adjusted`` with
        ``adjust``], ``reject``, ``sd_diff``, ``ci_low``, ``ci_high`` (two-sided at
        level 1 − α whatever ``alternative``).

        * A fold where either model's value is null is left out of that pair
          (``n`` counts the folds used); fewer than two gives null statistics.
        * If all differences are equal (zero variance), ``sd_diff`` is 0 and, as in
          ``ttest_rel``, ``statistic`` is ±inf with ``p_value`` 0 when the mean
          difference is not 0; when it is 0, ``statistic``, ``p_value`` and ``reject``
          are null. "Equal"
          and "0" allow floating-point rounding: within 1e-12 times the largest
          absolute value of the pair (so 0.8 − 0.7 and 0.7 − 0.6 are equal).
        * A NaN value makes the pair's statistics NaN and ``reject`` null.

    Raises
    ------
    ValueError
        Missing columns; and for a ``DataFrame`` input an unbalanced table (a model
        missing a fold — or, with repeats, a fold of some repeat —, a duplicated
        (model, fold) row, a null key, or fewer than two folds in a ``by`` group),
        naming the offending (model, [repeat,] fold) rows; ``correction=False``
        with ``test_train_ratio``. For a ``LazyFrame`` the
        same check runs when the result is collected and raises
        ``polars.exceptions.ComputeError`` with that message.
    TypeError
        A non-numeric metric.

    Notes
    -----
    p-values and the t quantile are computed with scipy (``map_batches``) on the
    result rows only, one per model pair; nothing else leaves Polars and nothing is
    collected. To compute several tables from one lazy per-fold table in a single
    ``pl.collect_all``, pass them a cached plan (``table.cache()``, or cache the
    log's scan): Polars then reads the log once.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> table = pl.DataFrame({
    ...     "model": ["knn"] * 5 + ["mlp"] * 5 + ["nb"] * 5,
    ...     "fold": [1, 2, 3, 4, 5] * 3,
    ...     "auc": [0.81, 0.79, 0.84, 0.80, 0.83,
    ...             0.86, 0.85, 0.88, 0.84, 0.86,
    ...             0.80, 0.82, 0.83, 0.79, 0.84],
    ... })
    >>> pr.paired_ttest(table, "auc").select(
    ...     "model_a", "model_b", "estimate", "statistic", "df", "p_value", "reject"
    ... ).collect()
    shape: (3, 7)
    ┌─────────┬─────────┬──────────┬───────────┬─────┬──────────┬────────┐
    │ model_a ┆ model_b ┆ estimate ┆ statistic ┆ df  ┆ p_value  ┆ reject │
    │ ---     ┆ ---     ┆ ---      ┆ ---       ┆ --- ┆ ---      ┆ ---    │
    │ str     ┆ str     ┆ f64      ┆ f64       ┆ f64 ┆ f64      ┆ bool   │
    ╞═════════╪═════════╪══════════╪═══════════╪═════╪══════════╪════════╡
    │ knn     ┆ mlp     ┆ -0.044   ┆ -8.62911  ┆ 4.0 ┆ 0.000992 ┆ true   │
    │ knn     ┆ nb      ┆ -0.002   ┆ -0.25     ┆ 4.0 ┆ 0.814902 ┆ false  │
    │ mlp     ┆ nb      ┆ 0.042    ┆ 5.715476  ┆ 4.0 ┆ 0.004636 ┆ true   │
    └─────────┴─────────┴──────────┴───────────┴─────┴──────────┴────────┘

    Two repeats of 3-fold cross-validation: the models are paired on (repeat,
    fold), and the corrected t (n = 6, n_test/n_train = 1/2) is less than half the
    plain one, which would reject at p = 0.003:

    >>> repeated = pl.DataFrame({
    ...     "model": ["a"] * 6 + ["b"] * 6,
    ...     "repeat": [1, 1, 1, 2, 2, 2] * 2,
    ...     "fold": [1, 2, 3] * 4,
    ...     "auc": [0.84, 0.86, 0.83, 0.85, 0.82, 0.86,
    ...             0.80, 0.83, 0.81, 0.80, 0.81, 0.82],
    ... })
    >>> pr.paired_ttest(repeated).select("n", "estimate", "statistic", "df", "p_value").collect()
    shape: (1, 5)
    ┌─────┬──────────┬───────────┬─────┬──────────┐
    │ n   ┆ estimate ┆ statistic ┆ df  ┆ p_value  │
    │ --- ┆ ---      ┆ ---       ┆ --- ┆ ---      │
    │ i64 ┆ f64      ┆ f64       ┆ f64 ┆ f64      │
    ╞═════╪══════════╪═══════════╪═════╪══════════╡
    │ 6   ┆ 0.031667 ┆ 2.634826  ┆ 5.0 ┆ 0.046264 │
    └─────┴──────────┴───────────┴─────┴──────────┘
    >>> pr.paired_ttest(repeated, correction=False).select("statistic", "p_value").collect()
    shape: (1, 2)
    ┌───────────┬──────────┐
    │ statistic ┆ p_value  │
    │ ---       ┆ ---      │
    │ f64       ┆ f64      │
    ╞═══════════╪══════════╡
    │ 5.269652  ┆ 0.003273 │
    └───────────┴──────────┘
    """
    check_alpha(alpha)
    check_alternative(alternative)
    if test_train_ratio is not None and not test_train_ratio >= 0:
        msg = f"test_train_ratio must be n_test / n_train >= 0, got {test_train_ratio!r}"
        raise ValueError(msg)
    check_adjust(adjust)
    if correction is False and test_train_ratio is not None:
        msg = "test_train_ratio is the corrected test's; drop it or correction=False"
        raise ValueError(msg)
    # The default n_test/n_train = 1/(K − 1) needs K >= 2 folds in every repeat.
    needs_folds = correction is not False and test_train_ratio is None
    ft = read_fold_table(
        table, metric=metric, by=by, model=model, fold=fold, dataset=dataset, repeat=repeat,
        folds_per_repeat=2 if needs_folds else 1,
    )  # fmt: skip
    if correction is None:
        correction = ft.repeat is not None or test_train_ratio is not None
    keys = [*ft.by, "model_a", "model_b"]
    d = pl.col("_pr_diff")
    # Differences equal up to rounding are equal: their variance is exactly zero.
    scale = pl.max_horizontal(pl.col("_pr_a").abs().max(), pl.col("_pr_b").abs().max())
    finite = d.is_finite().all()
    constant = (d.count() > 1) & finite & negligible(d.max() - d.min(), scale).fill_null(False)
    stats = (
        pair_differences(ft)
        .group_by(keys)
        .agg(
            n=d.count().cast(pl.Int64),
            estimate=fixed_mean(d),
            sd_diff=pl.when(constant).then(0.0).otherwise(fixed_std(d)),
            _pr_zero=constant & negligible(fixed_mean(d), scale).fill_null(False),
            _pr_folds=pl.col("_pr_folds").first(),
            _pr_nan=non_finite(d).any(),
        )
    )
    ratio: pl.Expr | None = None
    if correction:
        default = 1.0 / (pl.col("_pr_folds") - 1.0)
        ratio = default if test_train_ratio is None else pl.lit(float(test_train_ratio))
    out = _t_columns(stats, keys, alpha, adjust, ratio, alternative)
    return poisoned(out, "_pr_nan", keep=[*keys, "n", "df"]).sort(keys)


def _t_columns(
    stats: pl.LazyFrame,
    pairs: list[str],
    alpha: float,
    adjust: str | None,
    ratio: pl.Expr | None,
    alternative: str,
) -> pl.LazyFrame:
    n, m, sd = pl.col("n"), pl.col("estimate"), pl.col("sd_diff")
    df = n - 1
    factor = 1.0 / n if ratio is None else 1.0 / n + ratio
    se = sd * factor.sqrt()
    t = pl.when(pl.col("_pr_zero")).then(None).otherwise(m / se)
    half = t_ppf(1.0 - alpha / 2.0, df) * se
    out = stats.with_columns(df=df).with_columns(
        statistic=pl.when(df > 0).then(t),
        ci_low=pl.when(df > 0).then(m - half),
        ci_high=pl.when(df > 0).then(m + half),
    )
    t_, df_ = pl.col("statistic"), pl.col("df")
    out = out.with_columns(p_value=t_p_value(t_, df_, alternative))
    columns = [*pairs, "n", "estimate", "statistic", "df", "p_value", "sd_diff", "ci_low"]
    columns += ["ci_high", "_pr_nan"]
    return with_adjusted(out, columns, pairs[:-2], alpha, adjust)


@validated
def test_agreement(
    table: FrameLike,
    metrics: Sequence[ColumnLike] = ("auc", "error"),
    *,
    test: PairwiseTest | None = None,
    options: Mapping[str, Any] | None = None,
    names: Sequence[str] | None = None,
    by: str | Iterable[str] | None = None,
    alpha: float = 0.05,
    adjust: Adjust = None,
    lower_is_better: Iterable[str] | None = None,
    model: str = "model",
    fold: str = "fold",
    dataset: str = "dataset",
    repeat: str = "repeat",
) -> pl.LazyFrame:
    """Cross-tabulate the decisions of one pairwise test on two metrics over every model pair.

    Aslan, Yıldız & Alpaydın (2009, §IV-B) run the k-fold paired t test on the fold
    AUCs ("AUC test") and on the fold error rates ("error test") for every pair of
    algorithms on every data set, and count the four outcomes: both accept, only
    the AUC test rejects, only the error test rejects, both reject. The test is a
    parameter: any frequentist pairwise table of polaroc — :func:`paired_ttest`
    (default; corrected on repeated folds, or ``options={"correction": False}``),
    :func:`wilcoxon_test`, ``sign_test``, ``paired_ttest_5x2cv``,
    ``combined_ftest_5x2cv`` — or any function of the same shape.

    Parameters
    ----------
    table
        Per-fold table (see :func:`paired_ttest`).
    metrics
        Exactly two metric columns (names or expressions), first and second test.
    test
        The pairwise test, called as ``test(table, metric, by=by, alpha=alpha,
        model=model, **options)`` (plus ``fold=``/``dataset=`` when it takes them);
        it must return by…, ``model_a``, ``model_b``, …, ``p_value``, ``reject``.
        Default :func:`paired_ttest`.
    options
        Extra keyword arguments of ``test``, e.g. ``{"correction": False}``.
    names
        Two names for the metrics in the output. Default: a column name as given;
        an expression's alias, else its output name when that is one of its
        columns (``pl.col("auc") * 100`` is "auc"), else its text when Polars would
        name it after a literal (``1 - pl.col("error")`` is "1 - error", never
        "literal").
    by
        Groups tested separately, e.g. data sets; the counts are over all pairs of
        all groups. Passed to ``test`` (for :func:`paired_ttest` ``None`` means
        ``"dataset"`` when present).
    alpha
        Significance level of both tests.
    adjust
        A ``multipletests`` method (see :func:`paired_ttest`): each test's p-values
        are adjusted across the model pairs of each by group and its decision is
        based on them.
    lower_is_better
        Metric names for which the lower value wins: used only to report which model
        each test favours, since the tests are two-sided. ``None`` (default): each
        metric's direction from the metric registry (a column it does not know needs
        this list); a metric best at a target value (a calibration slope) is tested
        on its distance from the target.
    model, fold, dataset, repeat
        Column names of the table (``fold``, ``dataset`` and ``repeat`` are passed to a
        registered test that takes them).

    Returns
    -------
    pl.LazyFrame
        Five rows, always in this order: ``case`` ("both accept", "only <m1>
        rejects", "only <m2> rejects", "both reject", and "undecided" for pairs
        where a test's decision is null, e.g. zero variance or a NaN value),
        ``<m1>_rejects``, ``<m2>_rejects``, ``count`` and ``pairs``: a list of
        structs with by…, ``model_a``, ``model_b`` and, per metric,
        ``estimate_<m>`` (the test's ``estimate``), ``p_value_<m>``
        (adjusted with ``adjust``) and ``better_<m>`` (the favoured model, from the
        sign of ``estimate``, read as the registry says (a − b in the metric, wins,
        or mean ranks), and on whether the metric is higher-is-better; null on a tie
        or NaN).

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> table = pl.DataFrame({
    ...     "model": ["a"] * 4 + ["b"] * 4 + ["c"] * 4,
    ...     "fold": [1, 2, 3, 4] * 3,
    ...     "auc": [0.90, 0.92, 0.91, 0.93, 0.80, 0.81, 0.83, 0.80, 0.91, 0.90, 0.92, 0.93],
    ...     "error": [0.10, 0.12, 0.11, 0.10, 0.20, 0.21, 0.19, 0.22, 0.13, 0.10, 0.14, 0.12],
    ... })
    >>> out = pr.test_agreement(table, ("auc", "error")).collect()
    >>> out.select("case", "count")
    shape: (5, 2)
    ┌────────────────────┬───────┐
    │ case               ┆ count │
    │ ---                ┆ ---   │
    │ str                ┆ u32   │
    ╞════════════════════╪═══════╡
    │ both accept        ┆ 1     │
    │ only auc rejects   ┆ 0     │
    │ only error rejects ┆ 0     │
    │ both reject        ┆ 2     │
    │ undecided          ┆ 0     │
    └────────────────────┴───────┘
    >>> out.filter(pl.col("case") == "both reject")["pairs"].explode().struct.unnest().select(
    ...     "model_a", "model_b", "better_auc", "better_error"
    ... )
    shape: (2, 4)
    ┌─────────┬─────────┬────────────┬──────────────┐
    │ model_a ┆ model_b ┆ better_auc ┆ better_error │
    │ ---     ┆ ---     ┆ ---        ┆ ---          │
    │ str     ┆ str     ┆ str        ┆ str          │
    ╞═════════╪═════════╪════════════╪══════════════╡
    │ a       ┆ b       ┆ a          ┆ a            │
    │ b       ┆ c       ┆ c          ┆ c            │
    └─────────┴─────────┴────────────┴──────────────┘
    """
    if isinstance(metrics, str | pl.Expr) or len(metrics) != 2:
        msg = f"metrics must be two metric columns, e.g. ('auc', 'error'); got {metrics!r}"
        raise ValueError(msg)
    check_alpha(alpha)
    check_adjust(adjust)
    labels = [_metric_name(m) for m in metrics] if names is None else list(names)
    if isinstance(names, str) or len(labels) != 2 or labels[0] == labels[1]:
        msg = f"the two metrics need two different names, got {labels!r}; pass names=(…, …)"
        raise ValueError(msg)
    run = paired_ttest if test is None else test
    entry = comparison(run)
    kwargs: dict[str, Any] = {"by": by, "alpha": alpha, "model": model}
    if entry is not None:  # a registered table: pass the column names it takes
        kwargs = entry.accepted(**kwargs, fold=fold, dataset=dataset, repeat=repeat)
    kwargs |= dict(options or {})
    reading = "difference" if entry is None else entry.estimate
    parts = []
    keys: list[str] = []
    for metric, name in zip(metrics, labels, strict=True):
        override = None if lower_is_better is None else name not in set(lower_is_better)
        value, better = compared(metric, override)
        result = run(table, value, **kwargs)
        columns = result.collect_schema().names()
        if not {"model_a", "model_b", "p_value"} <= set(columns):
            msg = f"test {run.__name__} must return model_a, model_b and p_value columns"
            raise ValueError(msg)
        keys = columns[: columns.index("model_b") + 1]
        parts.append(_decisions(result, keys, name, reading, better, alpha, adjust))
    pairs = parts[0].join(parts[1], on=keys, nulls_equal=True)
    return _cases(pairs, keys, labels)


test_agreement.__test__ = False  # type: ignore[attr-defined]  # pytest must not collect it


def _metric_name(metric: ColumnLike) -> str:
    """A metric's label: its name, alias, output column, or text when named after a literal."""
    if isinstance(metric, str):
        return metric
    name = metric.meta.output_name(raise_if_undetermined=False)
    aliased = not metric.meta.undo_aliases().meta.eq(metric)
    if name and (aliased or name in metric.meta.root_names()):
        return name
    text = re.sub(r'col\("([^"]*)"\)', r"\1", str(metric))
    text = re.sub(r"dyn \w+: ", "", text)
    text = re.sub(r"\(([^()\s]+)\)", r"\1", text)
    return text.removeprefix("[").removesuffix("]")


def _decisions(
    test: pl.LazyFrame,
    keys: list[str],
    name: str,
    reading: str,
    higher: bool,
    alpha: float,
    adjust: str | None,
) -> pl.LazyFrame:
    """Per pair: the estimate, the (adjusted) p-value, the favoured model and the decision.

    ``reading`` is the registry's reading of ``estimate`` (a − b in the metric, an
    advantage of a, or a − b in mean rank); ``higher`` whether the metric is
    higher-is-better.
    """
    columns = test.collect_schema().names()
    estimate = pl.col("estimate") if "estimate" in columns else pl.lit(None, pl.Float64)
    m = estimate.cast(pl.Float64)
    if reading == "rank" or (reading == "difference" and not higher):
        m = -m
    better = (
        pl.when(m.is_nan() | (m == 0))
        .then(None)
        .when(m > 0)
        .then(pl.col("model_a"))
        .otherwise(pl.col("model_b"))
    )
    if adjust is not None:
        test = adjusted(test, keys[:-2], adjust, name="_pr_p")
        p = pl.col("_pr_p")
    else:
        p = pl.col("p_value")
    return test.select(
        *keys,
        estimate.alias(f"estimate_{name}"),
        p.alias(f"p_value_{name}"),
        better.alias(f"better_{name}"),
        decision(p, alpha).alias(f"{name}_rejects"),
    )


def _cases(pairs: pl.LazyFrame, keys: list[str], names: list[str]) -> pl.LazyFrame:
    first, second = (pl.col(f"{n}_rejects") for n in names)
    labels = ["both accept", f"only {names[0]} rejects", f"only {names[1]} rejects"]
    labels += ["both reject", "undecided"]
    case = (
        pl.when(first.is_null() | second.is_null())
        .then(pl.lit(labels[4]))
        .when(~first & ~second)
        .then(pl.lit(labels[0]))
        .when(first & ~second)
        .then(pl.lit(labels[1]))
        .when(~first & second)
        .then(pl.lit(labels[2]))
        .otherwise(pl.lit(labels[3]))
    )
    fields = [*keys, *(f"{c}_{n}" for n in names for c in ("estimate", "p_value", "better"))]
    counted = (
        pairs.with_columns(case=case)
        .group_by("case")
        .agg(count=pl.len(), pairs=pl.struct(fields).sort_by(keys))
    )
    grid = pl.LazyFrame(
        {
            "case": labels,
            f"{names[0]}_rejects": [False, True, False, True, None],
            f"{names[1]}_rejects": [False, False, True, True, None],
            "_pr_order": list(range(5)),
        }
    )
    return (
        grid.join(counted, on="case", how="left")
        .sort("_pr_order")
        .with_columns(
            pl.col("count").fill_null(0),
            pl.col("pairs").fill_null(pl.lit([], dtype=counted.collect_schema()["pairs"])),
        )
        .drop("_pr_order")
    )
