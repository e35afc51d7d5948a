"""Case weights and average precision: their cost against the plain per-group AUC.

Methods, on the log of ``bench_binary`` (``rows`` rows in 80 (model, fold) groups)
with a case weight per row (exponential, mean 1):

* ``pr.auc`` in ``group_by().agg()`` (the baseline);
* ``pr.auc(weight=...)``: targets within 1.3× of the baseline;
* ``pr.average_precision``, unweighted and weighted: targets within 1.5× of ``pr.auc``;
* scikit-learn ``roc_auc_score`` / ``average_precision_score`` with ``sample_weight``
  looped over the groups (``partition_by``).

Every polaroc result must agree with scikit-learn's on every group to 1e-9 before a
time is reported.

Run: python -m benchmarks.bench_weights [--rows 10000000] [--repeat 5] [--ties 1000]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np
import polars as pl
from sklearn.metrics import average_precision_score, roc_auc_score

import polaroc as pr
from benchmarks.common import as_dict, assert_agree, binary_log, markdown, time_all

BY = ["model", "fold"]
AUC = "pr.auc in group_by"


def weighted_log(rows: int, distinct: int | None) -> pl.DataFrame:
    df = binary_log(rows, distinct=distinct)
    weight = np.random.default_rng(1).exponential(size=rows)
    return df.with_columns(w=pl.Series(weight))


def polaroc(df: pl.DataFrame, metric: Callable[..., pl.Expr], weight: str | None) -> pl.DataFrame:
    return df.group_by(BY).agg(metric("score", "label", weight=weight).alias("value"))


def sklearn_loop(df: pl.DataFrame, metric: Callable[..., float], weight: str | None) -> dict:
    return {
        key: metric(
            part["label"].to_numpy(),
            part["score"].to_numpy(),
            sample_weight=None if weight is None else part[weight].to_numpy(),
        )
        for key, part in df.partition_by(BY, as_dict=True).items()
    }


def check(df: pl.DataFrame) -> None:
    """Every polaroc method agrees with scikit-learn on every group (1e-9)."""
    for ours, theirs in ((pr.auc, roc_auc_score), (pr.average_precision, average_precision_score)):
        for weight in (None, "w"):
            got = as_dict(polaroc(df, ours, weight), "value")
            name = f"scikit-learn {theirs.__name__} (weight={weight})"
            assert_agree(got, sklearn_loop(df, theirs, weight), name)


def run(rows: int, repeat: int, distinct: int | None) -> str:
    df = weighted_log(rows, distinct)
    check(df)
    methods = {
        AUC: lambda: polaroc(df, pr.auc, None),
        "pr.auc(weight=w)": lambda: polaroc(df, pr.auc, "w"),
        "pr.average_precision": lambda: polaroc(df, pr.average_precision, None),
        "pr.average_precision(weight=w)": lambda: polaroc(df, pr.average_precision, "w"),
        "scikit-learn roc_auc_score(sample_weight) loop": lambda: sklearn_loop(
            df, roc_auc_score, "w"
        ),
        "scikit-learn average_precision_score(sample_weight) loop": lambda: sklearn_loop(
            df, average_precision_score, "w"
        ),
    }
    slow = {name: max(2, repeat // 2) for name in methods if name.startswith("scikit")}
    timings = time_all(methods, repeat, slow=slow)
    kind = "distinct scores" if distinct is None else f"{distinct:,} distinct score values"
    title = f"Weighted AUC and average precision: {rows:,} rows, 80 groups, {kind}"
    return markdown(title, timings, AUC)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--ties", type=int, default=1000, help="distinct values of the tied log")
    args = parser.parse_args()
    print(run(args.rows, args.repeat, None))
    print()
    print(run(args.rows, args.repeat, args.ties))


if __name__ == "__main__":
    main()
