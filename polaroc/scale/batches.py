"""Logs bigger than memory: evaluate a scanned log a batch of groups at a time.

The public face of :mod:`polaroc.core.batches` (the machinery, which knows nothing of
``evaluate``): :func:`plan_batches` shows the batches, :func:`evaluate_in_batches` runs
any per-group table over them, with :func:`polaroc.evaluate` as its default table.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Literal, Unpack

import polars as pl

from polaroc.core.args import validated
from polaroc.core.batches import Table, batch_results, group_sizes, positive_rows, with_batches
from polaroc.core.inputs import ColumnLike, FrameLike, as_lazy, as_names, require_columns
from polaroc.core.log import LogNames, columns_of, default_by
from polaroc.evaluation.per_fold import EvaluateOptions, evaluate
from polaroc.io import scan_logs

__all__ = ["evaluate_in_batches", "plan_batches"]

Engine = Literal["streaming", "in-memory"]


def plan_batches(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None = None,
    max_rows: int = 10_000_000,
    **columns: Unpack[LogNames],
) -> pl.LazyFrame:
    """Assign every group of ``log`` to a batch of at most about ``max_rows`` rows.

    Groups are taken in the order of their keys (so that a batch follows the
    partitions of a log written by model) and cut into consecutive batches: a group
    joins batch ``b = floor(rows before it / max_rows)``. A batch therefore holds
    fewer than ``max_rows`` plus one group's rows; a group larger than ``max_rows``
    is a batch of its own. Only the ``by`` columns are read.

    Parameters
    ----------
    log
        ``DataFrame`` or ``LazyFrame`` (e.g. a ``pl.scan_parquet`` of the log).
    by
        The grouping columns; ``None`` means ``(dataset, model, repeat, fold)`` of the
        columns the log has (``model`` and ``fold`` always), as :func:`polaroc.evaluate`.
    max_rows
        The row budget of a batch.
    **columns
        Names of the log's columns, as keywords: ``model``, ``fold``, ``class_``,
        ``score``, ``label``, ``sample``, ``dataset``, ``repeat`` (each defaults to its
        own name); only those of the default ``by`` are read.

    Returns
    -------
    pl.LazyFrame
        by…, ``n_rows`` (rows of the group), ``batch`` (``Int64`` from 0).

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> log = pl.DataFrame({"model": ["a"] * 5 + ["b"] * 3, "fold": [0, 0, 1, 1, 1, 0, 0, 1]})
    >>> pr.plan_batches(log, max_rows=4).collect()
    shape: (4, 4)
    ┌───────┬──────┬────────┬───────┐
    │ model ┆ fold ┆ n_rows ┆ batch │
    │ ---   ┆ ---  ┆ ---    ┆ ---   │
    │ str   ┆ i64  ┆ i64    ┆ i64   │
    ╞═══════╪══════╪════════╪═══════╡
    │ a     ┆ 0    ┆ 2      ┆ 0     │
    │ a     ┆ 1    ┆ 3      ┆ 0     │
    │ b     ┆ 0    ┆ 2      ┆ 1     │
    │ b     ┆ 1    ┆ 1      ┆ 1     │
    └───────┴──────┴────────┴───────┘
    """
    max_rows = positive_rows(max_rows)
    frame = as_lazy(log)
    schema = frame.collect_schema()
    names = columns_of(columns, caller="plan_batches")
    keys = default_by(schema, names) if by is None else as_names(by)
    require_columns(schema, keys)
    return with_batches(group_sizes(frame, keys), max_rows)


class GroupedEvaluate:
    """:func:`polaroc.evaluate` with one :class:`~polaroc.evaluation.per_fold.EvaluateOptions`.

    The default table of the batched and distributed paths: a class, not a closure, so
    that Ray and Spark can pickle it to their workers. It never bounds itself again
    (``max_rows=None``): it runs on one batch, or one worker's rows.
    """

    def __init__(self, options: EvaluateOptions) -> None:
        self.options = options

    def __call__(self, part: pl.LazyFrame) -> pl.LazyFrame:
        return evaluate(part, **self.options.keywords(), max_rows=None)


@validated
def evaluate_in_batches(
    log: FrameLike | str | Path,
    table: Table | None = None,
    *,
    by: str | Iterable[str] | None = None,
    max_rows: int | Literal["auto"] = 10_000_000,
    engine: Engine = "streaming",
    threshold: float = 0.5,
    weight: ColumnLike | None = None,
    collapse_ties: bool | None = None,
    progress: bool = False,
    **columns: Unpack[LogNames],
) -> pl.DataFrame:
    """Evaluate a log bigger than memory, whole groups at a time.

    The groups (``by``) are counted from the key columns alone and packed into
    batches of about ``max_rows`` rows (:func:`plan_batches`); each batch is read
    with a pushed-down filter and evaluated by ``table``, and the small per-group
    results are concatenated. Peak memory is that of evaluating one batch — about
    ``max_rows`` plus the largest group's rows — not of the log; the log is read
    once (per batch only the files and row groups that hold its groups). Give the
    log as a scan (``pl.scan_parquet`` or :func:`polaroc.scan_logs`, or a path);
    an in-memory ``DataFrame`` works too, but then it already occupies memory.

    Unlike the table functions this one runs the queries (it has to, to bound
    memory) and returns a ``DataFrame``; the Python loop is over batches, never over
    rows, and each batch is one Polars query.

    Parameters
    ----------
    log
        ``LazyFrame``/``DataFrame`` in the contract's long format, or a Parquet
        file, glob or hive-partitioned folder (read with :func:`polaroc.scan_logs`).
    table
        A function from a batch of the log (``LazyFrame``) to a per-group table,
        e.g. ``lambda lf: pr.multiclass_auc(lf)`` or
        ``lambda lf: lf.group_by("model", "fold").agg(pr.auc("score", "label"))``.
        Default: :func:`polaroc.evaluate` grouped by ``by``. Its groups must not
        straddle batches: every ``by`` column must be one of its grouping columns.
    by
        The columns that define a group (and a batch's unit); ``None`` means
        ``(dataset, model, repeat, fold)`` of the columns the log has (``model`` and
        ``fold`` always), as :func:`polaroc.evaluate`.
    max_rows
        Row budget of a batch. With ``max_rows`` at most the largest group's rows,
        memory is set by the largest group alone. ``"auto"``: sized from the log's
        rows, its row size and the memory available, as ``pr.evaluate``'s default
        (see its ``max_rows``).
    engine
        Polars engine for each batch (``"streaming"`` or ``"in-memory"``).
    threshold, weight, collapse_ties
        Options of the default table, as in :func:`polaroc.evaluate`.
    progress
        Show a progress bar of the batches on the terminal (rich, from the
        ``report`` extra: ``pip install 'polaroc[report]'``).
    **columns
        Names of the log's columns, as keywords: ``model``, ``fold``, ``class_``,
        ``score``, ``label``, ``sample``, ``dataset``, ``repeat`` (each defaults to its
        own name), read by the default ``by`` and the default ``table``.

    Returns
    -------
    pl.DataFrame
        The rows of ``table`` for every batch, sorted by ``by``.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> log = pl.DataFrame({
    ...     "model": ["a"] * 4 + ["b"] * 4,
    ...     "fold": [0, 0, 1, 1] * 2,
    ...     "score": [0.9, 0.2, 0.8, 0.4, 0.3, 0.6, 0.7, 0.1],
    ...     "label": [True, False, True, False] * 2,
    ... })
    >>> per_fold = pr.evaluate_in_batches(log, max_rows=2)
    >>> per_fold.select("model", "fold", "n", "auc", "error")
    shape: (4, 5)
    ┌───────┬──────┬─────┬─────┬───────┐
    │ model ┆ fold ┆ n   ┆ auc ┆ error │
    │ ---   ┆ ---  ┆ --- ┆ --- ┆ ---   │
    │ str   ┆ i64  ┆ i64 ┆ f64 ┆ f64   │
    ╞═══════╪══════╪═════╪═════╪═══════╡
    │ a     ┆ 0    ┆ 2   ┆ 1.0 ┆ 0.0   │
    │ a     ┆ 1    ┆ 2   ┆ 1.0 ┆ 0.0   │
    │ b     ┆ 0    ┆ 2   ┆ 0.0 ┆ 1.0   │
    │ b     ┆ 1    ┆ 2   ┆ 1.0 ┆ 0.0   │
    └───────┴──────┴─────┴─────┴───────┘

    Any per-group table, e.g. plain AUCs from an expression:

    >>> auc = lambda lf: lf.group_by("model", "fold").agg(pr.auc("score", "label"))
    >>> pr.evaluate_in_batches(log, auc, max_rows=4)["auc"].to_list()
    [1.0, 1.0, 0.0, 1.0]
    """
    options = EvaluateOptions.of(
        threshold=threshold, weight=weight, collapse_ties=collapse_ties, **columns
    )
    rows = max_rows if max_rows == "auto" else positive_rows(max_rows)
    frame = scan_logs(log) if isinstance(log, str | Path) else as_lazy(log)
    keys = default_by(frame.collect_schema(), options.columns) if by is None else as_names(by)
    if table is None:
        table = GroupedEvaluate(options.grouped(keys))
    if not keys:  # by=(): one group, one batch
        return _collected(table(frame), engine)
    results = list(batch_results(frame, table, keys, rows, engine, progress=progress))
    if not results:
        return _collected(table(frame.head(0)), engine)
    return pl.concat(results, how="vertical_relaxed").sort(keys, nulls_last=True)


def _collected(result: pl.LazyFrame | pl.DataFrame, engine: Engine) -> pl.DataFrame:
    return result.collect(engine=engine) if isinstance(result, pl.LazyFrame) else result
