"""Case weights: every weighted function against scikit-learn and the weight properties.

Oracles: scikit-learn's ``sample_weight`` (roc_auc_score, roc_curve, confusion_matrix,
average_precision_score), a brute-force sum over weighted pairs, and the defining
properties of a case weight (integer weights ≡ repeated rows, weight 0 ≡ row
removed, unit weights ≡ unweighted, scale invariance).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal
from sklearn.metrics import (
    accuracy_score,
    average_precision_score,
    confusion_matrix,
    roc_auc_score,
)
from sklearn.metrics import roc_curve as sk_roc_curve

import polaroc as pr

# ------------------------------------------------------------------ data


def weighted_log(rng: np.random.Generator, folds: int = 3, n: int = 90, ties: bool = True):
    fold = np.repeat(np.arange(folds), n)
    label = rng.random(fold.size) < 0.4
    score = rng.normal(size=fold.size) + label * 0.8
    if ties:
        score = np.round(score * 2) / 2
    weight = rng.gamma(1.5, size=fold.size)
    weight[rng.random(fold.size) < 0.1] = 0.0
    return pl.DataFrame({"model": "m", "fold": fold, "score": score, "label": label, "w": weight})


def parts(df: pl.DataFrame):
    for (k,), part in sorted(df.partition_by("fold", as_dict=True).items()):
        yield k, part["score"].to_numpy(), part["label"].to_numpy(), part["w"].to_numpy()


def weighted_pair_auc(s, y, w) -> float:
    """Σ w₊w₋ ([x > y] + ½[x = y]) / (W₊W₋) over every (positive, negative) pair."""
    x, wx, z, wz = s[y], w[y], s[~y], w[~y]
    d = x[:, None] - z[None, :]
    pair_w = wx[:, None] * wz[None, :]
    return float((pair_w * ((d > 0) + 0.5 * (d == 0))).sum() / pair_w.sum())


def weighted_pair_sauc(s, y, w) -> float:
    x, wx, z, wz = s[y], w[y], s[~y], w[~y]
    d = x[:, None] - z[None, :]
    pair_w = wx[:, None] * wz[None, :]
    return float((pair_w * d * (d > 0)).sum() / pair_w.sum())


# ------------------------------------------------------------------ against oracles


def test_auc_gini_sauc_equal_sklearn_and_weighted_pairs(run, rng):
    df = weighted_log(rng)
    out = run(
        df,
        lambda f: f.group_by("fold").agg(
            pr.auc("score", "label", weight="w"),
            pr.gini("score", "label", weight="w"),
            pr.sauc("score", "label", weight="w"),
            pr.sauc_parts("score", "label", weight="w"),
        ),
    ).sort("fold")
    for i, (_, s, y, w) in enumerate(parts(df)):
        expected = roc_auc_score(y, s, sample_weight=w)
        assert out["auc"][i] == pytest.approx(expected, abs=1e-12)
        assert out["auc"][i] == pytest.approx(weighted_pair_auc(s, y, w), abs=1e-12)
        assert out["gini"][i] == pytest.approx(2 * expected - 1, abs=1e-12)
        assert out["sauc"][i] == pytest.approx(weighted_pair_sauc(s, y, w), abs=1e-12)
        parts_row = out["sauc_parts"][i]
        assert parts_row["mean_pos"] == pytest.approx(np.average(s[y], weights=w[y]))
        assert parts_row["mean_neg"] == pytest.approx(np.average(s[~y], weights=w[~y]))


def test_confusion_family_equals_sklearn_confusion_matrix(run, rng):
    df = weighted_log(rng)
    t = 0.5
    rates = {
        "accuracy": pr.accuracy,
        "error": pr.error,
        "sensitivity": pr.sensitivity,
        "specificity": pr.specificity,
        "ppv": pr.ppv,
        "npv": pr.npv,
    }
    out = run(
        df,
        lambda f: f.group_by("fold").agg(
            pr.confusion("score", "label", threshold=t, weight="w"),
            pr.cost("score", "label", threshold=t, cost_fp=2.0, cost_fn=3.0, weight="w"),
            pr.cost("score", "label", threshold=t, cost_fn=3.0, normalize=True, weight="w").alias(
                "cost_norm"
            ),
            *(fn("score", "label", threshold=t, weight="w") for fn in rates.values()),
        ),
    ).sort("fold")
    assert out.schema["confusion"] == pl.Struct({k: pl.Float64 for k in ("tp", "fp", "tn", "fn")})
    for i, (_, s, y, w) in enumerate(parts(df)):
        tn, fp, fn, tp = confusion_matrix(y, s >= t, sample_weight=w).ravel()
        got = out["confusion"][i]
        for name, value in {"tp": tp, "fp": fp, "tn": tn, "fn": fn}.items():
            assert got[name] == pytest.approx(value, abs=1e-9)
        assert out["cost"][i] == pytest.approx(2 * fp + 3 * fn)
        assert out["cost_norm"][i] == pytest.approx((fp + 3 * fn) / w.sum())
        expected = {
            "accuracy": (tp + tn) / (tp + fp + tn + fn),
            "error": (fp + fn) / (tp + fp + tn + fn),
            "sensitivity": tp / (tp + fn),
            "specificity": tn / (tn + fp),
            "ppv": tp / (tp + fp),
            "npv": tn / (tn + fn),
        }
        for name, value in expected.items():
            assert out[name][i] == pytest.approx(value, abs=1e-12)


def test_roc_curve_equals_sklearn_with_sample_weight(run, rng):
    df = weighted_log(rng)
    out = run(df, lambda f: pr.roc_curve(f, weight="w"))
    assert out.schema["tp"] == pl.Float64
    for fold, s, y, w in parts(df):
        got = out.filter(pl.col("fold") == fold)
        fpr, tpr, thr = sk_roc_curve(y, s, sample_weight=w, drop_intermediate=False)
        np.testing.assert_array_equal(got["threshold"].to_numpy(), thr)
        np.testing.assert_allclose(got["fpr"].to_numpy(), fpr, atol=1e-12)
        np.testing.assert_allclose(got["tpr"].to_numpy(), tpr, atol=1e-12)


def test_pooled_roc_is_the_weighted_curve_without_folds(rng):
    df = weighted_log(rng)
    got = pr.pooled_roc(df, weight="w").collect()
    s, y, w = (df[c].to_numpy() for c in ("score", "label", "w"))
    fpr, tpr, thr = sk_roc_curve(y, s, sample_weight=w, drop_intermediate=False)
    np.testing.assert_array_equal(got["threshold"].to_numpy(), thr)
    np.testing.assert_allclose(got["fpr"].to_numpy(), fpr, atol=1e-12)
    np.testing.assert_allclose(got["tpr"].to_numpy(), tpr, atol=1e-12)


def test_average_roc_vertical_averages_sklearn_weighted_curves(rng):
    df = weighted_log(rng)
    grid = np.linspace(0, 1, 11)
    got = pr.average_roc(df, weight="w", grid=grid).collect()
    tprs = []
    for _, s, y, w in parts(df):
        fpr, tpr, _ = sk_roc_curve(y, s, sample_weight=w, drop_intermediate=False)
        # Fawcett's TPR_FOR_FPR: the last point at or left of x, then interpolate.
        tprs.append(np.interp(grid, fpr, tpr, left=0.0, right=1.0))
        last = np.searchsorted(fpr, grid, side="right") - 1
        exact = fpr[last] == grid
        tprs[-1][exact] = tpr[last][exact]
    np.testing.assert_allclose(got["tpr"].to_numpy(), np.mean(tprs, axis=0), atol=1e-12)


# ------------------------------------------------------------------ the weight properties

# Every weighted function, as a query on a frame with columns g, score, label, w;
# ``w`` is None for the unweighted query.
Query = Callable[[pl.DataFrame, str | None], pl.DataFrame]


def _agg(make: Callable[..., pl.Expr], **kw: object) -> Query:
    def query(df: pl.DataFrame, w: str | None) -> pl.DataFrame:
        expr = make("score", "label", weight=w, **kw)
        out = df.group_by("g").agg(expr).sort("g")
        return out.unnest(out.columns[1]) if isinstance(out.dtypes[1], pl.Struct) else out

    return query


def _table(make: Callable[..., pl.LazyFrame], **kw: object) -> Query:
    def query(df: pl.DataFrame, w: str | None) -> pl.DataFrame:
        log = df.rename({"g": "model"}).with_columns(fold=pl.lit(0))
        keep = [c for c in log.columns if c != "w" or w is not None]
        return make(log.select(keep), weight=w, **kw).collect()

    return query


EXPRESSIONS: dict[str, Query] = {
    "auc": _agg(pr.auc),
    "gini": _agg(pr.gini),
    "sauc": _agg(pr.sauc),
    "sauc_parts": _agg(pr.sauc_parts),
    "accuracy": _agg(pr.accuracy, threshold=0.5),
    "error": _agg(pr.error, threshold=0.5),
    "sensitivity": _agg(pr.sensitivity, threshold=0.5),
    "specificity": _agg(pr.specificity, threshold=0.5),
    "ppv": _agg(pr.ppv, threshold=0.5),
    "npv": _agg(pr.npv, threshold=0.5),
    "cost_normalized": _agg(pr.cost, threshold=0.5, cost_fn=2.0, normalize=True),
    "average_precision": _agg(pr.average_precision),
}
# Functions whose values are counts (they scale with the weights).
COUNTS: dict[str, Query] = {
    "confusion": _agg(pr.confusion, threshold=0.5),
    "cost": _agg(pr.cost, threshold=0.5, cost_fn=2.0),
}
TABLES: dict[str, Query] = {
    "roc_curve": _table(pr.roc_curve),
    "roc_curve_grid": _table(pr.roc_curve, thresholds=[0.25, 0.5, 0.75]),
    "pooled_roc": _table(pr.pooled_roc),
    "average_roc_vertical": _table(pr.average_roc, grid=6),
    "average_roc_threshold": _table(pr.average_roc, method="threshold", grid=4),
    "pr_curve": _table(pr.pr_curve),
    "pooled_pr_curve": _table(pr.pooled_pr_curve),
}
ALL = {**EXPRESSIONS, **COUNTS, **TABLES}

rows = st.lists(
    st.tuples(
        st.integers(0, 1),  # group
        st.integers(0, 4).map(lambda k: k / 4),  # score: few values, many ties
        st.booleans(),  # label
        st.integers(0, 3),  # integer weight
    ),
    min_size=1,
    max_size=25,
)


def frame(data: list[tuple[int, float, bool, int]]) -> pl.DataFrame:
    g, s, y, w = zip(*data, strict=True)
    return pl.DataFrame(
        {"g": list(g), "score": list(s), "label": list(y), "w": [float(v) for v in w]}
    )


def repeated(df: pl.DataFrame) -> pl.DataFrame:
    """Each row ``w`` times (weight 0: the row removed), without the weight column."""
    reps = df["w"].cast(pl.Int64)
    return df.drop("w").select(pl.all().repeat_by(reps).explode()).drop_nulls()


def same(a: pl.DataFrame, b: pl.DataFrame) -> None:
    if "g" in a.columns and a.height > b.height:
        # A group whose weights are all 0 has no rows once repeated; weighted, its
        # values are null (all-zero weights → null), except the zero counts.
        gone = a.filter(~pl.col("g").is_in(b["g"].implode()))
        assert all(v is None or v == 0 for row in gone.drop("g").rows() for v in row)
        a = a.filter(pl.col("g").is_in(b["g"].implode()))
    assert_frame_equal(a, b, check_dtypes=False, abs_tol=1e-9, rel_tol=1e-9)


@pytest.mark.parametrize("name", list(ALL))
@settings(max_examples=30)
@given(data=rows)
def test_integer_weights_equal_repeated_rows(name, data):
    # weight 0 repeats the row zero times: this is also "weight 0 ≡ row removed"
    df = frame(data)
    same(ALL[name](df, "w"), ALL[name](repeated(df), None))


@pytest.mark.parametrize("name", list(ALL))
@settings(max_examples=30)
@given(data=rows)
def test_zero_weight_is_the_row_removed(name, data):
    df = frame(data).with_columns(w=pl.when(pl.col("w") > 1).then(1.0).otherwise(pl.col("w")))
    removed = df.filter(pl.col("w") > 0)
    same(ALL[name](df, "w"), ALL[name](removed, "w"))


@pytest.mark.parametrize("name", list(ALL))
@settings(max_examples=30)
@given(data=rows)
def test_unit_weights_equal_unweighted(name, data):
    df = frame(data).with_columns(w=pl.lit(1.0))
    same(ALL[name](df, "w"), ALL[name](df.drop("w"), None))


@pytest.mark.parametrize("name", list(EXPRESSIONS) + list(TABLES))
@settings(max_examples=30)
@given(data=rows, scale=st.sampled_from([0.001, 0.37, 3.0, 1e6]))
def test_scaling_the_weights_changes_nothing(name, data, scale):
    df = frame(data).with_columns(w=pl.col("w") + 0.5)
    scaled = df.with_columns(w=pl.col("w") * scale)
    a, b = ALL[name](df, "w"), ALL[name](scaled, "w")
    counts = [c for c in ("tp", "fp") if c in a.columns]
    same(a.drop(counts), b.drop(counts))
    for c in counts:  # the curves' counts are sums of weights: they scale
        same(a.select(pl.col(c) * scale), b.select(c))


@pytest.mark.parametrize("name", list(COUNTS))
@given(data=rows, scale=st.sampled_from([0.37, 3.0]))
def test_counts_scale_with_the_weights(name, data, scale):
    df = frame(data).with_columns(w=pl.col("w") + 0.5)
    a = ALL[name](df, "w")
    b = ALL[name](df.with_columns(w=pl.col("w") * scale), "w")
    same(a.select("g", pl.exclude("g") * scale), b)


# ------------------------------------------------------------------ awkward weights


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf")])
def test_bad_weight_raises_naming_the_column(bad):
    df = pl.DataFrame(
        {
            "model": "m",
            "fold": 0,
            "score": [0.1, 0.4, 0.8],
            "label": [0, 1, 1],
            "cw": [1.0, bad, 2.0],
        }
    )
    with pytest.raises(ValueError, match="weight column 'cw'"):
        pr.roc_curve(df, weight="cw")  # a DataFrame is checked at once
    with pytest.raises(ValueError, match="weight column 'cw'"):
        pr.pr_curve(df.lazy(), weight="cw").collect()
    with pytest.raises(ValueError, match="weight column 'cw'"):
        df.select(pr.auc("score", "label", weight="cw"))
    with pytest.raises(ValueError, match=r"^polaroc: the weight column 'cw'"):
        df.lazy().select(pr.average_precision("score", "label", weight="cw")).collect()


def test_weight_must_be_numeric():
    df = pl.DataFrame({"score": [0.1, 0.4], "label": [0, 1], "w": ["a", "b"]})
    with pytest.raises(TypeError, match="weight column 'w'"):
        df.select(pr.auc("score", "label", weight="w"))
    with pytest.raises(ValueError, match="'nope'"):
        pr.roc_curve(df.with_columns(model=0, fold=0), weight="nope")


def test_null_weight_drops_the_row_and_all_zero_weights_are_null():
    df = pl.DataFrame(
        {
            "g": [1, 1, 1, 1, 2, 2, 2],
            "score": [0.9, 0.2, 0.7, 0.1, 0.9, 0.5, 0.1],
            "label": [True, False, True, False, True, False, False],
            "w": [1.0, None, 2.0, 1.0, 0.0, 3.0, 1.0],
        }
    )
    out = df.group_by("g").agg(
        pr.auc("score", "label", weight="w"),
        pr.average_precision("score", "label", weight="w"),
        pr.confusion("score", "label", weight="w"),
    )
    out = out.sort("g")
    dropped = df.filter(pl.col("g") == 1).drop_nulls()
    assert out["auc"][0] == roc_auc_score(
        dropped["label"], dropped["score"], sample_weight=dropped["w"]
    )
    # group 2: its only positive has weight 0, so it has no positives
    assert out["auc"][1] is None
    assert out["average_precision"][1] is None
    assert out["confusion"][1] == {"tp": 0.0, "fp": 3.0, "tn": 1.0, "fn": 0.0}


def test_nan_score_with_zero_weight_still_makes_the_group_nan():
    df = pl.DataFrame(
        {"score": [0.9, float("nan"), 0.1], "label": [True, True, False], "w": [1.0, 0.0, 1.0]}
    )
    got = df.select(pr.auc("score", "label", weight="w"), pr.sauc("score", "label", weight="w"))
    assert np.isnan(got["auc"][0])
    assert np.isnan(got["sauc"][0])


# ------------------------------------------------------------------ evaluate and multiclass


def _evaluate(df: pl.DataFrame, w: str | None) -> pl.DataFrame:
    # ``n`` counts samples (rows of weight > 0), not weights, and the standard errors
    # are null when weighted: both are left out of the weight properties.
    log = df.rename({"g": "model"}).with_columns(fold=pl.lit(0))
    out = pr.evaluate(log if w else log.drop("w", strict=False), weight=w).collect()
    metrics = ["n_classes", "auc", "sauc", "error", "average_precision"]
    return out.select(pl.col("model").alias("g"), *metrics).sort("g")


@settings(max_examples=30)
@given(data=rows)
def test_evaluate_integer_weights_equal_repeated_rows(data):
    df = frame(data)
    same(_evaluate(df, "w"), _evaluate(repeated(df), None))


@settings(max_examples=20)
@given(data=rows)
def test_evaluate_unit_weights_equal_unweighted(data):
    df = frame(data).with_columns(w=pl.lit(1.0))
    same(_evaluate(df, "w"), _evaluate(df, None))


def test_evaluate_weighted_equals_sklearn(run, rng):
    df = weighted_log(rng).with_columns(
        w=pl.when(pl.int_range(pl.len()) % 17 == 0).then(None).otherwise(pl.col("w"))
    )
    out = run(df, lambda f: pr.evaluate(f, weight="w")).sort("fold")
    assert out["auc_se_delong"].null_count() == out.height
    assert out["auc_se_hanley_mcneil"].null_count() == out.height
    for i, (_, s, y, w) in enumerate(parts(df)):
        keep = ~np.isnan(w.astype(float))
        s, y, w = s[keep], y[keep], w[keep].astype(float)
        assert out["auc"][i] == pytest.approx(roc_auc_score(y, s, sample_weight=w), abs=1e-12)
        ap = average_precision_score(y, s, sample_weight=w)
        assert out["average_precision"][i] == pytest.approx(ap, abs=1e-12)
        assert out["sauc"][i] == pytest.approx(weighted_pair_sauc(s, y, w), abs=1e-12)
        error = 1 - accuracy_score(y, s >= 0.5, sample_weight=w)
        assert out["error"][i] == pytest.approx(error, abs=1e-12)
        assert out["n"][i] == int((w > 0).sum())
        assert out["n_null_weight"][i] == int((~keep).sum())


def multiclass_frame(data: list[tuple[int, int, int]], scores: list[float]) -> pl.DataFrame:
    """One row per (sample, class) of 3 classes; each sample has a label and a weight."""
    k = 3
    n = len(data)
    return pl.DataFrame(
        {
            "model": [g for g, _, _ in data for _ in range(k)],
            "fold": 0,
            "sample": np.repeat(np.arange(n), k),
            "class": np.tile(np.arange(k), n),
            "label": [lab for _, lab, _ in data for _ in range(k)],
            "score": scores[: n * k],
            "w": [float(w) for _, _, w in data for _ in range(k)],
        }
    )


def repeated_samples(df: pl.DataFrame) -> pl.DataFrame:
    """Each sample ``w`` times under new sample ids (weight 0: the sample removed)."""
    reps = df["w"].cast(pl.Int64)
    out = df.select(pl.all().repeat_by(reps).explode()).drop_nulls()
    copy = pl.int_range(pl.len()).over("model", "sample", "class")
    return out.with_columns(sample=pl.col("sample") * 100 + copy).drop("w")


MULTICLASS: dict[str, Callable[[pl.DataFrame, str | None], pl.DataFrame]] = {
    "pairwise_auc": lambda f, w: (
        pr.pairwise_auc(f, weight=w)
        .drop("n_i", "n_j")
        .sort("model", "class_i", "class_j")
        .collect()
    ),
    "multiclass_auc": lambda f, w: pr.multiclass_auc(f, weight=w).sort("model").collect(),
    "evaluate": lambda f, w: (
        pr.evaluate(f, weight=w)
        .select("model", "n_classes", "auc", "sauc", "error", "average_precision")
        .sort("model")
        .collect()
    ),
}


@pytest.mark.parametrize("name", list(MULTICLASS))
@settings(max_examples=30)
@given(
    data=st.lists(
        st.tuples(st.integers(0, 1), st.integers(0, 2), st.integers(0, 3)), min_size=1, max_size=12
    ),
    scores=st.lists(st.integers(0, 3).map(lambda k: k / 3), min_size=36, max_size=36),
)
def test_multiclass_integer_weights_equal_repeated_samples(name, data, scores):
    df = multiclass_frame(data, scores)
    rep = repeated_samples(df)
    if rep.is_empty():
        return
    got = MULTICLASS[name](df, "w")
    expected = MULTICLASS[name](rep, None)
    got = got.filter(pl.col("model").is_in(expected["model"].implode()))
    assert_frame_equal(got, expected, check_dtypes=False, abs_tol=1e-9, rel_tol=1e-9)


def test_pairwise_auc_weighted_against_weighted_pairs(rng):
    n, k = 60, 3
    label = rng.integers(0, k, n)
    scores = np.round(rng.random((n, k)) * 4) / 4
    w = rng.gamma(2.0, size=n)
    log = pl.DataFrame(
        {
            "model": "m",
            "fold": 0,
            "sample": np.repeat(np.arange(n), k),
            "class": np.tile(np.arange(k), n),
            "label": np.repeat(label, k),
            "score": scores.ravel(),
            "w": np.repeat(w, k),
        }
    )
    out = pr.pairwise_auc(log, weight="w").collect()
    for row in out.iter_rows(named=True):
        i, j = row["class_i"], row["class_j"]
        keep = (label == i) | (label == j)
        for a, cls in (("a_i_j", i), ("a_j_i", j)):
            expected = weighted_pair_auc(scores[keep, cls], label[keep] == cls, w[keep])
            assert row[a] == pytest.approx(expected, abs=1e-12)
        assert row["n_i"] == pytest.approx(w[label == i].sum())


def test_evaluate_weighted_collapsed_ties_equal_rows(rng):
    df = weighted_log(rng, n=400)
    a = pr.evaluate(df, weight="w", collapse_ties=True).sort("fold").collect()
    b = pr.evaluate(df, weight="w", collapse_ties=False).sort("fold").collect()
    assert_frame_equal(a, b, abs_tol=1e-12, check_dtypes=False)
