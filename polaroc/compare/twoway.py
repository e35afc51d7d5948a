"""Two-way ANOVA of a per-fold table and Duncan's new multiple range test.

Bradley (1997, §7) compares several learning algorithms on one data set with a
two-way analysis of variance — algorithms as the treatment, the cross-validation
partitions as a blocking factor, one observation per cell — and, where the means
differ, separates them into homogeneous subsets with Duncan's multiple range test
(eq. 14, Tables 2–7).

Duncan's step-down runs on the model means (k ≤ a few hundred per group) as Polars
joins and window functions; the studentized-range quantiles come from scipy on the
table of range sizes (one value per p = 2..k). Nothing is collected.
"""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

from polaroc.compare._dist import f_sf, studentized_range_ppf
from polaroc.compare.fold_table import (
    VALUE,
    FoldTable,
    check_alpha,
    negligible,
    over,
    poisoned,
    read_fold_table,
    with_float_df,
)
from polaroc.core.args import validated
from polaroc.core.inputs import ColumnLike, FrameLike
from polaroc.core.sums import fixed_mean, fixed_sum

__all__ = ["anova", "duncan", "duncan_ranges", "duncan_subsets"]

# One character per subset, so a model's letters concatenate without ambiguity:
# Latin, then Greek, then Cyrillic, lower case before upper case (164 in all).
_LETTERS = "".join(
    [chr(c) for c in range(ord("a"), ord("z") + 1)]
    + [chr(c) for c in range(ord("A"), ord("Z") + 1)]
    + [chr(c) for c in range(0x3B1, 0x3CA) if c != 0x3C2]  # α–ω without final ς
    + [chr(c) for c in range(0x391, 0x3AA) if c != 0x3A2]  # Α–Ω
    + [chr(c) for c in range(0x430, 0x450)]  # а–я
    + [chr(c) for c in range(0x410, 0x430)]  # А–Я
)


def _complete_blocks(ft: FoldTable) -> pl.LazyFrame:
    """The table without blocks in which some model's value is null (balance kept)."""
    return ft.frame.filter(pl.col(VALUE).is_not_null().all().over([*ft.by, *ft.blocks]))


def _sums_of_squares(ft: FoldTable) -> pl.LazyFrame:
    """Per by group: numbers of models and blocks and the three sums of squares.

    A block is a fold, or a (repeat, fold) pair. A sum of squares that is zero up to
    rounding (``negligible``) is reported as 0; ``_pr_nan`` flags a NaN value.
    """
    y, by = pl.col(VALUE), ft.by
    model_mean = over(fixed_mean(y), [*by, ft.model])
    fold_mean = over(fixed_mean(y), [*by, *ft.blocks])
    grand = over(fixed_mean(y), by)
    cells = _complete_blocks(ft).with_columns(_pr_m=model_mean, _pr_f=fold_mean, _pr_g=grand)
    m, f, g = pl.col("_pr_m"), pl.col("_pr_f"), pl.col("_pr_g")
    scale = y.filter(y.is_finite()).abs().max()
    n = pl.len().cast(pl.Float64)

    def ss(terms: pl.Expr) -> pl.Expr:
        total = fixed_sum(terms**2)
        return pl.when(negligible(total, scale, n).fill_null(False)).then(0.0).otherwise(total)

    aggs = {
        "n_models": pl.col(ft.model).n_unique().cast(pl.Int64),
        "n_folds": pl.struct(ft.blocks).n_unique().cast(pl.Int64),
        "ss_model": ss(m - g),
        "ss_fold": ss(f - g),
        "ss_residual": ss(y - m - f + g),
        "_pr_nan": y.is_nan().any(),
    }
    if by:
        return cells.group_by(by).agg(**aggs)
    return cells.select(**aggs).filter(pl.col("n_models") > 0)


def _ratio(ms: pl.Expr, ms_residual: pl.Expr) -> pl.Expr:
    """Return ms / ms_residual; with no residual variance +inf, or null if ms is 0 too.

    The sums of squares are already 0 when zero up to rounding, so these tests are
    exact; NaN propagates (and the row is voided by ``poisoned``).
    """
    return (
        pl.when(ms.is_null() | ms_residual.is_null() | ((ms_residual == 0) & (ms == 0)))
        .then(None)
        .when(ms_residual == 0)
        .then(float("inf"))
        .otherwise(ms / ms_residual)
    )


def anova(
    table: FrameLike,
    metric: ColumnLike = "auc",
    *,
    by: str | Iterable[str] | None = None,
    model: str = "model",
    fold: str = "fold",
    dataset: str = "dataset",
    repeat: str = "repeat",
) -> pl.LazyFrame:
    """Two-way analysis of variance: models as treatment, folds as blocks.

    With k models, K folds and one value yₘf per (model, fold) cell (Bradley 1997,
    §7.1, the "two-way classification"): SS_model = K Σₘ (ȳₘ − ȳ)², SS_fold =
    k Σf (ȳf − ȳ)², SS_residual = Σ (yₘf − ȳₘ − ȳf + ȳ)², with k − 1, K − 1 and
    (k − 1)(K − 1) degrees of freedom; F = MS / MS_residual tests H₀″ (equal model
    means) and H₀′ (equal fold means). This is ``statsmodels``'
    ``anova_lm(ols("y ~ C(model) + C(fold)"))``.

    A table with a ``repeat`` column (repeated cross-validation) has one block per
    (repeat, fold) pair: the "fold" row is then the block factor with r·K − 1 df,
    as ``ols("y ~ C(model) + C(block)")``.

    Parameters
    ----------
    table
        Per-fold table: one row per (by…, model, fold) and a numeric metric column.
    metric
        Column name or expression to analyse.
    by
        Columns whose groups are analysed separately. ``None`` (default) means
        ``"dataset"`` when the table has that column, else one group; ``()`` one group
        (keyword-only).
    model, fold, dataset, repeat
        Column names of the table (``repeat`` is used when the table has it).

    Returns
    -------
    pl.LazyFrame
        Three rows per by group, in this order: by…, ``source`` ("model", "fold",
        "residual"), ``n`` (blocks used), ``statistic`` (F), ``df`` (Float64),
        ``p_value``, ``ss``, ``ms`` (``statistic`` and
        ``p_value`` are null on the residual row).

        * A fold in which any model's value is null is left out (the design stays
          balanced); ``df`` shows the folds used.
        * A NaN value makes every ``ss``, ``ms``, ``statistic`` and ``p_value`` of its by
          group NaN (never a finite number, inf or p = 0).
        * A sum of squares that is zero up to rounding (at most n·(1e-12·max|y|)²
          for n values) is reported as 0. No residual variance (an exactly
          additive table): ``statistic`` is +inf with ``p_value`` 0, or null when the
          factor's ``ss`` is 0 too.

    Raises
    ------
    ValueError, TypeError
        As :func:`polaroc.paired_ttest` (missing columns, unbalanced design — at call
        time for a ``DataFrame``, at collection for a ``LazyFrame`` — or a
        non-numeric metric).

    Notes
    -----
    The F tail probability is computed with scipy (``map_batches``) on the result
    rows only.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> table = pl.DataFrame({
    ...     "model": ["a"] * 4 + ["b"] * 4 + ["c"] * 4,
    ...     "fold": [1, 2, 3, 4] * 3,
    ...     "auc": [0.90, 0.85, 0.88, 0.86, 0.80, 0.78, 0.83, 0.79,
    ...             0.89, 0.84, 0.85, 0.87],
    ... })
    >>> pr.anova(table, "auc").collect()
    shape: (3, 7)
    ┌──────────┬─────┬───────────┬─────┬──────────┬─────────┬──────────┐
    │ source   ┆ n   ┆ statistic ┆ df  ┆ p_value  ┆ ss      ┆ ms       │
    │ ---      ┆ --- ┆ ---       ┆ --- ┆ ---      ┆ ---     ┆ ---      │
    │ str      ┆ i64 ┆ f64       ┆ f64 ┆ f64      ┆ f64     ┆ f64      │
    ╞══════════╪═════╪═══════════╪═════╪══════════╪═════════╪══════════╡
    │ model    ┆ 4   ┆ 22.454545 ┆ 2.0 ┆ 0.001637 ┆ 0.01235 ┆ 0.006175 │
    │ fold     ┆ 4   ┆ 3.272727  ┆ 3.0 ┆ 0.100853 ┆ 0.0027  ┆ 0.0009   │
    │ residual ┆ 4   ┆ null      ┆ 6.0 ┆ null     ┆ 0.00165 ┆ 0.000275 │
    └──────────┴─────┴───────────┴─────┴──────────┴─────────┴──────────┘
    """
    ft = read_fold_table(
        table, metric=metric, by=by, model=model, fold=fold, dataset=dataset, repeat=repeat
    )
    groups = _sums_of_squares(ft)
    k, folds = pl.col("n_models"), pl.col("n_folds")
    df = {"model": k - 1, "fold": folds - 1, "residual": (k - 1) * (folds - 1)}
    ss = {"model": pl.col("ss_model"), "fold": pl.col("ss_fold"), "residual": pl.col("ss_residual")}
    ms = {s: pl.when(df[s] > 0).then(ss[s] / df[s]) for s in df}
    f = {s: _ratio(ms[s], ms["residual"]) for s in ("model", "fold")}
    rows = [
        pl.struct(
            source=pl.lit(s),
            df=df[s],
            ss=ss[s],
            ms=ms[s],
            statistic=f.get(s, pl.lit(None, dtype=pl.Float64)),
            _pr_df2=df["residual"],
            _pr_order=pl.lit(i),
        )
        for i, s in enumerate(df)
    ]
    out = (
        groups.select(*ft.by, "n_folds", "_pr_nan", _pr_rows=pl.concat_list(rows))
        .explode("_pr_rows")
        .unnest("_pr_rows")
        .with_columns(p_value=f_sf(pl.col("statistic"), pl.col("df"), pl.col("_pr_df2")))
        .select(
            *ft.by,
            "source",
            n="n_folds",
            statistic="statistic",
            df="df",
            p_value="p_value",
            ss="ss",
            ms="ms",
            _pr_df2="_pr_df2",
            _pr_order="_pr_order",
            _pr_nan="_pr_nan",
        )
    )
    keep = [*ft.by, "source", "n", "df", "_pr_df2", "_pr_order"]
    out = with_float_df(poisoned(out, "_pr_nan", keep=keep))
    return out.sort([*ft.by, "_pr_order"]).drop("_pr_df2", "_pr_order")


# ------------------------------------------------------------------------ Duncan


def _error_term(ft: FoldTable) -> pl.LazyFrame:
    """Per by group: k, K, the error mean square and its df (from the two-way ANOVA)."""
    df = (pl.col("n_models") - 1) * (pl.col("n_folds") - 1)
    ms = pl.when(df > 0).then(pl.col("ss_residual") / df)
    nan = pl.when(pl.col("_pr_nan")).then(float("nan")).otherwise(ms)
    return _sums_of_squares(ft).select(*ft.by, "n_models", "n_folds", ms_error=nan, df_error=df)


def _ranges(ft: FoldTable, alpha: float) -> pl.LazyFrame:
    """Per by group and p = 2..k: α_p, r_p and R_p (Bradley eq. 14)."""
    p = pl.col("p")
    level = (1.0 - alpha) ** (p - 1).cast(pl.Float64)  # Duncan's protection level
    r_p = studentized_range_ppf(level, p, pl.col("df_error"))
    return (
        _error_term(ft)
        .with_columns(p=pl.int_ranges(2, pl.col("n_models") + 1, dtype=pl.Int64))
        .explode("p")
        .drop_nulls("p")
        .with_columns(alpha_p=1.0 - level, studentized_range=r_p)
        .with_columns(
            critical_range=pl.col("studentized_range")
            * (pl.col("ms_error") / pl.col("n_folds")).sqrt()
        )
    )


@validated
def duncan_ranges(
    table: FrameLike,
    metric: ColumnLike = "auc",
    *,
    by: str | Iterable[str] | None = None,
    alpha: float = 0.05,
    model: str = "model",
    fold: str = "fold",
    dataset: str = "dataset",
    repeat: str = "repeat",
) -> pl.LazyFrame:
    """Duncan's least significant ranges R_p for p = 2..k means.

    R_p = r_p·√(s²/r) (Bradley 1997, eq. 14): s² is the error mean square of the
    two-way ANOVA (:func:`anova`), r the number of folds (observations per mean),
    and r_p the studentized range quantile of p means with the error df at Duncan's
    protection level (1 − α)^(p−1), i.e. α_p = 1 − (1 − α)^(p−1). Two sets of p
    adjacent means differ when their range exceeds R_p.

    Parameters
    ----------
    table, metric, by, model, fold, dataset, repeat
        As for :func:`anova` (``by=None``: the data set when the table has one, else one
        group; keyword-only).
    alpha
        Significance level for a pair of adjacent means.

    Returns
    -------
    pl.LazyFrame
        One row per by group and p: by…, ``n_models``, ``n_folds``, ``ms_error``,
        ``df_error``, ``p``, ``alpha_p``, ``studentized_range`` (r_p),
        ``critical_range`` (R_p).

    Notes
    -----
    r_p is scipy's ``studentized_range.ppf`` (numerical integration, about 0.1 s a
    value, cached), called on the rows of this small table only.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> table = pl.DataFrame({
    ...     "model": ["a"] * 4 + ["b"] * 4 + ["c"] * 4,
    ...     "fold": [1, 2, 3, 4] * 3,
    ...     "auc": [0.90, 0.85, 0.88, 0.86, 0.80, 0.78, 0.83, 0.79,
    ...             0.89, 0.84, 0.85, 0.87],
    ... })
    >>> ranges = pr.duncan_ranges(table, "auc")
    >>> ranges.select("p", "alpha_p", "studentized_range", "critical_range").collect()
    shape: (2, 4)
    ┌─────┬─────────┬───────────────────┬────────────────┐
    │ p   ┆ alpha_p ┆ studentized_range ┆ critical_range │
    │ --- ┆ ---     ┆ ---               ┆ ---            │
    │ i64 ┆ f64     ┆ f64               ┆ f64            │
    ╞═════╪═════════╪═══════════════════╪════════════════╡
    │ 2   ┆ 0.05    ┆ 3.460456          ┆ 0.028693       │
    │ 3   ┆ 0.0975  ┆ 3.586498          ┆ 0.029738       │
    └─────┴─────────┴───────────────────┴────────────────┘
    """
    check_alpha(alpha)
    ft = read_fold_table(
        table, metric=metric, by=by, model=model, fold=fold, dataset=dataset, repeat=repeat
    )
    return _ranges(ft, alpha).sort([*ft.by, "p"])


def _ordered_means(ft: FoldTable) -> pl.LazyFrame:
    """by…, model, mean, pos (0 = highest mean; ties by model id)."""
    means = _complete_blocks(ft).group_by([*ft.by, ft.model]).agg(mean=fixed_mean(pl.col(VALUE)))
    order = [-pl.col("mean"), pl.col(ft.model)]
    pos = pl.int_range(pl.len(), dtype=pl.Int64)
    return means.with_columns(pos=pos.over(ft.by or None, order_by=order))


def _letter(index: pl.Expr) -> pl.Expr:
    """0 → a, …, 25 → z, 26 → A, …, 51 → Z, 52 → α, …; null past the 164th subset."""
    return pl.when(index < len(_LETTERS)).then(pl.lit(_LETTERS).str.slice(index, 1))


def _subsets(ft: FoldTable, alpha: float) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """Ordered means and Duncan's maximal homogeneous subsets (by…, group, lo, hi)."""
    by = ft.by
    means = _ordered_means(ft)
    left = means.select(*by, i="pos", _pr_hi="mean")
    right = means.select(*by, j="pos", _pr_lo="mean")
    pairs = (left.join(right, on=by) if by else left.join(right, how="cross")).filter(
        pl.col("i") < pl.col("j")
    )
    ranges = _ranges(ft, alpha).select(*by, "p", "critical_range")
    pairs = pairs.with_columns(p=pl.col("j") - pl.col("i") + 1).join(ranges, on=[*by, "p"])
    # Step-down with Duncan's protection: the range of means i..j is significant only
    # if it exceeds R_p and every range containing it (i' <= i, j' >= j) does too.
    raw = (pl.col("_pr_hi") - pl.col("_pr_lo") > pl.col("critical_range")).cast(pl.Int8)
    outer_left = raw.cum_min().over([*by, "j"], order_by="i")
    protected = pl.col("_pr_left").cum_min(reverse=True).over([*by, "i"], order_by="j")
    pairs = pairs.with_columns(_pr_left=outer_left).with_columns(significant=protected == 1)
    # Non-significance is inherited by sub-ranges, so from each i the homogeneous
    # means run up to the last j with a non-significant range; the maximal runs
    # (those reaching further than the run from i − 1) are the subsets.
    reach = (
        pairs.filter(~pl.col("significant")).group_by([*by, "i"]).agg(_pr_reach=pl.col("j").max())
    )
    subsets = (
        means.select(*by, i="pos")
        .join(reach, on=[*by, "i"], how="left")
        .with_columns(hi=pl.max_horizontal("i", "_pr_reach"))
        .with_columns(_pr_prev=pl.col("hi").shift(1, fill_value=-1).over(by or None, order_by="i"))
        .filter(pl.col("hi") > pl.col("_pr_prev"))
        .with_columns(
            _pr_index=pl.int_range(pl.len(), dtype=pl.Int64).over(by or None, order_by="i")
        )
        .select(*by, group=_letter(pl.col("_pr_index")), lo="i", hi="hi", _pr_index="_pr_index")
    )
    return means, subsets


def _usable(ft: FoldTable) -> pl.LazyFrame:
    """Per by group: whether the error term and all means are numbers (no NaN/null)."""
    ms = pl.col("ms_error")
    ok_error = (pl.col("n_models") == 1) | (ms.is_not_null() & ms.is_not_nan())
    error = _error_term(ft).select(*ft.by, _pr_ok_error=ok_error)
    means = _ordered_means(ft)
    finite = pl.col("mean").is_not_nan().all().alias("_pr_ok_means")
    ok = means.group_by(ft.by).agg(finite) if ft.by else means.select(finite)
    return error.join(ok, on=ft.by) if ft.by else pl.concat([error, ok], how="horizontal")


@validated
def duncan(
    table: FrameLike,
    metric: ColumnLike = "auc",
    *,
    by: str | Iterable[str] | None = None,
    alpha: float = 0.05,
    model: str = "model",
    fold: str = "fold",
    dataset: str = "dataset",
    repeat: str = "repeat",
) -> pl.LazyFrame:
    """Duncan's new multiple range test: homogeneous subsets of model means as letters.

    The model means are ordered from highest to lowest; the range of any p
    adjacent means is compared with R_p (:func:`duncan_ranges`, Bradley 1997,
    eq. 14), and two means differ only if the range from one to the other exceeds
    R_p **and** so does every range containing both (Duncan's protection rule: no
    difference inside a non-significant range is significant; note R's
    ``agricolae::duncan.test`` skips this rule). The maximal sets of means with no
    significant difference are the subsets Bradley underlines in his Tables 2–7;
    here each gets a letter, ``a`` for the subset holding the highest mean.

    Parameters
    ----------
    table, metric, by, model, fold, dataset, repeat
        As for :func:`anova` (``by=None``: the data set when the table has one, else one
        group; keyword-only).
    alpha
        Significance level for a pair of adjacent means.

    Returns
    -------
    pl.LazyFrame
        One row per (by group, model), highest mean first: by…, ``model`` (the
        table's model column), ``mean``, ``rank`` (1 = highest mean; ties ordered by
        model id) and ``groups``: the letters of the subsets holding the model, one
        character per subset (a–z, then A–Z, Greek, Cyrillic: 164 subsets at most);
        models sharing a letter are not significantly different. ``groups`` is null
        for a group with a NaN mean or without an error variance (fewer than two
        usable folds), and ``rank`` is null in a group with a NaN mean; a lone
        model is ``a``. With repeats, each (repeat, fold) pair is a block.

    Notes
    -----
    Null values drop their fold as in :func:`anova`. Duncan's test runs whatever the
    ANOVA's F says (its largest range plays that role); Bradley applies it after a
    significant F. The step-down is Polars joins and windows over the k(k − 1)/2
    model pairs of each group, plus scipy for r_p (see :func:`duncan_ranges`).

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> table = pl.DataFrame({
    ...     "model": ["a"] * 4 + ["b"] * 4 + ["c"] * 4,
    ...     "fold": [1, 2, 3, 4] * 3,
    ...     "auc": [0.90, 0.85, 0.88, 0.86, 0.80, 0.78, 0.83, 0.79,
    ...             0.89, 0.84, 0.85, 0.87],
    ... })
    >>> pr.duncan(table, "auc").collect()
    shape: (3, 4)
    ┌───────┬────────┬──────┬────────┐
    │ model ┆ mean   ┆ rank ┆ groups │
    │ ---   ┆ ---    ┆ ---  ┆ ---    │
    │ str   ┆ f64    ┆ i64  ┆ str    │
    ╞═══════╪════════╪══════╪════════╡
    │ a     ┆ 0.8725 ┆ 1    ┆ a      │
    │ c     ┆ 0.8625 ┆ 2    ┆ a      │
    │ b     ┆ 0.8    ┆ 3    ┆ b      │
    └───────┴────────┴──────┴────────┘
    """
    check_alpha(alpha)
    ft = read_fold_table(
        table, metric=metric, by=by, model=model, fold=fold, dataset=dataset, repeat=repeat
    )
    by = ft.by
    means, subsets = _subsets(ft, alpha)
    members = (means.join(subsets, on=by) if by else means.join(subsets, how="cross")).filter(
        pl.col("pos").is_between(pl.col("lo"), pl.col("hi"))
    )
    letters = members.group_by([*by, ft.model]).agg(
        groups=pl.col("group").sort_by("_pr_index").str.join("")
    )
    ok = pl.col("_pr_ok_error") & pl.col("_pr_ok_means")
    joined = means.join(letters, on=[*by, ft.model], how="left")
    joined = joined.join(_usable(ft), on=by) if by else joined.join(_usable(ft), how="cross")
    return joined.select(
        *by,
        ft.model,
        "mean",
        rank=pl.when(pl.col("_pr_ok_means")).then(pl.col("pos") + 1),
        groups=pl.when(ok).then(pl.col("groups")),
    ).sort([*by, "rank"])


@validated
def duncan_subsets(
    table: FrameLike,
    metric: ColumnLike = "auc",
    *,
    by: str | Iterable[str] | None = None,
    alpha: float = 0.05,
    model: str = "model",
    fold: str = "fold",
    dataset: str = "dataset",
    repeat: str = "repeat",
) -> pl.LazyFrame:
    """Duncan's homogeneous subsets as a table: one row per subset, with its models.

    The same step-down as :func:`duncan` (with the protection rule); each row is
    one of the maximal sets of adjacent means Bradley (1997, Tables 2–7) underlines.

    Parameters
    ----------
    table, metric, by, alpha, model, fold, dataset, repeat
        As for :func:`duncan` (``by=None``: the data set when the table has one, else one
        group; keyword-only).

    Returns
    -------
    pl.LazyFrame
        by…, ``group`` (the letter :func:`duncan` uses), ``models`` (list, highest
        mean first), ``highest`` and ``lowest`` mean of the subset. No rows for a
        by group whose ``groups`` :func:`duncan` reports as null.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> table = pl.DataFrame({
    ...     "model": ["a"] * 4 + ["b"] * 4 + ["c"] * 4,
    ...     "fold": [1, 2, 3, 4] * 3,
    ...     "auc": [0.90, 0.85, 0.88, 0.86, 0.80, 0.78, 0.83, 0.79,
    ...             0.89, 0.84, 0.85, 0.87],
    ... })
    >>> pr.duncan_subsets(table, "auc").collect()
    shape: (2, 4)
    ┌───────┬────────────┬─────────┬────────┐
    │ group ┆ models     ┆ highest ┆ lowest │
    │ ---   ┆ ---        ┆ ---     ┆ ---    │
    │ str   ┆ list[str]  ┆ f64     ┆ f64    │
    ╞═══════╪════════════╪═════════╪════════╡
    │ a     ┆ ["a", "c"] ┆ 0.8725  ┆ 0.8625 │
    │ b     ┆ ["b"]      ┆ 0.8     ┆ 0.8    │
    └───────┴────────────┴─────────┴────────┘
    """
    check_alpha(alpha)
    ft = read_fold_table(
        table, metric=metric, by=by, model=model, fold=fold, dataset=dataset, repeat=repeat
    )
    by = ft.by
    means, subsets = _subsets(ft, alpha)
    members = (means.join(subsets, on=by) if by else means.join(subsets, how="cross")).filter(
        pl.col("pos").is_between(pl.col("lo"), pl.col("hi"))
    )
    flags = _usable(ft)
    members = members.join(flags, on=by) if by else members.join(flags, how="cross")
    members = members.filter(pl.col("_pr_ok_error") & pl.col("_pr_ok_means"))
    out = members.group_by([*by, "group", "_pr_index"]).agg(
        models=pl.col(ft.model).sort_by("pos"),
        highest=pl.col("mean").max(),
        lowest=pl.col("mean").min(),
    )
    return out.sort([*by, "_pr_index"]).drop("_pr_index")
