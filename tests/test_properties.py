"""Property tests: invariances of the binary metrics and agreement across contexts."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polaroc as pr
from tests.conftest import MODES, run_query
from tests.oracles import pair_auc, pair_sauc_parts

# Scores from a handful of values (heavy ties) or from [0, 1]; groups from tiny to many.
tied_scores = st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0])
unit_scores = st.floats(0.0, 1.0, allow_nan=False, width=32)


@st.composite
def logs(draw, scores=unit_scores, max_groups: int = 12, max_rows: int = 60):
    n = draw(st.integers(1, max_rows))
    groups = draw(st.lists(st.integers(0, max_groups - 1), min_size=n, max_size=n))
    score = draw(st.lists(scores, min_size=n, max_size=n))
    label = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    return pl.DataFrame(
        {"g": groups, "score": score, "label": label},
        schema={"g": pl.Int64, "score": pl.Float64, "label": pl.Boolean},
    )


def grouped(df: pl.DataFrame, *metrics: pl.Expr) -> pl.DataFrame:
    return df.group_by("g").agg(*metrics).sort("g")


def expected_auc(part: pl.DataFrame) -> float | None:
    y = part["label"].to_numpy()
    if y.all() or not y.any():
        return None
    return pair_auc(part["score"].to_numpy(), y)


@given(logs(scores=st.one_of(tied_scores, unit_scores)))
def test_auc_equals_pair_count_per_group(df):
    out = grouped(df, pr.auc("score", "label"))
    for g, value in out.iter_rows():
        expected = expected_auc(df.filter(pl.col("g") == g))
        assert value == pytest.approx(expected, abs=1e-12)


@given(logs(scores=st.integers(-20, 20).map(float)), st.sampled_from(["exp", "cube", "affine"]))
def test_auc_invariant_under_increasing_transform(df, transform):
    f = {
        "exp": lambda s: (s / 7).exp(),
        "cube": lambda s: s**3 + s,
        "affine": lambda s: 3 * s - 2,
    }[transform]
    before = grouped(df, pr.auc("score", "label"))
    after = grouped(df, pr.auc(f(pl.col("score")), "label"))
    assert before.equals(after)


@given(logs(scores=st.one_of(tied_scores, unit_scores)))
def test_auc_of_negated_score_is_one_minus_auc(df):
    out = grouped(df, pr.auc("score", "label"), pr.auc(-pl.col("score"), "label").alias("flipped"))
    for auc, flipped in zip(out["auc"], out["flipped"], strict=True):
        if auc is None:
            assert flipped is None
        else:
            assert flipped == pytest.approx(1 - auc, abs=1e-12)


@given(logs(scores=st.one_of(tied_scores, unit_scores)))
def test_sauc_bounded_by_mean_gap_and_auc(df):
    # Wu & Flach (2005) Table 2: for scores in [0, 1], M+ - M- <= sAUC <= AUC.
    out = grouped(df, pr.auc("score", "label"), pr.sauc_parts("score", "label")).unnest(
        "sauc_parts"
    )
    for row in out.iter_rows(named=True):
        if row["auc"] is None:
            assert row["sauc"] is None
            continue
        assert row["mean_pos"] - row["mean_neg"] <= row["sauc"] + 1e-12
        assert row["sauc"] <= row["auc"] + 1e-12
        part = df.filter(pl.col("g") == row["g"])
        expected = pair_sauc_parts(part["score"].to_numpy(), part["label"].to_numpy())
        assert row["sauc"] == pytest.approx(expected["sauc"], abs=1e-12)


ALL = (
    pr.auc("score", "label"),
    pr.gini("score", "label"),
    pr.sauc("score", "label"),
    pr.auc_se("score", "label"),
    pr.auc_se("score", "label", method="hanley_mcneil").alias("hm"),
    pr.error("score", "label", threshold=0.5),
    pr.confusion("score", "label", threshold=0.5),
)


def same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, abs=1e-12)
    return a == b


@given(logs(scores=st.one_of(tied_scores, unit_scores), max_groups=30))
def test_select_group_by_and_over_agree_in_every_engine(df):
    reference = grouped(df, *ALL)
    names = [e.meta.output_name() for e in ALL]
    for mode in MODES:
        out = run_query(df, lambda f: f.group_by("g").agg(*ALL).sort("g"), mode)
        assert out.equals(reference), mode
        windowed = run_query(
            df, lambda f: f.select("g", *(e.over("g") for e in ALL)).unique().sort("g"), mode
        )
        assert windowed.equals(reference), mode
    for g, *values in reference.iter_rows():
        alone = df.filter(pl.col("g") == g).select(*ALL)
        assert all(same(a, b) for a, b in zip(alone.row(0), values, strict=True)), names


def test_many_groups_against_oracle():
    rng = np.random.default_rng(7)
    g = rng.integers(0, 2_000, 40_000)
    label = rng.random(g.size) < 0.5
    score = np.round(rng.random(g.size) + 0.3 * label, 1)
    df = pl.DataFrame({"g": g, "score": score, "label": label})
    out = grouped(df, pr.auc("score", "label"), pr.sauc("score", "label"))
    for (key,), part in list(df.partition_by("g", as_dict=True).items())[:200]:
        row = out.row(by_predicate=pl.col("g") == key, named=True)
        assert row["auc"] == pytest.approx(expected_auc(part), abs=1e-12)
        expected = pair_sauc_parts(part["score"].to_numpy(), part["label"].to_numpy())
        assert row["sauc"] == pytest.approx(expected["sauc"], abs=1e-12)


# ------------------------------------------- repeated keys through every log path


@st.composite
def keyed_logs(draw):
    """A log with sample ids: binary without a class column, binary or 3-class with one,
    heavily tied or distinct scores, sometimes weighted; and whether a key was repeated
    (one row, or one whole run logged twice without its repeat column)."""
    shape = draw(st.sampled_from(["binary", "both", "three"]))
    n = draw(st.integers(4, 24))
    tied = draw(st.booleans())
    scores = tied_scores if tied else unit_scores
    classes = {"binary": [1], "both": [0, 1], "three": [0, 1, 2]}[shape]
    labels = draw(
        st.lists(st.sampled_from([0, 1, 2][: max(2, len(classes))]), min_size=n, max_size=n)
    )
    rows = []
    for sample, y in enumerate(labels):
        for c in classes:
            rows.append(
                {
                    "fold": sample % 2,
                    "sample": sample,
                    "class": c,
                    "label": y,
                    "score": draw(scores),
                }
            )
    log = pl.DataFrame(rows).with_columns(
        model=pl.lit("m"), w=pl.col("sample").cast(pl.Float64) + 1
    )
    if shape == "binary":
        log = log.drop("class")
    how = draw(st.sampled_from(["none", "row", "run"]))
    if how == "row":
        log = pl.concat([log, log.slice(draw(st.integers(0, log.height - 1)), 1)])
    elif how == "run":
        log = pl.concat([log, log])
    return log, how != "none"


def _log_paths():
    def stat(frame: pl.LazyFrame, groups: list[str]) -> pl.LazyFrame:
        return pr.youden_point(frame, by=groups)

    return {
        "evaluate": pr.evaluate,
        "evaluate-collapsed": lambda f: pr.evaluate(f, collapse_ties=True),
        "evaluate-plain": lambda f: pr.evaluate(f, collapse_ties=False),
        "evaluate-weighted": lambda f: pr.evaluate(f, weight="w"),
        "proportion_correct": pr.proportion_correct,
        "pairwise_auc": pr.pairwise_auc,
        "multiclass_auc": pr.multiclass_auc,
        "roc_curve": pr.roc_curve,
        "pr_curve": pr.pr_curve,
        "pooled_roc": pr.pooled_roc,
        "pooled_pr_curve": pr.pooled_pr_curve,
        "bootstrap": lambda f: pr.bootstrap(f, n_boot=3, seed=0),
        "bootstrap-youden": lambda f: pr.bootstrap(
            f, statistic=stat, metrics="threshold", n_boot=3, seed=0
        ),
    }


@settings(max_examples=20)
@given(case=keyed_logs(), mode=st.sampled_from(MODES))
def test_repeated_keys_raise_on_every_log_path(case, mode):
    log, repeated = case
    for name, table in _log_paths().items():
        if repeated:
            with pytest.raises(ValueError, match="keys must be unique") as error:
                run_query(log, table, mode)
            assert "_pr_" not in str(error.value).splitlines()[0], name
        else:
            run_query(log, table, mode)  # no error on a log with unique keys
