"""roc_ci and coords_ci with cluster=: bands from replicates of whole clusters (issue 36).

Oracles: the unclustered band (every sample its own cluster gives it exactly) and the
drawn rows of :func:`polaroc.metrics.draws.stratified_draws` (every drawn cluster whole,
each stratum's clusters drawn as many times as it holds).
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polaroc as pr
from polaroc.metrics.draws import REPLICATE, stratified_draws


def log_of(rng: np.random.Generator, n: int = 90) -> pl.DataFrame:
    parts = []
    for fold in (0, 1):
        label = rng.random(n) < 0.4
        patient = np.arange(n) // 3
        effect = rng.normal(size=n // 3 + 1)[patient]
        for model, shift in (("a", 1.0), ("b", 0.4)):
            score = rng.normal(size=n) + shift * label + effect
            parts.append(
                pl.DataFrame(
                    {"model": model, "fold": fold, "sample": np.arange(n), "patient": patient,
                     "score": score, "label": label}
                )
            )  # fmt: skip
    uid = pl.format("s{}", pl.lit(10_000) - pl.col("sample"))  # one-to-one, other order
    return pl.concat(parts).with_columns(uid=uid)


CALLS = {
    "roc_ci": lambda f, **kw: pr.roc_ci(f, n_boot=50, seed=3, **kw),
    "roc_ci_sens": lambda f, **kw: pr.roc_ci(f, sensitivities=[0.2, 0.8], n_boot=50, seed=3, **kw),
    "coords_ci": lambda f, **kw: pr.coords_ci(f, [-0.5, 0.0, 0.7], n_boot=50, seed=3, **kw),
}


@pytest.mark.parametrize("name", list(CALLS))
@pytest.mark.parametrize("column", ["uid", "sample"])
def test_singleton_clusters_give_the_unclustered_band(run, rng, name, column):
    log = log_of(rng)
    call = CALLS[name]
    plain = run(log, call)
    clustered = run(log, lambda f: call(f, cluster=column))
    assert_frame_equal(plain, clustered)


def test_clusters_widen_the_band(rng):
    log = log_of(rng, n=150)
    plain = pr.roc_ci(log, specificities=[0.5], n_boot=400, seed=1).collect()
    clustered = pr.roc_ci(log, specificities=[0.5], n_boot=400, seed=1, cluster="patient")
    width = (pl.col("high") - pl.col("low")).mean()
    assert clustered.collect().select(width).item() > plain.select(width).item()


def test_drawn_rows_are_whole_clusters(rng):
    log = log_of(rng, n=60).filter(model="a")
    patient = pl.col("patient")
    log = log.with_columns(label=pl.when(patient < 4).then(patient % 2 == 0).otherwise("label"))
    rows = log.lazy().with_columns(_pr_positive=pl.col("label"))
    strata = ["fold", "_pr_positive"]
    drawn = stratified_draws(rows, strata, ["fold", "sample"], 30, 11, cluster="patient")
    drawn = drawn.collect()
    assert set(drawn.columns) == {*log.columns, "_pr_positive", REPLICATE}
    per_sample = drawn.group_by("fold", REPLICATE, "patient", "sample").len()
    per_cluster = per_sample.group_by("fold", REPLICATE, "patient").agg(
        t=pl.col("len").min(), t_max=pl.col("len").max(), k=pl.len()
    )
    size = log.group_by("fold", "patient").agg(size=pl.col("sample").n_unique())
    checked = per_cluster.join(size, on=["fold", "patient"])
    assert (checked["t"] == checked["t_max"]).all()
    assert (checked["k"] == checked["size"]).all()
    kind = log.group_by("fold", "patient").agg(
        kind=pl.col("label").unique().sort().cast(pl.String).str.join("+")
    )
    have = kind.group_by("fold", "kind").len("clusters")
    drawn_per = (
        checked.join(kind, on=["fold", "patient"])
        .group_by("fold", REPLICATE, "kind")
        .agg(pl.col("t").sum())
    )
    both = drawn_per.join(have, on=["fold", "kind"])
    assert both.height == drawn_per.height == 3 * 2 * 30
    assert (both["t"] == both["clusters"]).all()


def test_cluster_errors(run, rng):
    log = log_of(rng, n=12)
    with pytest.raises(ValueError, match="cluster='who' is not a column"):
        run(log, lambda f: pr.roc_ci(f, n_boot=5, seed=1, cluster="who"))
    varying = log.with_columns(patient=pl.when(pl.col("model") == "a").then(0).otherwise("patient"))
    with pytest.raises(ValueError, match="in more than one cluster"):
        run(varying, lambda f: pr.coords_ci(f, [0.0], n_boot=5, seed=1, cluster="patient"))
    nulls = log.with_columns(patient=pl.lit(None, pl.Int64))
    with pytest.raises(ValueError, match="null values"):
        run(nulls, lambda f: pr.roc_ci(f, n_boot=5, seed=1, cluster="patient"))
