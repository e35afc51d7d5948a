"""Per-(model, fold) binary AUC: polaroc against the sort floor and its peers.

Methods, on one log of ``rows`` rows in 80 (model, fold) groups:

* per-group sort (floor): ``pl.col("score").sort().gather(pl.len() // 2)`` in the
  same ``group_by`` — the ordering any exact AUC needs (``sort().last()`` would be
  rewritten into ``max()``);
* full-column sort: one sort of the whole score column, no groups;
* ``pr.auc`` in ``group_by().agg()``;
* polars-ds ``query_roc_auc`` in the same ``group_by`` (optional dependency);
* scikit-learn ``roc_auc_score`` looped over the groups (``partition_by``).

Every AUC method must agree with ``pr.auc`` on every group to 1e-9 before a time
is reported.

Run: python -m benchmarks.bench_binary [--rows 10000000] [--repeat 5] [--ties 1000]
"""

from __future__ import annotations

import argparse

import polars as pl
from sklearn.metrics import roc_auc_score

import polaroc as pr
from benchmarks.common import as_dict, assert_agree, binary_log, markdown, time_all

BY = ["model", "fold"]
FLOOR = "per-group sort (floor)"
POLAROC = "pr.auc in group_by"

try:
    import polars_ds as pds
except ImportError:  # optional benchmark dependency
    pds = None


def polaroc_auc(df: pl.DataFrame) -> pl.DataFrame:
    return df.group_by(BY).agg(pr.auc("score", "label"))


def polars_ds_auc(df: pl.DataFrame) -> pl.DataFrame:
    return df.group_by(BY).agg(pds.query_roc_auc("label", "score").alias("auc"))


def sort_floor(df: pl.DataFrame) -> pl.DataFrame:
    return df.group_by(BY).agg(pl.col("score").sort().gather(pl.len() // 2))


def full_sort(df: pl.DataFrame) -> pl.Series:
    return df.get_column("score").sort()


def sklearn_loop(df: pl.DataFrame) -> dict:
    return {
        key: roc_auc_score(part["label"].to_numpy(), part["score"].to_numpy())
        for key, part in df.partition_by(BY, as_dict=True).items()
    }


def check(df: pl.DataFrame) -> None:
    """Every AUC method agrees with pr.auc on every group (1e-9)."""
    reference = as_dict(polaroc_auc(df), "auc")
    assert_agree(reference, sklearn_loop(df), "scikit-learn")
    if pds is not None:
        assert_agree(reference, as_dict(polars_ds_auc(df), "auc"), "polars-ds")


def run(rows: int, repeat: int, distinct: int | None) -> str:
    df = binary_log(rows, distinct=distinct)
    check(df)
    methods = {
        FLOOR: lambda: sort_floor(df),
        "full-column sort (no groups)": lambda: full_sort(df),
        POLAROC: lambda: polaroc_auc(df),
    }
    if pds is not None:
        methods["polars-ds query_roc_auc in group_by"] = lambda: polars_ds_auc(df)
    methods["scikit-learn loop"] = lambda: sklearn_loop(df)
    slow = {"scikit-learn loop": max(2, repeat // 2)}
    timings = time_all(methods, repeat, slow=slow)
    kind = "distinct scores" if distinct is None else f"{distinct:,} distinct score values"
    title = f"Binary AUC per (model, fold): {rows:,} rows, 80 groups, {kind}"
    return markdown(title, timings, FLOOR, reference=POLAROC)


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
