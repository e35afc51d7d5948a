"""Binary metrics against independent oracles: pair counts, scikit-learn, the papers."""

from __future__ import annotations

from fractions import Fraction
from math import sqrt

import numpy as np
import polars as pl
import pytest
from sklearn.metrics import confusion_matrix, roc_auc_score

import polaroc as pr
from tests.oracles import delong_variance, pair_auc


def grouped_log(rng: np.random.Generator, groups: int = 6, n: int = 200, ties: bool = False):
    g = np.repeat(np.arange(groups), n)
    label = rng.random(g.size) < 0.4
    score = rng.normal(size=g.size) + label * rng.uniform(0, 2, size=groups)[g]
    if ties:
        score = np.round(score, 0)
    return pl.DataFrame({"g": g, "score": score, "label": label})


def per_group(df: pl.DataFrame, fn) -> dict[int, float]:
    return {
        key[0]: fn(part["score"].to_numpy(), part["label"].to_numpy())
        for key, part in df.partition_by("g", as_dict=True).items()
    }


def by_group(out: pl.DataFrame, column: str) -> dict[int, float]:
    return dict(zip(out["g"].to_list(), out[column].to_list(), strict=True))


@pytest.mark.parametrize("ties", [False, True])
def test_auc_matches_pair_count_and_sklearn(run, rng, ties):
    df = grouped_log(rng, ties=ties)
    out = run(
        df, lambda f: f.group_by("g").agg(pr.auc("score", "label"), pr.gini("score", "label"))
    )
    got = by_group(out, "auc")
    pairs = per_group(df, pair_auc)
    sk = per_group(df, lambda s, y: roc_auc_score(y, s))
    for g in pairs:
        assert got[g] == pytest.approx(pairs[g], abs=1e-12)
        assert got[g] == pytest.approx(sk[g], abs=1e-12)
    for g, gini in by_group(out, "gini").items():
        assert gini == pytest.approx(2 * pairs[g] - 1, abs=1e-12)


def test_auc_with_int_and_float32_scores(run):
    df = pl.DataFrame({"score": [3, 1, 2, 2, 5], "label": [1, 0, 0, 1, 1]})
    expected = pair_auc([3, 1, 2, 2, 5], [1, 0, 0, 1, 1])
    for dtype in (pl.Int64, pl.Int8, pl.UInt16, pl.Float32):
        cast = df.with_columns(pl.col("score").cast(dtype))
        out = run(cast, lambda f: f.select(pr.auc("score", "label")))
        assert out.item() == pytest.approx(expected, abs=1e-12)


def test_big_group_counts_do_not_overflow(rng):
    # 300,000 x 400,000 pairs: 1.2e11 > 2**32, where a UInt32 product would wrap.
    n_pos, n_neg = 300_000, 400_000
    label = np.r_[np.ones(n_pos, bool), np.zeros(n_neg, bool)]
    score = np.round(rng.normal(size=label.size) + 0.5 * label, 2)  # ties too
    df = pl.DataFrame({"score": score, "label": label})
    expected = roc_auc_score(label, score)
    got = df.select(
        pr.auc("score", "label"), pr.sauc("score", "label"), pr.auc_se("score", "label")
    )
    assert got["auc"].item() == pytest.approx(expected, abs=1e-12)
    assert 0.6 < got["sauc"].item() < 1  # finite, sensible: scores are not in [0, 1]
    assert 0 < got["auc_se"].item() < 0.01


def test_auc_in_over_broadcasts_group_value(run, rng):
    df = grouped_log(rng, groups=3, n=50)
    out = run(df, lambda f: f.with_columns(pr.auc("score", "label").over("g")))
    pairs = per_group(df, pair_auc)
    assert out.height == df.height
    for g, value in zip(out["g"], out["auc"], strict=True):
        assert value == pytest.approx(pairs[g], abs=1e-12)


def test_delong_se_matches_placement_formula(run, rng):
    df = grouped_log(rng, ties=True, n=120)
    out = run(df, lambda f: f.group_by("g").agg(pr.auc_se("score", "label", method="delong")))
    expected = per_group(df, lambda s, y: sqrt(delong_variance(s, y)))
    for g, se in by_group(out, "auc_se").items():
        assert se == pytest.approx(expected[g], rel=1e-10)


def test_hanley_mcneil_by_hand():
    # Wu & Flach's example: theta = 10/12, n+ = 3, n- = 4; eq. 10-12 in exact fractions.
    df = pl.DataFrame(
        {
            "score": [0.95, 0.86, 0.84, 0.89, 0.15, 0.13, 0.10],
            "label": [True, True, True, False, False, False, False],
        }
    )
    theta, n_pos, n_neg = Fraction(5, 6), 3, 4
    q1 = theta / (2 - theta)  # 5/7
    q2 = 2 * theta**2 / (1 + theta)  # 25/33
    var = (theta * (1 - theta) + (n_pos - 1) * (q1 - theta**2) + (n_neg - 1) * (q2 - theta**2)) / (
        n_pos * n_neg
    )
    got = df.select(pr.auc_se("score", "label", method="hanley_mcneil")).item()
    assert got == pytest.approx(sqrt(float(var)), rel=1e-12)


def test_auc_se_rejects_unknown_method():
    with pytest.raises(ValueError, match="'delong' or 'hanley_mcneil'"):
        pr.auc_se("score", "label", method="bootstrap")


def test_delong_se_needs_two_of_each_class():
    df = pl.DataFrame({"score": [0.9, 0.2, 0.1], "label": [True, False, False]})
    assert df.select(pr.auc_se("score", "label")).item() is None


@pytest.mark.parametrize("threshold", [0.0, 0.3, 0.5, 0.77, 2.0])
def test_confusion_and_rates_match_sklearn(run, rng, threshold):
    score = np.round(rng.random(300), 2)
    label = rng.random(300) < 0.3
    df = pl.DataFrame({"score": score, "label": label})
    tn, fp, fn, tp = confusion_matrix(label, score >= threshold, labels=[False, True]).ravel()
    out = run(
        df,
        lambda f: f.select(
            pr.confusion("score", "label", threshold=threshold),
            pr.accuracy("score", "label", threshold=threshold),
            pr.error("score", "label", threshold=threshold),
            pr.sensitivity("score", "label", threshold=threshold),
            pr.specificity("score", "label", threshold=threshold),
            pr.ppv("score", "label", threshold=threshold),
            pr.npv("score", "label", threshold=threshold),
            pr.cost("score", "label", threshold=threshold, cost_fp=2.0, cost_fn=7.0),
        ),
    )
    row = out.unnest("confusion").row(0, named=True)
    assert (row["tp"], row["fp"], row["tn"], row["fn"]) == (tp, fp, tn, fn)
    assert out.schema["confusion"] == pl.Struct(
        {"tp": pl.Int64, "fp": pl.Int64, "tn": pl.Int64, "fn": pl.Int64}
    )

    def ratio(a, b):
        return a / b if b else None

    assert row["accuracy"] == pytest.approx((tp + tn) / 300)
    assert row["error"] == pytest.approx((fp + fn) / 300)
    assert row["sensitivity"] == pytest.approx(ratio(tp, tp + fn))
    assert row["specificity"] == pytest.approx(ratio(tn, tn + fp))
    assert row["ppv"] == pytest.approx(ratio(tp, tp + fp))
    assert row["npv"] == pytest.approx(ratio(tn, tn + fn))
    assert row["cost"] == pytest.approx(2.0 * fp + 7.0 * fn)


def test_cost_normalized_and_threshold_expression():
    df = pl.DataFrame({"score": [0.9, 0.8, 0.3, 0.1], "label": [1, 0, 1, 0]})
    got = df.select(
        pr.cost("score", "label", cost_fp=1.0, cost_fn=5.0, normalize=True),
        pr.sensitivity("score", "label", threshold=pl.col("score").median()).alias("sens"),
    )
    assert got["cost"].item() == pytest.approx(6.0 / 4)
    assert got["sens"].item() == pytest.approx(0.5)  # median 0.55: only 0.9 of (0.9, 0.3)


def test_rates_without_denominator_are_null():
    df = pl.DataFrame({"score": [0.1, 0.2], "label": [False, False]})
    out = df.select(
        pr.sensitivity("score", "label"), pr.ppv("score", "label"), pr.specificity("score", "label")
    )
    assert out.row(0) == (None, None, 1.0)
