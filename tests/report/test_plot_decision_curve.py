"""``polaroc.plot.decision_curve`` draws what it says: each model's mean over folds, a ±1 SD
band, treat all and treat none (checked against the table's values computed in NumPy)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import polars as pl

import polaroc as pr
from polaroc import plot


def test_decision_curve_figure_draws_the_means_band_and_both_strategies(tmp_path):
    log = pl.scan_parquet(pr.demo_log_path())
    table = pr.decision_curve(log).collect()
    fig = plot.decision_curve(table)
    (ax,) = fig.axes
    lines = {line.get_label(): line for line in ax.lines}
    models = sorted(table["model"].unique().to_list())
    assert set(lines) == {*models, "treat all", "treat none"}
    for name in models:
        part = table.filter(pl.col("model") == name)
        values = part.pivot("threshold", index="fold", values="net_benefit").drop("fold")
        mean = values.to_numpy().mean(axis=0)
        np.testing.assert_allclose(lines[name].get_ydata(), mean, rtol=1e-12)
        np.testing.assert_allclose(lines[name].get_xdata(), np.arange(1, 100) / 100)
    # the band of the first model: mean ± its folds' sample SD
    first = table.filter(pl.col("model") == models[0])
    values = first.pivot("threshold", index="fold", values="net_benefit").drop("fold").to_numpy()
    band = ax.collections[0].get_paths()[0].vertices[:, 1]
    sd = values.std(axis=0, ddof=1)
    assert np.isclose(band.min(), (values.mean(axis=0) - sd).min())
    assert np.isclose(band.max(), (values.mean(axis=0) + sd).max())
    every = table.group_by("threshold").agg(pl.col("net_benefit_all").mean()).sort("threshold")
    np.testing.assert_allclose(lines["treat all"].get_ydata(), every["net_benefit_all"])
    assert set(lines["treat none"].get_ydata()) == {0.0}
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "band: ±1 SD over folds" in legend
    fig.savefig(tmp_path / "decision.png")
    assert (tmp_path / "decision.png").stat().st_size > 10_000


def test_decision_curve_figure_skips_null_groups_and_takes_a_lazy_table():
    df = pl.DataFrame(
        {
            "model": ["a"] * 4 + ["b"] * 3,
            "fold": [0, 0, 1, 1, 0, 0, 0],
            "score": [0.2, 0.8, 0.3, 0.7, 0.4, 0.5, 0.6],
            "label": [0, 1, 0, 1, 1, 1, 1],  # model b: one class, null net benefit
        }
    )
    fig = plot.decision_curve(pr.decision_curve(df, thresholds=[0.25, 0.5]), title="t")
    (ax,) = fig.axes
    assert ax.get_title() == "t"
    assert {line.get_label() for line in ax.lines} == {"a", "treat all", "treat none"}
