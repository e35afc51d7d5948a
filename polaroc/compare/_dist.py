"""Distribution functions of test statistics, as expressions on small result tables.

The normal tail stays in Polars (``Expr.erfc``). Polars has no t, F, chi² or
studentized-range distribution, so those call scipy through ``map_batches`` on the
columns of a *result* table (one row per model pair, ANOVA source or range size),
never on log rows. The calls are elementwise, keep null inputs null and work in the
in-memory and streaming engines.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from math import sqrt

import numpy as np
import polars as pl
from scipy import stats

__all__ = [
    "binom_half_p",
    "chi2_sf",
    "f_sf",
    "normal_sf",
    "signed_rank_tails",
    "studentized_range_ppf",
    "studentized_range_sf",
    "t_p_value",
    "t_ppf",
    "t_sf",
]


def normal_sf(z: pl.Expr) -> pl.Expr:
    """Upper tail of the standard normal, ``1 − Φ(z) = ½ erfc(z / √2)``, in Polars."""
    return 0.5 * (z / sqrt(2.0)).erfc()


def _elementwise(function: Callable[..., np.ndarray], *args: pl.Expr | float) -> pl.Expr:
    """Apply a vectorised numpy/scipy ``function`` to ``args`` as one ``Float64`` column.

    A row with any null argument gives null; NaN arguments give whatever scipy gives
    (NaN), so a NaN statistic never becomes a finite p-value. The arguments reach
    ``function`` as ``Float64`` arrays of one length (a literal is broadcast);
    one Python call per batch of result rows, with no per-call copies beyond the
    arrays themselves.
    """
    fields = [(a if isinstance(a, pl.Expr) else pl.lit(a)).cast(pl.Float64) for a in args]

    def call(columns: Sequence[pl.Series]) -> pl.Series:
        lengths = [len(c) for c in columns]
        if 0 in lengths:  # an empty column: a literal beside it broadcasts to nothing
            return pl.Series(np.empty(0))
        size = max(lengths)
        missing: np.ndarray | None = None
        arrays = []
        for column in columns:
            if column.has_nulls():
                null = column.is_null().to_numpy()
                missing = null if missing is None else missing | null
            arrays.append(column.to_numpy())  # a null reads as NaN
        arrays = [np.broadcast_to(a, (size,)) for a in arrays]
        with np.errstate(all="ignore"):
            out = np.asarray(function(*arrays), dtype=float)
        result = pl.Series(out)
        if missing is None:
            return result
        return result.scatter(np.flatnonzero(np.broadcast_to(missing, (size,))), None)

    return pl.map_batches(fields, call, return_dtype=pl.Float64, is_elementwise=True)


def t_sf(t: pl.Expr, df: pl.Expr | float) -> pl.Expr:
    """Upper tail of Student's t with ``df`` degrees of freedom (scipy, result rows only)."""
    return _elementwise(stats.t.sf, t, df)


def t_p_value(t: pl.Expr, df: pl.Expr | float, alternative: str = "two-sided") -> pl.Expr:
    """p-value of Student's t on ``df`` degrees of freedom for ``alternative``, one scipy call.

    ``"greater"``: P(T ≥ t); ``"less"``: P(T ≤ t) = P(T ≥ −t); ``"two-sided"``:
    2·P(T ≥ |t|), capped at 1, which is twice the smaller of the two tails (the t
    distribution is symmetric, and scipy's tails are exactly so). Null when ``t`` or
    ``df`` is null, NaN when either is NaN.
    """
    if alternative == "greater":
        return t_sf(t, df)
    if alternative == "less":
        return t_sf(-t, df)
    return (2.0 * t_sf(t.abs(), df)).clip(upper_bound=1.0)


def t_ppf(q: pl.Expr | float, df: pl.Expr | float) -> pl.Expr:
    """Quantile ``q`` of Student's t with ``df`` degrees of freedom (scipy, result rows only)."""
    return _elementwise(stats.t.ppf, q, df)


def f_sf(f: pl.Expr, df1: pl.Expr | float, df2: pl.Expr | float) -> pl.Expr:
    """Upper tail of the F distribution (scipy, result rows only)."""
    return _elementwise(stats.f.sf, f, df1, df2)


def _binom_half_p_array(k: np.ndarray, n: np.ndarray, side: np.ndarray) -> np.ndarray:
    # Exact binomial p-value at success probability ½ (scipy.stats.binomtest): side 0
    # two-sided (the distribution is symmetric: twice the smaller tail, capped at 1),
    # 1 greater (P(X >= k)), −1 less (P(X <= k)).
    usable = (n >= 1) & (k >= 0) & (k <= n)
    n_ = np.where(usable, n, 1.0)
    k_ = np.where(usable, k, 0.0)
    two = np.minimum(1.0, 2.0 * stats.binom.cdf(np.minimum(k_, n_ - k_), n_, 0.5))
    upper = stats.binom.sf(k_ - 1, n_, 0.5)
    lower = stats.binom.cdf(k_, n_, 0.5)
    out = np.where(side > 0, upper, np.where(side < 0, lower, two))
    return np.where(usable, out, np.nan)


_SIDES = {"two-sided": 0.0, "greater": 1.0, "less": -1.0}


def binom_half_p(k: pl.Expr, n: pl.Expr, alternative: str = "two-sided") -> pl.Expr:
    """Exact binomial p-value of ``k`` successes in ``n`` trials under p = ½.

    ``alternative``: "two-sided", "greater" (P(X ≥ k)) or "less" (P(X ≤ k)), as
    ``scipy.stats.binomtest``. NaN when ``n < 1`` or an input is NaN, null when an
    input is null; scipy on the result rows only (one per model pair).
    """
    return _elementwise(_binom_half_p_array, k, n, _SIDES[alternative])


def chi2_sf(x: pl.Expr, df: pl.Expr | float) -> pl.Expr:
    """Upper tail of the chi² distribution (scipy, result rows only)."""
    return _elementwise(stats.chi2.sf, x, df)


@lru_cache(maxsize=4096)
def _studentized_range_ppf(q: float, k: float, df: float) -> float:
    # scipy integrates numerically (~0.1 s a value), and the same (q, k, df) recur
    # across by-groups and calls, so each distinct value is computed once.
    return float(stats.studentized_range.ppf(q, k, df))


def _studentized_range_ppf_array(q: np.ndarray, k: np.ndarray, df: np.ndarray) -> np.ndarray:
    out = np.full(q.shape, np.nan)
    for i, args in enumerate(zip(q, k, df, strict=True)):
        if not np.isnan(args).any():
            out[i] = _studentized_range_ppf(*(float(a) for a in args))
    return out


def studentized_range_ppf(q: pl.Expr | float, k: pl.Expr | float, df: pl.Expr | float) -> pl.Expr:
    """Quantile ``q`` of the studentized range of ``k`` means with ``df`` error df.

    scipy's ``studentized_range.ppf``; ``df`` may be ``inf`` (Nemenyi's test). Called
    once per distinct value on the result rows (range sizes), and cached.
    """
    return _elementwise(_studentized_range_ppf_array, q, k, df)


@lru_cache(maxsize=256)
def _signed_rank_pmf(n: int) -> np.ndarray:
    # Null distribution of Wilcoxon's R+ for n untied, non-zero differences: each
    # rank 1..n joins R+ with probability ½, so count the subsets of {1..n} by sum.
    counts = np.zeros(n * (n + 1) // 2 + 1)
    counts[0] = 1.0
    for rank in range(1, n + 1):
        counts[rank:] = counts[rank:] + counts[:-rank].copy()
    return counts / 2.0**n


def _signed_rank_tail_array(r_plus: np.ndarray, n: np.ndarray, upper: np.ndarray) -> np.ndarray:
    out = np.full(r_plus.shape, np.nan)
    for i, (r, size, up) in enumerate(zip(r_plus, n, upper, strict=True)):
        if np.isnan(r) or np.isnan(size) or size < 1:
            continue
        pmf = _signed_rank_pmf(int(size))
        if up:
            out[i] = pmf[int(np.floor(r)) :].sum()  # P(R+ >= floor(r))
        else:
            out[i] = pmf[: int(np.ceil(r)) + 1].sum()  # P(R+ <= ceil(r))
    capped: np.ndarray = np.minimum(out, 1.0)
    return capped


def signed_rank_tails(r_plus: pl.Expr, n: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """Exact tails P(R⁺ ≥ r) and P(R⁺ ≤ r) of Wilcoxon's signed-rank R⁺ with n differences.

    The exact null distribution assumes no ties and no zero differences; a
    non-integer R⁺ is rounded conservatively (as scipy does). Computed on the
    result rows only (one per model pair); combine with ``two_sided``.
    """
    upper = _elementwise(_signed_rank_tail_array, r_plus, n, 1.0)
    lower = _elementwise(_signed_rank_tail_array, r_plus, n, 0.0)
    return upper, lower


def studentized_range_sf(q: pl.Expr, k: pl.Expr | float, df: pl.Expr | float) -> pl.Expr:
    """Upper tail of the studentized range (scipy, result rows only)."""
    return _elementwise(stats.studentized_range.sf, q, k, df)
