"""Hand & Till's M with DeLong's variance in ``pr.evaluate`` (issue 36).

Oracles: ``tests.oracles.hand_till_m_variance`` (every pair of samples, the structural
components by brute force), ``tests.oracles.delong_variance`` for two classes, and a
coverage simulation against M's closed form under a normal model.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

import polaroc as pr
from tests.oracles import delong_variance, hand_till_m_variance

ROWS = ("sample", "class", "label", "score")


def multiclass_log(
    rng: np.random.Generator,
    *,
    classes: int = 4,
    n: int = 25,
    folds: int = 2,
    repeats: int = 1,
    datasets: int = 1,
    drop: float = 0.15,
    digits: int = 1,
) -> pl.DataFrame:
    """Samples with every class's score (some non-own rows dropped), rounded (ties)."""
    rows = []
    for d in range(datasets):
        for r in range(repeats):
            for fold in range(folds):
                labels = rng.integers(0, classes, n)
                for s, y in enumerate(labels):
                    for c in range(classes):
                        if c != y and rng.random() < drop:
                            continue  # a missing class row: fewer directions
                        x = round(float(rng.normal(float(c == y))), digits)
                        key = {"dataset": f"d{d}", "repeat": r, "fold": fold, "sample": s}
                        rows.append({**key, "class": c, "label": int(y), "score": x})
    return pl.DataFrame(rows).with_columns(model=pl.lit("m"))


def oracle(group: pl.DataFrame) -> tuple[float, float]:
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a one-sample label: NaN
        return hand_till_m_variance(*(group[c].to_list() for c in ROWS))


def assert_oracle(out: pl.DataFrame, log: pl.DataFrame, keys: list[str]) -> None:
    assert out.height > 0
    for row in out.iter_rows(named=True):
        group = log.filter(*(pl.col(k) == row[k] for k in keys))
        m, var = oracle(group)
        assert row["auc"] == pytest.approx(m, abs=1e-12)
        if math.isnan(var):  # a label with one sample: DeLong's needs two of each
            assert row["auc_se_delong"] is None
            continue
        assert row["auc_se_delong"] == pytest.approx(math.sqrt(var), rel=1e-9, abs=1e-15)
        half = 1.959963984540054 * math.sqrt(var)
        assert row["auc_ci_low"] == pytest.approx(max(m - half, 0.0), abs=1e-9)
        assert row["auc_ci_high"] == pytest.approx(min(m + half, 1.0), abs=1e-9)


@pytest.mark.parametrize("classes", [3, 4, 5])
def test_evaluate_se_of_m_equals_the_brute_force(run, rng, classes):
    log = multiclass_log(rng, classes=classes, folds=2, repeats=2, datasets=2)
    out = run(log, lambda f: pr.evaluate(f))
    assert_oracle(out, log, ["dataset", "repeat", "fold"])


def test_pooled_groups_join_a_sample_by_its_fold(run, rng):
    log = multiclass_log(rng, classes=3, folds=3)
    out = run(log, lambda f: pr.evaluate(f, by=("model",)))
    # pooled over folds, a sample is (fold, sample): the oracle's sample id is the pair
    keyed = log.with_columns(sample=pl.format("{}-{}", "fold", "sample"))
    assert_oracle(out, keyed, ["model"])


def test_bounded_batches_give_the_same_se(rng):
    log = multiclass_log(rng, classes=3, folds=6, n=20)
    plain = pr.evaluate(log).collect().sort("fold")
    batched = pr.evaluate(log.lazy(), max_rows=150).collect().sort("fold")
    assert batched["auc_se_delong"].to_list() == pytest.approx(plain["auc_se_delong"].to_list())
    assert_oracle(batched, log, ["fold"])


@settings(max_examples=25, deadline=None)
@given(
    classes=st.integers(3, 5),
    n=st.integers(4, 14),
    drop=st.sampled_from([0.0, 0.3]),
    seed=st.integers(0, 2**32 - 1),
)
def test_any_small_log_equals_the_brute_force(classes, n, drop, seed):
    log = multiclass_log(np.random.default_rng(seed), classes=classes, n=n, folds=1, drop=drop)
    out = pr.evaluate(log).collect()
    row = out.row(0, named=True)
    if log["label"].n_unique() < 2:  # one label: a degenerate group, null (the contract)
        assert row["auc"] is None
        assert row["auc_se_delong"] is None
        return
    m, var = oracle(log)
    assert row["auc"] == pytest.approx(m, abs=1e-12)
    if row["auc_se_delong"] is None:  # a label with fewer than two samples
        counts = log.group_by("label").agg(pl.col("sample").n_unique())["sample"]
        assert counts.min() < 2 or log["label"].n_unique() < 2
    else:
        assert row["auc_se_delong"] ** 2 == pytest.approx(var, rel=1e-9, abs=1e-15)


def binary_with_classes(rng: np.random.Generator, n: int = 60) -> pl.DataFrame:
    y = rng.random(n) < 0.4
    x = np.round(rng.normal(y.astype(float)), 1)
    return pl.DataFrame({"model": "m", "fold": 0, "sample": np.arange(n), "score": x, "label": y})


def test_two_classes_one_direction_is_delongs_variance(run, rng):
    log = binary_with_classes(rng)
    expected = delong_variance(log["score"].to_numpy(), log["label"].to_numpy())
    positive_rows = log.with_columns(**{"class": pl.lit(True)})
    out = run(positive_rows, lambda f: pr.evaluate(f)).row(0, named=True)
    assert out["auc_se_delong"] ** 2 == pytest.approx(expected, rel=1e-12)
    # complementary scores: both directions equal, M's exact SE is DeLong's again
    both = pl.concat(
        [
            positive_rows,
            log.with_columns(**{"class": pl.lit(False)}, score=1.0 - pl.col("score")),
        ]
    )
    out = run(both, lambda f: pr.evaluate(f)).row(0, named=True)
    assert out["auc_se_delong"] ** 2 == pytest.approx(expected, rel=1e-9)


def test_two_classes_without_sample_column(rng):
    """Without sample ids a group of two class blocks cannot join a sample's rows: null."""
    log = binary_with_classes(rng)
    both = pl.concat(
        [
            log.with_columns(**{"class": pl.lit(True)}),
            log.with_columns(**{"class": pl.lit(False)}, score=1.0 - pl.col("score")),
        ]
    ).drop("sample")
    assert pr.evaluate(both).collect()["auc_se_delong"].to_list() == [None]
    one = log.drop("sample").with_columns(**{"class": pl.lit(True)})
    expected = delong_variance(log["score"].to_numpy(), log["label"].to_numpy())
    assert pr.evaluate(one).collect()["auc_se_delong"].item() ** 2 == pytest.approx(expected)


def test_weighted_evaluate_has_no_se(rng):
    log = multiclass_log(rng, classes=3, folds=1).with_columns(w=pl.lit(2.0))
    assert pr.evaluate(log, weight="w").collect()["auc_se_delong"].to_list() == [None]


# ------------------------------------------------------------------ coverage


def m_coverage(
    folds: int = 400, per_class: int = 30, classes: int = 3, delta: float = 1.0, seed: int = 36
) -> float:
    """Share of ``evaluate``'s 95 % intervals of M covering the true M (one log of ``folds``).

    Every sample has every class's score; the class-i score of a label-j sample is
    N(δ·[i = j], 1), so each direction A(i|j) = P(X > Y) with X − Y ~ N(δ, 2):
    M = Φ(δ/√2) exactly (Hand & Till 2001, eq. 7, as the mean of equal terms).
    """
    rng = np.random.default_rng(seed)
    n = per_class * classes
    label = np.tile(np.repeat(np.arange(classes), per_class), folds)
    fold = np.repeat(np.arange(folds), n)
    sample = np.tile(np.arange(n), folds)
    scores = rng.normal(size=(folds * n, classes)) + delta * np.eye(classes)[label]
    log = pl.DataFrame(
        {
            "model": "m",
            "fold": np.repeat(fold, classes),
            "sample": np.repeat(sample, classes),
            "label": np.repeat(label, classes),
            "class": np.tile(np.arange(classes), folds * n),
            "score": scores.ravel(),
        }
    )
    truth = float(norm.cdf(delta / math.sqrt(2.0)))
    out = pr.evaluate(log).collect()
    covered = (pl.col("auc_ci_low") <= truth) & (truth <= pl.col("auc_ci_high"))
    return float(out.select(covered.mean()).item())


def test_interval_of_m_covers_the_true_m():
    share = m_coverage()
    print(f"coverage of M's 95% DeLong interval over 400 folds: {share:.4f}")
    assert 0.93 <= share <= 0.97
