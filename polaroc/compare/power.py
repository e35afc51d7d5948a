"""Power and sample size for AUC studies, as pROC's ``power.roc.test`` computes them.

One curve (Obuchowski, Lieber & Wians 2004): a study of n₊ cases and n₋ = κ·n₊ controls
tests H₀: AUC = 0.5 against an alternative AUC θ. With the binormal approximation of the
variance of the AUC estimate (per case),

    V(θ) = 0.0099·e^(−A²/2)·[(5A² + 8) + (A² + 8)/κ],   A = 1.414·Φ⁻¹(θ),

and V₀ = 0.0792·(1 + 1/κ) its value under H₀, the cases needed are

    n₊ = (z_α·√V₀ + z_β·√V(θ))² / (θ − 0.5)²,

which also gives the power z_β, the level z_α or (by root finding) θ from the others.
Two paired curves (Obuchowski & McClish 1997): the same equation with δ = θ_a − θ_b,
V₀ = 2·Var(θ_a) − 2·Cov and V = Var(θ_a) + Var(θ_b) − 2·Cov, the (co)variances per
case estimated on a pilot log by DeLong's method (pROC's default) or from the binormal
fits of the two curves (``method="obuchowski"``). The formulas, constants and
conventions (a two-sided test halves α; sample sizes are not rounded) are pROC 1.18's.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from math import sqrt
from typing import Any, Unpack

import numpy as np
import polars as pl
from scipy import optimize, stats

from polaroc.compare.delong import TwoModels, delong_table, two_models
from polaroc.core.args import validated
from polaroc.core.inputs import FrameLike
from polaroc.core.log import POSITIVE, SCORE, LogNames
from polaroc.metrics.curves import roc_curve
from polaroc.metrics.smooth import binormal_fit

__all__ = ["power_auc", "power_auc_test"]

_V0 = 0.0792  # Obuchowski et al. (2004): variance per case of the AUC under H₀ (κ = 1: 2·0.0792)
_ALTERNATIVES = ("two-sided", "one-sided")


def _var_theta(theta: float, kappa: float) -> float:
    """Obuchowski et al. (2004) variance per case of an AUC ``theta`` (pROC's constants)."""
    a = float(stats.norm.ppf(theta)) * 1.414
    return 0.0099 * math.exp(-(a**2) / 2.0) * ((5.0 * a**2 + 8.0) + (a**2 + 8.0) / kappa)


def _n(z_alpha: float, z_beta: float, v0: float, va: float, delta: float) -> float:
    """Cases needed; no study detects δ = 0 (an AUC of 0.5): infinitely many, as pROC's Inf."""
    if delta == 0:
        return math.inf
    return (z_alpha * sqrt(v0) + z_beta * sqrt(va)) ** 2 / delta**2


def _z_beta(n: float, z_alpha: float, v0: float, va: float, delta: float) -> float:
    return (sqrt(n * delta**2) - z_alpha * sqrt(v0)) / sqrt(va)


def _z_alpha(n: float, z_beta: float, v0: float, va: float, delta: float) -> float:
    return (sqrt(n * delta**2) - z_beta * sqrt(va)) / sqrt(v0)


def _check_alternative(alternative: str, caller: str) -> float:
    """The share of α in one tail: ½ for ``"two-sided"``, 1 for ``"one-sided"``."""
    if alternative not in _ALTERNATIVES:
        msg = f"{caller}: alternative must be 'two-sided' or 'one-sided', got {alternative!r}"
        raise ValueError(msg)
    return 0.5 if alternative == "two-sided" else 1.0


def _check_probability(name: str, value: float | None, caller: str) -> None:
    if value is not None and not 0.0 <= value <= 1.0:
        msg = f"{caller}: {name} must lie in [0, 1], got {value!r}"
        raise ValueError(msg)


def _check_positive(name: str, value: float | None, caller: str, what: str) -> None:
    """``value`` (if given) must be a number > 0: a size or ratio of zero divides by zero."""
    if value is not None and not value > 0:
        msg = f"{caller}: {name} must be a positive number ({what}), got {value!r}"
        raise ValueError(msg)


@contextmanager
def _naming(caller: str) -> Iterator[None]:
    """Input errors raised while the plan is built name ``caller`` (not the function it reuses)."""
    try:
        yield
    except (ValueError, TypeError) as error:
        text = str(error)
        if caller in text:
            raise
        try:
            renamed = type(error)(f"polaroc: {caller}: {text.removeprefix('polaroc: ')}")
        except TypeError:  # an exception class with its own arguments: keep its type's family
            renamed = ValueError(f"polaroc: {caller}: {text}")
        raise renamed from error


def _solve_auc(n_cases: float, kappa: float, z_alpha: float, z_beta: float) -> float:
    v0 = _V0 * (1.0 + 1.0 / kappa)

    def excess(theta: float) -> float:
        va = _var_theta(theta, kappa)
        return (z_alpha * sqrt(v0) + z_beta * sqrt(va)) ** 2 / (theta - 0.5) ** 2 - n_cases

    lo, hi = 0.5 + 1e-12, 1.0 - 1e-16
    if not excess(lo) > 0.0 > excess(hi):
        msg = (
            f"power_auc: no AUC in (0.5, 1) reaches this power with {n_cases:g} cases; "
            "more cases, a lower power or a higher alpha are needed"
        )
        raise ValueError(msg)
    return float(optimize.brentq(excess, lo, hi, xtol=1e-15, rtol=1e-15, maxiter=500))


@validated(
    own={
        "alpha": "None computes the significance level (pROC's power.roc.test)",
        "alternative": "'two-sided' or 'one-sided': the power of a one-sided test",
    }
)
def power_auc(
    *,
    auc: float | None = None,
    n_cases: float | None = None,
    n_controls: float | None = None,
    alpha: float | None = 0.05,
    power: float | None = None,
    kappa: float = 1.0,
    alternative: str = "two-sided",
) -> pl.DataFrame:
    """Power, sample size or detectable AUC of a one-curve AUC study (pROC ``power.roc.test``).

    The study tests H₀: AUC = 0.5 on ``n_cases`` positives and ``n_controls``
    negatives. Give all but one of ``auc``, the sample size (``n_cases`` and
    ``n_controls``, or one of them with ``kappa``), ``power`` and ``alpha``; the missing
    one is computed from Obuchowski, Lieber & Wians (2004, eq. 2–4, with the binormal
    variance V(θ) = 0.0099·e^(−A²/2)·[(5A² + 8) + (A² + 8)/κ], A = 1.414·Φ⁻¹(θ), and
    V₀ = 0.0792·(1 + 1/κ) under H₀), exactly as pROC 1.18's
    ``power.roc.test(auc=, ncases=, ncontrols=, sig.level=, power=, kappa=)``:

        n_cases = (z_α·√V₀ + z_β·√V(θ))² / (θ − 0.5)²,   z_α = Φ⁻¹(1 − α/2) two-sided.

    The detectable AUC is the root of that equation in (0.5, 1), found to machine
    precision (pROC's ``uniroot`` stops at about 1e-4). Sample sizes are real numbers,
    as pROC reports them: round up to plan a study.

    Parameters
    ----------
    auc
        The AUC under the alternative (θ).
    n_cases, n_controls
        Numbers of positives and negatives. Give one with ``kappa`` (the other is
        derived), both (``kappa`` is then their ratio), or neither (they are computed).
    alpha
        Significance level; ``None`` computes it.
    power
        Power 1 − β; ``None`` computes it.
    kappa
        Controls per case, n_controls / n_cases (default 1).
    alternative
        ``"two-sided"`` (default: α is split between both tails, as pROC's
        ``"two.sided"``) or ``"one-sided"``.

    Returns
    -------
    pl.DataFrame
        One row: ``auc``, ``n_cases``, ``n_controls``, ``alpha``, ``power`` (``Float64``).

    Raises
    ------
    ValueError
        Not exactly one unknown, a probability outside [0, 1], a negative size or
        ``kappa``, an unknown ``alternative``, or no AUC in (0.5, 1) that reaches the
        power.

    Examples
    --------
    >>> import polaroc as pr
    >>> pr.power_auc(auc=0.8, n_cases=20, n_controls=20)  # pROC: power 0.9478986
    shape: (1, 5)
    ┌─────┬─────────┬────────────┬───────┬──────────┐
    │ auc ┆ n_cases ┆ n_controls ┆ alpha ┆ power    │
    │ --- ┆ ---     ┆ ---        ┆ ---   ┆ ---      │
    │ f64 ┆ f64     ┆ f64        ┆ f64   ┆ f64      │
    ╞═════╪═════════╪════════════╪═══════╪══════════╡
    │ 0.8 ┆ 20.0    ┆ 20.0       ┆ 0.05  ┆ 0.947899 │
    └─────┴─────────┴────────────┴───────┴──────────┘

    Cases needed for 90 % power with two controls per case:

    >>> pr.power_auc(auc=0.75, power=0.9, kappa=2.0)["n_cases"].round(2).item()
    19.16
    """
    caller = "power_auc"
    tail = _check_alternative(alternative, caller)
    for name, value in (("power", power), ("alpha", alpha), ("auc", auc)):
        _check_probability(name, value, caller)
    _check_positive("n_cases", n_cases, caller, "of cases")
    _check_positive("n_controls", n_controls, caller, "of controls")
    _check_positive("kappa", kappa, caller, "controls per case")
    if n_controls is None and n_cases is not None:
        n_controls = kappa * n_cases
    elif n_cases is None and n_controls is not None:
        n_cases = n_controls / kappa
    unknown = [
        name
        for name, value in (("auc", auc), ("n_cases", n_cases), ("power", power), ("alpha", alpha))
        if value is None
    ]
    if len(unknown) != 1:
        msg = (
            "power_auc: it computes exactly one of auc, the sample size (n_cases/n_controls), "
            f"power and alpha; leave only that one unset (unset now: {unknown or 'none'})"
        )
        raise ValueError(msg)
    if n_cases is not None and n_controls is not None:
        kappa = n_controls / n_cases
    v0 = _V0 * (1.0 + 1.0 / kappa)
    if auc is None and n_cases is not None and alpha is not None and power is not None:
        auc = _solve_auc(n_cases, kappa, _z(1.0 - alpha * tail), _z(power))
    elif auc is not None and alpha is not None and power is not None:
        va = _var_theta(auc, kappa)
        n_cases = _n(_z(1.0 - alpha * tail), _z(power), v0, va, auc - 0.5)
        n_controls = kappa * n_cases
    elif auc is not None and n_cases is not None and alpha is not None:
        va = _var_theta(auc, kappa)
        power = float(stats.norm.cdf(_z_beta(n_cases, _z(1.0 - alpha * tail), v0, va, auc - 0.5)))
    elif auc is not None and n_cases is not None and power is not None:
        va = _var_theta(auc, kappa)
        alpha = float(stats.norm.sf(_z_alpha(n_cases, _z(power), v0, va, auc - 0.5))) / tail
    row = {
        "auc": auc,
        "n_cases": n_cases,
        "n_controls": n_controls,
        "alpha": alpha,
        "power": power,
    }
    return pl.DataFrame({k: [v] for k, v in row.items()}, schema=dict.fromkeys(row, pl.Float64))


# ------------------------------------------------------------------ two curves


def _binormal_covariance(two: TwoModels) -> pl.LazyFrame:
    """Obuchowski & McClish (1997) per-case variances and covariance from binormal fits.

    As pROC's ``var``/``cov(method="obuchowski")``: each model's (A, B) are the
    coefficients of its binormal smooth (:func:`polaroc.smooth_roc`) on the paired
    samples, r₊ and r₋ the Pearson correlations of the two models' scores over the
    cases and the controls.
    """
    group, rows = two.group, two.rows
    side, s, y = "_pr_side", "_pr_s", "_pr_y"
    stacked = pl.concat(
        [
            rows.select(
                *group,
                pl.lit(i, pl.Int8).alias(side),
                pl.col(c).alias(s),
                pl.col(POSITIVE).alias(y),
            )
            for i, c in enumerate((SCORE, f"{SCORE}_b"))
        ]
    )
    points = roc_curve(stacked, by=[*group, side], score=s, label=y)
    fit = binormal_fit(pl.col("fpr"), pl.col("tpr"))
    fits = points.group_by([*group, side]).agg(a=fit["a"], b=fit["b"])
    sa, sb, pos = pl.col(SCORE), pl.col(f"{SCORE}_b"), pl.col(POSITIVE)
    corr = {
        "_pr_ra": pl.corr(sa.filter(pos), sb.filter(pos)),
        "_pr_rn": pl.corr(sa.filter(~pos), sb.filter(~pos)),
    }
    corrs = rows.group_by(group).agg(**corr) if group else rows.select(**corr)
    fit_a = fits.filter(pl.col(side) == 0).select(*group, A1="a", B1="b")
    fit_b = fits.filter(pl.col(side) == 1).select(*group, A2="a", B2="b")
    if group:
        return corrs.join(fit_a, on=group, nulls_equal=True).join(fit_b, on=group, nulls_equal=True)
    return corrs.join(fit_a, how="cross").join(fit_b, how="cross")


def _f_full(a: pl.Expr, b: pl.Expr) -> pl.Expr:
    return (-(a**2) / (2.0 * (1.0 + b**2))).exp() * (2.0 * np.pi * (1.0 + b**2)) ** -0.5


def _g_full(a: pl.Expr, b: pl.Expr) -> pl.Expr:
    e1 = (-(a**2) / (2.0 * (1.0 + b**2))).exp()
    return -e1 * a * b * (2.0 * np.pi * (1.0 + b**2) ** 3) ** -0.5


def _var_params(a: pl.Expr, b: pl.Expr, kappa: pl.Expr) -> pl.Expr:
    """Obuchowski & McClish (1997) variance per case of a binormal (A, B) curve's AUC."""
    f, g = _f_full(a, b), _g_full(a, b)
    return f**2 * (1.0 + b**2 / kappa + a**2 / 2.0) + g**2 * b**2 * (1.0 + kappa) / (2.0 * kappa)


def _cov_params(
    a1: pl.Expr, b1: pl.Expr, a2: pl.Expr, b2: pl.Expr, rn: pl.Expr, ra: pl.Expr, kappa: pl.Expr
) -> pl.Expr:
    """Obuchowski & McClish (1997) covariance per case of two binormal curves' AUCs."""
    f1, f2, g1, g2 = _f_full(a1, b1), _f_full(a2, b2), _g_full(a1, b1), _g_full(a2, b2)
    return (
        f1 * f2 * (ra + rn * b1 * b2 / kappa + ra**2 * a1 * a2 / 2.0)
        + g1 * g2 * (b1 * b2 * (rn**2 + kappa * ra**2) / (2.0 * kappa))
        + f1 * g2 * (ra**2 * a1 * b2 / 2.0)
        + f2 * g1 * (ra**2 * a2 * b1 / 2.0)
    )


@validated(
    own={
        "alpha": "None computes the significance level (pROC's power.roc.test)",
        "alternative": "'two-sided' or 'one-sided': the power of a one-sided test",
    }
)
def power_auc_test(
    log: FrameLike,
    model_a: Any,
    model_b: Any,
    *,
    alpha: float | None = 0.05,
    power: float | None = None,
    n_cases: float | None = None,
    kappa: float | None = None,
    alternative: str = "two-sided",
    method: str = "delong",
    by: str | Iterable[str] | None = None,
    positive_class: Any = None,
    **columns: Unpack[LogNames],
) -> pl.LazyFrame:
    """Power or sample size of a paired comparison of two AUCs, from a pilot log.

    pROC's ``power.roc.test(roc1, roc2, ...)`` (Obuchowski & McClish 1997): the pilot
    gives δ = AUC_a − AUC_b and the variances per case of the two AUCs and their
    covariance, v_a, v_b, c (DeLong's estimates times the pilot's cases, as
    :func:`polaroc.delong_test` computes them; or, with ``method="obuchowski"``, the
    binormal formulas of Obuchowski & McClish 1997 from each curve's binormal fit and
    the correlations of the two models' scores among cases and among controls). With
    V₀ = 2v_a − 2c and V = v_a + v_b − 2c, a study of n cases has

        z_β = (√n·|δ| − z_α·√V₀) / √V,    n = (z_α·√V₀ + z_β·√V)² / δ²,

    z_α = Φ⁻¹(1 − α/2) two-sided. Leave exactly one of ``power`` (computed at the
    pilot's size, or at ``n_cases``), ``alpha``, or the sample size (computed when both
    ``power`` and ``alpha`` are given) unset.

    Parameters
    ----------
    log
        Pilot score log, read and paired as :func:`polaroc.delong_test` reads it:
        both models scored the same samples, one row per (``dataset``, ``repeat``,
        ``fold``, ``sample``) each, and a two-class log is read through its
        positive class.
    model_a, model_b
        Values of the ``model`` column.
    alpha
        Significance level; ``None`` computes it.
    power
        Power; ``None`` computes it.
    n_cases
        Planned number of cases for the power or level (default: the pilot's); must
        stay unset when the sample size is computed.
    kappa
        Controls per case of the planned study (default: the pilot's ratio).
    alternative
        ``"two-sided"`` (default) or ``"one-sided"``, as pROC.
    method
        ``"delong"`` (default, as pROC) or ``"obuchowski"`` (binormal).
    by
        Keyword-only grouping as :func:`polaroc.delong_test`: ``None`` (default) one
        pilot per data set (``dataset``) when the log has that column, else one over
        all folds; ``()`` one pilot; a log with a ``repeat`` column is taken within
        each repeat.
    positive_class
        For a log with a ``class`` column: the class whose score rows are used;
        ``None`` reads a two-class log through its larger class value, as
        :func:`polaroc.delong_test`.
    **columns
        Names of the log's columns, as keywords: ``model``, ``fold``, ``class_``,
        ``score``, ``label``, ``sample``, ``dataset``, ``repeat`` (each defaults to its
        own name).

    Returns
    -------
    pl.LazyFrame
        One row per group: by…, ``model_a``, ``model_b``, ``auc_a``, ``auc_b``,
        ``n_cases``, ``n_controls``, ``alpha``, ``power``, and for a log with a
        class column the class read (as :func:`polaroc.delong_test`). Groups whose
        pilot gives no variance (fewer than two cases or controls) have null
        results; a NaN score makes them NaN.

    Raises
    ------
    ValueError
        Not exactly one unknown, ``n_cases`` given with both ``power`` and ``alpha``,
        a probability outside [0, 1], an unknown ``alternative`` or ``method``, and
        the log errors of :func:`polaroc.delong_test` (naming ``power_auc_test``).

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> log = pl.DataFrame({
    ...     "model": ["a"] * 8 + ["b"] * 8,
    ...     "fold": [0] * 16,
    ...     "sample": list(range(8)) * 2,
    ...     "score": [0.9, 0.8, 0.7, 0.3, 0.6, 0.2, 0.4, 0.1,
    ...               0.9, 0.5, 0.4, 0.3, 0.6, 0.7, 0.2, 0.1],
    ...     "label": [True, True, True, True, False, False, False, False] * 2,
    ... })
    >>> out = pr.power_auc_test(log, "a", "b", power=0.8).collect()  # pROC: ncases 21.06734
    >>> out.select("auc_a", "auc_b", "n_cases", "n_controls")
    shape: (1, 4)
    ┌───────┬───────┬───────────┬────────────┐
    │ auc_a ┆ auc_b ┆ n_cases   ┆ n_controls │
    │ ---   ┆ ---   ┆ ---       ┆ ---        │
    │ f64   ┆ f64   ┆ f64       ┆ f64        │
    ╞═══════╪═══════╪═══════════╪════════════╡
    │ 0.875 ┆ 0.625 ┆ 21.067341 ┆ 21.067341  │
    └───────┴───────┴───────────┴────────────┘
    """
    caller = "power_auc_test"
    tail = _check_alternative(alternative, caller)
    if method not in ("delong", "obuchowski"):
        msg = f"power_auc_test: method must be 'delong' or 'obuchowski', got {method!r}"
        raise ValueError(msg)
    _check_probability("power", power, caller)
    _check_probability("alpha", alpha, caller)
    _check_positive("n_cases", n_cases, caller, "of cases")
    _check_positive("kappa", kappa, caller, "controls per case")
    if power is not None and alpha is not None and n_cases is not None:
        msg = "power_auc_test: with both power and alpha given it computes n_cases; drop n_cases"
        raise ValueError(msg)
    if power is None and alpha is None:
        msg = "power_auc_test: it computes one of power, alpha and n_cases; give the other two"
        raise ValueError(msg)
    with _naming("power_auc_test"):
        two = two_models(
            log, model_a, model_b, by=by, paired=True, positive_class=positive_class,
            caller="power_auc_test", names=columns,
        )  # fmt: skip
    group = two.group
    # the pilot's cases and controls: the samples both models scored, as DeLong's counts
    table = delong_table(two, model_a, model_b).select(
        *group, "auc_a", "auc_b", "var_a", "var_b", "cov",
        _pr_cases=pl.col("n_pos").cast(pl.Float64),
        _pr_controls=pl.col("n_neg").cast(pl.Float64),
    )  # fmt: skip
    cases, controls = pl.col("_pr_cases"), pl.col("_pr_controls")
    ratio = controls / cases
    if method == "obuchowski":
        params = _binormal_covariance(two)
        table = (
            table.join(params, on=group, nulls_equal=True, maintain_order="left")
            if group
            else table.join(params, how="cross")
        )
        a1, b1, a2, b2 = (pl.col(c) for c in ("A1", "B1", "A2", "B2"))
        ra, rn = pl.col("_pr_ra"), pl.col("_pr_rn")
        table = table.with_columns(
            _pr_v1=_var_params(a1, b1, ratio),
            _pr_v2=_var_params(a2, b2, ratio),
            _pr_c12=_cov_params(a1, b1, a2, b2, rn, ra, ratio),
        )
    else:
        table = table.with_columns(
            _pr_v1=pl.col("var_a") * cases,
            _pr_v2=pl.col("var_b") * cases,
            _pr_c12=pl.col("cov") * cases,
        )
    v0 = 2.0 * pl.col("_pr_v1") - 2.0 * pl.col("_pr_c12")
    va = pl.col("_pr_v1") + pl.col("_pr_v2") - 2.0 * pl.col("_pr_c12")
    delta = (pl.col("auc_a") - pl.col("auc_b")).abs()
    n = cases if n_cases is None else pl.lit(float(n_cases))
    if power is not None and alpha is not None:
        z_a, z_b = _z(1.0 - alpha * tail), _z(power)
        n = (z_a * v0.sqrt() + z_b * va.sqrt()) ** 2 / delta**2
        out_alpha, out_power = pl.lit(alpha, pl.Float64), pl.lit(power, pl.Float64)
    elif alpha is not None:
        z = ((n * delta**2).sqrt() - _z(1.0 - alpha * tail) * v0.sqrt()) / va.sqrt()
        out_alpha, out_power = pl.lit(alpha, pl.Float64), _normal_cdf(z)
    else:
        assert power is not None
        z = ((n * delta**2).sqrt() - _z(power) * va.sqrt()) / v0.sqrt()
        out_alpha, out_power = _normal_cdf(-z) / tail, pl.lit(power, pl.Float64)
    dtype = two.dtype
    out = table.select(
        *group,
        model_a=pl.lit(model_a, dtype),
        model_b=pl.lit(model_b, dtype),
        auc_a="auc_a",
        auc_b="auc_b",
        n_cases=n,
        n_controls=n * (ratio if kappa is None else pl.lit(float(kappa))),
        alpha=out_alpha,
        power=out_power,
    )
    return two.finish(out.sort(group) if group else out)


def _z(p: float) -> float:
    """Φ⁻¹(p)."""
    return float(stats.norm.ppf(p))


def _normal_cdf(z: pl.Expr) -> pl.Expr:
    """Φ(z) in Polars (``erfc``)."""
    return 0.5 * (-z / sqrt(2.0)).erfc()
