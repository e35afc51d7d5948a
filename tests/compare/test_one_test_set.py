"""McNemar's test and Cochran's Q against statsmodels on per-sample right/wrong tables."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.exceptions import ComputeError
from scipy import stats
from statsmodels.stats.contingency_tables import cochrans_q, mcnemar

import polaroc as pr

COLUMNS = ["model_a", "model_b", "n", "estimate", "statistic", "df", "p_value", "reject"]
COLUMNS += ["n_01", "n_10", "exact", "accuracy_a", "accuracy_b"]


def binary_log(rng, models=("a", "b", "c"), folds=2, n=80, skill=(1.5, 1.0, 0.6)):
    """Binary scores (one row per sample), several folds, sample ids restarting per fold."""
    parts = []
    for fold in range(folds):
        label = rng.random(n) < 0.45
        shared = rng.normal(size=n)
        for name, s in zip(models, skill, strict=False):
            z = shared * 0.5 + s * (label - 0.5) + rng.normal(size=n)
            parts.append(
                pl.DataFrame(
                    {
                        "model": name,
                        "fold": fold,
                        "sample": np.arange(n),
                        "score": 1 / (1 + np.exp(-z)),
                        "label": label,
                    }
                )
            )
    return pl.concat(parts).sample(fraction=1.0, shuffle=True, seed=3)


def multiclass_log(rng, k=3, n=90, models=("a", "b", "c")):
    """k classes, every class's rows per sample; rounded scores give ties at the top."""
    label = rng.integers(0, k, n)
    parts = []
    for i, name in enumerate(models):
        scores = rng.random((n, k)) + (0.3 + 0.2 * i) * np.eye(k)[label]
        scores = np.round(scores, 1)
        parts.append(
            pl.DataFrame(
                {
                    "model": name,
                    "fold": 0,
                    "sample": np.repeat(np.arange(n), k),
                    "class": np.tile(np.arange(k), n),
                    "score": scores.ravel(),
                    "label": np.repeat(label, k),
                }
            )
        )
    return pl.concat(parts)


def right_matrix(log: pl.DataFrame, models, threshold=0.5, positive=None) -> np.ndarray:
    """Oracle: samples × models, 1 where the model classifies the sample right (numpy).

    Binary (no class column, or two classes: ``positive`` or the larger one): right
    when ``score >= threshold`` on the positive class's score is the label; more
    classes: the argmax, a tie at the top wrong.
    """
    cols = []
    classes = sorted(log["class"].unique()) if "class" in log.columns else []
    for name in models:
        keys = [c for c in ("dataset", "repeat", "fold", "sample", "class") if c in log.columns]
        rows = log.filter(model=name).sort(keys)
        if "class" not in log.columns:
            right = (rows["score"].to_numpy() >= threshold) == rows["label"].to_numpy()
        elif len(classes) <= 2:
            top = classes[-1] if positive is None else positive
            one = rows.filter(pl.col("class") == top)
            predicted = one["score"].to_numpy() >= threshold
            right = predicted == (one["label"].to_numpy() == top)
        else:
            k = rows["class"].n_unique()
            scores = rows["score"].to_numpy().reshape(-1, k)
            label = rows["label"].to_numpy().reshape(-1, k)[:, 0]
            top = scores.max(axis=1)
            own = scores[np.arange(len(label)), label]
            right = (own == top) & ((scores == top[:, None]).sum(axis=1) == 1)
        cols.append(right.astype(int))
    return np.column_stack(cols)


def mcnemar_oracle(x: np.ndarray, exact: bool) -> tuple[float, float, int, int]:
    n10 = int(((x[:, 0] == 1) & (x[:, 1] == 0)).sum())
    n01 = int(((x[:, 0] == 0) & (x[:, 1] == 1)).sum())
    table = np.array([[0, n10], [n01, 0]])
    res = mcnemar(table, exact=exact, correction=True)
    return float(res.statistic), float(res.pvalue), n01, n10


@pytest.mark.parametrize("exact", [True, False, None])
def test_mcnemar_equals_statsmodels_on_binary_logs(run, rng, exact):
    log = binary_log(rng)
    out = run(log, lambda f: pr.mcnemar_test(f, "a", "c", exact=exact))
    assert out.columns == COLUMNS
    x = right_matrix(log, ["a", "c"])
    use_exact = exact if exact is not None else (x[:, 0] != x[:, 1]).sum() < 25
    statistic, p, n01, n10 = mcnemar_oracle(x, use_exact)
    row = out.row(0, named=True)
    assert (row["n"], row["n_01"], row["n_10"], row["exact"]) == (len(x), n01, n10, use_exact)
    assert row["statistic"] == pytest.approx(statistic, rel=1e-12)
    assert row["p_value"] == pytest.approx(p, rel=1e-10)
    assert row["df"] == (None if use_exact else 1)
    assert row["estimate"] == pytest.approx(x[:, 0].mean() - x[:, 1].mean(), abs=1e-15)
    assert row["reject"] == (p <= 0.05)


def test_exact_by_default_below_25_discordant_pairs(rng):
    log = binary_log(rng, folds=1, n=30)
    x = right_matrix(log, ["a", "b"])
    row = pr.mcnemar_test(log, "a", "b").collect().row(0, named=True)
    assert row["exact"] == ((x[:, 0] != x[:, 1]).sum() < 25)
    big = binary_log(rng, folds=1, n=400, skill=(2.0, 0.2))
    row = pr.mcnemar_test(big, "a", "b").collect().row(0, named=True)
    assert row["n_01"] + row["n_10"] >= 25
    assert row["exact"] is False
    assert row["df"] == 1


@pytest.mark.parametrize("alternative", ["greater", "less"])
def test_one_sided_is_the_exact_binomial_tail(rng, alternative):
    log = binary_log(rng, folds=3, n=60)
    row = pr.mcnemar_test(log, "a", "b", alternative=alternative).collect().row(0, named=True)
    n = row["n_01"] + row["n_10"]
    expected = stats.binomtest(row["n_10"], n, 0.5, alternative=alternative).pvalue
    assert row["exact"] is True
    assert row["statistic"] == row["n_10"]
    assert row["p_value"] == pytest.approx(expected, rel=1e-10)
    with pytest.raises(ValueError, match="two-sided only"):
        pr.mcnemar_test(log, "a", "b", exact=False, alternative=alternative)


def test_demo_log_thresholds_its_positive_class(run):
    # a two-class log holding both classes' rows: malignant (the larger class) >= 0.5
    log = pl.read_parquet(pr.demo_log_path())
    out = run(log, lambda f: pr.mcnemar_test(f, "forest", "naive_bayes", exact=False))
    coded = log.with_columns(
        pl.col("class").to_physical().cast(pl.Int64), pl.col("label").to_physical().cast(pl.Int64)
    )
    x = right_matrix(coded, ["forest", "naive_bayes"])
    statistic, p, n01, n10 = mcnemar_oracle(x, exact=False)
    row = out.row(0, named=True)
    assert (row["n"], row["n_01"], row["n_10"]) == (len(x), n01, n10)
    assert row["statistic"] == pytest.approx(statistic, rel=1e-12)
    assert row["p_value"] == pytest.approx(p, rel=1e-10)
    # Cochran's Q over all six models
    q = run(log, lambda f: pr.cochran_q(f))
    models = sorted(log["model"].unique())
    res = cochrans_q(right_matrix(coded, models))
    assert q.row(0) == (
        len(x),
        len(models),
        pytest.approx(res.statistic),
        len(models) - 1,
        pytest.approx(res.pvalue, rel=1e-9),
        "malignant",  # the class read
    )


@pytest.mark.parametrize("threshold", [0.3, 0.5, 0.7])
def test_binary_logs_with_both_classes_rows_honour_the_threshold(run, rng, threshold):
    # issue 32: the argmax ignored threshold= on a log holding both classes' rows
    one = binary_log(rng, folds=2, n=60).with_columns(pl.col("label").cast(pl.Int64))
    positive = one.with_columns(**{"class": pl.lit(1, pl.Int64)})
    both = pl.concat(
        [positive, one.with_columns(**{"class": pl.lit(0, pl.Int64)}, score=1 - pl.col("score"))]
    )
    expected = mcnemar_oracle(
        right_matrix(one.with_columns(pl.col("label") == 1), ["a", "c"], threshold), True
    )
    for log in (one.with_columns(pl.col("label") == 1), positive, both):
        out = run(log, lambda f: pr.mcnemar_test(f, "a", "c", threshold=threshold, exact=True))
        row = out.row(0, named=True)
        assert (row["statistic"], row["n_01"], row["n_10"]) == (expected[0], *expected[2:])
        assert row["p_value"] == pytest.approx(expected[1], rel=1e-10)
        assert row.get("class", 1) == 1
    # class 0's score against the threshold: another test, stated as class 0
    zero = run(both, lambda f: pr.mcnemar_test(f, "a", "c", threshold=threshold, positive_class=0))
    x = right_matrix(both, ["a", "c"], threshold, positive=0)
    assert zero["p_value"][0] == pytest.approx(mcnemar_oracle(x, zero["exact"][0])[1], rel=1e-10)
    assert zero["class"][0] == 0
    q = run(both, lambda f: pr.cochran_q(f, threshold=threshold))
    res = cochrans_q(right_matrix(both, ["a", "b", "c"], threshold))
    assert q["statistic"][0] == pytest.approx(res.statistic, rel=1e-12)
    assert q["p_value"][0] == pytest.approx(res.pvalue, rel=1e-10)


def test_multiclass_ties_at_the_top_count_as_wrong(run, rng):
    log = multiclass_log(rng)
    x = right_matrix(log, ["a", "b", "c"])
    out = run(log, lambda f: pr.mcnemar_test(f, "a", "b", exact=True))
    statistic, p, n01, n10 = mcnemar_oracle(x[:, :2], exact=True)
    assert out.select("n_01", "n_10", "statistic").row(0) == (n01, n10, statistic)
    assert out["p_value"][0] == pytest.approx(p, rel=1e-10)
    q = run(log, lambda f: pr.cochran_q(f, ["a", "b", "c"]))
    res = cochrans_q(x)
    assert q.columns == ["n", "k", "statistic", "df", "p_value", "class"]
    assert q["class"][0] is None  # the argmax reads every class
    assert q["statistic"][0] == pytest.approx(res.statistic, rel=1e-12)
    assert q["p_value"][0] == pytest.approx(res.pvalue, rel=1e-10)


def test_cochran_q_equals_statsmodels_per_dataset_and_mcnemar_for_two(run, rng):
    log = pl.concat([binary_log(rng).with_columns(dataset=pl.lit(d)) for d in ("d1", "d2")]).rename(
        {"score": "s", "label": "y", "model": "clf"}
    )
    out = run(log, lambda f: pr.cochran_q(f, score="s", label="y", model="clf"))
    assert out.columns == ["dataset", "n", "k", "statistic", "df", "p_value"]
    for row in out.iter_rows(named=True):
        part = log.filter(dataset=row["dataset"]).rename(
            {"s": "score", "y": "label", "clf": "model"}
        )
        res = cochrans_q(right_matrix(part, ["a", "b", "c"]))
        assert row["statistic"] == pytest.approx(res.statistic, rel=1e-12)
        assert row["p_value"] == pytest.approx(res.pvalue, rel=1e-10)
        assert (row["k"], row["df"]) == (3, 2)
    two = pr.cochran_q(log, ["a", "b"], by=(), score="s", label="y", model="clf").collect()
    x = right_matrix(log.rename({"s": "score", "y": "label", "clf": "model"}), ["a", "b"])
    plain = mcnemar(
        np.array(
            [
                [0, ((x[:, 0] == 1) & (x[:, 1] == 0)).sum()],
                [((x[:, 0] == 0) & (x[:, 1] == 1)).sum(), 0],
            ]
        ),
        exact=False,
        correction=False,
    )
    assert two["statistic"][0] == pytest.approx(plain.statistic, rel=1e-12)
    mc = pr.mcnemar_test(log, "a", "b", by=(), score="s", label="y", model="clf").collect()
    assert mc.columns[:2] == ["model_a", "model_b"]  # by=() : one test over both data sets


def test_repeats_are_tested_separately(run, rng):
    log = pl.concat([binary_log(rng).with_columns(repeat=pl.lit(r)) for r in (0, 1)])
    out = run(log, lambda f: pr.mcnemar_test(f, "a", "b", exact=True))
    assert out["repeat"].to_list() == [0, 1]
    for row in out.iter_rows(named=True):
        x = right_matrix(log.filter(repeat=row["repeat"]), ["a", "b"])
        assert row["p_value"] == pytest.approx(mcnemar_oracle(x, True)[1], rel=1e-10)


def test_nan_null_and_degenerate(run, rng):
    log = binary_log(rng, folds=1, n=40)
    first = (pl.col("model") == "a") & (pl.col("sample") == 0)
    nan = log.with_columns(score=pl.when(first).then(float("nan")).otherwise("score"))
    out = run(nan, lambda f: pr.mcnemar_test(f, "a", "b"))
    assert math.isnan(out["p_value"][0])
    assert math.isnan(out["estimate"][0])
    assert out["reject"][0] is None
    assert math.isnan(run(nan, lambda f: pr.cochran_q(f))["statistic"][0])
    null = log.with_columns(score=pl.when(first).then(None).otherwise("score"))
    out = run(null, lambda f: pr.mcnemar_test(f, "a", "b"))
    assert out["n"][0] == 39
    x = right_matrix(log.filter(pl.col("sample") != 0), ["a", "b"])
    assert out["p_value"][0] == pytest.approx(mcnemar_oracle(x, out["exact"][0])[1], rel=1e-10)
    same = pl.concat([log.filter(model="a"), log.filter(model="a").with_columns(model=pl.lit("z"))])
    row = run(same, lambda f: pr.mcnemar_test(f, "a", "z")).row(0, named=True)
    assert (row["n_01"], row["n_10"], row["p_value"], row["exact"]) == (0, 0, 1.0, True)
    chi = run(same, lambda f: pr.mcnemar_test(f, "a", "z", exact=False))
    assert chi.select("statistic", "p_value", "reject").row(0) == (None, None, None)
    assert run(same, lambda f: pr.cochran_q(f))["statistic"][0] is None


def test_pairing_errors(rng):
    log = binary_log(rng, folds=1, n=20)
    missing = log.filter(~((pl.col("model") == "b") & (pl.col("sample") == 4)))
    with pytest.raises(ValueError, match=r"not scored by every model: \(0, 4\)"):
        pr.mcnemar_test(missing, "a", "b")
    with pytest.raises(ComputeError, match="not scored by every model"):
        pr.cochran_q(missing.lazy()).collect()
    relabelled = log.with_columns(
        label=pl.when((pl.col("model") == "b") & (pl.col("sample") == 2))
        .then(~pl.col("label"))
        .otherwise("label")
    )
    with pytest.raises(ValueError, match="label differs"):
        pr.mcnemar_test(relabelled, "a", "b")
    with pytest.raises(ValueError, match="models with no rows"):
        pr.cochran_q(log, ["a", "nope"])
    with pytest.raises(ValueError, match="two different models"):
        pr.mcnemar_test(log, "a", "a")
    with pytest.raises(ValueError, match="at least two"):
        pr.cochran_q(log, ["a"])
    with pytest.raises(ValueError, match="alternative"):
        pr.mcnemar_test(log, "a", "b", alternative="two.sided")


def test_model_columns_keep_the_logs_dtype(rng):
    log = binary_log(rng, folds=1, n=30).with_columns(pl.col("model").cast(pl.Categorical))
    out = pr.mcnemar_test(log, "a", "b").collect()
    assert out.schema["model_a"] == pl.Categorical
    assert out.schema["df"] == pl.Float64  # as every table's df, so the tables concatenate


@settings(max_examples=40)
@given(
    right=st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=60),
    exact=st.sampled_from([True, False, None]),
)
def test_any_right_wrong_table_matches_statsmodels_and_swapping_mirrors(right, exact):
    """Scores 0.9/0.1 on positives make any right/wrong pattern; statsmodels is the oracle."""
    x = np.array(right, dtype=int)
    label = np.arange(len(x)) % 2 == 0
    parts = []
    for j, name in enumerate(("a", "b")):
        score = np.where(x[:, j] == 1, np.where(label, 0.9, 0.1), np.where(label, 0.1, 0.9))
        parts.append(
            pl.DataFrame(
                {
                    "model": name,
                    "fold": 0,
                    "sample": np.arange(len(x)),
                    "score": score,
                    "label": label,
                }
            )
        )
    log = pl.concat(parts)
    ab = pr.mcnemar_test(log, "a", "b", exact=exact).collect().row(0, named=True)
    ba = pr.mcnemar_test(log, "b", "a", exact=exact).collect().row(0, named=True)
    n01, n10 = (
        int(((x[:, 0] == 0) & (x[:, 1] == 1)).sum()),
        int(((x[:, 0] == 1) & (x[:, 1] == 0)).sum()),
    )
    use_exact = exact if exact is not None else n01 + n10 < 25
    assert (ab["n_01"], ab["n_10"], ab["exact"]) == (n01, n10, use_exact)
    assert (ba["n_01"], ba["n_10"]) == (n10, n01)
    assert ba["estimate"] == -ab["estimate"]
    if use_exact or n01 + n10 > 0:
        expected = mcnemar(np.array([[0, n10], [n01, 0]]), exact=use_exact)
        assert ab["p_value"] == pytest.approx(expected.pvalue, rel=1e-10)
        assert ba["p_value"] == ab["p_value"]
    else:
        assert ab["p_value"] is None
    greater = pr.mcnemar_test(log, "a", "b", alternative="greater").collect()["p_value"][0]
    less = pr.mcnemar_test(log, "b", "a", alternative="less").collect()["p_value"][0]
    assert greater == pytest.approx(less, rel=1e-12)
