"""polaroc: ROC analysis of logged classifier scores, as Polars expressions.

Binary metrics are aggregating expressions (``pr.auc("score", "label")``) usable in
``select``, ``group_by().agg()`` and ``over()``; tables (``pr.evaluate`` and the
comparison tests) take a log and return a ``LazyFrame``.
"""

from polaroc.binary import (
    accuracy,
    auc,
    auc_se,
    confusion,
    cost,
    error,
    gini,
    npv,
    ppv,
    sensitivity,
    specificity,
)
from polaroc.scored import sauc, sauc_parts

__version__ = "0.1.0"

__all__ = [
    "accuracy",
    "auc",
    "auc_se",
    "confusion",
    "cost",
    "error",
    "gini",
    "npv",
    "ppv",
    "sauc",
    "sauc_parts",
    "sensitivity",
    "specificity",
]
