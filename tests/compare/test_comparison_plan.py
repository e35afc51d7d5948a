"""The whole comparison in one lazy plan: Parquet logs → per-fold table → every test table.

The per-fold table comes from ``pr.evaluate`` when it exists, and from a plain
``group_by`` of ``pr.auc``/``pr.error`` otherwise; either way every table below is
a ``LazyFrame`` over ``pl.scan_parquet`` and all are collected in one
``pl.collect_all``, whose results must equal the eager oracles.
"""

from __future__ import annotations

import re

import polars as pl
import pytest
from scipy import stats

import polaroc as pr
from tests.oracles_comparison import (
    anova_two_way,
    delong_two_models,
    duncan_critical_ranges,
    duncan_step_down,
)
from tests.tables import sklearn_cv_log


def group_by_table(log: pl.LazyFrame) -> pl.LazyFrame:
    return log.group_by("dataset", "model", "fold").agg(
        pr.auc("score", "label"),
        pr.error("score", "label"),
        pr.auc_se("score", "label", method="hanley_mcneil").alias("auc_se_hanley_mcneil"),
    )


def evaluate_table(log: pl.LazyFrame) -> pl.LazyFrame:
    return pr.evaluate(log)


BUILDERS = [
    pytest.param(group_by_table, id="group_by"),
    pytest.param(
        evaluate_table,
        id="evaluate",
        marks=pytest.mark.skipif(not hasattr(pr, "evaluate"), reason="pr.evaluate not built yet"),
    ),
]


@pytest.fixture(scope="module")
def parquet_logs(tmp_path_factory) -> tuple[str, pl.DataFrame]:
    """Two data sets' CV logs written as one Parquet file per (data set, fold)."""
    folder = tmp_path_factory.mktemp("logs")
    logs = []
    for seed in (0, 1):
        log = sklearn_cv_log(5, seed).with_columns(dataset=pl.lit(f"s{seed}"))
        logs.append(log)
        for (fold,), part in log.partition_by("fold", as_dict=True).items():
            part.write_parquet(folder / f"s{seed}-fold{fold}.parquet")
    return str(folder / "*.parquet"), pl.concat(logs)


@pytest.mark.parametrize("build", BUILDERS)
@pytest.mark.parametrize("engine", ["in-memory", "streaming"])
def test_every_table_from_one_scan_in_one_collect_all(parquet_logs, build, engine):
    pattern, log = parquet_logs
    # One cache node for the scan: every table below reads the log through it (without
    # it Polars' subplan elimination leaves one scan per table).
    scan = pl.scan_parquet(pattern).cache()
    table = build(scan)
    plans = {
        "table": table,
        "ttest": pr.paired_ttest(table, "auc"),
        "agreement": pr.test_agreement(table, ("auc", "error")),
        "anova": pr.anova(table, "auc"),
        "duncan": pr.duncan(table, "auc"),
        "ranges": pr.duncan_ranges(table, "auc"),
        "friedman": pr.friedman_test(table, "auc"),
        "spread": pr.se_vs_sd(table),
        "delong": pr.delong_test(scan, "logreg", "nb", by=("dataset", "fold")),
    }
    assert all(isinstance(p, pl.LazyFrame) for p in plans.values())
    combined = pl.explain_all(list(plans.values()))
    assert len(re.findall(r"Parquet SCAN", combined)) == 1  # the log is read once
    results = dict(zip(plans, pl.collect_all(list(plans.values()), engine=engine), strict=True))

    table = results["table"]
    assert table.height == 2 * 4 * 5
    for (d,), part in table.partition_by("dataset", as_dict=True).items():
        per_model = {m: part.filter(model=m).sort("fold") for m in part["model"].unique()}
        ttest = results["ttest"].filter(dataset=d)
        assert ttest.height == 6
        for row in ttest.iter_rows(named=True):
            a, b = per_model[row["model_a"]]["auc"], per_model[row["model_b"]]["auc"]
            ref = stats.ttest_rel(a.to_numpy(), b.to_numpy())
            assert row["p_value"] == pytest.approx(ref.pvalue, rel=1e-9)
        ref = anova_two_way(part)
        anova = results["anova"].filter(dataset=d)
        assert anova["ss"].to_list() == pytest.approx(ref["sum_sq"].to_list(), rel=1e-9)
        critical = duncan_critical_ranges(
            ref.loc["Residual", "mean_sq"], ref.loc["Residual", "df"], 5, 4
        )
        ranges = results["ranges"].filter(dataset=d)
        assert ranges["critical_range"].to_list() == pytest.approx(
            list(critical.values()), rel=1e-9
        )
        means = {m: float(t["auc"].mean()) for m, t in per_model.items()}
        _, letters = duncan_step_down(means, critical)
        duncan = results["duncan"].filter(dataset=d)
        assert dict(zip(duncan["model"], duncan["groups"], strict=True)) == letters
    assert results["agreement"]["count"].sum() == 12
    friedman = results["friedman"]
    assert friedman["n"].item() == 2
    spread = results["spread"]
    assert spread.height == 8
    row = spread.filter(dataset="s0", model="nb").row(0, named=True)
    part = table.filter(dataset="s0", model="nb")
    assert row["sd"] == pytest.approx(part["auc"].std())
    assert row["mean_se"] == pytest.approx(part["auc_se_hanley_mcneil"].mean())
    delong = results["delong"]
    assert delong.height == 10
    row = delong.filter(dataset="s1", fold=3).row(0, named=True)
    part = log.filter(dataset="s1", fold=3)
    a, b = (part.filter(model=m).sort("sample") for m in ("logreg", "nb"))
    expected = delong_two_models(a["score"], b["score"], a["label"])
    assert row["z"] == pytest.approx(expected["z"], rel=1e-9)
    assert row["p_value"] == pytest.approx(expected["p_value"], rel=1e-9)
