"""Sums that give the same bits on every run, whatever the thread count and row order.

Float addition is not associative, and Polars adds a group's rows in whatever order
its plan produced them: a group-by's or a join's output order, the partial sums of the
morsels a streaming engine's threads took (and its optimizer drops a sort ahead of an
order-free ``sum``). So a plain ``sum``, ``mean`` or ``var`` can change in its last
bits from run to run, and the contract promises byte-identical tables. Two mechanisms:

* :func:`fixed_sum` (and the mean, variance, standard deviation and correlation built
  on it) sorts a group's values and adds them in that order — for the small tables
  the tests read (folds, data sets, model pairs), where gathering a group costs nothing;
* :class:`ExactSum` adds large groups exactly in 128-bit integers, as plain streaming
  reductions, for the counting core's sums over the log's rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

__all__ = [
    "ExactSum",
    "fixed_corr",
    "fixed_cov",
    "fixed_mean",
    "fixed_std",
    "fixed_sum",
    "fixed_var",
]


def fixed_sum(x: pl.Expr) -> pl.Expr:
    """Σ ``x`` added in ascending order of ``x``: the same bits however the rows came.

    A group's rows reach an aggregation in whatever order the plan produced them (a
    group-by's or a join's output, a streaming engine's partial sums; the optimizer
    drops a sort ahead of an order-free ``sum``), and float addition is not
    associative, so a plain sum can change in its last bits from run to run and with
    the thread count. Sorting the values and taking the last cumulative sum fixes the
    order (a cumulative sum depends on it, so the sort stays). Nulls are left out as
    ``sum`` leaves them (no value: 0); a NaN sorts last and makes the sum NaN. Meant
    for the small tables the tests read (folds, data sets, model pairs).
    """
    return x.sort().cum_sum().last().fill_null(0)


def fixed_mean(x: pl.Expr) -> pl.Expr:
    """The mean of ``x`` from :func:`fixed_sum` (null without a value, as ``mean``)."""
    n = x.count()
    return pl.when(n > 0).then(fixed_sum(x) / n)


def fixed_var(x: pl.Expr, ddof: int = 1) -> pl.Expr:
    """The variance of ``x`` (two passes of :func:`fixed_sum`; null for n ≤ ddof, as ``var``)."""
    n = x.count()
    return pl.when(n > ddof).then(fixed_sum((x - fixed_mean(x)) ** 2) / (n - ddof))


def fixed_std(x: pl.Expr, ddof: int = 1) -> pl.Expr:
    """The standard deviation of ``x``, √:func:`fixed_var`."""
    return fixed_var(x, ddof).sqrt()


def fixed_cov(x: pl.Expr, y: pl.Expr, ddof: int = 1) -> pl.Expr:
    """The covariance of ``x`` and ``y`` (same rows, no nulls) from :func:`fixed_sum`."""
    n = x.count()
    products = (x - fixed_mean(x)) * (y - fixed_mean(y))
    return pl.when(n > ddof).then(fixed_sum(products) / (n - ddof))


def fixed_corr(x: pl.Expr, y: pl.Expr) -> pl.Expr:
    """Pearson's correlation of ``x`` and ``y`` from :func:`fixed_sum` (same rows, no nulls)."""
    dx, dy = x - fixed_mean(x), y - fixed_mean(y)
    return fixed_sum(dx * dy) / (fixed_sum(dx**2) * fixed_sum(dy**2)).sqrt()


_GRID = 2.0**80  # terms on the grid 2^-80 of their unit; 2^47 units of them fit an Int128


@dataclass(frozen=True)
class ExactSum:
    """Σ of a float column over a group, the same bits in whatever order its rows come.

    A streaming group-by adds the partial sums of the morsels its threads took, and
    float addition is not associative, so a float sum changes in its last bits with
    the thread count and the order of the rows. Here each term is divided by ``unit``
    (a per-row expression, constant within the group, such that |term/unit| ≤ the
    term's weight: the group's |ratios| sum below 2^47), written as an integer
    multiple of 2^-80 and the multiples summed exactly in 128 bits; the sum is then
    multiplied by the unit. Each step rounds the same way whatever the order, and a
    ratio of 2^-27 or more keeps its 53 bits (a smaller one is truncated at 2^-80). A
    group with a zero or non-finite unit keeps the float sum.

    A term that is not finite (a NaN or infinite score) makes the float sum non-finite:
    the group then keeps that float sum. :meth:`aggs` are plain reductions, each
    streamed without gathering the group (a combination of two reductions would be
    gathered); :meth:`result` reads them after the group-by.
    """

    name: str
    value: pl.Expr
    unit: pl.Expr
    finite: bool = False

    def aggs(self) -> list[pl.Expr]:
        """The group-by's reductions: ``<name>_u``, ``_k`` and (unless ``finite``) ``_f``.

        ``finite``: every term is finite by construction (a count, a weight, a share),
        so the float sum that stands in for a non-finite one is not taken (one
        reduction fewer over the rows).
        """
        n, ratio = self.name, self.value / self.unit
        aggs = [  # a non-finite multiple is no integer: null, and the float sum is not finite
            (ratio * _GRID).cast(pl.Int128, strict=False).sum().alias(f"{n}_u"),
            self.unit.first().cast(pl.Float64).alias(f"{n}_k"),
        ]
        return aggs if self.finite else [*aggs, self.value.sum().alias(f"{n}_f")]

    def result(self) -> pl.Expr:
        """The sum, from the reductions' columns (dropped by the caller's ``select``)."""
        n = self.name
        unit = pl.col(f"{n}_k")
        exact = pl.col(f"{n}_u").cast(pl.Float64) / _GRID * unit
        usable = unit.is_finite() & (unit != 0.0)
        if self.finite:  # a zero unit bounds only zero terms
            return pl.when(usable).then(exact).otherwise(0.0).alias(n)
        floats = pl.col(f"{n}_f")
        return pl.when(usable & floats.is_finite()).then(exact).otherwise(floats).alias(n)
