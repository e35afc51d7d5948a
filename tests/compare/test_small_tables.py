"""The fixed cost of a small comparison table (issue 26): one design check, cheap scipy calls.

A ``DataFrame`` per-fold table is checked once, at call time, by one aggregation
(``balanced``) that falls back to the listings only when the design may be
unbalanced; a ``LazyFrame`` keeps the check in its plan. Both must give the same
tables and the same messages; the distribution helpers must keep null, NaN and
±inf as scipy does.
"""

from __future__ import annotations

import itertools

import baycomp
import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.exceptions import ComputeError
from polars.testing import assert_frame_equal
from scipy import stats

import polaroc as pr
from polaroc.compare._dist import f_sf, t_p_value, t_sf
from polaroc.compare.fold_table import balanced, design_problems, two_sided


def cv_table(
    rng: np.random.Generator,
    *,
    models: int = 4,
    repeats: int = 3,
    folds: int = 4,
    datasets: int = 1,
    special: float = 0.0,
    ties: bool = False,
    specials: tuple[float | None, ...] = (float("nan"), float("inf"), float("-inf"), None),
) -> pl.DataFrame:
    """(dataset, model, repeat, fold, auc); ``special``: share of ``specials`` values."""
    keys = itertools.product(range(datasets), range(models), range(repeats), range(folds))
    d, m, r, f = (np.array(k) for k in zip(*keys, strict=True))
    auc = 0.8 + 0.01 * m + rng.normal(0, 0.02, len(m))
    if ties:
        auc = np.round(auc, 2)
    values: list[float | None] = auc.tolist()
    for i in np.flatnonzero(rng.random(len(values)) < special):
        values[i] = specials[rng.integers(len(specials))]
    return pl.DataFrame(
        {
            "dataset": [f"d{x}" for x in d],
            "model": [f"m{x}" for x in m],
            "repeat": r,
            "fold": f,
            "auc": pl.Series(values, dtype=pl.Float64),
        }
    ).sample(fraction=1.0, shuffle=True, seed=int(rng.integers(1 << 30)))


def cv_tables(table: pl.DataFrame | pl.LazyFrame, **options: object) -> list[pl.LazyFrame]:
    adjust = options.get("adjust")
    alternative = options.get("alternative", "two-sided")
    return [
        pr.paired_ttest(table, adjust=adjust, alternative=alternative),
        pr.paired_ttest(table, correction=False, alternative=alternative),
        pr.bayes_ttest(table, rope=options.get("rope", 0.01)),
    ]


def five_tables(table: pl.DataFrame | pl.LazyFrame, **options: object) -> list[pl.LazyFrame]:
    adjust = options.get("adjust")
    alternative = options.get("alternative", "two-sided")
    return [
        pr.paired_ttest_5x2cv(table, adjust=adjust, alternative=alternative),
        pr.combined_ftest_5x2cv(table, adjust=adjust),
    ]


# ------------------------------------------------ the DataFrame path equals the lazy one


@settings(max_examples=30)
@given(
    seed=st.integers(0, 2**31),
    datasets=st.integers(1, 2),
    special=st.sampled_from([0.0, 0.05, 0.2]),
    ties=st.booleans(),
    adjust=st.sampled_from([None, "holm", "hommel", "fdr_by"]),
    alternative=st.sampled_from(["two-sided", "greater", "less"]),
)
def test_a_dataframe_gives_the_lazy_plans_table(seed, datasets, special, ties, adjust, alternative):
    rng = np.random.default_rng(seed)
    options = {"adjust": adjust, "alternative": alternative}
    cv = cv_table(rng, datasets=datasets, special=special, ties=ties)
    five = cv_table(rng, repeats=5, folds=2, datasets=datasets, special=special, ties=ties)
    eager = cv_tables(cv, **options) + five_tables(five, **options)
    lazy = cv_tables(cv.lazy(), **options) + five_tables(five.lazy(), **options)
    # Equal up to the order of a group's rows in its sums (as between two engines).
    expected = pl.collect_all(eager)
    for engine in ("in-memory", "streaming"):
        for got, table in zip(pl.collect_all(lazy, engine=engine), expected, strict=True):
            assert_frame_equal(got, table, rel_tol=1e-12, abs_tol=1e-15)


def test_the_dataframe_plan_holds_no_second_check(rng):
    cv = cv_table(rng)
    assert "_pr_design_ok" not in pr.paired_ttest(cv).explain()
    assert "_pr_design_ok" not in pr.paired_ttest_5x2cv(cv_table(rng, repeats=5, folds=2)).explain()
    assert "_pr_design_ok" in pr.paired_ttest(cv.lazy()).explain()


def test_the_four_tables_agree_with_scipy_and_baycomp_on_nan_and_inf(rng):
    """Both paths against the formulas with scipy and against baycomp, pair by pair."""
    nan_inf = (float("nan"), float("inf"), float("-inf"))
    cv = cv_table(rng, models=5, repeats=3, folds=5, special=0.03, specials=nan_inf)
    five = cv_table(rng, models=5, repeats=5, folds=2, special=0.03, specials=nan_inf)
    for table, source in itertools.product((cv, five), ("DataFrame", "LazyFrame")):
        given_ = table.lazy() if source == "LazyFrame" else table
        wide = table.pivot(on="model", index=["repeat", "fold"], values="auc")
        wide = wide.sort("repeat", "fold")
        runs, folds = table["repeat"].n_unique(), table["fold"].n_unique()
        plans = [pr.paired_ttest(given_), pr.bayes_ttest(given_, rope=0.01)]
        if runs == 5:
            plans.append(pr.paired_ttest_5x2cv(given_))
        tables = pl.collect_all(plans)
        rows = zip(tables[0].iter_rows(named=True), tables[1].iter_rows(named=True), strict=True)
        for row, posterior in rows:
            x, y = wide[row["model_a"]].to_numpy(), wide[row["model_b"]].to_numpy()
            d, n = x - y, len(x)
            if not np.isfinite(d).all():
                assert np.isnan(row["p_value"])
                assert row["reject"] is None
                assert np.isnan(posterior["p_rope"])
                continue
            t = d.mean() / np.sqrt((1 / n + 1 / (folds - 1)) * d.var(ddof=1))
            assert row["statistic"] == pytest.approx(t, rel=1e-9)
            assert row["p_value"] == pytest.approx(2 * stats.t.sf(abs(t), n - 1), rel=1e-9)
            expected = baycomp.CorrelatedTTest.probs(x, y, 0.01, runs=runs)
            got = (posterior["p_a_higher"], posterior["p_rope"], posterior["p_b_higher"])
            assert got == pytest.approx(expected, abs=1e-9)
        for row in tables[2].iter_rows(named=True) if runs == 5 else ():
            e = (wide[row["model_a"]] - wide[row["model_b"]]).to_numpy().reshape(5, 2)
            if not np.isfinite(e).all():
                assert np.isnan(row["p_value"])
                assert row["reject"] is None
                continue
            s2 = ((e - e.mean(axis=1, keepdims=True)) ** 2).sum()
            t = e[0, 0] / np.sqrt(s2 / 5)
            assert row["statistic"] == pytest.approx(t, rel=1e-9)
            assert row["p_value"] == pytest.approx(2 * stats.t.sf(abs(t), 5), rel=1e-9)


# ------------------------------------------------------- the one-aggregation design check


def damaged(rng: np.random.Generator, table: pl.DataFrame, how: str) -> pl.DataFrame:
    i = int(rng.integers(len(table)))
    if how == "drop":
        return table.filter(pl.int_range(pl.len()) != i)
    if how == "duplicate":
        return pl.concat([table, table[i]])
    if how == "null key":
        column = ["model", "repeat", "fold", "dataset"][int(rng.integers(4))]
        return table.with_columns(
            pl.when(pl.int_range(pl.len()) == i).then(None).otherwise(pl.col(column)).alias(column)
        )
    if how == "one fold":
        return table.filter(pl.col("fold") == 0)
    if how == "holdout repeat":  # one repeat with a single fold
        return table.filter((pl.col("repeat") != 0) | (pl.col("fold") == 0))
    if how == "extra cell":  # a fold only one model has
        extra = table[i].with_columns(pl.lit(99, dtype=table.schema["fold"]).alias("fold"))
        return pl.concat([table, extra])
    return table


@settings(max_examples=80)
@given(
    seed=st.integers(0, 2**31),
    how=st.sampled_from(
        ["none", "drop", "duplicate", "null key", "one fold", "holdout repeat", "extra cell"]
    ),
    datasets=st.integers(1, 2),
    by_dataset=st.booleans(),
    repeated=st.booleans(),
    folds_per_repeat=st.sampled_from([1, 2]),
    min_folds=st.sampled_from([2, 3]),
    empty=st.booleans(),
)
def test_balanced_is_the_listings_verdict(
    seed, how, datasets, by_dataset, repeated, folds_per_repeat, min_folds, empty
):
    rng = np.random.default_rng(seed)
    table = damaged(rng, cv_table(rng, models=3, repeats=2, folds=3, datasets=datasets), how)
    table = table.head(0) if empty else table
    design = {
        "by": ["dataset"] if by_dataset else [],
        "model": "model",
        "fold": "fold",
        "min_folds": min_folds,
        "repeat": "repeat" if repeated else None,
        "folds_per_repeat": folds_per_repeat,
    }
    listed = design_problems(table.lazy(), **design).collect().item()
    assert balanced(table, **design) == (listed == "")


@pytest.mark.parametrize("how", ["drop", "duplicate", "null key", "one fold", "extra cell"])
def test_a_dataframe_and_a_lazyframe_fail_with_one_message(rng, how):
    table = damaged(rng, cv_table(rng), how)
    with pytest.raises(ValueError, match="not a balanced") as eager:
        pr.paired_ttest(table)
    with pytest.raises(ComputeError) as lazy:
        pr.paired_ttest(table.lazy()).collect()
    assert str(eager.value) in str(lazy.value)


def test_a_five_by_two_dataframe_fails_at_once_with_the_lazy_message(rng):
    table = cv_table(rng, repeats=4, folds=2)
    with pytest.raises(ValueError, match="needs 5 repeats") as eager:
        pr.combined_ftest_5x2cv(table)
    with pytest.raises(ComputeError) as lazy:
        pr.combined_ftest_5x2cv(table.lazy()).collect()
    assert str(eager.value) in str(lazy.value)


# ----------------------------------------------------------------- distribution helpers


def tails_frame() -> pl.DataFrame:
    t = [-np.inf, -3.5, -1.0, -0.0, 0.0, 1e-300, 0.7, 2.0, 40.0, np.inf, np.nan, None, 1.5]
    df = [4.0, 4.0, 1.0, 9.0, 9.0, 2.0, 3.0, 0.0, 7.0, 4.0, 4.0, 4.0, None]
    return pl.DataFrame({"t": t, "df": df}, schema={"t": pl.Float64, "df": pl.Float64})


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_one_tail_call_equals_the_two_tails(mode, alternative):
    frame = tails_frame()
    t, df = pl.col("t"), pl.col("df")

    def query(x):
        return x.select(
            one=t_p_value(t, df, alternative),
            two=two_sided(t_sf(t, df), t_sf(-t, df), alternative),
        )

    out = query(frame) if mode == "eager" else query(frame.lazy()).collect(engine=mode)
    assert_frame_equal(out.select(p="one"), out.select(p="two"), check_exact=True)
    assert out["one"][11] is None  # null t
    assert out["one"][12] is None  # null df
    assert np.isnan(out["one"][10])  # NaN t
    assert np.isnan(out["one"][7])  # df = 0
    two = 2 * stats.t.sf(np.abs(frame["t"].to_numpy()[:10]), frame["df"].to_numpy()[:10])
    if alternative == "two-sided":
        np.testing.assert_array_equal(out["one"].to_numpy()[:10], np.minimum(two, 1.0))


def test_scipy_calls_keep_nulls_broadcast_literals_and_batch(mode):
    rng = np.random.default_rng(3)
    n = 50_000  # several streaming morsels
    f = rng.gamma(2.0, size=n)
    f[::7] = np.nan
    frame = pl.DataFrame({"f": f, "d": rng.integers(1, 20, n).astype(float)})
    frame = frame.with_columns(pl.when(pl.int_range(pl.len()) % 5 == 0).then(None).otherwise("d"))
    query = frame.lazy().select(p=f_sf(pl.col("f"), 10.0, pl.col("d")), q=f_sf(pl.col("f"), 3, 4))
    out = query.collect() if mode == "eager" else query.collect(engine=mode)
    expected = stats.f.sf(f, 10.0, frame["d"].fill_null(np.nan).to_numpy())
    null = frame["d"].is_null().to_numpy()
    assert out["p"].is_null().to_numpy().tolist() == null.tolist()
    np.testing.assert_array_equal(out["p"].to_numpy()[~null], expected[~null])
    np.testing.assert_array_equal(out["q"].to_numpy(), stats.f.sf(f, 3, 4))
    empty = frame.head(0).lazy().select(p=f_sf(pl.col("f"), 10.0, 5.0)).collect()
    assert empty.shape == (0, 1)
    assert empty.dtypes == [pl.Float64]
