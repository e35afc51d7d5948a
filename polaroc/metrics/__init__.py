"""Metrics: aggregating expressions and per-group tables read from a score log.

Binary metrics (:mod:`~polaroc.metrics.binary`, :mod:`~polaroc.metrics.scored`) are
expressions; the multiclass tables, ROC curves, fold-combined curves, operating points and
intervals are lazy per-group tables.
"""

from polaroc.metrics.binary import (
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
from polaroc.metrics.curves import partial_auc, roc_curve, roc_points, trapezoid_auc
from polaroc.metrics.cutoff import (
    balanced_accuracy,
    cohen_kappa,
    f1,
    fbeta,
    lr_negative,
    lr_positive,
    mcc,
)
from polaroc.metrics.fold_curves import average_roc, pooled_roc, pooling_table
from polaroc.metrics.hmeasure import h_measure, ks_statistic
from polaroc.metrics.intervals import auc_ci, coords_ci, roc_ci
from polaroc.metrics.multiclass import multiclass_auc, pairwise_auc, proportion_correct
from polaroc.metrics.net_benefit import decision_curve
from polaroc.metrics.operating import min_cost_point, neyman_pearson_point, youden_point
from polaroc.metrics.precision_recall import average_precision, pooled_pr_curve, pr_curve
from polaroc.metrics.reliability import calibration, calibration_curve
from polaroc.metrics.scored import sauc, sauc_parts
from polaroc.metrics.scoring import brier_score, log_loss
from polaroc.metrics.smooth import smooth_roc
from polaroc.metrics.thresholds import (
    closest_topleft_point,
    det_curve,
    gain_curve,
    lift_curve,
    max_metric_point,
    threshold_table,
    top_k_accuracy,
)

__all__ = [
    "accuracy",
    "auc",
    "auc_ci",
    "auc_se",
    "average_precision",
    "average_roc",
    "balanced_accuracy",
    "brier_score",
    "calibration",
    "calibration_curve",
    "closest_topleft_point",
    "cohen_kappa",
    "confusion",
    "coords_ci",
    "cost",
    "decision_curve",
    "det_curve",
    "error",
    "f1",
    "fbeta",
    "gain_curve",
    "gini",
    "h_measure",
    "ks_statistic",
    "lift_curve",
    "log_loss",
    "lr_negative",
    "lr_positive",
    "max_metric_point",
    "mcc",
    "min_cost_point",
    "multiclass_auc",
    "neyman_pearson_point",
    "npv",
    "pairwise_auc",
    "partial_auc",
    "pooled_pr_curve",
    "pooled_roc",
    "pooling_table",
    "ppv",
    "pr_curve",
    "proportion_correct",
    "roc_ci",
    "roc_curve",
    "roc_points",
    "sauc",
    "sauc_parts",
    "sensitivity",
    "smooth_roc",
    "specificity",
    "threshold_table",
    "top_k_accuracy",
    "trapezoid_auc",
    "youden_point",
]
