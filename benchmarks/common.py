"""Timing helpers, data generators and agreement checks shared by the benchmarks.

These machines are shared and noisy, so every comparison is measured in one run,
round-robin (each round runs every method once, so slow drifts in machine load hit
all methods alike), and reported as medians and ratios against a baseline of the
same run.
"""

from __future__ import annotations

import os
import platform
import resource
import statistics
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl


@dataclass
class Timing:
    name: str
    median: float
    runs: list[float]


def time_it(name: str, fn: Callable[[], object], repeat: int = 5, warmup: int = 1) -> Timing:
    """Median of ``repeat`` timed calls of ``fn`` after ``warmup`` untimed ones."""
    return time_all({name: fn}, repeat, warmup=warmup)[0]


def time_all(
    methods: Mapping[str, Callable[[], object]],
    repeat: int = 5,
    *,
    slow: Mapping[str, int] | None = None,
    warmup: int = 1,
) -> list[Timing]:
    """Time every method round-robin: ``repeat`` rounds, each running every method once.

    ``slow`` caps the rounds of some methods (e.g. ``{"scikit-learn loop": 2}``): they
    run in the first rounds only.
    """
    slow = dict(slow or {})
    for fn in methods.values():
        for _ in range(warmup):
            fn()
    runs: dict[str, list[float]] = {name: [] for name in methods}
    for r in range(repeat):
        for name, fn in methods.items():
            if r >= slow.get(name, repeat):
                continue
            start = time.perf_counter()
            fn()
            runs[name].append(time.perf_counter() - start)
    return [Timing(name, statistics.median(t), t) for name, t in runs.items()]


def markdown(title: str, timings: list[Timing], baseline: str, reference: str | None = None) -> str:
    """A Markdown table: median seconds, ratio to ``baseline`` and, optionally, how many
    times slower than ``reference`` each method is (``reference`` ÷ method < 1 = faster)."""
    base = next(t for t in timings if t.name == baseline).median
    head = f"| method | runs | median s | × {baseline} |"
    rule = "|---|---:|---:|---:|"
    if reference is not None:
        ref = next(t for t in timings if t.name == reference).median
        head += f" × {reference} |"
        rule += "---:|"
    lines = [f"### {title}", "", head, rule]
    for t in timings:
        line = f"| {t.name} | {len(t.runs)} | {t.median:.3f} | {t.median / base:.2f} |"
        if reference is not None:
            line += f" {t.median / ref:.2f} |"
        lines.append(line)
    return "\n".join(lines)


def binary_log(
    n_rows: int, n_groups: int = 80, *, distinct: int | None = None, seed: int = 0
) -> pl.DataFrame:
    """A (model, fold) log of ``n_rows`` binary scores in ``n_groups`` groups (10 folds).

    Positives (40 %) score N(0.8, 1), negatives N(0, 1); ``distinct`` rounds the scores
    onto that many equally spaced values (heavy ties).
    """
    rng = np.random.default_rng(seed)
    group = rng.integers(0, n_groups, n_rows, dtype=np.int32)
    label = rng.random(n_rows) < 0.4
    score = rng.normal(size=n_rows) + 0.8 * label
    if distinct is not None:
        lo, hi = score.min(), score.max()
        score = np.floor((score - lo) / (hi - lo) * (distinct - 1))
    return pl.DataFrame({"model": group // 10, "fold": group % 10, "score": score, "label": label})


def as_dict(df: pl.DataFrame, column: str, by: tuple[str, ...] = ("model", "fold")) -> dict:
    """``{group key: value}`` of one result column."""
    return {tuple(row[:-1]): row[-1] for row in df.select(*by, column).iter_rows()}


class DisagreementError(AssertionError):
    """Two methods gave different results: no time is reported."""


def assert_agree(reference: dict, other: dict, name: str, tol: float = 1e-9) -> float:
    """Raise unless two per-group result dicts have the same groups and values (to ``tol``).

    Returns the largest absolute difference (NaN must match NaN, None must match None).
    """
    if reference.keys() != other.keys():
        raise DisagreementError(f"{name}: different groups")
    worst = 0.0
    for key, ref in reference.items():
        got = other[key]
        if ref is None or got is None or np.isnan(ref) or np.isnan(got):
            same = (ref is None and got is None) or (
                ref is not None and got is not None and np.isnan(ref) and np.isnan(got)
            )
            if not same:
                raise DisagreementError(f"{name}: group {key}: {ref} vs {got}")
            continue
        worst = max(worst, abs(ref - got))
    if worst > tol:
        raise DisagreementError(f"{name} disagrees with polaroc by {worst:g}")
    return worst


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far, in MiB.

    Linux's ``VmHWM`` (the high-water mark of this process image). ``ru_maxrss`` is
    the fallback elsewhere; on Linux it is not used because a child started from a
    large parent inherits the parent's peak (the forked copy is resident until exec).
    """
    try:
        status = Path("/proc/self/status").read_text()
        kib = next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM"))
        return int(kib) / 1024
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def machine() -> str:
    """One Markdown paragraph: CPU, cores, RAM, Python and Polars versions."""
    cpu = platform.processor() or platform.machine()
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        cpu = next(
            line.split(":", 1)[1].strip() for line in lscpu.splitlines() if "Model name" in line
        )
    except (OSError, subprocess.CalledProcessError, StopIteration):
        pass
    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (
        f"Machine: {cpu}, {os.cpu_count()} cores, {ram:.0f} GiB RAM; "
        f"Python {platform.python_version()}, Polars {pl.__version__}, "
        f"polars threads {pl.thread_pool_size()}."
    )
