"""Logs bigger than memory: evaluate a scanned log a batch of groups at a time.

An exact AUC needs all the scores of a group at once (one ordering per group), so
a streaming ``group_by`` that sorts holds every group of the log until the end: its
memory grows with the log. Evaluating whole groups in batches bounds it by the
batch instead. The batches are planned from the grouping columns alone (a scan
that reads nothing else) and each batch is read with a filter that Polars pushes
into the scan: hive partitions whose folder values are not in the batch are
skipped, and Parquet row groups are skipped by their statistics.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Literal

import polars as pl

from polaroc._input import FrameLike, LogColumns, as_lazy, as_names, require_columns
from polaroc._log import default_by
from polaroc.evaluation import evaluate
from polaroc.io import scan_logs

__all__ = ["evaluate_in_batches", "plan_batches"]

Table = Callable[[pl.LazyFrame], pl.LazyFrame | pl.DataFrame]
Engine = Literal["streaming", "in-memory"]

_ROWS = "_pr_rows"
_BATCH = "batch"


def plan_batches(
    log: FrameLike, *, by: str | Iterable[str] | None = None, max_rows: int = 10_000_000
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
        The grouping columns; ``None`` means ``(model, fold)``, with ``dataset``
        first when the log has one.
    max_rows
        The row budget of a batch.

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
    if max_rows < 1:
        msg = f"max_rows must be a positive number of rows, got {max_rows!r}"
        raise ValueError(msg)
    frame = as_lazy(log)
    schema = frame.collect_schema()
    keys = default_by(schema, LogColumns()) if by is None else as_names(by)
    require_columns(schema, keys)
    n_rows = pl.col("n_rows")
    return (
        frame.group_by(keys)
        .agg(pl.len().cast(pl.Int64).alias("n_rows"))
        .sort(keys, nulls_last=True)
        .with_columns(((n_rows.cum_sum() - n_rows) // max_rows).alias(_BATCH))
    )


def _select_groups(frame: pl.LazyFrame, keys: pl.DataFrame) -> pl.LazyFrame:
    """The rows of ``frame`` whose groups are in ``keys``.

    One ``is_in`` per key column first: Polars pushes it into the scan (skipping
    hive partitions and row groups); the semi join then keeps exactly the batch's
    key combinations.
    """
    values = {c: keys[c].unique().implode() for c in keys.columns}
    per_column = [pl.col(c).is_in(v, nulls_equal=True) for c, v in values.items()]
    return frame.filter(*per_column).join(
        keys.lazy(), on=keys.columns, how="semi", nulls_equal=True
    )


def _run(result: pl.LazyFrame | pl.DataFrame, engine: Engine) -> pl.DataFrame:
    return result.collect(engine=engine) if isinstance(result, pl.LazyFrame) else result


class GroupedEvaluate:
    """:func:`polaroc.evaluate` grouped by ``keys`` with the log's column names.

    The default table of the batched and distributed paths: a class, not a closure, so
    that Ray and Spark can pickle it to their workers.
    """

    def __init__(self, keys: list[str], columns: LogColumns, threshold: float = 0.5) -> None:
        self.keys, self.columns, self.threshold = keys, columns, threshold

    def __call__(self, part: pl.LazyFrame) -> pl.LazyFrame:
        c = self.columns
        return evaluate(
            part, by=self.keys, threshold=self.threshold, model=c.model, fold=c.fold,
            class_=c.class_, score=c.score, label=c.label, sample=c.sample,
            dataset=c.dataset, repeat=c.repeat,
        )  # fmt: skip


def evaluate_in_batches(
    log: FrameLike | str | Path,
    table: Table | None = None,
    *,
    by: str | Iterable[str] | None = None,
    max_rows: int = 10_000_000,
    engine: Engine = "streaming",
    model: str = "model",
    fold: str = "fold",
    class_: str = "class",
    score: str = "score",
    label: str = "label",
    sample: str = "sample",
    dataset: str = "dataset",
    repeat: str = "repeat",
    progress: bool = False,
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
        ``(model, fold)``, with ``dataset`` first when the log has one.
    max_rows
        Row budget of a batch. With ``max_rows`` at most the largest group's rows,
        memory is set by the largest group alone.
    engine
        Polars engine for each batch (``"streaming"`` or ``"in-memory"``).
    model, fold, class_, score, label, sample, dataset, repeat
        The log's column names, used by the default ``by`` and the default ``table``.
    progress
        Show a progress bar of the batches on the terminal (rich, from the
        ``report`` extra: ``pip install 'polaroc[report]'``).

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
    frame = scan_logs(log) if isinstance(log, str | Path) else as_lazy(log)
    schema = frame.collect_schema()
    columns = LogColumns(
        model=model, fold=fold, class_=class_, score=score, label=label, sample=sample,
        dataset=dataset, repeat=repeat,
    )  # fmt: skip
    keys = default_by(schema, columns) if by is None else as_names(by)
    if table is None:
        table = GroupedEvaluate(keys, columns)

    if not keys:  # by=(): one group, one batch
        return _run(table(frame), engine)
    results = list(batch_results(frame, table, keys, max_rows, engine, progress=progress))
    if not results:
        return _run(table(frame.head(0)), engine)
    return pl.concat(results, how="vertical_relaxed").sort(keys, nulls_last=True)


def batch_results(
    frame: pl.LazyFrame,
    table: Table,
    by: list[str],
    max_rows: int,
    engine: Engine = "streaming",
    *,
    progress: bool = False,
) -> Iterator[pl.DataFrame]:
    """``table``'s result for each batch of whole groups of about ``max_rows`` rows.

    The groups are counted from the key columns (:func:`plan_batches`); each batch is
    read with a filter pushed into the scan and evaluated on its own.
    """
    plan = plan_batches(frame, by=by, max_rows=max_rows).collect(engine=engine)
    for batch in _tracked(plan.partition_by(_BATCH, maintain_order=True), progress):
        part = _select_groups(frame, batch.select(by))
        yield _keyed(_run(table(part), engine), by)


def lazy_batches(
    frame: pl.LazyFrame,
    table: Callable[[pl.LazyFrame], pl.LazyFrame],
    by: list[str],
    max_rows: int,
) -> pl.LazyFrame:
    """``table(frame)`` as a lazy frame that evaluates whole groups a batch at a time.

    Nothing runs until the result is collected: then :func:`batch_results` evaluates
    one batch of about ``max_rows`` rows after the other, so the query holds one
    batch, not the log. It is a Polars IO source (``register_io_source``): it chains
    with other lazy tables and ``pl.collect_all`` like any scan, and the columns,
    filters and row limits of the query above it are applied to each batch's result.
    """
    from polars.io.plugins import register_io_source

    def batches(
        with_columns: list[str] | None,
        predicate: pl.Expr | None,
        n_rows: int | None,
        batch_size: int | None,
    ) -> Iterator[pl.DataFrame]:
        left = n_rows
        for out in batch_results(frame, table, by, max_rows):
            if predicate is not None:
                out = out.filter(predicate)
            if with_columns is not None:
                out = out.select(with_columns)
            if left is not None:
                out, left = out.head(left), left - min(left, out.height)
            yield out
            if left == 0:
                return

    schema = table(frame).collect_schema()
    return register_io_source(batches, schema=schema, explain_name="polaroc batches")


def _tracked(batches: list[pl.DataFrame], show: bool) -> Iterable[pl.DataFrame]:
    """``batches``, behind a rich progress bar when ``show``."""
    if not show:
        return batches
    try:
        from rich.progress import track
    except ImportError as exc:
        msg = "progress=True needs rich: pip install 'polaroc[report]'"
        raise ImportError(msg) from exc
    return track(batches, description="evaluating batches", transient=True)


def _keyed(result: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """``result``, if it has every ``by`` column (the batches are cut along them)."""
    missing = [k for k in keys if k not in result.columns]
    if missing:
        msg = (
            f"evaluate_in_batches: the table's result has no column "
            f"{', '.join(map(repr, missing))} (it has: {', '.join(result.columns)}); "
            f"batches are cut along by={tuple(keys)!r}, so the table must group by "
            "every by column, or pass by= with the columns it groups by."
        )
        raise ValueError(msg)
    return result
