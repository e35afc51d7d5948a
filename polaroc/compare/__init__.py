"""Comparing models: statistical tests on per-fold (or per-data-set) tables, and DeLong's test.

Each function reads a table of one metric value per (model, fold) — the output of
:func:`polaroc.evaluate` — or, for DeLong's and the selection protocol, the log itself, and
returns a lazy table of statistics, p-values and decisions.
"""

from polaroc.compare.across import (
    friedman_test,
    mean_ranks,
    nemenyi_test,
    sign_test,
    wilcoxon_test,
)
from polaroc.compare.bayes import bayes_signed_rank, bayes_ttest
from polaroc.compare.cv5x2 import combined_ftest_5x2cv, paired_ttest_5x2cv
from polaroc.compare.decision import verdict
from polaroc.compare.delong import delong_omnibus, delong_test
from polaroc.compare.paired import paired_ttest, test_agreement
from polaroc.compare.selection import select_models
from polaroc.compare.spread import se_vs_sd
from polaroc.compare.twoway import anova, duncan, duncan_ranges, duncan_subsets

__all__ = [
    "anova",
    "bayes_signed_rank",
    "bayes_ttest",
    "combined_ftest_5x2cv",
    "delong_omnibus",
    "delong_test",
    "duncan",
    "duncan_ranges",
    "duncan_subsets",
    "friedman_test",
    "mean_ranks",
    "nemenyi_test",
    "paired_ttest",
    "paired_ttest_5x2cv",
    "se_vs_sd",
    "select_models",
    "sign_test",
    "test_agreement",
    "verdict",
    "wilcoxon_test",
]
