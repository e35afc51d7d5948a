"""stratified_folds: stratified partitions, one split or one per repeat, checked by counting."""

from __future__ import annotations

from collections import Counter

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polaroc as pr


def repeated(df: pl.DataFrame | pl.LazyFrame, repeats: int):
    """``repeats`` copies of the rows, with a ``repeat`` id 0 … repeats−1 (a cross join)."""
    ids = pl.DataFrame({"repeat": list(range(repeats))})
    return df.join(ids.lazy() if isinstance(df, pl.LazyFrame) else ids, how="cross")


def assert_stratified(labels: list, folds: list[int], k: int) -> None:
    """Every label's rows spread over the k folds within one of their exact share."""
    assert len(labels) == len(folds)
    assert all(0 <= f < k for f in folds)
    for label, n in Counter(labels).items():
        per_fold = Counter(f for lab, f in zip(labels, folds, strict=True) if lab == label)
        assert {per_fold.get(f, 0) for f in range(k)} <= {n // k, -(-n // k)}
    sizes = Counter(folds)
    assert max(sizes.get(f, 0) for f in range(k)) - min(sizes.get(f, 0) for f in range(k)) <= 1


# ------------------------------------------------------------------ one split


@given(
    st.lists(st.sampled_from(["x", "y", "z", None]), min_size=1, max_size=120),
    st.integers(2, 8),
    st.integers(0, 2**31),
)
@settings(max_examples=50)
def test_stratified_folds_keep_each_label_share_within_one(labels, k, seed):
    df = pl.DataFrame({"label": labels}, schema={"label": pl.String})
    out = df.with_columns(pr.stratified_folds("label", k=k, seed=seed))
    assert out.height == df.height
    assert out["label"].equals(df["label"])
    assert out["fold"].dtype == pl.Int64
    assert out["fold"].null_count() == 0
    assert_stratified(labels, out["fold"].to_list(), k)


def test_stratified_folds_are_reproducible_in_every_engine(run):
    df = pl.DataFrame({"label": np.random.default_rng(5).integers(0, 3, size=500)})
    query = lambda f: f.with_columns(pr.stratified_folds("label", k=10, seed=42))
    first = run(df, query)
    assert first.equals(df.with_columns(pr.stratified_folds("label", k=10, seed=42)))
    assert first.equals(run(df, query))
    other = df.with_columns(pr.stratified_folds("label", k=10, seed=43))
    assert not first["fold"].equals(other["fold"])
    # The order within a label is shuffled, not the row order.
    in_order = df.with_columns(fold=(pl.int_range(pl.len()).over("label") % 10))
    assert not first["fold"].equals(in_order["fold"])


def test_stratified_folds_within_groups():
    df = pl.DataFrame({"dataset": ["d1"] * 30 + ["d2"] * 10, "label": [0, 1, 1] * 10 + [0, 1] * 5})
    out = df.with_columns(pr.stratified_folds("label", k=5).over("dataset"))
    counts = out.group_by("dataset", "fold", "label").len()
    d1 = counts.filter(pl.col("dataset") == "d1").sort("fold", "label")
    assert d1["len"].to_list() == [2, 4] * 5
    d2 = counts.filter(pl.col("dataset") == "d2")
    assert d2.height == 10
    assert (d2["len"] == 1).all()


@pytest.mark.parametrize("k", [1, 0, 2.5, True])
def test_stratified_folds_need_two_folds(k):
    with pytest.raises(ValueError, match="at least 2"):
        pr.stratified_folds("label", k=k)


# ------------------------------------------------------------------ repeated designs


@given(
    st.lists(st.sampled_from(["x", "y", "z", None]), min_size=1, max_size=80),
    st.integers(2, 6),
    st.integers(1, 5),
    st.integers(0, 2**31),
)
@settings(max_examples=40)
def test_each_repeat_is_a_stratified_partition(labels, k, repeats, seed):
    df = pl.DataFrame({"label": labels}, schema={"label": pl.String}).with_row_index("sample")
    out = repeated(df, repeats).with_columns(
        pr.stratified_folds("label", k=k, seed=seed, repeat="repeat")
    )
    assert out["fold"].dtype == pl.Int64
    assert out["fold"].null_count() == 0
    for r in range(repeats):
        part = out.filter(pl.col("repeat") == r).sort("sample")
        # every sample once per repeat: a partition of the rows, fold ids from 0
        assert part["sample"].to_list() == list(range(len(labels)))
        assert_stratified(part["label"].to_list(), part["fold"].to_list(), k)


def test_repeats_are_different_splits_and_reproducible(run):
    labels = np.random.default_rng(1).integers(0, 2, size=200)
    df = pl.DataFrame({"label": labels}).with_row_index("sample")
    query = lambda f: repeated(f, 10).with_columns(
        pr.stratified_folds("label", k=10, seed=3, repeat="repeat")
    )
    out = run(df, query).sort("repeat", "sample")
    assert out.equals(query(df).sort("repeat", "sample"))  # same seed, same design
    splits = [tuple(out.filter(pl.col("repeat") == r)["fold"].to_list()) for r in range(10)]
    assert len(set(splits)) == 10
    # repeats are not relabellings of one another: the pairs put together differ
    together = lambda s: {(i, j) for i in range(200) for j in range(i) if s[i] == s[j]}
    assert together(splits[0]) != together(splits[1])
    reseeded = repeated(df, 10).with_columns(
        pr.stratified_folds("label", k=10, seed=4, repeat="repeat")
    )
    assert not reseeded.sort("repeat", "sample")["fold"].equals(out["fold"])


def test_one_repeat_gives_the_plain_split():
    df = pl.DataFrame({"label": np.random.default_rng(2).integers(0, 3, size=97)})
    plain = df.with_columns(pr.stratified_folds("label", k=4, seed=9))
    single = df.with_columns(repeat=pl.lit("only")).with_columns(
        pr.stratified_folds("label", k=4, seed=9, repeat="repeat")
    )
    assert single["fold"].equals(plain["fold"])


def test_five_by_two_design():
    # Dietterich (1998): five repeats of a stratified two-fold split, halves of 50 and 50
    df = pl.DataFrame({"label": [0] * 60 + [1] * 40}).with_row_index("sample")
    out = repeated(df, 5).with_columns(pr.stratified_folds("label", k=2, seed=0, repeat="repeat"))
    counts = out.group_by("repeat", "fold", "label").len().sort("repeat", "fold", "label")
    assert counts.height == 5 * 2 * 2
    assert counts["len"].to_list() == [30, 20] * 10


def test_repeats_within_groups_and_null_repeat():
    df = pl.DataFrame({"dataset": ["a"] * 40 + ["b"] * 20, "label": [0, 1] * 20 + [0, 0, 1, 1] * 5})
    out = repeated(df, 3).with_columns(
        pr.stratified_folds("label", k=4, seed=1, repeat="repeat").over("dataset")
    )
    groups = out.partition_by("dataset", "repeat")
    assert len(groups) == 2 * 3
    for part in groups:
        assert_stratified(part["label"].to_list(), part["fold"].to_list(), 4)
    # a null repeat id is one more repeat, split on its own
    nulls = pl.concat(
        [repeated(df.head(40), 2), df.head(40).with_columns(repeat=pl.lit(None, pl.Int64))]
    ).with_columns(pr.stratified_folds("label", k=4, seed=1, repeat="repeat"))
    assert nulls["fold"].null_count() == 0
    part = nulls.filter(pl.col("repeat").is_null())
    assert_stratified(part["label"].to_list(), part["fold"].to_list(), 4)


def test_repeat_must_be_a_column():
    with pytest.raises(TypeError, match="`repeat` must be a column name"):
        pr.stratified_folds("label", repeat=3)  # type: ignore[arg-type]
