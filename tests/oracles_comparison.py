"""Slow, textbook references for the comparison tables (ANOVA, Duncan, DeLong, ranks).

Each is written the way a textbook states the procedure — loops, recursion, all
pairs — independent of polaroc's joins and window functions.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pandas as pd
import statsmodels.api as sm
import statsmodels.formula.api as smf
from scipy import stats


def anova_two_way(table, metric: str = "auc") -> pd.DataFrame:
    """statsmodels' ``anova_lm(ols("y ~ C(model) + C(fold)"))`` on a polars table."""
    frame = table.select("model", "fold", metric).to_pandas()
    fit = smf.ols(f"{metric} ~ C(model) + C(fold)", data=frame).fit()
    return sm.stats.anova_lm(fit)


@cache
def studentized_range_ppf(q: float, p: int, df: float) -> float:
    """scipy's quantile, cached (it integrates numerically, ~0.1 s a call)."""
    return float(stats.studentized_range.ppf(q, p, df))


def duncan_critical_ranges(ms_error: float, df_error: float, n_folds: int, k: int, alpha=0.05):
    """{p: R_p} with r_p = studentized_range.ppf((1 − α)^(p−1), p, df_error)."""
    return {
        p: studentized_range_ppf((1 - alpha) ** (p - 1), p, float(df_error))
        * np.sqrt(ms_error / n_folds)
        for p in range(2, k + 1)
    }


def duncan_step_down(means: dict, critical: dict, *, protect: bool = True):
    """Duncan's procedure as taught: largest ranges first, skipping protected ones.

    Returns ``(significant, letters)``: the set of significantly different model
    pairs (frozensets) and, per model, the letters of the maximal homogeneous sets
    holding it (``a`` = the set with the highest mean). ``protect=False`` tests every
    range on its own, as R's agricolae does.
    """
    order = sorted(means, key=lambda m: (-means[m], m))
    m = [means[x] for x in order]
    k = len(order)
    homogeneous: list[tuple[int, int]] = []

    def covered(i: int, j: int) -> bool:
        return any(a <= i and j <= b for a, b in homogeneous)

    significant = set()
    for p in range(k, 1, -1):
        for i in range(k - p + 1):
            j = i + p - 1
            if protect and covered(i, j):
                continue  # inside a non-significant range: never declared different
            if m[i] - m[j] > critical[p]:
                significant.add(frozenset((order[i], order[j])))
            else:
                homogeneous.append((i, j))
    if not protect:
        return significant, None
    homogeneous += [(i, i) for i in range(k) if not covered(i, i)]
    maximal = sorted(
        r
        for r in set(homogeneous)
        if not any(o != r and o[0] <= r[0] <= r[1] <= o[1] for o in homogeneous)
    )
    letters = {x: "" for x in order}
    for index, (lo, hi) in enumerate(maximal):
        for pos in range(lo, hi + 1):
            letters[order[pos]] += "abcdefghijklmnopqrstuvwxyz"[index]
    return significant, letters


def delong_two_models(score_a, score_b, positive) -> dict[str, float]:
    """DeLong et al. (1988) from the full n₊ × n₋ comparison matrix of each model."""
    positive = np.asarray(positive, dtype=bool)
    placements = {}
    for name, s in (("a", score_a), ("b", score_b)):
        s = np.asarray(s, dtype=float)
        x, y = s[positive], s[~positive]
        psi = (x[:, None] > y[None, :]) + 0.5 * (x[:, None] == y[None, :])
        placements[name] = (psi.mean(axis=1), psi.mean(axis=0))  # V10, V01
    m, n = positive.sum(), (~positive).sum()
    s10 = np.cov(placements["a"][0], placements["b"][0])
    s01 = np.cov(placements["a"][1], placements["b"][1])
    s = s10 / m + s01 / n
    auc_a, auc_b = placements["a"][0].mean(), placements["b"][0].mean()
    z = (auc_a - auc_b) / np.sqrt(s[0, 0] + s[1, 1] - 2 * s[0, 1])
    return {
        "auc_a": auc_a,
        "auc_b": auc_b,
        "var_a": s[0, 0],
        "var_b": s[1, 1],
        "cov": s[0, 1],
        "z": z,
        "p_value": 2 * stats.norm.sf(abs(z)),
    }
