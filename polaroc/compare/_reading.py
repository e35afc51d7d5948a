"""How the comparison tests that read a log read it: groups, pairing keys, the class read.

DeLong's tests, the bootstrap and Venkatraman tests, the power of a paired comparison,
McNemar's test, Cochran's Q and Wu & Flach's model selection compare models sample by
sample. Each reads the log once through :func:`polaroc.core.log.read_log` (data set
as the default group) and then the same way:

* the groups are ``by=`` (``None``: the data set when the log has one, else one group)
  with the repeat column added: every repeat of a repeated cross-validation scores
  each sample once, so pooling repeats would count a sample several times;
* samples pair within (dataset, repeat, fold) on their ``sample`` id, whatever the
  groups (sample ids need only be unique within a fold);
* a two-class log is read through its positive class (:meth:`polaroc.core.log.Log.binary`:
  ``positive_class=`` or the larger class value of each data set), so a log holding the
  positive class's rows only, both classes' rows or no class column gives one answer,
  and the output states the class it read in a column named as the log's class column.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import polars as pl

from polaroc.core.guard import guarded, listing, problems
from polaroc.core.inputs import FrameLike, LogColumns
from polaroc.core.log import Log, read_log

__all__ = ["binary_rows", "class_read", "pair_keys", "read_paired", "with_class_read"]


def read_paired(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None,
    columns: LogColumns,
    need: Iterable[str] = (),
    positive_class: Any = None,
    cluster: str | None = None,
    paired: bool = True,
) -> tuple[Log, list[str]]:
    """The log read once, and the test's groups: ``by`` (default: the data set), repeat first.

    With ``cluster``, the log reading checks that column (no null; one value per
    sample, in every class row and, ``paired``, every model:
    :func:`polaroc.core.log.cluster_problems`).
    """
    parsed = read_log(
        log, by=by, unit="dataset", columns=columns, need=list(need),
        positive_class=positive_class, cluster=cluster, paired=paired,
    )  # fmt: skip
    repeat = parsed.columns.repeat
    group = parsed.by
    if parsed.has_repeat and repeat not in group:
        group = [repeat, *group]
    return parsed, group


def pair_keys(parsed: Log, group: list[str]) -> list[str]:
    """The keys that pair two models' rows: groups, then (dataset, repeat, fold, sample).

    Of the columns the log has: sample ids restart in every data set, repeat and fold,
    so the pairs are formed within them even when the test pools them.
    """
    c = parsed.columns
    design = [c.dataset, c.repeat, c.fold, c.sample]
    return list(dict.fromkeys([*group, *(name for name in design if parsed.has(name))]))


def binary_rows(parsed: Log, caller: str) -> pl.LazyFrame:
    """The positive class's rows of the log, its keys checked unique.

    A log with more than two classes and no ``positive_class`` is refused here, naming
    the classes (:meth:`~polaroc.core.log.Log.binary`); DeLong's tests compare Hand &
    Till's M on such a log before coming here (:mod:`polaroc.compare._m_delong`). A given
    ``positive_class`` that no row holds is refused naming the classes found (now for
    a ``DataFrame``, when collected for a ``LazyFrame``).
    """
    frame = parsed.binary(parsed.unique(), caller=caller)
    positive = parsed.positive_class
    if positive is None or not parsed.has_class:
        return frame
    class_ = parsed.class_
    classes = parsed.frame.select(pl.col(class_).unique())
    absent = classes.filter((pl.col(class_) == pl.lit(positive)).not_().all())
    what = f"positive_class={positive!r} is not a value of {class_!r}; classes found:"
    found = problems([listing(absent, [class_], what)])
    original = parsed.original if parsed.original is not None else frame
    head = f"polaroc: {caller}: "
    return guarded(original, frame, found, head, ". Pass one of them as positive_class=.")


def class_read(parsed: Log, rows: pl.LazyFrame, group: list[str]) -> pl.LazyFrame | None:
    """The class whose scores each group read, in a column named as the log's class column.

    ``None`` for a log without a class column (its label is the positive indicator),
    or when the class column is one of the groups already. A group pooling data sets
    whose positive classes differ states null.
    """
    if not parsed.has_class or parsed.class_ in group:
        return None
    c = pl.col(parsed.class_)
    stated = pl.when(c.n_unique() == 1).then(c.first()).alias(parsed.class_)
    return rows.group_by(group).agg(stated) if group else rows.select(stated)


def with_class_read(
    out: pl.LazyFrame, classes: pl.LazyFrame | None, group: list[str]
) -> pl.LazyFrame:
    """``out`` with the class read (:func:`class_read`) as its last column, rows in order."""
    if classes is None:
        return out
    if not group:
        return out.join(classes, how="cross", maintain_order="left")
    return out.join(classes, on=group, how="left", nulls_equal=True, maintain_order="left")
