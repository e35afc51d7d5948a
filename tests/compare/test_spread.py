"""Bradley's SE(W)-versus-SD table against numpy on real cross-validation runs."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.exceptions import ComputeError

import polaroc as pr
from tests.tables import sklearn_cv_log


@pytest.fixture(scope="module")
def table() -> pl.DataFrame:
    logs = [sklearn_cv_log(10, seed).with_columns(dataset=pl.lit(f"s{seed}")) for seed in range(3)]
    return (
        pl.concat(logs)
        .group_by("dataset", "model", "fold")
        .agg(
            pr.auc("score", "label"),
            pr.auc_se("score", "label", method="hanley_mcneil").alias("auc_se_hanley_mcneil"),
        )
    )


def test_matches_numpy_across_models_and_datasets(run, table):
    out = run(table, lambda t: pr.se_vs_sd(t))
    assert out.columns == ["dataset", "model", "k", "mean", "sd", "mean_se", "ratio", "correlation"]
    assert out.height == 12
    sd, se = [], []
    for row in out.iter_rows(named=True):
        part = table.filter(dataset=row["dataset"], model=row["model"])
        assert row["k"] == 10
        assert row["mean"] == pytest.approx(part["auc"].mean())
        assert row["sd"] == pytest.approx(np.std(part["auc"].to_numpy(), ddof=1))
        assert row["mean_se"] == pytest.approx(part["auc_se_hanley_mcneil"].mean())
        sd.append(row["sd"])
        se.append(row["mean_se"])
    assert out["correlation"].n_unique() == 1
    assert out["correlation"][0] == pytest.approx(np.corrcoef(se, sd)[0, 1], rel=1e-10)


def test_correlation_per_by_group(run, table):
    out = run(table, lambda t: pr.se_vs_sd(t, by="dataset"))
    for part in out.partition_by("dataset"):
        assert part["correlation"].n_unique() == 1
        expected = np.corrcoef(part["mean_se"], part["sd"])[0, 1]
        assert part["correlation"][0] == pytest.approx(expected, rel=1e-10)


def test_null_fold_values_are_left_out(run, table):
    holed = table.with_columns(
        auc=pl.when((pl.col("model") == "nb") & (pl.col("fold") == 0)).then(None).otherwise("auc")
    )
    out = run(holed, lambda t: pr.se_vs_sd(t)).filter(model="nb")
    assert out["k"].to_list() == [9, 9, 9]
    part = table.filter(model="nb", dataset="s0").filter(pl.col("fold") != 0)
    assert out["mean_se"][0] == pytest.approx(part["auc_se_hanley_mcneil"].mean())


def test_unbalanced_and_schema_errors(table):
    with pytest.raises(ValueError, match=r"missing \(dataset, model, fold\) rows: \(s1, knn, 3\)"):
        pr.se_vs_sd(
            table.filter(
                ~((pl.col("dataset") == "s1") & (pl.col("model") == "knn") & (pl.col("fold") == 3))
            )
        )
    with pytest.raises(ComputeError, match="duplicated"):
        pr.se_vs_sd(pl.concat([table, table.head(1)]).lazy()).collect()
    with pytest.raises(ValueError, match="'auc_se'"):
        pr.se_vs_sd(table, se="auc_se")


def test_repeats_pool_the_repeat_and_fold_values(table):
    repeated = pl.concat([
        table.with_columns(repeat=pl.lit(0)),
        table.with_columns(repeat=pl.lit(1), auc=pl.col("auc") * 0.9),
    ])  # fmt: skip
    out = pr.se_vs_sd(repeated).collect()
    for row in out.iter_rows(named=True):
        part = repeated.filter(dataset=row["dataset"], model=row["model"])
        assert row["k"] == 20
        assert row["sd"] == pytest.approx(np.std(part["auc"].to_numpy(), ddof=1), rel=1e-12)
    model = repeated["model"][0]
    holed = repeated.filter(
        ~((pl.col("repeat") == 1) & (pl.col("fold") == 3) & (pl.col("model") == model))
    )
    with pytest.raises(ValueError, match=r"missing \(dataset, model, repeat, fold\) rows"):
        pr.se_vs_sd(holed)


def test_nan_and_rounding(table):
    nan = table.with_columns(
        auc=pl.when((pl.col("model") == "nb") & (pl.col("fold") == 0))
        .then(float("nan"))
        .otherwise("auc")
    )
    out = pr.se_vs_sd(nan, by="dataset").collect()
    assert out.filter(model="nb")["sd"].is_nan().all()
    assert out["correlation"].is_nan().all()
    assert out.filter(model="knn")["sd"].is_finite().all()
    # values equal up to rounding have no spread
    flat = table.with_columns(auc=0.7 + pl.col("fold") * 1e-17)
    assert (pr.se_vs_sd(flat).collect()["sd"] == 0.0).all()
