"""bootstrap_test and venkatraman_test against pROC's roc.test, measured in the same run.

``python -m benchmarks.bench_inference [--samples 10000] [--replicates 2000] [--rounds 3]``

One paired log of two correlated models on ``--samples`` samples (40 % positives) is
written to a temporary CSV; R (``Rscript``, with pROC) times
``roc.test(method="bootstrap", boot.n=B)`` and ``roc.test(method="venkatraman")`` on
it with ``system.time`` (reading the data and starting R are not timed), and polaroc
times ``pr.bootstrap_test(..., n_boot=B)`` and ``pr.venkatraman_test(..., n_perm=B)``
(``collect()`` included). pROC's Venkatraman statistic costs O(n²) per permutation
(``sapply`` over every rank cut-off), so it is timed on ``--venkatraman-r`` permutations
and scaled to B (its cost is linear in the permutations). Both wall-clock and CPU
(user + system) seconds are reported: the machine is shared, and CPU time is the
steadier comparison. Agreement first: Venkatraman's E must be equal, the bootstrap D
within Monte Carlo error, or nothing is reported. Without ``Rscript`` only polaroc's
times are printed.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

import polaroc as pr

R_SCRIPT = """
suppressMessages(library(pROC))
d <- read.csv("{path}")
curve <- function(m) roc(d$label[d$model == m], d$score[d$model == m],
                         levels = c(0, 1), direction = "<", quiet = TRUE)
r1 <- curve("a")
r2 <- curve("b")
t <- function(expr) {{
  s <- system.time(v <- expr)
  list(wall = s[["elapsed"]], cpu = s[["user.self"]] + s[["sys.self"]], value = v)
}}
b <- t(roc.test(r1, r2, method = "bootstrap", boot.n = {boot}))
v <- t(roc.test(r1, r2, method = "venkatraman", boot.n = {perm}))
cat(jsonlite::toJSON(list(
  boot_wall = b$wall, boot_cpu = b$cpu, boot_d = unname(b$value$statistic),
  venk_wall = v$wall, venk_cpu = v$cpu, venk_e = unname(v$value$statistic),
  version = as.character(packageVersion("pROC"))), auto_unbox = TRUE, digits = NA))
"""


def paired_log(n: int, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.4).astype(np.int64)
    shared = rng.normal(size=n)
    parts = [
        pl.DataFrame(
            {
                "model": m,
                "fold": 0,
                "sample": np.arange(n),
                "score": shared + shift * y + rng.normal(0, 0.8, n),
                "label": y,
            }
        )
        for m, shift in (("a", 1.0), ("b", 0.8))
    ]
    return pl.concat(parts)


def timed(function, *args, **kwargs):  # type: ignore[no-untyped-def]
    wall, cpu = time.perf_counter(), time.process_time()
    out = function(*args, **kwargs).collect()
    return time.perf_counter() - wall, time.process_time() - cpu, out


def run_r(path: Path, boot: int, perm: int) -> dict[str, float | str] | None:
    if shutil.which("Rscript") is None:
        return None
    script = R_SCRIPT.format(path=path, boot=boot, perm=perm)
    done = subprocess.run(
        ["Rscript", "-e", script], capture_output=True, text=True, check=True, timeout=3600
    )
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--replicates", type=int, default=2000)
    parser.add_argument("--venkatraman-r", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    log = paired_log(args.samples)
    b = args.replicates
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "log.csv"
        log.write_csv(path)
        r = run_r(path, b, args.venkatraman_r)
    rows = {"bootstrap_test": [], "venkatraman_test": []}  # type: dict[str, list[tuple[float, float]]]
    results = {}
    for i in range(args.rounds):
        for name, function, kw in (
            ("bootstrap_test", pr.bootstrap_test, {"n_boot": b}),
            ("venkatraman_test", pr.venkatraman_test, {"n_perm": b}),
        ):
            wall, cpu, out = timed(function, log, "a", "b", seed=i, **kw)
            rows[name].append((wall, cpu))
            results[name] = out.row(0, named=True)
    if r is not None:
        assert results["venkatraman_test"]["statistic"] == r["venk_e"], "Venkatraman's E differs"
        d = results["bootstrap_test"]["statistic"]
        assert abs(d / float(r["boot_d"]) - 1) < 8 / math.sqrt(b), "bootstrap D differs"
    print(f"{args.samples:,} paired samples, 2 models, {b:,} replicates; median of {args.rounds}")
    if r is not None:
        print(
            f"pROC {r['version']}; Venkatraman timed on {args.venkatraman_r} permutations x "
            f"{b / args.venkatraman_r:g}\n"
        )
    heads = ["test", "polaroc wall s", "polaroc CPU s", "pROC wall s", "pROC CPU s"]
    print("| " + " | ".join([*heads, "ratio wall", "ratio CPU"]) + " |")
    print("|---|---|---|---|---|---|---|")
    for name, key, scale in (
        ("bootstrap_test", "boot", 1.0),
        ("venkatraman_test", "venk", b / args.venkatraman_r),
    ):
        wall = float(np.median([w for w, _ in rows[name]]))
        cpu = float(np.median([c for _, c in rows[name]]))
        if r is None:
            print(f"| {name} | {wall:.2f} | {cpu:.2f} | – | – | – | – |")
            continue
        r_wall, r_cpu = float(r[f"{key}_wall"]) * scale, float(r[f"{key}_cpu"]) * scale
        print(
            f"| {name} | {wall:.2f} | {cpu:.2f} | {r_wall:.1f} | {r_cpu:.1f} | "
            f"{r_wall / wall:.0f}x | {r_cpu / cpu:.0f}x |"
        )


if __name__ == "__main__":
    main()
