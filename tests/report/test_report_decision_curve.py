"""Issue 36: the report's decision-curve section and the calibration columns beyond the ECE.

Oracles: ``pr.decision_curve`` on the positive class's rows (itself checked against
``dcurves``), the table's means recomputed in Polars, and statsmodels' GLM for the slope.
"""

from __future__ import annotations

import matplotlib
import numpy as np
import polars as pl
import pytest
import statsmodels.api as sm
from matplotlib import image

import polaroc as pr
from polaroc.report import write_report
from tests.report.test_cli import binary_log
from tests.report.test_report_trust import page_text, small_demo

matplotlib.use("Agg")


def test_demo_shape_shows_the_decision_curve_section(tmp_path):
    log = small_demo(3)
    rep = write_report(log, tmp_path)
    html = rep.html
    assert 'id="decision-curve-log"' in html
    assert '<a href="#decision-curve-log">Decision curve</a>' in html  # in the contents
    assert html.index('id="calibration-log"') < html.index('id="decision-curve-log"')
    assert html.index('id="decision-curve-log"') < html.index('id="appendix"')
    text = page_text(rep)
    assert "Vickers &amp; Elkin 2006" in html
    assert "±1 standard deviation of the folds" in text
    assert 'alt="decision curves"' in html
    pixels = image.imread(rep.figures["decision_curve"])
    assert pixels.shape[0] > 100
    assert np.ptp(pixels) > 0

    curve = rep.results["decision_curve"]
    positive = log.filter(pl.col("class") == "malignant")
    want = pr.decision_curve(positive).collect().sort("model", "fold", "threshold")
    got = curve.sort("model", "fold", "threshold")
    assert got["threshold"].to_list() == want["threshold"].to_list()
    np.testing.assert_allclose(got["net_benefit"], want["net_benefit"], rtol=1e-11)
    # the page's table: the mean over folds at pt = 0.1 of every model, and treat all
    at = want.filter(pl.col("threshold") == 0.1)
    for model in at["model"].unique().to_list():
        mean = at.filter(pl.col("model") == model)["net_benefit"].mean()
        assert f"{mean:.4f}" in html
    assert f"{at['net_benefit_all'].mean():.4f}" in html
    assert "treat all" in text
    assert "treat none" in text


def test_the_calibration_section_shows_slope_intercept_and_murphy(tmp_path):
    log = small_demo(2)
    rep = write_report(log, tmp_path)
    table = rep.results["calibration"]
    for name in ("calibration_intercept", "calibration_slope", "spiegelhalter_z", "reliability"):
        assert name in table.columns
        assert f"<code>{name}</code>" in rep.html
    text = page_text(rep)
    assert "Cox 1958" in text
    assert "Spiegelhalter 1986" in text
    assert "Murphy 1973" in text
    positive = log.filter(pl.col("class") == "malignant")
    for row in table.iter_rows(named=True):
        rows = positive.filter(
            pl.col("model") == row["model"], pl.col("score").is_between(0, 1, closed="none")
        )
        y = (rows["label"] == "malignant").to_numpy().astype(float)
        x = np.log(rows["score"].to_numpy() / (1 - rows["score"].to_numpy()))
        fit = sm.GLM(y, sm.add_constant(x), family=sm.families.Binomial()).fit(tol=1e-14)
        assert row["calibration_slope"] == pytest.approx(fit.params[1], rel=1e-8)


def test_no_section_without_probabilities_or_for_several_classes(tmp_path):
    raw = binary_log(folds=3).with_columns(pl.col("score") * 4 - 2)
    rep = write_report(raw, tmp_path / "raw")
    assert "decision-curve" not in rep.html
    assert "decision_curve" not in rep.results
    assert not list((tmp_path / "raw").glob("decision_curve*"))

    rng = np.random.default_rng(0)
    n = 30
    p = rng.dirichlet(np.ones(3), 2 * n)
    sample = np.tile(np.repeat(np.arange(n), 3), 2)
    multiclass = pl.DataFrame(
        {
            "model": np.repeat(["a", "b"], 3 * n),
            "fold": sample % 3,
            "sample": sample,
            "class": np.tile(np.arange(3), 2 * n),
            "score": p.ravel(),
            "label": np.repeat(np.tile(rng.integers(0, 3, n), 2), 3),
        }
    )
    rep = write_report(multiclass, tmp_path / "multi")
    assert "decision-curve" not in rep.html
    assert "decision_curve" not in rep.results
