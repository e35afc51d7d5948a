"""Memory by default for the per-group tables besides ``evaluate`` (issue 26).

``pr.multiclass_auc``, ``pr.pairwise_auc``, ``pr.proportion_correct``, ``pr.roc_curve``,
``pr.pooled_roc``, ``pr.average_roc`` and ``pr.pooling_table`` take ``max_rows`` with
``pr.evaluate``'s meaning, through the one ``_batches.bounded_plan``. The oracle is each
table's own unbounded plan (``max_rows=None``, one query over the whole log), itself
checked against scikit-learn, brute force and the papers in ``tests/metrics/``: the
default over a scan of Parquet files (a plain file and hive folders) must equal it in
lazy and streaming runs, and over a ``DataFrame`` (eager) it is that plan. The batches
are counted through ``_batches.select_groups``, one call per batch.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polaroc as pr
import polaroc.core.batches as batches
from polaroc.core.log import COLUMN_KEYWORDS
from tests.scale.test_options import RENAMED, binary, multiclass, repeated, with_weight

TOL = 1e-12
Table = Callable[..., pl.LazyFrame]


def with_nan(log: pl.DataFrame, score: str = "score") -> pl.DataFrame:
    """``log`` with a NaN score in one row of its first group (NaN stays per group)."""
    return log.with_columns(
        pl.when(pl.int_range(pl.len()) == 3).then(float("nan")).otherwise(score).alias(score)
    )


def with_datasets(rng: np.random.Generator) -> pl.DataFrame:
    return pl.concat(
        [binary(rng, 300).with_columns(dataset=pl.lit(d)) for d in ("d1", "d2")]
    ).select("dataset", pl.exclude("dataset"))


# log, options of every table, column the hive folders are partitioned by
LOGS: dict[str, Callable[[np.random.Generator], tuple[pl.DataFrame, dict[str, Any], str]]] = {
    "binary": lambda rng: (binary(rng), {}, "model"),
    "binary, renamed": lambda rng: (binary(rng).rename(RENAMED), dict(RENAMED), "clf"),
    "multiclass": lambda rng: (with_nan(multiclass(rng)), {}, "model"),
    "weighted": lambda rng: (with_weight(rng, multiclass(rng)), {"weight": "w"}, "model"),
    "repeated": lambda rng: (repeated(rng), {}, "repeat"),
    "data sets": lambda rng: (with_datasets(rng), {}, "dataset"),
}

# the table functions (by the public function they call)
TABLES: dict[str, Table] = {
    "multiclass_auc": pr.multiclass_auc,
    "pairwise_auc": pr.pairwise_auc,
    "proportion_correct": pr.proportion_correct,
    "roc_curve": pr.roc_curve,
    "roc_curve on a grid": lambda log, **kw: pr.roc_curve(
        log, thresholds=[-0.5, 0.0, 0.3, 0.5], drop_intermediate=True, **kw
    ),
    "pooled_roc": pr.pooled_roc,
    "pooling_table": pr.pooling_table,
    "average_roc": lambda log, **kw: pr.average_roc(log, grid=11, **kw),
    "average_roc, threshold": lambda log, **kw: pr.average_roc(
        log, method="threshold", grid=7, **kw
    ),
}


def options_for(table: str, options: dict[str, Any]) -> dict[str, Any] | None:
    """The ``options`` ``table`` takes; ``None`` when it takes no weight."""
    accepts = set(inspect.signature(getattr(pr, table.split(" ")[0].rstrip(","))).parameters)
    if "columns" in accepts:  # **columns: the log's column names by keyword
        accepts |= set(COLUMN_KEYWORDS)
    if "weight" in options and "weight" not in accepts:
        return None
    return {k: v for k, v in options.items() if k in accepts}


def sorted_rows(table: pl.DataFrame) -> pl.DataFrame:
    """Rows in one order: by every column (keys, then the point's columns)."""
    return table.sort(table.columns, nulls_last=True)


def assert_same(got: pl.DataFrame, want: pl.DataFrame) -> None:
    assert_frame_equal(sorted_rows(got), sorted_rows(want), abs_tol=TOL, rel_tol=0)


def write(log: pl.DataFrame, tmp_path: Path, layout: str, partition: str) -> Path:
    if layout == "file":
        path = tmp_path / "log.parquet"
        log.write_parquet(path)
        return path
    folder = tmp_path / "log"
    log.write_parquet(folder, partition_by=partition)
    return folder


def read(path: Path) -> pl.DataFrame:
    return pl.read_parquet(path, hive_partitioning=path.is_dir())


def scan(path: Path) -> pl.LazyFrame:
    return pl.scan_parquet(path, hive_partitioning=path.is_dir())


@pytest.fixture
def small_budget(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Make ``"auto"`` cut even a small log into batches of about 200 rows; count them."""
    calls: list[int] = []
    select = batches.select_groups

    def counted(frame: pl.LazyFrame, keys: pl.DataFrame) -> pl.LazyFrame:
        calls.append(keys.height)
        return select(frame, keys)

    monkeypatch.setattr(batches, "select_groups", counted)
    monkeypatch.setattr(batches, "auto_rows", lambda rows, s, a: 200)
    return calls


# ------------------------------------------------------------------ equal tables


# every (table, log) pair but a weighted log for a table that takes no weight
CASES = [
    (table, case)
    for table in TABLES
    for case in LOGS
    if case != "weighted" or options_for(table, {"weight": "w"}) is not None
]


@pytest.mark.parametrize("layout", ["file", "hive"])
@pytest.mark.parametrize(("table", "log_case"), CASES)
def test_the_default_bounded_plan_equals_the_unbounded_table(
    table, log_case, layout, mode, tmp_path, small_budget
):
    log, options, partition = LOGS[log_case](np.random.default_rng(26))
    kw = options_for(table, options)
    assert kw is not None
    path = write(log, tmp_path, layout, partition)
    function = TABLES[table]
    plain = function(read(path), **kw, max_rows=None).collect(engine="in-memory")
    assert plain.height > 0
    if mode == "eager":  # a DataFrame: the plain plan, no batches
        got = function(read(path), **kw).collect()
        assert small_budget == []
    else:
        got = function(scan(path), **kw).collect(engine=mode)
        assert len(small_budget) > 1  # the default over a scan ran batches
    assert_same(got, plain)


@pytest.mark.parametrize("table", ["multiclass_auc", "proportion_correct", "pooled_roc"])
def test_an_explicit_budget_bounds_an_in_memory_log_too(table, run, small_budget):
    log = LOGS["multiclass"](np.random.default_rng(27))[0]
    function = TABLES[table]
    plain = function(log, max_rows=None).collect()
    got = run(log, lambda frame: function(frame, max_rows=np.int64(300)))
    assert len(small_budget) > 1
    assert_same(got, plain)


# ------------------------------------------------------------------ when it batches


def test_the_default_over_a_scan_produces_one_read_per_planned_batch(tmp_path, small_budget):
    log = multiclass(np.random.default_rng(28))
    path = write(log, tmp_path, "file", "model")
    table = pr.multiclass_auc(scan(path))
    assert "polaroc batches" in table.explain()
    assert small_budget == []  # nothing runs before the table is collected
    got = table.collect()
    planned = pr.plan_batches(log, max_rows=200).collect()
    assert len(small_budget) == planned["batch"].n_unique()  # one filtered read per batch
    assert sum(small_budget) == planned.height == got.height  # every (model, fold) once


def test_the_combined_curves_batch_whole_models(tmp_path, small_budget):
    log = binary(np.random.default_rng(29))
    path = write(log, tmp_path, "hive", "model")
    pr.pooled_roc(scan(path)).collect()
    assert small_budget == [1] * log["model"].n_unique()  # each model (>200 rows) its own batch
    small_budget.clear()
    pr.average_roc(scan(path)).collect()
    assert small_budget == [1] * log["model"].n_unique()


def test_the_default_leaves_memory_cached_and_one_group_plans_alone(tmp_path, small_budget):
    log = multiclass(np.random.default_rng(30))
    path = write(log, tmp_path, "file", "model")
    for function in TABLES.values():
        for source in (log, log.lazy(), scan(path).cache()):
            plan = function(source)
            assert "polaroc batches" not in plan.explain()
        assert "polaroc batches" not in function(scan(path), max_rows=None).explain()
        assert "polaroc batches" not in function(scan(path), by=()).explain()
    assert small_budget == []


def test_a_table_run_on_a_batch_does_not_cut_it_again(tmp_path, small_budget):
    # evaluate_in_batches hands each batch (a filtered scan) to the table: its default
    # "auto" must not plan batches of the batch
    log = multiclass(np.random.default_rng(31))
    path = write(log, tmp_path, "hive", "model")
    got = pr.evaluate_in_batches(scan(path), pr.multiclass_auc, max_rows=400)
    planned = pr.plan_batches(log, max_rows=400).collect()
    assert len(small_budget) == planned["batch"].n_unique()
    assert_same(got, pr.multiclass_auc(log).collect())


def test_a_bad_budget_or_log_fails_when_the_table_is_built(tmp_path):
    log = multiclass(np.random.default_rng(32))
    path = write(log, tmp_path, "file", "model")
    for function in TABLES.values():
        with pytest.raises(ValueError, match="max_rows must be a positive integer"):
            function(scan(path), max_rows=0)
        with pytest.raises(ValueError, match="nope"):
            function(scan(path), model="nope")


@pytest.mark.parametrize("engine", ["in-memory", "streaming"])
def test_the_batches_keep_each_table_in_its_order(engine, tmp_path, small_budget):
    # a curve's points stay in curve order; the combined tables stay sorted by group
    log = binary(np.random.default_rng(33), 3000)
    path = write(log, tmp_path, "file", "model")
    points = pr.roc_curve(scan(path)).collect(engine=engine)
    assert len(small_budget) > 1
    runs = (
        points.with_row_index()
        .group_by("model", "fold")
        .agg(
            descending=(pl.col("threshold").diff().drop_nulls() < 0).all(),
            contiguous=(pl.col("index").diff().drop_nulls() == 1).all(),
        )
    )
    assert runs["descending"].all()
    assert runs["contiguous"].all()
    for function in (pr.average_roc, pr.pooling_table):
        got = function(scan(path)).collect(engine=engine)
        assert_frame_equal(got, function(log).collect(), abs_tol=TOL, rel_tol=0)
