"""Pooled and averaged curves across folds, against numpy and sklearn."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from sklearn.metrics import roc_auc_score
from sklearn.metrics import roc_curve as sk_roc_curve

import polaroc as pr
from tests.oracles import counts_at, tpr_for_fpr

INF = float("inf")


def cv_log(rng: np.random.Generator, folds: int = 5, n: int = 60, fold_shift: float = 0.0):
    """Two models; model "a" separates better. ``fold_shift`` moves each fold's scores."""
    rows = []
    for model, gap in (("a", 1.5), ("b", 0.7)):
        for fold in range(folds):
            label = rng.random(n) < 0.4
            score = rng.normal(size=n) + gap * label + fold_shift * fold
            rows.append(
                pl.DataFrame({"model": model, "fold": fold, "score": score, "label": label})
            )
    return pl.concat(rows)


def fold_arrays(df: pl.DataFrame, model: str):
    part = df.filter(pl.col("model") == model)
    for (_,), f in sorted(part.partition_by("fold", as_dict=True).items()):
        yield f["score"].to_numpy(), f["label"].to_numpy()


# ------------------------------------------------------------------ pooled and averaged


def test_pooled_curve_is_the_curve_of_all_folds_together(run, rng):
    df = cv_log(rng, fold_shift=0.5)
    out = run(df, lambda f: pr.pooled_roc(f))
    assert out.columns == ["model", "threshold", "fpr", "tpr", "tp", "fp"]
    for model in ("a", "b"):
        part = df.filter(pl.col("model") == model)
        fpr, tpr, thr = sk_roc_curve(part["label"], part["score"], drop_intermediate=False)
        got = out.filter(pl.col("model") == model)
        np.testing.assert_array_equal(got["threshold"].to_numpy(), thr)
        np.testing.assert_array_equal(got["fpr"].to_numpy(), fpr)
        np.testing.assert_array_equal(got["tpr"].to_numpy(), tpr)


@pytest.mark.parametrize("fold_shift", [0.0, 2.0])
def test_pooling_table_against_sklearn(run, rng, fold_shift):
    df = cv_log(rng, fold_shift=fold_shift)
    out = run(df, lambda f: pr.pooling_table(f))
    assert out.columns == [
        "model",
        "n_folds",
        "n_degenerate",
        "auc_mean",
        "auc_sd",
        "auc_pooled",
        "pooling_bias",
    ]
    assert out["model"].to_list() == ["a", "b"]
    for row in out.iter_rows(named=True):
        aucs = [roc_auc_score(y, s) for s, y in fold_arrays(df, row["model"])]
        part = df.filter(pl.col("model") == row["model"])
        pooled = roc_auc_score(part["label"], part["score"])
        assert (row["n_folds"], row["n_degenerate"]) == (5, 0)
        assert row["auc_mean"] == pytest.approx(np.mean(aucs), abs=1e-12)
        assert row["auc_sd"] == pytest.approx(np.std(aucs, ddof=1), abs=1e-12)
        assert row["auc_pooled"] == pytest.approx(pooled, abs=1e-12)
        assert row["pooling_bias"] == pytest.approx(pooled - np.mean(aucs), abs=1e-12)


def test_pooling_falls_below_averaging_when_fold_scales_differ(run, rng):
    # Each fold ranks its own samples as well as the next, but fold f's scores sit
    # 2·f higher: pooled, one fold's negatives outrank another fold's positives.
    df = cv_log(rng, fold_shift=2.0)
    table = run(df, lambda f: pr.pooling_table(f))
    pooled_area = run(
        df,
        lambda f: pr.pooled_roc(f).group_by("model").agg(pr.trapezoid_auc("fpr", "tpr")),
    ).sort("model")
    vertical = run(df, lambda f: pr.average_roc(f, grid=2001))
    vertical_area = vertical.group_by("model").agg(pr.trapezoid_auc("fpr", "tpr")).sort("model")
    for i, row in enumerate(table.iter_rows(named=True)):
        assert row["pooling_bias"] < -0.05
        assert pooled_area["trapezoid_auc"][i] == pytest.approx(row["auc_pooled"], abs=1e-12)
        # The vertically averaged curve keeps the folds' mean AUC; pooling does not.
        assert vertical_area["trapezoid_auc"][i] == pytest.approx(row["auc_mean"], abs=2e-3)
        assert vertical_area["trapezoid_auc"][i] > pooled_area["trapezoid_auc"][i] + 0.05


def _band(values, level=0.95):
    values = np.asarray(values, dtype=float)
    tail = 100 * (1 - level) / 2
    return (
        values.mean(),
        values.std(ddof=1),
        np.percentile(values, tail),
        np.percentile(values, 100 - tail),
    )


@pytest.mark.parametrize("grid", [11, [0.0, 0.05, 0.333, 0.5, 0.9, 1.0]])
def test_vertical_average_against_fawcett_algorithm(run, rng, grid):
    df = cv_log(rng)
    df = df.with_columns(pl.col("score").round(1))  # ties: vertical runs in the curves
    out = run(df, lambda f: pr.average_roc(f, grid=grid, level=0.9))
    assert out.columns == ["model", "fpr", "tpr", "tpr_sd", "tpr_low", "tpr_high", "n_folds"]
    xs = np.linspace(0, 1, grid) if isinstance(grid, int) else np.array(grid)
    for model in ("a", "b"):
        curves = [
            sk_roc_curve(y, s, drop_intermediate=False)[:2] for s, y in fold_arrays(df, model)
        ]
        got = out.filter(pl.col("model") == model)
        np.testing.assert_allclose(got["fpr"].to_numpy(), xs)
        for x, row in zip(xs, got.iter_rows(named=True), strict=True):
            values = [tpr_for_fpr(fpr, tpr, x) for fpr, tpr in curves]
            expected = _band(values, level=0.9)
            assert (row["tpr"], row["tpr_sd"], row["tpr_low"], row["tpr_high"]) == pytest.approx(
                expected, abs=1e-12
            )
            assert row["n_folds"] == 5


def test_threshold_average_on_a_given_grid(run, rng):
    df = cv_log(rng)
    grid = [1.5, -0.5, 0.0, 0.75, 0.0]
    out = run(df, lambda f: pr.average_roc(f, method="threshold", grid=grid))
    assert out.columns == [
        "model", "threshold", "fpr", "tpr", "fpr_sd", "fpr_low", "fpr_high",
        "tpr_sd", "tpr_low", "tpr_high", "n_folds",
    ]  # fmt: skip
    thresholds = [INF, 1.5, 0.75, 0.0, -0.5, -INF]
    for model in ("a", "b"):
        got = out.filter(pl.col("model") == model)
        assert got["threshold"].to_list() == thresholds
        fprs, tprs = [], []
        for s, y in fold_arrays(df, model):
            fp, tp = counts_at(s, y, thresholds)
            fp[0], tp[0] = 0, 0
            fprs.append(fp / (~y).sum())
            tprs.append(tp / y.sum())
        for i, row in enumerate(got.iter_rows(named=True)):
            for name, values in (("fpr", fprs), ("tpr", tprs)):
                expected = _band([v[i] for v in values])
                got_band = (row[name], row[f"{name}_sd"], row[f"{name}_low"], row[f"{name}_high"])
                assert got_band == pytest.approx(expected, abs=1e-12)


def test_threshold_average_samples_the_pooled_scores(run, rng):
    df = cv_log(rng)
    out = run(df, lambda f: pr.average_roc(f, method="threshold", grid=12))
    for model in ("a", "b"):
        part = df.filter(pl.col("model") == model)
        got = out.filter(pl.col("model") == model)
        thresholds = got["threshold"].to_list()
        assert thresholds[0] == INF
        assert thresholds[-1] == -INF
        assert thresholds[1] == part["score"].max()
        assert thresholds[-2] == part["score"].min()
        assert set(thresholds[1:-1]) <= set(part["score"])
        assert len(thresholds) == 14
        assert got["threshold"].is_sorted(descending=True)
        tprs = []
        for s, y in fold_arrays(df, model):
            _, tp = counts_at(s, y, thresholds[1:])
            tprs.append(np.r_[0, tp] / y.sum())
        np.testing.assert_allclose(got["tpr"].to_numpy(), np.mean(tprs, axis=0), atol=1e-12)


@pytest.mark.parametrize("method", ["vertical", "threshold"])
def test_degenerate_and_nan_folds(run, method):
    df = pl.DataFrame(
        {
            "model": ["a"] * 9 + ["b"] * 6,
            "fold": [1, 1, 1, 2, 2, 2, 3, 3, 3, 1, 1, 1, 2, 2, 2],
            "score": [0.9, 0.4, 0.2, 0.8, 0.6, 0.3, 0.7, 0.5, 0.1, 0.9, 0.3, 0.5, 0.6, 0.2, 0.1],
            "label": [True, False, False, True, True, True, True, True, False, *[True, False] * 3],
        }
    )
    # model a: fold 2 has no negatives. model b: fold 1 gets a NaN score below.
    df = df.with_columns(
        score=pl.when((pl.col("model") == "b") & (pl.col("score") == 0.3))
        .then(float("nan"))
        .otherwise("score")
    )
    out = run(df, lambda f: pr.average_roc(f, method=method, grid=[0.0, 0.5, 1.0]))
    a = out.filter(pl.col("model") == "a")
    assert (a["n_folds"] == 2).all()
    assert not a["tpr"].is_nan().any()
    b = out.filter(pl.col("model") == "b")
    assert b["tpr"].is_nan().all()
    assert b["tpr_high"].is_nan().all()
    table = run(df, lambda f: pr.pooling_table(f))
    assert table.row(0)[:3] == ("a", 2, 1)
    assert math.isnan(table.row(1)[3])
    assert math.isnan(table.row(1)[5])


def test_multiclass_logs_average_per_class(run):
    rng = np.random.default_rng(3)
    n = 60
    label = rng.choice(["x", "y", "z"], size=n)
    log = pl.DataFrame(
        {
            "model": "m",
            "fold": np.repeat(np.arange(3), 20).repeat(3),
            "class": np.tile(["x", "y", "z"], n),
            "label": label.repeat(3),
            "score": rng.random(3 * n),
        }
    )
    out = run(log, lambda f: pr.average_roc(f, grid=3))
    assert out.select("model", "class").unique(maintain_order=True).rows() == [
        ("m", "x"),
        ("m", "y"),
        ("m", "z"),
    ]
    table = run(log, lambda f: pr.pooling_table(f))
    assert table["class"].to_list() == ["x", "y", "z"]


def test_arguments_are_checked(rng):
    df = cv_log(rng, folds=2, n=10)
    with pytest.raises(ValueError, match="must not hold the fold column"):
        pr.average_roc(df, by=["model", "fold"])
    with pytest.raises(ValueError, match="method must be"):
        pr.average_roc(df, method="horizontal")
    with pytest.raises(ValueError, match="level"):
        pr.average_roc(df, level=95)
    with pytest.raises(ValueError, match=r"rates in \[0, 1\]"):
        pr.average_roc(df, grid=[0.5, 2.0])
    with pytest.raises(ValueError, match="no column 'fold'"):
        pr.pooling_table(df.drop("fold"))


def test_table_functions_build_a_plan_without_reading_data():
    def explode(_: pl.Series) -> pl.Series:
        raise AssertionError("the data was read while building the plan")

    log = pl.LazyFrame(
        {"model": ["m"] * 4, "fold": [0, 0, 1, 1], "score": [0.1, 0.2, 0.3, 0.4]}
    ).with_columns(
        pl.col("score").map_batches(explode, return_dtype=pl.Float64),
        label=pl.lit(True),
    )
    plans = [
        pr.roc_curve(log),
        pr.roc_curve(log, thresholds=[0.5], drop_intermediate=True),
        pr.pooled_roc(log),
        pr.pooling_table(log),
        pr.average_roc(log),
        pr.average_roc(log, method="threshold"),
        pr.youden_point(log),
        pr.neyman_pearson_point(log, min_sensitivity=0.9),
        pr.min_cost_point(log),
        pr.roc_points(pl.LazyFrame({"tp": [1], "fp": [1], "tn": [1], "fn": [1]})),
    ]
    assert all(isinstance(plan, pl.LazyFrame) for plan in plans)
    with pytest.raises(AssertionError, match="the data was read"):
        plans[0].collect()
