"""The command line, run for real in a subprocess on temporary Parquet logs."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import polars as pl
import pytest
from sklearn.metrics import roc_auc_score

import polaroc as pr


def polaroc(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "polaroc", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )


def binary_log(seed: int = 0, models: int = 3, folds: int = 5, n: int = 60) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    parts = []
    for m in range(models):
        for f in range(folds):
            label = rng.random(n) < 0.5
            score = 1 / (1 + np.exp(-(rng.normal(size=n) + (m + 1) * 0.6 * label)))
            parts.append(
                pl.DataFrame({"model": f"m{m}", "fold": f, "score": score, "label": label})
            )
    return pl.concat(parts)


def multiclass_log(seed: int = 1, classes: int = 3) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    parts = []
    for m in ("alpha", "beta"):
        for f in range(4):
            label = rng.integers(0, classes, 45)
            logits = rng.normal(size=(45, classes)) + 1.5 * np.eye(classes)[label]
            prob = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
            for c in range(classes):
                parts.append(pl.DataFrame({
                    "model": m, "fold": f, "sample": np.arange(45), "class": c,
                    "score": prob[:, c], "label": label,
                }))  # fmt: skip
    return pl.concat(parts)


def test_report_on_binary_log_writes_every_table_and_figure(tmp_path):
    log = binary_log()
    log.write_parquet(tmp_path / "log.parquet")
    done = polaroc("report", str(tmp_path / "log.parquet"), "-o", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert "paired t tests on auc" in done.stdout
    out = tmp_path / "out"
    for name in ("folds", "summary", "paired_ttest", "anova", "duncan", "pooling"):
        for ext in ("csv", "parquet", "md"):
            assert (out / f"{name}.{ext}").stat().st_size > 0
    for png in ("roc.png", "auc_per_fold.png", "duncan.png"):
        assert (out / png).read_bytes()[:4] == b"\x89PNG"
    folds = pl.read_parquet(out / "folds.parquet")
    for (m, f), part in log.partition_by("model", "fold", as_dict=True).items():
        row = folds.filter((pl.col("model") == m) & (pl.col("fold") == f))
        assert row["auc"].item() == pytest.approx(roc_auc_score(part["label"], part["score"]))
    assert pl.read_csv(out / "summary.csv").height == 3


def test_report_on_multiclass_log_with_renamed_columns(tmp_path):
    log = multiclass_log().rename({"score": "prob", "label": "truth"})
    log.write_parquet(tmp_path / "hive", partition_by="model")
    done = polaroc("report", str(tmp_path / "hive"), "--score", "prob", "--label", "truth",
                   "-o", str(tmp_path / "out"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "multiclass" in done.stderr
    pairwise = pl.read_parquet(tmp_path / "out" / "pairwise.parquet")
    assert pairwise.height == 2 * 4 * 3  # models x folds x class pairs
    assert (tmp_path / "out" / "pairwise.png").exists()
    folds = pl.read_parquet(tmp_path / "out" / "folds.parquet")
    assert folds["n_classes"].unique().to_list() == [3]


def test_every_column_renamed_on_the_command_line(tmp_path):
    # issue 32: "polaroc report --repeat rep" failed (a table read the log without it)
    rng = np.random.default_rng(3)
    parts = []
    for r in range(2):
        for f in range(3):
            for m in ("a", "b"):
                y = rng.integers(0, 2, 40)
                s = rng.normal(size=40) + (1 + (m == "b")) * y
                parts.append(pl.DataFrame({
                    "repeat": r, "fold": f, "model": m, "sample": np.arange(40),
                    "score": s, "label": y.astype(bool),
                }))  # fmt: skip
    log = pl.concat(parts)
    log.write_parquet(tmp_path / "plain.parquet")
    names = {c: f"my_{c}" for c in log.columns}
    log.rename(names).write_parquet(tmp_path / "renamed.parquet")
    flags = [x for c, n in names.items() for x in (f"--{c}", n)]
    plain = polaroc("report", str(tmp_path / "plain.parquet"), "-o", str(tmp_path / "a"))
    renamed = polaroc(
        "report", str(tmp_path / "renamed.parquet"), *flags, "-o", str(tmp_path / "b")
    )
    assert plain.returncode == 0, plain.stderr
    assert renamed.returncode == 0, renamed.stderr
    back = {n: c for c, n in names.items()}
    for table in ("folds", "paired_ttest", "pooling", "verdict"):
        a = pl.read_parquet(tmp_path / "a" / f"{table}.parquet")
        b = pl.read_parquet(tmp_path / "b" / f"{table}.parquet")
        b = b.rename({c: back[c] for c in b.columns if c in back})
        assert a.equals(b.select(a.columns)), table


def test_python_m_and_help():
    done = polaroc("report", "--help")
    assert done.returncode == 0
    for flag in ("--score", "--label", "--class", "--metric", "--no-plots", "-o"):
        assert flag in done.stdout


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("missing_column", "has no column 'score'"),
        ("wrong_dtype", "score column 'score' has dtype String"),
        ("empty_file", "is empty (0 bytes)"),
        ("corrupt_file", "is not a Parquet file"),
        ("no_match", "no file matches"),
        ("bad_labels", "holds values other than 0 and 1"),
    ],
)
def test_bad_input_is_one_line_and_non_zero(tmp_path, setup, message):
    path = tmp_path / "log.parquet"
    log = binary_log(models=2, folds=3)
    if setup == "missing_column":
        log.rename({"score": "prob"}).write_parquet(path)
    elif setup == "wrong_dtype":
        log.with_columns(pl.col("score").cast(pl.String)).write_parquet(path)
    elif setup == "empty_file":
        path.write_bytes(b"")
    elif setup == "corrupt_file":
        log.write_parquet(path)
        path.write_bytes(path.read_bytes()[:100])
    elif setup == "no_match":
        path = tmp_path / "nothing*.parquet"
    elif setup == "bad_labels":
        log.with_columns(pl.col("label").cast(pl.Int64) * 2).write_parquet(path)
    done = polaroc("report", str(path), "-o", str(tmp_path / "out"), "-q")
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_demo_numbers_match_an_independent_computation(tmp_path):
    done = polaroc("demo", "-o", str(tmp_path), "--no-plots", "-q")
    assert done.returncode == 0, done.stderr
    folds = pl.read_parquet(tmp_path / "folds.parquet")
    log = pl.read_parquet(pr.demo_log_path())
    for (m, f), part in log.partition_by("model", "fold", as_dict=True).items():
        # Both classes' rows are logged: M is the mean of the two one-class AUCs.
        directions = [
            roc_auc_score(rows["label"] == cls, rows["score"])
            for (cls,), rows in part.partition_by("class", as_dict=True).items()
        ]
        wide = part.pivot("class", index="sample", values="score").join(
            part.select("sample", "label").unique(), on="sample"
        )
        own = np.where(wide["label"] == "malignant", wide["malignant"], wide["benign"])
        other = np.where(wide["label"] == "malignant", wide["benign"], wide["malignant"])
        correct = (own > other) + 0.5 * (own == other)  # a tie at the top is a coin flip
        row = folds.row(by_predicate=(pl.col("model") == m) & (pl.col("fold") == f), named=True)
        assert row["auc"] == pytest.approx(np.mean(directions), abs=1e-12)
        assert row["error"] == pytest.approx(1 - np.mean(correct))
    summary = pl.read_csv(tmp_path / "summary.csv")
    assert (
        summary["model"][0]
        == folds.group_by("model")
        .agg(pl.col("auc").mean())
        .sort("auc", descending=True)["model"][0]
    )
