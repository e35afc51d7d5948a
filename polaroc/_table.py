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

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

import polars as pl

from polaroc._input import (
    ColumnLike,
    FrameLike,
    as_lazy,
    as_names,
    describe,
    fail_if,
    require_columns,
    to_expr,
)

VALUE = "_pr_value"
_OK = "_pr_design_ok"
_SHOWN = 10  # offending rows quoted in an error message

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
    (``NaN <= NaN`` is true), and a NaN must never pass for a zero.
    """
    n_expr = n if isinstance(n, pl.Expr) else pl.lit(n)
    squares = isinstance(n, pl.Expr) or n != 1.0
    bound = (ROUNDING * scale) ** 2 * n_expr if squares else ROUNDING * scale
    nan = x.is_nan() | scale.is_nan()
    return pl.when(~nan).then(x.abs() <= bound)


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


def over(expr: pl.Expr, by: list[str], **kwargs: Any) -> pl.Expr:
    """``expr.over(by, ...)``; with no ``by`` and no ordering, ``expr`` itself."""
    if not by and not kwargs:
        return expr
    return expr.over(by or None, **kwargs)


Adjust = Literal["holm", "bonferroni"] | None
"""Multiple-comparison adjustment of a frequentist pairwise table's p-values."""


def check_adjust(adjust: str | None) -> None:
    """Raise ``ValueError`` unless ``adjust`` is ``"holm"``, ``"bonferroni"`` or ``None``."""
    if adjust not in (None, "holm", "bonferroni"):
        msg = f"adjust must be 'holm', 'bonferroni' or None, got {adjust!r}"
        raise ValueError(msg)


def adjust_p(p: pl.Expr, by: list[str], adjust: str) -> pl.Expr:
    """Holm- or Bonferroni-adjusted p-values across the rows (model pairs) of each ``by`` group.

    Holm (1979): with the m usable p-values of a group sorted ascending,
    p_adj(i) = max_{j <= i} min(1, (m − j + 1) p(j)); Bonferroni: min(1, m p).
    NaN and null p-values take no part (they do not count in m) and stay NaN/null.
    Equals ``statsmodels.stats.multitest.multipletests(p, method="holm"/"bonferroni")``.
    """
    check_adjust(adjust)
    usable = pl.when(p.is_not_nan()).then(p)
    m = over(usable.count(), by)
    if adjust == "bonferroni":
        scaled = m * usable
    else:
        rank = over(usable.rank("ordinal"), by)
        scaled = over(((m - rank + 1) * usable).cum_max(), by, order_by=usable)
    return pl.when(p.is_nan()).then(p).otherwise(pl.min_horizontal(scaled, 1.0))


def decision(p: pl.Expr, alpha: float) -> pl.Expr:
    """``p <= alpha``; null when the p-value is null or NaN (NaN is never a decision)."""
    return pl.when(p.is_not_nan()).then(p <= alpha)


def with_adjusted(
    out: pl.LazyFrame, columns: list[str], by: list[str], alpha: float, adjust: str | None
) -> pl.LazyFrame:
    """Select ``columns`` plus ``reject`` (and ``p_adjusted`` with ``adjust``) from ``out``.

    ``out`` needs a ``p_value`` column; ``reject`` is based on ``p_adjusted`` when
    ``adjust`` is given, else on ``p_value``. Shared by every frequentist pairwise table.
    """
    if adjust is None:
        return out.select(*columns, reject=decision(pl.col("p_value"), alpha))
    out = out.with_columns(p_adjusted=adjust_p(pl.col("p_value"), by, adjust))
    return out.select(*columns, "p_adjusted", reject=decision(pl.col("p_adjusted"), alpha))


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


def listing(rows: pl.LazyFrame, columns: list[str], what: str) -> pl.LazyFrame:
    """One row, one column ``what``: the rows quoted as ``(a, b)`` tuples, or null."""
    cells = [pl.col(c).cast(pl.String).fill_null("null") for c in columns]
    item = pl.format("({})", pl.concat_str(cells, separator=", "))
    more = pl.when(pl.len() > _SHOWN).then(pl.format(" and {} more", pl.len() - _SHOWN))
    shown = item.sort().head(_SHOWN).str.join(", ")
    text = pl.format("{} {}{}", pl.lit(what), shown, more.otherwise(pl.lit("")))
    return rows.select(pl.when(pl.len() > 0).then(text).alias(what))


def problems(parts: list[pl.LazyFrame]) -> pl.LazyFrame:
    """Join one-row ``listing`` frames into one row, column ``problem`` (``""`` if none)."""
    combined = pl.concat(parts, how="horizontal")
    return combined.select(
        pl.concat_str(pl.all(), separator="; ", ignore_nulls=True).fill_null("").alias("problem")
    )


def guarded(
    original: FrameLike, frame: pl.LazyFrame, found: pl.LazyFrame, head: str, tail: str
) -> pl.LazyFrame:
    """Return ``frame``, failing with ``head + problem + tail`` if ``found`` has a problem.

    For a ``DataFrame`` ``original`` the check runs now and raises ``ValueError``; for
    a ``LazyFrame`` it joins the plan and raises ``ComputeError`` when collected.

    The check is the first part of a union with ``frame`` (it contributes no rows), so
    it runs even when ``frame`` turns out empty or only its head is read — a join
    or filter on ``frame`` would be skipped by Polars in those cases.
    """
    if isinstance(original, pl.DataFrame):
        problem = found.collect().item()
        if problem:
            raise ValueError(head + problem + tail)
    message = pl.concat_str(pl.lit(head), pl.col("problem"), pl.lit(tail))
    failed = found.select(fail_if(pl.col("problem") != "", message).alias(_OK))
    failed = failed.filter(~pl.col(_OK))  # always empty, or raises
    schema = frame.collect_schema()
    blank = failed.with_columns(pl.lit(None, dtype=d).alias(c) for c, d in schema.items())
    blank = blank.select(schema.names())
    return pl.concat([blank, frame])


def one_class_rows(
    log: FrameLike,
    frame: pl.LazyFrame,
    *,
    has_class: bool,
    class_: str,
    positive_class: Any,
    caller: str,
) -> pl.LazyFrame:
    """The score rows of one class, for functions that read a log as one binary problem.

    With ``positive_class``, the rows of that class (a ``ValueError`` at once if the
    log has no class column). Without it, a log holding several classes is an error,
    reported on its own (raised now for a ``DataFrame``, at collection for a
    ``LazyFrame``): rows of two classes would otherwise surface as repeated samples.
    """
    if positive_class is not None:
        if not has_class:
            msg = f"positive_class={positive_class!r} needs a {class_!r} column in the log"
            raise ValueError(msg)
        return frame.filter(pl.col(class_) == positive_class)
    if not has_class:
        return frame
    classes = frame.select(pl.col(class_).unique()).filter(pl.len() > 1)
    found = problems([listing(classes, [class_], f"several classes in {class_!r}:")])
    head = f"polaroc: {caller} reads one class's scores, but the log has "
    tail = ". Pass positive_class= to choose the class whose scores to use."
    return guarded(log, frame, found, head, tail)


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
) -> list[pl.LazyFrame]:
    """What is unbalanced in ``frame``, as ``listing`` frames (see ``problems``).

    With ``repeat``, a cell is (model, repeat, fold) and every model needs every fold
    id in every repeat (fold ids restart in each repeat); ``min_folds`` then counts
    the distinct folds of a repeat.
    """
    blocks = [fold] if repeat is None else [repeat, fold]
    keys = [*by, model, *blocks]
    has_null = pl.any_horizontal(pl.col(keys).is_null())
    nulls = frame.filter(has_null).select(keys)
    frame = frame.filter(~has_null)
    cells = frame.group_by(keys).agg(pl.len().alias("_pr_rows"))
    models = frame.select([*by, model]).unique()
    folds = frame.select([*by, fold]).unique()
    full = _crossed(models, folds, by)
    if repeat is not None:
        full = _crossed(full, frame.select([*by, repeat]).unique(), by)
    missing = full.join(cells, on=keys, how="anti")
    duplicated = cells.filter(pl.col("_pr_rows") > 1)
    few = folds.group_by(by or pl.lit(0).alias("_pr_all")).agg(pl.len().alias("_pr_folds"))
    few = few.filter(pl.col("_pr_folds") < min_folds)
    group = f"({', '.join(by)})" if by else "the table"
    return [
        listing(nulls, keys, f"rows with a null key ({', '.join(keys)}):"),
        listing(missing, keys, f"missing ({', '.join(keys)}) rows:"),
        listing(duplicated, [*keys, "_pr_rows"], f"duplicated ({', '.join(keys)}, count):"),
        listing(few, [*by, "_pr_folds"], f"fewer than {min_folds} {fold} values in {group}:"),
    ]


def design_problems(
    frame: pl.LazyFrame,
    *,
    by: list[str],
    model: str,
    fold: str,
    min_folds: int = 2,
    repeat: str | None = None,
) -> pl.LazyFrame:
    """One row with column ``problem``: what is unbalanced in ``frame``, or ``""``."""
    listings = design_listings(
        frame, by=by, model=model, fold=fold, min_folds=min_folds, repeat=repeat
    )
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
) -> pl.LazyFrame:
    """Return ``frame`` guarded by the design check (eager for a ``DataFrame`` input).

    Both ``frame`` and the result are cached plan nodes: the check reads ``frame``
    several times and the tests read the result several times, and without a cache
    node each read copies the whole upstream plan (chained tables then grow
    multiplicatively and take the optimizer seconds to deduplicate).
    """
    frame = frame.cache()
    found = design_problems(
        frame, by=by, model=model, fold=fold, min_folds=min_folds, repeat=repeat
    )
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
            f"polaroc: the per-fold table is not a balanced {model} × {repeat} × {fold} "
            f"design (every {model} needs exactly one row for every {fold} of every "
            f"{repeat} within each by group; {fold} ids restart in each {repeat}): "
        )
        tail = (
            f". Filter the table to complete ({model}, {repeat}, {fold}) sets, "
            "or fix the grouping (by=)."
        )
    return guarded(table, frame, found, head, tail).cache()


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
) -> FoldTable:
    """Validate a per-fold table and return ``by…, model, [repeat,] fold, VALUE``.

    A table holding the ``repeat`` column (and not grouping by it) is a repeated
    cross-validation: its blocks are (repeat, fold) pairs, every model needs every
    fold id of every repeat, and ``FoldTable.repeat`` names the column.

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
    frame = checked(table, frame, by=group, model=model, fold=fold, min_folds=min_folds, repeat=rep)
    return FoldTable(frame=frame, by=group, model=model, fold=fold, metric=name, repeat=rep)


def pair_differences(ft: FoldTable) -> pl.LazyFrame:
    """Every unordered model pair with its per-block differences ``a − b`` (blocks: (repeat,) fold).

    The one pairing of models that the paired t, the 5×2 cv and the Bayesian t tests read.

    One row per (by…, ``model_a`` < ``model_b``, [repeat,] fold) where both values
    are non-null, with the values ``_pr_a``, ``_pr_b``, their difference ``_pr_diff``
    and ``_pr_folds``, the number of distinct folds (of one repeat) in the by group.
    """
    folds = over(pl.col(ft.fold).n_unique(), ft.by).cast(pl.Int64).alias("_pr_folds")
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
