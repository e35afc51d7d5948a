"""The few engine operations ``pr.distributed`` needs, on Ray Data, PySpark and Polars.

Every step of the distributed plan is a Polars function from a partition (a
``DataFrame``) to a ``DataFrame``; an engine only moves data: it reads Parquet,
applies a function to each partition (``map_batches``), brings the rows of equal
keys together and applies a function to each such group (``map_groups``), and
collects small results. ``Local`` does the same with Polars on this machine (its
partitions are slices of a frame): the reference the engines are tested against
and a way to exercise the big-group plan quickly.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

import polars as pl
import pyarrow as pa  # type: ignore[import-untyped]  # pyarrow ships no type stubs

Fn = Callable[[pl.DataFrame], pl.DataFrame]
FilesFn = Callable[[list[str]], pl.DataFrame]

EXTRAS = {"ray": "ray", "spark": "spark"}


class Engine(Protocol):
    """What the distributed plan asks of an engine."""

    def read(self, paths: list[str], root: str | None, reader: FilesFn, out: pl.Schema) -> Any: ...
    def schema(self, data: Any) -> pl.Schema: ...
    def map_batches(self, data: Any, fn: Fn, out: pl.Schema) -> Any: ...
    def map_groups(self, data: Any, keys: list[str], fn: Fn, out: pl.Schema) -> Any: ...
    def per_file_group(self, groups: list[list[str]], fn: FilesFn, out: pl.Schema) -> Any: ...
    def sample(self, data: Any, fraction: float) -> Any: ...
    def persist(self, data: Any) -> Any: ...
    def collect(self, data: Any, out: pl.Schema) -> pl.DataFrame: ...


def missing_engine(engine: str, error: ImportError) -> ImportError:
    """A one-line ``ImportError`` naming the extra to install."""
    name = {"ray": "Ray (ray[data])", "spark": "PySpark"}[engine]
    msg = f"engine={engine!r} needs {name}: pip install 'polaroc[{EXTRAS[engine]}]' ({error})"
    return ImportError(msg)


def frame_of(table: pa.Table | pa.RecordBatch) -> pl.DataFrame:
    """An Arrow table or batch as a Polars ``DataFrame`` (never a ``Series``)."""
    result = pl.from_arrow(table)
    assert isinstance(result, pl.DataFrame)  # a table always converts to a frame
    return result


def conform(frame: pl.DataFrame, out: pl.Schema) -> pl.DataFrame:
    """``frame`` with exactly the columns and dtypes of ``out``."""
    return frame.select([pl.col(name).cast(dtype) for name, dtype in out.items()])


def empty(out: pl.Schema) -> pl.DataFrame:
    return pl.DataFrame(schema=out)


# ----------------------------------------------------------------------- Polars


class Local:
    """Partitions of one machine: a list of ``DataFrame`` slices (tests, debugging)."""

    def __init__(self, partitions: int = 4) -> None:
        self.partitions = partitions

    def _split(self, frame: pl.DataFrame) -> list[pl.DataFrame]:
        size = max(1, -(-frame.height // self.partitions))
        return [frame.slice(i, size) for i in range(0, max(frame.height, 1), size)]

    def read(
        self, paths: list[str], root: str | None, reader: FilesFn, out: pl.Schema
    ) -> list[pl.DataFrame]:
        return self._split(reader(paths))

    def schema(self, data: list[pl.DataFrame]) -> pl.Schema:
        return data[0].schema

    def map_batches(self, data: list[pl.DataFrame], fn: Fn, out: pl.Schema) -> list[pl.DataFrame]:
        return [conform(fn(part), out) for part in data]

    def map_groups(
        self, data: list[pl.DataFrame], keys: list[str], fn: Fn, out: pl.Schema
    ) -> list[pl.DataFrame]:
        whole = pl.concat(data, how="vertical_relaxed")
        return [conform(fn(g), out) for g in whole.partition_by(keys, maintain_order=True)]

    def per_file_group(
        self, groups: list[list[str]], fn: FilesFn, out: pl.Schema
    ) -> list[pl.DataFrame]:
        return [conform(fn(files), out) for files in groups]

    def sample(self, data: list[pl.DataFrame], fraction: float) -> list[pl.DataFrame]:
        return [part.sample(fraction=fraction, seed=0) for part in data]

    def persist(self, data: list[pl.DataFrame]) -> list[pl.DataFrame]:
        return data

    def collect(self, data: list[pl.DataFrame], out: pl.Schema) -> pl.DataFrame:
        parts = [conform(part, out) for part in data if part.height]
        return pl.concat(parts) if parts else empty(out)


# -------------------------------------------------------------------------- Ray


def _arrow_fn(fn: Fn, out: pl.Schema) -> Callable[[pa.Table], pa.Table]:
    def apply(table: pa.Table) -> pa.Table:
        return conform(fn(frame_of(table)), out).to_arrow()

    return apply


class Ray:
    """Ray Data: the running Ray session (``ray.init(address=...)``) or a local one."""

    def __init__(self, partitions: int | None = None) -> None:
        try:
            import ray
            import ray.data
        except ImportError as error:
            raise missing_engine("ray", error) from None
        self.ray = ray
        if not ray.is_initialized():
            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
            context = ray.data.DataContext.get_current()
            context.enable_progress_bars = False
            # on one machine a sort shuffle starts no aggregator actors: ~2.5x faster here
            context.shuffle_strategy = ray.data.context.ShuffleStrategy.SORT_SHUFFLE_PULL_BASED
        resources = ray.cluster_resources()  # type: ignore[no-untyped-call]  # unannotated in ray
        cpus = int(resources.get("CPU", 2))
        self.partitions = partitions or max(2, cpus)

    def read(self, paths: list[str], root: str | None, reader: FilesFn, out: pl.Schema) -> Any:
        # Each file read by Polars in a task: the log's dtypes (Ray's reader makes hive keys
        # strings), and no listing of the paths by Ray's threads (which race on importing
        # fsspec's HTTP support where aiohttp is missing).
        return self.per_file_group([[p] for p in paths], reader, out)

    def schema(self, data: Any) -> pl.Schema:
        return frame_of(data.schema().base_schema.empty_table()).schema

    def map_batches(self, data: Any, fn: Fn, out: pl.Schema) -> Any:
        return data.map_batches(_arrow_fn(fn, out), batch_format="pyarrow", batch_size=None)

    def map_groups(self, data: Any, keys: list[str], fn: Fn, out: pl.Schema) -> Any:
        grouped = data.groupby(keys, num_partitions=self.partitions)
        return grouped.map_groups(_arrow_fn(fn, out), batch_format="pyarrow")

    def per_file_group(self, groups: list[list[str]], fn: FilesFn, out: pl.Schema) -> Any:
        def apply(batch: pa.Table) -> pa.Table:
            ids = batch.column("_pr_files").to_pylist()
            parts = [conform(fn(groups[i]), out) for i in ids]
            return pl.concat(parts).to_arrow() if parts else empty(out).to_arrow()

        items = self.ray.data.range(len(groups)).rename_columns({"id": "_pr_files"})
        items = items.repartition(min(len(groups), 4 * self.partitions))
        return items.map_batches(apply, batch_format="pyarrow", batch_size=1)

    def sample(self, data: Any, fraction: float) -> Any:
        return data.random_sample(fraction, seed=0)

    def persist(self, data: Any) -> Any:
        return data.materialize()

    def collect(self, data: Any, out: pl.Schema) -> pl.DataFrame:
        tables = self.ray.get(data.to_arrow_refs())
        parts = [conform(frame_of(t), out) for t in tables if t.num_rows]
        return pl.concat(parts) if parts else empty(out)


# ------------------------------------------------------------------------ Spark


class Spark:
    """PySpark: the active ``SparkSession`` or a ``local[2]`` one."""

    def __init__(self, partitions: int | None = None) -> None:
        try:
            from pyspark.sql import SparkSession
            from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema
        except ImportError as error:
            raise missing_engine("spark", error) from None
        self._from_arrow, self._to_arrow = from_arrow_schema, to_arrow_schema
        session = SparkSession.getActiveSession()
        if session is None:
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
            os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
            session = (
                SparkSession.builder.master("local[2]")
                .config("spark.ui.enabled", "false")
                .config("spark.ui.showConsoleProgress", "false")
                .config("spark.sql.shuffle.partitions", "4")
                .getOrCreate()
            )
            session.sparkContext.setLogLevel("ERROR")
        self.spark = session
        self.partitions = partitions or max(2, session.sparkContext.defaultParallelism)

    def _types(self, out: pl.Schema) -> tuple[Any, pa.Schema]:
        spark_schema = self._from_arrow(empty(out).to_arrow().schema)
        return spark_schema, self._to_arrow(spark_schema)

    def read(self, paths: list[str], root: str | None, reader: FilesFn, out: pl.Schema) -> Any:
        spark = self.spark.read if root is None else self.spark.read.option("basePath", root)
        return spark.parquet(*paths)

    def schema(self, data: Any) -> pl.Schema:
        return frame_of(data.limit(0).toArrow()).schema

    def map_batches(self, data: Any, fn: Fn, out: pl.Schema) -> Any:
        spark_schema, arrow = self._types(out)

        def apply(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            frames = [frame_of(b) for b in batches]
            if frames:
                result = conform(fn(pl.concat(frames, how="vertical_relaxed")), out)
                yield from result.to_arrow().cast(arrow).to_batches()

        return data.mapInArrow(apply, spark_schema)

    def map_groups(self, data: Any, keys: list[str], fn: Fn, out: pl.Schema) -> Any:
        spark_schema, arrow = self._types(out)

        def apply(table: pa.Table) -> pa.Table:
            return conform(fn(frame_of(table)), out).to_arrow().cast(arrow)

        return data.groupBy(*keys).applyInArrow(apply, spark_schema)

    def per_file_group(self, groups: list[list[str]], fn: FilesFn, out: pl.Schema) -> Any:
        spark_schema, arrow = self._types(out)

        def apply(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            for batch in batches:
                for i in batch.column("_pr_files").to_pylist():
                    result = conform(fn(groups[i]), out)
                    yield from result.to_arrow().cast(arrow).to_batches()

        n = len(groups)
        items = self.spark.range(n).withColumnRenamed("id", "_pr_files")
        items = items.repartition(min(n, 4 * self.partitions))
        return items.mapInArrow(apply, spark_schema)

    def sample(self, data: Any, fraction: float) -> Any:
        return data.sample(fraction=fraction, seed=0)

    def persist(self, data: Any) -> Any:
        return data.persist()

    def collect(self, data: Any, out: pl.Schema) -> pl.DataFrame:
        table = data.toArrow()
        return conform(frame_of(table), out) if table.num_rows else empty(out)


def make_engine(engine: str, partitions: int | None = None) -> Engine:
    """The adapter for ``engine`` (``"ray"``, ``"spark"`` or ``"polars"``)."""
    if engine == "ray":
        return Ray(partitions)
    if engine == "spark":
        return Spark(partitions)
    if engine == "polars":
        return Local(partitions or 4)
    msg = f"engine must be 'ray' or 'spark', got {engine!r}"
    raise ValueError(msg)


def is_engine_data(source: object) -> bool:
    """Whether ``source`` is a Ray ``Dataset`` or a Spark ``DataFrame`` (no import)."""
    module = type(source).__module__
    return module.startswith(("ray.data", "pyspark.sql"))


def file_groups(files: Sequence[str]) -> list[list[str]]:
    """The files of each leaf folder (a hive partition), in order."""
    by_folder: dict[str, list[str]] = {}
    for f in files:
        by_folder.setdefault(os.path.dirname(f), []).append(f)
    return list(by_folder.values())
