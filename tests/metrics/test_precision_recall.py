"""Average precision and the precision–recall curves against scikit-learn and brute force."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import average_precision_score, precision_recall_curve

import polaroc as pr


def grouped_log(rng: np.random.Generator, folds: int = 4, n: int = 150, ties: bool = True):
    fold = np.repeat(np.arange(folds), n)
    label = rng.random(fold.size) < rng.uniform(0.05, 0.5, size=folds)[fold]
    score = rng.normal(size=fold.size) + label * 1.2
    if ties:
        score = np.round(score * 2) / 2
    weight = rng.exponential(size=fold.size)
    return pl.DataFrame({"model": "m", "fold": fold, "score": score, "label": label, "w": weight})


def parts(df: pl.DataFrame):
    for (k,), part in sorted(df.partition_by("fold", as_dict=True).items()):
        yield k, part["score"].to_numpy(), part["label"].to_numpy(), part["w"].to_numpy()


def brute_ap(s: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    """Σ over distinct thresholds t of (weight of positives at t) / W₊ · precision(≥ t)."""
    total = 0.0
    for t in np.unique(s):
        at_or_above = s >= t
        precision = w[at_or_above & y].sum() / w[at_or_above].sum()
        total += w[(s == t) & y].sum() * precision
    return total / w[y].sum()


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_average_precision_equals_sklearn(run, rng, ties, weighted):
    df = grouped_log(rng, ties=ties)
    w = "w" if weighted else None
    out = run(
        df, lambda f: f.group_by("fold").agg(pr.average_precision("score", "label", weight=w))
    ).sort("fold")
    assert out.schema["average_precision"] == pl.Float64
    for i, (_, s, y, wt) in enumerate(parts(df)):
        sw = wt if weighted else None
        expected = average_precision_score(y, s, sample_weight=sw)
        assert out["average_precision"][i] == pytest.approx(expected, abs=1e-12)
        brute = brute_ap(s, y, wt if weighted else np.ones_like(s))
        assert out["average_precision"][i] == pytest.approx(brute, abs=1e-12)


def test_average_precision_is_a_step_sum_not_a_trapezoid():
    # Precision 1 at recall 1/2, then 2/4 at recall 1: AP = ½·1 + ½·½ = 0.75, while
    # the trapezoid from (0, 1) over the points would give 0.875 (the optimism Davis &
    # Goadrich 2006 warn of).
    df = pl.DataFrame({"score": [4.0, 3.0, 2.0, 1.0], "label": [True, False, False, True]})
    got = df.select(pr.average_precision("score", "label")).item()
    assert got == pytest.approx(average_precision_score(df["label"], df["score"]))
    assert got == pytest.approx(0.75)


def test_average_precision_works_over_windows():
    df = pl.DataFrame(
        {
            "g": [1, 1, 1, 2, 2, 2],
            "score": [0.9, 0.1, 0.5, 0.3, 0.8, 0.2],
            "label": [1, 0, 1, 0, 1, 1],
        }
    )
    got = df.select(pr.average_precision("score", "label").over("g"))["average_precision"]
    assert (
        got.to_list()
        == [1.0] * 3 + [pytest.approx(average_precision_score([0, 1, 1], [0.3, 0.8, 0.2]))] * 3
    )


def test_average_precision_awkward_groups():
    df = pl.DataFrame(
        {
            "g": [1, 1, 2, 2, 3, 3, 3, 4, 4],
            "score": [0.2, 0.9, 0.4, 0.6, 0.1, float("nan"), 0.5, float("nan"), 0.3],
            "label": [False, False, True, True, True, False, False, True, True],
        }
    )
    out = dict(df.group_by("g").agg(pr.average_precision("score", "label")).iter_rows())
    assert out[1] is None  # no positives
    assert out[2] is None  # no negatives (degenerate: null, never a made-up 1.0)
    assert np.isnan(out[3])  # a NaN score
    assert out[4] is None  # one class holding a NaN: degenerate precedes NaN


def test_average_precision_ignores_null_rows():
    df = pl.DataFrame(
        {"score": [0.9, None, 0.4, 0.3, 0.8], "label": [True, False, None, False, True]}
    )
    got = df.select(pr.average_precision("score", "label")).item()
    assert got == pytest.approx(average_precision_score([1, 0, 1], [0.9, 0.3, 0.8]))


@pytest.mark.parametrize("weighted", [False, True])
def test_pr_curve_equals_sklearn(run, rng, weighted):
    df = grouped_log(rng)
    w = "w" if weighted else None
    out = run(df, lambda f: pr.pr_curve(f, weight=w))
    assert out.columns == ["model", "fold", "threshold", "precision", "recall", "tp", "fp"]
    assert out.schema["tp"] == (pl.Float64 if weighted else pl.Int64)
    for fold, s, y, wt in parts(df):
        got = out.filter(pl.col("fold") == fold)
        precision, recall, thr = precision_recall_curve(
            y, s, sample_weight=wt if weighted else None, drop_intermediate=False
        )
        np.testing.assert_array_equal(got["threshold"].to_numpy()[:-1], thr)
        assert got["threshold"][-1] is None
        np.testing.assert_allclose(got["precision"].to_numpy(), precision, atol=1e-12)
        np.testing.assert_allclose(got["recall"].to_numpy(), recall, atol=1e-12)
        if not weighted:  # the counts, brute force
            tp = [int(((s >= t) & y).sum()) for t in thr] + [0]
            fp = [int(((s >= t) & ~y).sum()) for t in thr] + [0]
            assert got["tp"].to_list() == tp
            assert got["fp"].to_list() == fp


def test_pr_curve_per_class_for_a_multiclass_log():
    log = pl.DataFrame(
        {
            "model": "m",
            "fold": 0,
            "sample": [0, 0, 1, 1, 2, 2, 3, 3],
            "class": ["a", "b"] * 4,
            "score": [0.7, 0.3, 0.2, 0.8, 0.6, 0.4, 0.6, 0.4],
            "label": ["a", "a", "b", "b", "a", "a", "b", "b"],
        }
    )
    out = pr.pr_curve(log).collect()
    for cls in ("a", "b"):
        rows = log.filter(pl.col("class") == cls)
        y = (rows["label"] == cls).to_numpy()
        precision, recall, _ = precision_recall_curve(y, rows["score"].to_numpy())
        got = out.filter(pl.col("class") == cls)
        np.testing.assert_allclose(got["precision"].to_numpy(), precision)
        np.testing.assert_allclose(got["recall"].to_numpy(), recall)


def test_pr_curve_awkward_groups():
    log = pl.DataFrame(
        {
            "model": "m",
            "fold": [1, 1, 2, 2],
            "score": [0.2, 0.9, 0.4, float("nan")],
            "label": [False, False, True, False],
        }
    )
    out = pr.pr_curve(log).collect()
    no_pos = out.filter(pl.col("fold") == 1)
    assert no_pos["recall"].to_list() == [None, None, None]
    assert no_pos["precision"].to_list() == [0.0, 0.0, 1.0]
    nan = out.filter(pl.col("fold") == 2)
    assert nan.height == 1
    assert np.isnan(nan["precision"][0])
    assert np.isnan(nan["recall"][0])


def test_pooled_pr_curve_pools_the_folds(rng):
    df = grouped_log(rng)
    got = pr.pooled_pr_curve(df, weight="w").collect()
    assert "fold" not in got.columns
    precision, recall, thr = precision_recall_curve(
        df["label"].to_numpy(), df["score"].to_numpy(), sample_weight=df["w"].to_numpy()
    )
    np.testing.assert_array_equal(got["threshold"].to_numpy()[:-1], thr)
    np.testing.assert_allclose(got["precision"].to_numpy(), precision, atol=1e-12)
    np.testing.assert_allclose(got["recall"].to_numpy(), recall, atol=1e-12)


@settings(max_examples=40)
@given(
    data=st.lists(
        st.tuples(st.integers(0, 6).map(lambda k: k / 6), st.booleans()), min_size=1, max_size=30
    )
)
def test_average_precision_is_the_area_under_the_pr_steps(data):
    # AP = Σ (Rₙ − Rₙ₋₁) Pₙ read off pr_curve's own points (recall falls along them).
    s, y = (list(v) for v in zip(*data, strict=True))
    log = pl.DataFrame({"model": "m", "fold": 0, "score": s, "label": y})
    ap = log.select(pr.average_precision("score", "label")).item()
    if not any(y) or all(y):
        assert ap is None
        return
    curve = pr.pr_curve(log).collect()
    recall, precision = curve["recall"].to_numpy(), curve["precision"].to_numpy()
    steps = -np.sum(np.diff(recall) * precision[:-1])
    assert ap == pytest.approx(steps, abs=1e-12)
    assert ap == pytest.approx(average_precision_score(y, s), abs=1e-12)


def test_zero_signs_are_one_score():
    df = pl.DataFrame(
        {
            "model": "m",
            "fold": 0,
            "score": [-0.0] * 5 + [0.0] * 5 + [1.0] * 2 + [-1.0] * 2,
            "label": [True] * 5 + [False] * 5 + [True] * 2 + [False] * 2,
            "w": 1.0,
        }
    )
    expected = average_precision_score(df["label"], df["score"])
    got = df.select(
        pr.average_precision("score", "label"),
        pr.average_precision("score", "label", weight="w").alias("weighted"),
    )
    assert got.row(0) == pytest.approx((expected, expected), abs=1e-12)
    assert pr.evaluate(df).collect()["average_precision"].item() == pytest.approx(expected)
    curve = pr.pr_curve(df).collect()
    assert curve.height == 4  # thresholds -1, 0 (both signs), 1, and the end point
