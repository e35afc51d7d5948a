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
"""

from __future__ import annotations

import numpy as np

__all__ = ["Draws", "draws", "replicate_aucs"]

Draws = tuple[np.ndarray, np.ndarray]


def draws(rng: np.random.Generator, n_pos: int, n_neg: int, n_boot: int) -> Draws:
    """``n_boot`` stratified replicates: the drawn positions among the positives, negatives."""
    pos = rng.integers(0, n_pos, (n_boot, n_pos), dtype=np.int32)
    return pos, rng.integers(0, n_neg, (n_boot, n_neg), dtype=np.int32)


def replicate_aucs(score: np.ndarray, positive: np.ndarray, drawn: Draws) -> np.ndarray:
    """The AUC of every replicate of ``drawn`` (indices into the positives and negatives)."""
    pos, neg = score[positive], score[~positive]
    n_pos, n_neg = pos.size, neg.size
    idx_pos, idx_neg = drawn
    n_boot = idx_pos.shape[0]
    order = np.argsort(neg, kind="stable")
    place = np.empty(n_neg, dtype=np.int64)
    place[order] = np.arange(n_neg)  # each negative's position in score order
    # counts and flat indices fit 32 bits (half the memory traffic) unless B·n₋ does not
    small = np.dtype(np.int32 if n_boot * (n_neg + 1) < 2**31 else np.int64)
    sorted_neg = neg[order]
    low = np.searchsorted(sorted_neg, pos, side="left").astype(small)
    high = np.searchsorted(sorted_neg, pos, side="right").astype(small)
    offsets = np.arange(n_boot, dtype=small)[:, None] * n_neg
    flat = offsets + place.astype(small)[idx_neg]
    counts = np.bincount(flat.ravel(), minlength=n_boot * n_neg).reshape(n_boot, n_neg)
    running = np.zeros((n_boot, n_neg + 1), dtype=small)
    np.cumsum(counts, axis=1, out=running[:, 1:])
    won2 = np.zeros(n_boot, dtype=np.int64)  # Σ over drawn positives of C(L) + C(R): 2U
    for end in (low, high):
        won2 += np.take_along_axis(running, end[idx_pos], axis=1).sum(axis=1, dtype=np.int64)
    return np.asarray(won2 / (2.0 * float(n_pos) * float(n_neg)), dtype=np.float64)
