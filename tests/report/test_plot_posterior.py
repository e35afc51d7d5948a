"""plot.posterior draws bayes_ttest's Student-t posterior (baycomp's CorrelatedTTest.plot)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import polars as pl
import pytest

import polaroc as pr
from polaroc import plot

ROPE = 0.01


def _rope_area(ax, rope: float) -> float:
    """Area under the plotted density line between −rope and rope (trapezoid rule)."""
    x, y = ax.lines[0].get_xydata().T
    inside = (x >= -rope) & (x <= rope)
    return float(np.trapezoid(y[inside], x[inside]))


@pytest.fixture(scope="module")
def demo_folds() -> pl.DataFrame:
    return pr.evaluate(pl.read_parquet(pr.demo_log_path())).collect()


def test_density_area_inside_the_rope_is_p_rope_on_the_demo_log(demo_folds):
    table = pr.bayes_ttest(demo_folds, rope=ROPE).collect()
    fig = plot.posterior(table, rope=ROPE, folds=demo_folds)
    panels = fig.axes
    assert len(panels) == table.height
    for ax, p_rope in zip(panels, table["p_rope"], strict=True):
        assert _rope_area(ax, ROPE) == pytest.approx(p_rope, abs=1e-3)


def test_density_peaks_at_the_estimate(demo_folds):
    table = pr.bayes_ttest(demo_folds, rope=ROPE).collect()
    fig = plot.posterior(table, rope=ROPE, folds=demo_folds)
    for ax, estimate in zip(fig.axes, table["estimate"], strict=True):
        x, y = ax.lines[0].get_xydata().T
        assert x[np.argmax(y)] == pytest.approx(estimate, abs=1e-4)


def test_repeated_cv_by_dataset_density_matches_p_rope():
    rng = np.random.default_rng(3)
    rows = [
        {"dataset": d, "repeat": r, "fold": f, "model": m,
         "auc": 0.8 + 0.01 * i + rng.normal(0, 0.01)}
        for d in ("d1", "d2") for r in range(3) for f in range(5)
        for i, m in enumerate(("a", "b", "c"))
    ]  # fmt: skip
    folds = pl.DataFrame(rows)
    for rope in (0.005, 0.02):
        table = pr.bayes_ttest(folds, rope=rope).collect()
        fig = plot.posterior(table.lazy(), rope=rope, folds=folds.lazy())
        assert len(fig.axes) == table.height == 6
        for ax, p_rope in zip(fig.axes, table["p_rope"], strict=True):
            assert _rope_area(ax, rope) == pytest.approx(p_rope, abs=1e-3)


def test_lower_is_better_names_a_better_on_the_negative_side(demo_folds):
    table = pr.bayes_ttest(demo_folds, "error", rope=ROPE).collect()
    fig = plot.posterior(table, metric="error", higher_is_better=False, rope=ROPE,
                         folds=demo_folds)  # fmt: skip
    text = fig.axes[0].texts[-1].get_text()
    assert "P(a − b < −rope)" in text.splitlines()[2]
    assert "(a better)" in text.splitlines()[2]
    assert "lower is better" in fig.axes[-1].get_xlabel()


def test_constant_differences_draw_a_point_mass():
    folds = pl.DataFrame({"model": ["a"] * 4 + ["b"] * 4, "fold": [1, 2, 3, 4] * 2,
                          "auc": [0.8, 0.81, 0.82, 0.83, 0.78, 0.79, 0.80, 0.81]})  # fmt: skip
    table = pr.bayes_ttest(folds, rope=ROPE).collect()
    assert table["p_a_higher"][0] == 1.0
    ax = plot.posterior(table, rope=ROPE, folds=folds).axes[0]
    assert ax.lines[0].get_xdata()[0] == pytest.approx(0.02)


def _datasets() -> pl.DataFrame:
    rng = np.random.default_rng(0)
    return pl.DataFrame([
        {"dataset": f"d{d}", "fold": f, "model": m, "auc": 0.8 + 0.02 * i + rng.normal(0, 0.02)}
        for d in range(8) for f in range(5) for i, m in enumerate(("a", "b"))
    ])  # fmt: skip


def test_signed_rank_table_draws_three_region_bars():
    table = pr.bayes_signed_rank(_datasets(), rope=ROPE, seed=0, n_samples=2000).collect()
    ax = plot.posterior(table, rope=ROPE).axes[0]
    widths = [p.get_width() for p in ax.patches]
    assert len(widths) == 3
    assert widths == pytest.approx(table.select("p_a_higher", "p_rope", "p_b_higher").row(0))


def test_folds_that_do_not_fit_the_table_are_refused():
    table = pr.bayes_signed_rank(_datasets(), rope=ROPE, seed=0, n_samples=2000).collect()
    with pytest.raises(ValueError, match="per-fold table"):
        plot.posterior(table, rope=ROPE, folds=_datasets())


def test_folds_other_than_the_tables_are_refused(demo_folds):
    table = pr.bayes_ttest(demo_folds, rope=ROPE).collect()
    fewer = demo_folds.filter(pl.col("fold") != pl.col("fold").max())
    with pytest.raises(ValueError, match="n blocks"):
        plot.posterior(table, rope=ROPE, folds=fewer)
