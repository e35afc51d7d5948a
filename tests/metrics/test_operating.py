"""Operating points against a brute-force search over every threshold."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

import polaroc as pr
from tests.oracles import counts_at

INF = float("inf")


def fold_log(rng: np.random.Generator, folds: int = 4, n: int = 80, ties: bool = False):
    fold = np.repeat(np.arange(folds), n)
    label = rng.random(fold.size) < 0.45
    score = rng.normal(size=fold.size) + label * rng.uniform(0.5, 2.0, size=folds)[fold]
    if ties:
        score = np.round(score * 2) / 2
    return pl.DataFrame({"model": "m", "fold": fold, "score": score, "label": label})


def brute_force(s, y, objective, candidates=None, cost_fp=1.0, cost_fn=1.0):
    """Best (objective, sensitivity, threshold) over every threshold, by direct counting."""
    s, y = np.asarray(s, dtype=float), np.asarray(y, dtype=bool)
    thresholds = np.r_[INF, np.unique(s)] if candidates is None else np.asarray(candidates)
    fp, tp = counts_at(s, y, thresholds)
    fp[0], tp[0] = 0, 0  # the +inf point predicts nothing positive
    n_pos, n_neg = y.sum(), (~y).sum()
    best = None
    for t, tp_t, fp_t in zip(thresholds, tp, fp, strict=True):
        sens, spec = tp_t / n_pos, (n_neg - fp_t) / n_neg
        cost = fp_t * cost_fp + (n_pos - tp_t) * cost_fn
        value = objective(sens, spec, cost)
        if value is not None and (best is None or (value, sens, t) > best[0]):
            best = (
                (value, sens, t),
                {"threshold": t, "sensitivity": sens, "specificity": spec, "cost": cost},
            )
    return best[1]


def parts(df):
    for (fold,), part in sorted(df.partition_by("fold", as_dict=True).items()):
        yield fold, part["score"].to_numpy(), part["label"].to_numpy()


def check(out: pl.DataFrame, df: pl.DataFrame, objective, **kwargs):
    for fold, s, y in parts(df):
        row = out.filter(pl.col("fold") == fold).to_dicts()[0]
        expected = brute_force(s, y, objective, **kwargs)
        for name, value in expected.items():
            assert row[name] == pytest.approx(value, abs=1e-12), (fold, name)


@pytest.mark.parametrize("ties", [False, True])
def test_youden_point_is_the_brute_force_maximum(run, rng, ties):
    df = fold_log(rng, ties=ties)
    out = run(df, lambda f: pr.youden_point(f))
    assert out.columns == [
        "model",
        "fold",
        "threshold",
        "sensitivity",
        "specificity",
        "cost",
        "youden_j",
    ]
    check(out, df, lambda sens, spec, cost: sens + spec - 1)
    assert (out["youden_j"] - (out["sensitivity"] + out["specificity"] - 1)).abs().max() < 1e-12


@pytest.mark.parametrize("target", [0.0, 0.5, 0.8, 0.95, 1.0])
@pytest.mark.parametrize("ties", [False, True])
def test_neyman_pearson_both_directions(run, rng, target, ties):
    df = fold_log(rng, ties=ties)
    by_sens = run(df, lambda f: pr.neyman_pearson_point(f, min_sensitivity=target))
    check(by_sens, df, lambda sens, spec, cost: spec if sens >= target else None)
    assert (by_sens["sensitivity"] >= target).all()
    by_spec = run(df, lambda f: pr.neyman_pearson_point(f, min_specificity=target))
    check(by_spec, df, lambda sens, spec, cost: sens if spec >= target else None)
    assert (by_spec["specificity"] >= target).all()


@pytest.mark.parametrize(("cost_fp", "cost_fn"), [(1.0, 1.0), (1.0, 5.0), (4.0, 1.0), (0.0, 1.0)])
def test_min_cost_point_is_the_brute_force_minimum(run, rng, cost_fp, cost_fn):
    df = fold_log(rng, ties=True)
    out = run(df, lambda f: pr.min_cost_point(f, cost_fp=cost_fp, cost_fn=cost_fn))
    check(out, df, lambda sens, spec, cost: -cost, cost_fp=cost_fp, cost_fn=cost_fn)
    per_sample = run(
        df, lambda f: pr.min_cost_point(f, cost_fp=cost_fp, cost_fn=cost_fn, normalize=True)
    )
    assert per_sample["threshold"].equals(out["threshold"])
    assert (per_sample["cost"] * 80 - out["cost"]).abs().max() < 1e-9


def test_reported_rates_are_those_of_pr_confusion_at_the_threshold(rng):
    df = fold_log(rng, ties=True)
    out = pr.min_cost_point(df, cost_fp=2.0, cost_fn=3.0).collect()
    for fold, threshold, sens, spec, cost in out.select(
        "fold", "threshold", "sensitivity", "specificity", "cost"
    ).iter_rows():
        part = df.filter(pl.col("fold") == fold)
        got = part.select(
            pr.sensitivity("score", "label", threshold=threshold),
            pr.specificity("score", "label", threshold=threshold),
            pr.cost("score", "label", threshold=threshold, cost_fp=2.0, cost_fn=3.0),
        ).row(0)
        assert got == pytest.approx((sens, spec, cost), abs=1e-12)


@pytest.mark.parametrize("lam", [0.5, 1.0, 2.0, 4.0])
def test_calibrated_scores_put_the_min_cost_threshold_near_aslan_theta(rng, lam):
    # Aslan et al. (2009): with loss λ for a false positive and 1 for a false negative,
    # the Bayes rule on calibrated P(+|x) predicts positive above θ = λ / (1 + λ).
    p = rng.random(40_000)
    df = pl.DataFrame({"score": p, "label": rng.random(p.size) < p})
    point = pr.min_cost_point(df, by=(), cost_fp=lam, cost_fn=1.0).collect()
    assert point["threshold"].item() == pytest.approx(lam / (1 + lam), abs=0.05)


def test_grid_restricts_the_candidates(run, rng):
    df = fold_log(rng)
    grid = np.linspace(-1.5, 2.5, 9)
    out = run(df, lambda f: pr.youden_point(f, thresholds=grid))
    check(
        out, df, lambda sens, spec, cost: sens + spec - 1, candidates=np.r_[INF, grid[::-1], -INF]
    )
    assert set(out["threshold"]) <= {*grid.tolist(), INF, -INF}


def test_one_class_and_nan_groups(run):
    df = pl.DataFrame(
        {
            "fold": [1, 1, 1, 2, 2, 2, 3, 3, 3],
            "score": [0.9, 0.5, 0.1, 0.8, float("nan"), 0.3, 0.7, 0.4, 0.2],
            "label": [True, True, True, True, False, False, True, False, False],
        }
    )
    youden = run(df, lambda f: pr.youden_point(f, by="fold")).sort("fold")
    assert youden.row(0) == (1, None, None, None, None, None)
    assert all(math.isnan(v) for v in youden.row(1)[1:])
    assert youden.row(2) == (3, 0.7, 1.0, 1.0, 0.0, 1.0)
    np_point = run(df, lambda f: pr.neyman_pearson_point(f, by="fold", min_sensitivity=0.5))
    assert np_point.sort("fold")["threshold"].to_list()[0] is None
    # A cost needs no second class: predicting every sample positive costs nothing.
    cost = run(df, lambda f: pr.min_cost_point(f, by="fold")).sort("fold")
    assert cost.row(0) == (1, 0.1, 1.0, None, 0.0)


def test_multiclass_log_gives_a_point_per_class(run):
    log = pl.DataFrame(
        {
            "model": "m",
            "fold": 0,
            "class": ["a", "b"] * 4,
            "label": ["a", "a", "b", "b", "a", "a", "b", "b"],
            "score": [0.8, 0.2, 0.3, 0.7, 0.6, 0.4, 0.55, 0.45],
        }
    )
    out = run(log, lambda f: pr.youden_point(f))
    assert out.select("class", "threshold", "youden_j").rows() == [
        ("a", 0.6, 1.0),
        ("b", 0.45, 1.0),
    ]


def test_arguments_are_checked():
    df = pl.DataFrame({"score": [0.1, 0.9], "label": [False, True]})
    with pytest.raises(ValueError, match="exactly one"):
        pr.neyman_pearson_point(df, by=())
    with pytest.raises(ValueError, match="exactly one"):
        pr.neyman_pearson_point(df, by=(), min_sensitivity=0.5, min_specificity=0.5)
    with pytest.raises(ValueError, match=r"rate in \[0, 1\]"):
        pr.neyman_pearson_point(df, by=(), min_sensitivity=90)
    with pytest.raises(ValueError, match="non-negative"):
        pr.min_cost_point(df, by=(), cost_fp=-1.0)
    with pytest.raises(ValueError, match="no column 'fold'"):
        pr.youden_point(df.with_columns(model=pl.lit("m")))
