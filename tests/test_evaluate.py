"""pr.evaluate: the per-fold table against the binary metrics, the multiclass oracles and Parquet."""

from __future__ import annotations

import math
import re

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal
from sklearn.metrics import accuracy_score, roc_auc_score

import polaroc as pr
from tests.metrics.test_multiclass import long_log, wide_scores
from tests.oracles import hand_till_m, hand_till_m_variance

SAMPLE_COLUMNS = ("sample", "class", "label", "score")

BY = ["model", "fold"]
COLUMNS = [
    "n",
    "n_classes",
    "auc",
    "sauc",
    "error",
    "average_precision",
    "auc_se_delong",
    "auc_se_hanley_mcneil",
    "auc_ci_low",
    "auc_ci_high",
    "n_null_score",
    "n_null_label",
    "brier",
    "log_loss",
    "n_not_probability",
]
DTYPES = [pl.Int64, pl.Int64, *[pl.Float64] * 8, pl.Int64, pl.Int64, *[pl.Float64] * 2, pl.Int64]


def binary_log(rng, groups: int = 6, n: int = 150, *, ties: bool = False) -> pl.DataFrame:
    g = np.repeat(np.arange(groups), n)
    label = rng.random(g.size) < 0.4
    score = 1 / (1 + np.exp(-(rng.normal(size=g.size) + label * rng.uniform(0, 2, groups)[g])))
    if ties:
        score = np.round(score, 1)
    return pl.DataFrame({"model": g // 3, "fold": g % 3, "score": score, "label": label})


def multiclass_log(rng, c: int = 4, groups: int = 4, n: int = 120):
    parts = {(g // 2, g % 2): wide_scores(rng, n, c) for g in range(groups)}
    return long_log(parts), parts


def binary_reference(df: pl.DataFrame, threshold: float = 0.5) -> pl.DataFrame:
    s, y = "score", "label"
    return df.group_by(BY).agg(
        pr.auc(s, y),
        pr.sauc(s, y),
        pr.error(s, y, threshold=threshold),
        pr.average_precision(s, y),
        pr.auc_se(s, y).alias("auc_se_delong"),
        pr.auc_se(s, y, method="hanley_mcneil").alias("auc_se_hanley_mcneil"),
    )


def assert_same(got: pl.DataFrame, expected: pl.DataFrame, columns, tol=1e-12):
    got, expected = got.sort(BY), expected.sort(BY)
    assert got.select(BY).equals(expected.select(BY))
    for name in columns:
        for a, b in zip(got[name], expected[name], strict=True):
            if b is None or a is None:
                assert (a, b) == (None, None), name
            else:
                assert a == pytest.approx(b, abs=tol, nan_ok=True), name


def test_columns_and_dtypes(rng):
    for log in (binary_log(rng), multiclass_log(rng)[0]):
        out = pr.evaluate(log)
        assert isinstance(out, pl.LazyFrame)
        schema = out.collect_schema()
        assert schema.names() == [*BY, *COLUMNS]
        assert list(schema.dtypes())[2:] == DTYPES
        assert out.collect().schema == schema


@pytest.mark.parametrize("ties", [False, True])
def test_binary_equals_the_binary_metrics(run, rng, ties):
    df = binary_log(rng, ties=ties)
    out = run(df, lambda f: pr.evaluate(f))
    assert_same(out, binary_reference(df), ["auc", "sauc", "error", *COLUMNS[5:8]])
    sizes = df.group_by(BY).len()
    assert_same(out, sizes.rename({"len": "n"}), ["n"])
    assert set(out["n_classes"]) == {2}


def test_binary_threshold_and_integer_labels(run, rng):
    df = binary_log(rng).with_columns(pl.col("label").cast(pl.Int8))
    out = run(df, lambda f: pr.evaluate(f, threshold=0.3))
    assert_same(out, binary_reference(df, threshold=0.3), ["auc", "error"])


def test_binary_log_with_a_class_column_equals_the_one_without(run, rng):
    df = binary_log(rng).with_row_index("sample")
    plain = run(df, lambda f: pr.evaluate(f))
    positive_only = run(df.with_columns(pl.lit(True).alias("class")), lambda f: pr.evaluate(f))
    assert_same(positive_only, plain, COLUMNS)
    # both classes' rows with complementary scores: the same AUC, SEs and error
    both = pl.concat(
        [
            df.with_columns(pl.lit(True).alias("class")),
            df.with_columns(pl.lit(False).alias("class"), (1 - pl.col("score")).alias("score")),
        ]
    )
    out = run(both, lambda f: pr.evaluate(f))
    assert_same(out, plain, ["n", "n_classes", "auc", "auc_se_delong", "auc_se_hanley_mcneil"])
    # argmax of (p, 1 - p) predicts the positive class iff p > 0.5 (p = 0.5 ties: ½)
    p, y = df["score"].to_numpy(), df["label"].to_numpy()
    expected = (np.where(p == 0.5, 0.5, (p > 0.5) == y)).astype(float)
    errors = df.with_columns(ok=pl.Series(expected)).group_by(BY).agg(error=1 - pl.col("ok").mean())
    assert_same(out, errors, ["error"])


def test_multiclass_against_oracles(run, rng):
    df, parts = multiclass_log(rng)
    out = run(df, lambda f: pr.evaluate(f)).sort(BY)
    for row in out.iter_rows(named=True):
        y, x = parts[(row["model"], row["fold"])]
        assert row["auc"] == pytest.approx(roc_auc_score(y, x, multi_class="ovo"), abs=1e-12)
        assert row["error"] == pytest.approx(1 - accuracy_score(y, x.argmax(axis=1)), abs=1e-12)
        assert row["n"] == len(y)
        assert row["n_classes"] == 4
        one = df.filter((pl.col("model") == row["model"]) & (pl.col("fold") == row["fold"]))
        _, var = hand_till_m_variance(*(one[c].to_list() for c in SAMPLE_COLUMNS))
        assert row["auc_se_delong"] == pytest.approx(math.sqrt(var), rel=1e-9)
        assert row["auc_se_hanley_mcneil"] is None
    mc = run(df, lambda f: pr.multiclass_auc(f))
    assert_same(out, mc, ["auc", "sauc", "n_classes"])


def test_multiclass_without_sample_column(run, rng):
    df, _ = multiclass_log(rng)
    out = run(df.drop("sample"), lambda f: pr.evaluate(f))
    assert out["error"].null_count() == out.height  # rows can't be tied to samples
    assert set(out["n"]) == {120}
    assert_same(out, run(df, lambda f: pr.evaluate(f)), ["auc", "sauc"])


def test_null_nan_and_degenerate_groups(run, rng):
    df = binary_log(rng, groups=6)
    score = (
        pl.when((pl.col("fold") == 0) & (pl.int_range(pl.len()).over(BY) < 4))
        .then(None)
        .when((pl.col("model") == 1) & (pl.col("fold") == 1) & (pl.col("score") > 0.9))
        .then(float("nan"))
        .otherwise(pl.col("score"))
    )
    label = pl.when(pl.col("fold") == 2).then(None).otherwise(pl.col("label"))
    df = df.with_columns(score.alias("score")).with_columns(
        pl.when((pl.col("model") == 1) & (pl.col("fold") == 2))
        .then(label)
        .otherwise(pl.col("label"))
        .alias("label")
    )
    df = df.with_columns(  # model 0, fold 2: positives only
        pl.when((pl.col("model") == 0) & (pl.col("fold") == 2))
        .then(True)
        .otherwise(pl.col("label"))
        .alias("label")
    )
    out = run(df, lambda f: pr.evaluate(f)).sort(BY)
    rows = {(r["model"], r["fold"]): r for r in out.iter_rows(named=True)}
    assert rows[(0, 0)]["n_null_score"] == 4
    assert rows[(0, 0)]["n"] == 146
    assert rows[(0, 0)]["auc"] == pytest.approx(
        df.filter(model=0, fold=0).select(pr.auc("score", "label")).item()
    )
    assert math.isnan(rows[(1, 1)]["auc"])
    assert math.isnan(rows[(1, 1)]["error"])
    assert rows[(1, 1)]["n"] == 150
    assert rows[(1, 2)]["n"] == 0  # every label null
    assert rows[(1, 2)]["n_null_label"] == 150
    assert rows[(1, 2)]["auc"] is None
    assert rows[(0, 2)]["n_classes"] == 1  # degenerate: positives only
    assert rows[(0, 2)]["auc"] is None
    assert rows[(0, 2)]["error"] is not None


def test_multiclass_nulls_and_nan(run, rng):
    df, _ = multiclass_log(rng)
    df = df.with_columns(
        pl.when((pl.col("fold") == 0) & (pl.col("sample") < 3))
        .then(None)
        .otherwise(pl.col("score"))
        .alias("score"),
        pl.when((pl.col("fold") == 1) & (pl.col("sample") == 7))
        .then(None)
        .otherwise(pl.col("label"))
        .alias("label"),
    ).with_columns(
        pl.when((pl.col("model") == 1) & (pl.col("fold") == 1) & (pl.col("sample") == 0))
        .then(float("nan"))
        .otherwise(pl.col("score"))
        .alias("score")
    )
    out = run(df, lambda f: pr.evaluate(f)).sort(BY)
    rows = {(r["model"], r["fold"]): r for r in out.iter_rows(named=True)}
    assert rows[(0, 0)]["n_null_score"] == 12
    assert rows[(0, 0)]["n"] == 117
    kept = df.filter(model=0, fold=0).drop_nulls("score")
    assert rows[(0, 0)]["auc"] == pytest.approx(
        hand_till_m(kept["class"], kept["label"], kept["score"]), abs=1e-12
    )
    assert rows[(0, 1)]["n_null_label"] == 4
    assert rows[(0, 1)]["n"] == 119
    assert math.isnan(rows[(1, 1)]["auc"])
    assert math.isnan(rows[(1, 1)]["error"])


def test_dataset_column_is_a_default_group(rng):
    df = pl.concat([binary_log(rng).with_columns(dataset=pl.lit(d)) for d in "ab"])
    out = pr.evaluate(df).collect()
    assert out.columns[:3] == ["dataset", *BY]
    assert out.height == 12


def test_errors_at_call_time(rng):
    df = binary_log(rng)
    with pytest.raises(ValueError, match="no column 'prob'"):
        pr.evaluate(df, score="prob")
    with pytest.raises(TypeError, match="numeric"):
        pr.evaluate(df.with_columns(pl.col("score").cast(pl.String)))
    with pytest.raises(TypeError, match="Boolean or an integer"):
        pr.evaluate(df.with_columns(pl.col("label").cast(pl.String)))


# ------------------------------------------------------------- one lazy plan


@pytest.fixture(scope="module")
def parquet_logs(tmp_path_factory):
    rng = np.random.default_rng(5)
    folder = tmp_path_factory.mktemp("evaluate")
    binary = binary_log(rng)
    for (model, fold), part in binary.partition_by(BY, as_dict=True).items():
        part.write_parquet(folder / f"binary-{model}-{fold}.parquet")
    multi, _ = multiclass_log(rng)
    multi.write_parquet(folder / "hive", partition_by="model")
    return folder, binary, multi


@pytest.mark.parametrize("engine", ["in-memory", "streaming"])
def test_scan_parquet_over_many_files(parquet_logs, engine):
    folder, binary, multi = parquet_logs
    scans = {
        "binary": (pl.scan_parquet(folder / "binary-*.parquet"), binary),
        "hive": (pl.scan_parquet(folder / "hive", hive_partitioning=True), multi),
    }
    for scan, df in scans.values():
        scan = scan.with_columns(pl.col("model").cast(df.schema["model"]))
        got = pr.evaluate(scan).collect(engine=engine)
        assert_same(got, pr.evaluate(df).collect(), COLUMNS)


def test_tables_built_on_evaluate_share_its_scan(parquet_logs):
    folder = parquet_logs[0]
    table = pr.evaluate(pl.scan_parquet(folder / "binary-*.parquet"))
    plans = [table, pr.paired_ttest(table, "auc"), pr.anova(table, "auc")]
    # one read of the log: the Parquet scan, or the batches that bound it by default
    assert len(re.findall(r"Parquet SCAN|polaroc batches\] SCAN", pl.explain_all(plans))) == 1
    ttest = pl.collect_all(plans)[1]
    assert ttest.height == 1  # models 0 and 1


@pytest.mark.parametrize("kind", ["binary", "multiclass"])
def test_collect_all_reads_the_log_once(parquet_logs, kind):
    folder, binary, multi = parquet_logs
    if kind == "binary":
        scan, df = pl.scan_parquet(folder / "binary-*.parquet"), binary
    else:
        scan, df = pl.scan_parquet(folder / "hive", hive_partitioning=True), multi
        scan = scan.with_columns(pl.col("model").cast(df.schema["model"]))
    log = scan.cache()
    table = pr.evaluate(log)
    plans = [table, pr.paired_ttest(table, "auc"), pr.anova(table, "auc"), pr.pairwise_auc(log)]
    assert len(re.findall(r"Parquet SCAN", pl.explain_all(plans))) == 1
    results = pl.collect_all(plans)
    assert_same(results[0], pr.evaluate(df).collect(), COLUMNS)
    assert results[3].height == pr.pairwise_auc(df).collect().height


def test_evaluate_alone_reads_a_multiclass_scan_once(parquet_logs):
    folder, _, _ = parquet_logs
    scan = pl.scan_parquet(folder / "hive", hive_partitioning=True)
    plan = pr.evaluate(scan, max_rows=None)  # the plain plan (by default a scan is batched)
    assert len(re.findall(r"Parquet SCAN", plan.explain())) == 1


# ------------------------------------------------------------ property tests


@st.composite
def small_binary_logs(draw):
    n = draw(st.integers(1, 30))
    values = st.one_of(st.integers(-3, 3).map(float), st.none(), st.just(float("inf")))
    return pl.DataFrame(
        {
            "model": [draw(st.integers(0, 2)) for _ in range(n)],
            "fold": 0,
            "score": [draw(values) for _ in range(n)],
            "label": [draw(st.booleans()) for _ in range(n)],
        },
        schema_overrides={"score": pl.Float64},
    )


@settings(max_examples=60)
@given(small_binary_logs())
def test_binary_evaluate_equals_binary_metrics_on_small_tied_logs(df):
    got = pr.evaluate(df).collect()
    expected = binary_reference(df)
    assert_same(got, expected, ["auc", "error", "auc_se_delong", "auc_se_hanley_mcneil"])
    finite = df.filter(pl.col("score").is_finite() | pl.col("score").is_null())
    if finite.height == df.height:  # sAUC with an infinite score is inf or NaN
        assert_same(got, expected, ["sauc"])


# ------------------------------------------------------------- bounded memory


def _sorted(df: pl.DataFrame) -> pl.DataFrame:
    keys = [c for c in ("dataset", "model", "repeat", "fold") if c in df.columns]
    return df.sort(keys, nulls_last=True)


@pytest.mark.parametrize("max_rows", [1, 40, 10**9])
def test_max_rows_gives_the_same_table_a_batch_at_a_time(max_rows, run):
    # issue 17: evaluate bounds its own memory when asked; the numbers never change
    rng = np.random.default_rng(3)
    n = 600
    log = pl.DataFrame(
        {
            "dataset": rng.choice(["d1", "d2"], n),
            "model": rng.choice(["a", "b", "c"], n),
            "repeat": rng.integers(0, 2, n),
            "fold": rng.integers(0, 3, n),
            "sample": np.arange(n),
            "score": rng.normal(size=n).round(1),
            "label": rng.random(n) < 0.4,
        }
    )
    whole = pr.evaluate(log).collect()
    bounded = run(log, lambda lf: pr.evaluate(lf, max_rows=max_rows))
    assert_frame_equal(_sorted(whole), _sorted(bounded))


def test_max_rows_on_a_multiclass_log_chains_like_any_plan(run):
    rng = np.random.default_rng(4)
    parts = {(m, f): wide_scores(rng, 30, 3) for m in ("a", "b") for f in range(3)}
    log = long_log(parts).with_columns(pl.col("fold").cast(pl.Int64))
    whole = pr.evaluate(log).collect()
    bounded = pr.evaluate(log.lazy(), max_rows=100)
    assert_frame_equal(_sorted(whole), _sorted(bounded.collect()))
    tests, top = pl.collect_all([pr.paired_ttest(bounded), bounded.filter(pl.col("fold") == 0)])
    assert_frame_equal(tests.sort("model_a"), pr.paired_ttest(whole).collect().sort("model_a"))
    assert_frame_equal(_sorted(top), _sorted(whole.filter(pl.col("fold") == 0)))
    assert bounded.select("auc").head(2).collect().height == 2


def test_max_rows_must_be_a_positive_integer():
    log = pl.DataFrame({"model": ["a"], "fold": [0], "score": [0.1], "label": [True]})
    for bad in (0, -5, 2.5, True):
        with pytest.raises(ValueError, match="max_rows must be a positive integer"):
            pr.evaluate(log, max_rows=bad)
    one = pr.evaluate(log, by=(), max_rows=10).collect()  # one group: one batch
    assert one.height == 1
