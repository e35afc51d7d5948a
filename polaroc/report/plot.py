"""Figures of polaroc's tables (matplotlib; install with ``pip install 'polaroc[plot]'``).

Each function takes tables polaroc returns (``DataFrame`` or ``LazyFrame``; a lazy
table is collected here, at the end of the pipeline) and returns a
``matplotlib.figure.Figure``, so notebooks can show it and the command line can save it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, cast

import polars as pl

from polaroc.core.inputs import FrameLike
from polaroc.report.plot_inference import roc_band
from polaroc.report.plot_scoring import calibration, decision_curve, det, gain_lift
from polaroc.report.words import mean_digits, p_text

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "auc_distributions",
    "calibration",
    "cd_diagram",
    "decision_curve",
    "det",
    "duncan_groups",
    "gain_lift",
    "p_value_heatmap",
    "pairwise_heatmap",
    "posterior",
    "pr_folds",
    "roc_band",
    "roc_folds",
    "roc_one_vs_rest",
    "roc_overlay",
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


def _models(values: pl.Series, order: Sequence[object] | None) -> list[object]:
    """The models of ``values`` in ``order`` (those it lacks after, by name)."""
    by_name = {str(v): v for v in values.unique().to_list()}
    wanted = [] if order is None else list(order)
    ranked = list(dict.fromkeys(by_name[str(m)] for m in wanted if str(m) in by_name))
    return ranked + sorted((v for v in by_name.values() if v not in ranked), key=str)


def _all_nan(frame: pl.DataFrame, column: str) -> bool:
    """True when no point of ``column`` is a number (a NaN score makes the curve NaN)."""
    return bool(frame.height == 0 or frame[column].fill_nan(None).null_count() == frame.height)


def _nan_folds(frame: pl.DataFrame, fold: str, column: str) -> int:
    """How many folds' curves are NaN (a NaN score makes a fold's curve NaN)."""
    if frame.is_empty():
        return 0
    nan = frame.group_by(fold).agg(pl.col(column).fill_nan(None).null_count() == pl.len())
    return int(nan[column].sum())


def _no_curve(ax: Axes, n_folds: int = 0) -> None:
    what = f"{n_folds} fold(s) with a NaN score:\nno curve for them" if n_folds else (
        "no curve:\na NaN score")  # fmt: skip
    ax.text(0.5, 0.5, what, ha="center", va="center", color="tab:red", transform=ax.transAxes)


def _grid(
    n: int, width: float = 3.6, height: float = 3.4, max_cols: int = 3
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
    order: Sequence[object] | None = None,
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
    order
        The models' panel order (e.g. best first, as the tables); default sorted by name.

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
    >>> len(fig.axes)  # six models, three to a row
    6
    """
    folds, pooled, average = _frame(folds), _frame(pooled), _frame(average)
    models = _models(folds[model], order)
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
        if n_nan := _nan_folds(folds.filter(pl.col(model) == name), fold, "tpr"):
            _no_curve(ax, n_nan)
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
    table: FrameLike,
    *,
    metric: str = "auc",
    model: str = "model",
    higher_is_better: bool = True,
    order: Sequence[object] | None = None,
    title: str = "",
) -> Figure:
    """Per-fold values of a metric for each model, side by side (as in Aslan et al.'s figures).

    Models are ordered best first; each box shows the folds' spread and the dots the
    folds themselves. The axis leaves room above a perfect score, so a model whose
    every fold scores AUC = 1 shows as a line with its dots, not a box hidden in the
    frame.

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
    order
        The models' order (e.g. the tables'); default by mean, best first.
    title
        Put before the figure's own title (e.g. the data set).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import polars as pl
    >>> from polaroc import plot
    >>> table = pl.DataFrame({
    ...     "model": ["a"] * 3 + ["b"] * 3,
    ...     "auc": [0.8, 0.82, 0.79, 1.0, 1.0, 1.0],
    ... })
    >>> ax = plot.auc_distributions(table).axes[0]
    >>> [t.get_text() for t in ax.get_xticklabels()], bool(ax.get_ylim()[1] > 1.0)
    (['b', 'a'], True)
    """
    plt = _pyplot()
    df = _frame(table).filter(pl.col(metric).is_not_null())
    means = (
        df.group_by(model)
        .agg(pl.col(metric).mean())
        .sort(metric, model, descending=[higher_is_better, False], nulls_last=True)
    )
    names = _models(means[model], means[model].to_list() if order is None else order)
    values = [df.filter(pl.col(model) == n)[metric].to_numpy() for n in names]
    fig, ax = plt.subplots(figsize=(max(4.5, 0.9 * len(names) + 1.5), 3.8))
    ax.boxplot(
        values, tick_labels=[str(n) for n in names], widths=0.5, showfliers=False,
        medianprops={"color": "tab:orange", "lw": 2},
    )  # fmt: skip
    for i, v in enumerate(values, start=1):
        jitter = (pl.int_range(len(v), eager=True).to_numpy() % 5 - 2) * 0.04
        ax.plot(i + jitter, v, "o", ms=3, color="tab:blue", alpha=0.7, clip_on=False)
    finite = df.filter(pl.col(metric).is_finite())[metric]
    if finite.len():
        low, high = float(finite.min()), float(finite.max())  # type: ignore[arg-type]
        pad = max(0.06 * (high - low), 0.004)
        ax.set_ylim(low - pad, high + pad)
    ax.set_ylabel(metric)
    better = "higher" if higher_is_better else "lower"
    lead = f"{title}: " if title else ""
    ax.set_title(f"{lead}{metric} per fold ({better} is better; best first)")
    ax.tick_params(axis="x", rotation=30)
    fig.tight_layout()
    return cast("Figure", fig)


def duncan_groups(duncan: FrameLike, *, model: str = "model", title: str = "") -> Figure:
    """Duncan's homogeneous subsets beside the ranked model means.

    Models are listed by rank (best at the top) with their mean; to the right, each
    letter of the ``groups`` column is a subset of means not significantly different,
    drawn as a vertical bar beside the models it holds (``a`` is the subset holding
    the highest mean), as Bradley's (1997) Tables 2–7 write the letters beside the
    means.

    Parameters
    ----------
    duncan
        :func:`polaroc.duncan`'s table: ``model``, ``mean``, ``rank``, ``groups``.
    model
        The model column.
    title
        Put before the figure's title (e.g. the data set).

    Returns
    -------
    matplotlib.figure.Figure
        Two axes: the means and the subsets (sharing the model axis).

    Examples
    --------
    >>> import polars as pl
    >>> from polaroc import plot
    >>> table = pl.DataFrame({"model": ["x", "y", "z"], "mean": [0.9, 0.88, 0.7],
    ...                       "rank": [1, 2, 3], "groups": ["a", "a", "b"]})
    >>> [t.get_text() for t in plot.duncan_groups(table).axes[0].get_yticklabels()]
    ['x', 'y', 'z']
    """
    from matplotlib.ticker import MaxNLocator

    plt = _pyplot()
    df = _frame(duncan).sort("rank", model)
    names = [str(n) for n in df[model]]
    means = df["mean"].to_numpy()
    groups = [g or "" for g in df["groups"]]
    letters = list(dict.fromkeys(ch for g in groups for ch in g))  # a, b, ... by rank
    height = max(2.4, 0.42 * len(names) + 1.2)
    fig, (ax, bars) = plt.subplots(
        1, 2, figsize=(7.2, height), sharey=True, layout="constrained",
        gridspec_kw={"width_ratios": [3, max(1.2, 0.4 * len(letters) + 0.6)]},
    )  # fmt: skip
    y = list(range(len(names)))
    ax.plot(means, y, "o", color="black")
    digits = mean_digits(means.tolist(), least=4)
    for i, m in enumerate(means):
        ax.annotate(f"{m:.{digits}f}", (m, i), textcoords="offset points", xytext=(6, 4),
                    fontsize=8)  # fmt: skip
    ax.set_yticks(y, names)
    ax.invert_yaxis()
    ax.set_xlabel("mean")
    ax.xaxis.set_major_locator(MaxNLocator(nbins=4))  # few ticks: long decimals stay apart
    ax.tick_params(axis="x", labelsize=8)
    ax.margins(x=0.25)
    ax.grid(axis="y", color="0.92")
    colors = plt.get_cmap("tab10")
    for k, letter in enumerate(letters):
        members = [i for i, g in enumerate(groups) if letter in g]
        bars.plot([k, k], [min(members) - 0.25, max(members) + 0.25], lw=6,
                  color=colors(k % 10), solid_capstyle="round")  # fmt: skip
    bars.set_xlim(-0.7, max(len(letters), 1) - 0.3)
    bars.set_xticks(range(len(letters)), letters)
    bars.set_xlabel("subset")
    bars.tick_params(left=False)
    for side in ("top", "right"):
        bars.spines[side].set_visible(False)
    lead = f"{title}: " if title else ""
    fig.suptitle(f"{lead}Duncan's multiple range test: means and homogeneous subsets",
                 fontsize="medium")  # fmt: skip
    return cast("Figure", fig)


def pairwise_heatmap(
    pairwise: FrameLike,
    *,
    model: str = "model",
    value: str = "a",
    order: Sequence[object] | None = None,
) -> Figure:
    """Hand & Till's pairwise separabilities A(i, j) as one heat map per model.

    Shows which pairs of classes a model separates well even when its M (the mean
    of the map's cells) is mediocre (Hand & Till 2001, §4). Each unordered pair is one
    cell, below the diagonal (row i, column j < i), so ten classes are 45 cells; the
    panels grow with the classes and each cell carries its value (three decimals when
    the values crowd near 1, so that 0.999 and 1.000 differ).

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
    order
        The models' panel order (e.g. best first, as the tables); default by name.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import polars as pl
    >>> from polaroc import plot
    >>> table = pl.DataFrame({"class_i": [0, 0, 1], "class_j": [1, 2, 2], "a": [0.9, 0.8, 0.6]})
    >>> fig = plot.pairwise_heatmap(table)
    >>> len(fig.axes), sorted(t.get_text() for t in fig.axes[0].texts)
    (2, ['0.60', '0.80', '0.90'])
    """
    df = _frame(pairwise)
    if model not in df.columns:
        df = df.with_columns(pl.lit("all").alias(model))
    cells = df.group_by(model, "class_i", "class_j").agg(pl.col(value).mean())
    classes = sorted(set(cells["class_i"].to_list()) | set(cells["class_j"].to_list()), key=str)
    index = {c: k for k, c in enumerate(classes)}
    models = _models(cells[model], order)
    n = len(classes)
    rows_of, cols_of = classes[1:], classes[:-1]  # below the diagonal: i > j
    cell = 0.34 if n <= 6 else 0.44  # inches: room for "0.999"
    side = max(2.6, cell * max(n - 1, 1) + 0.9)
    ncols = min(len(models), 2 if n > 6 else 3)
    nrows = math.ceil(len(models) / ncols)
    plt = _pyplot()
    fig, grid_axes = plt.subplots(
        nrows, ncols, figsize=(side * ncols + 1.4, side * nrows + 0.3), squeeze=False,
        layout="constrained",
    )  # fmt: skip
    axes = list(grid_axes.flat)
    for ax in axes[len(models) :]:
        ax.set_visible(False)
    lowest = cast("float | None", cells[value].drop_nans().min())
    # Chance (0.5) at the bottom of the scale unless every pair does better.
    vmin = max(0.5, math.floor((lowest if lowest is not None else 0.5) * 20) / 20)
    vmin = min(vmin, 0.95)
    digits = 3 if vmin >= 0.9 else 2
    font = 7 if n <= 8 else 6.5
    image = None
    for ax, name in zip(axes, models, strict=False):
        grid = [[math.nan] * max(n - 1, 1) for _ in range(max(n - 1, 1))]
        for ci, cj, a in (
            cells.filter(pl.col(model) == name).select("class_i", "class_j", value).iter_rows()
        ):
            i, j = sorted((index[ci], index[cj]), reverse=True)  # below the diagonal
            grid[i - 1][j] = a
        image = ax.imshow(grid, vmin=vmin, vmax=1.0, cmap="viridis")
        for i, row in enumerate(grid):
            for j, a in enumerate(row):
                if a == a:
                    ax.text(j, i, f"{a:.{digits}f}", ha="center", va="center", fontsize=font,
                            color="white" if a < vmin + 0.5 * (1 - vmin) else "black")  # fmt: skip
        ax.set_xticks(range(len(cols_of)), [str(c) for c in cols_of],
                      rotation=90 if max(len(str(c)) for c in cols_of) > 3 else 0)  # fmt: skip
        ax.set_yticks(range(len(rows_of)), [str(c) for c in rows_of])
        ax.tick_params(labelsize=8, length=0)
        for spine in ax.spines.values():
            spine.set_visible(False)
        ax.set_title(f"{name}: A(i, j)", fontsize="medium")
        ax.set_xlabel("class j", fontsize=8)
        ax.set_ylabel("class i", fontsize=8)
    if image is not None:
        bar = fig.colorbar(image, ax=axes[: len(models)], shrink=0.6)
        bar.set_label("A(i, j): how well the pair's scores separate it")
    return cast("Figure", fig)


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
    finite = ranks.filter(pl.col("mean_rank").is_finite())
    if finite.height < ranks.height:  # a NaN metric makes its data set's ranks NaN
        fig, ax = plt.subplots(figsize=(7.0, 1.6))
        ax.axis("off")
        ax.text(
            0.5, 0.5, f"no critical-difference diagram: a NaN {metric} value makes the mean "
            "ranks NaN\n(the ranks need every model's value on every data set)",
            ha="center", va="center", color="tab:red", transform=ax.transAxes,
        )  # fmt: skip
        return cast("Figure", fig)
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
    folds: FrameLike,
    pooled: FrameLike,
    *,
    model: str = "model",
    fold: str = "fold",
    order: Sequence[object] | None = None,
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
    order
        The models' panel order (e.g. best first, as the tables); default sorted by name.

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
    models = _models(folds[model], order)
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
        counts = pool.select("tp", "fp").drop_nulls()
        if counts.height:
            everyone = counts.row(int((counts["tp"] + counts["fp"]).arg_max() or 0), named=True)
            base = everyone["tp"] / max(everyone["tp"] + everyone["fp"], 1)
            ax.axhline(base, color="0.6", lw=0.6, ls=":", label="chance")
        if n_nan := _nan_folds(mine, fold, "precision"):
            _no_curve(ax, n_nan)
        ax.set_title(str(name))
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1.01)
    for ax in axes:
        ax.set_xlabel("recall")
    axes[0].set_ylabel("precision")
    axes[0].legend(loc="lower left", fontsize="small", frameon=False)
    fig.tight_layout()
    return fig


def _auc_labels(
    aucs: pl.DataFrame | None, model: str, quantity: str = "AUC", level: float = 0.95
) -> dict[str, str]:
    """Legend text per model: the mean and its interval, with digits that tell them apart.

    ``aucs`` is a table with ``mean`` (or ``auc``) and ``ci_low``, ``ci_high`` per model
    (the verdict's), or the report's summary (``auc_mean``, ``auc_sd``, ``n_folds``: a t
    interval over folds at ``level``).
    """
    if aucs is None or aucs.is_empty():
        return {}
    from scipy import stats

    rows = []
    for row in aucs.iter_rows(named=True):
        mean = row.get("auc", row.get("mean", row.get("auc_mean")))
        low, high = row.get("ci_low"), row.get("ci_high")
        if low is None and row.get("auc_sd") is not None and (row.get("n_folds") or 0) > 1:
            n = int(row["n_folds"])
            half = float(stats.t.ppf(0.5 + level / 2, n - 1)) * row["auc_sd"] / math.sqrt(n)
            low, high = mean - half, mean + half
        if mean is None:
            continue
        if low is not None and high is not None:  # an AUC lies in [0, 1]
            low, high = max(low, 0.0), min(high, 1.0)
        rows.append((str(row[model]), mean, low, high))
    digits = mean_digits([r[1] for r in rows])
    labels = {}
    for name, mean, low, high in rows:
        ci = (
            f" [{low:.{digits}f}, {high:.{digits}f}]"
            if low is not None and high is not None
            else ""
        )
        labels[name] = f"{quantity} {mean:.{digits}f}{ci}"
    return labels


def roc_overlay(
    average: FrameLike,
    aucs: FrameLike | None = None,
    *,
    model: str = "model",
    order: Sequence[object] | None = None,
    inset: bool | None = None,
    band: FrameLike | None = None,
    quantity: str = "AUC",
    interval: str = "95 % CI",
    title: str = "ROC curves, vertical average over folds",
) -> Figure:
    """Every model's ROC curve on one axis, its mean AUC and interval in the legend.

    The curve of a model is its vertical average over folds (Fawcett 2006, §8), the
    legend lists the models best first with the mean of the folds' AUCs and its
    confidence interval — one figure to compare the models by, as scikit-learn's
    ``RocCurveDisplay`` and pROC's ``ggroc`` draw several curves. The legend's title
    says what the number is (``quantity``: "AUC", "M (Hand & Till)", "AUC of class 1")
    and what the interval is (``interval``: its level and kind, e.g. "99 % CI,
    corrected t"); the digits are as many as tell the models apart. When every curve
    hugs the top-left corner (all mean AUCs ≥ 0.9) an inset zooms on it.

    Parameters
    ----------
    average
        :func:`polaroc.average_roc` per model: ``fpr``, ``tpr`` (or any curve per model,
        e.g. the one-vs-rest macro average of a multiclass log).
    aucs
        A table with ``mean`` (or ``auc``), ``ci_low``, ``ci_high`` per model (e.g.
        :func:`polaroc.verdict`'s, whose interval is its deciding test's), or the
        report's summary (``auc_mean``, ``auc_sd``, ``n_folds``; the interval is then
        mean ± t·sd/√n over folds at the level ``interval`` starts with).
    model
        The model column.
    order
        The legend's order (best first); default by name.
    inset
        Draw the zoomed inset (default: when every mean AUC is at least 0.9).
    band
        A :func:`polaroc.roc_ci` table to shade under the curves, each model's band in
        its line's colour (pROC's ``plot(ci.se(roc), type = "shape")``; see
        :func:`roc_band`). With several models it needs the ``model`` column; its
        other groups must be one curve per model: ``by=["model"]`` bands the curve of the
        pooled folds, drawn around their vertical average.
    quantity, interval, title
        The legend's words for the number and its interval, and the figure's title.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        ``band`` has no ``model`` column but several models are drawn, or holds several
        curves of one model.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> from polaroc import plot
    >>> log = pl.scan_parquet(pr.demo_log_path()).filter(pl.col("class") == "malignant")
    >>> from polaroc.report import summary_table
    >>> folds = pr.evaluate(log).collect()
    >>> summary = summary_table(folds, by=[]).collect()
    >>> fig = plot.roc_overlay(pr.average_roc(log), summary, order=summary["model"])
    >>> fig.axes[0].get_legend().get_texts()[0].get_text()  # 4 digits tell forest and lda apart
    'logistic: AUC 0.9938 [0.9890, 0.9986]'

    With each model's bootstrap band of the sensitivity (folds pooled):

    >>> band = pr.roc_ci(log, by=["model"], n_boot=200, seed=1)
    >>> fig = plot.roc_overlay(pr.average_roc(log), summary, band=band)
    >>> len(fig.axes[0].collections)  # one shape per model
    6
    """
    plt = _pyplot()
    curves = _frame(average)
    table = _frame(aucs) if aucs is not None else None
    level = _level_of(interval)
    short = "M" if quantity.startswith("M") else "AUC"  # the title says which AUC
    labels = _auc_labels(table, model, quantity=short, level=level)
    models = _models(curves[model], order)
    fig, ax = plt.subplots(figsize=(7.6, 5.2))
    colors = plt.get_cmap("tab10")
    bands = _bands(band, model, models)
    drawn = []
    for k, name in enumerate(models):
        if name in bands:
            roc_band(ax, bands[name], color=colors(k % 10), opacity=0.2, zorder=1)
        part = curves.filter(pl.col(model) == name).sort("fpr", "tpr")
        label = f"{name}: {labels.get(str(name), 'n/a').strip()}"
        if _all_nan(part, "tpr"):
            label = f"{name}: no curve (a NaN score)"
        style = "-" if k < 10 else "--"
        ax.plot(part["fpr"], part["tpr"], lw=1.6, color=colors(k % 10), ls=style, label=label)
        drawn.append((part, colors(k % 10), style))
    ax.plot([0, 1], [0, 1], color="0.6", lw=0.6, ls=":", label="chance")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.01)
    ax.set_aspect("equal")
    ax.set_xlabel("false positive rate (1 − specificity)")
    ax.set_ylabel("true positive rate (sensitivity)")
    ax.set_title(title, fontsize="medium")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="small", frameon=False,
              title=f"mean {quantity} [{interval}],\nbest first",
              title_fontsize="small", alignment="left")  # fmt: skip
    means = [float(v) for v in _legend_means(table)]
    if inset is None:
        inset = bool(means) and min(means) >= 0.9
    if inset:
        zoom = ax.inset_axes((0.42, 0.08, 0.52, 0.52))
        for name, (part, color, style) in zip(models, drawn, strict=True):
            if name in bands:
                roc_band(zoom, bands[name], color=color, opacity=0.2, zorder=1)
            zoom.plot(part["fpr"], part["tpr"], lw=1.4, color=color, ls=style)
        zoom.set_xlim(0, 0.2)
        zoom.set_ylim(0.8, 1.0)
        zoom.tick_params(labelsize=7)
        zoom.set_title("zoom: FPR ≤ 0.2, TPR ≥ 0.8", fontsize=7)
        ax.indicate_inset_zoom(zoom, edgecolor="0.4")
    return cast("Figure", fig)


def _level_of(interval: str) -> float:
    """The level an interval's words start with ("99 % CI, …" → 0.99; default 0.95)."""
    head = interval.split("%", 1)[0].strip()
    try:
        return float(head) / 100
    except ValueError:
        return 0.95


def _bands(band: FrameLike | None, model: str, models: list[object]) -> dict[object, pl.DataFrame]:
    """Each drawn model's part of a :func:`polaroc.roc_ci` table (none: no band)."""
    if band is None:
        return {}
    table = _frame(band)
    if model not in table.columns:
        if len(models) > 1:
            n = len(models)
            msg = f"band= of {n} models needs the {model!r} column: roc_ci(by=[{model!r}])"
            raise ValueError(msg)
        return {name: table for name in models}
    parts = {name: table.filter(pl.col(model) == name).drop(model) for name in models}
    return {name: part for name, part in parts.items() if not part.is_empty()}


def _legend_means(table: pl.DataFrame | None) -> list[float]:
    if table is None:
        return []
    for column in ("auc", "mean", "auc_mean"):
        if column in table.columns:
            return [float(v) for v in table[column].drop_nulls().drop_nans()]
    return []


def roc_one_vs_rest(
    curves: FrameLike,
    *,
    model: str = "model",
    class_: str = "class",
    order: Sequence[object] | None = None,
    max_panels: int = 6,
) -> Figure:
    """One-vs-rest ROC curves of a multiclass log: one panel per class, every model on it.

    Each class's scores rank its own samples against all others (folds pooled); the
    legend gives each curve's area, with as many digits as tell the models apart. Hand &
    Till's M averages the class *pairs* instead, so a class that one model confuses shows
    here and in the pairwise map. With more than ``max_panels`` classes a grid of curves
    is unreadable: the figure is then one heat map, models × classes, each cell the area
    of that model's one-vs-rest curve for that class.

    Parameters
    ----------
    curves
        :func:`polaroc.pooled_roc` of a multiclass log: per (model, class) ``fpr``,
        ``tpr``.
    model, class_
        Column names.
    order
        The models' order in each legend (best first); default by name.
    max_panels
        The most classes drawn as curves; more make the heat map.

    Returns
    -------
    matplotlib.figure.Figure
        One panel per class, or one heat map.

    Examples
    --------
    >>> import numpy as np
    >>> import polars as pl
    >>> import polaroc as pr
    >>> from polaroc import plot
    >>> rng = np.random.default_rng(0)
    >>> label = rng.integers(0, 3, 60)
    >>> log = pl.concat([
    ...     pl.DataFrame({"model": "m", "fold": 0, "sample": np.arange(60), "class": c,
    ...                   "score": rng.random(60) + (label == c), "label": label})
    ...     for c in range(3)])
    >>> len(plot.roc_one_vs_rest(pr.pooled_roc(log)).axes)
    3
    >>> len(plot.roc_one_vs_rest(pr.pooled_roc(log), max_panels=2).axes)  # heat map, colour bar
    2
    """
    from polaroc.metrics.curves import trapezoid_auc

    plt = _pyplot()
    df = _frame(curves)
    classes = sorted(df[class_].unique().to_list(), key=str)
    models = _models(df[model], order)
    areas = {
        (str(m), str(c)): a
        for m, c, a in df.group_by(model, class_)
        .agg(trapezoid_auc("fpr", "tpr").alias("a"))
        .iter_rows()
    }
    digits = mean_digits(areas.values())
    if len(classes) > max_panels:
        return _class_area_map(areas, models, classes, digits)
    fig, axes = _grid(len(classes), width=3.8, height=3.8)
    colors = plt.get_cmap("tab10")
    for ax, cls in zip(axes, classes, strict=True):
        for k, name in enumerate(models):
            part = df.filter((pl.col(model) == name) & (pl.col(class_) == cls)).sort("fpr", "tpr")
            area = areas.get((str(name), str(cls)))
            text = "n/a" if area is None or area != area else f"{area:.{digits}f}"
            ax.plot(part["fpr"], part["tpr"], lw=1.3, color=colors(k % 10),
                    label=f"{name} ({text})")  # fmt: skip
        ax.plot([0, 1], [0, 1], color="0.6", lw=0.6, ls=":")
        ax.set_title(f"class {cls} vs rest")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1.01)
        ax.set_aspect("equal")
        ax.legend(loc="lower right", fontsize="x-small", frameon=False, title="AUC",
                  title_fontsize="x-small")  # fmt: skip
        ax.set_xlabel("false positive rate")
    axes[0].set_ylabel("true positive rate")
    fig.tight_layout()
    return fig


def _class_area_map(
    areas: dict[tuple[str, str], float | None],
    models: list[object],
    classes: list[object],
    digits: int,
) -> Figure:
    """Models × classes: each cell the area under that model's one-vs-rest curve."""
    plt = _pyplot()
    grid = [[areas.get((str(m), str(c))) for c in classes] for m in models]
    values = [[math.nan if v is None else v for v in row] for row in grid]
    finite = [v for row in values for v in row if v == v]
    vmin = min(max(0.5, math.floor(min(finite, default=0.5) * 20) / 20), 0.95)
    width = max(5.0, 0.62 * len(classes) + 2.8)
    fig, ax = plt.subplots(figsize=(width, max(2.4, 0.45 * len(models) + 1.4)),
                           layout="constrained")  # fmt: skip
    image = ax.imshow(values, vmin=vmin, vmax=1.0, cmap="viridis", aspect="auto")
    for i, row in enumerate(values):
        for j, a in enumerate(row):
            text = "NaN" if a != a else f"{a:.{digits}f}"
            dark = a == a and a < vmin + 0.5 * (1 - vmin)
            ax.text(j, i, text, ha="center", va="center", fontsize=7,
                    color="white" if dark else "black")  # fmt: skip
    ax.set_xticks(range(len(classes)), [str(c) for c in classes])
    ax.set_yticks(range(len(models)), [str(m) for m in models])
    ax.set_xlabel("class (its scores against every other label, folds pooled)")
    ax.tick_params(length=0)
    ax.set_title("one-vs-rest AUC per class", fontsize="medium")
    fig.colorbar(image, ax=ax, shrink=0.9, label="one-vs-rest AUC")
    return cast("Figure", fig)


P_LEVELS = (0.001, 0.01, 0.05)
P_COLORS = ("#005a32", "#238b45", "#a1d99b", "#e9e9e9", "#a6a6a6", "#ffffff")
P_NAMES = ("p < 0.001", "p < 0.01", "p < 0.05", "not significant", "NaN", "")


def p_value_heatmap(
    table: FrameLike,
    *,
    value: str | None = None,
    order: Sequence[object] | None = None,
    alpha: float = 0.05,
    title: str = "",
) -> Figure:
    """The pairwise tests' p-values as a models × models map (as scikit-posthocs' ``sign_plot``).

    Each cell is one pair's p-value (``p_adjusted`` when the table has it), coloured by
    level — p < 0.001, < 0.01, < ``alpha`` in greens, not significant in a neutral light
    grey, NaN in a darker grey — and written in the cell with enough digits to be on the
    right side of ``alpha``; the models in ``order`` (best first), so the first row reads
    "is the best model separated from each other one".

    Parameters
    ----------
    table
        A comparison table: ``model_a``, ``model_b`` and ``p_value`` (and ``p_adjusted``).
    value
        The column drawn; default ``p_adjusted`` if present, else ``p_value``.
    order
        The models' order; default by name.
    alpha
        The significance level (the last coloured band).
    title
        Put before the figure's title (e.g. the data set).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import polars as pl
    >>> from polaroc import plot
    >>> table = pl.DataFrame({"model_a": ["a", "a", "b"], "model_b": ["b", "c", "c"],
    ...                       "p_value": [0.001, 0.2, float("nan")]})
    >>> sorted(t.get_text() for t in plot.p_value_heatmap(table).axes[0].texts if t.get_text())
    ['0.001', '0.001', '0.20', '0.20', 'NaN', 'NaN']
    """
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    plt = _pyplot()
    df = _frame(table)
    column = value or ("p_adjusted" if "p_adjusted" in df.columns else "p_value")
    models = _models(pl.concat([df["model_a"], df["model_b"]]), order)
    index = {str(m): i for i, m in enumerate(models)}
    k = len(models)
    levels = (P_LEVELS[0], P_LEVELS[1], alpha)
    grid = [[5.0] * k for _ in range(k)]
    text = [[""] * k for _ in range(k)]
    for a, b, p in df.select("model_a", "model_b", column).iter_rows():
        i, j = index[str(a)], index[str(b)]
        if p is None or p != p:
            level, label = 4, "NaN"
        else:
            level = next((n for n, cut in enumerate(levels) if p < cut), 3)
            label = "<0.001" if p < 0.001 else p_text(p, alpha).removeprefix("p = ")
        grid[i][j] = grid[j][i] = float(level)
        text[i][j] = text[j][i] = label
    size = max(3.6, 0.62 * k + 2.2)
    fig, ax = plt.subplots(figsize=(size + 1.6, size))
    ax.imshow(grid, cmap=ListedColormap(P_COLORS), vmin=-0.5, vmax=5.5)
    for i in range(k):
        for j in range(k):
            dark = grid[i][j] < 2
            ax.text(j, i, text[i][j], ha="center", va="center", fontsize=7,
                    color="white" if dark else "black")  # fmt: skip
    names = [str(m) for m in models]
    ax.set_xticks(range(k), names, rotation=45, ha="right")
    ax.set_yticks(range(k), names)
    what = "adjusted p-values" if column == "p_adjusted" else "p-values"
    lead = f"{title}: " if title else ""
    ax.set_title(f"{lead}pairwise tests, {what}", fontsize="medium")
    names_used = (*P_NAMES[:2], f"p < {alpha:g}", *P_NAMES[3:5])
    handles = [Patch(color=c, label=n) for c, n in zip(P_COLORS, names_used, strict=False)]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="small",
              frameon=False)  # fmt: skip
    fig.tight_layout()
    return cast("Figure", fig)


def posterior(
    table: FrameLike,
    *,
    metric: str = "auc",
    higher_is_better: bool = True,
    rope: float | None = None,
    folds: FrameLike | None = None,
    test_train_ratio: float | None = None,
    model: str = "model",
    fold: str = "fold",
    repeat: str = "repeat",
    dataset: str = "dataset",
) -> Figure:
    """A Bayesian comparison's posterior of the difference a − b, as baycomp draws it.

    For a :func:`polaroc.bayes_ttest` table with its per-fold table ``folds`` and its
    ``rope``: one panel per model pair with the Student-t posterior density of the mean
    difference μ = a − b (location ``estimate``, scale √((1/n + n_test/n_train)·S²),
    n − 1 degrees of freedom; Corani & Benavoli 2015, Theorem 1 and eq. 9), the region
    of practical equivalence [−rope, rope] shaded and the three probabilities written
    on the panel — baycomp's ``CorrelatedTTest.plot``. The table carries no scale, so
    it is recomputed from ``folds`` (S² the variance of the per-block differences).
    A pair whose differences do not vary has a point mass at ``estimate`` (a line).

    Otherwise (no ``folds``, or a :func:`polaroc.bayes_signed_rank` table, which holds
    the three probabilities but not baycomp's posterior samples for its simplex): one
    horizontal bar per pair split into the three probabilities (Benavoli et al. 2017,
    §4); a pair decided at the 95 % level has one segment past 0.95. For a
    lower-is-better metric (error) ``p_b_higher`` — a's error below b's — is "a better".

    Parameters
    ----------
    table
        :func:`polaroc.bayes_ttest` or :func:`polaroc.bayes_signed_rank`: ``model_a``,
        ``model_b``, ``p_a_higher``, ``p_rope``, ``p_b_higher`` (and ``n``, ``estimate``).
    metric
        The metric compared (labels; the column of ``folds``).
    higher_is_better
        Whether a higher ``metric`` is the better model.
    rope
        The ROPE half-width the table was computed with (labels; the shaded band).
    folds
        The per-fold table the :func:`polaroc.bayes_ttest` table was computed from
        (keyword-only); with ``rope`` it turns the bars into posterior densities.
    test_train_ratio, model, fold, repeat, dataset
        As :func:`polaroc.bayes_ttest` was called (for ``folds``).

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        ``folds`` does not give the table's ``n`` blocks for a pair (not the table's
        per-fold table, or a signed-rank table).

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> from polaroc import plot
    >>> table = pl.DataFrame({"model_a": ["a"], "model_b": ["b"], "p_a_higher": [0.7],
    ...                       "p_rope": [0.2], "p_b_higher": [0.1]})
    >>> len(plot.posterior(table).axes[0].patches)
    3
    >>> folds = pl.DataFrame({"model": ["knn"] * 5 + ["mlp"] * 5, "fold": [1, 2, 3, 4, 5] * 2,
    ...     "auc": [0.81, 0.79, 0.84, 0.80, 0.83, 0.86, 0.85, 0.88, 0.84, 0.86]})
    >>> fig = plot.posterior(pr.bayes_ttest(folds, rope=0.01), rope=0.01, folds=folds)
    >>> len(fig.axes[0].lines) >= 1
    True
    """
    df = _frame(table)
    if folds is None or rope is None:
        return _posterior_bars(
            df.sort("model_a", "model_b"),
            metric=metric,
            higher_is_better=higher_is_better,
            rope=rope,
        )
    scales = _posterior_scales(
        df, folds, metric=metric, test_train_ratio=test_train_ratio,
        model=model, fold=fold, repeat=repeat, dataset=dataset,
    )  # fmt: skip
    return _posterior_densities(scales, metric=metric, higher_is_better=higher_is_better,
                                rope=rope)  # fmt: skip


def _posterior_scales(
    df: pl.DataFrame,
    folds: FrameLike,
    *,
    metric: str,
    test_train_ratio: float | None,
    model: str,
    fold: str,
    repeat: str,
    dataset: str,
) -> pl.DataFrame:
    """The table's rows with ``_scale`` and ``_df`` of bayes_ttest's Student-t posterior."""
    from polaroc.compare.fold_table import negligible, pair_differences, read_fold_table

    keys = [c for c in df.columns if c not in _BAYES_VALUES]
    by = [k for k in keys if k not in ("model_a", "model_b")]
    ft = read_fold_table(
        folds,
        metric=metric,
        by=by,
        model=model,
        fold=fold,
        dataset=dataset,
        repeat=repeat,
        folds_per_repeat=2 if test_train_ratio is None else 1,
    )
    d = pl.col("_pr_diff")
    ratio = (1.0 / (pl.col("_pr_folds") - 1.0) if test_train_ratio is None
             else pl.lit(float(test_train_ratio)))  # fmt: skip
    stats = (
        pair_differences(ft)
        .group_by(keys)
        .agg(
            _n=d.count().cast(pl.Int64),
            _var=d.var(),
            _pr_folds=pl.col("_pr_folds").first(),
            _constant=negligible(
                d.max() - d.min(),
                pl.max_horizontal(pl.col("_pr_a").abs().max(), pl.col("_pr_b").abs().max()),
            ),
        )
        # bayes_ttest's rule: differences equal up to rounding are a point mass (scale 0)
        .with_columns(
            _scale=pl.when(pl.col("_constant"))
            .then(0.0)
            .otherwise(((1.0 / pl.col("_n") + ratio) * pl.col("_var")).sqrt()),
            _df=pl.col("_n") - 1.0,
        )
        .collect()
    )
    out = df.join(stats, on=keys, how="left", nulls_equal=True).sort(keys, nulls_last=True)
    if "n" in out.columns and (out["n"] != out["_n"]).fill_null(value=True).any():
        msg = ("posterior: `folds` does not give the table's n blocks per pair; pass the "
               "per-fold table the pr.bayes_ttest table was computed from")  # fmt: skip
        raise ValueError(msg)
    return out


_BAYES_VALUES = ("n", "estimate", "p_a_higher", "p_rope", "p_b_higher")
_NOT_BY = {
    *_BAYES_VALUES,
    "model_a",
    "model_b",
    "_n",
    "_var",
    "_pr_folds",
    "_scale",
    "_df",
    "_constant",
}


def _posterior_densities(
    df: pl.DataFrame, *, metric: str, higher_is_better: bool, rope: float
) -> Figure:
    """One panel per pair: the t posterior of a − b, the ROPE shaded, the probabilities."""
    import numpy as np
    from scipy import stats

    plt = _pyplot()
    fig, axes = plt.subplots(df.height, 1, figsize=(7.0, 2.3 * df.height + 0.6),
                             layout="constrained", squeeze=False)  # fmt: skip
    better = "higher" if higher_is_better else "lower"
    for ax, row in zip(axes[:, 0], df.iter_rows(named=True), strict=True):
        loc, scale, dof = row["estimate"], row["_scale"], row["_df"]
        ax.axvspan(-rope, rope, color="0.85", zorder=0, label=f"rope ±{rope:g}")
        if loc is None or scale is None or not (math.isfinite(loc) and math.isfinite(scale)):
            _no_curve(ax)
        elif scale <= 0:  # no variance: baycomp's point mass at the mean difference
            ax.axvline(loc, color="tab:blue", lw=1.5)
            ax.set_xlim(min(loc, -rope) - 2 * rope - 1e-9, max(loc, rope) + 2 * rope + 1e-9)
        else:
            half = 5.0 * scale
            lo, hi = min(loc - half, -2.0 * rope), max(loc + half, 2.0 * rope)
            # ±rope are grid points so the shaded area is exactly the curve's
            x = np.union1d(np.linspace(lo, hi, 4001), [-rope, rope])
            y = stats.t.pdf(x, dof, loc=loc, scale=scale)
            ax.plot(x, y, color="tab:blue", lw=1.2)
            inside = (x >= -rope) & (x <= rope)
            ax.fill_between(x[inside], y[inside], color="tab:gray", alpha=0.5)
            ax.set_xlim(lo, hi)
            ax.set_ylim(bottom=0)
        ax.axvline(0.0, color="black", lw=0.5, ls=":")
        group = "".join(f"{k} = {row[k]}, " for k in row if k not in _NOT_BY)
        ax.set_title(f"{group}{row['model_a']} − {row['model_b']}", fontsize="small", loc="left")
        a_name = "a better" if higher_is_better else "b better"
        b_name = "b better" if higher_is_better else "a better"
        ax.text(0.99, 0.95, "\n".join([
            f"P(a − b > rope) = {_fmt_p(row['p_a_higher'])} ({a_name})",
            f"P(|a − b| ≤ rope) = {_fmt_p(row['p_rope'])} (equivalent)",
            f"P(a − b < −rope) = {_fmt_p(row['p_b_higher'])} ({b_name})",
        ]), transform=ax.transAxes, ha="right", va="top", fontsize=7,
            bbox={"facecolor": "white", "alpha": 0.8, "lw": 0})  # fmt: skip
        ax.set_yticks([])
    axes[-1, 0].set_xlabel(f"mean difference a − b of {metric} ({better} is better)")
    fig.suptitle("Bayesian correlated t test: posterior density of a − b", fontsize="medium")
    return cast("Figure", fig)


def _fmt_p(p: float | None) -> str:
    return "NaN" if p is None or p != p else f"{p:.3f}"


def _posterior_bars(
    df: pl.DataFrame, *, metric: str, higher_is_better: bool, rope: float | None
) -> Figure:
    """One horizontal bar per pair split into the three posterior probabilities."""
    plt = _pyplot()
    a_better, b_better = ("p_a_higher", "p_b_higher") if higher_is_better else (
        "p_b_higher", "p_a_higher")  # fmt: skip
    pairs = [f"{a} vs {b}" for a, b in df.select("model_a", "model_b").iter_rows()]
    fig, ax = plt.subplots(figsize=(7.6, max(2.2, 0.38 * len(pairs) + 1.6)), layout="constrained")
    y = list(range(len(pairs)))
    left = [0.0] * len(pairs)
    width = f" ±{rope:g}" if rope is not None else ""
    parts = [
        (a_better, "tab:blue", "a better"),
        ("p_rope", "0.75", f"equivalent (|diff| ≤ rope{width})"),
        (b_better, "tab:orange", "b better"),
    ]
    for column, color, label in parts:
        values = [0.0 if v is None or v != v else float(v) for v in df[column]]
        ax.barh(y, values, left=left, color=color, label=label, height=0.6)
        for i, v in enumerate(values):
            if v >= 0.08:
                ax.text(left[i] + v / 2, i, f"{v:.2f}", ha="center", va="center", fontsize=7)
        left = [lo + v for lo, v in zip(left, values, strict=True)]
    ax.axvline(0.95, color="black", lw=0.6, ls=":")
    ax.set_yticks(y, pairs)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel(f"posterior probability ({metric}; {'higher' if higher_is_better else 'lower'}"
                  " is better)")  # fmt: skip
    ax.legend(loc="lower left", bbox_to_anchor=(0, 1.0), ncols=3, fontsize="small",
              frameon=False)  # fmt: skip
    fig.suptitle("Bayesian comparison: where the posterior puts the difference a − b",
                 fontsize="medium")  # fmt: skip
    return cast("Figure", fig)
