"""The counting core (issue 33): its declared fast path, and the public numbers it serves.

Sections:

``replicates``
    the NumPy evaluator of bootstrap replicates (``polaroc.core.replicates``, the one
    declared fast path) against the list evaluator on the same drawn rows
    (``--samples`` samples, ``--replicates`` draws).
``public``
    the public rank-based numbers in one query each, as ratios of the per-group sort
    (the floor): ``pr.auc`` (and weighted), ``pr.evaluate`` (and weighted),
    ``pr.multiclass_auc``, the curves, the expressions. The section reads ``polaroc`` from
    the path, so that two trees can be timed alternately in one session
    (``PYTHONPATH=<tree> python -m benchmarks.bench_core --sections public --json``).

``--cpu`` reports the least CPU time of the rounds instead of the median wall time: on a
shared machine it moves much less with the load (run with ``POLARS_MAX_THREADS=1``: an
aggregation runs on one core). Every core route is checked against the fast path (1e-9)
before a time is taken.

Run: python -m benchmarks.bench_core [--rows 2000000] [--repeat 7] [--sections replicates,public]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

import numpy as np
import polars as pl

import polaroc as pr
from benchmarks.common import binary_log, time_all

BY = ["model", "fold"]
FLOOR = "per-group sort (floor)"


def _floor(df: pl.DataFrame) -> pl.DataFrame:
    """``bench_binary``'s floor: each group's scores sorted (``sort().last()`` would be ``max``)."""
    return df.group_by(BY).agg(pl.col("score").sort().gather(pl.len() // 2))


def _expr(metric: Callable[[], pl.Expr]) -> Callable[[pl.DataFrame], pl.DataFrame]:
    return lambda df: df.group_by(BY).agg(metric().alias("value"))


# ------------------------------------------------------------------------ timing


def _seconds(
    methods: dict[str, Callable[[], object]], repeat: int, *, cpu: bool
) -> dict[str, float]:
    """Median wall seconds of round-robin rounds, or (``cpu``) the least CPU seconds."""
    if cpu:
        return _cpu_minimum(methods, repeat)
    return {t.name: t.median for t in time_all(methods, repeat)}


# ------------------------------------------------------------------- replicates


def replicates(samples: int, n_boot: int, repeat: int, *, cpu: bool = False) -> str:
    from polaroc.core.replicates import draws, replicate_aucs

    rng = np.random.default_rng(0)
    label = rng.random(samples) < 0.4
    score = rng.normal(size=samples) + 0.8 * label
    drawn = draws(np.random.default_rng(1), int(label.sum()), int((~label).sum()), n_boot)
    pos, neg = score[label], score[~label]
    rows = pl.DataFrame(
        {
            "b": np.repeat(np.arange(n_boot), samples),
            "s": np.concatenate([np.r_[pos[drawn[0][b]], neg[drawn[1][b]]] for b in range(n_boot)]),
            "y": np.tile(np.r_[np.ones(label.sum(), bool), np.zeros((~label).sum(), bool)], n_boot),
        }
    )

    def core() -> np.ndarray:
        return rows.group_by("b").agg(pr.auc("s", "y")).sort("b")["auc"].to_numpy()

    if not np.allclose(replicate_aucs(score, label, drawn), core(), rtol=0, atol=1e-9):
        raise AssertionError("the NumPy replicates disagree with the core")
    numpy_route = "NumPy evaluator (core/replicates.py)"
    seconds = _seconds(
        {numpy_route: lambda: replicate_aucs(score, label, drawn), "list evaluator": core},
        repeat,
        cpu=cpu,
    )
    what = "least CPU s" if cpu else "median s"
    return "\n".join(
        [
            f"### Bootstrap replicates' AUCs: {samples:,} samples × {n_boot:,} replicates",
            "",
            f"| method | {what} | × the NumPy evaluator |",
            "|---|---:|---:|",
            *(
                f"| {name} | {t:.3f} | {t / seconds[numpy_route]:.2f} |"
                for name, t in seconds.items()
            ),
        ]
    )


# -------------------------------------------------------------------------- public


def multiclass(samples: int, classes: int = 5, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    label = rng.integers(0, classes, samples)
    raw = rng.normal(size=(samples, classes)) + 1.0 * np.eye(classes)[label]
    return (
        pl.DataFrame(
            {
                "model": np.repeat(np.arange(4), samples // 4)[:samples],
                "fold": np.tile(np.arange(10), samples // 10 + 1)[:samples],
                "sample": np.arange(samples),
                "label": label,
                "scores": raw,
            }
        )
        .with_columns(
            pl.col("scores").arr.to_list().alias("score"),
            pl.lit(list(range(classes))).alias("class"),
        )
        .explode("score", "class")
        .drop("scores")
    )


def _cpu_minimum(methods: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """The least CPU time of each method over ``repeat`` round-robin rounds (after a warm-up).

    On a shared machine the CPU time a query uses moves much less with the load than its
    wall time; run with ``POLARS_MAX_THREADS=1`` to compare single-threaded work.
    """
    for fn in methods.values():
        fn()
    best = dict.fromkeys(methods, float("inf"))
    for _ in range(repeat):
        for name, fn in methods.items():
            start = time.process_time()
            fn()
            best[name] = min(best[name], time.process_time() - start)
    return best


def public(rows: int, repeat: int, *, cpu: bool = False) -> dict[str, float]:
    """Median seconds (``cpu``: least CPU seconds) of each public number and of the floor."""
    df = binary_log(rows).with_columns(
        w=pl.Series(np.random.default_rng(1).exponential(size=rows)),
        sample=pl.int_range(pl.len()).over(BY),
    )
    mc = multiclass(rows // 5)

    def table(fn: Callable[[], pl.LazyFrame]) -> Callable[[], object]:
        return lambda: fn().collect()

    methods: dict[str, Callable[[], object]] = {
        FLOOR: lambda: _floor(df),
        "pr.auc": lambda: _expr(lambda: pr.auc("score", "label"))(df),
        "pr.auc(weight=)": lambda: _expr(lambda: pr.auc("score", "label", weight="w"))(df),
        "pr.average_precision": lambda: _expr(lambda: pr.average_precision("score", "label"))(df),
        "pr.average_precision(weight=)": lambda: _expr(
            lambda: pr.average_precision("score", "label", weight="w")
        )(df),
        "pr.sauc": lambda: _expr(lambda: pr.sauc("score", "label"))(df),
        "pr.auc_se(delong)": lambda: _expr(lambda: pr.auc_se("score", "label"))(df),
        "pr.ks_statistic": lambda: _expr(lambda: pr.ks_statistic("score", "label"))(df),
        "pr.h_measure": lambda: _expr(lambda: pr.h_measure("score", "label"))(df),
        "pr.evaluate": table(lambda: pr.evaluate(df.drop("sample", "w"))),
        "pr.evaluate(weight=)": table(lambda: pr.evaluate(df.drop("sample"), weight="w")),
        "pr.multiclass_auc": table(lambda: pr.multiclass_auc(mc)),
        "pr.roc_curve": table(lambda: pr.roc_curve(df)),
        "pr.pr_curve": table(lambda: pr.pr_curve(df)),
        "pr.threshold_table": table(lambda: pr.threshold_table(df)),
    }
    return _seconds(methods, repeat, cpu=cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=float, default=2e6)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--replicates", type=int, default=2000)
    parser.add_argument("--sections", default="replicates,public")
    parser.add_argument("--json", action="store_true", help="public: print the medians as JSON")
    parser.add_argument("--cpu", action="store_true", help="least CPU time, not median wall")
    args = parser.parse_args()
    rows = int(args.rows)
    sections = args.sections.split(",")
    if "replicates" in sections:
        text = replicates(args.samples, args.replicates, args.repeat, cpu=args.cpu)
        print(text + "\n", flush=True)
    if "public" in sections:
        medians = public(rows, args.repeat, cpu=args.cpu)
        if args.json:
            print(json.dumps(medians))
        else:
            base = medians[FLOOR]
            print("| method | median s | × per-group sort |\n|---|---:|---:|")
            for name, seconds in medians.items():
                print(f"| {name} | {seconds:.3f} | {seconds / base:.2f} |")


if __name__ == "__main__":
    main()
