"""adjust= on every frequentist pairwise table: statsmodels' multipletests is the oracle.

m counts every pair tested: a NaN (or null) p-value keeps a NaN (null) ``p_adjusted``
and enters the other pairs' adjustment as p = 1.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.multitest import multipletests

import polaroc as pr
from polaroc.compare.fold_table import ADJUSTMENTS, adjusted
from polaroc.compare.registry import REGISTRY
from tests.tables import random_table

# statsmodels spells Hochberg's step-up "simes-hochberg"
STATSMODELS = {"hochberg": "simes-hochberg"}


def oracle(p: np.ndarray, method: str) -> np.ndarray:
    """multipletests on the p-values with NaN as 1, NaN kept where it was."""
    nan = np.isnan(p)
    if len(p) == 0:
        return p
    with np.errstate(divide="ignore"):  # statsmodels' Šidák takes log1p(−1) at p = 1
        out = multipletests(np.where(nan, 1.0, p), method=STATSMODELS.get(method, method))[1]
    return np.where(nan, np.nan, out)


# p-values with ties (a few repeated values), exact 0 and 1, and NaN
P_VALUE = st.one_of(
    st.sampled_from([0.0, 0.001, 0.01, 0.02, 0.04, 0.05, 0.2, 0.5, 1.0, float("nan")]),
    st.floats(0.0, 1.0),
)


@settings(max_examples=150)
@given(
    groups=st.lists(st.lists(P_VALUE, min_size=1, max_size=12), min_size=1, max_size=4),
    method=st.sampled_from(ADJUSTMENTS),
)
def test_adjusted_equals_multipletests_per_group(groups, method):
    frame = pl.DataFrame(
        {
            "g": [i for i, ps in enumerate(groups) for _ in ps],
            "row": list(range(sum(len(ps) for ps in groups))),
            "p_value": [p for ps in groups for p in ps],
        },
        schema={"g": pl.Int64, "row": pl.Int64, "p_value": pl.Float64},
    )
    out = adjusted(frame.lazy(), ["g"], method).collect().sort("row")
    expected = np.concatenate([oracle(np.array(ps, dtype=float), method) for ps in groups])
    np.testing.assert_allclose(out["p_adjusted"].to_numpy(), expected, rtol=1e-12, atol=1e-15)
    # one group: the same as the first by group alone
    first = frame.filter(g=0).drop("g")
    alone = adjusted(first.lazy(), [], method).collect().sort("row")
    np.testing.assert_allclose(
        alone["p_adjusted"].to_numpy(),
        oracle(np.array(groups[0], dtype=float), method),
        rtol=1e-12,
        atol=1e-15,  # subnormal p-values (5e-324) differ in their last representable bit
    )


def test_null_p_values_stay_null_and_count_as_one():
    frame = pl.DataFrame({"p_value": [0.01, None, 0.03, float("nan")]})
    out = adjusted(frame.lazy(), [], "holm").collect()
    expected = multipletests([0.01, 1.0, 0.03, 1.0], method="holm")[1]
    assert out["p_adjusted"][0] == pytest.approx(expected[0])
    assert out["p_adjusted"][2] == pytest.approx(expected[2])
    assert out["p_adjusted"][1] is None
    assert np.isnan(out["p_adjusted"][3])


FREQUENTIST = sorted(n for n, e in REGISTRY.items() if "adjust" in e.options and e.reads != "log")


def five_by_two_table(rng: np.random.Generator) -> pl.DataFrame:
    table = random_table(rng, models=5, folds=10, datasets=3, spread=0.02)
    return table.with_columns(repeat=pl.col("fold") // 2, fold=pl.col("fold") % 2)


@pytest.mark.parametrize("method", ADJUSTMENTS)
@pytest.mark.parametrize("name", FREQUENTIST)
def test_every_pairwise_table_adjusts_within_its_by_groups(name, method, rng):
    table = five_by_two_table(rng)
    entry = REGISTRY[name]
    plain = entry(table, "auc").collect()
    out = entry(table, "auc", adjust=method).collect()
    by = ["dataset"] if "dataset" in out.columns else []
    assert out.select("model_a", "model_b", *by).equals(plain.select("model_a", "model_b", *by))
    parts = out.partition_by(by, maintain_order=True) if by else [out]
    for part in parts:
        p = part["p_value"].to_numpy()
        np.testing.assert_allclose(part["p_adjusted"], oracle(p, method), rtol=1e-12, atol=1e-15)
        assert part["reject"].to_list() == (part["p_adjusted"] <= 0.05).to_list()


def test_a_nan_pair_counts_in_m(rng):
    table = random_table(rng, models=4, folds=6).with_columns(
        auc=pl.when((pl.col("model") == "m3") & (pl.col("fold") == 2))
        .then(float("nan"))
        .otherwise("auc")
    )
    out = pr.paired_ttest(table, adjust="bonferroni").collect()
    nan = out["p_value"].is_nan()
    assert nan.sum() == 3  # the three pairs with m3
    assert out.filter(nan)["p_adjusted"].is_nan().all()
    assert out.filter(nan)["reject"].is_null().all()
    finite = out.filter(~nan)
    np.testing.assert_allclose(finite["p_adjusted"], np.minimum(6 * finite["p_value"], 1.0))


def test_unknown_adjustment_is_refused():
    with pytest.raises(ValueError, match="hommel"):
        pr.paired_ttest(random_table(np.random.default_rng(0)), adjust="BH")  # type: ignore[arg-type]  # on purpose
