"""Byte-identical tables from run to run, whatever the thread count (issue 34).

Float addition is not associative, and a streaming query adds a group's rows in the
order its threads took them. The same tables, computed twice in this process and once
in a fresh one with ``POLARS_MAX_THREADS=1``, on a log large enough for the streaming
engine to cut every group into several morsels, must give the same CSV bytes. The
oracle is the table itself under another schedule; the values are checked against
scipy elsewhere.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import polaroc as pr

ROOT = Path(__file__).resolve().parents[2]

Table = Callable[[pl.LazyFrame], pl.LazyFrame]


def _per_fold(log: pl.LazyFrame) -> pl.LazyFrame:
    return pr.evaluate(log)


TABLES: dict[str, Table] = {
    "evaluate": _per_fold,
    "anova": lambda log: pr.anova(_per_fold(log)),
    "duncan": lambda log: pr.duncan(_per_fold(log)),
    "paired_ttest": lambda log: pr.paired_ttest(_per_fold(log), "sauc"),
    "bayes_ttest": lambda log: pr.bayes_ttest(_per_fold(log), "average_precision", rope=0.001),
    "wilcoxon_test": lambda log: pr.wilcoxon_test(_per_fold(log), "sauc"),
    "friedman_test": lambda log: pr.friedman_test(_per_fold(log), "sauc"),
    "sign_test": lambda log: pr.sign_test(_per_fold(log), "average_precision"),
    "verdict": lambda log: pr.verdict(_per_fold(log), "sauc"),
    "pooling_table": lambda log: pr.pooling_table(log),
    "evaluate_weighted": lambda log: pr.evaluate(log, weight="weight"),
}


def write_log(path: Path, *, samples: int = 2000, seed: int = 3) -> Path:
    """5 data sets × 3 models × 2 repeats × 5 folds × ``samples`` samples (300,000 rows)."""
    rng = np.random.default_rng(seed)
    parts = []
    for d in range(5):
        for r in range(2):
            for f in range(5):
                label = rng.random(samples) < 0.35
                for m, shift in (("a", 1.0), ("b", 1.08), ("c", 0.8)):
                    score = rng.normal(0, 1, samples) + (shift + 0.05 * d) * label
                    parts.append(pl.DataFrame({
                        "dataset": f"d{d}", "model": m, "repeat": r, "fold": f,
                        "sample": np.arange(samples) + samples * (5 * d + f),  # unique per repeat
                        "score": score, "label": label,
                        "weight": rng.uniform(0.5, 2.0, samples),
                    }))  # fmt: skip
    pl.concat(parts).write_parquet(path)
    return path


def _one_test_set(log: pl.LazyFrame) -> pl.LazyFrame:
    """The first repeat's 50,000 samples (150,000 rows) as one test set."""
    one = log.filter(pl.col("repeat") == 0).with_columns(fold=pl.lit(0, pl.Int64))
    return one.drop("dataset", "repeat")


ONE_TEST_SET: dict[str, Table] = {  # DeLong's tests on one held-out split's samples
    "delong_test": lambda log: pr.delong_test(_one_test_set(log), "a", "b"),
    "delong_omnibus": lambda log: pr.delong_omnibus(_one_test_set(log)),
    "verdict_delong": lambda log: pr.verdict(
        _per_fold(_one_test_set(log)), log=_one_test_set(log).collect()
    ),
}


def digests(path: str) -> dict[str, str]:
    """SHA-256 of every table's CSV (rows sorted by their keys), from the Parquet log."""
    out = {}
    for name, table in {**TABLES, **ONE_TEST_SET}.items():
        frame = table(pl.scan_parquet(path)).collect()
        keys = [c for c in frame.columns if frame.schema[c] in (pl.String, pl.Int64, pl.Int32)]
        buffer = io.BytesIO()
        frame.sort(keys, nulls_last=True, maintain_order=True).write_csv(buffer)
        out[name] = hashlib.sha256(buffer.getvalue()).hexdigest()
    return out


def in_a_fresh_process(path: Path, threads: int) -> dict[str, str]:
    code = "import json, sys; from tests.compare.test_deterministic import digests; "
    code += "print(json.dumps(digests(sys.argv[1])))"
    path_ = os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), str(ROOT)) if p)
    env = {**os.environ, "POLARS_MAX_THREADS": str(threads), "PYTHONPATH": path_}
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, env=env,
        cwd=ROOT, check=True, timeout=900,
    )  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def big_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_log(tmp_path_factory.mktemp("deterministic") / "log.parquet")


def test_tables_are_byte_identical_across_runs_and_thread_counts(big_log):
    first = digests(str(big_log))
    assert digests(str(big_log)) == first  # twice in this process
    assert in_a_fresh_process(big_log, threads=1) == first  # and on one thread


def test_comparison_tables_ignore_the_order_of_the_rows():
    """A per-fold table's rows in any order (as a group-by yields them): the same bytes."""
    rng = np.random.default_rng(11)
    rows = [
        {"dataset": f"d{d}", "model": m, "repeat": r, "fold": f, "auc": 0.7 + 0.02 * i + rng.normal(0, 0.01)}
        for d in range(5) for i, m in enumerate("abcde") for r in range(3) for f in range(4)
    ]  # fmt: skip
    table = pl.DataFrame(rows)
    tables: dict[str, Callable[[pl.LazyFrame], pl.LazyFrame]] = {
        "anova": pr.anova,
        "duncan": pr.duncan,
        "paired_ttest": pr.paired_ttest,
        "bayes_ttest": lambda t: pr.bayes_ttest(t, rope=0.01),
        "wilcoxon_test": pr.wilcoxon_test,
        "verdict": pr.verdict,
        "se_vs_sd": lambda t: pr.se_vs_sd(t.with_columns(se=pl.col("auc") / 30), se="se"),
    }
    for name, function in tables.items():
        seen = set()
        for seed in range(6):
            shuffled = table.sample(fraction=1.0, shuffle=True, seed=seed).lazy()
            buffer = io.BytesIO()
            function(shuffled).collect().write_csv(buffer)
            seen.add(hashlib.sha256(buffer.getvalue()).hexdigest())
        assert len(seen) == 1, name


def test_exact_sums_equal_fsum_in_any_order():
    """ExactSum: within a few ulps of math.fsum (the correctly rounded sum), whatever the order."""
    import math

    from polaroc.core.sums import ExactSum

    rng = np.random.default_rng(5)
    n = 300_000
    value = rng.lognormal(0, 3, n) * rng.choice([-1.0, 1.0], n)  # 20 orders of magnitude
    group = rng.integers(0, 7, n)
    frame = pl.DataFrame({"g": group, "v": value}).with_columns(
        bound=pl.col("v").abs().max().over("g")
    )
    exact = ExactSum("s", pl.col("v"), pl.col("bound"))
    results = set()
    for seed in range(3):
        shuffled = frame.sample(fraction=1.0, shuffle=True, seed=seed).lazy()
        out = shuffled.group_by("g").agg(exact.aggs()).with_columns(exact.result()).sort("g")
        results.add(tuple(out.collect(engine="streaming")["s"].to_list()))
    assert len(results) == 1
    (sums,) = results
    for g, got in enumerate(sums):
        terms = value[group == g]
        expected = math.fsum(terms)
        assert got == pytest.approx(expected, rel=1e-12, abs=np.abs(terms).max() * 2.0**-70)
    # a non-finite term: the float sum's inf or NaN, as a plain sum gives it
    odd = pl.DataFrame({"g": [0, 0, 1, 1, 2], "v": [1.0, np.inf, np.nan, 2.0, None]})
    odd = odd.with_columns(bound=pl.lit(4.0))
    got = odd.group_by("g").agg(exact.aggs()).with_columns(exact.result()).sort("g")["s"]
    assert got[0] == np.inf
    assert np.isnan(got[1])
    assert got[2] == 0.0  # no value: 0, as sum
