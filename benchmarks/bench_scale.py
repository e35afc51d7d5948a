"""Logs bigger than memory: peak resident memory of evaluating a Parquet log.

The benchmark writes binary logs as Parquet, hive-partitioned by model (one folder
per model, rows in fold order, as a cross-validation loop writes them), at two sizes
with the same group size, and evaluates each in a fresh process per method so that
the peak resident set size (``ru_maxrss``) is that method's alone:

* ``baseline``: import Polars and polaroc, count the rows of the scan;
* ``one streaming query, pr.auc``: ``group_by(model, fold).agg(pr.auc(...))`` over
  the whole scan with the streaming engine;
* ``one streaming query, pr.evaluate``: ``pr.evaluate(scan)`` collected streaming;
* ``pr.evaluate_in_batches``: the same table, batches of whole groups of at most
  about ``max_rows`` rows (default: the largest group);
* ``read_parquet + pr.evaluate``: the log read into memory, then the table (the
  reference time of the memory-by-default target);
* ``pr.evaluate(scan), default``: ``pr.evaluate(scan).collect()`` with no argument,
  which bounds itself (``max_rows="auto"``).

Memory above the baseline is divided by the log's in-memory size, and each time by
the time of ``read_parquet + pr.evaluate`` measured in the same run.

``--table multiclass`` measures :func:`polaroc.multiclass_auc` instead, on a long
multiclass log (one row per model, fold, sample and class; hive-partitioned by model,
folds in order): the baseline, ``read_parquet + pr.multiclass_auc``,
``pr.multiclass_auc(scan, max_rows=None)`` (one query) and ``pr.multiclass_auc(scan)``
with no argument (``max_rows="auto"``), each time divided by the first's; the three
tables must agree to 1e-9 on every group and column.

The batched table must agree with the one-query table on every group and column
to 1e-9 (on logs up to 30M rows: above that the one-query ``pr.evaluate`` is
skipped, and the batched AUCs are checked against the one-query ``pr.auc``). The
log's in-memory size is that of the frame ``pl.read_parquet`` would return
(``estimated_size``), measured while writing it.

Run: python -m benchmarks.bench_scale [--sizes 25000000,100000000] [--group-rows 1250000]
     python -m benchmarks.bench_scale --table multiclass --sizes 2000000,8000000 \
         --group-rows 200000 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

import polaroc as pr
from benchmarks.common import as_dict, assert_agree, peak_rss_mb

DATA = Path(__file__).parent / "_data"
BY = ["model", "fold"]
FOLDS = 10
COLUMNS = ("auc", "sauc", "error", "auc_se_delong", "auc_se_hanley_mcneil")
PLAIN_EVALUATE = "one streaming query, pr.evaluate(scan, max_rows=None)"
READ = "read_parquet + pr.evaluate"
DEFAULT = "pr.evaluate(scan), default"
METHODS = (
    "baseline",
    "one streaming query, pr.auc",
    PLAIN_EVALUATE,
    "pr.evaluate_in_batches",
    READ,
    DEFAULT,
)
CLASSES = 4
MC_COLUMNS = ("n_classes", "auc", "sauc", "auc_ovr_macro", "auc_ovr_weighted")
MC_READ = "read_parquet + pr.multiclass_auc"
MC_PLAIN = "pr.multiclass_auc(scan, max_rows=None)"
MC_DEFAULT = "pr.multiclass_auc(scan), default"
MC_METHODS = ("baseline", MC_READ, MC_PLAIN, MC_DEFAULT)
ALL_METHODS = (*METHODS, *MC_METHODS[1:])


def write_log(folder: Path, rows: int, group_rows: int, seed: int = 0) -> dict:
    """Write a hive-partitioned binary log of ``rows`` rows in groups of ``group_rows``."""
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
                "model": np.full(n, m, dtype=np.int64),
                "fold": np.repeat(np.arange(FOLDS, dtype=np.int64), group_rows),
                "score": rng.normal(size=n) + (0.5 + 0.1 * m) * label,
                "label": label,
            }
        )
        size += part.estimated_size()
        path = folder / f"model={m}" / "part.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        part.drop("model").write_parquet(path)
    meta = {
        "rows": models * FOLDS * group_rows,
        "groups": models * FOLDS,
        "group_rows": group_rows,
        "in_memory_mb": size / 2**20,
    }
    (folder / "meta.json").write_text(json.dumps(meta))
    return meta


def write_multiclass_log(folder: Path, rows: int, group_rows: int, seed: int = 0) -> dict:
    """A hive-partitioned long multiclass log: ``group_rows`` rows per (model, fold)."""
    if folder.exists():
        shutil.rmtree(folder)
    rng = np.random.default_rng(seed)
    samples = group_rows // CLASSES
    models = max(1, rows // (samples * CLASSES * FOLDS))
    size = 0
    for m in range(models):
        n = samples * FOLDS  # samples of the model, fold after fold
        label = rng.integers(0, CLASSES, n)
        scores = rng.normal(size=(n, CLASSES))
        scores[np.arange(n), label] += 0.5 + 0.1 * m
        part = pl.DataFrame(
            {
                "model": np.full(n * CLASSES, m, dtype=np.int64),
                "fold": np.repeat(np.arange(FOLDS, dtype=np.int64), samples * CLASSES),
                "sample": np.repeat(np.arange(n, dtype=np.int64), CLASSES),
                "class": np.tile(np.arange(CLASSES, dtype=np.int64), n),
                "score": scores.ravel(),
                "label": np.repeat(label, CLASSES),
            }
        )
        size += part.estimated_size()
        path = folder / f"model={m}" / "part.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        part.drop("model").write_parquet(path)
    meta = {
        "rows": models * FOLDS * samples * CLASSES,
        "groups": models * FOLDS,
        "group_rows": samples * CLASSES,
        "in_memory_mb": size / 2**20,
    }
    (folder / "meta.json").write_text(json.dumps(meta))
    return meta


def scan(folder: Path) -> pl.LazyFrame:
    return pl.scan_parquet(folder / "**" / "*.parquet", hive_partitioning=True)


def worker(method: str, folder: Path, out: Path, max_rows: int) -> None:
    """Run one method in this (fresh) process and print its time and peak RSS as JSON."""
    log = scan(folder)
    start = time.perf_counter()
    if method == "baseline":
        result = log.select(pl.len()).collect(engine="streaming")
    elif method == "one streaming query, pr.auc":
        result = log.group_by(BY).agg(pr.auc("score", "label")).collect(engine="streaming")
    elif method == PLAIN_EVALUATE:
        result = pr.evaluate(log, max_rows=None).collect(engine="streaming")
    elif method == READ:
        result = pr.evaluate(
            pl.read_parquet(folder / "**" / "*.parquet", hive_partitioning=True)
        ).collect()
    elif method == DEFAULT:
        result = pr.evaluate(log).collect()
    elif method == "pr.evaluate_in_batches":
        result = pr.evaluate_in_batches(log, max_rows=max_rows)
    elif method == MC_READ:
        read = pl.read_parquet(folder / "**" / "*.parquet", hive_partitioning=True)
        result = pr.multiclass_auc(read).collect()
    elif method == MC_PLAIN:
        result = pr.multiclass_auc(log, max_rows=None).collect(engine="streaming")
    elif method == MC_DEFAULT:
        result = pr.multiclass_auc(log).collect()
    else:
        raise ValueError(method)
    seconds = time.perf_counter() - start
    result.write_parquet(out)
    print(json.dumps({"seconds": seconds, "peak_rss_mb": peak_rss_mb()}))


def measure(method: str, folder: Path, max_rows: int) -> dict:
    out = folder.parent / f"{folder.name}-{ALL_METHODS.index(method)}.parquet"
    command = [sys.executable, "-m", "benchmarks.bench_scale", "--worker", method]
    command += [str(folder), str(out), str(max_rows)]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    report["result"] = pl.read_parquet(out)
    out.unlink()
    return report


def run(
    sizes: list[int],
    group_rows: int,
    max_rows: int | None,
    keep: bool = False,
    plain_max_rows: int = 30_000_000,
) -> str:
    """The table; ``plain_max_rows`` skips the one-query ``pr.evaluate`` on larger logs
    (it holds the whole log several times over: ~14 GB at 100M rows)."""
    lines = [
        "### Logs bigger than memory: hive-partitioned Parquet, peak resident memory",
        "",
        "| log rows | groups | rows per group | log in memory MB | method | peak RSS MB "
        "| above baseline ÷ log | seconds | ÷ read_parquet + evaluate |",
        "|---:|---:|---:|---:|---|---:|---:|---:|---:|",
    ]
    for rows in sizes:
        folder = DATA / f"scale_{rows}"
        meta = write_log(folder, rows, group_rows)
        budget = max_rows or group_rows
        methods = [m for m in METHODS if m != PLAIN_EVALUATE or rows <= plain_max_rows]
        reports = {m: measure(m, folder, budget) for m in methods}
        batched = reports["pr.evaluate_in_batches"]["result"]
        if PLAIN_EVALUATE in reports:
            plain = reports[PLAIN_EVALUATE]["result"]
            for column in COLUMNS:
                assert_agree(as_dict(plain, column), as_dict(batched, column), f"batched {column}")
        auc = reports["one streaming query, pr.auc"]["result"]
        assert_agree(as_dict(auc, "auc"), as_dict(batched, "auc"), "pr.auc vs batched evaluate")
        for other in (READ, DEFAULT):
            for column in COLUMNS:
                got = as_dict(reports[other]["result"], column)
                assert_agree(as_dict(batched, column), got, f"{other} {column}")
        base, read = reports["baseline"]["peak_rss_mb"], reports[READ]["seconds"]
        for method, report in reports.items():
            name = f"{method} (max_rows {budget:,})" if "batches" in method else method
            above = (report["peak_rss_mb"] - base) / meta["in_memory_mb"]
            lines.append(
                f"| {meta['rows']:,} | {meta['groups']} | {meta['group_rows']:,} "
                f"| {meta['in_memory_mb']:,.0f} | {name} | {report['peak_rss_mb']:,.0f} "
                f"| {above:.2f} | {report['seconds']:.1f} | {report['seconds'] / read:.2f} |"
            )
        if not keep:
            shutil.rmtree(folder)
    return "\n".join(lines)


def _median_report(reports: list[dict]) -> dict:
    """Median seconds and peak memory of a method's rounds (its last round's result)."""
    return {
        "seconds": float(np.median([r["seconds"] for r in reports])),
        "peak_rss_mb": float(np.median([r["peak_rss_mb"] for r in reports])),
        "result": reports[-1]["result"],
    }


def run_multiclass(sizes: list[int], group_rows: int, keep: bool = False, repeat: int = 1) -> str:
    """The ``--table multiclass`` table: ``pr.multiclass_auc`` over the same kind of log,
    medians over ``repeat`` rounds (every method once a round, in turn)."""
    lines = [
        "### pr.multiclass_auc over a hive-partitioned multiclass Parquet log",
        "",
        "| log rows | groups | rows per group | log in memory MB | method | peak RSS MB "
        "| above baseline ÷ log | seconds | ÷ read_parquet + multiclass_auc |",
        "|---:|---:|---:|---:|---|---:|---:|---:|---:|",
    ]
    for rows in sizes:
        folder = DATA / f"scale_multiclass_{rows}"
        meta = write_multiclass_log(folder, rows, group_rows)
        rounds = [{m: measure(m, folder, group_rows) for m in MC_METHODS} for _ in range(repeat)]
        reports = {m: _median_report([r[m] for r in rounds]) for m in MC_METHODS}
        reference = reports[MC_READ]["result"]
        for other in (MC_PLAIN, MC_DEFAULT):
            for column in MC_COLUMNS:
                got = as_dict(reports[other]["result"], column)
                assert_agree(as_dict(reference, column), got, f"{other} {column}")
        base, read = reports["baseline"]["peak_rss_mb"], reports[MC_READ]["seconds"]
        for method, report in reports.items():
            above = (report["peak_rss_mb"] - base) / meta["in_memory_mb"]
            lines.append(
                f"| {meta['rows']:,} | {meta['groups']} | {meta['group_rows']:,} "
                f"| {meta['in_memory_mb']:,.0f} | {method} | {report['peak_rss_mb']:,.0f} "
                f"| {above:.2f} | {report['seconds']:.1f} | {report['seconds'] / read:.2f} |"
            )
        if not keep:
            shutil.rmtree(folder)
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="25000000,100000000", help="log rows, comma-separated")
    parser.add_argument("--group-rows", type=int, default=1_250_000)
    parser.add_argument("--max-rows", type=int, default=None, help="batch budget (default: group)")
    parser.add_argument("--keep", action="store_true", help="keep the generated logs")
    parser.add_argument("--table", choices=("evaluate", "multiclass"), default="evaluate")
    parser.add_argument("--rounds", type=int, default=1, help="medians over rounds (multiclass)")
    parser.add_argument("--worker", nargs=4, metavar=("METHOD", "DIR", "OUT", "MAX_ROWS"))
    args = parser.parse_args()
    if args.worker:
        method, folder, out, max_rows = args.worker
        worker(method, Path(folder), Path(out), int(max_rows))
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.table == "multiclass":
        print(run_multiclass(sizes, args.group_rows, args.keep, args.rounds))
        return
    print(run(sizes, args.group_rows, args.max_rows, args.keep))


if __name__ == "__main__":
    main()
