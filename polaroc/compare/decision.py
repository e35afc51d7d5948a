"""The verdict: which model is best, which are not distinguishable from it, and by which test.

``pr.verdict`` reads a per-fold table, finds its design (one k-fold run, repeated k-fold,
5 × 2 cv, several data sets), runs the one test the literature recommends for that design
with the existing comparison functions, and compares every model with the best one
(comparisons with a control, Demšar 2006, §3.2.2).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from itertools import combinations

import polars as pl

from polaroc.compare._dist import t_ppf
from polaroc.compare.across import friedman_test, mean_ranks, nemenyi_test, wilcoxon_test
from polaroc.compare.bayes import bayes_signed_rank, bayes_ttest
from polaroc.compare.cv5x2 import combined_ftest_5x2cv
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
from polaroc.compare.fold_table import (
    higher_is_better as infer_direction,
)
from polaroc.compare.one_test_set import cochran_q, mcnemar_test
from polaroc.compare.paired import paired_ttest
from polaroc.core.inputs import ColumnLike, FrameLike, as_lazy, require_columns

__all__ = ["verdict"]

PAIRED_T = "paired t"
CORRECTED_T = "corrected repeated k-fold t"
COMBINED_F = "combined 5x2cv F"
FRIEDMAN_NEMENYI = "Friedman + Nemenyi"
WILCOXON = "Wilcoxon signed-rank"
BAYES_T = "Bayesian correlated t"
BAYES_SIGNED_RANK = "Bayesian signed-rank"
MCNEMAR = "McNemar"
COCHRAN_MCNEMAR = "Cochran's Q + McNemar"

_MIN_DATASETS = 5  # Demšar (2006, §3.2.2): fewer data sets give the rank tests little power


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
    seed: int = 0,
    model: str = "model",
    fold: str = "fold",
    dataset: str = "dataset",
    repeat: str = "repeat",
    log: FrameLike | None = None,
) -> pl.LazyFrame:
    """Which model is best, which are not distinguishable from it, and by which test.

    Within each group (by default each data set) the models are ranked by their mean
    metric over the folds, the best one is the control, and every other model is
    compared with it by the one test the design calls for:

    * one k-fold run: the paired t (``pr.paired_ttest``) on the k fold differences;
    * r repeats of k-fold (a ``repeat`` column): the corrected repeated k-fold t,
      ``pr.paired_ttest``'s default on such a table — the plain t on r·k overlapping
      folds rejects far too often (Nadeau & Bengio 2003; Bouckaert & Frank 2004);
    * exactly 5 repeats × 2 folds: Alpaydın's (1999) combined 5×2 cv F
      (``pr.combined_ftest_5x2cv``), the robust form of Dietterich's (1998) 5×2 cv t,
      the test this design was built for;
    * across data sets, three or more models: Friedman's test on the ranks, then
      Nemenyi's (``pr.friedman_test``, ``pr.nemenyi_test``) — the data sets are the
      independent units, and ranks need no commensurable scales (Demšar 2006, §3.2);
    * across data sets, two models: Wilcoxon's signed-rank test
      (``pr.wilcoxon_test``; Demšar 2006, §3.1.3);
    * one fold (one test set: the models were trained once), with the score ``log``
      given: McNemar's test (``pr.mcnemar_test``) of the best model against each
      other one on the log's samples, the test Dietterich (1998, §3.1) recommends
      for one test set, gated for three or more models by Cochran's Q
      (``pr.cochran_q``) as Nemenyi's test is by Friedman's;
    * with ``rope``: the Bayesian tests, ``pr.bayes_ttest`` (the correlated t) within a
      data set and ``pr.bayes_signed_rank`` across data sets (Benavoli et al. 2017).

    A group with several data sets adds rows across data sets (with a null data set):
    ``mean`` is the mean of the per-data-set means, ``rank`` the average rank over the
    data sets (Demšar 2006), and the best model the one with the best average rank.

    **The rule.** ``p_vs_best`` of a model is the chosen test's p-value for the pair
    (best, model), adjusted with ``adjust`` over the k − 1 comparisons with the best
    (comparisons with a control; Demšar 2006, §3.2.2). The model is worse than the
    best (``tied_with_best`` false) when ``p_vs_best <= alpha`` and, across data sets
    with three or more models, Friedman's test rejects at ``alpha`` too (the post-hoc
    test counts only after the omnibus one rejects; on one test set with three or more
    models, likewise Cochran's Q); otherwise it is tied with the best.
    Nemenyi's p-value is already simultaneous over all pairs, so Holm on top of it is
    conservative; ``adjust=None`` gives Nemenyi's own.

    **With** ``rope`` the probabilities are not p-values and are not adjusted:
    ``p_vs_best`` = 1 − P(the best is practically better than the model) = P(the model
    is practically equivalent or better), and the model is ``tied_with_best`` unless
    P(best better) ≥ 1 − ``alpha`` (i.e. again unless ``p_vs_best <= alpha``). The
    signed-rank test's posterior is sampled with ``seed`` (default 0), so the verdict
    is the same on every run.

    ``ci_low``/``ci_high`` are the t interval (level 1 − ``alpha``) of the model's mean
    over its folds: mean ± t₍₁₋α/₂, n−1₎·√(c·S²), with c = 1/n for one k-fold run and
    Nadeau & Bengio's (2003) corrected c = 1/n + n_test/n_train (= 1/(k − 1) for k-fold;
    ``test_train_ratio`` when given) for repeated cross-validation, whose r·k folds are
    not independent. Across data sets: the t interval of the mean over the N data sets.
    The interval is not clipped to the metric's range. On one test set each model has
    one value, so ``ci_low``/``ci_high`` are null.

    **One test set.** The models are ranked by the table's ``metric`` as in any other
    design, but McNemar's test and Cochran's Q compare their accuracies: a sample is
    right when its predicted class (the argmax of its scores, ``score >= 0.5`` for a
    binary log) is its label, as ``pr.mcnemar_test`` defines it, with its default
    ``exact=None`` (the binomial test below 25 discordant samples, else χ² with
    continuity correction).

    Parameters
    ----------
    table
        Per-fold table: one row per (by…, model, [repeat,] fold), e.g. ``pr.evaluate``'s.
        Every model needs every fold of every repeat within a group.
    metric
        Column name or expression to compare.
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
        Direction of the metric; ``None`` (default): inferred from its name as the
        comparison tables do — lower is better for ``error``, ``brier``, ``log_loss``,
        ``cost`` and names ending in ``_loss`` or ``_error``, higher for any other.
    test_train_ratio
        n_test/n_train of one split, for the corrected t, the Bayesian t and the
        intervals of a repeated design; default 1/(k − 1) for k folds. Needed for a
        repeated hold-out (one fold per repeat).
    seed
        Seed of the Bayesian signed-rank test's posterior samples.
    model, fold, dataset, repeat
        Column names of the table (and of ``log``).
    log
        The score log the table was computed from (``model``, ``fold``, ``sample``,
        ``class``, ``score``, ``label`` columns, named as ``pr.mcnemar_test`` takes
        them): needed only for a group with one fold, whose models are compared
        sample by sample. The log needs the table's ``by`` columns.

    Returns
    -------
    pl.LazyFrame
        One row per (by…, model), sorted by group (the rows across data sets last),
        rank and model: by…, ``model`` (the model column), ``rank`` (1 = best; ties
        averaged; the average rank across data sets), ``mean``, ``ci_low``,
        ``ci_high``, ``best`` (true for the one control model of the group),
        ``tied_with_best``, ``p_vs_best`` (null on the best model's row), ``test``,
        ``n`` (folds, (repeat, fold) pairs or data sets behind the mean).

        * A NaN value in a group makes that group's ``rank``, ``best`` and
          ``tied_with_best`` null and every ``p_vs_best`` NaN (there is no best model
          to compare with): NaN never decides.
        * Two models whose values are equal fold by fold have no test statistic (the
          tests give a null p); the model is then tied with the best.

    Raises
    ------
    ValueError
        A group with one fold (one test set) without ``log`` (the fold-wise tests need
        two or more folds; pass ``log=`` for McNemar's test, or compare the models with
        ``pr.mcnemar_test``, ``pr.cochran_q`` or ``pr.delong_test``), or with ``rope``
        (no Bayesian test on one test set). Also: one fold per repeat without
        ``test_train_ratio``, an unbalanced design, a missing column, a bad ``alpha``,
        ``adjust`` or ``rope``.
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
    JMLR 7; Benavoli, Corani, Demšar & Zaffalon (2017), JMLR 18; McNemar (1947),
    Psychometrika 12(2); Cochran (1950), Biometrika 37(3/4).

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> per_fold = pr.evaluate(pl.read_parquet(pr.demo_log_path()))
    >>> pr.verdict(per_fold).select(
    ...     "model", "rank", "mean", "best", "tied_with_best", "p_vs_best", "test"
    ... ).collect()
    shape: (6, 7)
    ┌─────────────┬──────┬──────────┬───────┬────────────────┬───────────┬──────────┐
    │ model       ┆ rank ┆ mean     ┆ best  ┆ tied_with_best ┆ p_vs_best ┆ test     │
    │ ---         ┆ ---  ┆ ---      ┆ ---   ┆ ---            ┆ ---       ┆ ---      │
    │ str         ┆ f64  ┆ f64      ┆ bool  ┆ bool           ┆ f64       ┆ str      │
    ╞═════════════╪══════╪══════════╪═══════╪════════════════╪═══════════╪══════════╡
    │ logistic    ┆ 1.0  ┆ 0.993796 ┆ true  ┆ true           ┆ null      ┆ paired t │
    │ forest      ┆ 2.0  ┆ 0.991645 ┆ false ┆ true           ┆ 1.0       ┆ paired t │
    │ lda         ┆ 3.0  ┆ 0.991542 ┆ false ┆ true           ┆ 1.0       ┆ paired t │
    │ knn9        ┆ 4.0  ┆ 0.987538 ┆ false ┆ true           ┆ 0.74913   ┆ paired t │
    │ naive_bayes ┆ 5.0  ┆ 0.987003 ┆ false ┆ true           ┆ 0.74913   ┆ paired t │
    │ tree        ┆ 6.0  ┆ 0.931235 ┆ false ┆ false          ┆ 0.001461  ┆ paired t │
    └─────────────┴──────┴──────────┴───────┴────────────────┴───────────┴──────────┘

    The demo's ten folds put logistic regression first; forest, LDA, k-NN and naive
    Bayes are not distinguishable from it (Holm-adjusted paired t), the tree is worse.

    On one test set (here the demo's first fold), pass the log for McNemar's test:

    >>> one = pl.read_parquet(pr.demo_log_path()).filter(pl.col("fold") == 0)
    >>> pr.verdict(pr.evaluate(one), log=one).select(
    ...     "model", "rank", "p_vs_best", "tied_with_best", "test"
    ... ).collect()
    shape: (6, 5)
    ┌─────────────┬──────┬───────────┬────────────────┬───────────────────────┐
    │ model       ┆ rank ┆ p_vs_best ┆ tied_with_best ┆ test                  │
    │ ---         ┆ ---  ┆ ---       ┆ ---            ┆ ---                   │
    │ str         ┆ f64  ┆ f64       ┆ bool           ┆ str                   │
    ╞═════════════╪══════╪═══════════╪════════════════╪═══════════════════════╡
    │ forest      ┆ 2.0  ┆ null      ┆ true           ┆ Cochran's Q + McNemar │
    │ lda         ┆ 2.0  ┆ 1.0       ┆ true           ┆ Cochran's Q + McNemar │
    │ logistic    ┆ 2.0  ┆ 1.0       ┆ true           ┆ Cochran's Q + McNemar │
    │ naive_bayes ┆ 4.0  ┆ 1.0       ┆ true           ┆ Cochran's Q + McNemar │
    │ knn9        ┆ 5.0  ┆ 1.0       ┆ true           ┆ Cochran's Q + McNemar │
    │ tree        ┆ 6.0  ┆ 1.0       ┆ true           ┆ Cochran's Q + McNemar │
    └─────────────┴──────┴───────────┴────────────────┴───────────────────────┘

    Three models separate the 57 samples perfectly (AUC 1, average rank 2, forest
    first by name); Cochran's Q does not reject (p = 0.11), so every model is tied.
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
    value = metric_expr(metric, schema)
    name = value.meta.output_name(raise_if_undetermined=False) or "metric"
    higher_is_better = infer_direction(name, higher_is_better)
    rep = repeat if repeat in schema and repeat not in (*groups, model, fold) else None
    blocks = [fold] if rep is None else [rep, fold]
    data = frame.select(*groups, model, *blocks, value.alias(name)).collect()
    ctx = _Context(
        metric=name,
        higher=higher_is_better,
        alpha=alpha,
        adjust=adjust,
        rope=rope,
        ratio=test_train_ratio,
        seed=seed,
        model=model,
        fold=fold,
        dataset=dataset,
        repeat=rep,
        log=log,
    )
    parts = [_within(data, groups, ctx)]
    if dataset in groups:
        across = _across(data, [g for g in groups if g != dataset], ctx)
        if across is not None:
            parts.append(across)
    out = pl.concat(parts, how="diagonal_relaxed") if len(parts) > 1 else parts[0]
    columns = ["rank", "mean", "ci_low", "ci_high", "best", "tied_with_best", "p_vs_best"]
    out = out.select(*groups, model, *columns, "test", "n")
    return out.sort([*groups, "rank", model], nulls_last=True)


class _Context:
    """The settings one verdict hands down to its parts."""

    def __init__(
        self,
        *,
        metric: str,
        higher: bool,
        alpha: float,
        adjust: str | None,
        rope: float | None,
        ratio: float | None,
        seed: int,
        model: str,
        fold: str,
        dataset: str,
        repeat: str | None,
        log: FrameLike | None,
    ) -> None:
        self.metric, self.higher, self.alpha, self.adjust = metric, higher, alpha, adjust
        self.rope, self.ratio, self.seed = rope, ratio, seed
        self.model, self.fold, self.dataset, self.repeat = model, fold, dataset, repeat
        self.log = None if log is None else as_lazy(log, argument="log")


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
    several = pl.col("_pr_models") >= 3
    mcnemar = pl.when(several).then(pl.lit(COCHRAN_MCNEMAR)).otherwise(pl.lit(MCNEMAR))
    test = pl.when(one_set).then(mcnemar).otherwise(test)
    return per.with_columns(_pr_test=test, _pr_folds=pl.col("_pr_kmax").cast(pl.Int64))


def _check_one_test_set(one: pl.DataFrame, groups: list[str], ctx: _Context) -> None:
    """Groups with one fold need the log (McNemar's test) and no ``rope``."""
    if not one.height or (ctx.log is not None and ctx.rope is None):
        return
    where = f" (in {one.select(groups).row(0)})" if groups else ""
    if ctx.log is None:
        msg = (
            f"polaroc: verdict needs two or more folds per group, but the table has one "
            f"{ctx.fold}{where}: one test set. Pass the score log, verdict(table, log=log), to "
            "compare the models sample by sample with McNemar's test (Cochran's Q for three "
            "or more), or call pr.mcnemar_test, pr.cochran_q or pr.delong_test on the log."
        )
    else:
        msg = (
            f"polaroc: the table has one {ctx.fold}{where}: one test set, which has no "
            "Bayesian test; drop rope= to decide with McNemar's test."
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


def _mcnemar_pairs(data: pl.DataFrame, groups: list[str], ctx: _Context) -> pl.LazyFrame:
    """McNemar's p-value of every pair of models in each one-fold group, from the log."""
    log = _one_test_set_log(data, groups, ctx)
    models = sorted(data[ctx.model].unique().to_list())
    parts = [
        mcnemar_test(
            log,
            a,
            b,
            by=groups,
            model=ctx.model,
            fold=ctx.fold,
            dataset=ctx.dataset,
            repeat=ctx.repeat or "repeat",
        ).select(*groups, "model_a", "model_b", "p_value")
        for a, b in combinations(models, 2)
    ]
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
    tests: dict[str, Callable[[pl.DataFrame], pl.LazyFrame]] = {
        PAIRED_T: lambda d: paired_ttest(
            d, ctx.metric, by=groups, model=m, fold=f, dataset=d_, repeat=r
        ),
        CORRECTED_T: lambda d: paired_ttest(
            d,
            ctx.metric,
            by=groups,
            test_train_ratio=ctx.ratio,
            model=m,
            fold=f,
            dataset=d_,
            repeat=r,
        ),
        COMBINED_F: lambda d: combined_ftest_5x2cv(
            d, ctx.metric, by=groups, model=m, fold=f, dataset=d_, repeat=r
        ),
        BAYES_T: lambda d: bayes_ttest(
            d,
            ctx.metric,
            rope=ctx.rope or 0.0,
            test_train_ratio=ctx.ratio,
            by=groups,
            model=m,
            fold=f,
            dataset=d_,
            repeat=r,
        ),
        MCNEMAR: lambda d: _mcnemar_pairs(d, groups, ctx),
        COCHRAN_MCNEMAR: lambda d: _mcnemar_pairs(d, groups, ctx),
    }
    pairs = _pairs_by_test(data, groups, designs, tests)
    value = pl.col(ctx.metric)
    stats = (
        data.lazy()
        .group_by([*groups, ctx.model])
        .agg(n=value.count().cast(pl.Int64), mean=value.mean(), _pr_sd=value.std())
    )
    on = groups or None
    info = designs.lazy().select(*groups, "_pr_test", "_pr_folds")
    stats = stats.join(info, on=on) if on else stats.join(info, how="cross")
    factor = 1.0 / pl.col("n").cast(pl.Float64)
    if ctx.repeat is not None:
        ratio = 1.0 / (pl.col("_pr_folds") - 1).cast(pl.Float64)
        factor = factor + (ratio if ctx.ratio is None else pl.lit(ctx.ratio))
    stats = _interval(stats, factor, ctx.alpha)
    gate = _cochran_gate(data, designs, groups, ctx)
    return _decide(stats, pairs, groups, ctx, gate=gate)


def _pairs_by_test(
    data: pl.DataFrame,
    groups: list[str],
    designs: pl.DataFrame,
    tests: dict[str, Callable[[pl.DataFrame], pl.LazyFrame]],
) -> pl.LazyFrame:
    """Run each group's test on its rows; one table of (by…, model_a, model_b, p…)."""
    parts = []
    for test, run in tests.items():
        chosen = designs.filter(pl.col("_pr_test") == test)
        if not chosen.height:
            continue
        rows = data.join(chosen.select(groups), on=groups) if groups else data
        parts.append(_probabilities(run(rows)).with_columns(_pr_test=pl.lit(test)))
    return pl.concat(parts, how="diagonal_relaxed")


def _probabilities(table: pl.LazyFrame) -> pl.LazyFrame:
    """The columns of a comparison table the verdict reads: its p-value or probabilities."""
    names = table.collect_schema().names()
    keep = [c for c in ("p_value", "p_a_higher", "p_b_higher") if c in names]
    by = names[: names.index("model_a")]
    return table.select(*by, "model_a", "model_b", *keep)


def _interval(stats: pl.LazyFrame, factor: pl.Expr, alpha: float) -> pl.LazyFrame:
    """``ci_low``/``ci_high``: mean ± t₍₁₋α/₂, n−1₎·√(factor·S²)."""
    df = pl.col("n") - 1
    half = t_ppf(1.0 - alpha / 2.0, df) * (factor * pl.col("_pr_sd") ** 2).sqrt()
    usable = df > 0
    return stats.with_columns(
        ci_low=pl.when(usable).then(pl.col("mean") - half),
        ci_high=pl.when(usable).then(pl.col("mean") + half),
    )


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
            _pr_test=pl.when(two).then(pl.lit(WILCOXON)).otherwise(pl.lit(FRIEDMAN_NEMENYI))
        )
    m, d_ = ctx.model, ctx.dataset
    tests: dict[str, Callable[[pl.DataFrame], pl.LazyFrame]] = {
        WILCOXON: lambda d: wilcoxon_test(d, ctx.metric, by=outer, model=m, dataset=d_),
        FRIEDMAN_NEMENYI: lambda d: nemenyi_test(
            d,
            ctx.metric,
            by=outer,
            alpha=ctx.alpha,
            higher_is_better=ctx.higher,
            model=m,
            dataset=d_,
        ),
        BAYES_SIGNED_RANK: lambda d: bayes_signed_rank(
            d, ctx.metric, rope=ctx.rope or 0.0, seed=ctx.seed, by=outer, model=m, dataset=d_
        ),
    }
    rows = data.join(sizes.select(outer), on=outer) if outer else data
    pairs = _pairs_by_test(rows, outer, designs, tests)
    value = pl.col(ctx.metric)
    means = rows.lazy().group_by([*outer, ctx.dataset, ctx.model]).agg(value.mean())
    stats = means.group_by([*outer, ctx.model]).agg(
        n=value.count().cast(pl.Int64), mean=value.mean(), _pr_sd=value.std()
    )
    ranks = mean_ranks(rows, ctx.metric, by=outer, higher_is_better=ctx.higher, model=m, dataset=d_)
    stats = stats.join(ranks.select(*outer, ctx.model, "mean_rank"), on=[*outer, ctx.model])
    info = designs.lazy().select(*outer, "_pr_test")
    stats = stats.join(info, on=outer) if outer else stats.join(info, how="cross")
    stats = _interval(stats, 1.0 / pl.col("n").cast(pl.Float64), ctx.alpha)
    gate = None
    if (designs["_pr_test"] == FRIEDMAN_NEMENYI).any():
        chosen = designs.filter(pl.col("_pr_test") == FRIEDMAN_NEMENYI).select(outer)
        friedman_rows = rows.join(chosen, on=outer) if outer else rows
        friedman = friedman_test(friedman_rows, ctx.metric, by=outer, model=m, dataset=d_)
        gate = friedman.select(*outer, _pr_gate="p_value")
    out = _decide(stats, pairs, outer, ctx, gate=gate)
    return out.with_columns(pl.lit(None, dtype=data.schema[ctx.dataset]).alias(ctx.dataset))


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

    ``stats``: per (groups, model) ``n``, ``mean``, ``ci_low``, ``ci_high``, ``_pr_test``
    and, across data sets, ``mean_rank``. ``gate``: per group Friedman's p (``_pr_gate``).
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
    first = per_group(pl.col(model).sort_by(order).first())
    stats = stats.with_columns(_pr_best=first, _pr_best_mean=per_group(mean.sort_by(order).first()))
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
    return out.with_columns(
        tied_with_best=pl.when(~void).then(tied),
        p_vs_best=pl.when(void).then(float("nan")).otherwise(pv),
        best=pl.when(~void).then(pl.col("best")),
        test=pl.col("_pr_test"),
    )


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
