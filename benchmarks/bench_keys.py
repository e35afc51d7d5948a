"""What the repeated-key check costs ``pr.evaluate``: the same table with and without it.

A log with a ``sample`` column must not repeat a (dataset, model, repeat, fold,
sample, class) key. ``pr.evaluate`` flags suspect groups inside aggregations it runs
anyway and counts only their rows per key. Two logs, each timed with the check and
without it, round-robin in one process:

* binary, no class column, 100 (model, fold) groups, a ``sample`` id per row;
* three classes, one row per (model, fold, sample, class), 100 groups.

"Without" is the same plan with the check's last step (``unique_keys``) replaced by
dropping its flag: Polars then prunes the counts that feed it, so the difference is
exactly what the check costs. Both must give the same table first.

Run: python -m benchmarks.bench_keys [--rows 1000000] [--repeat 9]
"""

from __future__ import annotations

import argparse
import os
import statistics
from collections.abc import Callable
from unittest import mock

import numpy as np
import polars as pl
from polars.testing import assert_frame_equal

import polaroc as pr
from benchmarks.common import time_all
from polaroc import evaluation
from polaroc.core.names import DUP

GROUPS = 100


def binary_keyed(rows: int) -> pl.LazyFrame:
    rng = np.random.default_rng(0)
    i = np.arange(rows)
    return pl.LazyFrame({
        "model": i % GROUPS // 10, "fold": i % 10, "sample": i // GROUPS,
        "label": rng.random(rows) < 0.4, "score": rng.normal(size=rows),
    })  # fmt: skip


def three_classes(rows: int) -> pl.LazyFrame:
    rng = np.random.default_rng(1)
    per_group = rows // (3 * GROUPS)
    n = per_group * GROUPS
    group = np.repeat(np.arange(GROUPS), per_group)
    label = rng.integers(0, 3, n)
    return pl.LazyFrame({
        "model": np.repeat(group // 10, 3), "fold": np.repeat(group % 10, 3),
        "sample": np.repeat(np.tile(np.arange(per_group), GROUPS), 3),
        "class": np.tile(np.arange(3), n), "label": np.repeat(label, 3),
        "score": rng.random(3 * n),
    })  # fmt: skip


def without_check(log: pl.LazyFrame) -> pl.DataFrame:
    def dropped(table: pl.LazyFrame, *args: object) -> pl.LazyFrame:
        return table.drop(DUP)

    with mock.patch.object(evaluation, "unique_keys", dropped):
        return pr.evaluate(log).collect()


def run(rows: int, repeat: int) -> str:
    load = os.getloadavg()[0]
    lines = [
        f"### The repeated-key check inside pr.evaluate: {rows:,} rows, {GROUPS} groups",
        "",
        f"Medians of {repeat} round-robin rounds; load average {load:.1f} before.",
        "",
        "| log | without check s | with check s | ratio | ratio range within rounds |",
        "|---|---:|---:|---:|---:|",
    ]
    logs: dict[str, Callable[[int], pl.LazyFrame]] = {
        "binary, no class column": binary_keyed,
        "3 classes": three_classes,
    }
    for name, make in logs.items():
        log = make(rows).collect().lazy()
        sort = ["model", "fold"]
        assert_frame_equal(pr.evaluate(log).collect().sort(sort), without_check(log).sort(sort))
        timings = time_all(
            {
                "with": lambda log=log: pr.evaluate(log).collect(),
                "without": lambda log=log: without_check(log),
            },
            repeat,
        )
        runs = {t.name: t.runs for t in timings}
        med = {t.name: t.median for t in timings}
        ratios = [w / o for w, o in zip(runs["with"], runs["without"], strict=True)]
        lines.append(
            f"| {name} | {med['without']:.3f} | {med['with']:.3f} | "
            f"{statistics.median(ratios):.2f} | {min(ratios):.2f}–{max(ratios):.2f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    print(run(args.rows, args.repeat))


if __name__ == "__main__":
    main()
