"""The 5 × 2 cv t test (Dietterich 1998) and combined F test (Alpaydın 1999) by hand."""

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


def five_by_two(rng, models: int = 3, repeat_ids=(1, 2, 3, 4, 5), fold_ids=(0, 1)) -> pl.DataFrame:
    rows = []
    for r in repeat_ids:
        for f in fold_ids:
            base = rng.normal(0.8, 0.03)
            for m in range(models):
                rows.append(
                    {
                        "model": f"m{m}",
                        "repeat": r,
                        "fold": f,
                        "auc": base + rng.normal(0.01 * m, 0.015),
                    }
                )
    return pl.DataFrame(rows).sample(fraction=1.0, shuffle=True, seed=4)


def differences(table: pl.DataFrame, a: str, b: str) -> np.ndarray:
    """d[i, j]: repeat i, fold j, both in sorted id order."""
    wide = table.pivot(on="model", index=["repeat", "fold"], values="auc").sort("repeat", "fold")
    return (wide[a].to_numpy() - wide[b].to_numpy()).reshape(5, 2)


def by_hand(d: np.ndarray) -> dict[str, float]:
    mean = d.mean(axis=1, keepdims=True)
    s2 = ((d - mean) ** 2).sum(axis=1)
    t = d[0, 0] / math.sqrt(s2.sum() / 5)
    f = (d**2).sum() / (2 * s2.sum())
    return {"t": t, "p_t": 2 * stats.t.sf(abs(t), 5), "f": f, "p_f": stats.f.sf(f, 10, 5)}


def test_t_and_f_equal_the_formulas(run, rng):
    table = five_by_two(rng, repeat_ids=(7, 3, 9, 4, 5), fold_ids=("b", "a"))
    t = run(table, lambda x: pr.paired_ttest_5x2cv(x))
    f = run(table, lambda x: pr.combined_ftest_5x2cv(x))
    assert t.columns == [
        "model_a",
        "model_b",
        "n",
        "estimate",
        "statistic",
        "df",
        "p_value",
        "reject",
    ]
    assert f.columns == [
        "model_a",
        "model_b",
        "n",
        "estimate",
        "statistic",
        "df_num",
        "df_den",
        "p_value",
        "reject",
    ]
    pairs = list(itertools.combinations(["m0", "m1", "m2"], 2))
    assert t.select("model_a", "model_b").rows() == pairs
    for row_t, row_f in zip(t.iter_rows(named=True), f.iter_rows(named=True), strict=True):
        expected = by_hand(differences(table, row_t["model_a"], row_t["model_b"]))
        assert row_t["statistic"] == pytest.approx(expected["t"], rel=1e-12)
        assert row_t["p_value"] == pytest.approx(expected["p_t"], rel=1e-10)
        assert row_t["df"] == 5
        assert row_t["reject"] == (expected["p_t"] <= 0.05)
        assert row_f["statistic"] == pytest.approx(expected["f"], rel=1e-12)
        assert row_f["p_value"] == pytest.approx(expected["p_f"], rel=1e-10)
        assert (row_f["df_num"], row_f["df_den"]) == (10, 5)


def test_first_difference_is_smallest_repeat_and_fold():
    # only repeat 3 / fold 0 carries a large difference: it must be d11
    rows = []
    for r in (5, 3, 4, 8, 6):
        for f in (1, 0):
            diff = 0.05 if (r, f) == (3, 0) else 0.01 * (f + 1)
            rows += [
                {"model": "a", "repeat": r, "fold": f, "auc": 0.7 + diff},
                {"model": "b", "repeat": r, "fold": f, "auc": 0.7},
            ]
    table = pl.DataFrame(rows)
    out = pr.paired_ttest_5x2cv(table).collect()
    d = differences(table, "a", "b")
    assert d[0, 0] == pytest.approx(0.05)
    assert out["statistic"][0] == pytest.approx(by_hand(d)["t"], rel=1e-12)


def test_groups_and_holm(rng):
    table = pl.concat([five_by_two(rng, models=4).with_columns(dataset=pl.lit(n)) for n in "xy"])
    for test in (pr.paired_ttest_5x2cv, pr.combined_ftest_5x2cv):
        out = test(table, adjust="holm").collect()  # by=None: per data set
        assert out["dataset"].to_list() == ["x"] * 6 + ["y"] * 6
        for name in "xy":
            part = out.filter(dataset=name)
            expected = multipletests(part["p_value"].to_numpy(), method="holm")[1]
            np.testing.assert_allclose(part["p_adjusted"], expected, rtol=1e-12)
            assert part["reject"].to_list() == (expected <= 0.05).tolist()


def test_design_errors_name_what_was_found(rng):
    table = five_by_two(rng)
    three = table.filter(pl.col("repeat") <= 3)
    with pytest.raises(
        ValueError, match=r"5 repeats × 2 folds.*found \(repeats, folds\): \(3, 2\)"
    ):
        pr.paired_ttest_5x2cv(three)
    with pytest.raises(ComputeError, match=r"found \(repeats, folds\): \(3, 2\)"):
        pr.combined_ftest_5x2cv(three.lazy()).collect()
    tenfold = five_by_two(rng, fold_ids=range(10))
    with pytest.raises(ValueError, match=r"\(5, 10\)"):
        pr.combined_ftest_5x2cv(tenfold)
    with pytest.raises(ValueError, match="needs a 'repeat' column"):
        pr.paired_ttest_5x2cv(table.drop("repeat"))
    holed = table.filter(
        ~((pl.col("model") == "m1") & (pl.col("repeat") == 2) & (pl.col("fold") == 1))
    )
    with pytest.raises(ValueError, match=r"missing .*\(m1, 2, 1\)"):
        pr.paired_ttest_5x2cv(holed)
    with pytest.raises(ValueError, match="alpha"):
        pr.paired_ttest_5x2cv(table, alpha=0.0)
    with pytest.raises(ValueError, match="adjust"):
        pr.combined_ftest_5x2cv(table, adjust="bh")  # type: ignore[arg-type]  # on purpose


def test_nan_null_and_zero_variance(run, rng):
    table = five_by_two(rng, models=3)
    nan = table.with_columns(
        auc=pl.when((pl.col("model") == "m2") & (pl.col("repeat") == 4) & (pl.col("fold") == 1))
        .then(float("nan"))
        .otherwise("auc")
    )
    for test, stat in (
        (pr.paired_ttest_5x2cv, "statistic"),
        (pr.combined_ftest_5x2cv, "statistic"),
    ):
        out = run(nan, lambda x, test=test: test(x))
        for row in out.iter_rows(named=True):
            touched = row["model_b"] == "m2"
            assert math.isnan(row[stat]) == touched
            assert math.isnan(row["p_value"]) == touched
            assert (row["reject"] is None) == touched
        null = run(nan.with_columns(pl.col("auc").fill_nan(None)), lambda x, test=test: test(x))
        assert null[stat].is_null().to_list() == [False, True, True]
        assert null["reject"].is_null().to_list() == [False, True, True]
    # constant differences: Σs² = 0 (0.8 − 0.7 and 0.6 − 0.5 differ by rounding only)
    flat = pl.DataFrame(
        {
            "model": ["a"] * 10 + ["b"] * 10 + ["c"] * 10,
            "repeat": [r for r in range(5) for _ in (0, 1)] * 3,
            "fold": [0, 1] * 15,
            "auc": [0.8, 0.6] * 5 + [0.7, 0.5] * 5 + [0.8, 0.6] * 5,
        }
    )
    t = run(flat, lambda x: pr.paired_ttest_5x2cv(x))
    assert t["statistic"].to_list()[:2] == [math.inf, None]  # a−b = 0.1 everywhere; a−c = 0
    assert t["p_value"].to_list()[:2] == [0.0, None]
    f = run(flat, lambda x: pr.combined_ftest_5x2cv(x))
    assert f["statistic"].to_list()[:2] == [math.inf, None]


@settings(max_examples=30)
@given(
    d=st.lists(st.floats(-0.2, 0.2), min_size=10, max_size=10),
    shift=st.floats(-0.3, 0.3),
)
def test_swap_mirrors_t_and_keeps_f(d, shift):
    b = np.linspace(0.5, 0.9, 10)
    table = pl.DataFrame(
        {
            "model": ["a"] * 10 + ["b"] * 10,
            "repeat": [r for r in range(5) for _ in (0, 1)] * 2,
            "fold": [0, 1] * 10,
            "auc": [*(b + np.array(d)), *b],
        }
    )
    swapped = table.with_columns(model=pl.col("model").replace({"a": "b", "b": "a"}))
    shifted = table.with_columns(pl.col("auc") + shift)
    t, t_swap, t_shift = (pr.paired_ttest_5x2cv(x).collect() for x in (table, swapped, shifted))
    f, f_swap = (pr.combined_ftest_5x2cv(x).collect() for x in (table, swapped))
    if t["statistic"][0] is None:
        assert t_swap["statistic"][0] is None
    else:
        assert t_swap["statistic"][0] == pytest.approx(-t["statistic"][0], rel=1e-12)
        assert t_shift["statistic"][0] == pytest.approx(t["statistic"][0], rel=1e-6, abs=1e-9)
        assert t_swap["p_value"][0] == pytest.approx(t["p_value"][0], rel=1e-9)
    if f["statistic"][0] is None:
        assert f_swap["statistic"][0] is None
    else:
        assert f_swap["statistic"][0] == pytest.approx(f["statistic"][0], rel=1e-12)


@settings(max_examples=25)
@given(
    seed=st.integers(0, 2**32 - 1),
    cell=st.tuples(st.integers(0, 2), st.integers(1, 5), st.integers(0, 1)),
    value=st.sampled_from([float("nan"), None]),
)
def test_a_nan_or_null_never_becomes_a_number_or_a_decision(seed, cell, value):
    table = five_by_two(np.random.default_rng(seed))
    model, repeat, fold = cell
    hit = (pl.col("model") == f"m{model}") & (pl.col("repeat") == repeat) & (pl.col("fold") == fold)
    holed = table.with_columns(auc=pl.when(hit).then(value).otherwise("auc"))
    for test, stat in (
        (pr.paired_ttest_5x2cv, "statistic"),
        (pr.combined_ftest_5x2cv, "statistic"),
    ):
        out = test(holed).collect()
        for row in out.iter_rows(named=True):
            touched = f"m{model}" in (row["model_a"], row["model_b"])
            assert (row["reject"] is None) == touched
            if touched:
                for name in (stat, "p_value"):
                    assert row[name] is None or math.isnan(row[name])
            else:
                assert math.isfinite(row[stat])
