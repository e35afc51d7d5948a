"""roc_band shades exactly the roc_ci band, in ROC coordinates (fpr = 1 − specificity)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from polaroc.report.plot_inference import roc_band  # noqa: E402


def _vertices(shape) -> np.ndarray:  # type: ignore[no-untyped-def]
    return np.asarray(shape.get_paths()[0].vertices)


def test_band_at_specificities_is_filled_over_fpr():
    band = pl.DataFrame(
        {
            "specificity": [0.0, 0.5, 1.0],
            "low": [0.9, 0.5, 0.0],
            "median": [1.0, 0.7, 0.1],
            "high": [1.0, 0.8, 0.2],
        }
    )
    fig, ax = plt.subplots()
    points = {tuple(np.round(v, 12)) for v in _vertices(roc_band(ax, band))}
    assert {(0.5, 0.5), (0.5, 0.8), (0.0, 0.0), (0.0, 0.2), (1.0, 0.9), (1.0, 1.0)} <= points
    plt.close(fig)


def test_band_at_sensitivities_is_filled_across_fpr():
    band = pl.DataFrame({"sensitivity": [0.2, 0.6], "low": [0.7, 0.4], "high": [0.9, 0.6]})
    fig, ax = plt.subplots()
    points = {tuple(np.round(v, 12)) for v in _vertices(roc_band(ax, band.lazy()))}
    assert {(0.1, 0.2), (0.3, 0.2), (0.4, 0.6), (0.6, 0.6)} <= points
    plt.close(fig)


def test_band_of_several_curves_or_another_table_is_an_error():
    fig, ax = plt.subplots()
    two = pl.DataFrame(
        {"model": ["a", "b"], "specificity": [0.5, 0.5], "low": [0.1, 0.2], "high": [0.3, 0.4]}
    )
    with pytest.raises(ValueError, match="one group"):
        roc_band(ax, two)
    with pytest.raises(ValueError, match="no low"):
        roc_band(ax, pl.DataFrame({"specificity": [0.5], "high": [0.3]}))
    plt.close(fig)


# ------------------------------------------------ polaroc.plot.roc_overlay(band=...)


def _demo_two_models() -> tuple[pl.LazyFrame, pl.LazyFrame]:
    import polaroc as pr

    full = pl.scan_parquet(pr.demo_log_path()).filter(pl.col("model").is_in(["tree", "lda"]))
    return full, full.filter(pl.col("class") == "malignant")


def test_overlay_shades_each_models_band_in_its_colour_under_its_curve():
    import polaroc as pr
    from polaroc import plot

    full, log = _demo_two_models()
    band = pr.roc_ci(
        full, by=["model"], positive_class="malignant", specificities=[0.0, 0.3, 0.7, 0.9, 1.0],
        n_boot=60, seed=3,
    ).collect()  # fmt: skip
    fig = plot.roc_overlay(pr.average_roc(log), band=band.lazy(), inset=False)
    ax = fig.axes[0]
    assert len(ax.collections) == 2  # one shape per model, legend order: by name
    for k, name in enumerate(["lda", "tree"]):
        part = band.filter(pl.col("model") == name)
        expected = {
            (round(1.0 - s, 9), round(v, 9))
            for s, lo, hi in part.select("specificity", "low", "high").iter_rows()
            for v in (lo, hi)
        }
        shape = ax.collections[k]
        points = {(round(x, 9), round(y, 9)) for x, y in _vertices(shape)}
        assert points == expected
        line = ax.lines[k]
        assert line.get_label().startswith(name)
        colour = matplotlib.colors.to_rgb(line.get_color())
        assert np.allclose(shape.get_facecolor()[0][:3], colour)
        assert shape.get_zorder() < line.get_zorder()  # drawn under the curves
    plt.close(fig)


def test_overlay_without_band_draws_no_shape_and_inset_gets_the_bands():
    import polaroc as pr
    from polaroc import plot

    full, log = _demo_two_models()
    fig = plot.roc_overlay(pr.average_roc(log), inset=True)
    assert len(fig.axes[0].collections) == 0
    assert len(fig.axes[0].child_axes[0].collections) == 0
    plt.close(fig)
    band = pr.roc_ci(full, by=["model"], positive_class="malignant", n_boot=30, seed=1)
    fig = plot.roc_overlay(pr.average_roc(log), band=band, inset=True)
    assert len(fig.axes[0].child_axes[0].collections) == 2
    plt.close(fig)


def test_overlay_band_of_several_models_needs_the_model_column():
    import polaroc as pr
    from polaroc import plot

    _, log = _demo_two_models()
    band = pl.DataFrame({"specificity": [0.5], "low": [0.1], "median": [0.2], "high": [0.3]})
    with pytest.raises(ValueError, match="'model' column"):
        plot.roc_overlay(pr.average_roc(log), band=band)
    one = pr.average_roc(log.filter(pl.col("model") == "lda"))
    fig = plot.roc_overlay(one, band=band, inset=False)  # one model: its band needs no key
    assert len(fig.axes[0].collections) == 1
    plt.close(fig)
    assert plot.roc_band is roc_band
