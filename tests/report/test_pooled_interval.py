"""The summary's pooled AUC (M) and its DeLong interval, against the brute-force oracle."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy.stats import norm

import polaroc as pr
from polaroc.report.tables import report_tables
from tests.oracles import hand_till_m_variance


def multiclass_log(repeats: int, seed: int = 5) -> pl.DataFrame:
    """Three classes, two models, three folds per repeat; sample ids restart in every fold."""
    rng = np.random.default_rng(seed)
    rows = []
    for repeat in range(repeats):
        for fold in range(3):
            for sample in range(24):
                label = int(rng.integers(0, 3))
                for model, shift in (("a", 1.2), ("b", 0.4)):
                    for cls in range(3):
                        score = float(np.round(rng.normal(shift * (label == cls)), 1))  # ties
                        rows.append((model, repeat, fold, sample, cls, score, label))
    names = ["model", "repeat", "fold", "sample", "class", "score", "label"]
    return pl.DataFrame(rows, schema=names, orient="row")


def oracle(log: pl.DataFrame, model: str, alpha: float) -> tuple[float, float, float]:
    """M of the model's pooled folds, per repeat, averaged; the interval from the mean SE."""
    ms, ses = [], []
    for (_,), part in log.filter(pl.col("model") == model).group_by(["repeat"]):
        key = (part["fold"] * 1000 + part["sample"]).to_list()  # ids restart in every fold
        m, v = hand_till_m_variance(key, part["class"], part["label"], part["score"])
        ms.append(m)
        ses.append(np.sqrt(v))
    m, se = float(np.mean(ms)), float(np.mean(ses))
    z = norm.ppf(1 - alpha / 2)
    return m, max(m - z * se, 0.0), min(m + z * se, 1.0)


@pytest.mark.parametrize(("repeats", "alpha"), [(1, 0.05), (2, 0.05), (2, 0.01)])
def test_pooled_m_and_its_interval_equal_the_oracle(repeats: int, alpha: float):
    log = multiclass_log(repeats)
    if repeats == 1:
        log = log.drop("repeat")
    rep = report_tables(log.lazy(), alpha=alpha)
    table = rep.tables["pooled_interval"].collect().sort("model")
    for row in table.iter_rows(named=True):
        m, low, high = oracle(
            log if repeats > 1 else log.with_columns(repeat=0), row["model"], alpha
        )
        assert row["auc_pooled"] == pytest.approx(m, abs=1e-12)
        assert row["auc_pooled_ci_low"] == pytest.approx(low, abs=1e-12)
        assert row["auc_pooled_ci_high"] == pytest.approx(high, abs=1e-12)


def test_the_demo_page_shows_m_with_its_interval(tmp_path):
    rep = pr.report.write_report(pr.scan_logs(pr.demo_log_path()), tmp_path)
    assert "auc_pooled_ci_low" in rep.html
    assert "DeLong" in rep.html
    pooled = rep.results["pooled_interval"]
    assert pooled.height == 6
    assert (pooled["auc_pooled_ci_low"] < pooled["auc_pooled"]).all()
    assert (pooled["auc_pooled"] < pooled["auc_pooled_ci_high"]).all()
