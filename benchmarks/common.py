"""Timing helpers: medians of repeated runs, ratios against a baseline of the same run."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import polars as pl


@dataclass
class Timing:
    name: str
    median: float
    runs: list[float]


def time_it(name: str, fn: Callable[[], object], repeat: int = 5, warmup: int = 1) -> Timing:
    for _ in range(warmup):
        fn()
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - start)
    return Timing(name, statistics.median(runs), runs)


def markdown(title: str, timings: list[Timing], baseline: str) -> str:
    base = next(t for t in timings if t.name == baseline).median
    lines = [f"### {title}", "", "| method | median s | × baseline |", "|---|---:|---:|"]
    for t in timings:
        lines.append(f"| {t.name} | {t.median:.3f} | {t.median / base:.2f} |")
    return "\n".join(lines)


def binary_log(n_rows: int, n_groups: int = 80, *, distinct: int | None = None, seed: int = 0):
    """A (model, fold) log of n_rows binary scores; `distinct` rounds scores to that many values."""
    rng = np.random.default_rng(seed)
    group = rng.integers(0, n_groups, n_rows)
    label = rng.random(n_rows) < 0.4
    score = rng.normal(size=n_rows) + 0.8 * label
    if distinct is not None:
        lo, hi = score.min(), score.max()
        score = np.floor((score - lo) / (hi - lo) * (distinct - 1))
    return pl.DataFrame({"model": group // 10, "fold": group % 10, "score": score, "label": label})


def assert_agree(reference: dict, other: dict, name: str, tol: float = 1e-9) -> None:
    """Fail loudly if two per-group result dicts differ anywhere by more than `tol`."""
    assert reference.keys() == other.keys(), f"{name}: different groups"
    worst = max(abs(reference[k] - other[k]) for k in reference)
    assert worst <= tol, f"{name} disagrees with polaroc by {worst:g}"
