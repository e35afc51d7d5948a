"""DeLong's test for two correlated AUCs measured on the same samples.

DeLong, DeLong & Clarke-Pearson (1988) estimate the covariance of two AUCs computed on
the same positives and negatives from each sample's *placement values*; Sun & Xu (2014)
showed the placement values are differences of mid-ranks, so the whole test costs a
few sorts (O(n log n)) instead of comparing every positive with every negative.
Here they are read from the counting core: the table evaluator counts each model's
positives and negatives per distinct score and the core's formula
(:func:`polaroc.core.formulas.placements`) is joined back to the samples
(:func:`polaroc.core.counts.placed`); the variances are the core's
:func:`polaroc.core.structural.structural_covariance` of the placement values (with
``cluster=``, Obuchowski's 1997 variance over clusters). On a log of more than two
classes the tests compare Hand & Till's M (:mod:`polaroc.compare._m_delong`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal, Unpack

import numpy as np
import polars as pl
from scipy.stats import norm as stats_norm

from polaroc.compare._dist import chi2_sf, normal_sf, t_ppf, t_sf
from polaroc.compare._m_delong import CLUSTER, MModels, m_models, reads_m
from polaroc.compare._reading import (
    binary_rows,
    class_read,
    pair_keys,
    read_paired,
    with_class_read,
)
from polaroc.compare.fold_table import (
    ROUNDING,
    Adjust,
    check_adjust,
    check_alpha,
    over,
    with_adjusted,
    with_float_df,
)
from polaroc.core import counts
from polaroc.core import formulas as f
from polaroc.core.args import validated
from polaroc.core.counts import Counts
from polaroc.core.guard import guarded, listing, problems
from polaroc.core.inputs import FrameLike
from polaroc.core.log import POSITIVE, SCORE, Log, LogNames, columns_of
from polaroc.core.names import LABEL, ONE_GROUP
from polaroc.core.structural import COMPONENT, structural_covariance
from polaroc.core.sums import fixed_mean  # the same bits in any order

__all__ = ["delong_omnibus", "delong_test"]


def _pair(
    a: pl.LazyFrame, b: pl.LazyFrame, keys: list[str], names: tuple[Any, Any]
) -> tuple[pl.LazyFrame, list[pl.LazyFrame]]:
    """Model a's rows beside model b's, and what prevents pairing them (``listing`` frames).

    One full join on the keys serves both: the rows present on both sides are the
    pairs, the others are the problems.
    """
    parts = []
    for side, name in zip((a, b), names, strict=True):
        empty = side.select(pl.len().alias("_pr_n")).filter(pl.col("_pr_n") == 0)
        parts.append(listing(empty, ["_pr_n"], f"model {name!r} has no rows:"))
    in_a, in_b = pl.col("_pr_in_a").is_not_null(), pl.col("_pr_in_b").is_not_null()
    full = a.with_columns(_pr_in_a=True).join(
        b.with_columns(_pr_in_b=True), on=keys, how="full", coalesce=True, suffix="_b"
    )
    full = full.cache()  # read four times: one plan node, not four copies
    only_a = full.filter(~in_b).select(keys)
    only_b = full.filter(~in_a).select(keys)
    parts.append(listing(only_a, keys, f"rows of {names[0]!r} with no {names[1]!r} row:"))
    parts.append(listing(only_b, keys, f"rows of {names[1]!r} with no {names[0]!r} row:"))
    both = full.filter(in_a & in_b)
    mismatch = both.filter(pl.col(POSITIVE).ne_missing(pl.col(f"{POSITIVE}_b"))).select(keys)
    parts.append(listing(mismatch, keys, "samples whose label differs between the models:"))
    if CLUSTER in a.collect_schema():  # the same in both models: checked by the log reading
        both = both.drop(f"{CLUSTER}_b")
    return both.drop("_pr_in_a", "_pr_in_b"), parts


@dataclass(frozen=True)
class TwoModels:
    """Two models' usable rows, ready for a two-curve test.

    Paired: one row per pairing key (group…, dataset, repeat, ``fold``, ``sample``)
    with ``_pr_score`` (model a), ``_pr_score_b`` (model b) and ``_pr_positive``.
    Unpaired: each model's own rows, with the ``model`` column, ``_pr_score`` and
    ``_pr_positive``. ``keys`` order the samples (ties broken in that order);
    ``classes`` is the class each group read (``None`` without a class column).
    """

    rows: pl.LazyFrame
    group: list[str]
    keys: list[str]
    dtype: pl.DataType
    classes: pl.LazyFrame | None = None

    def finish(self, out: pl.LazyFrame) -> pl.LazyFrame:
        """``out`` with the class read as its last column (see :func:`class_read`)."""
        return with_class_read(out, self.classes, self.group)


def two_models(
    log: FrameLike,
    model_a: Any,
    model_b: Any,
    *,
    by: str | Iterable[str] | None,
    paired: bool,
    positive_class: Any,
    caller: str,
    names: LogNames,
    cluster: str | None = None,
) -> TwoModels:
    """Read and check the two models' rows of ``log`` (see :func:`delong_test`).

    With a ``cluster`` column the rows carry it as ``_pr_cluster``: it must be set on
    every row and, paired, the same in both models.
    """
    if model_a == model_b:
        msg = f"{caller} compares two different models; model_a and model_b are both {model_a!r}"
        raise ValueError(msg)
    columns = columns_of(names, caller=caller)
    model, fold, sample = columns.model, columns.fold, columns.sample
    need = [model, fold, sample] if paired else [model]
    parsed, group = read_paired(
        log, by=by, columns=columns, need=need, positive_class=positive_class,
        cluster=cluster, paired=paired,
    )  # fmt: skip
    frame = binary_rows(parsed, caller)
    extra = [] if cluster is None else [pl.col(cluster).alias(CLUSTER)]
    frame = frame.with_columns(extra).cache()
    usable = pl.col(SCORE).is_not_null() & pl.col(POSITIVE).is_not_null()
    dtype = parsed.schema[model]
    keys = pair_keys(parsed, group)
    chosen = frame.filter(pl.col(model).is_in(pl.lit([model_a, model_b], pl.List(dtype))))
    classes = class_read(parsed, chosen, group)
    if paired:

        def side(name: Any) -> pl.LazyFrame:
            rows = frame.filter(pl.col(model) == name)
            return rows.select(*keys, SCORE, POSITIVE, *([CLUSTER] if cluster else []))

        both, found = _pair(side(model_a), side(model_b), keys, (model_a, model_b))
        head = f"polaroc: {caller} cannot pair the rows of {model_a!r} and {model_b!r}: "
        tail = f". Each needs one row per ({fold}, {sample}), with the same label."
        pairs = both.filter(usable & pl.col(f"{SCORE}_b").is_not_null())
        checked = guarded(log, pairs, problems(found), head, tail)
        return TwoModels(checked, group, keys, dtype, classes)
    parts = []
    for name in (model_a, model_b):
        empty = chosen.filter(pl.col(model) == name).select(pl.len().alias("_pr_n"))
        what = f"model {name!r} has no rows:"
        parts.append(listing(empty.filter(pl.col("_pr_n") == 0), ["_pr_n"], what))
    rows = chosen.filter(usable).select(
        *dict.fromkeys([*keys, model]), SCORE, POSITIVE, *([CLUSTER] if cluster else [])
    )
    checked = guarded(log, rows, problems(parts), f"polaroc: {caller}: ", ".")
    return TwoModels(checked, group, keys, dtype, classes)


def nan_unless_degenerate(out: pl.LazyFrame, values: list[str]) -> pl.LazyFrame:
    """``out`` with ``values`` NaN where its group holds a NaN score and both AUCs are defined.

    The contract's order for a two-curve test: a degenerate group (``auc_a`` or
    ``auc_b`` null: no positives or no negatives; one label for M) stays null even when
    it holds a NaN score; otherwise a NaN score (``_pr_nan``) makes every statistic NaN.
    """
    void = pl.col("_pr_nan") & pl.col("auc_a").is_not_null() & pl.col("auc_b").is_not_null()
    nan = pl.lit(float("nan"))
    return out.with_columns(pl.when(void).then(nan).otherwise(pl.col(c)).alias(c) for c in values)


Alternative = Literal["two-sided", "greater", "less"]


def check_alternative(alternative: str) -> None:
    """Raise ``ValueError`` unless ``alternative`` is one of the three hypotheses."""
    if alternative not in ("two-sided", "greater", "less"):
        msg = f"alternative must be 'two-sided', 'greater' or 'less', got {alternative!r}"
        raise ValueError(msg)


def check_level(level: float) -> None:
    """Raise ``ValueError`` unless ``0 < level < 1``."""
    if isinstance(level, bool) or not isinstance(level, int | float) or not 0 < level < 1:
        msg = f"level must be in (0, 1), e.g. 0.95 for a 95% interval; got {level!r}"
        raise ValueError(msg)


def tail_p(statistic: pl.Expr, alternative: str, df: pl.Expr | None = None) -> pl.Expr:
    """p-value of a z (``df`` None) or t statistic under ``alternative`` (as pROC's roc.test).

    ``"greater"``: H₁ a − b > 0, P(Z ≥ z); ``"less"``: P(Z ≤ z); two-sided: 2 P(Z ≥ |z|).
    """

    def sf(x: pl.Expr) -> pl.Expr:
        return normal_sf(x) if df is None else t_sf(x, df)

    if alternative == "greater":
        return sf(statistic)
    if alternative == "less":
        return sf(-statistic)
    return (2.0 * sf(statistic.abs())).clip(upper_bound=1.0)


@validated
def delong_test(
    log: FrameLike,
    model_a: Any,
    model_b: Any,
    *,
    by: str | Iterable[str] | None = None,
    paired: bool = True,
    alternative: Alternative = "two-sided",
    level: float = 0.95,
    alpha: float = 0.05,
    adjust: Adjust = None,
    positive_class: Any = None,
    cluster: str | None = None,
    **columns: Unpack[LogNames],
) -> pl.LazyFrame:
    """DeLong's test of H₀: AUC_a = AUC_b (pROC's ``roc.test(method="delong")``), or M_a = M_b.

    Each sample's placement value V (for a positive, the share of negatives it
    outscores; for a negative, the share of positives that outscore it; ties ½) has
    mean AUC, and the covariance matrix of the two AUCs is S = S₁₀/n₊ + S₀₁/n₋, with
    S₁₀ (S₀₁) the sample covariance matrix of the two models' placement values over
    the positives (negatives) (DeLong, DeLong & Clarke-Pearson 1988, §2–3).

    * ``paired=True`` (same samples): z = (AUC_a − AUC_b) / √(var_a + var_b − 2 cov)
      against the standard normal; the interval of the difference is
      (AUC_a − AUC_b) ± z₍₁₊level₎/₂ · √(var_a + var_b − 2 cov), as pROC's
      ``roc.test(...)$conf.int`` (two-sided whatever ``alternative`` is).
    * ``paired=False`` (independent samples, e.g. two test sets): each AUC's variance
      from its own placement values, t = (AUC_a − AUC_b) / √(var_a + var_b) on
      Welch–Satterthwaite df = (var_a + var_b)² / (var_a²/(N_a − 1) + var_b²/(N_b − 1))
      with N the model's samples — pROC's ``roc.test(paired=FALSE)``; the interval is
      the difference ± t₍₁₊level₎/₂,df · √(var_a + var_b) (pROC reports none).

    Placement values are read from each model's counts per distinct score (the
    mid-rank differences of Sun & Xu 2014), so the cost is that of sorting;
    ``var_a`` equals ``pr.auc_se(..., method="delong")²`` on model a's rows (Robin
    et al. 2011, pROC).

    **More than two classes** (and no ``positive_class``): the test compares Hand &
    Till's (2001, eq. 7) M. M is a linear combination of the U-statistics A(i|j), so a
    sample's structural component for M — its placement values in each direction,
    weighted by the direction's coefficient in M — plays the placement value's part:
    with θ_k the mean component over the label-k samples, Var(M) = Σ_k s²_k/n_k and
    the covariance of two models' M likewise from the two components (DeLong, DeLong &
    Clarke-Pearson 1988, §2, generalised; :mod:`polaroc.core.structural`). Samples pair
    on (``dataset``, ``repeat``, ``fold``, ``sample``) and every model needs the same
    class rows of each sample. ``estimate`` is M_a − M_b and ``auc_a``/``auc_b`` the
    M's (as :func:`polaroc.evaluate`'s ``auc`` of the pooled group); ``n_pos`` and
    ``n_neg`` are null (M has no positive class), and so is the class column.

    **Clustered samples** (``cluster=``, several samples per patient, image or user):
    the structural components are summed per cluster and the variances are
    Obuchowski's (1997, "Nonparametric analysis of clustered ROC curve data",
    Biometrics 53:567–578, eq. 3–6), for the AUC and for M; with every sample its own
    cluster they are DeLong's.

    Parameters
    ----------
    log
        Score log with ``model``, ``score`` and ``label`` (and ``class``, see
        ``positive_class``). Paired: also ``fold`` and ``sample``; the two models'
        rows are paired on (``dataset``, ``repeat``, ``fold``, ``sample``), of the
        columns the log has: each needs exactly one row per pair, with the same
        label. Unpaired: each model's rows are its own samples.
    model_a, model_b
        Values of the ``model`` column to compare; ``estimate`` is AUC_a − AUC_b.
    by
        Keyword-only grouping columns; ``None`` (default) = one test per data set
        (``dataset``) when the log has that column, else one test over the pooled
        folds (the AUC of the pooled scores); ``()`` = one test over the whole log;
        ``"fold"`` tests each fold. A log with a ``repeat`` column is always tested
        within each repeat (the column is added first to ``by``): every repeat
        scores each sample once, and pooling repeats would count a sample several
        times.
    paired
        ``True`` (default): the models scored the same samples; ``False``: DeLong's
        unpaired test on independent samples.
    alternative
        ``"two-sided"`` (default), ``"greater"`` (H₁: AUC_a > AUC_b) or ``"less"``.
    level
        Confidence level of ``ci_low``/``ci_high`` (default 0.95).
    alpha
        Significance level of ``reject``.
    adjust
        Multiple-comparison adjustment of the p-values across the table's rows (the
        by groups), e.g. ``"holm"``: adds ``p_adjusted`` and bases ``reject`` on it.
    positive_class
        For a log with a ``class`` column: the class whose score rows are used (a
        row is positive when its label equals it). ``None`` (default): a log
        holding one class's rows is read as it is; a two-class log through its
        larger class value (1 over 0, ``True`` over ``False``, an Enum's last
        category), of each data set. A log of more than two classes is compared by
        M (the class values are counted when the plan is built); give it to compare
        one class against the rest instead. A log without a ``class`` column is
        binary, its ``label`` the positive indicator.
    cluster
        A column of cluster ids (e.g. the patient): Obuchowski's clustered variance.
        A cluster is a value of the column within the test's group (the same id in
        two folds pooled by ``by=()`` is one cluster). It must be set on every row,
        the same on all of a sample's rows and in both models (else ``ValueError``
        naming the samples). ``None`` (default): every sample its own cluster.
    **columns
        Names of the log's columns, as keywords: ``model``, ``fold``, ``class_``,
        ``score``, ``label``, ``sample``, ``dataset``, ``repeat`` (each defaults to its
        own name).

    Returns
    -------
    pl.LazyFrame
        One row per by group: by…, ``model_a``, ``model_b``, ``n`` (samples used:
        pairs when paired, both models' samples when not), ``estimate``
        (AUC_a − AUC_b), ``statistic`` (z; t when unpaired), ``df`` (unpaired only),
        ``p_value``, [``p_adjusted``], ``reject``, ``ci_low``, ``ci_high``,
        ``auc_a``, ``auc_b``, ``var_a``, ``var_b``, ``cov`` (null when unpaired),
        ``n_pos``, ``n_neg``, and for a log with a class column the class whose
        scores were read (named as that column; null for a group pooling data sets
        whose positive classes differ).

        * Samples with a null score (in either model, when paired) or null label are
          left out.
        * No positives or no negatives: AUCs null. Fewer than two of either:
          variances, statistic and p-value null.
        * A NaN score makes the group's statistics NaN and ``reject`` null, unless
          the group is degenerate (an AUC or M null), which stays null.
        * Zero variance of the difference (e.g. identical models): ``statistic`` null
          when the AUCs are equal, else ±inf (p-value 0 on the side it points to).

    Raises
    ------
    ValueError
        A column is missing, bad ``alternative``, ``level``, ``alpha`` or
        ``adjust``; a label value with no score row for its class; a repeated
        (dataset, model, repeat, fold, sample, class) key; a ``positive_class`` no
        row holds; a null ``cluster`` id, or one that differs between a sample's rows
        (class rows and, paired, models); M without a ``sample`` column (a sample's
        class rows are joined by it); and for a paired ``DataFrame`` input samples
        that don't pair up: a model with no rows, a sample in one model only (for M,
        class rows in one model only), a label that differs between the models. For a
        ``LazyFrame`` the data's problems are raised when the result is collected
        (``polars.exceptions.ComputeError`` with the same message).
    TypeError
        Wrong dtypes (see the log contract), a ``positive_class`` that cannot be
        compared with the class column, an unknown keyword argument.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> log = pl.DataFrame({
    ...     "model": ["a"] * 8 + ["b"] * 8,
    ...     "fold": [0] * 16,
    ...     "sample": list(range(8)) * 2,
    ...     "score": [0.9, 0.8, 0.7, 0.3, 0.6, 0.2, 0.4, 0.1,
    ...               0.9, 0.5, 0.4, 0.3, 0.6, 0.7, 0.2, 0.1],
    ...     "label": [True, True, True, True, False, False, False, False] * 2,
    ... })
    >>> out = pr.delong_test(log, "a", "b").collect()
    >>> out.select("n", "estimate", "statistic", "p_value", "ci_low", "ci_high")
    shape: (1, 6)
    ┌─────┬──────────┬───────────┬──────────┬───────────┬──────────┐
    │ n   ┆ estimate ┆ statistic ┆ p_value  ┆ ci_low    ┆ ci_high  │
    │ --- ┆ ---      ┆ ---       ┆ ---      ┆ ---       ┆ ---      │
    │ i64 ┆ f64      ┆ f64       ┆ f64      ┆ f64       ┆ f64      │
    ╞═════╪══════════╪═══════════╪══════════╪═══════════╪══════════╡
    │ 8   ┆ 0.25     ┆ 0.92582   ┆ 0.354539 ┆ -0.279251 ┆ 0.779251 │
    └─────┴──────────┴───────────┴──────────┴───────────┴──────────┘
    >>> pr.delong_test(log, "a", "b", paired=False).collect().select(
    ...     "n", "statistic", "df", "p_value"
    ... )
    shape: (1, 4)
    ┌─────┬───────────┬──────┬──────────┐
    │ n   ┆ statistic ┆ df   ┆ p_value  │
    │ --- ┆ ---       ┆ ---  ┆ ---      │
    │ i64 ┆ f64       ┆ f64  ┆ f64      │
    ╞═════╪═══════════╪══════╪══════════╡
    │ 16  ┆ 0.866025  ┆ 11.2 ┆ 0.404646 │
    └─────┴───────────┴──────┴──────────┘

    Three classes: Hand & Till's M compared between the models, samples paired.

    >>> three = pl.DataFrame({
    ...     "model": ["a"] * 18 + ["b"] * 18,
    ...     "fold": 0,
    ...     "sample": [s for s in range(6) for _ in range(3)] * 2,
    ...     "class": [0, 1, 2] * 12,
    ...     "label": [s % 3 for s in range(6) for _ in range(3)] * 2,
    ...     "score": [0.7, 0.2, 0.1, 0.3, 0.5, 0.2, 0.1, 0.3, 0.6,
    ...               0.5, 0.4, 0.1, 0.2, 0.6, 0.2, 0.3, 0.3, 0.4,
    ...               0.4, 0.4, 0.2, 0.4, 0.3, 0.3, 0.2, 0.2, 0.6,
    ...               0.3, 0.3, 0.4, 0.3, 0.4, 0.3, 0.5, 0.2, 0.3],
    ... })
    >>> pr.delong_test(three, "a", "b").collect().select(
    ...     "estimate", "auc_a", "auc_b", "statistic", "p_value"
    ... )
    shape: (1, 5)
    ┌──────────┬───────┬──────────┬───────────┬──────────┐
    │ estimate ┆ auc_a ┆ auc_b    ┆ statistic ┆ p_value  │
    │ ---      ┆ ---   ┆ ---      ┆ ---       ┆ ---      │
    │ f64      ┆ f64   ┆ f64      ┆ f64       ┆ f64      │
    ╞══════════╪═══════╪══════════╪═══════════╪══════════╡
    │ 0.333333 ┆ 1.0   ┆ 0.666667 ┆ 1.745743  ┆ 0.080856 │
    └──────────┴───────┴──────────┴───────────┴──────────┘
    """
    check_alternative(alternative)
    check_level(level)
    check_alpha(alpha)
    check_adjust(adjust)
    m = _m_test(log, model_a, model_b, by, paired, positive_class, cluster, columns)
    if m is not None:
        stats, group, classes = m
        return with_class_read(
            _test_columns(stats, group, paired, alternative, level, alpha, adjust), classes, group
        )
    two = two_models(
        log, model_a, model_b, by=by, paired=paired, positive_class=positive_class,
        caller="delong_test", names=columns, cluster=cluster,
    )  # fmt: skip
    model = columns_of(columns).model
    out = delong_table(
        two, model_a, model_b, paired, model, alternative, level, alpha, adjust, cluster=cluster
    )
    return two.finish(out)


def _m_test(
    log: FrameLike,
    model_a: Any,
    model_b: Any,
    by: str | Iterable[str] | None,
    paired: bool,
    positive_class: Any,
    cluster: str | None,
    names: LogNames,
) -> tuple[pl.LazyFrame, list[str], pl.LazyFrame | None] | None:
    """DeLong's test of M_a = M_b on a log of more than two classes; ``None`` for any other.

    ``(stats, group, classes)``: the statistics :func:`_test_columns` reads, the test's
    groups and the class column to state (null: M reads every class).
    """
    if model_a == model_b:
        return None  # two_models names the mistake
    columns = columns_of(names, caller="delong_test")
    model, fold, sample = columns.model, columns.fold, columns.sample
    need = [model, fold, sample] if paired else [model]
    parsed, group = read_paired(
        log, by=by, columns=columns, need=need, positive_class=positive_class,
        cluster=cluster, paired=paired,
    )  # fmt: skip
    if not reads_m(parsed):
        return None
    if not parsed.has_sample:  # M joins a sample's class rows by its id, paired or not
        msg = (
            f"delong_test compares Hand & Till's M on a log of more than two classes, which "
            f"needs the {sample!r} column to join each sample's class rows (the log has: "
            f"{', '.join(parsed.schema.names())}); add a sample id, pass sample=<column>, or "
            "give positive_class= for a one-vs-rest test."
        )
        raise ValueError(msg)
    keys = pair_keys(parsed, group)
    found = m_models(parsed, group, keys, [model_a, model_b], cluster, paired=paired)
    groups = found.groups
    stats = (_m_paired if paired else _m_unpaired)(found, groups, keys, model, model_a, model_b)
    stats = stats.with_columns(
        model_a=pl.lit(model_a, parsed.schema[model]),
        model_b=pl.lit(model_b, parsed.schema[model]),
        n_pos=pl.lit(None, pl.Int64),
        n_neg=pl.lit(None, pl.Int64),
    )
    if found.problems:  # paired only: unpaired, each model's samples are its own
        head = f"polaroc: delong_test cannot pair the rows of {model_a!r} and {model_b!r}: "
        tail = f". Each needs the same class rows of each ({fold}, {sample}), with the same label."
        stats = guarded(log, stats, problems(found.problems), head, tail)
    if not group:
        stats = stats.drop(ONE_GROUP)
    classes = None
    if parsed.class_ not in group:
        none = pl.lit(None, parsed.schema[parsed.class_]).alias(parsed.class_)
        classes = stats.select(*group, none) if group else stats.select(none).head(1)
    return stats, group, classes


def _m_side(
    found: MModels, model: str, name: Any, keys: list[str], suffix: str
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """One model's components (``_pr_h_<suffix>``) and M, on the pairing keys."""
    groups = found.groups
    h = found.h.filter(pl.col(model) == name).drop(model)
    m = found.m.filter(pl.col(model) == name).select(*groups, pl.col("auc").alias(f"auc_{suffix}"))
    h = h.rename({COMPONENT: f"{COMPONENT}_{suffix}"})
    return h, m


def _m_paired(
    found: MModels, groups: list[str], keys: list[str], model: str, model_a: Any, model_b: Any
) -> pl.LazyFrame:
    """Paired: M_a, M_b and the covariance matrix from the paired components."""
    key = list(dict.fromkeys([*groups, *keys]))
    h_a, m_a = _m_side(found, model, model_a, key, "a")
    h_b, m_b = _m_side(found, model, model_b, key, "b")
    has_cluster = CLUSTER in found.h.collect_schema()
    right = h_b.select(*key, f"{COMPONENT}_b")
    paired = h_a.join(right, on=key, nulls_equal=True)
    a, b, label = pl.col(f"{COMPONENT}_a"), pl.col(f"{COMPONENT}_b"), pl.col(LABEL)
    cl = pl.col(CLUSTER) if has_cluster else None
    stats = paired.group_by(groups).agg(
        n=pl.len().cast(pl.Int64),
        var_a=structural_covariance(a, a, label, cl),
        var_b=structural_covariance(b, b, label, cl),
        cov=structural_covariance(a, b, label, cl),
        _pr_nan=(a.is_nan() | b.is_nan()).any(),
    )
    on = {"on": groups, "how": "left", "nulls_equal": True}
    stats = stats.join(m_a, **on).join(m_b, **on)  # type: ignore[arg-type]
    var_diff = pl.col("var_a") + pl.col("var_b") - 2.0 * pl.col("cov")
    return stats.with_columns(_pr_var_diff=var_diff)


def _m_unpaired(
    found: MModels, groups: list[str], keys: list[str], model: str, model_a: Any, model_b: Any
) -> pl.LazyFrame:
    """Unpaired: each model's M and variance from its own components (Welch's df)."""
    h, label = pl.col(COMPONENT), pl.col(LABEL)
    cl = pl.col(CLUSTER) if CLUSTER in found.h.collect_schema() else None
    per_model = found.h.group_by([*groups, model]).agg(
        _pr_n=pl.len().cast(pl.Int64),
        _pr_var=structural_covariance(h, h, label, cl),
        _pr_nan=h.is_nan().any(),
    )
    per_model = per_model.join(found.m, on=[*groups, model], how="left", nulls_equal=True)

    def side(name: Any, suffix: str) -> pl.LazyFrame:
        one = per_model.filter(pl.col(model) == name).drop(model)
        return one.rename({"_pr_n": f"_pr_n_{suffix}", "_pr_var": f"var_{suffix}",
                           "_pr_nan": f"_pr_nan_{suffix}", "auc": f"auc_{suffix}"})  # fmt: skip

    both = side(model_a, "a").join(
        side(model_b, "b"), on=groups, how="full", coalesce=True, nulls_equal=True
    )
    c = pl.col
    n_a, n_b = c("_pr_n_a").fill_null(0), c("_pr_n_b").fill_null(0)
    var_a, var_b = c("var_a"), c("var_b")
    df = (var_a + var_b) ** 2 / (
        var_a**2 / (n_a - 1).cast(pl.Float64) + var_b**2 / (n_b - 1).cast(pl.Float64)
    )
    return both.with_columns(
        n=n_a + n_b,
        cov=pl.lit(None, pl.Float64),
        _pr_nan=c("_pr_nan_a").fill_null(False) | c("_pr_nan_b").fill_null(False),
        _pr_var_diff=var_a + var_b,
        df=df,
    )


def delong_table(
    two: TwoModels,
    model_a: Any,
    model_b: Any,
    paired: bool = True,
    model: str = "model",
    alternative: str = "two-sided",
    level: float = 0.95,
    alpha: float = 0.05,
    adjust: str | None = None,
    *,
    cluster: str | None = None,
) -> pl.LazyFrame:
    """:func:`delong_test`'s table of two models' rows read by :func:`two_models`."""
    group = two.group
    cl = None if cluster is None else pl.col(CLUSTER)
    if paired:
        stats = _paired_statistics(two.rows, group, cl)
    else:
        stats = _unpaired_statistics(two.rows, group, model, model_a, model_b, cl)
    stats = stats.with_columns(
        model_a=pl.lit(model_a, two.dtype), model_b=pl.lit(model_b, two.dtype)
    )
    return _test_columns(stats, group, paired, alternative, level, alpha, adjust)


def _placement(c: Counts) -> pl.Expr:
    v10, v01 = f.placements(c)
    return pl.when(pl.col(POSITIVE)).then(v10).otherwise(v01)


def placements(
    frame: pl.LazyFrame, keys: list[str], *, score: str = SCORE, name: str
) -> pl.LazyFrame:
    """``frame``'s rows with their DeLong placement value (V₁₀ or V₀₁) in ``name``."""
    return counts.placed(frame, keys, _placement, score=score, name=name)


def _moments(v: pl.Expr, positive: pl.Expr, cluster: pl.Expr | None) -> dict[str, pl.Expr]:
    """One model's placement-value moments: AUC and S₁₀/n₊ + S₀₁/n₋ (DeLong 1988, §2).

    With ``cluster``, Obuchowski's (1997) variance over clusters.
    """
    return {
        "auc": fixed_mean(v.filter(positive)),
        "var": structural_covariance(v, v, positive, cluster),
    }


def _unpaired_statistics(
    rows: pl.LazyFrame,
    group: list[str],
    model: str,
    model_a: Any,
    model_b: Any,
    cluster: pl.Expr | None = None,
) -> pl.LazyFrame:
    positive = pl.col(POSITIVE)
    placed = placements(rows, [*group, model], name="_pr_v")
    moments = _moments(pl.col("_pr_v"), positive, cluster)
    per_model = placed.group_by([*group, model]).agg(
        _pr_auc=moments["auc"],
        _pr_var=moments["var"],
        _pr_pos=positive.sum().cast(pl.Int64),
        _pr_neg=(~positive).sum().cast(pl.Int64),
        _pr_nan=pl.col(SCORE).is_nan().any(),
    )

    def side(name: Any, suffix: str) -> pl.LazyFrame:
        one = per_model.filter(pl.col(model) == name).drop(model)
        return one.rename({c: f"{c}_{suffix}" for c in one.collect_schema() if c.startswith("_pr")})

    a, b = side(model_a, "a"), side(model_b, "b")
    both = (
        a.join(b, on=group, how="full", coalesce=True, nulls_equal=True)
        if group
        else a.join(b, how="cross")
    )
    c = pl.col
    n_pos_a, n_neg_a = c("_pr_pos_a").fill_null(0), c("_pr_neg_a").fill_null(0)
    n_pos_b, n_neg_b = c("_pr_pos_b").fill_null(0), c("_pr_neg_b").fill_null(0)
    ok = pl.min_horizontal(n_pos_a, n_neg_a, n_pos_b, n_neg_b) > 1
    defined_a = (n_pos_a > 0) & (n_neg_a > 0)
    defined_b = (n_pos_b > 0) & (n_neg_b > 0)
    n_a, n_b = n_pos_a + n_neg_a, n_pos_b + n_neg_b
    var_a, var_b = c("var_a"), c("var_b")
    df = (var_a + var_b) ** 2 / (
        var_a**2 / (n_a - 1).cast(pl.Float64) + var_b**2 / (n_b - 1).cast(pl.Float64)
    )
    return both.with_columns(
        n=n_a + n_b,
        n_pos=n_pos_a + n_pos_b,
        n_neg=n_neg_a + n_neg_b,
        auc_a=pl.when(defined_a).then("_pr_auc_a"),
        auc_b=pl.when(defined_b).then("_pr_auc_b"),
        var_a=pl.when(ok).then("_pr_var_a"),
        var_b=pl.when(ok).then("_pr_var_b"),
        cov=pl.lit(None, pl.Float64),
        _pr_nan=c("_pr_nan_a").fill_null(False) | c("_pr_nan_b").fill_null(False),
    ).with_columns(_pr_var_diff=var_a + var_b, df=df)


def _paired_statistics(
    paired: pl.LazyFrame, by: list[str], cluster: pl.Expr | None = None
) -> pl.LazyFrame:
    positive = pl.col(POSITIVE)
    scored = placements(
        placements(paired, by, name="_pr_va"), by, score=f"{SCORE}_b", name="_pr_vb"
    )
    va, vb = pl.col("_pr_va"), pl.col("_pr_vb")
    has_nan = (pl.col(SCORE).is_nan() | pl.col(f"{SCORE}_b").is_nan()).any()
    aggs = {
        "n_pos": positive.sum().cast(pl.Int64),
        "n_neg": (~positive).sum().cast(pl.Int64),
        "auc_a": fixed_mean(va.filter(positive)),
        "auc_b": fixed_mean(vb.filter(positive)),
        "var_a": structural_covariance(va, va, positive, cluster),
        "var_b": structural_covariance(vb, vb, positive, cluster),
        "cov": structural_covariance(va, vb, positive, cluster),
        "_pr_nan": has_nan,
    }
    stats = scored.group_by(by).agg(**aggs) if by else scored.select(**aggs)
    defined = pl.col("n_pos") * pl.col("n_neg") > 0
    stats = stats.with_columns(
        n=pl.col("n_pos") + pl.col("n_neg"),
        auc_a=pl.when(defined).then("auc_a"),
        auc_b=pl.when(defined).then("auc_b"),
    )
    var_diff = pl.col("var_a") + pl.col("var_b") - 2.0 * pl.col("cov")
    return stats.with_columns(_pr_var_diff=var_diff)


def _test_columns(
    stats: pl.LazyFrame,
    by: list[str],
    paired: bool,
    alternative: str,
    level: float,
    alpha: float,
    adjust: str | None,
) -> pl.LazyFrame:
    """From AUCs, variances and ``_pr_var_diff`` to the comparison table's columns."""
    diff = pl.col("auc_a") - pl.col("auc_b")
    var_diff = pl.col("_pr_var_diff")
    zero_var = var_diff <= ROUNDING**2
    statistic = (
        pl.when(zero_var & (diff.abs() <= ROUNDING))
        .then(None)
        .when(zero_var)
        .then(diff.sign() * float("inf"))
        .otherwise(diff / var_diff.sqrt())
    )
    df = None if paired else pl.col("df")
    q = float(stats_norm.ppf((1.0 + level) / 2.0)) if paired else t_ppf((1.0 + level) / 2.0, df)  # type: ignore[arg-type]
    half = q * var_diff.sqrt()
    out = stats.with_columns(estimate=diff, statistic=statistic).with_columns(
        p_value=tail_p(pl.col("statistic"), alternative, df),
        ci_low=pl.col("estimate") - half,
        ci_high=pl.col("estimate") + half,
    )
    values = ["estimate", "statistic", "p_value", "ci_low", "ci_high"]
    values += ["auc_a", "auc_b", "var_a", "var_b", "cov"] + ([] if paired else ["df"])
    out = nan_unless_degenerate(out, values)
    head = [*by, "model_a", "model_b", "n", "estimate", "statistic"]
    head += [] if paired else ["df"]
    extras = ["ci_low", "ci_high", "auc_a", "auc_b", "var_a", "var_b", "cov", "n_pos", "n_neg"]
    # m counts every group's test: one adjustment across the table's rows
    out = with_adjusted(out, [*head, "p_value", *extras], [], alpha, adjust)
    return out.sort(by) if by else out


# ------------------------------------------------------------------------- k models


@validated
def delong_omnibus(
    log: FrameLike,
    models: Iterable[Any] | None = None,
    *,
    by: str | Iterable[str] | None = None,
    positive_class: Any = None,
    **columns: Unpack[LogNames],
) -> pl.LazyFrame:
    """DeLong's χ² test of H₀: AUC₁ = … = AUC_k for k models scored on the same samples.

    With θ the vector of the k AUCs and S their covariance matrix from the placement
    values (S = S₁₀/n₊ + S₀₁/n₋, as in :func:`delong_test`), DeLong, DeLong &
    Clarke-Pearson (1988, §3) test the contrast Lθ = 0 by
    χ² = (Lθ)ᵀ (L S Lᵀ)⁻¹ (Lθ), chi² with rank(L) degrees of freedom. Here L holds
    the k − 1 successive differences θᵢ − θᵢ₊₁ (the statistic is the same for any
    contrast matrix of rank k − 1 whose rows sum to zero). For k = 2 it is
    :func:`delong_test`'s z². Each model's placement values are computed once,
    from its counts per distinct score (Sun & Xu 2014).

    Parameters
    ----------
    log
        Score log, paired as in :func:`delong_test`: every model needs exactly one
        row per (``dataset``, ``repeat``, ``fold``, ``sample``), all with the same
        label.
    models
        The models to compare (at least two); ``None`` (default) means every model of
        the log.
    by
        Keyword-only grouping, as :func:`delong_test`: ``None`` (default) = one test
        per data set when the log has a ``dataset`` column, else one over all
        folds; ``()`` one test; ``"fold"`` one per fold. A log with a ``repeat``
        column is tested within each repeat.
    positive_class
        As for :func:`delong_test`: a log of more than two classes without it is
        compared by Hand & Till's M, the k × k covariance matrix from the samples'
        structural components for M (see :func:`delong_test`); ``n_pos``, ``n_neg``
        and the class column are then null.
    **columns
        Names of the log's columns, as keywords: ``model``, ``fold``, ``class_``,
        ``score``, ``label``, ``sample``, ``dataset``, ``repeat`` (each defaults to its
        own name).

    Returns
    -------
    pl.LazyFrame
        One row per by group: by…, ``n`` (samples), ``k`` (models), ``statistic``
        (χ²), ``df`` (k − 1), ``p_value``, ``n_pos``, ``n_neg``, and for a log with
        a class column the class read, as :func:`delong_test`.

        * Samples where any model's score, or the label, is null are left out.
        * Fewer than two positives or negatives: ``statistic`` and ``p_value`` null.
        * A NaN score makes the group's ``statistic`` and ``p_value`` NaN (a
          degenerate group, without positives or negatives or one label for M, stays
          null).
        * A singular L S Lᵀ (e.g. two models with the same ranking of the samples):
          ``statistic`` null; drop the duplicate model.

    Raises
    ------
    ValueError
        Missing columns, fewer than two models, a requested model with no rows, and
        (``DataFrame`` input; ``ComputeError`` at collection for a ``LazyFrame``)
        samples that do not pair up across the models, and the log's problems
        :func:`delong_test` names (repeated keys, labels without their class, class
        rows in some models only for M).

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> log = pl.DataFrame({
    ...     "model": ["a"] * 8 + ["b"] * 8 + ["c"] * 8,
    ...     "fold": [0] * 24,
    ...     "sample": list(range(8)) * 3,
    ...     "score": [0.9, 0.8, 0.7, 0.3, 0.6, 0.2, 0.4, 0.1,
    ...               0.9, 0.5, 0.4, 0.3, 0.6, 0.7, 0.2, 0.1,
    ...               0.2, 0.8, 0.5, 0.6, 0.3, 0.1, 0.7, 0.4],
    ...     "label": [True, True, True, True, False, False, False, False] * 3,
    ... })
    >>> pr.delong_omnibus(log).collect()
    shape: (1, 7)
    ┌─────┬─────┬───────────┬─────┬──────────┬───────┬───────┐
    │ n   ┆ k   ┆ statistic ┆ df  ┆ p_value  ┆ n_pos ┆ n_neg │
    │ --- ┆ --- ┆ ---       ┆ --- ┆ ---      ┆ ---   ┆ ---   │
    │ i64 ┆ i64 ┆ f64       ┆ f64 ┆ f64      ┆ i64   ┆ i64   │
    ╞═════╪═════╪═══════════╪═════╪══════════╪═══════╪═══════╡
    │ 8   ┆ 3   ┆ 2.724     ┆ 2.0 ┆ 0.256148 ┆ 4     ┆ 4     │
    └─────┴─────┴───────────┴─────┴──────────┴───────┴───────┘
    """
    chosen = None if models is None else list(dict.fromkeys(models))
    if chosen is not None and len(chosen) < 2:
        msg = f"delong_omnibus compares at least two models, got models={chosen!r}"
        raise ValueError(msg)
    names = columns_of(columns, caller="delong_omnibus")
    model, fold, sample = names.model, names.fold, names.sample
    parsed, group = read_paired(
        log, by=by, columns=names, need=[model, fold, sample], positive_class=positive_class
    )
    keys = pair_keys(parsed, group)
    if reads_m(parsed):
        return _m_omnibus(log, parsed, group, keys, chosen)
    frame = binary_rows(parsed, "delong_omnibus")
    if chosen is not None:
        frame = frame.filter(pl.col(model).is_in(chosen))
    stated = [parsed.class_] if parsed.has_class and parsed.class_ not in keys else []
    frame = frame.select(*dict.fromkeys([*keys, model]), SCORE, POSITIVE, *stated).cache()
    found = _omnibus_problems(frame, group, keys, model, chosen)
    head = "polaroc: delong_omnibus cannot pair the samples of the models: "
    tail = f". Every model needs one row per ({fold}, {sample}), with the same label."
    frame = guarded(log, frame, found, head, tail)
    usable = (pl.col(SCORE).is_not_null().all() & pl.col(POSITIVE).is_not_null().all()).over(keys)
    placed = placements(frame.filter(usable), [*group, model], name="_pr_v")
    out = _omnibus_statistics(placed, group, keys, model)
    return with_class_read(out, class_read(parsed, frame, group), group)


def _omnibus_problems(
    frame: pl.LazyFrame, group: list[str], keys: list[str], model: str, chosen: list[Any] | None
) -> pl.LazyFrame:
    """What keeps the models' samples from pairing, as one ``problem`` row."""
    parts = []
    if chosen is not None:
        present = frame.select(pl.col(model).unique())
        wanted = pl.LazyFrame({model: chosen}, schema={model: frame.collect_schema()[model]})
        absent = wanted.join(present, on=model, how="anti")
        parts.append(listing(absent, [model], "models with no rows:"))
    few = frame.select(pl.col(model).n_unique().alias("_pr_k")).filter(pl.col("_pr_k") < 2)
    parts.append(listing(few, ["_pr_k"], "fewer than two models (count):"))
    k_group = over(pl.col(model).n_unique(), group)
    per_key = (
        frame.with_columns(_pr_k=k_group)
        .group_by(keys)
        .agg(
            _pr_models=pl.col(model).n_unique(),
            _pr_k=pl.col("_pr_k").first(),
            _pr_labels=pl.col(POSITIVE).n_unique(),
        )
    )
    missing = per_key.filter(pl.col("_pr_models") < pl.col("_pr_k"))
    parts.append(listing(missing, keys, "samples missing from some model:"))
    differ = per_key.filter(pl.col("_pr_labels") > 1)
    parts.append(listing(differ, keys, "samples whose label differs between the models:"))
    return problems(parts)


def _m_omnibus(
    log: FrameLike, parsed: Log, group: list[str], keys: list[str], chosen: list[Any] | None
) -> pl.LazyFrame:
    """:func:`delong_omnibus` of Hand & Till's M on a log of more than two classes."""
    model = parsed.columns.model
    found = m_models(parsed, group, keys, chosen, None)
    groups = found.groups
    h = found.h
    parts = list(found.problems)
    if chosen is not None:
        present = h.select(pl.col(model).unique())
        wanted = pl.LazyFrame({model: chosen}, schema={model: parsed.schema[model]})
        absent = wanted.join(present, on=model, how="anti")
        parts.append(listing(absent, [model], "models with no rows:"))
    key = list(dict.fromkeys([*groups, *keys]))
    left = h.select(*key, LABEL, _pr_i=model, _pr_vi=COMPONENT)
    right = h.select(*key, _pr_j=model, _pr_vj=COMPONENT)
    vi, vj = pl.col("_pr_vi"), pl.col("_pr_vj")
    cells = (
        left.join(right, on=key, nulls_equal=True)
        .group_by([*groups, "_pr_i", "_pr_j"])
        .agg(
            _pr_s=structural_covariance(vi, vj, pl.col(LABEL)),
            _pr_n=pl.len().cast(pl.Int64),
            _pr_nan=(vi.is_nan() | vj.is_nan()).any(),
        )
        .join(
            found.m.rename({model: "_pr_i", "auc": "_pr_theta"}),
            on=[*groups, "_pr_i"],
            how="left",
            nulls_equal=True,
        )
        .with_columns(n_pos=pl.lit(None, pl.Int64), n_neg=pl.lit(None, pl.Int64))
    )
    head = "polaroc: delong_omnibus cannot pair the samples of the models: "
    tail = ". Every model needs the same class rows of each sample, with the same label."
    cells = guarded(log, cells, problems(parts), head, tail)
    out = _omnibus_table(cells, groups, m=True)
    if not group:
        out = out.drop(ONE_GROUP)
    none = pl.lit(None, parsed.schema[parsed.class_]).alias(parsed.class_)
    return out.with_columns(none) if parsed.class_ not in group else out


def _omnibus_statistics(
    placed: pl.LazyFrame, group: list[str], keys: list[str], model: str
) -> pl.LazyFrame:
    positive = pl.col(POSITIVE)
    # Every (model i, model j) pair of placement values on the same samples: S is k × k.
    left = placed.select(*keys, POSITIVE, _pr_i=model, _pr_vi="_pr_v", _pr_si=SCORE)
    right = placed.select(*keys, _pr_j=model, _pr_vj="_pr_v")
    pairs = left.join(right, on=keys)
    vi, vj = pl.col("_pr_vi"), pl.col("_pr_vj")
    cells = pairs.group_by([*group, "_pr_i", "_pr_j"]).agg(
        _pr_s=structural_covariance(vi, vj, positive),
        _pr_theta=fixed_mean(vi.filter(positive)),
        n_pos=positive.sum().cast(pl.Int64),
        n_neg=(~positive).sum().cast(pl.Int64),
        _pr_nan=pl.col("_pr_si").is_nan().any(),
    )
    return _omnibus_table(cells.with_columns(_pr_n=pl.col("n_pos") + pl.col("n_neg")), group)


def _omnibus_table(cells: pl.LazyFrame, group: list[str], *, m: bool = False) -> pl.LazyFrame:
    """The χ² per group from the k × k cells (by…, ``_pr_i``, ``_pr_j``, ``_pr_s``, ...).

    ``m``: the cells are of Hand & Till's M (no positive class: ``n_pos``/``n_neg`` null).
    """
    order = ["_pr_i", "_pr_j"]
    diagonal = pl.col("_pr_i") == pl.col("_pr_j")
    aggs = [
        pl.col("_pr_i").n_unique().cast(pl.Int64).alias("k"),
        pl.col("_pr_n").first().alias("n"),
        pl.col("n_pos").first(),
        pl.col("n_neg").first(),
        pl.col("_pr_theta").sort_by(order).filter(diagonal.sort_by(order)).alias("_pr_theta"),
        pl.col("_pr_s").sort_by(order).alias("_pr_s"),
        pl.col("_pr_nan").any(),
        pl.col("_pr_theta").filter(diagonal).is_not_null().all().alias("_pr_defined"),
    ]
    per_group = cells.group_by(group or pl.lit(0).alias("_pr_all")).agg(aggs)
    n_pos, n_neg = pl.col("n_pos"), pl.col("n_neg")
    # degenerate (an AUC or M null) before NaN: null even holding a NaN score
    defined = pl.col("_pr_defined") & (pl.lit(m) | ((n_pos > 0) & (n_neg > 0)))
    ok = (pl.col("k") > 1) & (pl.lit(m) | ((n_pos > 1) & (n_neg > 1)))
    packed = pl.struct("_pr_theta", "_pr_s")
    chi2 = packed.map_batches(_contrast_chi2, return_dtype=pl.Float64, is_elementwise=True)
    nan = pl.lit(float("nan"))
    out = per_group.with_columns(
        statistic=pl.when(~defined)
        .then(None)
        .when(pl.col("_pr_nan"))
        .then(nan)
        .when(ok)
        .then(chi2),
        df=pl.col("k") - 1,
    ).with_columns(p_value=chi2_sf(pl.col("statistic"), pl.col("df")))
    out = out.select(*group, "n", "k", "statistic", "df", "p_value", "n_pos", "n_neg")
    out = with_float_df(out)
    return out.sort(group) if group else out


def _contrast_chi2(s: pl.Series) -> pl.Series:
    """(Lθ)ᵀ(LSLᵀ)⁻¹(Lθ) for every row's θ (k) and row-major S (k²); L = successive differences.

    Rows are solved together per size k (one batched ``numpy.linalg.solve``); a
    singular (condition number past 1/ROUNDING) or non-finite L S Lᵀ gives null.
    """
    theta = s.struct.field("_pr_theta")
    cov = s.struct.field("_pr_s")
    out = np.full(len(s), np.nan)
    valid = np.zeros(len(s), dtype=bool)
    sizes = theta.list.len().fill_null(0).to_numpy()
    for k in np.unique(sizes[sizes > 1]):
        rows = np.flatnonzero((sizes == k) & (cov.list.len().fill_null(0).to_numpy() == k * k))
        t = np.array(theta.gather(rows).to_list(), dtype=float)
        m = np.array(cov.gather(rows).to_list(), dtype=float).reshape(-1, k, k)
        lt = -np.diff(t, axis=1)  # θᵢ − θᵢ₊₁
        lsl = np.diff(np.diff(m, axis=1), axis=2)  # L S Lᵀ (the two signs cancel)
        finite = np.asarray(np.isfinite(lsl).all(axis=(1, 2)) & np.isfinite(lt).all(axis=1))
        with np.errstate(all="ignore"):
            cond = np.linalg.cond(np.where(finite[:, None, None], lsl, 1.0))
        good = finite & (cond < 1.0 / ROUNDING)
        if good.any():
            x = np.linalg.solve(lsl[good], lt[good][:, :, None])[:, :, 0]
            out[rows[good]] = np.einsum("ij,ij->i", lt[good], x)
            valid[rows[good]] = True
    return pl.Series(out).set(pl.Series(~valid), None)
