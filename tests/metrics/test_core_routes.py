"""The routes moved onto the counting core give the numbers of the code they replace.

Issue 21: DeLong's placement values (``compare/delong.py``), the average precision of
the expression path (``metrics/precision_recall.py``) and the big-group bucket sums
(``scale/_big_groups.py``) now read ``polaroc.core.legacy_counts``. Each old function is kept
here, frozen as it stood before the change, as the reference: on random logs (binary,
multiclass, weighted, ties, NaN, −0.0, repeats) the new route must equal it to 1e-12.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polaroc as pr
from polaroc.core import legacy_counts as _counts
from polaroc.core.blocks import CLASS, LABEL, USABLE
from polaroc.core.inputs import LogColumns, binary_expr
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
    new = _counts.placements(rows.lazy(), by, name="va")
    new = _counts.placements(new, by, score=f"{SCORE}_b", name="vb").collect().sort("row")
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


# ------------------------------------ frozen: precision_recall._average_precision_of_sorted


def _old_average_precision_of_sorted(weighted: bool) -> pl.Expr:
    e = pl.element().struct.field
    x, y = e("threshold").set_sorted(), e("positive")
    start = x.rank("min").cast(pl.Int64) - 1
    if weighted:
        w = e("weight")
        pos = pl.when(y).then(w).otherwise(0.0)
        rows_above = w.cum_sum(reverse=True).gather(start)
        n_neg = pl.when(y).then(0.0).otherwise(w).sum()
    else:
        pos = y.cast(pl.Int64)
        rows_above = pl.len().cast(pl.Int64) - start
        n_neg = (~y).sum()
    precision = pos.cum_sum(reverse=True).gather(start) / rows_above
    n_pos = pos.sum()
    both = (n_pos > 0) & (n_neg > 0)
    return pl.when(both).then((pos * precision).sum() / n_pos.cast(pl.Float64))


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 60),
    seed=st.integers(0, 10_000),
    tied=st.booleans(),
    weighted=st.booleans(),
    nan=st.booleans(),
)
def test_average_precision_equals_the_old_expression(
    n: int, seed: int, tied: bool, weighted: bool, nan: bool
) -> None:
    rng = np.random.default_rng(seed)
    score = np.round(rng.random(n), 1) if tied else rng.random(n)
    if nan:
        score[rng.integers(0, n)] = np.nan
    log = pl.DataFrame(
        {
            "g": rng.integers(0, 3, n),
            "score": score,
            "label": rng.random(n) < 0.4,
            "w": rng.random(n) * 3 if weighted else np.ones(n),
        }
    )

    def old_build(s: pl.Expr, p: pl.Expr, w: pl.Expr | None = None) -> pl.Expr:
        reduction = _old_average_precision_of_sorted(weighted=w is not None)
        return _counts.sorted_rows(s, p, w).list.eval(reduction).list.first()

    weight = "w" if weighted else None
    old_expr = binary_expr("score", "label", old_build, name="ap", weight=weight, two_classes=True)
    old = log.group_by("g").agg(old_expr).sort("g")
    new = (
        log.group_by("g")
        .agg(pr.average_precision("score", "label", weight=weight).alias("ap"))
        .sort("g")
    )
    _close(new["ap"], old["ap"])


# ---------------------------------------------------- frozen: _big_groups.bucket_sums


def _old_bucket_sums(counts: pl.DataFrame, offset: pl.DataFrame) -> pl.DataFrame:
    blk = [*bg.BLOCK, bg.BUCKET]
    positive = pl.col(LABEL) == pl.col(CLASS)
    w, score = pl.col(bg.W), pl.col(SCORE)
    rows = counts.lazy().filter(USABLE).with_columns(score.rank("dense").over(blk).alias("_k"))
    per_score = (
        rows.group_by(*blk, "_k")
        .agg(
            w.filter(positive).sum().alias("_p"),
            w.filter(~positive).sum().alias("_m"),
            (score * w).filter(positive).sum().alias("_s"),
        )
        .join(offset.lazy(), on=blk, how="left")
        .sort(*blk, "_k")
    )
    p, m, s = pl.col("_p"), pl.col("_m"), pl.col("_s")
    runs = per_score.select(
        *blk,
        "_k",
        (2 * (pl.col("_p_below") + (p.cum_sum() - p).over(blk)) + p).alias("_t"),
        (2 * (pl.col("_m_below") + (m.cum_sum() - m).over(blk)) + m).alias("_q"),
        (pl.col("_p_above") + (p.cum_sum(reverse=True) - p).over(blk)).alias("_pa"),
        (pl.col("_m_above") + (m.cum_sum(reverse=True) - m).over(blk)).alias("_ma"),
        p.alias("_pk"),
        m.alias("_mk"),
        (pl.col("_s_above") + s.cum_sum(reverse=True).shift(-1, fill_value=0.0).over(blk)).alias(
            "_sa"
        ),
    )
    t, q, pa = pl.col("_t"), pl.col("_q"), pl.col("_pa")
    at_or_above = pa + pl.col("_pk")
    precision = at_or_above / (at_or_above + pl.col("_ma") + pl.col("_mk"))
    terms = rows.join(runs, on=[*blk, "_k"], how="left").select(
        *bg.BLOCK,
        LABEL,
        w,
        score.is_nan().alias("_pr_nan"),
        pl.when(~positive).then(w * t).alias("t"),
        pl.when(~positive).then(w * t.cast(pl.Float64) ** 2).alias("tt"),
        pl.when(positive).then(w * q).alias("q"),
        pl.when(positive).then(w * q.cast(pl.Float64) ** 2).alias("qq"),
        pl.when(~positive).then(pl.col("_sa") * w).alias("rs_pos"),
        pl.when(~positive & (pa > 0)).then(score * (pa * w)).alias("rs_neg"),
        pl.when(positive).then(precision * w).alias("ap"),
    )
    return (
        terms.group_by(*bg.BLOCK, LABEL)
        .agg(
            pl.col("_pr_nan").any(),
            w.sum().alias("n"),
            pl.col("t", "q").sum().cast(pl.Int64),
            pl.col("tt", "qq", "rs_pos", "rs_neg", "ap").sum(),
        )
        .collect()
    )


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
def test_bucket_sums_equal_the_old_ones(seed: int, n_classes: int, nan: bool, inf: bool) -> None:
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
    new = bg.bucket_sums(in_range, offset).sort(order)
    old = _old_bucket_sums(in_range, offset).sort(order)
    assert new.columns == old.columns
    assert new.select(*order, "_pr_nan", "n", "t", "q").equals(
        old.select(*order, "_pr_nan", "n", "t", "q")
    )
    for name in ("tt", "qq", "rs_pos", "rs_neg", "ap"):
        _close(new[name], old[name])


# ------------------ frozen: the curve explode helpers (_curves, thresholds, precision_recall)


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


# ------------------------------------------------- frozen: binary._delong_variance


def _old_delong_variance() -> pl.Expr:
    n_pos = _counts.N_POS.cast(pl.Float64)
    n_neg = _counts.N_NEG.cast(pl.Float64)
    v10 = (_counts.NEG_BELOW + 0.5 * _counts.NEG) / n_neg
    v01 = (_counts.POS_ABOVE + 0.5 * _counts.POS) / n_pos
    s10 = (_counts.POS * (v10 - _counts.AUC) ** 2).sum() / (n_pos - 1.0)
    s01 = (_counts.NEG * (v01 - _counts.AUC) ** 2).sum() / (n_neg - 1.0)
    return pl.when((_counts.N_POS > 1) & (_counts.N_NEG > 1)).then(s10 / n_pos + s01 / n_neg)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 60), seed=st.integers(0, 10_000), tied=st.booleans(), nan=st.booleans())
def test_auc_se_equals_the_old_delong_variance(n: int, seed: int, tied: bool, nan: bool) -> None:
    rng = np.random.default_rng(seed)
    score = np.round(rng.random(n), 1) if tied else rng.random(n)
    if nan:
        score[rng.integers(0, n)] = np.nan
    log = pl.DataFrame({"g": rng.integers(0, 3, n), "score": score, "label": rng.random(n) < 0.5})

    def old_build(s: pl.Expr, p: pl.Expr) -> pl.Expr:
        return _counts.reduce_counts(s, p, _old_delong_variance()).sqrt()

    old_expr = binary_expr("score", "label", old_build, name="se", two_classes=True)
    old = log.group_by("g").agg(old_expr).sort("g")
    new = log.group_by("g").agg(pr.auc_se("score", "label").alias("se")).sort("g")
    _close(new["se"], old["se"])
