"""Paired t tests against scipy.stats.ttest_rel, hand computations and statsmodels."""

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
from statsmodels.stats.multitest import multipletests

import polaroc as pr
from tests.tables import random_table, sklearn_cv_log, sklearn_fold_table, vector


def check_against_ttest_rel(table: pl.DataFrame, out: pl.DataFrame, metric: str, **where):
    models = sorted(table["model"].unique())
    assert out.height == math.comb(len(models), 2)
    for row in out.iter_rows(named=True):
        a = vector(table, row["model_a"], metric, **where)
        b = vector(table, row["model_b"], metric, **where)
        ref = stats.ttest_rel(a, b)
        ci = ref.confidence_interval(0.95)
        assert row["n"] == len(a)
        assert row["df"] == ref.df
        assert row["estimate"] == pytest.approx(np.mean(a - b), abs=1e-14)
        assert row["sd_diff"] == pytest.approx(np.std(a - b, ddof=1), rel=1e-12)
        assert row["statistic"] == pytest.approx(ref.statistic, rel=1e-10)
        assert row["p_value"] == pytest.approx(ref.pvalue, rel=1e-9)
        assert row["ci_low"] == pytest.approx(ci.low, rel=1e-10)
        assert row["ci_high"] == pytest.approx(ci.high, rel=1e-10)
        assert row["reject"] == (ref.pvalue <= 0.05)


def test_matches_ttest_rel_per_dataset(run, rng):
    table = random_table(rng, models=4, folds=10, datasets=2)
    out = run(table, lambda t: pr.paired_ttest(t, "auc"))  # by=None → per dataset
    assert out.columns[:3] == ["dataset", "model_a", "model_b"]
    for (d,), part in out.partition_by("dataset", as_dict=True).items():
        check_against_ttest_rel(table, part, "auc", dataset=d)


def test_matches_ttest_rel_on_a_real_cv_run(run):
    table = sklearn_fold_table(sklearn_cv_log())
    for metric in ("auc", "error"):
        out = run(table, lambda t, m=metric: pr.paired_ttest(t, m))
        check_against_ttest_rel(table, out, metric)


def test_output_columns_and_order(rng):
    out = pr.paired_ttest(random_table(rng, models=3, folds=5), "auc", by=()).collect()
    assert out.columns == [
        "model_a", "model_b", "n", "estimate", "statistic", "df",
        "p_value", "reject", "sd_diff", "ci_low", "ci_high",
    ]  # fmt: skip
    assert out.select("model_a", "model_b").rows() == [("m0", "m1"), ("m0", "m2"), ("m1", "m2")]


def test_integer_models_and_metric_expression(run, rng):
    table = random_table(rng, models=3, folds=6).with_columns(
        pl.col("model").str.slice(1).cast(pl.Int32)
    )
    out = run(table, lambda t: pr.paired_ttest(t, (1 - pl.col("auc")).alias("loss"), by=()))
    base = run(table, lambda t: pr.paired_ttest(t, "auc", by=()))
    assert out["model_a"].dtype == pl.Int32
    assert (out["model_a"] < out["model_b"]).all()
    np.testing.assert_allclose(out["statistic"], -base["statistic"], rtol=1e-10)
    np.testing.assert_allclose(out["p_value"], base["p_value"], rtol=1e-9)


def test_nadeau_bengio_by_hand(run):
    # differences 1, 2, 3: m = 2, S² = 1, K = 3; with n_test/n_train = 1/2 the
    # variance of m is (1/3 + 1/2)·1 = 5/6, so t = 2 / sqrt(5/6).
    table = pl.DataFrame(
        {"model": ["a"] * 3 + ["b"] * 3, "fold": [0, 1, 2] * 2, "auc": [1.0, 2, 3, 0, 0, 0]}
    )
    out = run(table, lambda t: pr.paired_ttest(t, "auc", test_train_ratio=0.5)).row(0, named=True)
    t = 2 / math.sqrt(5 / 6)
    assert out["statistic"] == pytest.approx(t, rel=1e-12)
    assert out["df"] == 2
    assert out["sd_diff"] == pytest.approx(1.0)
    assert out["p_value"] == pytest.approx(2 * stats.t.sf(t, 2), rel=1e-10)
    half = stats.t.ppf(0.975, 2) * math.sqrt(5 / 6)
    assert out["ci_low"] == pytest.approx(2 - half, rel=1e-12)
    assert out["ci_high"] == pytest.approx(2 + half, rel=1e-12)


def test_nadeau_bengio_on_random_tables(rng):
    table = random_table(rng, models=3, folds=10)
    out = pr.paired_ttest(table, "auc", test_train_ratio=1 / 9).collect()
    plain = pr.paired_ttest(table, "auc").collect()
    for row in out.iter_rows(named=True):
        d = vector(table, row["model_a"]) - vector(table, row["model_b"])
        t = d.mean() / math.sqrt((1 / 10 + 1 / 9) * d.var(ddof=1))
        assert row["statistic"] == pytest.approx(t, rel=1e-10)
    # corrected variance is larger: |t| shrinks, p grows
    assert (out["statistic"].abs() < plain["statistic"].abs()).all()
    assert (out["p_value"] > plain["p_value"]).all()


@pytest.mark.parametrize("method", ["holm", "bonferroni"])
def test_adjusted_p_values_match_statsmodels(run, rng, method):
    table = random_table(rng, models=5, folds=8, datasets=2, spread=0.02)
    out = run(table, lambda t: pr.paired_ttest(t, "auc", adjust=method, alpha=0.1))
    for _, part in out.partition_by("dataset", as_dict=True).items():
        reject, adjusted, _, _ = multipletests(part["p_value"].to_numpy(), 0.1, method=method)
        np.testing.assert_allclose(part["p_adjusted"], adjusted, rtol=1e-12)
        assert part["reject"].to_list() == list(reject)


def test_bad_arguments_raise_at_call_time(rng):
    lazy = random_table(rng, models=2, folds=3).lazy()
    with pytest.raises(ValueError, match="adjust"):
        pr.paired_ttest(lazy, adjust="sidak_holm")
    with pytest.raises(ValueError, match="alpha"):
        pr.paired_ttest(lazy, alpha=5)
    with pytest.raises(ValueError, match="'roc'"):
        pr.paired_ttest(lazy, "roc")
    with pytest.raises(ValueError, match="'split'"):
        pr.paired_ttest(lazy, by="split")
    with pytest.raises(TypeError, match="numeric"):
        pr.paired_ttest(lazy.with_columns(pl.col("auc").cast(pl.String)))
    with pytest.raises(TypeError, match="DataFrame or LazyFrame"):
        pr.paired_ttest({"auc": [1]})


# ------------------------------------------------------------ unbalanced designs


def base_table() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "model": ["a", "a", "a", "b", "b", "b"],
            "fold": [1, 2, 3, 1, 2, 3],
            "auc": [0.8, 0.7, 0.9, 0.6, 0.65, 0.7],
        }
    )


UNBALANCED = {
    "missing fold": (
        base_table().filter(~((pl.col("model") == "b") & (pl.col("fold") == 2))),
        r"missing \(model, fold\) rows: \(b, 2\)",
    ),
    "duplicated row": (
        pl.concat([base_table(), base_table().head(1)]),
        r"duplicated \(model, fold, count\): \(a, 1, 2\)",
    ),
    "one fold": (base_table().filter(pl.col("fold") == 1), "fewer than 2 fold values"),
    "null fold": (
        base_table().with_columns(fold=pl.when(pl.col("auc") == 0.7).then(None).otherwise("fold")),
        r"null key \(model, fold\): \(a, null\), \(b, null\)",
    ),
}


@pytest.mark.parametrize("case", UNBALANCED)
def test_unbalanced_dataframe_raises_value_error_at_call(case):
    table, message = UNBALANCED[case]
    with pytest.raises(ValueError, match=message):
        pr.paired_ttest(table)


@pytest.mark.parametrize("engine", ["in-memory", "streaming"])
@pytest.mark.parametrize("case", UNBALANCED)
def test_unbalanced_lazyframe_raises_when_collected(case, engine):
    table, message = UNBALANCED[case]
    plan = pr.paired_ttest(table.lazy())  # building the plan does not read data
    with pytest.raises(ComputeError, match=message):
        plan.collect(engine=engine)


def test_missing_pairs_are_named_per_by_group():
    table = pl.concat(
        [
            base_table().with_columns(dataset=pl.lit("x")),
            base_table().with_columns(dataset=pl.lit("y")),
        ]
    ).filter(~((pl.col("dataset") == "y") & (pl.col("model") == "a") & (pl.col("fold") == 3)))
    with pytest.raises(ValueError, match=r"\(y, a, 3\)"):
        pr.paired_ttest(table)
    # pooled over data sets, each (model, fold) appears twice
    with pytest.raises(ValueError, match="duplicated"):
        pr.paired_ttest(table, by=())


# ------------------------------------------------------- awkward values


def test_zero_variance_rule(run):
    table = pl.DataFrame(
        {
            "model": ["a"] * 3 + ["b"] * 3 + ["c"] * 3,
            "fold": [1, 2, 3] * 3,
            "auc": [0.8, 0.7, 0.9, 0.7, 0.6, 0.8, 0.8, 0.7, 0.9],
        }
    )
    out = run(table, lambda t: pr.paired_ttest(t)).sort("model_a", "model_b")
    ab, ac, bc = out.iter_rows(named=True)
    # a − b is 0.1 on every fold (up to rounding): t = +inf, p = 0, like ttest_rel
    assert ab["sd_diff"] == 0.0
    assert ab["statistic"] == math.inf
    assert ab["p_value"] == 0.0
    assert ab["reject"] is True
    assert ab["ci_low"] == pytest.approx(0.1)
    assert ab["ci_high"] == pytest.approx(0.1)
    assert bc["statistic"] == -math.inf
    # a and c are identical: 0/0 is null, not NaN, not a decision
    assert ac["sd_diff"] == 0.0
    assert ac["estimate"] == 0.0
    assert ac["statistic"] is None
    assert ac["p_value"] is None
    assert ac["reject"] is None


def test_null_metric_leaves_the_fold_out_of_that_pair(run, rng):
    table = random_table(rng, models=3, folds=8).with_columns(
        auc=pl.when((pl.col("model") == "m1") & (pl.col("fold") == 4)).then(None).otherwise("auc")
    )
    out = run(table, lambda t: pr.paired_ttest(t, by=())).sort("model_a", "model_b")
    assert out["n"].to_list() == [7, 8, 7]
    row = out.row(0, named=True)
    a, b = vector(table, "m0"), vector(table, "m1")
    keep = ~np.isnan(b.astype(float))
    ref = stats.ttest_rel(a[keep], b[keep].astype(float))
    assert row["statistic"] == pytest.approx(ref.statistic, rel=1e-10)
    assert row["df"] == 6


def test_one_usable_fold_gives_null_statistics(run):
    table = base_table().with_columns(
        auc=pl.when((pl.col("model") == "b") & (pl.col("fold") > 1)).then(None).otherwise("auc")
    )
    row = run(table, lambda t: pr.paired_ttest(t)).row(0, named=True)
    assert (row["n"], row["df"]) == (1, 0)
    assert row["estimate"] == pytest.approx(0.2)
    for name in ("sd_diff", "statistic", "p_value", "ci_low", "ci_high", "reject"):
        assert row[name] is None, name


def test_nan_metric_gives_nan_not_a_decision(run, rng):
    table = random_table(rng, models=3, folds=5).with_columns(
        auc=pl.when((pl.col("model") == "m0") & (pl.col("fold") == 2))
        .then(float("nan"))
        .otherwise("auc")
    )
    out = run(table, lambda t: pr.paired_ttest(t, by=())).sort("model_a", "model_b")
    for row in out.head(2).iter_rows(named=True):  # the pairs with m0
        assert math.isnan(row["estimate"])
        assert math.isnan(row["statistic"])
        assert math.isnan(row["p_value"])
        assert row["reject"] is None
    assert math.isfinite(out["p_value"][2])


def test_single_model_gives_no_pairs(run):
    table = base_table().filter(pl.col("model") == "a")
    assert run(table, lambda t: pr.paired_ttest(t)).height == 0


@settings(max_examples=25)
@given(
    st.lists(st.floats(-0.2, 0.2), min_size=4, max_size=4),
    st.floats(-0.3, 0.3),
    st.permutations(range(12)),
)
def test_fold_effects_and_row_order_do_not_matter(fold_shift, model_shift, order):
    rng = np.random.default_rng(7)
    table = random_table(rng, models=3, folds=4)
    moved = table.with_columns(
        auc=pl.col("auc")
        + pl.col("fold").replace_strict(dict(enumerate(fold_shift)), return_dtype=pl.Float64)
        + pl.when(pl.col("model") == "m0").then(model_shift).otherwise(0.0)
    )[list(order)]
    got = pr.paired_ttest(moved, by=()).collect()
    base = pr.paired_ttest(table, by=()).collect()
    np.testing.assert_allclose(got["sd_diff"], base["sd_diff"], rtol=1e-6, atol=1e-12)
    shift = np.array([model_shift, model_shift, 0.0])  # pairs (m0,m1), (m0,m2), (m1,m2)
    np.testing.assert_allclose(got["estimate"], base["estimate"] + shift, atol=1e-12)


# ------------------------------------------------------------ test agreement


def test_agreement_counts_match_a_brute_force(run, rng):
    table = random_table(rng, models=5, folds=10, datasets=3, spread=0.015)
    out = run(table, lambda t: pr.test_agreement(t, ("auc", "error")))
    expected = {}
    for d in table["dataset"].unique():
        for a, b in itertools.combinations(sorted(table["model"].unique()), 2):
            rej = tuple(
                stats.ttest_rel(
                    vector(table, a, m, dataset=d), vector(table, b, m, dataset=d)
                ).pvalue
                <= 0.05
                for m in ("auc", "error")
            )
            expected.setdefault(rej, set()).add((d, a, b))
    assert out["case"].to_list() == [
        "both accept", "only auc rejects", "only error rejects", "both reject", "undecided",
    ]  # fmt: skip
    for row in out.iter_rows(named=True):
        key = (row["auc_rejects"], row["error_rejects"])
        listed = {(p["dataset"], p["model_a"], p["model_b"]) for p in row["pairs"]}
        assert listed == expected.get(key, set())
        assert row["count"] == len(listed)
    assert out["count"].sum() == 3 * 10


def test_agreement_reports_directions_per_metric(rng):
    # a is better on AUC (higher) and on error (lower): both `better` fields say a
    table = pl.DataFrame(
        {
            "model": ["a"] * 4 + ["b"] * 4,
            "fold": [1, 2, 3, 4] * 2,
            "auc": [0.9, 0.91, 0.93, 0.9, 0.8, 0.82, 0.81, 0.8],
            "error": [0.1, 0.11, 0.09, 0.1, 0.2, 0.22, 0.21, 0.2],
        }
    )
    out = pr.test_agreement(table).collect()
    (pair,) = out.filter(pl.col("case") == "both reject")["pairs"][0]
    assert pair["better_auc"] == "a"
    assert pair["better_error"] == "a"
    assert pair["estimate_auc"] > 0 > pair["estimate_error"]


def test_agreement_undecided_pairs_are_counted_apart():
    table = base_table().with_columns(error=pl.lit(0.1))  # identical errors: 0/0
    out = pr.test_agreement(table).collect()
    assert out.filter(pl.col("case") == "undecided")["count"].item() == 1
    assert out["count"].sum() == 1


def test_agreement_needs_two_metrics(rng):
    with pytest.raises(ValueError, match="two metric"):
        pr.test_agreement(random_table(rng), ("auc",))
    with pytest.raises(ValueError, match="two metric"):
        pr.test_agreement(random_table(rng), "auc")


# ------------------------------------------------------- repeated cross-validation


def repeated_table(
    rng: np.random.Generator, models: int = 3, repeats: int = 3, folds: int = 5
) -> pl.DataFrame:
    """A balanced (model, repeat, fold) table; fold ids restart in every repeat."""
    rows = [
        (f"m{m}", r, f, 0.8 + 0.01 * m + rng.normal(0, 0.02))
        for m in range(models)
        for r in range(repeats)
        for f in range(folds)
    ]
    return pl.DataFrame(rows, schema=["model", "repeat", "fold", "auc"], orient="row")


def differences(table: pl.DataFrame, a: str, b: str) -> np.ndarray:
    part = {m: table.filter(pl.col("model") == m).sort("repeat", "fold") for m in (a, b)}
    return part[a]["auc"].to_numpy() - part[b]["auc"].to_numpy()


def corrected_t(d: np.ndarray, ratio: float) -> tuple[float, float]:
    """Nadeau & Bengio's corrected t and its two-sided p-value, by hand (numpy/scipy)."""
    n = len(d)
    t = d.mean() / math.sqrt((1.0 / n + ratio) * d.var(ddof=1))
    return t, 2.0 * stats.t.sf(abs(t), n - 1)


@pytest.mark.parametrize(("repeats", "folds"), [(1, 10), (3, 5), (10, 10), (5, 2)])
def test_repeats_get_the_corrected_t_by_default(run, rng, repeats, folds):
    table = repeated_table(rng, repeats=repeats, folds=folds)
    out = run(table, lambda t: pr.paired_ttest(t, "auc"))
    assert out.height == 3
    for row in out.iter_rows(named=True):
        d = differences(table, row["model_a"], row["model_b"])
        t, p = corrected_t(d, 1.0 / (folds - 1))
        assert row["n"] == repeats * folds
        assert row["df"] == repeats * folds - 1
        assert row["estimate"] == pytest.approx(d.mean(), abs=1e-14)
        assert row["sd_diff"] == pytest.approx(d.std(ddof=1), rel=1e-12)
        assert row["statistic"] == pytest.approx(t, rel=1e-10)
        assert row["p_value"] == pytest.approx(p, rel=1e-9)
        half = stats.t.ppf(0.975, len(d) - 1) * math.sqrt(
            (1 / len(d) + 1 / (folds - 1)) * d.var(ddof=1)
        )
        assert row["ci_low"] == pytest.approx(d.mean() - half, rel=1e-10)
        assert row["reject"] == (p <= 0.05)


def test_repeats_with_a_given_test_train_ratio(rng):
    table = repeated_table(rng, repeats=4, folds=5)
    out = pr.paired_ttest(table, "auc", test_train_ratio=0.3).collect()
    for row in out.iter_rows(named=True):
        t, p = corrected_t(differences(table, row["model_a"], row["model_b"]), 0.3)
        assert row["statistic"] == pytest.approx(t, rel=1e-10)
        assert row["p_value"] == pytest.approx(p, rel=1e-9)


def test_uncorrected_on_repeats_only_when_asked_and_equals_ttest_rel(rng):
    table = repeated_table(rng, repeats=3, folds=4)
    out = pr.paired_ttest(table, "auc", correction=False).collect()
    for row in out.iter_rows(named=True):
        a, b = (
            table.filter(pl.col("model") == m).sort("repeat", "fold")["auc"].to_numpy()
            for m in (row["model_a"], row["model_b"])
        )
        ref = stats.ttest_rel(a, b)
        assert row["n"] == 12
        assert row["statistic"] == pytest.approx(ref.statistic, rel=1e-10)
        assert row["p_value"] == pytest.approx(ref.pvalue, rel=1e-9)
    corrected = pr.paired_ttest(table, "auc").collect()
    # the correction only widens: |t| shrinks and p grows
    assert (corrected["statistic"].abs() < out["statistic"].abs()).all()
    assert (corrected["p_value"] > out["p_value"]).all()
    with pytest.raises(ValueError, match="test_train_ratio"):
        pr.paired_ttest(table, correction=False, test_train_ratio=0.2)


def test_correction_true_without_repeats_uses_k_folds(rng):
    table = random_table(rng, models=2, folds=8)
    out = pr.paired_ttest(table, "auc", correction=True).collect().row(0, named=True)
    t, p = corrected_t(vector(table, "m0") - vector(table, "m1"), 1.0 / 7)
    assert out["statistic"] == pytest.approx(t, rel=1e-10)
    assert out["p_value"] == pytest.approx(p, rel=1e-9)
    plain = pr.paired_ttest(table, "auc").collect().row(0, named=True)
    assert plain["statistic"] == pytest.approx(
        stats.ttest_rel(vector(table, "m0"), vector(table, "m1"))[0]
    )


def test_repeats_pair_on_repeat_and_fold_not_fold_alone(rng):
    # pooling the repeats on the fold id alone would join r² rows per fold
    table = repeated_table(rng, models=2, repeats=3, folds=4)
    out = pr.paired_ttest(table, "auc").collect()
    assert out["n"].to_list() == [12]


def test_repeat_in_by_tests_each_repeat_alone(rng):
    table = repeated_table(rng, models=2, repeats=2, folds=6)
    out = pr.paired_ttest(table, "auc", by="repeat").collect()
    for row in out.iter_rows(named=True):
        part = table.filter(pl.col("repeat") == row["repeat"])
        ref = stats.ttest_rel(vector(part, "m0"), vector(part, "m1"))
        assert row["statistic"] == pytest.approx(ref.statistic, rel=1e-10)


def test_adjusted_p_values_on_repeats_match_statsmodels(rng):
    table = repeated_table(rng, models=5, repeats=2, folds=5)
    for method in ("holm", "bonferroni"):
        out = pr.paired_ttest(table, "auc", adjust=method).collect()
        adjusted = multipletests(out["p_value"].to_numpy(), method=method)[1]
        np.testing.assert_allclose(out["p_adjusted"], adjusted, rtol=1e-12)
        assert out["reject"].to_list() == list(adjusted <= 0.05)


@pytest.mark.parametrize("lazy", [False, True])
def test_a_repeat_missing_a_fold_is_named(rng, lazy):
    table = repeated_table(rng, models=2, repeats=3, folds=4)
    # a (repeat, fold) cell one model lacks; a cell no model has is never asked for
    holed = table.filter(
        ~((pl.col("repeat") == 1) & (pl.col("fold") == 2) & (pl.col("model") == "m1"))
    )
    expected = r"missing \(model, repeat, fold\) rows: \(m1, 1, 2\)"
    if lazy:
        with pytest.raises(ComputeError, match=expected):
            pr.paired_ttest(holed.lazy(), "auc").collect()
    else:
        with pytest.raises(ValueError, match=expected):
            pr.paired_ttest(holed, "auc")


def test_unbalanced_repeats_are_named(rng):
    # only m0 holds a (repeat 1, fold 7) cell
    table = repeated_table(rng, models=2, repeats=2, folds=3)
    extra = table.filter(pl.col("repeat") == 1, pl.col("fold") == 0, pl.col("model") == "m0")
    extra = extra.with_columns(fold=pl.lit(7, dtype=pl.Int64))
    with pytest.raises(
        ValueError, match=r"missing \(model, repeat, fold\) rows: \(m1, 1, 7\)"
    ) as info:
        pr.paired_ttest(pl.concat([table, extra]), "auc")
    assert len(str(info.value).splitlines()) == 1
    one_model = table.filter(~((pl.col("model") == "m1") & (pl.col("repeat") == 0)))
    with pytest.raises(ValueError, match=r"\(m1, 0, 0\), \(m1, 0, 1\), \(m1, 0, 2\)"):
        pr.paired_ttest(one_model, "auc")


folds_st = st.integers(2, 6)


@settings(max_examples=25)
@given(
    d=st.lists(st.floats(-0.3, 0.3, allow_nan=False), min_size=2, max_size=6),
    repeats=st.integers(1, 5),
    base=st.floats(0.2, 0.8),
)
def test_repeats_of_identical_folds_give_the_formula(d, repeats, base):
    # every repeat holds the same fold differences: n = r·k copies
    folds = len(d)
    rows = [
        (m, r, f, base + (d[f] if m == "a" else 0.0))
        for m in "ab"
        for r in range(repeats)
        for f in range(folds)
    ]
    table = pl.DataFrame(rows, schema=["model", "repeat", "fold", "auc"], orient="row")
    row = pr.paired_ttest(table, "auc").collect().row(0, named=True)
    diffs = np.tile(np.array([base + x for x in d]) - base, repeats)
    assert row["n"] == repeats * folds
    assert row["estimate"] == pytest.approx(diffs.mean(), abs=1e-12)
    spread = diffs.max() - diffs.min()
    if spread > 1e-9:
        t, p = corrected_t(diffs, 1.0 / (folds - 1))
        assert row["statistic"] == pytest.approx(t, rel=1e-7)
        assert row["p_value"] == pytest.approx(p, rel=1e-6, abs=1e-12)


@settings(max_examples=25)
@given(
    seed=st.integers(0, 2**32 - 1),
    repeats=st.integers(1, 3),
    shift=st.floats(-0.2, 0.2).filter(lambda x: abs(x) > 1e-6),
)
def test_swap_mirrors_and_shift_moves_only_estimate(seed, repeats, shift):
    table = repeated_table(np.random.default_rng(seed), models=2, repeats=repeats, folds=4)
    base = pr.paired_ttest(table, "auc").collect().row(0, named=True)
    swapped = table.with_columns(model=pl.col("model").replace_strict({"m0": "m1", "m1": "m0"}))
    mirror = pr.paired_ttest(swapped, "auc").collect().row(0, named=True)
    for column in ("estimate", "statistic", "ci_low"):
        opposite = "ci_high" if column == "ci_low" else column
        assert mirror[column] == pytest.approx(-base[opposite], rel=1e-9, abs=1e-12)
    for column in ("sd_diff", "p_value", "n", "df", "reject"):
        assert mirror[column] == pytest.approx(base[column], rel=1e-9)
    moved = table.with_columns(
        auc=pl.when(pl.col("model") == "m0").then(pl.col("auc") + shift).otherwise("auc")
    )
    out = pr.paired_ttest(moved, "auc").collect().row(0, named=True)
    assert out["estimate"] == pytest.approx(base["estimate"] + shift, abs=1e-12)
    assert out["sd_diff"] == pytest.approx(base["sd_diff"], rel=1e-7)
    assert out["ci_high"] - out["ci_low"] == pytest.approx(
        base["ci_high"] - base["ci_low"], rel=1e-7
    )


# --------------------------------------------------------------- test_agreement


def test_agreement_names_an_expression_metric_never_literal(rng):
    table = random_table(rng, models=3, folds=6)
    # an expression the metric registry cannot name needs its direction (none is lower)
    out = pr.test_agreement(table, ("auc", 1 - pl.col("error")), lower_is_better=()).collect()
    assert "1 - error_rejects" in out.columns
    assert "only 1 - error rejects" in out["case"].to_list()
    assert not any("literal" in c for c in out.columns)
    named = pr.test_agreement(
        table, ("auc", 1 - pl.col("error")), names=("auc", "acc"), lower_is_better=()
    )
    assert "acc_rejects" in named.collect_schema().names()
    aliased = pr.test_agreement(table, ("auc", (1 - pl.col("error")).alias("accuracy")))
    assert "accuracy_rejects" in aliased.collect_schema().names()
    scaled = pr.test_agreement(table, (pl.col("auc") * 100, "error"))
    assert "auc_rejects" in scaled.collect_schema().names()
    with pytest.raises(ValueError, match="names"):
        pr.test_agreement(table, ("auc", "error"), names=("x", "x"))


def test_agreement_with_the_uncorrected_test_on_repeats_matches_paired_ttest(rng):
    table = repeated_table(rng, models=3, repeats=3, folds=4).with_columns(
        error=1 - pl.col("auc") + rng.normal(0, 0.01, 36)
    )
    for options in ({}, {"correction": False}):
        out = pr.test_agreement(table, ("auc", "error"), options=options).collect()
        pairs = out["pairs"].explode().struct.unnest()
        for metric in ("auc", "error"):
            ref = pr.paired_ttest(table, metric, **options).collect()
            got = pairs.sort("model_a", "model_b")[f"p_value_{metric}"]
            np.testing.assert_allclose(got, ref["p_value"], rtol=1e-12)


def test_agreement_takes_wilcoxon_and_adjusts_its_p_values(rng):
    table = random_table(rng, models=3, folds=1, datasets=8).drop("fold")
    out = pr.test_agreement(
        table, ("auc", "error"), test=pr.wilcoxon_test, adjust="holm", by=()
    ).collect()
    pairs = out["pairs"].explode().struct.unnest().sort("model_a", "model_b")
    for metric in ("auc", "error"):
        ref = pr.wilcoxon_test(table, metric).collect()
        adjusted = multipletests(ref["p_value"].to_numpy(), method="holm")[1]
        np.testing.assert_allclose(pairs[f"p_value_{metric}"], adjusted, rtol=1e-12)
        np.testing.assert_allclose(
            pairs[f"estimate_{metric}"], ref.sort("model_a", "model_b")["estimate"]
        )
    assert out["count"].sum() == 3


def test_agreement_nan_metric_is_undecided_and_favours_no_model():
    table = pl.DataFrame({
        "model": ["a"] * 3 + ["b"] * 3,
        "fold": [1, 2, 3] * 2,
        "auc": [0.9, float("nan"), 0.8, 0.7, 0.6, 0.5],
        "error": [0.1, 0.2, 0.15, 0.3, 0.35, 0.4],
    })  # fmt: skip
    out = pr.test_agreement(table).collect()
    assert out.filter(pl.col("case") == "undecided")["count"].item() == 1
    pair = out["pairs"].explode().drop_nulls().struct.unnest()
    assert pair["better_auc"].is_null().all()
    assert math.isnan(pair["p_value_auc"].item())


@pytest.mark.parametrize("name", ["paired_ttest_5x2cv", "combined_ftest_5x2cv", "sign_test"])
def test_agreement_takes_the_other_frequentist_tests(rng, name):
    test = getattr(pr, name)
    rows = [
        (m, r, f, 0.8 + 0.02 * i + rng.normal(0, 0.01), 0.2 - 0.02 * i + rng.normal(0, 0.01))
        for i, m in enumerate("abc")
        for r in range(5)
        for f in range(2)
    ]
    table = pl.DataFrame(rows, schema=["model", "repeat", "fold", "auc", "error"], orient="row")
    if name == "sign_test":  # across data sets: one value per (data set, model)
        table = table.with_columns(dataset=pl.format("{}-{}", "repeat", "fold")).drop("repeat")
        table = table.drop("fold")
    out = pr.test_agreement(table, test=test, adjust="bonferroni", by=()).collect()
    pairs = out["pairs"].explode().struct.unnest().sort("model_a", "model_b")
    for metric in ("auc", "error"):
        ref = test(table, metric, by=()).collect().sort("model_a", "model_b")
        expected = np.minimum(1.0, 3 * ref["p_value"].to_numpy())
        np.testing.assert_allclose(pairs[f"p_value_{metric}"], expected, rtol=1e-12)
    assert out["count"].sum() == 3


def test_repeats_without_their_column_are_duplicates_that_suggest_it(rng):
    table = repeated_table(rng, models=2, repeats=2, folds=3)
    with pytest.raises(ValueError, match=r"duplicated \(model, fold, count\).*repeat column"):
        pr.paired_ttest(table.drop("repeat"), "auc")
    renamed = pr.paired_ttest(table.rename({"repeat": "run"}), "auc", repeat="run").collect()
    assert renamed["n"].to_list() == [6]
