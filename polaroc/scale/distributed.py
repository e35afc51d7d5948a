"""The per-fold table on a cluster: Ray Data or PySpark, exact for groups of any size.

``pr.distributed.evaluate`` runs :func:`polaroc.evaluate` (or any per-group table
function) inside the workers of Ray or Spark, on Arrow data turned into Polars
frames: the engine moves rows, polaroc's own Polars code computes every number.
It returns a Polars ``DataFrame`` equal to the one-machine table.

Three plans, chosen from the log:

* **hive folders that hold whole groups** (every partition key is a grouping
  column, e.g. ``model=…/`` with ``by=("model", "fold")``): each worker reads one
  leaf folder with Polars and evaluates it; no shuffle at all.
* **any other log**: the engine's group-by brings each group's rows to one worker
  (``groupby(...).map_groups`` on Ray, ``groupBy(...).applyInArrow`` on Spark).
* **groups of more than** ``max_group_rows`` **rows**: never gathered. Rows are
  counted per (group, class, label, distinct score) — ``−0.0`` and ``0.0`` are one
  score — with a combiner in each partition and a shuffle of the counts; the
  counts are cut into score ranges (quantiles of a sample); one small table of
  per-range totals gives every range the counts below and above it, and each
  range's partial sums (integers for the AUC's 2U) add up to the block sums that
  :func:`polaroc.evaluate` orders the rows for. The same Polars code then
  assembles M, sAUC, DeLong's and Hanley & McNeil's standard errors and the error;
  the Brier score and log loss are sums of count × per-score value, added in the
  same per-range pass.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Unpack
from urllib.parse import unquote

import polars as pl

from polaroc.core.args import validated
from polaroc.core.batches import positive_rows
from polaroc.core.blocks import CLASS, LABEL, USABLE
from polaroc.core.counts import range_breaks
from polaroc.core.inputs import ColumnLike, LogColumns, require_columns
from polaroc.core.log import SCORE, LogNames, default_by
from polaroc.evaluation.per_fold import EvaluateOptions, with_auc_ci
from polaroc.io import find_log_files, scan_logs
from polaroc.scale import _big_groups as big_groups
from polaroc.scale._engines import (
    Engine,
    conform,
    file_groups,
    is_engine_data,
    make_engine,
)
from polaroc.scale.batches import GroupedEvaluate

__all__ = ["evaluate"]

Table = Callable[[pl.LazyFrame], pl.LazyFrame | pl.DataFrame]

_SAMPLE_ROWS = 200_000  # scores sampled to place the range boundaries of big groups
_N = "_pr_n"


def _collected(result: pl.LazyFrame | pl.DataFrame) -> pl.DataFrame:
    return result.collect() if isinstance(result, pl.LazyFrame) else result


def _hive_values(path: str, root: str, keys: list[str]) -> dict[str, str | None]:
    """The ``key=value`` folders of ``path`` below ``root`` (percent-decoded)."""
    values: dict[str, str | None] = {}
    for part in Path(os.path.relpath(os.path.dirname(path), root)).parts:
        key, sep, value = part.partition("=")
        if sep and key in keys:
            value = unquote(value)
            values[key] = None if value == "__HIVE_DEFAULT_PARTITION__" else value
    return values


def _paths(source: object) -> list[str] | None:
    """``source`` as a list of paths, or ``None`` when it is not a path or a list of them."""
    if isinstance(source, str | Path):
        return [str(source)]
    if isinstance(source, list | tuple) and all(isinstance(p, str | Path) for p in source):
        return [str(p) for p in source]
    return None


class _Source:
    """The log as the engine reads it, with the log's schema as Polars reads it."""

    def __init__(self, engine: Engine, source: object) -> None:
        self.files: list[str] = []
        self.hive: list[str] = []
        self.root = ""
        if is_engine_data(source):
            self.data: Any = source
            self.schema = engine.schema(source)
            return
        paths = _paths(source)
        if paths is None:
            msg = (
                "source must be a Parquet path, glob or hive folder, a ray.data.Dataset or a "
                f"pyspark.sql.DataFrame; got {type(source).__name__}"
            )
            raise TypeError(msg)
        self.schema = scan_logs(paths).collect_schema()  # the one-machine checks and dtypes
        self.files = [str(f) for f in find_log_files(paths)]
        own = pl.read_parquet_schema(self.files[0])
        self.hive = [c for c in self.schema if c not in own]
        self.root = os.path.commonpath([os.path.dirname(f) for f in self.files])
        if self.hive and len(paths) == 1 and os.path.isdir(paths[0]):
            self.root = paths[0]
        self.read_files = _FileReader(self.root, self.hive, self.schema)
        self.data = engine.read(
            self.files, self.root if self.hive else None, self.read_files, self.schema
        )


class _FileReader:
    """Reads files with their hive columns in the log's dtypes (Polars); sent to workers."""

    def __init__(self, root: str, hive: list[str], schema: pl.Schema) -> None:
        self.root, self.hive, self.schema = root, hive, schema

    def __call__(self, files: list[str]) -> pl.DataFrame:
        parts = []
        for f in files:
            values = _hive_values(f, self.root, self.hive)
            frame = pl.read_parquet(f, hive_partitioning=False)
            parts.append(frame.with_columns(pl.lit(values.get(k)).alias(k) for k in self.hive))
        return conform(pl.concat(parts, how="vertical_relaxed"), self.schema)


def _table_fn(table: Table, schema: pl.Schema) -> Callable[[pl.DataFrame], pl.DataFrame]:
    def apply(frame: pl.DataFrame) -> pl.DataFrame:
        return _collected(table(conform(frame, schema).lazy()))

    return apply


def _per_group(
    engine: Engine, source: _Source, data: Any, keys: list[str], table: Table, out: pl.Schema
) -> pl.DataFrame:
    """Each group's rows on one worker: per hive folder when folders hold whole groups."""
    fn = _table_fn(table, source.schema)
    whole = bool(source.hive) and set(source.hive) <= set(keys)
    if whole and data is source.data:
        groups = file_groups(source.files)
        read = source.read_files  # not ``source``: it holds the engine's session

        def per_files(files: list[str]) -> pl.DataFrame:
            return fn(read(files))

        return engine.collect(engine.per_file_group(groups, per_files, out), out)
    return engine.collect(engine.map_groups(data, keys, fn, out), out)


# ------------------------------------------------------------------ big groups


def _group_sizes(engine: Engine, data: Any, keys: list[str], schema: pl.Schema) -> pl.DataFrame:
    out = pl.Schema({**{k: schema[k] for k in keys}, _N: pl.Int64()})

    def sizes(frame: pl.DataFrame) -> pl.DataFrame:
        return conform(frame, schema).group_by(keys).agg(pl.len().cast(pl.Int64).alias(_N))

    partial = engine.collect(engine.map_batches(data, sizes, out), out)
    return partial.group_by(keys).agg(pl.col(_N).sum())


def _without(big: pl.DataFrame, keys: list[str], schema: pl.Schema) -> Callable[..., Any]:
    def small(frame: pl.DataFrame) -> pl.DataFrame:
        return conform(frame, schema).join(big, on=keys, how="anti", nulls_equal=True)

    return small


def _big_table(
    engine: Engine,
    source: _Source,
    big: pl.DataFrame,
    keys: list[str],
    columns: LogColumns,
    threshold: float,
    max_group_rows: int,
) -> pl.DataFrame:
    """The per-fold table of the groups in ``big`` (by…, ``_pr_gid``, ``_pr_n``)."""
    schema, gid = source.schema, big_groups.GID
    big = big.select(*keys, gid, _N)
    n_parts = max(2, math.ceil(big[_N].sum() / max_group_rows))
    empty_log = pl.DataFrame(schema=schema)
    counts_out = big_groups.row_counts(empty_log, big, keys, columns, threshold).schema

    def combined(frame: pl.DataFrame) -> pl.DataFrame:
        counts = big_groups.row_counts(conform(frame, schema), big, keys, columns, threshold)
        hashed = pl.struct(gid, CLASS, LABEL, SCORE).hash(seed=0) % n_parts
        return counts.with_columns(hashed.cast(pl.Int64).alias(big_groups.PART))

    with_part = pl.Schema({**counts_out, big_groups.PART: pl.Int64()})
    shuffled = engine.map_batches(source.data, combined, with_part)
    counts = engine.persist(
        engine.map_groups(shuffled, [big_groups.PART], big_groups.recount, counts_out)
    )
    breaks = _breaks(engine, counts, int(big[_N].sum()), max_group_rows)

    totals_out = big_groups.bucket_totals(
        big_groups.with_bucket(pl.DataFrame(schema=counts_out), breaks)
    ).schema

    def totals_of(frame: pl.DataFrame) -> pl.DataFrame:
        return big_groups.bucket_totals(big_groups.with_bucket(frame, breaks))

    blk = [*big_groups.BLOCK, big_groups.BUCKET, LABEL]
    totals = engine.collect(engine.map_batches(counts, totals_of, totals_out), totals_out)
    totals = totals.group_by(blk).agg(pl.all().sum())
    flags = totals.group_by(big_groups.BLOCK).agg(pl.col(*big_groups.FLAGS).sum())
    big_groups.check_range(totals)
    offsets = (
        big_groups.offsets(totals)
        .with_row_index(big_groups.PART)
        .cast({big_groups.PART: pl.Int64()})
    )
    in_range = [*big_groups.BLOCK, big_groups.BUCKET]

    def ranged(frame: pl.DataFrame) -> pl.DataFrame:
        usable = big_groups.with_bucket(frame.filter(USABLE), breaks)
        return usable.join(offsets.select(*in_range, big_groups.PART), on=in_range)

    ranged_out = pl.Schema(
        {**counts_out, big_groups.BUCKET: pl.Int64(), big_groups.PART: pl.Int64()}
    )
    sums_out = big_groups.bucket_sums(
        pl.DataFrame(schema=ranged_out), offsets.drop(big_groups.PART)
    ).schema

    def range_sums(frame: pl.DataFrame) -> pl.DataFrame:
        return big_groups.bucket_sums(frame, offsets.drop(big_groups.PART))

    ranges = engine.map_batches(counts, ranged, ranged_out)
    partial = engine.collect(
        engine.map_groups(ranges, [big_groups.PART], range_sums, sums_out), sums_out
    )
    sums = partial.group_by(*big_groups.BLOCK, LABEL).agg(
        pl.col("_pr_nan").any(), pl.col(*big_groups.SUM_COLUMNS).sum()
    )
    c1 = None
    if columns.class_ in schema and columns.sample in schema:
        c1 = _sample_c1(engine, source, big, keys, columns, threshold, n_parts)
    scores = big_groups.probability_scores(totals)
    return big_groups.assemble(sums, flags, big, keys, c1, scores)


def _breaks(engine: Engine, counts: Any, rows: int, max_group_rows: int) -> pl.Series:
    """Score boundaries cutting the counts into ranges of at most about ``max_group_rows``.

    ``rows`` (the big groups' rows) bounds the number of distinct scores: heavily
    tied groups get more ranges than they need (some empty), never fewer.
    """
    n_ranges = math.ceil(rows / max_group_rows)
    if n_ranges <= 1:
        return pl.Series(SCORE, [], pl.Float64)
    fraction = min(1.0, _SAMPLE_ROWS / rows)
    score_out = pl.Schema({SCORE: pl.Float64})

    def scores(frame: pl.DataFrame) -> pl.DataFrame:
        return frame.select(pl.col(SCORE).filter(pl.col(SCORE).is_not_nan()))

    sample = engine.collect(
        engine.map_batches(engine.sample(counts, fraction), scores, score_out), score_out
    )
    return range_breaks([sample[SCORE].quantile(i / n_ranges) for i in range(1, n_ranges)])


def _sample_c1(
    engine: Engine,
    source: _Source,
    big: pl.DataFrame,
    keys: list[str],
    columns: LogColumns,
    threshold: float,
    n_parts: int,
) -> pl.DataFrame:
    """Per group id: samples and C₁, the samples spread over ``n_parts`` parts by hash."""
    schema, gid, part = source.schema, big_groups.GID, big_groups.PART
    empty_log = pl.DataFrame(schema=schema)

    def tagged(frame: pl.DataFrame) -> pl.DataFrame:
        rows = conform(frame, schema).join(big.select(*keys, gid), on=keys, nulls_equal=True)
        hashed = pl.col(columns.sample).hash(seed=0) % n_parts
        return rows.with_columns((pl.col(gid) * n_parts + hashed).cast(pl.Int64).alias(part))

    def c1(frame: pl.DataFrame) -> pl.DataFrame:
        return big_groups.sample_c1(frame, gid, [gid, part], columns, threshold)

    tagged_out = tagged(empty_log).schema
    c1_out = c1(pl.DataFrame(schema=tagged_out)).schema
    rows = engine.map_batches(source.data, tagged, tagged_out)
    parts = engine.collect(engine.map_groups(rows, [part], c1, c1_out), c1_out)
    return big_groups.combine_c1(parts)


# -------------------------------------------------------------------- public


def _is_default(table: Table) -> bool:
    return isinstance(table, GroupedEvaluate)


def _table_schema(
    schema: pl.Schema, options: EvaluateOptions, table: Table | None
) -> tuple[list[str], Table, pl.Schema]:
    """The keys, the table function and its output schema (raises as ``evaluate`` does)."""
    by = options.by
    keys = default_by(schema, options.columns) if by is None else list(by)
    require_columns(schema, keys)
    function = GroupedEvaluate(options.grouped(keys)) if table is None else table
    return keys, function, function(pl.LazyFrame(schema=schema)).collect_schema()


@validated
def evaluate(
    source: object,
    *,
    engine: str,
    table: Table | None = None,
    by: str | Iterable[str] | None = None,
    max_group_rows: int | None = None,
    threshold: float = 0.5,
    weight: ColumnLike | None = None,
    collapse_ties: bool | None = None,
    partitions: int | None = None,
    **columns: Unpack[LogNames],
) -> pl.DataFrame:
    """The per-fold table computed on Ray or Spark, equal to the one-machine table.

    Each group's rows are evaluated by ``table`` (default :func:`polaroc.evaluate`)
    inside a worker, with polaroc's own Polars code on the Arrow data the engine
    hands over; the small per-group results are collected into one ``DataFrame``.
    Groups with more than ``max_group_rows`` rows are never gathered on one
    worker: they are computed from per-distinct-score counts cut into score
    ranges (see the module notes), exactly — the same numbers to the last few
    bits, and integer counts, so 2U cannot overflow below 2⁶³.

    Parameters
    ----------
    source
        A Parquet file, glob or hive-partitioned folder, or a list of them (read as
        :func:`polaroc.scan_logs` reads it: the same errors for paths that match
        nothing, and the same dtypes — hive keys come back in the log's dtypes,
        whatever the engine made of them), or the engine's own data: a
        ``ray.data.Dataset`` or a ``pyspark.sql.DataFrame``.
    engine
        ``"ray"`` (Ray Data; uses the running session, e.g. ``ray.init(address=...)``,
        or starts ``ray.init(num_cpus=2)``) or ``"spark"`` (PySpark; uses the active
        ``SparkSession`` or starts ``local[2]`` with this Python for its workers).
    table
        A function from one group's rows (``LazyFrame``, the log's columns and
        dtypes) to a per-group table, e.g.
        ``lambda lf: lf.group_by("model", "fold").agg(pr.auc("score", "label"))``.
        Default: :func:`polaroc.evaluate` grouped by ``by``.
    by
        The columns of a group (the engine's shuffle keys); ``None`` means
        ``(dataset, model, repeat, fold)`` of the columns the log has (``model`` and
        ``fold`` always), as :func:`polaroc.evaluate`.
    max_group_rows
        Groups with more rows than this are computed without gathering them
        (``table`` must then be the default). ``None``: every group is gathered.
    threshold, weight, collapse_ties
        Options of the default table, as in :func:`polaroc.evaluate` (the same
        object carries them to the workers). Groups above ``max_group_rows`` take no
        ``weight``.
    partitions
        Shuffle partitions (default: the cluster's CPUs, at least 2).
    **columns
        Names of the log's columns, as keywords: ``model``, ``fold``, ``class_``,
        ``score``, ``label``, ``sample``, ``dataset``, ``repeat`` (each defaults to its
        own name).

    Returns
    -------
    pl.DataFrame
        The rows of ``table``, sorted by ``by``.

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
    >>> import tempfile
    >>> path = tempfile.mkdtemp()
    >>> log.write_parquet(path, partition_by="model")
    >>> table = pr.distributed.evaluate(path, engine="polars")  # engine="ray" or "spark"
    >>> table.select("model", "fold", "n", "auc", "error")
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
    >>> one_machine = pr.evaluate(pr.scan_logs(path)).sort("model", "fold").collect()
    >>> table.equals(one_machine)
    True
    """
    options = EvaluateOptions.of(
        by=by, threshold=threshold, weight=weight, collapse_ties=collapse_ties, **columns
    )
    names = options.columns
    if engine not in ("ray", "spark", "polars"):
        msg = f"engine must be 'ray', 'spark' or 'polars' (this machine), got {engine!r}"
        raise ValueError(msg)
    if max_group_rows is not None:
        max_group_rows = positive_rows(max_group_rows, name="max_group_rows")
        if weight is not None:
            msg = "max_group_rows computes unweighted counts; leave weight=None or drop it"
            raise ValueError(msg)
    if partitions is not None:
        partitions = positive_rows(partitions, name="partitions")
    paths = _paths(source)
    if paths is not None:  # the one-machine errors, before an engine starts
        _table_schema(scan_logs(paths).collect_schema(), options, table)
    runner = make_engine(engine, partitions)
    src = _Source(runner, source)
    schema = src.schema
    keys, table, out = _table_schema(schema, options, table)
    if max_group_rows is not None and not _is_default(table):
        msg = "max_group_rows computes pr.evaluate's table; leave table=None to use it"
        raise ValueError(msg)
    data = src.data
    if is_engine_data(source) or not src.hive or not set(src.hive) <= set(keys):
        data = runner.map_batches(data, lambda f: conform(f, schema), schema)
    if max_group_rows is None:
        return _per_group(runner, src, data, keys, table, out).sort(keys, nulls_last=True)
    sizes = _group_sizes(runner, src.data, keys, schema)
    big = (
        sizes.filter(pl.col(_N) > max_group_rows)
        .sort(keys, nulls_last=True)
        .with_row_index(big_groups.GID)
        .cast({big_groups.GID: pl.Int64()})
    )
    parts = []
    if big.height < sizes.height:
        small = runner.map_batches(src.data, _without(big, keys, schema), schema)
        parts.append(_per_group(runner, src, small, keys, table, out))
    if big.height:
        whole = _big_table(runner, src, big, keys, names, threshold, max_group_rows)
        parts.append(conform(with_auc_ci(whole.lazy()).collect(), out))
    if not parts:
        return _per_group(runner, src, data, keys, table, out)
    return pl.concat(parts).sort(keys, nulls_last=True)
