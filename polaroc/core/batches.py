"""Whole groups a batch at a time: the machinery behind bounded per-group tables.

An exact AUC needs all the scores of a group at once, so a query that orders every
group holds every group until the end of its input: its memory grows with the log.
Evaluating whole groups in batches bounds it by the batch. The batches are planned
from the grouping columns alone (a scan that reads nothing else) and each batch is
read with a filter that Polars pushes into the scan: hive partitions whose folder
values are not in the batch are skipped, and Parquet row groups by their statistics.

This module knows nothing of the tables it runs: a table is any function from a
batch of the log to a per-group table. :func:`bounded_plan` is the one call a table
function makes to bound itself (``pr.evaluate``, ``pr.multiclass_auc``, ``pr.pairwise_auc``,
``pr.proportion_correct``, ``pr.roc_curve`` and the pooled and averaged curves use it for
``max_rows=``), and :func:`auto_rows` is the rule behind ``max_rows="auto"``.
A table run on one batch never bounds itself again by default (see :func:`scans_files`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from typing import Literal, TypeVar

import polars as pl

__all__ = [
    "AUTO",
    "BATCH",
    "MaxRows",
    "Plan",
    "Table",
    "auto_rows",
    "batch_results",
    "bounded_plan",
    "group_sizes",
    "in_batch",
    "lazy_batches",
    "peak_per_byte",
    "positive_rows",
    "scans_files",
    "select_groups",
    "with_batches",
]

_T = TypeVar("_T")
Table = Callable[[pl.LazyFrame], pl.LazyFrame | pl.DataFrame]
LazyTable = Callable[[pl.LazyFrame], pl.LazyFrame]
Engine = Literal["streaming", "in-memory"]
MaxRows = int | Literal["auto"] | None
# a table function's plan: the unbounded table of a log and the log columns its groups
# are cut along (empty: one group, nothing to batch)
Plan = Callable[[pl.DataFrame | pl.LazyFrame], tuple[pl.LazyFrame, list[str]]]

AUTO = "auto"
BATCH = "batch"
_N_ROWS = "n_rows"

# ``max_rows="auto"``: an unbounded per-group query holds up to ~8 times its input's
# in-memory size on two threads (measured 4.1–7.9× for pr.evaluate, benchmarks/README.md),
# and more with more threads (see auto_rows); a batch is sized so that this peak plus the
# fixed cost of running the queries (~70–80 MB above the baseline, measured) stays within
# 1.5 times the log's own in-memory size (the target is 2×: the rest is margin) and half
# the memory available, and never below _MIN_ROWS rows (below that, each batch's fixed
# cost of one more query dominates and the memory is small anyway). Batches as large as
# that hold several groups, which Polars orders in parallel: batches of one group each
# ran 1.3–1.4× the time of one query.
PEAK_PER_BYTE = 8  # with two threads
PEAK_PER_THREAD = 0.5  # each thread beyond two
_LOG_SHARE = 1.5
_FIXED_BYTES = 80 * 2**20
_MIN_ROWS = 100_000
_SAMPLE_ROWS = 10_000
_FILE_SCAN = re.compile(r"^\s*(?!PYTHON\b)\w+ SCAN \[", re.MULTILINE)
_CACHE = re.compile(r"^\s*CACHE\[", re.MULTILINE)
# set while a table is built for one batch: its rows are bounded already
_IN_BATCH: ContextVar[bool] = ContextVar("polaroc_in_batch", default=False)


def positive_rows(value: object, *, name: str = "max_rows") -> int:
    """``value`` as a positive ``int`` (NumPy integers too); else a ``ValueError``."""
    rows = value.__index__() if hasattr(value, "__index__") else 0  # int, NumPy integers
    if rows >= 1 and not isinstance(value, bool):
        return int(rows)
    msg = f"{name} must be a positive integer (rows), got {value!r}"
    raise ValueError(msg)


def scans_files(frame: pl.LazyFrame) -> bool:
    """Whether ``frame``'s plan reads files (a Parquet, CSV, IPC or NDJSON scan) uncached.

    Read from the unoptimised plan Polars prints (``LazyFrame.explain``), which names
    each source: ``Parquet SCAN [...]`` for a file, ``DF [...]`` for an in-memory
    frame, ``PYTHON SCAN`` for a Python IO source (not counted: its data is not
    files Polars reads). A plan with a ``CACHE`` (``scan.cache()``, the way to share
    one read of the log between tables) does not count: the cache holds the whole
    log for its other readers anyway, and batches would read the files once more.
    Nor does a batch's part of the log while its table is built (inside
    :func:`batch_results`): it is bounded already, and ``max_rows="auto"`` must not
    cut it again. Printing the plan reads no data.
    """
    if _IN_BATCH.get():
        return False
    plan = frame.explain(optimized=False)
    return bool(_FILE_SCAN.search(plan)) and not _CACHE.search(plan)


def available_memory() -> int | None:
    """Bytes of memory available to new allocations (``/proc/meminfo``, else free pages)."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def row_bytes(frame: pl.LazyFrame) -> float:
    """In-memory bytes a row of ``frame`` takes, from its first rows (a sliced read)."""
    head = frame.head(_SAMPLE_ROWS).collect()
    if head.height == 0:
        return float(max(1, 8 * head.width))
    return head.estimated_size() / head.height


def peak_per_byte(threads: int) -> float:
    """A batch's peak per byte of its rows on ``threads`` threads: :func:`auto_rows`' PEAK(T)."""
    return PEAK_PER_BYTE + PEAK_PER_THREAD * max(threads - 2, 0)


def auto_rows(
    rows: int, bytes_per_row: float, available: int | None, threads: int | None = None
) -> int:
    """The batch size of ``max_rows="auto"`` for a log of ``rows`` rows.

    **The bound.** A batch's query gathers each group's rows into one list and orders
    them there, one group per thread: Polars' pool of T threads (``threads``, default
    ``pl.thread_pool_size()``) orders up to T groups at once, and every thread's
    working set — the group it gathered, its sorted copy, the flat rows rebuilt from
    it, its partial aggregations — comes on top of what the batch holds. Per byte of
    the batch (its rows' in-memory size ``b·s``), measured on ``pr.evaluate`` over a
    hive scan of 25M rows in 20 groups (issue 34): 6.45 with 2 threads and 11.8 with
    16 (1.43× and 2.49× the log above the baseline), i.e. about a + c·T with a ≈ 5.7
    and c ≈ 0.38 per thread. The rule keeps the same margin (8/6.45 = 1.24) over
    that cost at every T:

        PEAK(T) = 8 + 0.5·(T − 2)   (8 for T ≤ 2; ≈ 1.24·(a + c·T), above it for T > 2),

    and a batch of b rows peaks at about ``F + PEAK(T)·b·s``, with ``F`` = 80 MB the
    fixed cost of running queries whatever they read. Asking that this stay within
    1.5 times the log's in-memory size ``rows·s`` (the contract's bound is 2×) and
    half the ``available`` memory gives

        b = min(1.5·rows·s − F, available/2) / (PEAK(T)·s),

    at least 100,000 rows: about a sixth of a log of a few GB on two threads, and
    smaller as the pool grows, so that the peak does not grow with the cores. (On
    these 2-core machines ``POLARS_MAX_THREADS`` above 2 does not show the per-thread
    term — the threads do not run at once —, so c is the 16-core figure.) A log of
    ``b`` rows or fewer is one batch (the unbounded query).
    """
    s = max(bytes_per_row, 1.0)
    t = pl.thread_pool_size() if threads is None else threads
    budget = rows * s * _LOG_SHARE - _FIXED_BYTES
    if available is not None:
        budget = min(budget, available / 2)
    return max(_MIN_ROWS, int(budget / (peak_per_byte(t) * s)))


def group_sizes(frame: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
    """Rows per group (``n_rows``, ``Int64``), in the order of the keys; reads only ``keys``."""
    return (
        frame.group_by(keys).agg(pl.len().cast(pl.Int64).alias(_N_ROWS)).sort(keys, nulls_last=True)
    )


def with_batches(sizes: pl.LazyFrame | pl.DataFrame, max_rows: int) -> pl.LazyFrame:
    """``sizes`` with ``batch``: consecutive groups cut into batches of about ``max_rows``.

    A group joins batch ``floor(rows before it / max_rows)``, so a batch holds fewer
    than ``max_rows`` plus one group's rows; a larger group is a batch of its own.
    """
    max_rows = positive_rows(max_rows)
    n_rows = pl.col(_N_ROWS)
    return sizes.lazy().with_columns(((n_rows.cum_sum() - n_rows) // max_rows).alias(BATCH))


def select_groups(frame: pl.LazyFrame, keys: pl.DataFrame) -> pl.LazyFrame:
    """The rows of ``frame`` whose groups are in ``keys``.

    One ``is_in`` per key column first: Polars pushes it into the scan (skipping hive
    partitions and row groups); the semi join then keeps exactly the batch's key
    combinations.
    """
    values = {c: keys[c].unique().implode() for c in keys.columns}
    per_column = [pl.col(c).is_in(v, nulls_equal=True) for c, v in values.items()]
    return frame.filter(*per_column).join(
        keys.lazy(), on=keys.columns, how="semi", nulls_equal=True
    )


def _run(result: pl.LazyFrame | pl.DataFrame, engine: Engine) -> pl.DataFrame:
    return result.collect(engine=engine) if isinstance(result, pl.LazyFrame) else result


def batch_results(
    frame: pl.LazyFrame,
    table: Table,
    by: list[str],
    max_rows: int | Literal["auto"],
    engine: Engine = "streaming",
    *,
    progress: bool = False,
) -> Iterator[pl.DataFrame]:
    """``table``'s result for each batch of whole groups of about ``max_rows`` rows.

    The groups are counted from the key columns; each batch is read with a filter
    pushed into the scan and evaluated on its own. ``"auto"`` sizes the batches by
    :func:`auto_rows`; when the whole log is one batch, ``table`` reads ``frame``
    itself (no filter).
    """
    sizes = group_sizes(frame, by).collect(engine=engine)
    if max_rows == AUTO:
        rows = int(sizes[_N_ROWS].sum())
        max_rows = auto_rows(rows, row_bytes(frame), available_memory())
        if rows <= max_rows:
            yield _keyed(_run(in_batch(table, frame), engine), by)
            return
    plan = with_batches(sizes, positive_rows(max_rows)).collect()
    for batch in _tracked(plan.partition_by(BATCH, maintain_order=True), progress):
        part = select_groups(frame, batch.select(by))
        yield _keyed(_run(in_batch(table, part), engine), by)


def in_batch(table: Callable[[pl.LazyFrame], _T], part: pl.LazyFrame) -> _T:
    """``table(part)`` built as a batch's table: ``max_rows="auto"`` in it is the plain plan."""
    token = _IN_BATCH.set(True)
    try:
        return table(part)
    finally:
        _IN_BATCH.reset(token)


def lazy_batches(
    frame: pl.LazyFrame,
    table: LazyTable,
    by: list[str],
    max_rows: int | Literal["auto"],
    schema: pl.Schema | None = None,
) -> pl.LazyFrame:
    """``table(frame)`` as a lazy frame that evaluates whole groups a batch at a time.

    Nothing runs until the result is collected: then :func:`batch_results` evaluates
    one batch of about ``max_rows`` rows after the other, so the query holds one
    batch, not the log. It is a Polars IO source (``register_io_source``): it chains
    with other lazy tables and ``pl.collect_all`` like any scan, and the columns,
    filters and row limits of the query above it are applied to each batch's result.
    A query that needs none of its columns (``pl.len()``, ``with_row_index``) still
    gets one row per group. ``schema``: the table's, when the caller has it already.
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
                # no column asked for: a frame of no columns that keeps its rows
                out = out.select(with_columns) if with_columns else out.drop(out.columns)
            if left is not None:
                out, left = out.head(left), left - min(left, out.height)
            yield out
            if left == 0:
                return

    if schema is None:
        schema = in_batch(table, frame).collect_schema()
    return register_io_source(batches, schema=schema, explain_name="polaroc batches").cache()


def bounded_plan(log: pl.DataFrame | pl.LazyFrame, plan: Plan, max_rows: object) -> pl.LazyFrame:
    """``plan(log)``'s table, bounded to whole groups about ``max_rows`` rows at a time.

    The one call a per-group table function makes to honour ``max_rows=``: ``plan``
    maps a log to the table's unbounded plan and the log columns its groups are cut
    along (``by``; the table's groups may be finer, e.g. a class within them). The
    plan of the whole log is built first, so a bad log fails when the table is
    built, whatever ``max_rows``. ``None``, or no ``by`` (one group): that plain
    plan, one query. A number: the batches of :func:`lazy_batches`. ``"auto"``:
    batches when ``log`` is a ``LazyFrame`` whose plan scans files
    (:func:`scans_files`), sized when collected by :func:`auto_rows`; the plain plan,
    at no cost, for a ``DataFrame``, an in-memory plan or one batch's part of a log.
    """
    rows = check_max_rows(max_rows)
    table, by = plan(log)
    if rows is None or not by:
        return table
    if rows == AUTO and (isinstance(log, pl.DataFrame) or not scans_files(log)):
        return table
    schema = table.collect_schema()
    return lazy_batches(log.lazy(), lambda part: plan(part)[0], by, rows, schema)


def check_max_rows(max_rows: object) -> MaxRows:
    """``max_rows`` as ``bounded_plan`` takes it: ``None``, ``"auto"`` or a positive ``int``."""
    if max_rows is None or max_rows == AUTO:
        return max_rows  # type: ignore[return-value]  # one of the two literals
    return positive_rows(max_rows)


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
            f"the table's result has no column "
            f"{', '.join(map(repr, missing))} (it has: {', '.join(result.columns)}); "
            f"batches are cut along by={tuple(keys)!r}, so the table must group by "
            "every by column, or pass by= with the columns it groups by."
        )
        raise ValueError(msg)
    return result
