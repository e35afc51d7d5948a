"""The verdict: which model is best, which are not distinguishable from it, and by which test.

``pr.verdict`` reads a per-fold table, finds its design (one k-fold run, repeated k-fold,
5 × 2 cv, one test set, several data sets), runs the one test the literature recommends
for that design with the existing comparison functions, and compares every model with
the best one (comparisons with a control, Demšar 2006, §3.2.2). The metric's direction
comes from the metric registry (:mod:`polaroc.core.registry`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import polars as pl
from scipy import stats as scipy_stats

from polaroc.compare._dist import normal_sf, t_ppf
from polaroc.compare.across import friedman_test, mean_ranks, rank_pairs, wilcoxon_test
from polaroc.compare.bayes import bayes_signed_rank, bayes_ttest
from polaroc.compare.cv5x2 import combined_ftest_5x2cv
from polaroc.compare.delong import delong_test
from polaroc.compare.fold_table import (
    DIGITS,
    Adjust,
    adjusted,
    check_adjust,
    check_alpha,
    metric_expr,
    negligible,
    resolve_by,
)
from polaroc.compare.one_test_set import cochran_q, mcnemar_test
from polaroc.compare.paired import paired_ttest
from polaroc.core.args import validated
from polaroc.core.inputs import ColumnLike, FrameLike, as_lazy, require_columns
from polaroc.core.registry import Metric, known_metrics, lookup
from polaroc.core.sums import fixed_mean, fixed_std, fixed_sum

__all__ = ["verdict"]

PAIRED_T = "paired t"
CORRECTED_T = "corrected repeated k-fold t"
COMBINED_F = "combined 5x2cv F"
FRIEDMAN_Z = "Friedman + mean-rank z"
WILCOXON = "Wilcoxon signed-rank"
BAYES_T = "Bayesian correlated t"
BAYES_SIGNED_RANK = "Bayesian signed-rank"
DELONG = "DeLong"
MCNEMAR = "McNemar"
COCHRAN_MCNEMAR = "Cochran's Q + McNemar"
TESTS: tuple[str, ...] = (PAIRED_T, CORRECTED_T, COMBINED_F, FRIEDMAN_Z, WILCOXON, BAYES_T)
TESTS += (BAYES_SIGNED_RANK, DELONG, MCNEMAR, COCHRAN_MCNEMAR)
"""Every value of the verdict's ``test`` column."""

MAGNITUDES = ((0.2, "negligible"), (0.5, "small"), (0.8, "medium"))
"""Cohen's (1988) words for |d| below each bound, as autorank uses them; "large" beyond."""

_MIN_DATASETS = 5  # Demšar (2006, §3.2.2): fewer data sets give the rank tests little power
_ONE_SET = (DELONG, MCNEMAR, COCHRAN_MCNEMAR)
_COLUMNS = ["rank", "mean", "ci_low", "ci_high", "best", "tied_with_best", "p_vs_best", "test"]
_COLUMNS += ["effect_size", "magnitude", "n"]


@validated(defaults={"adjust": "the contract's verdict adjusts by Holm"})
def verdict(
    table: FrameLike,
    metric: ColumnLike = "auc",
    *,
    alpha: float = 0.05,
    adjust: Adjust = "holm",
    rope: float | None = None,
    by: str | Iterable[str] | None = None,
    higher_is_better: bool | None = None,
    test_train_ratio: float | None = None,
    seed: int | None = None,
    model: str = "model",
    fold: str = "fold",
    dataset: str = "dataset",
    repeat: str = "repeat",
    log: FrameLike | None = None,
) -> pl.LazyFrame:
    """Which model is best, which are not distinguishable from it, and by which test.

    Within each group (by default each data set) the models are ranked by their mean
    metric over the folds, the best one is the control, and every other model is
    compared with it by the one test the design calls for (the ``test`` column):

    * one k-fold run: the paired t (``pr.paired_ttest``) on the k fold differences
      (``"paired t"``);
    * r repeats of k-fold (a ``repeat`` column): the corrected repeated k-fold t,
      ``pr.paired_ttest``'s default on such a table — the plain t on r·k overlapping
      folds rejects far too often (Nadeau & Bengio 2003; Bouckaert & Frank 2004)
      (``"corrected repeated k-fold t"``);
    * exactly 5 repeats × 2 folds: Alpaydın's (1999) combined 5×2 cv F
      (``pr.combined_ftest_5x2cv``), the robust form of Dietterich's (1998) 5×2 cv t
      (``"combined 5x2cv F"``);
    * one fold (one test set: the models were trained once), with the score ``log``
      given, the models compared sample by sample on the log: for the AUC (and the
      Gini coefficient, 2·AUC − 1) DeLong's paired test (``pr.delong_test``;
      ``"DeLong"``); for the error rate or accuracy McNemar's test
      (``pr.mcnemar_test``; Dietterich 1998, §3.1), gated for three or more models by
      Cochran's Q (``pr.cochran_q``) as the rank comparisons are by Friedman's
      (``"McNemar"``, ``"Cochran's Q + McNemar"``); any other metric has no test on
      one test set and is refused;
    * across data sets, three or more models: Friedman's test on the ranks, then each
      model against the best by Demšar's (2006, §3.2.2) z of the mean-rank difference,
      z = (R_i − R_best)/√(k(k + 1)/(6N)), two-sided normal p (``"Friedman + mean-rank
      z"``). Nemenyi's p-values (``pr.nemenyi_test``, the CD diagram's) hold over all
      k(k − 1)/2 pairs already and are not what is adjusted here;
    * across data sets, two models: Wilcoxon's signed-rank test
      (``pr.wilcoxon_test``; Demšar 2006, §3.1.3);
    * with ``rope``: the Bayesian tests, ``pr.bayes_ttest`` (the correlated t) within a
      data set and ``pr.bayes_signed_rank`` across data sets (Benavoli et al. 2017).

    A group with several data sets adds rows across data sets (with a null data set):
    ``mean`` is the mean of the per-data-set means, ``rank`` the average rank over the
    data sets (Demšar 2006), and the best model the one with the best average rank.

    **The direction** of ``metric`` comes from the metric registry
    (:func:`polaroc.core.registry.lookup`): higher is better for the AUC, lower for the
    error rate, the Brier score or the ECE; a metric best at a target value (a
    calibration slope at 1, an intercept at 0) is compared on its distance from the
    target, |value − target|, lower being better — ``mean``, the intervals, the tests
    and the effect sizes are then of that distance. A column the registry does not
    know needs ``higher_is_better``.

    **The rule.** ``p_vs_best`` of a model is the chosen test's p-value for the pair
    (best, model), adjusted with ``adjust`` over the k − 1 comparisons with the best
    (comparisons with a control; Demšar 2006, §3.2.2). The model is worse than the
    best (``tied_with_best`` false) when ``p_vs_best <= alpha`` and, across data sets
    with three or more models, Friedman's test rejects at ``alpha`` too (the post-hoc
    test counts only after the omnibus one rejects; on one test set with McNemar's
    test and three or more models, likewise Cochran's Q); otherwise it is tied with
    the best.

    **With** ``rope`` the probabilities are not p-values and are not adjusted:
    ``p_vs_best`` = 1 − P(the best is practically better than the model) = P(the model
    is practically equivalent or better), and the model is ``tied_with_best`` unless
    P(best better) ≥ 1 − ``alpha`` (i.e. again unless ``p_vs_best <= alpha``). The
    signed-rank test's posterior is sampled with ``seed`` (default ``None``, fresh
    draws, as every seed of the package; pass an integer, as the report passes 0, for
    the same verdict on every run).

    **Intervals.** ``ci_low``/``ci_high`` are the (1 − ``alpha``) interval of the
    model's mean under the deciding test's variance, not clipped unless said:

    * paired t, and across data sets: mean ± t₍₁₋α/₂, n−1₎·S/√n over the n folds or
      data sets;
    * corrected t and Bayesian correlated t: mean ± t₍₁₋α/₂, n−1₎·√((1/n + n_test/n_train)·S²),
      Nadeau & Bengio's (2003) variance (n_test/n_train = 1/(k − 1), or
      ``test_train_ratio``), since the r·k folds are not independent;
    * combined 5×2 cv F: mean ± t₍₁₋α/₂, 5₎·√(σ̂²/10) with σ̂² = Σᵢ sᵢ²/5 and
      sᵢ² = Σⱼ (xᵢⱼ − x̄ᵢ)² the spread within repeat i (Dietterich 1998; Alpaydın
      1999), the variance the F's denominator estimates;
    * DeLong: the metric ± z₍₁₋α/₂₎·√Var, with DeLong's variance of the model's AUC
      (scaled to the metric: 4·Var for the Gini coefficient), clipped to the metric's
      range as pROC clips ``ci.auc``;
    * McNemar: Wilson's score interval of the proportion over the n paired samples.

    **Effect sizes** against the best model, as autorank computes them (Herbold 2020):
    ``effect_size`` = Cohen's d = (mean_best − mean)/s_p with s_p² the pooled variance
    ((n₁ − 1)s₁² + (n₂ − 1)s₂²)/(n₁ + n₂ − 2) of the two models' values (folds, or
    per-data-set means across data sets), and ``magnitude`` its word: negligible
    |d| < 0.2 ≤ small < 0.5 ≤ medium < 0.8 ≤ large. The best model's own row is
    d = 0 ("negligible"), as autorank's; a zero pooled variance gives ±inf ("large")
    for a non-zero difference and null for none; one value per model (one test set)
    has no variance: null.

    Parameters
    ----------
    table
        Per-fold table: one row per (by…, model, [repeat,] fold), e.g. ``pr.evaluate``'s.
        Every model needs every fold of every repeat within a group.
    metric
        Column name or expression to compare (an expression by its output name in the
        registry).
    alpha
        Level of the decisions and of the intervals (1 − ``alpha``).
    adjust
        Adjustment of the k − 1 p-values against the best (``"holm"``, default, or
        ``"bonferroni"``, or any method the tables' ``adjust=`` takes); ``None``: none.
    rope
        Half-width of the region of practical equivalence in the metric's units: use the
        Bayesian tests instead of the frequentist ones. ``None`` (default): frequentist.
    by
        Groups judged separately. ``None`` (default): each data set when the table has
        a ``dataset`` column (plus the rows across data sets when it has several), else
        the whole table. ``()``: one group; names: those columns (with ``dataset``
        among them, the rows across data sets are added per group of the others).
    higher_is_better
        Direction of the metric; ``None`` (default): the metric registry's. Given, it
        wins (and a target metric is then compared as it is, in that direction).
    test_train_ratio
        n_test/n_train of one split, for the corrected t, the Bayesian t and the
        intervals of a repeated design; default 1/(k − 1) for k folds. Needed for a
        repeated hold-out (one fold per repeat).
    seed
        Seed of the Bayesian signed-rank test's posterior samples (``None``: fresh
        randomness).
    model, fold, dataset, repeat
        Column names of the table (and of ``log``).
    log
        The score log the table was computed from (``model``, ``fold``, ``sample``,
        ``class``, ``score``, ``label`` columns): needed only for a group with one
        fold, whose models are compared sample by sample. The log needs the table's
        ``by`` columns.

    Returns
    -------
    pl.LazyFrame
        One row per (by…, model), sorted by group (the rows across data sets last),
        rank and model: by…, ``model`` (the model column), ``rank`` (1 = best; ties
        averaged; the average rank across data sets), ``mean``, ``ci_low``,
        ``ci_high``, ``best`` (true for the one control model of the group),
        ``tied_with_best``, ``p_vs_best`` (null on the best model's row), ``test``,
        ``effect_size``, ``magnitude``, ``n`` (folds, (repeat, fold) pairs or data
        sets behind the mean).

        * A NaN value in a group makes that group's ``rank``, ``best`` and
          ``tied_with_best`` null and every ``p_vs_best`` NaN (there is no best model
          to compare with): NaN never decides.
        * Two models whose values are equal fold by fold have no test statistic (the
          tests give a null p); the model is then tied with the best.

    Raises
    ------
    ValueError
        A metric the registry does not know without ``higher_is_better`` (the message
        lists the known ones). A group with one fold (one test set) without ``log``,
        with ``rope`` (no Bayesian test on one test set), or with a metric that has no
        test on one test set. Also: one fold per repeat without ``test_train_ratio``,
        an unbalanced design, a missing column, a bad ``alpha``, ``adjust`` or ``rope``.
    TypeError
        A non-numeric metric.

    Warns
    -----
    UserWarning
        Fewer than five data sets across data sets: Demšar (2006) finds the rank
        tests have little power there, so "tied" mostly means "too few data sets".

    Notes
    -----
    Unlike the tests, ``verdict`` collects its input (one row per model and fold, small)
    when called: the design it finds chooses the test, and the warning is raised then.
    The result is a lazy plan over the collected table.

    References: Dietterich (1998), Neural Computation 10(7); Alpaydın (1999), Neural
    Computation 11(8); Nadeau & Bengio (2003), Machine Learning 52; Demšar (2006),
    JMLR 7; Benavoli, Corani, Demšar & Zaffalon (2017), JMLR 18; DeLong, DeLong &
    Clarke-Pearson (1988), Biometrics 44(3); McNemar (1947), Psychometrika 12(2);
    Cochran (1950), Biometrika 37(3/4); Herbold (2020), JOSS 5(48) (autorank).

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> per_fold = pr.evaluate(pl.read_parquet(pr.demo_log_path()))
    >>> pr.verdict(per_fold).select(
    ...     "model", "rank", "mean", "tied_with_best", "p_vs_best", "test", "magnitude"
    ... ).collect()
    shape: (6, 7)
    ┌─────────────┬──────┬──────────┬────────────────┬───────────┬──────────┬────────────┐
    │ model       ┆ rank ┆ mean     ┆ tied_with_best ┆ p_vs_best ┆ test     ┆ magnitude  │
    │ ---         ┆ ---  ┆ ---      ┆ ---            ┆ ---       ┆ ---      ┆ ---        │
    │ str         ┆ f64  ┆ f64      ┆ bool           ┆ f64       ┆ str      ┆ str        │
    ╞═════════════╪══════╪══════════╪════════════════╪═══════════╪══════════╪════════════╡
    │ logistic    ┆ 1.0  ┆ 0.993796 ┆ true           ┆ null      ┆ paired t ┆ negligible │
    │ forest      ┆ 2.0  ┆ 0.991645 ┆ true           ┆ 1.0       ┆ paired t ┆ small      │
    │ lda         ┆ 3.0  ┆ 0.991542 ┆ true           ┆ 1.0       ┆ paired t ┆ negligible │
    │ knn9        ┆ 4.0  ┆ 0.987538 ┆ true           ┆ 0.74913   ┆ paired t ┆ medium     │
    │ naive_bayes ┆ 5.0  ┆ 0.987003 ┆ true           ┆ 0.74913   ┆ paired t ┆ medium     │
    │ tree        ┆ 6.0  ┆ 0.931235 ┆ false          ┆ 0.001461  ┆ paired t ┆ large      │
    └─────────────┴──────┴──────────┴────────────────┴───────────┴──────────┴────────────┘

    The demo's ten folds put logistic regression first; forest, LDA, k-NN and naive
    Bayes are not distinguishable from it (Holm-adjusted paired t), the tree is worse.

    On one test set (here the demo's first fold), pass the log for DeLong's test:

    >>> one = pl.read_parquet(pr.demo_log_path()).filter(pl.col("fold") == 0)
    >>> pr.verdict(pr.evaluate(one), log=one).select(
    ...     "model", "rank", "mean", "ci_low", "p_vs_best", "tied_with_best", "test"
    ... ).collect()
    shape: (6, 7)
    ┌─────────────┬──────┬──────────┬──────────┬───────────┬────────────────┬────────┐
    │ model       ┆ rank ┆ mean     ┆ ci_low   ┆ p_vs_best ┆ tied_with_best ┆ test   │
    │ ---         ┆ ---  ┆ ---      ┆ ---      ┆ ---       ┆ ---            ┆ ---    │
    │ str         ┆ f64  ┆ f64      ┆ f64      ┆ f64       ┆ bool           ┆ str    │
    ╞═════════════╪══════╪══════════╪══════════╪═══════════╪════════════════╪════════╡
    │ forest      ┆ 2.0  ┆ 1.0      ┆ 1.0      ┆ null      ┆ true           ┆ DeLong │
    │ lda         ┆ 2.0  ┆ 1.0      ┆ 1.0      ┆ null      ┆ true           ┆ DeLong │
    │ logistic    ┆ 2.0  ┆ 1.0      ┆ 1.0      ┆ null      ┆ true           ┆ DeLong │
    │ naive_bayes ┆ 4.0  ┆ 0.997403 ┆ 0.991217 ┆ 1.0       ┆ true           ┆ DeLong │
    │ knn9        ┆ 5.0  ┆ 0.974675 ┆ 0.926261 ┆ 1.0       ┆ true           ┆ DeLong │
    │ tree        ┆ 6.0  ┆ 0.953896 ┆ 0.866136 ┆ 1.0       ┆ true           ┆ DeLong │
    └─────────────┴──────┴──────────┴──────────┴───────────┴────────────────┴────────┘

    Three models separate the 57 samples perfectly (AUC 1, average rank 2, forest first
    by name; the two others equal it, no p-value); the tree's AUC is 0.05 lower with
    DeLong's p = 0.30, and Holm over the five comparisons leaves every model tied.
    """
    check_alpha(alpha)
    if adjust is not None:
        check_adjust(adjust)
    if rope is not None and not rope >= 0:
        msg = f"rope must be a half-width >= 0 of the region of practical equivalence, got {rope!r}"
        raise ValueError(msg)
    if test_train_ratio is not None and not test_train_ratio >= 0:
        msg = f"test_train_ratio must be n_test / n_train >= 0, got {test_train_ratio!r}"
        raise ValueError(msg)
    frame = as_lazy(table, argument="table")
    schema = frame.collect_schema()
    groups = resolve_by(schema, by, dataset)
    require_columns(schema, [*groups, model, fold], what="per-fold table")
    if isinstance(metric, str) and metric not in schema and {"score", "label"} <= set(schema):
        msg = (
            f"verdict reads a per-fold table, but this one has no {metric!r} column and has "
            "score and label columns: it looks like a score log; run pr.evaluate(log) first "
            "and pass its per-fold table"
        )
        raise ValueError(msg)
    raw = metric_expr(metric, schema)
    entry = lookup(raw, higher_is_better)
    name = raw.meta.output_name(raise_if_undetermined=False) or entry.name or "metric"
    rep = repeat if repeat in schema and repeat not in (*groups, model, fold) else None
    blocks = [fold] if rep is None else [rep, fold]
    data = frame.select(*groups, model, *blocks, entry.loss(raw).alias(name)).collect()
    ctx = _Context(
        metric=name,
        entry=entry,
        alpha=alpha,
        adjust=adjust,
        rope=rope,
        ratio=test_train_ratio,
        seed=seed,
        model=model,
        fold=fold,
        dataset=dataset,
        repeat=rep,
        log=None if log is None else as_lazy(log, argument="log"),
    )
    parts = [_within(data, groups, ctx)]
    if dataset in groups:
        across = _across(data, [g for g in groups if g != dataset], ctx)
        if across is not None:
            parts.append(across)
    out = pl.concat(parts, how="diagonal_relaxed") if len(parts) > 1 else parts[0]
    out = out.select(*groups, model, *_COLUMNS)
    return out.sort([*groups, "rank", model], nulls_last=True)


@dataclass(frozen=True)
class _Context:
    """The settings one verdict hands down to its parts."""

    metric: str  # the column of the collected table (the compared value)
    entry: Metric
    alpha: float
    adjust: str | None
    rope: float | None
    ratio: float | None
    seed: int | None
    model: str
    fold: str
    dataset: str
    repeat: str | None
    log: pl.LazyFrame | None

    @property
    def higher(self) -> bool:
        """Whether a higher compared value is better (a target's distance is not)."""
        return self.entry.higher_is_better


Runner = Callable[[pl.DataFrame], pl.LazyFrame]


# ------------------------------------------------------------------ within a group


def _designs(data: pl.DataFrame, groups: list[str], ctx: _Context) -> pl.DataFrame:
    """Per group: the test its design calls for (column ``_pr_test``) and ``_pr_folds``."""
    fold = pl.col(ctx.fold)
    key = groups or pl.lit(0).alias("_pr_all")
    models = pl.col(ctx.model).n_unique()
    if ctx.repeat is None:
        per = data.group_by(key).agg(
            _pr_repeats=pl.lit(1, dtype=pl.UInt32),
            _pr_kmin=fold.n_unique(),
            _pr_kmax=fold.n_unique(),
            _pr_models=models,
        )
    else:
        per_repeat = data.group_by([*groups, ctx.repeat]).agg(_pr_k=fold.n_unique(), _pr_m=models)
        per = per_repeat.group_by(key).agg(
            _pr_repeats=pl.len(),
            _pr_kmin=pl.col("_pr_k").min(),
            _pr_kmax=pl.col("_pr_k").max(),
            _pr_models=pl.col("_pr_m").max(),
        )
    one_set = (pl.col("_pr_repeats") == 1) & (pl.col("_pr_kmax") < 2)
    _check_one_test_set(per.filter(one_set), groups, ctx)
    holdout = per.filter((pl.col("_pr_kmax") < 2) & ~one_set)
    if holdout.height and ctx.ratio is None:
        msg = (
            f"polaroc: one {ctx.fold} per {ctx.repeat} (a repeated hold-out): the corrected t "
            "needs the share of test to training samples; pass test_train_ratio=n_test/n_train."
        )
        raise ValueError(msg)
    five_by_two = (
        (pl.col("_pr_repeats") == 5) & (pl.col("_pr_kmin") == 2) & (pl.col("_pr_kmax") == 2)
    )
    if ctx.rope is not None:
        test = pl.lit(BAYES_T)
    elif ctx.repeat is None:
        test = pl.lit(PAIRED_T)
    else:
        test = pl.when(five_by_two).then(pl.lit(COMBINED_F)).otherwise(pl.lit(CORRECTED_T))
    if ctx.entry.one_test_set == "delong":
        one = pl.lit(DELONG)
    else:
        several = pl.col("_pr_models") >= 3
        one = pl.when(several).then(pl.lit(COCHRAN_MCNEMAR)).otherwise(pl.lit(MCNEMAR))
    test = pl.when(one_set).then(one).otherwise(test)
    return per.with_columns(_pr_test=test, _pr_folds=pl.col("_pr_kmax").cast(pl.Int64))


def _check_one_test_set(one: pl.DataFrame, groups: list[str], ctx: _Context) -> None:
    """Groups with one fold need a metric with a test there, the log, and no ``rope``."""
    if not one.height:
        return
    where = f" (in {one.select(groups).row(0)})" if groups else ""
    head = f"polaroc: verdict: the table has one {ctx.fold}{where}, one test set"
    if ctx.rope is not None:
        msg = f"{head}, which has no Bayesian test; drop rope= to decide sample by sample."
        raise ValueError(msg)
    if ctx.entry.one_test_set is None:
        delong = ", ".join(repr(m) for m in known_metrics() if lookup(m).one_test_set == "delong")
        mcnemar = ", ".join(repr(m) for m in known_metrics() if lookup(m).one_test_set == "mcnemar")
        msg = (
            f"{head}, and no test compares two models' {ctx.entry.words} ({ctx.metric!r}) on "
            f"one test set: DeLong's test compares AUCs (metric {delong}) and McNemar's test "
            f"the share of samples classified right (metric {mcnemar}). Use one of them, or "
            "compare the metric over several folds or with pr.bootstrap_test."
        )
        raise ValueError(msg)
    if ctx.log is None:
        test = "DeLong's test" if ctx.entry.one_test_set == "delong" else "McNemar's test"
        msg = (
            f"{head}: the fold-wise tests need two or more folds. Pass the score log, "
            f"verdict(table, log=log), to compare the models sample by sample with {test} "
            "(pr.delong_test for the AUC; pr.mcnemar_test, pr.cochran_q for the error rate)."
        )
        raise ValueError(msg)


def _one_test_set_log(data: pl.DataFrame, groups: list[str], ctx: _Context) -> pl.LazyFrame:
    """The log's rows of the groups and models in ``data`` (the one-fold groups)."""
    if ctx.log is None:  # _check_one_test_set has raised
        msg = "polaroc: verdict on one test set needs log="
        raise ValueError(msg)
    log = ctx.log.filter(pl.col(ctx.model).is_in(data[ctx.model].unique().to_list()))
    if groups:
        keys = data.select(groups).unique().lazy()
        log = log.join(keys, on=groups, how="semi", nulls_equal=True)
    return log


def _positive_class(log: pl.LazyFrame, class_: str = "class") -> Any:
    """The larger class value of a two-class log with a class column (else ``None``).

    DeLong's test reads one class's scores; a two-class log's positive class is the
    larger value (1, ``True``), as everywhere in polaroc.
    """
    if class_ not in log.collect_schema():
        return None
    classes = log.select(pl.col(class_).drop_nulls().unique().sort()).collect()[class_]
    return classes[-1] if classes.len() == 2 else None


def _sample_pairs(data: pl.DataFrame, groups: list[str], ctx: _Context) -> pl.LazyFrame:
    """DeLong's or McNemar's test of every pair of models in each one-fold group.

    By…, ``model_a``, ``model_b``, ``p_value`` and, per side, what the interval needs:
    DeLong's variance of each AUC (``_pr_var_a``, ``_pr_var_b``) or the paired samples
    (``_pr_samples``).
    """
    log = _one_test_set_log(data, groups, ctx)
    models = sorted(data[ctx.model].unique().to_list())
    names: dict[str, Any] = {"model": ctx.model, "fold": ctx.fold, "repeat": ctx.repeat or "repeat"}
    delong = ctx.entry.one_test_set == "delong"
    positive = _positive_class(log) if delong else None
    parts = []
    for a, b in combinations(models, 2):
        if delong:
            test = delong_test(log, a, b, by=groups, positive_class=positive, **names)
            extra = {"_pr_var_a": pl.col("var_a"), "_pr_var_b": pl.col("var_b")}
        else:
            test = mcnemar_test(log, a, b, by=groups, dataset=ctx.dataset, **names)
            extra = {"_pr_samples": pl.col("n")}
        parts.append(test.select(*groups, "model_a", "model_b", "p_value", **extra))
    return pl.concat(parts, how="vertical_relaxed")


def _cochran_gate(
    data: pl.DataFrame, designs: pl.DataFrame, groups: list[str], ctx: _Context
) -> pl.LazyFrame | None:
    """Cochran's Q p-value (``_pr_gate``) of each one-fold group with three or more models."""
    chosen = designs.filter(pl.col("_pr_test") == COCHRAN_MCNEMAR)
    if not chosen.height:
        return None
    rows = data.join(chosen.select(groups), on=groups) if groups else data
    q = cochran_q(
        _one_test_set_log(rows, groups, ctx),
        by=groups,
        model=ctx.model,
        fold=ctx.fold,
        dataset=ctx.dataset,
        repeat=ctx.repeat or "repeat",
    )
    return q.select(*groups, _pr_gate="p_value")


def _within(data: pl.DataFrame, groups: list[str], ctx: _Context) -> pl.LazyFrame:
    """The verdict rows of each group, from its folds."""
    designs = _designs(data, groups, ctx)
    m, f, d_, r = ctx.model, ctx.fold, ctx.dataset, ctx.repeat or "repeat"
    names: dict[str, Any] = {"by": groups, "model": m, "fold": f, "dataset": d_, "repeat": r}
    tests: dict[str, Runner] = {
        PAIRED_T: lambda d: paired_ttest(d, ctx.metric, **names),
        CORRECTED_T: lambda d: paired_ttest(d, ctx.metric, test_train_ratio=ctx.ratio, **names),
        COMBINED_F: lambda d: combined_ftest_5x2cv(d, ctx.metric, **names),
        BAYES_T: lambda d: bayes_ttest(
            d, ctx.metric, rope=ctx.rope or 0.0, test_train_ratio=ctx.ratio, **names
        ),
        DELONG: lambda d: _sample_pairs(d, groups, ctx),
        MCNEMAR: lambda d: _sample_pairs(d, groups, ctx),
        COCHRAN_MCNEMAR: lambda d: _sample_pairs(d, groups, ctx),
    }
    pairs = _pairs_by_test(data, groups, designs, tests).collect().lazy()
    stats = _spread(data.lazy(), [*groups, ctx.model], ctx.metric)
    on = groups or None
    info = designs.lazy().select(*groups, "_pr_test", "_pr_folds")
    stats = stats.join(info, on=on) if on else stats.join(info, how="cross")
    if ctx.repeat is not None:
        stats = stats.join(_within_repeats(data, groups, ctx).lazy(), on=[*groups, ctx.model])
    else:
        stats = stats.with_columns(_pr_s2_repeats=pl.lit(None, pl.Float64))
    stats = stats.join(_per_model(pairs, groups, ctx.model), on=[*groups, ctx.model], how="left")
    stats = _intervals(stats, ctx)
    gate = _cochran_gate(data, designs, groups, ctx)
    return _decide(stats, pairs, groups, ctx, gate=gate)


def _spread(frame: pl.LazyFrame, keys: list[str], metric: str) -> pl.LazyFrame:
    """Per ``keys``: ``n`` values, their ``mean`` and standard deviation ``_pr_sd``."""
    value = pl.col(metric)
    return frame.group_by(keys).agg(
        n=value.count().cast(pl.Int64), mean=fixed_mean(value), _pr_sd=fixed_std(value)
    )


def _within_repeats(data: pl.DataFrame, groups: list[str], ctx: _Context) -> pl.DataFrame:
    """Per (group, model): ``_pr_s2_repeats`` = Σᵢ sᵢ²/r, sᵢ² = Σⱼ (xᵢⱼ − x̄ᵢ)² in repeat i.

    The variance of one fold's value that the 5×2 cv tests estimate (Dietterich 1998),
    each repeat's spread around its own mean (1 degree of freedom for two folds).
    """
    assert ctx.repeat is not None
    value = pl.col(ctx.metric)
    keys = [*groups, ctx.model]
    spread = fixed_sum((value - fixed_mean(value)) ** 2)
    per_repeat = data.group_by([*keys, ctx.repeat]).agg(_pr_s2=spread)
    return per_repeat.group_by(keys).agg(_pr_s2_repeats=fixed_mean(pl.col("_pr_s2")))


def _per_model(pairs: pl.LazyFrame, groups: list[str], model: str) -> pl.LazyFrame:
    """Per (group, model), from the one-test-set pairs: ``_pr_auc_var``, ``_pr_samples``."""

    def side(name: str) -> pl.LazyFrame:
        return pairs.select(
            *groups,
            pl.col(f"model_{name}").alias(model),
            pl.col(f"_pr_var_{name}").cast(pl.Float64).alias("_pr_auc_var"),
            pl.col("_pr_samples").cast(pl.Float64),
        )

    both = pl.concat([side("a"), side("b")], how="vertical_relaxed")
    return both.group_by([*groups, model]).agg(pl.col("_pr_auc_var", "_pr_samples").max())


def _pairs_by_test(
    data: pl.DataFrame, groups: list[str], designs: pl.DataFrame, tests: dict[str, Runner]
) -> pl.LazyFrame:
    """Run each group's test on its rows; one table of (by…, model_a, model_b, p…)."""
    parts = []
    for test, run in tests.items():
        chosen = designs.filter(pl.col("_pr_test") == test)
        if not chosen.height:
            continue
        rows = data.join(chosen.select(groups), on=groups) if groups else data
        parts.append(_probabilities(run(rows), groups).with_columns(_pr_test=pl.lit(test)))
    return pl.concat(parts, how="diagonal_relaxed")


def _probabilities(table: pl.LazyFrame, groups: list[str]) -> pl.LazyFrame:
    """The columns of a comparison table the verdict reads: its p-value or probabilities."""
    names = table.collect_schema().names()
    probabilities = [c for c in ("p_value", "p_a_higher", "p_b_higher") if c in names]
    extras = [  # what a one-test-set interval reads (null for the other tests)
        (pl.col(c) if c in names else pl.lit(None, pl.Float64)).alias(c)
        for c in ("_pr_var_a", "_pr_var_b", "_pr_samples")
    ]
    return table.select(*groups, "model_a", "model_b", *probabilities, *extras)


def _intervals(stats: pl.LazyFrame, ctx: _Context) -> pl.LazyFrame:
    """``ci_low``/``ci_high``: the (1 − α) interval of ``mean`` under each test's variance.

    ``stats`` has per (group, model) ``n``, ``mean``, ``_pr_sd``, ``_pr_test`` and, where
    the test needs them, ``_pr_folds`` (k of one repeat), ``_pr_s2_repeats`` (5×2 cv),
    ``_pr_auc_var`` (DeLong) and ``_pr_samples`` (McNemar). See :func:`verdict`.
    """
    level = 1.0 - ctx.alpha / 2.0
    z = float(scipy_stats.norm.ppf(level))
    test, mean = pl.col("_pr_test"), pl.col("mean")
    n = pl.col("n").cast(pl.Float64)
    s2 = pl.col("_pr_sd") ** 2
    folds = pl.col("_pr_folds").cast(pl.Float64)
    ratio = 1.0 / (folds - 1.0) if ctx.ratio is None else pl.lit(float(ctx.ratio))
    correlated = test.is_in([CORRECTED_T, BAYES_T])
    t_variance = pl.when(correlated).then((1.0 / n + ratio) * s2).otherwise(s2 / n)
    five_by_two = test == COMBINED_F
    df = pl.when(five_by_two).then(pl.lit(5.0)).otherwise(n - 1.0)
    variance = pl.when(five_by_two).then(pl.col("_pr_s2_repeats") / n).otherwise(t_variance)
    half = t_ppf(level, df) * variance.sqrt()
    t_low, t_high = pl.when(df > 0).then(mean - half), pl.when(df > 0).then(mean + half)
    # DeLong: the AUC's variance, scaled to the metric's range (Gini = 2·AUC − 1)
    entry = ctx.entry
    width = entry.high - entry.low if math.isfinite(entry.high - entry.low) else 1.0
    delong_half = z * width * pl.col("_pr_auc_var").sqrt()
    delong_low = (mean - delong_half).clip(lower_bound=entry.low)
    delong_high = (mean + delong_half).clip(upper_bound=entry.high)
    # McNemar: Wilson's score interval of the proportion over the paired samples
    m, p = pl.col("_pr_samples"), mean
    centre = (p + z**2 / (2.0 * m)) / (1.0 + z**2 / m)
    spread = z / (1.0 + z**2 / m) * (p * (1.0 - p) / m + z**2 / (4.0 * m**2)).sqrt()
    delong, mcnemar = test == DELONG, test.is_in([MCNEMAR, COCHRAN_MCNEMAR])
    low = pl.when(delong).then(delong_low).when(mcnemar).then(centre - spread).otherwise(t_low)
    high = pl.when(delong).then(delong_high).when(mcnemar).then(centre + spread).otherwise(t_high)
    return stats.with_columns(ci_low=low, ci_high=high)


# ------------------------------------------------------------- across data sets


def _across(data: pl.DataFrame, outer: list[str], ctx: _Context) -> pl.LazyFrame | None:
    """The rows across data sets (null data set), per group of the other ``by`` columns."""
    key = outer or pl.lit(0).alias("_pr_all")
    sizes = data.group_by(key).agg(
        _pr_n=pl.col(ctx.dataset).n_unique(), _pr_k=pl.col(ctx.model).n_unique()
    )
    sizes = sizes.filter(pl.col("_pr_n") >= 2)
    if not sizes.height:
        return None
    fewest = int(sizes["_pr_n"].min())  # type: ignore[arg-type]
    if fewest < _MIN_DATASETS:
        warnings.warn(
            f"polaroc: verdict across {fewest} data sets: Demšar (2006) finds the rank tests "
            f"have little power below {_MIN_DATASETS} data sets, so 'tied' mostly means "
            "'too few data sets'; read the per-data-set verdicts.",
            UserWarning,
            stacklevel=3,
        )
    if ctx.rope is not None:
        designs = sizes.with_columns(_pr_test=pl.lit(BAYES_SIGNED_RANK))
    else:
        two = pl.col("_pr_k") == 2
        designs = sizes.with_columns(
            _pr_test=pl.when(two).then(pl.lit(WILCOXON)).otherwise(pl.lit(FRIEDMAN_Z))
        )
    m, d_ = ctx.model, ctx.dataset
    tests: dict[str, Runner] = {
        WILCOXON: lambda d: wilcoxon_test(d, ctx.metric, by=outer, model=m, dataset=d_),
        FRIEDMAN_Z: lambda d: _rank_z(d, outer, ctx),
        BAYES_SIGNED_RANK: lambda d: bayes_signed_rank(
            d, ctx.metric, rope=ctx.rope or 0.0, seed=ctx.seed, by=outer, model=m, dataset=d_
        ),
    }
    rows = data.join(sizes.select(outer), on=outer) if outer else data
    pairs = _pairs_by_test(rows, outer, designs, tests).collect().lazy()
    value = pl.col(ctx.metric)
    means = rows.lazy().group_by([*outer, ctx.dataset, ctx.model]).agg(fixed_mean(value))
    stats = _spread(means, [*outer, ctx.model], ctx.metric)
    ranks = mean_ranks(rows, ctx.metric, by=outer, higher_is_better=ctx.higher, model=m, dataset=d_)
    stats = stats.join(ranks.select(*outer, ctx.model, "mean_rank"), on=[*outer, ctx.model])
    info = designs.lazy().select(*outer, "_pr_test")
    stats = stats.join(info, on=outer) if outer else stats.join(info, how="cross")
    unused = ("_pr_folds", "_pr_s2_repeats", "_pr_auc_var", "_pr_samples")
    stats = _intervals(stats.with_columns(pl.lit(None, pl.Float64).alias(c) for c in unused), ctx)
    gate = None
    if (designs["_pr_test"] == FRIEDMAN_Z).any():
        chosen = designs.filter(pl.col("_pr_test") == FRIEDMAN_Z).select(outer)
        friedman_rows = rows.join(chosen, on=outer) if outer else rows
        friedman = friedman_test(
            friedman_rows, ctx.metric, by=outer, higher_is_better=ctx.higher, model=m, dataset=d_
        )
        gate = friedman.select(*outer, _pr_gate="p_value")
    out = _decide(stats, pairs, outer, ctx, gate=gate)
    return out.with_columns(pl.lit(None, dtype=data.schema[ctx.dataset]).alias(ctx.dataset))


def _rank_z(data: pl.DataFrame, outer: list[str], ctx: _Context) -> pl.LazyFrame:
    """Demšar's (2006, §3.2.2) z of every pair's mean-rank difference, two-sided normal p.

    z = (R_a − R_b)/√(k(k + 1)/(6N)) with R the mean ranks over the N data sets of k
    models: the statistic Demšar gives for comparing each model with a control, whose
    p-values are then adjusted over the k − 1 comparisons (Holm's step-down).
    """
    ranks = mean_ranks(
        data, ctx.metric, by=outer, higher_is_better=ctx.higher, model=ctx.model,
        dataset=ctx.dataset,
    )  # fmt: skip
    pairs = rank_pairs(ranks, outer, ctx.model)
    z = (pl.col("mean_rank_a") - pl.col("mean_rank_b")) / pl.col("_pr_scale")
    return pairs.select(*outer, "model_a", "model_b", p_value=2.0 * normal_sf(z.abs()))


# ------------------------------------------------------------------ the decision


def _decide(
    stats: pl.LazyFrame,
    pairs: pl.LazyFrame,
    groups: list[str],
    ctx: _Context,
    *,
    gate: pl.LazyFrame | None,
) -> pl.LazyFrame:
    """Rank, choose the best, and read each model's comparison with it from ``pairs``.

    ``stats``: per (groups, model) ``n``, ``mean``, ``_pr_sd``, ``ci_low``, ``ci_high``,
    ``_pr_test`` and, across data sets, ``mean_rank``. ``gate``: per group the omnibus
    test's p (``_pr_gate``: Friedman's, Cochran's Q).
    """
    model = ctx.model
    mean = pl.col("mean")

    def per_group(expr: pl.Expr) -> pl.Expr:
        return expr.over(groups) if groups else expr

    nan = per_group(mean.is_nan().any())
    if "mean_rank" in stats.collect_schema().names():
        rank = pl.col("mean_rank")
    else:
        rank = per_group(mean.round_sig_figs(DIGITS).rank("average", descending=ctx.higher))
    stats = stats.with_columns(rank=pl.when(~nan).then(rank), _pr_void=nan)
    # The control: the best rank, then the better mean, then the first model.
    order = [pl.col("rank"), -mean if ctx.higher else mean, pl.col(model)]

    def of_best(column: str) -> pl.Expr:
        return per_group(pl.col(column).sort_by(order).first())

    first = of_best(model)
    stats = stats.with_columns(
        _pr_best=first,
        _pr_best_mean=of_best("mean"),
        _pr_best_sd=of_best("_pr_sd"),
        _pr_best_n=of_best("n"),
    )
    stats = stats.with_columns(best=pl.when(~pl.col("_pr_void")).then(pl.col(model) == first))
    p = _oriented(pairs, ctx)
    on = [*groups, "_pr_best", model]
    joined = stats.join(p, on=on, how="left", nulls_equal=True)
    others = joined.filter(pl.col(model) != pl.col("_pr_best"))
    if ctx.rope is None and ctx.adjust is not None:
        others = adjusted(others, groups, ctx.adjust, p="_pr_p", name="p_vs_best")
    else:
        others = others.with_columns(p_vs_best=pl.col("_pr_p"))
    own = joined.filter(pl.col(model) == pl.col("_pr_best")).with_columns(
        p_vs_best=pl.lit(None, dtype=pl.Float64)
    )
    out = pl.concat([own, others], how="vertical_relaxed")
    if gate is not None:
        out = out.join(gate, on=groups, how="left") if groups else out.join(gate, how="cross")
    else:
        out = out.with_columns(_pr_gate=pl.lit(None, dtype=pl.Float64))
    pv, g = pl.col("p_vs_best"), pl.col("_pr_gate")
    scale = pl.max_horizontal(mean.abs(), pl.col("_pr_best_mean").abs())
    equal = negligible(mean - pl.col("_pr_best_mean"), scale).fill_null(value=False)
    worse = (pv <= ctx.alpha) & (g.is_null() | (g <= ctx.alpha))
    tied = (
        pl.when(pl.col("best"))
        .then(True)
        .when(pv.is_nan() | g.is_nan())
        .then(None)
        .when(pv.is_null())
        .then(pl.when(equal).then(True))
        .otherwise(~worse)
    )
    void = pl.col("_pr_void")
    effect = _cohen_d(scale)
    return out.with_columns(
        tied_with_best=pl.when(~void).then(tied),
        p_vs_best=pl.when(void).then(float("nan")).otherwise(pv),
        best=pl.when(~void).then(pl.col("best")),
        test=pl.col("_pr_test"),
        effect_size=effect,
        magnitude=_magnitude(effect),
    )


def _cohen_d(scale: pl.Expr) -> pl.Expr:
    """Cohen's d of the best model against the row's: (mean_best − mean)/s_p (autorank's).

    s_p² = ((n_b − 1)s_b² + (n − 1)s²)/(n_b + n − 2), the pooled variance of the two
    models' values. A pooled variance that is zero up to rounding gives ±inf for a
    difference that is not (null for none); fewer than three values in all, null.
    """
    n, n_best = pl.col("n").cast(pl.Float64), pl.col("_pr_best_n").cast(pl.Float64)
    dof = n + n_best - 2.0
    pooled = (n - 1.0) * pl.col("_pr_sd") ** 2 + (n_best - 1.0) * pl.col("_pr_best_sd") ** 2
    diff = pl.col("_pr_best_mean") - pl.col("mean")
    zero_sd = negligible(pooled, scale, dof).fill_null(value=False)
    zero_diff = negligible(diff, scale).fill_null(value=False)
    infinite = pl.when(zero_diff).then(None).otherwise(diff.sign() * float("inf"))
    return (
        pl.when(dof <= 0)
        .then(None)
        .when(zero_sd & ~(diff.is_nan() | pooled.is_nan()))
        .then(infinite)
        .otherwise(diff / (pooled / dof).sqrt())
    )


def _magnitude(d: pl.Expr) -> pl.Expr:
    """Cohen's word for |d| (:data:`MAGNITUDES`), null for a null or NaN d."""
    size = d.abs()
    word: pl.Expr = pl.lit("large")
    for bound, name in reversed(MAGNITUDES):
        word = pl.when(size < bound).then(pl.lit(name)).otherwise(word)
    return pl.when(size.is_not_nan()).then(word)


def _oriented(pairs: pl.LazyFrame, ctx: _Context) -> pl.LazyFrame:
    """Each model pair twice, as (control, model): ``_pr_p`` the p-value against the control.

    Frequentist tables give ``p_value`` for both orders; Bayesian ones give
    P(control better) as ``p_a_higher`` or ``p_b_higher`` by order and direction, and
    ``_pr_p`` is 1 − P(control practically better than the model).
    """
    names = pairs.collect_schema().names()
    by = names[: names.index("model_a")]
    model = ctx.model
    if "p_a_higher" in names:
        a_better = "p_a_higher" if ctx.higher else "p_b_higher"
        b_better = "p_b_higher" if ctx.higher else "p_a_higher"
        forward = pairs.select(
            *by, _pr_best="model_a", **{model: pl.col("model_b")}, _pr_p=1.0 - pl.col(a_better)
        )
        backward = pairs.select(
            *by, _pr_best="model_b", **{model: pl.col("model_a")}, _pr_p=1.0 - pl.col(b_better)
        )
    else:
        forward = pairs.select(
            *by, _pr_best="model_a", **{model: pl.col("model_b")}, _pr_p="p_value"
        )
        backward = pairs.select(
            *by, _pr_best="model_b", **{model: pl.col("model_a")}, _pr_p="p_value"
        )
    return pl.concat([forward, backward], how="vertical_relaxed")
