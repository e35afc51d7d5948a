"""bootstrap_test, venkatraman_test, roc_ci and coords_ci against independent oracles.

pROC's own numbers are checked in tests/proc/test_proc_infa.py; here the pieces are
checked against definitions computed another way (scikit-learn's AUC on each drawn
replicate, pROC's R code transcribed loop by loop), plus the input policies.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from sklearn.metrics import roc_auc_score

import polaroc as pr
from polaroc.core.replicates import draws as _draws
from polaroc.core.replicates import replicate_aucs as _replicate_aucs
from polaroc.metrics.intervals import _read_off

COMPARISON = ["model_a", "model_b", "n", "estimate", "statistic", "p_value", "reject"]


def two_models(rng: np.random.Generator, n: int = 120, folds: int = 2, digits: int | None = None):
    parts = []
    for fold in range(folds):
        label = rng.random(n) < 0.4
        shared = rng.normal(size=n)
        for model, shift in (("a", 1.0), ("b", 0.5)):
            score = shared + shift * label + rng.normal(0, 0.8, n)
            if digits is not None:
                score = np.round(score, digits)
            parts.append(
                pl.DataFrame(
                    {
                        "model": model,
                        "fold": fold,
                        "sample": np.arange(n),
                        "score": score,
                        "label": label,
                    }
                )
            )
    return pl.concat(parts)


@pytest.mark.parametrize("digits", [None, 1])
def test_replicate_aucs_equal_sklearn_on_each_drawn_replicate(rng, digits):
    score = rng.normal(size=70) + (label := rng.random(70) < 0.4)
    if digits is not None:
        score = np.round(score, digits)
    draws = _draws(np.random.default_rng(3), int(label.sum()), int((~label).sum()), 25)
    got = _replicate_aucs(score, label, draws)
    pos, neg = score[label], score[~label]
    for b in range(25):
        drawn_pos, drawn_neg = pos[draws[0][b]], neg[draws[1][b]]
        y = np.r_[np.ones(drawn_pos.size), np.zeros(drawn_neg.size)]
        assert got[b] == pytest.approx(roc_auc_score(y, np.r_[drawn_pos, drawn_neg]), abs=1e-12)


def test_bootstrap_test_shape_engines_and_seed(run, rng):
    log = two_models(rng)
    out = run(log, lambda f: pr.bootstrap_test(f, "a", "b", n_boot=300, seed=4, by="fold"))
    assert out.columns == ["fold", *COMPARISON, "auc_a", "auc_b", "sd_diff", "n_boot"]
    again = pr.bootstrap_test(
        log.sample(fraction=1.0, shuffle=True, seed=2), "a", "b", n_boot=300, seed=4, by="fold"
    ).collect()
    # same seed, any row order: the same replicates
    assert_frame_equal(out, again, check_exact=False, rel_tol=1e-12)
    alone = pr.bootstrap_test(log.filter(fold=1), "a", "b", n_boot=300, seed=4, by="fold")
    assert_frame_equal(alone.collect(), out[1], check_exact=False, rel_tol=1e-12)
    delong = pr.delong_test(log, "a", "b", by="fold").collect()
    np.testing.assert_allclose(out["estimate"], delong["estimate"], atol=1e-12)
    # the bootstrap SD estimates DeLong's SE of the difference (within ~15% at 300 reps)
    se = np.sqrt(delong["var_a"] + delong["var_b"] - 2 * delong["cov"])
    np.testing.assert_allclose(out["sd_diff"], se, rtol=0.2)


def test_bootstrap_alternatives_add_up_and_adjust(rng):
    log = two_models(rng, folds=3)
    p = {
        alt: pr.bootstrap_test(log, "a", "b", n_boot=200, seed=1, by="fold", alternative=alt)
        .collect()["p_value"]
        .to_numpy()
        for alt in ("greater", "less", "two-sided")
    }
    np.testing.assert_allclose(p["greater"] + p["less"], 1.0, atol=1e-12)
    np.testing.assert_allclose(p["two-sided"], 2 * np.minimum(p["greater"], p["less"]), atol=1e-12)
    out = pr.bootstrap_test(log, "a", "b", n_boot=200, seed=1, by="fold", adjust="bonferroni")
    got = out.collect()
    np.testing.assert_allclose(got["p_adjusted"], np.minimum(3 * p["two-sided"], 1.0))


def test_bootstrap_awkward_groups(rng):
    log = two_models(rng, folds=3).with_columns(
        label=pl.when(pl.col("fold") == 0).then(True).otherwise("label"),
        score=pl.when((pl.col("fold") == 1) & (pl.col("sample") == 3))
        .then(float("nan"))
        .otherwise("score"),
    )
    out = pr.bootstrap_test(log, "a", "b", n_boot=100, seed=1, by="fold").collect()
    assert out["statistic"][0] is None
    assert out["reject"][0] is None
    assert math.isnan(out["statistic"][1])
    assert out["reject"][1] is None
    assert math.isfinite(out["statistic"][2])
    same = pl.concat(
        [
            log.filter(model="a", fold=2),
            log.filter(model="a", fold=2).with_columns(model=pl.lit("b")),
        ]
    )
    row = pr.bootstrap_test(same, "a", "b", n_boot=50, seed=1).collect().row(0, named=True)
    assert (row["statistic"], row["p_value"]) == (0.0, 1.0)  # pROC: D = 0 for equal curves


def test_unpaired_bootstrap_reads_each_model_alone(rng):
    log = two_models(rng, folds=1)
    log = log.with_columns(
        sample=pl.when(pl.col("model") == "b").then(pl.col("sample") + 1000).otherwise("sample")
    )
    log = log.filter((pl.col("model") == "a") | (pl.col("sample") < 1100))  # b has fewer rows
    row = (
        pr.bootstrap_test(log, "a", "b", n_boot=400, seed=2, paired=False)
        .collect()
        .row(0, named=True)
    )
    delong = pr.delong_test(log, "a", "b", paired=False).collect().row(0, named=True)
    assert row["n"] == delong["n"] == 220
    assert row["estimate"] == pytest.approx(delong["estimate"], abs=1e-12)
    assert row["sd_diff"] == pytest.approx(math.sqrt(delong["var_a"] + delong["var_b"]), rel=0.2)


def _proc_venkatraman_e(r: np.ndarray, s: np.ndarray, d: np.ndarray) -> float:
    # pROC's venkatraman.paired.stat, loop by loop
    n = d.size
    total = 0
    for x in range(1, n + 1):
        r_err = np.sum(r[d] <= x) + np.sum(r[~d] > x)
        s_err = np.sum(s[d] <= x) + np.sum(s[~d] > x)
        total += abs(s_err - r_err)
    return float(total)


def _rank_first(x: np.ndarray) -> np.ndarray:
    order = np.lexsort((np.arange(x.size), x))
    ranks = np.empty(x.size, dtype=np.int64)
    ranks[order] = np.arange(1, x.size + 1)
    return ranks


@pytest.mark.parametrize("digits", [None, 0])
def test_venkatraman_statistic_equals_proc_definition(run, rng, digits):
    log = two_models(rng, n=60, folds=1, digits=digits)
    out = run(log, lambda f: pr.venkatraman_test(f, "a", "b", n_perm=200, seed=3))
    assert out.columns == [*COMPARISON, "auc_a", "auc_b", "n_perm"]
    a, b = (log.filter(model=m).sort("sample") for m in ("a", "b"))
    d = a["label"].to_numpy()
    e = _proc_venkatraman_e(
        _rank_first(a["score"].to_numpy()), _rank_first(b["score"].to_numpy()), d
    )
    assert out["statistic"][0] == e
    assert 0 <= out["p_value"][0] <= 1


def test_venkatraman_p_is_near_uniform_under_the_null(rng):
    # exchangeable models: the permutation p-value's mean is about ½
    ps = []
    for seed in range(8):
        log = two_models(np.random.default_rng(seed), n=50, folds=1)
        log = pl.concat(
            [
                log.filter(model="a"),
                log.filter(model="a").with_columns(
                    model=pl.lit("b"),
                    score=pl.col("score") + np.random.default_rng(seed + 99).normal(0, 0.8, 50),
                ),
            ]
        )
        ps.append(pr.venkatraman_test(log, "a", "b", n_perm=200, seed=seed).collect()["p_value"][0])
    assert 0.2 < np.mean(ps) < 0.8


def test_venkatraman_nan_and_degenerate(rng):
    log = two_models(rng, folds=2).with_columns(
        label=pl.when(pl.col("fold") == 0).then(True).otherwise("label")
    )
    out = pr.venkatraman_test(log, "a", "b", n_perm=50, seed=1, by="fold").collect()
    assert out["p_value"][0] is None
    assert out["p_value"][1] is not None
    nan = log.with_columns(
        score=pl.when(pl.col("sample") == 0).then(float("nan")).otherwise("score")
    )
    got = pr.venkatraman_test(nan, "a", "b", n_perm=50, seed=1, by="fold").collect()
    assert math.isnan(got["p_value"][1])
    assert got["reject"][1] is None


def _proc_coords(sp_curve: np.ndarray, se_curve: np.ndarray, value: float) -> float:
    # pROC's coords(input="specificity", ret="sensitivity"), points in ascending threshold
    idx = np.flatnonzero(sp_curve == value)
    if idx.size:
        return float(se_curve[idx[0]])
    nxt = int(np.argmax(sp_curve > value))
    prop = (value - sp_curve[nxt]) / (sp_curve[nxt - 1] - sp_curve[nxt])
    return float(se_curve[nxt] + prop * (se_curve[nxt - 1] - se_curve[nxt]))


@pytest.mark.parametrize("digits", [None, 1])
def test_read_off_equals_proc_coords(rng, digits):
    y = rng.random(80) < 0.4
    score = rng.normal(size=80) + y
    if digits is not None:
        score = np.round(score, digits)
    thresholds = np.r_[-np.inf, np.unique(score), np.inf]  # ascending, as pROC orders them
    se = np.array([np.mean(score[y] >= t) for t in thresholds])
    sp = np.array([np.mean(score[~y] < t) for t in thresholds])
    points = pl.LazyFrame({"_pr_replicate": 0, "specificity": sp, "sensitivity": se})
    at = sorted({*np.round(rng.random(15), 3).tolist(), float(sp[5]), float(sp[20]), 0.0, 1.0})
    got = _read_off(points, ["_pr_replicate"], "specificity", "sensitivity", at).collect()
    expected = [_proc_coords(sp, se, v) for v in at]
    np.testing.assert_allclose(got.sort("specificity")["sensitivity"], expected, atol=1e-12)


def test_roc_ci_and_coords_ci_shapes_and_policies(run, rng):
    log = two_models(rng, folds=2)
    band = run(log, lambda f: pr.roc_ci(f, specificities=[0.2, 0.8], n_boot=100, seed=1))
    assert band.columns == ["model", "fold", "specificity", "low", "median", "high"]
    assert band.height == 8
    assert (band["low"] <= band["median"]).all()
    assert (band["median"] <= band["high"]).all()
    rev = pr.roc_ci(log, sensitivities=[0.5], n_boot=100, seed=1, by="model").collect()
    assert rev.columns == ["model", "sensitivity", "low", "median", "high"]
    ci = run(log, lambda f: pr.coords_ci(f, [0.0, 0.5], n_boot=100, seed=1, by=()))
    assert ci.columns == [
        "threshold",
        *(f"{c}_{q}" for c in ("specificity", "sensitivity") for q in ("low", "median", "high")),
    ]
    with pytest.raises(ValueError, match="one of them"):
        pr.roc_ci(log, specificities=[0.5], sensitivities=[0.5])
    with pytest.raises(ValueError, match="n_boot"):
        pr.roc_ci(log, n_boot=1)


def test_delong_alternatives_and_concat_with_other_tables(rng):
    log = two_models(rng, folds=3)
    p = {
        alt: pr.delong_test(log, "a", "b", alternative=alt).collect()["p_value"][0]
        for alt in ("greater", "less", "two-sided")
    }
    assert p["greater"] + p["less"] == pytest.approx(1.0)
    assert p["two-sided"] == pytest.approx(2 * min(p["greater"], p["less"]))
    table = pr.evaluate(log).collect()
    both = pl.concat(
        [
            pr.paired_ttest(table).collect(),
            pr.delong_test(log, "a", "b").collect(),
            pr.bootstrap_test(log, "a", "b", n_boot=50, seed=1).collect(),
        ],
        how="diagonal_relaxed",
    )
    assert both.height == 3
    with pytest.raises(ValueError, match="alternative"):
        pr.delong_test(log, "a", "b", alternative="bigger")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="level"):
        pr.delong_test(log, "a", "b", level=95)


def test_auc_ci_is_an_aggregating_expression(run, rng):
    log = two_models(rng, folds=2)
    grouped = run(log, lambda f: f.group_by("model", "fold").agg(pr.auc_ci("score", "label")))
    windowed = run(log, lambda f: f.select(pr.auc_ci("score", "label").over("model", "fold")))
    for row in grouped.iter_rows(named=True):
        one = log.filter(model=row["model"], fold=row["fold"])
        auc = roc_auc_score(one["label"], one["score"])
        se = one.select(pr.auc_se("score", "label")).item()
        assert row["auc_ci"]["auc"] == pytest.approx(auc)
        assert row["auc_ci"]["ci_low"] == pytest.approx(max(0.0, auc - 1.959963984540054 * se))
    assert windowed.height == log.height
    hm = log.select(pr.auc_ci("score", "label", method="hanley_mcneil", level=0.9)).item()
    assert hm["ci_low"] < hm["auc"] < hm["ci_high"]


def test_auc_ci_degenerate_and_nan():
    one_class = pl.DataFrame({"score": [0.1, 0.2], "label": [True, True]})
    assert one_class.select(pr.auc_ci("score", "label")).item() == {
        "auc": None,
        "ci_low": None,
        "ci_high": None,
    }
    nan = pl.DataFrame(
        {"score": [0.1, float("nan"), 0.3, 0.4], "label": [True, False, True, False]}
    )
    got: dict[str, Any] = nan.select(pr.auc_ci("score", "label")).item()
    assert all(math.isnan(v) for v in got.values())


def _proc_unpaired_e(r: np.ndarray, s: np.ndarray, d1: np.ndarray, d2: np.ndarray) -> float:
    # pROC's venkatraman.unpaired.stat transcribed: approxfun is linear, NA outside its range
    mp = (d1.sum() + d2.sum()) / (2 * d1.size)  # as pROC 1.18 writes it

    def curve(ranks: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x = np.arange(1, ranks.size + 1)
        fx = np.array([np.sum(ranks[d] <= v) for v in x]) / d.sum()
        gx = np.array([np.sum(ranks[~d] <= v) for v in x]) / (~d).sum()
        return mp * fx + (1 - mp) * gx, mp * fx + (1 - mp) * (1 - gx)

    (rp, re), (sp, se) = curve(r, d1), curve(s, d2)
    x = np.sort(np.r_[rp, sp])
    y = np.abs(
        np.interp(x, rp, re, left=np.nan, right=np.nan)
        - np.interp(x, sp, se, left=np.nan, right=np.nan)
    )
    return float(np.nansum((y[1:] + y[:-1]) * np.diff(x) / 2))


@pytest.mark.parametrize("digits", [None, 0])
def test_unpaired_venkatraman_statistic_equals_proc_definition(rng, digits):
    log = two_models(rng, n=50, folds=1, digits=digits)
    log = log.filter((pl.col("model") == "a") | (pl.col("sample") < 35))  # b: 35 samples
    out = pr.venkatraman_test(log, "a", "b", n_perm=100, seed=3, paired=False).collect()
    a, b = (log.filter(model=m).sort("sample") for m in ("a", "b"))
    e = _proc_unpaired_e(
        _rank_first(a["score"].to_numpy()),
        _rank_first(b["score"].to_numpy()),
        a["label"].to_numpy(),
        b["label"].to_numpy(),
    )
    assert out["statistic"][0] == pytest.approx(e, rel=1e-9, abs=1e-15)
    assert out["n"][0] == 85


def test_demo_log_shape_with_class_rows_and_renamed_columns(run):
    demo = pl.read_parquet(pr.demo_log_path()).rename({"score": "prob"})
    models = sorted(demo["model"].unique().to_list())[:2]
    cls = "malignant"
    kw = {"positive_class": cls, "score": "prob", "by": "fold"}
    boot = run(demo, lambda f: pr.bootstrap_test(f, *models, n_boot=100, seed=1, **kw))
    venk = run(demo, lambda f: pr.venkatraman_test(f, *models, n_perm=50, seed=1, **kw))
    delong = run(demo, lambda f: pr.delong_test(f, *models, **kw))
    assert boot["fold"].to_list() == venk["fold"].to_list() == delong["fold"].to_list()
    np.testing.assert_allclose(boot["estimate"], delong["estimate"], atol=1e-12)
    np.testing.assert_allclose(venk["auc_a"], delong["auc_a"], atol=1e-12)
    one = demo.filter(pl.col("class") == cls)
    first = one.filter(model=models[0], fold=0)
    auc = roc_auc_score(first["label"] == cls, first["prob"])
    assert delong["auc_a"][0] == pytest.approx(auc, abs=1e-12)
    band = run(
        demo,
        lambda f: pr.roc_ci(
            f, positive_class=cls, score="prob", specificities=[0.9], n_boot=50, seed=1
        ),
    )
    assert band.select("model", "fold").n_unique() == demo.select("model", "fold").n_unique()
    # a two-class log is read through its larger class (malignant, the Enum's last),
    # stated in the output's class column
    assert boot["class"].cast(pl.String).unique().to_list() == [cls]
    default = pr.bootstrap_test(demo, *models, n_boot=100, seed=1, score="prob", by="fold")
    assert_frame_equal(default.collect(), boot.sort("fold"))


def test_roc_ci_and_coords_ci_policies(rng):
    log = (
        two_models(rng, folds=3)
        .filter(model="a")
        .with_columns(
            label=pl.when(pl.col("fold") == 0).then(True).otherwise("label"),
            score=pl.when((pl.col("fold") == 1) & (pl.col("sample") == 2))
            .then(float("nan"))
            .otherwise("score"),
        )
    )
    for out in (
        pr.roc_ci(log, specificities=[0.5], n_boot=50, seed=1).collect(),
        pr.coords_ci(log, [0.0], n_boot=50, seed=1).collect(),
    ):
        values = out.drop("model", "fold", "specificity", "threshold", strict=False)
        assert values.row(0) == (None,) * values.width
        assert all(math.isnan(v) for v in values.row(1))
        assert all(math.isfinite(v) for v in values.row(2))
