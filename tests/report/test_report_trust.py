"""Issue 22 on the report's path: each example a regression test, on the demo log's shape."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import matplotlib
import polars as pl
import pytest
from sklearn.metrics import roc_auc_score

import polaroc as pr
from polaroc import plot
from polaroc.report import write_report
from polaroc.report.cli import main
from tests.report.test_cli import binary_log, multiclass_log, polaroc
from tests.report.test_cli_failures import assert_one_clean_line

matplotlib.use("Agg")


def demo() -> pl.DataFrame:
    return pl.read_parquet(pr.demo_log_path())


def small_demo(models: int = 3) -> pl.DataFrame:
    """The demo log's shape (sample ids, both classes' rows), fewer models: faster."""
    keep = ["logistic", "forest", "tree", "lda", "knn9", "naive_bayes"][:models]
    return demo().filter(pl.col("model").is_in(keep))


def page_text(rep) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", rep.html))


# 6 -- lower is better -------------------------------------------------------------


def error_sets() -> pl.DataFrame:
    """Six data sets where model m2 separates best: the lowest error everywhere."""
    return pl.concat(
        [binary_log(seed=s, folds=3).with_columns(dataset=pl.lit(f"d{s}")) for s in range(6)]
    )


def test_error_is_read_lower_is_better_on_the_page(tmp_path):
    log = error_sets()
    rep = write_report(log, tmp_path, metric="error", rope=0.01, plots=False)
    text = page_text(rep)
    assert "error (lower is better)" in text
    # the sign test and the Bayesian tests are described for a lower-is-better metric
    assert "the lower error wins" in text
    sign = rep.results["sign_test"].filter(
        (pl.col("model_a") == "m0") & (pl.col("model_b") == "m2")
    )  # m2 has the lower error on every data set: its wins are counted for it
    assert sign["wins_b"].item() > sign["wins_a"].item()
    assert "posterior probabilities that a is better (higher)" not in text
    assert "a is worse, as lower is better" in text
    # per-fold errors: the best (lowest) model first in the summary the page orders by
    folds = rep.results["folds"]
    means = folds.group_by("model").agg(pl.col("error").mean()).sort("error")
    assert means["model"][0] == "m2"


def test_per_fold_figure_puts_the_lowest_error_first():
    table = pl.DataFrame({"model": ["a"] * 3 + ["b"] * 3, "error": [0.3, 0.3, 0.4, 0.1, 0.1, 0.2]})
    ax = plot.auc_distributions(table, metric="error", higher_is_better=False).axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["b", "a"]
    assert "lower is better" in ax.get_title()


def test_posterior_calls_the_lower_error_better():
    table = pl.DataFrame({"model_a": ["a"], "model_b": ["b"], "p_a_higher": [0.9],
                          "p_rope": [0.05], "p_b_higher": [0.05]})  # fmt: skip
    ax = plot.posterior(table, metric="error", higher_is_better=False).axes[0]
    a_better = ax.patches[0]  # the first segment is "a better"
    assert a_better.get_width() == pytest.approx(0.05)  # a's error is higher: a is worse


# 7 -- adjusted decisions -----------------------------------------------------------


def test_adjusted_reject_is_described_on_p_adjusted(tmp_path):
    rep = write_report(small_demo(), tmp_path, adjust="holm", plots=False)
    text = page_text(rep)
    assert "reject is true when p_adjusted ≤ 0.05" in text
    assert "reject is true when p ≤ 0.05" not in text
    assert "Holm" in text


def test_unadjusted_reject_says_so(tmp_path):
    rep = write_report(small_demo(), tmp_path, plots=False)
    assert "reject is true when p ≤ 0.05 (no adjustment)" in page_text(rep)


# 8 -- a renamed model column on a log with samples ----------------------------------


def test_renamed_model_column_on_the_demo_shape(tmp_path):
    log = small_demo().rename({"model": "clf"})
    path = tmp_path / "log.parquet"
    log.write_parquet(path)
    assert main(["report", str(path), "--model", "clf", "-o", str(tmp_path / "out"), "-q"]) == 0
    summary = pl.read_parquet(tmp_path / "out" / "summary.parquet")
    assert "clf" in summary.columns
    assert (tmp_path / "out" / "roc.png").exists()


# 10, 11 -- NaN scores through the figures ------------------------------------------------


def with_nan(log: pl.DataFrame, row: int = 5) -> pl.DataFrame:
    return log.with_columns(
        score=pl.when(pl.int_range(pl.len()) == row).then(float("nan")).otherwise("score")
    )


def test_pr_folds_draws_a_nan_curve_as_no_curve():
    log = with_nan(small_demo().filter(pl.col("class") == "malignant"))
    fig = plot.pr_folds(pr.pr_curve(log), pr.pooled_pr_curve(log))
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert any("NaN" in t for t in texts)


def test_binary_report_with_one_nan_score_writes_its_page(tmp_path):
    rep = write_report(with_nan(small_demo()), tmp_path)
    assert rep.page is not None
    assert rep.page.exists()
    assert (tmp_path / "pr.png").exists()


def test_cd_diagram_with_a_nan_value_does_not_crash():
    table = pl.DataFrame({
        "dataset": ["d1", "d2", "d3", "d4"] * 3, "model": ["a"] * 4 + ["b"] * 4 + ["c"] * 4,
        "auc": [0.9, 0.8, float("nan"), 0.7, 0.8, 0.82, 0.75, 0.6, 0.7, 0.6, 0.65, 0.5],
    })  # fmt: skip
    fig = plot.cd_diagram(table)
    assert "NaN" in fig.axes[0].texts[0].get_text()


def test_multiclass_multi_dataset_report_with_one_nan_score(tmp_path):
    log = pl.concat([
        multiclass_log(seed=s).with_columns(dataset=pl.lit(f"set{s}")) for s in range(3)
    ])  # fmt: skip
    rep = write_report(with_nan(log), tmp_path)
    assert rep.page is not None
    assert rep.page.exists()
    assert (tmp_path / "cd.png").exists()


# 12 -- hostile data set ids ---------------------------------------------------------


def test_dataset_ids_with_slashes_stay_inside_the_folder(tmp_path):
    log = pl.concat([
        small_demo(2).with_columns(dataset=pl.lit(name)) for name in ("uci/d0", "../x")
    ])  # fmt: skip
    out = tmp_path / "out"
    rep = write_report(log, out)
    assert not (tmp_path / "x.png").exists()
    written = {p.resolve() for p in rep.written}
    assert all(out.resolve() in p.parents for p in written)
    assert len(list(out.glob("roc_*.png"))) == 4  # overlay and per fold, per data set
    assert "Data set uci/d0" in rep.html
    assert "Data set ../x" in rep.html


# policies -------------------------------------------------------------------------


def files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_two_runs_write_identical_files(tmp_path):
    """Issue 34: the page and every file byte-identical run to run, and on one thread.

    A log of data sets, repeats, both classes' rows and sample ids (45,000 rows), with
    the Bayesian tests' seeded sampling: two runs in this process, a third in a fresh
    one under ``POLARS_MAX_THREADS=1``, where Polars splits every sum differently.
    """
    from tests.report.logs import design_log

    log = design_log({"a": 2, "b": 3}, repeats=5, folds=2, n=300)
    path = tmp_path / "log.parquet"
    log.write_parquet(path)
    args = ["report", str(path), "--rope", "0.01", "-q"]
    for run in ("a", "b"):
        assert main([*args, "-o", str(tmp_path / run)]) == 0
    one_thread = subprocess.run(
        [sys.executable, "-m", "polaroc", *args, "-o", str(tmp_path / "c")],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "POLARS_MAX_THREADS": "1"},
    )  # fmt: skip
    assert one_thread.returncode == 0, one_thread.stderr
    first, second, third = (files(tmp_path / run) for run in ("a", "b", "c"))
    assert first.keys() == second.keys() == third.keys()
    assert {"bayes_signed_rank.csv", "index.html", "verdict.csv", "pooling.csv"} <= first.keys()
    assert [name for name in first if first[name] != second[name]] == []
    differ = [name for name in first if first[name] != third[name]]
    assert differ == [], f"not byte-identical on one thread: {differ}"


def test_threshold_nan_is_refused(tmp_path):
    binary_log(models=2, folds=3).write_parquet(tmp_path / "log.parquet")
    done = polaroc("report", str(tmp_path / "log.parquet"), "--threshold", "nan",
                   "-o", str(tmp_path / "out"))  # fmt: skip
    assert "threshold" in assert_one_clean_line(done)
    assert not (tmp_path / "out").exists()


def test_weight_column_reaches_evaluate_and_the_page(tmp_path):
    log = binary_log(models=2, folds=3).with_columns(
        w=pl.int_range(pl.len()).mod(3).cast(pl.Float64) + 0.5
    )
    rep = write_report(log, tmp_path, weight="w", plots=False)
    folds = rep.results["folds"]
    part = log.filter((pl.col("model") == "m0") & (pl.col("fold") == 1))
    expected = roc_auc_score(part["label"], part["score"], sample_weight=part["w"])
    got = folds.filter((pl.col("model") == "m0") & (pl.col("fold") == 1))["auc"].item()
    assert got == pytest.approx(expected)
    assert "column w (case weights of the metrics)" in page_text(rep)


def test_repeat_flag_names_the_repeat_column(tmp_path):
    log = pl.concat([binary_log(seed=r, folds=3).with_columns(rep=pl.lit(r)) for r in range(3)])
    log.write_parquet(tmp_path / "log.parquet")
    out = tmp_path / "out"
    assert main(["report", str(tmp_path / "log.parquet"), "--repeat", "rep", "-o", str(out),
                 "-q", "--no-plots"]) == 0  # fmt: skip
    folds = pl.read_parquet(out / "folds.parquet")
    assert folds.height == 3 * 3 * 3  # models × repeats × folds
    text = (out / "index.html").read_text()
    assert "3 × 3-fold repeated cross-validation" in text
    assert "corrected repeated k-fold t" in text


def test_page_states_every_setting(tmp_path):
    rep = write_report(small_demo(), tmp_path, rope=0.02, seed=7, adjust="bonferroni",
                       plots=False)  # fmt: skip
    settings = rep.html[rep.html.index('id="settings"') : rep.html.index('id="evaluated"')]
    for word in ("metric compared", "design", "test of the verdict", "α", "adjustment",
                 "ROPE", "±0.02", "seed", "7", "threshold", "weight", "10-fold"):  # fmt: skip
        assert word in settings, word


def test_write_report_takes_a_frame_a_path_or_paths(tmp_path):
    log = binary_log(models=2, folds=3)
    log.write_parquet(tmp_path / "log.parquet")
    by_frame = write_report(log, tmp_path / "a", plots=False)
    by_path = write_report(tmp_path / "log.parquet", tmp_path / "b", plots=False)
    by_list = write_report([str(tmp_path / "log.parquet")], tmp_path / "c", plots=False)
    assert by_frame.results["summary"].equals(by_path.results["summary"])
    assert by_path.html == by_list.html
    assert "<iframe" in by_frame._repr_html_()
    assert by_frame.results["summary"]["auc_mean"].is_finite().all()


def test_command_line_writes_the_page_write_report_writes(tmp_path):
    log = binary_log(models=2, folds=3)
    log.write_parquet(tmp_path / "log.parquet")
    assert main(["report", str(tmp_path / "log.parquet"), "-o", str(tmp_path / "cli"), "-q",
                 "--no-plots"]) == 0  # fmt: skip
    rep = write_report(tmp_path / "log.parquet", tmp_path / "py", plots=False)
    assert (tmp_path / "cli" / "index.html").read_text() == rep.html
