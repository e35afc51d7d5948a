"""Awkward logs into every per-group expression and table (issue 14, log side; issue 15 keys).

The contract (DESIGN.md, "Policies for awkward input" and "Keys are unique"): a
degenerate group is null — even with a NaN score —, a NaN score makes its group NaN
and never a finite number, ±inf ranks as the extreme it is, null rows are dropped and
counted, a repeated key raises, and every error is a short ValueError/TypeError
naming the column. Oracles are brute force over every pair (comparisons only, so
that ±inf ties count ½) and scikit-learn.
"""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score

import polaroc as pr
from tests.conftest import MODES, run_query
from tests.oracles import hand_till_m

NAN, INF = float("nan"), float("inf")

# ---------------------------------------------------------------------- oracles


def _usable(scores, labels):
    keep = [s is not None and y is not None for s, y in zip(scores, labels, strict=True)]
    s = np.array([x for x, k in zip(scores, keep, strict=True) if k], dtype=float)
    y = np.array([v for v, k in zip(labels, keep, strict=True) if k], dtype=bool)
    return s, y


def brute_auc(s: np.ndarray, y: np.ndarray) -> float | None:
    """None (null) for a degenerate group, NaN with a NaN score, else the pair count."""
    x, z = s[y], s[~y]
    if len(x) == 0 or len(z) == 0:
        return None
    if np.isnan(s).any():
        return NAN
    above = x[:, None] > z[None, :]
    tied = x[:, None] == z[None, :]
    return float((above + 0.5 * tied).mean())


def brute_sauc(s: np.ndarray, y: np.ndarray) -> float | None:
    """Σ (x − y)·[x > y] / (n⁺n⁻), the difference taken only where x > y."""
    x, z = s[y], s[~y]
    if len(x) == 0 or len(z) == 0:
        return None
    if np.isnan(s).any():
        return NAN
    above = x[:, None] > z[None, :]
    with np.errstate(invalid="ignore"):
        diff = np.where(above, x[:, None] - z[None, :], 0.0)
    return float(diff.sum() / diff.size)


def brute_m(part: pl.DataFrame) -> float:
    """Hand & Till's M by comparisons (±inf ties count ½): mean over label pairs of A(i, j)."""
    labels = sorted(part["label"].unique().to_list())
    terms = []
    for i, j in combinations(labels, 2):
        directions = []
        for a, b in ((i, j), (j, i)):
            block = part.filter(pl.col("class") == a)
            x = block.filter(pl.col("label") == a)["score"].to_numpy()
            y = block.filter(pl.col("label") == b)["score"].to_numpy()
            if len(x) and len(y):
                directions.append(((x[:, None] > y) + 0.5 * (x[:, None] == y)).mean())
        if directions:
            terms.append(np.mean(directions))
    return float(np.mean(terms))


def same(actual, expected, rel: float = 1e-9) -> bool:
    """Null ↔ None, NaN ↔ NaN, ±inf ↔ ±inf, numbers close."""
    if expected is None or actual is None:
        return expected is None and actual is None
    if math.isnan(expected):
        return math.isnan(actual)
    if math.isinf(expected):
        return actual == expected
    return math.isclose(actual, expected, rel_tol=rel, abs_tol=1e-12)


# ---------------------------------------------------------------- strategies

AWKWARD = [0.0, 0.25, 0.5, 0.75, 1.0, NAN, INF, -INF, None]


@st.composite
def binary_logs(draw, max_rows: int = 40):
    """A binary log in groups g: tied, NaN, ±inf and null scores, null labels."""
    n = draw(st.integers(0, max_rows))
    g = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
    nan_rate = draw(st.sampled_from([0.0, 0.05]))
    score = draw(
        st.lists(
            st.sampled_from(AWKWARD) if nan_rate else st.sampled_from([*AWKWARD[:5], INF, None]),
            min_size=n,
            max_size=n,
        )
    )
    label = draw(st.lists(st.one_of(st.booleans(), st.none()), min_size=n, max_size=n))
    return pl.DataFrame(
        {"g": g, "score": score, "label": label},
        schema={"g": pl.Int64, "score": pl.Float64, "label": pl.Boolean},
    )


def per_group(df: pl.DataFrame):
    for (g,), part in df.group_by("g"):
        yield g, _usable(part["score"].to_list(), part["label"].to_list())


# ------------------------------------------------ expressions, group by group


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=40)
@given(df=binary_logs())
def test_pair_metrics_follow_the_contract(mode, df):
    query = lambda f: f.group_by("g").agg(
        pr.auc("score", "label"),
        pr.gini("score", "label"),
        pr.sauc("score", "label"),
        pr.sauc_parts("score", "label").struct.field("sauc").alias("parts_sauc"),
        pr.auc_se("score", "label").alias("se_delong"),
        pr.auc_se("score", "label", method="hanley_mcneil").alias("se_hm"),
    )
    out = {row["g"]: row for row in run_query(df, query, mode).iter_rows(named=True)}
    for g, (s, y) in per_group(df):
        row = out[g]
        auc = brute_auc(s, y)
        assert same(row["auc"], auc), (g, row, auc)
        assert same(row["gini"], None if auc is None else 2 * auc - 1)
        assert same(row["sauc"], brute_sauc(s, y))
        assert same(row["parts_sauc"], brute_sauc(s, y))
        for se in ("se_delong", "se_hm"):
            if auc is None:
                assert row[se] is None  # degenerate precedes NaN
            elif math.isnan(auc):
                assert math.isnan(row[se])  # never a finite number from a NaN


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=40)
@given(df=binary_logs())
def test_confusion_counts_or_null(mode, df):
    query = lambda f: f.group_by("g").agg(pr.confusion("score", "label", threshold=0.5))
    out = {row["g"]: row["confusion"] for row in run_query(df, query, mode).iter_rows(named=True)}
    for g, (s, y) in per_group(df):
        if np.isnan(s).any():
            assert out[g] is None  # integer counts: null, never a count that hides a NaN
            continue
        predicted = s >= 0.5
        expected = {
            "tp": int((predicted & y).sum()),
            "fp": int((predicted & ~y).sum()),
            "tn": int((~predicted & ~y).sum()),
            "fn": int((~predicted & y).sum()),
        }
        assert out[g] == expected


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=30)
@given(df=binary_logs())
def test_evaluate_counts_and_contract(mode, df):
    log = df.with_columns(model=pl.col("g"), fold=pl.lit(0))
    out = run_query(log, lambda f: pr.evaluate(f), mode)
    rows = {row["model"]: row for row in out.iter_rows(named=True)}
    assert set(rows) == set(df["g"].unique().to_list())
    for g, part in log.group_by("g"):
        row = rows[g[0]]
        assert row["n_null_score"] == part["score"].null_count()
        assert row["n_null_label"] == part["label"].null_count()
        s, y = _usable(part["score"].to_list(), part["label"].to_list())
        assert row["n"] == len(s)
        assert same(row["auc"], brute_auc(s, y))
        assert same(row["sauc"], brute_sauc(s, y))
        if np.isnan(s).any():
            assert math.isnan(row["error"])


# ---------------------------------------------------- multiclass tables


@st.composite
def class_logs(draw):
    """A 3-class log with sample ids, two models: ties, NaN, ±inf; maybe one class only."""
    n = draw(st.integers(1, 12))
    classes = draw(st.sampled_from([[0, 1, 2], [0, 1], [1]]))
    labels = draw(st.lists(st.sampled_from(classes), min_size=n, max_size=n))
    rows = []
    for model in ("a", "b"):
        for sample, label in enumerate(labels):
            for c in classes:
                rows.append((model, sample, c, label))
    scores = draw(
        st.lists(
            st.sampled_from([0.0, 0.5, 1.0, 0.25, INF, -INF, NAN]),
            min_size=len(rows),
            max_size=len(rows),
        )
    )
    model, sample, class_, label = zip(*rows, strict=True)
    return pl.DataFrame(
        {
            "model": model,
            "fold": 0,
            "sample": sample,
            "class": class_,
            "label": label,
            "score": scores,
        }
    )


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=30)
@given(log=class_logs())
def test_multiclass_tables_follow_the_contract(mode, log):
    m = run_query(log, lambda f: pr.multiclass_auc(f), mode)
    e = run_query(log, lambda f: pr.evaluate(f), mode)
    pairs = run_query(log, lambda f: pr.pairwise_auc(f), mode)
    for (model,), part in log.group_by("model"):
        got_m = m.filter(pl.col("model") == model)["auc"].item()
        got_e = e.filter(pl.col("model") == model)["auc"].item()
        n_labels = part["label"].n_unique()
        if n_labels < 2:
            assert got_m is None
            assert got_e is None
            continue
        # M reads the scores of the classes that are labels in the group (A(i|j) needs
        # class-i scores of label-i and label-j rows): a NaN among those makes it NaN
        used = part.filter(pl.col("class").is_in(part["label"].unique().implode()))
        if used["score"].is_nan().any():
            assert math.isnan(got_m)
            assert math.isnan(got_e)
            assert pairs.filter(pl.col("model") == model)["a"].is_nan().any()
            continue
        expected = brute_m(part)
        assert got_m == pytest.approx(expected)
        assert got_e == pytest.approx(expected)


@pytest.mark.parametrize("mode", MODES)
def test_empty_log_gives_empty_tables(mode):
    log = pl.DataFrame(
        schema={
            "model": pl.String,
            "fold": pl.Int64,
            "sample": pl.Int64,
            "class": pl.Int64,
            "label": pl.Int64,
            "score": pl.Float64,
        }
    )
    for table in (
        pr.evaluate,
        pr.multiclass_auc,
        pr.pairwise_auc,
        pr.proportion_correct,
        pr.roc_curve,
    ):
        assert run_query(log, lambda f, t=table: t(f), mode).height == 0
    empty = pl.DataFrame(schema={"score": pl.Float64, "label": pl.Boolean})
    out = run_query(
        empty, lambda f: f.select(pr.auc("score", "label"), pr.sauc("score", "label")), mode
    )
    assert out.row(0) == (None, None)


# --------------------------------------------------------------- unique keys


def _cv_log(repeats: int, *, seed: int = 0) -> pl.DataFrame:
    """Two classes, both classes' rows, folds whose ids restart in every repeat."""
    rng = np.random.default_rng(seed)
    frames = []
    for r in range(repeats):
        for fold in range(2):
            n = 6
            label = rng.permutation([0, 0, 0, 1, 1, 1])
            p1 = np.clip(rng.random(n) * 0.6 + label * 0.3 + 0.05 * r, 0, 1)
            for c, score in ((0, 1 - p1), (1, p1)):
                frames.append(
                    pl.DataFrame(
                        {
                            "model": "m",
                            "repeat": r,
                            "fold": fold,
                            "sample": np.arange(n),
                            "class": c,
                            "label": label,
                            "score": score,
                        }
                    )
                )
    return pl.concat(frames)


@pytest.mark.parametrize("mode", MODES)
def test_repeated_cv_without_repeat_column_raises(mode):
    log = _cv_log(2).drop("repeat")
    for table in (pr.evaluate, pr.proportion_correct, pr.multiclass_auc, pr.pairwise_auc):
        with pytest.raises(ValueError, match=r"repeat") as info:
            run_query(log, lambda f, t=table: t(f), mode)
        first = str(info.value).splitlines()[0]
        assert "(model, fold, sample)" in first
        assert "(m, 0, 0)" in first
    binary = log.filter(pl.col("class") == 1).drop("class")
    with pytest.raises(ValueError, match=r"key holds more than one row"):
        run_query(binary, lambda f: pr.evaluate(f), mode)


@pytest.mark.parametrize("mode", MODES)
def test_repeated_cv_with_repeat_column_is_right(mode):
    log = _cv_log(3)
    out = run_query(log, lambda f: pr.evaluate(f), mode).sort("repeat", "fold")
    assert out.columns[:3] == ["model", "repeat", "fold"]  # the default by
    assert out.height == 6
    for row in out.iter_rows(named=True):
        part = log.filter((pl.col("repeat") == row["repeat"]) & (pl.col("fold") == row["fold"]))
        assert row["n"] == 6
        ones = part.filter(pl.col("class") == 1)
        zeros = part.filter(pl.col("class") == 0)
        # both classes' rows: M is the mean of the two directions (the contract)
        a10 = roc_auc_score(ones["label"] == 1, ones["score"])
        a01 = roc_auc_score(zeros["label"] == 0, zeros["score"])
        assert row["auc"] == pytest.approx((a10 + a01) / 2)
    binary = log.filter(pl.col("class") == 1).drop("class")
    out = run_query(binary, lambda f: pr.evaluate(f), mode).sort("repeat", "fold")
    expected = [
        roc_auc_score(p["label"], p["score"])
        for _, p in binary.sort("repeat", "fold").group_by("repeat", "fold", maintain_order=True)
    ]
    assert out["auc"].to_list() == pytest.approx(expected)


@settings(max_examples=40)
@given(
    data=st.data(),
    n=st.integers(2, 8),
    duplicate=st.booleans(),
)
def test_duplicate_key_error_fires_exactly_when_a_key_repeats(data, n, duplicate):
    log = _cv_log(1).drop("repeat").filter(pl.col("sample") < n)
    if duplicate:
        i = data.draw(st.integers(0, log.height - 1))
        log = pl.concat([log, log.slice(i, 1)])
    for table in (pr.evaluate, pr.multiclass_auc):
        if duplicate:
            with pytest.raises(ValueError, match="keys must be unique"):
                table(log).collect()
        else:
            assert table(log).collect().height == 2


# ------------------------------------------------------------ huge offsets


@pytest.mark.parametrize("offset", [1e9, 1e12])
@pytest.mark.parametrize("mode", MODES)
def test_sauc_is_unchanged_by_a_constant_offset(mode, offset):
    rng = np.random.default_rng(7)
    n = 120
    # multiples of 1/64: exactly representable after adding the offset
    log = pl.DataFrame(
        {
            "model": "m",
            "fold": 0,
            "sample": np.repeat(np.arange(n // 3), 3),
            "class": np.tile([0, 1, 2], n // 3),
            "label": np.repeat(rng.integers(0, 3, n // 3), 3),
            "score": np.round(rng.random(n) * 64) / 64,
        }
    )
    shifted = log.with_columns(pl.col("score") + offset)
    binary = log.filter(pl.col("class") == 1).with_columns(positive=pl.col("label") == 1)

    def saucs(frame: pl.DataFrame, bin_frame: pl.DataFrame) -> list[float]:
        b = bin_frame.drop("class", "label").rename({"positive": "label"})
        return [
            run_query(frame, lambda f: pr.evaluate(f), mode)["sauc"].item(),
            run_query(frame, lambda f: pr.multiclass_auc(f), mode)["sauc"].item(),
            run_query(b, lambda f: pr.evaluate(f), mode)["sauc"].item(),
            run_query(b, lambda f: f.select(pr.sauc("score", "label")), mode).item(),
            run_query(b, lambda f: f.select(pr.sauc_parts("score", "label")), mode).item()["sauc"],
        ]

    base = saucs(log, binary)
    moved = saucs(shifted, binary.with_columns(pl.col("score") + offset))
    for a, b in zip(base, moved, strict=True):
        assert abs(a - b) <= 1e-12 * abs(a)
    s, y = binary["score"].to_numpy(), binary["positive"].to_numpy()
    assert base[3] == pytest.approx(brute_sauc(s, y), rel=1e-12)


# ------------------------------------------------- regressions of issue 14


def _three_class_log() -> pl.DataFrame:
    rng = np.random.default_rng(3)
    frames = []
    for model in ("a", "b"):
        for fold in (0, 1):
            n = 8
            label = rng.integers(0, 3, n)
            for c in (0, 1, 2):
                frames.append(
                    pl.DataFrame(
                        {
                            "model": model,
                            "fold": fold,
                            "sample": np.arange(n),
                            "class": c,
                            "label": label,
                            "score": rng.random(n) + (label == c) * 0.4,
                        }
                    )
                )
    return pl.concat(frames)


@pytest.mark.parametrize("mode", MODES)
def test_by_empty_is_one_group(mode):
    log = _three_class_log()
    m = run_query(log, lambda f: pr.multiclass_auc(f, by=()), mode)
    assert m.columns[0] == "n_classes"
    assert m.height == 1
    expected = hand_till_m(log["class"], log["label"], log["score"])
    assert m["auc"].item() == pytest.approx(expected)
    e = run_query(log, lambda f: pr.evaluate(f, by=()), mode)
    assert e.height == 1
    assert e["auc"].item() == pytest.approx(expected)
    assert e["n"].item() == 32  # 4 (model, fold) × 8 samples: ids are per (model, fold)
    c = run_query(log, lambda f: pr.proportion_correct(f, by=()), mode)
    per_fold = run_query(log, lambda f: pr.proportion_correct(f), mode)
    assert c["c1"].item() == pytest.approx(per_fold["c1"].mean())  # equal-size folds
    binary = pl.DataFrame({"score": [0.1, 0.9, 0.4, 0.6], "label": [0, 1, 1, 0]})
    b = run_query(
        binary.with_columns(model=pl.lit("m"), fold=0), lambda f: pr.evaluate(f, by=()), mode
    )
    assert b["auc"].item() == roc_auc_score(binary["label"], binary["score"])


def test_by_empty_in_bootstrap_and_batches():
    log = _three_class_log()
    boot = pr.bootstrap(log, by=(), n_boot=20, seed=1).collect()
    assert boot.columns[0] == "metric"
    point = pr.evaluate(log, by=()).collect()
    assert boot.filter(pl.col("metric") == "auc")["estimate"].item() == pytest.approx(
        point["auc"].item()
    )
    batched = pr.evaluate_in_batches(log.lazy(), by=())
    assert batched["auc"].item() == pytest.approx(point["auc"].item())


@pytest.mark.parametrize("mode", MODES)
def test_one_class_group_with_nan_is_null_everywhere(mode):
    df = pl.DataFrame({"score": [0.2, NAN, 0.7], "label": [True, True, True]})
    exprs = lambda f: f.select(
        pr.auc("score", "label"),
        pr.gini("score", "label"),
        pr.sauc("score", "label"),
        pr.sauc_parts("score", "label"),
        pr.auc_se("score", "label"),
        pr.auc_se("score", "label", method="hanley_mcneil").alias("hm"),
        pr.partial_auc("score", "label", max_fpr=0.5),
    )
    assert run_query(df, exprs, mode).row(0) == (None,) * 7
    log = df.with_columns(model=pl.lit("m"), fold=0)
    e = run_query(log, lambda f: pr.evaluate(f), mode)
    assert e["auc"].item() is None
    assert e["sauc"].item() is None
    multi = pl.DataFrame(
        {
            "model": "m",
            "fold": 0,
            "sample": [0, 0, 1, 1],
            "class": [0, 1, 0, 1],
            "label": [1, 1, 1, 1],
            "score": [0.2, NAN, 0.4, 0.6],
        }
    )
    assert run_query(multi, lambda f: pr.multiclass_auc(f), mode)["auc"].item() is None
    assert run_query(multi, lambda f: pr.evaluate(f), mode)["auc"].item() is None


@pytest.mark.parametrize("labels", [[-1, 1, 1, -1], [0, 2, 2, 0]])
@pytest.mark.parametrize("mode", MODES)
def test_bad_indicator_gives_a_short_message(mode, labels):
    log = pl.DataFrame({"model": "m", "fold": 0, "score": [0.1, 0.8, 0.7, 0.3], "label": labels})
    with pytest.raises(ValueError, match=r"positive indicator 'label'") as info:
        run_query(log, lambda f: pr.evaluate(f), mode)
    message = str(info.value)
    assert len(message) < 400
    assert "strict" not in message
    bad = next(v for v in labels if v not in (0, 1))
    assert str(bad) in message.splitlines()[0]
    # expressions cannot check ahead; the first line is still the message
    with pytest.raises(ValueError, match=r"positive indicator") as info:
        run_query(log, lambda f: f.select(pr.auc("score", "label")), mode)
    assert str(info.value).splitlines()[0].startswith("polaroc: the positive indicator")


@pytest.mark.parametrize(
    ("argument", "name"),
    [("sample", "sample_id"), ("class_", "klass"), ("dataset", "data"), ("repeat", "rep")],
)
def test_a_column_named_explicitly_must_exist(argument, name):
    log = _three_class_log()
    call = {
        "sample": pr.proportion_correct,
        "class_": pr.evaluate,
        "dataset": pr.multiclass_auc,
        "repeat": pr.evaluate,
    }[argument]
    if argument == "repeat":
        with pytest.raises(ValueError, match=rf"no column '{name}'.*repeat="):
            call(log, repeat=name)
        return
    with pytest.raises(ValueError, match=rf"no column '{name}'.*{argument}="):
        call(log, **{argument: name})


def test_evaluate_in_batches_custom_table_without_a_by_column():
    log = _three_class_log()
    table = lambda lf: pr.multiclass_auc(lf, by="model")
    with pytest.raises(ValueError, match=r"no column 'fold'"):
        pr.evaluate_in_batches(log.lazy(), table, max_rows=40)


def test_repeat_in_every_per_group_table():
    log = _cv_log(2)
    for table in (
        pr.evaluate,
        pr.multiclass_auc,
        pr.pairwise_auc,
        pr.proportion_correct,
        pr.roc_curve,
    ):
        out = table(log).collect()
        assert {"model", "repeat", "fold"} <= set(out.columns)
        assert out.select("repeat", "fold").unique().height == 4
    binary = log.filter(pl.col("class") == 1).drop("class")
    pooling = pr.pooling_table(binary).collect()
    assert pooling["n_folds"].item() == 4  # every (repeat, fold) pair
    per_fold = [roc_auc_score(p["label"], p["score"]) for _, p in binary.group_by("repeat", "fold")]
    assert pooling["auc_mean"].item() == pytest.approx(np.mean(per_fold))
    assert pr.average_roc(binary).collect()["n_folds"].max() == 4
    per_repeat = pr.pooling_table(binary, by=("model", "repeat")).collect()
    assert per_repeat["n_folds"].to_list() == [2, 2]
    boot = pr.bootstrap(binary, n_boot=10).collect()
    assert boot.select("repeat", "fold").unique().height == 4


@pytest.mark.parametrize("mode", MODES)
def test_null_keys_are_groups_of_their_own(mode):
    log = pl.DataFrame(
        {
            "model": ["a", "a", None, None, "a", "a", "a"],
            "fold": [0, 0, 0, 0, None, None, None],
            "sample": [0, 1, 0, 1, 0, 1, 2],
            "score": [0.1, 0.9, 0.2, 0.8, 0.3, 0.7, 0.5],
            "label": [0, 1, 0, 1, 1, 0, 1],
        }
    )
    out = run_query(log, lambda f: pr.evaluate(f), mode)
    assert out.height == 3
    for (model, fold), part in log.group_by("model", "fold"):
        row = out.filter(pl.col("model").eq_missing(model) & pl.col("fold").eq_missing(fold))
        assert row["n"].item() == part.height
        assert row["auc"].item() == roc_auc_score(part["label"], part["score"])


CURVES = {
    "roc_curve": lambda log: pr.roc_curve(log),
    "pooled_roc": lambda log: pr.pooled_roc(log),
    "average_roc": lambda log: pr.average_roc(log),
    "pooling_table": lambda log: pr.pooling_table(log),
    "pr_curve": lambda log: pr.pr_curve(log),
    "pooled_pr_curve": lambda log: pr.pooled_pr_curve(log),
    "youden_point": lambda log: pr.youden_point(log),
}


@pytest.mark.parametrize("name", sorted(CURVES))
def test_curves_refuse_repeated_keys_and_accept_the_repeat_column(name, run):
    # two repeats of one 2-fold cross-validation logged without the repeat column: every
    # (model, fold, sample) key holds two rows, which a curve must not pool silently
    rows = [
        {
            "model": "m",
            "repeat": r,
            "fold": s % 2,
            "sample": s,
            "score": (7 * s + 3 * r) % 11 / 10,
            "label": s % 3 == 0,
        }
        for r in range(2)
        for s in range(12)
    ]
    log = pl.DataFrame(rows)
    with pytest.raises(ValueError, match=r"key holds more than one row.*repeat"):
        run(log.drop("repeat"), CURVES[name])
    assert run(log, CURVES[name]).height > 0
