"""Assigning cross-validation folds that keep every label's proportion (Bradley 1997, §5)."""

from __future__ import annotations

import polars as pl

from polaroc.core.args import validated
from polaroc.core.inputs import ColumnLike, to_expr

__all__ = ["stratified_folds"]


@validated(own={"k": "the number of folds, at least 2: checked here"})
def stratified_folds(
    label: ColumnLike, *, k: int = 10, seed: int | None = None, repeat: ColumnLike | None = None
) -> pl.Expr:
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

    **Repeated designs.** An r × k design repeats the k-fold split r times, each repeat
    with its own stratified split, so that every sample is tested once per repeat. Put
    r copies of the rows in one frame with a repeat id (a cross join with
    ``pl.DataFrame({"repeat": range(r)})``) and pass that column as ``repeat``: the rows
    of each repeat are split as above, each repeat in its own random order, and fold ids
    restart at 0 in every repeat. The 10 × 10 design of Bouckaert & Frank (2004) is
    ``k=10`` over ten repeats; Dietterich's (1998) 5 × 2 design, on which
    :func:`polaroc.paired_ttest_5x2cv` and :func:`polaroc.combined_ftest_5x2cv` are
    built, is ``k=2`` over five repeats. Rows whose repeat is null form a repeat of
    their own.

    Parameters
    ----------
    label
        Column or expression holding the class of each row (any sortable dtype).
    k
        Number of folds, at least 2.
    seed
        Seed of the shuffle (``None``, the default: fresh randomness, as every seed
        of the package): the same rows in the same order with the same seed get
        the same folds (with the same Polars version).
    repeat
        Column or expression holding the repeat id of each row (any sortable dtype), for
        a repeated design; each repeat is split on its own. ``None`` (default): the
        rows are one split. On a frame with a single repeat id, the folds equal those
        without ``repeat``.

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

    Dietterich's 5 × 2 design: five repeats, each a stratified split in two halves
    (fold ids restart in every repeat):

    >>> repeats = pl.DataFrame({"repeat": range(5)})
    >>> design = data.join(repeats, how="cross").with_columns(
    ...     pr.stratified_folds("label", k=2, seed=7, repeat="repeat")
    ... )
    >>> design.group_by("repeat", "fold").agg(
    ...     pl.len(), (pl.col("label") == "b").sum().alias("b")
    ... ).sort("repeat", "fold").head(4)
    shape: (4, 4)
    ┌────────┬──────┬─────┬─────┐
    │ repeat ┆ fold ┆ len ┆ b   │
    │ ---    ┆ ---  ┆ --- ┆ --- │
    │ i64    ┆ i64  ┆ u32 ┆ u32 │
    ╞════════╪══════╪═════╪═════╡
    │ 0      ┆ 0    ┆ 5   ┆ 2   │
    │ 0      ┆ 1    ┆ 4   ┆ 1   │
    │ 1      ┆ 0    ┆ 5   ┆ 2   │
    │ 1      ┆ 1    ┆ 4   ┆ 1   │
    └────────┴──────┴─────┴─────┘
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 2:
        msg = f"k must be an integer of at least 2, got {k!r}"
        raise ValueError(msg)
    key = to_expr(label, argument="label")
    shuffle = pl.int_range(pl.len(), dtype=pl.Int64).shuffle(seed=seed)
    if repeat is None:
        position = pl.arg_sort_by(key, shuffle).arg_sort()  # rank in (label, shuffle) order
        return (position.cast(pl.Int64) % k).alias("fold")
    return _repeated_folds(key, to_expr(repeat, argument="repeat"), shuffle, k)


def _repeated_folds(key: pl.Expr, repeat: pl.Expr, shuffle: pl.Expr, k: int) -> pl.Expr:
    """Fold ids restarting in every repeat, from one shuffle of all the rows.

    A uniform random permutation of all rows orders each repeat's rows uniformly at
    random and independently of the other repeats, so one shuffle serves every repeat.
    A row's position in (repeat, label, shuffle) order, minus the number of rows in
    earlier repeats, is its position within its own repeat. No window is used, so the
    expression still works inside ``.over(...)``.
    """
    position = pl.arg_sort_by(repeat, key, shuffle, nulls_last=[True, False, False]).arg_sort()
    earlier = (repeat.rank("min").cast(pl.Int64) - 1).fill_null(repeat.count().cast(pl.Int64))
    return ((position.cast(pl.Int64) - earlier) % k).alias("fold")
