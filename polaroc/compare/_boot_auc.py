"""The AUCs of every stratified bootstrap replicate of one group, all replicates at once.

A replicate draws n₊ positives and n₋ negatives with replacement. With the negatives
sorted by score, the count-weighted number of drawn negatives below a positive of
score s is C(L(s)) + ½ (C(R(s)) − C(L(s))), where C is the running count of the
replicate's drawn negatives in score order and [L(s), R(s)) the block of negatives tied
with s. So a replicate's AUC needs no sort: one ``bincount`` gives every replicate's
counts (a B × n₋ array), one ``cumsum`` their running counts, and a gather at the drawn
positives' blocks their AUCs — O(B·n) for B replicates, in numpy arrays (no loop over
replicates). Called once per group on that group's rows.
"""

from __future__ import annotations

import numpy as np
import polars as pl

__all__ = ["boot_auc_sd"]

Draws = tuple[np.ndarray, np.ndarray]


def _draws(rng: np.random.Generator, n_pos: int, n_neg: int, n_boot: int) -> Draws:
    pos = rng.integers(0, n_pos, (n_boot, n_pos), dtype=np.int32)
    return pos, rng.integers(0, n_neg, (n_boot, n_neg), dtype=np.int32)


def _replicate_aucs(score: np.ndarray, positive: np.ndarray, draws: Draws) -> np.ndarray:
    pos, neg = score[positive], score[~positive]
    n_pos, n_neg = pos.size, neg.size
    idx_pos, idx_neg = draws
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
    both = np.zeros(n_boot, dtype=np.int64)  # Σ over drawn positives of C(L) + C(R)
    for end in (low, high):
        both += np.take_along_axis(running, end[idx_pos], axis=1).sum(axis=1, dtype=np.int64)
    return np.asarray(0.5 * both / (float(n_pos) * float(n_neg)), dtype=np.float64)


def boot_auc_sd(rows: pl.Series, n_boot: int, seed: int, paired: bool) -> pl.Series:
    """``sd_diff`` and ``n_boot`` of AUC_a − AUC_b over the replicates of one group.

    ``rows`` is a struct Series of the group's rows, in a fixed sample order, with
    fields ``a`` (model a's score; null on model b's rows when unpaired), ``b``,
    ``positive`` and ``key`` (a hash of the group, the same on every row, which seeds
    the group's draws with ``seed``). Paired: both models read the same draws;
    unpaired: model a's rows (non-null ``a``) and model b's are drawn independently.
    A group without positives or negatives on a side gives nulls, one with a NaN
    score NaN.
    """
    out = pl.Series([{"sd_diff": None, "n_boot": 0}])
    if len(rows) == 0:
        return out
    a = rows.struct.field("a").to_numpy()
    b = rows.struct.field("b").to_numpy()
    positive = rows.struct.field("positive").to_numpy().astype(bool)
    key = int(rows.struct.field("key")[0])
    rng = np.random.default_rng([seed, key])
    if paired:
        sides = [(a, positive), (b, positive)]
    else:
        on_a = rows.struct.field("a").is_not_null().to_numpy()
        sides = [(a[on_a], positive[on_a]), (b[~on_a], positive[~on_a])]
    if any(p.all() or not p.any() for _, p in sides):
        return out
    if any(np.isnan(s).any() for s, _ in sides):
        return pl.Series([{"sd_diff": float("nan"), "n_boot": n_boot}])
    if paired:
        draws = _draws(rng, int(positive.sum()), int((~positive).sum()), n_boot)
        aucs = [_replicate_aucs(s, p, draws) for s, p in sides]
    else:
        aucs = [
            _replicate_aucs(s, p, _draws(rng, int(p.sum()), int((~p).sum()), n_boot))
            for s, p in sides
        ]
    diff = aucs[0] - aucs[1]
    return pl.Series([{"sd_diff": float(np.std(diff, ddof=1)), "n_boot": n_boot}])
