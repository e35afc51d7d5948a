"""polaroc's benchmarks: one entry point that prints Markdown tables of medians and ratios.

    python -m benchmarks              # the full run (1M/10M/100M rows; ~1 hour on 2 cores)
    python -m benchmarks --quick      # small sizes, a few minutes
    python -m benchmarks --sections binary,evaluate --binary-rows 10000000 --out results.md

Sections: ``binary`` (per-group AUC against the sort floor, polars-ds and
scikit-learn, distinct and tied scores), ``evaluate`` (the full per-fold table
against ``pr.auc`` alone), ``keys`` (what the repeated-key check costs ``pr.evaluate``),
``multiclass`` (Hand & Till's M against scikit-learn's
ovo loop), ``tables`` (paired t, ANOVA and Duncan on 50 models × 10 folds) and
``scale`` (peak memory of a hive-partitioned Parquet log, one query against
batches) and ``weights`` (weighted AUC and average precision against ``pr.auc`` and
scikit-learn's ``sample_weight``) and ``repeated`` (corrected t, Bayesian t, 5×2 cv t
and F on all pairs of 100 models against a scipy/baycomp loop; the Bayesian
signed-rank test against baycomp's). Every method is checked to agree on every group
(1e-9) before it is timed.
Generated logs go to ``benchmarks/_data/`` (git-ignored) and are deleted afterwards.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from benchmarks import (
    bench_binary,
    bench_evaluate,
    bench_keys,
    bench_multiclass,
    bench_repeated,
    bench_scale,
    bench_tables,
    bench_weights,
)
from benchmarks.common import machine

SECTIONS = (
    "binary", "evaluate", "keys", "multiclass", "tables", "scale", "weights", "repeated",
)  # fmt: skip


def sizes(text: str) -> list[int]:
    return [int(float(s)) for s in text.split(",") if s]


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help="small sizes and 3 repeats")
    parser.add_argument("--sections", default=",".join(SECTIONS), help="comma-separated")
    parser.add_argument("--repeat", type=int, default=None, help="rounds per table (default 5)")
    parser.add_argument("--binary-rows", type=sizes, default=None, help="e.g. 1e6,1e7,1e8")
    parser.add_argument("--ties", type=int, default=1000, help="distinct values of tied logs")
    parser.add_argument("--evaluate-rows", type=int, default=None)
    parser.add_argument("--samples", type=int, default=None, help="multiclass test samples")
    parser.add_argument("--scale-rows", type=sizes, default=None, help="Parquet log sizes")
    parser.add_argument("--group-rows", type=int, default=None, help="rows per group (scale)")
    parser.add_argument("--out", type=Path, default=None, help="also write the tables here")
    return parser.parse_args()


def main() -> None:
    args = parse()
    quick = args.quick
    repeat = args.repeat or (3 if quick else 5)
    binary_rows = args.binary_rows or ([1_000_000] if quick else [1_000_000, 10_000_000, 10**8])
    evaluate_rows = args.evaluate_rows or (1_000_000 if quick else 10_000_000)
    samples = args.samples or (100_000 if quick else 1_000_000)
    scale_rows = args.scale_rows or ([2_000_000, 8_000_000] if quick else [25_000_000, 10**8])
    group_rows = args.group_rows or (100_000 if quick else 1_250_000)
    chosen = [s.strip() for s in args.sections.split(",") if s.strip()]
    unknown = set(chosen) - set(SECTIONS)
    if unknown:
        raise SystemExit(f"unknown sections {sorted(unknown)}; choose from {SECTIONS}")

    def emit(text: str) -> None:
        print(text + "\n", flush=True)
        if args.out is not None:
            with args.out.open("a") as f:
                f.write(text + "\n\n")

    if args.out is not None:
        args.out.write_text("")
    emit(machine() + f" Started {time.strftime('%Y-%m-%d %H:%M')}.")
    for section in chosen:
        if section == "binary":
            for rows in binary_rows:
                rounds = repeat if rows <= 10_000_000 else max(2, repeat // 2 + 1)
                for distinct in (None, args.ties):
                    emit(bench_binary.run(rows, rounds, distinct))
        elif section == "evaluate":  # cheap, and its ratio sits near its target: more rounds
            for distinct in (None, args.ties):
                emit(bench_evaluate.run(evaluate_rows, 2 * repeat - 1, distinct))
        elif section == "keys":  # the check's cost: the same table without it, 1M rows
            emit(bench_keys.run(1_000_000, 2 * repeat - 1))
        elif section == "multiclass":
            emit(bench_multiclass.run_multiclass(samples, 4, 10, 5, repeat))
        elif section == "tables":
            emit(bench_tables.run(50, 10, repeat))
        elif section == "scale":
            emit(bench_scale.run(scale_rows, group_rows, None))
        elif section == "weights":  # the 10M-row log of the binary section (1M when quick)
            weight_rows = binary_rows[min(1, len(binary_rows) - 1)]
            for distinct in (None, args.ties):
                emit(bench_weights.run(weight_rows, repeat, distinct))
        elif section == "repeated":  # 4,950 pairs; the baycomp signed-rank loop on 10 of them
            models, samples = (20, 5_000) if quick else (100, 50_000)
            emit(bench_repeated.run(models, repeat, samples, 3 if quick else 10))


if __name__ == "__main__":
    main()
