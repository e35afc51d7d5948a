"""The weighted AUC, Gini and average precision read the raw columns (``raw_weight``).

They apply the null / zero-weight / NaN policies as weights of running sums and check
the weights in the same pass, instead of filtering the rows first. Oracle:
scikit-learn's ``sample_weight`` on the rows the contract keeps (score, label and
weight non-null, weight > 0), with the contract's rules written out independently for
degenerate and NaN groups.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import average_precision_score, roc_auc_score

import polaroc as pr

NAN = float("nan")

rows = st.lists(
    st.tuples(
        st.integers(0, 2),  # group
        st.sampled_from([None, NAN, 0.0, 0.25, 0.5, 0.75, 1.0, 0.1, 0.6, 0.3]),  # score
        st.sampled_from([None, True, False]),  # label
        st.sampled_from([None, 0.0, 0.5, 1.0, 2.0, 3.0]),  # weight
    ),
    min_size=1,
    max_size=40,
)


def expected(part: pl.DataFrame, metric: str) -> float | None:
    """The contract's value for one group, from scikit-learn on the rows it keeps."""
    usable = part.drop_nulls(["score", "label", "w"])
    nan = usable["score"].is_nan()
    kept = usable.filter((pl.col("w") > 0) | nan)
    if kept["label"].all() or not kept["label"].any():  # no negatives / no positives
        return None
    if kept["score"].is_nan().any():
        return NAN
    y, s, w = kept["label"].to_numpy(), kept["score"].to_numpy(), kept["w"].to_numpy()
    if metric == "average_precision":
        return float(average_precision_score(y, s, sample_weight=w))
    auc = float(roc_auc_score(y, s, sample_weight=w))
    return auc if metric == "auc" else 2.0 * auc - 1.0


def close(got: float | None, want: float | None) -> bool:
    if want is None or got is None:
        return got is want
    if math.isnan(want) or math.isnan(got):
        return math.isnan(want) and math.isnan(got)
    return math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12)


METRICS = {"auc": pr.auc, "gini": pr.gini, "average_precision": pr.average_precision}


@settings(max_examples=80)
@given(data=rows)
def test_nulls_zero_weights_and_nan_follow_the_contract(data):
    g, s, y, w = zip(*data, strict=True)
    df = pl.DataFrame(
        {"g": g, "score": s, "label": y, "w": w},
        schema={"g": pl.Int64, "score": pl.Float64, "label": pl.Boolean, "w": pl.Float64},
    )
    out = df.group_by("g").agg(
        *(make("score", "label", weight="w").alias(name) for name, make in METRICS.items())
    )
    for row in out.iter_rows(named=True):
        part = df.filter(pl.col("g") == row["g"])
        for name in METRICS:
            assert close(row[name], expected(part, name)), (name, row, part)


@pytest.mark.parametrize("name", list(METRICS))
def test_demo_log_with_weights_ties_nan_and_a_renamed_column(run, name, rng):
    log = pl.read_parquet(pr.demo_log_path())
    n = log.height
    weight = np.round(rng.gamma(1.5, size=n), 1)  # some weights 0.0
    log = log.with_columns(
        prob=pl.col("score").round(1),  # heavy ties, under another name
        positive=pl.col("label").cast(pl.String) == pl.col("class").cast(pl.String),
        cw=pl.Series(weight),
    )
    log = log.with_columns(  # one NaN score in one (model, fold, class) group
        prob=pl.when(pl.int_range(pl.len()) == 7).then(NAN).otherwise(pl.col("prob"))
    )
    keys = ["model", "fold", "class"]
    got = run(
        log,
        lambda f: f.group_by(keys).agg(METRICS[name]("prob", "positive", weight="cw").alias("v")),
    )
    assert got.height == log.select(keys).unique().height
    for row in got.iter_rows(named=True):
        part = log.filter(*(pl.col(k) == row[k] for k in keys))
        part = part.select(score="prob", label="positive", w="cw")
        assert close(row["v"], expected(part, name)), (row, part)


@pytest.mark.parametrize("name", list(METRICS))
@pytest.mark.parametrize("bad", [-1.0, NAN, float("inf")])
def test_a_bad_weight_raises_even_on_a_row_without_a_score(name, bad):
    # the check reads every row's weight, the dropped rows' too (as before)
    df = pl.DataFrame(
        {
            "g": [0, 0, 0, 1, 1],
            "score": [0.2, 0.8, 0.5, None, None],
            "label": [False, True, True, True, False],
            "cw": [1.0, 1.0, 2.0, bad, 1.0],
        }
    )
    with pytest.raises(ValueError, match="weight column 'cw'"):
        df.group_by("g").agg(METRICS[name]("score", "label", weight="cw"))
    with pytest.raises(ValueError, match=r"^polaroc: the weight column 'cw'"):
        df.lazy().select(METRICS[name]("score", "label", weight="cw")).collect()


@pytest.mark.parametrize("scale", [1e160, 1e-170])
@pytest.mark.parametrize("name", list(METRICS))
def test_extreme_weights_need_no_rescaling(name, scale, rng):
    n = 400
    df = pl.DataFrame(
        {
            "g": np.repeat([0, 1], n // 2),
            "score": np.round(rng.normal(size=n), 1),
            "label": rng.random(n) < 0.4,
            "w": rng.gamma(1.5, size=n),
        }
    )
    query = METRICS[name]("score", "label", weight="w")
    plain = df.group_by("g").agg(query).sort("g")
    scaled = df.with_columns(pl.col("w") * scale).group_by("g").agg(query).sort("g")
    np.testing.assert_allclose(scaled[name].to_numpy(), plain[name].to_numpy(), rtol=1e-12)
    for k in (0, 1):
        part = df.filter(pl.col("g") == k)
        assert close(plain[name][k], expected(part, name))


def test_over_and_select_give_the_group_values(rng):
    n = 300
    df = pl.DataFrame(
        {
            "g": rng.integers(0, 3, n),
            "score": np.round(rng.normal(size=n), 1),
            "label": rng.random(n) < 0.5,
            "w": rng.gamma(1.5, size=n),
        }
    )
    query = pr.auc("score", "label", weight="w")
    over = df.select("g", query.over("g")).unique().sort("g")
    for g, value in over.iter_rows():
        part = df.filter(pl.col("g") == g)
        assert close(value, expected(part, "auc"))
        assert close(part.select(query)["auc"][0], expected(part, "auc"))
