"""Bradley's check of the AUC's standard error against its spread over folds.

Bradley (1997, §9.3.2, Figs. 13–14) compares, per learning algorithm and data set,
the standard error of the Wilcoxon statistic SE(W) (Hanley & McNeil's formula,
eq. 10–12) with the standard deviation of the ten cross-validation AUCs, and finds
them strongly correlated across algorithms and data sets (r = 0.96): the fold-to-fold
spread of the AUC estimates its sampling error.
"""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

from polaroc.compare.fold_table import (
    VALUE,
    checked,
    metric_expr,
    negligible,
)
from polaroc.core.inputs import ColumnLike, FrameLike, as_lazy, as_names, require_columns
from polaroc.core.sums import fixed_corr, fixed_mean, fixed_std, fixed_var

__all__ = ["se_vs_sd"]


def se_vs_sd(
    table: FrameLike,
    metric: ColumnLike = "auc",
    se: ColumnLike = "auc_se_hanley_mcneil",
    *,
    by: str | Iterable[str] | None = (),
    model: str = "model",
    fold: str = "fold",
    dataset: str = "dataset",
    repeat: str = "repeat",
) -> pl.LazyFrame:
    """Per model (and data set): mean fold SE of the AUC vs the SD of the fold AUCs.

    ``correlation`` is not a per-model value: it is one Pearson r per ``by`` group — with
    the default ``by=()`` one value for the whole table — repeated on each of its rows.

    For every model — and data set, when the table has a ``dataset`` column — the
    mean over its folds of the standard-error column (Bradley's SE(W), eq. 10) is
    set beside the standard deviation of its fold values of ``metric`` (his
    SD(θ̂)), and the Pearson correlation of the two is taken across all rows of a
    ``by`` group (Bradley 1997, §9.3.2: 0.9608 over nine algorithms × six data
    sets).

    Parameters
    ----------
    table
        Per-fold table with the metric and its standard error, one row per
        (data set, model, fold), e.g. from ``pr.auc`` and
        ``pr.auc_se(..., method="hanley_mcneil")`` in a ``group_by``. Every model
        needs every fold within a data set.
    metric
        The fold metric (default ``"auc"``).
    se
        The fold standard error (default ``"auc_se_hanley_mcneil"``).
    by
        Groups whose rows are correlated separately (default: one correlation over
        all models and data sets, as Bradley).
    model, fold, dataset, repeat
        Column names of the table. With a ``repeat`` column (repeated
        cross-validation) a model's values are its r·K (repeat, fold) values.

    Returns
    -------
    pl.LazyFrame
        One row per (by…, data set, model), sorted: by…, ``dataset`` (if present),
        ``model``, ``k`` (folds with both values), ``mean`` (mean fold metric),
        ``sd`` (its standard deviation, ddof = 1), ``mean_se``, ``ratio``
        (``sd / mean_se``) and ``correlation`` (Pearson r of ``mean_se`` and ``sd``
        over the by group's rows — the whole table's rows by default — the same value
        repeated on each of them). Fold rows with a null metric
        or SE are left out; a NaN makes its model's statistics NaN (and the
        group's ``correlation``). A spread that is zero up to rounding is 0.

    Raises
    ------
    ValueError, TypeError
        Missing columns, non-numeric columns, or an unbalanced table (see
        :func:`polaroc.paired_ttest`).

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> table = pl.DataFrame({
    ...     "model": ["knn"] * 3 + ["mlp"] * 3 + ["nb"] * 3,
    ...     "fold": [1, 2, 3] * 3,
    ...     "auc": [0.80, 0.86, 0.74, 0.90, 0.92, 0.91, 0.84, 0.88, 0.80],
    ...     "auc_se_hanley_mcneil": [0.05, 0.04, 0.06, 0.02, 0.02, 0.03, 0.04, 0.03, 0.05],
    ... })
    >>> pr.se_vs_sd(table).collect()
    shape: (3, 7)
    ┌───────┬─────┬──────┬──────┬──────────┬──────────┬─────────────┐
    │ model ┆ k   ┆ mean ┆ sd   ┆ mean_se  ┆ ratio    ┆ correlation │
    │ ---   ┆ --- ┆ ---  ┆ ---  ┆ ---      ┆ ---      ┆ ---         │
    │ str   ┆ u32 ┆ f64  ┆ f64  ┆ f64      ┆ f64      ┆ f64         │
    ╞═══════╪═════╪══════╪══════╪══════════╪══════════╪═════════════╡
    │ knn   ┆ 3   ┆ 0.8  ┆ 0.06 ┆ 0.05     ┆ 1.2      ┆ 0.999597    │
    │ mlp   ┆ 3   ┆ 0.91 ┆ 0.01 ┆ 0.023333 ┆ 0.428571 ┆ 0.999597    │
    │ nb    ┆ 3   ┆ 0.84 ┆ 0.04 ┆ 0.04     ┆ 1.0      ┆ 0.999597    │
    └───────┴─────┴──────┴──────┴──────────┴──────────┴─────────────┘
    """
    frame = as_lazy(table, argument="table")
    schema = frame.collect_schema()
    group = as_names(by)
    rows = [*group, dataset] if dataset in schema and dataset not in group else group
    require_columns(schema, [*rows, model, fold], what="per-fold table")
    rep = repeat if repeat in schema and repeat not in (*rows, model, fold) else None
    blocks = [fold] if rep is None else [rep, fold]
    value, error = metric_expr(metric, schema), metric_expr(se, schema)
    frame = frame.select(*rows, model, *blocks, value.alias(VALUE), error.alias("_pr_se"))
    frame = checked(table, frame, by=rows, model=model, fold=fold, repeat=rep)
    both = pl.col(VALUE).is_not_null() & pl.col("_pr_se").is_not_null()
    y, s = pl.col(VALUE).filter(both), pl.col("_pr_se").filter(both)
    n = both.sum().cast(pl.Float64)
    zero = negligible(fixed_var(y) * (n - 1), y.filter(y.is_finite()).abs().max(), n)
    per_model = frame.group_by([*rows, model]).agg(
        k=both.sum(),
        mean=fixed_mean(y),
        sd=pl.when(zero.fill_null(False) & y.is_finite().all()).then(0.0).otherwise(fixed_std(y)),
        mean_se=fixed_mean(s),
    )
    usable = pl.col("sd").is_not_null() & pl.col("mean_se").is_not_null()
    r = fixed_corr(pl.col("mean_se").filter(usable), pl.col("sd").filter(usable))
    return per_model.with_columns(
        ratio=pl.col("sd") / pl.col("mean_se"),
        correlation=r.over(group) if group else r,
    ).sort([*rows, model])
