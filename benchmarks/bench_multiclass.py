"""Multiclass M (Hand & Till 2001) against scikit-learn's ovo AUC looped over groups.

Run: python -m benchmarks.bench_multiclass [--samples 1000000] [--models 4] [--folds 10]
     [--classes 5] [--repeat 5]

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
from benchmarks.common import as_dict, assert_agree, markdown, time_all

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
    assert_agree(m, as_dict(pr.evaluate(log).collect(), "auc"), "pr.evaluate's M")
    slow = max(2, repeat // 2)
    floor = log.lazy().group_by(*BY, "class").agg(pl.col("score").sort().gather(pl.len() // 2))
    methods = {
        "per-(group, class) sort (floor)": floor.collect,
        "pr.multiclass_auc, M only": lambda: polaroc_m(log),
        "pr.multiclass_auc, all columns": lambda: pr.multiclass_auc(log).collect(),
        "pr.evaluate (M, sAUC, error, n)": lambda: pr.evaluate(log).collect(),
        "scikit-learn ovo loop, wide input": lambda: sklearn_wide(wide),
        "scikit-learn ovo loop, from the log": lambda: sklearn_from_log(log),
    }
    slow_methods = {name: slow for name in methods if name.startswith("scikit-learn")}
    timings = time_all(methods, repeat, slow=slow_methods)
    title = (
        f"multiclass M, {classes} classes, {samples:,} samples × {models} models × "
        f"{folds} folds ({log.height:,} rows, {models * folds} groups)"
    )
    return markdown(
        title, timings, "pr.multiclass_auc, M only", reference="per-(group, class) sort (floor)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--models", type=int, default=4)
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--classes", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(run_multiclass(args.samples, args.models, args.folds, args.classes, args.repeat))


if __name__ == "__main__":
    main()
