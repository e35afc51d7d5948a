"""Smoothed ROC curves: the binormal model fitted to the empirical curve, as pROC does.

The binormal model (Metz 1978; Hanley 1988) takes the ROC curve to be a straight line
in normal-deviate coordinates. pROC's ``smooth(method="binormal")`` fits that line by
ordinary least squares over the empirical curve's points, regressing the probit of the
specificity on the probit of the sensitivity, and reads the AUC off the fitted line.
Here the points come from :func:`polaroc.roc_curve` (one Polars sort per group); the
fit is three aggregations per group and the smoothed curve a cross join of the fitted
lines with a fixed grid, so everything stays one lazy plan.
"""

from __future__ import annotations

from collections.abc import Iterable
from math import sqrt

import numpy as np
import polars as pl
from scipy import special

from polaroc._input import FrameLike
from polaroc.metrics.curves import roc_curve

__all__ = ["smooth_roc"]

_POINT_COLUMNS = ("threshold", "fpr", "tpr", "tp", "fp")
_METHODS = ("binormal",)


def probit(p: pl.Expr) -> pl.Expr:
    """Φ⁻¹(p), the standard normal quantile, elementwise (``±inf`` at 1 and 0, null kept).

    Polars has no normal quantile, so scipy's ``ndtri`` runs vectorised on the column
    (curve points, never log rows).
    """

    def call(s: pl.Series) -> pl.Series:
        values = s.cast(pl.Float64)
        out = special.ndtri(values.fill_null(np.nan).to_numpy())
        return pl.Series(s.name, out).set(values.is_null(), None)

    return p.map_batches(call, return_dtype=pl.Float64, is_elementwise=True)


def binormal_fit(fpr: pl.Expr, tpr: pl.Expr) -> dict[str, pl.Expr]:
    """Aggregations that fit pROC's binormal line to one group's ROC points.

    With x = Φ⁻¹(sensitivity) and y = Φ⁻¹(specificity) over the points where both are
    finite (the corners and any point with a rate of 0 or 1 drop out), the least-squares
    line y = a + b·x has b = cov(x, y)/var(x) and a = ȳ − b·x̄ (pROC's
    ``lm(sp ~ se)``). The smoothed AUC is Φ(a / √(1 + b²)) (pROC's ``auc`` of a
    binormal smooth). Returns ``a``, ``b``, ``_pr_points`` (points used) and
    ``_pr_nan`` (a NaN rate). A one-class group has null rates, hence no points.
    """
    x, y = probit(tpr), probit(1.0 - fpr)
    finite = x.is_finite() & y.is_finite()
    xs, ys = x.filter(finite), y.filter(finite)
    slope = pl.cov(xs, ys) / xs.var()
    return {
        "b": slope,
        "a": ys.mean() - slope * xs.mean(),
        "_pr_points": finite.sum().cast(pl.Int64),
        "_pr_nan": (fpr.is_nan() | tpr.is_nan()).any(),
    }


def _upper_tail(z: pl.Expr) -> pl.Expr:
    """1 − Φ(z) = ½ erfc(z/√2), in Polars."""
    return 0.5 * (z / sqrt(2.0)).erfc()


def _grid(n: int) -> pl.LazyFrame:
    """The n sensitivities pROC evaluates, Φ(Φ⁻¹(i/(n − 1))), between the two corners.

    ``_pr_j`` orders the points from (0, 0) (j = 0) to (1, 1) (j = n + 1); ``_pr_z``
    is the sensitivity's probit (null at the corners).
    """
    z = special.ndtri(np.arange(n) / (n - 1))
    return pl.LazyFrame(
        {
            "_pr_j": np.arange(n + 2, dtype=np.int64),
            "_pr_z": [None, *z.tolist(), None],
            "_pr_tpr": [0.0, *special.ndtr(z).tolist(), 1.0],
        },
        schema={"_pr_j": pl.Int64, "_pr_z": pl.Float64, "_pr_tpr": pl.Float64},
    )


def smooth_roc(
    log: FrameLike,
    by: str | Iterable[str] | None = None,
    *,
    method: str = "binormal",
    n: int = 512,
    model: str = "model",
    fold: str = "fold",
    class_: str = "class",
    score: str = "score",
    label: str = "label",
    dataset: str = "dataset",
    weight: str | None = None,
) -> pl.LazyFrame:
    """The binormal smoothed ROC curve of each group and its AUC (pROC's ``smooth``).

    The empirical curve (:func:`polaroc.roc_curve`: one point per distinct score) is
    mapped to normal deviates, x = Φ⁻¹(tpr) and y = Φ⁻¹(1 − fpr), keeping the points
    where both are finite, and the line y = a + b·x is fitted by least squares. This is
    what pROC's ``smooth(roc, method="binormal")`` does — it regresses the specificity's
    probit on the sensitivity's, not the reverse, and the two fits differ, so the
    numbers here follow pROC's direction. The smoothed AUC is
    Φ(a / √(1 + b²)), the area under the fitted binormal curve (Metz 1978; Hanley 1988,
    the binormal "A_z").

    The curve holds pROC's points: ``n`` sensitivities Φ(Φ⁻¹(i / (n − 1))),
    i = 0 … n − 1, each with specificity Φ(a + b·Φ⁻¹(sensitivity)), plus the corners
    (0, 0) and (1, 1) — ``n + 2`` rows per group, from (0, 0) to (1, 1) in order of
    ``tpr``. Equal to pROC 1.18 to 1e-9 (``tests/proc/``).

    Parameters
    ----------
    log
        Score log (``DataFrame`` or ``LazyFrame``) in the contract's long format.
    by
        Grouping columns; default ``(model, fold)``, with ``dataset`` first when the log
        has one. ``by=()`` smooths one curve for the whole log. A log with a class column
        gives one one-vs-rest curve per class, as :func:`polaroc.roc_curve`.
    method
        ``"binormal"`` (the only method so far; pROC's ``"density"`` is not
        implemented).
    n
        Number of sensitivities on the smoothed curve (at least 2; pROC's default 512).
    model, fold, class_, score, label, dataset
        Names of the log's columns.
    weight
        Name of a case-weight column: the empirical curve is then the weighted one
        (pROC has no weights).

    Returns
    -------
    pl.LazyFrame
        By…, ``fpr``, ``tpr`` and ``auc`` (the smoothed AUC, repeated on the group's
        rows), sorted by the keys and then along the curve. A group that cannot be
        smoothed has one row: null values when it has a single class, or fewer than
        two usable points (pROC: "not smoothable"), or all usable points at one
        sensitivity; NaN values when it holds a NaN score.

    Raises
    ------
    ValueError
        An unknown ``method``, ``n < 2``, or a log error of :func:`polaroc.roc_curve`.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> log = pl.DataFrame({
    ...     "model": "m",
    ...     "fold": 0,
    ...     "score": [0.9, 0.8, 0.7, 0.6, 0.55, 0.5, 0.4, 0.3, 0.2, 0.1],
    ...     "label": [1, 1, 0, 1, 1, 0, 1, 0, 0, 0],
    ... })
    >>> pr.smooth_roc(log, n=5).collect()
    shape: (7, 5)
    ┌───────┬──────┬──────────┬──────┬──────────┐
    │ model ┆ fold ┆ fpr      ┆ tpr  ┆ auc      │
    │ ---   ┆ ---  ┆ ---      ┆ ---  ┆ ---      │
    │ str   ┆ i32  ┆ f64      ┆ f64  ┆ f64      │
    ╞═══════╪══════╪══════════╪══════╪══════════╡
    │ m     ┆ 0    ┆ 0.0      ┆ 0.0  ┆ 0.783891 │
    │ m     ┆ 0    ┆ 0.0      ┆ 0.0  ┆ 0.783891 │
    │ m     ┆ 0    ┆ 0.154192 ┆ 0.25 ┆ 0.783891 │
    │ m     ┆ 0    ┆ 0.206377 ┆ 0.5  ┆ 0.783891 │
    │ m     ┆ 0    ┆ 0.267794 ┆ 0.75 ┆ 0.783891 │
    │ m     ┆ 0    ┆ 1.0      ┆ 1.0  ┆ 0.783891 │
    │ m     ┆ 0    ┆ 1.0      ┆ 1.0  ┆ 0.783891 │
    └───────┴──────┴──────────┴──────┴──────────┘

    The empirical AUC of the same scores is 0.84; the binormal one smooths its steps
    (pROC: ``smooth(roc(label, score, direction="<"), n=5)``, AUC 0.7839).
    """
    if method not in _METHODS:
        msg = f"smooth_roc: method={method!r} is not available; use method='binormal'"
        raise ValueError(msg)
    if isinstance(n, bool) or not isinstance(n, int) or n < 2:
        msg = f"smooth_roc: n must be an integer of at least 2 (pROC's default 512), got {n!r}"
        raise ValueError(msg)
    points = roc_curve(
        log,
        by,
        model=model,
        fold=fold,
        class_=class_,
        score=score,
        label=label,
        dataset=dataset,
        weight=weight,
    )
    keys = [c for c in points.collect_schema().names() if c not in _POINT_COLUMNS]
    fit = binormal_fit(pl.col("fpr"), pl.col("tpr"))
    fits = points.group_by(keys).agg(**fit) if keys else points.select(**fit)
    a, b, z = pl.col("a"), pl.col("b"), pl.col("_pr_z")
    usable = (pl.col("_pr_points") >= 2) & b.is_finite() & ~pl.col("_pr_nan")
    missing = pl.when(pl.col("_pr_nan")).then(float("nan")).otherwise(None)
    # a + b·z at z = ±inf is NaN for b = 0: the line is then flat at specificity Φ(a).
    line = pl.when(b == 0.0).then(a).otherwise(a + b * z)
    fpr = pl.when(z.is_null()).then(pl.col("_pr_tpr")).otherwise(_upper_tail(line))
    curve = (
        fits.join(_grid(n), how="cross")
        .filter(usable | (pl.col("_pr_j") == 0))
        .sort([*keys, "_pr_j"])
        .select(
            *keys,
            fpr=pl.when(usable).then(fpr).otherwise(missing),
            tpr=pl.when(usable).then(pl.col("_pr_tpr")).otherwise(missing),
            auc=pl.when(usable).then(_upper_tail(-a / (1.0 + b * b).sqrt())).otherwise(missing),
        )
    )
    return curve
