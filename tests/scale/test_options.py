"""One options path and memory by default (issues 21, 22 item 3, 26).

* ``pr.evaluate``, ``pr.evaluate(max_rows=)``, ``pr.evaluate_in_batches`` and
  ``pr.distributed.evaluate`` (its one-machine ``"polars"`` engine; Ray and Spark in
  ``test_distributed.py``) take the same options and give the same table, 1e-12,
  against the plain one-query ``pr.evaluate`` (itself checked against brute force,
  scikit-learn and the papers in ``tests/test_evaluate.py``);
* ``max_rows="auto"`` (the default) bounds a scan of files and equals the plain table;
  it leaves in-memory frames and cached scans as they are;
* a query above the bounded table that needs none of its columns still counts its rows.
"""

from __future__ import annotations

import pickle

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polaroc as pr
import polaroc.core.batches as batches
from polaroc.evaluation.per_fold import EvaluateOptions
from polaroc.scale.batches import GroupedEvaluate
from tests.metrics.test_multiclass import long_log, wide_scores

TOL = 1e-12


def keys_of(table: pl.DataFrame) -> list[str]:
    names = ("dataset", "ds", "model", "clf", "repeat", "fold", "cv")
    return [c for c in table.columns if c in names]


def assert_same(got: pl.DataFrame, want: pl.DataFrame) -> None:
    keys = keys_of(want)
    assert_frame_equal(
        got.sort(keys, nulls_last=True),
        want.sort(keys, nulls_last=True),
        abs_tol=TOL,
        rel_tol=0,
    )


def binary(rng: np.random.Generator, n: int = 900) -> pl.DataFrame:
    """Binary log with sample ids, rounded (tied) scores, a null score and a one-class fold."""
    score = np.round(rng.normal(size=n), 1)
    frame = pl.DataFrame(
        {
            "model": rng.choice(["a", "b", "c"], n),
            "fold": rng.integers(0, 3, n),
            "score": score,
            "label": rng.random(n) < 1 / (1 + np.exp(-2 * score)),
        }
    ).with_columns(pl.int_range(pl.len()).over("model", "fold").alias("sample"))
    one_class = pl.DataFrame(
        {"model": "z", "fold": 0, "score": [0.2, 0.4], "label": True, "sample": [0, 1]}
    )
    frame = frame.with_columns(
        pl.when(pl.int_range(pl.len()) == 7).then(None).otherwise("score").alias("score")
    )
    return pl.concat([frame, one_class], how="vertical_relaxed")


def multiclass(rng: np.random.Generator) -> pl.DataFrame:
    parts = {(m, f): wide_scores(rng, 60, 3) for m in ("a", "b") for f in range(3)}
    return long_log(parts).with_columns(pl.col("fold").cast(pl.Int64), pl.col("score").round(2))


def with_weight(rng: np.random.Generator, log: pl.DataFrame) -> pl.DataFrame:
    # one weight per sample, the same on its class rows
    keys = ["model", "fold", "sample"]
    w = pl.col("sample").hash(seed=3).over(keys) % 5 * 0.5
    return log.with_columns(w.cast(pl.Float64).alias("w"))


def repeated(rng: np.random.Generator) -> pl.DataFrame:
    return pl.concat([binary(rng, 400).with_columns(repeat=pl.lit(r, pl.Int64)) for r in range(2)])


def with_datasets(rng: np.random.Generator) -> pl.DataFrame:
    return pl.concat(
        [multiclass(rng).with_columns(dataset=pl.lit(d)) for d in ("d1", "d2")]
    ).select("dataset", pl.exclude("dataset"))


RENAMED = {"model": "clf", "fold": "cv", "score": "prob", "label": "y", "sample": "id"}


def cases(rng: np.random.Generator) -> dict[str, tuple[pl.DataFrame, dict[str, object]]]:
    """Logs with the options they are evaluated with (column names renamed in one)."""
    return {
        "binary": (binary(rng), {"threshold": 0.3}),
        "binary, renamed": (binary(rng).rename(RENAMED), {**RENAMED, "threshold": 0.3}),
        "multiclass": (multiclass(rng), {"collapse_ties": True}),
        "weighted": (with_weight(rng, multiclass(rng)), {"weight": "w"}),
        "weighted binary": (with_weight(rng, binary(rng)), {"weight": "w", "threshold": 0.6}),
        "repeated": (repeated(rng), {"collapse_ties": False}),
        "data sets": (with_datasets(rng), {}),
    }


CASES = list(cases(np.random.default_rng(0)))


@pytest.mark.parametrize("case", CASES)
def test_the_four_entry_points_take_the_same_options_and_agree(case, tmp_path):
    log, options = cases(np.random.default_rng(0))[case]
    plain = pr.evaluate(log, **options, max_rows=None).collect()
    path = tmp_path / "log.parquet"
    log.write_parquet(path)
    scan = pl.scan_parquet(path)
    got = {
        "max_rows": pr.evaluate(scan, **options, max_rows=150).collect(),
        "default over a scan": pr.evaluate(scan, **options).collect(),
        "batches": pr.evaluate_in_batches(scan, **options, max_rows=150),
        "batches of a path": pr.evaluate_in_batches(str(path), **options, max_rows="auto"),
        "distributed": pr.distributed.evaluate(str(path), engine="polars", **options),
    }
    for name, table in got.items():
        assert table.columns == plain.columns, name
        assert_same(table, plain)
    if "weight" in options:  # the option reaches every table: weighted ≠ unweighted
        unweighted = {k: v for k, v in options.items() if k != "weight"}
        other = pr.evaluate_in_batches(scan, **unweighted, max_rows=150)
        assert not other.select("auc").equals(got["batches"].select("auc"))


def test_options_are_built_once_and_pickle():
    options = EvaluateOptions.of(by="model", threshold=0.2, weight="w", **RENAMED)
    assert options.by == ("model",)
    assert options.columns.model == "clf"
    assert options.columns.class_ == "class"  # names not given keep the contract's
    assert pickle.loads(pickle.dumps(options)) == options
    keywords = options.keywords()
    assert keywords["model"] == "clf"
    assert keywords["weight"] == "w"
    assert keywords["threshold"] == 0.2
    table = GroupedEvaluate(options.grouped(["clf", "cv"]))
    log = binary(np.random.default_rng(1)).rename(RENAMED)
    with_w = log.with_columns(w=pl.lit(1.0))
    again = pickle.loads(pickle.dumps(table))
    assert_same(again(with_w.lazy()).collect(), table(with_w.lazy()).collect())


def test_weight_with_big_groups_is_refused_by_name():
    log = pl.DataFrame({"model": ["a"], "fold": [0], "score": [0.1], "label": [True], "w": 1.0})
    with pytest.raises(ValueError, match=r"max_group_rows.*weight"):
        pr.distributed.evaluate(log, engine="polars", weight="w", max_group_rows=10)


# -------------------------------------------------------- NumPy integers (issue 22)


def test_numpy_integers_are_row_counts(tmp_path):
    log = binary(np.random.default_rng(2))
    plain = pr.evaluate(log).collect()
    n = np.int64(100)
    assert_same(pr.evaluate(log.lazy(), max_rows=n).collect(), plain)
    assert_same(pr.evaluate_in_batches(log, max_rows=np.int32(100)), plain)
    assert pr.plan_batches(log, max_rows=n).collect()["batch"].max() > 0
    path = tmp_path / "log.parquet"
    log.write_parquet(path)
    big = pr.distributed.evaluate(
        str(path), engine="polars", max_group_rows=np.int64(50), partitions=np.int64(2)
    )
    assert_same(big, plain)
    for bad in (0, -1, 2.5, True, np.float64(3.0), "10"):
        with pytest.raises(ValueError, match="max_rows must be a positive integer"):
            pr.evaluate(log, max_rows=bad)  # type: ignore[arg-type]  # what is refused
    with pytest.raises(ValueError, match="max_group_rows must be a positive integer"):
        pr.distributed.evaluate(str(path), engine="polars", max_group_rows=np.float64(5))


# ------------------------------------------- a query that needs none of the columns


QUERIES = {
    "row index": lambda t: t.with_row_index().select("index"),
    "int range": lambda t: t.select(pl.int_range(pl.len())),
    "len": lambda t: t.select(pl.len()),
    "a literal column": lambda t: t.with_columns(x=pl.lit(1)).select("x"),
}


@pytest.mark.parametrize("query", list(QUERIES))
@pytest.mark.parametrize("max_rows", [1, 200, "auto"])
def test_a_query_needing_no_column_still_gets_one_row_per_group(query, max_rows, mode, tmp_path):
    # issue 22 item 3: the batches' IO source asked for no column returned 0 rows
    log = binary(np.random.default_rng(3))
    groups = pr.evaluate(log).collect().height
    path = tmp_path / "log.parquet"
    log.write_parquet(path)
    source = pl.read_parquet(path) if mode == "eager" else pl.scan_parquet(path)
    table = pr.evaluate(source, max_rows=max_rows)  # type: ignore[arg-type]  # "auto" or a number
    out = QUERIES[query](table).collect(engine="in-memory" if mode == "eager" else mode)
    expected = 1 if query == "len" else groups
    assert out.height == expected
    if query == "len":
        assert out.item() == groups


# ------------------------------------------------------------------ memory by default


@pytest.fixture
def small_budget(monkeypatch):
    """Make ``"auto"`` cut even a small log into batches of about 200 rows, and count them."""
    calls: list[int] = []
    select = batches.select_groups

    def counted(frame: pl.LazyFrame, keys: pl.DataFrame) -> pl.LazyFrame:
        calls.append(keys.height)
        return select(frame, keys)

    monkeypatch.setattr(batches, "select_groups", counted)
    monkeypatch.setattr(batches, "_MIN_ROWS", 1)
    # b = (A/2) / (8·s) rows: A = 3,200·s bytes available gives 200-row batches
    monkeypatch.setattr(batches, "available_memory", lambda: 1)
    monkeypatch.setattr(batches, "auto_rows", lambda rows, s, a: 200)
    return calls


@pytest.mark.parametrize("case", CASES)
def test_the_default_bounded_plan_equals_the_unbounded_table(case, mode, tmp_path, small_budget):
    log, options = cases(np.random.default_rng(4))[case]
    plain = pr.evaluate(log, **options, max_rows=None).collect()
    path = tmp_path / "log.parquet"
    log.write_parquet(path)
    if mode == "eager":  # a DataFrame: the plain plan, no batches
        got = pr.evaluate(pl.read_parquet(path), **options).collect()
        assert small_budget == []
    else:
        got = pr.evaluate(pl.scan_parquet(path), **options).collect(engine=mode)
        assert len(small_budget) > 1  # the default over a scan ran batches
    assert_same(got, plain)


def test_the_default_over_a_parquet_scan_plans_batches(tmp_path, small_budget):
    log = binary(np.random.default_rng(5))
    log.write_parquet(tmp_path / "log.parquet")
    table = pr.evaluate(pl.scan_parquet(tmp_path / "log.parquet"))
    assert "polaroc batches" in table.explain()
    table.collect()
    sizes = pr.plan_batches(log, max_rows=200).collect()
    assert len(small_budget) == sizes["batch"].n_unique()  # one filtered read per batch
    assert sum(small_budget) == sizes.height  # every group once


def test_the_default_leaves_memory_and_cached_plans_alone(tmp_path, small_budget):
    log = binary(np.random.default_rng(6))
    log.write_parquet(tmp_path / "log.parquet")
    scan = pl.scan_parquet(tmp_path / "log.parquet")
    for source in (log, log.lazy(), log.lazy().filter(pl.col("fold") >= 0), scan.cache()):
        plan = pr.evaluate(source)
        assert "polaroc batches" not in plan.explain()
        plan.collect()
    assert small_budget == []
    assert "polaroc batches" not in pr.evaluate(scan, max_rows=None).explain()


def test_a_log_within_the_auto_budget_is_one_unfiltered_query(tmp_path, monkeypatch):
    calls: list[int] = []
    monkeypatch.setattr(batches, "select_groups", lambda f, k: calls.append(1) or f)
    log = binary(np.random.default_rng(7))
    log.write_parquet(tmp_path / "log.parquet")
    got = pr.evaluate(pl.scan_parquet(tmp_path / "log.parquet")).collect()
    assert calls == []  # 901 rows: far below 100,000, one query, no filter
    assert_same(got, pr.evaluate(log).collect())


def test_the_auto_rule():
    gib, fixed = 2**30, 80 * 2**20
    # two threads (the rule's thread term: test_auto_rule.py)
    # plenty of memory: the batch's peak (8 bytes of query per byte read) plus the fixed
    # cost of running queries within 1.5× the log (8 bytes a row × 10⁸ rows)
    assert batches.auto_rows(10**8, 8.0, 64 * gib, 2) == (15 * 10**8 * 8 // 10 - fixed) // 64
    # half the available memory binds first: (1 GiB / 2) / (8 · 8 B)
    assert batches.auto_rows(10**9, 8.0, gib, 2) == gib // 2 // 64
    # never below 100,000 rows (a small log: the fixed cost takes the whole budget)
    assert batches.auto_rows(10**5, 8.0, gib, 2) == 100_000
    assert batches.auto_rows(2 * 10**6, 23.0, 64 * gib, 2) == 100_000
    # unknown memory: the log's size alone
    assert batches.auto_rows(10**8, 8.0, None, 2) == (15 * 10**8 * 8 // 10 - fixed) // 64


def test_the_file_scan_detector(tmp_path):
    frame = pl.DataFrame({"a": [1, 2]})
    frame.write_parquet(tmp_path / "a.parquet")
    frame.write_csv(tmp_path / "a.csv")
    frame.write_ipc(tmp_path / "a.ipc")
    assert batches.scans_files(pl.scan_parquet(tmp_path / "a.parquet"))
    assert batches.scans_files(pl.scan_csv(tmp_path / "a.csv").filter(pl.col("a") > 1))
    assert batches.scans_files(pl.scan_ipc(tmp_path / "a.ipc").join(frame.lazy(), on="a"))
    assert not batches.scans_files(frame.lazy())
    assert not batches.scans_files(pl.scan_parquet(tmp_path / "a.parquet").cache())


def test_the_one_call_helper_bounds_any_per_group_table(tmp_path, small_budget):
    # what pr.evaluate, pr.multiclass_auc and the curves call: bounded_plan(log, plan, max_rows)
    log = multiclass(np.random.default_rng(8))
    log.write_parquet(tmp_path / "log.parquet")
    scan = pl.scan_parquet(tmp_path / "log.parquet")

    def plan(frame):
        return pr.multiclass_auc(frame, max_rows=None), ["model", "fold"]

    plain = pr.multiclass_auc(log).collect()
    assert_same(batches.bounded_plan(scan, plan, "auto").collect(), plain)
    assert len(small_budget) > 1
    assert_same(batches.bounded_plan(log, plan, 100).collect(), plain)
    assert "polaroc batches" not in batches.bounded_plan(log, plan, "auto").explain()
