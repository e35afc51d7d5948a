"""pr.verdict: the best model, the models tied with it, and the one test that decided.

Oracles: scipy's ``ttest_rel``, ``wilcoxon``, ``friedmanchisquare``, ``rankdata`` and t /
F / normal tails, statsmodels' ``multipletests`` (Holm), ``mcnemar``, ``cochrans_q`` and
``proportion_confint`` (Wilson), baycomp's ``CorrelatedTTest``, autorank's effect sizes
(run on the same values), DeLong's variance from the full comparison matrix
(``tests/oracles_comparison.py``, pROC's formulas), scikit-learn's AUC and calibration
curve; tables constructed so that the answer is known by design (large effects: one
best, the rest rejected; exact ties: all tied).
"""

from __future__ import annotations

import warnings

import baycomp
import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from scipy import stats
from statsmodels.stats.multitest import multipletests

import polaroc as pr

MODELS = ("a", "b", "c")


def per_fold(
    rng: np.random.Generator,
    means: dict[str, float],
    *,
    folds: int = 10,
    repeats: int | None = None,
    datasets: int | None = None,
    noise: float = 0.01,
) -> pl.DataFrame:
    """One row per (dataset, model, repeat, fold): the model's mean plus fold noise."""
    rows = []
    for d in range(datasets or 1):
        shift = rng.normal(0, 0.02)
        for r in range(repeats or 1):
            for f in range(folds):
                common = rng.normal(0, noise)  # the split's difficulty, shared by all models
                for m, mu in means.items():
                    row = {"model": m, "fold": f, "auc": mu + shift + common + rng.normal(0, noise)}
                    if repeats is not None:
                        row["repeat"] = r
                    if datasets is not None:
                        row["dataset"] = f"d{d}"
                    rows.append(row)
    return pl.DataFrame(rows)


def values(table: pl.DataFrame, model: str, **where: object) -> np.ndarray:
    rows = table.filter(pl.col("model") == model, *[pl.col(k) == v for k, v in where.items()])
    keys = [c for c in ("repeat", "fold") if c in rows.columns]
    return rows.sort(keys)["auc"].to_numpy()


def holm(p: list[float]) -> np.ndarray:
    return multipletests(p, method="holm")[1]


def by_model(out: pl.DataFrame) -> dict[str, dict[str, object]]:
    return {row["model"]: row for row in out.iter_rows(named=True)}


def check_one_best(out: pl.DataFrame, best: str) -> None:
    rows = by_model(out)
    assert out.filter(pl.col("best"))["model"].to_list() == [best]
    assert rows[best]["tied_with_best"] is True
    assert rows[best]["p_vs_best"] is None
    assert rows[best]["rank"] == 1.0
    for m, row in rows.items():
        if m != best:
            assert row["tied_with_best"] is False, m
            assert row["p_vs_best"] <= 0.05


# ----------------------------------------------------------------- one k-fold run


def test_kfold_large_effects_paired_t_equals_scipy_holm(run, rng):
    table = per_fold(rng, {"a": 0.7, "b": 0.9, "c": 0.8})
    out = run(table, pr.verdict)
    check_one_best(out, "b")
    assert set(out["test"]) == {"paired t"}
    raw = [stats.ttest_rel(values(table, "b"), values(table, m)).pvalue for m in ("a", "c")]
    expected = holm(raw)
    rows = by_model(out)
    np.testing.assert_allclose([rows["a"]["p_vs_best"], rows["c"]["p_vs_best"]], expected)
    # the same numbers as the library's own test, adjusted as documented
    pairs = pr.paired_ttest(table).collect()
    lib = pairs.filter(pl.col("model_b") == "b")["p_value"].to_list()  # (a, b)
    lib += pairs.filter(pl.col("model_a") == "b")["p_value"].to_list()  # (b, c)
    np.testing.assert_allclose(holm(lib), expected)


def test_kfold_means_ranks_and_t_interval(rng):
    table = per_fold(rng, {"a": 0.7, "b": 0.9, "c": 0.8})
    out = by_model(pr.verdict(table).collect())
    for m in MODELS:
        x = values(table, m)
        low, high = stats.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=stats.sem(x))
        assert out[m]["mean"] == pytest.approx(x.mean())
        assert out[m]["ci_low"] == pytest.approx(low)
        assert out[m]["ci_high"] == pytest.approx(high)
        assert out[m]["n"] == 10
    assert [out[m]["rank"] for m in ("b", "c", "a")] == [1.0, 2.0, 3.0]


def test_exact_ties_are_all_tied(run):
    folds = list(range(5))
    auc = [0.8, 0.82, 0.79, 0.85, 0.81]
    table = pl.DataFrame({"model": [m for m in MODELS for _ in folds], "fold": folds * 3,
                          "auc": auc * 3})  # fmt: skip
    out = run(table, pr.verdict)
    assert out["tied_with_best"].to_list() == [True] * 3
    assert out["best"].sum() == 1
    assert out.filter(pl.col("best"))["model"].item() == "a"  # equal means: the first model
    assert out["rank"].to_list() == [2.0] * 3


def test_no_adjustment_gives_the_tests_own_p(rng):
    table = per_fold(rng, {"a": 0.8, "b": 0.805, "c": 0.7}, noise=0.02)
    out = by_model(pr.verdict(table, adjust=None).collect())
    best = next(m for m, row in out.items() if row["best"])
    for m in MODELS:
        if m != best:
            p = stats.ttest_rel(values(table, best), values(table, m)).pvalue
            assert out[m]["p_vs_best"] == pytest.approx(p)


def test_single_fold_points_to_mcnemar():
    table = pl.DataFrame({"model": ["a", "b"], "fold": [0, 0], "auc": [0.8, 0.7]})
    with pytest.raises(ValueError, match=r"log=.*mcnemar_test.*cochran_q"):
        pr.verdict(table)


# ------------------------------------------------------------------ one test set


def one_test_set_log(
    rng: np.random.Generator, accuracy: dict[str, float], *, n: int = 200, flips: int = 6
) -> tuple[pl.DataFrame, dict[str, np.ndarray]]:
    """A binary log scored once (fold 0); "b" is "a" with ``flips`` samples flipped, half each way.

    Returns the log and each model's right/wrong flags, built first: a right positive
    scores in (0.5, 1], a right negative in [0, 0.5), a wrong one on the other side.
    """
    label = rng.random(n) < 0.5
    right = {m: rng.random(n) < acc for m, acc in accuracy.items() if m != "b"}
    right["b"] = right["a"].copy()
    for side in (right["a"], ~right["a"]):  # as many discordant samples each way
        right["b"][rng.choice(np.flatnonzero(side), flips // 2, replace=False)] ^= True
    frames = []
    for m, r in right.items():
        high = 0.5 + 0.5 * rng.random(n)
        score = np.where(r == label, high, 1.0 - high)
        frames.append(pl.DataFrame({"model": m, "fold": 0, "sample": np.arange(n),
                                    "score": score, "label": label}))  # fmt: skip
    return pl.concat(frames), right


def mcnemar_p(x: np.ndarray, y: np.ndarray) -> float:
    """statsmodels' McNemar p, exact below 25 discordant samples as pr.mcnemar_test."""
    from statsmodels.stats.contingency_tables import mcnemar

    table = [[np.sum(x & y), np.sum(x & ~y)], [np.sum(~x & y), np.sum(~x & ~y)]]
    discordant = table[0][1] + table[1][0]
    return float(mcnemar(table, exact=discordant < 25, correction=True).pvalue)


def test_one_test_set_error_mcnemar_and_cochran_equal_statsmodels(mode, rng):
    from statsmodels.stats.contingency_tables import cochrans_q
    from statsmodels.stats.proportion import proportion_confint

    log, right = one_test_set_log(rng, {"a": 0.9, "b": 0.9, "c": 0.6})
    table = pr.evaluate(log).collect()
    assert table["fold"].n_unique() == 1
    if mode == "eager":
        out = pr.verdict(table, "error", log=log).collect()
    else:
        out = pr.verdict(table.lazy(), "error", log=log.lazy()).collect(engine=mode)
    rows = by_model(out)
    best = table.sort(["error", "model"])["model"][0]
    assert rows[best]["best"]
    assert rows[best]["p_vs_best"] is None
    others = [m for m in MODELS if m != best]
    expected = holm([mcnemar_p(right[best], right[m]) for m in others])
    np.testing.assert_allclose([rows[m]["p_vs_best"] for m in others], expected)
    assert set(out["test"]) == {"Cochran's Q + McNemar"}
    q = cochrans_q(np.column_stack([right[m] for m in MODELS]).astype(int))
    assert pr.cochran_q(log).collect()["p_value"].item() == pytest.approx(q.pvalue)
    assert q.pvalue <= 0.05
    for m in others:  # worse iff Cochran's Q and the adjusted McNemar both reject
        assert rows[m]["tied_with_best"] is not (rows[m]["p_vs_best"] <= 0.05)
    assert rows["c"]["tied_with_best"] is False  # clearly worse
    assert rows["a" if best == "b" else "b"]["tied_with_best"] is True  # six flips apart
    for m in MODELS:  # Wilson's interval of the error rate over the 200 paired samples
        wrong = int((~right[m]).sum())
        assert rows[m]["mean"] == pytest.approx(wrong / 200)
        low, high = proportion_confint(wrong, 200, alpha=0.05, method="wilson")
        assert (rows[m]["ci_low"], rows[m]["ci_high"]) == (pytest.approx(low), pytest.approx(high))
    assert out["n"].to_list() == [1, 1, 1]
    assert out["effect_size"].null_count() == 3  # one value per model: no spread, no d


def held_out_log(rng: np.random.Generator, n: int = 400) -> tuple[pl.DataFrame, dict]:
    """One held-out test set (fold 0), both classes' rows, 29 % positives.

    "sharp" ranks the samples best but scores every sample above 0.5 (so it calls all
    of them positive: accuracy = prevalence); "blunt" is calibrated and accurate with a
    slightly lower AUC; "noise" is barely better than chance. Returns the log and each
    model's positive-class scores and the labels, for the oracles.
    """
    label = rng.random(n) < 0.29
    signal = rng.normal(0, 1, n) + 2.6 * label
    scores = {
        "sharp": 0.5 + 0.5 / (1 + np.exp(-(signal - 1.3))),
        "blunt": 1 / (1 + np.exp(-(signal + rng.normal(0, 0.45, n) - 1.3) * 1.2)),
        "noise": 1 / (1 + np.exp(-(0.4 * signal + rng.normal(0, 1.5, n) - 0.6))),
    }
    frames = []
    for m, s in scores.items():
        for cls, value in ((1, s), (0, 1 - s)):
            frames.append(pl.DataFrame({"model": m, "fold": 0, "sample": np.arange(n),
                                        "class": cls, "score": value, "label": label.astype(int)}))  # fmt: skip
    return pl.concat(frames), {"label": label, **scores}


def test_one_test_set_auc_decides_with_delong(mode, rng):
    """Issue 34: the AUC leader at 29 % accuracy no longer beats an 82 % one by McNemar."""
    from sklearn.metrics import roc_auc_score

    from tests.oracles_comparison import delong_two_models

    log, truth = held_out_log(rng)
    label = truth["label"]
    accuracy = {m: float(((truth[m] > 0.5) == label).mean()) for m in ("sharp", "blunt")}
    assert accuracy["sharp"] < 0.35 < 0.8 < accuracy["blunt"]
    table = pr.evaluate(log).collect()
    if mode == "eager":
        out = pr.verdict(table, log=log).collect()
    else:
        out = pr.verdict(table.lazy(), log=log.lazy()).collect(engine=mode)
    rows = by_model(out)
    assert set(out["test"]) == {"DeLong"}
    assert rows["sharp"]["best"]
    raw = [
        delong_two_models(truth["sharp"], truth[m], label)["p_value"] for m in ("blunt", "noise")
    ]
    expected = holm(raw)
    np.testing.assert_allclose(
        [rows["blunt"]["p_vs_best"], rows["noise"]["p_vs_best"]], expected, rtol=1e-9
    )
    assert rows["blunt"]["tied_with_best"] is bool(expected[0] > 0.05)
    assert rows["noise"]["tied_with_best"] is False
    # McNemar would have called the accurate model worse: the verdict's p is not its p
    assert mcnemar_p((truth["sharp"] > 0.5) == label, (truth["blunt"] > 0.5) == label) < 1e-6
    z = stats.norm.ppf(0.975)
    for m in ("sharp", "blunt", "noise"):  # pROC's ci.auc: AUC ± z·√Var, clipped to [0, 1]
        auc = roc_auc_score(label, truth[m])
        other = "blunt" if m == "sharp" else "sharp"
        var = delong_two_models(truth[m], truth[other], label)["var_a"]
        assert rows[m]["mean"] == pytest.approx(auc, rel=1e-12)
        assert rows[m]["ci_low"] == pytest.approx(max(0.0, auc - z * np.sqrt(var)), rel=1e-9)
        assert rows[m]["ci_high"] == pytest.approx(min(1.0, auc + z * np.sqrt(var)), rel=1e-9)


def test_one_test_set_gini_is_decided_by_delong_on_its_auc(rng):
    from tests.oracles_comparison import delong_two_models

    log, truth = held_out_log(rng)
    table = pr.evaluate(log).with_columns(gini=2 * pl.col("auc") - 1).collect()
    rows = by_model(pr.verdict(table, "gini", log=log, adjust=None).collect())
    p = delong_two_models(truth["sharp"], truth["noise"], truth["label"])
    assert rows["noise"]["p_vs_best"] == pytest.approx(p["p_value"], rel=1e-9)
    half = stats.norm.ppf(0.975) * 2 * np.sqrt(p["var_b"])  # Var(2·AUC − 1) = 4·Var(AUC)
    assert rows["noise"]["ci_high"] - rows["noise"]["mean"] == pytest.approx(half, rel=1e-9)


def test_one_test_set_metric_without_a_test_is_refused(rng):
    log, _ = held_out_log(rng)
    table = pr.evaluate(log)
    for metric in ("brier", "sauc"):
        with pytest.raises(ValueError, match=r"one test set.*DeLong.*'auc'.*McNemar.*'error'"):
            pr.verdict(table, metric, log=log)
    with pytest.raises(ValueError, match="one test set"):  # the same without the log
        pr.verdict(table, "brier")


def test_one_test_set_cochran_gate_keeps_ties():
    """McNemar rejects c against a, Cochran's Q does not: c stays tied (the gate counts)."""
    from statsmodels.stats.contingency_tables import cochrans_q

    rows = [(1, 1, 0)] * 8 + [(1, 1, 1)] * 30 + [(0, 0, 0)] * 5 + [(0, 1, 0), (1, 0, 1)] * 20
    right = np.array(rows, dtype=bool)
    n = len(rows)
    label = np.arange(n) % 2 == 0
    log = pl.concat(
        pl.DataFrame({"model": m, "fold": 0, "sample": np.arange(n),
                      "score": np.where(right[:, j] == label, 0.9, 0.1), "label": label})
        for j, m in enumerate(MODELS)
    )  # fmt: skip
    accuracy = right.mean(axis=0)
    table = pl.DataFrame({"model": MODELS, "fold": 0, "accuracy": accuracy})
    out = by_model(pr.verdict(table, "accuracy", log=log).collect())
    assert out["a"]["best"]  # a and b equally accurate: the first by name
    expected = holm([mcnemar_p(right[:, 0], right[:, j]) for j in (1, 2)])
    np.testing.assert_allclose([out[m]["p_vs_best"] for m in ("b", "c")], expected)
    assert out["c"]["p_vs_best"] <= 0.05
    assert cochrans_q(right.astype(int)).pvalue > 0.05
    assert out["c"]["tied_with_best"] is True
    # without the gate's veto (α = 0.3 > Cochran's p) c is worse
    loose = by_model(pr.verdict(table, "accuracy", log=log, alpha=0.3).collect())
    assert loose["c"]["tied_with_best"] is False


def test_one_test_set_two_models_per_dataset(rng):
    logs, flags = [], {}
    for d, acc in (("d0", 0.6), ("d1", 0.88)):
        log, right = one_test_set_log(rng, {"a": 0.9, "c": acc, "b": 0.9}, flips=0)
        logs.append(log.filter(pl.col("model") != "b").with_columns(dataset=pl.lit(d)))
        flags[d] = right
    log = pl.concat(logs)
    with pytest.warns(UserWarning, match="2 data sets"):
        out = pr.verdict(pr.evaluate(log), "error", log=log).collect()
    within = out.filter(pl.col("dataset").is_not_null())
    assert set(within["test"]) == {"McNemar"}
    for d in ("d0", "d1"):
        rows = by_model(within.filter(pl.col("dataset") == d))
        best = next(m for m, row in rows.items() if row["best"])
        other = "c" if best == "a" else "a"
        p = mcnemar_p(flags[d][best], flags[d][other])  # one comparison: Holm leaves it
        assert rows[other]["p_vs_best"] == pytest.approx(p)
        assert rows[other]["tied_with_best"] is (p > 0.05)
    assert by_model(within.filter(pl.col("dataset") == "d0"))["c"]["tied_with_best"] is False
    assert out.filter(pl.col("dataset").is_null())["test"][0] == "Wilcoxon signed-rank"


def test_one_test_set_with_rope_is_an_error(rng):
    log, _ = one_test_set_log(rng, {"a": 0.9, "b": 0.9})
    with pytest.raises(ValueError, match="rope"):
        pr.verdict(pr.evaluate(log), log=log, rope=0.01)


# ----------------------------------------------------------- repeated k-fold, 5 × 2


def corrected_p(x: np.ndarray, y: np.ndarray, k: int) -> float:
    d = x - y
    n = len(d)
    t = d.mean() / np.sqrt((1 / n + 1 / (k - 1)) * d.var(ddof=1))
    return float(2 * stats.t.sf(abs(t), n - 1))


def test_repeated_kfold_corrected_t(run, rng):
    table = per_fold(rng, {"a": 0.9, "b": 0.8, "c": 0.7}, folds=5, repeats=3)
    out = run(table, pr.verdict)
    check_one_best(out, "a")
    assert set(out["test"]) == {"corrected repeated k-fold t"}
    raw = [corrected_p(values(table, "a"), values(table, m), 5) for m in ("b", "c")]
    rows = by_model(out)
    np.testing.assert_allclose([rows["b"]["p_vs_best"], rows["c"]["p_vs_best"]], holm(raw))
    # Nadeau & Bengio's variance in the interval: (1/n + 1/(k − 1))·S²
    x = values(table, "a")
    half = stats.t.ppf(0.975, 14) * np.sqrt((1 / 15 + 1 / 4) * x.var(ddof=1))
    assert rows["a"]["ci_high"] - rows["a"]["mean"] == pytest.approx(half)
    assert rows["a"]["n"] == 15


def test_five_by_two_uses_the_combined_f(run, rng):
    table = per_fold(rng, {"a": 0.7, "b": 0.9, "c": 0.8}, folds=2, repeats=5, noise=0.005)
    out = run(table, pr.verdict)
    check_one_best(out, "b")
    assert set(out["test"]) == {"combined 5x2cv F"}
    raw = []
    for m in ("a", "c"):
        d = (values(table, "b") - values(table, m)).reshape(5, 2)
        s2 = ((d - d.mean(axis=1, keepdims=True)) ** 2).sum()
        raw.append(stats.f.sf((d**2).sum() / (2 * s2), 10, 5))  # Alpaydın (1999) eq. 3
    rows = by_model(out)
    np.testing.assert_allclose([rows["a"]["p_vs_best"], rows["c"]["p_vs_best"]], holm(raw))


def test_repeated_holdout_needs_the_ratio(rng):
    table = per_fold(rng, {"a": 0.9, "b": 0.8}, folds=1, repeats=6)
    with pytest.raises(ValueError, match="test_train_ratio"):
        pr.verdict(table)


# ---------------------------------------------------------------- across data sets


def mean_rank_z_holm(means: pl.DataFrame, models: list[str], higher: bool = True) -> dict:
    """Demšar (2006, §3.2.2) by hand: mean ranks, z against the best, Holm over k − 1."""
    wide = means.pivot("model", index="dataset", values="auc").sort("dataset")
    values = wide.select(models).to_numpy()
    ranks = stats.rankdata(-values if higher else values, axis=1).mean(axis=0)
    n, k = values.shape
    best = int(np.argmin(ranks))
    se = np.sqrt(k * (k + 1) / (6 * n))
    others = [j for j in range(k) if j != best]
    raw = [2 * stats.norm.sf(abs(ranks[j] - ranks[best]) / se) for j in others]
    return {
        "best": models[best],
        "ranks": dict(zip(models, ranks, strict=True)),
        "p": dict(zip([models[j] for j in others], holm(raw), strict=True)),
        "friedman": stats.friedmanchisquare(*values.T).pvalue,
    }


def test_across_many_datasets_friedman_then_mean_rank_z(rng):
    # mean ranks 1, 2, 3 over 20 data sets: Nemenyi's CD is 0.74 (Demšar 2006, Table 5a)
    table = per_fold(rng, {"a": 0.9, "b": 0.8, "c": 0.7}, folds=3, datasets=20)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 20 data sets: no warning
        out = pr.verdict(table).collect()
    across = out.filter(pl.col("dataset").is_null())
    within = out.filter(pl.col("dataset").is_not_null())
    assert within.height == 60
    assert set(within["test"]) == {"paired t"}
    assert set(across["test"]) == {"Friedman + mean-rank z"}
    assert out["dataset"].to_list()[-3:] == [None] * 3  # the rows across data sets last
    check_one_best(across, "a")
    rows = by_model(across)
    means = table.group_by("dataset", "model").agg(pl.col("auc").mean())
    oracle = mean_rank_z_holm(means, list(MODELS))
    for m in MODELS:
        assert rows[m]["rank"] == pytest.approx(oracle["ranks"][m])
    a = means.filter(pl.col("model") == "a")["auc"]
    assert rows["a"]["mean"] == pytest.approx(a.mean())
    low, _ = stats.t.interval(0.95, 19, loc=a.mean(), scale=stats.sem(a.to_numpy()))
    assert rows["a"]["ci_low"] == pytest.approx(low)
    assert oracle["friedman"] < 0.05
    np.testing.assert_allclose([rows[m]["p_vs_best"] for m in ("b", "c")],
                               [oracle["p"][m] for m in ("b", "c")], rtol=1e-9)  # fmt: skip


def test_across_datasets_holm_is_not_applied_to_nemenyi(rng):
    """Issue 34: Holm on Nemenyi's all-pairs p (0.40) where Demšar's z gives 0.056."""
    means = {"a": 0.80, "b": 0.79, "c": 0.78, "d": 0.77, "e": 0.76}
    table = per_fold(rng, means, folds=2, datasets=12, noise=0.02)
    out = pr.verdict(table).collect().filter(pl.col("dataset").is_null())
    rows = by_model(out)
    per_dataset = table.group_by("dataset", "model").agg(pl.col("auc").mean())
    oracle = mean_rank_z_holm(per_dataset, list(means))
    assert rows[oracle["best"]]["best"]
    others = [m for m in means if m != oracle["best"]]
    np.testing.assert_allclose([rows[m]["p_vs_best"] for m in others],
                               [oracle["p"][m] for m in others], rtol=1e-9)  # fmt: skip
    nemenyi = pr.nemenyi_test(table).collect()
    pairs = nemenyi.filter(
        (pl.col("model_a") == oracle["best"]) | (pl.col("model_b") == oracle["best"])
    )
    old = holm(pairs["p_value"].to_list())  # what the verdict used to report
    assert not np.allclose(sorted(old), sorted(oracle["p"].values()))
    for m in others:
        expected = oracle["p"][m] <= 0.05 and oracle["friedman"] <= 0.05
        assert rows[m]["tied_with_best"] is (not expected)


def test_across_few_datasets_warns_and_ties(rng):
    table = per_fold(rng, {"a": 0.9, "b": 0.8, "c": 0.7}, folds=5, datasets=3)
    with pytest.warns(UserWarning, match="Demšar"):
        out = pr.verdict(table).collect()
    rows = by_model(out.filter(pl.col("dataset").is_null()))
    assert rows["a"]["best"]
    # three data sets ranking a, b, c alike: Friedman's p = 0.0498, and only c's
    # mean-rank z (2.45, Holm p = 0.028) rejects; b stays tied
    means = table.group_by("dataset", "model").agg(pl.col("auc").mean())
    oracle = mean_rank_z_holm(means, list(MODELS))
    for m in ("b", "c"):
        assert rows[m]["p_vs_best"] == pytest.approx(oracle["p"][m], rel=1e-9)
        worse = oracle["p"][m] <= 0.05 and oracle["friedman"] <= 0.05
        assert rows[m]["tied_with_best"] is (not worse)
    # two data sets: the warning names them, Friedman cannot reject, all tied
    with pytest.warns(UserWarning, match="across 2 data sets"):
        two = pr.verdict(table.filter(pl.col("dataset") != "d2")).collect()
    assert two.filter(pl.col("dataset").is_null())["tied_with_best"].to_list() == [True] * 3


def test_two_models_across_datasets_wilcoxon(rng):
    table = per_fold(rng, {"a": 0.7, "b": 0.9}, folds=5, datasets=7)
    out = pr.verdict(table).collect()
    across = out.filter(pl.col("dataset").is_null())
    assert set(across["test"]) == {"Wilcoxon signed-rank"}
    check_one_best(across, "b")
    means = table.group_by("dataset", "model").agg(pl.col("auc").mean()).sort("dataset")
    a = means.filter(pl.col("model") == "a")["auc"].to_numpy()
    b = means.filter(pl.col("model") == "b")["auc"].to_numpy()
    p = stats.wilcoxon(b, a).pvalue  # one comparison: Holm changes nothing
    assert by_model(across)["a"]["p_vs_best"] == pytest.approx(p)


def test_by_empty_ignores_the_datasets_across(rng):
    table = per_fold(rng, {"a": 0.7, "b": 0.9}, folds=5, datasets=1).drop("dataset")
    out = pr.verdict(table, by=()).collect()
    assert out.columns[:2] == ["model", "rank"]
    assert out.height == 2


# -------------------------------------------------------------------- Bayesian


def test_rope_uses_the_correlated_bayesian_t(run, rng):
    table = per_fold(rng, {"a": 0.9, "b": 0.8, "c": 0.895}, folds=10, noise=0.01)
    out = run(table, lambda t: pr.verdict(t, rope=0.02))
    assert set(out["test"]) == {"Bayesian correlated t"}
    rows = by_model(out)
    assert rows["a"]["best"]
    for m in ("b", "c"):
        x, y = values(table, "a"), values(table, m)
        p_best_better = baycomp.CorrelatedTTest.probs(x, y, 0.02, runs=1)[0]
        assert rows[m]["p_vs_best"] == pytest.approx(1 - p_best_better, abs=1e-9)
    assert rows["b"]["tied_with_best"] is False  # 0.1 apart: practically worse
    assert rows["c"]["tied_with_best"] is True  # 0.005 apart, inside the rope


def test_rope_across_datasets_signed_rank_is_seeded(rng):
    table = per_fold(rng, {"a": 0.9, "b": 0.7, "c": 0.899}, folds=3, datasets=6)
    first = pr.verdict(table, rope=0.01, seed=0).collect()
    again = pr.verdict(table, rope=0.01, seed=0).collect()
    assert_frame_equal(first, again)
    across = by_model(first.filter(pl.col("dataset").is_null()))
    assert {r["test"] for r in across.values()} == {"Bayesian signed-rank"}
    assert across["a"]["best"]
    assert across["b"]["tied_with_best"] is False
    assert across["c"]["tied_with_best"] is True
    sr = pr.bayes_signed_rank(table, rope=0.01, seed=0).collect()
    ab = sr.filter(pl.col("model_a") == "a", pl.col("model_b") == "b")
    assert across["b"]["p_vs_best"] == pytest.approx(1 - ab["p_a_higher"].item())


# -------------------------------------------------------------- lower is better


def test_lower_is_better_metric(rng):
    table = per_fold(rng, {"a": 0.1, "b": 0.3, "c": 0.2}).rename({"auc": "error"})
    out = by_model(pr.verdict(table, "error").collect())
    assert out["a"]["best"]
    assert out["a"]["rank"] == 1.0
    assert out["b"]["rank"] == 3.0
    # the Bayesian probabilities know the direction too
    bayes = by_model(pr.verdict(table, "error", rope=0.01).collect())
    assert bayes["a"]["best"]
    assert bayes["b"]["tied_with_best"] is False
    assert bayes["b"]["p_vs_best"] < 0.05
    # and an explicit direction overrides the name
    flipped = by_model(pr.verdict(table, "error", higher_is_better=True).collect())
    assert flipped["b"]["best"]


def test_lower_is_better_across_datasets(rng):
    table = per_fold(rng, {"a": 0.1, "b": 0.3, "c": 0.2}, folds=4, datasets=6)
    out = pr.verdict(table.rename({"auc": "error"}), "error").collect()
    across = by_model(out.filter(pl.col("dataset").is_null()))
    assert across["a"]["best"]
    assert across["a"]["rank"] == 1.0


# ------------------------------------------------------------------- NaN, demo


def test_nan_never_decides(rng):
    table = per_fold(rng, {"a": 0.7, "b": 0.9, "c": 0.8})
    table = table.with_columns(
        auc=pl.when((pl.col("model") == "c") & (pl.col("fold") == 3))
        .then(float("nan"))
        .otherwise(pl.col("auc"))
    )
    out = pr.verdict(table).collect()
    assert out["best"].null_count() == 3
    assert out["tied_with_best"].null_count() == 3
    assert out["rank"].null_count() == 3
    assert out["p_vs_best"].is_nan().all()  # no best model: no comparison with it


def test_nan_in_one_dataset_leaves_the_others(rng):
    table = per_fold(rng, {"a": 0.7, "b": 0.9}, folds=4, datasets=5)
    nan = (pl.col("dataset") == "d0") & (pl.col("model") == "a") & (pl.col("fold") == 0)
    table = table.with_columns(auc=pl.when(nan).then(float("nan")).otherwise(pl.col("auc")))
    out = pr.verdict(table).collect()
    d0 = out.filter(pl.col("dataset") == "d0")
    assert d0["best"].null_count() == 2
    d1 = out.filter(pl.col("dataset") == "d1")
    assert d1.filter(pl.col("best"))["model"].item() == "b"
    across = out.filter(pl.col("dataset").is_null())
    assert across["tied_with_best"].null_count() == 2


def test_renamed_columns_and_lazy_input(rng):
    table = per_fold(rng, {"a": 0.7, "b": 0.9}, folds=3, repeats=2)
    renamed = table.rename({"model": "clf", "fold": "split", "repeat": "run"})
    out = pr.verdict(renamed.lazy(), model="clf", fold="split", repeat="run").collect()
    assert out.columns[0] == "clf"
    assert out.filter(pl.col("best"))["clf"].item() == "b"
    assert set(out["test"]) == {"corrected repeated k-fold t"}


def test_the_demo_log():
    log = pl.read_parquet(pr.demo_log_path())
    table = pr.evaluate(log).collect()
    out = pr.verdict(table).collect()
    assert out.height == table["model"].n_unique()
    assert out["best"].sum() == 1
    assert out.filter(pl.col("best"))["model"].item() == "logistic"
    best = out.row(0, named=True)
    assert best["best"]
    assert best["p_vs_best"] is None
    assert out["p_vs_best"].null_count() == 1
    assert out.filter(pl.col("model") == "tree")["tied_with_best"].item() is False
    assert (out["ci_low"] <= out["mean"]).all()
    assert (out["mean"] <= out["ci_high"]).all()


def test_bad_arguments():
    table = pl.DataFrame({"model": ["a", "b"] * 2, "fold": [0, 0, 1, 1], "auc": [0.1] * 4})
    with pytest.raises(ValueError, match="alpha"):
        pr.verdict(table, alpha=1.5)
    with pytest.raises(ValueError, match="rope"):
        pr.verdict(table, rope=-1)
    with pytest.raises(ValueError, match="adjust"):
        pr.verdict(table, adjust="nope")  # type: ignore[arg-type]


# ------------------------------------------------- the direction, from the registry


def calibration_log(rng: np.random.Generator, folds: int = 6, n: int = 300) -> pl.DataFrame:
    """Three models with the same ranking and different calibration, both classes' rows.

    "honest" scores the true probability p; "bold" pushes it to the extremes and "timid"
    pulls it towards ½: the same AUC, and ECE lowest for "honest" by construction.
    """
    frames = []
    for f in range(folds):
        p = rng.uniform(0.02, 0.98, n)
        label = (rng.random(n) < p).astype(int)
        logit = np.log(p / (1 - p))
        scores = {"honest": p, "bold": 1 / (1 + np.exp(-3 * logit)), "timid": 0.5 + 0.3 * (p - 0.5)}
        for m, s in scores.items():
            for cls, value in ((1, s), (0, 1 - s)):
                frames.append(pl.DataFrame({"model": m, "fold": f, "sample": np.arange(n),
                                            "class": cls, "score": value, "label": label}))  # fmt: skip
    return pl.concat(frames)


def sklearn_ece(log: pl.DataFrame, model: str, fold: int) -> float:
    """ECE from scikit-learn's calibration curve: the count-weighted mean gap over its bins."""
    from sklearn.calibration import calibration_curve

    part = log.filter(model=model, fold=fold, **{"class": 1})
    y, s = part["label"].to_numpy(), part["score"].to_numpy()
    true, pred = calibration_curve(y, s, n_bins=10, strategy="uniform")
    counts = np.bincount(np.searchsorted(np.linspace(0, 1, 11)[1:-1], s, side="left"), minlength=10)
    counts = counts[counts > 0]
    return float(np.sum(counts * np.abs(true - pred)) / counts.sum())


def test_ece_names_the_best_calibrated_model_best(rng):
    """Issue 34: pr.verdict(pr.calibration(log), "ece") named the worst-calibrated best."""
    log = calibration_log(rng)
    out = by_model(pr.verdict(pr.calibration(log), "ece").collect())
    ece = {
        m: np.mean([sklearn_ece(log, m, f) for f in range(6)]) for m in ("honest", "bold", "timid")
    }
    assert min(ece, key=ece.get) == "honest"
    assert out["honest"]["best"]
    assert out["honest"]["rank"] == 1.0
    for m in ("bold", "timid"):
        assert out[m]["mean"] == pytest.approx(ece[m], rel=1e-9)
        assert out[m]["tied_with_best"] is False  # far worse calibrated, fold after fold


def test_a_target_metric_is_compared_on_its_distance_from_the_target(rng):
    # calibration slopes: "one" near 1 (best), "steep" above, "flat" below
    slopes = {"one": 1.0, "steep": 1.3, "flat": 0.75}
    rows = [{"model": m, "fold": f, "calibration_slope": s + rng.normal(0, 0.03)}
            for f in range(8) for m, s in slopes.items()]  # fmt: skip
    table = pl.DataFrame(rows)
    out = by_model(pr.verdict(table, "calibration_slope").collect())
    assert out["one"]["best"]
    distance = {m: np.abs(values(table.rename({"calibration_slope": "auc"}), m) - 1.0)
                for m in slopes}  # fmt: skip
    raw = [stats.ttest_rel(distance["one"], distance[m]).pvalue for m in ("steep", "flat")]
    np.testing.assert_allclose([out[m]["p_vs_best"] for m in ("steep", "flat")], holm(raw))
    for m in slopes:  # mean and interval of |slope − 1|, the compared value
        assert out[m]["mean"] == pytest.approx(distance[m].mean())
    assert [out[m]["rank"] for m in ("one", "flat", "steep")] == [1.0, 2.0, 3.0]
    intercept = table.rename({"calibration_slope": "calibration_intercept"}).with_columns(
        pl.col("calibration_intercept") - 1.0  # best at 0: "one" is now nearest to 0
    )
    assert by_model(pr.verdict(intercept, "calibration_intercept").collect())["one"]["best"]


def test_an_unknown_metric_needs_its_direction(rng):
    table = per_fold(rng, {"a": 0.3, "b": 0.1, "c": 0.2}).rename({"auc": "my_loss"})
    with pytest.raises(ValueError, match=r"'my_loss' is not in polaroc's registry.*auc, sauc"):
        pr.verdict(table, "my_loss")
    lower = by_model(pr.verdict(table, "my_loss", higher_is_better=False).collect())
    assert lower["b"]["best"]
    higher = by_model(pr.verdict(table, "my_loss", higher_is_better=True).collect())
    assert higher["a"]["best"]
    # an expression is known by its output name
    expr = by_model(pr.verdict(table, pl.col("my_loss").alias("error")).collect())
    assert expr["b"]["best"]


# ------------------------------------------------------------------ the intervals


def test_intervals_follow_the_deciding_test_and_alpha(rng):
    # one k-fold run at alpha = 0.1: the plain t interval at 90 %
    table = per_fold(rng, {"a": 0.7, "b": 0.9, "c": 0.8})
    rows = by_model(pr.verdict(table, alpha=0.1).collect())
    for m in MODELS:
        x = values(table, m)
        low, high = stats.t.interval(0.9, len(x) - 1, loc=x.mean(), scale=stats.sem(x))
        assert (rows[m]["ci_low"], rows[m]["ci_high"]) == (pytest.approx(low), pytest.approx(high))
    # the Bayesian correlated t on one 10-fold run: Nadeau & Bengio's variance, ρ/(1 − ρ) = 1/9
    bayes = by_model(pr.verdict(table, rope=0.01).collect())
    for m in MODELS:
        x = values(table, m)
        scale = np.sqrt((1 / 10 + 1 / 9) * x.var(ddof=1))
        low, high = stats.t.interval(0.95, 9, loc=x.mean(), scale=scale)
        assert (bayes[m]["ci_low"], bayes[m]["ci_high"]) == (
            pytest.approx(low),
            pytest.approx(high),
        )


def test_five_by_two_interval_uses_the_variance_of_the_design(rng):
    table = per_fold(rng, {"a": 0.7, "b": 0.9, "c": 0.8}, folds=2, repeats=5, noise=0.005)
    rows = by_model(pr.verdict(table).collect())
    for m in MODELS:
        x = values(table, m).reshape(5, 2)  # (repeat, fold)
        s2 = ((x - x.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)  # Dietterich's s_i²
        sigma2 = s2.sum() / 5
        half = stats.t.ppf(0.975, 5) * np.sqrt(sigma2 / 10)
        assert rows[m]["ci_low"] == pytest.approx(x.mean() - half)
        assert rows[m]["ci_high"] == pytest.approx(x.mean() + half)


# ----------------------------------------------------------------- effect sizes


def autorank_effects(wide: pl.DataFrame, models: list[str], higher: bool) -> dict:
    """autorank's Cohen's d and magnitude of each model against its best-ranked one.

    autorank 1.3.0 sorts ``order="descending"`` results worst first and takes the first
    row as the baseline (sherbold/autorank#46), so a higher-is-better metric is handed
    to it negated with ``order="ascending"`` (best first), and its d negated back:
    d = (mean_best − mean)/s_p either way.
    """
    import contextlib
    import io

    import autorank

    data = wide.select(models).to_pandas()
    sign = -1.0 if higher else 1.0
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = autorank.autorank(
            sign * data, alpha=0.05, verbose=False, order="ascending", effect_size="cohen_d",
            force_mode="parametric",
        )  # fmt: skip
    frame = result.rankdf
    out = {
        m: (sign * float(frame.loc[m, "effect_size"]), frame.loc[m, "magnitude"]) for m in models
    }
    return {"best": frame.index[0], **out}


def test_effect_sizes_equal_autorank_within_a_data_set(rng):
    means = {"a": 0.80, "b": 0.79, "c": 0.74, "d": 0.60}
    table = per_fold(rng, means, folds=10, noise=0.02)
    out = by_model(pr.verdict(table).collect())
    wide = table.pivot("model", index="fold", values="auc").sort("fold")
    expected = autorank_effects(wide, list(means), higher=True)
    assert out["a"]["best"]
    assert expected["best"] == "a"
    for m in means:
        d, word = expected[m]
        assert out[m]["effect_size"] == pytest.approx(d, rel=1e-9, abs=1e-12), m
        assert out[m]["magnitude"] == word, m
    assert {out[m]["magnitude"] for m in means} >= {"negligible", "large"}
    # lower is better: autorank's order="ascending" (d = mean_best − mean < 0 for the others)
    error = table.with_columns(error=1 - pl.col("auc"))
    out = by_model(pr.verdict(error, "error").collect())
    wide = error.pivot("model", index="fold", values="error").sort("fold")
    expected = autorank_effects(wide, list(means), higher=False)
    assert expected["best"] == "a"
    for m in means:
        d, word = expected[m]
        assert out[m]["effect_size"] == pytest.approx(d, rel=1e-9, abs=1e-12), m
        assert out[m]["magnitude"] == word, m


def test_effect_sizes_equal_autorank_across_data_sets(rng):
    means = {"a": 0.85, "b": 0.84, "c": 0.80}
    table = per_fold(rng, means, folds=3, datasets=8, noise=0.02)
    out = pr.verdict(table).collect()
    across = by_model(out.filter(pl.col("dataset").is_null()))
    per_dataset = table.group_by("dataset", "model").agg(pl.col("auc").mean())
    wide = per_dataset.pivot("model", index="dataset", values="auc").sort("dataset")
    expected = autorank_effects(wide, list(means), higher=True)
    best = next(m for m, row in across.items() if row["best"])
    assert expected["best"] == best  # the best average rank, as autorank's
    assert expected[best] == (0.0, "negligible")
    for m in means:
        d, word = expected[m]
        assert across[m]["effect_size"] == pytest.approx(d, rel=1e-9, abs=1e-12), m
        assert across[m]["magnitude"] == word, m


def test_effect_size_of_constant_values(rng):
    table = pl.DataFrame({"model": ["a"] * 4 + ["b"] * 4 + ["c"] * 4, "fold": list(range(4)) * 3,
                          "auc": [0.9] * 4 + [0.8] * 4 + [0.9] * 4})  # fmt: skip
    out = by_model(pr.verdict(table).collect())
    assert out["b"]["effect_size"] == float("inf")  # no spread at all: every fold apart
    assert out["b"]["magnitude"] == "large"
    assert out["c"]["effect_size"] is None  # no spread and no difference: no d
    assert out["c"]["magnitude"] is None
