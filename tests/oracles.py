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


# ------------------------------------------------------------------ ROC curves


def counts_at(scores, positive, thresholds) -> tuple[np.ndarray, np.ndarray]:
    """(fp, tp) at each threshold: negatives and positives with score >= threshold."""
    s = np.asarray(scores, dtype=float)
    p = np.asarray(positive, dtype=bool)
    predicted = s[None, :] >= np.asarray(thresholds, dtype=float)[:, None]
    return (predicted & ~p).sum(axis=1), (predicted & p).sum(axis=1)


def bradley_trapezoid(fpr, tpr) -> float:
    """Bradley (1997) eq. 7-9 over points sorted by alpha, closed with (0, 0) and (1, 1).

    Each step adds the rectangle under the previous point's sensitivity plus the
    triangle of the rise.
    """
    fpr, tpr = np.asarray(fpr, dtype=float), np.asarray(tpr, dtype=float)
    order = np.lexsort((tpr, fpr))
    alpha = np.r_[0.0, fpr[order], 1.0]
    sens = np.r_[0.0, tpr[order], 1.0]
    total = 0.0
    for i in range(1, alpha.size):
        d_alpha = alpha[i] - alpha[i - 1]
        total += sens[i - 1] * d_alpha + 0.5 * (sens[i] - sens[i - 1]) * d_alpha
    return total


def tpr_for_fpr(fpr, tpr, x: float) -> float:
    """Fawcett (2006) Algorithm 4, TPR_FOR_FPR: interpolate after the last point with fpr <= x."""
    i = 0
    while i + 1 < len(fpr) and fpr[i + 1] <= x:
        i += 1
    if fpr[i] == x or i + 1 == len(fpr):
        return float(tpr[i])
    return float(tpr[i] + (tpr[i + 1] - tpr[i]) * (x - fpr[i]) / (fpr[i + 1] - fpr[i]))


def on_segment(p, q, r) -> bool:
    """Whether integer point q lies on the segment from p to r (exact)."""
    cross = (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])
    within_x = min(p[0], r[0]) <= q[0] <= max(p[0], r[0])
    within_y = min(p[1], r[1]) <= q[1] <= max(p[1], r[1])
    return cross == 0 and within_x and within_y
