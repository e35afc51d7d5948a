"""Regression tests for issue 22's items that live in compare/ (4, 6, 9, 14) and the
repeated hold-out policy. Each example is the one the issue quotes."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from scipy import stats

import polaroc as pr
from polaroc.compare.fold_table import direction, negligible, settled_difference
from tests.tables import random_table

# ------------------------------------------------------------ 4: inf is not a tie


def inf_table(rng: np.random.Generator) -> pl.DataFrame:
    """Six data sets × three models × 5 folds; model "log" has sAUC = +inf everywhere."""
    table = random_table(rng, models=3, folds=5, datasets=6).rename({"auc": "sauc"})
    return table.with_columns(
        sauc=pl.when(pl.col("model") == "m2").then(float("inf")).otherwise("sauc")
    )


def test_inf_minus_inf_and_x_minus_inf_are_not_zero():
    frame = pl.DataFrame(
        {
            "_pr_a": [math.inf, math.inf, 0.5, -math.inf, 0.7],
            "_pr_b": [math.inf, 0.5, math.inf, 0.2, 0.7],
        }
    )
    out = frame.select(
        zero=negligible(pl.col("_pr_a") - pl.col("_pr_b"), pl.max_horizontal(pl.all().abs())),
        settled=settled_difference(),
    )
    assert out["zero"].to_list() == [None, False, False, False, True]
    settled = out["settled"].to_list()
    assert math.isnan(settled[0])
    assert settled[1:] == [math.inf, -math.inf, -math.inf, 0.0]


ACROSS = {
    "sign_test": lambda t: pr.sign_test(t, "sauc"),
    "wilcoxon_test": lambda t: pr.wilcoxon_test(t, "sauc"),
    "bayes_signed_rank": lambda t: pr.bayes_signed_rank(t, "sauc", seed=0, n_samples=500),
}
WITHIN = {
    "paired_ttest": lambda t: pr.paired_ttest(t, "sauc"),
    "bayes_ttest": lambda t: pr.bayes_ttest(t, "sauc"),
}


@pytest.mark.parametrize("name", [*ACROSS, *WITHIN])
def test_an_infinite_difference_voids_the_pair_in_every_test(name, rng):
    table = inf_table(rng)
    out = {**ACROSS, **WITHIN}[name](table).collect()
    touched = out.filter((pl.col("model_a") == "m2") | (pl.col("model_b") == "m2"))
    clean = out.filter((pl.col("model_a") != "m2") & (pl.col("model_b") != "m2"))
    assert touched.height > 0
    assert clean.height > 0
    # df (a Float64 count of the design) is kept as-is; every statistic is voided
    floats = [c for c, d in out.schema.items() if d == pl.Float64 and not c.startswith("df")]
    for row in touched.iter_rows(named=True):
        for column in floats:  # NaN: never a tie, a win, zero variance or p = 1
            assert row[column] is None or math.isnan(row[column]), (name, column, row)
        if "reject" in row:
            assert row["reject"] is None
        for column in ("wins_a", "wins_b", "ties"):
            if column in row:
                assert row[column] is None
    for row in clean.iter_rows(named=True):
        assert all(row[c] is None or math.isfinite(row[c]) for c in floats if c != "statistic")


# ------------------------------------------------------------ 6: lower is better


def test_directions_come_from_the_metric_registry():
    for name in ("error", "brier", "log_loss", "cost", "ece", "mce", "lr_negative"):
        assert direction(name).direction == "lower", name
    for name in ("auc", "sauc", "average_precision", "gini", "accuracy", "resolution"):
        assert direction(name).direction == "higher", name
    for name, target in (("calibration_slope", 1.0), ("calibration_intercept", 0.0)):
        assert (direction(name).direction, direction(name).target) == ("target", target)
    assert direction(pl.col("error") * 100).direction == "lower"  # by its output name
    assert direction("error", True).higher_is_better is True
    # a name the registry does not know: refused, listing the known ones, unless told
    with pytest.raises(ValueError, match=r"'error_rate' is not in polaroc's registry.*auc, sauc"):
        direction("error_rate")
    assert direction("error_rate", False).direction == "lower"


def error_table() -> pl.DataFrame:
    """Model "good" has the lower error on all six data sets."""
    rows = []
    for d in range(6):
        rows += [(f"d{d}", "bad", 0.30 + 0.01 * d), (f"d{d}", "good", 0.10 + 0.02 * d)]
    return pl.DataFrame(rows, schema=["dataset", "model", "error"], orient="row")


def test_sign_test_counts_wins_of_the_better_model_for_error():
    row = pr.sign_test(error_table(), "error").collect().row(0, named=True)
    assert (row["model_a"], row["model_b"]) == ("bad", "good")
    assert (row["wins_a"], row["wins_b"]) == (0, 6)  # good wins every data set
    assert row["estimate"] == -6.0
    assert row["statistic"] == 6  # a > b (higher error) on six data sets: binomtest's k
    assert row["p_value"] == pytest.approx(stats.binomtest(6, 6).pvalue)
    forced = pr.sign_test(error_table(), "error", higher_is_better=True).collect()
    assert (forced["wins_a"][0], forced["wins_b"][0]) == (6, 0)


def test_rank_tests_rank_the_lower_error_first():
    ranks = pr.mean_ranks(error_table(), "error").collect()
    assert ranks["model"].to_list() == ["good", "bad"]
    assert ranks["mean_rank"].to_list() == [1.0, 2.0]
    nemenyi = pr.nemenyi_test(error_table(), "error").collect().row(0, named=True)
    assert nemenyi["estimate"] == 1.0  # bad − good in mean rank: bad ranks worse
    friedman = pr.friedman_test(error_table(), "error").collect()
    assert friedman["statistic"][0] == pytest.approx(6.0)


def test_agreement_reads_error_as_lower_is_better(rng):
    table = random_table(rng, models=3, folds=1, datasets=8)
    out = pr.test_agreement(table, ("auc", "error"), test=pr.sign_test, by=()).collect()
    pairs = out["pairs"].explode().struct.unnest().drop_nulls("better_error")
    for row in pairs.iter_rows(named=True):
        means = table.filter(pl.col("model").is_in([row["model_a"], row["model_b"]]))
        best = means.group_by("model").agg(pl.col("error").mean()).sort("error")["model"][0]
        assert row["better_error"] == best


# ------------------------------------------------------------ 9: fold ids run on


def running_ids(rng: np.random.Generator) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Two repeats × 5 folds: fold ids 0..4 restarting, and 0..9 running across repeats."""
    table = random_table(rng, models=3, folds=10).with_columns(repeat=pl.col("fold") // 5)
    return table.with_columns(fold=pl.col("fold") % 5), table


@pytest.mark.parametrize(
    "test",
    [
        lambda t: pr.paired_ttest(t),
        lambda t: pr.bayes_ttest(t),
        lambda t: pr.anova(t),
        lambda t: pr.duncan(t),
    ],
    ids=["paired_ttest", "bayes_ttest", "anova", "duncan"],
)
def test_fold_ids_running_across_repeats_are_accepted(test, rng):
    restarting, running = running_ids(rng)
    expected = test(restarting).collect()
    for frame in (running, running.lazy()):
        assert_frame_equal(test(frame).collect(), expected, rel_tol=1e-9, abs_tol=1e-12)
    row = pr.paired_ttest(running).collect().row(0, named=True)
    assert row["n"] == 10
    wide = running.pivot(on="model", index=["repeat", "fold"], values="auc")
    d = (wide["m0"] - wide["m1"]).to_numpy()
    t = d.mean() / math.sqrt((1 / 10 + 1 / 4) * d.var(ddof=1))  # K = 5 folds per repeat
    assert row["statistic"] == pytest.approx(t, rel=1e-10)


def test_a_cell_one_model_lacks_is_named_and_never_invented(rng):
    _, running = running_ids(rng)
    holed = running.filter(~((pl.col("model") == "m1") & (pl.col("fold") == 7)))
    with pytest.raises(
        ValueError, match=r"missing \(dataset, model, repeat, fold\) rows: \(d0, m1, 1, 7\)\."
    ):
        pr.paired_ttest(holed)


# ------------------------------------------------------------ 14: NumPy integers


def test_numpy_integers_are_accepted(rng):
    table = random_table(rng, models=2, folds=1, datasets=8)
    plain = pr.bayes_signed_rank(table, n_samples=100, seed=3).collect()
    numpy = pr.bayes_signed_rank(table, n_samples=np.int64(100), seed=np.int64(3)).collect()
    assert numpy.equals(plain)
    with pytest.raises(TypeError, match="n_samples"):
        pr.bayes_signed_rank(table, n_samples=100.0)  # type: ignore[arg-type]  # on purpose
    with pytest.raises(ValueError, match="n_samples"):
        pr.bayes_signed_rank(table, n_samples=np.int32(0))


# ------------------------------------------------------------ repeated hold-out


def hold_out(rng: np.random.Generator) -> pl.DataFrame:
    """Eight repeats of one random 2/3 – 1/3 split: one fold per repeat."""
    table = random_table(rng, models=2, folds=8)
    return table.with_columns(repeat=pl.col("fold"), fold=pl.lit(0, dtype=pl.Int64))


def test_repeated_hold_out_needs_test_train_ratio(rng):
    table = hold_out(rng)
    for test in (pr.paired_ttest, pr.bayes_ttest):
        with pytest.raises(ValueError, match=r"hold-out.*test_train_ratio"):
            test(table)
        with pytest.raises(pl.exceptions.ComputeError, match="test_train_ratio"):
            test(table.lazy()).collect()


def test_repeated_hold_out_is_the_corrected_resampled_t(rng):
    table = hold_out(rng)
    row = pr.paired_ttest(table, test_train_ratio=0.5).collect().row(0, named=True)
    wide = table.pivot(on="model", index="repeat", values="auc").sort("repeat")
    d = (wide["m0"] - wide["m1"]).to_numpy()
    t = d.mean() / math.sqrt((1 / 8 + 0.5) * d.var(ddof=1))  # Nadeau & Bengio (2003)
    assert (row["n"], row["df"]) == (8, 7)
    assert row["statistic"] == pytest.approx(t, rel=1e-10)
    assert row["p_value"] == pytest.approx(2 * stats.t.sf(abs(t), 7), rel=1e-10)
    bayes = pr.bayes_ttest(table, test_train_ratio=0.5, rope=0.0).collect().row(0, named=True)
    scale = math.sqrt((1 / 8 + 0.5) * d.var(ddof=1))
    assert bayes["p_a_higher"] == pytest.approx(stats.t.sf(0, 7, d.mean(), scale), rel=1e-10)
    plain = pr.paired_ttest(table, correction=False).collect()
    assert plain["statistic"][0] == pytest.approx(stats.ttest_rel(wide["m0"], wide["m1"])[0])
