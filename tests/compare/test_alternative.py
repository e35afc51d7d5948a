"""alternative= ("two-sided", "greater", "less"; greater means a > b) against scipy."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy import stats

import polaroc as pr
from tests.tables import random_table, vector

ALTERNATIVES = ("two-sided", "greater", "less")


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_paired_ttest_matches_ttest_rel(run, rng, alternative):
    table = random_table(rng, models=3, folds=8)
    out = run(table, lambda t: pr.paired_ttest(t, alternative=alternative))
    for row in out.iter_rows(named=True):
        a, b = vector(table, row["model_a"]), vector(table, row["model_b"])
        ref = stats.ttest_rel(a, b, alternative=alternative)
        assert row["statistic"] == pytest.approx(ref.statistic, rel=1e-10)
        assert row["p_value"] == pytest.approx(ref.pvalue, rel=1e-10)


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_corrected_repeated_t_one_sided(rng, alternative):
    table = random_table(rng, models=2, folds=12).with_columns(
        repeat=pl.col("fold") // 4, fold=pl.col("fold") % 4
    )
    row = pr.paired_ttest(table, alternative=alternative).collect().row(0, named=True)
    wide = table.pivot(on="model", index=["repeat", "fold"], values="auc")
    d = (wide["m0"] - wide["m1"]).to_numpy()
    n = len(d)
    t = d.mean() / np.sqrt((1 / n + 1 / 3) * d.var(ddof=1))
    tails = {"greater": stats.t.sf(t, n - 1), "less": stats.t.cdf(t, n - 1)}
    tails["two-sided"] = 2 * stats.t.sf(abs(t), n - 1)
    assert row["statistic"] == pytest.approx(t, rel=1e-10)
    assert row["p_value"] == pytest.approx(tails[alternative], rel=1e-10)


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_5x2cv_t_one_sided(rng, alternative):
    table = random_table(rng, models=2, folds=10).with_columns(
        repeat=pl.col("fold") // 2, fold=pl.col("fold") % 2
    )
    two = pr.paired_ttest_5x2cv(table).collect().row(0, named=True)
    row = pr.paired_ttest_5x2cv(table, alternative=alternative).collect().row(0, named=True)
    t = two["statistic"]
    tails = {"greater": stats.t.sf(t, 5), "less": stats.t.cdf(t, 5)}
    tails["two-sided"] = 2 * stats.t.sf(abs(t), 5)
    assert row["p_value"] == pytest.approx(tails[alternative], rel=1e-10)


def dataset_table(rng: np.random.Generator, datasets: int = 14) -> pl.DataFrame:
    return random_table(rng, models=3, folds=1, datasets=datasets, spread=0.02)


def means(table: pl.DataFrame, model: str) -> np.ndarray:
    part = table.filter(model=model).group_by("dataset").agg(pl.col("auc").mean())
    return part.sort("dataset")["auc"].to_numpy()


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_sign_test_matches_binomtest(run, rng, alternative):
    table = dataset_table(rng)
    out = run(table, lambda t: pr.sign_test(t, alternative=alternative))
    for row in out.iter_rows(named=True):
        d = means(table, row["model_a"]) - means(table, row["model_b"])
        k, n = int((d > 0).sum()), int((d != 0).sum())
        ref = stats.binomtest(k, n, 0.5, alternative=alternative)
        assert row["statistic"] == k
        assert row["p_value"] == pytest.approx(ref.pvalue, rel=1e-12)


@pytest.mark.parametrize("method", ["exact", "asymptotic"])
@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_wilcoxon_matches_scipy(run, rng, alternative, method):
    table = dataset_table(rng, datasets=16)
    out = run(table, lambda t: pr.wilcoxon_test(t, method=method, alternative=alternative))
    for row in out.iter_rows(named=True):
        a, b = means(table, row["model_a"]), means(table, row["model_b"])
        ref = stats.wilcoxon(
            a, b, zero_method="zsplit", correction=False, method=method, alternative=alternative
        )
        assert row["statistic"] == pytest.approx(ref.statistic, rel=1e-12)
        assert row["p_value"] == pytest.approx(ref.pvalue, rel=1e-10)


def test_bad_alternative_is_refused(rng):
    table = random_table(rng, models=2, folds=4)
    for test in (pr.paired_ttest, pr.sign_test, pr.wilcoxon_test):
        with pytest.raises(ValueError, match="alternative"):
            test(table, alternative="two_sided")  # type: ignore[arg-type]  # on purpose
