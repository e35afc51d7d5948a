"""Scoring rules, threshold metrics, H-measure and KS against pr.auc and scikit-learn loops.

On the log of ``bench_binary`` (``rows`` rows in 80 (model, fold) groups), scores mapped
to probabilities by the logistic function (the AUC is unchanged):

* ``pr.auc`` in ``group_by().agg()`` (the baseline); targets: no new expression slower
  than 1.5× ``pr.auc`` and each ≥ 3× faster than its scikit-learn (or hmeasure / scipy)
  loop over the groups (``partition_by`` included: it is the loop's way to the groups).

Every method, loops included, runs in each of ``repeat`` round-robin rounds, so the
medians and ratios share the machine's load; the table states the Polars thread count
and the load average. On a shared machine run it as ``nice -n 5`` and read the ratios;
``POLARS_MAX_THREADS=1`` gives the single-core ratios (what each costs in CPU time).

Every polaroc result must agree with its oracle on every group to 1e-9 before a time is
reported.

Run: python -m benchmarks.bench_scoring [--rows 10000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable

import numpy as np
import polars as pl
from hmeasure import h_score
from scipy.stats import ks_2samp
from sklearn import metrics as skm

import polaroc as pr
from benchmarks.common import Timing, as_dict, assert_agree, binary_log, time_all

BY = ["model", "fold"]
AUC = "pr.auc"


def _ks(y: np.ndarray, s: np.ndarray) -> float:
    return float(ks_2samp(s[y], s[~y]).statistic)


PAIRS: dict[str, tuple[Callable[..., pl.Expr], Callable[[np.ndarray, np.ndarray], float]]] = {
    "brier_score": (pr.brier_score, skm.brier_score_loss),
    "log_loss": (pr.log_loss, skm.log_loss),
    "f1": (pr.f1, lambda y, s: skm.f1_score(y, s >= 0.5)),
    "mcc": (pr.mcc, lambda y, s: skm.matthews_corrcoef(y, s >= 0.5)),
    "cohen_kappa": (pr.cohen_kappa, lambda y, s: skm.cohen_kappa_score(y, s >= 0.5)),
    "balanced_accuracy": (
        pr.balanced_accuracy,
        lambda y, s: skm.balanced_accuracy_score(y, s >= 0.5),
    ),
    "lr_positive": (pr.lr_positive, lambda y, s: skm.class_likelihood_ratios(y, s >= 0.5)[0]),
    "ks_statistic": (pr.ks_statistic, _ks),
    "h_measure": (pr.h_measure, lambda y, s: h_score(y.astype(int), s)),
}


def polaroc(df: pl.DataFrame, metric: Callable[..., pl.Expr]) -> pl.DataFrame:
    return df.group_by(BY).agg(metric("score", "label").alias("value"))


def loop(df: pl.DataFrame, oracle: Callable[[np.ndarray, np.ndarray], float]) -> dict:
    return {
        key: oracle(part["label"].to_numpy(), part["score"].to_numpy())
        for key, part in df.partition_by(BY, as_dict=True).items()
    }


def table(timings: list[Timing], rows: int, load: tuple[float, float]) -> str:
    """Median seconds, × ``pr.auc`` and loop ÷ polaroc (both medians of the same run)."""
    median = {t.name: t.median for t in timings}
    runs = {t.name: len(t.runs) for t in timings}
    base = median[AUC]
    threads = pl.thread_pool_size()
    lines = [
        f"### Scoring rules and threshold metrics: {rows:,} rows, 80 groups",
        "",
        f"Polars threads {threads}; load average {load[0]:.1f} before, {load[1]:.1f} after; "
        f"medians of {runs[AUC]} round-robin rounds (loops included).",
        "",
        "| method | median s | × pr.auc | loop median s | loop ÷ polaroc |",
        "|---|---:|---:|---:|---:|",
        f"| {AUC} | {base:.3f} | 1.00 | | |",
    ]
    for name in PAIRS:
        ours, theirs = median[f"pr.{name}"], median[f"{name} loop"]
        lines.append(
            f"| pr.{name} | {ours:.3f} | {ours / base:.2f} | {theirs:.3f} | {theirs / ours:.1f} |"
        )
    return "\n".join(lines)


def run(rows: int, repeat: int) -> str:
    df = binary_log(rows).with_columns(score=1.0 / (1.0 + (-pl.col("score")).exp()))
    methods: dict[str, Callable[[], object]] = {AUC: lambda: polaroc(df, pr.auc)}
    for name, (ours, theirs) in PAIRS.items():
        assert_agree(as_dict(polaroc(df, ours), "value"), loop(df, theirs), name)
        methods[f"pr.{name}"] = lambda ours=ours: polaroc(df, ours)
        methods[f"{name} loop"] = lambda theirs=theirs: loop(df, theirs)
    before = os.getloadavg()[0]
    timings = time_all(methods, repeat)
    return table(timings, rows, (before, os.getloadavg()[0]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(run(args.rows, args.repeat))


if __name__ == "__main__":
    main()
