"""The one counting core (``_counts.score_counts``) against every faster path.

Issue 21: every rank-based quantity is read from per-(group, distinct score) weighted
counts. The expression paths (``pr.auc``'s ranks, ``threshold_counts``), the block sums
behind ``pr.evaluate`` and ``pr.pairwise_auc``, and DeLong's variance are alternative
evaluations of the same numbers; here they must agree with the core to 1e-12 on random
logs (binary, multiclass, weighted, tied, NaN, repeats). The core itself is checked
against brute force over every pair and scikit-learn.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import average_precision_score, roc_auc_score

import polaroc as pr
from polaroc.core import legacy_counts as _counts
from polaroc.core.names import POSITIVE, SCORE, WEIGHT


def _internal(log: pl.DataFrame, *, weighted: bool) -> pl.LazyFrame:
    cols = [pl.col("score").alias(SCORE), pl.col("label").cast(pl.Boolean).alias(POSITIVE)]
    if weighted:
        cols.append(pl.col("w").alias(WEIGHT))
    return log.lazy().with_columns(cols)


def _core(log: pl.DataFrame, keys: list[str], *, weighted: bool = False) -> pl.DataFrame:
    counts = _counts.score_counts(_internal(log, weighted=weighted), keys, weighted=weighted)
    return _counts.rank_summary(counts, keys).collect().sort(keys)


@st.composite
def binary_logs(draw):
    n = draw(st.integers(2, 60))
    tied = draw(st.booleans())
    values = st.sampled_from([0.0, 0.25, 0.5, 1.0]) if tied else st.floats(0, 1, width=32)
    scores = draw(st.lists(values, min_size=n, max_size=n))
    if draw(st.booleans()):  # a NaN score somewhere
        scores[draw(st.integers(0, n - 1))] = float("nan")
    return pl.DataFrame(
        {
            "model": "m",
            "repeat": draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)),
            "fold": draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)),
            "score": scores,
            "label": draw(st.lists(st.booleans(), min_size=n, max_size=n)),
            "w": draw(st.lists(st.integers(1, 4), min_size=n, max_size=n)),
        },
        schema_overrides={"w": pl.Float64},
    )


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if np.isnan(a) or np.isnan(b):
        return bool(np.isnan(a) and np.isnan(b))
    return bool(abs(a - b) <= 1e-12 * max(1.0, abs(b)))


@settings(max_examples=40)
@given(log=binary_logs(), weighted=st.booleans())
def test_core_equals_the_expressions_and_evaluate(log, weighted):
    keys = ["model", "repeat", "fold"]
    core = _core(log, keys, weighted=weighted)
    w = "w" if weighted else None
    exprs = (
        log.group_by(keys)
        .agg(
            pr.auc("score", "label", weight=w),
            pr.sauc("score", "label", weight=w),
            pr.average_precision("score", "label", weight=w),
            pr.auc_se("score", "label").alias("se"),
        )
        .sort(keys)
    )
    table = pr.evaluate(log, weight=w).collect().sort(keys)
    assert core.select(keys).equals(exprs.select(keys))
    assert core.select(keys).equals(table.select(keys))
    for name in ("auc", "sauc", "average_precision"):
        for got, fast, full in zip(core[name], exprs[name], table[name], strict=True):
            assert _same(got, fast), (name, got, fast)
            assert _same(got, full), (name, got, full)
    if not weighted:
        var = core["var_delong"].to_list()
        for v, se, se_table in zip(var, exprs["se"], table["auc_se_delong"], strict=True):
            expected = None if v is None else float(np.sqrt(v)) if not np.isnan(v) else v
            assert _same(expected, se), (expected, se)
            assert _same(expected, se_table), (expected, se_table)


def test_core_against_scikit_learn_and_brute_force():
    rng = np.random.default_rng(3)
    n = 400
    s, y, w = np.round(rng.random(n), 2), rng.integers(0, 2, n), rng.random(n) * 1e160
    log = pl.DataFrame({"g": 0, "score": s, "label": y, "w": w})
    core = _core(log, ["g"], weighted=True).row(0, named=True)
    assert core["auc"] == pytest.approx(roc_auc_score(y, s, sample_weight=w), rel=1e-12)
    ap = average_precision_score(y, s, sample_weight=w)
    assert core["average_precision"] == pytest.approx(ap, rel=1e-12)
    plain = _core(log, ["g"]).row(0, named=True)
    x, z = s[y == 1], s[y == 0]
    gaps = np.where(x[:, None] > z[None, :], x[:, None] - z[None, :], 0.0)
    assert plain["sauc"] == pytest.approx(gaps.mean(), rel=1e-12)
    # DeLong's variance from per-row placement values (brute force)
    v10 = ((x[:, None] > z[None, :]) + 0.5 * (x[:, None] == z[None, :])).mean(axis=1)
    v01 = ((x[:, None] > z[None, :]) + 0.5 * (x[:, None] == z[None, :])).mean(axis=0)
    var = v10.var(ddof=1) / len(x) + v01.var(ddof=1) / len(z)
    assert plain["var_delong"] == pytest.approx(var, rel=1e-12)


def test_placements_per_row():
    rng = np.random.default_rng(4)
    s, y = np.round(rng.random(50), 1), rng.integers(0, 2, 50)
    log = pl.DataFrame({"g": [0] * 25 + [1] * 25, "score": s, "label": y})
    rows = _counts.placements(_internal(log, weighted=False), ["g"]).collect()
    for g in (0, 1):
        part = rows.filter(pl.col("g") == g)
        ss, yy = part["score"].to_numpy(), part["label"].to_numpy().astype(bool)
        x, z = ss[yy], ss[~yy]
        cmp = (x[:, None] > z[None, :]) + 0.5 * (x[:, None] == z[None, :])
        assert part.filter(pl.col("label") == 1)["placement"].to_numpy() == pytest.approx(
            cmp.mean(axis=1), rel=1e-12
        )
        assert part.filter(pl.col("label") == 0)["placement"].to_numpy() == pytest.approx(
            cmp.mean(axis=0), rel=1e-12
        )


@settings(max_examples=25)
@given(
    n=st.integers(3, 30),
    seed=st.integers(0, 10_000),
    tied=st.booleans(),
    weighted=st.booleans(),
)
def test_core_equals_pairwise_directions(n, seed, tied, weighted):
    """A(i|j) of ``pr.pairwise_auc`` is the core's AUC of class i's scores, labels i vs j."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, n)
    rows = []
    for sample, label in enumerate(labels):
        for c in range(3):
            score = float(rng.integers(0, 4) / 4 if tied else rng.random())
            rows.append((sample % 2, sample, c, int(label), score, float(sample % 3 + 1)))
    log = pl.DataFrame(
        rows, schema=["fold", "sample", "class", "label", "score", "w"], orient="row"
    ).with_columns(model=pl.lit("m"))
    table = pr.pairwise_auc(log, weight="w" if weighted else None).collect()
    for row in table.iter_rows(named=True):
        i, j = row["class_i"], row["class_j"]
        part = log.filter(
            (pl.col("fold") == row["fold"]) & (pl.col("class") == i) & pl.col("label").is_in([i, j])
        ).with_columns(label=pl.col("label") == i)
        core = _core(part.with_columns(g=0), ["g"], weighted=weighted).row(0, named=True)
        assert _same(core["auc"], row["a_i_j"]), (core["auc"], row["a_i_j"])
