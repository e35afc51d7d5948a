"""Per-(model, fold) binary AUC: polaroc vs the sort floor and a scikit-learn loop.

Run: python benchmarks/bench_binary.py [--rows 10000000] [--repeat 5]
"""

from __future__ import annotations

import argparse

import polars as pl
from sklearn.metrics import roc_auc_score

import polaroc as pr
from benchmarks.common import assert_agree, binary_log, markdown, time_it

BY = ["model", "fold"]


def as_dict(df: pl.DataFrame, column: str) -> dict:
    return {(m, f): v for m, f, v in df.select(*BY, column).iter_rows()}


def polaroc_auc(df):
    return df.group_by(BY).agg(pr.auc("score", "label"))


def sort_floor(df):
    # Something that really sorts each group (sort().last() is rewritten into max()).
    return df.group_by(BY).agg(pl.col("score").sort().gather(pl.len() // 2))


def sklearn_loop(df):
    return {
        key: roc_auc_score(part["label"].to_numpy(), part["score"].to_numpy())
        for key, part in df.partition_by(BY, as_dict=True).items()
    }


def run(rows: int, repeat: int, distinct: int | None) -> str:
    df = binary_log(rows, distinct=distinct)
    assert_agree(as_dict(polaroc_auc(df), "auc"), sklearn_loop(df), "scikit-learn")
    timings = [
        time_it("per-group sort (floor)", lambda: sort_floor(df), repeat),
        time_it("pr.auc in group_by", lambda: polaroc_auc(df), repeat),
        time_it("scikit-learn loop", lambda: sklearn_loop(df), max(2, repeat // 2)),
    ]
    kind = "distinct scores" if distinct is None else f"{distinct} distinct scores"
    return markdown(f"binary AUC, {rows:,} rows, 80 groups, {kind}", timings, "pr.auc in group_by")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(run(args.rows, args.repeat, None))
    print()
    print(run(args.rows, args.repeat, 1000))


if __name__ == "__main__":
    main()
