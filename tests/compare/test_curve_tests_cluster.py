"""bootstrap_test(cluster=): the spread of AUC_a − AUC_b over replicates of whole clusters.

Oracles: the unclustered test (every sample its own cluster gives it exactly, same seed),
scikit-learn's weighted AUC on each replicate's multiplicities, and Obuchowski's (1997)
variance over clusters of the paired difference, written below with NumPy loops.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from sklearn.metrics import roc_auc_score

import polaroc as pr
from polaroc.core.replicates import cluster_draws, weighted_replicate_aucs
from tests.compare.test_curve_tests import two_models


def clustered_pair(seed: int, n_clusters: int = 60, size: int = 5) -> pl.DataFrame:
    """Two models; a cluster's samples share each model's random effect, mostly one label."""
    rng = np.random.default_rng(seed)
    cluster = np.repeat(np.arange(n_clusters), size)
    prevalence = np.where(rng.random(n_clusters) < 0.5, 0.15, 0.85)[cluster]
    label = rng.random(cluster.size) < prevalence
    parts = []
    for model, shift in (("a", 1.2), ("b", 0.8)):
        effect = rng.normal(0.0, 1.0, n_clusters)[cluster]
        score = shift * label + effect + rng.normal(0.0, 0.6, cluster.size)
        parts.append(
            pl.DataFrame(
                {"model": model, "fold": 0, "sample": np.arange(cluster.size),
                 "patient": cluster, "score": score, "label": label}
            )
        )  # fmt: skip
    return pl.concat(parts)


def _placements(score: np.ndarray, positive: np.ndarray) -> tuple[float, np.ndarray]:
    """The AUC and each sample's DeLong component (V₁₀ for positives, V₀₁ for negatives)."""
    x, y = score[positive], score[~positive]
    kernel = (x[:, None] > y[None, :]) + 0.5 * (x[:, None] == y[None, :])
    v = np.empty(score.size)
    v[positive] = kernel.mean(axis=1)
    v[~positive] = kernel.mean(axis=0)
    return float(kernel.mean()), v


def paired_cluster_variance(a, b, positive, clusters) -> float:
    """Obuchowski (1997) applied to the components of AUC_a − AUC_b, cluster by cluster."""
    theta_a, v_a = _placements(a, positive)
    theta_b, v_b = _placements(b, positive)
    theta, d = theta_a - theta_b, v_a - v_b
    big_m, big_n = int(positive.sum()), int((~positive).sum())
    s10 = s01 = s11 = 0.0
    i10 = i01 = i_all = 0
    for c in np.unique(clusters):
        inside = clusters == c
        p, q = inside & positive, inside & ~positive
        e10 = d[p].sum() - p.sum() * theta
        e01 = d[q].sum() - q.sum() * theta
        s10, s01, s11 = s10 + e10**2, s01 + e01**2, s11 + e10 * e01
        i10, i01, i_all = i10 + p.any(), i01 + q.any(), i_all + 1
    s10 *= i10 / ((i10 - 1) * big_m)
    s01 *= i01 / ((i01 - 1) * big_n)
    s11 *= i_all / (i_all - 1)
    return s10 / big_m + s01 / big_n + 2 * s11 / (big_m * big_n)


@pytest.mark.parametrize("paired", [True, False])
@pytest.mark.parametrize("by", [None, ["fold"]])
def test_singleton_clusters_give_the_unclustered_test(run, rng, paired, by):
    # a one-to-one id numbered against the sample order, unique across folds
    log = two_models(rng, n=90).with_columns(uid=pl.col("fold") * 1000 + 500 - pl.col("sample"))

    def call(f, **kw):
        return pr.bootstrap_test(f, "a", "b", n_boot=300, seed=6, paired=paired, by=by, **kw)

    plain = run(log, call)
    for column in ("uid", "sample") if by else ("uid",):
        assert_frame_equal(plain, run(log, lambda f, c=column: call(f, cluster=c)))


def test_weighted_replicate_aucs_equal_sklearn(rng):
    score = np.round(rng.normal(size=40), 1)
    positive = rng.random(40) < 0.5
    patient = np.arange(40) // 4
    positive[:4], positive[4:8] = True, False  # a cluster of each label alone
    # each cluster's stratum (0 positives only, 1 negatives only, 2 both) and number in it
    kind = np.full(40, 2)
    unit = np.zeros(40, dtype=np.int64)
    counters = [0, 0, 0]
    for c in np.unique(patient):
        inside = patient == c
        code = 0 if positive[inside].all() else 1 if not positive[inside].any() else 2
        kind[inside], unit[inside] = code, counters[code]
        counters[code] += 1
    assert min(counters) > 0
    times = cluster_draws(np.random.default_rng(1), kind, unit, 25)
    assert times.shape == (25, 40)
    for code in (0, 1, 2):
        n_clusters = len(np.unique(unit[kind == code]))
        first = [np.flatnonzero((kind == code) & (unit == k))[0] for k in range(n_clusters)]
        assert (times[:, first].sum(axis=1) == n_clusters).all()
    for c in np.unique(patient):  # a cluster's samples come together
        inside = times[:, patient == c]
        assert (inside == inside[:, :1]).all()
    got = weighted_replicate_aucs(score, positive, times)
    for b in range(25):
        expected = roc_auc_score(positive, score, sample_weight=times[b])
        assert got[b] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("seed", [1, 2])
def test_cluster_sd_matches_obuchowski_of_the_difference(seed):
    # 60 clusters of 5: the clustered SD of the difference is ~1.5–1.65× the paired
    # DeLong one (measured on 6 data sets); the cluster bootstrap's SD (2000 replicates)
    # came within 4 % of Obuchowski's there
    log = clustered_pair(seed)
    out = pr.bootstrap_test(log, "a", "b", n_boot=2000, seed=5, cluster="patient").collect()
    a, b = log.filter(model="a"), log.filter(model="b")
    args = (a["score"].to_numpy(), b["score"].to_numpy(), a["label"].to_numpy())
    clustered = math.sqrt(paired_cluster_variance(*args, a["patient"].to_numpy()))
    naive = math.sqrt(paired_cluster_variance(*args, np.arange(a.height)))
    assert out["sd_diff"].item() == pytest.approx(clustered, rel=0.12)
    assert out["sd_diff"].item() > 1.3 * naive
    assert out["n_boot"].item() == 2000


def test_cluster_errors(run, rng):
    log = two_models(rng, n=20).with_columns(patient=pl.col("sample") // 2)
    with pytest.raises(ValueError, match="cluster='who' is not a column"):
        run(log, lambda f: pr.bootstrap_test(f, "a", "b", n_boot=5, seed=1, cluster="who"))
    varying = log.with_columns(
        patient=pl.when(pl.col("model") == "b").then(pl.col("patient") + 1).otherwise("patient")
    )
    with pytest.raises(ValueError, match=r"cluster='patient'.*in more than one cluster"):
        run(varying, lambda f: pr.bootstrap_test(f, "a", "b", n_boot=5, seed=1, cluster="patient"))
    no_sample = log.drop("sample")
    with pytest.raises(ValueError, match="needs the 'sample' column"):
        pr.bootstrap_test(no_sample, "a", "b", n_boot=5, seed=1, paired=False, cluster="patient")
