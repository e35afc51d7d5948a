"""Before → after in one process: a base revision of polaroc against this tree, round-robin.

On a shared machine, runs in separate processes move by ±15 % with the load; this puts
both versions in one process (the base revision's package copied from ``git archive`` and
renamed ``polaroc_base``), calls them alternately method by method, and reports each
method's least CPU time over the rounds as a ratio of the per-group sort (the floor, timed
in the same rounds), before and after. Run with ``POLARS_MAX_THREADS=1`` (an aggregation
runs on one core; CPU time then measures the work, not the waiting).

Methods: the public rank-based numbers of ``bench_core``'s public section, on the binary
log of ``bench_binary`` (``--rows`` rows, 80 groups; "tied": scores rounded to 0.1) with
an exponential case weight, and a 5-class log of ``--rows`` / 5 samples (40 groups).

Run: POLARS_MAX_THREADS=1 python -m benchmarks.ab_trees --base 52f9309 [--rows 2e6]
     [--rounds 9] [--json out.json]
"""

from __future__ import annotations

import argparse
import importlib
import io
import json
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np
import polars as pl

import polaroc as new

BY = ["model", "fold"]
ROOT = Path(__file__).resolve().parent.parent


def base_package(revision: str, into: Path) -> ModuleType:
    """polaroc at ``revision``, imported as ``polaroc_base`` from a copy under ``into``."""
    archive = subprocess.run(
        ["git", "archive", revision, "polaroc"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    package = into / "polaroc_base"
    (into / "polaroc").rename(package)
    absolute = re.compile(r"\b(from|import) polaroc(?=[.\s])")
    for path in package.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        text = absolute.sub(r"\1 polaroc_base", text)
        text = re.sub(
            r"^(\s*)import polaroc_base$", r"\1import polaroc_base as polaroc", text, flags=re.M
        )
        path.write_text(text, encoding="utf-8")
    sys.path.insert(0, str(into))
    return importlib.import_module("polaroc_base")


def logs(rows: int) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    rng = np.random.default_rng(0)
    group = rng.integers(0, 80, rows)
    label = rng.random(rows) < 0.4
    score = rng.normal(size=rows) + 0.8 * label
    binary = pl.DataFrame(
        {
            "model": group // 10,
            "fold": group % 10,
            "score": score,
            "label": label,
            "w": rng.exponential(size=rows),
        }
    )
    tied = binary.with_columns(pl.col("score").round(1))
    samples, k = rows // 5, 5
    truth = rng.integers(0, k, samples)
    raw = rng.normal(size=(samples, k)) + np.eye(k)[truth]
    multi = (
        pl.DataFrame(
            {
                "model": np.arange(samples) % 4,
                "fold": (np.arange(samples) // 4) % 10,
                "sample": np.arange(samples),
                "label": truth,
                "scores": raw,
            }
        )
        .with_columns(
            pl.col("scores").arr.to_list().alias("score"), pl.lit(list(range(k))).alias("class")
        )
        .explode("score", "class")
        .drop("scores")
    )
    return binary, tied, multi


def suite(
    pr: ModuleType, binary: pl.DataFrame, tied: pl.DataFrame, multi: pl.DataFrame
) -> dict[str, Callable[[], object]]:
    def expr(e: pl.Expr, log: pl.DataFrame = binary) -> Callable[[], object]:
        return lambda: log.group_by(BY).agg(e)

    unweighted = binary.drop("w")
    return {
        "pr.auc": expr(pr.auc("score", "label")),
        "pr.auc(weight=)": expr(pr.auc("score", "label", weight="w")),
        "pr.auc(weight=), tied": expr(pr.auc("score", "label", weight="w"), tied),
        "pr.average_precision": expr(pr.average_precision("score", "label")),
        "pr.average_precision, tied": expr(pr.average_precision("score", "label"), tied),
        "pr.average_precision(weight=)": expr(pr.average_precision("score", "label", weight="w")),
        "pr.sauc": expr(pr.sauc("score", "label")),
        "pr.auc_se(delong)": expr(pr.auc_se("score", "label")),
        "pr.ks_statistic": expr(pr.ks_statistic("score", "label")),
        "pr.h_measure": expr(pr.h_measure("score", "label")),
        "pr.evaluate": lambda: pr.evaluate(unweighted).collect(),
        "pr.evaluate, tied": lambda: pr.evaluate(tied.drop("w")).collect(),
        "pr.evaluate(weight=)": lambda: pr.evaluate(binary, weight="w").collect(),
        "pr.multiclass_auc": lambda: pr.multiclass_auc(multi).collect(),
        "pr.pairwise_auc": lambda: pr.pairwise_auc(multi).collect(),
        "pr.roc_curve": lambda: pr.roc_curve(binary).collect(),
        "pr.pr_curve": lambda: pr.pr_curve(binary).collect(),
        "pr.threshold_table": lambda: pr.threshold_table(binary).collect(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, help="the revision to compare with (git)")
    parser.add_argument("--rows", type=float, default=2e6)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    binary, tied, multi = logs(int(args.rows))
    with tempfile.TemporaryDirectory() as folder:
        old = base_package(args.base, Path(folder))
        before, after = suite(old, binary, tied, multi), suite(new, binary, tied, multi)
        floor = lambda: binary.group_by(BY).agg(pl.col("score").sort().gather(pl.len() // 2))  # noqa: E731
        best: dict[tuple[str, str], float] = {}
        for fn in [floor, *before.values(), *after.values()]:
            fn()
        for r in range(args.rounds):
            runs = [("floor", "", floor)]
            for name in before:
                pair = [("before", name, before[name]), ("after", name, after[name])]
                runs += pair if r % 2 == 0 else pair[::-1]
            for tag, name, fn in runs:
                start = time.process_time()
                fn()
                spent = time.process_time() - start
                best[(tag, name)] = min(best.get((tag, name), float("inf")), spent)
    base = best[("floor", "")]
    ratios = {
        n: {"before": best[("before", n)] / base, "after": best[("after", n)] / base}
        for n in before
    }
    print("| method | before: × sort floor | after: × sort floor | after ÷ before |")
    print("|---|---:|---:|---:|")
    for name, r in ratios.items():
        print(f"| {name} | {r['before']:.2f} | {r['after']:.2f} | {r['after'] / r['before']:.2f} |")
    if args.json is not None:
        args.json.write_text(json.dumps({"rows": int(args.rows), "floor": base, "ratios": ratios}))


if __name__ == "__main__":
    main()
