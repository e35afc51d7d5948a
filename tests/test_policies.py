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
