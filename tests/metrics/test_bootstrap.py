"""pr.bootstrap: stratified, seeded, vectorised resampling of samples within groups."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

import polaroc as pr
from polaroc.evaluation.resample import REPLICATE, resample
from tests.metrics.test_multiclass import long_log, wide_scores
from tests.oracles import delong_variance

BY = ["model", "fold"]


def binary_log(rng, n: int, groups: int = 1, shift: float = 1.0) -> pl.DataFrame:
    g = np.repeat(np.arange(groups), n)
    label = rng.random(g.size) < 0.4
    score = rng.normal(size=g.size) + shift * label
    return pl.DataFrame({"model": "m", "fold": g, "score": score, "label": label})


def test_binary_bootstrap_se_agrees_with_delong(rng):
    # n = 3000 samples, 1000 replicates. The bootstrap SE's own Monte Carlo error is
    # about SE / sqrt(2 B) ≈ 2.2 %, and bootstrap and DeLong estimate the same variance
    # up to O(1/n); a 10 % tolerance is ~4.5 Monte Carlo standard errors.
    df = binary_log(rng, 3000)
    out = pr.bootstrap(df, n_boot=1000, seed=7).collect()
    delong = math.sqrt(delong_variance(df["score"], df["label"]))
    assert out["se"].item() == pytest.approx(delong, rel=0.10)
    assert out["n_boot"].item() == 1000
    assert out["estimate"].item() == df.select(pr.auc("score", "label")).item()
    assert out["ci_low"].item() < out["estimate"].item() < out["ci_high"].item()


def test_same_seed_same_replicates_other_seed_different(rng):
    df = binary_log(rng, 200, groups=2)
    runs = [
        resample(df, by=BY, label="label", sample=None, n_boot=20, seed=s).collect(engine=e)
        for s, e in [(3, "streaming"), (3, "in-memory"), (4, "streaming")]
    ]
    key = [*BY, REPLICATE, "score"]
    assert runs[0].sort(key).drop("sample").equals(runs[1].sort(key).drop("sample"))
    assert not runs[0].sort(key).drop("sample").equals(runs[2].sort(key).drop("sample"))
    a = pr.bootstrap(df, metrics=["auc", "sauc"], n_boot=50, seed=3).collect()
    b = pr.bootstrap(df, metrics=["auc", "sauc"], n_boot=50, seed=3).collect(engine="in-memory")
    assert a.select(*BY, "metric").equals(b.select(*BY, "metric"))
    # identical draws; the summaries agree up to floating-point summation order
    for name in ("estimate", "se", "ci_low", "ci_high"):
        assert a[name].to_list() == pytest.approx(b[name].to_list(), rel=1e-12)


def test_replicates_are_stratified_by_label(rng):
    df = binary_log(rng, 150, groups=2)
    drawn = resample(df, by=BY, label="label", sample=None, n_boot=30, seed=1).collect()
    counts = drawn.group_by(*BY, REPLICATE, "label").len()
    expected = df.group_by(*BY, "label").len()
    joined = counts.join(expected, on=[*BY, "label"], suffix="_orig")
    assert (joined["len"] == joined["len_orig"]).all()
    assert counts.height == 2 * 2 * 30
    # draws are with replacement: some samples repeat, some are left out
    per_replicate = drawn.group_by(*BY, REPLICATE).agg(pl.col("score").n_unique())
    assert (per_replicate["score"] < 150).all()


def test_multiclass_sample_rows_travel_together(rng):
    log = long_log({("m", 0): wide_scores(rng, 60, 3), ("m", 1): wide_scores(rng, 60, 3)})
    drawn = resample(log, by=BY, label="label", sample="sample", n_boot=10, seed=2).collect()
    original = log.group_by(*BY, "sample").agg(pl.col("score").sort_by("class"), pl.first("label"))
    copies = drawn.group_by(*BY, REPLICATE, "sample").agg(
        pl.col("score").sort_by("class"), pl.col("label").n_unique().alias("labels"), pl.len()
    )
    assert (copies["len"] == 3).all()
    assert (copies["labels"] == 1).all()
    assert copies.join(original, on=[*BY, "score"], how="anti").height == 0
    assert copies.group_by(*BY, REPLICATE).len()["len"].to_list() == [60] * 20


def test_models_on_the_same_samples_are_resampled_alike(rng):
    df = pl.concat(
        [binary_log(rng, 80, groups=2).with_columns(model=pl.lit(m)) for m in ("a", "b")]
    ).with_columns(sample=pl.int_range(pl.len()).over("model", "fold"))
    df = df.with_columns(
        original=pl.col("sample"), label=pl.col("label").first().over("fold", "sample")
    )
    drawn = resample(df, by=BY, label="label", sample="sample", n_boot=5, seed=0, shared=["model"])
    drawn = drawn.collect()
    picks = drawn.group_by(*BY, REPLICATE).agg(pl.col("original").sort())
    a, b = (picks.filter(model=m).drop("model").sort("fold", REPLICATE) for m in ("a", "b"))
    assert a.equals(b)
    independent = resample(df, by=BY, label="label", sample="sample", n_boot=5, seed=0).collect()
    picks = independent.group_by(*BY, REPLICATE).agg(pl.col("original").sort())
    a, b = (picks.filter(model=m).drop("model").sort("fold", REPLICATE) for m in ("a", "b"))
    assert not a.equals(b)


def test_multiclass_m_bootstrap_and_custom_statistic(run, rng):
    log = long_log({("m", 0): wide_scores(rng, 90, 4)})
    out = run(log, lambda f: pr.bootstrap(f, n_boot=100, seed=0))
    assert out["estimate"].item() == pytest.approx(pr.multiclass_auc(log).collect()["auc"].item())
    assert 0 < out["se"].item() < 0.1
    custom = run(
        log,
        lambda f: pr.bootstrap(
            f,
            metrics=["auc_ovr_macro", "sauc"],
            statistic=lambda frame, by: pr.multiclass_auc(frame, by=by),
            n_boot=50,
            seed=0,
        ),
    )
    assert custom["metric"].to_list() == ["auc_ovr_macro", "sauc"]
    assert custom["se"].is_not_null().all()


def test_intervals_are_percentiles_of_the_replicates(rng):
    df = binary_log(rng, 120)
    drawn = resample(df, by=BY, label="label", sample=None, n_boot=200, seed=9, shared=["model"])
    values = pr.evaluate(drawn, by=[*BY, REPLICATE]).collect()["auc"].to_numpy()
    out = pr.bootstrap(df, n_boot=200, seed=9, alpha=0.1).collect()
    assert out["se"].item() == pytest.approx(np.std(values, ddof=1), rel=1e-12)
    assert out["ci_low"].item() == pytest.approx(np.percentile(values, 5), rel=1e-12)
    assert out["ci_high"].item() == pytest.approx(np.percentile(values, 95), rel=1e-12)


def test_arguments_are_checked(rng):
    log = long_log({("m", 0): wide_scores(rng, 30, 3)})
    with pytest.raises(ValueError, match="'sample' column"):
        pr.bootstrap(log.drop("sample"))
    with pytest.raises(ValueError, match="no column 'c3'"):
        pr.bootstrap(log, metrics=["c3"])
    for bad in ({"n_boot": 1}, {"n_boot": 10.0}, {"seed": -1}, {"alpha": 1.5}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            pr.bootstrap(log, **bad)
