"""One registry of polaroc's comparison tables: what each reads, takes and answers.

Every table that compares models answers in one shape (by…, ``model_a``, ``model_b``,
``n``, ``estimate``, ``statistic``, ``df``…, ``p_value``, [``p_adjusted``], ``reject``,
extras; Bayesian tables ``p_a_higher``, ``p_rope``, ``p_b_higher``; tables over k
models ``n``, ``statistic``, ``df``…, ``p_value``). The registry says, for each, what
it reads (a per-fold table, a per-data-set table, or the log), which keyword options
it takes and how to read its ``estimate``, so the report, :func:`polaroc.test_agreement`
and the schema test call every test the same way instead of inspecting signatures.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import polars as pl

from polaroc.compare.fold_table import ADJUSTMENTS, Adjust, Alternative
from polaroc.core.log import COLUMN_KEYWORDS

__all__ = [
    "ADJUSTMENTS",
    "REGISTRY",
    "Adjust",
    "Alternative",
    "Comparison",
    "comparison",
]

_FOLD_TABLE = ("by", "model", "fold", "dataset", "repeat")
_DATASET_TABLE = ("by", "model", "dataset")


@dataclass(frozen=True)
class Comparison:
    """One comparison table of polaroc.

    Attributes
    ----------
    name
        The function's name in :mod:`polaroc.compare` (and ``polaroc``).
    kind
        ``"pairwise"`` (one row per model pair, with a p-value), ``"bayes"`` (one row
        per pair, with posterior probabilities) or ``"k-model"`` (one row per by group,
        or per source of variation for ``anova``).
    reads
        ``"folds"``: a per-fold table (the folds of one data set are the sample);
        ``"datasets"``: a per-fold or per-data-set table whose data sets are the sample;
        ``"log"``: the score log (called as ``f(log, model_a, model_b, …)`` when
        pairwise, ``f(log, …)`` otherwise).
    options
        The keyword arguments it takes besides the table and the metric.
    estimate
        How to read the sign of ``estimate``: ``"difference"`` (a − b in the metric),
        ``"better"`` (positive when a is the better model, e.g. wins) or ``"rank"``
        (a − b in mean rank, rank 1 best: negative when a is better).
    """

    name: str
    kind: Literal["pairwise", "bayes", "k-model"]
    reads: Literal["folds", "datasets", "log"]
    options: frozenset[str]
    estimate: Literal["difference", "better", "rank"] = "difference"

    @property
    def function(self) -> Callable[..., pl.LazyFrame]:
        """The function, from :mod:`polaroc.compare`."""
        found: Callable[..., pl.LazyFrame] = getattr(
            importlib.import_module("polaroc.compare"), self.name
        )
        return found

    def accepted(self, **kwargs: Any) -> dict[str, Any]:
        """The keyword arguments among ``kwargs`` that this table takes."""
        return {k: v for k, v in kwargs.items() if k in self.options}

    def __call__(self, table: Any, *args: Any, **kwargs: Any) -> pl.LazyFrame:
        """Call the table with the options it takes among ``kwargs`` (others dropped)."""
        return self.function(table, *args, **self.accepted(**kwargs))


def _entry(
    name: str,
    kind: Literal["pairwise", "bayes", "k-model"],
    reads: Literal["folds", "datasets", "log"],
    options: tuple[str, ...],
    estimate: Literal["difference", "better", "rank"] = "difference",
) -> Comparison:
    columns = _FOLD_TABLE if reads == "folds" else _DATASET_TABLE if reads == "datasets" else ()
    return Comparison(name, kind, reads, frozenset((*columns, *options)), estimate)


_FREQUENTIST = ("alpha", "adjust")
_LOG = ("by", *COLUMN_KEYWORDS, "positive_class")
"""What every test that reads a log takes: ``by``, the log's column keywords (model, fold,
class_, score, label, sample, dataset, repeat) and the positive class of a two-class log."""

REGISTRY: Mapping[str, Comparison] = {
    c.name: c
    for c in (
        _entry(
            "paired_ttest",
            "pairwise",
            "folds",
            (*_FREQUENTIST, "alternative", "correction", "test_train_ratio"),
        ),
        _entry("paired_ttest_5x2cv", "pairwise", "folds", (*_FREQUENTIST, "alternative")),
        _entry("combined_ftest_5x2cv", "pairwise", "folds", _FREQUENTIST),
        _entry(
            "sign_test",
            "pairwise",
            "datasets",
            (*_FREQUENTIST, "alternative", "higher_is_better"),
            "better",
        ),
        _entry("wilcoxon_test", "pairwise", "datasets", (*_FREQUENTIST, "alternative", "method")),
        _entry("nemenyi_test", "pairwise", "datasets", (*_FREQUENTIST, "higher_is_better"), "rank"),
        _entry("bayes_ttest", "bayes", "folds", ("rope", "test_train_ratio")),
        _entry("bayes_signed_rank", "bayes", "datasets", ("rope", "prior", "n_samples", "seed")),
        _entry("anova", "k-model", "folds", ()),
        _entry("friedman_test", "k-model", "datasets", ("higher_is_better",)),
        _entry(
            "delong_test",
            "pairwise",
            "log",
            (*_LOG, *_FREQUENTIST, "alternative", "paired", "level"),
        ),
        _entry(
            "bootstrap_test",
            "pairwise",
            "log",
            (*_LOG, *_FREQUENTIST, "alternative", "paired", "n_boot", "seed"),
        ),
        _entry(
            "venkatraman_test",
            "pairwise",
            "log",
            (*_LOG, *_FREQUENTIST, "paired", "n_perm", "seed"),
        ),
        _entry(
            "mcnemar_test",
            "pairwise",
            "log",
            (*_LOG, "alpha", "alternative", "threshold", "exact"),
        ),
        _entry("delong_omnibus", "k-model", "log", (*_LOG, "models")),
        _entry("cochran_q", "k-model", "log", (*_LOG, "models", "threshold")),
    )
}
"""Every comparison table, by name; the tests that read the log (DeLong's, the
bootstrap and Venkatraman tests, McNemar's and Cochran's Q) have ``reads="log"``."""


def comparison(function: str | Callable[..., Any]) -> Comparison | None:
    """The registry entry of a comparison table (by name or function), or ``None``."""
    name = function if isinstance(function, str) else getattr(function, "__name__", "")
    return REGISTRY.get(name)
