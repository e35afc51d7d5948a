"""Scoring rules, threshold metrics, H-measure, KS, calibration and threshold tables,
checked against scikit-learn, scipy, the hmeasure package and brute-force counts."""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl
import pytest
from hmeasure import h_score
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import ks_2samp
from sklearn import metrics as skm
from sklearn.calibration import calibration_curve as sk_calibration_curve

import polaroc as pr

EXPRESSIONS = {
    "brier_score": (pr.brier_score, lambda y, s, w: skm.brier_score_loss(y, s, sample_weight=w)),
    "log_loss": (pr.log_loss, lambda y, s, w: skm.log_loss(y, s, sample_weight=w, labels=[0, 1])),
    "f1": (pr.f1, lambda y, s, w: skm.f1_score(y, s >= 0.5, sample_weight=w)),
    "fbeta": (
        lambda *a, **k: pr.fbeta(*a, beta=2.0, **k),
        lambda y, s, w: skm.fbeta_score(y, s >= 0.5, beta=2.0, sample_weight=w),
    ),
    "mcc": (pr.mcc, lambda y, s, w: skm.matthews_corrcoef(y, s >= 0.5, sample_weight=w)),
    "cohen_kappa": (
        pr.cohen_kappa,
        lambda y, s, w: skm.cohen_kappa_score(y, s >= 0.5, sample_weight=w),
    ),
    "balanced_accuracy": (
        pr.balanced_accuracy,
        lambda y, s, w: skm.balanced_accuracy_score(y, s >= 0.5, sample_weight=w),
    ),
    "lr_positive": (
        pr.lr_positive,
        lambda y, s, w: skm.class_likelihood_ratios(y, s >= 0.5, sample_weight=w)[0],
    ),
    "lr_negative": (
        pr.lr_negative,
        lambda y, s, w: skm.class_likelihood_ratios(y, s >= 0.5, sample_weight=w)[1],
    ),
    "ks_statistic": (
        pr.ks_statistic,
        lambda y, s, w: (
            ks_2samp(np.repeat(s[y == 1], w[y == 1]), np.repeat(s[y == 0], w[y == 0])).statistic
        ),
    ),
    "h_measure": (
        pr.h_measure,
        lambda y, s, w: h_score(np.repeat(y, w), np.repeat(s, w)),
    ),
}


def grouped_log(rng: np.random.Generator, n: int = 120) -> pl.DataFrame:
    """Two models × three folds, tied scores (one decimal), integer weights 0-3."""
    rows = []
    for model in ("a", "b"):
        for fold in range(3):
            s = np.round(rng.random(n), 1)
            y = (rng.random(n) < 0.3 + 0.4 * s).astype(np.int64)
            w = rng.integers(0, 4, n).astype(np.int64)
            rows.append(
                pl.DataFrame({"model": model, "fold": fold, "score": s, "label": y, "w": w})
            )
    return pl.concat(rows)


def oracle_table(df: pl.DataFrame, oracle, weighted: bool) -> dict[tuple[str, int], float]:
    out = {}
    for (model, fold), g in df.group_by("model", "fold"):
        y, s = g["label"].to_numpy(), g["score"].to_numpy()
        w = g["w"].to_numpy() if weighted else np.ones(len(y), dtype=np.int64)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = oracle(
                y,
                s,
                w.astype(float) if weighted and oracle is not EXPRESSIONS["ks_statistic"][1] else w,
            )
        out[(model, fold)] = value
    return out


@pytest.mark.parametrize("name", list(EXPRESSIONS))
@pytest.mark.parametrize("weighted", [False, True])
def test_expression_equals_its_oracle_per_group(name, weighted, run, rng):
    df = grouped_log(rng)
    expr, oracle = EXPRESSIONS[name]
    kwargs = {"weight": "w"} if weighted else {}
    got = run(
        df, lambda f: f.group_by("model", "fold").agg(expr("score", "label", **kwargs).alias("v"))
    )
    if name in ("ks_statistic", "h_measure"):
        expected = {}
        for (model, fold), g in df.group_by("model", "fold"):
            y, s = g["label"].to_numpy(), g["score"].to_numpy()
            w = g["w"].to_numpy() if weighted else np.ones(len(y), dtype=np.int64)
            expected[(model, fold)] = oracle(y, s, w)
    else:
        expected = oracle_table(df, oracle, weighted)
    for row in got.iter_rows(named=True):
        want = expected[(row["model"], row["fold"])]
        if np.isnan(want):
            assert row["v"] is None, (name, row)
        else:
            assert row["v"] == pytest.approx(want, rel=1e-9, abs=1e-12), (name, row)


@pytest.mark.parametrize("name", list(EXPRESSIONS))
def test_over_equals_group_by(name, rng):
    df = grouped_log(rng, n=60)
    expr = EXPRESSIONS[name][0]
    agg = df.group_by("model", "fold").agg(expr("score", "label").alias("v"))
    over = df.select(
        "model", "fold", expr("score", "label").over("model", "fold").alias("v")
    ).unique()
    joined = agg.join(over, on=["model", "fold"], suffix="_over")
    assert joined.height == 6
    assert (joined["v"] - joined["v_over"]).abs().max() < 1e-12


def test_h_measure_with_a_severity_ratio_equals_hmeasure(rng):
    s = np.round(rng.random(400), 2)
    y = (rng.random(400) < s).astype(int)
    df = pl.DataFrame({"score": s, "label": y})
    for sr in (0.1, 0.7, 1.0, 3.0):
        got = df.select(pr.h_measure("score", "label", severity_ratio=sr)).item()
        assert got == pytest.approx(h_score(y, s, severity_ratio=sr), abs=1e-12)
    with pytest.raises(ValueError, match="severity_ratio"):
        pr.h_measure("score", "label", severity_ratio=-1.0)


def test_h_measure_published_example():
    # the hmeasure package's docstring example (its R original's definition)
    rng = np.random.default_rng(66)
    y = rng.integers(low=0, high=2, size=10)
    s = rng.random(10)
    df = pl.DataFrame({"score": s, "label": y})
    assert df.select(pr.h_measure("score", "label")).item() == pytest.approx(0.18889596344769588)
    got = df.select(pr.h_measure("score", "label", severity_ratio=0.7)).item()
    assert got == pytest.approx(0.13502616807120948)


def test_h_measure_on_a_large_continuous_log(rng):
    n = 200_000
    y = (rng.random(n) < 0.3).astype(int)
    s = 1 / (1 + np.exp(-(rng.normal(size=n) + 1.2 * y)))
    got = pl.DataFrame({"score": s, "label": y}).select(pr.h_measure("score", "label")).item()
    assert got == pytest.approx(h_score(y, s), abs=1e-9)


# ------------------------------------------------------------------ weight properties

weights = st.lists(st.integers(0, 3), min_size=12, max_size=12)


@settings(max_examples=12)
@given(w=weights, data=st.data())
@pytest.mark.parametrize("name", list(EXPRESSIONS))
def test_integer_weights_are_repeated_rows_and_scaling_changes_nothing(name, w, data):
    s = np.array(
        data.draw(st.lists(st.sampled_from([0.0, 0.2, 0.5, 0.7, 1.0]), min_size=12, max_size=12))
    )
    y = np.array([0, 1] * 6)
    w = np.array(w)
    expr = EXPRESSIONS[name][0]
    df = pl.DataFrame({"score": s, "label": y, "w": w.astype(float)})
    weighted = df.select(expr("score", "label", weight="w")).item()
    repeated = pl.DataFrame({"score": np.repeat(s, w), "label": np.repeat(y, w)})
    plain = repeated.select(expr("score", "label")).item() if len(repeated) else None
    scaled = df.with_columns(pl.col("w") * 2.5).select(expr("score", "label", weight="w")).item()
    if plain is None:
        assert weighted is None
        return
    assert (weighted is None) == (plain is None)
    if plain is not None:
        assert weighted == pytest.approx(plain, rel=1e-9, abs=1e-12)
        assert scaled == pytest.approx(plain, rel=1e-9, abs=1e-12)


# ------------------------------------------------------------------ awkward input


@pytest.mark.parametrize("name", list(EXPRESSIONS))
def test_awkward_input(name):
    expr = EXPRESSIONS[name][0]
    one_class = pl.DataFrame({"score": [0.2, 0.9, float("nan")], "label": [1, 1, 1]})
    assert one_class.select(expr("score", "label")).item() is None
    nan = pl.DataFrame({"score": [0.2, 0.9, float("nan"), 0.4], "label": [1, 0, 1, 0]})
    assert np.isnan(nan.select(expr("score", "label")).item())
    nulls = pl.DataFrame({"score": [0.2, 0.9, None, 0.4], "label": [1, 0, 1, None]})
    dropped = pl.DataFrame({"score": [0.2, 0.9], "label": [1, 0]})
    a, b = (
        nulls.select(expr("score", "label")).item(),
        dropped.select(expr("score", "label")).item(),
    )
    assert (a is None and b is None) or a == pytest.approx(b)


@pytest.mark.parametrize("name", list(EXPRESSIONS))
def test_null_rows_count_nowhere_and_nan_needs_a_labelled_row(name, run, rng):
    """Unweighted, these read the rows as they are (no filtered copies): a row with a null
    score or label must change nothing, a NaN score on an unlabelled row is such a row,
    and a group left with one class by its nulls is null even holding a NaN score. The
    values without the null rows are checked against the oracles above."""
    expr = EXPRESSIONS[name][0]
    parts = []
    for g in range(24):
        n = int(rng.integers(4, 40))
        s = np.round(rng.random(n), int(rng.integers(1, 3))).astype(object)
        y = (rng.random(n) < 0.5).astype(object)
        y[0], y[1] = True, False  # both classes among the usable rows...
        for i in rng.choice(np.arange(2, n), size=min(n - 2, int(rng.integers(0, 5)))):
            if rng.random() < 0.5:
                s[i] = None
            else:
                y[i] = None
                s[i] = float("nan") if rng.random() < 0.5 else s[i]
        if g % 4 == 1:  # ...or not: the one negative loses its score; a positive is NaN
            y[2:] = [None if v is None else True for v in y[2:]]
            s[1], s[0] = None, float("nan")
        if g % 4 == 2:  # a NaN on a labelled row
            s[int(rng.integers(0, n))] = float("nan")
        parts.append(
            pl.DataFrame(
                {"g": g, "score": list(s), "label": list(y)},
                schema={"g": pl.Int64, "score": pl.Float64, "label": pl.Boolean},
            )
        )
    log = pl.concat(parts)

    def query(f):
        return f.group_by("g").agg(expr("score", "label").alias("v")).sort("g")

    got = run(log, query)
    want = run(log.drop_nulls(["score", "label"]), query)
    assert got["g"].to_list() == want["g"].to_list()
    for (g, a), b in zip(got.iter_rows(), want["v"], strict=True):
        if b is None:
            assert a is None, (name, g, a)
        elif np.isnan(b):
            assert a is not None, (name, g)
            assert np.isnan(a), (name, g, a)
        else:
            assert a == pytest.approx(b, rel=1e-12, abs=1e-15), (name, g, a, b)
    assert got.filter(pl.col("g") % 4 == 1)["v"].null_count() == 6  # degenerate before NaN


@pytest.mark.parametrize("rule", [pr.brier_score, pr.log_loss])
def test_scores_outside_0_1_raise_naming_the_column(rule, mode):
    df = pl.DataFrame({"prob": [0.2, 1.5, 0.3], "y": [1, 0, 0]})

    def query() -> None:
        if mode == "eager":
            df.select(rule("prob", "y"))
        else:
            engine = "streaming" if mode == "streaming" else "in-memory"
            df.lazy().select(rule("prob", "y")).collect(engine=engine)

    with pytest.raises(ValueError, match=r"'prob'.*outside \[0, 1\]"):
        query()
    with pytest.raises(ValueError, match="'prob'"):
        pr.calibration(
            df.with_columns(model=pl.lit("m"), fold=pl.lit(0)), score="prob", label="y"
        ).collect()


def test_log_loss_clips_as_scikit_learn():
    y, s = np.array([1, 0, 1, 0]), np.array([0.0, 1.0, 1.0, 0.0])
    got = pl.DataFrame({"s": s, "y": y}).select(pr.log_loss("s", "y")).item()
    assert got == pytest.approx(skm.log_loss(y, s))


# ------------------------------------------------------------------ tables


def demo() -> pl.DataFrame:
    return pl.read_parquet(pr.demo_log_path())


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
@pytest.mark.parametrize("n_bins", [1, 5, 10])
def test_calibration_curve_equals_scikit_learn(strategy, n_bins, run, rng):
    df = grouped_log(rng).with_columns(pl.col("score") / 2 + 0.25)  # edges hit: 0.25, 0.5, ...
    got = run(df, lambda f: pr.calibration_curve(f, n_bins=n_bins, strategy=strategy))
    for (model, fold), g in df.group_by("model", "fold"):
        pt, pp = sk_calibration_curve(g["label"], g["score"], n_bins=n_bins, strategy=strategy)
        mine = got.filter((pl.col("model") == model) & (pl.col("fold") == fold)).sort("bin")
        np.testing.assert_allclose(mine["prob_true"], pt, rtol=1e-12)
        np.testing.assert_allclose(mine["prob_pred"], pp, rtol=1e-12)


def ece_oracle(y, s, n_bins=10):
    edges = np.linspace(0, 1, n_bins + 1)
    ids = np.searchsorted(edges[1:-1], s)
    total = np.bincount(ids, minlength=n_bins)
    pred = np.bincount(ids, weights=s, minlength=n_bins)
    true = np.bincount(ids, weights=y, minlength=n_bins)
    nz = total > 0
    gap = np.abs(true[nz] / total[nz] - pred[nz] / total[nz])
    return (total[nz] * gap).sum() / total.sum(), gap.max()


def test_calibration_binary_on_the_demo_log(run):
    log = demo()
    got = run(log, lambda f: pr.calibration(f))
    pos = log.filter(pl.col("class") == pl.col("class").max())
    for row in got.iter_rows(named=True):
        g = pos.filter((pl.col("model") == row["model"]) & (pl.col("fold") == row["fold"]))
        y, s = (g["label"] == g["class"]).to_numpy().astype(int), g["score"].to_numpy()
        assert row["n_classes"] == 2
        assert row["brier"] == pytest.approx(skm.brier_score_loss(y, s))
        assert row["log_loss"] == pytest.approx(skm.log_loss(y, s))
        ece, mce = ece_oracle(y, s)
        assert row["ece"] == pytest.approx(ece)
        assert row["mce"] == pytest.approx(mce)


def test_calibration_multiclass_equals_scikit_learn(run, rng):
    n, k = 300, 3
    p = rng.dirichlet(np.ones(k), size=n).round(2)
    p[:, -1] = 1 - p[:, :-1].sum(axis=1)
    p = np.clip(p, 0, 1)
    y = np.array([rng.choice(k, p=row / row.sum()) for row in p])
    log = pl.DataFrame(
        {
            "model": "m",
            "fold": 0,
            "sample": np.repeat(np.arange(n), k),
            "class": np.tile(np.arange(k), n),
            "score": p.ravel(),
            "label": np.repeat(y, k),
        }
    )
    row = run(log, lambda f: pr.calibration(f)).row(0, named=True)
    assert row["n_classes"] == 3
    assert row["brier"] == pytest.approx(skm.brier_score_loss(y, p, labels=[0, 1, 2]))
    assert row["log_loss"] == pytest.approx(
        skm.log_loss(y, p / p.sum(axis=1, keepdims=True)), rel=1e-2
    )
    conf = p.max(axis=1)
    hit = (np.argmax(p, axis=1) == y).astype(float)
    ece, mce = ece_oracle(hit, conf)
    assert row["ece"] == pytest.approx(ece)
    assert row["mce"] == pytest.approx(mce)


@pytest.mark.parametrize("weighted", [False, True])
def test_threshold_table_and_det_curve_equal_scikit_learn(weighted, run, rng):
    df = grouped_log(rng).filter(pl.col("w") > 0)
    kw = {"weight": "w"} if weighted else {}
    table = run(df, lambda f: pr.threshold_table(f, **kw))
    det = run(df, lambda f: pr.det_curve(f, **kw))
    for (model, fold), g in df.group_by("model", "fold"):
        y, s = g["label"].to_numpy(), g["score"].to_numpy()
        w = g["w"].to_numpy().astype(float) if weighted else None
        tns, fps, fns, tps, th = skm.confusion_matrix_at_thresholds(y, s, sample_weight=w)
        mine = table.filter((pl.col("model") == model) & (pl.col("fold") == fold))
        for name, want in zip(
            ("tn", "fp", "fn", "tp", "threshold"), (tns, fps, fns, tps, th), strict=False
        ):
            np.testing.assert_allclose(mine[name].to_numpy(), want)
        np.testing.assert_allclose(mine["tpr"], tps / tps[-1])
        fpr, fnr, th = skm.det_curve(y, s, sample_weight=w)
        mine = det.filter((pl.col("model") == model) & (pl.col("fold") == fold))
        np.testing.assert_allclose(mine["fpr"], fpr)
        np.testing.assert_allclose(mine["fnr"], fnr)
        np.testing.assert_allclose(mine["threshold"], th)


def test_gain_and_lift_follow_yardstick(run, rng):
    df = grouped_log(rng)
    gain = run(df, lambda f: pr.gain_curve(f, weight="w"))
    lift = run(df, lambda f: pr.lift_curve(f, weight="w"))
    for (model, fold), g in df.group_by("model", "fold"):
        # yardstick's gain_curve_binary_impl, transcribed: order by decreasing score,
        # cumulative sums, keep the last of each duplicated score, prepend 0
        order = np.argsort(-g["score"].to_numpy(), kind="stable")
        s, y, w = (g[c].to_numpy()[order] for c in ("score", "label", "w"))
        tested, found = np.cumsum(w), np.cumsum(w * y)
        last = np.r_[s[1:] != s[:-1], True]
        pt = np.r_[0, tested[last] / w.sum() * 100]
        pf = np.r_[0, found[last] / (w * y).sum() * 100]
        mine = gain.filter((pl.col("model") == model) & (pl.col("fold") == fold))
        np.testing.assert_allclose(mine["percent_tested"], pt)
        np.testing.assert_allclose(mine["percent_found"], pf)
        mine = lift.filter((pl.col("model") == model) & (pl.col("fold") == fold))
        assert mine["lift"][0] is None
        np.testing.assert_allclose(mine["lift"].to_numpy()[1:], pf[1:] / pt[1:])


def test_top_k_accuracy_equals_scikit_learn(run, rng):
    n, k = 200, 4
    p = np.round(rng.random((n, k)), 1)  # ties between classes
    y = rng.integers(0, k, n)
    w = rng.integers(1, 4, n).astype(float)
    log = pl.DataFrame(
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
    for kk in (1, 2, 3):
        got = run(log, lambda f, kk=kk: pr.top_k_accuracy(f, k=kk)).item(0, "top_k_accuracy")
        assert got == pytest.approx(skm.top_k_accuracy_score(y, p, k=kk, labels=range(k)))
        got = run(log, lambda f, kk=kk: pr.top_k_accuracy(f, k=kk, weight="w")).item(
            0, "top_k_accuracy"
        )
        assert got == pytest.approx(
            skm.top_k_accuracy_score(y, p, k=kk, sample_weight=w, labels=range(k))
        )


@pytest.mark.filterwarnings("ignore:'k' .* will result in a perfect score")
def test_top_k_accuracy_of_one_score_row_per_sample_is_scikit_learns_binary_rule(rng):
    # issue 32: a binary log of the positive class's rows gave 1.0 (its negatives dropped)
    n = 300
    y = rng.integers(0, 2, n)
    s = np.round(rng.random(n), 2)
    s = np.where(s == 0.5, 0.51, s)  # scikit-learn predicts positive iff s > 0.5, here >=
    positive = pl.DataFrame({"model": "m", "fold": 0, "sample": np.arange(n), "score": s})
    logs = {
        "positive rows": positive.with_columns(pl.lit(1).alias("class"), pl.lit(y).alias("label")),
        "no class column": positive.with_columns(pl.lit(y == 1).alias("label")),
    }
    for name, log in logs.items():
        for k in (1, 2):
            got = pr.top_k_accuracy(log, k=k).collect().item(0, "top_k_accuracy")
            assert got == pytest.approx(skm.top_k_accuracy_score(y, s, k=k)), (name, k)
        at = pr.top_k_accuracy(log, k=1, threshold=0.3).collect().item(0, "top_k_accuracy")
        assert at == pytest.approx(skm.accuracy_score(y, s >= 0.3)), name


def test_top_k_accuracy_over_folds_keeps_each_folds_samples_apart(rng):
    # issue 32: sample ids restart in every (model, fold); by=() pooled different
    # samples' class rows into one "sample" (0.365 where scikit-learn gives 0.889)
    parts, ys, ps = [], [], []
    for model in ("a", "b"):
        for fold in range(3):
            n, c = 30, 3
            y = rng.integers(0, c, n)
            p = rng.random((n, c))
            p[np.arange(n), y] += 0.8
            parts.append(
                pl.DataFrame(
                    {
                        "model": model,
                        "fold": fold,
                        "sample": np.repeat(np.arange(n), c),
                        "class": np.tile(np.arange(c), n),
                        "score": p.ravel(),
                        "label": np.repeat(y, c),
                    }
                )
            )
            ys.append(y)
            ps.append(p)
    log = pl.concat(parts)
    got = pr.top_k_accuracy(log, k=1, by=()).collect().item(0, "top_k_accuracy")
    assert got == pytest.approx(skm.top_k_accuracy_score(np.concatenate(ys), np.vstack(ps), k=1))
    by_model = pr.top_k_accuracy(log, k=1, by="model").collect().sort("model")
    for i, row in enumerate(by_model.iter_rows(named=True)):
        want = skm.top_k_accuracy_score(
            np.concatenate(ys[3 * i : 3 * i + 3]), np.vstack(ps[3 * i : 3 * i + 3]), k=1
        )
        assert row["n"] == 90
        assert row["top_k_accuracy"] == pytest.approx(want)


def test_operating_points_are_the_brute_force_optimum(rng):
    df = grouped_log(rng, n=80).filter(pl.col("model") == "a", pl.col("fold") == 0)
    y, s = df["label"].to_numpy(), df["score"].to_numpy()
    candidates = np.unique(s)
    dist = [
        (1 - skm.recall_score(y, s >= t)) ** 2 + (1 - skm.recall_score(1 - y, s < t)) ** 2
        for t in candidates
    ]
    point = pr.closest_topleft_point(df).collect()
    assert point["distance"].item() ** 2 == pytest.approx(min(dist))
    f1s = [skm.f1_score(y, s >= t) for t in candidates]
    best = pr.max_metric_point(df, metric="f1").collect()
    assert best["f1"].item() == pytest.approx(max(f1s))
    assert df.select(
        pr.f1("score", "label", threshold=best["threshold"].item())
    ).item() == pytest.approx(max(f1s))
    mccs = [skm.matthews_corrcoef(y, s >= t) for t in candidates]
    assert pr.max_metric_point(df, metric="mcc").collect()["mcc"].item() == pytest.approx(max(mccs))


def test_tables_on_the_demo_shape_with_a_nan_and_a_one_class_group():
    log = demo().with_columns(
        score=pl.when((pl.col("model") == "tree") & (pl.col("fold") == 0) & (pl.col("sample") == 3))
        .then(float("nan"))
        .otherwise(pl.col("score"))
    )
    one_class = log.filter(
        pl.col("model") == "lda", pl.col("fold") == 1, pl.col("label") == "benign"
    )
    log = pl.concat([log.filter(~((pl.col("model") == "lda") & (pl.col("fold") == 1))), one_class])
    cal = pr.calibration(log).collect()
    nan_row = cal.filter(pl.col("model") == "tree", pl.col("fold") == 0)
    assert np.isnan(nan_row["brier"].item())
    assert np.isnan(nan_row["ece"].item())
    assert cal.filter(pl.col("model") == "lda", pl.col("fold") == 1)["brier"].item() is None
    assert cal.filter(pl.col("model") == "forest")["brier"].is_not_null().all()
    table = pr.threshold_table(log).collect()
    assert table.filter(pl.col("model") == "tree", pl.col("fold") == 0)["tpr"].is_nan().all()


def test_evaluate_has_brier_and_log_loss_when_the_scores_are_probabilities(run):
    log = demo()
    table = run(log, lambda f: pr.evaluate(f))
    pos = log.filter(pl.col("class") == "malignant")
    for row in table.iter_rows(named=True):
        g = pos.filter((pl.col("model") == row["model"]) & (pl.col("fold") == row["fold"]))
        y, s = (g["label"] == "malignant").to_numpy().astype(int), g["score"].to_numpy()
        assert row["brier"] == pytest.approx(skm.brier_score_loss(y, s))
        assert row["log_loss"] == pytest.approx(skm.log_loss(y, s))
        assert row["n_not_probability"] == 0
    margins = log.with_columns(pl.col("score") * 3 - 1)  # not probabilities
    table = run(margins, lambda f: pr.evaluate(f))
    assert table["brier"].is_null().all()
    assert table["log_loss"].is_null().all()
    assert (table["n_not_probability"] > 0).all()


def test_figures_draw_the_tables():
    import matplotlib

    matplotlib.use("Agg")
    from scipy.stats import norm

    from polaroc import plot

    log = pl.scan_parquet(pr.demo_log_path()).filter(pl.col("class") == "malignant")
    det = pr.det_curve(log, by="model").collect()
    ax = plot.det(det).axes[0]
    forest = det.filter(pl.col("model") == "forest")
    x = norm.ppf(forest["fpr"].to_numpy())
    y = norm.ppf(forest["fnr"].to_numpy())
    keep = np.isfinite(x) & np.isfinite(y)
    line = next(li for li in ax.get_lines() if li.get_label() == "forest")
    np.testing.assert_allclose(line.get_xdata(), x[keep])
    np.testing.assert_allclose(line.get_ydata(), y[keep])
    curve = pr.calibration_curve(log, n_bins=10).collect()
    assert len(plot.calibration(curve).axes) == 2 * curve["model"].n_unique()
    gain = pr.gain_curve(log).collect()
    left = plot.gain_lift(gain, pr.lift_curve(log)).axes[0]
    first = gain.filter(pl.col("model") == "forest", pl.col("fold") == gain["fold"].min())
    drawn = next(li for li in left.get_lines() if li.get_label() == "forest")
    np.testing.assert_allclose(drawn.get_ydata(), first["percent_found"])
