"""Tests of classifiers trained once and scored on one test set: McNemar and Cochran's Q.

When a model is too dear to retrain across folds, Dietterich (1998, §3.1) recommends
McNemar's (1947) test on the single test set: each sample is either classified right or
wrong by each model, and only the discordant samples (one model right, the other wrong)
carry evidence. Cochran's (1950) Q extends it to k models. Both need only per-sample
right/wrong flags, computed here in one Polars aggregation per (model, fold, sample);
scipy evaluates the binomial and χ² tails on the one-row-per-group results.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Unpack

import numpy as np
import polars as pl
from scipy import stats

from polaroc.compare._dist import chi2_sf
from polaroc.compare._reading import (
    binary_rows,
    class_read,
    pair_keys,
    read_paired,
    with_class_read,
)
from polaroc.compare.fold_table import check_alpha, decision, with_float_df
from polaroc.core.args import validated
from polaroc.core.guard import guarded, listing, problems
from polaroc.core.inputs import FrameLike
from polaroc.core.log import POSITIVE, SCORE, Log, LogNames, columns_of

__all__ = ["cochran_q", "mcnemar_test"]

_EXACT_BELOW = 25  # exact=None: the binomial test below 25 discordant pairs
_ALTERNATIVES = ("two-sided", "greater", "less")
_RIGHT, _NAN, _LABEL, _USABLE = "_pr_right", "_pr_nan", "_pr_label", "_pr_usable"


def _read(
    log: FrameLike,
    by: str | Iterable[str] | None,
    positive_class: Any,
    columns: LogNames,
    caller: str,
) -> tuple[Log, list[str]]:
    """The log read once and the test's groups: ``by`` (``None``: the data set), repeat first.

    Every repeat of a repeated cross-validation scores each sample once, so pooling
    repeats would count a sample several times: the tests run within each repeat.
    """
    names = columns_of(columns, caller=caller)
    need = [names.model, names.fold, names.sample]
    return read_paired(log, by=by, columns=names, need=need, positive_class=positive_class)


def _right_or_wrong(
    parsed: Log, group: list[str], threshold: float | pl.Expr, caller: str
) -> tuple[pl.LazyFrame, list[str], pl.LazyFrame | None]:
    """One row per (group…, model, fold, sample): whether the model classified it right.

    A binary log (no class column, one class's rows, or two classes' rows read through
    the positive class: ``positive_class=`` or the larger class value of each data
    set, as :meth:`polaroc.core.log.Log.binary`) predicts the positive class iff
    ``score >= threshold``. A data set of more than two classes (without
    ``positive_class``) predicts the class of a sample's highest score; a sample whose
    own class ties the top score counts as wrong (the model did not single out the
    label), as does one whose own class has no score row. It is right when the
    predicted class is its label. Returns the rows, the sample keys (group…,
    dataset, repeat, fold, sample) and the class read per group (the positive class
    whose scores were thresholded; null where the argmax read every class).
    """
    columns = parsed.columns
    frame = _read_rows(parsed, caller).cache()
    keys = pair_keys(parsed, group)
    score, pos = pl.col(SCORE), pl.col(POSITIVE)
    per_sample = frame.group_by(*keys, columns.model).agg(
        _pr_rows=pl.len(),
        _pr_own=score.filter(pos).max(),
        _pr_other=score.filter(~pos).max(),
        _pr_single=((score >= threshold) == pos).first(),
        _pr_nan=score.is_nan().any(),
        _pr_usable=(score.is_not_null() & pos.is_not_null()).all(),
        _pr_label=pl.col(columns.label).first(),
    )
    own, other = pl.col("_pr_own"), pl.col("_pr_other")
    right = (
        pl.when(pl.col("_pr_rows") == 1)
        .then(pl.col("_pr_single"))
        .when(own.is_null())
        .then(False)
        .when(other.is_null())
        .then(True)
        .otherwise(own > other)
    )
    out = per_sample.select(*keys, columns.model, _LABEL, _NAN, _USABLE, right.alias(_RIGHT))
    return out, keys, class_read(parsed, frame, group)


def _read_rows(parsed: Log, caller: str) -> pl.LazyFrame:
    """The rows the rule reads: the positive class's of a binary log, every class's else.

    ``positive_class=`` keeps that class's rows (one class against the rest on a log
    of more than two classes); without it a data set of at most two classes keeps its
    larger class's rows (:meth:`polaroc.core.log.Log.binary`'s rule) and one of more
    classes keeps them all, for the argmax. The keys are checked unique first.
    """
    if parsed.has_class and parsed.positive_class is not None:
        return binary_rows(parsed, caller)
    frame = parsed.unique()
    if not parsed.has_class:
        return frame
    within = [parsed.columns.dataset] if parsed.has_dataset else []
    class_ = pl.col(parsed.class_)
    several = class_.n_unique().over(within) > 2 if within else class_.n_unique() > 2
    top = class_.max().over(within) if within else class_.max()
    return frame.filter(several | (class_ == top))


def _pairing_problems(
    rows: pl.LazyFrame, keys: list[str], model: str, models: list[Any] | None
) -> pl.LazyFrame:
    """What keeps the models' samples from pairing, as one ``problem`` row."""
    parts = []
    present = rows.select(pl.col(model).unique())
    if models is not None:
        wanted = pl.LazyFrame({model: models}, schema={model: rows.collect_schema()[model]})
        absent = wanted.join(present, on=model, how="anti")
        parts.append(listing(absent, [model], "models with no rows:"))
    per_key = rows.group_by(keys).agg(
        _pr_k=pl.col(model).n_unique(), _pr_labels=pl.col(_LABEL).n_unique()
    )
    per_key = per_key.join(present.select(_pr_all=pl.len()), how="cross")
    short = per_key.filter(pl.col("_pr_k") < pl.col("_pr_all"))
    parts.append(listing(short.select(keys), keys, "samples not scored by every model:"))
    mismatch = per_key.filter(pl.col("_pr_labels") > 1).select(keys)
    parts.append(listing(mismatch, keys, "samples whose label differs between the models:"))
    return problems(parts)


def _paired_rows(
    parsed: Log,
    models: list[Any] | None,
    group: list[str],
    threshold: float | pl.Expr,
    caller: str,
) -> tuple[pl.LazyFrame, list[str], pl.LazyFrame | None]:
    """The right/wrong rows of ``models`` (``None``: all), checked to pair up sample by sample.

    Also the sample keys and the class read (see :func:`_right_or_wrong`).
    """
    columns = parsed.columns
    rows, keys, classes = _right_or_wrong(parsed, group, threshold, caller)
    log = parsed.original if parsed.original is not None else rows
    if models is not None:
        rows = rows.filter(pl.col(columns.model).is_in(models))
    rows = rows.cache()
    found = _pairing_problems(rows, keys, columns.model, models)
    head = f"polaroc: {caller} cannot pair the models' samples: "
    tail = (
        f". Every model needs one score per ({columns.fold}, {columns.sample})"
        " (per class), with the same label."
    )
    return guarded(log, rows, found, head, tail), keys, classes


def _binom_p(k: np.ndarray, n: np.ndarray, alternative: str) -> np.ndarray:
    """Exact binomial p-value of ``k`` successes in ``n`` trials at p = ½ (1 when n = 0)."""
    if alternative == "greater":
        return np.asarray(stats.binom.sf(k - 1, n, 0.5))
    if alternative == "less":
        return np.asarray(stats.binom.cdf(k, n, 0.5))
    return np.asarray(np.minimum(1.0, 2.0 * stats.binom.cdf(np.minimum(k, n - k), n, 0.5)))


def _exact_p(k: pl.Expr, n: pl.Expr, alternative: str) -> pl.Expr:
    """``_binom_p`` on a result table's columns (null in, null out)."""

    def call(s: pl.Series) -> pl.Series:
        ks = s.struct.field("k").fill_null(0).to_numpy().astype(float)
        ns = s.struct.field("n").fill_null(0).to_numpy().astype(float)
        out = _binom_p(ks, ns, alternative) if len(s) else np.empty(0)
        return pl.Series(out, dtype=pl.Float64).set(s.struct.field("k").is_null(), None)

    packed = pl.struct(k.alias("k"), n.alias("n"))
    return packed.map_batches(call, return_dtype=pl.Float64, is_elementwise=True)


@validated
def mcnemar_test(
    log: FrameLike,
    model_a: Any,
    model_b: Any,
    *,
    threshold: float = 0.5,
    exact: bool | None = None,
    alternative: str = "two-sided",
    alpha: float = 0.05,
    by: str | Iterable[str] | None = None,
    positive_class: Any = None,
    **columns: Unpack[LogNames],
) -> pl.LazyFrame:
    """McNemar's test of equal accuracy of two models on the same test samples.

    Each sample is classified right or wrong by each model, and it is right when its
    predicted class is its label. On a binary log — no class column, the positive
    class's rows only, or both classes' rows read through the positive class
    (``positive_class``, else the larger class value of each data set) — a sample is
    predicted positive iff its positive-class ``score >= threshold``. On a log of
    more than two classes the predicted class is the class of its highest score; a
    sample whose own class *ties* the top score counts as wrong for that model (so its
    accuracy can be below :func:`polaroc.evaluate`'s 1 − ``error``, which counts such
    a sample 1/k right). Of the n paired samples, n_10 are right by a only and n_01
    right by b only. Under
    H₀ (equal accuracy) n_10 ~ Binomial(n_10 + n_01, ½) (McNemar 1947; Dietterich
    1998, §3.1, for comparing classifiers trained once):

    * exact: the binomial test; two-sided p = min(1, 2·P(X ≤ min(n_01, n_10)));
    * χ² with continuity correction: (|n_10 − n_01| − 1)² / (n_10 + n_01) on 1 df.

    Both equal statsmodels' ``mcnemar(table, exact=..., correction=True)``.

    Parameters
    ----------
    log
        Score log with ``model``, ``fold``, ``sample``, ``score``, ``label`` (and
        ``class``). The two models' samples are paired on (``dataset``, ``repeat``,
        ``fold``, ``sample``), as :func:`polaroc.delong_test` pairs them: sample ids
        need only be unique within a fold, and a log with several folds gives one
        test over all its samples (each sample is tested once, in its own fold).
    model_a, model_b
        Values of the ``model`` column to compare.
    threshold
        Decision threshold on the positive class's score of a binary log (unused by
        the argmax of a log of more than two classes).
    exact
        ``True``: the exact binomial test; ``False``: χ² with continuity correction;
        ``None`` (default): exact when n_10 + n_01 < 25, else χ² (per group). A
        one-sided ``alternative`` needs the exact test (χ² is two-sided by nature), so
        ``None`` then means exact and ``False`` is an error.
    alternative
        ``"two-sided"`` (default), ``"greater"`` (H₁: a is more accurate than b:
        p = P(X ≥ n_10)) or ``"less"`` (p = P(X ≤ n_10)).
    alpha
        Level for ``reject``.
    by
        Keyword-only grouping; ``None`` (default) is the ``dataset`` column when the
        log has one, else one test over the whole log; ``()`` one test. A log with a
        ``repeat`` column is tested within each repeat (the column is added to
        ``by``).
    positive_class
        The class whose score is thresholded on a log with a ``class`` column;
        ``None`` (default): the larger class value of a two-class data set. Given on
        a log of more than two classes, it reads that class against the rest
        (right: ``score >= threshold`` exactly when the label is that class).
    **columns
        Names of the log's columns, as keywords: ``model``, ``fold``, ``class_``,
        ``score``, ``label``, ``sample``, ``dataset``, ``repeat`` (each defaults to its
        own name).

    Returns
    -------
    pl.LazyFrame
        One row per group, the comparison shape: by…, ``model_a``, ``model_b``, ``n``
        (paired samples), ``estimate`` (accuracy of a − accuracy of b),
        ``statistic`` (χ², or for the exact test min(n_01, n_10) two-sided and n_10
        one-sided, as statsmodels), ``df`` (1 for χ², null for the exact test: the
        column is always there), ``p_value``, ``reject``, then ``n_01``, ``n_10``
        (``Int64``), ``exact`` (which test ran), ``accuracy_a``, ``accuracy_b``,
        and for a log with a class column the class whose scores were thresholded
        (named as that column; null where the argmax read every class).

        * A sample with a null score or label in either model is left out.
        * A NaN score in a group makes its ``estimate``, ``statistic`` and
          ``p_value`` NaN and ``reject`` null.
        * No discordant samples: the exact p-value is 1; the χ² statistic and
          p-value are null (statsmodels divides by zero: χ² = inf, p = 0).

    Raises
    ------
    ValueError
        Equal models, an unknown ``alternative``, ``exact=False`` with a one-sided
        ``alternative``, a missing column, and (for a ``DataFrame``; at collection for
        a ``LazyFrame``) a repeated (dataset, model, repeat, fold, sample, class)
        key, a label value with no score row for its class, samples that do not
        pair up: a sample scored by one model only, or labelled differently by the
        two.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> log = pl.DataFrame({
    ...     "model": ["a"] * 8 + ["b"] * 8,
    ...     "fold": 0,
    ...     "sample": list(range(8)) * 2,
    ...     "score": [0.9, 0.8, 0.7, 0.3, 0.6, 0.2, 0.4, 0.1,
    ...               0.9, 0.4, 0.4, 0.3, 0.6, 0.7, 0.2, 0.1],
    ...     "label": [True, True, True, True, False, False, False, False] * 2,
    ... })
    >>> pr.mcnemar_test(log, "a", "b").collect().select(
    ...     "n", "estimate", "statistic", "df", "p_value", "n_01", "n_10", "exact"
    ... )
    shape: (1, 8)
    ┌─────┬──────────┬───────────┬──────┬─────────┬──────┬──────┬───────┐
    │ n   ┆ estimate ┆ statistic ┆ df   ┆ p_value ┆ n_01 ┆ n_10 ┆ exact │
    │ --- ┆ ---      ┆ ---       ┆ ---  ┆ ---     ┆ ---  ┆ ---  ┆ ---   │
    │ i64 ┆ f64      ┆ f64       ┆ f64  ┆ f64     ┆ i64  ┆ i64  ┆ bool  │
    ╞═════╪══════════╪═══════════╪══════╪═════════╪══════╪══════╪═══════╡
    │ 8   ┆ 0.375    ┆ 0.0       ┆ null ┆ 0.25    ┆ 0    ┆ 3    ┆ true  │
    └─────┴──────────┴───────────┴──────┴─────────┴──────┴──────┴───────┘
    """
    if model_a == model_b:
        msg = f"mcnemar_test compares two different models; both are {model_a!r}"
        raise ValueError(msg)
    if alternative not in _ALTERNATIVES:
        msg = f"alternative must be 'two-sided', 'greater' or 'less', got {alternative!r}"
        raise ValueError(msg)
    if alternative != "two-sided" and exact is False:
        msg = (
            "mcnemar_test: the χ² test (exact=False) is two-sided only; "
            "use exact=True (or None) for a one-sided alternative"
        )
        raise ValueError(msg)
    check_alpha(alpha)
    parsed, group = _read(log, by, positive_class, columns, "mcnemar_test")
    model = parsed.columns.model
    pairs = _paired_rows(parsed, [model_a, model_b], group, threshold, "mcnemar_test")
    rows, keys, classes = pairs

    def side(name: Any, suffix: str) -> pl.LazyFrame:
        picked = rows.filter(pl.col(model) == name)
        return picked.select(
            *keys, *(pl.col(c).alias(f"{c}_{suffix}") for c in (_RIGHT, _NAN, _USABLE))
        )

    both = side(model_a, "a").join(side(model_b, "b"), on=keys, how="inner", nulls_equal=True)
    both = both.filter(pl.col(f"{_USABLE}_a") & pl.col(f"{_USABLE}_b"))
    ra, rb = pl.col(f"{_RIGHT}_a"), pl.col(f"{_RIGHT}_b")
    counts = {
        "n": pl.len().cast(pl.Int64),
        "n_01": (~ra & rb).sum().cast(pl.Int64),
        "n_10": (ra & ~rb).sum().cast(pl.Int64),
        "_pr_right_a": ra.sum().cast(pl.Int64),
        "_pr_right_b": rb.sum().cast(pl.Int64),
        "_pr_nan": (pl.col(f"{_NAN}_a") | pl.col(f"{_NAN}_b")).any(),
    }
    table = both.group_by(group).agg(**counts) if group else both.select(**counts)
    dtype = parsed.schema[model]
    names = (pl.lit(model_a, dtype), pl.lit(model_b, dtype))
    out = _mcnemar_columns(table, group, names, exact, alternative, alpha)
    return with_class_read(out, classes, group)


def _mcnemar_columns(
    table: pl.LazyFrame,
    group: list[str],
    names: tuple[pl.Expr, pl.Expr],
    exact: bool | None,
    alternative: str,
    alpha: float,
) -> pl.LazyFrame:
    n01, n10 = pl.col("n_01"), pl.col("n_10")
    discordant = n01 + n10
    if exact is None:
        use_exact = pl.lit(True) if alternative != "two-sided" else discordant < _EXACT_BELOW
    else:
        use_exact = pl.lit(exact)
    k = n10 if alternative != "two-sided" else pl.min_horizontal(n01, n10)
    chi2 = pl.when(discordant > 0).then(
        ((n10 - n01).abs() - 1).cast(pl.Float64) ** 2 / discordant.cast(pl.Float64)
    )
    nan = pl.col("_pr_nan")
    n = pl.col("n").cast(pl.Float64)

    def unless_nan(expr: pl.Expr) -> pl.Expr:
        return pl.when(nan).then(float("nan")).otherwise(expr)

    table = table.with_columns(
        exact=use_exact,
        estimate=unless_nan((pl.col("_pr_right_a") - pl.col("_pr_right_b")) / n),
        statistic=unless_nan(pl.when(use_exact).then(k.cast(pl.Float64)).otherwise(chi2)),
        df=pl.when(~use_exact).then(pl.lit(1, pl.Int64)),
        accuracy_a=unless_nan(pl.col("_pr_right_a") / n),
        accuracy_b=unless_nan(pl.col("_pr_right_b") / n),
    ).with_columns(
        p_value=unless_nan(
            pl.when(pl.col("exact"))
            .then(_exact_p(k, discordant, alternative))
            .otherwise(chi2_sf(pl.col("statistic"), 1.0))
        )
    )
    out = table.select(
        *group,
        model_a=names[0],
        model_b=names[1],
        n="n",
        estimate="estimate",
        statistic="statistic",
        df="df",
        p_value="p_value",
        reject=decision(pl.col("p_value"), alpha),
        n_01="n_01",
        n_10="n_10",
        exact="exact",
        accuracy_a="accuracy_a",
        accuracy_b="accuracy_b",
    )
    out = with_float_df(out)
    return out.sort(group) if group else out


@validated
def cochran_q(
    log: FrameLike,
    models: Iterable[Any] | None = None,
    *,
    threshold: float = 0.5,
    by: str | Iterable[str] | None = None,
    positive_class: Any = None,
    **columns: Unpack[LogNames],
) -> pl.LazyFrame:
    """Cochran's Q test that k models are equally accurate on the same test samples.

    Each sample is right or wrong for each model (as in :func:`mcnemar_test`:
    ``score >= threshold`` on the positive class's score of a binary log, the argmax
    of its scores on a log of more than two classes, a tie at the top counting as
    wrong). With x_ij = 1 when model j classifies sample i right, C_j
    the models' totals, R_i the samples' totals and N the grand total, Cochran (1950)

        Q = (k − 1)·(k·Σ C_j² − N²) / (k·N − Σ R_i²)

    is χ² with k − 1 degrees of freedom under H₀ (every model equally accurate); for
    k = 2 it is McNemar's χ² without continuity correction. Equal to statsmodels'
    ``cochrans_q``.

    Parameters
    ----------
    log
        Score log, read and paired as in :func:`mcnemar_test`: every model needs one
        score (per class) for every (``dataset``, ``repeat``, ``fold``, ``sample``),
        with the same label.
    models
        The models to compare (at least two); ``None`` (default) every model of the log.
    threshold
        Decision threshold on the positive class's score of a binary log.
    by
        Keyword-only, as :func:`mcnemar_test`: ``None`` is the ``dataset`` column
        when present.
    positive_class
        As for :func:`mcnemar_test`: the class whose score is thresholded.
    **columns
        Names of the log's columns, as keywords: ``model``, ``fold``, ``class_``,
        ``score``, ``label``, ``sample``, ``dataset``, ``repeat`` (each defaults to its
        own name).

    Returns
    -------
    pl.LazyFrame
        One row per group: by…, ``n`` (paired samples), ``k`` (models),
        ``statistic`` (Q), ``df`` (k − 1), ``p_value``.

        * A sample with a null score or label in any model is left out.
        * A NaN score makes the group's ``statistic`` and ``p_value`` NaN.
        * Every sample right for all models or wrong for all (the denominator is
          0): ``statistic`` and ``p_value`` null (statsmodels gives NaN).

        A log with a class column adds the class read, as :func:`mcnemar_test`.

    Raises
    ------
    ValueError
        Fewer than two models, a requested model with no rows, a missing column,
        and (for a ``DataFrame``; at collection for a ``LazyFrame``) the log's
        problems :func:`mcnemar_test` names and samples that do not pair up across
        the models.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> log = pl.DataFrame({
    ...     "model": ["a"] * 6 + ["b"] * 6 + ["c"] * 6,
    ...     "fold": 0,
    ...     "sample": list(range(6)) * 3,
    ...     "score": [0.9, 0.8, 0.7, 0.2, 0.1, 0.3,
    ...               0.9, 0.3, 0.2, 0.6, 0.1, 0.3,
    ...               0.4, 0.3, 0.7, 0.6, 0.7, 0.8],
    ...     "label": [1, 1, 1, 0, 0, 0] * 3,
    ... })
    >>> pr.cochran_q(log).collect()
    shape: (1, 5)
    ┌─────┬─────┬───────────┬─────┬──────────┐
    │ n   ┆ k   ┆ statistic ┆ df  ┆ p_value  │
    │ --- ┆ --- ┆ ---       ┆ --- ┆ ---      │
    │ i64 ┆ i64 ┆ f64       ┆ f64 ┆ f64      │
    ╞═════╪═════╪═══════════╪═════╪══════════╡
    │ 6   ┆ 3   ┆ 6.333333  ┆ 2.0 ┆ 0.042144 │
    └─────┴─────┴───────────┴─────┴──────────┘
    """
    chosen = None if models is None else list(dict.fromkeys(models))
    if chosen is not None and len(chosen) < 2:
        msg = f"cochran_q compares at least two models, got models={chosen!r}"
        raise ValueError(msg)
    parsed, group = _read(log, by, positive_class, columns, "cochran_q")
    model = parsed.columns.model
    rows, keys, classes = _paired_rows(parsed, chosen, group, threshold, "cochran_q")
    usable = pl.col(_USABLE).all().over(keys)
    rows = rows.filter(usable)
    x = pl.col(_RIGHT).cast(pl.Int64)
    per_sample = rows.group_by(keys).agg(_pr_r=x.sum(), _pr_nan=pl.col(_NAN).any())
    per_model = rows.group_by(*group, model).agg(_pr_c=x.sum())
    samples = {
        "n": pl.len().cast(pl.Int64),
        "_pr_total": pl.col("_pr_r").sum().cast(pl.Float64),
        "_pr_r2": (pl.col("_pr_r").cast(pl.Float64) ** 2).sum(),
        "_pr_nan": pl.col("_pr_nan").any(),
    }
    model_sums = {
        "k": pl.len().cast(pl.Int64),
        "_pr_c2": (pl.col("_pr_c").cast(pl.Float64) ** 2).sum(),
    }
    if group:
        table = (
            per_sample.group_by(group)
            .agg(**samples)
            .join(per_model.group_by(group).agg(**model_sums), on=group)
        )
    else:
        table = per_sample.select(**samples).join(per_model.select(**model_sums), how="cross")
    k = pl.col("k").cast(pl.Float64)
    total = pl.col("_pr_total")
    denominator = k * total - pl.col("_pr_r2")
    q = (k - 1.0) * (k * pl.col("_pr_c2") - total**2) / denominator
    nan = pl.col("_pr_nan")
    statistic = pl.when(nan).then(float("nan")).when(denominator > 0).then(q)
    out = table.with_columns(statistic=statistic, df=pl.col("k") - 1).select(
        *group,
        "n",
        "k",
        "statistic",
        "df",
        p_value=chi2_sf(pl.col("statistic"), pl.col("df")),
    )
    out = with_float_df(out)
    out = out.sort(group) if group else out
    return with_class_read(out, classes, group)
