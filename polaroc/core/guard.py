"""Input problems reported as one message: listings of offending rows, and guarded plans.

Shared by the rooms that validate what a user hands them (the comparison tables' design
check in ``compare/``, the tables that read a log as one binary problem in ``metrics/``
and ``compare/``): a problem is found by a small lazy query, quoted as ``(a, b)`` tuples,
and raised at once for a ``DataFrame`` or when the plan runs for a ``LazyFrame``.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from polaroc.core.inputs import FrameLike, fail_if

__all__ = ["guarded", "listing", "one_class_rows", "problems"]

_OK = "_pr_design_ok"
_SHOWN = 10  # offending rows quoted in an error message


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

    For a ``DataFrame`` ``original`` the check runs now and raises ``ValueError`` (and
    ``frame`` comes back as it is); for a ``LazyFrame`` it joins the plan and raises
    ``ComputeError`` when collected.

    The check is the first part of a union with ``frame`` (it contributes no rows), so
    it runs even when ``frame`` turns out empty or only its head is read — a join
    or filter on ``frame`` would be skipped by Polars in those cases.
    """
    if isinstance(original, pl.DataFrame):
        problem = found.collect().item()
        if problem:
            raise ValueError(head + problem + tail)
        return frame  # checked on these very rows: the plan needs no second check
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
