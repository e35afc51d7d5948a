"""Routes onto the counting core, checked against independent references.

DeLong's placement values (``compare/delong.py``, from the table evaluator through
``counts.placed``) against the mid-rank windows of the code they replaced (Sun & Xu
2014's form, frozen here) and ``delong_test`` against figures computed from them; the
big groups' bucket sums (the table evaluator's buckets option) against the same blocks
counted in one bucket; the curve tables of one group against the same group keyed. On
random logs (binary, multiclass, weighted, ties, NaN, −0.0, repeats), to 1e-12.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polaroc as pr
from polaroc.compare.delong import placements
from polaroc.core.blocks import LABEL, USABLE
from polaroc.core.inputs import LogColumns
from polaroc.core.names import POSITIVE, SCORE
from polaroc.scale import _big_groups as bg

TOL = 1e-12
NAN = float("nan")


def _close(got: pl.Series, want: pl.Series) -> None:
    assert got.is_null().equals(want.is_null())
    a, b = got.cast(pl.Float64), want.cast(pl.Float64)
    assert a.is_nan().fill_null(False).equals(b.is_nan().fill_null(False))
    infinite = a.is_infinite().fill_null(False)
    assert a.filter(infinite).equals(b.filter(infinite))
    finite = a.is_finite().fill_null(False)
    diff = (a.filter(finite) - b.filter(finite)).abs()
    scale = b.filter(finite).abs().clip(lower_bound=1.0)
    assert (diff <= TOL * scale).all(), (diff / scale).max()


# ------------------------------------------------ frozen: compare/delong._placements


def _old_placements(score: str, positive: pl.Expr, by: list[str]) -> pl.Expr:
    s = pl.col(score)
    among_all = s.rank("average").over(by) if by else s.rank("average")
    among_own = s.rank("average").over([*by, POSITIVE])
    n_pos = (positive.sum().over(by) if by else positive.sum()).cast(pl.Float64)
    n_neg = ((~positive).sum().over(by) if by else (~positive).sum()).cast(pl.Float64)
    below = among_all - among_own
    return pl.when(positive).then(below / n_neg).otherwise(1.0 - below / n_pos)


@st.composite
def _paired_rows(draw: st.DrawFn) -> pl.DataFrame:
    n = draw(st.integers(2, 80))
    tied = draw(st.booleans())
    values = st.sampled_from([-0.0, 0.0, 0.25, 0.5, 1.0]) if tied else st.floats(-2, 2, width=32)
    a = draw(st.lists(values, min_size=n, max_size=n))
    b = draw(st.lists(values, min_size=n, max_size=n))
    if draw(st.booleans()):
        a[draw(st.integers(0, n - 1))] = float("nan")
    return pl.DataFrame(
        {
            "repeat": draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)),
            "fold": draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)),
            SCORE: a,
            f"{SCORE}_b": b,
            POSITIVE: draw(st.lists(st.booleans(), min_size=n, max_size=n)),
        },
        schema_overrides={SCORE: pl.Float64, f"{SCORE}_b": pl.Float64},
    ).with_row_index("row")


@settings(max_examples=60, deadline=None)
@given(rows=_paired_rows(), by=st.sampled_from([[], ["fold"], ["repeat", "fold"]]))
def test_placements_equal_the_old_mid_rank_windows(rows: pl.DataFrame, by: list[str]) -> None:
    positive = pl.col(POSITIVE)
    old = rows.with_columns(
        va=_old_placements(SCORE, positive, by), vb=_old_placements(f"{SCORE}_b", positive, by)
    ).sort("row")
    new = placements(rows.lazy(), by, name="va")
    new = placements(new, by, score=f"{SCORE}_b", name="vb").collect().sort("row")
    assert new.columns[: rows.width] == rows.columns
    for v in ("va", "vb"):
        _close(new[v], old[v])


def test_delong_test_equals_its_frozen_figures() -> None:
    """delong_test on a tied 2-model log: AUCs, variance and covariance of the old placements."""
    rng = np.random.default_rng(7)
    n = 300
    label = rng.integers(0, 2, n).astype(bool)
    log = pl.DataFrame(
        {
            "model": ["a"] * n + ["b"] * n,
            "fold": np.tile(np.arange(n) % 3, 2),
            "sample": np.tile(np.arange(n), 2),
            "score": np.concatenate(
                [np.round(rng.random(n) + 0.3 * label, 1), np.round(rng.random(n) + 0.2 * label, 1)]
            ),
            "label": np.concatenate([label, label]),
        }
    )
    out = pr.delong_test(log, "a", "b", by="fold").collect()
    # reference: the old _placements, the same moments
    paired = (
        log.pivot("model", index=["fold", "sample", "label"], values="score")
        .rename({"a": SCORE, "b": f"{SCORE}_b", "label": POSITIVE})
        .with_columns(
            va=_old_placements(SCORE, pl.col(POSITIVE), ["fold"]),
            vb=_old_placements(f"{SCORE}_b", pl.col(POSITIVE), ["fold"]),
        )
    )
    pos = pl.col(POSITIVE)
    va, vb = pl.col("va"), pl.col("vb")
    want = (
        paired.group_by("fold")
        .agg(
            auc_a=va.filter(pos).mean(),
            auc_b=vb.filter(pos).mean(),
            var_a=va.filter(pos).var() / pos.sum() + va.filter(~pos).var() / (~pos).sum(),
            cov=pl.cov(va.filter(pos), vb.filter(pos)) / pos.sum()
            + pl.cov(va.filter(~pos), vb.filter(~pos)) / (~pos).sum(),
        )
        .sort("fold")
    )
    for name in ("auc_a", "auc_b", "var_a", "cov"):
        _close(out[name], want[name])


# ----------------------------------------- the buckets option: ranges add up to the block


def _big_log(seed: int, n: int, n_classes: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    rows = {
        "model": rng.choice(["a", "b"], n),
        "fold": rng.integers(0, 2, n),
        "score": np.round(rng.normal(size=n), 1),
        "label": rng.integers(0, n_classes, n),
    }
    log = pl.DataFrame(rows)
    score = pl.col("score")
    log = log.with_columns(
        pl.when(pl.int_range(pl.len()) % 17 == 0).then(-0.0).otherwise(score).alias("score")
    )
    if n_classes == 2:
        return log.with_columns(pl.col("label") == 1)
    cls = pl.DataFrame({"class": list(range(n_classes))})
    return log.join(cls, how="cross").with_columns(score=score + pl.col("class") * 0.1)


@pytest.mark.parametrize(
    ("seed", "n_classes", "nan", "inf"),
    [(0, 2, False, False), (1, 2, True, True), (2, 3, False, True), (3, 4, True, False)],
)
def test_bucket_sums_add_up_to_the_blocks_sums(
    seed: int, n_classes: int, nan: bool, inf: bool
) -> None:
    log = _big_log(seed, 3000, n_classes)
    if nan:
        log = log.with_columns(
            pl.when(pl.int_range(pl.len()) == 5)
            .then(float("nan"))
            .otherwise("score")
            .alias("score")
        )
    if inf:
        log = log.with_columns(
            pl.when(pl.int_range(pl.len()) % 101 == 3)
            .then(float("inf"))
            .otherwise("score")
            .alias("score")
        )
    keys = ["model", "fold"]
    big = log.select(keys).unique().sort(keys).with_row_index(bg.GID).cast({bg.GID: pl.Int64})
    counts = bg.row_counts(log, big, keys, LogColumns(), 0.5)
    breaks = pl.Series([-1.0, -0.05, 0.0, 0.7])
    bucketed = bg.with_bucket(counts, breaks)
    totals = bg.bucket_totals(bucketed)
    offset = bg.offsets(totals)
    in_range = bucketed.filter(USABLE)
    order = [*bg.BLOCK, LABEL]
    summed = (
        bg.bucket_sums(in_range, offset)
        .group_by(order)
        .agg(pl.col("_pr_nan").any(), pl.col(*bg.SUM_COLUMNS).sum())
    )
    # the same blocks in one bucket each: no offsets to add
    whole = bg.with_bucket(counts, pl.Series([], dtype=pl.Float64))
    one = bg.bucket_sums(whole.filter(USABLE), bg.offsets(bg.bucket_totals(whole)))
    new, old = summed.sort(order), one.select(summed.columns).sort(order)
    assert new.select(*order, "_pr_nan", "n", "t", "q").equals(
        old.select(*order, "_pr_nan", "n", "t", "q")
    )
    for name in ("tt", "qq", "gap", "ap"):
        _close(new[name], old[name])


# ---------------------------------------------------------------- one-group curve tables


def _curve_log(seed: int, classes: bool) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    n = 400
    log = pl.DataFrame(
        {
            "model": rng.choice(["a", "b"], n),
            "repeat": rng.integers(0, 2, n),
            "fold": rng.integers(0, 3, n),
            "score": np.round(rng.random(n), 1),
            "label": rng.random(n) < 0.4,
            "w": rng.random(n) * 2,
        }
    )
    first_row = pl.int_range(pl.len()) == 0  # one NaN among numbers
    log = log.with_columns(score=pl.when(first_row).then(pl.lit(NAN)).otherwise("score"))
    log = log.with_columns(
        score=pl.when((pl.col("model") == "a") & (pl.col("fold") == 1) & (pl.col("repeat") == 0))
        .then(pl.lit(NAN))
        .otherwise("score")
    )
    one_class = (pl.col("model") == "b") & (pl.col("fold") == 2) & (pl.col("repeat") == 1)
    log = log.with_columns(label=pl.when(one_class).then(True).otherwise("label"))
    if classes:
        log = log.with_columns(pl.col("label").cast(pl.Int64), pl.lit(1).alias("class"))
    return log


@pytest.mark.parametrize("table", [pr.threshold_table, pr.det_curve, pr.gain_curve, pr.roc_curve])
def test_one_group_tables_by_empty(table: object) -> None:
    """``by=()`` is one curve: the table of a one-group log without its key (failed before)."""
    log = _curve_log(6, classes=False).filter(pl.col("score").is_not_nan())
    whole = table(log, by=()).collect()  # type: ignore[operator]
    keyed = table(log.with_columns(g=0), by="g").collect().drop("g")  # type: ignore[operator]
    assert_frame_equal(whole, keyed)
