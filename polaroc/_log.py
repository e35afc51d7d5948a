"""Reading a score log: the one place table functions validate and normalise their input.

A log has one row per (model, fold, sample, class): the score a model gave a test
sample for one class (see the design contract). ``read_log`` checks the columns a
table needs against the schema — at call time, before any data is read — and adds
two internal columns every table computes from:

``_pr_score``
    the score as ``Float64``;
``_pr_positive``
    ``label == class`` (``Boolean``), or, for a log without a ``class`` column, the
    label itself as a positive indicator (Boolean, or 0/1 checked at run time).

Nothing is collected here; the result wraps a ``LazyFrame``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import polars as pl

from polaroc._input import (
    FrameLike,
    LogColumns,
    as_indicator,
    as_lazy,
    as_names,
    as_weight,
    bad_weight,
    checked_indicator,
    fail_if,
    require_columns,
    require_named,
    require_numeric,
    weight_message,
)

# re-exported (``X as X``) for modules that still read them here; new code: polaroc._names
from polaroc._names import ONE_GROUP, WEIGHT
from polaroc._names import POSITIVE as POSITIVE
from polaroc._names import SCORE as SCORE

DEFAULT_BY = ("model", "fold")


@dataclass(frozen=True)
class Log:
    """A validated log: the lazy frame with internal columns, and what was found."""

    frame: pl.LazyFrame
    columns: LogColumns
    by: list[str]
    schema: pl.Schema  # the user's schema, before the internal columns
    has_class: bool

    @property
    def class_(self) -> str:
        """Name of the class column (only meaningful when ``has_class``)."""
        return self.columns.class_

    @property
    def label(self) -> str:
        """Name of the label column."""
        return self.columns.label

    @property
    def score(self) -> str:
        """Name of the user's score column."""
        return self.columns.score

    def has(self, name: str) -> bool:
        """Whether the user's log has column ``name``."""
        return name in self.schema

    @property
    def groups(self) -> list[str]:
        """The columns to group and join on: ``by``, or a constant column for ``by=()``.

        Polars joins need keys, so one group is a constant column (``_pr_group``,
        added by :func:`read_log`); select ``by`` for the output.
        """
        return self.by or [ONE_GROUP]


def default_by(schema: pl.Schema, columns: LogColumns) -> list[str]:
    """``(dataset, model, repeat, fold)``, of the columns the log has (model, fold always)."""
    optional = {columns.dataset, columns.repeat}
    order = [columns.dataset, columns.model, columns.repeat, columns.fold]
    return [name for name in order if name not in optional or name in schema]


def pooled_by(schema: pl.Schema, columns: LogColumns) -> list[str]:
    """The default groups of the pooled and averaged curves: ``(dataset, model)``.

    :func:`default_by` without the fold and the repeat, so one curve per (dataset,
    model) from every (repeat, fold) test partition.
    """
    folds = {columns.fold, columns.repeat}
    return [name for name in default_by(schema, columns) if name not in folds]


def key_columns(schema: pl.Schema, columns: LogColumns) -> list[str]:
    """The columns of a row's key but the class: (dataset, model, repeat, fold, sample).

    Of the columns the log has: the contract's "keys are unique" rule names at most
    one row per such key and class.
    """
    keys = [*default_by(schema, columns), columns.sample]
    return [name for name in keys if name in schema]


def repeated_key_message(names: Sequence[str], listed: pl.Expr) -> pl.Expr:
    """The error for repeated keys: the key columns ``names``, ``listed`` the first keys."""
    head = (
        f"polaroc: a ({', '.join(names)}) key holds more than one row of a class "
        "(keys must be unique): "
    )
    tail = (
        ". A repeated cross-validation logged without its repeat column? Add a 'repeat' "
        "column (fold ids may restart in each repeat), or make sample ids unique."
    )
    return pl.concat_str(pl.lit(head), listed, pl.lit(tail))


def first_keys(names: Sequence[str], rows: pl.Expr | None = None) -> pl.Expr:
    """The first three distinct keys of the columns ``names`` as ``(a, b); (c, d)``, sorted.

    Of the rows where ``rows`` holds (all rows by default): the listing of
    :func:`repeated_key_message`.
    """
    fields = [pl.col(c).cast(pl.String).fill_null("null") for c in names]
    keys = pl.format("({})", pl.concat_str(fields, separator=", "))
    keys = keys if rows is None else keys.filter(rows)
    return keys.unique().sort().head(3).str.join("; ")


def unique_rows(schema: pl.Schema, columns: LogColumns) -> pl.Expr:
    """For ``.filter``: ``True``, or a ``DataError`` naming the first repeated keys.

    For tables that read every row but have no per-sample aggregation of their own
    (the curves): a key (dataset, model, repeat, fold, sample, class) names at most one
    row. A log without a sample column has no keys to check (always ``True``).
    """
    if columns.sample not in schema:
        return pl.lit(True)
    names = key_columns(schema, columns)
    if columns.class_ in schema:
        names.append(columns.class_)
    repeated = pl.len().over(names) > 1
    return fail_if(repeated.any(), repeated_key_message(names, first_keys(names, repeated)))


def comparable(schema: pl.Schema, class_: str, label: str) -> tuple[pl.Expr, pl.Expr]:
    """Return class and label expressions that compare value by value, or raise."""
    c_dtype, l_dtype = schema[class_], schema[label]
    textual = (pl.String, pl.Categorical, pl.Enum)

    def is_text(dtype: pl.DataType) -> bool:
        return isinstance(dtype, textual) or dtype in textual

    if c_dtype == l_dtype:
        return pl.col(class_), pl.col(label)
    if is_text(c_dtype) and is_text(l_dtype):
        return pl.col(class_).cast(pl.String), pl.col(label).cast(pl.String)
    if all(d.is_integer() or d == pl.Boolean for d in (c_dtype, l_dtype)):
        return pl.col(class_).cast(pl.Int64), pl.col(label).cast(pl.Int64)
    msg = (
        f"class column {class_!r} ({c_dtype}) and label column {label!r} ({l_dtype}) "
        "cannot be compared; a row is positive when label == class, so cast one to the "
        f"other's dtype, e.g. pl.col({label!r}).cast(pl.{c_dtype})."
    )
    raise TypeError(msg)


def read_weight(log: FrameLike, weight: str, schema: pl.Schema) -> tuple[pl.Expr, pl.Expr | None]:
    """The weight column as ``Float64`` and its run-time check (``None`` once checked).

    A ``DataFrame``'s weights are checked at once (``ValueError`` naming the column);
    a ``LazyFrame``'s when the query runs.
    """
    require_columns(schema, [weight])
    w, check = as_weight(pl.col(weight), schema[weight])
    if isinstance(log, pl.DataFrame):
        if log.select(bad_weight(w).any()).item():
            raise ValueError(weight_message(repr(weight)))
        return w, None
    return w, check


def usable_weight() -> pl.Expr:
    """Rows a weighted table keeps: a non-null weight above 0, or any weight on a NaN score.

    A weight of 0 is the row removed (as scikit-learn's ``_binary_clf_curve`` drops
    zero-weight samples); a NaN score is kept so that it still makes its group NaN.
    """
    w = pl.col(WEIGHT)
    return w.is_not_null() & ((w > 0.0) | pl.col(SCORE).is_nan())


def read_log(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None = None,
    columns: LogColumns | None = None,
    need: Sequence[str] = (),
    weight: str | None = None,
) -> Log:
    """Validate ``log`` and add the internal score and positive columns.

    Parameters
    ----------
    log
        ``DataFrame`` or ``LazyFrame`` in the contract's long format.
    by
        Grouping columns; ``None`` means ``(dataset, model, repeat, fold)`` of the
        columns the log has (``model`` and ``fold`` always).
    columns
        The log's column names (defaults: the contract's).
    need
        Extra columns the caller requires (e.g. ``columns.sample``).
    weight
        Name of a case-weight column, added as ``_pr_weight`` (``Float64``). A
        negative, NaN or infinite weight raises ``ValueError`` here for a
        ``DataFrame`` and an error naming the column when a ``LazyFrame`` is
        collected. Null weights are kept (the tables drop those rows, see
        :func:`usable_weight`).

    Raises
    ------
    ValueError
        A required column is missing (the message lists the log's columns).
    TypeError
        The score is not numeric, the class and label cannot be compared, or a log
        without a class column has a label that is not a Boolean or 0/1 indicator.
    """
    cols = columns or LogColumns()
    frame = as_lazy(log)
    schema = frame.collect_schema()
    group = default_by(schema, cols) if by is None else as_names(by)
    require_columns(schema, [*group, cols.score, cols.label, *need])
    require_named(schema, cols)
    require_numeric(schema, cols.score)

    has_class = cols.class_ in schema
    if has_class:
        class_expr, label_expr = comparable(schema, cols.class_, cols.label)
        positive = class_expr == label_expr
        check = None
    else:
        positive, check = as_indicator(pl.col(cols.label), schema[cols.label])
        if schema[cols.label].is_integer():  # checked on the frame: a short message
            frame, positive = checked_indicator(log, cols.label), pl.col(cols.label) == 1
    internal = [pl.col(cols.score).cast(pl.Float64).alias(SCORE), positive.alias(POSITIVE)]
    if weight is not None:
        w, w_check = read_weight(log, weight, schema)
        internal.append(w.alias(WEIGHT))
        if w_check is not None:
            check = w_check if check is None else check & w_check
    if not group:
        internal.append(pl.lit(0, pl.Int8).alias(ONE_GROUP))
    frame = frame.with_columns(internal)
    if check is not None:
        frame = frame.filter(check)
    return Log(frame=frame, columns=cols, by=group, schema=schema, has_class=has_class)
