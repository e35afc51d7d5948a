"""Calibration: do the scores mean what they say? Reliability curves, ECE, slope and tests.

A model is calibrated when, among the samples it scores ``p``, a share ``p`` is positive.
The reliability curve bins the scores and sets the mean score of each bin (``prob_pred``)
against its share of positives (``prob_true``), the points of scikit-learn's
``calibration_curve``. The expected calibration error is the count-weighted mean gap of the
bins, ECE = Σ_b (n_b / n) |prob_true_b − prob_pred_b|, and the maximum calibration error
MCE = max_b |prob_true_b − prob_pred_b| (Naeini, Cooper & Hauskrecht 2015; for several
classes on the top label: the highest score of each sample and whether its class is the
label, Guo, Pleiss, Sun & Weinberger 2017, §2). :func:`calibration` also fits the
logistic recalibration of binary groups (the calibration intercept and slope, Cox 1958),
tests the scores as probabilities (Spiegelhalter 1986) and decomposes the binned Brier
score into reliability, resolution and uncertainty (Murphy 1973).

Binning, as scikit-learn: ``"uniform"`` cuts [0, 1] into ``n_bins`` equal bins at
``np.linspace(0, 1, n_bins + 1)``; ``"quantile"`` at the group's score percentiles
``np.percentile(scores, np.linspace(0, 100, n_bins + 1))`` (linear interpolation); a score
equal to an inner edge falls in the lower bin (``np.searchsorted(edges, score)``, side
left), and empty bins are dropped.

Weights (``weight=``, the case weight of each sample): every mean becomes a weighted mean
(``prob_pred`` = Σ w s / Σ w and ``prob_true`` = Σ w y / Σ w in a bin; Brier and log loss
as scikit-learn's ``sample_weight``), the ECE weighs each bin by its total weight, and the
quantile edges are the weighted quantiles, the smallest score whose share of the weight at
or below it reaches q (numpy's ``quantile(scores, q, weights=w, method="inverted_cdf")``):
integer weights then equal repeated rows of weight 1 and scaling the weights changes
nothing, which no interpolated quantile can give (unit weights may therefore move the
quantile edges from scikit-learn's interpolated ones; the uniform edges never move). A
weight of 0 drops the row, a null weight too.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Literal, Unpack

import numpy as np
import polars as pl

from polaroc.core.args import validated
from polaroc.core.inputs import ColumnLike, FrameLike, LogColumns, fail_if
from polaroc.core.log import (
    POSITIVE,
    SCORE,
    LogNames,
    columns_of,
    read_log,
    unique_rows,
    usable_weight,
)
from polaroc.core.names import WEIGHT
from polaroc.metrics.scoring import group_scores, not_probability, probability_message

__all__ = ["calibration", "calibration_curve"]

Strategy = Literal["uniform", "quantile"]
NAN = float("nan")
BINARY_ONLY = (
    "calibration_intercept",
    "calibration_slope",
    "spiegelhalter_z",
    "spiegelhalter_p",
    "reliability",
    "resolution",
    "uncertainty",
)
"""The columns :func:`calibration` gives binary groups only (null for three or more classes)."""


def _check_bins(n_bins: int, strategy: str) -> None:
    if isinstance(n_bins, bool) or not isinstance(n_bins, int) or n_bins < 1:
        msg = f"n_bins must be a positive integer, got {n_bins!r}"
        raise ValueError(msg)
    if strategy not in ("uniform", "quantile"):
        msg = f"strategy must be 'uniform' or 'quantile', got {strategy!r}"
        raise ValueError(msg)


def _weighted_quantile(s: pl.Expr, w: pl.Expr, q: float) -> pl.Expr:
    """The smallest score whose share of the weight at or below it is at least ``q``.

    numpy's ``quantile(s, q, weights=w, method="inverted_cdf")``: the inverse of the
    weighted empirical distribution function. Tied scores share one value, so the order
    of the weights within a tie does not matter.
    """
    share = w.sort_by(s).cum_sum() / w.sum()
    return s.sort().filter(share >= q).first()


def _bin_of(
    s: pl.Expr, keys: list[str], n_bins: int, strategy: str, w: pl.Expr | None = None
) -> pl.Expr:
    """The 0-based bin of each score: the number of inner edges strictly below it."""
    inner = np.linspace(0.0, 1.0, n_bins + 1)[1:-1]
    if strategy == "uniform":
        edges = [pl.lit(float(e)) for e in inner]
    elif w is None:
        edges = [s.quantile(float(q), interpolation="linear").over(keys) for q in inner]
    else:
        edges = [_weighted_quantile(s, w, float(q)).over(keys) for q in inner]
    if not edges:
        return pl.lit(0, pl.Int64)
    return pl.sum_horizontal([(s > e).cast(pl.Int64) for e in edges])


def binned(
    frame: pl.LazyFrame,
    keys: list[str],
    s: str,
    y: str,
    n_bins: int,
    strategy: str,
    weight: str | None = None,
) -> pl.LazyFrame:
    """Per (keys, bin): ``prob_pred``, ``prob_true``, ``n`` of scores ``s`` and outcomes ``y``.

    With a ``weight`` column the two means are weighted and the bin's total weight is
    the column ``weight``. A group holding a NaN score gets NaN ``prob_pred`` and
    ``prob_true`` in every bin.
    """
    score, outcome = pl.col(s), pl.col(y).cast(pl.Float64)
    nan = score.is_nan().any().over(keys)
    w = None if weight is None else pl.col(weight)
    if w is None:
        sums = {"prob_pred": score.mean(), "prob_true": outcome.mean()}
    else:
        sums = {
            "prob_pred": (score * w).sum() / w.sum(),
            "prob_true": (outcome * w).sum() / w.sum(),
            "weight": w.sum(),
        }
    return (
        frame.with_columns(bin=_bin_of(score, keys, n_bins, strategy, w), _pr_nan=nan)
        .group_by(*keys, "bin")
        .agg(**sums, n=pl.len().cast(pl.Int64), _pr_nan=pl.col("_pr_nan").first())
        .with_columns(
            pl.when(pl.col("_pr_nan")).then(NAN).otherwise(pl.col(c)).alias(c)
            for c in ("prob_pred", "prob_true")
        )
        .drop("_pr_nan")
    )


def _probabilities(  # type: ignore[no-untyped-def]
    log: FrameLike, by: str | Iterable[str] | None, columns: LogColumns, weight: ColumnLike | None
):
    """The validated log, its usable rows (probabilities checked) and the group keys.

    With a ``weight`` column the rows carry ``_pr_weight``; rows with a null or zero
    weight are dropped (a NaN score is kept: it still makes its group NaN).
    """
    data = read_log(log, by=by, columns=columns, weight=weight)
    usable = pl.col(SCORE).is_not_null() & pl.col(POSITIVE).is_not_null()
    if weight is not None:
        usable = usable & usable_weight()
    check = fail_if(not_probability(pl.col(SCORE)).any(), probability_message(repr(columns.score)))
    frame = data.frame.filter(unique_rows(data.schema, data.columns)).filter(usable).filter(check)
    return data, frame, list(data.groups)


@validated
def calibration_curve(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None = None,
    n_bins: int = 5,
    strategy: Strategy = "uniform",
    weight: ColumnLike | None = None,
    **columns: Unpack[LogNames],
) -> pl.LazyFrame:
    """Reliability curve of each group: mean score against share of positives per score bin.

    The points of scikit-learn's ``calibration_curve(y_true, y_prob, n_bins=n_bins,
    strategy=strategy)`` (its ``prob_pred`` and ``prob_true``), with the bins' index and
    count; see the module docstring for the bins. A log with a class column gives one
    curve per class (``class`` joins the keys): the class-``i`` scores, positive where
    ``label == i``; filter the class you want (for a binary log, the positive class).

    Parameters
    ----------
    log
        Score log (``DataFrame`` or ``LazyFrame``) in the contract's long format; scores
        must be probabilities in ``[0, 1]``.
    by
        Keyword-only grouping columns; ``None`` (default) = (dataset, model, repeat, fold)
        of the columns the log has (``model`` and ``fold`` always), ``()`` = one group,
        a name or names = those.
    n_bins
        Number of bins (before empty ones are dropped).
    strategy
        ``"uniform"`` (equal-width bins on [0, 1]) or ``"quantile"`` (equal-count bins
        from the group's score percentiles; weighted quantiles with ``weight``).
    weight
        Case weights, a column name or an expression (finite, ``>= 0``): ``prob_pred``
        and ``prob_true`` are then weighted means and the bin's total weight is the
        extra column ``weight`` (see the module docstring). Null or zero weights drop
        the row.
    **columns
        Names of the log's columns, as keywords: ``model``, ``fold``, ``class_``,
        ``score``, ``label``, ``sample``, ``dataset``, ``repeat`` (each defaults to its
        own name).

    Returns
    -------
    pl.LazyFrame
        One row per group and non-empty bin: by…, ``bin`` (0-based, ``Int64``),
        ``prob_pred`` (mean score), ``prob_true`` (share of positives), ``n`` (rows in
        the bin) and, with ``weight``, ``weight`` (their total weight), sorted. A group
        holding a NaN score has NaN ``prob_pred`` and ``prob_true``.

    Raises
    ------
    ValueError
        A column is missing, a bad ``n_bins``/``strategy``, or (when the query runs) a
        score outside ``[0, 1]`` or a negative, NaN or infinite weight.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> log = pl.DataFrame({
    ...     "model": "m", "fold": 0,
    ...     "score": [0.1, 0.2, 0.4, 0.6, 0.8, 0.9],
    ...     "label": [0, 0, 1, 0, 1, 1],
    ... })
    >>> pr.calibration_curve(log, n_bins=2).collect()
    shape: (2, 6)
    ┌───────┬──────┬─────┬───────────┬───────────┬─────┐
    │ model ┆ fold ┆ bin ┆ prob_pred ┆ prob_true ┆ n   │
    │ ---   ┆ ---  ┆ --- ┆ ---       ┆ ---       ┆ --- │
    │ str   ┆ i32  ┆ i64 ┆ f64       ┆ f64       ┆ i64 │
    ╞═══════╪══════╪═════╪═══════════╪═══════════╪═════╡
    │ m     ┆ 0    ┆ 0   ┆ 0.233333  ┆ 0.333333  ┆ 3   │
    │ m     ┆ 0    ┆ 1   ┆ 0.766667  ┆ 0.666667  ┆ 3   │
    └───────┴──────┴─────┴───────────┴───────────┴─────┘
    """
    _check_bins(n_bins, strategy)
    names = columns_of(columns, caller="calibration_curve")
    data, frame, keys = _probabilities(log, by, names, weight)
    if data.has_class and data.class_ not in keys:
        keys.append(data.class_)
    w = None if weight is None else WEIGHT
    curve = binned(frame, keys, SCORE, POSITIVE, n_bins, strategy, w)
    out = [k for k in keys if k in data.by or k == data.class_]
    sizes = ["n"] if weight is None else ["n", "weight"]
    return curve.sort(*keys, "bin").select(*out, "bin", "prob_pred", "prob_true", *sizes)


def _gaps(curve: pl.LazyFrame, keys: list[str], size: str = "n") -> pl.LazyFrame:
    """Per group: ECE, MCE and Murphy's (1973) decomposition of the binned Brier score.

    With W_b the bin's ``size`` (count or total weight), f_b its mean score, o_b its share
    of positives and o = Σ W_b o_b / W the group's: ECE = Σ W_b |o_b − f_b| / W, MCE the
    largest gap, reliability = Σ W_b (f_b − o_b)² / W, resolution = Σ W_b (o_b − o)² / W,
    uncertainty = o (1 − o).
    """
    true, pred = pl.col("prob_true"), pl.col("prob_pred")
    n = pl.col(size).cast(pl.Float64)
    total = n.sum()
    share = (n * true).sum() / total

    def mean(values: pl.Expr) -> pl.Expr:
        return (n * values).sum() / total

    return curve.group_by(keys).agg(
        ece=mean((true - pred).abs()),
        mce=(true - pred).abs().max(),
        reliability=mean((pred - true) ** 2),
        resolution=mean((true - share) ** 2),
        uncertainty=share * (1.0 - share),
    )


def sample_message(sample: str, names: Iterable[str]) -> str:
    """The error for a multiclass group's top-label ECE in a log without sample ids."""
    return (
        f"polaroc: calibration's top-label ece and mce of a group of three or more classes "
        f"need the sample column {sample!r} to tie each sample's class rows together (its "
        f"highest score), and the log has none (it has: {', '.join(names)}); add a sample "
        f"id column or pass sample=<column>. The Brier score and log loss need no sample "
        f"ids: pr.evaluate(log) gives them per fold."
    )


def _top_label(
    frame: pl.LazyFrame, keys: list[str], class_: str, sample: str, weight: str | None
) -> pl.LazyFrame:
    """Guo et al.'s top label: per (keys, sample), the highest score and its row's fields.

    Ties go to the smallest class; the row gives whether its class is the label and,
    with ``weight``, its weight.
    """
    order = [pl.col(SCORE), pl.col(class_)]

    def top(column: str) -> pl.Expr:
        return pl.col(column).sort_by(order, descending=[True, False]).first().alias(column)

    fields = [top(POSITIVE)] if weight is None else [top(POSITIVE), top(weight)]
    return frame.group_by(*keys, sample).agg(pl.col(SCORE).max(), *fields)


# ----------------------------------------------------------------- beyond the ECE
# Logistic recalibration, logit P(y) = a + b·logit(p), fitted by Newton's method as
# Polars aggregations: each step is one pass over a group's rows joined with its current
# parameters. The first steps run on the rows binned on a fine grid of logit(p), the
# positives and negatives of a bin apart (each its weighted mean logit and total weight),
# a table no longer than the rows that lands close to the fit in a few dozen cheap steps;
# a few exact steps over the rows then converge quadratically to the rows' own fit. The
# step counts hold with a margin on simulated logs up to the edge of separation.
_GRID = 256  # coarse bins per unit of logit(p)
_COARSE_STEPS = 30
_EXACT_STEPS = 5
_MAX_STEP = 10.0  # the slope fit's step is shortened to this (in logit units) far from the fit
_TOLERANCE = 1e-10  # the last step must be below this, relative to 1 + |parameter|
_FIT = ("_pr_a", "_pr_b", "_pr_c")  # recalibration intercept, slope; calibration in the large


def _logit_rows(frame: pl.LazyFrame, keys: list[str], weight: str | None) -> pl.LazyFrame:
    """Per row with a score strictly inside (0, 1): keys, ``x`` = logit(score), ``w1``, ``w0``.

    ``w1`` and ``w0`` are the row's weight as a positive and as a negative (one of them is
    0); rows scored exactly 0 or 1 have no finite logit and are left out of the fits, as
    ``rms::val.prob`` leaves them out of its logistic calibration.
    """
    s = pl.col(SCORE)
    w = pl.lit(1.0) if weight is None else pl.col(weight)
    positive = pl.col(POSITIVE)
    return frame.filter((s > 0.0) & (s < 1.0) & s.is_not_nan()).select(
        *keys,
        _pr_x=s.log() - (-s).log1p(),
        _pr_w1=pl.when(positive).then(w).otherwise(0.0),
        _pr_w0=pl.when(positive).then(0.0).otherwise(w),
    )


def _fit_sums(
    rows: pl.LazyFrame, params: pl.LazyFrame, keys: list[str], carried: list[str]
) -> pl.LazyFrame:
    """``params`` (its ``carried`` columns) with both fits' score and information sums.

    With μ = σ(a + b x) and n = w1 + w0 per row: ``u1`` = Σ (w1 − n μ), ``u2`` = Σ (w1 −
    n μ) x, ``i11``, ``i12``, ``i22`` = Σ n μ(1 − μ)·(1, x, x²); for the offset model
    μ₀ = σ(c + x): ``g`` = Σ (w1 − n μ₀), ``h`` = Σ n μ₀(1 − μ₀). σ and 1 − σ are each
    computed from exp(−|z|), so neither loses digits in the tails.
    """
    x, w1, w0 = pl.col("_pr_x"), pl.col("_pr_w1"), pl.col("_pr_w0")
    col = pl.col

    def halves(z: str, e: str) -> tuple[pl.Expr, pl.Expr]:
        """σ(z) and 1 − σ(z) from the columns z and e = exp(−|z|)."""
        big, small = 1.0 / (1.0 + col(e)), col(e) / (1.0 + col(e))
        up = col(z) >= 0.0
        return pl.when(up).then(big).otherwise(small), pl.when(up).then(small).otherwise(big)

    mu, nu = halves("_pr_z", "_pr_e")
    mu0, nu0 = halves("_pr_z0", "_pr_e0")
    return (  # params is read once: a plan of many steps stays a chain, not a tree
        rows.join(params, on=keys, how="inner", nulls_equal=True, maintain_order="left")
        .with_columns(_pr_z=col("_pr_a") + col("_pr_b") * x, _pr_z0=col("_pr_c") + x)
        .with_columns(_pr_e=(-col("_pr_z").abs()).exp(), _pr_e0=(-col("_pr_z0").abs()).exp())
        .with_columns(
            _pr_r=w1 * nu - w0 * mu,
            _pr_v=(w1 + w0) * mu * nu,
            _pr_r0=w1 * nu0 - w0 * mu0,
            _pr_v0=(w1 + w0) * mu0 * nu0,
        )
        .with_columns(_pr_vx=col("_pr_v") * x)
        .group_by(keys)
        .agg(
            col(carried).first(),
            _pr_u1=col("_pr_r").sum(),
            _pr_u2=(col("_pr_r") * x).sum(),
            _pr_i11=col("_pr_v").sum(),
            _pr_i12=col("_pr_vx").sum(),
            _pr_i22=(col("_pr_vx") * x).sum(),
            _pr_g=col("_pr_r0").sum(),
            _pr_h=col("_pr_v0").sum(),
        )
    )


def _newton_step(
    rows: pl.LazyFrame, params: pl.LazyFrame, keys: list[str], *, bracketed: bool
) -> pl.LazyFrame:
    """One Newton step of both fits from ``params`` over ``rows``; ``dab``, ``dc``: its size.

    The slope fit's step is shortened to ``_MAX_STEP`` far from the fit. ``bracketed``:
    the offset fit's root stays inside [``lo``, ``hi``] (its score g falls as c rises),
    and a Newton step leaving that bracket is replaced by bisection, so that fit
    converges from any start.
    """
    col = pl.col
    det = col("_pr_i11") * col("_pr_i22") - col("_pr_i12") ** 2
    da = (col("_pr_i22") * col("_pr_u1") - col("_pr_i12") * col("_pr_u2")) / det
    db = (col("_pr_i11") * col("_pr_u2") - col("_pr_i12") * col("_pr_u1")) / det
    longest = pl.max_horizontal(da.abs(), db.abs())
    shorten = pl.when(longest > _MAX_STEP).then(_MAX_STEP / longest).otherwise(1.0)
    c, g = col("_pr_c"), col("_pr_g")
    newton = c + g / col("_pr_h")
    bounds: dict[str, pl.Expr] = {}
    if bracketed:
        lo = pl.when(g >= 0.0).then(c).otherwise(col("_pr_lo"))
        hi = pl.when(g <= 0.0).then(c).otherwise(col("_pr_hi"))
        inside = (newton >= lo) & (newton <= hi)
        newton = pl.when(g == 0.0).then(c).when(inside).then(newton).otherwise((lo + hi) / 2.0)
        bounds = {"_pr_lo": lo, "_pr_hi": hi}
    carried = [*_FIT, *bounds]
    return _fit_sums(rows, params, keys, carried).select(
        *keys,
        **bounds,
        _pr_a=col("_pr_a") + shorten * da,
        _pr_b=col("_pr_b") + shorten * db,
        _pr_c=newton,
        _pr_dab=longest,
        _pr_dc=(newton - c).abs(),
    )


def recalibration(frame: pl.LazyFrame, keys: list[str], weight: str | None) -> pl.LazyFrame:
    """Per group: ``calibration_intercept`` and ``calibration_slope`` (see :func:`calibration`).

    ``frame`` holds one binary group's rows per key (``_pr_score`` in [0, 1],
    ``_pr_positive``, an optional ``weight`` column of frequency weights). Null where
    the fit does not exist: one class among the rows with a finite logit; for the slope
    also logits that separate the classes (every positive's at or above every
    negative's, or the reverse, which includes a constant score), where the
    likelihood has no maximum; and any fit whose last step is not below 1e-10
    (relative to 1 + the parameter's size).
    """
    rows = _logit_rows(frame, keys, weight).cache()
    x, w1, w0 = pl.col("_pr_x"), pl.col("_pr_w1"), pl.col("_pr_w0")
    n = w1 + w0
    coarse = (
        rows.group_by(*keys, (x * _GRID).round().alias("_pr_bin"), (w1 > 0.0).alias("_pr_y"))
        .agg(_pr_x=(n * x).sum() / n.sum(), _pr_w1=w1.sum(), _pr_w0=w0.sum())
        .select(*keys, "_pr_x", "_pr_w1", "_pr_w0")
        .cache()
    )
    pos, neg = x.filter(w1 > 0.0), x.filter(w0 > 0.0)
    facts = rows.group_by(keys).agg(
        _pr_pos=w1.sum(),
        _pr_neg=w0.sum(),
        _pr_low=x.min(),
        _pr_high=x.max(),
        _pr_separated=(neg.max() <= pos.min()) | (pos.max() <= neg.min()),
    )
    col = pl.col
    start = (col("_pr_pos") / col("_pr_neg")).log()  # logit of the share of positives
    lo, hi = start - col("_pr_high"), start - col("_pr_low")
    params = facts.filter((col("_pr_pos") > 0.0) & (col("_pr_neg") > 0.0)).select(
        *keys, _pr_a=start, _pr_b=pl.lit(0.0), _pr_lo=lo, _pr_hi=hi, _pr_c=pl.lit(0.0).clip(lo, hi)
    )
    for _ in range(_COARSE_STEPS):
        params = _newton_step(coarse, params, keys, bracketed=True)
    params = params.select(*keys, *_FIT)
    for _ in range(_EXACT_STEPS):
        params = _newton_step(rows, params, keys, bracketed=False)
    a, b, c = (col(name) for name in _FIT)
    slope_done = col("_pr_dab") <= _TOLERANCE * (1.0 + pl.max_horizontal(a.abs(), b.abs()))
    offset_done = col("_pr_dc") <= _TOLERANCE * (1.0 + c.abs())
    return facts.join(params, on=keys, how="left", nulls_equal=True).select(
        *keys,
        calibration_intercept=pl.when(offset_done).then(c),
        calibration_slope=pl.when(slope_done & ~col("_pr_separated")).then(b),
    )


def spiegelhalter(frame: pl.LazyFrame, keys: list[str], weight: str | None) -> pl.LazyFrame:
    """Per group: Spiegelhalter's (1986) z and its two-sided p (see :func:`calibration`).

    z = Σ w (y − p)(1 − 2p) / √(Σ w (1 − 2p)² p (1 − p)); null when the denominator is 0
    (every score 0, ½ or 1). p = 2 (1 − Φ(|z|)) = erfc(|z| / √2).
    """
    s, y = pl.col(SCORE), pl.col(POSITIVE).cast(pl.Float64)
    w = pl.lit(1.0) if weight is None else pl.col(weight)
    spread = (1.0 - 2.0 * s) ** 2 * s * (1.0 - s)
    table = frame.group_by(keys).agg(
        _pr_num=(w * (y - s) * (1.0 - 2.0 * s)).sum(), _pr_den=(w * spread).sum()
    )
    z = pl.when(pl.col("_pr_den") > 0.0).then(pl.col("_pr_num") / pl.col("_pr_den").sqrt())
    return table.select(*keys, spiegelhalter_z=z, spiegelhalter_p=(z.abs() / math.sqrt(2.0)).erfc())


@validated
def calibration(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None = None,
    n_bins: int = 10,
    strategy: Strategy = "uniform",
    weight: ColumnLike | None = None,
    **columns: Unpack[LogNames],
) -> pl.LazyFrame:
    """Per group: Brier score, log loss, calibration errors, slope, intercept and their tests.

    Binary groups (two classes; a log with or without the negative class's rows): on the
    positive class's scores (a log with a class column: the larger class value's rows, as
    :func:`polaroc.evaluate`'s average precision; without: the label is the indicator),

    * ``brier`` = Σ w (s − y)² / Σ w: scikit-learn's ``brier_score_loss(y, s,
      sample_weight=w)`` (w = 1 without weights, here and below);
    * ``log_loss`` = −Σ w log(probability given to the outcome) / Σ w, the probabilities
      clipped to ``[eps, 1 − eps]``: scikit-learn's ``log_loss(y, s, sample_weight=w)``;
    * ``ece`` = Σ_b (W_b / W) |prob_true_b − prob_pred_b| and ``mce`` = max_b of the
      same gap over :func:`calibration_curve`'s bins (Naeini et al. 2015), W_b the
      bin's total weight (its count without weights);
    * ``calibration_intercept`` = a in logit P(y = 1) = a + logit(s), logit(s) an
      offset: calibration in the large, 0 when the scores are right on average (on
      the logit scale), below 0 when they are too high;
    * ``calibration_slope`` = b in logit P(y = 1) = a + b·logit(s) (Cox 1958): 1 for
      calibrated scores, below 1 when they are too extreme (an overfitted model),
      above 1 when too timid. It is ``rms::val.prob``'s Slope; its Intercept is that
      joint fit's a, which is calibration in the large only when b = 1 (the offset
      fit here is CalibrationCurves' ``val.prob.ci.2`` intercept). Both are maximum
      likelihood fits (logistic regression with frequency weights w), solved by
      Newton steps to 1e-10; rows scored exactly 0 or 1 have no logit and are left
      out of both fits, as ``val.prob`` leaves them out. Null where the fit does not
      exist: one class among the remaining rows; for the slope also logits that
      separate the classes (every positive's at or above every negative's, or the
      reverse; a constant score too), where the likelihood has no maximum;
    * ``spiegelhalter_z`` = Σ w (y − s)(1 − 2s) / √(Σ w (1 − 2s)² s (1 − s))
      (Spiegelhalter 1986): under the hypothesis that the scores are the true
      probabilities it is standard normal; ``spiegelhalter_p`` = 2 (1 − Φ(|z|)), the
      two-sided p (``val.prob``'s S:z and S:p). Null when the denominator is 0 (every
      score 0, ½ or 1);
    * ``reliability``, ``resolution`` and ``uncertainty``: Murphy's (1973)
      decomposition of the Brier score on :func:`calibration_curve`'s bins, with o_b
      the bin's share of positives, f_b its mean score and o the group's share:
      reliability = Σ_b (W_b / W)(f_b − o_b)² (lower is better), resolution =
      Σ_b (W_b / W)(o_b − o)² (higher is better), uncertainty = o (1 − o). When the
      scores are constant within each bin, reliability − resolution + uncertainty
      = ``brier``; otherwise they differ by the spread of the scores within the
      bins. Uncertainty belongs to the samples, not the model (every model scored on
      the same samples has the same), so the metric registry leaves it out: nothing
      ranks models by it.

    Groups of three or more classes (needs every class's score rows) have null
    ``calibration_intercept`` … ``uncertainty`` (binary notions, not extended to the
    top label here), and

    * ``brier`` = Σ over samples of w Σ_k (s_k − [y = k])² / Σ w (scikit-learn's
      multiclass ``brier_score_loss``, not halved);
    * ``log_loss`` = −Σ w log(true class's score) / Σ w (clipped as above);
    * ``ece``, ``mce`` on the top label (Guo et al. 2017, eq. 3 and 5): each sample's
      highest score (ties: the smallest class) against whether that class is its label,
      binned as above. Finding a sample's highest score needs its class rows tied
      together by the ``sample`` column: a log with a class column but none raises
      when the query meets a group of three or more classes (binary groups need no
      sample ids).

    Parameters
    ----------
    log
        Score log in the contract's long format; scores must be probabilities.
    by
        Keyword-only grouping columns; ``None`` (default) = (dataset, model, repeat, fold)
        of the columns the log has (``model`` and ``fold`` always), ``()`` = one group,
        a name or names = those.
    n_bins, strategy
        The bins of the ECE and MCE (see :func:`calibration_curve`).
    weight
        Case weights, a column name or an expression (finite, ``>= 0``; one weight per
        sample, on each of its class rows): every mean above is then weighted, the
        quantile edges too (see the module docstring). Integer weights equal repeated
        rows, a weight of 0 (or null) drops the row, scaling the weights changes nothing
        but Spiegelhalter's z and p, which count the weights as samples (frequency
        weights: doubling every weight is the log twice over, and z grows by √2).
    **columns
        Names of the log's columns, as keywords: ``model``, ``fold``, ``class_``,
        ``score``, ``label``, ``sample``, ``dataset``, ``repeat`` (each defaults to its
        own name).

    Returns
    -------
    pl.LazyFrame
        One row per group: by…, ``n_classes``, ``brier``, ``log_loss``, ``ece``,
        ``mce`` (lower is better for all four), ``calibration_intercept`` (best at 0),
        ``calibration_slope`` (best at 1), ``spiegelhalter_z`` (best at 0),
        ``spiegelhalter_p``, ``reliability`` (lower is better), ``resolution``
        (higher) and ``uncertainty`` (the data's). Null for a group with one class only,
        NaN for a group holding a NaN score (every column).

    Raises
    ------
    ValueError
        A missing column, bad ``n_bins``/``strategy``, or, when the query runs: a score
        outside ``[0, 1]`` (naming the column), a negative, NaN or infinite weight, or a
        group of three or more classes in a log without the ``sample`` column (naming it).

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> log = pl.DataFrame({
    ...     "model": "m", "fold": 0,
    ...     "score": [0.1, 0.2, 0.4, 0.6, 0.8, 0.9],
    ...     "label": [0, 0, 1, 0, 1, 1],
    ... })
    >>> table = pr.calibration(log, n_bins=2).collect()
    >>> table.select("model", "fold", "n_classes", "brier", "log_loss", "ece", "mce")
    shape: (1, 7)
    ┌───────┬──────┬───────────┬──────────┬──────────┬─────┬─────┐
    │ model ┆ fold ┆ n_classes ┆ brier    ┆ log_loss ┆ ece ┆ mce │
    │ ---   ┆ ---  ┆ ---       ┆ ---      ┆ ---      ┆ --- ┆ --- │
    │ str   ┆ i32  ┆ i64       ┆ f64      ┆ f64      ┆ f64 ┆ f64 │
    ╞═══════╪══════╪═══════════╪══════════╪══════════╪═════╪═════╡
    │ m     ┆ 0    ┆ 2         ┆ 0.136667 ┆ 0.414932 ┆ 0.1 ┆ 0.1 │
    └───────┴──────┴───────────┴──────────┴──────────┴─────┴─────┘
    >>> table.select(
    ...     pl.col("calibration_intercept", "calibration_slope", "spiegelhalter_z").round(4)
    ... )
    shape: (1, 3)
    ┌───────────────────────┬───────────────────┬─────────────────┐
    │ calibration_intercept ┆ calibration_slope ┆ spiegelhalter_z │
    │ ---                   ┆ ---               ┆ ---             │
    │ f64                   ┆ f64               ┆ f64             │
    ╞═══════════════════════╪═══════════════════╪═════════════════╡
    │ 0.0                   ┆ 1.4275            ┆ -0.3203         │
    └───────────────────────┴───────────────────┴─────────────────┘
    >>> table.select(pl.col("reliability", "resolution", "uncertainty").round(4))
    shape: (1, 3)
    ┌─────────────┬────────────┬─────────────┐
    │ reliability ┆ resolution ┆ uncertainty │
    │ ---         ┆ ---        ┆ ---         │
    │ f64         ┆ f64        ┆ f64         │
    ╞═════════════╪════════════╪═════════════╡
    │ 0.01        ┆ 0.0278     ┆ 0.25        │
    └─────────────┴────────────┴─────────────┘
    """
    _check_bins(n_bins, strategy)
    names = columns_of(columns, caller="calibration")
    class_, label = names.class_, names.label
    data, frame, keys = _probabilities(log, by, names, weight)
    w = None if weight is None else WEIGHT
    size = "n" if w is None else "weight"
    if data.has_class:
        top_class = pl.col(class_) == pl.col(class_).max().over(keys)
        per_group = group_scores(frame, keys, class_=class_, label=label, weight=w)
    else:
        top_class, per_group = pl.lit(True), group_scores(frame, keys, weight=w)
    binary = frame.filter(top_class)
    two = binned(binary, keys, SCORE, POSITIVE, n_bins, strategy, w)
    gaps = _gaps(two, keys, size).rename({"ece": "_pr_ece2", "mce": "_pr_mce2"})
    table = per_group
    for part in (gaps, recalibration(binary, keys, w), spiegelhalter(binary, keys, w)):
        table = table.join(part, on=keys, how="left", nulls_equal=True)
    if data.has_class and data.has(names.sample):
        top = _top_label(frame, keys, class_, names.sample, w)
        gaps_k = _gaps(binned(top, keys, SCORE, POSITIVE, n_bins, strategy, w), keys, size)
        table = table.join(
            gaps_k.select(*keys, _pr_ece_k="ece", _pr_mce_k="mce"),
            on=keys,
            how="left",
            nulls_equal=True,
        )
    else:
        if data.has_class:
            message = sample_message(names.sample, data.schema.names())
            table = table.filter(fail_if((pl.col("n_classes") > 2).any(), message))
        table = table.with_columns(
            _pr_ece_k=pl.lit(None, pl.Float64), _pr_mce_k=pl.lit(None, pl.Float64)
        )
    many = pl.col("n_classes") > 2
    defined = pl.col("brier").is_not_null() | pl.col("brier").is_nan()
    nan = pl.col("brier").is_nan()

    def rule(value: pl.Expr, name: str) -> pl.Expr:
        return pl.when(defined).then(pl.when(nan).then(NAN).otherwise(value)).alias(name)

    def pick(name: str) -> pl.Expr:
        value = pl.when(many).then(pl.col(f"_pr_{name}_k")).otherwise(pl.col(f"_pr_{name}2"))
        return rule(value, name)

    beyond = [rule(pl.when(~many).then(pl.col(name)), name) for name in BINARY_ONLY]
    out = [*data.by, "n_classes", "brier", "log_loss", pick("ece"), pick("mce"), *beyond]
    return table.select(out).sort(data.by or [], maintain_order=True)
