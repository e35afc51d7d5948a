"""Hand & Till's M, the pairwise table, C1/C2 and one-vs-rest AUCs against independent oracles."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm
from sklearn.metrics import accuracy_score, roc_auc_score

import polaroc as pr
from tests.conftest import run_query
from tests.oracles import hand_till_m, hand_till_pairs, proportions_correct

BY = ["model", "fold"]


def wide_scores(rng, n: int, c: int, *, shift: float = 1.0, probabilities: bool = True):
    """Labels 0..c-1 (every class present) and an n × c score matrix."""
    y = np.r_[np.arange(c), rng.integers(0, c, n - c)]
    x = rng.normal(size=(n, c)) + rng.uniform(0, 2, c)
    x[np.arange(n), y] += shift * rng.uniform(0.3, 1.5)
    if probabilities:
        x = np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)
    return y, x


def long_log(parts: dict, names=None) -> pl.DataFrame:
    """{(model, fold): (y, scores)} → the long log (one row per sample and class)."""
    frames = []
    for (model, fold), (y, x) in parts.items():
        n, c = x.shape
        classes = np.arange(c) if names is None else np.asarray(names)
        frames.append(
            pl.DataFrame(
                {
                    "model": model,
                    "fold": fold,
                    "sample": np.repeat(np.arange(n), c),
                    "class": np.tile(classes, n),
                    "score": x.ravel(),
                    "label": np.repeat(y if names is None else classes[y], c),
                }
            )
        )
    return pl.concat(frames)


def multiclass_log(rng, c: int, *, n: int = 120, groups: int = 3, **kw):
    parts = {(f"m{g % 2}", g): wide_scores(rng, n, c, **kw) for g in range(groups)}
    return long_log(parts), parts


def per_group(df: pl.DataFrame, fn) -> dict:
    return {
        key: fn(part["class"].to_numpy(), part["label"].to_numpy(), part["score"].to_numpy())
        for key, part in df.partition_by(BY, as_dict=True).items()
    }


def column(out: pl.DataFrame, name: str) -> dict:
    return {(m, f): v for m, f, v in out.select(*BY, name).iter_rows()}


# ------------------------------------------------------------------ oracles


@pytest.mark.parametrize("c", [3, 4, 10])
def test_m_equals_sklearn_ovo_on_probabilities(run, rng, c):
    df, parts = multiclass_log(rng, c, n=40 * c)
    out = run(df, lambda f: pr.multiclass_auc(f))
    got = column(out, "auc")
    for key, (y, x) in parts.items():
        expected = roc_auc_score(y, x, multi_class="ovo", average="macro")
        assert got[key] == pytest.approx(expected, abs=1e-12)
    assert set(column(out, "n_classes").values()) == {c}


@pytest.mark.parametrize("average", ["macro", "weighted"])
def test_one_vs_rest_equals_sklearn_ovr(run, rng, average):
    df, parts = multiclass_log(rng, 4)
    got = column(run(df, lambda f: pr.multiclass_auc(f)), f"auc_ovr_{average}")
    for key, (y, x) in parts.items():
        expected = roc_auc_score(y, x, multi_class="ovr", average=average)
        assert got[key] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("ties", [False, True])
def test_m_and_pairs_equal_pair_counts_on_raw_scores(run, rng, ties):
    df, _ = multiclass_log(rng, 5, probabilities=False)
    if ties:
        df = df.with_columns(pl.col("score").round(0))
    out = run(df, lambda f: pr.multiclass_auc(f))
    table = run(df, lambda f: pr.pairwise_auc(f))
    for key, m in per_group(df, hand_till_m).items():
        assert column(out, "auc")[key] == pytest.approx(m, abs=1e-12)
    for key, pairs in per_group(df, hand_till_pairs).items():
        part = table.filter(model=key[0], fold=key[1])
        assert part.height == len(pairs)
        for row in part.iter_rows(named=True):
            expected = pairs[(row["class_i"], row["class_j"])]
            for name, value in expected.items():
                assert row[name] == pytest.approx(value, abs=1e-12), name
    sauc = per_group(
        df, lambda c, y, s: np.mean([p["sauc"] for p in hand_till_pairs(c, y, s).values()])
    )
    for key, value in sauc.items():
        assert column(out, "sauc")[key] == pytest.approx(value, abs=1e-12)


def test_pairwise_counts_and_columns(rng):
    df, parts = multiclass_log(rng, 3, groups=1)
    table = pr.pairwise_auc(df).collect()
    assert table.columns == [
        *BY,
        *("class_i", "class_j", "a_i_j", "a_j_i", "a", "n_i", "n_j"),
        *("sauc_i_j", "sauc_j_i", "sauc"),
    ]
    y = next(iter(parts.values()))[0]
    for row in table.iter_rows(named=True):
        assert row["class_i"] < row["class_j"]
        assert row["n_i"] == (y == row["class_i"]).sum()
        assert row["n_j"] == (y == row["class_j"]).sum()
    assert table.schema["n_i"] == pl.Int64


@pytest.mark.parametrize("mu", [0.25, 1.0, 2.0])
def test_hand_till_eq8_normal_scores(mu):
    # Two classes scored N(0, 1) and N(mu, 1): M = AUC = Phi(mu / sqrt 2) (eq. 8). The
    # tolerance is 4 standard errors of the AUC at that value for n = 20,000 per class,
    # from Hanley & McNeil's formula (Bradley 1997, eq. 10-12): 0.0015-0.0029 here.
    rng = np.random.default_rng(8)
    n = 20_000
    score = np.r_[rng.normal(0, 1, n), rng.normal(mu, 1, n)]
    label = np.r_[np.zeros(n, int), np.ones(n, int)]
    df = pl.DataFrame({"model": "m", "fold": 0, "class": 1, "score": score, "label": label})
    m = pr.multiclass_auc(df).collect()["auc"].item()
    theta = norm.cdf(mu / math.sqrt(2))
    q1, q2 = theta / (2 - theta), 2 * theta**2 / (1 + theta)
    se = math.sqrt((theta * (1 - theta) + (n - 1) * (q1 + q2 - 2 * theta**2)) / n**2)
    assert se < 0.003
    assert abs(m - theta) < 4 * se


# --------------------------------------------------------------- invariances


@st.composite
def small_logs(draw):
    c = draw(st.integers(2, 4))
    n = draw(st.integers(c, 12))
    labels = [draw(st.integers(0, c - 1)) for _ in range(n)]
    scores = [draw(st.integers(-5, 5)) for _ in range(n * c)]
    return pl.DataFrame(
        {
            "model": "m",
            "fold": 0,
            "sample": np.repeat(np.arange(n), c),
            "class": np.tile(np.arange(c), n),
            "label": np.repeat(labels, c),
            "score": np.asarray(scores, dtype=float),
        }
    )


def m_of(df: pl.DataFrame) -> float | None:
    return pr.multiclass_auc(df).collect()["auc"].item()


@settings(max_examples=40)
@given(small_logs())
def test_m_invariant_under_increasing_transform(df):
    transformed = df.with_columns(pl.col("score") ** 3 + 2 * pl.col("score") + 10)
    got = m_of(df)
    if got is None:  # one class only
        assert df["label"].n_unique() == 1
        assert m_of(transformed) is None
    else:
        assert got == pytest.approx(hand_till_m(df["class"], df["label"], df["score"]), abs=1e-12)
        assert m_of(transformed) == pytest.approx(got, abs=1e-12)


@settings(max_examples=40)
@given(small_logs(), st.randoms(use_true_random=False))
def test_m_symmetric_under_relabelling(df, random):
    c = df["class"].max() + 1
    perm = list(range(c))
    random.shuffle(perm)
    mapping = {i: f"k{p}" for i, p in enumerate(perm)}
    relabelled = df.with_columns(pl.col("class", "label").replace_strict(mapping))
    got = m_of(df)
    assert m_of(relabelled) == (None if got is None else pytest.approx(got, abs=1e-12))


# ------------------------------------------------------------- binary logs


def test_two_classes_equal_binary_auc_in_every_layout(run, rng):
    n = 300
    y = rng.random(n) < 0.4
    p1 = 1 / (1 + np.exp(-(rng.normal(size=n) + y)))
    expected = roc_auc_score(y, p1)
    no_class = pl.DataFrame({"model": "m", "fold": 0, "score": p1, "label": y})
    positive_only = no_class.with_columns(pl.lit(True).alias("class"))
    both = pl.concat(
        [
            positive_only.with_columns(pl.lit(1).alias("class"), pl.col("label").cast(pl.Int64)),
            no_class.with_columns(
                pl.lit(0).alias("class"),
                (1 - pl.col("score")).alias("score"),
                pl.col("label").cast(pl.Int64),
            ),
        ],
        how="diagonal",
    )
    for log in (no_class, positive_only, both):
        out = run(log, lambda f: pr.multiclass_auc(f))
        assert out["auc"].item() == pytest.approx(expected, abs=1e-12)
        assert out["n_classes"].item() == 2
    sauc = no_class.select(pr.sauc("score", "label")).item()
    for log in (no_class, positive_only, both):
        assert run(log, lambda f: pr.multiclass_auc(f))["sauc"].item() == pytest.approx(sauc)
    table = run(no_class, lambda f: pr.pairwise_auc(f))
    assert table["class_i"].item() is False
    assert table["class_j"].item() is True
    assert table["a_i_j"].item() is None
    assert table["a_j_i"].item() == pytest.approx(expected, abs=1e-12)


# ----------------------------------------------------------- awkward input


def test_class_missing_from_a_fold_is_left_out(run, rng):
    df, _ = multiclass_log(rng, 4, groups=2)
    df = df.filter(~((pl.col("fold") == 1) & (pl.col("label") == 3)))
    out = run(df, lambda f: pr.multiclass_auc(f)).sort("fold")
    assert out["n_classes"].to_list() == [4, 3]
    for key, m in per_group(df, hand_till_m).items():
        assert column(out, "auc")[key] == pytest.approx(m, abs=1e-12)
    table = run(df, lambda f: pr.pairwise_auc(f)).filter(fold=1)
    assert table.height == 3  # pairs of {0, 1, 2}; class 3's scores are there but unused


def test_sample_missing_a_class_row(run, rng):
    df, _ = multiclass_log(rng, 3, groups=1, probabilities=False)
    df = df.filter(~((pl.col("sample") < 5) & (pl.col("class") == 1)))
    out = run(df, lambda f: pr.multiclass_auc(f))
    expected = hand_till_m(df["class"], df["label"], df["score"])
    assert out["auc"].item() == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("dtype", [pl.String, pl.Categorical, pl.Enum(["cat", "dog", "emu"])])
def test_string_and_categorical_labels(run, rng, dtype):
    parts = {("m", 0): wide_scores(rng, 90, 3)}
    ints = long_log(parts)
    names = long_log(parts, names=["cat", "dog", "emu"])
    typed = names.with_columns(pl.col("class", "label").cast(dtype))
    expected = run(ints, lambda f: pr.multiclass_auc(f))
    got = run(typed, lambda f: pr.multiclass_auc(f))
    for name in ("auc", "sauc", "auc_ovr_macro", "n_classes"):
        assert got[name].item() == pytest.approx(expected[name].item(), abs=1e-12)
    table = run(typed, lambda f: pr.pairwise_auc(f)).sort("class_i", "class_j")
    assert table["class_i"].to_list() == ["cat", "cat", "dog"]


@pytest.mark.parametrize(
    "table",
    [pr.multiclass_auc, pr.pairwise_auc, pr.evaluate, pr.calibration, pr.proportion_correct],
)
def test_label_that_is_never_a_class_raises(mode, rng, table):
    # label "other" has samples but the model logs no "other" scores: scikit-learn raises
    # (roc_auc_score, log_loss), and so does every polaroc table (DESIGN.md, "The log")
    df, _ = multiclass_log(rng, 3, groups=1, probabilities=False)
    df = df.with_columns(pl.col("class", "label").cast(pl.String))
    other = df.filter(pl.col("sample") < 20).with_columns(pl.lit("other").alias("label"))
    df = pl.concat([df.filter(pl.col("sample") >= 20), other])
    with pytest.raises(ValueError, match="other"):
        run_query(df, table, mode)


def test_class_scored_but_never_a_label(run, rng):
    df, _ = multiclass_log(rng, 3, groups=1)
    extra = df.filter(pl.col("class") == 0).with_columns(pl.lit(9, pl.Int64).alias("class"))
    out = run(pl.concat([df, extra]), lambda f: pr.multiclass_auc(f))
    assert out["auc"].item() == pytest.approx(run(df, pr.multiclass_auc)["auc"].item())
    assert out["n_classes"].item() == 3


def test_nan_null_and_degenerate_groups(run, rng):
    df, _ = multiclass_log(rng, 3, groups=3)
    at = (pl.col("sample") == 3) & (pl.col("class") == 1)
    score = (
        pl.when(at & (pl.col("fold") == 0))
        .then(float("nan"))
        .when(at & (pl.col("fold") == 1))
        .then(None)
        .otherwise(pl.col("score"))
    )
    df = df.with_columns(score.alias("score"))
    one_class = df.filter(pl.col("fold") == 2).with_columns(
        pl.lit(0, pl.Int64).alias("label"), pl.lit(5, df.schema["fold"]).alias("fold")
    )
    df = pl.concat([df, one_class])
    out = run(df, lambda f: pr.multiclass_auc(f)).sort("fold")
    auc = dict(zip(out["fold"], out["auc"], strict=True))
    assert math.isnan(auc[0])
    dropped = df.filter((pl.col("fold") == 1) & pl.col("score").is_not_null())
    assert auc[1] == pytest.approx(
        hand_till_m(dropped["class"], dropped["label"], dropped["score"])
    )
    assert not math.isnan(auc[2])
    assert auc[5] is None
    assert out.filter(fold=5)["n_classes"].item() == 1


def test_inf_scores_rank_as_extremes(run, rng):
    df, _ = multiclass_log(rng, 3, groups=1, probabilities=False)
    df = df.with_columns(
        pl.when(pl.col("sample") == 0).then(float("inf")).otherwise(pl.col("score")).alias("score")
    )
    got = run(df, lambda f: pr.multiclass_auc(f))["auc"].item()
    assert got == pytest.approx(hand_till_m(df["class"], df["label"], df["score"]), abs=1e-12)


def test_class_and_label_that_cannot_be_compared():
    df = pl.DataFrame({"model": "m", "fold": 0, "class": [1], "label": ["a"], "score": [0.5]})
    with pytest.raises(TypeError, match="cannot be compared"):
        pr.multiclass_auc(df)
    with pytest.raises(ValueError, match="no column 'scores'"):
        pr.pairwise_auc(df, score="scores")


# -------------------------------------------------------- proportion correct


def test_c1_and_c2_against_oracles(run, rng):
    df, parts = multiclass_log(rng, 4)
    out = run(df, lambda f: pr.proportion_correct(f))
    for key, (y, x) in parts.items():
        assert column(out, "c1")[key] == pytest.approx(accuracy_score(y, x.argmax(axis=1)))
        assert column(out, "n")[key] == len(y)
    for key, part in df.partition_by(BY, as_dict=True).items():
        _, c2 = proportions_correct(part["sample"], part["class"], part["label"], part["score"])
        assert column(out, "c2")[key] == pytest.approx(c2, abs=1e-12)


def test_c1_and_c2_with_ties():
    # sample 0: own class ties another at the top (1/2 correct); sample 1: clear win;
    # sample 2: three-way tie (1/3); sample 3: another class wins alone (0)
    df = pl.DataFrame(
        {
            "model": "m",
            "fold": 0,
            "sample": np.repeat(np.arange(4), 3),
            "class": [0, 1, 2] * 4,
            "label": np.repeat([0, 2, 1, 1], 3),
            "score": [0.4, 0.4, 0.2, 0.1, 0.2, 0.7, 0.3, 0.3, 0.3, 0.5, 0.4, 0.1],
        }
    )
    out = pr.proportion_correct(df).collect()
    c1, c2 = proportions_correct(df["sample"], df["class"], df["label"], df["score"])
    assert c1 == pytest.approx((1 / 2 + 1 + 1 / 3 + 0) / 4)
    assert out["c1"].item() == pytest.approx(c1)
    assert out["c2"].item() == pytest.approx(c2)


def test_c1_counts_a_sample_without_its_own_class_row_as_wrong(run, rng):
    df, parts = multiclass_log(rng, 3, groups=1)
    y, x = next(iter(parts.values()))
    dropped = df.filter(~((pl.col("sample") < 10) & (pl.col("class") == pl.col("label"))))
    correct = x.argmax(axis=1) == y
    correct[:10] = False
    out = run(dropped, lambda f: pr.proportion_correct(f))
    assert out["c1"].item() == pytest.approx(correct.mean())
    assert out["n"].item() == len(y)


def test_proportion_correct_needs_sample_for_class_logs():
    df = pl.DataFrame({"model": "m", "fold": 0, "class": [0, 1], "label": [0, 0], "score": [1, 0]})
    with pytest.raises(ValueError, match="'sample' column"):
        pr.proportion_correct(df)
    binary = pl.DataFrame({"model": "m", "fold": 0, "label": [True, False], "score": [0.7, 0.6]})
    out = pr.proportion_correct(binary).collect()
    assert out["c1"].item() == 0.5
    assert out["c2"].item() is None


@st.composite
def ragged_logs(draw):
    """Small multiclass logs with ties and missing class rows."""
    c = draw(st.integers(2, 4))
    n = draw(st.integers(2, 10))
    rows = []
    for sample in range(n):
        label = draw(st.integers(0, c - 1))
        for k in range(c):
            if draw(st.integers(0, 4)) > 0:  # about one row in five is missing
                rows.append((sample, k, label, float(draw(st.integers(-2, 2)))))
    classes = {k for _, k, _, _ in rows}
    rows = [row for row in rows if row[2] in classes]  # every label has its class's scores
    if not rows:
        rows.append((0, 0, 0, 0.0))
    return pl.DataFrame(
        rows, schema=["sample", "class", "label", "score"], orient="row"
    ).with_columns(model=pl.lit("m"), fold=pl.lit(0))


@settings(max_examples=60)
@given(ragged_logs())
def test_pairwise_table_on_ragged_logs(df):
    table = pr.pairwise_auc(df).collect()
    expected = hand_till_pairs(df["class"], df["label"], df["score"])
    got = {(r["class_i"], r["class_j"]): r for r in table.iter_rows(named=True)}
    assert got.keys() == expected.keys()
    for key, values in expected.items():
        for name, value in values.items():
            if value is None:
                assert got[key][name] is None
            else:
                assert got[key][name] == pytest.approx(value, abs=1e-12), name
    m = pr.multiclass_auc(df).collect()
    if expected:
        assert m["auc"].item() == pytest.approx(hand_till_m(df["class"], df["label"], df["score"]))
    else:
        assert m["auc"].item() is None
    assert m["n_classes"].item() == df["label"].n_unique()
