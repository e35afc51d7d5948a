"""The declared NumPy evaluator of the count schema: the AUCs of bootstrap replicates.

A stratified bootstrap replicate draws n₊ positives and n₋ negatives with replacement.
With the negatives sorted by score, the drawn negatives below a positive of score s,
ties counting ½, are C(L(s)) + ½ (C(R(s)) − C(L(s))), where C is the running count of
the replicate's drawn negatives in score order and [L(s), R(s)) the run of negatives
tied with s: the count schema's ``neg_below2 / 2`` of that positive. So a replicate's
AUC (:func:`polaroc.core.formulas.auc`, 2U over 2n₊n₋) needs no sort: one ``bincount``
gives every replicate's counts (a B × n₋ array), one ``cumsum`` their running counts, and
a gather at the drawn positives' runs their AUCs — O(B·n) for B replicates, no loop over
replicates. Declared in ``docs/architecture.md`` with its benchmark
(``benchmarks/bench_core.py``: against the list evaluator on the drawn rows) and tested
equal to the core (``tests/metrics/test_counting_core.py``).

Clustered (``cluster=``): a replicate draws whole clusters, so its samples are drawn
with multiplicities t (how many times its cluster was drawn) and its class sizes vary;
its AUC is Σ tₓ (C(L) + C(R)) over the positives x, C the running sum of the negatives'
multiplicities, over 2 (Σ tₓ)(Σ t_y) — the same integers as above when every sample is
its own cluster.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Draws", "cluster_draws", "draws", "replicate_aucs", "weighted_replicate_aucs"]

Draws = tuple[np.ndarray, np.ndarray]


def draws(rng: np.random.Generator, n_pos: int, n_neg: int, n_boot: int) -> Draws:
    """``n_boot`` stratified replicates: the drawn positions among the positives, negatives."""
    pos = rng.integers(0, n_pos, (n_boot, n_pos), dtype=np.int32)
    return pos, rng.integers(0, n_neg, (n_boot, n_neg), dtype=np.int32)


def cluster_draws(
    rng: np.random.Generator, stratum: np.ndarray, unit: np.ndarray, n_boot: int
) -> np.ndarray:
    """Each row's multiplicity in ``n_boot`` replicates that draw whole clusters (B × rows).

    ``stratum`` is 0 for a cluster of positives only, 1 of negatives only, 2 holding both;
    ``unit`` the cluster's number 0 … n − 1 within its stratum
    (:func:`polaroc.metrics.draws.cluster_units`). Each stratum's n clusters are drawn n
    times per replicate, the strata in that order: with every sample its own cluster the
    random numbers are those of :func:`draws`.
    """
    times = np.zeros((n_boot, unit.size), dtype=np.int64)
    for code in (0, 1, 2):
        rows = stratum == code
        if not rows.any():
            continue
        n = int(unit[rows].max()) + 1
        drawn = rng.integers(0, n, (n_boot, n), dtype=np.int32)
        flat = np.arange(n_boot, dtype=np.int64)[:, None] * n + drawn
        counts = np.bincount(flat.ravel(), minlength=n_boot * n).reshape(n_boot, n)
        times[:, rows] = counts[:, unit[rows]]
    return times


def _tie_runs(
    score: np.ndarray, positive: np.ndarray, dtype: np.dtype
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The negatives' score order and each positive's run [L, R) of tied negatives in it."""
    pos, neg = score[positive], score[~positive]
    order = np.argsort(neg, kind="stable")
    sorted_neg = neg[order]
    low = np.searchsorted(sorted_neg, pos, side="left").astype(dtype)
    high = np.searchsorted(sorted_neg, pos, side="right").astype(dtype)
    return order, low, high


def weighted_replicate_aucs(
    score: np.ndarray, positive: np.ndarray, times: np.ndarray
) -> np.ndarray:
    """The AUC of every replicate whose rows are drawn ``times`` times (B × rows).

    NaN for a replicate without positives or negatives.
    """
    order, low, high = _tie_runs(score, positive, np.dtype(np.int64))
    t_pos, t_neg = times[:, positive], times[:, ~positive]
    running = np.zeros((times.shape[0], t_neg.shape[1] + 1), dtype=np.int64)
    np.cumsum(t_neg[:, order], axis=1, out=running[:, 1:])
    won2 = (t_pos * (running[:, low] + running[:, high])).sum(axis=1, dtype=np.int64)
    pairs = 2.0 * t_pos.sum(axis=1).astype(np.float64) * t_neg.sum(axis=1).astype(np.float64)
    out = np.full(times.shape[0], np.nan)
    np.divide(won2, pairs, out=out, where=pairs > 0)
    return out


def replicate_aucs(score: np.ndarray, positive: np.ndarray, drawn: Draws) -> np.ndarray:
    """The AUC of every replicate of ``drawn`` (indices into the positives and negatives)."""
    n_pos = int(positive.sum())
    n_neg = positive.size - n_pos
    idx_pos, idx_neg = drawn
    n_boot = idx_pos.shape[0]
    # counts and flat indices fit 32 bits (half the memory traffic) unless B·n₋ does not
    small = np.dtype(np.int32 if n_boot * (n_neg + 1) < 2**31 else np.int64)
    order, low, high = _tie_runs(score, positive, small)
    place = np.empty(n_neg, dtype=np.int64)
    place[order] = np.arange(n_neg)  # each negative's position in score order
    offsets = np.arange(n_boot, dtype=small)[:, None] * n_neg
    flat = offsets + place.astype(small)[idx_neg]
    counts = np.bincount(flat.ravel(), minlength=n_boot * n_neg).reshape(n_boot, n_neg)
    running = np.zeros((n_boot, n_neg + 1), dtype=small)
    np.cumsum(counts, axis=1, out=running[:, 1:])
    won2 = np.zeros(n_boot, dtype=np.int64)  # Σ over drawn positives of C(L) + C(R): 2U
    for end in (low, high):
        won2 += np.take_along_axis(running, end[idx_pos], axis=1).sum(axis=1, dtype=np.int64)
    return np.asarray(won2 / (2.0 * float(n_pos) * float(n_neg)), dtype=np.float64)
