"""ROC curves, their areas and partial areas against scikit-learn and brute force."""

from __future__ import annotations

import itertools
import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score
from sklearn.metrics import roc_curve as sk_roc_curve

import polaroc as pr
from tests.oracles import bradley_trapezoid, counts_at, on_segment, pair_auc

INF = float("inf")


def fold_log(rng: np.random.Generator, folds: int = 4, n: int = 120, ties: bool = False):
    fold = np.repeat(np.arange(folds), n)
    label = rng.random(fold.size) < 0.4
    score = rng.normal(size=fold.size) + label * rng.uniform(0.3, 2.0, size=folds)[fold]
    if ties:
        score = np.round(score * 2) / 2
    return pl.DataFrame({"model": "m", "fold": fold, "score": score, "label": label})


def parts(df: pl.DataFrame, key: str = "fold"):
    for (k,), part in sorted(df.partition_by(key, as_dict=True, maintain_order=True).items()):
        yield k, part["score"].to_numpy(), part["label"].to_numpy()


def curve_of(out: pl.DataFrame, key: str, value) -> pl.DataFrame:
    return out.filter(pl.col(key) == value)


@pytest.mark.parametrize("ties", [False, True])
def test_points_equal_sklearn_and_brute_force_counts(run, rng, ties):
    df = fold_log(rng, ties=ties)
    out = run(df, lambda f: pr.roc_curve(f))
    assert out.columns == ["model", "fold", "threshold", "fpr", "tpr", "tp", "fp"]
    assert out.schema["tp"] == pl.Int64
    assert out.schema["fp"] == pl.Int64
    for fold, s, y in parts(df):
        got = curve_of(out, "fold", fold)
        fpr, tpr, thr = sk_roc_curve(y, s, drop_intermediate=False)
        np.testing.assert_array_equal(got["threshold"].to_numpy(), thr)
        np.testing.assert_array_equal(got["fpr"].to_numpy(), fpr)
        np.testing.assert_array_equal(got["tpr"].to_numpy(), tpr)
        fp, tp = counts_at(s, y, thr[1:])
        np.testing.assert_array_equal(got["fp"].to_numpy(), np.r_[0, fp])
        np.testing.assert_array_equal(got["tp"].to_numpy(), np.r_[0, tp])


@pytest.mark.parametrize("ties", [False, True])
def test_drop_intermediate_keeps_exactly_the_corners(run, rng, ties):
    df = fold_log(rng, ties=ties)
    full = run(df, lambda f: pr.roc_curve(f))
    dropped = run(df, lambda f: pr.roc_curve(f, drop_intermediate=True))
    for fold, s, y in parts(df):
        every = curve_of(full, "fold", fold)
        kept = curve_of(dropped, "fold", fold)
        _, _, sk_thr = sk_roc_curve(y, s, drop_intermediate=True)
        # Every point kept here is kept by scikit-learn, which keeps a superset.
        assert set(kept["threshold"]) <= set(sk_thr) <= set(every["threshold"])
        pts = list(zip(kept["fp"], kept["tp"], strict=True))
        assert pts[0] == (0, 0)
        assert pts[-1] == (every["fp"][-1], every["tp"][-1])
        # No kept point is on the line through its neighbours ...
        for p, q, r in zip(pts, pts[1:], pts[2:], strict=False):
            assert not on_segment(p, q, r)
        # ... and every dropped point is on the kept polyline.
        for q in zip(every["fp"], every["tp"], strict=True):
            assert any(on_segment(p, q, r) for p, r in itertools.pairwise(pts))


def test_drop_intermediate_equals_sklearn_when_no_first_step_is_dropped(run):
    # Untied scores whose first step is a corner: the two rules agree point for point.
    s = np.array([0.95, 0.9, 0.85, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2])
    y = np.array([1, 0, 1, 1, 1, 0, 0, 1, 0, 0], dtype=bool)
    df = pl.DataFrame({"score": s, "label": y})
    out = run(df, lambda f: pr.roc_curve(f, by=(), drop_intermediate=True))
    fpr, tpr, thr = sk_roc_curve(y, s, drop_intermediate=True)
    np.testing.assert_array_equal(out["threshold"].to_numpy(), thr)
    np.testing.assert_array_equal(out["fpr"].to_numpy(), fpr)
    np.testing.assert_array_equal(out["tpr"].to_numpy(), tpr)


def test_drop_intermediate_drops_collinear_tied_steps_sklearn_keeps(run):
    # Levels 4..1 hold (pos, neg) = (1, 0), (1, 1), (2, 2), (0, 1): the steps into
    # (1, 2) and (3, 4) are parallel but of different lengths.
    df = pl.DataFrame(
        {
            "score": [4.0, 3.0, 3.0, 2.0, 2.0, 2.0, 2.0, 1.0],
            "label": [True, True, False, True, True, False, False, False],
        }
    )
    out = run(df, lambda f: pr.roc_curve(f, by=(), drop_intermediate=True))
    assert out.select("fp", "tp").rows() == [(0, 0), (0, 1), (3, 4), (4, 4)]
    _, _, sk_thr = sk_roc_curve(df["label"], df["score"], drop_intermediate=True)
    assert sk_thr.tolist() == [INF, 4.0, 3.0, 2.0, 1.0]  # scikit-learn keeps (1, 2)


@pytest.mark.parametrize("ties", [False, True])
def test_area_under_the_curve_is_auc(run, rng, ties):
    df = fold_log(rng, ties=ties)
    for drop in (False, True):
        curves = run(df, lambda f, drop=drop: pr.roc_curve(f, drop_intermediate=drop))
        areas = curves.group_by("fold").agg(pr.trapezoid_auc("fpr", "tpr")).sort("fold")
        for (fold, s, y), area in zip(parts(df), areas["trapezoid_auc"], strict=True):
            every = curve_of(curves, "fold", fold)
            assert area == pytest.approx(pair_auc(s, y), abs=1e-12)
            numpy_area = np.trapezoid(every["tpr"].to_numpy(), every["fpr"].to_numpy())
            assert numpy_area == pytest.approx(pair_auc(s, y), abs=1e-12)
    auc = run(df, lambda f: f.group_by("fold").agg(pr.auc("score", "label")).sort("fold"))
    assert auc["auc"].to_list() == pytest.approx(areas["trapezoid_auc"].to_list(), abs=1e-12)


def test_multiclass_log_gives_one_vs_rest_curve_per_class(run, rng):
    n, classes = 90, ["a", "b", "c"]
    label = rng.choice(classes, size=n)
    scores = rng.normal(size=(n, 3)) + (label[:, None] == np.array(classes)) * 1.2
    log = pl.DataFrame(
        {
            "model": "m",
            "fold": 0,
            "sample": np.repeat(np.arange(n), 3),
            "class": np.tile(classes, n),
            "label": np.repeat(label, 3),
            "score": scores.ravel(),
        }
    )
    out = run(log, lambda f: pr.roc_curve(f))
    assert out.columns[:3] == ["model", "fold", "class"]
    assert out["class"].unique(maintain_order=True).to_list() == classes
    for i, cls in enumerate(classes):
        fpr, tpr, thr = sk_roc_curve(label == cls, scores[:, i], drop_intermediate=False)
        got = curve_of(out, "class", cls)
        np.testing.assert_array_equal(got["threshold"].to_numpy(), thr)
        np.testing.assert_array_equal(got["fpr"].to_numpy(), fpr)
        np.testing.assert_array_equal(got["tpr"].to_numpy(), tpr)


def test_binary_log_with_both_classes_rows(run):
    # Class 1's curve is the usual one; class 0's uses the class-0 scores.
    p1 = np.array([0.9, 0.2, 0.7, 0.4, 0.6])
    y = np.array([1, 0, 1, 0, 0])
    log = pl.DataFrame(
        {
            "model": "m",
            "fold": 0,
            "class": [1] * 5 + [0] * 5,
            "label": np.r_[y, y],
            "score": np.r_[p1, 1 - p1],
        }
    )
    out = run(log, lambda f: pr.roc_curve(f).filter(pl.col("class") == 1))
    fpr, tpr, _ = sk_roc_curve(y, p1, drop_intermediate=False)
    np.testing.assert_allclose(out["fpr"].to_numpy(), fpr)
    np.testing.assert_allclose(out["tpr"].to_numpy(), tpr)


# ------------------------------------------------------------------ fixed grid


def test_grid_counts_equal_brute_force(run, rng):
    df = fold_log(rng, ties=True).with_columns(
        pl.when(pl.int_range(pl.len()) == 3).then(INF).otherwise("score").alias("score")
    )
    grid = [-1.0, -0.5, 0.0, 0.0, 0.5, 1.0, 7.0, INF]  # unsorted repeats are fine too
    out = run(df, lambda f: pr.roc_curve(f, thresholds=grid[::-1]))
    expected_thr = [INF, INF, 7.0, 1.0, 0.5, 0.0, -0.5, -1.0, -INF]
    for fold, s, y in parts(df):
        got = curve_of(out, "fold", fold)
        assert got["threshold"].to_list() == expected_thr
        fp, tp = counts_at(s, y, expected_thr[1:])
        assert got["fp"].to_list() == [0, *fp.tolist()]
        assert got["tp"].to_list() == [0, *tp.tolist()]
        assert got["fpr"][-1] == 1.0
        assert got["tpr"][-1] == 1.0
        np.testing.assert_allclose(got["tpr"].to_numpy()[1:], tp / y.sum())


def test_grid_points_lie_on_the_full_curve(run, rng):
    df = fold_log(rng)
    grid = np.linspace(-2, 3, 11)
    coarse = run(df, lambda f: pr.roc_curve(f, thresholds=grid, drop_intermediate=True))
    full = run(df, lambda f: pr.roc_curve(f))
    for fold, _, _ in parts(df):
        every = curve_of(full, "fold", fold)
        points = set(zip(every["fp"], every["tp"], strict=True))
        kept = curve_of(coarse, "fold", fold)
        assert set(zip(kept["fp"], kept["tp"], strict=True)) <= points
        assert kept["fp"].is_sorted()
        assert kept["tp"].is_sorted()
        assert kept.select(pl.struct("fp", "tp").is_unique().all()).item()


def test_coarse_grid_underestimates_a_concave_curve(run):
    # Ten tied score levels whose positive share falls as the score falls: every step
    # is a diagonal with a smaller slope than the last, so the curve is concave.
    level = np.repeat(np.arange(10, 0, -1), 20)
    pos_share = np.repeat(np.linspace(0.95, 0.05, 10), 20)
    within = np.tile(np.arange(20), 10)
    df = pl.DataFrame({"score": level.astype(float), "label": within < pos_share * 20})
    exact = df.select(pr.auc("score", "label")).item()
    for grid in ([5.0], [8.0, 5.0, 2.0], [9.0, 7.0, 5.0, 3.0, 1.5]):
        area = run(
            df,
            lambda f, grid=grid: pr.roc_curve(f, by=(), thresholds=grid).select(
                pr.trapezoid_auc("fpr", "tpr")
            ),
        ).item()
        assert area < exact - 1e-3
    every_level = run(
        df,
        lambda f: pr.roc_curve(f, by=(), thresholds=np.arange(1.0, 11.0)).select(
            pr.trapezoid_auc("fpr", "tpr")
        ),
    ).item()
    assert every_level == pytest.approx(exact, abs=1e-12)


def test_grid_rejects_nan_and_empty():
    df = pl.DataFrame({"score": [0.1, 0.9], "label": [False, True]})
    with pytest.raises(ValueError, match="NaN"):
        pr.roc_curve(df, by=(), thresholds=[0.5, float("nan")])
    with pytest.raises(ValueError, match="at least one value"):
        pr.roc_curve(df, by=(), thresholds=[-INF])
    with pytest.raises(TypeError, match="sequence of numbers"):
        pr.roc_curve(df, by=(), thresholds=0.5)


# ------------------------------------------------------------------ partial AUC


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("max_fpr", [0.05, 0.1, 0.25, 0.5, 0.8, 1.0])
def test_partial_auc_equals_sklearn_max_fpr(run, rng, ties, max_fpr):
    df = fold_log(rng, ties=ties)
    out = run(
        df,
        lambda f: (
            f.group_by("fold").agg(pr.partial_auc("score", "label", max_fpr=max_fpr)).sort("fold")
        ),
    )
    for (_, s, y), got in zip(parts(df), out["partial_auc"], strict=True):
        assert got == pytest.approx(roc_auc_score(y, s, max_fpr=max_fpr), abs=1e-12)


def _raw_sklearn(y, s, b: float) -> float:
    # Undo McClish's standardisation of scikit-learn's max_fpr result.
    if b == 0.0:
        return 0.0
    lo, hi = b**2 / 2, b
    return lo + (2 * roc_auc_score(y, s, max_fpr=b) - 1) * (hi - lo)


@pytest.mark.parametrize(("a", "b"), [(0.1, 0.3), (0.0, 0.2), (0.25, 1.0), (0.5, 0.75)])
def test_partial_auc_over_a_range(run, rng, a, b):
    df = fold_log(rng, ties=True)
    out = run(
        df,
        lambda f: (
            f.group_by("fold")
            .agg(
                pr.partial_auc("score", "label", min_fpr=a, max_fpr=b, standardize=False).alias(
                    "raw"
                ),
                pr.partial_auc("score", "label", min_fpr=a, max_fpr=b),
            )
            .sort("fold")
        ),
    )
    for (_, s, y), raw, std in zip(parts(df), out["raw"], out["partial_auc"], strict=True):
        expected = _raw_sklearn(y, s, b) - _raw_sklearn(y, s, a)
        assert raw == pytest.approx(expected, abs=1e-12)
        lo, hi = (b**2 - a**2) / 2, b - a
        assert std == pytest.approx(0.5 * (1 + (expected - lo) / (hi - lo)), abs=1e-12)


def test_partial_auc_whole_range_is_auc_and_bad_range_raises(run, rng):
    df = fold_log(rng, ties=True)
    out = run(
        df,
        lambda f: f.group_by("fold").agg(
            pr.auc("score", "label"),
            pr.partial_auc("score", "label", max_fpr=1.0),
            pr.partial_auc("score", "label", max_fpr=1.0, standardize=False).alias("raw"),
        ),
    )
    assert out["partial_auc"].to_list() == pytest.approx(out["auc"].to_list(), abs=1e-12)
    assert out["raw"].to_list() == pytest.approx(out["auc"].to_list(), abs=1e-12)
    for a, b in [(0.0, 0.0), (0.3, 0.2), (-0.1, 0.5), (0.0, 1.5)]:
        with pytest.raises(ValueError, match="min_fpr < max_fpr"):
            pr.partial_auc("score", "label", min_fpr=a, max_fpr=b)


# ------------------------------------------------------------------ trapezoid_auc


@given(
    st.lists(st.tuples(st.integers(0, 20), st.integers(0, 20)), min_size=1, max_size=12).map(
        lambda pts: [(x / 20, y / 20) for x, y in pts]
    ),
    st.randoms(use_true_random=False),
)
@settings(max_examples=40)
def test_trapezoid_auc_is_bradley_eq7_in_any_order(points, random):
    shuffled = points[:]
    random.shuffle(shuffled)
    df = pl.DataFrame(shuffled, schema=["fpr", "tpr"], orient="row")
    got = df.select(pr.trapezoid_auc("fpr", "tpr")).item()
    fpr, tpr = np.array(points).T
    assert got == pytest.approx(bradley_trapezoid(fpr, tpr), abs=1e-12)


def test_trapezoid_auc_in_group_by_and_over(run):
    df = pl.DataFrame(
        {
            "fold": [1, 1, 2, 2, 2, 3],
            "fpr": [0.5, None, 0.1, 0.6, 0.3, 0.5],
            "tpr": [0.5, 0.9, 0.6, 0.9, 0.8, 0.5],
        }
    )
    expected = {
        1: 0.5,  # the null point is ignored; (0.5, 0.5) on the diagonal
        2: bradley_trapezoid([0.1, 0.6, 0.3], [0.6, 0.9, 0.8]),
        3: 0.5,
    }
    grouped = run(df, lambda f: f.group_by("fold").agg(pr.trapezoid_auc("fpr", "tpr")))
    assert dict(grouped.iter_rows()) == pytest.approx(expected)
    windowed = run(
        df, lambda f: f.select("fold", pr.trapezoid_auc("fpr", "tpr").over("fold")).unique()
    )
    assert dict(windowed.iter_rows()) == pytest.approx(expected)


def test_trapezoid_auc_policies():
    empty = pl.DataFrame({"fpr": [], "tpr": []}, schema={"fpr": pl.Float64, "tpr": pl.Float64})
    assert empty.select(pr.trapezoid_auc("fpr", "tpr")).item() is None
    nan = pl.DataFrame({"fpr": [0.1, float("nan")], "tpr": [0.5, 0.7]})
    assert math.isnan(nan.select(pr.trapezoid_auc("fpr", "tpr")).item())
    counts = pl.DataFrame({"fpr": [3, 5], "tpr": [4, 9]})
    with pytest.raises(pl.exceptions.ComputeError, match="outside"):
        counts.select(pr.trapezoid_auc("fpr", "tpr"))
    text = pl.DataFrame({"fpr": ["0.1"], "tpr": [0.5]})
    with pytest.raises(TypeError, match="`fpr` column 'fpr' has dtype String"):
        text.select(pr.trapezoid_auc("fpr", "tpr"))


def test_roc_points_from_confusion_counts(run):
    table = pl.DataFrame(
        {
            "tp": [9, 0, 3],
            "fp": [4, 0, 0],
            "tn": [6, 0, 10],
            "fn": [1, 0, 0],
        }
    )
    out = run(table, lambda f: pr.roc_points(f))
    assert out["fpr"].to_list() == [0.4, None, 0.0]
    assert out["tpr"].to_list() == [0.9, None, 1.0]
    with pytest.raises(ValueError, match="no column 'fn'"):
        pr.roc_points(table.drop("fn"))
    with pytest.raises(TypeError, match="tp count column 'tp'"):
        pr.roc_points(table.with_columns(pl.col("tp").cast(pl.String)))


def test_bradley_pooling_of_confusion_counts(run):
    # Pooling sums each cost setting's counts over the folds before taking rates.
    table = pl.DataFrame(
        {
            "fold": [1, 1, 2, 2],
            "setting": [1, 2, 1, 2],
            "tp": [8, 5, 6, 2],
            "fp": [3, 1, 1, 0],
            "tn": [7, 9, 9, 10],
            "fn": [2, 5, 4, 8],
        }
    )
    pooled = run(
        table,
        lambda f: (
            pr.roc_points(f.group_by("setting").agg(pl.col("tp", "fp", "tn", "fn").sum()))
            .sort("setting")
            .select("fpr", "tpr")
        ),
    )
    assert pooled.rows() == [(4 / 20, 14 / 20), (1 / 20, 7 / 20)]


# ------------------------------------------------------------------ awkward input


def test_one_class_group_has_null_rates_and_others_are_unharmed(run):
    df = pl.DataFrame(
        {
            "fold": [1, 1, 1, 2, 2, 2, 3, 3],
            "score": [0.9, 0.5, 0.1, 0.8, 0.4, 0.3, 0.6, 0.2],
            "label": [True, True, True, False, False, False, True, False],
        }
    )
    out = run(df, lambda f: pr.roc_curve(f, by="fold"))
    only_pos = curve_of(out, "fold", 1)
    assert only_pos["fpr"].null_count() == only_pos.height
    assert only_pos["tpr"].to_list() == pytest.approx([0, 1 / 3, 2 / 3, 1])
    only_neg = curve_of(out, "fold", 2)
    assert only_neg["tpr"].null_count() == only_neg.height
    assert curve_of(out, "fold", 3)["fpr"].to_list() == [0.0, 0.0, 1.0]
    areas = out.group_by("fold").agg(pr.trapezoid_auc("fpr", "tpr")).sort("fold")
    assert areas["trapezoid_auc"].to_list() == [None, None, 1.0]
    pauc = run(df, lambda f: f.group_by("fold").agg(pr.partial_auc("score", "label", max_fpr=0.5)))
    assert dict(pauc.iter_rows()) == {1: None, 2: None, 3: 1.0}


def test_single_distinct_score_is_the_diagonal(run):
    df = pl.DataFrame({"score": [0.3] * 4, "label": [True, False, True, False]})
    out = run(df, lambda f: pr.roc_curve(f, by=()))
    assert out.select("threshold", "fpr", "tpr").rows() == [(INF, 0.0, 0.0), (0.3, 1.0, 1.0)]
    dropped = run(df, lambda f: pr.roc_curve(f, by=(), drop_intermediate=True))
    assert dropped.height == 2
    assert run(df, lambda f: f.select(pr.partial_auc("score", "label", max_fpr=0.3))).item() == (
        pytest.approx(0.5)
    )


@pytest.mark.parametrize("thresholds", [None, [0.0, 0.5]])
def test_nan_score_makes_the_curve_one_nan_point(run, thresholds):
    df = pl.DataFrame(
        {
            "fold": [1, 1, 1, 2, 2, 2],
            "score": [0.9, float("nan"), 0.1, 0.8, 0.4, 0.3],
            "label": [True, False, False, True, False, True],
        }
    )
    out = run(df, lambda f: pr.roc_curve(f, by="fold", thresholds=thresholds))
    nan_fold = curve_of(out, "fold", 1)
    assert nan_fold.height == 1
    assert all(math.isnan(nan_fold[c].item()) for c in ("threshold", "fpr", "tpr"))
    assert nan_fold["tp"].item() is None
    assert not curve_of(out, "fold", 2)["fpr"].is_nan().any()
    pauc = run(df, lambda f: f.group_by("fold").agg(pr.partial_auc("score", "label", max_fpr=0.5)))
    assert math.isnan(dict(pauc.iter_rows())[1])


def test_null_scores_and_labels_are_ignored(run):
    df = pl.DataFrame(
        {"score": [0.9, None, 0.3, 0.1, 0.8], "label": [True, True, False, None, False]}
    )
    clean = df.drop_nulls()
    query = lambda f: pr.roc_curve(f, by=())
    assert run(df, query).equals(run(clean, query))


def test_infinite_scores_rank_as_extremes(run):
    df = pl.DataFrame({"score": [INF, 0.5, -INF, 0.4], "label": [True, True, False, False]})
    out = run(df, lambda f: pr.roc_curve(f, by=()))
    assert out.select("threshold", "tp", "fp").rows() == [
        (INF, 0, 0),
        (INF, 1, 0),
        (0.5, 2, 0),
        (0.4, 2, 1),
        (-INF, 2, 2),
    ]


def test_missing_column_and_bad_dtypes_raise_at_call():
    df = pl.DataFrame({"model": ["m"], "fold": [0], "prob": [0.5], "label": [True]})
    with pytest.raises(ValueError, match="no column 'score'"):
        pr.roc_curve(df)
    assert pr.roc_curve(df, score="prob").collect().height == 2
    text = df.with_columns(pl.col("prob").cast(pl.String))
    with pytest.raises(TypeError, match="score column 'prob'"):
        pr.roc_curve(text, score="prob")


@given(st.lists(st.tuples(st.integers(-5, 5), st.booleans()), min_size=2, max_size=30))
@settings(max_examples=40)
def test_curve_is_monotone_invariant_and_its_area_is_auc(rows):
    df = pl.DataFrame(rows, schema=["score", "label"], orient="row").with_columns(
        pl.col("score").cast(pl.Float64)
    )
    curve = pr.roc_curve(df, by=()).collect()
    squashed = pr.roc_curve(
        df.with_columns((pl.col("score") / 2).exp()), by=()
    ).collect()  # a strictly increasing transform keeps every point
    assert curve.select("fpr", "tpr", "tp", "fp").equals(squashed.select("fpr", "tpr", "tp", "fp"))
    assert curve["tp"].is_sorted()
    assert curve["fp"].is_sorted()
    n_pos = int(df["label"].sum())
    if 0 < n_pos < df.height:
        area = curve.select(pr.trapezoid_auc("fpr", "tpr")).item()
        assert area == pytest.approx(pair_auc(df["score"], df["label"]), abs=1e-12)
