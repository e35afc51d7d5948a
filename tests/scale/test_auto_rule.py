"""``max_rows="auto"`` bounds memory whatever the thread count (issue 34).

On a 16-core host ``pr.evaluate`` over a hive scan of 25M rows (20 groups of 1.25M,
575 MB in memory) held 2.49× the log above the baseline with 16 Polars threads and
1.43× with 2: the batch's peak per byte of its rows grew from 6.45 to 11.8 with the
groups ordered at once. These machines have 2 cores, where more threads do not run at
once, so the rule itself is tested with a patched pool size, against those measured
costs (the oracle): the batch shrinks as the pool grows, and the predicted peak stays
within the contract's 2× at every thread count.
"""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
import pytest

from polaroc.core import batches

GIB = 2**30
FIXED = 80 * 2**20  # the fixed cost of running queries (benchmarks/README.md)
ROWS, ROW_BYTES = 25_000_000, 23.0  # the log: 575 MB in memory
GROUP_ROWS = 1_250_000


def measured_peak_per_byte(threads: int) -> float:
    """The batch's peak per byte of its rows measured on 2 and 16 threads, linear in T."""
    low, high = 6.45, 11.8  # (1.43, 2.49 × 575 MB − F) over the 4-group batches
    return low + (high - low) * (max(threads, 2) - 2) / 14


def batch_rows(max_rows: int) -> int:
    """The largest batch of the issue's 1.25M-row groups (a batch ends past max_rows)."""
    groups = -(-max_rows // GROUP_ROWS)  # groups whose first row falls in the batch
    return groups * GROUP_ROWS


@pytest.mark.parametrize("threads", [1, 2, 4, 8, 16, 32, 64])
def test_the_predicted_peak_stays_within_twice_the_log(monkeypatch, threads):
    monkeypatch.setattr(pl, "thread_pool_size", lambda: threads)
    rows = batches.auto_rows(ROWS, ROW_BYTES, 64 * GIB)  # the pool's size, as batch_results
    peak = FIXED + measured_peak_per_byte(threads) * batch_rows(rows) * ROW_BYTES
    assert peak <= 2.0 * ROWS * ROW_BYTES, (threads, rows, peak / (ROWS * ROW_BYTES))


def test_the_batch_shrinks_as_the_pool_grows(monkeypatch):
    sizes = []
    for threads in (1, 2, 4, 8, 16, 32):
        monkeypatch.setattr(pl, "thread_pool_size", lambda t=threads: t)
        sizes.append(batches.auto_rows(ROWS, ROW_BYTES, 64 * GIB))
    assert sizes[0] == sizes[1]  # up to two threads: the two-thread rule
    assert all(a > b for a, b in itertools.pairwise(sizes[1:])), sizes
    # the explicit argument is the same rule
    assert batches.auto_rows(ROWS, ROW_BYTES, 64 * GIB, 16) == sizes[4]
    # and the rows per batch fall as the peak per byte rises: b·PEAK(T) is constant
    budget = [
        s * batches.peak_per_byte(t) for s, t in zip(sizes, (1, 2, 4, 8, 16, 32), strict=True)
    ]
    assert max(budget) - min(budget) <= max(batches.peak_per_byte(32), 1) * 1.0


def test_batch_results_plans_more_batches_on_a_larger_pool(monkeypatch, tmp_path):
    """Through batch_results (as evaluate's max_rows="auto"): the pool's size is read."""
    rng = np.random.default_rng(0)
    log = pl.DataFrame({
        "model": np.repeat([f"m{i}" for i in range(40)], 5_000),
        "score": rng.random(200_000),
    })  # fmt: skip
    log.write_parquet(tmp_path / "log.parquet")
    scan = pl.scan_parquet(tmp_path / "log.parquet")
    # a small log seen as a big one: no fixed cost, no floor, plenty of memory
    monkeypatch.setattr(batches, "_FIXED_BYTES", 0)
    monkeypatch.setattr(batches, "_MIN_ROWS", 1)
    monkeypatch.setattr(batches, "available_memory", lambda: None)

    def count(threads: int) -> int:
        monkeypatch.setattr(pl, "thread_pool_size", lambda: threads)
        table = lambda part: part.group_by("model").agg(pl.len())
        return sum(1 for _ in batches.batch_results(scan, table, ["model"], "auto"))

    two, sixteen = count(2), count(16)
    assert 1 < two < sixteen
