"""Figures of the scoring tables: reliability, gain and lift, DET and decision curves.

Each function takes tables polaroc returns (``DataFrame`` or ``LazyFrame``; a lazy table is
collected here) and returns a ``matplotlib.figure.Figure``. They are public as
``polaroc.plot.calibration``, ``polaroc.plot.gain_lift``, ``polaroc.plot.det`` and
``polaroc.plot.decision_curve``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import numpy as np
import polars as pl

from polaroc.core.inputs import FrameLike
from polaroc.report._figure import as_frame as _frame
from polaroc.report._figure import pyplot as _pyplot

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["calibration", "decision_curve", "det", "gain_lift"]

# scikit-learn's DetCurveDisplay ticks (probabilities placed on the probit scale)
DET_TICKS = (0.001, 0.01, 0.05, 0.2, 0.5, 0.8, 0.95, 0.99, 0.999)


def _models(df: pl.DataFrame, model: str) -> list[object]:
    return sorted(df[model].unique().to_list(), key=str)


def _with_fold(df: pl.DataFrame, fold: str) -> pl.DataFrame:
    """``df``, with a constant fold column if it has none (one curve per model)."""
    return df if fold in df.columns else df.with_columns(pl.lit(0).alias(fold))


def _colour(k: int) -> str:
    return f"C{k % 10}"


def calibration(
    curve: FrameLike,
    *,
    model: str = "model",
    fold: str = "fold",
    outcome: str = "share of positives",
    order: list[object] | None = None,
    class_: str = "class",
) -> Figure:
    """Reliability diagram per model: each fold's curve, their band and mean, and the counts.

    The top panel of each model plots the share of positives (``prob_true``) against the
    mean score (``prob_pred``) of each bin of :func:`polaroc.calibration_curve`: thin
    lines for the folds, the band from the lowest to the highest fold per bin and the
    folds pooled (each fold's bin weighted by its samples); a calibrated model lies on the
    diagonal (DeGroot & Fienberg 1983).
    The panel below is the histogram of the samples per bin, summed over folds: bins with
    few samples carry little evidence (Niculescu-Mizil & Caruana 2005, Fig. 1).

    Parameters
    ----------
    curve
        :func:`polaroc.calibration_curve`'s table for one class (filter the positive
        class of a log with a class column): ``bin``, ``prob_pred``, ``prob_true``,
        ``n`` per (model, fold).
    model, fold
        Column names (a table without a fold column is one curve per model).
    outcome
        The y axis's words (``"share correct"`` for a top-label diagram).
    order
        The models' panel order (e.g. best first); default by name.
    class_
        Name of the class column: a table holding several classes' curves (a
        two-class log with both classes' rows gives one per class) is refused, since
        their folds and counts would be drawn as one model's.

    Returns
    -------
    matplotlib.figure.Figure
        Two panels per model.

    Raises
    ------
    ValueError
        The table holds the curves of more than one class.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> from polaroc import plot
    >>> log = pl.scan_parquet(pr.demo_log_path()).filter(pl.col("class") == "malignant")
    >>> fig = plot.calibration(pr.calibration_curve(log, n_bins=10))
    >>> len(fig.axes)
    12
    """
    plt = _pyplot()
    df = _with_fold(_frame(curve), fold)
    if class_ in df.columns and df[class_].n_unique() > 1:
        classes = sorted(df[class_].unique().drop_nulls().to_list())
        msg = (
            f"plot.calibration draws one class's curves; the table holds classes {classes}: "
            f"filter one, e.g. table.filter(pl.col({class_!r}) == {classes[-1]!r})"
        )
        raise ValueError(msg)
    found = _models(df, model)
    ranked = [m for m in (order or []) if m in found]
    models = ranked + [m for m in found if m not in ranked]
    cols = min(len(models), 3)
    rows = -(-len(models) // cols)
    fig = plt.figure(figsize=(3.6 * cols, 5.0 * rows))
    # per row of models: the diagram, the histogram and an empty spacer for the titles
    grid = fig.add_gridspec(3 * rows, cols, height_ratios=[3, 1, 0.55] * rows, hspace=0.1)
    for k, name in enumerate(models):
        r, c = divmod(k, cols)
        top = fig.add_subplot(grid[3 * r, c])
        bottom = fig.add_subplot(grid[3 * r + 1, c], sharex=top)
        part = df.filter(pl.col(model) == name)
        for one in part.partition_by(fold, maintain_order=True):
            one = one.sort("bin")
            top.plot(one["prob_pred"], one["prob_true"], color="0.75", lw=0.7)
        n = pl.col("n").cast(pl.Float64)
        per_bin = (
            part.group_by("bin")
            .agg(  # the folds pooled: each fold's bin weighted by its samples
                ((pl.col("prob_pred") * n).sum() / n.sum()).alias("prob_pred"),
                ((pl.col("prob_true") * n).sum() / n.sum()).alias("mean"),
                pl.col("prob_true").min().alias("low"),
                pl.col("prob_true").max().alias("high"),
                pl.col("n").sum(),
            )
            .sort("bin")
        )
        colour = _colour(k)
        top.fill_between(
            per_bin["prob_pred"], per_bin["low"], per_bin["high"], color=colour, alpha=0.2, lw=0,
            label="fold range",
        )  # fmt: skip
        top.plot(per_bin["prob_pred"], per_bin["mean"], "o-", color=colour, lw=1.6, ms=3,
                 label="folds pooled")  # fmt: skip
        top.plot([0, 1], [0, 1], color="0.2", lw=0.8, ls="--", label="calibrated")
        top.set_xlim(0, 1)
        top.set_ylim(-0.02, 1.02)
        top.set_title(str(name))
        top.tick_params(labelbottom=False)
        # bars at the bins' mean scores, narrow enough that two close means do not overlap
        gaps = per_bin["prob_pred"].drop_nulls().sort().diff().drop_nulls()
        closest = gaps.min() if gaps.len() else None
        width = 0.9 / max(len(per_bin), 1)
        if isinstance(closest, float) and closest > 0:
            width = min(width, 0.8 * closest)
        bottom.bar(per_bin["prob_pred"], per_bin["n"], width=width, color=colour, alpha=0.7)
        bottom.set_xlabel("mean score in bin")
        if c == 0:
            top.set_ylabel(outcome)
            bottom.set_ylabel("samples")
        if k == 0:
            top.legend(loc="upper left", fontsize="small", frameon=False)
    return cast("Figure", fig)


def gain_lift(
    gain: FrameLike, lift: FrameLike, *, model: str = "model", fold: str = "fold"
) -> Figure:
    """Cumulative gain and lift charts: one line per fold, a colour per model.

    The gain panel plots ``percent_found`` against ``percent_tested``
    (:func:`polaroc.gain_curve`) over the chance diagonal and the best possible curve
    (every positive first, drawn for the pooled share of positives); the lift panel plots
    ``lift`` (:func:`polaroc.lift_curve`) over the chance level 1.

    Parameters
    ----------
    gain
        :func:`polaroc.gain_curve`'s table for one class.
    lift
        :func:`polaroc.lift_curve`'s table for the same class.
    model, fold
        Column names.

    Returns
    -------
    matplotlib.figure.Figure
        Two panels.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> from polaroc import plot
    >>> log = pl.scan_parquet(pr.demo_log_path()).filter(pl.col("class") == "malignant")
    >>> fig = plot.gain_lift(pr.gain_curve(log), pr.lift_curve(log))
    >>> [ax.get_xlabel() for ax in fig.axes]
    ['% tested', '% tested']
    """
    plt = _pyplot()
    g, li = (_with_fold(_frame(t), fold) for t in (gain, lift))
    fig, (left, right) = plt.subplots(1, 2, figsize=(10.5, 4.2))
    for k, name in enumerate(_models(g, model)):
        colour = _colour(k)
        for i, one in enumerate(g.filter(pl.col(model) == name).partition_by(fold)):
            left.plot(one["percent_tested"], one["percent_found"], color=colour, lw=0.8,
                      alpha=0.6, label=str(name) if i == 0 else None)  # fmt: skip
        for one in li.filter(pl.col(model) == name).partition_by(fold):
            one = one.filter(pl.col("lift").is_not_null())
            right.plot(one["percent_tested"], one["lift"], color=colour, lw=0.8, alpha=0.6)
    ends = g.group_by(model, fold).agg(pl.col("n").max(), pl.col("n_events").max())
    share = float(ends["n_events"].sum()) / max(float(ends["n"].sum()), 1.0)
    left.plot([0, 100 * share, 100], [0, 100, 100], color="0.4", lw=0.8, ls="--",
              label="all positives first")  # fmt: skip
    left.plot([0, 100], [0, 100], color="0.6", lw=0.7, ls=":", label="chance")
    right.axhline(1.0, color="0.6", lw=0.7, ls=":")
    left.set(xlim=(0, 100), ylim=(0, 101), xlabel="% tested", ylabel="% found", title="Gain")
    right.set(xlim=(0, 100), xlabel="% tested", ylabel="lift", title="Lift")
    right.set_ylim(bottom=0)
    left.legend(loc="lower right", fontsize="small", frameon=False)
    fig.tight_layout()
    return cast("Figure", fig)


def det(curve: FrameLike, *, model: str = "model", fold: str = "fold") -> Figure:
    """DET curves on normal-deviate axes: false negative against false positive rate.

    Both rates are placed on the probit scale (Φ⁻¹), where two normal score
    distributions give a straight line (Martin et al. 1997), with the ticks and limits
    of scikit-learn's ``DetCurveDisplay``. One line per fold, a colour per model; points
    with a rate of 0 or 1 lie at infinity and are not drawn.

    Parameters
    ----------
    curve
        :func:`polaroc.det_curve`'s table for one class: ``fpr``, ``fnr``.
    model, fold
        Column names.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> from polaroc import plot
    >>> log = pl.scan_parquet(pr.demo_log_path()).filter(pl.col("class") == "malignant")
    >>> plot.det(pr.det_curve(log)).axes[0].get_xlabel()
    'false positive rate'
    """
    from scipy.stats import norm

    plt = _pyplot()
    df = _with_fold(_frame(curve), fold)
    fig, ax = plt.subplots(figsize=(5.2, 5.0))
    for k, name in enumerate(_models(df, model)):
        for i, one in enumerate(df.filter(pl.col(model) == name).partition_by(fold)):
            x, y = norm.ppf(one["fpr"].to_numpy()), norm.ppf(one["fnr"].to_numpy())
            keep = np.isfinite(x) & np.isfinite(y)
            ax.plot(x[keep], y[keep], color=_colour(k), lw=0.9, alpha=0.7,
                    label=str(name) if i == 0 else None)  # fmt: skip
    ticks = norm.ppf(DET_TICKS)
    labels = [f"{t:.0%}" if t >= 0.01 else f"{t:.1%}" for t in DET_TICKS]
    ax.set_xticks(ticks, labels, rotation=45)
    ax.set_yticks(ticks, labels)
    ax.set_xlim(-3, 3)
    ax.set_ylim(-3, 3)
    ax.plot([-3, 3], [3, -3], color="0.6", lw=0.7, ls=":")
    ax.set_xlabel("false positive rate")
    ax.set_ylabel("false negative rate")
    ax.set_title("DET curves")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False)
    fig.tight_layout()
    return cast("Figure", fig)


def decision_curve(
    curve: FrameLike, *, model: str = "model", fold: str = "fold", title: str | None = None
) -> Figure:
    """Decision curves: each model's mean net benefit over folds, a ±1 SD band, treat all/none.

    For each model, the mean over its folds of :func:`polaroc.decision_curve`'s
    ``net_benefit`` at each threshold probability, with a band of ±1 standard deviation
    of the folds' values around it (the spread of one fold's curve, not an interval for
    the mean: folds of one cross-validation share training data). Beside them the two
    strategies that need no model: treat everyone (the folds' mean ``net_benefit_all``)
    and treat no one (0). A model helps at the thresholds where it lies above both
    (Vickers & Elkin 2006). The vertical axis stops a little below 0, where treating
    everyone falls away.

    Parameters
    ----------
    curve
        :func:`polaroc.decision_curve`'s table for one data set: ``threshold``,
        ``net_benefit``, ``net_benefit_all`` per (model, fold) (and repeat; every row of
        a model enters its mean). Rows with a null or NaN net benefit are left out.
    model, fold
        Column names (a table without a fold column is one curve per model: no band).
    title
        The axes' title (default: "Decision curves (mean over folds)").

    Returns
    -------
    matplotlib.figure.Figure
        One panel; its legend names the band.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> from polaroc import plot
    >>> log = pl.scan_parquet(pr.demo_log_path())
    >>> fig = plot.decision_curve(pr.decision_curve(log))
    >>> fig.axes[0].get_xlabel()
    'threshold probability'
    """
    plt = _pyplot()
    df = _with_fold(_frame(curve), fold)
    usable = pl.col("net_benefit").is_not_null() & pl.col("net_benefit").is_not_nan()
    df = df.filter(usable)
    fig, ax = plt.subplots(figsize=(8.4, 4.6))
    for k, name in enumerate(_models(df, model)):
        per_threshold = (
            df.filter(pl.col(model) == name)
            .group_by("threshold")
            .agg(
                mean=pl.col("net_benefit").mean(),
                sd=pl.col("net_benefit").std().fill_null(0.0),
            )
            .sort("threshold")
        )
        t, mean, sd = (per_threshold[c].to_numpy() for c in ("threshold", "mean", "sd"))
        colour = _colour(k)
        ax.fill_between(t, mean - sd, mean + sd, color=colour, alpha=0.18, lw=0)
        ax.plot(t, mean, color=colour, lw=1.6, label=str(name))
    every = df.group_by("threshold").agg(pl.col("net_benefit_all").mean()).sort("threshold")
    ax.plot(every["threshold"], every["net_benefit_all"], color="0.15", lw=1.0, ls="--",
            label="treat all")  # fmt: skip
    ax.axhline(0.0, color="0.45", lw=1.0, ls=":", label="treat none")
    ax.fill_between([], [], [], color="0.5", alpha=0.18, lw=0, label="band: ±1 SD over folds")
    highest = [*df["net_benefit"].to_list(), *every["net_benefit_all"].drop_nulls().to_list()]
    top = max([0.01, *highest])
    ax.set_ylim(-0.15 * top, 1.1 * top)
    ax.set_xlim(0, 1)
    ax.set(xlabel="threshold probability", ylabel="net benefit")
    ax.set_title(title or "Decision curves (mean over folds)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False)
    fig.tight_layout()
    return cast("Figure", fig)
