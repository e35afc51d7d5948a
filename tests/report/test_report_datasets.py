"""Each data set of a log is judged and drawn on its own (issue 14, the report's side)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from sklearn.metrics import roc_auc_score

import polaroc as pr
from polaroc.report.tables import report_tables
from tests.report.test_cli import multiclass_log, polaroc


def two_binary_sets() -> pl.DataFrame:
    """The demo log twice: once as benign/malignant, once relabelled neg/pos."""
    demo = pl.read_parquet(pr.demo_log_path()).with_columns(
        pl.col("label", "class").cast(pl.String)
    )
    rename = {"malignant": "pos", "benign": "neg"}
    other = demo.with_columns(
        pl.col("label", "class").replace(rename), score=pl.col("score") ** 3
    )  # fmt: skip
    return pl.concat(
        [
            demo.with_columns(dataset=pl.lit("wdbc")),
            other.with_columns(dataset=pl.lit("relabelled")),
        ]
    )


def test_binary_sets_with_different_label_names_stay_binary():
    rep = report_tables(two_binary_sets())
    kinds = rep.kinds.sort("dataset")
    assert kinds["multiclass"].to_list() == [False, False]
    assert kinds["_pr_positive"].to_list() == ["pos", "malignant"]
    assert not rep.multiclass
    assert {"pooling", "se_vs_sd"} <= set(rep.tables)
    assert "pairwise" not in rep.tables
    pooled = rep.curves["pooled"].collect()
    assert set(pooled["dataset"]) == {"wdbc", "relabelled"}
    # each data set's pooled AUC is its own positive class's, against scikit-learn
    pooling = rep.tables["pooling"].collect()
    log = two_binary_sets()
    for dataset, positive in [("wdbc", "malignant"), ("relabelled", "pos")]:
        rows = log.filter((pl.col("dataset") == dataset) & (pl.col("class") == positive))
        got = pooling.filter((pl.col("dataset") == dataset) & (pl.col("model") == "tree"))
        rows_tree = rows.filter(pl.col("model") == "tree")
        expected = roc_auc_score(rows_tree["label"] == positive, rows_tree["score"])
        assert got["auc_pooled"].item() == pytest.approx(expected)


def test_pairwise_separabilities_are_not_averaged_across_data_sets():
    a = multiclass_log(seed=1).with_columns(dataset=pl.lit("a"))
    # the same class ids and models in both data sets, different scores
    b = multiclass_log(seed=2).with_columns(dataset=pl.lit("b"))
    rep = report_tables(pl.concat([a, b]))
    pairwise = rep.tables["pairwise"].collect()
    assert set(pairwise["dataset"]) == {"a", "b"}
    for name, part in [("a", a), ("b", b)]:
        alone = pr.pairwise_auc(part.drop("dataset")).collect()
        mine = pairwise.filter(pl.col("dataset") == name).drop("dataset")
        keys = ["model", "fold", "class_i", "class_j"]
        assert_frame_equal(mine.sort(keys), alone.sort(keys).select(mine.columns), rel_tol=1e-12)


def test_mixed_log_binary_and_multiclass_sets():
    binary = two_binary_sets().filter(pl.col("dataset") == "wdbc")
    multi = (
        multiclass_log()
        .with_columns(pl.col("class", "label").cast(pl.String), dataset=pl.lit("three"))
        .with_columns(pl.col("model").replace({"alpha": "tree", "beta": "lda"}))
    )
    log = pl.concat([binary, multi.select(binary.columns)], how="vertical_relaxed")
    rep = report_tables(log)
    assert rep.kinds.sort("dataset")["multiclass"].to_list() == [True, False]
    assert set(rep.tables["pairwise"].collect()["dataset"]) == {"three"}
    assert set(rep.curves["folds"].collect()["dataset"]) == {"wdbc"}


def test_binary_log_with_a_dataset_column_gets_roc_figures(tmp_path):
    rng = np.random.default_rng(0)
    parts = []
    for d in ("d1", "d2", "d3"):
        for m in ("a", "b", "c"):
            for f in range(3):
                label = rng.random(40) < 0.5
                score = rng.normal(size=40) + label * (1 + (m == "c"))
                parts.append(
                    pl.DataFrame(
                        {"dataset": d, "model": m, "fold": f, "score": score, "label": label}
                    )
                )
    pl.concat(parts).write_parquet(tmp_path / "log.parquet")
    done = polaroc("report", str(tmp_path / "log.parquet"), "-o", str(tmp_path / "out"), "-q")
    assert done.returncode == 0, done.stderr
    for d in ("d1", "d2", "d3"):
        assert (tmp_path / "out" / f"roc_{d}.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "out" / "cd.png").exists()
    friedman = pl.read_parquet(tmp_path / "out" / "friedman_test.parquet")
    assert friedman["n"].item() == 3
    page = (tmp_path / "out" / "index.html").read_text()
    for anchor in ("dataset-d1", "dataset-d2", "dataset-d3", "across"):
        assert f'id="{anchor}"' in page


def test_five_by_two_design_gets_dietterichs_and_alpaydins_tests(tmp_path):
    rng = np.random.default_rng(7)
    parts = []
    for r in range(5):
        for m, shift in (("a", 0.5), ("b", 1.0)):
            for f in range(2):
                label = rng.random(50) < 0.5
                score = rng.normal(size=50) + shift * label
                parts.append(
                    pl.DataFrame(
                        {"model": m, "repeat": r, "fold": f, "score": score, "label": label}
                    )
                )
    pl.concat(parts).write_parquet(tmp_path / "log.parquet")
    done = polaroc("report", str(tmp_path / "log.parquet"), "-o", str(tmp_path / "out"), "-q")
    assert done.returncode == 0, done.stderr
    out = tmp_path / "out"
    folds = pl.read_parquet(out / "folds.parquet")
    wide = folds.pivot("model", index=["repeat", "fold"], values="auc").sort("repeat", "fold")
    d = (wide["a"] - wide["b"]).to_numpy().reshape(5, 2)  # d[i, j]: repeat i, fold j
    s2 = ((d - d.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
    t = d[0, 0] / np.sqrt(s2.sum() / 5)  # Dietterich (1998), the contract's formula
    f = (d**2).sum() / (2 * s2.sum())  # Alpaydın (1999)
    assert pl.read_parquet(out / "paired_ttest_5x2cv.parquet")["statistic"].item() == pytest.approx(
        t
    )
    assert pl.read_parquet(out / "combined_ftest_5x2cv.parquet")[
        "statistic"
    ].item() == pytest.approx(f)
    page = (out / "index.html").read_text()
    assert 'id="appendix-combined_ftest_5x2cv"' in page
    assert "corrected repeated k-fold t" in page
