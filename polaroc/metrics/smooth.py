"""Smoothed ROC curves: the binormal model fitted to the empirical curve, as pROC does.

The binormal model (Metz 1978; Hanley 1988) takes the ROC curve to be a straight line
in normal-deviate coordinates. pROC's ``smooth(method="binormal")`` fits that line by
ordinary least squares over the empirical curve's points, regressing the probit of the
specificity on the probit of the sensitivity, and reads the AUC off the fitted line.
Here the points come from :func:`polaroc.roc_curve` (one Polars sort per group); the
fit is three aggregations per group and the smoothed curve a cross join of the fitted
lines with a fixed grid, so everything stays one lazy plan. pROC's ``method="density"``
smooths each class's scores with a Gaussian kernel instead, as R's ``density`` does.
"""

from __future__ import annotations

from collections.abc import Iterable
from math import sqrt
from typing import Unpack

import numpy as np
import polars as pl
from scipy import special

from polaroc.core import counts
from polaroc.core.args import validated
from polaroc.core.inputs import ColumnLike, FrameLike
from polaroc.core.log import POSITIVE, SCORE, LogNames, columns_of
from polaroc.core.names import WEIGHT
from polaroc.metrics._curves import curve_input
from polaroc.metrics.curves import roc_curve

__all__ = ["smooth_roc"]

_POINT_COLUMNS = ("threshold", "fpr", "tpr", "tp", "fp")
_METHODS = ("binormal", "density")


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


@validated
def smooth_roc(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None = None,
    method: str = "binormal",
    n: int = 512,
    weight: ColumnLike | None = None,
    **columns: Unpack[LogNames],
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
    ``tpr``. Equal to pROC 1.18 to 1e-9 (``tests/proc/``), as is ``method="density"``.

    Parameters
    ----------
    log
        Score log (``DataFrame`` or ``LazyFrame``) in the contract's long format.
    by
        Keyword-only grouping columns; ``None`` (default) = (dataset, model, repeat, fold)
        of the columns the log has (``model`` and ``fold`` always), ``()`` = one group,
        a name or names = those; ``by=()`` smooths one curve for the whole log. A log with
        a class column gives one one-vs-rest curve per class, as :func:`polaroc.roc_curve`.
    method
        ``"binormal"`` (default) or ``"density"``: pROC's kernel smooth with its
        defaults (bandwidth ``"nrd0"`` of the group's scores, Gaussian kernel): the two
        classes' densities as R's ``density`` computes them, sensitivity the cases'
        density mass at or above each of ``n`` points and specificity the controls'
        mass below it; its ``auc`` is the trapezoid area under those points. An
        infinite score (pROC refuses one) ranks as the extreme it is but holds no
        density: the finite scores give the density (their bandwidth and range) with
        their share of their class, and each ±inf score is a point mass of 1/n_class
        above (below) every point of the curve — never a diagonal of AUC 0.5.
    n
        Number of sensitivities on the smoothed curve (at least 2; pROC's default 512).
    weight
        Case weights, a column name or an expression: the empirical curve is then the
        weighted one (pROC has no weights; ``"binormal"`` only).
    **columns
        Names of the log's columns, as keywords: ``model``, ``fold``, ``class_``,
        ``score``, ``label``, ``sample``, ``dataset``, ``repeat`` (each defaults to its
        own name).

    Returns
    -------
    pl.LazyFrame
        By…, ``fpr``, ``tpr`` and ``auc`` (the smoothed AUC, repeated on the group's
        rows), sorted by the keys and then along the curve. A group that cannot be
        smoothed has one row: null values when it has a single class, or (binormal)
        fewer than two usable points (pROC: "not smoothable") or all usable points at
        one sensitivity, or (density) fewer than two finite scores or a zero bandwidth;
        NaN values when it holds a NaN score.

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
        msg = f"smooth_roc: method={method!r} is not available; use 'binormal' or 'density'"
        raise ValueError(msg)
    names = columns_of(columns, caller="smooth_roc")
    if method == "density":
        if weight is not None:
            msg = "smooth_roc: method='density' takes no weight= (pROC's densities are unweighted)"
            raise ValueError(msg)
        frame, keys = curve_input(log, by, names)
        return _density_curves(frame, keys, n)
    points = roc_curve(log, by=by, weight=weight, **columns)
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


# ------------------------------------------------------------------ density


def _density_curves(frame: pl.LazyFrame, keys: list[str], n: int) -> pl.LazyFrame:
    """PROC's ``smooth(method="density")``: Gaussian kernel densities of both classes.

    As R's ``density(x, n, from, to, bw)`` (pROC passes bandwidth ``bw.nrd0`` of all the
    group's scores, from = min − 3·bw, to = max + 3·bw): each class's scores are linearly
    binned, with weights 1/n_class, onto N = max(n, 512) points (a power of two above 512)
    spanning [from − 4·bw, to + 4·bw]; the binned masses are convolved with the normal
    kernel sampled at R's spacing 2·(up − lo)/(2N − 1), as R's FFT does (here as a direct
    sum over the occupied bins), clipped at 0 and interpolated linearly at n points from
    ``from`` to ``to``. Sensitivity at point j is the cases' density mass at or above it,
    specificity the controls' mass below it (pROC's ``roc.utils.perfs.dens``): each
    point's masses are the entries of the count schema (:func:`polaroc.core.counts.table`),
    read as any ROC point is. The AUC is the trapezoid rule over those points.

    An infinite score ranks as the extreme it is, but no density holds it: the density
    is that of the finite scores (their bandwidth, range and count), carrying the share
    of its class they make up, and each ±inf score is a point mass of 1/n_class above
    (below) every point of the curve, as R's ``density`` drops non-finite values and
    keeps their share out of its total mass.
    """
    big = max(n, 512)
    if big > 512:
        big = 2 ** int(np.ceil(np.log2(big)))
    k = ["_pr_k", *keys]
    rows = frame.with_columns(_pr_k=pl.lit(0, pl.Int8)).select(*k, SCORE, POSITIVE)
    s, y = pl.col(SCORE), pl.col(POSITIVE)
    finite = s.is_finite()
    sf = s.filter(finite)
    hi = sf.std()
    lo_ = pl.min_horizontal(hi, (sf.quantile(0.75, "linear") - sf.quantile(0.25, "linear")) / 1.34)
    # R's bw.nrd0 falls back to the sd, then |x₁|, then 1 (all scores are then equal)
    first = sf.first().abs()
    spread = (
        pl.when(lo_ > 0).then(lo_).when(hi > 0).then(hi).when(first > 0).then(first).otherwise(1.0)
    )

    def share(rows_of: pl.Expr, of_class: pl.Expr) -> pl.Expr:  # of the class's rows
        return (rows_of & of_class).sum() / of_class.sum().cast(pl.Float64)

    params = rows.group_by(k).agg(
        _pr_bw=0.9 * spread * sf.len().cast(pl.Float64) ** -0.2,
        _pr_min=sf.min(),
        _pr_max=sf.max(),
        _pr_nan=s.is_nan().any(),
        _pr_pos=y.sum().cast(pl.Float64),
        _pr_neg=(~y).sum().cast(pl.Float64),
        _pr_n=sf.len(),
        _pr_fin_pos=share(finite, y),
        _pr_fin_neg=share(finite, ~y),
        _pr_top_pos=share(s == float("inf"), y),
        _pr_top_neg=share(s == float("inf"), ~y),
        _pr_low_pos=share(s == float("-inf"), y),
        _pr_low_neg=share(s == float("-inf"), ~y),
    )
    bw = pl.col("_pr_bw")
    params = params.with_columns(
        _pr_from=pl.col("_pr_min") - 3.0 * bw, _pr_to=pl.col("_pr_max") + 3.0 * bw
    ).with_columns(_pr_lo=pl.col("_pr_from") - 4.0 * bw, _pr_up=pl.col("_pr_to") + 4.0 * bw)
    params = params.with_columns(
        _pr_delta=(pl.col("_pr_up") - pl.col("_pr_lo")) / (big - 1),
        _pr_kstep=2.0 * (pl.col("_pr_up") - pl.col("_pr_lo")) / (2 * big - 1),
        _pr_ok=(pl.col("_pr_pos") > 0) & (pl.col("_pr_neg") > 0) & (pl.col("_pr_n") >= 2),
    ).cache()
    usable = params.filter(pl.col("_pr_ok") & ~pl.col("_pr_nan") & (bw > 0))
    # linear binning (R's BinDist) of the finite scores: each splits its weight between two bins
    binned = rows.filter(finite).join(
        usable.select(*k, "_pr_lo", "_pr_delta", "_pr_pos", "_pr_neg"), on=k
    )
    xpos = (s - pl.col("_pr_lo")) / pl.col("_pr_delta")
    weight = 1.0 / pl.when(y).then(pl.col("_pr_pos")).otherwise(pl.col("_pr_neg"))
    binned = binned.with_columns(_pr_ix=xpos.floor(), _pr_fx=xpos - xpos.floor(), _pr_w=weight)
    low = binned.select(
        *k, y, _pr_bin=pl.col("_pr_ix"), _pr_y=pl.col("_pr_w") * (1.0 - pl.col("_pr_fx"))
    )
    high = binned.select(
        *k, y, _pr_bin=pl.col("_pr_ix") + 1.0, _pr_y=pl.col("_pr_w") * pl.col("_pr_fx")
    )
    masses = pl.concat([low, high]).group_by(*k, POSITIVE, "_pr_bin").agg(pl.col("_pr_y").sum())
    # the kernel sum at each of the N grid points (R: a circular FFT correlation)
    grid = pl.LazyFrame({"_pr_g": np.arange(big, dtype=np.float64)})
    kernel = masses.join(usable.select(*k, "_pr_bw", "_pr_kstep"), on=k).join(grid, how="cross")
    d = (pl.col("_pr_bin") - pl.col("_pr_g")).abs() * pl.col("_pr_kstep") / pl.col("_pr_bw")
    dens = kernel.group_by(*k, POSITIVE, "_pr_g").agg(
        _pr_d=(pl.col("_pr_y") * (-0.5 * d * d).exp()).sum()
        / (pl.col("_pr_bw").first() * sqrt(2.0 * np.pi))
    )
    # linear interpolation at n points from `from` to `to` (R's approx); a class without
    # finite scores has no density (0 everywhere)
    points = pl.LazyFrame({"_pr_i": np.arange(n, dtype=np.int64)})
    sides = pl.LazyFrame({POSITIVE: [False, True]})
    at = usable.join(points, how="cross").join(sides, how="cross")
    x = pl.col("_pr_from") + pl.col("_pr_i") * (pl.col("_pr_to") - pl.col("_pr_from")) / (n - 1)
    p = (x - pl.col("_pr_lo")) / pl.col("_pr_delta")
    at = at.with_columns(_pr_j=p.floor(), _pr_f=p - p.floor())
    left = dens.select(*k, POSITIVE, _pr_j="_pr_g", _pr_d0=pl.col("_pr_d").clip(0.0))
    right = dens.select(*k, POSITIVE, _pr_j=pl.col("_pr_g") - 1.0, _pr_d1=pl.col("_pr_d").clip(0.0))
    on = [*k, POSITIVE, "_pr_j"]
    at = at.join(left, on=on, how="left").join(right, on=on, how="left")
    d0, d1 = pl.col("_pr_d0").fill_null(0.0), pl.col("_pr_d1").fill_null(0.0)
    at = at.with_columns(_pr_v=d0 * (1.0 - pl.col("_pr_f")) + d1 * pl.col("_pr_f"))
    curve = _density_points(at, usable, k).select(*k, "_pr_i", "fpr", "tpr")
    corners = usable.select(*k).join(
        pl.LazyFrame({"_pr_i": [-1, n], "fpr": [1.0, 0.0], "tpr": [1.0, 0.0]}), how="cross"
    )
    curve = pl.concat([curve, corners]).sort([*k, "_pr_i"])
    # pROC's order is specificity ascending: i = −1 (fpr 1) … n (fpr 0); trapezoids on it
    fpr, tpr = pl.col("fpr"), pl.col("tpr")
    area = (fpr - fpr.shift(-1).over(k)) * (tpr + tpr.shift(-1).over(k)) / 2.0
    curve = curve.with_columns(_pr_area=area).with_columns(auc=pl.col("_pr_area").sum().over(k))
    failed = params.filter(~(pl.col("_pr_ok") & ~pl.col("_pr_nan") & (bw > 0))).select(
        *k,
        _pr_i=pl.lit(0, pl.Int64),
        **{
            c: pl.when(pl.col("_pr_nan")).then(float("nan")).otherwise(None).cast(pl.Float64)
            for c in ("fpr", "tpr", "auc")
        },
    )
    both = pl.concat([curve.select(*k, "_pr_i", "fpr", "tpr", "auc"), failed])
    order = [*[False] * len(k), True]
    return both.sort([*k, "_pr_i"], descending=order).select(*keys, "fpr", "tpr", "auc")


def _density_points(at: pl.LazyFrame, usable: pl.LazyFrame, k: list[str]) -> pl.LazyFrame:
    """The smoothed curve's points (``fpr``, ``tpr`` per point ``_pr_i``) from the densities.

    ``at`` holds each class's density ``_pr_v`` at each point; normalised over the points
    (pROC divides by their sum) and scaled to the class's finite share, they are the
    weights of the points' entries, with the ±inf point masses at the ends: the count
    schema's ``tp``/``fp`` over the class totals are then the rates.
    """
    v = pl.col("_pr_v")
    total = v.sum().over([*k, POSITIVE])
    fin = pl.when(pl.col(POSITIVE)).then(pl.col("_pr_fin_pos")).otherwise(pl.col("_pr_fin_neg"))
    points = at.join(usable.select(*k, "_pr_fin_pos", "_pr_fin_neg"), on=k).select(
        *k,
        pl.col("_pr_i").cast(pl.Float64).alias(SCORE),
        POSITIVE,
        pl.when(total > 0).then(v / total * fin).otherwise(0.0).alias(WEIGHT),
    )
    ends = [
        (float("inf"), True, "_pr_top_pos"),
        (float("inf"), False, "_pr_top_neg"),
        (float("-inf"), True, "_pr_low_pos"),
        (float("-inf"), False, "_pr_low_neg"),
    ]
    masses = [
        usable.select(
            *k,
            pl.lit(score).alias(SCORE),
            pl.lit(positive).alias(POSITIVE),
            pl.col(share).alias(WEIGHT),
        )
        for score, positive, share in ends
    ]
    groups, found = counts.table(
        pl.concat([points, *masses]), k, usable=pl.lit(True), weighted=True
    )
    c = counts.columns(weighted=True)
    return (
        found.filter(pl.col(POSITIVE) & pl.col(SCORE).is_finite())
        .join(groups.select(counts.GID, *k), on=counts.GID)
        .select(
            *k, pl.col(SCORE).cast(pl.Int64).alias("_pr_i"), fpr=c.fp / c.n_neg, tpr=c.tp / c.n_pos
        )
    )
