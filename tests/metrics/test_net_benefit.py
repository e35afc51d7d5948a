"""Decision curves: ``pr.decision_curve`` against the ``dcurves`` package, fold by fold.

Oracle: ``dcurves.dca`` (Vickers & Elkin's net benefit as the decision-curve package
computes it; it reads one model on one data set and has no weights, so weights are
checked against repeated rows), and the formula written out in NumPy.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polaroc as pr

dcurves = pytest.importorskip("dcurves")


def dca(score: np.ndarray, label: np.ndarray, thresholds) -> tuple[np.ndarray, np.ndarray]:
    """dcurves' net benefit of the model and of treating all, at ``thresholds``."""
    data = pd.DataFrame({"y": label.astype(int), "s": score})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = dcurves.dca(data=data, outcome="y", modelnames=["s"], thresholds=list(thresholds))
    model = out[out["model"] == "s"].sort_values("threshold")["net_benefit"].to_numpy()
    every = out[out["model"] == "all"].sort_values("threshold")["net_benefit"].to_numpy()
    return model, every


def by_hand(score, label, t, w=None) -> tuple[float, float]:
    """TP/n − FP/n · t/(1 − t), for the model and for treating everyone."""
    w = np.ones_like(score) if w is None else w
    n = w.sum()
    hit = score >= t
    odds = t / (1 - t)
    model = w[hit & label].sum() / n - w[hit & ~label].sum() / n * odds
    every = w[label].sum() / n - w[~label].sum() / n * odds
    return model, every


def simulated(rng: np.random.Generator, n: int = 120) -> pl.DataFrame:
    """Two models × three folds; scores on a 0.01 grid (ties with the thresholds), 0 and 1."""
    parts = []
    for model, noise in (("good", 0.15), ("poor", 0.4)):
        for fold in range(3):
            y = rng.random(n) < 0.35
            s = np.clip(np.round(y * 0.6 + 0.2 + rng.normal(0, noise, n), 2), 0, 1)
            parts.append(
                pl.DataFrame(
                    {"model": model, "fold": fold, "sample": np.arange(n), "score": s, "label": y}
                )
            )
    return pl.concat(parts)


def test_equals_dcurves_fold_by_fold(run, rng):
    df = simulated(rng)
    table = run(df, lambda f: pr.decision_curve(f))
    thresholds = np.arange(1, 100) / 100
    assert table.height == 6 * 99
    assert table.columns == ["model", "fold", "threshold", "net_benefit", "net_benefit_all"]
    for (model, fold), curve in table.group_by("model", "fold", maintain_order=True):
        g = df.filter(pl.col("model") == model, pl.col("fold") == fold)
        want, want_all = dca(g["score"].to_numpy(), g["label"].to_numpy(), thresholds)
        curve = curve.sort("threshold")
        assert curve["threshold"].to_list() == thresholds.tolist()
        np.testing.assert_allclose(curve["net_benefit"].to_numpy(), want, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(curve["net_benefit_all"].to_numpy(), want_all, atol=1e-15)


def test_thresholds_of_the_callers_choice_and_scores_on_them(run):
    score = np.array([0.0, 0.1, 0.25, 0.25, 0.5, 0.75, 1.0, 1.0])
    label = np.array([False, True, False, True, True, False, True, False])
    df = pl.DataFrame({"model": "m", "fold": 0, "score": score, "label": label})
    thresholds = [0.75, 0.25, 0.5, 0.999, 0.001, 0.25]  # unsorted, a repeat
    table = run(df, lambda f: pr.decision_curve(f, thresholds=thresholds))
    grid = sorted(set(thresholds))
    assert table["threshold"].to_list() == grid
    want, want_all = dca(score, label, grid)
    np.testing.assert_allclose(table["net_benefit"].to_numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(table["net_benefit_all"].to_numpy(), want_all, rtol=1e-12)
    for t, row in zip(grid, table.iter_rows(named=True), strict=True):
        model, every = by_hand(score, label, t)
        assert row["net_benefit"] == pytest.approx(model, rel=1e-12, abs=1e-15)
        assert row["net_benefit_all"] == pytest.approx(every, rel=1e-12, abs=1e-15)


def test_weights_equal_repeated_rows(run, rng):
    df = simulated(rng, n=60).with_columns(w=pl.Series(rng.integers(0, 4, 360)))
    weighted = run(df, lambda f: pr.decision_curve(f, weight="w", thresholds=[0.1, 0.3, 0.6]))
    repeated = df.select(pl.all().repeat_by("w").explode()).drop("w", "sample")
    plain = run(repeated, lambda f: pr.decision_curve(f, thresholds=[0.1, 0.3, 0.6]))
    for name in ("net_benefit", "net_benefit_all"):
        np.testing.assert_allclose(weighted[name].to_numpy(), plain[name].to_numpy(), rtol=1e-12)
    for (model, fold), curve in weighted.group_by("model", "fold"):
        g = df.filter(pl.col("model") == model, pl.col("fold") == fold)
        s, y, w = (g[c].to_numpy() for c in ("score", "label", "w"))
        want, want_all = dca(np.repeat(s, w), np.repeat(y, w), [0.1, 0.3, 0.6])
        np.testing.assert_allclose(curve.sort("threshold")["net_benefit"].to_numpy(), want)
        np.testing.assert_allclose(curve.sort("threshold")["net_benefit_all"].to_numpy(), want_all)


@settings(max_examples=40)
@given(
    scores=st.lists(
        st.sampled_from([0.0, 0.05, 0.2, 0.5, 0.51, 0.9, 1.0]), min_size=2, max_size=30
    ),
    labels=st.lists(st.booleans(), min_size=30, max_size=30),
    weights=st.lists(st.integers(0, 3), min_size=30, max_size=30),
    t=st.floats(0.001, 0.999),
)
def test_net_benefit_is_the_formula(scores, labels, weights, t):
    s = np.array(scores)
    y, w = np.array(labels[: len(s)]), np.array(weights[: len(s)], dtype=float)
    df = pl.DataFrame({"model": "m", "fold": 0, "score": s, "label": y, "w": w})
    row = pr.decision_curve(df, thresholds=[t], weight="w").collect()
    kept = w > 0
    if not (y[kept].any() and (~y[kept]).any()):
        assert row["net_benefit"].to_list() in ([None], [])
        return
    model, every = by_hand(s, y, t, w)
    assert row["net_benefit"].item() == pytest.approx(model, rel=1e-12, abs=1e-15)
    assert row["net_benefit_all"].item() == pytest.approx(every, rel=1e-12, abs=1e-15)


def test_both_classes_rows_equal_the_positive_rows(run, rng):
    df = simulated(rng, n=50)
    both = pl.concat(
        [
            df.with_columns(cls=pl.lit(1, pl.Int64), label=pl.col("label").cast(pl.Int64)),
            df.with_columns(
                cls=pl.lit(0, pl.Int64),
                score=1 - pl.col("score"),
                label=pl.col("label").cast(pl.Int64),
            ),
        ]
    ).rename({"cls": "class"})
    positive = both.filter(pl.col("class") == 1)
    grid = [0.05, 0.2, 0.5, 0.8]
    from_both = run(both, lambda f: pr.decision_curve(f, thresholds=grid))
    from_positive = run(positive, lambda f: pr.decision_curve(f, thresholds=grid))
    assert from_both.equals(from_positive)
    # the other class as positive: its own scores against the flipped labels
    negative = run(both, lambda f: pr.decision_curve(f, thresholds=grid, positive_class=0))
    flipped = df.with_columns(score=1 - pl.col("score"), label=~pl.col("label"))
    want = run(flipped, lambda f: pr.decision_curve(f, thresholds=grid))
    np.testing.assert_allclose(negative["net_benefit"].to_numpy(), want["net_benefit"].to_numpy())


def test_renamed_columns_and_groupings(run, rng):
    df = simulated(rng, n=40)
    renamed = df.rename({"model": "clf", "fold": "part", "score": "p", "label": "y"})
    grid = [0.2, 0.4]
    got = run(
        renamed,
        lambda f: pr.decision_curve(
            f, thresholds=grid, model="clf", fold="part", score="p", label="y"
        ),
    )
    plain = run(df, lambda f: pr.decision_curve(f, thresholds=grid))
    assert got.columns[:2] == ["clf", "part"]
    np.testing.assert_array_equal(got["net_benefit"].to_numpy(), plain["net_benefit"].to_numpy())
    pooled = run(df, lambda f: pr.decision_curve(f, by="model", thresholds=grid))
    assert pooled.columns[0] == "model"
    assert pooled.height == 4
    good = df.filter(pl.col("model") == "good")
    want, _ = dca(good["score"].to_numpy(), good["label"].to_numpy(), grid)
    np.testing.assert_allclose(pooled.filter(pl.col("model") == "good")["net_benefit"], want)
    one = run(df, lambda f: pr.decision_curve(f, by=(), thresholds=grid))
    assert one.columns == ["threshold", "net_benefit", "net_benefit_all"]


def test_default_groups_follow_the_design(run, rng):
    df = simulated(rng, n=30)
    log = pl.concat(
        [df.with_columns(dataset=pl.lit(d), repeat=pl.lit(r)) for d in ("x", "y") for r in (0, 1)]
    )
    table = run(log, lambda f: pr.decision_curve(f, thresholds=[0.5]))
    assert table.columns[:4] == ["dataset", "model", "repeat", "fold"]
    assert table.height == 2 * 2 * 2 * 3


def test_one_class_is_null_and_nan_is_nan(run):
    df = pl.DataFrame(
        {
            "model": ["one"] * 3 + ["nan"] * 4 + ["nan_one"] * 2,
            "fold": 0,
            "score": [0.2, 0.6, 0.9, 0.2, float("nan"), 0.7, 0.4, float("nan"), 0.3],
            "label": [1, 1, 1, 0, 1, 1, 0, 0, 0],
        }
    )
    table = run(df, lambda f: pr.decision_curve(f, thresholds=[0.3, 0.6]))
    rows = {m: g for (m,), g in table.group_by("model")}
    assert rows["one"]["net_benefit"].to_list() == [None, None]
    assert rows["one"]["net_benefit_all"].to_list() == [None, None]
    assert rows["nan_one"]["net_benefit"].to_list() == [None, None]  # one class wins over NaN
    assert np.isnan(rows["nan"]["net_benefit"].to_numpy()).all()
    assert np.isnan(rows["nan"]["net_benefit_all"].to_numpy()).all()


def test_bad_input_raises(mode):
    df = pl.DataFrame({"model": "m", "fold": 0, "p": [0.2, 1.3, 0.5], "label": [0, 1, 1]})
    frame = df if mode == "eager" else df.lazy()
    with pytest.raises(ValueError, match=r"'p'.*outside"):
        pr.decision_curve(frame, score="p").collect(engine="auto" if mode == "eager" else mode)
    ok = frame.with_columns(pl.col("p").clip(0, 1))
    for bad in ([0.0, 0.5], [0.5, 1.0], [float("nan")], []):
        with pytest.raises(ValueError, match="thresholds"):
            pr.decision_curve(ok, score="p", thresholds=bad)
    with pytest.raises(TypeError):
        pr.decision_curve(ok, score="p", thresholds="0.5")
    with pytest.raises(TypeError, match="weight"):
        pr.decision_curve(ok, score="p", weight=3)


def test_more_than_two_classes_need_a_positive_class():
    log = pl.DataFrame(
        {
            "model": "m",
            "fold": 0,
            "sample": [0, 0, 0, 1, 1, 1],
            "class": [0, 1, 2] * 2,
            "score": [0.2, 0.5, 0.3, 0.6, 0.3, 0.1],
            "label": [1, 1, 1, 0, 0, 0],
        }
    )
    with pytest.raises(ValueError, match="positive_class"):
        pr.decision_curve(log).collect()
    table = pr.decision_curve(log, positive_class=1, thresholds=[0.4]).collect()
    assert table["net_benefit"].item() == pytest.approx(
        by_hand(np.array([0.5, 0.3]), np.array([True, False]), 0.4)[0]
    )
