"""DeLong's test against the O(n₊n₋) placement-value definition."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.exceptions import ComputeError
from scipy import stats
from sklearn.metrics import roc_auc_score

import polaroc as pr
from tests.oracles_comparison import delong_two_models
from tests.tables import sklearn_cv_log

STATS = ("auc_a", "auc_b", "var_a", "var_b", "cov", "statistic", "p_value")
COLUMNS = [
    "model_a",
    "model_b",
    "n",
    "estimate",
    "statistic",
    "p_value",
    "reject",
    "ci_low",
    "ci_high",
    "auc_a",
    "auc_b",
    "var_a",
    "var_b",
    "cov",
    "n_pos",
    "n_neg",
]


def two_model_log(rng, folds: int = 3, n: int = 120, ties: bool = False) -> pl.DataFrame:
    """Two correlated models scoring the same samples in each fold."""
    parts = []
    for fold in range(folds):
        label = rng.random(n) < 0.4
        shared = rng.normal(size=n)
        scores = {
            "a": shared + 1.2 * label + rng.normal(0, 0.7, n),
            "b": shared + 0.8 * label + rng.normal(0, 0.7, n),
        }
        for model, score in scores.items():
            if ties:
                score = np.round(score, 0)
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
    return pl.concat(parts).sample(fraction=1.0, shuffle=True, seed=1)


def oracle(log: pl.DataFrame, a: str = "a", b: str = "b") -> dict[str, float]:
    wide = (
        log.filter(pl.col("model") == a)
        .join(log.filter(pl.col("model") == b), on=["fold", "sample"], suffix="_b")
        .sort("fold", "sample")
    )
    return delong_two_models(wide["score"], wide["score_b"], wide["label"])


def assert_matches(row: dict, expected: dict) -> None:
    for name in STATS:
        want = expected["z" if name == "statistic" else name]
        assert row[name] == pytest.approx(want, rel=1e-9, abs=1e-14), name


@pytest.mark.parametrize("ties", [False, True])
def test_pooled_and_per_fold_match_the_pair_definition(run, rng, ties):
    log = two_model_log(rng, ties=ties)
    pooled = run(log, lambda f: pr.delong_test(f, "a", "b"))
    assert pooled.columns == COLUMNS
    assert_matches(pooled.row(0, named=True), oracle(log))
    per_fold = run(log, lambda f: pr.delong_test(f, "a", "b", by="fold"))
    assert per_fold["fold"].to_list() == [0, 1, 2]
    for row in per_fold.iter_rows(named=True):
        assert_matches(row, oracle(log.filter(fold=row["fold"])))


def test_real_cv_run_matches_oracle_sklearn_and_auc_se(run):
    log = sklearn_cv_log()
    out = run(log, lambda f: pr.delong_test(f, "logreg", "tree", by="fold"))
    se = (
        log.filter(model="logreg")
        .group_by("fold")
        .agg(se=pr.auc_se("score", "label", method="delong"))
        .sort("fold")
    )
    for row, se_a in zip(out.iter_rows(named=True), se["se"], strict=True):
        part = log.filter(fold=row["fold"])
        assert_matches(row, oracle(part, "logreg", "tree"))
        a = part.filter(model="logreg")
        assert row["auc_a"] == pytest.approx(roc_auc_score(a["label"], a["score"]), abs=1e-12)
        assert row["var_a"] == pytest.approx(se_a**2, rel=1e-10)


def test_both_class_rows_with_positive_class(run, rng):
    log = two_model_log(rng, folds=2, n=60).with_columns(pl.col("label").cast(pl.Int64))
    both = pl.concat(
        [
            log.with_columns(**{"class": pl.lit(1, pl.Int64)}),
            log.with_columns(**{"class": pl.lit(0, pl.Int64)}, score=-pl.col("score") + 0.3),
        ]
    )
    out = run(both, lambda f: pr.delong_test(f, "a", "b", positive_class=1))
    expected = oracle(log.with_columns(pl.col("label") == 1))
    assert_matches(out.row(0, named=True), expected)
    assert out["class"].to_list() == [1]  # the class read, stated
    # a two-class log is read through its larger class by default
    larger = run(both, lambda f: pr.delong_test(f, "a", "b"))
    assert_matches(larger.row(0, named=True), expected)
    assert larger["class"].to_list() == [1]
    # class 0's scores: the same test with the labels and the scores turned around
    zero = run(both, lambda f: pr.delong_test(f, "a", "b", positive_class=0)).row(0, named=True)
    assert zero["class"] == 0
    assert zero["auc_a"] == pytest.approx(expected["auc_a"], abs=1e-12)
    # more than two classes without positive_class=: Hand & Till's M (issue 36), no class
    three = pl.concat([both, log.with_columns(**{"class": pl.lit(2, pl.Int64)})])
    m = run(three, lambda f: pr.delong_test(f, "a", "b")).row(0, named=True)
    assert (m["class"], m["n_pos"], m["n_neg"]) == (None, None, None)
    pooled = pr.evaluate(three, by=("model",)).collect().sort("model")["auc"].to_list()
    assert [m["auc_a"], m["auc_b"]] == pytest.approx(pooled, abs=1e-12)
    with pytest.raises(ValueError, match="needs a 'class' column"):
        pr.delong_test(log, "a", "b", positive_class=1)


def test_null_score_drops_the_sample_from_both_models(run, rng):
    log = two_model_log(rng, folds=1, n=80)
    holed = log.with_columns(
        score=pl.when((pl.col("model") == "b") & (pl.col("sample") == 5))
        .then(None)
        .otherwise("score")
    )
    out = run(holed, lambda f: pr.delong_test(f, "a", "b")).row(0, named=True)
    assert out["n_pos"] + out["n_neg"] == 79
    assert_matches(out, oracle(log.filter(pl.col("sample") != 5)))


def test_nan_score_makes_the_group_nan(run, rng):
    log = two_model_log(rng, folds=2, n=40).with_columns(
        score=pl.when((pl.col("fold") == 0) & (pl.col("sample") == 3) & (pl.col("model") == "a"))
        .then(float("nan"))
        .otherwise("score")
    )
    out = run(log, lambda f: pr.delong_test(f, "a", "b", by="fold"))
    assert all(math.isnan(out[c][0]) for c in STATS)
    assert all(math.isfinite(out[c][1]) for c in STATS)


def test_identical_models_give_null_z(run, rng):
    log = two_model_log(rng, folds=1, n=50)
    same = pl.concat([log.filter(model="a"), log.filter(model="a").with_columns(model=pl.lit("b"))])
    out = run(same, lambda f: pr.delong_test(f, "a", "b")).row(0, named=True)
    assert out["auc_a"] == out["auc_b"]
    assert out["var_a"] == pytest.approx(out["cov"])
    assert out["statistic"] is None
    assert out["p_value"] is None


def test_degenerate_fold_is_null_and_spares_the_others(run, rng):
    log = two_model_log(rng, folds=2, n=40).with_columns(
        label=pl.when(pl.col("fold") == 0).then(True).otherwise("label")
    )
    out = run(log, lambda f: pr.delong_test(f, "a", "b", by="fold"))
    assert out["n_neg"][0] == 0
    assert all(out[c][0] is None for c in STATS)
    assert_matches(out.row(1, named=True), oracle(log.filter(fold=1)))


def test_single_positive_has_an_auc_but_no_variance(run):
    log = pl.DataFrame(
        {
            "model": ["a"] * 4 + ["b"] * 4,
            "fold": 0,
            "sample": [0, 1, 2, 3] * 2,
            "score": [0.9, 0.1, 0.2, 0.3, 0.1, 0.9, 0.2, 0.3],
            "label": [True, False, False, False] * 2,
        }
    )
    out = run(log, lambda f: pr.delong_test(f, "a", "b")).row(0, named=True)
    assert (out["auc_a"], out["auc_b"]) == (1.0, 0.0)
    assert out["var_a"] is None
    assert out["statistic"] is None


def base_log() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "model": ["a"] * 4 + ["b"] * 4,
            "fold": [0, 0, 1, 1] * 2,
            "sample": [0, 1, 0, 1] * 2,
            "score": [0.9, 0.1, 0.8, 0.3, 0.7, 0.2, 0.6, 0.4],
            "label": [True, False, True, False] * 2,
        }
    )


PAIRING = {
    "missing sample": (
        base_log().filter(
            ~((pl.col("model") == "b") & (pl.col("sample") == 1) & (pl.col("fold") == 1))
        ),
        r"rows of 'a' with no 'b' row: \(1, 1\)",
    ),
    "repeated sample": (
        pl.concat([base_log(), base_log().head(1)]),
        r"a \(model, fold, sample\) key holds more than one row.*\(a, 0, 0\).*repeat",
    ),
    "label differs": (
        base_log().with_columns(
            label=pl.when(
                (pl.col("model") == "b") & (pl.col("sample") == 0) & (pl.col("fold") == 0)
            )
            .then(False)
            .otherwise("label")
        ),
        r"label differs between the models: \(0, 0\)",
    ),
    "unknown model": (base_log().filter(model="a"), "model 'b' has no rows"),
}


@pytest.mark.parametrize("case", PAIRING)
def test_samples_that_do_not_pair_up(case):
    log, message = PAIRING[case]
    with pytest.raises(ValueError, match=message):
        pr.delong_test(log, "a", "b")
    plan = pr.delong_test(log.lazy(), "a", "b")
    for engine in ("in-memory", "streaming"):
        with pytest.raises(ComputeError, match=message):
            plan.collect(engine=engine)


def test_schema_errors_at_call_time():
    lazy = base_log().lazy()
    with pytest.raises(ValueError, match="'sample'"):
        pr.delong_test(lazy.drop("sample"), "a", "b")
    with pytest.raises(ValueError, match="'id'"):
        pr.delong_test(lazy, "a", "b", sample="id")
    with pytest.raises(TypeError, match="numeric"):
        pr.delong_test(lazy.with_columns(pl.col("score").cast(pl.String)), "a", "b")


@settings(max_examples=20)
@given(st.integers(0, 2**32 - 1), st.floats(0.1, 10), st.floats(-5, 5))
def test_monotone_rescaling_changes_nothing(seed, scale, shift):
    log = two_model_log(np.random.default_rng(seed), folds=1, n=40, ties=True)
    moved = log.with_columns(
        score=pl.when(pl.col("model") == "b")
        .then(pl.col("score") * scale + shift)
        .otherwise("score")
    )
    base = pr.delong_test(log, "a", "b").collect()
    got = pr.delong_test(moved, "a", "b").collect()
    for c in STATS:
        assert got[c][0] == pytest.approx(base[c][0], rel=1e-9, abs=1e-12)


# ------------------------------------------------------------------ issue 14 messages


def test_same_model_twice_is_a_short_value_error():
    log = two_model_log(np.random.default_rng(0), folds=1, n=20)
    for frame in (log, log.lazy()):
        with pytest.raises(ValueError, match="two different models") as info:
            pr.delong_test(frame, "a", "a")
        assert len(str(info.value)) < 200


def test_positive_class_typo_names_the_classes_found():
    log = two_model_log(np.random.default_rng(0), folds=1, n=20).with_columns(
        **{"class": pl.lit(1), "label": pl.col("label").cast(pl.Int64)}
    )
    with pytest.raises(ValueError, match=r"positive_class=2 is not a value of 'class'.*\(1\)"):
        pr.delong_test(log, "a", "b", positive_class=2)
    with pytest.raises(ComputeError, match="positive_class=2 is not a value"):
        pr.delong_test(log.lazy(), "a", "b", positive_class=2).collect()
    with pytest.raises(TypeError, match="cannot be compared with the class column 'class'"):
        pr.delong_test(log, "a", "b", positive_class="one")
    with pytest.raises(ValueError, match="positive_class=2 is not a value"):
        pr.delong_omnibus(log, positive_class=2)


# ------------------------------------------------------------------ delong_omnibus


def k_model_log(rng, k: int = 3, folds: int = 2, n: int = 60, ties: bool = False) -> pl.DataFrame:
    """k correlated models scoring the same samples in each fold."""
    parts = []
    for fold in range(folds):
        label = rng.random(n) < 0.45
        shared = rng.normal(size=n)
        for i in range(k):
            score = shared + (0.4 + 0.3 * i) * label + rng.normal(0, 0.8, n)
            score = np.round(score, 0) if ties else score
            parts.append(
                pl.DataFrame(
                    {"model": f"m{i}", "fold": fold, "sample": np.arange(n), "score": score}
                ).with_columns(label=pl.Series(label))
            )
    return pl.concat(parts).sample(fraction=1.0, shuffle=True, seed=2)


def omnibus_oracle(log: pl.DataFrame) -> float:
    """DeLong et al. (1988) χ² from the n₊ × n₋ comparison matrices, with Helmert contrasts."""
    wide = log.pivot(on="model", index=["fold", "sample", "label"], values="score").sort(
        "fold", "sample"
    )
    models = sorted(log["model"].unique())
    positive = wide["label"].to_numpy()
    v10, v01 = [], []
    for name in models:
        s = wide[name].to_numpy()
        x, y = s[positive], s[~positive]
        psi = (x[:, None] > y[None, :]) + 0.5 * (x[:, None] == y[None, :])
        v10.append(psi.mean(axis=1))
        v01.append(psi.mean(axis=0))
    theta = np.array([v.mean() for v in v10])
    s = np.cov(np.array(v10)) / positive.sum() + np.cov(np.array(v01)) / (~positive).sum()
    k = len(models)
    # a different contrast matrix from the implementation's: each model against the first
    contrast = np.hstack([np.ones((k - 1, 1)), -np.eye(k - 1)])
    d = contrast @ theta
    return float(d @ np.linalg.solve(contrast @ s @ contrast.T, d))


@pytest.mark.parametrize("ties", [False, True])
def test_omnibus_for_two_models_is_delong_z_squared(run, rng, ties):
    log = two_model_log(rng, ties=ties)
    z = run(log, lambda f: pr.delong_test(f, "a", "b", by="fold"))
    chi = run(log, lambda f: pr.delong_omnibus(f, by="fold"))
    assert chi.columns == ["fold", "n", "k", "statistic", "df", "p_value", "n_pos", "n_neg"]
    assert chi["k"].to_list() == [2, 2, 2]
    assert chi["df"].to_list() == [1, 1, 1]
    np.testing.assert_allclose(chi["statistic"], z["statistic"] ** 2, rtol=1e-9)
    np.testing.assert_allclose(chi["p_value"], z["p_value"], rtol=1e-9)


@pytest.mark.parametrize(("k", "ties"), [(3, False), (3, True), (5, False)])
def test_omnibus_matches_an_independent_placement_computation(run, rng, k, ties):
    log = k_model_log(rng, k=k, ties=ties)
    pooled = run(log, lambda f: pr.delong_omnibus(f)).row(0, named=True)
    expected = omnibus_oracle(log)
    assert pooled["statistic"] == pytest.approx(expected, rel=1e-9)
    assert pooled["df"] == k - 1
    assert pooled["p_value"] == pytest.approx(stats.chi2.sf(expected, k - 1), rel=1e-9)
    per_fold = run(log, lambda f: pr.delong_omnibus(f, by="fold"))
    for row in per_fold.iter_rows(named=True):
        assert row["statistic"] == pytest.approx(
            omnibus_oracle(log.filter(fold=row["fold"])), rel=1e-9
        )


def test_omnibus_models_selects_a_subset(rng):
    log = k_model_log(rng, k=4)
    out = pr.delong_omnibus(log, ["m3", "m0", "m1"]).collect().row(0, named=True)
    assert out["k"] == 3
    expected = omnibus_oracle(log.filter(pl.col("model").is_in(["m0", "m1", "m3"])))
    assert out["statistic"] == pytest.approx(expected, rel=1e-9)


def test_omnibus_awkward_groups(run, rng):
    log = k_model_log(rng, k=3, folds=3, n=40)
    awkward = log.with_columns(
        score=pl.when((pl.col("fold") == 0) & (pl.col("sample") == 3) & (pl.col("model") == "m1"))
        .then(float("nan"))
        .otherwise("score"),
        label=pl.when(pl.col("fold") == 1).then(True).otherwise("label"),
    )
    out = run(awkward, lambda f: pr.delong_omnibus(f, by="fold"))
    assert math.isnan(out["statistic"][0])
    assert math.isnan(out["p_value"][0])
    assert out["statistic"][1] is None
    assert out["p_value"][1] is None
    assert out["statistic"][2] == pytest.approx(omnibus_oracle(log.filter(fold=2)), rel=1e-9)


def test_omnibus_with_a_duplicated_model_is_null(run, rng):
    log = k_model_log(rng, k=2, folds=1)
    copy = log.filter(model="m0").with_columns(model=pl.lit("m9"))
    out = run(pl.concat([log, copy]), lambda f: pr.delong_omnibus(f)).row(0, named=True)
    assert out["statistic"] is None
    assert out["p_value"] is None


def test_omnibus_null_score_drops_the_sample_from_every_model(rng):
    log = k_model_log(rng, k=3, folds=1, n=50)
    holed = log.with_columns(
        score=pl.when((pl.col("sample") == 7) & (pl.col("model") == "m2"))
        .then(None)
        .otherwise("score")
    )
    out = pr.delong_omnibus(holed).collect()
    expected = omnibus_oracle(log.filter(pl.col("sample") != 7))
    assert out["statistic"][0] == pytest.approx(expected, rel=1e-9)
    assert out["n_pos"][0] + out["n_neg"][0] == 49


def test_omnibus_errors(rng):
    log = k_model_log(rng, k=3, folds=1, n=20)
    with pytest.raises(ValueError, match="at least two models"):
        pr.delong_omnibus(log, ["m0"])
    with pytest.raises(ValueError, match=r"models with no rows: \(zz\)"):
        pr.delong_omnibus(log, ["m0", "zz"])
    with pytest.raises(ValueError, match=r"samples missing from some model: \(0, 4\)"):
        pr.delong_omnibus(log.filter(~((pl.col("model") == "m1") & (pl.col("sample") == 4))))
    flipped = log.with_columns(
        label=pl.when((pl.col("model") == "m2") & (pl.col("sample") == 5))
        .then(~pl.col("label"))
        .otherwise("label")
    )
    with pytest.raises(ValueError, match=r"label differs between the models: \(0, 5\)"):
        pr.delong_omnibus(flipped)
    with pytest.raises(ComputeError, match="key holds more than one row"):
        pr.delong_omnibus(pl.concat([log, log.head(1)]).lazy()).collect()
    with pytest.raises(ValueError, match="fewer than two models"):
        pr.delong_omnibus(log.filter(model="m0"))


@settings(max_examples=25)
@given(seed=st.integers(0, 2**32 - 1), order=st.permutations(["m0", "m1", "m2"]))
def test_omnibus_does_not_depend_on_model_names(seed, order):
    log = k_model_log(np.random.default_rng(seed), k=3, folds=1, n=30)
    renamed = log.with_columns(model=pl.col("model").replace(["m0", "m1", "m2"], order))
    a = pr.delong_omnibus(log).collect()["statistic"][0]
    b = pr.delong_omnibus(renamed).collect()["statistic"][0]
    assert (a is None and b is None) or a == pytest.approx(b, rel=1e-9)


def test_a_repeated_log_is_tested_within_each_repeat():
    # each repeat scores every sample once: the test runs per repeat, equal to the test
    # on that repeat's rows alone (never a pooled test counting samples twice)
    rng = np.random.default_rng(7)
    rows = [
        {
            "model": m,
            "repeat": r,
            "fold": s % 2,
            "sample": s,
            "score": rng.random() + 0.3 * (s % 2),
            "label": s % 2,
        }
        for r in range(2)
        for s in range(30)
        for m in ("a", "b", "c")
    ]
    log = pl.DataFrame(rows)
    got = pr.delong_test(log, "a", "b").collect().sort("repeat")
    assert got["repeat"].to_list() == [0, 1]
    for r in (0, 1):
        alone = pr.delong_test(log.filter(pl.col("repeat") == r).drop("repeat"), "a", "b").collect()
        assert got.filter(pl.col("repeat") == r)["statistic"].item() == pytest.approx(
            alone["statistic"].item(), rel=1e-12
        )
    omnibus = pr.delong_omnibus(log).collect().sort("repeat")
    assert omnibus["repeat"].to_list() == [0, 1]


def test_a_log_of_two_data_sets_is_tested_per_data_set(rng):
    # issue 32: sample ids restart in every data set and repeat; the default groups are
    # the data sets (within each repeat), each row equal to the pair definition on its
    # rows, and by=() pools both data sets' pairs into one test
    parts = [
        two_model_log(rng, folds=2, n=50).with_columns(dataset=pl.lit(d), repeat=pl.lit(r))
        for d in ("heart", "iris")
        for r in (0, 1)
    ]
    log = pl.concat(parts)
    out = pr.delong_test(log, "a", "b").collect()
    assert out.select("repeat", "dataset").rows() == [
        (0, "heart"),
        (0, "iris"),
        (1, "heart"),
        (1, "iris"),
    ]
    for row in out.iter_rows(named=True):
        part = log.filter(dataset=row["dataset"], repeat=row["repeat"])
        assert_matches(row, oracle(part))
    pooled = pr.delong_test(log.filter(repeat=0), "a", "b", by=()).collect()
    both = log.filter(repeat=0).with_columns(pl.col("fold") + 10 * (pl.col("dataset") == "iris"))
    assert_matches(pooled.row(0, named=True), oracle(both))
    # the omnibus too: no false "labels differ", each data set its own χ²
    k = pl.concat(
        [k_model_log(rng, k=3, folds=2, n=40).with_columns(dataset=pl.lit(d)) for d in "xy"]
    )
    omnibus = pr.delong_omnibus(k).collect()
    assert omnibus["dataset"].to_list() == ["x", "y"]
    for row in omnibus.iter_rows(named=True):
        expected = omnibus_oracle(k.filter(dataset=row["dataset"]).drop("dataset"))
        assert row["statistic"] == pytest.approx(expected, rel=1e-9)
