"""Assigning cross-validation folds that keep every label's proportion (Bradley 1997, §5)."""

from __future__ import annotations

import polars as pl

from polaroc._input import ColumnLike, to_expr

__all__ = ["stratified_folds"]


def stratified_folds(label: ColumnLike, *, k: int = 10, seed: int = 0) -> pl.Expr:
    """Assign each row a fold id in ``0 … k−1``, keeping every label's proportion per fold.

    The rows are put in a random order within each label (a seeded shuffle), the labels
    one after the other in sorted order, and the row at position ``i`` of that order
    goes to fold ``i mod k``. Each label's rows are consecutive, so every fold receives
    ``⌊n_l / k⌋`` or ``⌈n_l / k⌉`` rows of a label with ``n_l`` rows (within one sample
    of its exact share), and the fold sizes differ by at most one overall. This is the
    stratified 10-fold design of Bradley (1997, §5). Null labels form a stratum of
    their own.

    Use it on the data set (one row per sample) before training; the fold ids then go
    into the score log polaroc reads. Use ``.over(...)`` to stratify within each group
    (e.g. per data set).

    Parameters
    ----------
    label
        Column or expression holding the class of each row (any sortable dtype).
    k
        Number of folds, at least 2.
    seed
        Seed of the shuffle: the same rows in the same order with the same seed get
        the same folds (with the same Polars version).

    Returns
    -------
    pl.Expr
        ``Int64`` named ``fold``.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> data = pl.DataFrame({"label": ["a"] * 6 + ["b"] * 3})
    >>> folds = data.with_columns(pr.stratified_folds("label", k=3, seed=1))
    >>> folds.group_by("fold", "label").len().sort("fold", "label")
    shape: (6, 3)
    ┌──────┬───────┬─────┐
    │ fold ┆ label ┆ len │
    │ ---  ┆ ---   ┆ --- │
    │ i64  ┆ str   ┆ u32 │
    ╞══════╪═══════╪═════╡
    │ 0    ┆ a     ┆ 2   │
    │ 0    ┆ b     ┆ 1   │
    │ 1    ┆ a     ┆ 2   │
    │ 1    ┆ b     ┆ 1   │
    │ 2    ┆ a     ┆ 2   │
    │ 2    ┆ b     ┆ 1   │
    └──────┴───────┴─────┘
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 2:
        msg = f"k must be an integer of at least 2, got {k!r}"
        raise ValueError(msg)
    if isinstance(seed, bool) or not isinstance(seed, int):
        msg = f"seed must be an integer, got {seed!r}"
        raise TypeError(msg)
    key = to_expr(label, argument="label")
    shuffle = pl.int_range(pl.len(), dtype=pl.Int64).shuffle(seed=seed)
    position = pl.arg_sort_by(key, shuffle).arg_sort()  # row's rank in (label, shuffle) order
    return (position.cast(pl.Int64) % k).alias("fold")
