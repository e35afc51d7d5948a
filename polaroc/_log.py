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
    require_columns,
    require_numeric,
)

SCORE = "_pr_score"
POSITIVE = "_pr_positive"

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


def default_by(schema: pl.Schema, columns: LogColumns) -> list[str]:
    """``(model, fold)``, preceded by ``dataset`` when the log has one."""
    by = [columns.model, columns.fold]
    return [columns.dataset, *by] if columns.dataset in schema else by


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


def read_log(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None = None,
    columns: LogColumns | None = None,
    need: Sequence[str] = (),
) -> Log:
    """Validate ``log`` and add the internal score and positive columns.

    Parameters
    ----------
    log
        ``DataFrame`` or ``LazyFrame`` in the contract's long format.
    by
        Grouping columns; ``None`` means ``(model, fold)``, with ``dataset`` first
        when the log has one.
    columns
        The log's column names (defaults: the contract's).
    need
        Extra columns the caller requires (e.g. ``columns.sample``).

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
    require_numeric(schema, cols.score)

    has_class = cols.class_ in schema
    if has_class:
        class_expr, label_expr = comparable(schema, cols.class_, cols.label)
        positive = class_expr == label_expr
        check = None
    else:
        positive, check = as_indicator(pl.col(cols.label), schema[cols.label])
    internal = [pl.col(cols.score).cast(pl.Float64).alias(SCORE), positive.alias(POSITIVE)]
    frame = frame.with_columns(internal)
    if check is not None:
        frame = frame.filter(check)
    return Log(frame=frame, columns=cols, by=group, schema=schema, has_class=has_class)
