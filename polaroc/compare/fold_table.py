"""Reading a per-fold table: the balanced model × fold design every comparison needs.

A per-fold table has one row per (by…, model, fold) and metric columns (the output
of ``pr.evaluate``, or any frame of that shape). The paired t test, the ANOVA and
Duncan's test compare models fold by fold, so within each ``by`` group every model
must have exactly one row for every fold, and there must be at least two folds.

``read_fold_table`` checks the schema when it is called (missing columns are a
``ValueError``, a non-numeric metric a ``TypeError``) and the design itself:

* for a ``DataFrame`` the design is checked at once, and a problem is a
  ``ValueError`` that lists the missing or duplicated (model, fold) rows;
* for a ``LazyFrame`` the same check is part of the plan and fires when the result
  is collected, as a ``polars.exceptions.ComputeError`` quoting the same message.

Null metric values are not design errors: each test documents how it treats them.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

import polars as pl

from polaroc.core.guard import guarded, listing, problems
from polaroc.core.inputs import (
    ColumnLike,
    FrameLike,
    as_lazy,
    as_names,
    describe,
    require_columns,
    to_expr,
)
from polaroc.core.registry import Metric, lookup
from polaroc.core.sums import fixed_sum

VALUE = "_pr_value"

# Relative size of floating-point noise in a metric value: differences smaller than
# ROUNDING times the values' magnitude are treated as zero (and values that agree
# to DIGITS significant digits as ties), so 0.8 − 0.7 and 0.7 − 0.6 are equal.
ROUNDING = 1e-12
DIGITS = 12


def negligible(x: pl.Expr, scale: pl.Expr, n: pl.Expr | float = 1.0) -> pl.Expr:
    """Whether ``x`` — a difference, spread, variance or sum of ``n`` squares — is zero.

    "Zero up to rounding": a difference or spread is zero when ``|x| <= ROUNDING·scale``
    with ``scale`` the largest absolute value it was computed from; a sum of ``n``
    squares (or a variance times its df) is zero when ``x <= n·(ROUNDING·scale)²``.
    Pass ``n`` for squares, leave it 1 for plain differences and a variance is
    ``negligible(var·df, scale, df)``. The single place every comparison decides that
    a variance or a sum of squares is zero.

    Null when ``x`` or ``scale`` is NaN or null: Polars orders NaN above every number
    (``NaN <= NaN`` is true), and a NaN must never pass for a zero. An infinite ``x``
    (``x − inf``) is never zero, and an infinite ``scale`` admits only an exact zero:
    the rounding allowance of an infinite value is not infinite.
    """
    n_expr = n if isinstance(n, pl.Expr) else pl.lit(n)
    squares = isinstance(n, pl.Expr) or n != 1.0
    finite_scale = pl.when(scale.is_finite()).then(scale).otherwise(0.0)
    bound = (ROUNDING * finite_scale) ** 2 * n_expr if squares else ROUNDING * finite_scale
    nan = x.is_nan() | scale.is_nan()
    return pl.when(~nan).then(x.is_finite() & (x.abs() <= bound))


def non_finite(x: pl.Expr) -> pl.Expr:
    """``x`` is NaN or ±inf (null stays null): the flag that voids a comparison.

    The one rule for non-finite values in a comparison of two models: a difference
    a − b that is NaN or ±inf (a NaN value, an infinite value such as an sAUC of
    +inf, or inf − inf) is not a number any test can rank, count or average, so
    every test of that pair reports NaN statistics and a null decision (never a tie,
    a win, zero variance or p = 1).
    """
    return ~x.is_finite()


def poisoned(
    frame: pl.LazyFrame, flag: str, keep: Iterable[str], nulled: Iterable[str] = ()
) -> pl.LazyFrame:
    """NaN in, NaN out: where column ``flag`` is true, void every statistic of the row.

    The one mechanism for NaN in a per-fold table: each comparison computes ``flag``
    (its row — a model pair or a by group — was computed from a NaN metric value)
    and passes its result through here, so a NaN value never turns into a finite
    number, ±inf, p = 0 or a decision. Every float column not in ``keep`` becomes
    NaN (a null — no statistic, as on an ANOVA residual row — stays null), every
    Boolean column (decisions such as ``reject``) and every column named in
    ``nulled`` (ranks, letters) becomes null. ``flag`` is dropped.
    """
    schema = frame.collect_schema()
    keep, nulled = set(keep), set(nulled)
    bad = pl.col(flag).fill_null(value=False)
    columns = []
    for name, dtype in schema.items():
        if name == flag:
            continue
        if name in keep:
            columns.append(pl.col(name))
        elif name in nulled or dtype == pl.Boolean:
            columns.append(pl.when(~bad).then(pl.col(name)).alias(name))
        elif dtype.is_float():
            value = pl.col(name)
            nan = pl.when(bad & value.is_not_null()).then(float("nan")).otherwise(value)
            columns.append(nan.alias(name))
        else:
            columns.append(pl.col(name))
    return frame.select(columns)


Adjust = Literal["holm", "bonferroni", "sidak", "hochberg", "hommel", "fdr_bh", "fdr_by"] | None
"""Multiple-comparison adjustment of a frequentist pairwise table's p-values."""

ADJUSTMENTS = ("holm", "bonferroni", "sidak", "hochberg", "hommel", "fdr_bh", "fdr_by")

Alternative = Literal["two-sided", "greater", "less"]
"""The alternative hypothesis of a test of a − b: ``"greater"`` means a > b."""


def check_adjust(adjust: str | None) -> None:
    """Raise ``ValueError`` unless ``adjust`` is one of ``ADJUSTMENTS`` or ``None``."""
    if adjust is not None and adjust not in ADJUSTMENTS:
        msg = f"adjust must be one of {', '.join(map(repr, ADJUSTMENTS))} or None, got {adjust!r}"
        raise ValueError(msg)


def check_alternative(alternative: str) -> None:
    """Raise ``ValueError`` unless ``alternative`` is "two-sided", "greater" or "less"."""
    if alternative not in ("two-sided", "greater", "less"):
        msg = f"alternative must be 'two-sided', 'greater' or 'less', got {alternative!r}"
        raise ValueError(msg)


def check_integer(value: object, name: str, *, minimum: int | None = None) -> int:
    """``value`` as a Python ``int`` (NumPy integers too), else ``TypeError``/``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        msg = f"{name} must be an integer, got {type(value).__name__}: {value!r}"
        raise TypeError(msg)
    out = int(value)
    if minimum is not None and out < minimum:
        msg = f"{name} must be an integer >= {minimum}, got {out}"
        raise ValueError(msg)
    return out


def direction(metric: ColumnLike, override: bool | None = None) -> Metric:
    """The registry's entry for ``metric`` (:func:`polaroc.core.registry.lookup`).

    ``override`` (a table's ``higher_is_better=``) wins where given, so a user's own
    column is compared in the direction given; a metric the registry does not know,
    without it, is a ``ValueError`` listing the known ones. An expression is judged
    by its output name.
    """
    return lookup(metric, override)


def compared(metric: ColumnLike, override: bool | None = None) -> tuple[pl.Expr, bool]:
    """``metric`` as the rank tests compare it, and whether higher is better.

    A ``"target"`` metric (best at a value: a calibration slope at 1) is compared on
    its distance from the target (:meth:`Metric.loss`), lower being better; any other
    as it is, in the registry's direction (or ``override``'s). The expression keeps
    the metric's output name.
    """
    entry = direction(metric, override)
    expr = to_expr(metric, argument="metric")
    if entry.target is None:
        return expr, entry.higher_is_better
    name = expr.meta.output_name(raise_if_undetermined=False) or entry.name
    return entry.loss(expr).alias(name), False


def over(expr: pl.Expr, by: list[str], **kwargs: Any) -> pl.Expr:
    """``expr.over(by, ...)``; with no ``by`` and no ordering, ``expr`` itself."""
    if not by and not kwargs:
        return expr
    return expr.over(by or None, **kwargs)


def _hommel(frame: pl.LazyFrame, by: list[str]) -> pl.LazyFrame:
    """Hommel's adjusted p-values of the sorted ``_pr_q`` (ranks ``_pr_r``, counts ``_pr_m``).

    As ``statsmodels``' ``multipletests(method="hommel")``: for every subset size s = 2..m,
    c(s) = min over the s largest p-values p₍ₘ₋ₛ₊ₖ₎ of s·p₍ₘ₋ₛ₊ₖ₎/k; a p-value among
    those s is raised to c(s), any other to min(s·p, c(s)); the adjusted p-value is the
    largest of these. Two self-joins within each by group (m² rows: result tables are small).
    """
    rows = frame.select(*by, "_pr_r", "_pr_q", "_pr_m")
    sizes = (
        rows.select(*by, "_pr_m")
        .unique()
        .with_columns(_pr_s=pl.int_ranges(2, pl.col("_pr_m") + 1, dtype=pl.Int64))
    )
    sizes = sizes.explode("_pr_s").drop_nulls("_pr_s").drop("_pr_m")
    r, s, m, q = pl.col("_pr_r"), pl.col("_pr_s"), pl.col("_pr_m"), pl.col("_pr_q")
    top = r > m - s  # p₍ᵣ₎ is among the s largest
    cim = (
        _crossed(rows, sizes, by)
        .filter(top)
        .group_by([*by, "_pr_s"])
        .agg(_pr_c=(s * q / (r - m + s)).min())
    )
    raised = (
        _crossed(rows, cim, by)
        .with_columns(
            _pr_h=pl.when(top).then(pl.col("_pr_c")).otherwise(pl.min_horizontal(s * q, "_pr_c"))
        )
        .group_by([*by, "_pr_r"])
        .agg(_pr_h=pl.col("_pr_h").max())
    )
    out = frame.join(raised, on=[*by, "_pr_r"], how="left")
    return out.with_columns(_pr_raw=pl.max_horizontal("_pr_q", "_pr_h")).drop("_pr_h")


def adjusted(
    frame: pl.LazyFrame, by: list[str], adjust: str, p: str = "p_value", name: str = "p_adjusted"
) -> pl.LazyFrame:
    """``frame`` with column ``name``: ``p`` adjusted across the rows of each ``by`` group.

    ``adjust`` is a ``statsmodels.stats.multitest.multipletests`` method: ``"bonferroni"``
    (m·p), ``"sidak"`` (1 − (1 − p)ᵐ), ``"holm"`` (step-down, Holm 1979),
    ``"hochberg"`` (step-up, Hochberg 1988), ``"hommel"`` (Hommel 1988), ``"fdr_bh"``
    (Benjamini & Hochberg 1995) and ``"fdr_by"`` (Benjamini & Yekutieli 2001); all
    capped at 1. m counts every row (every pair tested): a NaN or null p-value keeps
    its NaN/null adjusted value and enters the others' adjustment as p = 1.
    Polars window functions over the small result table (Hommel: two self-joins).
    """
    check_adjust(adjust)
    raw = pl.col(p)
    q = raw.fill_nan(None).fill_null(1.0).cast(pl.Float64)
    frame = frame.with_columns(
        _pr_q=q,
        _pr_r=over(q.rank("ordinal"), by).cast(pl.Int64),
        _pr_m=over(pl.len(), by).cast(pl.Int64),
    )
    qc, r, m = pl.col("_pr_q"), pl.col("_pr_r").cast(pl.Float64), pl.col("_pr_m").cast(pl.Float64)

    if adjust == "hommel":
        frame = _hommel(frame, by)
    else:
        if adjust == "bonferroni":
            value = m * qc
        elif adjust == "sidak":
            # −expm1(m·log1p(−p)) as statsmodels, with expm1(x) = 2·sinh(x/2)·exp(x/2)
            # (exact for tiny p, where exp(x) − 1 would cancel)
            x = m * (-qc).log1p()
            value = -2.0 * (x / 2.0).sinh() * (x / 2.0).exp()
        elif adjust == "holm":
            value = _in_row_order(((m - r + 1.0) * qc).cum_max(), by)
        elif adjust == "hochberg":
            value = _in_row_order(((m - r + 1.0) * qc).cum_min(reverse=True), by)
        elif adjust == "fdr_bh":
            value = _in_row_order((qc * m / r).cum_min(reverse=True), by)
        else:  # fdr_by: c(m) = Σ 1/j over j = 1..m, the ranks of the group
            c = over(fixed_sum(1.0 / r), by)
            value = _in_row_order((qc * m * c / r).cum_min(reverse=True), by)
        frame = frame.with_columns(_pr_raw=value)
    capped = pl.min_horizontal(pl.col("_pr_raw"), 1.0)
    kept = pl.when(raw.is_null() | raw.is_nan()).then(raw.cast(pl.Float64)).otherwise(capped)
    return frame.with_columns(kept.alias(name)).drop("_pr_q", "_pr_r", "_pr_m", "_pr_raw")


def _in_row_order(expr: pl.Expr, by: list[str]) -> pl.Expr:
    """A cumulative ``expr`` taken in ascending p order (``_pr_r``) within each by group."""
    if by:
        return expr.over(by, order_by="_pr_r")
    return expr.over(pl.lit(0), order_by="_pr_r")


def decision(p: pl.Expr, alpha: float) -> pl.Expr:
    """``p <= alpha``; null when the p-value is null or NaN (NaN is never a decision)."""
    return pl.when(p.is_not_nan()).then(p <= alpha)


DF_COLUMNS = ("df", "df_num", "df_den")


def with_float_df(out: pl.LazyFrame) -> pl.LazyFrame:
    """``out`` with its degrees of freedom (``df``, ``df_num``, ``df_den``) as Float64.

    Degrees of freedom can be fractional (Welch–Satterthwaite's in DeLong's unpaired
    test), so every comparison table reports them as Float64 and any two tables
    concatenate diagonally (DESIGN "Comparison tables share one shape").
    """
    present = [c for c in DF_COLUMNS if c in out.collect_schema()]
    return out.with_columns(pl.col(present).cast(pl.Float64)) if present else out


def with_adjusted(
    out: pl.LazyFrame, columns: list[str], by: list[str], alpha: float, adjust: str | None
) -> pl.LazyFrame:
    """``out``'s ``columns`` with ``p_adjusted`` (with ``adjust``) and ``reject`` after ``p_value``.

    ``reject`` is based on ``p_adjusted`` when ``adjust`` is given, else on ``p_value``.
    Shared by every frequentist pairwise table, so each has by…, model_a, model_b, n,
    estimate, statistic, df…, p_value, [p_adjusted], reject, extras.
    """
    at = columns.index("p_value") + 1
    head, tail = columns[:at], columns[at:]
    out = with_float_df(out)
    if adjust is None:
        return out.select(*head, decision(pl.col("p_value"), alpha).alias("reject"), *tail)
    out = adjusted(out, by, adjust)
    reject = decision(pl.col("p_adjusted"), alpha).alias("reject")
    return out.select(*head, "p_adjusted", reject, *tail)


def two_sided(upper: pl.Expr, lower: pl.Expr, alternative: str) -> pl.Expr:
    """The p-value for ``alternative`` from the two tails P(T ≥ t) and P(T ≤ t).

    ``"greater"`` (a > b): the upper tail; ``"less"``: the lower tail;
    ``"two-sided"``: twice the smaller tail, capped at 1.
    """
    if alternative == "greater":
        return upper
    if alternative == "less":
        return lower
    # min_horizontal skips nulls and ranks NaN last: keep a null or NaN tail as it is
    both = (2.0 * pl.min_horizontal(upper, lower)).clip(upper_bound=1.0)
    void = upper.is_null() | lower.is_null()
    nan = upper.is_nan() | lower.is_nan()
    return pl.when(void).then(None).when(nan).then(float("nan")).otherwise(both)


def check_alpha(alpha: float) -> None:
    """Raise ``ValueError`` unless ``0 < alpha < 1``."""
    if not 0 < alpha < 1:
        msg = f"alpha must be in (0, 1), got {alpha!r}"
        raise ValueError(msg)


@dataclass(frozen=True)
class FoldTable:
    """A validated per-fold table: ``by…, model, fold`` and the metric as ``VALUE``."""

    frame: pl.LazyFrame
    by: list[str]
    model: str
    fold: str
    metric: str  # the metric's name, for messages and output columns
    repeat: str | None = None  # the repeat column of a repeated cross-validation

    @property
    def blocks(self) -> list[str]:
        """The columns naming one block (one split): ``[repeat, fold]`` or ``[fold]``."""
        return [self.fold] if self.repeat is None else [self.repeat, self.fold]


def resolve_by(schema: pl.Schema, by: str | Iterable[str] | None, dataset: str) -> list[str]:
    """``by=None`` means ``[dataset]`` when the table has that column, else no grouping."""
    if by is None:
        return [dataset] if dataset in schema else []
    return as_names(by)


def metric_expr(metric: ColumnLike, schema: pl.Schema, *, what: str = "per-fold table") -> pl.Expr:
    """Return the metric as a ``Float64`` expression, checking its columns and dtype."""
    expr = to_expr(metric, argument="metric")
    require_columns(schema, expr.meta.root_names(), what=what)
    dtype = pl.LazyFrame(schema=schema).select(expr).collect_schema().dtypes()[0]
    if not dtype.is_numeric():
        msg = (
            f"metric {describe(expr)} has dtype {dtype}; it must be numeric. "
            "Cast it first, e.g. pl.col('auc').cast(pl.Float64)."
        )
        raise TypeError(msg)
    return expr.cast(pl.Float64)


def _crossed(left: pl.LazyFrame, right: pl.LazyFrame, by: list[str]) -> pl.LazyFrame:
    """Every row of ``left`` with every row of ``right`` within each ``by`` group."""
    return left.join(right, on=by) if by else left.join(right, how="cross")


def design_listings(
    frame: pl.LazyFrame,
    *,
    by: list[str],
    model: str,
    fold: str,
    min_folds: int = 2,
    repeat: str | None = None,
    folds_per_repeat: int = 1,
) -> list[pl.LazyFrame]:
    """What is unbalanced in ``frame``, as ``listing`` frames (see ``problems``).

    A cell is a block — a fold, or with ``repeat`` a (repeat, fold) pair — that exists
    in the table (in some model's rows of the by group); every model needs exactly one
    row in every existing cell, and a cell that no model has is never asked for (fold
    ids may restart in each repeat or run on across repeats). ``min_folds`` counts the
    cells of a by group; with ``repeat``, ``folds_per_repeat`` the least number of
    folds every repeat must have (2 for a corrected test whose n_test/n_train is
    1/(K − 1); a repeated hold-out has 1).
    """
    blocks = [fold] if repeat is None else [repeat, fold]
    keys = [*by, model, *blocks]
    has_null = pl.any_horizontal(pl.col(keys).is_null())
    nulls = frame.filter(has_null).select(keys)
    frame = frame.filter(~has_null)
    cells = frame.group_by(keys).agg(pl.len().alias("_pr_rows"))
    models = frame.select([*by, model]).unique()
    present = frame.select([*by, *blocks]).unique()
    missing = _crossed(models, present, by).join(cells, on=keys, how="anti")
    duplicated = cells.filter(pl.col("_pr_rows") > 1)
    group_keys: list[str | pl.Expr] = [*by] or [pl.lit(0).alias("_pr_all")]
    few = present.group_by(group_keys).agg(pl.len().alias("_pr_folds"))
    few = few.filter(pl.col("_pr_folds") < min_folds)
    group = f"({', '.join(by)})" if by else "the table"
    what = fold if repeat is None else f"({repeat}, {fold})"
    listings = [
        listing(nulls, keys, f"rows with a null key ({', '.join(keys)}):"),
        listing(missing, keys, f"missing ({', '.join(keys)}) rows:"),
        listing(duplicated, [*keys, "_pr_rows"], f"duplicated ({', '.join(keys)}, count):"),
        listing(few, [*by, "_pr_folds"], f"fewer than {min_folds} {what} values in {group}:"),
    ]
    if repeat is not None and folds_per_repeat > 1:
        per_repeat = present.group_by([*by, repeat]).agg(pl.len().alias("_pr_k"))
        single = per_repeat.filter(pl.col("_pr_k") < folds_per_repeat).select(*by, repeat)
        listings.append(
            listing(
                single,
                [*by, repeat],
                f"a repeated hold-out (one {fold} per {repeat}; the corrected t needs "
                f"n_test/n_train, pass test_train_ratio=) in ({', '.join([*by, repeat])}):",
            )
        )
    return listings


def design_problems(
    frame: pl.LazyFrame,
    *,
    by: list[str],
    model: str,
    fold: str,
    min_folds: int = 2,
    repeat: str | None = None,
    folds_per_repeat: int = 1,
) -> pl.LazyFrame:
    """One row with column ``problem``: what is unbalanced in ``frame``, or ``""``."""
    listings = design_listings(
        frame, by=by, model=model, fold=fold, min_folds=min_folds, repeat=repeat,
        folds_per_repeat=folds_per_repeat,
    )  # fmt: skip
    return problems(listings)


def checked(
    table: FrameLike,
    frame: pl.LazyFrame,
    *,
    by: list[str],
    model: str,
    fold: str,
    min_folds: int = 2,
    repeat: str | None = None,
    folds_per_repeat: int = 1,
) -> pl.LazyFrame:
    """Return ``frame`` guarded by the design check (eager for a ``DataFrame`` input).

    A ``DataFrame`` input is checked once, now: ``frame`` (a projection of it) is
    collected, one aggregation tells whether the design is balanced (the listings
    that quote the offending rows run only when it is not), and the result reads the
    collected frame with no check left in its plan, so a small table does not pay
    for the check twice.

    For a ``LazyFrame`` both ``frame`` and the result are cached plan nodes: the
    check reads ``frame`` several times and the tests read the result several
    times, and without a cache node each read copies the whole upstream plan
    (chained tables then grow multiplicatively and take the optimizer seconds to
    deduplicate).
    """
    design = partial(
        design_problems, by=by, model=model, fold=fold, min_folds=min_folds, repeat=repeat,
        folds_per_repeat=folds_per_repeat,
    )  # fmt: skip
    head, tail = _design_message(model, fold, repeat)
    if isinstance(table, pl.DataFrame):
        data = frame.collect()
        sure = balanced(
            data, by=by, model=model, fold=fold, min_folds=min_folds, repeat=repeat,
            folds_per_repeat=folds_per_repeat,
        )  # fmt: skip
        problem = "" if sure else design(data.lazy()).collect().item()
        if problem:
            raise ValueError(head + problem + tail)
        return data.lazy()
    frame = frame.cache()
    return guarded(table, frame, design(frame), head, tail).cache()


def balanced(
    data: pl.DataFrame,
    *,
    by: list[str],
    model: str,
    fold: str,
    min_folds: int = 2,
    repeat: str | None = None,
    folds_per_repeat: int = 1,
) -> bool:
    """Whether ``data`` surely passes :func:`design_listings`: one aggregation, no listing.

    Per by group, with no null key: as many rows as distinct (model, block) cells (no
    duplicate), as many cells as models × blocks (none missing), at least
    ``min_folds`` blocks and, with ``repeat``, at least ``folds_per_repeat`` folds in
    every repeat. ``False`` means "run the listings" (they decide, and name the rows).
    """
    blocks = [fold] if repeat is None else [repeat, fold]
    keys = [*by, model, *blocks]

    def distinct(columns: list[str]) -> pl.Expr:
        return pl.struct(columns).n_unique() if len(columns) > 1 else pl.col(columns[0]).n_unique()

    sizes = [
        pl.any_horizontal(pl.col(keys).is_null()).any().alias("null"),
        pl.len().cast(pl.Int64).alias("rows"),
        distinct([model, *blocks]).cast(pl.Int64).alias("cells"),
        pl.col(model).n_unique().cast(pl.Int64).alias("models"),
        distinct(blocks).cast(pl.Int64).alias("blocks"),
    ]
    if repeat is not None and folds_per_repeat > 1:
        per_repeat = pl.struct(blocks).unique().struct.field(repeat).unique_counts()
        sizes.append(per_repeat.min().alias("folds"))
    found = data.group_by(by).agg(sizes) if by else data.select(sizes)
    fine = (
        ~pl.col("null")
        & (pl.col("rows") == pl.col("cells"))
        & (pl.col("cells") == pl.col("models") * pl.col("blocks"))
        & (pl.col("blocks") >= min_folds)
    )
    if repeat is not None and folds_per_repeat > 1:
        fine &= pl.col("folds") >= folds_per_repeat
    return bool(found.select(fine.fill_null(value=False).all()).item())


def _design_message(model: str, fold: str, repeat: str | None) -> tuple[str, str]:
    """The head and tail of the unbalanced-design error around the listed rows."""
    if repeat is None:
        head = (
            f"polaroc: the per-fold table is not a balanced {model} × {fold} design (every "
            f"{model} needs exactly one row for every {fold} within each by group): "
        )
        tail = (
            ". Filter the table to complete (model, fold) sets, or fix the grouping (by=); "
            "a repeated cross-validation needs its repeat column (repeat=)."
        )
    else:
        head = (
            f"polaroc: the per-fold table is not a balanced {model} × ({repeat}, {fold}) "
            f"design (every {model} needs exactly one row for every ({repeat}, {fold}) "
            f"cell of the table within each by group): "
        )
        tail = (
            f". Filter the table to complete ({model}, {repeat}, {fold}) sets, "
            "or fix the grouping (by=)."
        )
    return head, tail


def read_fold_table(
    table: FrameLike,
    *,
    metric: ColumnLike,
    by: str | Iterable[str] | None,
    model: str,
    fold: str,
    dataset: str = "dataset",
    min_folds: int = 2,
    repeat: str = "repeat",
    folds_per_repeat: int = 1,
) -> FoldTable:
    """Validate a per-fold table and return ``by…, model, [repeat,] fold, VALUE``.

    A table holding the ``repeat`` column (and not grouping by it) is a repeated
    cross-validation: its blocks are the (repeat, fold) pairs the table holds, every
    model needs every one of them, and ``FoldTable.repeat`` names the column.
    ``folds_per_repeat`` (with a repeat column): the least number of folds per repeat.

    Raises
    ------
    ValueError
        A column is missing, ``model``/``fold`` is also in ``by``, or (``DataFrame``
        input) the design is unbalanced.
    TypeError
        The metric is not numeric.
    """
    frame = as_lazy(table, argument="table")
    schema = frame.collect_schema()
    group = resolve_by(schema, by, dataset)
    require_columns(schema, [*group, model, fold], what="per-fold table")
    clash = [c for c in (model, fold) if c in group]
    if clash:
        msg = f"column {clash[0]!r} cannot be both a key (model/fold) and in by={group!r}"
        raise ValueError(msg)
    rep = repeat if repeat in schema and repeat not in (*group, model, fold) else None
    value = metric_expr(metric, schema)
    name = value.meta.output_name(raise_if_undetermined=False) or "metric"
    blocks = [fold] if rep is None else [rep, fold]
    frame = frame.select(*group, model, *blocks, value.alias(VALUE))
    frame = checked(
        table, frame, by=group, model=model, fold=fold, min_folds=min_folds, repeat=rep,
        folds_per_repeat=folds_per_repeat,
    )  # fmt: skip
    return FoldTable(frame=frame, by=group, model=model, fold=fold, metric=name, repeat=rep)


def pair_differences(ft: FoldTable) -> pl.LazyFrame:
    """Every unordered model pair with its per-block differences ``a − b`` (blocks: (repeat,) fold).

    The one pairing of models that the paired t, the 5×2 cv and the Bayesian t tests read.

    One row per (by…, ``model_a`` < ``model_b``, [repeat,] fold) where both values
    are non-null, with the values ``_pr_a``, ``_pr_b``, their difference ``_pr_diff``
    and ``_pr_folds``, the number of folds of one repeat in the by group (cells over
    repeats: a Float64, K for a balanced K-fold design).
    """
    if ft.repeat is None:
        per_repeat = pl.col(ft.fold).n_unique().cast(pl.Float64)
    else:  # fold ids may restart in each repeat or run on: count (repeat, fold) cells
        cells = pl.struct(ft.repeat, ft.fold).n_unique().cast(pl.Float64)
        per_repeat = cells / pl.col(ft.repeat).n_unique().cast(pl.Float64)
    folds = over(per_repeat, ft.by).alias("_pr_folds")
    left = ft.frame.rename({ft.model: "model_a", VALUE: "_pr_a"}).with_columns(folds)
    right = ft.frame.rename({ft.model: "model_b", VALUE: "_pr_b"})
    on = [*ft.by, *ft.blocks]
    pairs = left.join(right, on=on).filter(pl.col("model_a") < pl.col("model_b"))
    diff = (pl.col("_pr_a") - pl.col("_pr_b")).alias("_pr_diff")
    columns = [*ft.by, "model_a", "model_b", *ft.blocks, "_pr_folds", "_pr_a", "_pr_b", diff]
    return pairs.select(columns).drop_nulls("_pr_diff")


def settled_difference() -> pl.Expr:
    """``_pr_diff`` of :func:`pair_differences`' rows for rank and sign tests.

    Zero when ``a − b`` is zero up to rounding (:func:`negligible`), otherwise rounded to
    ``DIGITS`` significant digits, so floating-point noise neither breaks ties nor makes
    zeros non-zero; a NaN difference stays NaN, never a zero.
    """
    a, b = pl.col("_pr_a"), pl.col("_pr_b")
    zero = negligible(a - b, pl.max_horizontal(a.abs(), b.abs()))
    return pl.when(zero).then(0.0).otherwise((a - b).round_sig_figs(DIGITS)).alias("_pr_diff")
