"""Counter-based random draws for resampling every replicate in one lazy plan.

Replicate ``b``'s random numbers are hashes of (group, replicate, position; seed), so
all replicates are drawn at once (no Python loop), reproducibly, whatever the row
order or engine (the draws depend on the Polars version's hash function).
"""

from __future__ import annotations

import secrets

import polars as pl

__all__ = [
    "REPLICATE",
    "check_replicates",
    "replicates",
    "seed_of",
    "stratified_draws",
    "uniform",
]

REPLICATE = "_pr_replicate"
_K = "_pr_k"
_N = "_pr_n"
_DRAW = "_pr_draw"


def check_replicates(n: int, name: str) -> None:
    """Raise ``ValueError`` unless ``n`` is an integer of at least 2."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 2:
        msg = f"{name} must be an integer of at least 2 replicates, got {n!r}"
        raise ValueError(msg)


def seed_of(seed: int | None) -> int:
    """``seed``, or a fresh random one for ``None``; checked to be a non-negative integer."""
    if seed is None:
        return secrets.randbelow(2**32)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        msg = f"seed must be a non-negative integer or None, got {seed!r}"
        raise ValueError(msg)
    return seed


def uniform(columns: list[str], seed: int) -> pl.Expr:
    """A uniform number in [0, 1) per row from the hash of ``columns`` (53 bits)."""
    h = pl.struct(*columns).hash(seed)
    return (h // 2048).cast(pl.Float64) / float(2**53)


def replicates(n: int) -> pl.LazyFrame:
    """A one-column frame of replicate numbers 0 … n − 1."""
    return pl.LazyFrame({REPLICATE: pl.int_range(n, dtype=pl.Int64, eager=True)})


def stratified_draws(
    rows: pl.LazyFrame, strata: list[str], order: list[str], n_boot: int, seed: int
) -> pl.LazyFrame:
    """``n_boot`` stratified bootstrap replicates of ``rows`` in one frame.

    Rows are numbered within each stratum in ``order``; replicate ``b``'s draw ``k``
    of a stratum of ``n`` rows is row ``hash(stratum, b, k; seed) mod n`` (a
    counter-based generator). The result holds the drawn rows with ``_pr_replicate``.
    """
    number = pl.int_range(pl.len(), dtype=pl.Int64).over(strata, order_by=order or None)
    numbered = rows.with_columns(number.alias(_K)).cache()
    sizes = numbered.group_by(strata).agg(pl.len().cast(pl.Int64).alias(_N))
    draws = (
        sizes.join(replicates(n_boot), how="cross")
        .with_columns(pl.int_ranges(0, pl.col(_N)).alias(_DRAW))
        .explode(_DRAW)
        .with_columns(
            (pl.struct(*strata, REPLICATE, _DRAW).hash(seed) % pl.col(_N)).cast(pl.Int64).alias(_K)
        )
    )
    return draws.join(numbered, on=[*strata, _K], nulls_equal=True).drop(_K, _N, _DRAW)
