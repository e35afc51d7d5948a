"""Multiclass M against scikit-learn's ovo loop; the full evaluate table against pr.auc alone.

Run: python -m benchmarks.bench_multiclass [--samples 1000000] [--models 4] [--folds 10]
     [--classes 5] [--rows 10000000] [--repeat 5]

The multiclass log has one row per (model, fold, sample, class): ``samples`` test
samples split over ``folds`` folds and scored by ``models`` models, so
samples × models × classes rows (20M by default). scikit-learn needs one wide score
matrix per group; it is timed both from matrices prepared in advance (its best case)
and from the long log (partition, sort, reshape: what a user of the long log does).
"""

from __future__ import annotations

import argparse

import numpy as np
import polars as pl
from sklearn.metrics import roc_auc_score

import polaroc as pr
from benchmarks.common import assert_agree, binary_log, markdown, time_it

BY = ["model", "fold"]


def multiclass_log(samples: int, models: int, folds: int, classes: int, seed: int = 0):
    """The long log, and ``{(model, fold): (labels, score matrix)}`` for scikit-learn."""
    rng = np.random.default_rng(seed)
    label = rng.integers(0, classes, samples)
    fold = np.arange(samples) % folds
    frames, wide = [], {}
    for m in range(models):
        x = rng.normal(size=(samples, classes))
        x[np.arange(samples), label] += 0.5 + 0.25 * m
        p = np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)
        for f in range(folds):
            wide[(m, f)] = (label[fold == f], p[fold == f])
        frames.append(
            pl.DataFrame(
                {
                    "model": np.full(samples * classes, m, dtype=np.int32),
                    "fold": np.repeat(fold, classes).astype(np.int32),
                    "sample": np.repeat(np.arange(samples), classes),
                    "class": np.tile(np.arange(classes), samples),
                    "score": p.ravel(),
                    "label": np.repeat(label, classes),
                }
            )
        )
    return pl.concat(frames), wide


def as_dict(df: pl.DataFrame, column: str) -> dict:
    return {(m, f): v for m, f, v in df.select(*BY, column).iter_rows()}


def polaroc_m(log: pl.DataFrame) -> pl.DataFrame:
    return pr.multiclass_auc(log).select(*BY, "auc").collect()


def sklearn_wide(wide: dict) -> dict:
    return {key: roc_auc_score(y, p, multi_class="ovo") for key, (y, p) in wide.items()}


def sklearn_from_log(log: pl.DataFrame) -> dict:
    out = {}
    for key, part in log.partition_by(BY, as_dict=True).items():
        part = part.sort("sample", "class")
        c = part["class"].n_unique()
        y, p = part["label"].to_numpy()[::c], part["score"].to_numpy().reshape(-1, c)
        out[key] = roc_auc_score(y, p, multi_class="ovo")
    return out


def run_multiclass(samples: int, models: int, folds: int, classes: int, repeat: int) -> str:
    log, wide = multiclass_log(samples, models, folds, classes)
    m = as_dict(polaroc_m(log), "auc")
    assert_agree(m, sklearn_wide(wide), "scikit-learn ovo")
    assert_agree(m, sklearn_from_log(log), "scikit-learn ovo from the long log")
    slow = max(2, repeat // 2)
    floor = log.lazy().group_by(*BY, "class").agg(pl.col("score").sort().gather(pl.len() // 2))
    timings = [
        time_it("per-(group, class) sort (floor)", floor.collect, repeat),
        time_it("pr.multiclass_auc, M only", lambda: polaroc_m(log), repeat),
        time_it("pr.multiclass_auc, all columns", lambda: pr.multiclass_auc(log).collect(), repeat),
        time_it("pr.evaluate (M, sAUC, error, n)", lambda: pr.evaluate(log).collect(), repeat),
        time_it("scikit-learn ovo loop, wide input", lambda: sklearn_wide(wide), slow),
        time_it("scikit-learn ovo loop, from the log", lambda: sklearn_from_log(log), slow),
    ]
    title = (
        f"multiclass M, {classes} classes, {samples:,} samples × {models} models × "
        f"{folds} folds ({log.height:,} rows, {models * folds} groups)"
    )
    return markdown(title, timings, "pr.multiclass_auc, M only")


def run_evaluate(rows: int, repeat: int) -> str:
    df = binary_log(rows)
    auc = as_dict(df.group_by(BY).agg(pr.auc("score", "label")), "auc")
    table = pr.evaluate(df).collect()
    assert_agree(auc, as_dict(table, "auc"), "pr.evaluate's auc")
    se = as_dict(df.group_by(BY).agg(pr.auc_se("score", "label")), "auc_se")
    assert_agree(se, as_dict(table, "auc_se_delong"), "pr.evaluate's DeLong SE")
    timings = [
        time_it(
            "pr.auc in group_by", lambda: df.group_by(BY).agg(pr.auc("score", "label")), repeat
        ),
        time_it("pr.evaluate (all columns)", lambda: pr.evaluate(df).collect(), repeat),
    ]
    title = f"pr.evaluate against pr.auc alone, binary, {rows:,} rows, 80 groups"
    return markdown(title, timings, "pr.auc in group_by")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--models", type=int, default=4)
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--classes", type=int, default=5)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(run_multiclass(args.samples, args.models, args.folds, args.classes, args.repeat))
    print()
    print(run_evaluate(args.rows, args.repeat))


if __name__ == "__main__":
    main()
