"""Issue 24: the report's calibration section, shown only when the scores are probabilities."""

from __future__ import annotations

import matplotlib
import numpy as np
import polars as pl
import pytest
from matplotlib import image
from sklearn.metrics import brier_score_loss, log_loss

from polaroc.report import write_report
from polaroc.report.write import figure_file
from tests.report.test_cli import binary_log
from tests.report.test_report_trust import page_text, small_demo

matplotlib.use("Agg")


def _decodes(path) -> None:
    pixels = image.imread(path)
    assert pixels.ndim == 3
    assert pixels.shape[0] > 100
    assert pixels.shape[1] > 100
    assert np.ptp(pixels) > 0  # not a blank picture


def test_demo_shape_shows_the_section_and_its_figure(tmp_path):
    log = small_demo(3)
    rep = write_report(log, tmp_path)
    assert 'id="calibration-log"' in rep.html
    assert '<a href="#calibration-log">Calibration</a>' in rep.html  # in the contents
    # after the ROC figures, before the appendix
    assert rep.html.index('id="figures-log"') < rep.html.index('id="calibration-log"')
    assert rep.html.index('id="calibration-log"') < rep.html.index('id="appendix"')
    text = page_text(rep)
    assert "Brier 1950" in text
    assert "Guo et al. 2017" in text
    assert "lower is better" in text
    assert 'alt="reliability diagram"' in rep.html
    path = rep.figures["calibration"]
    assert path == tmp_path / "calibration.png"
    _decodes(path)

    table = rep.results["calibration"]
    assert table["brier"].to_list() == sorted(table["brier"].to_list())  # best first
    assert set(table.columns) >= {"model", "brier", "log_loss", "ece", "mce"}
    # oracle: scikit-learn on the positive class's rows, all folds pooled
    positive = log.filter(pl.col("class") == "malignant")
    for row in table.iter_rows(named=True):
        rows = positive.filter(pl.col("model") == row["model"])
        y = (rows["label"] == "malignant").to_numpy()
        s = rows["score"].to_numpy()
        assert row["brier"] == pytest.approx(brier_score_loss(y, s), rel=1e-9)
        assert row["log_loss"] == pytest.approx(log_loss(y, s), rel=1e-9)
    # the page's summary shows the means over folds of the per-fold Brier score and log loss
    folds = rep.results["folds"].filter(pl.col("model") == "logistic")
    assert "brier_mean" in rep.html
    assert f"{folds['brier'].mean():.4f}" in rep.html
    assert f"{folds['log_loss'].mean():.4f}" in rep.html


def test_scores_outside_zero_one_have_no_section(tmp_path):
    log = binary_log(folds=3).with_columns(pl.col("score") * 4 - 2)  # some outside [0, 1]
    assert not log["score"].is_between(0, 1).all()
    rep = write_report(log, tmp_path)
    assert "calibration" not in rep.html.lower()
    assert "calibration" not in rep.figures
    assert "calibration" not in rep.results
    assert not list(tmp_path.glob("calibration*"))
    assert "brier_mean" not in rep.html
    assert rep.notes == []


def test_only_the_data_sets_with_probabilities_get_the_section(tmp_path):
    ok = binary_log(seed=1, folds=3).with_columns(dataset=pl.lit("uci/d0"))
    bad = binary_log(seed=2, folds=3).with_columns(
        dataset=pl.lit("raw"), score=pl.col("score") * 10
    )
    rep = write_report(pl.concat([ok, bad]), tmp_path)
    assert 'id="calibration-uci_d0"' in rep.html
    assert 'id="calibration-raw"' not in rep.html
    assert rep.results["calibration"]["dataset"].unique().to_list() == ["uci/d0"]
    figure = tmp_path / figure_file("calibration", ("uci/d0",))
    assert figure.name.startswith("calibration_uci_d0-")  # the safe-name helper
    _decodes(figure)
    assert not (tmp_path / figure_file("calibration", ("raw",))).exists()


def test_the_page_is_the_same_from_run_to_run(tmp_path):
    log = pl.concat(  # two repeats of 2-fold cv: each repeat's folds drawn as their own curves
        [binary_log(seed=r, folds=2).with_columns(repeat=pl.lit(r)) for r in range(2)]
    )
    first = write_report(log, tmp_path / "a")
    second = write_report(log, tmp_path / "b")
    assert "calibration" in first.figures
    assert first.results["calibration_curve"]["fold"].n_unique() == 4  # "repeat/fold"
    assert first.html == second.html
    for name in ("calibration", "calibration_curve"):
        assert (tmp_path / "a" / f"{name}.csv").read_bytes() == (
            tmp_path / "b" / f"{name}.csv"
        ).read_bytes()
