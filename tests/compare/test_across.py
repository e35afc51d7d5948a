"""Tests across data sets against scipy and Demšar's (2006) published table."""

from __future__ import annotations

import itertools
import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.exceptions import ComputeError
from scipy import stats

import polaroc as pr
from tests.tables import random_table, sklearn_cv_log, sklearn_fold_table


def means(table: pl.DataFrame, metric: str = "auc") -> dict[str, np.ndarray]:
    """Per model, its per-data-set mean of the metric, in data-set order."""
    wide = table.group_by("dataset", "model").agg(pl.col(metric).mean()).sort("dataset")
    return {m: wide.filter(model=m)[metric].to_numpy() for m in sorted(wide["model"].unique())}


def dyadic_table(rng, models=4, datasets=12, folds=4) -> pl.DataFrame:
    """Values on a 1/32 grid, averaged over 4 folds: exact in binary, so ties are real."""
    rows = [
        (f"d{d:02}", f"m{m}", f, rng.integers(20, 32) / 32)
        for d in range(datasets)
        for m in range(models)
        for f in range(folds)
    ]
    return pl.DataFrame(rows, schema=["dataset", "model", "fold", "auc"], orient="row")


# ------------------------------------------------------------------------ Wilcoxon


def check_wilcoxon(out: pl.DataFrame, table: pl.DataFrame, method: str) -> None:
    per_model = means(table)
    assert out.height == math.comb(len(per_model), 2)
    for row in out.iter_rows(named=True):
        a, b = per_model[row["model_a"]], per_model[row["model_b"]]
        ref = stats.wilcoxon(a, b, zero_method="zsplit", correction=False, method=method)
        assert row["method"] == method
        assert row["n"] == len(a)
        assert row["statistic"] == pytest.approx(ref.statistic, abs=1e-12)
        assert row["p_value"] == pytest.approx(ref.pvalue, rel=1e-10)
        assert row["r_plus"] + row["r_minus"] == len(a) * (len(a) + 1) / 2
        assert row["reject"] == (ref.pvalue <= 0.05)


def test_wilcoxon_exact_matches_scipy(run, rng):
    table = random_table(rng, models=4, folds=5, datasets=15)
    out = run(table, lambda t: pr.wilcoxon_test(t, "auc"))  # auto: untied, N <= 50 → exact
    check_wilcoxon(out, table, "exact")


def test_wilcoxon_with_ties_and_zeros_matches_scipy_asymptotic(run, rng):
    table = dyadic_table(rng)
    per_model = means(table)
    d = per_model["m0"] - per_model["m1"]
    assert (d == 0).any() or len(np.unique(np.abs(d))) < len(d)  # the case is tied
    out = run(table, lambda t: pr.wilcoxon_test(t, "auc"))  # auto → asymptotic
    check_wilcoxon(out, table, "asymptotic")
    z = run(table, lambda t: pr.wilcoxon_test(t, "auc", method="asymptotic"))
    for row in z.iter_rows(named=True):
        a, b = per_model[row["model_a"]], per_model[row["model_b"]]
        ref = stats.wilcoxon(a, b, zero_method="zsplit", correction=False, method="asymptotic")
        assert abs(row["zstatistic"]) == pytest.approx(abs(ref.zstatistic), rel=1e-10)


def test_wilcoxon_forced_exact_with_ties_matches_scipy(rng):
    table = dyadic_table(rng, models=3, datasets=10)
    out = pr.wilcoxon_test(table, method="exact").collect()
    check_wilcoxon(out, table, "exact")


def test_wilcoxon_per_group_and_on_real_cv_runs(run):
    table = pl.concat(
        [
            sklearn_fold_table(sklearn_cv_log(5, seed)).with_columns(
                dataset=pl.lit(f"s{seed}"), group=pl.lit(seed % 2)
            )
            for seed in range(6)
        ]
    )
    out = run(table, lambda t: pr.wilcoxon_test(t, "auc", by="group"))
    for (g,), part in out.partition_by("group", as_dict=True).items():
        check_wilcoxon(part.drop("group"), table.filter(group=g), "exact")


def test_wilcoxon_sign_follows_a_minus_b(rng):
    table = random_table(rng, models=2, folds=2, datasets=9).with_columns(
        auc=pl.col("auc") + pl.when(pl.col("model") == "m0").then(0.5).otherwise(0.0)
    )
    row = pr.wilcoxon_test(table).collect().row(0, named=True)
    assert row["r_plus"] == 45
    assert row["r_minus"] == 0
    assert row["zstatistic"] > 0


def test_wilcoxon_float_noise_is_not_a_difference():
    # 0.3 vs 0.1 + 0.2 differ in the last bit: a zero difference, not a win
    table = pl.DataFrame(
        {
            "dataset": ["x", "y", "z"] * 2,
            "model": ["a"] * 3 + ["b"] * 3,
            "auc": [0.3, 0.5, 0.7, 0.1 + 0.2, 0.4, 0.6],
        }
    )
    row = pr.wilcoxon_test(table).collect().row(0, named=True)
    # d = 0, 0.1, 0.1: the zero's rank 1 is split, the tie shares 2.5 (unrounded, the
    # −5.6e-17 would be a loss of rank 1 and 0.5 − 0.4 ≠ 0.7 − 0.6 a strict order)
    assert (row["r_plus"], row["r_minus"]) == (5.5, 0.5)
    assert row["method"] == "asymptotic"


# ------------------------------------------------------------- Friedman, Nemenyi


@pytest.mark.parametrize("tied", [False, True])
def test_friedman_matches_scipy(run, rng, tied):
    table = dyadic_table(rng, models=5, datasets=9) if tied else random_table(rng, 5, 3, 9)
    out = run(table, lambda t: pr.friedman_test(t, "auc")).row(0, named=True)
    ref = stats.friedmanchisquare(*means(table).values())
    assert out["n"] == 9
    assert out["n_models"] == 5
    assert out["statistic"] == pytest.approx(ref.statistic, rel=1e-12)
    assert out["df"] == 4
    assert out["p_value"] == pytest.approx(ref.pvalue, rel=1e-10)
    # Iman & Davenport, by hand
    n, k, chi2 = 9, 5, ref.statistic
    f = (n - 1) * chi2 / (n * (k - 1) - chi2)
    assert out["f_iman_davenport"] == pytest.approx(f, rel=1e-12)
    assert (out["df_num"], out["df_den"]) == (4, 32)
    assert out["p_value_iman_davenport"] == pytest.approx(stats.f.sf(f, 4, 32), rel=1e-10)


def test_friedman_per_group_on_real_cv_runs(run):
    table = pl.concat(
        [
            sklearn_fold_table(sklearn_cv_log(5, seed)).with_columns(dataset=pl.lit(f"s{seed}"))
            for seed in range(4)
        ]
    )
    out = run(table, lambda t: pr.friedman_test(t, "auc"))
    ref = stats.friedmanchisquare(*means(table).values())
    assert out["statistic"].item() == pytest.approx(ref.statistic, rel=1e-12)
    assert out["p_value"].item() == pytest.approx(ref.pvalue, rel=1e-10)


def test_direction_only_flips_ranks(rng):
    table = random_table(rng, models=4, folds=2, datasets=6)
    up = pr.mean_ranks(table, "auc").collect().sort("model")
    down = pr.mean_ranks(table, "auc", higher_is_better=False).collect().sort("model")
    np.testing.assert_allclose(up["mean_rank"] + down["mean_rank"], 5.0)
    f_up = pr.friedman_test(table).collect()
    f_down = pr.friedman_test(table, higher_is_better=False).collect()
    assert f_up["statistic"].item() == pytest.approx(f_down["statistic"].item())


# Demšar (2006), Table 5(a): Nemenyi's q_0.05 for k = 2..10 classifiers
DEMSAR_Q05 = [1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164]


@pytest.mark.parametrize("k", range(2, 11))
def test_critical_difference_matches_demsar_table(k):
    n = 12
    table = pl.DataFrame(
        {
            "dataset": [d for d in range(n) for _ in range(k)],
            "model": [f"m{m:02}" for _ in range(n) for m in range(k)],
            "auc": np.random.default_rng(k).random(n * k),
        }
    )
    cd = pr.mean_ranks(table).collect()["cd"].unique().item()
    q = cd / math.sqrt(k * (k + 1) / (6 * n))
    assert q == pytest.approx(DEMSAR_Q05[k - 2], abs=1e-3)  # the table has 3 decimals


def test_nemenyi_pairs_by_hand(run, rng):
    table = random_table(rng, models=5, folds=2, datasets=10, spread=0.05)
    out = run(table, lambda t: pr.nemenyi_test(t, "auc"))
    per_model = means(table)
    names = sorted(per_model)
    matrix = np.column_stack([per_model[m] for m in names])
    ranks = stats.rankdata(-matrix, axis=1).mean(axis=0)  # 1 = best
    k, n = len(names), matrix.shape[0]
    se = math.sqrt(k * (k + 1) / (6 * n))
    cd = stats.studentized_range.ppf(0.95, k, np.inf) / math.sqrt(2) * se
    assert out.height == 10
    for row, (i, j) in zip(
        out.iter_rows(named=True), itertools.combinations(range(k), 2), strict=True
    ):
        assert (row["model_a"], row["model_b"]) == (names[i], names[j])
        assert row["mean_rank_a"] == pytest.approx(ranks[i])
        assert row["estimate"] == pytest.approx(ranks[i] - ranks[j])
        assert row["cd"] == pytest.approx(cd, rel=1e-10)
        q = abs(ranks[i] - ranks[j]) * math.sqrt(2) / se
        assert row["p_value"] == pytest.approx(stats.studentized_range.sf(q, k, np.inf), rel=1e-8)
        assert row["reject"] == (abs(ranks[i] - ranks[j]) > cd)


# ------------------------------------------------------------ awkward input


FUNCTIONS = [pr.wilcoxon_test, pr.friedman_test, pr.nemenyi_test, pr.mean_ranks]


@pytest.mark.parametrize("function", FUNCTIONS)
def test_model_missing_a_dataset_is_named(function, rng):
    table = random_table(rng, models=3, folds=2, datasets=4).filter(
        ~((pl.col("model") == "m2") & (pl.col("dataset") == "d1"))
    )
    with pytest.raises(ValueError, match=r"missing \(model, dataset\) rows: \(m2, d1\)"):
        function(table)
    with pytest.raises(ComputeError, match=r"\(m2, d1\)"):
        function(table.lazy()).collect()


@pytest.mark.parametrize("function", FUNCTIONS)
def test_one_dataset_is_too_few(function, rng):
    with pytest.raises(ValueError, match="fewer than 2 dataset"):
        function(random_table(rng, models=3, folds=2, datasets=1))


@pytest.mark.parametrize("function", FUNCTIONS)
def test_schema_errors_at_call_time(function, rng):
    lazy = random_table(rng, models=2, folds=2, datasets=3).lazy()
    with pytest.raises(ValueError, match="'dataset'"):
        function(lazy.drop("dataset"))
    with pytest.raises(TypeError, match="numeric"):
        function(lazy.with_columns(pl.col("auc").cast(pl.String)))


def test_nan_mean_makes_statistics_nan(run, rng):
    table = random_table(rng, models=3, folds=2, datasets=6).with_columns(
        auc=pl.when((pl.col("model") == "m0") & (pl.col("dataset") == "d2"))
        .then(float("nan"))
        .otherwise("auc")
    )
    w = run(table, lambda t: pr.wilcoxon_test(t)).sort("model_a", "model_b")
    assert math.isnan(w["p_value"][0])
    assert w["reject"][0] is None
    assert math.isfinite(w["p_value"][2])  # (m1, m2) unaffected
    f = run(table, lambda t: pr.friedman_test(t))
    assert math.isnan(f["statistic"].item())
    assert math.isnan(f["p_value"].item())


def test_null_mean_leaves_the_dataset_out(run, rng):
    table = random_table(rng, models=3, folds=2, datasets=8).with_columns(
        auc=pl.when((pl.col("model") == "m0") & (pl.col("dataset") == "d2"))
        .then(None)
        .otherwise("auc")
    )
    w = run(table, lambda t: pr.wilcoxon_test(t)).sort("model_a", "model_b")
    assert w["n"].to_list() == [7, 7, 8]
    f = run(table, lambda t: pr.friedman_test(t))
    ref = stats.friedmanchisquare(*means(table.filter(pl.col("dataset") != "d2")).values())
    assert f["n"].item() == 7
    assert f["statistic"].item() == pytest.approx(ref.statistic)


@settings(max_examples=20)
@given(st.lists(st.tuples(st.floats(0.1, 10), st.floats(-1, 1)), min_size=6, max_size=6))
def test_friedman_ignores_increasing_transforms_per_dataset(transforms):
    table = random_table(np.random.default_rng(5), models=4, folds=1, datasets=6)
    scale = dict(zip([f"d{i}" for i in range(6)], transforms, strict=True))
    moved = table.with_columns(
        auc=pl.col("auc") * pl.col("dataset").replace_strict({d: s for d, (s, _) in scale.items()})
        + pl.col("dataset").replace_strict({d: o for d, (_, o) in scale.items()})
    )
    base = pr.friedman_test(table).collect()
    got = pr.friedman_test(moved).collect()
    assert got["statistic"].item() == pytest.approx(base["statistic"].item(), rel=1e-9)
    ranks = pr.mean_ranks(moved).collect()["mean_rank"].to_list()
    assert ranks == pytest.approx(pr.mean_ranks(table).collect()["mean_rank"].to_list())


# ------------------------------------------------------------ issue 14 regressions


def test_wilcoxon_both_models_nan_is_not_a_zero_difference(run, rng):
    # issue 14: a data set where both models are NaN counted as a zero difference
    table = random_table(rng, models=2, folds=1, datasets=10).with_columns(
        auc=pl.when(pl.col("dataset") == "d3").then(float("nan")).otherwise("auc")
    )
    table = table.with_columns(  # a large, consistent gap: without the NaN, it rejects
        auc=pl.when(pl.col("model") == "m0").then(pl.col("auc") + 0.3).otherwise("auc")
    )
    out = run(table, lambda t: pr.wilcoxon_test(t)).row(0, named=True)
    assert out["reject"] is None
    for column in ("r_plus", "r_minus", "statistic", "zstatistic", "p_value"):
        assert out[column] is None or math.isnan(out[column]), column
    clean = run(table.filter(pl.col("dataset") != "d3"), lambda t: pr.wilcoxon_test(t))
    assert clean["reject"].item() is True


@pytest.mark.parametrize("datasets", [3, 8])
def test_friedman_two_models_ranked_alike_everywhere(run, rng, datasets):
    # issue 14: gave F = inf and p_value_f 0; chi² = N is right and finite
    table = random_table(rng, models=2, folds=1, datasets=datasets).with_columns(
        auc=pl.when(pl.col("model") == "m0").then(pl.col("auc") + 1.0).otherwise("auc")
    )
    out = run(table, lambda t: pr.friedman_test(t)).row(0, named=True)
    # scipy's friedmanchisquare needs k >= 3: the two-model χ² by hand, Rⱼ = 1 and 2
    assert out["statistic"] == pytest.approx(datasets)  # 12N/(2·3)·(N² + 4N²)/N² − 9N = N
    assert out["p_value"] == pytest.approx(stats.chi2.sf(datasets, 1))
    assert out["f_iman_davenport"] is None
    assert out["p_value_iman_davenport"] is None


def test_friedman_perfect_concordance_with_three_models(rng):
    table = random_table(rng, models=3, folds=1, datasets=5).with_columns(
        auc=pl.col("auc") + pl.col("model").str.slice(1).cast(pl.Int64)
    )
    out = pr.friedman_test(table).collect().row(0, named=True)
    ref = stats.friedmanchisquare(*means(table).values())
    assert out["statistic"] == pytest.approx(ref.statistic)
    assert out["p_value"] == pytest.approx(ref.pvalue)
    assert out["f_iman_davenport"] is None


def test_friedman_all_models_tied_everywhere_is_null(rng):
    table = random_table(rng, models=3, folds=1, datasets=5).with_columns(auc=pl.lit(0.7))
    out = pr.friedman_test(table).collect().row(0, named=True)
    assert out["statistic"] is None
    assert out["p_value"] is None


def test_all_functions_accept_one_group(rng):
    table = random_table(rng, models=3, folds=2, datasets=6)
    for function in (pr.wilcoxon_test, pr.friedman_test, pr.nemenyi_test, pr.mean_ranks):
        assert function(table, by=()).collect().height > 0


@pytest.mark.parametrize("method", ["holm", "bonferroni"])
def test_wilcoxon_adjusted_p_values_match_statsmodels(run, rng, method):
    from statsmodels.stats.multitest import multipletests

    table = random_table(rng, models=4, folds=2, datasets=9, spread=0.05)
    out = run(table, lambda t: pr.wilcoxon_test(t, adjust=method)).sort("model_a", "model_b")
    adjusted = multipletests(out["p_value"].to_numpy(), method=method)[1]
    np.testing.assert_allclose(out["p_adjusted"], adjusted, rtol=1e-12)
    assert out["reject"].to_list() == list(adjusted <= 0.05)
    assert out.columns[5:8] == ["p_value", "p_adjusted", "reject"]
