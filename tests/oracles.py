"""Slow, obviously-correct references the metrics are tested against.

Each one is a direct transcription of a definition (all pairs, all placements),
independent of polaroc's rank and threshold-count machinery.
"""

from __future__ import annotations

import numpy as np


def _split(scores, positive):
    scores = np.asarray(scores, dtype=float)
    positive = np.asarray(positive, dtype=bool)
    return scores[positive], scores[~positive]


def pair_auc(scores, positive) -> float:
    """P(x > y) + ½ P(x = y) over every (positive x, negative y) pair."""
    x, y = _split(scores, positive)
    if len(x) == 0 or len(y) == 0:
        return float("nan")
    d = x[:, None] - y[None, :]
    return float(((d > 0) + 0.5 * (d == 0)).mean())


def pair_sauc_parts(scores, positive) -> dict[str, float]:
    """Wu & Flach (2005) Definition 1 by summing over every pair."""
    x, y = _split(scores, positive)
    above = x[:, None] > y[None, :]
    n = above.size
    r_pos = float((x[:, None] * above).sum() / n)
    r_neg = float((y[None, :] * above).sum() / n)
    return {
        "r_pos": r_pos,
        "r_neg": r_neg,
        "sauc": float(((x[:, None] - y[None, :]) * above).sum() / n),
        "mean_pos": float(x.mean()),
        "mean_neg": float(y.mean()),
    }


def delong_variance(scores, positive) -> float:
    """DeLong et al. (1988): placement values by pair counts, then their variances."""
    x, y = _split(scores, positive)
    psi = (x[:, None] > y[None, :]) + 0.5 * (x[:, None] == y[None, :])
    v10 = psi.mean(axis=1)  # one per positive
    v01 = psi.mean(axis=0)  # one per negative
    return float(v10.var(ddof=1) / len(x) + v01.var(ddof=1) / len(y))
