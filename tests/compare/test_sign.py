"""The sign test across data sets (Demšar 2006) against scipy.stats.binomtest."""

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


def per_dataset_table(rng, models: int = 3, datasets: int = 12, folds: int = 3) -> pl.DataFrame:
    """A per-fold table: several folds per (data set, model), some exact ties of the means."""
    rows = []
    for d in range(datasets):
        base = rng.uniform(0.6, 0.9)
        for m in range(models):
            shift = 0.0 if d % 4 == 0 else rng.normal(0.01 * m, 0.02)  # every 4th data set: a tie
            for f in range(folds):
                rows.append({"dataset": f"d{d}", "model": f"m{m}", "fold": f, "auc": base + shift})
    return pl.DataFrame(rows)


def oracle(table: pl.DataFrame, a: str, b: str) -> dict[str, float]:
    means = table.group_by("dataset", "model").agg(pl.col("auc").mean())
    wide = means.pivot(on="model", index="dataset", values="auc")
    x, y = wide[a].to_numpy(), wide[b].to_numpy()
    d = x - y
    d[np.abs(d) <= 1e-12 * np.maximum(np.abs(x), np.abs(y))] = 0.0
    wins_a, wins_b, ties = int((d > 0).sum()), int((d < 0).sum()), int((d == 0).sum())
    half = ties // 2
    p = stats.binomtest(wins_a + half, wins_a + wins_b + 2 * half, 0.5).pvalue
    return {"wins_a": wins_a, "wins_b": wins_b, "ties": ties, "p_value": p}


def test_matches_binomtest_for_every_pair(run, rng):
    table = per_dataset_table(rng)
    out = run(table, lambda t: pr.sign_test(t, "auc"))
    assert out.columns == [
        "model_a", "model_b", "n", "estimate", "statistic", "p_value", "reject",
        "wins_a", "wins_b", "ties",
    ]  # fmt: skip
    assert out.select("model_a", "model_b").rows() == list(
        itertools.combinations(["m0", "m1", "m2"], 2)
    )
    for row in out.iter_rows(named=True):
        expected = oracle(table, row["model_a"], row["model_b"])
        assert row["ties"] == 3  # the data sets with identical values
        for name in ("wins_a", "wins_b", "ties"):
            assert row[name] == expected[name]
        assert row["p_value"] == pytest.approx(expected["p_value"], rel=1e-12)
        assert row["reject"] == (expected["p_value"] <= 0.05)


def test_odd_ties_drop_one_and_even_ties_split():
    # 7 wins, 1 loss, 3 ties → one tie dropped, 8 of 10; with 4 ties, 9 of 12
    def table(ties: int) -> pl.DataFrame:
        a = [0.9] * 7 + [0.5] + [0.7] * ties
        b = [0.8] * 7 + [0.6] + [0.7] * ties
        n = len(a)
        return pl.DataFrame(
            {"dataset": list(range(n)) * 2, "model": ["a"] * n + ["b"] * n, "auc": a + b}
        )

    odd = pr.sign_test(table(3)).collect().row(0, named=True)
    assert (odd["wins_a"], odd["wins_b"], odd["ties"]) == (7, 1, 3)
    assert odd["p_value"] == pytest.approx(stats.binomtest(8, 10).pvalue)
    even = pr.sign_test(table(4)).collect().row(0, named=True)
    assert even["p_value"] == pytest.approx(stats.binomtest(9, 12).pvalue)


def test_by_groups_and_holm(rng):
    table = pl.concat(
        [per_dataset_table(rng, models=4).with_columns(task=pl.lit(t)) for t in ("x", "y")]
    )
    out = pr.sign_test(table, by="task", adjust="holm").collect()
    assert out.height == 12
    for task in ("x", "y"):
        part = out.filter(task=task)
        expected = multipletests(part["p_value"].to_numpy(), method="holm")[1]
        np.testing.assert_allclose(part["p_adjusted"], expected, rtol=1e-12)
        assert part["reject"].to_list() == (expected <= 0.05).tolist()


def test_nan_gives_nan_and_no_decision(run, rng):
    table = per_dataset_table(rng, models=2)
    table = table.with_columns(
        auc=pl.when((pl.col("dataset") == "d1") & (pl.col("model") == "m0"))
        .then(float("nan"))
        .otherwise("auc")
    )
    row = run(table, lambda t: pr.sign_test(t)).row(0, named=True)
    assert math.isnan(row["p_value"])
    assert row["reject"] is None
    assert row["wins_a"] is None


def test_null_mean_leaves_the_data_set_out(rng):
    table = per_dataset_table(rng, models=2, folds=1)
    holed = table.with_columns(
        auc=pl.when((pl.col("dataset") == "d1") & (pl.col("model") == "m1"))
        .then(None)
        .otherwise("auc")
    )
    row = pr.sign_test(holed).collect().row(0, named=True)
    assert row["wins_a"] + row["wins_b"] + row["ties"] == 11
    assert row == {**row, **oracle(table.filter(pl.col("dataset") != "d1"), "m0", "m1")}


def test_errors(rng):
    table = per_dataset_table(rng, models=2)
    with pytest.raises(ValueError, match="missing"):
        pr.sign_test(table.filter(~((pl.col("dataset") == "d3") & (pl.col("model") == "m1"))))
    with pytest.raises(ComputeError, match="missing"):
        pr.sign_test(
            table.lazy().filter(~((pl.col("dataset") == "d3") & (pl.col("model") == "m1")))
        ).collect()
    with pytest.raises(ValueError, match="adjust"):
        pr.sign_test(table, adjust="sidak_holm")  # type: ignore[arg-type]  # a wrong name on purpose
    with pytest.raises(ValueError, match="alpha"):
        pr.sign_test(table, alpha=1.5)
    with pytest.raises(ValueError, match="no column 'dataset'"):
        pr.sign_test(table.drop("dataset"))


@settings(max_examples=40)
@given(
    values=st.lists(
        st.tuples(st.sampled_from([0.5, 0.6, 0.7, 0.8]), st.sampled_from([0.5, 0.6, 0.7, 0.8])),
        min_size=2,
        max_size=15,
    ),
    shift=st.floats(-0.3, 0.3),
)
def test_swapping_models_mirrors_and_a_common_shift_changes_nothing(values, shift):
    n = len(values)
    a, b = zip(*values, strict=True)
    table = pl.DataFrame(
        {"dataset": list(range(n)) * 2, "model": ["a"] * n + ["b"] * n, "auc": [*a, *b]}
    )
    swapped = table.with_columns(model=pl.col("model").replace({"a": "b", "b": "a"}))
    shifted = table.with_columns(pl.col("auc") + shift)
    out = pr.sign_test(table).collect().row(0, named=True)
    mirrored = pr.sign_test(swapped).collect().row(0, named=True)
    moved = pr.sign_test(shifted).collect().row(0, named=True)
    assert (out["wins_a"], out["wins_b"]) == (mirrored["wins_b"], mirrored["wins_a"])
    assert out["ties"] == mirrored["ties"] == moved["ties"]
    assert out["p_value"] == pytest.approx(mirrored["p_value"], rel=1e-12)
    assert (out["wins_a"], out["p_value"]) == (moved["wins_a"], pytest.approx(moved["p_value"]))
