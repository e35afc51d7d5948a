"""Turning user arguments into validated Polars expressions and frames.

Every public function in polaroc goes through this module, so the policies of the
design contract live in one place:

* columns are given as ``str | pl.Expr``;
* a score must be numeric and is compared as ``Float64``;
* a positive indicator is ``Boolean`` or an integer holding only 0 and 1;
* null scores or labels drop the row; a NaN score makes the group's result NaN;
* wrong dtypes raise ``TypeError`` when the plan's schema is resolved (at once for a
  ``DataFrame``, at ``collect``/``collect_schema`` for a ``LazyFrame``); missing
  columns raise ``ValueError`` when a table function is called.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import partial

import polars as pl

ColumnLike = str | pl.Expr
FrameLike = pl.DataFrame | pl.LazyFrame

NAN = float("nan")


def to_expr(column: ColumnLike, *, argument: str) -> pl.Expr:
    """Return ``column`` as an expression; a string names a column."""
    if isinstance(column, str):
        return pl.col(column)
    if isinstance(column, pl.Expr):
        return column
    msg = (  # type: ignore[unreachable]  # callers without type checking pass anything
        f"`{argument}` must be a column name or a Polars expression, "
        f"got {type(column).__name__}: {column!r}"
    )
    raise TypeError(msg)


def is_integer(value: object) -> bool:
    """Whether ``value`` is an integer: a Python or NumPy integer, never a ``bool``."""
    if isinstance(value, bool):
        return False
    try:
        operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        return False
    return True


def as_int(value: object, *, argument: str, minimum: int, what: str = "an integer") -> int:
    """``value`` as a Python ``int`` (NumPy integers accepted), or a ``ValueError``.

    The one check of every integer argument: ``bool``, floats and values below
    ``minimum`` are refused with a message naming ``argument``.
    """
    if not is_integer(value) or operator.index(value) < minimum:  # type: ignore[arg-type]
        msg = f"{argument} must be {what} of at least {minimum}, got {value!r}"
        raise ValueError(msg)
    return operator.index(value)  # type: ignore[arg-type]


def describe(expr: pl.Expr) -> str:
    """Name an expression for an error message: its output column, else its repr."""
    name = expr.meta.output_name(raise_if_undetermined=False)
    return repr(name) if name else str(expr)


def as_score(expr: pl.Expr, dtype: pl.DataType) -> pl.Expr:
    """Cast a numeric score to ``Float64``; anything else is a ``TypeError``."""
    if dtype.is_numeric():
        return expr.cast(pl.Float64)
    msg = (
        f"score column {describe(expr)} has dtype {dtype}; polaroc needs a numeric score "
        "(higher = more evidence for the class). Cast it first, "
        "e.g. pl.col(...).cast(pl.Float64)."
    )
    raise TypeError(msg)


class DataError(pl.exceptions.ComputeError, ValueError):
    """A problem in the data, found while a query runs.

    A ``ValueError`` (the contract's error for bad input) and, for code that catches
    Polars' run-time errors, a ``polars.exceptions.ComputeError``. Its first line is
    the message; Polars appends the expression it was raised in.
    """


def _raise_if_failed(checks: pl.Series) -> pl.Series:
    failed = checks.struct.field("failed")
    if failed.any():
        raise DataError(checks.struct.field("message").filter(failed).first())
    return ~failed


def fail_if(condition: pl.Expr, message: str | pl.Expr) -> pl.Expr:
    """Return an expression that is ``True``, or raises ``message`` at run time.

    ``condition`` is a scalar (e.g. ``(...).any()``); when it holds, the query fails
    with a :class:`DataError` whose first line is ``message``. ``message`` may be a
    string expression built from the data (e.g. listing the offending rows). Polars
    has no expression that raises, so the two are passed as one struct to a Python
    function that raises: it is declared elementwise, so Polars calls it once per
    batch of groups (not once per group) and never on the rows. Schema problems
    never come here; they raise ``TypeError`` at plan time.
    """
    text = pl.lit(message) if isinstance(message, str) else message
    checks = pl.struct(failed=condition.fill_null(False), message=text)
    return checks.map_batches(_raise_if_failed, return_dtype=pl.Boolean, is_elementwise=True)


def indicator_message(name: str, found: Sequence[object]) -> str:
    """The error for a 0/1 positive indicator holding other values (``found``)."""
    values = ", ".join(map(str, found))
    return (
        f"polaroc: the positive indicator {name} holds values other than 0 and 1 "
        f"(such as {values}); pass a Boolean instead, e.g. pl.col({name}) == <positive class>"
    )


def not_indicator_values(values: pl.Series) -> list[object]:
    """The (at most five, sorted) non-null values of ``values`` other than 0 and 1."""
    bad = values.filter(values.is_not_null() & ~values.is_in([0, 1]))
    return bad.unique().sort().head(5).to_list()


def _check_indicator(values: pl.Series, *, name: str) -> pl.Series:
    found = not_indicator_values(values)
    if found:
        raise DataError(indicator_message(name, found))
    return values


def as_indicator(expr: pl.Expr, dtype: pl.DataType) -> tuple[pl.Expr, pl.Expr | None]:
    """Return ``(is_positive, check)`` for a Boolean or 0/1 integer indicator.

    ``check`` is ``None``: an integer column is checked as it is read, raising a
    :class:`DataError` naming the column and the values found if a value is not 0
    or 1 (a 0/2 or -1/1 column would otherwise be counted silently).
    """
    if dtype == pl.Boolean:
        return expr, None
    if dtype.is_integer():
        # checked row by row as the data streams past (once per batch, no aggregation)
        check = partial(_check_indicator, name=describe(expr))
        return expr.map_batches(check, return_dtype=dtype, is_elementwise=True) == 1, None
    msg = (
        f"positive indicator {describe(expr)} has dtype {dtype}; it must be Boolean or an "
        "integer 0/1 column. Compare it with the positive class, "
        "e.g. pl.col('label') == 'yes'."
    )
    raise TypeError(msg)


def _check_indicator_frame(frame: pl.DataFrame, *, column: str) -> pl.DataFrame:
    # a branch of the plan that does not read the column gets batches without it
    # (projection pushdown): nothing there depends on its values
    if column in frame.columns:
        _check_indicator(frame.get_column(column), name=repr(column))
    return frame


def checked_indicator(frame: FrameLike, column: str) -> pl.LazyFrame:
    """``frame`` with its 0/1 indicator ``column`` checked: at once for a ``DataFrame``.

    A value other than 0 and 1 raises :class:`DataError` (a ``ValueError``) naming the
    column and the values found: now for a ``DataFrame``, and for a ``LazyFrame``
    when the query runs, checking each batch as it is read (the error is then the
    message alone, without an expression dump).
    """
    if isinstance(frame, pl.DataFrame):
        _check_indicator(frame.get_column(column), name=repr(column))
        return frame.lazy()
    check = partial(_check_indicator_frame, column=column)
    return frame.map_batches(
        check,
        streamable=True,
        predicate_pushdown=True,
        projection_pushdown=True,
        slice_pushdown=True,
    )


def as_weight(expr: pl.Expr, dtype: pl.DataType) -> tuple[pl.Expr, pl.Expr]:
    """Return ``(weight, check)`` for a case-weight column: ``Float64`` and a run-time check.

    A weight must be numeric (else ``TypeError`` at plan time); ``check`` raises at run
    time, naming the column, if a weight is negative, NaN or infinite. Null weights are
    allowed (the caller drops those rows).
    """
    if not dtype.is_numeric():
        msg = (
            f"weight column {describe(expr)} has dtype {dtype}; case weights must be "
            "numeric and non-negative. Cast it first, e.g. pl.col(...).cast(pl.Float64)."
        )
        raise TypeError(msg)
    w = expr.cast(pl.Float64)
    return w, fail_if(bad_weight(w).any(), weight_message(describe(expr)))


def bad_weight(w: pl.Expr) -> pl.Expr:
    """Whether a ``Float64`` weight is negative, NaN or infinite (null for a null weight).

    NaN is tested on its own: Polars orders NaN above every number, so ``NaN >= 0``.
    """
    return (w < 0.0) | w.is_nan() | w.is_infinite()


def weight_message(name: str) -> str:
    """The error for a bad case weight (negative, NaN or infinite) in column ``name``."""
    return (
        f"polaroc: the weight column {name} holds a negative, NaN or infinite value; case "
        "weights must be finite and >= 0 (a null weight drops its row), "
        f"e.g. filter with pl.col({name}).is_finite() & (pl.col({name}) >= 0)."
    )


def cluster_message(name: str) -> str:
    """The error for a null cluster id in column ``name``."""
    return (
        f"polaroc: the cluster column {name} holds a null for a scored sample; every "
        "sample needs its cluster (a patient, an image): fill it, e.g. with the sample's "
        f"own id for a sample alone in its cluster, pl.col({name}).fill_null(...)."
    )


def _value_unless_bad_weight(result: pl.Series, *, message: str) -> pl.Series:
    if result.struct.field("bad_weight").fill_null(False).any():
        raise DataError(message)
    return result.struct.field("value")


def unless_bad_weight(result: pl.Expr, message: str) -> pl.Expr:
    """The field ``value`` of the struct ``result``, or ``message`` raised at run time.

    ``result`` holds per group a ``Float64`` ``value`` and a Boolean ``bad_weight``;
    when any group's ``bad_weight`` is true the query fails with a :class:`DataError`
    whose first line is ``message``. Like :func:`fail_if` it runs once per batch of
    groups, never on the rows.
    """
    check = partial(_value_unless_bad_weight, message=message)
    return result.map_batches(check, return_dtype=pl.Float64, is_elementwise=True)


def scaled_weight(w: pl.Expr) -> pl.Expr:
    """Weights divided by their largest (in the group or list they are evaluated in).

    Pair metrics are ratios of sums of products w₊·w₋ over W₊·W₋: the scale cancels,
    but products of 1e160 overflow and of 1e-170 underflow. Dividing by the largest
    weight keeps every weight in [0, 1] with its relative precision. A group whose
    weights are all 0 is left as it is.
    """
    top = w.max()
    return pl.when(top > 0.0).then(w / top).otherwise(w)


def binary_expr(
    score: ColumnLike,
    positive: ColumnLike,
    build: Callable[..., pl.Expr],
    *,
    name: str,
    if_nan: pl.Expr | float | None = NAN,
    raw: bool = False,
    weight: ColumnLike | None = None,
    two_classes: bool = False,
    raw_weight: bool = False,
    cluster: ColumnLike | None = None,
) -> pl.Expr:
    """Build an aggregating binary metric with the contract's input policies.

    ``build(score, positive)`` receives a ``Float64`` score and a ``Boolean``
    indicator with null rows removed and returns the group's value. The dtypes are
    checked when the plan's schema is resolved. A group holding a NaN score gives
    ``if_nan`` instead (NaN for floats; pass ``None`` for integer results). With
    ``two_classes`` (a metric of pairs, null without positives or negatives), a
    degenerate group stays null even with a NaN score: the contract's "degenerate
    precedes NaN" (``build`` must return null for it).

    With ``raw=True``, ``build`` receives the ``Float64`` score and ``Boolean``
    indicator as they are, nulls included, and applies the null and NaN policies
    itself; only the dtype checks and the 0/1 check are added here. (Filtering both
    columns and scanning for NaN inside an aggregation cost about half a sort; a
    metric that sorts anyway does both more cheaply on its sorted rows.)

    With a ``weight`` (case weights), ``build(score, positive, weight)`` receives a
    third argument, the ``Float64`` weights of the kept rows, and ``raw`` is ignored:
    rows with a null weight are dropped like null scores, rows of weight 0 are dropped
    (so weight 0 is the row removed; a NaN score still makes the group NaN), and a
    negative, NaN or infinite weight raises at run time naming the column. With
    ``two_classes`` too (a metric of pairs, a ratio of sums of weight products, which
    scaling every weight leaves unchanged) the weights are first divided by the
    group's largest (:func:`scaled_weight`), so weights of 1e160 or 1e-170 give the
    value of weights near 1 instead of overflowing or underflowing.

    With ``raw_weight`` (and a ``weight``) ``build(score, positive, weight)`` receives
    the three columns as they are (nulls, NaN scores and zero weights included; the
    weight cast to ``Float64``, not checked, not scaled), applies the policies itself
    and returns a struct of the group's ``value`` (``Float64``) and ``bad_weight``
    (whether a weight of the group is negative, NaN or infinite, read from the rows it
    reads anyway); the query then fails naming the column, as above. (Each column an
    aggregation reads, and each filtered copy, costs a gather of the group's rows: at
    10M rows in 80 interleaved groups about an eighth of the AUC each.)

    With a ``cluster`` (and no weight), ``build(score, positive, cluster)`` receives the
    kept rows' cluster ids as a third argument; a kept row with a null cluster id fails
    the query (a :class:`DataError` naming the column).
    """
    score_in = to_expr(score, argument="score")
    positive_in = to_expr(positive, argument="positive")
    inputs_in = [score_in, positive_in]
    if weight is not None:
        inputs_in.append(to_expr(weight, argument="weight"))
    elif cluster is not None:
        inputs_in.append(to_expr(cluster, argument="cluster"))

    def has_nan(s: pl.Expr, p: pl.Expr) -> pl.Expr:
        # NaN-propagating max: one cheap reduction instead of a mask and ``any``
        nan = s.nan_max().is_nan()
        return nan & p.any() & (~p).any() if two_classes else nan

    def plan(inputs: list[tuple[pl.Expr, pl.DataType]]) -> pl.Expr:
        (s, s_dtype), (p, p_dtype) = inputs[:2]
        s = as_score(s, s_dtype)
        p, check = as_indicator(p, p_dtype)
        if len(inputs) == 3 and weight is None:  # a cluster column
            c = inputs[2][0]
            keep = s.is_not_null() & p.is_not_null()
            s, p, c = s.filter(keep), p.filter(keep), c.filter(keep)
            found = pl.when(has_nan(s, p)).then(if_nan).otherwise(build(s, p, c))
            found = pl.struct(value=found, bad_weight=c.is_null().any())
            value = unless_bad_weight(found, cluster_message(describe(c)))
        elif len(inputs) == 3 and raw_weight:
            w, _ = as_weight(*inputs[2])
            value = unless_bad_weight(build(s, p, w), weight_message(describe(inputs[2][0])))
        elif len(inputs) == 3:
            w, w_check = as_weight(*inputs[2])
            keep = s.is_not_null() & p.is_not_null() & ((w > 0.0) | (s.is_nan() & w.is_not_null()))
            s, p, w = s.filter(keep), p.filter(keep), w.filter(keep)
            if two_classes:  # pair metrics are ratios of weight sums: scale them to <= 1
                w = scaled_weight(w)
            value = pl.when(has_nan(s, p)).then(if_nan).otherwise(build(s, p, w))
            check = w_check if check is None else check & w_check
        elif raw:
            value = build(s, p)
        else:
            keep = s.is_not_null() & p.is_not_null()
            s, p = s.filter(keep), p.filter(keep)
            value = pl.when(has_nan(s, p)).then(if_nan).otherwise(build(s, p))
        return value if check is None else pl.when(check).then(value)

    return pl.pipe_with_dtype(inputs_in, plan).alias(name)


# --------------------------------------------------------------------------- frames


@dataclass(frozen=True)
class LogColumns:
    """Names of the log's columns (the defaults are the contract's)."""

    model: str = "model"
    fold: str = "fold"
    class_: str = "class"
    score: str = "score"
    label: str = "label"
    sample: str = "sample"
    dataset: str = "dataset"
    repeat: str = "repeat"

    def with_names(self, **names: str | None) -> LogColumns:
        """Return a copy with the given names replaced (``None`` keeps the default)."""
        return replace(self, **{k: v for k, v in names.items() if v is not None})


def as_lazy(frame: FrameLike, *, argument: str = "log") -> pl.LazyFrame:
    """Return ``frame`` as a ``LazyFrame``; anything else is a ``TypeError``."""
    if isinstance(frame, pl.LazyFrame):
        return frame
    if isinstance(frame, pl.DataFrame):
        return frame.lazy()
    msg = (  # type: ignore[unreachable]  # callers without type checking pass anything
        f"`{argument}` must be a polars DataFrame or LazyFrame, got {type(frame).__name__}; "
        "wrap it with pl.DataFrame(...) or read it with pl.scan_parquet(...)."
    )
    raise TypeError(msg)


def as_names(by: str | Iterable[str] | None) -> list[str]:
    """Normalise a ``by=`` argument to a list of column names."""
    if by is None:
        return []
    if isinstance(by, str):
        return [by]
    names = list(by)
    for name in names:
        if not isinstance(name, str):
            msg = f"`by` must hold column names, got {type(name).__name__}: {name!r}"  # type: ignore[unreachable]  # untyped callers
            raise TypeError(msg)
    return names


def require_columns(schema: pl.Schema, names: Sequence[str], *, what: str = "log") -> None:
    """Raise ``ValueError`` naming every column of ``names`` missing from ``schema``."""
    missing = [n for n in dict.fromkeys(names) if n not in schema]
    if missing:
        have = ", ".join(schema.names()) or "no columns"
        msg = (
            f"the {what} has no column {', '.join(map(repr, missing))} (it has: {have}); "
            "rename the column or pass its name, e.g. score='prob'."
        )
        raise ValueError(msg)


OPTIONAL_COLUMNS = {"class_": "class", "sample": "sample", "dataset": "dataset", "repeat": "repeat"}


def require_named(schema: pl.Schema, columns: LogColumns) -> None:
    """Raise ``ValueError`` for an optional column the user named that the log lacks.

    ``class``, ``sample``, ``dataset`` and ``repeat`` are optional under their default
    names; a name the user chose (e.g. ``sample="sample_id"``) must be in the log, so
    that a typo is never silently read as "the log has no such column".
    """
    for field, default in OPTIONAL_COLUMNS.items():
        name = getattr(columns, field)
        if name != default and name not in schema:
            have = ", ".join(schema.names()) or "no columns"
            msg = (
                f"the log has no column {name!r}, named by {field}={name!r} "
                f"(it has: {have}); fix the name, or leave {field} at its default "
                f"({default!r}) if the log has no such column."
            )
            raise ValueError(msg)


def require_numeric(schema: pl.Schema, name: str, *, what: str = "score") -> None:
    """Raise ``TypeError`` unless column ``name`` is numeric."""
    dtype = schema[name]
    if not dtype.is_numeric():
        msg = (
            f"{what} column {name!r} has dtype {dtype}; it must be numeric. "
            f"Cast it first, e.g. pl.col({name!r}).cast(pl.Float64)."
        )
        raise TypeError(msg)
