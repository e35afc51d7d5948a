"""pr.verdict: the best model, the models tied with it, and the one test that decided.

Oracles: scipy's ``ttest_rel``, ``wilcoxon``, ``friedmanchisquare`` and t / F tails,
statsmodels' ``multipletests`` (Holm), baycomp's ``CorrelatedTTest``; tables constructed so
that the answer is known by design (large effects: one best, the rest rejected; exact ties:
all tied).
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


def test_one_test_set_mcnemar_and_cochran_equal_statsmodels(mode, rng):
    from statsmodels.stats.contingency_tables import cochrans_q

    log, right = one_test_set_log(rng, {"a": 0.9, "b": 0.9, "c": 0.6})
    table = pr.evaluate(log).collect()
    assert table["fold"].n_unique() == 1
    if mode == "eager":
        out = pr.verdict(table, log=log).collect()
    else:
        out = pr.verdict(table.lazy(), log=log.lazy()).collect(engine=mode)
    rows = by_model(out)
    best = table.sort(["auc", "model"], descending=[True, False])["model"][0]
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
    assert out["ci_low"].null_count() == out.height == out["ci_high"].null_count()
    assert out["n"].to_list() == [1, 1, 1]


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
        out = pr.verdict(pr.evaluate(log), log=log).collect()
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


def test_across_many_datasets_friedman_nemenyi(rng):
    # mean ranks 1, 2, 3 over 20 data sets: Nemenyi's CD is 0.74 (Demšar 2006, Table 5a)
    table = per_fold(rng, {"a": 0.9, "b": 0.8, "c": 0.7}, folds=3, datasets=20)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 20 data sets: no warning
        out = pr.verdict(table).collect()
    across = out.filter(pl.col("dataset").is_null())
    within = out.filter(pl.col("dataset").is_not_null())
    assert within.height == 60
    assert set(within["test"]) == {"paired t"}
    assert set(across["test"]) == {"Friedman + Nemenyi"}
    assert out["dataset"].to_list()[-3:] == [None] * 3  # the rows across data sets last
    check_one_best(across, "a")
    rows = by_model(across)
    assert rows["a"]["rank"] == 1.0
    assert rows["c"]["rank"] == 3.0
    means = table.group_by("dataset", "model").agg(pl.col("auc").mean())
    a = means.filter(pl.col("model") == "a")["auc"]
    assert rows["a"]["mean"] == pytest.approx(a.mean())
    low, _ = stats.t.interval(0.95, 19, loc=a.mean(), scale=stats.sem(a.to_numpy()))
    assert rows["a"]["ci_low"] == pytest.approx(low)
    wide = means.pivot("model", index="dataset").sort("dataset")
    assert stats.friedmanchisquare(*[wide[m] for m in MODELS]).pvalue < 0.05
    nemenyi = pr.nemenyi_test(table).collect().filter(pl.col("model_a") == "a")
    np.testing.assert_allclose(
        [rows["b"]["p_vs_best"], rows["c"]["p_vs_best"]], holm(nemenyi["p_value"].to_list())
    )


def test_across_few_datasets_warns_and_ties(rng):
    table = per_fold(rng, {"a": 0.9, "b": 0.8, "c": 0.7}, folds=5, datasets=3)
    with pytest.warns(UserWarning, match="Demšar"):
        out = pr.verdict(table).collect()
    across = out.filter(pl.col("dataset").is_null())
    # three data sets: Nemenyi cannot separate anything (Demšar 2006); all tied
    assert across["tied_with_best"].to_list() == [True] * 3
    assert across.filter(pl.col("best"))["model"].item() == "a"


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
    first = pr.verdict(table, rope=0.01).collect()
    again = pr.verdict(table, rope=0.01).collect()
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
