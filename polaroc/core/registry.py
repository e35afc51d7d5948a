"""The metric registry: every metric a comparison can rank, declared once.

Each metric has a name (the column of the per-fold or per-group table that holds it), a
direction, a range and a family. :func:`polaroc.verdict`, the comparison tables' wording,
the report and the command line's ``--metric`` choices read it, so a new metric is one
:class:`Metric` line in :data:`METRICS`.

A direction is ``"higher"`` (AUC), ``"lower"`` (error, Brier) or ``"target"``: best at one
value, worse on either side of it (a calibration slope is best at 1, an intercept at 0).
Tests compare a target metric through its distance from the target (:meth:`Metric.loss`),
lower being better.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import polars as pl

__all__ = [
    "FAMILIES",
    "METRICS",
    "Direction",
    "Family",
    "Metric",
    "OneTestSet",
    "known_metrics",
    "lookup",
]

Direction = Literal["higher", "lower", "target"]
Family = Literal["ranking", "threshold", "probability", "calibration", "user"]
OneTestSet = Literal["delong", "mcnemar"]
FAMILIES: tuple[Family, ...] = ("ranking", "threshold", "probability", "calibration")

INF = float("inf")


@dataclass(frozen=True)
class Metric:
    """One metric: its column name, direction, range, family and how to say it.

    Attributes
    ----------
    name
        The column that holds it (``auc``, ``error``, ``calibration_slope``, …).
    direction
        ``"higher"``, ``"lower"`` or ``"target"`` (best at :attr:`target`).
    family
        ``"ranking"`` (AUC-like, read from the order of the scores), ``"threshold"`` (at a
        cut-off), ``"probability"`` (proper scoring rules), ``"calibration"``, or
        ``"user"`` for a column the registry does not know, given a direction.
    low, high
        The range of its values (``-inf``/``inf`` where unbounded).
    target
        The best value of a ``"target"`` metric (``None`` otherwise).
    label
        How a sentence names it ("AUC", "error rate", "calibration slope").
    one_test_set
        The test that compares two models on one test set (one fold, sample by
        sample), where the metric has one: ``"delong"`` for the AUC and the metrics
        that are an increasing affine map of it onto their range (Gini = 2·AUC − 1),
        whose values DeLong's test compares; ``"mcnemar"`` for a share of samples
        classified right or wrong (error, accuracy), whose paired flags McNemar's
        test compares. ``None``: no test on one test set (a verdict refuses it).
    """

    name: str
    direction: Direction
    family: Family
    low: float = 0.0
    high: float = 1.0
    target: float | None = None
    label: str = ""
    one_test_set: OneTestSet | None = None

    def __post_init__(self) -> None:
        if (self.direction == "target") != (self.target is not None):
            msg = f"metric {self.name!r}: a target is given exactly for direction 'target'"
            raise ValueError(msg)

    @property
    def higher_is_better(self) -> bool:
        """Whether a higher value of :meth:`loss` is better (a target's distance is not)."""
        return self.direction == "higher"

    @property
    def words(self) -> str:
        """The metric's name in a sentence (its label, else its column name)."""
        return self.label or self.name

    def loss(self, value: pl.Expr) -> pl.Expr:
        """``value`` as the tests compare it: itself, or its distance from the target.

        A ``"target"`` metric is ranked and tested on ``|value − target|`` (lower is
        better); the others as they are, in their own direction.
        """
        if self.target is None:
            return value
        return (value - self.target).abs()


def _m(
    name: str,
    direction: Direction,
    family: Family,
    label: str,
    low: float = 0.0,
    high: float = 1.0,
    target: float | None = None,
    one_test_set: OneTestSet | None = None,
) -> Metric:
    return Metric(name, direction, family, low, high, target, label, one_test_set)


METRICS: Mapping[str, Metric] = {
    m.name: m
    for m in (
        # ranking: the order of the scores
        _m("auc", "higher", "ranking", "AUC", one_test_set="delong"),
        _m("sauc", "higher", "ranking", "scored AUC", -INF, INF),
        _m("average_precision", "higher", "ranking", "average precision"),
        _m("gini", "higher", "ranking", "Gini coefficient", -1.0, 1.0, one_test_set="delong"),
        _m("h_measure", "higher", "ranking", "H-measure"),
        _m("ks_statistic", "higher", "ranking", "KS statistic"),
        _m("auc_ovr_macro", "higher", "ranking", "one-vs-rest AUC (macro)"),
        _m("auc_ovr_weighted", "higher", "ranking", "one-vs-rest AUC (weighted)"),
        _m("c2", "higher", "ranking", "pairwise proportion correct C₂"),
        # at a threshold
        _m("error", "lower", "threshold", "error rate", one_test_set="mcnemar"),
        _m("accuracy", "higher", "threshold", "accuracy", one_test_set="mcnemar"),
        _m("c1", "higher", "threshold", "proportion correct C₁", one_test_set="mcnemar"),
        _m("balanced_accuracy", "higher", "threshold", "balanced accuracy"),
        _m("f1", "higher", "threshold", "F1"),
        _m("fbeta", "higher", "threshold", "F-beta"),
        _m("mcc", "higher", "threshold", "Matthews correlation", -1.0, 1.0),
        _m("cohen_kappa", "higher", "threshold", "Cohen's kappa", -1.0, 1.0),
        _m("sensitivity", "higher", "threshold", "sensitivity"),
        _m("specificity", "higher", "threshold", "specificity"),
        _m("ppv", "higher", "threshold", "positive predictive value"),
        _m("npv", "higher", "threshold", "negative predictive value"),
        _m("lr_positive", "higher", "threshold", "positive likelihood ratio", 0.0, INF),
        _m("lr_negative", "lower", "threshold", "negative likelihood ratio", 0.0, INF),
        _m("cost", "lower", "threshold", "cost", 0.0, INF),
        _m("top_k_accuracy", "higher", "threshold", "top-k accuracy"),
        # proper scoring rules
        _m("brier", "lower", "probability", "Brier score", 0.0, 2.0),
        _m("log_loss", "lower", "probability", "log loss", 0.0, INF),
        # calibration
        _m("ece", "lower", "calibration", "expected calibration error"),
        _m("mce", "lower", "calibration", "maximum calibration error"),
        _m("reliability", "lower", "calibration", "reliability (Murphy)"),
        _m("resolution", "higher", "calibration", "resolution (Murphy)"),
        _m(
            "calibration_intercept",
            "target",
            "calibration",
            "calibration intercept",
            -INF,
            INF,
            0.0,
        ),
        _m("calibration_slope", "target", "calibration", "calibration slope", -INF, INF, 1.0),
        _m("spiegelhalter_z", "target", "calibration", "Spiegelhalter's z", -INF, INF, 0.0),
    )
}
"""Every metric polaroc computes that a comparison can rank, by column name."""


def known_metrics(family: Family | None = None) -> list[str]:
    """The registry's metric names, in declaration order (of one ``family`` if given)."""
    return [m.name for m in METRICS.values() if family is None or m.family == family]


def _name_of(metric: str | pl.Expr) -> str:
    if isinstance(metric, pl.Expr):
        return metric.meta.output_name(raise_if_undetermined=False) or ""
    return metric


def lookup(metric: str | pl.Expr, higher_is_better: bool | None = None) -> Metric:
    """The registry's entry for ``metric`` (a column name or an expression's output name).

    With ``higher_is_better`` given, that direction wins: a column the registry does not
    know becomes a ``"user"`` metric, and a known one is compared in the direction given.
    A name the registry does not know, without a direction, is a ``ValueError`` that
    lists the known ones.
    """
    name = _name_of(metric)
    known = METRICS.get(name)
    if higher_is_better is None:
        if known is not None:
            return known
        msg = (
            f"metric {name or metric!r} is not in polaroc's registry, so its direction is "
            f"unknown; pass higher_is_better=True or False for your own column, or use one "
            f"of: {', '.join(METRICS)}"
        )
        raise ValueError(msg)
    if not isinstance(higher_is_better, bool):
        msg = f"higher_is_better must be True, False or None, got {higher_is_better!r}"  # type: ignore[unreachable]  # untyped callers
        raise TypeError(msg)
    direction: Direction = "higher" if higher_is_better else "lower"
    if known is not None and known.direction == direction:
        return known
    label = known.words if known is not None else name
    return Metric(name, direction, "user", -INF, INF, None, label)
