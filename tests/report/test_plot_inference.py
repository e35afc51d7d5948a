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
