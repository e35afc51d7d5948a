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


# ----------------------------------------------------------------- multiclass
# Hand & Till (2001) and Wu & Flach (2005) on one group of a long log, by looping over
# class pairs and comparing every pair of rows. Arguments are equal-length arrays of
# class, label and score (one element per log row); classes and labels are any
# comparable values.


def _direction(classes, labels, scores, i, j):
    """(A(i|j), sAUC(i|j)) from the class-i scores of label-i and label-j rows, or None."""
    x = scores[(classes == i) & (labels == i)]
    y = scores[(classes == i) & (labels == j)]
    if len(x) == 0 or len(y) == 0:
        return None
    with np.errstate(invalid="ignore"):  # inf - inf: sAUC is NaN, as the contract allows
        d = x[:, None] - y[None, :]
        return float(((d > 0) + 0.5 * (d == 0)).mean()), float((d * (d > 0)).mean())


def hand_till_pairs(classes, labels, scores) -> dict:
    """{(i, j): {"a_i_j", "a_j_i", "a", "sauc_i_j", "sauc_j_i", "sauc"}} for i < j.

    Pairs are the label values with samples; a direction needs class-i rows of label-i
    samples; a pair with no computable direction is left out.
    """
    from itertools import combinations

    classes, labels = np.asarray(classes, dtype=object), np.asarray(labels, dtype=object)
    scores = np.asarray(scores, dtype=float)
    out = {}
    for i, j in combinations(sorted(set(labels.tolist())), 2):
        forward = _direction(classes, labels, scores, i, j)
        backward = _direction(classes, labels, scores, j, i)
        held = [d for d in (forward, backward) if d is not None]
        if not held:
            continue
        out[(i, j)] = {
            "a_i_j": None if forward is None else forward[0],
            "a_j_i": None if backward is None else backward[0],
            "a": float(np.mean([d[0] for d in held])),
            "sauc_i_j": None if forward is None else forward[1],
            "sauc_j_i": None if backward is None else backward[1],
            "sauc": float(np.mean([d[1] for d in held])),
        }
    return out


def hand_till_m(classes, labels, scores) -> float:
    """Hand & Till's M (eq. 7): the mean of A(i, j) over the pairs of ``hand_till_pairs``."""
    pairs = hand_till_pairs(classes, labels, scores)
    return float(np.mean([p["a"] for p in pairs.values()])) if pairs else float("nan")


def proportions_correct(samples, classes, labels, scores) -> tuple[float, float]:
    """Hand & Till's C1 (argmax, ties 1/k) and C2 (pairwise proportion correct, ties ½).

    Every sample is assumed to have its own class's row and at least two rows.
    """
    rows: dict = {}
    for s, c, lab, x in zip(samples, classes, labels, scores, strict=True):
        rows.setdefault(s, ({}, lab))[0][c] = float(x)
    c1 = []
    pair_hits: dict = {}
    for by_class, lab in rows.values():
        top = max(by_class.values())
        winners = [c for c, x in by_class.items() if x == top]
        c1.append(1.0 / len(winners) if lab in winners else 0.0)
        for other, x in by_class.items():
            if other == lab:
                continue
            key = tuple(sorted((lab, other)))
            hit = 1.0 if by_class[lab] > x else 0.5 if by_class[lab] == x else 0.0
            pair_hits.setdefault(key, []).append(hit)
    present = {lab for _, lab in rows.values()}
    c2 = [np.mean(h) for (i, j), h in pair_hits.items() if i in present and j in present]
    return float(np.mean(c1)), float(np.mean(c2))


# ---------------------------------------------------- variances by structural components
#
# Brute force over every pair of samples, written from the papers' definitions: the
# oracles of polaroc's M variance (DeLong, DeLong & Clarke-Pearson 1988, eq. 3-5,
# generalised to Hand & Till's M) and clustered AUC variance (Obuchowski 1997, eq. 3-6).


def hand_till_m_variance(samples, classes, labels, scores) -> tuple[float, float]:
    """(M, Var(M)) from each sample's structural component for M.

    For a direction A(i|j) with coefficient w in M (1 / (number of label pairs × number
    of directions the pair holds)), a label-i sample x adds w × (share of label-j samples
    whose class-i score it beats, ties ½) to its component h(x), and a label-j sample y
    adds w × (share of label-i samples whose class-i score beats its own, ties ½).
    Var(M) = Σ_k s²_k / n_k with s²_k the sample variance of h over the label-k samples.
    """
    from itertools import combinations

    samples = np.asarray(samples, dtype=object)
    classes, labels = np.asarray(classes, dtype=object), np.asarray(labels, dtype=object)
    scores = np.asarray(scores, dtype=float)
    label_of = dict(zip(samples.tolist(), labels.tolist(), strict=True))
    score_of = {
        (s, c): x for s, c, x in zip(samples.tolist(), classes.tolist(), scores, strict=True)
    }
    members = {k: [s for s, lab in label_of.items() if lab == k] for k in set(label_of.values())}

    def held(i, j):  # A(i|j) needs class-i scores of label-i and label-j samples
        return any((s, i) in score_of for s in members[i]) and any(
            (s, i) in score_of for s in members[j]
        )

    pairs = {}
    for i, j in combinations(sorted(members), 2):
        directions = [d for d in ((i, j), (j, i)) if held(*d)]
        if directions:
            pairs[(i, j)] = directions
    h = dict.fromkeys(label_of, 0.0)
    m = 0.0
    for directions in pairs.values():
        for i, j in directions:
            w = 1.0 / (len(pairs) * len(directions))
            xs = [s for s in members[i] if (s, i) in score_of]
            ys = [s for s in members[j] if (s, i) in score_of]
            kernel = np.array(
                [
                    [
                        float(score_of[x, i] > score_of[y, i])
                        + 0.5 * float(score_of[x, i] == score_of[y, i])
                        for y in ys
                    ]
                    for x in xs
                ]
            )
            m += w * kernel.mean()
            for x, value in zip(xs, kernel.mean(axis=1), strict=True):
                h[x] += w * value
            for y, value in zip(ys, kernel.mean(axis=0), strict=True):
                h[y] += w * value
    var = 0.0
    for members_k in members.values():
        values = np.array([h[s] for s in members_k])
        var += values.var(ddof=1) / len(values)
    return m, var


def obuchowski_variance(scores, positive, clusters) -> tuple[float, float]:
    """(AUC, Var(AUC)) of Obuchowski (1997): DeLong's components summed per cluster.

    With V₁₀(x) the share of negatives a positive x beats (ties ½) and V₀₁(y) the share of
    positives that beat a negative y, summed per cluster (V₁₀ᵢ, V₀₁ᵢ; cluster i holds mᵢ
    positives and nᵢ negatives, M and N in all): S₁₀ = I₁₀/((I₁₀ − 1)M) Σᵢ (V₁₀ᵢ − mᵢθ)²,
    S₀₁ = I₀₁/((I₀₁ − 1)N) Σᵢ (V₀₁ᵢ − nᵢθ)², S₁₁ = I/(I − 1) Σᵢ (V₁₀ᵢ − mᵢθ)(V₀₁ᵢ − nᵢθ),
    Var = S₁₀/M + S₀₁/N + 2 S₁₁/(MN); I₁₀ (I₀₁) counts the clusters holding a positive
    (a negative), I all clusters.
    """
    scores = np.asarray(scores, dtype=float)
    positive = np.asarray(positive, dtype=bool)
    clusters = np.asarray(clusters, dtype=object)
    x, y = scores[positive], scores[~positive]
    kernel = (x[:, None] > y[None, :]) + 0.5 * (x[:, None] == y[None, :])
    big_m, big_n = len(x), len(y)
    theta = kernel.mean()
    v10 = dict.fromkeys(set(clusters.tolist()), 0.0)
    v01 = dict.fromkeys(set(clusters.tolist()), 0.0)
    m = dict.fromkeys(v10, 0)
    n = dict.fromkeys(v10, 0)
    for c, value in zip(clusters[positive].tolist(), kernel.mean(axis=1), strict=True):
        v10[c] += value
        m[c] += 1
    for c, value in zip(clusters[~positive].tolist(), kernel.mean(axis=0), strict=True):
        v01[c] += value
        n[c] += 1
    i10 = sum(1 for c in m if m[c] > 0)
    i01 = sum(1 for c in n if n[c] > 0)
    i_all = len(v10)
    s10 = sum((v10[c] - m[c] * theta) ** 2 for c in v10) * i10 / ((i10 - 1) * big_m)
    s01 = sum((v01[c] - n[c] * theta) ** 2 for c in v01) * i01 / ((i01 - 1) * big_n)
    s11 = sum((v10[c] - m[c] * theta) * (v01[c] - n[c] * theta) for c in v10) * i_all / (i_all - 1)
    return float(theta), float(s10 / big_m + s01 / big_n + 2 * s11 / (big_m * big_n))
