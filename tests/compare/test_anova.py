"""Two-way ANOVA against statsmodels; Duncan's test against scipy and a textbook step-down."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.exceptions import ComputeError
from scipy import stats

import polaroc as pr
from polaroc.compare.twoway import _letter
from tests.oracles_comparison import (
    anova_two_way,
    duncan_critical_ranges,
    duncan_step_down,
    studentized_range_ppf,
)
from tests.tables import random_table, sklearn_cv_log, sklearn_fold_table

SOURCES = {"model": "C(model)", "fold": "C(fold)", "residual": "Residual"}


def check_anova(out: pl.DataFrame, table: pl.DataFrame, metric: str = "auc") -> None:
    ref = anova_two_way(table, metric)
    assert out["source"].to_list() == ["model", "fold", "residual"]
    for row in out.iter_rows(named=True):
        r = ref.loc[SOURCES[row["source"]]]
        assert row["df"] == r["df"]
        assert row["ss"] == pytest.approx(r["sum_sq"], rel=1e-9, abs=1e-15)
        assert row["ms"] == pytest.approx(r["mean_sq"], rel=1e-9, abs=1e-15)
        if row["source"] == "residual":
            assert row["statistic"] is None
            assert row["p_value"] is None
        else:
            assert row["statistic"] == pytest.approx(r["F"], rel=1e-8)
            assert row["p_value"] == pytest.approx(r["PR(>F)"], rel=1e-7, abs=1e-300)


def test_anova_matches_statsmodels_per_dataset(run, rng):
    table = random_table(rng, models=5, folds=8, datasets=2)
    out = run(table, lambda t: pr.anova(t, "auc"))
    assert out.columns == ["dataset", "source", "n", "statistic", "df", "p_value", "ss", "ms"]
    for d in ("d0", "d1"):
        check_anova(out.filter(dataset=d).drop("dataset"), table.filter(dataset=d))


def test_anova_matches_statsmodels_on_a_real_cv_run(run):
    table = sklearn_fold_table(sklearn_cv_log())
    for metric in ("auc", "error"):
        check_anova(run(table, lambda t, m=metric: pr.anova(t, m)), table, metric)


def test_anova_sums_of_squares_add_up(rng):
    table = random_table(rng, models=4, folds=6)
    out = pr.anova(table, by=()).collect()
    total = ((table["auc"] - table["auc"].mean()) ** 2).sum()
    assert out["ss"].sum() == pytest.approx(total, rel=1e-12)


def test_null_value_drops_its_fold(run, rng):
    table = random_table(rng, models=3, folds=6)
    holed = table.with_columns(
        auc=pl.when((pl.col("model") == "m2") & (pl.col("fold") == 3)).then(None).otherwise("auc")
    )
    out = run(holed, lambda t: pr.anova(t, by=()))
    assert out["df"].to_list() == [2, 4, 8]
    check_anova(out, table.filter(pl.col("fold") != 3))


def test_nan_value_makes_the_group_nan(run, rng):
    table = random_table(rng, models=3, folds=4, datasets=2).with_columns(
        auc=pl.when((pl.col("dataset") == "d0") & (pl.col("fold") == 1) & (pl.col("model") == "m0"))
        .then(float("nan"))
        .otherwise("auc")
    )
    out = run(table, lambda t: pr.anova(t))
    d0 = out.filter(dataset="d0")
    assert all(math.isnan(v) for v in d0["ss"])
    assert all(math.isnan(v) for v in d0["p_value"].drop_nulls())
    assert out.filter(dataset="d1")["p_value"].drop_nulls().is_finite().all()
    groups = run(table, lambda t: pr.duncan(t))
    assert groups.filter(dataset="d0")["groups"].is_null().all()
    assert groups.filter(dataset="d1")["groups"].is_not_null().all()


def test_exactly_additive_table_has_infinite_f(run):
    # y = model effect + fold effect, no residual (up to rounding)
    model = {"a": 0.9, "b": 0.8, "c": 0.8}
    rows = [(m, f, model[m] + 0.01 * f) for m in model for f in range(4)]
    table = pl.DataFrame(rows, schema=["model", "fold", "auc"], orient="row")
    out = run(table, lambda t: pr.anova(t)).to_dicts()
    assert out[0]["statistic"] == math.inf
    assert out[0]["p_value"] == 0.0
    assert out[1]["statistic"] == math.inf
    same = table.with_columns(auc=pl.lit(0.5))
    out = run(same, lambda t: pr.anova(t)).to_dicts()
    assert out[0]["ss"] == 0.0
    assert out[0]["statistic"] is None
    assert out[0]["p_value"] is None


def test_single_model_has_no_model_test(run):
    table = pl.DataFrame({"model": ["a"] * 3, "fold": [1, 2, 3], "auc": [0.7, 0.8, 0.9]})
    out = run(table, lambda t: pr.anova(t)).to_dicts()
    assert out[0]["df"] == 0
    assert out[0]["ms"] is None
    assert out[0]["statistic"] is None
    groups = run(table, lambda t: pr.duncan(t))
    assert groups["groups"].to_list() == ["a"]
    assert run(table, lambda t: pr.duncan_ranges(t)).height == 0


@pytest.mark.parametrize("function", [pr.anova, pr.duncan, pr.duncan_ranges, pr.duncan_subsets])
def test_unbalanced_tables_are_rejected(function):
    table = pl.DataFrame(
        {"model": ["a", "a", "b", "b", "b"], "fold": [1, 2, 1, 2, 3], "auc": [0.1] * 5}
    )
    with pytest.raises(ValueError, match=r"missing \(model, fold\) rows: \(a, 3\)"):
        function(table)
    with pytest.raises(ComputeError, match=r"missing \(model, fold\) rows: \(a, 3\)"):
        function(table.lazy()).collect()
    with pytest.raises(ValueError, match="fewer than 2 fold"):
        function(table.filter(pl.col("fold") == 1))


def test_alpha_is_checked():
    table = pl.DataFrame({"model": ["a", "b"] * 2, "fold": [1, 1, 2, 2], "auc": [0.1] * 4})
    with pytest.raises(ValueError, match="alpha"):
        pr.duncan(table, alpha=1.5)


# ------------------------------------------------------------------------ Duncan


def reference_ranges(table: pl.DataFrame, alpha: float = 0.05) -> dict[int, float]:
    ref = anova_two_way(table).loc["Residual"]
    k, folds = table["model"].n_unique(), table["fold"].n_unique()
    return duncan_critical_ranges(ref["mean_sq"], ref["df"], folds, k, alpha)


@pytest.mark.parametrize("alpha", [0.05, 0.01])
def test_duncan_ranges_match_scipy(run, rng, alpha):
    table = random_table(rng, models=5, folds=10)
    out = run(table, lambda t: pr.duncan_ranges(t, alpha=alpha, by=()))
    expected = reference_ranges(table, alpha)
    assert out["p"].to_list() == [2, 3, 4, 5]
    for row in out.iter_rows(named=True):
        p = row["p"]
        assert row["alpha_p"] == pytest.approx(1 - (1 - alpha) ** (p - 1), rel=1e-14)
        r_p = studentized_range_ppf((1 - alpha) ** (p - 1), p, 36.0)
        assert row["df_error"] == 36
        assert row["studentized_range"] == pytest.approx(r_p, rel=1e-12)
        assert row["critical_range"] == pytest.approx(expected[p], rel=1e-9)


def designed_table(means: list[float], s: float = 0.01) -> pl.DataFrame:
    """Three models × four folds with exactly these model means and MS_error = 8s²/6.

    The residuals s·c_m·d_f (c = 1, −1, 0; d = 1, −1, 1, −1) sum to zero over every
    model and fold, so they change neither the means nor the fold effects.
    """
    c, d = [1, -1, 0], [1, -1, 1, -1]
    rows = [
        (f"m{m}", f, means[m] + 0.002 * f + s * c[m] * d[f]) for m in range(3) for f in range(4)
    ]
    return pl.DataFrame(rows, schema=["model", "fold", "auc"], orient="row")


def duncan_result(run, table):
    out = run(table, lambda t: pr.duncan(t, by=()))
    return dict(zip(out["model"], out["groups"], strict=True))


def test_protection_rule_merges_a_pair_inside_a_non_significant_range(run):
    # m0 − m1 exceeds R_2, but m0 − m2 (a range of three means holding both) does
    # not exceed R_3: Duncan declares no difference; agricolae would split m0 from m1.
    ms = 8 * 0.01**2 / 6
    r2, r3 = (
        stats.studentized_range.ppf(0.95 ** (p - 1), p, 6) * math.sqrt(ms / 4) for p in (2, 3)
    )
    gap = (r2 + r3) / 2
    means = [0.9, 0.9 - gap, 0.9 - gap - (r3 - gap) / 2]
    assert means[0] - means[1] > r2
    assert means[0] - means[2] < r3
    table = designed_table(means)
    critical = reference_ranges(table)
    assert critical[2] == pytest.approx(r2)
    assert critical[3] == pytest.approx(r3)

    named = dict(zip(["m0", "m1", "m2"], means, strict=True))
    protected, letters = duncan_step_down(named, critical)
    unprotected, _ = duncan_step_down(named, critical, protect=False)
    assert protected == set()
    assert unprotected == {frozenset(("m0", "m1"))}  # the case the rule is for
    assert duncan_result(run, table) == letters == {"m0": "a", "m1": "a", "m2": "a"}
    subsets = run(table, lambda t: pr.duncan_subsets(t))
    assert subsets["models"].to_list() == [["m0", "m1", "m2"]]


def test_overlapping_subsets_get_shared_letters(run):
    ms = 8 * 0.01**2 / 6
    r2, r3 = (
        stats.studentized_range.ppf(0.95 ** (p - 1), p, 6) * math.sqrt(ms / 4) for p in (2, 3)
    )
    means = [0.9, 0.9 - 0.9 * r2, 0.9 - 0.9 * r2 - 0.9 * r2]  # adjacent pairs close, ends apart
    assert means[0] - means[2] > r3
    table = designed_table(means)
    named = dict(zip(["m0", "m1", "m2"], means, strict=True))
    _, letters = duncan_step_down(named, reference_ranges(table))
    assert duncan_result(run, table) == letters == {"m0": "a", "m1": "ab", "m2": "b"}
    out = run(table, lambda t: pr.duncan(t))
    assert out["rank"].to_list() == [1, 2, 3]
    assert out["mean"].to_list() == pytest.approx([m + 0.003 for m in means])
    subsets = run(table, lambda t: pr.duncan_subsets(t))
    assert subsets.select("group", "models").rows() == [("a", ["m0", "m1"]), ("b", ["m1", "m2"])]


@pytest.mark.parametrize("seed", range(6))
def test_duncan_matches_the_textbook_step_down(seed):
    rng = np.random.default_rng(seed)
    table = random_table(rng, models=6, folds=6, spread=0.015)
    out = pr.duncan(table, by=()).collect()
    critical = reference_ranges(table)
    means = {m: table.filter(model=m)["auc"].mean() for m in table["model"].unique()}
    _, letters = duncan_step_down(means, critical)
    assert dict(zip(out["model"], out["groups"], strict=True)) == letters
    assert out["model"].to_list() == sorted(means, key=lambda m: -means[m])
    subsets = pr.duncan_subsets(table, by=()).collect()
    for row in subsets.iter_rows(named=True):
        holders = {m for m, g in letters.items() if row["group"] in g}
        assert set(row["models"]) == holders
        assert row["highest"] == pytest.approx(max(means[m] for m in holders))


def test_duncan_per_dataset_and_on_a_real_cv_run(run, rng):
    table = pl.concat(
        [
            random_table(rng, models=4, folds=5, datasets=2),
            sklearn_fold_table(sklearn_cv_log()).with_columns(dataset=pl.lit("cv")),
        ],
        how="diagonal",
    ).filter(pl.col("fold") < 5)
    out = run(table, lambda t: pr.duncan(t))
    for (d,), part in out.partition_by("dataset", as_dict=True).items():
        sub = table.filter(dataset=d)
        means = {m: sub.filter(model=m)["auc"].mean() for m in sub["model"].unique()}
        _, letters = duncan_step_down(means, reference_ranges(sub))
        assert dict(zip(part["model"], part["groups"], strict=True)) == letters


def test_letters_are_single_distinct_characters():
    out = pl.select(pl.Series(range(165))).select(_letter(pl.all())).to_series().to_list()
    assert out[:3] == ["a", "b", "c"]
    assert out[25:28] == ["z", "A", "B"]
    assert out[52] == "α"
    assert all(len(x) == 1 for x in out[:164])
    assert len(set(out[:164])) == 164
    assert out[164] is None


def test_duncan_doc_example_matches_scipy_by_hand():
    # The docstring's example, recomputed: ms_error from statsmodels, r_p from scipy.
    table = pl.DataFrame(
        {
            "model": ["a"] * 4 + ["b"] * 4 + ["c"] * 4,
            "fold": [1, 2, 3, 4] * 3,
            "auc": [0.90, 0.85, 0.88, 0.86, 0.80, 0.78, 0.83, 0.79, 0.89, 0.84, 0.85, 0.87],
        }
    )
    critical = reference_ranges(table)
    # means a 0.8725, c 0.8625, b 0.8: a−b, c−b exceed R; a−c does not
    assert critical[3] < 0.8725 - 0.8
    assert 0.8725 - 0.8625 < critical[2] < 0.8625 - 0.8
    out = pr.duncan(table).collect()
    assert out["groups"].to_list() == ["a", "a", "b"]


@settings(max_examples=15)
@given(
    st.lists(st.floats(-0.3, 0.3), min_size=5, max_size=5),
    st.floats(0.1, 10),
    st.floats(-1, 1),
)
def test_fold_effects_and_affine_scale_leave_the_model_test_alone(shifts, scale, offset):
    table = random_table(np.random.default_rng(3), models=4, folds=5, spread=0.02)
    moved = table.with_columns(
        auc=(
            pl.col("auc")
            + pl.col("fold").replace_strict(dict(enumerate(shifts)), return_dtype=pl.Float64)
        )
        * scale
        + offset
    )
    base = pr.anova(table, by=()).collect()
    got = pr.anova(moved, by=()).collect()
    assert got["statistic"][0] == pytest.approx(base["statistic"][0], rel=1e-6)
    assert got["p_value"][0] == pytest.approx(base["p_value"][0], rel=1e-6, abs=1e-12)
    assert got["ss"][2] == pytest.approx(base["ss"][2] * scale**2, rel=1e-6)
    letters = pr.duncan(table, by=()).collect()
    assert pr.duncan(moved, by=()).collect()["groups"].to_list() == letters["groups"].to_list()


# ---------------------------------------------- repeats as blocks, NaN and rounding


def repeated_table(rng, models=3, repeats=3, folds=4):
    rows = [
        (f"m{m}", r, f, 0.8 + 0.02 * m + 0.01 * f + rng.normal(0, 0.02))
        for m in range(models)
        for r in range(repeats)
        for f in range(folds)
    ]
    return pl.DataFrame(rows, schema=["model", "repeat", "fold", "auc"], orient="row")


def block_anova(table: pl.DataFrame):
    """statsmodels' ``anova_lm(ols("auc ~ C(model) + C(block)"))``, block = (repeat, fold)."""
    import statsmodels.api as sm
    import statsmodels.formula.api as smf

    frame = table.with_columns(block=pl.format("{}_{}", "repeat", "fold")).to_pandas()
    return sm.stats.anova_lm(smf.ols("auc ~ C(model) + C(block)", data=frame).fit())


@pytest.mark.parametrize(("repeats", "folds"), [(2, 3), (5, 2), (3, 5)])
def test_anova_on_repeats_has_one_block_per_repeat_and_fold(run, rng, repeats, folds):
    table = repeated_table(rng, repeats=repeats, folds=folds)
    out = run(table, lambda t: pr.anova(t))
    ref = block_anova(table)
    names = {"model": "C(model)", "fold": "C(block)", "residual": "Residual"}
    for row in out.iter_rows(named=True):
        r = ref.loc[names[row["source"]]]
        assert row["df"] == r["df"]
        assert row["ss"] == pytest.approx(r["sum_sq"], rel=1e-9)
        if row["source"] != "residual":
            assert row["statistic"] == pytest.approx(r["F"], rel=1e-8)
            assert row["p_value"] == pytest.approx(r["PR(>F)"], rel=1e-7)
    assert out["df"].to_list()[1] == repeats * folds - 1


def test_duncan_on_repeats_uses_the_block_error_term(rng):
    table = repeated_table(rng, models=4, repeats=3, folds=4)
    ranges = pr.duncan_ranges(table).collect()
    ref = block_anova(table).loc["Residual"]
    assert (ranges["n_folds"] == 12).all()
    assert ranges["df_error"][0] == ref["df"]
    assert ranges["ms_error"][0] == pytest.approx(ref["mean_sq"], rel=1e-9)
    expected = duncan_critical_ranges(ref["mean_sq"], ref["df"], 12, 4)
    for row in ranges.iter_rows(named=True):
        assert row["critical_range"] == pytest.approx(expected[row["p"]], rel=1e-6)
    assert pr.duncan(table).collect()["groups"].is_not_null().all()


def test_anova_with_a_repeat_missing_a_fold_is_named(rng):
    table = repeated_table(rng, models=2, repeats=2, folds=3)
    holed = table.filter(
        ~((pl.col("repeat") == 0) & (pl.col("fold") == 1) & (pl.col("model") == "m0"))
    )
    for function in (pr.anova, pr.duncan):
        with pytest.raises(ValueError, match=r"missing \(model, repeat, fold\) rows: \(m0, 0, 1\)"):
            function(holed)


def test_all_nan_group_is_nan_not_infinite_f(run):
    # issue 14: a by group whose metric is NaN in every row reported F = inf, p = 0
    table = pl.DataFrame({
        "dataset": ["x"] * 6 + ["y"] * 6,
        "model": (["a"] * 3 + ["b"] * 3) * 2,
        "fold": [1, 2, 3] * 4,
        "auc": [float("nan")] * 6 + [0.8, 0.82, 0.79, 0.7, 0.71, 0.74],
    })  # fmt: skip
    out = run(table, lambda t: pr.anova(t, by="dataset"))
    x = out.filter(dataset="x")
    for column in ("ss", "ms", "statistic", "p_value"):
        assert all(v is None or math.isnan(v) for v in x[column]), column
    assert x["statistic"].is_not_null().sum() == 2  # NaN, not a missing value
    assert out.filter(dataset="y")["p_value"].drop_nulls().is_finite().all()
    duncan = run(table, lambda t: pr.duncan(t, by="dataset")).filter(dataset="x")
    assert duncan["groups"].is_null().all()
    assert duncan["rank"].is_null().all()


def test_rounding_noise_sum_of_squares_is_zero_not_infinite_f(run):
    # issue 14: no residual and a model SS of rounding noise (≈1e-31) gave F = inf, p = 0
    base = [0.1, 0.2, 0.3]
    table = pl.DataFrame({
        "model": ["a"] * 3 + ["b"] * 3,
        "fold": [1, 2, 3] * 2,
        "auc": base + [v + 1e-17 for v in base],
    })  # fmt: skip
    out = run(table, lambda t: pr.anova(t)).to_dicts()
    assert out[0]["ss"] == 0.0
    assert out[0]["statistic"] is None
    assert out[0]["p_value"] is None
    assert out[2]["ss"] == 0.0
    assert out[1]["statistic"] == math.inf  # the fold effect is real: the documented rule


def test_one_group_by_empty_tuple(run, rng):
    table = random_table(rng, models=3, folds=4)
    for function in (pr.anova, pr.duncan, pr.duncan_ranges, pr.duncan_subsets):
        out = run(table, lambda t, f=function: f(t, by=()))
        assert out.height > 0


@settings(max_examples=25)
@given(
    fold_effects=st.lists(st.floats(0.1, 1.0), min_size=2, max_size=5),
    models=st.integers(2, 4),
    offset=st.floats(-100.0, 100.0),  # rounding error <= ulp(400) ≈ 6e-14 < 1e-12·0.1
)
def test_no_model_effect_up_to_rounding_is_never_significant(fold_effects, models, offset):
    # every model has the same values, computed through rounding: (x + c) − c
    rows = [
        (f"m{m}", f, (x + offset * (m + 1)) - offset * (m + 1))
        for m in range(models)
        for f, x in enumerate(fold_effects)
    ]
    table = pl.DataFrame(rows, schema=["model", "fold", "auc"], orient="row")
    model = pr.anova(table).collect().row(0, named=True)
    if model["statistic"] is not None:
        assert math.isfinite(model["statistic"]), model
        assert model["p_value"] > 1e-6, model
