"""Every awkward-input policy of the design contract, with its exact outcome."""

from __future__ import annotations

import math

import polars as pl
import pytest

import polaroc as pr

FLOAT_METRICS = {
    "auc": pr.auc,
    "gini": pr.gini,
    "sauc": pr.sauc,
    "auc_se": pr.auc_se,
    "accuracy": pr.accuracy,
    "error": pr.error,
    "sensitivity": pr.sensitivity,
    "specificity": pr.specificity,
    "ppv": pr.ppv,
    "npv": pr.npv,
    "cost": pr.cost,
}
RANKING = ("auc", "gini", "sauc", "auc_se")


@pytest.mark.parametrize("name", RANKING)
@pytest.mark.parametrize("labels", [[True, True, True], [False, False, False]])
def test_group_with_one_class_is_null_not_half(run, name, labels):
    df = pl.DataFrame(
        {
            "g": [1, 1, 1, 2, 2, 2, 2],
            "score": [0.1, 0.5, 0.7, 0.2, 0.4, 0.6, 0.8],
            "label": [*labels, True, False, True, False],
        }
    )
    out = run(df, lambda f: f.group_by("g").agg(FLOAT_METRICS[name]("score", "label")).sort("g"))
    assert out[name][0] is None
    assert out[name][1] is not None  # the other group is unharmed


@pytest.mark.parametrize("name", FLOAT_METRICS)
def test_empty_frame_gives_null(name):
    df = pl.DataFrame({"score": [], "label": []}, schema={"score": pl.Float64, "label": pl.Boolean})
    value = df.select(FLOAT_METRICS[name]("score", "label")).item()
    assert value is None or (name == "cost" and value == 0.0)


@pytest.mark.parametrize("name", FLOAT_METRICS)
def test_nan_score_makes_the_group_nan(run, name):
    df = pl.DataFrame(
        {
            "g": [1, 1, 1, 1, 2, 2, 2, 2],
            "score": [0.1, float("nan"), 0.7, 0.3, 0.2, 0.4, 0.6, 0.8],
            "label": [True, False, True, False, True, False, True, False],
        }
    )
    out = run(df, lambda f: f.group_by("g").agg(FLOAT_METRICS[name]("score", "label")).sort("g"))
    assert math.isnan(out[name][0])
    assert not math.isnan(out[name][1])


def test_nan_score_nulls_the_confusion_counts():
    df = pl.DataFrame({"score": [0.1, float("nan")], "label": [True, False]})
    assert df.select(pr.confusion("score", "label")).item() is None


def test_nan_sauc_parts_are_nan():
    df = pl.DataFrame({"score": [0.1, float("nan"), 0.3], "label": [True, False, False]})
    parts = df.select(pr.sauc_parts("score", "label")).item()
    assert all(math.isnan(v) for v in parts.values())


def test_infinite_scores_rank_as_extremes(run):
    inf = float("inf")
    df = pl.DataFrame({"score": [inf, 0.5, -inf, 0.4], "label": [True, True, False, False]})
    out = run(df, lambda f: f.select(pr.auc("score", "label"), pr.sauc("score", "label")))
    assert out["auc"].item() == 1.0
    assert out["sauc"].item() == inf
    tie = pl.DataFrame({"score": [inf, inf], "label": [True, False]})
    assert tie.select(pr.auc("score", "label")).item() == 0.5  # a tie at +inf is a tie
    # [x > y] is 0 for a tied pair, so it adds nothing to sAUC, even at inf.
    assert tie.select(pr.sauc("score", "label")).item() == 0.0


def test_null_scores_and_labels_are_ignored(run):
    df = pl.DataFrame(
        {"score": [0.9, None, 0.3, 0.1, 0.8], "label": [True, True, False, None, False]}
    )
    clean = pl.DataFrame({"score": [0.9, 0.3, 0.8], "label": [True, False, False]})
    query = lambda f: f.select(
        pr.auc("score", "label"),
        pr.sauc("score", "label"),
        pr.accuracy("score", "label"),
        pr.auc_se("score", "label"),
    )
    assert run(df, query).equals(run(clean, query))


def test_integer_indicator_must_be_zero_one(run):
    df = pl.DataFrame({"score": [0.9, 0.8, 0.3], "label": [0, 2, 0]})
    with pytest.raises(pl.exceptions.ComputeError, match="holds values other than 0 and 1"):
        run(df, lambda f: f.select(pr.auc("score", "label")))
    signed = pl.DataFrame({"score": [0.9, 0.8], "label": [-1, 1]})
    with pytest.raises(pl.exceptions.ComputeError, match=r"positive indicator 'label'"):
        run(signed, lambda f: f.select(pr.sauc("score", "label")))


@pytest.mark.parametrize(
    ("values", "dtype"),
    [(["yes", "no"], pl.String), ([1.0, 0.0], pl.Float64), (["a", "b"], pl.Categorical)],
)
def test_indicator_of_wrong_dtype_is_a_type_error(values, dtype):
    df = pl.DataFrame({"score": [0.9, 0.1], "label": pl.Series(values, dtype=dtype)})
    with pytest.raises(TypeError, match=r"positive indicator 'label' has dtype .*Boolean"):
        df.select(pr.auc("score", "label"))
    with pytest.raises(TypeError, match="positive indicator 'label'"):
        df.lazy().group_by(pl.lit(1)).agg(pr.auc("score", "label")).collect_schema()


def test_non_numeric_score_is_a_type_error():
    df = pl.DataFrame({"score": ["0.9", "0.1"], "label": [True, False]})
    with pytest.raises(TypeError, match="score column 'score' has dtype String"):
        df.select(pr.sauc("score", "label"))


def test_argument_that_is_not_a_column_is_a_type_error():
    with pytest.raises(TypeError, match="`score` must be a column name or a Polars expression"):
        pr.auc(0.5, "label")


def test_missing_column_names_the_column():
    df = pl.DataFrame({"prob": [0.9, 0.1], "label": [True, False]})
    with pytest.raises(pl.exceptions.ColumnNotFoundError, match="score"):
        df.select(pr.auc("score", "label"))


def test_expressions_as_arguments(run):
    df = pl.DataFrame({"p": [0.9, 0.8, 0.3, 0.1], "y": ["m", "b", "m", "b"]})
    out = run(df, lambda f: f.select(pr.auc(1 - pl.col("p"), pl.col("y") == "b")))
    assert out["auc"].item() == pytest.approx(0.75)


# ------------------------------------------------ issue 22: the log path's regressions

import numpy as np  # noqa: E402
from polars.testing import assert_frame_equal  # noqa: E402
from sklearn.metrics import average_precision_score, roc_auc_score  # noqa: E402

from tests.conftest import run_query  # noqa: E402

KEYS_ERROR = "keys must be unique"


def _tied_binary_log(n: int = 2000, *, seed: int = 0) -> pl.DataFrame:
    """One run of a binary log (model, fold, sample) with five distinct scores."""
    rng = np.random.default_rng(seed)
    return pl.DataFrame(
        {
            "model": "m",
            "fold": np.repeat([0, 1], n // 2),
            "sample": np.arange(n),
            "score": rng.integers(0, 5, n) / 4,
            "label": rng.integers(0, 2, n).astype(bool),
        }
    )


@pytest.mark.parametrize("collapse", [None, False, True])
def test_tied_log_with_repeated_keys_raises_on_every_evaluate_path(mode, collapse):
    # issue 22 #1: the automatic tie-collapsing path skipped the key check (n = 2000)
    twice = pl.concat([_tied_binary_log(), _tied_binary_log()])
    with pytest.raises(ValueError, match=KEYS_ERROR):
        run_query(twice, lambda f: pr.evaluate(f, collapse_ties=collapse), mode)


def test_collapsed_and_plain_evaluate_agree_on_unique_keys(mode):
    log = _tied_binary_log().with_columns(
        w=pl.Series(np.random.default_rng(1).random(2000) * 2),
        score=pl.when(pl.col("sample") == 7).then(None).otherwise(pl.col("score")),
    )
    for weight in (None, "w"):
        tables = [
            run_query(log, lambda f, c=c, w=weight: pr.evaluate(f, collapse_ties=c, weight=w), mode)
            for c in (False, True)
        ]
        plain, collapsed = (t.sort("fold") for t in tables)
        assert plain.columns == collapsed.columns
        assert_frame_equal(plain, collapsed, rel_tol=1e-12, abs_tol=0.0)


def test_proportion_correct_refuses_repeated_keys_of_a_binary_log(mode):
    # issue 22 #2: counted as 8 samples for 4
    one = pl.DataFrame({"model": "m", "fold": 0, "sample": [0, 1, 2, 3]})
    one = one.with_columns(score=pl.Series([0.1, 0.9, 0.4, 0.6]), label=pl.Series([0, 1, 0, 1]))
    out = run_query(one, pr.proportion_correct, mode)
    assert out["n"].to_list() == [4]
    with pytest.raises(ValueError, match=KEYS_ERROR):
        run_query(pl.concat([one, one]), pr.proportion_correct, mode)


def test_pooled_pr_curve_pools_repeats_as_pooled_roc(mode):
    # issue 22 #5: one curve per (model, repeat) instead of one per model
    log = pl.concat([_tied_binary_log(40, seed=r).with_columns(repeat=pl.lit(r)) for r in range(3)])
    for table in (pr.pooled_pr_curve, pr.pooled_roc):
        out = run_query(log, table, mode)
        assert "repeat" not in out.columns
        assert out["model"].unique().to_list() == ["m"]
    out = run_query(log, lambda f: pr.pooled_pr_curve(f, by=("model", "repeat")), mode)
    assert sorted(out["repeat"].unique().to_list()) == [0, 1, 2]
    # the pooled curve is the one of the whole log, scikit-learn's average precision
    y, s = log["label"].to_numpy(), log["score"].to_numpy()
    points = run_query(log, pr.pooled_pr_curve, mode).sort("recall", "precision")
    recall, precision = points["recall"].to_numpy(), points["precision"].to_numpy()
    ap = float(np.sum(np.diff(recall) * precision[1:]))
    assert ap == pytest.approx(average_precision_score(y, s), rel=1e-12)


def test_bootstrap_key_error_names_only_the_users_columns():
    # issue 22 #13: named `_pr_replicate` and listed one key three times
    twice = pl.concat([_tied_binary_log(40), _tied_binary_log(40)])
    with pytest.raises(ValueError, match=KEYS_ERROR) as error:
        pr.bootstrap(twice, n_boot=5, seed=1).collect()
    message = str(error.value).splitlines()[0]
    assert "_pr_" not in message
    assert "(model, fold, sample)" in message
    listed = message.split(": ", 1)[1].split(". ")[0].split("; ")
    assert len(listed) == len(set(listed))


@pytest.mark.parametrize("with_sample", [True, False])
@pytest.mark.parametrize("name", ["youden_point", "neyman_pearson_point"])
def test_bootstrap_of_operating_points(with_sample, name):
    # policy: a replicate is a valid log for every table (fresh unique sample ids)
    log = _tied_binary_log(60).with_columns(score=pl.col("score") + pl.col("sample") * 1e-3)
    if not with_sample:
        log = log.drop("sample")
    extra = {"min_sensitivity": 0.8} if name == "neyman_pearson_point" else {}
    point = getattr(pr, name)

    def statistic(frame: pl.LazyFrame, groups: list[str]) -> pl.LazyFrame:
        return point(frame, by=groups, **extra)

    out = pr.bootstrap(log, statistic=statistic, metrics="threshold", n_boot=30, seed=3)
    table = out.collect().sort("fold")
    assert table["n_boot"].to_list() == [30, 30]
    assert table["se"].is_not_null().all()
    expected = point(log, **extra).collect().sort("fold")["threshold"]
    assert table["estimate"].to_list() == pytest.approx(expected.to_list(), rel=1e-12)


def test_resampled_sample_ids_are_unique_across_replicates():
    log = _tied_binary_log(30)
    drawn = pr.evaluation.resample.resample(
        log, by=["model", "fold"], label="label", sample="sample", n_boot=4, seed=0
    ).collect()
    assert drawn.select(pl.struct("model", "fold", "sample").is_unique().all()).item()
    sizes = drawn.group_by("model", "fold", "_pr_replicate").len()["len"]
    assert set(sizes.to_list()) == {15}


@pytest.mark.parametrize("scale", [1e160, 1e-170, 1.0])
def test_extreme_weights_give_scikit_learns_numbers(mode, scale):
    # policy: weights are normalised per group, so their products never overflow
    rng = np.random.default_rng(5)
    n = 300
    s, y = np.round(rng.random(n), 1), rng.integers(0, 2, n)
    w = rng.random(n) * 3
    w[:10] = 0.0
    log = pl.DataFrame({"model": "m", "fold": 0, "score": s, "label": y, "w": w * scale})
    auc, ap = roc_auc_score(y, s, sample_weight=w), average_precision_score(y, s, sample_weight=w)
    exprs = run_query(
        log,
        lambda f: f.select(
            pr.auc("score", "label", weight="w"),
            pr.gini("score", "label", weight="w"),
            pr.average_precision("score", "label", weight="w"),
            pr.partial_auc("score", "label", max_fpr=0.3, weight="w"),
        ),
        mode,
    ).row(0, named=True)
    assert exprs["auc"] == pytest.approx(auc, rel=1e-12)
    assert exprs["gini"] == pytest.approx(2 * auc - 1, rel=1e-12)
    assert exprs["average_precision"] == pytest.approx(ap, rel=1e-12)
    pauc = roc_auc_score(y, s, max_fpr=0.3, sample_weight=w)
    assert exprs["partial_auc"] == pytest.approx(pauc, rel=1e-12)
    for collapse in (False, True):
        table = run_query(
            log, lambda f, c=collapse: pr.evaluate(f, weight="w", collapse_ties=c), mode
        )
        assert table["auc"].item() == pytest.approx(auc, rel=1e-12)
        assert table["average_precision"].item() == pytest.approx(ap, rel=1e-12)
    both = pl.concat([log.with_columns(pl.lit(c).alias("class")) for c in (0, 1)])
    both = both.with_columns(pl.int_range(pl.len()).over("class").alias("sample"))
    both = both.with_columns(
        pl.when(pl.col("class") == 1).then(pl.col("score")).otherwise(1 - pl.col("score"))
    )
    pairs = run_query(both, lambda f: pr.pairwise_auc(f, weight="w"), mode)
    assert pairs["a_j_i"].item() == pytest.approx(auc, rel=1e-12)
    assert pairs["n_j"].item() == pytest.approx(float(np.sum(w[y == 1]) * scale), rel=1e-12)


def test_partial_auc_takes_weight_as_scikit_learn(run):
    # issue 22 #15: partial_auc raised TypeError on weight=
    rng = np.random.default_rng(9)
    s, y, w = rng.random(120), rng.integers(0, 2, 120), rng.integers(0, 4, 120).astype(float)
    df = pl.DataFrame({"score": s, "label": y, "w": w})
    for max_fpr in (0.1, 0.5, 1.0):
        out = run(
            df,
            lambda f, m=max_fpr: f.select(pr.partial_auc("score", "label", max_fpr=m, weight="w")),
        )
        expected = roc_auc_score(y, s, max_fpr=max_fpr, sample_weight=w)
        assert out.item() == pytest.approx(expected, rel=1e-12)
    # integer weights equal repeated rows
    repeated = df.select(pl.all().repeat_by(pl.col("w").cast(pl.Int64)).explode())
    plain = repeated.select(pr.partial_auc("score", "label", max_fpr=0.4)).item()
    weighted = df.select(pr.partial_auc("score", "label", max_fpr=0.4, weight="w")).item()
    assert weighted == pytest.approx(plain, rel=1e-12)


def test_auc_se_takes_weight_and_is_null(run):
    # issue 22 #15, chosen: accepted, null (no variance is defined; docstring: bootstrap)
    df = pl.DataFrame({"score": [0.1, 0.4, 0.35, 0.8], "label": [0, 0, 1, 1], "w": [1.0, 2, 1, 3]})
    for method in ("delong", "hanley_mcneil"):
        out = run(
            df, lambda f, m=method: f.select(pr.auc_se("score", "label", method=m, weight="w"))
        )
        assert out.item() is None
    assert "bootstrap" in (pr.auc_se.__doc__ or "")
    bad = df.with_columns(w=pl.Series([1.0, -1.0, 1.0, 1.0]))
    with pytest.raises(ValueError, match="weight"):
        run(bad, lambda f: f.select(pr.auc_se("score", "label", weight="w")))


def test_evaluate_weight_must_be_the_samples(mode):
    # policy: a sample's weight is the same on all its class rows, else ValueError
    log = pl.DataFrame(
        {
            "model": "m", "fold": 0,
            "sample": [0, 0, 1, 1, 2, 2, 3, 3],
            "class": [0, 1] * 4,
            "label": [0, 0, 1, 1, 1, 1, 0, 0],
            "score": [0.6, 0.4, 0.3, 0.7, 0.2, 0.8, 0.9, 0.1],
            "w": [1.0, 2.0, 1.0, 1.0, 1.0, 1.0, 3.0, 3.0],
        }
    )  # fmt: skip
    with pytest.raises(ValueError, match="'w'"):
        run_query(log, lambda f: pr.evaluate(f, weight="w"), mode)
    same = log.with_columns(w=pl.col("sample").cast(pl.Float64) + 0.5)
    out = run_query(same, lambda f: pr.evaluate(f, weight="w"), mode)
    # brute force: sample 0 (w .5) right, 1 (1.5) right, 2 (2.5) right, 3 (3.5) right
    assert out["error"].item() == pytest.approx(0.0)
    wrong = same.with_columns(
        score=pl.when(pl.col("sample") == 3).then(1 - pl.col("score")).otherwise(pl.col("score"))
    )
    out = run_query(wrong, lambda f: pr.evaluate(f, weight="w"), mode)
    assert out["error"].item() == pytest.approx(3.5 / 8.0, rel=1e-12)
    zero = same.with_columns(w=pl.when(pl.col("sample") == 3).then(0.0).otherwise(pl.col("w")))
    assert run_query(zero, lambda f: pr.evaluate(f, weight="w"), mode)["n"].item() == 3


def test_integer_arguments_accept_numpy_integers():
    # issue 22 #14 (the log side): every integer argument takes np.int64
    log = _tied_binary_log(40).with_columns(score=pl.col("score") + pl.col("sample") * 1e-3)
    a = pr.bootstrap(log, n_boot=np.int64(20), seed=np.int64(2)).collect()
    b = pr.bootstrap(log, n_boot=20, seed=2).collect()
    assert_frame_equal(a, b, rel_tol=1e-12, abs_tol=0.0)
    c = pr.average_roc(log, grid=np.int64(11)).collect()
    assert_frame_equal(c, pr.average_roc(log, grid=11).collect(), rel_tol=1e-12)
    d = pr.average_roc(log, method="threshold", grid=np.int32(5)).collect()
    assert_frame_equal(d, pr.average_roc(log, method="threshold", grid=5).collect(), rel_tol=1e-12)
    # the vocabulary's kinds of mistake: a bool is no number (TypeError), a float no count
    for bad, error in ((True, TypeError), (2.0, ValueError), (np.float64(3.0), ValueError)):
        with pytest.raises(error, match="n_boot"):
            pr.bootstrap(log, n_boot=bad)
