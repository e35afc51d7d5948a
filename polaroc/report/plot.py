"""Figures of polaroc's tables (matplotlib; install with ``pip install 'polaroc[plot]'``).

Each function takes tables polaroc returns (``DataFrame`` or ``LazyFrame``; a lazy
table is collected here, at the end of the pipeline) and returns a
``matplotlib.figure.Figure``, so notebooks can show it and the command line can save it.
"""

from __future__ import annotations

import math
from types import ModuleType
from typing import TYPE_CHECKING, cast

import polars as pl

from polaroc._input import FrameLike

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "auc_distributions",
    "cd_diagram",
    "duncan_groups",
    "pairwise_heatmap",
    "pr_folds",
    "roc_folds",
]


def _pyplot() -> ModuleType:
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - exercised without the extra
        msg = "plotting needs matplotlib: pip install 'polaroc[report]'"
        raise ImportError(msg) from exc
    return plt


def _frame(table: FrameLike) -> pl.DataFrame:
    return table.collect() if isinstance(table, pl.LazyFrame) else table


def _grid(
    n: int, width: float = 3.6, height: float = 3.4, max_cols: int = 4
) -> tuple[Figure, list[Axes]]:
    plt = _pyplot()
    cols = min(n, max_cols)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(
        rows, cols, figsize=(width * cols, height * rows), squeeze=False, sharex=True, sharey=True
    )
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:n])


def roc_folds(
    folds: FrameLike,
    pooled: FrameLike,
    average: FrameLike,
    *,
    model: str = "model",
    fold: str = "fold",
) -> Figure:
    """Per model: each fold's ROC curve, the pooled curve, and the vertical average with its band.

    Bradley (1997) compares pooling the folds' scores into one curve with averaging
    per-fold results; drawing both over the fold curves shows how far apart they are.

    Parameters
    ----------
    folds
        :func:`polaroc.roc_curve` per (model, fold): ``fpr``, ``tpr`` per point.
    pooled
        :func:`polaroc.pooled_roc` per model.
    average
        :func:`polaroc.average_roc` with ``method="vertical"`` per model: ``fpr``,
        ``tpr``, ``tpr_sd``, ``tpr_low``, ``tpr_high``.
    model, fold
        Column names.

    Returns
    -------
    matplotlib.figure.Figure
        One panel per model.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> from polaroc import plot
    >>> log = pl.scan_parquet(pr.demo_log_path()).filter(pl.col("class") == "malignant")
    >>> fig = plot.roc_folds(pr.roc_curve(log), pr.pooled_roc(log), pr.average_roc(log))
    >>> len(fig.axes)
    8
    """
    folds, pooled, average = _frame(folds), _frame(pooled), _frame(average)
    models = sorted(folds[model].unique().to_list())
    fig, axes = _grid(len(models))
    for ax, name in zip(axes, models, strict=True):
        for part in folds.filter(pl.col(model) == name).partition_by(fold, maintain_order=True):
            ax.plot(part["fpr"], part["tpr"], color="0.75", lw=0.8, drawstyle="default")
        avg = average.filter(pl.col(model) == name).sort("fpr")
        ax.fill_between(
            avg["fpr"],
            avg["tpr_low"],
            avg["tpr_high"],
            color="tab:blue",
            alpha=0.15,
            lw=0,
            label="fold band",
        )
        ax.plot(avg["fpr"], avg["tpr"], color="tab:blue", lw=1.6, label="vertical average")
        pool = pooled.filter(pl.col(model) == name)
        ax.plot(pool["fpr"], pool["tpr"], color="black", lw=1.2, ls="--", label="pooled")
        ax.plot([0, 1], [0, 1], color="0.6", lw=0.6, ls=":")
        ax.set_title(str(name))
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1.01)
        ax.set_aspect("equal")
    for ax in axes:
        ax.set_xlabel("false positive rate")
    axes[0].set_ylabel("true positive rate")
    axes[0].legend(loc="lower right", fontsize="small", frameon=False)
    fig.tight_layout()
    return fig


def auc_distributions(
    table: FrameLike, *, metric: str = "auc", model: str = "model", higher_is_better: bool = True
) -> Figure:
    """Per-fold values of a metric for each model, side by side (as in Aslan et al.'s figures).

    Models are ordered by their mean; each box shows the folds' spread and the dots
    the folds themselves.

    Parameters
    ----------
    table
        A per-fold table (e.g. :func:`polaroc.evaluate`): one row per model and fold.
    metric
        The column to show.
    model
        The model column.
    higher_is_better
        Order the best model first (highest mean if True, lowest otherwise).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import polars as pl
    >>> from polaroc import plot
    >>> table = pl.DataFrame({
    ...     "model": ["a"] * 3 + ["b"] * 3,
    ...     "auc": [0.8, 0.82, 0.79, 0.7, 0.74, 0.71],
    ... })
    >>> plot.auc_distributions(table).axes[0].get_ylabel()
    'auc'
    """
    plt = _pyplot()
    df = _frame(table).filter(pl.col(metric).is_not_null())
    means = df.group_by(model).agg(pl.col(metric).mean()).sort(metric, descending=higher_is_better)
    names = means[model].to_list()
    values = [df.filter(pl.col(model) == n)[metric].to_numpy() for n in names]
    fig, ax = plt.subplots(figsize=(max(4.0, 0.9 * len(names) + 1.5), 3.8))
    ax.boxplot(values, tick_labels=[str(n) for n in names], widths=0.5, showfliers=False)
    for i, v in enumerate(values, start=1):
        jitter = (pl.int_range(len(v), eager=True).to_numpy() % 5 - 2) * 0.04
        ax.plot(i + jitter, v, "o", ms=3, color="tab:blue", alpha=0.7)
    ax.set_ylabel(metric)
    ax.set_title(f"{metric} per fold")
    ax.tick_params(axis="x", rotation=30)
    fig.tight_layout()
    return cast("Figure", fig)


def duncan_groups(duncan: FrameLike, *, model: str = "model") -> Figure:
    """Duncan's homogeneous subsets drawn over the ranked model means.

    Models are placed by rank with their mean; each letter of the ``groups`` column
    is a subset of means not significantly different, drawn as a bar spanning its
    models (``a`` is the subset holding the highest mean), as in Bradley's (1997)
    Tables 2–7.

    Parameters
    ----------
    duncan
        :func:`polaroc.duncan`'s table: ``model``, ``mean``, ``rank``, ``groups``.
    model
        The model column.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import polars as pl
    >>> from polaroc import plot
    >>> table = pl.DataFrame({"model": ["x", "y", "z"], "mean": [0.9, 0.88, 0.7],
    ...                       "rank": [1, 2, 3], "groups": ["a", "a", "b"]})
    >>> [t.get_text() for t in plot.duncan_groups(table).axes[0].get_xticklabels()]
    ['x', 'y', 'z']
    """
    plt = _pyplot()
    df = _frame(duncan).sort("rank")
    names = [str(n) for n in df[model]]
    means = df["mean"].to_numpy()
    groups = [g or "" for g in df["groups"]]
    letters = list(dict.fromkeys(ch for g in groups for ch in g))  # a, b, ... by rank
    fig, ax = plt.subplots(figsize=(max(4.0, 0.9 * len(names) + 1.5), 4.0))
    x = range(len(names))
    ax.plot(x, means, "o", color="black")
    span = float(means.max() - means.min()) or 1.0
    base = float(means.min()) - 0.08 * span
    for k, letter in enumerate(letters):
        members = [i for i, g in enumerate(groups) if letter in g]
        y = base - k * 0.07 * span
        ax.plot([min(members) - 0.2, max(members) + 0.2], [y, y], lw=4, solid_capstyle="round")
        ax.text(max(members) + 0.3, y, letter, va="center", fontsize="small")
    for i, (m, g) in enumerate(zip(means, groups, strict=True)):
        ax.annotate(g, (i, m), textcoords="offset points", xytext=(0, 7), ha="center")
    ax.set_xticks(list(x), names, rotation=30)
    ax.set_ylabel("mean")
    ax.margins(y=0.12)  # room for the letters above the highest mean
    ax.set_title("Duncan's multiple range test: homogeneous subsets")
    fig.tight_layout()
    return cast("Figure", fig)


def pairwise_heatmap(pairwise: FrameLike, *, model: str = "model", value: str = "a") -> Figure:
    """Hand & Till's pairwise separabilities A(i, j) as one heat map per model.

    Shows which pairs of classes a model separates well even when its M (the mean
    of the map's upper triangle) is mediocre (Hand & Till 2001, §4).

    Parameters
    ----------
    pairwise
        :func:`polaroc.pairwise_auc`'s table, averaged over folds or for one fold:
        ``class_i``, ``class_j`` and the value column, per model (rows of the same
        pair are averaged).
    model
        The model column (a table without it is drawn as one map).
    value
        The separability column to draw (``a``, ``a_i_j`` or ``a_j_i``).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import polars as pl
    >>> from polaroc import plot
    >>> table = pl.DataFrame({"class_i": [0, 0, 1], "class_j": [1, 2, 2], "a": [0.9, 0.8, 0.6]})
    >>> len(plot.pairwise_heatmap(table).axes)
    2
    """
    df = _frame(pairwise)
    if model not in df.columns:
        df = df.with_columns(pl.lit("all").alias(model))
    cells = df.group_by(model, "class_i", "class_j").agg(pl.col(value).mean())
    classes = sorted(set(cells["class_i"].to_list()) | set(cells["class_j"].to_list()), key=str)
    index = {c: k for k, c in enumerate(classes)}
    models = sorted(cells[model].unique().to_list(), key=str)
    fig, axes = _grid(len(models), width=3.8, height=3.4)
    lowest = cast("float | None", cells[value].drop_nans().min())
    # Chance (0.5) at the bottom of the scale unless every pair does better.
    vmin = max(0.5, math.floor((lowest if lowest is not None else 0.5) * 20) / 20)
    vmin = min(vmin, 0.95)
    image = None
    for ax, name in zip(axes, models, strict=True):
        grid = [[math.nan] * len(classes) for _ in classes]
        for ci, cj, a in (
            cells.filter(pl.col(model) == name).select("class_i", "class_j", value).iter_rows()
        ):
            grid[index[ci]][index[cj]] = grid[index[cj]][index[ci]] = a
        image = ax.imshow(grid, vmin=vmin, vmax=1.0, cmap="viridis")
        ax.set_xticks(range(len(classes)), [str(c) for c in classes], rotation=90)
        ax.set_yticks(range(len(classes)), [str(c) for c in classes])
        ax.set_title(f"{name}: A(i, j)")
    if image is not None:
        fig.colorbar(image, ax=axes, shrink=0.8)
    return fig


def _cd_cliques(ranks: list[float], cd: float) -> list[tuple[int, int]]:
    """Maximal runs ``(first, last)`` of rank-sorted models whose mean ranks differ by < ``cd``.

    Models sorted by mean rank; a clique is an interval the Nemenyi test does not split
    (its extreme ranks differ by less than the critical difference), kept only when no
    longer interval contains it (Demšar 2006, Fig. 1).
    """
    cliques: list[tuple[int, int]] = []
    reach = 0
    for i, r in enumerate(ranks):
        last = max(j for j in range(i, len(ranks)) if ranks[j] - r < cd)
        if last > i and last > reach:
            cliques.append((i, last))
            reach = last
    return cliques


def cd_diagram(
    table: FrameLike,
    metric: str = "auc",
    *,
    alpha: float = 0.05,
    higher_is_better: bool = True,
    model: str = "model",
    dataset: str = "dataset",
    fold: str = "fold",
) -> Figure:
    """Demšar's (2006) critical-difference diagram: mean ranks, the CD bar and the cliques.

    Within every data set the models are ranked (1 = best, ties averaged) and the ranks
    averaged over the N data sets (:func:`polaroc.mean_ranks`). The models sit on a
    rank axis; the bar above it is Nemenyi's critical difference
    CD = q_α √(k(k+1)/(6N)); thick bars below join the models the Nemenyi test does not
    separate (mean ranks closer than CD) — Demšar (2006), §3.2.2 and Fig. 1.

    Parameters
    ----------
    table
        A per-fold table with a ``dataset`` column (averaged over the folds of each
        data set first), one row per (data set, model), or — without a ``dataset``
        column — a per-fold table of one data set, whose folds are then the blocks.
    metric
        The column ranked.
    alpha
        Level of the critical difference.
    higher_is_better
        ``True`` for AUC-like metrics; ``False`` for errors and costs.
    model, dataset, fold
        Column names (``fold`` is used only when the table has no ``dataset``).

    Returns
    -------
    matplotlib.figure.Figure
        One axis; each clique bar carries the gid ``"clique:<model>,<model>,…"`` and
        the CD bar the gid ``"cd:<value>"``.

    Examples
    --------
    >>> import polars as pl
    >>> from polaroc import plot
    >>> table = pl.DataFrame({
    ...     "dataset": ["d1", "d2", "d3", "d4"] * 3,
    ...     "model": ["a"] * 4 + ["b"] * 4 + ["c"] * 4,
    ...     "auc": [0.9, 0.8, 0.85, 0.7, 0.8, 0.82, 0.75, 0.6, 0.7, 0.6, 0.65, 0.5],
    ... })
    >>> fig = plot.cd_diagram(table)
    >>> sorted(ln.get_gid() for ln in fig.axes[0].lines if ln.get_gid())
    ['cd:1.657247', 'clique:a,b', 'clique:b,c']
    """
    from polaroc.compare.across import mean_ranks

    plt = _pyplot()
    frame = _frame(table)
    block = dataset if dataset in frame.columns else fold
    ranks = mean_ranks(
        frame, metric, alpha=alpha, higher_is_better=higher_is_better, model=model,
        dataset=block,
    ).collect()  # fmt: skip
    names = [str(n) for n in ranks[model]]
    means = ranks["mean_rank"].to_list()
    cd = float(ranks["cd"][0])
    k = len(names)
    cliques = _cd_cliques(means, cd)
    half = math.ceil(k / 2)
    fig, ax = plt.subplots(figsize=(7.0, 1.6 + 0.3 * max(half, len(cliques))))
    ax.set_xlim(0.5, k + 0.5)
    top = 0.0
    ax.plot([1, k], [top, top], color="black", lw=1)
    for r in range(1, k + 1):
        ax.plot([r, r], [top, top + 0.08], color="black", lw=1)
        ax.text(r, top + 0.12, str(r), ha="center", va="bottom", fontsize="small")
    ax.plot([1, 1 + cd], [top + 0.45, top + 0.45], color="black", lw=2, gid=f"cd:{cd:.6f}")
    ax.text(1 + cd / 2, top + 0.5, f"CD = {cd:.3f}", ha="center", va="bottom", fontsize="small")
    step = 0.28
    for i, (name, r) in enumerate(zip(names, means, strict=True)):
        left = i < half
        depth = -(0.35 + step * (i if left else k - 1 - i)) - step * len(cliques) * 0.5
        end = 0.6 if left else k + 0.4
        ax.plot([r, r, end], [top, depth, depth], color="0.3", lw=0.8)
        ax.text(
            end + (-0.05 if left else 0.05), depth, f"{name} ({r:.2f})",
            ha="right" if left else "left", va="center", fontsize="small",
        )  # fmt: skip
    for c, (i, j) in enumerate(cliques):
        y = -0.15 - c * (step * 0.5)
        members = ",".join(names[i : j + 1])
        ax.plot(
            [means[i] - 0.03, means[j] + 0.03], [y, y], color="tab:red", lw=3,
            solid_capstyle="round", gid=f"clique:{members}",
        )  # fmt: skip
    ax.set_ylim(-(0.45 + step * half + step * len(cliques) * 0.5), 0.8)
    ax.axis("off")
    ax.set_title(f"critical difference (Nemenyi, α = {alpha:g}, N = {ranks['n'][0]})")
    fig.tight_layout()
    return cast("Figure", fig)


def pr_folds(
    folds: FrameLike, pooled: FrameLike, *, model: str = "model", fold: str = "fold"
) -> Figure:
    """Per model: each fold's precision–recall curve, the pooled curve and the chance line.

    Precision is drawn as a step over recall — the step-wise interpolation that
    average precision sums; a straight line between PR points would overstate it
    (Davis & Goadrich 2006). The dotted horizontal line is the share of positives,
    the precision of a classifier that ranks at random.

    Parameters
    ----------
    folds
        :func:`polaroc.pr_curve` per (model, fold): ``recall``, ``precision``,
        ``threshold`` per point.
    pooled
        :func:`polaroc.pooled_pr_curve` per model (also ``tp`` and ``fp``).
    model, fold
        Column names.

    Returns
    -------
    matplotlib.figure.Figure
        One panel per model.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> from polaroc import plot
    >>> log = pl.scan_parquet(pr.demo_log_path()).filter(pl.col("class") == "malignant")
    >>> fig = plot.pr_folds(pr.pr_curve(log), pr.pooled_pr_curve(log))
    >>> sum(ax.get_visible() for ax in fig.axes)
    6
    """
    folds, pooled = _frame(folds), _frame(pooled)
    models = sorted(folds[model].unique().to_list(), key=str)
    fig, axes = _grid(len(models))
    for ax, name in zip(axes, models, strict=True):
        mine = folds.filter(pl.col(model) == name)
        for part in mine.partition_by(fold, maintain_order=True):
            part = part.sort("threshold", descending=True, nulls_last=False)  # (0, 1) first
            ax.plot(part["recall"], part["precision"], color="0.75", lw=0.8, drawstyle="steps-pre")
        pool = pooled.filter(pl.col(model) == name).sort(
            "threshold", descending=True, nulls_last=False
        )
        ax.plot(
            pool["recall"], pool["precision"], color="black", lw=1.2, ls="--",
            drawstyle="steps-pre", label="pooled",
        )  # fmt: skip
        if pool.height:
            everyone = pool.row(int((pool["tp"] + pool["fp"]).arg_max() or 0), named=True)
            base = everyone["tp"] / max(everyone["tp"] + everyone["fp"], 1)
            ax.axhline(base, color="0.6", lw=0.6, ls=":", label="chance")
        ax.set_title(str(name))
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1.01)
    for ax in axes:
        ax.set_xlabel("recall")
    axes[0].set_ylabel("precision")
    axes[0].legend(loc="lower left", fontsize="small", frameon=False)
    fig.tight_layout()
    return fig
