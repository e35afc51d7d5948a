"""polaroc: ROC analysis of logged classifier scores, as Polars expressions.

Binary metrics are aggregating expressions (``pr.auc("score", "label")``) usable in
``select``, ``group_by().agg()`` and ``over()``; tables (``pr.evaluate`` and the
comparison tests) take a log and return a ``LazyFrame``.
"""

from polaroc.across import friedman_test, mean_ranks, nemenyi_test, wilcoxon_test
from polaroc.batches import evaluate_in_batches, plan_batches
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
from polaroc.delong import delong_test
from polaroc.evaluation import evaluate
from polaroc.experiment import cross_validate_log
from polaroc.folds import average_roc, pooled_roc, pooling_table, stratified_folds
from polaroc.io import demo_log_path, scan_logs
from polaroc.multiclass import multiclass_auc, pairwise_auc, proportion_correct
from polaroc.operating import min_cost_point, neyman_pearson_point, youden_point
from polaroc.paired import paired_ttest, test_agreement
from polaroc.resample import bootstrap
from polaroc.scored import sauc, sauc_parts
from polaroc.selection import select_models
from polaroc.spread import se_vs_sd
from polaroc.twoway import anova, duncan, duncan_ranges, duncan_subsets

__version__ = "0.1.0"

__all__ = [
    "accuracy",
    "anova",
    "auc",
    "auc_se",
    "average_roc",
    "bootstrap",
    "confusion",
    "cost",
    "cross_validate_log",
    "delong_test",
    "demo_log_path",
    "duncan",
    "duncan_ranges",
    "duncan_subsets",
    "error",
    "evaluate",
    "evaluate_in_batches",
    "friedman_test",
    "gini",
    "mean_ranks",
    "min_cost_point",
    "multiclass_auc",
    "nemenyi_test",
    "neyman_pearson_point",
    "npv",
    "paired_ttest",
    "pairwise_auc",
    "partial_auc",
    "plan_batches",
    "pooled_roc",
    "pooling_table",
    "ppv",
    "proportion_correct",
    "roc_curve",
    "roc_points",
    "sauc",
    "sauc_parts",
    "scan_logs",
    "se_vs_sd",
    "select_models",
    "sensitivity",
    "specificity",
    "stratified_folds",
    "test_agreement",
    "trapezoid_auc",
    "wilcoxon_test",
    "youden_point",
]
