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
from polaroc.curves import partial_auc, roc_curve, roc_points, trapezoid_auc
from polaroc.folds import average_roc, pooled_roc, pooling_table, stratified_folds
from polaroc.io import demo_log_path, scan_logs
from polaroc.operating import min_cost_point, neyman_pearson_point, youden_point
from polaroc.scored import sauc, sauc_parts

__version__ = "0.1.0"

__all__ = [
    "accuracy",
    "auc",
    "auc_se",
    "average_roc",
    "confusion",
    "cost",
    "demo_log_path",
    "error",
    "gini",
    "min_cost_point",
    "neyman_pearson_point",
    "npv",
    "partial_auc",
    "pooled_roc",
    "pooling_table",
    "ppv",
    "roc_curve",
    "roc_points",
    "sauc",
    "sauc_parts",
    "scan_logs",
    "sensitivity",
    "specificity",
    "stratified_folds",
    "trapezoid_auc",
    "youden_point",
]
