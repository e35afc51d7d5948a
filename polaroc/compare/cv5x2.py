"""The 5 × 2 cross-validated paired t test and the combined 5 × 2 cv F test.

Dietterich (1998) showed that the k-fold paired t test rejects too often because
its folds share training data, and proposed five replications of 2-fold
cross-validation: the two halves of one replication share nothing, so the variance
of their difference can be estimated without that bias. Alpaydın (1999) combined
all ten differences into an F statistic that is more robust to which difference
happens to come first. Aslan, Yıldız & Alpaydın list both beside the k-fold test.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

import polars as pl

from polaroc.compare._dist import f_sf, t_p_value
from polaroc.compare.fold_table import (
    Adjust,
    Alternative,
    FoldTable,
    check_adjust,
    check_alpha,
    check_alternative,
    negligible,
    non_finite,
    pair_differences,
    poisoned,
    read_fold_table,
    with_adjusted,
)
from polaroc.core.args import validated
from polaroc.core.guard import guarded, listing, problems
from polaroc.core.inputs import ColumnLike, FrameLike, as_lazy
from polaroc.core.sums import fixed_mean, fixed_sum

__all__ = ["combined_ftest_5x2cv", "paired_ttest_5x2cv"]

_REPEATS, _FOLDS = 5, 2


def _five_by_two(
    table: FrameLike,
    metric: ColumnLike,
    by: str | Iterable[str] | None,
    *,
    model: str,
    fold: str,
    repeat: str,
    dataset: str,
    caller: str,
) -> tuple[pl.LazyFrame, list[str]]:
    """Per model pair: d₁₁, Σᵢsᵢ², Σᵢⱼdᵢⱼ² and flags, from a checked 5 × 2 table.

    dᵢⱼ = aᵢⱼ − bᵢⱼ in repeat i, fold j (repeats and folds in sorted order),
    d̄ᵢ = (dᵢ₁ + dᵢ₂)/2, sᵢ² = (dᵢ₁ − d̄ᵢ)² + (dᵢ₂ − d̄ᵢ)² (Dietterich 1998, §3.5).
    """
    schema = as_lazy(table, argument="table").collect_schema()
    ft = None
    if repeat in schema:
        ft = read_fold_table(
            table, metric=metric, by=by, model=model, fold=fold, dataset=dataset, repeat=repeat
        )
    if ft is None or ft.repeat is None:
        msg = (
            f"{caller} needs a {repeat!r} column: the 5 × 2 design is 5 repeats of 2-fold "
            "cross-validation, each repeat's rows marked with its id; for one k-fold run "
            "use pr.paired_ttest"
        )
        raise ValueError(msg)
    checked = replace(ft, frame=_checked_design(table, ft, caller))
    keys = [*ft.by, "model_a", "model_b"]
    pairs = pair_differences(checked).with_columns(
        _pr_scale=pl.max_horizontal(pl.col("_pr_a").abs(), pl.col("_pr_b").abs()),
    )
    dd = pl.col("_pr_diff")
    per_repeat = pairs.group_by([*keys, ft.repeat]).agg(
        _pr_first=dd.get(pl.col(ft.fold).arg_min()),
        _pr_s2=fixed_sum((dd - fixed_mean(dd)).pow(2)),
        _pr_d2=fixed_sum(dd.pow(2)),
        _pr_n=dd.count(),
        _pr_sum=fixed_sum(dd),
        _pr_scale=pl.col("_pr_scale").max(),
        _pr_nan=non_finite(dd).any(),
    )
    stats = per_repeat.group_by(keys).agg(
        _pr_d11=pl.col("_pr_first").get(pl.col(ft.repeat).arg_min()),
        _pr_s2=fixed_sum(pl.col("_pr_s2")),
        _pr_d2=fixed_sum(pl.col("_pr_d2")),
        n=pl.col("_pr_n").sum().cast(pl.Int64),
        estimate=fixed_sum(pl.col("_pr_sum")) / pl.col("_pr_n").sum(),
        _pr_complete=pl.col("_pr_n").sum() == _REPEATS * _FOLDS,
        _pr_scale=pl.col("_pr_scale").max(),
        _pr_nan=pl.col("_pr_nan").any(),
    )
    scale = pl.col("_pr_scale")
    stats = stats.with_columns(
        # Σsᵢ² is a sum of ten squared deviations: zero up to rounding is zero.
        _pr_flat=negligible(pl.col("_pr_s2"), scale, _REPEATS * _FOLDS).fill_null(value=False),
        _pr_d11_zero=negligible(pl.col("_pr_d11"), scale).fill_null(value=False),
        _pr_d2_zero=negligible(pl.col("_pr_d2"), scale, _REPEATS * _FOLDS).fill_null(value=False),
    )
    return stats, keys


def _checked_design(table: FrameLike, ft: FoldTable, caller: str) -> pl.LazyFrame:
    """``ft.frame``, failing unless every by group has exactly 5 repeats × 2 folds.

    At once for a ``DataFrame`` input (whose ``ft.frame`` is already collected and
    checked: the plan keeps no check), at collection for a ``LazyFrame``.
    """
    assert ft.repeat is not None
    group: list[str | pl.Expr] = [*ft.by] or [pl.lit(0).alias("_pr_all")]
    # folds per repeat = (repeat, fold) cells / repeats: fold ids may restart or run on
    repeats = pl.col(ft.repeat).n_unique()
    sizes = ft.frame.group_by(group).agg(
        _pr_repeats=repeats, _pr_folds=pl.struct(ft.repeat, ft.fold).n_unique() // repeats
    )
    wrong = sizes.filter((pl.col("_pr_repeats") != _REPEATS) | (pl.col("_pr_folds") != _FOLDS))
    where = f"({', '.join([*ft.by, ft.repeat + 's', ft.fold + 's'])})"
    found = problems([listing(wrong, [*ft.by, "_pr_repeats", "_pr_folds"], f"found {where}:")])
    head = f"polaroc: {caller} needs {_REPEATS} {ft.repeat}s × {_FOLDS} {ft.fold}s (5 × 2 cv); "
    tail = (
        ". Run 5 repeats of 2-fold cross-validation, or use pr.paired_ttest (corrected "
        "repeated k-fold t) for other designs."
    )
    if isinstance(table, pl.DataFrame):
        if not wrong.select(pl.len()).collect().item():
            return ft.frame
        raise ValueError(head + found.collect().item() + tail)
    return guarded(table, ft.frame, found, head, tail)


@validated
def paired_ttest_5x2cv(
    table: FrameLike,
    metric: ColumnLike = "auc",
    *,
    by: str | Iterable[str] | None = None,
    alpha: float = 0.05,
    adjust: Adjust = None,
    alternative: Alternative = "two-sided",
    model: str = "model",
    fold: str = "fold",
    repeat: str = "repeat",
    dataset: str = "dataset",
) -> pl.LazyFrame:
    """Dietterich's 5 × 2 cv paired t test for every pair of models.

    With dᵢⱼ the difference a − b of the metric in repeat i (1..5), fold j (1, 2),
    d̄ᵢ = (dᵢ₁ + dᵢ₂)/2 and sᵢ² = (dᵢ₁ − d̄ᵢ)² + (dᵢ₂ − d̄ᵢ)²,
    t = d₁₁ / √(Σᵢ sᵢ² / 5) follows Student's t with 5 degrees of freedom under
    H₀ (Dietterich 1998, §3.5, eq. 4). Two-sided; "first" (d₁₁) is the smallest
    repeat id's smallest fold id.

    Parameters
    ----------
    table
        Per-fold table with a ``repeat`` column: one row per (by…, model, repeat,
        fold) with exactly 5 repeats and 2 fold ids (the same in every repeat).
    metric
        Column name or expression (any metric: the test is two-sided).
    by
        Groups tested separately (keyword-only). ``None`` (default) means
        ``"dataset"`` when the table has that column, else one group; ``()`` one group.
    alpha
        Significance level of ``reject``.
    adjust
        A ``statsmodels`` ``multipletests`` method — ``"holm"``, ``"bonferroni"``,
        ``"sidak"``, ``"hochberg"``, ``"hommel"``, ``"fdr_bh"`` or ``"fdr_by"``: add
        ``p_adjusted``, adjusted across the model pairs of each ``by`` group (m counts
        every pair; a NaN p-value stays NaN and counts as p = 1), and base ``reject`` on it.
    alternative
        ``"two-sided"`` (default), ``"greater"`` (H₁: a > b) or ``"less"`` (H₁: a < b)
        for ``p_value`` (t on 5 df).
    model, fold, repeat, dataset
        Column names of the table.

    Returns
    -------
    pl.LazyFrame
        One row per unordered model pair: by…, ``model_a`` < ``model_b``, ``n``
        (differences used, 10), ``estimate`` (mean of the ten a − b), ``statistic`` (t),
        ``df`` (5), ``p_value``, ``reject`` (and ``p_adjusted``).

        * A null value (a missing difference): ``statistic``, ``p_value``, ``reject`` null.
        * Σsᵢ² zero up to rounding: ``statistic`` ±inf with ``p_value`` 0 when d₁₁ ≠ 0,
          null when d₁₁ = 0 too (as ``paired_ttest``).
        * A NaN or infinite difference makes ``statistic`` and ``p_value`` NaN and
          ``reject`` null.

    Raises
    ------
    ValueError
        No ``repeat`` column; a design that is not 5 × 2 (the message names the
        numbers of repeats and folds found) or not balanced. For a ``LazyFrame`` the
        design checks run at collection (``ComputeError`` with the same message).
    TypeError
        A non-numeric metric.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> table = pl.DataFrame({
    ...     "model": ["a"] * 10 + ["b"] * 10,
    ...     "repeat": [1, 1, 2, 2, 3, 3, 4, 4, 5, 5] * 2,
    ...     "fold": [1, 2] * 10,
    ...     "auc": [0.86, 0.84, 0.85, 0.88, 0.83, 0.86, 0.87, 0.85, 0.84, 0.86,
    ...             0.80, 0.82, 0.83, 0.81, 0.80, 0.84, 0.82, 0.80, 0.83, 0.82],
    ... })
    >>> pr.paired_ttest_5x2cv(table, "auc").drop("model_a", "model_b").collect()
    shape: (1, 6)
    ┌─────┬──────────┬───────────┬─────┬──────────┬────────┐
    │ n   ┆ estimate ┆ statistic ┆ df  ┆ p_value  ┆ reject │
    │ --- ┆ ---      ┆ ---       ┆ --- ┆ ---      ┆ ---    │
    │ i64 ┆ f64      ┆ f64       ┆ f64 ┆ f64      ┆ bool   │
    ╞═════╪══════════╪═══════════╪═════╪══════════╪════════╡
    │ 10  ┆ 0.037    ┆ 2.656845  ┆ 5.0 ┆ 0.045054 ┆ true   │
    └─────┴──────────┴───────────┴─────┴──────────┴────────┘
    """
    check_alpha(alpha)
    check_adjust(adjust)
    check_alternative(alternative)
    stats, keys = _five_by_two(
        table, metric, by, model=model, fold=fold, repeat=repeat, dataset=dataset,
        caller="paired_ttest_5x2cv",
    )  # fmt: skip
    d11 = pl.col("_pr_d11")
    t = (
        pl.when(~pl.col("_pr_complete"))
        .then(None)
        .when(pl.col("_pr_flat") & pl.col("_pr_d11_zero"))
        .then(None)
        .when(pl.col("_pr_flat"))
        .then(d11.sign() * float("inf"))
        .otherwise(d11 / (pl.col("_pr_s2") / _REPEATS).sqrt())
    )
    out = stats.with_columns(statistic=t, df=pl.lit(_REPEATS, dtype=pl.Int64))
    t_, df_ = pl.col("statistic"), pl.col("df")
    out = out.with_columns(p_value=t_p_value(t_, df_, alternative))
    columns = [*keys, "n", "estimate", "statistic", "df", "p_value", "_pr_nan"]
    out = with_adjusted(out, columns, keys[:-2], alpha, adjust)
    return poisoned(out, "_pr_nan", keep=[*keys, "n", "df"]).sort(keys)


@validated
def combined_ftest_5x2cv(
    table: FrameLike,
    metric: ColumnLike = "auc",
    *,
    by: str | Iterable[str] | None = None,
    alpha: float = 0.05,
    adjust: Adjust = None,
    model: str = "model",
    fold: str = "fold",
    repeat: str = "repeat",
    dataset: str = "dataset",
) -> pl.LazyFrame:
    """Alpaydın's combined 5 × 2 cv F test for every pair of models.

    With dᵢⱼ and sᵢ² as in :func:`paired_ttest_5x2cv`,
    f = Σᵢ Σⱼ dᵢⱼ² / (2 Σᵢ sᵢ²) follows the F distribution with 10 and 5 degrees
    of freedom under H₀ (Alpaydın 1999, eq. 3). It uses all ten differences rather
    than d₁₁ alone, and has lower type I error and higher power than the 5 × 2 cv
    t test. The test is two-sided in the differences (f grows with |d|); H₀ is
    rejected when p ≤ α.

    Parameters
    ----------
    table, metric, by, alpha, adjust, model, fold, repeat, dataset
        As for :func:`paired_ttest_5x2cv` (``by=None``: the data set when the table has one,
        else one group); f grows with |d|: there is no one-sided F.

    Returns
    -------
    pl.LazyFrame
        One row per unordered model pair: by…, ``model_a`` < ``model_b``, ``n``,
        ``estimate`` (mean of the ten a − b), ``statistic`` (f),
        ``df_num`` (10), ``df_den`` (5), ``p_value``, ``reject`` (and
        ``p_adjusted``).

        * A null value: ``statistic``, ``p_value``, ``reject`` null.
        * Σsᵢ² zero up to rounding: ``statistic`` inf with ``p_value`` 0 when some
          difference is not 0, null when all are 0.
        * A NaN or infinite difference makes ``statistic`` and ``p_value`` NaN and
          ``reject`` null.

    Raises
    ------
    ValueError, TypeError
        As :func:`paired_ttest_5x2cv`.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> table = pl.DataFrame({
    ...     "model": ["a"] * 10 + ["b"] * 10,
    ...     "repeat": [1, 1, 2, 2, 3, 3, 4, 4, 5, 5] * 2,
    ...     "fold": [1, 2] * 10,
    ...     "auc": [0.86, 0.84, 0.85, 0.88, 0.83, 0.86, 0.87, 0.85, 0.84, 0.86,
    ...             0.80, 0.82, 0.83, 0.81, 0.80, 0.84, 0.82, 0.80, 0.83, 0.82],
    ... })
    >>> pr.combined_ftest_5x2cv(table, "auc").drop("model_a", "model_b").collect()
    shape: (1, 7)
    ┌─────┬──────────┬───────────┬────────┬────────┬──────────┬────────┐
    │ n   ┆ estimate ┆ statistic ┆ df_num ┆ df_den ┆ p_value  ┆ reject │
    │ --- ┆ ---      ┆ ---       ┆ ---    ┆ ---    ┆ ---      ┆ ---    │
    │ i64 ┆ f64      ┆ f64       ┆ f64    ┆ f64    ┆ f64      ┆ bool   │
    ╞═════╪══════════╪═══════════╪════════╪════════╪══════════╪════════╡
    │ 10  ┆ 0.037    ┆ 3.392157  ┆ 10.0   ┆ 5.0    ┆ 0.094949 ┆ false  │
    └─────┴──────────┴───────────┴────────┴────────┴──────────┴────────┘
    """
    check_alpha(alpha)
    check_adjust(adjust)
    stats, keys = _five_by_two(
        table, metric, by, model=model, fold=fold, repeat=repeat, dataset=dataset,
        caller="combined_ftest_5x2cv",
    )  # fmt: skip
    f = (
        pl.when(~pl.col("_pr_complete"))
        .then(None)
        .when(pl.col("_pr_flat") & pl.col("_pr_d2_zero"))
        .then(None)
        .when(pl.col("_pr_flat"))
        .then(float("inf"))
        .otherwise(pl.col("_pr_d2") / (2.0 * pl.col("_pr_s2")))
    )
    out = stats.with_columns(
        statistic=f,
        df_num=pl.lit(_REPEATS * _FOLDS, dtype=pl.Int64),
        df_den=pl.lit(_REPEATS, dtype=pl.Int64),
    )
    out = out.with_columns(p_value=f_sf(pl.col("statistic"), pl.col("df_num"), pl.col("df_den")))
    columns = [*keys, "n", "estimate", "statistic", "df_num", "df_den", "p_value", "_pr_nan"]
    out = with_adjusted(out, columns, keys[:-2], alpha, adjust)
    return poisoned(out, "_pr_nan", keep=[*keys, "n", "df_num", "df_den"]).sort(keys)
