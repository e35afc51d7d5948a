"""Drawing inference on a ROC figure: the confidence band of :func:`polaroc.roc_ci`.

pROC draws ``plot(ci.se(roc), type = "shape")`` as a shaded region around the curve;
:func:`roc_band` does the same on a matplotlib axis whose x axis is the false positive
rate (1 − specificity) and whose y axis is the true positive rate, as polaroc's ROC
figures are drawn. :func:`polaroc.plot.roc_overlay` takes the band as ``band=`` and draws
each model's in its curve's colour.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl

from polaroc.core.inputs import FrameLike

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.collections import PolyCollection

__all__ = ["roc_band"]


def roc_band(
    ax: Axes, band: FrameLike, *, color: Any = "tab:blue", opacity: float = 0.25, **kwargs: Any
) -> PolyCollection:
    """Shade a :func:`polaroc.roc_ci` band on a ROC axis (pROC ``plot(ci.se(...), type="shape")``).

    A band read at specificities (``specificity``, ``low``, ``high``) is filled between
    the low and high sensitivity over x = 1 − specificity; one read at sensitivities
    (``sensitivity``, ``low``, ``high``) between the specificity bounds, turned into
    false positive rates, over y = sensitivity. The band must hold one curve: filter
    it to one group first.

    Parameters
    ----------
    ax
        A matplotlib axis with the false positive rate on x and the true positive rate
        on y.
    band
        The output of :func:`polaroc.roc_ci` for one group (``DataFrame`` or
        ``LazyFrame``).
    color, opacity
        Fill colour and opacity.
    **kwargs
        Passed to ``ax.fill_between`` / ``ax.fill_betweenx`` (e.g. ``label=``).

    Returns
    -------
    matplotlib.collections.PolyCollection
        The shaded region.

    Raises
    ------
    ValueError
        The band holds several curves, or lacks the ``low``/``high`` columns.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> import numpy as np
    >>> import polars as pl
    >>> import polaroc as pr
    >>> from polaroc.plot import roc_band
    >>> rng = np.random.default_rng(0)
    >>> y = rng.random(200) < 0.4
    >>> log = pl.DataFrame({"score": rng.normal(size=200) + y, "label": y})
    >>> band = pr.roc_ci(log, by=(), specificities=np.linspace(0, 1, 21), n_boot=200, seed=1)
    >>> fig, ax = plt.subplots()
    >>> shape = roc_band(ax, band, label="95% CI")
    >>> len(shape.get_paths())
    1
    """
    table = band.collect() if isinstance(band, pl.LazyFrame) else band
    missing = [c for c in ("low", "high") if c not in table.columns]
    if missing:
        msg = f"roc_band draws a pr.roc_ci table; this one has no {', '.join(missing)} column"
        raise ValueError(msg)
    axis = "specificity" if "specificity" in table.columns else "sensitivity"
    groups = [c for c in table.columns if c not in (axis, "low", "median", "high")]
    if groups and table.select(groups).n_unique() > 1:
        msg = f"roc_band draws one curve's band; filter the table to one group of {groups}"
        raise ValueError(msg)
    table = table.sort(axis)
    if axis == "specificity":
        fpr = 1.0 - table[axis].to_numpy()
        return ax.fill_between(
            fpr,
            table["low"].to_numpy(),
            table["high"].to_numpy(),
            color=color,
            alpha=opacity,
            linewidth=0,
            **kwargs,
        )
    tpr = table[axis].to_numpy()
    return ax.fill_betweenx(
        tpr,
        1.0 - table["high"].to_numpy(),
        1.0 - table["low"].to_numpy(),
        color=color,
        alpha=opacity,
        linewidth=0,
        **kwargs,
    )
