"""The tests built for repeated cross-validation, on all pairs of 100 (and 20) models.

A per-fold table of 100 models × 10 repeats × 10 folds (4,950 model pairs) gets the
corrected repeated k-fold t (``pr.paired_ttest``) and the correlated Bayesian t
(``pr.bayes_ttest``); a 100 models × 5 repeats × 2 folds table gets the 5 × 2 cv t
and F tests. The same four tables are timed on 20 models (190 pairs), where a
table's fixed cost (validation, plan, scipy calls) weighs most (issue 26).
polaroc computes the four tables in one ``pl.collect_all``; the peer is a
Python loop over the pairs calling scipy (t and F tails on numpy formulas) and
baycomp's ``CorrelatedTTest``. ``pr.bayes_signed_rank`` (100 models × 10 data sets,
50,000 posterior samples a pair) is timed against baycomp's ``SignedRankTest`` loop,
which takes seconds a pair: it is timed on a subset of pairs and extrapolated to all
4,950. Every statistic is checked against the peer before anything is timed (1e-9;
the signed-rank probabilities within Monte Carlo error, 0.02).

Run: python -m benchmarks.bench_repeated [--models 20,100] [--repeat 3] [--baycomp-pairs 10]
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np
import polars as pl
from scipy import stats

import polaroc as pr
from benchmarks.common import DisagreementError, assert_agree, markdown, time_all

POLAROC = "polaroc: 4 tables in one collect_all"
LOOP = "scipy/baycomp loop over pairs"
ROPE = 0.01
SMALL = 20  # models of the small table (190 pairs)

try:  # optional: the test extra has it, the bench extra does not
    import baycomp
except ImportError:
    baycomp = None


def fold_table(models: int, repeats: int, folds: int, seed: int = 0) -> pl.DataFrame:
    """One AUC per (model, repeat, fold): model quality + split effect + noise."""
    rng = np.random.default_rng(seed)
    quality = rng.uniform(0.75, 0.85, models)
    split = rng.normal(0, 0.02, repeats * folds)
    auc = quality[:, None] + split[None, :] + rng.normal(0, 0.01, (models, repeats * folds))
    block = np.arange(repeats * folds)
    return pl.DataFrame(
        {
            "model": np.repeat(np.arange(models), repeats * folds),
            "repeat": np.tile(block // folds, models),
            "fold": np.tile(block % folds, models),
            "auc": auc.ravel(),
        }
    )


def dataset_table(models: int, datasets: int, seed: int = 1) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    quality = rng.uniform(0.75, 0.85, models)
    level = rng.uniform(0.6, 0.95, datasets)
    auc = quality[:, None] - 0.8 + level[None, :] + rng.normal(0, 0.01, (models, datasets))
    return pl.DataFrame(
        {
            "model": np.repeat(np.arange(models), datasets),
            "dataset": np.tile(np.arange(datasets), models),
            "auc": auc.ravel(),
        }
    )


def polaroc_tables(cv: pl.DataFrame, five: pl.DataFrame) -> list[pl.DataFrame]:
    return pl.collect_all(
        [
            pr.paired_ttest(cv),
            pr.bayes_ttest(cv, rope=ROPE),
            pr.paired_ttest_5x2cv(five),
            pr.combined_ftest_5x2cv(five),
        ]
    )


def matrix(table: pl.DataFrame) -> np.ndarray:
    """models × blocks, blocks in (repeat, fold) order."""
    ordered = table.sort("model", "repeat", "fold")
    return ordered["auc"].to_numpy().reshape(table["model"].n_unique(), -1)


def loop(cv: pl.DataFrame, five: pl.DataFrame, folds: int) -> dict[str, dict]:
    """The peer: one Python iteration per pair, scipy and baycomp inside."""
    x, y = matrix(cv), matrix(five)
    out: dict[str, dict] = {k: {} for k in ("t", "p", "bayes", "t52", "f52")}
    n = x.shape[1]
    for a, b in itertools.combinations(range(x.shape[0]), 2):
        d = x[a] - x[b]
        t = d.mean() / np.sqrt((1 / n + 1 / (folds - 1)) * d.var(ddof=1))
        out["t"][(a, b)] = t
        out["p"][(a, b)] = 2 * stats.t.sf(abs(t), n - 1)
        if baycomp is not None:
            out["bayes"][(a, b)] = baycomp.CorrelatedTTest.probs(x[a], x[b], ROPE, runs=n // folds)
        e = (y[a] - y[b]).reshape(5, 2)
        s2 = ((e - e.mean(axis=1, keepdims=True)) ** 2).sum()
        out["t52"][(a, b)] = (
            e[0, 0] / np.sqrt(s2 / 5),
            2 * stats.t.sf(abs(e[0, 0]) / np.sqrt(s2 / 5), 5),
        )
        out["f52"][(a, b)] = stats.f.sf((e**2).sum() / (2 * s2), 10, 5)
    return out


def pairs_of(df: pl.DataFrame, column: str) -> dict:
    return {(a, b): v for a, b, v in df.select("model_a", "model_b", column).iter_rows()}


def check(cv: pl.DataFrame, five: pl.DataFrame, folds: int) -> None:
    ttest, bayes, t52, f52 = polaroc_tables(cv, five)
    peer = loop(cv, five, folds)
    assert_agree(peer["t"], pairs_of(ttest, "statistic"), "corrected t vs numpy")
    assert_agree(peer["p"], pairs_of(ttest, "p_value"), "corrected t p-value vs scipy")
    if baycomp is not None:
        for i, column in enumerate(("p_a_higher", "p_rope", "p_b_higher")):
            expected = {k: v[i] for k, v in peer["bayes"].items()}
            assert_agree(expected, pairs_of(bayes, column), f"bayes_ttest {column} vs baycomp")
    assert_agree({k: v[0] for k, v in peer["t52"].items()}, pairs_of(t52, "statistic"), "5x2 t")
    assert_agree({k: v[1] for k, v in peer["t52"].items()}, pairs_of(t52, "p_value"), "5x2 p")
    assert_agree(peer["f52"], pairs_of(f52, "p_value"), "5x2 F p-value vs scipy")


def run_tables(models: int, repeats: int, folds: int, rounds: int) -> str:
    cv = fold_table(models, repeats, folds)
    five = fold_table(models, 5, 2, seed=2)
    check(cv, five, folds)
    timings = time_all(
        {
            POLAROC: lambda: polaroc_tables(cv, five),
            "pr.paired_ttest alone (corrected)": lambda: pr.paired_ttest(cv).collect(),
            "pr.bayes_ttest alone": lambda: pr.bayes_ttest(cv, rope=ROPE).collect(),
            LOOP: lambda: loop(cv, five, folds),
        },
        rounds,
        slow={LOOP: rounds if models <= SMALL else min(rounds, 2)},  # 0.1 s at 20 models
    )
    pairs = models * (models - 1) // 2
    title = (
        f"Repeated-CV tests: {models} models × {repeats} repeats × {folds} folds, and "
        f"× 5 × 2 ({pairs:,} pairs; corrected t, Bayesian t, 5×2 t and F)"
    )
    return markdown(title, timings, POLAROC)


def run_signed_rank(models: int, datasets: int, samples: int, baycomp_pairs: int) -> str:
    table = dataset_table(models, datasets)
    pairs = models * (models - 1) // 2
    start = time.perf_counter()
    ours = pr.bayes_signed_rank(table, rope=ROPE, n_samples=samples, seed=0).collect()
    polaroc_s = time.perf_counter() - start
    lines = [
        f"### Bayesian signed-rank: {models} models × {datasets} data sets "
        f"({pairs:,} pairs × {samples:,} posterior samples)",
        "",
        "| method | pairs timed | seconds | s per pair | all pairs, s | × polaroc |",
        "|---|---:|---:|---:|---:|---:|",
        f"| pr.bayes_signed_rank (one seeded draw) | {pairs:,} | {polaroc_s:.1f} "
        f"| {polaroc_s / pairs:.4f} | {polaroc_s:.1f} | 1.00 |",
    ]
    if baycomp is None:
        return "\n".join(lines)
    wide = table.sort("model", "dataset")["auc"].to_numpy().reshape(models, datasets)
    chosen = list(itertools.combinations(range(models), 2))[:: max(1, pairs // baycomp_pairs)]
    chosen = chosen[:baycomp_pairs]
    start = time.perf_counter()
    theirs = {
        (a, b): baycomp.SignedRankTest.probs(wide[a], wide[b], ROPE, nsamples=samples)
        for a, b in chosen
    }
    baycomp_s = time.perf_counter() - start
    got = {
        (a, b): row
        for a, b, *row in ours.select(
            "model_a", "model_b", "p_a_higher", "p_rope", "p_b_higher"
        ).iter_rows()
    }
    worst = max(abs(np.subtract(got[k], v)).max() for k, v in theirs.items())
    if worst > 0.02:
        raise DisagreementError(f"bayes_signed_rank differs from baycomp by {worst:.3f}")
    per_pair = baycomp_s / len(chosen)
    lines.append(
        f"| baycomp SignedRankTest loop (extrapolated) | {len(chosen)} | {baycomp_s:.1f} "
        f"| {per_pair:.3f} | {per_pair * pairs:.0f} | {per_pair * pairs / polaroc_s:.1f} |"
    )
    lines.append("")
    lines.append(f"Largest difference from baycomp on the timed pairs: {worst:.4f} (Monte Carlo).")
    return "\n".join(lines)


def table_rounds(models: int, rounds: int) -> int:
    """Rounds for ``models``: a small table takes milliseconds, so time it more often."""
    return rounds if models > SMALL else max(rounds, 25)


def run(models: int, rounds: int, samples: int, baycomp_pairs: int) -> str:
    sizes = sorted({SMALL, models})
    tables = [run_tables(m, 10, 10, table_rounds(m, rounds)) for m in sizes]
    return "\n\n".join([*tables, run_signed_rank(models, 10, samples, baycomp_pairs)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", default=f"{SMALL},100", help="comma-separated model counts")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--samples", type=int, default=50_000)
    parser.add_argument("--baycomp-pairs", type=int, default=10)
    parser.add_argument("--sections", default="tables,signed-rank")
    args = parser.parse_args()
    sizes = [int(m) for m in args.models.split(",")]
    if "tables" in args.sections:
        for models in sizes:
            rounds = table_rounds(models, args.repeat)
            print(run_tables(models, 10, 10, rounds) + "\n", flush=True)
    if "signed-rank" in args.sections:
        print(run_signed_rank(max(sizes), 10, args.samples, args.baycomp_pairs), flush=True)


if __name__ == "__main__":
    main()
