"""polaroc's inference against pROC's own numbers (tests/proc/fixtures_infa.json).

The fixture file is written by ``Rscript tests/proc/make_fixtures_infa.R`` from the logs
``infa_*.csv`` (``make_logs_infa.py``) and committed: these tests need no R. Exact
methods (DeLong's) agree to 1e-9; resampling ones (bootstrap, Venkatraman, ``roc_ci``,
``coords_ci``) within their Monte Carlo error, derived from the number of replicates
of both sides.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import polaroc as pr

HERE = Path(__file__).parent
FIXTURES = json.loads((HERE / "fixtures_infa.json").read_text())
LOGS = FIXTURES["logs"]
B = FIXTURES["n_boot"]
ALTERNATIVES = {"two.sided": "two-sided", "greater": "greater", "less": "less"}


def read(name: str) -> pl.DataFrame:
    return pl.read_csv(HERE / LOGS[name]["file"]).with_columns(pl.col("label") == 1)


def mc_p(p: float, n: int, sides: int = 2) -> float:
    """Four standard errors of the difference of two independent MC estimates of p."""
    p = min(max(p, 5.0 / n), 1.0 - 5.0 / n)
    return 4.0 * math.sqrt(sides * p * (1.0 - p) / n)


def test_fixture_records_the_versions() -> None:
    assert FIXTURES["r_version"].startswith("R version")
    assert FIXTURES["proc_version"] == "1.18.0"


@pytest.mark.parametrize("name", ["paired", "ties", "unpaired"])
@pytest.mark.parametrize("model", ["a", "b"])
def test_auc_ci_equals_ci_auc_delong(run: Any, name: str, model: str) -> None:
    expected = LOGS[name]["ci_auc"][model]
    log = read(name).filter(model=model)
    for level, key in ((0.95, "level_95"), (0.9, "level_90")):
        out = run(log, lambda f, lv=level: f.select(pr.auc_ci("score", "label", level=lv)))
        got = out["auc_ci"][0]
        low, mid, high = expected[key]
        assert got["auc"] == pytest.approx(mid, abs=1e-9)
        assert got["ci_low"] == pytest.approx(low, abs=1e-9)
        assert got["ci_high"] == pytest.approx(high, abs=1e-9)
    se = log.select(pr.auc_se("score", "label"))["auc_se"][0]
    assert se**2 == pytest.approx(expected["var"], rel=1e-9)


@pytest.mark.parametrize("name", ["paired", "ties", "unpaired"])
@pytest.mark.parametrize("alternative", ["two.sided", "greater", "less"])
def test_delong_test_equals_roc_test(run: Any, name: str, alternative: str) -> None:
    entry = LOGS[name]
    paired = entry["paired"]
    expected = entry["delong"][alternative]
    out = run(
        read(name),
        lambda f: pr.delong_test(f, "a", "b", paired=paired, alternative=ALTERNATIVES[alternative]),
    ).row(0, named=True)
    assert out["statistic"] == pytest.approx(expected["statistic"], rel=1e-9)
    assert out["p_value"] == pytest.approx(expected["p_value"], rel=1e-9)
    assert out["estimate"] == pytest.approx(entry["auc"]["a"] - entry["auc"]["b"], abs=1e-9)
    if paired:
        assert "df" not in out
        assert [out["ci_low"], out["ci_high"]] == pytest.approx(expected["conf_int"], abs=1e-9)
    else:
        assert out["df"] == pytest.approx(expected["df"], rel=1e-9)


def test_delong_interval_at_another_level() -> None:
    expected = LOGS["paired"]["delong_90"]["conf_int"]
    out = pr.delong_test(read("paired"), "a", "b", level=0.9, alternative="less").collect()
    assert [out["ci_low"][0], out["ci_high"][0]] == pytest.approx(expected, abs=1e-9)


def _placements(pos: np.ndarray, neg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # DeLong et al. (1988) by definition: every (positive, negative) pair, ties ½.
    psi = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
    return psi.mean(axis=1), psi.mean(axis=0)


def test_unpaired_delong_against_its_formula() -> None:
    log = read("unpaired")
    parts = {}
    for model in ("a", "b"):
        rows = log.filter(model=model)
        score, label = rows["score"].to_numpy(), rows["label"].to_numpy()
        v10, v01 = _placements(score[label], score[~label])
        var = v10.var(ddof=1) / len(v10) + v01.var(ddof=1) / len(v01)
        parts[model] = (v10.mean(), var, len(score))
    (auc_a, var_a, n_a), (auc_b, var_b, n_b) = parts["a"], parts["b"]
    t = (auc_a - auc_b) / math.sqrt(var_a + var_b)
    df = (var_a + var_b) ** 2 / (var_a**2 / (n_a - 1) + var_b**2 / (n_b - 1))
    from scipy import stats

    out = pr.delong_test(log, "a", "b", paired=False).collect().row(0, named=True)
    assert out["statistic"] == pytest.approx(t, rel=1e-12)
    assert out["df"] == pytest.approx(df, rel=1e-12)
    assert out["p_value"] == pytest.approx(2 * stats.t.sf(abs(t), df), rel=1e-9)
    assert out["n"] == n_a + n_b
    assert out["cov"] is None
    half = stats.t.ppf(0.975, df) * math.sqrt(var_a + var_b)
    assert out["ci_low"] == pytest.approx(auc_a - auc_b - half, rel=1e-9)


@pytest.mark.parametrize("name", ["paired", "ties", "unpaired"])
@pytest.mark.parametrize("alternative", ["two.sided", "greater"])
def test_bootstrap_test_within_monte_carlo_error(name: str, alternative: str) -> None:
    entry = LOGS[name]
    expected = entry["bootstrap"][alternative]
    out = pr.bootstrap_test(
        read(name),
        "a",
        "b",
        n_boot=B,
        paired=entry["paired"],
        seed=11,
        alternative=ALTERNATIVES[alternative],
    ).collect()
    row = out.row(0, named=True)
    assert row["n_boot"] == B
    # D = diff / sd of B replicates: sd's relative MC error is about 1/sqrt(2B) on each side
    assert row["statistic"] == pytest.approx(expected["statistic"], rel=4 * math.sqrt(2 / (2 * B)))
    assert abs(row["p_value"] - expected["p_value"]) <= mc_p(expected["p_value"], B)


@pytest.mark.parametrize("name", ["paired", "ties", "unpaired"])
def test_venkatraman_test_within_monte_carlo_error(name: str) -> None:
    expected = LOGS[name]["venkatraman"]
    paired = LOGS[name]["paired"]
    out = pr.venkatraman_test(read(name), "a", "b", n_perm=B, seed=5, paired=paired)
    row = out.collect().row(0, named=True)
    assert row["statistic"] == pytest.approx(expected["statistic"], rel=1e-9)  # E is exact
    assert abs(row["p_value"] - expected["p_value"]) <= mc_p(expected["p_value"], B)


def _bracketed(call: Any, expected: dict[str, list[float]], level: float = 0.95) -> None:
    """pROC's band quantile lies between ours at q ∓ 4 MC standard errors of q (same seed).

    A bootstrap quantile's error is that of the share of replicates below it: with
    δ = 4·sqrt(2 q (1 − q) / B), pROC's q-quantile must fall between our (q − δ)- and
    (q + δ)-quantiles; the median within two grid steps.
    """
    q = (1 - level) / 2
    delta = 4 * math.sqrt(2 * q * (1 - q) / B)
    wide, narrow = call(1 - 2 * max(q - delta, 1e-4)), call(1 - 2 * (q + delta))
    for i, (low, high) in enumerate(zip(expected["low"], expected["high"], strict=True)):
        assert wide["low"][i] - 1e-12 <= low <= narrow["low"][i] + 1e-12
        assert narrow["high"][i] - 1e-12 <= high <= wide["high"][i] + 1e-12


@pytest.mark.parametrize("name", ["paired", "ties"])
@pytest.mark.parametrize("model", ["a", "b"])
def test_roc_ci_brackets_ci_se_and_ci_sp(name: str, model: str) -> None:
    log = read(name).filter(model=model)
    n_pos = int(log["label"].sum())
    for key, arg, x in (
        ("ci_se", "specificities", "specificity"),
        ("ci_sp", "sensitivities", "sensitivity"),
    ):
        expected = LOGS[name][key][model]

        def call(level: float, arg: str = arg, at: list[float] = expected[x]) -> pl.DataFrame:
            return pr.roc_ci(log, by=(), n_boot=B, seed=2, level=level, **{arg: at}).collect()

        _bracketed(call, expected)
        got = call(0.95)
        assert got[x].to_list() == expected[x]
        step = 1 / min(n_pos, log.height - n_pos)
        assert np.allclose(got["median"], expected["median"], atol=2 * step)


@pytest.mark.parametrize("name", ["paired", "ties"])
def test_coords_ci_brackets_ci_thresholds(name: str) -> None:
    log = read(name).filter(model="a")
    expected = LOGS[name]["ci_thresholds"]["a"]
    for coordinate in ("specificity", "sensitivity"):

        def call(level: float, c: str = coordinate) -> dict[str, list[float]]:
            out = pr.coords_ci(log, expected["threshold"], by=(), n_boot=B, seed=3, level=level)
            df = out.collect()
            return {"low": df[f"{c}_low"].to_list(), "high": df[f"{c}_high"].to_list()}

        _bracketed(call, expected[coordinate])


def test_evaluate_interval_equals_ci_auc() -> None:
    out = pr.evaluate(read("paired"), by="model").collect().sort("model")
    for row in out.iter_rows(named=True):
        low, _, high = LOGS["paired"]["ci_auc"][row["model"]]["level_95"]
        assert row["auc_ci_low"] == pytest.approx(low, abs=1e-9)
        assert row["auc_ci_high"] == pytest.approx(high, abs=1e-9)


@pytest.mark.parametrize("name", ["paired", "ties"])
@pytest.mark.parametrize("model", ["a", "b"])
def test_m_se_of_both_classes_rows_equals_proc_delong(run: Any, name: str, model: str) -> None:
    # A two-class log holding both classes' rows, the negative class scored −score: both
    # directions A(1|0) and A(0|1) are pROC's AUC, and M's SE from the samples' structural
    # components is DeLong's (pROC's var(roc, method="delong"))
    expected = LOGS[name]["ci_auc"][model]
    one = read(name).filter(model=model).with_columns(pl.col("label").cast(pl.Int64))
    both = pl.concat(
        [
            one.with_columns(pl.lit(1, pl.Int64).alias("class")),
            one.with_columns(pl.lit(0, pl.Int64).alias("class"), -pl.col("score")),
        ]
    )
    out = run(both, lambda f: pr.evaluate(f).select("auc", "auc_se_delong", "auc_ci_low"))
    assert out["auc"][0] == pytest.approx(LOGS[name]["auc"][model], abs=1e-12)
    assert out["auc_se_delong"][0] ** 2 == pytest.approx(expected["var"], rel=1e-9)
    assert out["auc_ci_low"][0] == pytest.approx(expected["level_95"][0], abs=1e-9)
