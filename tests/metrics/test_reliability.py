"""Weighted calibration (Brier, log loss, ECE, MCE), the multiclass log without sample ids,
and keyword-only ``by=``: checked against scikit-learn's ``sample_weight`` and a
brute-force NumPy ECE (``np.quantile(..., weights=, method="inverted_cdf")`` edges)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm

import polaroc as pr


def ece_oracle(y, s, w, n_bins=10, strategy="uniform"):
    """Weighted ECE and MCE by brute force: bin, weigh, compare (zero weights dropped)."""
    keep = w > 0
    y, s, w = y[keep], s[keep], w[keep].astype(float)
    q = np.linspace(0, 1, n_bins + 1)
    edges = q if strategy == "uniform" else np.quantile(s, q, weights=w, method="inverted_cdf")
    ids = np.searchsorted(edges[1:-1], s)  # inner edges strictly below the score
    total = np.bincount(ids, weights=w, minlength=n_bins)
    pred = np.bincount(ids, weights=w * s, minlength=n_bins)
    true = np.bincount(ids, weights=w * y, minlength=n_bins)
    nz = total > 0
    gap = np.abs(true[nz] / total[nz] - pred[nz] / total[nz])
    return (total[nz] * gap).sum() / total.sum(), gap.max()


def binary_log(rng: np.random.Generator, n: int = 150) -> pl.DataFrame:
    """Two models × two folds, tied scores, integer weights 0-3 (zeros included)."""
    parts = []
    for model in ("a", "b"):
        for fold in range(2):
            s = np.round(rng.random(n), 2)
            y = (rng.random(n) < s).astype(np.int64)
            w = rng.integers(0, 4, n)
            parts.append(pl.DataFrame({"model": model, "fold": fold, "p": s, "y": y, "w": w}))
    return pl.concat(parts)


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_weighted_binary_calibration_equals_scikit_learn_and_brute_force(strategy, run, rng):
    df = binary_log(rng)
    got = run(
        df,
        lambda f: pr.calibration(f, weight="w", n_bins=5, strategy=strategy, score="p", label="y"),
    )
    assert got.height == 4
    for row in got.iter_rows(named=True):
        g = df.filter(pl.col("model") == row["model"], pl.col("fold") == row["fold"])
        y, s, w = (g[c].to_numpy() for c in ("y", "p", "w"))
        assert row["brier"] == pytest.approx(skm.brier_score_loss(y, s, sample_weight=w))
        assert row["log_loss"] == pytest.approx(skm.log_loss(y, s, sample_weight=w))
        ece, mce = ece_oracle(y, s, w, n_bins=5, strategy=strategy)
        assert row["ece"] == pytest.approx(ece)
        assert row["mce"] == pytest.approx(mce)


def test_weighted_calibration_curve_is_the_weighted_bins(run, rng):
    df = binary_log(rng)
    curve = run(
        df,
        lambda f: pr.calibration_curve(
            f, by="model", weight="w", n_bins=4, strategy="quantile", score="p", label="y"
        ),
    )
    for model, g in df.filter(pl.col("w") > 0).group_by("model"):
        y, s, w = (g[c].to_numpy().astype(float) for c in ("y", "p", "w"))
        edges = np.quantile(s, np.linspace(0, 1, 5), weights=w, method="inverted_cdf")
        ids = np.searchsorted(edges[1:-1], s)
        mine = curve.filter(pl.col("model") == model[0]).sort("bin")
        for row in mine.iter_rows(named=True):
            inside = ids == row["bin"]
            assert row["n"] == inside.sum()
            assert row["weight"] == pytest.approx(w[inside].sum())
            assert row["prob_pred"] == pytest.approx(np.average(s[inside], weights=w[inside]))
            assert row["prob_true"] == pytest.approx(np.average(y[inside], weights=w[inside]))


def test_weighted_calibration_on_the_demo_log(run, rng):
    log = pl.read_parquet(pr.demo_log_path())
    ids = log.select("model", "fold", "sample").unique(maintain_order=True)
    weights = ids.with_columns(w=pl.Series(rng.integers(0, 5, ids.height)).cast(pl.Float64))
    log = log.join(weights, on=["model", "fold", "sample"]).rename({"score": "prob"})
    got = run(log, lambda f: pr.calibration(f, weight="w", score="prob"))
    top = log.filter(pl.col("class") == pl.col("class").max())
    for row in got.iter_rows(named=True):
        g = top.filter(pl.col("model") == row["model"], pl.col("fold") == row["fold"])
        y = (g["label"] == g["class"]).to_numpy().astype(int)
        s, w = g["prob"].to_numpy(), g["w"].to_numpy()
        assert row["n_classes"] == 2
        assert row["brier"] == pytest.approx(skm.brier_score_loss(y, s, sample_weight=w))
        assert row["log_loss"] == pytest.approx(skm.log_loss(y, s, sample_weight=w))
        ece, mce = ece_oracle(y, s, w)
        assert row["ece"] == pytest.approx(ece)
        assert row["mce"] == pytest.approx(mce)


def multiclass_log(rng: np.random.Generator, n: int = 240, k: int = 3) -> pl.DataFrame:
    p = rng.dirichlet(np.ones(k), size=n).round(2)
    p[:, -1] = np.clip(1 - p[:, :-1].sum(axis=1), 0, 1)
    y = np.array([rng.choice(k, p=row / row.sum()) for row in p])
    w = rng.integers(0, 4, n)
    return pl.DataFrame(
        {
            "model": "m",
            "fold": 0,
            "sample": np.repeat(np.arange(n), k),
            "class": np.tile(np.arange(k), n),
            "score": p.ravel(),
            "label": np.repeat(y, k),
            "w": np.repeat(w, k),
        }
    )


def test_weighted_multiclass_calibration_equals_scikit_learn(run, rng):
    log = multiclass_log(rng)
    wide = log.pivot(on="class", index=["sample", "label", "w"], values="score").sort("sample")
    p = wide.select("0", "1", "2").to_numpy()
    y, w = wide["label"].to_numpy(), wide["w"].to_numpy()
    row = run(log, lambda f: pr.calibration(f, weight="w")).row(0, named=True)
    assert row["n_classes"] == 3
    assert row["brier"] == pytest.approx(
        skm.brier_score_loss(y, p, labels=[0, 1, 2], sample_weight=w)
    )
    truth = np.clip(p[np.arange(len(y)), y], np.finfo(float).eps, 1 - np.finfo(float).eps)
    assert row["log_loss"] == pytest.approx(np.average(-np.log(truth), weights=w))
    # top label: the highest score, ties to the smallest class (np.argmax's first)
    hit = (np.argmax(p, axis=1) == y).astype(float)
    ece, mce = ece_oracle(hit, p.max(axis=1), w)
    assert row["ece"] == pytest.approx(ece)
    assert row["mce"] == pytest.approx(mce)


@settings(max_examples=25)
@given(
    w=st.lists(st.integers(0, 3), min_size=16, max_size=16).filter(lambda v: sum(v) > 1),
    s=st.lists(st.sampled_from([0.0, 0.15, 0.3, 0.5, 0.8, 1.0]), min_size=16, max_size=16),
    strategy=st.sampled_from(["uniform", "quantile"]),
)
def test_integer_weights_are_repeated_rows_zero_drops_scaling_changes_nothing(w, s, strategy):
    y = np.array([0, 1] * 8)
    w, s = np.array(w), np.array(s)
    df = pl.DataFrame({"model": "m", "fold": 0, "score": s, "label": y, "w": w.astype(float)})

    def cal(frame: pl.DataFrame, scaled: bool = False, **kw) -> tuple:
        table = pr.calibration(frame, n_bins=4, strategy=strategy, **kw).collect()
        # Spiegelhalter's z counts frequency weights as samples: scaling them scales z
        test = ("spiegelhalter_z", "spiegelhalter_p")
        return table.drop("model", "fold", *(test if scaled else ())).row(0)

    weighted = cal(df, weight="w")
    repeated = pl.DataFrame(
        {"model": "m", "fold": 0, "score": np.repeat(s, w), "label": np.repeat(y, w)}
    )
    # quantile edges of weighted logs are weighted quantiles: compare with unit weights
    unit = repeated.with_columns(w=pl.lit(1.0))
    plain = cal(repeated) if strategy == "uniform" else cal(unit, weight="w")
    scaled = cal(df.with_columns(pl.col("w") * 0.37), scaled=True, weight="w")
    dropped = cal(df.filter(pl.col("w") > 0), weight="w")
    for other in (plain, dropped):
        same(weighted, other)
    same(cal(df, scaled=True, weight="w"), scaled)
    if strategy == "uniform":  # unit weights change nothing
        same(cal(repeated), cal(unit, weight="w"))


def same(row: tuple, other: tuple) -> None:
    for a, b in zip(row, other, strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            assert a == pytest.approx(b, rel=1e-9, abs=1e-12)


def test_bad_weights_raise_naming_the_column(mode):
    df = pl.DataFrame({"model": "m", "fold": 0, "score": [0.2, 0.8], "label": [0, 1]})
    bad = df.with_columns(wt=pl.Series([1.0, -1.0]))
    frame = bad if mode == "eager" else bad.lazy()
    with pytest.raises(ValueError, match="'wt'"):
        pr.calibration(frame, weight="wt").collect(engine="in-memory" if mode == "eager" else mode)
    with pytest.raises(ValueError, match="wt"):
        pr.calibration(df, weight="wt")  # missing column


def test_multiclass_without_sample_ids_raises_naming_the_column(run, rng):
    log = multiclass_log(rng).drop("sample").rename({"class": "cls"})
    with pytest.raises(ValueError, match=r"sample column 'sample'.*pr\.evaluate"):
        run(log, lambda f: pr.calibration(f, class_="cls"))
    # a binary log with a class column needs no sample ids
    binary = log.filter(pl.col("label") < 2, pl.col("cls") < 2)
    got = run(binary, lambda f: pr.calibration(f, class_="cls"))
    assert got["n_classes"].to_list() == [2]
    assert got["ece"].is_not_null().all()


@pytest.mark.parametrize(
    "function",
    [
        pr.calibration,
        pr.calibration_curve,
        pr.threshold_table,
        pr.det_curve,
        pr.gain_curve,
        pr.lift_curve,
        pr.closest_topleft_point,
        pr.max_metric_point,
        pr.top_k_accuracy,
        pr.smooth_roc,
    ],
)
def test_by_is_keyword_only(function):
    log = pl.DataFrame({"model": "m", "fold": 0, "score": [0.2, 0.8], "label": [0, 1]})
    with pytest.raises(TypeError):
        function(log, ("model",))
