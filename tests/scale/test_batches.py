"""The fast and the out-of-core paths against the plain ones (nothing here is timed).

* the rank kernel behind ``pr.auc``/``gini``/Hanley–McNeil (one sort of the group's
  (score, label) pairs, ranks flagged as sorted) on heavy ties and awkward rows;
* ``evaluate(collapse_ties=True)``, which counts tied rows before ordering them,
  against the row-by-row plan, and the rule that switches it on;
* the streaming engine on Parquet scans against in-memory frames;
* ``plan_batches``/``evaluate_in_batches`` against one query over the whole log.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polaroc as pr
from polaroc.core.counts import heavily_tied
from polaroc.core.formulas import hanley_mcneil_se
from polaroc.evaluation.per_fold import _heavily_tied
from tests.metrics.test_multiclass import long_log, wide_scores

BY = ["model", "fold"]
TABLE = ["n", "n_classes", "auc", "sauc", "error", "auc_se_delong", "auc_se_hanley_mcneil"]


def pair_auc(scores, positive) -> float:
    """P(x > y) + ½ P(x = y) over all (positive, negative) pairs, by comparisons (±inf safe)."""
    s, p = np.asarray(scores, dtype=float), np.asarray(positive, dtype=bool)
    x, y = s[p][:, None], s[~p][None, :]
    return float(((x > y) + 0.5 * (x == y)).mean())


def tied_log(rng, groups: int = 8, n: int = 200, values: int = 5) -> pl.DataFrame:
    g = np.repeat(np.arange(groups), n)
    label = rng.random(g.size) < rng.uniform(0.1, 0.9, groups)[g]
    score = np.floor(rng.uniform(0, values, g.size) + label * rng.uniform(0, 2, groups)[g])
    return pl.DataFrame({"model": g // 4, "fold": g % 4, "score": score, "label": label})


def awkward(df: pl.DataFrame) -> pl.DataFrame:
    """Null scores, null labels (some with a NaN score), a NaN group and an inf score."""
    i = pl.int_range(pl.len())
    score = (
        pl.when(i % 53 == 0)
        .then(None)
        .when((i % 71 == 0) | ((pl.col("model") == 1) & (pl.col("fold") == 3) & (i % 97 == 0)))
        .then(float("nan"))
        .when(i % 89 == 0)
        .then(float("inf"))
        .otherwise(pl.col("score"))
    )
    label = pl.when(i % 71 == 0).then(None).when(i % 61 == 0).then(None).otherwise(pl.col("label"))
    return df.with_columns(score.alias("score"), label.alias("label"))


def sorted_table(df: pl.DataFrame) -> pl.DataFrame:
    return df.sort(BY, nulls_last=True)


# ------------------------------------------------------------------ the rank kernel


def test_rank_kernel_on_heavy_ties_equals_the_pair_count(run, rng):
    df = tied_log(rng)
    out = run(df, lambda f: f.group_by(BY).agg(pr.auc("score", "label"), pr.gini("score", "label")))
    for row in out.iter_rows(named=True):
        part = df.filter(model=row["model"], fold=row["fold"])
        expected = pair_auc(part["score"], part["label"])
        assert row["auc"] == pytest.approx(expected, abs=1e-12)
        assert row["gini"] == pytest.approx(2 * expected - 1, abs=1e-12)


def test_rank_kernel_ignores_rows_with_a_null_and_keeps_the_nan_policy(run, rng):
    df = awkward(tied_log(rng))
    exprs = [
        pr.auc("score", "label"),
        pr.auc_se("score", "label", method="hanley_mcneil").alias("hm"),
    ]
    out = sorted_table(run(df, lambda f: f.group_by(BY).agg(*exprs)))
    for row in out.iter_rows(named=True):
        part = df.filter(model=row["model"], fold=row["fold"]).drop_nulls(["score", "label"])
        if part["score"].is_nan().any():  # a NaN among the usable rows only
            assert math.isnan(row["auc"])
            assert math.isnan(row["hm"])
        else:
            assert row["auc"] == pytest.approx(pair_auc(part["score"], part["label"]), abs=1e-12)
    # a NaN score whose label is null is not a usable row: that group stays finite
    assert any(not math.isnan(a) for a in out["auc"])


def test_rank_kernel_in_select_and_over(run, rng):
    df = tied_log(rng, groups=3)
    whole = run(df, lambda f: f.select(pr.auc("score", "label")))
    assert whole.item() == pytest.approx(pair_auc(df["score"], df["label"]), abs=1e-12)
    over = run(df, lambda f: f.select(*BY, pr.auc("score", "label").over(BY))).unique()
    grouped = run(df, lambda f: f.group_by(BY).agg(pr.auc("score", "label")))
    assert_frame_equal(sorted_table(over), sorted_table(grouped))


def test_rank_kernel_counts_heavily_tied_groups_first(run, rng):
    # groups of 900 rows on ~8 values take the counting path, groups on distinct scores
    # the sorting path; both must give the pair count, in one query
    df = awkward(tied_log(rng, groups=8, n=900, values=6))
    distinct = pl.col("score") + pl.int_range(pl.len()) * 1e-7
    df = df.with_columns(pl.when(pl.col("model") == 0).then(distinct).otherwise(pl.col("score")))
    tied = df.group_by(BY).agg(
        pl.col("score").implode().list.eval(heavily_tied(pl.element())).list.first()
    )
    assert set(tied.filter(pl.col("model") == 0)["score"]) == {False}
    assert set(tied.filter(pl.col("model") == 1)["score"]) == {True}
    exprs = [
        pr.auc("score", "label"),
        pr.gini("score", "label"),
        pr.auc_se("score", "label", method="hanley_mcneil").alias("hm"),
    ]
    out = run(df, lambda f: f.group_by(BY).agg(*exprs))
    for row in out.iter_rows(named=True):
        part = df.filter(model=row["model"], fold=row["fold"]).drop_nulls(["score", "label"])
        if part["score"].is_nan().any():
            assert math.isnan(row["auc"])
            continue
        expected = pair_auc(part["score"], part["label"])
        assert row["auc"] == pytest.approx(expected, abs=1e-12)
        assert row["gini"] == pytest.approx(2 * expected - 1, abs=1e-12)
        n_pos = int(part["label"].sum())
        hm = pl.DataFrame({"t": [expected], "p": [n_pos], "n": [part.height - n_pos]})
        se = hm.select(hanley_mcneil_se(pl.col("t"), pl.col("p"), pl.col("n"))).item()
        assert row["hm"] == pytest.approx(se, abs=1e-12)


@settings(max_examples=30)
@given(
    values=st.lists(
        st.sampled_from([-np.inf, -1.0, 0.0, 0.5, 3.0, np.inf]), min_size=2, max_size=30
    ),
    seed=st.integers(0, 2**16),
)
def test_both_rank_paths_equal_the_pair_count(values, seed):
    rng = np.random.default_rng(seed)
    scores = np.tile(values, 40)  # at least 8 rows per distinct value: the counting path
    # the repeated copy is heavily tied (counting path), the jittered one mostly not
    jitter = scores + np.where(np.isfinite(scores), rng.normal(size=scores.size) * 1e-3, 0)
    label = rng.random(scores.size) < 0.5
    df = pl.DataFrame(
        {"g": [0] * scores.size + [1] * scores.size, "score": [*scores, *jitter]}
    ).with_columns(pl.Series("label", [*label, *label]))
    out = df.group_by("g").agg(
        pr.auc("score", "label"),
        pl.col("score").implode().list.eval(heavily_tied(pl.element())).list.first().alias("tied"),
    )
    out = out.sort("g")
    assert out["tied"][0]
    for g, s in ((0, scores), (1, jitter)):
        expected = pair_auc(s, label) if 0 < label.sum() < label.size else None
        got = out["auc"][g]
        assert got == pytest.approx(expected, abs=1e-12) if expected is not None else got is None


# ------------------------------------------------------------ collapsing tied scores


def assert_tables_equal(got: pl.DataFrame, expected: pl.DataFrame) -> None:
    assert_frame_equal(sorted_table(got), sorted_table(expected), rel_tol=1e-11, abs_tol=1e-12)


@pytest.mark.parametrize("values", [3, 40])
def test_collapsed_binary_evaluate_equals_the_row_plan(run, rng, values):
    df = awkward(tied_log(rng, values=values))
    collapsed = run(df, lambda f: pr.evaluate(f, collapse_ties=True))
    plain = run(df, lambda f: pr.evaluate(f, collapse_ties=False))
    assert_tables_equal(collapsed, plain)
    assert collapsed["n_null_score"].sum() == df["score"].null_count()


def test_collapsed_multiclass_evaluate_equals_the_row_plan(run, rng):
    parts = {(g // 2, g % 2): wide_scores(rng, 90, 4) for g in range(4)}
    log = long_log(parts).with_columns(pl.col("score").round(1))
    for frame in (log, log.drop("sample")):
        collapsed = run(frame, lambda f: pr.evaluate(f, collapse_ties=True))
        plain = run(frame, lambda f: pr.evaluate(f, collapse_ties=False))
        assert_tables_equal(collapsed, plain)


@settings(max_examples=25)
@given(
    scores=st.lists(st.sampled_from([-np.inf, 0.0, 0.25, 0.5, 1.0, 2.0]), min_size=1, max_size=40),
    seed=st.integers(0, 2**16),
)
def test_collapsing_never_changes_the_table(scores, seed):
    rng = np.random.default_rng(seed)
    n = len(scores)
    df = pl.DataFrame(
        {
            "model": rng.integers(0, 2, n),
            "fold": rng.integers(0, 2, n),
            "score": scores,
            "label": rng.random(n) < 0.5,
        }
    )
    plain = pr.evaluate(df, collapse_ties=False).collect()
    assert_tables_equal(pr.evaluate(df, collapse_ties=True).collect(), plain)
    assert_tables_equal(pr.evaluate(df.lazy(), collapse_ties=True).collect(), plain)


def test_the_collapse_rule_looks_at_in_memory_scores_only(rng):
    tied = tied_log(rng, groups=20)
    distinct = tied.with_columns(pl.Series("score", rng.normal(size=tied.height)))
    assert _heavily_tied(tied, "score")
    assert not _heavily_tied(distinct, "score")
    assert not _heavily_tied(tied.lazy(), "score")  # a lazy plan is never run to decide
    assert not _heavily_tied(tied.head(500), "score")  # too small to matter


# ------------------------------------------------------------- streaming and Parquet


def test_streaming_scan_of_parquet_equals_the_in_memory_frame(rng, tmp_path):
    df = awkward(tied_log(rng, values=30))
    df.write_parquet(tmp_path / "log.parquet")
    scan = pl.scan_parquet(tmp_path / "log.parquet")
    in_memory = pr.evaluate(df).collect(engine="in-memory")
    assert_tables_equal(pr.evaluate(scan).collect(engine="streaming"), in_memory)
    aucs = [pr.auc("score", "label"), pr.sauc("score", "label"), pr.auc_se("score", "label")]
    expected = df.group_by(BY).agg(aucs)
    assert_tables_equal(scan.group_by(BY).agg(aucs).collect(engine="streaming"), expected)


# ------------------------------------------------------------------------ batches


def hive_log(tmp_path, rng) -> tuple[pl.DataFrame, str]:
    df = awkward(tied_log(rng, groups=12, n=150, values=50))
    folder = tmp_path / "log"
    df.write_parquet(folder, partition_by="model")
    return df, str(folder)


@pytest.mark.parametrize("max_rows", [1, 150, 450, 10**9])
def test_batches_equal_one_query_over_the_log(rng, tmp_path, max_rows):
    df, folder = hive_log(tmp_path, rng)
    expected = pr.evaluate(df).collect()
    got = pr.evaluate_in_batches(folder, max_rows=max_rows)
    assert_tables_equal(got.select(expected.columns), expected)


def test_batches_take_any_per_group_table(rng, tmp_path):
    df, folder = hive_log(tmp_path, rng)

    def auc(lf: pl.LazyFrame) -> pl.LazyFrame:
        return lf.group_by(BY).agg(pr.auc("score", "label"))

    got = pr.evaluate_in_batches(pl.scan_parquet(folder, hive_partitioning=True), auc, max_rows=300)
    assert_tables_equal(got, auc(df.lazy()).collect())
    parts = {(g // 2, g % 2): wide_scores(rng, 60, 3) for g in range(6)}
    log = long_log(parts)
    got = pr.evaluate_in_batches(log, pr.multiclass_auc, max_rows=100)
    assert_tables_equal(got, pr.multiclass_auc(log).collect())


def test_batches_pass_the_column_names_to_evaluate(rng):
    names = {"model": "clf", "fold": "cv", "score": "prob", "label": "y"}
    df = tied_log(rng).rename(names)  # old name -> new name, which is also the keyword's value
    expected = pr.evaluate(df, **names).collect()
    got = pr.evaluate_in_batches(df, max_rows=300, **names)
    assert_frame_equal(got.sort("clf", "cv"), expected.sort("clf", "cv"), rel_tol=1e-11)


def test_batches_with_a_dataset_column_and_null_keys(rng):
    df = tied_log(rng, groups=8).with_columns(
        pl.when(pl.col("model") == 0).then(None).otherwise(pl.col("model")).alias("model"),
        pl.Series("dataset", ["d1", "d2"] * 800),
    )
    expected = pr.evaluate(df).collect()
    assert expected.columns[:3] == ["dataset", "model", "fold"]
    got = pr.evaluate_in_batches(df, max_rows=250)
    assert_frame_equal(
        got.sort(expected.columns[:3], nulls_last=True),
        expected.sort(expected.columns[:3], nulls_last=True),
        rel_tol=1e-11,
    )


def test_batches_of_an_empty_log_and_a_bad_budget(rng):
    df = tied_log(rng).head(0)
    got = pr.evaluate_in_batches(df)
    assert got.height == 0
    assert got.columns == pr.evaluate(df).collect_schema().names()
    with pytest.raises(ValueError, match="max_rows must be a positive"):
        pr.evaluate_in_batches(tied_log(rng), max_rows=0)
    with pytest.raises(ValueError, match="no column 'fold'"):
        pr.plan_batches(tied_log(rng).drop("fold"))


@settings(max_examples=40)
@given(
    sizes=st.lists(st.integers(1, 30), min_size=1, max_size=25),
    max_rows=st.integers(1, 60),
)
def test_planned_batches_cover_every_group_once_within_budget(sizes, max_rows):
    df = pl.DataFrame({"model": np.repeat(np.arange(len(sizes)), sizes), "fold": 0})
    plan = pr.plan_batches(df, max_rows=max_rows).collect()
    assert plan["model"].to_list() == list(range(len(sizes)))  # each group once, in key order
    assert plan["n_rows"].to_list() == sizes
    batches = plan["batch"].to_list()
    assert batches == sorted(batches)  # consecutive groups
    for rows in plan.group_by("batch").agg(pl.col("n_rows").sum())["n_rows"]:
        assert rows < max_rows + max(sizes)
    # no more batches than windows of max_rows rows
    assert plan["batch"].n_unique() <= sum(sizes) // max_rows + 1


def test_progress_bar_shows_the_batches_and_changes_nothing(capsys):
    log = pl.DataFrame(
        {
            "model": ["a"] * 8 + ["b"] * 8,
            "fold": [0, 0, 1, 1, 2, 2, 3, 3] * 2,
            "score": [0.9, 0.2, 0.8, 0.4, 0.3, 0.6, 0.7, 0.1] * 2,
            "label": [True, False] * 8,
        }
    )
    quiet = pr.evaluate_in_batches(log, max_rows=4)
    shown = pr.evaluate_in_batches(log, max_rows=4, progress=True)
    assert_frame_equal(quiet, shown)
