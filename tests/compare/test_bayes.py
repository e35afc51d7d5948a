"""Bayesian correlated t and signed-rank tests against baycomp 1.0.3."""

from __future__ import annotations

import itertools
import math

import baycomp
import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.exceptions import ComputeError
from scipy import stats

import polaroc as pr
from polaroc.compare import bayes

PROBS = ["p_a_higher", "p_rope", "p_b_higher"]


def fold_table(rng, models: int = 3, repeats: int | None = None, folds: int = 10) -> pl.DataFrame:
    """A per-fold table with correlated models; fold ids restart in each repeat."""
    rows = []
    for r in range(repeats or 1):
        for f in range(folds):
            base = rng.normal(0.8, 0.03)
            for m in range(models):
                value = base + 0.006 * m + rng.normal(0, 0.01)
                row = {"model": f"m{m}", "fold": f, "auc": value}
                rows.append(row if repeats is None else {**row, "repeat": r})
    return pl.DataFrame(rows)


def baycomp_t(table: pl.DataFrame, a: str, b: str, rope: float, runs: int) -> tuple:
    sort = ["repeat", "fold"] if "repeat" in table.columns else ["fold"]
    x = table.filter(model=a).sort(sort)["auc"].to_numpy()
    y = table.filter(model=b).sort(sort)["auc"].to_numpy()
    probs = baycomp.CorrelatedTTest.probs(x, y, rope, runs=runs)
    return probs if rope > 0 else (probs[0], 0.0, probs[1])


@pytest.mark.parametrize("rope", [0.0, 0.005, 0.01])
def test_correlated_t_equals_baycomp(run, rng, rope):
    table = fold_table(rng)
    out = run(table, lambda t: pr.bayes_ttest(t, rope=rope))
    assert out.columns == ["model_a", "model_b", "n", "estimate", *PROBS]
    assert out.select("model_a", "model_b").rows() == list(
        itertools.combinations(["m0", "m1", "m2"], 2)
    )
    for row in out.iter_rows(named=True):
        expected = baycomp_t(table, row["model_a"], row["model_b"], rope, runs=1)
        np.testing.assert_allclose([row[p] for p in PROBS], expected, rtol=1e-9, atol=1e-15)
        assert row["n"] == 10


def test_repeated_cv_pairs_on_repeat_and_fold(run, rng):
    table = fold_table(rng, repeats=10).sample(fraction=1.0, shuffle=True, seed=3)
    out = run(table, lambda t: pr.bayes_ttest(t, rope=0.01))
    for row in out.iter_rows(named=True):
        assert row["n"] == 100
        expected = baycomp_t(table, row["model_a"], row["model_b"], 0.01, runs=10)
        np.testing.assert_allclose([row[p] for p in PROBS], expected, rtol=1e-9, atol=1e-15)


def test_test_train_ratio_by_hand(rng):
    table = fold_table(rng, models=2, repeats=3, folds=5)
    row = pr.bayes_ttest(table, rope=0.01, test_train_ratio=0.5).collect().row(0, named=True)
    d = (
        table.filter(model="m0").sort("repeat", "fold")["auc"].to_numpy()
        - table.filter(model="m1").sort("repeat", "fold")["auc"].to_numpy()
    )
    n = len(d)
    scale = math.sqrt((1 / n + 0.5) * d.var(ddof=1))
    posterior = stats.t(n - 1, d.mean(), scale)
    expected = [
        posterior.sf(0.01),
        posterior.cdf(0.01) - posterior.cdf(-0.01),
        posterior.cdf(-0.01),
    ]
    np.testing.assert_allclose([row[p] for p in PROBS], expected, rtol=1e-9)


def test_groups_are_tested_separately(rng):
    parts = [fold_table(rng).with_columns(dataset=pl.lit(name)) for name in ("x", "y")]
    table = pl.concat(parts)
    out = pr.bayes_ttest(table).collect()  # by=None: per data set
    assert out["dataset"].to_list() == ["x"] * 3 + ["y"] * 3
    for row in out.iter_rows(named=True):
        part = table.filter(dataset=row["dataset"])
        expected = baycomp_t(part, row["model_a"], row["model_b"], 0.01, runs=1)
        np.testing.assert_allclose([row[p] for p in PROBS], expected, rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize(
    ("shift", "rope", "expected"),
    [(0.02, 0.01, (1.0, 0.0, 0.0)), (-0.005, 0.01, (0.0, 1.0, 0.0)), (0.0, 0.0, (0.5, 0.0, 0.5))],
)
def test_constant_differences_are_a_point_mass(run, shift, rope, expected):
    values = [0.8, 0.7, 0.75, 0.9, 0.85]
    table = pl.DataFrame(
        {
            "model": ["a"] * 5 + ["b"] * 5,
            "fold": list(range(5)) * 2,
            "auc": [v + shift for v in values] + values,
        }
    )
    row = run(table, lambda t: pr.bayes_ttest(t, rope=rope)).row(0, named=True)
    assert tuple(row[p] for p in PROBS) == expected


def test_nan_and_null_values(run, rng):
    table = fold_table(rng)
    nan = table.with_columns(
        auc=pl.when((pl.col("model") == "m1") & (pl.col("fold") == 2))
        .then(float("nan"))
        .otherwise("auc")
    )
    out = run(nan, lambda t: pr.bayes_ttest(t))
    for row in out.iter_rows(named=True):
        touched = "m1" in (row["model_a"], row["model_b"])
        assert all(math.isnan(row[p]) for p in PROBS) == touched
        assert math.isnan(row["estimate"]) == touched
    null = table.with_columns(
        auc=pl.when((pl.col("model") == "m1") & (pl.col("fold") == 2)).then(None).otherwise("auc")
    )
    row = run(null, lambda t: pr.bayes_ttest(t)).row(0, named=True)  # m0 vs m1
    assert row["n"] == 9
    expected = baycomp_t(table.filter(pl.col("fold") != 2), "m0", "m1", 0.01, runs=1)
    # 9 folds left of a 10-fold design: the correction keeps k = 10 (1/9), baycomp's n/runs = 9
    assert row["p_a_higher"] + row["p_rope"] + row["p_b_higher"] == pytest.approx(1.0)
    assert row["p_b_higher"] == pytest.approx(expected[2], abs=0.05)


def test_unbalanced_and_bad_arguments(rng):
    table = fold_table(rng, repeats=2)
    holed = table.filter(
        ~((pl.col("model") == "m2") & (pl.col("repeat") == 1) & (pl.col("fold") == 3))
    )
    with pytest.raises(ValueError, match=r"missing .*\(m2, 1, 3\)"):
        pr.bayes_ttest(holed)
    with pytest.raises(ComputeError, match=r"\(m2, 1, 3\)"):
        pr.bayes_ttest(holed.lazy()).collect()
    with pytest.raises(ValueError, match="rope"):
        pr.bayes_ttest(table, rope=-0.1)
    with pytest.raises(ValueError, match="test_train_ratio"):
        pr.bayes_ttest(table, test_train_ratio=-1.0)


@settings(max_examples=30)
@given(
    diffs=st.lists(st.floats(-0.1, 0.1), min_size=3, max_size=12),
    rope=st.sampled_from([0.0, 0.01, 0.03]),
    shift=st.floats(-0.2, 0.2),
)
def test_t_mirrors_on_swap_and_a_common_shift_changes_nothing(diffs, rope, shift):
    n = len(diffs)
    b = np.linspace(0.6, 0.9, n)
    table = pl.DataFrame(
        {"model": ["a"] * n + ["b"] * n, "fold": list(range(n)) * 2, "auc": [*(b + diffs), *b]}
    )
    swapped = table.with_columns(model=pl.col("model").replace({"a": "b", "b": "a"}))
    out = pr.bayes_ttest(table, rope=rope).collect().row(0, named=True)
    mirror = pr.bayes_ttest(swapped, rope=rope).collect().row(0, named=True)
    assert mirror["estimate"] == pytest.approx(-out["estimate"], abs=1e-15)
    for p, q in [("p_a_higher", "p_b_higher"), ("p_rope", "p_rope"), ("p_b_higher", "p_a_higher")]:
        assert out[p] == pytest.approx(mirror[q], abs=1e-9)
    moved = pr.bayes_ttest(table.with_columns(pl.col("auc") + shift), rope=rope).collect()
    for p in PROBS:
        assert moved[p][0] == pytest.approx(out[p], abs=1e-6)
    one = table.with_columns(
        auc=pl.when(pl.col("model") == "a").then(pl.col("auc") + shift).otherwise("auc")
    )
    assert pr.bayes_ttest(one, rope=rope).collect()["estimate"][0] == pytest.approx(
        out["estimate"] + shift, abs=1e-12
    )


# ---------------------------------------------------------------- signed rank


def across_table(rng, models: int = 3, datasets: int = 10) -> pl.DataFrame:
    rows = []
    for d in range(datasets):
        base = rng.uniform(0.6, 0.9)
        for m in range(models):
            rows.append(
                {
                    "dataset": f"d{d:02d}",
                    "model": f"m{m}",
                    "auc": base + rng.normal(0.005 * m, 0.02),
                }
            )
    return pl.DataFrame(rows)


@pytest.mark.parametrize(("rope", "prior"), [(0.01, 0.5), (0.0, 0.5), (0.02, 1.0)])
def test_signed_rank_matches_baycomp_within_monte_carlo_error(rng, rope, prior):
    table = across_table(rng)
    out = pr.bayes_signed_rank(table, rope=rope, prior=prior, seed=1).collect()
    assert out.columns == ["model_a", "model_b", "n", "estimate", *PROBS]
    for row in out.iter_rows(named=True):
        x = table.filter(model=row["model_a"]).sort("dataset")["auc"].to_numpy()
        y = table.filter(model=row["model_b"]).sort("dataset")["auc"].to_numpy()
        expected = baycomp.SignedRankTest.probs(
            x, y, rope, prior=prior, nsamples=20000, random_state=2
        )
        expected = expected if rope > 0 else (expected[0], 0.0, expected[1])
        # independent estimates from 50,000 and 20,000 samples: SE of a difference <= 0.0042
        np.testing.assert_allclose([row[p] for p in PROBS], expected, atol=0.02)
        assert sum(row[p] for p in PROBS) == pytest.approx(1.0)
        assert row["n"] == 10
        assert row["estimate"] == pytest.approx(np.mean(x - y))


def test_signed_rank_in_every_engine(run, rng):
    table = across_table(rng)
    out = run(table, lambda t: pr.bayes_signed_rank(t, seed=3, n_samples=3000))
    expected = pr.bayes_signed_rank(table, seed=3, n_samples=3000).collect()
    assert out.equals(expected)


def test_signed_rank_sampling_is_one_seeded_stream(monkeypatch, rng):
    table = across_table(rng, models=5)
    first = pr.bayes_signed_rank(table, seed=7, n_samples=2000).collect()
    again = pr.bayes_signed_rank(table.lazy(), seed=7, n_samples=2000).collect(engine="streaming")
    assert first.equals(again)
    monkeypatch.setattr(bayes, "_CHUNK", 1)  # one pair per draw: the same stream
    assert pr.bayes_signed_rank(table, seed=7, n_samples=2000).collect().equals(first)
    other = pr.bayes_signed_rank(table, seed=8, n_samples=2000).collect()
    assert not other.equals(first)


def test_signed_rank_ties_rope_zero_and_degenerate(run):
    table = pl.DataFrame(
        {"dataset": list(range(6)) * 2, "model": ["a"] * 6 + ["b"] * 6, "auc": [0.7] * 12}
    )
    row = run(table, lambda t: pr.bayes_signed_rank(t, rope=0.0, seed=0)).row(0, named=True)
    assert (row["p_a_higher"], row["p_rope"], row["p_b_higher"]) == (0.5, 0.0, 0.5)
    row = run(table, lambda t: pr.bayes_signed_rank(t, rope=0.01, seed=0)).row(0, named=True)
    assert (row["p_a_higher"], row["p_rope"], row["p_b_higher"]) == (0.0, 1.0, 0.0)


def test_signed_rank_nan_null_and_groups(rng):
    table = pl.concat(
        [across_table(rng, models=2).with_columns(task=pl.lit(t)) for t in ("x", "y")]
    )
    nan = table.with_columns(
        auc=pl.when(
            (pl.col("task") == "x") & (pl.col("dataset") == "d03") & (pl.col("model") == "m1")
        )
        .then(float("nan"))
        .otherwise("auc")
    )
    out = pr.bayes_signed_rank(nan, by="task", seed=0, n_samples=5000).collect()
    assert all(math.isnan(out[p][0]) for p in PROBS)
    assert all(math.isfinite(out[p][1]) for p in PROBS)
    null = table.with_columns(
        auc=pl.when((pl.col("dataset") == "d03") & (pl.col("model") == "m1"))
        .then(None)
        .otherwise("auc")
    )
    out = pr.bayes_signed_rank(null, by="task", seed=0, n_samples=5000).collect()
    assert out["n"].to_list() == [9, 9]


def test_signed_rank_bad_arguments(rng):
    table = across_table(rng, models=2)
    for kwargs in ({"rope": -1.0}, {"prior": 0.0}, {"n_samples": 0}):
        with pytest.raises(ValueError, match=next(iter(kwargs))):
            pr.bayes_signed_rank(table, **kwargs)
    with pytest.raises(ValueError, match="missing"):
        pr.bayes_signed_rank(
            table.filter(~((pl.col("model") == "m1") & (pl.col("dataset") == "d02")))
        )


@settings(max_examples=25)
@given(
    diffs=st.lists(
        st.sampled_from([-0.03, -0.01, 0.0, 0.005, 0.01, 0.02, 0.04]), min_size=2, max_size=10
    ),
    rope=st.sampled_from([0.0, 0.01]),
    seed=st.integers(0, 100),
)
def test_signed_rank_mirrors_exactly_on_swap(diffs, rope, seed):
    n = len(diffs)
    b = np.linspace(0.6, 0.9, n)
    table = pl.DataFrame(
        {"dataset": list(range(n)) * 2, "model": ["a"] * n + ["b"] * n, "auc": [*(b + diffs), *b]}
    )
    swapped = table.with_columns(model=pl.col("model").replace({"a": "b", "b": "a"}))
    out = (
        pr.bayes_signed_rank(table, rope=rope, seed=seed, n_samples=500)
        .collect()
        .row(0, named=True)
    )
    mirror = pr.bayes_signed_rank(swapped, rope=rope, seed=seed, n_samples=500).collect()
    assert mirror["p_a_higher"][0] == pytest.approx(out["p_b_higher"], abs=1e-12)
    assert mirror["p_b_higher"][0] == pytest.approx(out["p_a_higher"], abs=1e-12)
    assert mirror["p_rope"][0] == pytest.approx(out["p_rope"], abs=1e-12)


@settings(max_examples=25)
@given(
    seed=st.integers(0, 2**32 - 1),
    cell=st.tuples(st.integers(0, 2), st.integers(0, 9)),
    value=st.sampled_from([float("nan"), float("inf")]),
)
def test_a_nan_or_inf_value_never_becomes_a_finite_probability(seed, cell, value):
    table = fold_table(np.random.default_rng(seed))
    model, fold = cell
    hit = (pl.col("model") == f"m{model}") & (pl.col("fold") == fold)
    out = pr.bayes_ttest(table.with_columns(auc=pl.when(hit).then(value).otherwise("auc")))
    for row in out.collect().iter_rows(named=True):
        touched = f"m{model}" in (row["model_a"], row["model_b"])
        probabilities = [row[p] for p in PROBS]
        if touched and math.isnan(value):
            assert all(math.isnan(p) for p in probabilities)
        else:
            assert all(p is None or math.isnan(p) or 0.0 <= p <= 1.0 for p in probabilities)
        if not touched:
            assert sum(probabilities) == pytest.approx(1.0)


def test_signed_rank_pairs_of_different_sizes_share_one_draw(rng):
    # groups with 4 and 12 data sets: the shorter pairs are padded with zero weight
    small = across_table(rng, models=2, datasets=4).with_columns(task=pl.lit("small"))
    large = across_table(rng, models=2, datasets=12).with_columns(task=pl.lit("large"))
    out = pr.bayes_signed_rank(pl.concat([small, large]), by="task", seed=5).collect()
    assert out["n"].to_list() == [12, 4]  # sorted by task: "large" first
    for row, part in zip(out.iter_rows(named=True), (large, small), strict=True):
        x = part.filter(model="m0").sort("dataset")["auc"].to_numpy()
        y = part.filter(model="m1").sort("dataset")["auc"].to_numpy()
        expected = baycomp.SignedRankTest.probs(x, y, 0.01, nsamples=20000, random_state=6)
        np.testing.assert_allclose([row[p] for p in PROBS], expected, atol=0.02)
