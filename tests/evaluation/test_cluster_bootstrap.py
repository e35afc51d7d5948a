"""pr.bootstrap(cluster=): replicates of whole clusters (issue 36).

Oracles: the unclustered bootstrap (every sample its own cluster must give it exactly),
the drawn log itself (every drawn cluster whole, each stratum's clusters drawn as many
times as it holds), and Obuchowski's (1997) variance of the AUC over clusters
(``tests.oracles.obuchowski_variance``, a direct transcription of the paper).
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polaroc as pr
from polaroc.evaluation.resample import REPLICATE, resample
from tests.metrics.test_multiclass import long_log, wide_scores
from tests.oracles import delong_variance, obuchowski_variance

BY = ["model", "fold"]


def paired_log(rng: np.random.Generator, n: int = 80) -> pl.DataFrame:
    """Two models scoring the same samples in two folds; ``uid`` a one-to-one id per sample."""
    parts = []
    for fold in (0, 1):
        label = rng.random(n) < 0.4
        for model, shift in (("a", 1.0), ("b", 0.5)):
            score = rng.normal(size=n) + shift * label
            parts.append(
                pl.DataFrame(
                    {"model": model, "fold": fold, "sample": np.arange(n), "score": score,
                     "label": label}
                )
            )  # fmt: skip
    # a cluster id equal to the sample up to naming: numbered backwards, as strings
    uid = pl.format("p{}-{}", "fold", pl.lit(n) - pl.col("sample"))
    return pl.concat(parts).with_columns(uid=uid, patient=pl.col("sample") // 4)


def clustered_log(seed: int, n_clusters: int = 60, size: int = 5) -> pl.DataFrame:
    """Clusters of ``size`` samples sharing a random effect; most clusters of one label."""
    rng = np.random.default_rng(seed)
    cluster = np.repeat(np.arange(n_clusters), size)
    prevalence = np.where(rng.random(n_clusters) < 0.5, 0.15, 0.85)[cluster]
    label = rng.random(cluster.size) < prevalence
    effect = rng.normal(0.0, 1.0, n_clusters)[cluster]
    score = label + effect + rng.normal(0.0, 0.6, cluster.size)
    return pl.DataFrame(
        {"model": "m", "fold": 0, "sample": np.arange(cluster.size), "patient": cluster,
         "score": score, "label": label}
    )  # fmt: skip


def _close(a: pl.DataFrame, b: pl.DataFrame, mode: str) -> None:
    # the draws are identical; eagerly the plans sum alike, lazily only up to rounding
    if mode == "eager":
        assert_frame_equal(a, b)
    else:
        assert_frame_equal(a, b, check_exact=False, rel_tol=1e-12, abs_tol=0.0)


@pytest.mark.parametrize("column", ["uid", "sample"])
def test_singleton_clusters_give_the_unclustered_bootstrap(run, mode, rng, column):
    log = paired_log(rng)
    metrics = ["auc", "error", "brier"]
    plain = run(log, lambda f: pr.bootstrap(f, metrics=metrics, n_boot=60, seed=4))
    clustered = run(
        log, lambda f: pr.bootstrap(f, metrics=metrics, n_boot=60, seed=4, cluster=column)
    )
    _close(plain, clustered, mode)


def test_singleton_clusters_multiclass(rng):
    # a multiclass sample's class rows are one unit, clustered or not
    parts = {("m", fold): wide_scores(rng, 90, 3) for fold in (0, 1)}
    log = long_log(parts).with_columns(uid=pl.col("sample") * 3 + 1)
    plain = pr.bootstrap(log, n_boot=40, seed=2).collect()
    clustered = pr.bootstrap(log, n_boot=40, seed=2, cluster="uid").collect()
    assert_frame_equal(plain, clustered)
    # the same rows drawn (their new ids depend on the order the strata come in)
    log = log.with_columns(orig=pl.col("sample"))
    drawn = [
        resample(log, by=BY, label="label", sample="sample", n_boot=10, seed=3, **kw)
        .collect()
        .drop("sample")
        .sort(*BY, REPLICATE, "orig", "class", "score")
        for kw in ({}, {"cluster": "uid"})
    ]
    assert_frame_equal(drawn[0], drawn[1].select(drawn[0].columns))


def test_replicates_hold_whole_clusters(rng):
    log = paired_log(rng, n=60).with_columns(orig=pl.col("sample"))
    # clusters of each kind: positives only, negatives only, both
    patient = pl.col("patient")
    log = log.with_columns(label=pl.when(patient < 4).then(patient % 2 == 0).otherwise("label"))
    drawn = resample(
        log, by=BY, label="label", sample="sample", n_boot=25, seed=9, shared=["model"],
        cluster="patient",
    ).collect()  # fmt: skip
    # every drawn row is the original row of its (model, fold, orig sample)
    back = drawn.join(log, on=[*BY, "orig"], suffix="_log")
    assert back.height == drawn.height
    assert (back["score"] == back["score_log"]).all()
    assert (back["patient"] == back["patient_log"]).all()
    # a cluster drawn t times brings each of its samples t times: t per (replicate, cluster)
    size = log.group_by(*BY, "patient").agg(pl.col("orig").n_unique().alias("size"))
    per_sample = drawn.group_by(*BY, REPLICATE, "patient", "orig").len()
    per_cluster = per_sample.group_by(*BY, REPLICATE, "patient").agg(
        pl.col("len").min().alias("t"), pl.col("len").max().alias("t_max"), pl.len().alias("k")
    )
    checked = per_cluster.join(size, on=[*BY, "patient"])
    assert (checked["t"] == checked["t_max"]).all()
    assert (checked["k"] == checked["size"]).all()
    # each stratum (the labels a cluster holds) draws as many clusters as it has
    labels = pl.col("label").unique().sort().cast(pl.String).str.join("+")
    stratum = log.group_by(*BY, "patient").agg(labels.alias("stratum"))
    have = stratum.group_by(*BY, "stratum").len("clusters")
    drawn_per = (
        checked.join(stratum, on=[*BY, "patient"])
        .group_by(*BY, REPLICATE, "stratum")
        .agg(pl.col("t").sum())
    )
    both = drawn_per.join(have, on=[*BY, "stratum"])
    assert both.height == drawn_per.height
    assert (both["t"] == both["clusters"]).all()
    assert set(stratum["stratum"]) >= {"false", "true", "false+true"}
    # the two models draw the same clusters; sample ids are unique within a group
    a = checked.filter(model="a").drop("model").sort("fold", REPLICATE, "patient")
    b = checked.filter(model="b").drop("model").sort("fold", REPLICATE, "patient")
    assert a.equals(b)
    assert drawn.select(*BY, "sample").is_unique().all()


@pytest.mark.parametrize("seed", [1, 2])
def test_cluster_se_matches_obuchowski(seed):
    # 60 clusters of 5 samples sharing a random effect: Obuchowski's SE is ~1.6× DeLong's.
    # The cluster bootstrap SE (2000 replicates: Monte Carlo error ~1.6 %) estimates it up
    # to O(1/I); measured ratio 0.88–1.00 over 11 data sets.
    log = clustered_log(seed)
    out = pr.bootstrap(log, n_boot=2000, seed=5, cluster="patient").collect()
    naive = pr.bootstrap(log, n_boot=2000, seed=5).collect()
    auc, variance = obuchowski_variance(log["score"], log["label"], log["patient"])
    delong = math.sqrt(delong_variance(log["score"], log["label"]))
    assert out["estimate"].item() == pytest.approx(auc, rel=1e-12)
    assert out["se"].item() == pytest.approx(math.sqrt(variance), rel=0.15)
    assert out["se"].item() > 1.3 * delong
    assert naive["se"].item() == pytest.approx(delong, rel=0.1)


def test_cluster_column_errors(run, rng):
    log = paired_log(rng, n=20)

    def call(column: str):
        return lambda f: pr.bootstrap(f, n_boot=5, seed=1, cluster=column)

    with pytest.raises(ValueError, match=r"cluster='patients' is not a column.*patient"):
        run(log, call("patients"))
    nulls = log.with_columns(patient=pl.when(pl.col("sample") == 3).then(None).otherwise("patient"))
    with pytest.raises(ValueError, match=r"cluster='patient'.*null values.*\(0, 3, a\)"):
        run(nulls, call("patient"))
    # the same sample in two clusters: across models (paired) and across class rows
    split = log.with_columns(
        patient=pl.when((pl.col("model") == "b") & (pl.col("sample") == 5))
        .then(99)
        .otherwise("patient")
    )
    with pytest.raises(ValueError, match=r"samples \(fold, sample\) in more than one .*\(0, 5\)"):
        run(split, call("patient"))
    with pytest.raises(TypeError, match="cluster must be a column name"):
        pr.bootstrap(log, n_boot=5, seed=1, cluster=3)  # type: ignore[arg-type]


def test_replicates_that_lose_a_class_are_not_counted(rng):
    # class 2 is held by one cluster only, which also holds a class-1 sample (a mixed
    # cluster): the replicates that do not draw it have two classes, and M on them
    # would be another statistic; they are null and left out of n_boot
    y, x = wide_scores(rng, 60, 3)
    y = np.where(y == 2, 1, y)
    y[:2] = 2
    log = long_log({("m", 0): (y, x)})
    patient = pl.when(pl.col("sample") < 3).then(0).otherwise(pl.col("sample") // 2 + 1)
    log = log.with_columns(patient=patient)
    out = pr.bootstrap(log, n_boot=200, seed=1, cluster="patient").collect()
    drawn = resample(
        log, by=BY, label="label", sample="sample", n_boot=200, seed=1, shared=["model"],
        cluster="patient",
    ).collect()  # fmt: skip
    with_two = drawn.filter(pl.col("label") == 2)[REPLICATE].n_unique()
    assert 0 < with_two < 200
    assert out["n_boot"].item() == with_two
