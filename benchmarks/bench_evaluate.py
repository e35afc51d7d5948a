"""The full per-fold table (``pr.evaluate``) against ``pr.auc`` alone, on a binary log.

``pr.evaluate`` computes n, the AUC, sAUC, the error at 0.5, DeLong's and Hanley &
McNeil's standard errors and the null counts from one ordering per group. It is
compared with ``pr.auc`` alone and with the same columns as separate expressions in
one ``group_by`` (each expression orders the group again). Every column must agree
with the expressions on every group to 1e-9 first.

Run: python -m benchmarks.bench_evaluate [--rows 10000000] [--repeat 9]
"""

from __future__ import annotations

import argparse
import statistics

import polars as pl

import polaroc as pr
from benchmarks.common import Timing, as_dict, assert_agree, binary_log, markdown, time_all

BY = ["model", "fold"]
POLAROC = "pr.auc in group_by"
EVALUATE = "pr.evaluate (all columns)"


def expressions() -> list[pl.Expr]:
    s, y = "score", "label"
    return [
        pr.auc(s, y),
        pr.sauc(s, y),
        pr.error(s, y),
        pr.auc_se(s, y).alias("auc_se_delong"),
        pr.auc_se(s, y, method="hanley_mcneil").alias("auc_se_hanley_mcneil"),
    ]


def check(df: pl.DataFrame) -> None:
    table = pr.evaluate(df).collect()
    plain = df.group_by(BY).agg(*expressions())
    for column in ("auc", "sauc", "error", "auc_se_delong", "auc_se_hanley_mcneil"):
        assert_agree(as_dict(plain, column), as_dict(table, column), f"pr.evaluate's {column}")
    # the log's scores are not probabilities (brier and log_loss are null): check those
    # columns on the same log with its scores mapped into (0, 1)
    probabilities = df.with_columns(score=1.0 / (1.0 + (-pl.col("score")).exp()))
    table = pr.evaluate(probabilities).collect()
    s, y = "score", "label"
    plain = probabilities.group_by(BY).agg(pr.brier_score(s, y).alias("brier"), pr.log_loss(s, y))
    for column in ("brier", "log_loss"):
        assert_agree(as_dict(plain, column), as_dict(table, column), f"pr.evaluate's {column}")


def run(rows: int, repeat: int, distinct: int | None = None) -> str:
    df = binary_log(rows, distinct=distinct)
    check(df)
    methods = {
        "per-group sort (floor)": lambda: df.group_by(BY).agg(
            pl.col("score").sort().gather(pl.len() // 2)
        ),
        POLAROC: lambda: df.group_by(BY).agg(pr.auc("score", "label")),
        EVALUATE: lambda: pr.evaluate(df).collect(),
        "the same five metrics as expressions": lambda: df.group_by(BY).agg(*expressions()),
    }
    timings = time_all(methods, repeat)
    kind = "distinct scores" if distinct is None else f"{distinct:,} distinct score values"
    title = f"pr.evaluate against pr.auc alone: binary, {rows:,} rows, 80 groups, {kind}"
    return markdown(title, timings, POLAROC) + "\n\n" + paired_ratio(timings)


def paired_ratio(timings: list[Timing]) -> str:
    """The ratio of ``pr.evaluate`` to ``pr.auc`` within each round (both ran back to back)."""
    runs = {t.name: t.runs for t in timings}
    ratios = [e / a for e, a in zip(runs[EVALUATE], runs[POLAROC], strict=True)]
    return (
        f"Within each round, pr.evaluate ÷ pr.auc: median {statistics.median(ratios):.2f}, "
        f"range {min(ratios):.2f}–{max(ratios):.2f} over {len(ratios)} rounds."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    print(run(args.rows, args.repeat))
    print()
    print(run(args.rows, args.repeat, 1000))


if __name__ == "__main__":
    main()
