"""Beyond one machine: ``pr.distributed.evaluate`` on local Ray and Spark, and MLlib's AUC.

Every method runs in a fresh process (``python -m benchmarks.bench_distributed
--method NAME``) that reports its wall time, its own peak resident memory
(``VmHWM``) and the largest peak seen among its child processes (Ray workers,
the Spark JVM and its Python workers; sampled every 0.2 s with psutil): the
"memory per worker" column.

* ``evaluate_in_batches``: one machine, batches of whole groups (the reference);
* ``ray`` / ``spark``: ``pr.distributed.evaluate`` on a local session (2 CPUs);
  the log is hive-partitioned by model, so whole folders are read per worker;
* ``ray big group`` / ``spark big group``: the whole log as one group
  (``by="dataset"``, a constant) through ``max_group_rows``;
* ``mllib default`` / ``mllib exact``: Spark MLlib's
  ``BinaryClassificationEvaluator`` (areaUnderROC) over the same one group, at its
  default ``numBins`` (1000) and at ``numBins=0`` (no down-sampling);
* ``pr.evaluate over a scan``: one lazy ``pr.evaluate(pl.scan_parquet(...),
  max_rows=None)`` (the plain plan; the default bounds itself, see ``bench_scale``)
  collected with the streaming engine, and its peak above ``baseline`` (import
  polaroc, count the rows) as a ratio of the log's in-memory size
  (``estimated_size``); ``pr.evaluate over a scan with max_rows``: the same query with
  ``max_rows=--batch-rows`` (evaluate bounding itself, a batch of groups at a time).

Every table is checked against ``evaluate_in_batches`` (1e-12) and every one-group
AUC against ``pr.auc`` on the whole log before the timings are printed.

Run: python -m benchmarks.bench_distributed [--rows 100000000] [--group-rows 1250000]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import polars as pl

import polaroc as pr
from benchmarks.common import peak_rss_mb

DATA = Path(__file__).parent / "_data" / "distributed"
FOLDS = 10
METHODS = (
    "evaluate_in_batches",
    "ray",
    "spark",
    "ray big group",
    "spark big group",
    "mllib default",
    "mllib exact",
    "pr.evaluate over a scan",
    "pr.evaluate over a scan with max_rows",
    "baseline",
)


def write_log(folder: Path, rows: int, group_rows: int, seed: int = 0) -> dict[str, float]:
    """A binary log hive-partitioned by model, groups of ``group_rows``; scores on a grid."""
    if folder.exists():
        shutil.rmtree(folder)
    rng = np.random.default_rng(seed)
    models = max(1, rows // (group_rows * FOLDS))
    size = 0
    for m in range(models):
        n = group_rows * FOLDS
        label = rng.random(n) < 0.4
        part = pl.DataFrame(
            {
                "dataset": "d",
                "fold": np.repeat(np.arange(FOLDS, dtype=np.int64), group_rows),
                "score": np.round(rng.normal(size=n) + (0.5 + 0.1 * m) * label, 4),
                "label": label,
            }
        )
        size += part.estimated_size() + 8 * n  # the model column once read back
        path = folder / f"model={m}" / "part.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        part.write_parquet(path)
    return {"rows": models * FOLDS * group_rows, "in_memory_mb": size / 2**20}


class ChildPeak:
    """The largest resident set of any descendant process, sampled in a thread."""

    def __init__(self) -> None:
        import psutil

        self.me = psutil.Process()
        self.peak = 0.0
        self.running = True
        self.thread = threading.Thread(target=self.sample, daemon=True)
        self.thread.start()

    def sample(self) -> None:
        while self.running:
            try:
                for child in self.me.children(recursive=True):
                    self.peak = max(self.peak, child.memory_info().rss / 2**20)
            except Exception:  # a child may exit between list and read
                pass
            time.sleep(0.2)

    def stop(self) -> float:
        self.running = False
        self.thread.join()
        return self.peak


def run_method(method: str, folder: str, max_group_rows: int, batch_rows: int) -> dict[str, object]:
    """Run one method in this process; return its time, memory and result."""
    watch = ChildPeak()
    result: dict[str, object] = {}
    start = time.perf_counter()
    if method == "evaluate_in_batches":
        table = pr.evaluate_in_batches(folder, max_rows=batch_rows)
        result["table"] = table.write_json()
    elif method in ("ray", "spark"):
        table = pr.distributed.evaluate(folder, engine=method)
        result["table"] = table.write_json()
    elif method.endswith("big group"):
        engine = method.split()[0]
        table = pr.distributed.evaluate(
            folder, engine=engine, by="dataset", max_group_rows=max_group_rows
        )
        result["auc"] = table["auc"].item()
    elif method.startswith("mllib"):
        result["auc"] = mllib_auc(folder, bins=1000 if method == "mllib default" else 0)
    elif method == "baseline":
        result["rows"] = pl.scan_parquet(folder).select(pl.len()).collect().item()
    elif method == "pr.evaluate over a scan with max_rows":
        scan = pl.scan_parquet(folder, hive_partitioning=True)
        table = pr.evaluate(scan, max_rows=batch_rows).collect(engine="streaming")
        result["table"] = table.sort("model", "fold").write_json()
    else:
        scan = pl.scan_parquet(folder, hive_partitioning=True)
        table = pr.evaluate(scan, max_rows=None).collect(engine="streaming")
        result["table"] = table.sort("model", "fold").write_json()
    result["seconds"] = time.perf_counter() - start
    result["peak_mb"] = peak_rss_mb()
    result["worker_peak_mb"] = watch.stop()
    return result


def mllib_auc(folder: str, bins: int) -> float:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.ml.evaluation import BinaryClassificationEvaluator
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as f

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    data = spark.read.parquet(folder).select(
        f.col("score").cast("double").alias("rawPrediction"),
        f.col("label").cast("double").alias("label"),
    )
    evaluator = BinaryClassificationEvaluator(metricName="areaUnderROC", numBins=bins)
    return float(evaluator.evaluate(data))


def in_subprocess(
    method: str, folder: str, max_group_rows: int, batch_rows: int
) -> dict[str, object]:
    command = [sys.executable, "-m", "benchmarks.bench_distributed", "--method", method]
    command += ["--folder", folder, "--max-group-rows", str(max_group_rows)]
    command += ["--batch-rows", str(batch_rows)]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def check(results: dict[str, dict[str, object]], exact_auc: float) -> None:
    """Tables equal to the batched table (1e-12); one-group AUCs equal to ``pr.auc``."""
    reference = pl.read_json(bytes(str(results["evaluate_in_batches"]["table"]), "utf-8"))
    for name, result in results.items():
        if "table" in result:
            table = pl.read_json(bytes(str(result["table"]), "utf-8"))
            for column in ("auc", "sauc", "error", "auc_se_delong"):
                gap = (table[column] - reference[column]).abs().max()
                assert gap is not None, (name, column)
                assert gap <= 1e-12, (name, column, gap)
        if name.endswith("big group"):
            assert abs(float(str(result["auc"])) - exact_auc) <= 1e-12, name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=float, default=1e8)
    parser.add_argument("--group-rows", type=int, default=1_250_000)
    parser.add_argument("--max-group-rows", type=int, default=5_000_000)
    parser.add_argument("--batch-rows", type=int, default=10_000_000, help="evaluate_in_batches")
    parser.add_argument("--methods", default=",".join(METHODS), help="comma-separated")
    parser.add_argument("--method", help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.method:
        result = run_method(args.method, args.folder, args.max_group_rows, args.batch_rows)
        print(json.dumps(result))
        return
    folder = DATA / "log"
    meta = write_log(folder, int(args.rows), args.group_rows)
    log = pl.scan_parquet(folder, hive_partitioning=True)
    exact_auc = log.select(pr.auc("score", "label")).collect().item()
    results = {}
    for method in args.methods.split(","):
        results[method] = in_subprocess(method, str(folder), args.max_group_rows, args.batch_rows)
        shown = {k: v for k, v in results[method].items() if k != "table"}
        print(method, shown, file=sys.stderr, flush=True)
    check(results, exact_auc)
    print(f"\n{meta['rows']:,.0f} rows, {meta['in_memory_mb']:,.0f} MB in memory; ", end="")
    print(f"groups of {args.group_rows:,} rows; max_group_rows {args.max_group_rows:,}\n")
    print("| method | time (s) | driver peak (MB) | peak per worker (MB) | AUC error |")
    print("|---|---|---|---|---|")
    for name, r in results.items():
        error = f"{abs(float(str(r['auc'])) - exact_auc):.1e}" if "auc" in r else "—"
        print(
            f"| {name} | {float(str(r['seconds'])):.1f} | {float(str(r['peak_mb'])):,.0f} | "
            f"{float(str(r['worker_peak_mb'])):,.0f} | {error} |"
        )
    base = results.get("baseline")
    for name in ("pr.evaluate over a scan", "pr.evaluate over a scan with max_rows"):
        scan = results.get(name)
        if scan and base:
            above = float(str(scan["peak_mb"])) - float(str(base["peak_mb"]))
            ratio = above / meta["in_memory_mb"]
            print(f"\n{name}: {above:,.0f} MB above the baseline, ", end="")
            print(f"{ratio:.2f}x the log's in-memory size")
    shutil.rmtree(folder)


if __name__ == "__main__":
    main()
