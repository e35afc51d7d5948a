"""Counter-based random draws for resampling every replicate in one lazy plan.

Replicate ``b``'s random numbers are hashes of (group, replicate, position; seed), so
all replicates are drawn at once (no Python loop), reproducibly, whatever the row
order or engine (the draws depend on the Polars version's hash function).

The unit of a draw is a sample, or with ``cluster=`` a whole cluster (several samples
of one patient, image or user): every row of a drawn cluster comes along, the cluster
bootstrap of Davison & Hinkley (1997, §3.8) and Field & Welsh (2007, "Bootstrapping
clustered data", JRSS B 69:369–390), which keeps the correlation within clusters that
makes the samples' bootstrap too narrow (Obuchowski 1997 gives the clustered AUC's
variance it estimates). :func:`cluster_units` numbers the clusters within their strata;
:func:`draw_table` is the one hash-based draw of :func:`stratified_draws` and
:func:`polaroc.bootstrap`, and :mod:`polaroc.core.replicates`' NumPy draws
(:func:`polaroc.bootstrap_test`) read the same numbering.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence

import polars as pl

__all__ = [
    "DRAW",
    "MIXED",
    "REPLICATE",
    "SIZE",
    "STRATUM",
    "UNIT",
    "check_replicates",
    "cluster_units",
    "draw_table",
    "replicates",
    "seed_of",
    "stratified_draws",
    "uniform",
]

REPLICATE = "_pr_replicate"
STRATUM = "_pr_stratum"  # a cluster's label, null for a cluster holding several labels
MIXED = "_pr_mixed"  # the cluster holds several labels (its own stratum)
UNIT = "_pr_k"  # a unit's number within its stratum, 0 … n − 1
SIZE = "_pr_n"  # a stratum's number of units
DRAW = "_pr_draw"  # a draw's number within its stratum and replicate
_FIRST = "_pr_first"


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


def cluster_units(
    rows: pl.LazyFrame, groups: Sequence[str], label: str, cluster: str, position: str
) -> pl.LazyFrame:
    """``rows`` with each cluster's stratum (``_pr_stratum``, ``_pr_mixed``) and number (``_pr_k``).

    A cluster is a value of ``cluster`` within a group of ``groups``. Its stratum is the
    set of labels its rows hold: a cluster of one label is drawn among that label's
    clusters (``_pr_stratum`` the label), one of several labels among the other mixed
    clusters (``_pr_stratum`` null, ``_pr_mixed`` true). ``position`` numbers the rows'
    samples within (group, label) as the unclustered draws number them; the clusters of
    a stratum are numbered 0 … n − 1 in the order of their first sample there (ties,
    only possible between mixed clusters, by the cluster value), so that with every
    sample its own cluster the numbering, and so every seeded draw, is the unclustered
    one. The ``position`` column is dropped.
    """
    within = list(dict.fromkeys([*groups, cluster]))
    labels = pl.col(label).n_unique()  # null counts as a label value
    clusters = rows.group_by(within).agg(
        pl.when(labels == 1).then(pl.col(label).first()).alias(STRATUM),
        (labels > 1).alias(MIXED),
        pl.col(position).min().alias(_FIRST),
    )
    number = pl.int_range(pl.len(), dtype=pl.Int64).over(
        [*groups, STRATUM, MIXED], order_by=[_FIRST, cluster]
    )
    numbered = clusters.with_columns(number.alias(UNIT)).drop(_FIRST)
    return rows.drop(position).join(numbered, on=within, nulls_equal=True)


def draw_table(
    sizes: pl.LazyFrame, hashed: Sequence[str | pl.Expr], n_boot: int, seed: int
) -> pl.LazyFrame:
    """Every replicate's draws from strata of ``_pr_n`` units: one row per (stratum, b, k).

    Replicate ``b``'s draw ``k`` of a stratum of ``n`` units is unit
    ``hash(hashed, b, k; seed) mod n`` (a counter-based generator); the mixed clusters'
    stratum (``_pr_mixed`` in ``sizes``) hashes with ``seed + 1``. The result holds
    ``sizes``' columns, ``_pr_replicate``, ``_pr_draw`` (k) and ``_pr_k`` (the unit).
    """
    h = pl.struct(*hashed, REPLICATE, DRAW)
    names = sizes.collect_schema().names()
    hashes = pl.when(pl.col(MIXED)).then(h.hash(seed + 1)).otherwise(h.hash(seed))
    hash_ = hashes if MIXED in names else h.hash(seed)
    return (
        sizes.join(replicates(n_boot), how="cross")
        .with_columns(pl.int_ranges(0, pl.col(SIZE)).alias(DRAW))
        .explode(DRAW)
        .with_columns((hash_ % pl.col(SIZE)).cast(pl.Int64).alias(UNIT))
    )


def stratified_draws(
    rows: pl.LazyFrame,
    strata: list[str],
    order: list[str],
    n_boot: int,
    seed: int,
    *,
    cluster: str | None = None,
) -> pl.LazyFrame:
    """``n_boot`` stratified bootstrap replicates of ``rows`` in one frame.

    Rows are numbered within each stratum (the last of ``strata`` is the label) in
    ``order``; replicate ``b``'s draw ``k`` of a stratum of ``n`` rows is row
    ``hash(stratum, b, k; seed) mod n`` (:func:`draw_table`). With ``cluster``, the
    units drawn are the clusters (:func:`cluster_units`), each with all its rows. The
    result holds the drawn rows with ``_pr_replicate``.
    """
    number = pl.int_range(pl.len(), dtype=pl.Int64).over(strata, order_by=order or None)
    numbered = rows.with_columns(number.alias(UNIT))
    keys = strata
    hashed: list[str | pl.Expr] = list(strata)
    if cluster is not None:
        *groups, label = strata
        numbered = cluster_units(numbered, groups, label, cluster, position=UNIT)
        keys = [*groups, STRATUM, MIXED]
        hashed = [*groups, pl.col(STRATUM).alias(label)]
    numbered = numbered.cache()
    sizes = numbered.group_by(keys).agg((pl.col(UNIT).max() + 1).alias(SIZE))
    draws = draw_table(sizes, hashed, n_boot, seed)
    drawn = draws.join(numbered, on=[*keys, UNIT], nulls_equal=True)
    return drawn.drop(UNIT, SIZE, DRAW, STRATUM, MIXED, strict=False)
