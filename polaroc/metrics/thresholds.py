"""Tables over thresholds: confusion counts, DET, gain and lift curves, operating points.

Also top-k accuracy, the multiclass count of a label among a sample's highest scores.

Every curve here is read from a group's counts at thresholds (``polaroc.core.counts``), the
same lists :func:`polaroc.roc_curve` is read from: at threshold ``t`` a sample is
predicted positive iff ``score >= t`` (as :func:`polaroc.confusion`). A log with a class
column gives one one-vs-rest curve per class (``class`` joins the keys), as
:func:`polaroc.roc_curve` does; filter the class you want.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Literal, Unpack

import polars as pl

from polaroc.core.args import validated
from polaroc.core.inputs import NAN, ColumnLike, FrameLike, LogColumns
from polaroc.core.log import LogNames, columns_of, read_log, usable_weight
from polaroc.core.names import POSITIVE, SCORE, WEIGHT
from polaroc.metrics._curves import confusion, curve_input, curve_lists, explode_curves, rate_of
from polaroc.metrics.cutoff import balanced_of, fbeta_of, kappa_of, mcc_of
from polaroc.metrics.operating import operating_point

__all__ = [
    "closest_topleft_point",
    "det_curve",
    "gain_curve",
    "lift_curve",
    "max_metric_point",
    "threshold_table",
    "top_k_accuracy",
]

_E = pl.element()
_COUNTS = ("tp", "fp", "tn", "fn")


def _curves(
    log: FrameLike, by: str | Iterable[str] | None, columns: LogColumns, weight: ColumnLike | None
) -> tuple[pl.LazyFrame, list[str]]:
    """One row per curve: keys, ``has_nan`` and ``curve`` (from (0, 0), descending thresholds)."""
    frame, keys = curve_input(log, by, columns, weight)
    return curve_lists(frame, keys, weighted=weight is not None), keys


def _table_of_curve() -> pl.Expr:
    """Curve structs (origin dropped) → the threshold table's fields (inside ``list.eval``)."""
    counts = confusion()
    tp, fp, tn, fn, n_pos, n_neg = (counts[k] for k in ("tp", "fp", "tn", "fn", "n_pos", "n_neg"))
    return pl.struct(
        threshold=_E.struct.field("threshold"),
        tp=tp,
        fp=fp,
        tn=tn,
        fn=fn,
        tpr=rate_of(tp, n_pos),
        fpr=rate_of(fp, n_neg),
        tnr=rate_of(tn, n_neg),
        fnr=rate_of(fn, n_pos),
        ppv=pl.when(tp + fp > 0).then(tp / (tp + fp)),
        npv=pl.when(tn + fn > 0).then(tn / (tn + fn)),
    )


_TABLE_FIELDS = ("threshold", *_COUNTS, "tpr", "fpr", "tnr", "fnr", "ppv", "npv")


@validated
def threshold_table(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None = None,
    weight: ColumnLike | None = None,
    **columns: Unpack[LogNames],
) -> pl.LazyFrame:
    """Confusion counts and rates at every distinct threshold of each group.

    One row per distinct score ``t``, in descending order: ``tp``, ``fp``, ``tn``, ``fn``
    count the samples with ``score >= t`` predicted positive (scikit-learn's
    ``confusion_matrix_at_thresholds(y_true, y_score, sample_weight=w)``, whose ``tns,
    fps, fns, tps, thresholds`` these rows are; pROC's ``coords(roc, "all")`` with
    ``tpr`` = sensitivity, ``tnr`` = specificity), with ``tpr = tp/n₊``, ``fpr = fp/n₋``,
    ``tnr = tn/n₋``, ``fnr = fn/n₊``, ``ppv = tp/(tp + fp)``, ``npv = tn/(tn + fn)``.

    Parameters
    ----------
    log
        Score log (``DataFrame`` or ``LazyFrame``) in the contract's long format.
    by
        Keyword-only grouping columns; ``None`` (default) = (dataset, model, repeat, fold)
        of the columns the log has (``model`` and ``fold`` always), ``()`` = one group,
        a name or names = those. A log with a class column also groups by class
        (one table per class).
    weight
        Case weights (a column name or an expression): the counts are then sums of
        weights (``Float64``).
    **columns
        Names of the log's columns, as keywords: ``model``, ``fold``, ``class_``,
        ``score``, ``label``, ``sample``, ``dataset``, ``repeat`` (each defaults to its
        own name).

    Returns
    -------
    pl.LazyFrame
        by…, ``threshold``, ``tp``, ``fp``, ``tn``, ``fn`` (``Int64``; ``Float64``
        weighted), ``tpr``, ``fpr``, ``tnr``, ``fnr``, ``ppv``, ``npv``. A rate with a
        zero denominator is null; a group holding a NaN score is one row of NaN rates and
        null counts.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> log = pl.DataFrame({
    ...     "model": "m", "fold": 0,
    ...     "score": [0.9, 0.8, 0.8, 0.3, 0.1],
    ...     "label": [True, True, False, True, False],
    ... })
    >>> pr.threshold_table(log).select("threshold", "tp", "fp", "tn", "fn", "ppv").collect()
    shape: (4, 6)
    ┌───────────┬─────┬─────┬─────┬─────┬──────────┐
    │ threshold ┆ tp  ┆ fp  ┆ tn  ┆ fn  ┆ ppv      │
    │ ---       ┆ --- ┆ --- ┆ --- ┆ --- ┆ ---      │
    │ f64       ┆ i64 ┆ i64 ┆ i64 ┆ i64 ┆ f64      │
    ╞═══════════╪═════╪═════╪═════╪═════╪══════════╡
    │ 0.9       ┆ 1   ┆ 0   ┆ 2   ┆ 2   ┆ 1.0      │
    │ 0.8       ┆ 2   ┆ 1   ┆ 1   ┆ 1   ┆ 0.666667 │
    │ 0.3       ┆ 3   ┆ 1   ┆ 1   ┆ 0   ┆ 0.75     │
    │ 0.1       ┆ 3   ┆ 2   ┆ 0   ┆ 0   ┆ 0.6      │
    └───────────┴─────┴─────┴─────┴─────┴──────────┘
    """
    curves, keys = _curves(log, by, columns_of(columns), weight)
    points = pl.col("curve").list.slice(1).list.eval(_table_of_curve())
    return explode_curves(curves, keys, _TABLE_FIELDS, points)


@validated
def det_curve(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None = None,
    weight: ColumnLike | None = None,
    **columns: Unpack[LogNames],
) -> pl.LazyFrame:
    """Detection error trade-off curve: false negative against false positive rate.

    The points of scikit-learn's ``det_curve(y_true, y_score, sample_weight=w)``
    (Martin et al. 1997): the thresholds in ascending order, from the last one at which
    every positive is still found (``fnr = 0``) to the first at which no negative is
    predicted positive any more (``fpr`` at its minimum), with ``fpr = fp/n₋`` and
    ``fnr = fn/n₊``. Drawn on normal-deviate (probit) axes by :func:`polaroc.plot.det`.

    Parameters
    ----------
    log, weight
        As for :func:`threshold_table`.
    by
        Keyword-only grouping columns; ``None`` (default) = (dataset, model, repeat, fold)
        of the columns the log has (``model`` and ``fold`` always), ``()`` = one group,
        a name or names = those. A log with a class column also groups by class.
    **columns
        Names of the log's columns, as keywords: ``model``, ``fold``, ``class_``,
        ``score``, ``label``, ``sample``, ``dataset``, ``repeat`` (each defaults to its
        own name).

    Returns
    -------
    pl.LazyFrame
        by…, ``threshold``, ``fpr``, ``fnr``. A group with one class only has null rates;
        a group holding a NaN score is one NaN row.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> log = pl.DataFrame({
    ...     "model": "m", "fold": 0,
    ...     "score": [0.1, 0.4, 0.35, 0.8],
    ...     "label": [0, 0, 1, 1],
    ... })
    >>> pr.det_curve(log).select("threshold", "fpr", "fnr").collect()
    shape: (3, 3)
    ┌───────────┬─────┬─────┐
    │ threshold ┆ fpr ┆ fnr │
    │ ---       ┆ --- ┆ --- │
    │ f64       ┆ f64 ┆ f64 │
    ╞═══════════╪═════╪═════╡
    │ 0.35      ┆ 0.5 ┆ 0.0 │
    │ 0.4       ┆ 0.5 ┆ 0.5 │
    │ 0.8       ┆ 0.0 ┆ 0.5 │
    └───────────┴─────┴─────┘
    """
    curves, keys = _curves(log, by, columns_of(columns, caller="det_curve"), weight)
    tp, fp = _E.struct.field("tp"), _E.struct.field("fp")
    index = pl.int_range(pl.len())
    first = (fp == fp.first()).sum().cast(pl.Int64) - 1
    last = (tp < tp.last()).sum().cast(pl.Int64)
    span = _E.filter((index >= first) & (index <= last)).reverse()
    det = pl.struct(
        threshold=_E.struct.field("threshold"),
        fpr=rate_of(fp, fp.last()),
        fnr=rate_of(tp.last() - tp, tp.last()),
    )
    # from the point (0, 0) at threshold +inf, as scikit-learn 1.9's det_curve
    points = pl.col("curve").list.eval(
        pl.struct(
            threshold=_E.struct.field("threshold"),
            tp=tp,
            fp=fp,
            fpr=det.struct.field("fpr"),
            fnr=det.struct.field("fnr"),
        )
    )
    points = points.list.eval(span)
    return explode_curves(curves, keys, ("threshold", "fpr", "fnr"), points)


def _gain_points(lift: bool) -> pl.Expr:
    tp, fp = _E.struct.field("tp"), _E.struct.field("fp")
    n, events = tp + fp, tp
    tested = 100.0 * n / pl.repeat(n.last(), pl.len())
    found = pl.when(events.last() > 0).then(100.0 * events / pl.repeat(events.last(), pl.len()))
    last = (
        pl.when(n > 0).then(found / tested).alias("lift") if lift else found.alias("percent_found")
    )
    fields = [
        _E.struct.field("threshold").alias("threshold"),
        n.alias("n"),
        events.alias("n_events"),
        tested.alias("percent_tested"),
        last,
    ]
    return pl.struct(fields)


@validated
def gain_curve(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None = None,
    weight: ColumnLike | None = None,
    **columns: Unpack[LogNames],
) -> pl.LazyFrame:
    """Cumulative gain curve: the share of positives found against the share of samples tested.

    Samples are tested in descending score order, a tied run at once: at threshold ``t``,
    ``n`` samples score ``>= t``, ``n_events`` of them positive, ``percent_tested = 100 ·
    n / N`` and ``percent_found = 100 · n_events / N₊`` (percent, 0–100). The curve starts
    at (0, 0) (threshold ``+inf``), as yardstick's ``gain_curve`` (its ``.n``,
    ``.n_events``, ``.percent_tested``, ``.percent_found``), which it equals; it is the
    cumulative accuracy profile (CAP). With weights, counts are sums of weights.

    Parameters
    ----------
    log, weight
        As for :func:`threshold_table`.
    by
        Keyword-only grouping columns; ``None`` (default) = (dataset, model, repeat, fold)
        of the columns the log has (``model`` and ``fold`` always), ``()`` = one group,
        a name or names = those. A log with a class column also groups by class.
    **columns
        Names of the log's columns, as keywords: ``model``, ``fold``, ``class_``,
        ``score``, ``label``, ``sample``, ``dataset``, ``repeat`` (each defaults to its
        own name).

    Returns
    -------
    pl.LazyFrame
        by…, ``threshold``, ``n``, ``n_events``, ``percent_tested``, ``percent_found``
        (null for a group without positives); one NaN row for a group holding a NaN score.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> log = pl.DataFrame({
    ...     "model": "m", "fold": 0,
    ...     "score": [0.9, 0.8, 0.8, 0.3],
    ...     "label": [True, True, False, False],
    ... })
    >>> pr.gain_curve(log).select("threshold", "percent_tested", "percent_found").collect()
    shape: (4, 3)
    ┌───────────┬────────────────┬───────────────┐
    │ threshold ┆ percent_tested ┆ percent_found │
    │ ---       ┆ ---            ┆ ---           │
    │ f64       ┆ f64            ┆ f64           │
    ╞═══════════╪════════════════╪═══════════════╡
    │ inf       ┆ 0.0            ┆ 0.0           │
    │ 0.9       ┆ 25.0           ┆ 50.0          │
    │ 0.8       ┆ 75.0           ┆ 100.0         │
    │ 0.3       ┆ 100.0          ┆ 100.0         │
    └───────────┴────────────────┴───────────────┘
    """
    curves, keys = _curves(log, by, columns_of(columns, caller="gain_curve"), weight)
    points = pl.col("curve").list.eval(_gain_points(lift=False))
    fields = ("threshold", "n", "n_events", "percent_tested", "percent_found")
    return explode_curves(curves, keys, fields, points)


@validated
def lift_curve(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None = None,
    weight: ColumnLike | None = None,
    **columns: Unpack[LogNames],
) -> pl.LazyFrame:
    """Lift curve: ``percent_found / percent_tested`` along the gain curve.

    How many times more positives the top-scored samples hold than a random sample of
    the same size: yardstick's ``lift_curve`` (``.lift = .percent_found /
    .percent_tested`` on the rows of its gain curve), which it equals, except at the
    origin, where yardstick's 0/0 is NaN and the lift here is null. 1 is no better than
    chance; the last point is always 1.

    Parameters
    ----------
    log, weight
        As for :func:`threshold_table`.
    by
        Keyword-only grouping columns; ``None`` (default) = (dataset, model, repeat, fold)
        of the columns the log has (``model`` and ``fold`` always), ``()`` = one group,
        a name or names = those. A log with a class column also groups by class.
    **columns
        Names of the log's columns, as keywords: ``model``, ``fold``, ``class_``,
        ``score``, ``label``, ``sample``, ``dataset``, ``repeat`` (each defaults to its
        own name).

    Returns
    -------
    pl.LazyFrame
        by…, ``threshold``, ``n``, ``n_events``, ``percent_tested``, ``lift``.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> log = pl.DataFrame({
    ...     "model": "m", "fold": 0,
    ...     "score": [0.9, 0.8, 0.8, 0.3],
    ...     "label": [True, True, False, False],
    ... })
    >>> pr.lift_curve(log).select("threshold", "percent_tested", "lift").collect()
    shape: (4, 3)
    ┌───────────┬────────────────┬──────────┐
    │ threshold ┆ percent_tested ┆ lift     │
    │ ---       ┆ ---            ┆ ---      │
    │ f64       ┆ f64            ┆ f64      │
    ╞═══════════╪════════════════╪══════════╡
    │ inf       ┆ 0.0            ┆ null     │
    │ 0.9       ┆ 25.0           ┆ 2.0      │
    │ 0.8       ┆ 75.0           ┆ 1.333333 │
    │ 0.3       ┆ 100.0          ┆ 1.0      │
    └───────────┴────────────────┴──────────┘
    """
    curves, keys = _curves(log, by, columns_of(columns, caller="lift_curve"), weight)
    points = pl.col("curve").list.eval(_gain_points(lift=True))
    fields = ("threshold", "n", "n_events", "percent_tested", "lift")
    return explode_curves(curves, keys, fields, points)


@validated
def closest_topleft_point(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None = None,
    cost_fp: float = 1.0,
    cost_fn: float = 1.0,
    normalize: bool = False,
    **columns: Unpack[LogNames],
) -> pl.LazyFrame:
    """The point of each ROC curve closest to the top-left corner (0, 1).

    Minimises ``(1 − sensitivity)² + (1 − specificity)²``: pROC's
    ``coords(roc, "best", best.method = "closest.topleft")`` (Perkins & Schisterman 2006
    compare it with Youden's J, :func:`polaroc.youden_point`, which maximises the
    vertical distance from the diagonal instead). Ties go to the higher sensitivity, then
    the higher threshold.

    Parameters
    ----------
    log
        Score log in the contract's long format.
    by
        Keyword-only grouping columns; ``None`` (default) = (dataset, model, repeat, fold)
        of the columns the log has (``model`` and ``fold`` always), ``()`` = one group,
        a name or names = those. A log with a class column also groups by class
        (one point per class).
    cost_fp, cost_fn, normalize
        The costs the ``cost`` column reports at the point (as :func:`polaroc.youden_point`).
    **columns
        Names of the log's columns, as keywords: ``model``, ``fold``, ``class_``,
        ``score``, ``label``, ``sample``, ``dataset``, ``repeat`` (each defaults to its
        own name).

    Returns
    -------
    pl.LazyFrame
        One row per curve: the keys, ``threshold``, ``sensitivity``, ``specificity``,
        ``cost``, ``distance`` (to (0, 1)). Null for a one-class group, NaN for a group
        holding a NaN score.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> log = pl.DataFrame({
    ...     "model": "m", "fold": 0,
    ...     "score": [0.9, 0.8, 0.7, 0.6, 0.55, 0.5, 0.4, 0.3],
    ...     "label": [True, False, True, True, False, True, False, False],
    ... })
    >>> pr.closest_topleft_point(log).select("threshold", "sensitivity", "distance").collect()
    shape: (1, 3)
    ┌───────────┬─────────────┬──────────┐
    │ threshold ┆ sensitivity ┆ distance │
    │ ---       ┆ ---         ┆ ---      │
    │ f64       ┆ f64         ┆ f64      │
    ╞═══════════╪═════════════╪══════════╡
    │ 0.6       ┆ 0.75        ┆ 0.353553 │
    └───────────┴─────────────┴──────────┘
    """
    squared = (1.0 - pl.field("sensitivity")) ** 2 + (1.0 - pl.field("specificity")) ** 2
    return operating_point(
        log,
        by,
        -squared,
        {"distance": squared.sqrt()},
        thresholds=None,
        cost_fp=cost_fp,
        cost_fn=cost_fn,
        normalize=normalize,
        columns=columns_of(columns, caller="closest_topleft_point"),
    )


Metric = Literal["f1", "fbeta", "mcc", "cohen_kappa", "balanced_accuracy"]


def _criterion(metric: str, beta: float) -> Callable[[dict[str, pl.Expr]], pl.Expr]:
    formulas: dict[str, Callable[[dict[str, pl.Expr]], pl.Expr]] = {
        "f1": fbeta_of(1.0),
        "fbeta": fbeta_of(beta),
        "mcc": mcc_of,
        "cohen_kappa": kappa_of,
        "balanced_accuracy": balanced_of,
    }
    if metric not in formulas:
        msg = f"metric must be one of {', '.join(map(repr, formulas))}, got {metric!r}"
        raise ValueError(msg)
    return formulas[metric]


@validated
def max_metric_point(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None = None,
    metric: Metric = "f1",
    beta: float = 1.0,
    weight: ColumnLike | None = None,
    **columns: Unpack[LogNames],
) -> pl.LazyFrame:
    """The threshold of each group that maximises F₁, F_β, MCC, Cohen's κ or balanced accuracy.

    Every distinct score is tried (the rows of :func:`threshold_table`) and the one with
    the highest value of ``metric`` at ``score >= threshold`` is kept; ties go to the
    higher threshold. ``pr.f1(score, positive, threshold=<the threshold>)`` (and so on)
    reproduces the value. The F-optimal threshold of calibrated probabilities is half the
    optimal F₁ (Lipton, Elkan & Naryanaswamy 2014, Theorem 1); this is its empirical
    counterpart on the log.

    Parameters
    ----------
    log, weight
        As for :func:`threshold_table`.
    by
        Keyword-only grouping columns; ``None`` (default) = (dataset, model, repeat, fold)
        of the columns the log has (``model`` and ``fold`` always), ``()`` = one group,
        a name or names = those. A log with a class column also groups by class.
    metric
        ``"f1"``, ``"fbeta"`` (with ``beta``), ``"mcc"``, ``"cohen_kappa"`` or
        ``"balanced_accuracy"`` (the formulas of :mod:`polaroc.metrics.cutoff`).
    beta
        β of ``"fbeta"``.
    **columns
        Names of the log's columns, as keywords: ``model``, ``fold``, ``class_``,
        ``score``, ``label``, ``sample``, ``dataset``, ``repeat`` (each defaults to its
        own name).

    Returns
    -------
    pl.LazyFrame
        One row per curve: by…, ``threshold``, ``tp``, ``fp``, ``tn``, ``fn`` and the
        metric's value in a column named ``metric``. Null for a one-class group, NaN for
        a group holding a NaN score.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> log = pl.DataFrame({
    ...     "model": "m", "fold": 0,
    ...     "score": [0.9, 0.8, 0.7, 0.6, 0.55, 0.5, 0.4, 0.3],
    ...     "label": [True, False, True, True, False, True, False, False],
    ... })
    >>> pr.max_metric_point(log, metric="f1").select("threshold", "f1").collect()
    shape: (1, 2)
    ┌───────────┬─────┐
    │ threshold ┆ f1  │
    │ ---       ┆ --- │
    │ f64       ┆ f64 │
    ╞═══════════╪═════╡
    │ 0.5       ┆ 0.8 │
    └───────────┴─────┘
    """
    formula = _criterion(metric, beta)
    if metric == "fbeta" and not beta > 0:
        msg = f"beta must be positive, got {beta!r}"
        raise ValueError(msg)
    columns_of(columns, caller="max_metric_point")  # a wrong keyword names this function
    table = threshold_table(log, by=by, weight=weight, **columns)
    keys = [k for k in table.collect_schema().names() if k not in _TABLE_FIELDS]
    # The formulas multiply up to four counts: weighted, they read each count as a share
    # of the group's total weight (the same on every row), so that weights of 1e160 or
    # 1e-100 give the value of weights near 1 (as ``pr.mcc``'s scaled weights do);
    # unweighted counts are exact integers and are read as they are.
    total = pl.sum_horizontal(*_COUNTS).cast(pl.Float64) if weight is not None else None
    k = {f: pl.col(f).cast(pl.Float64) if total is None else pl.col(f) / total for f in _COUNTS}
    both = (k["tp"] + k["fn"] > 0) & (k["tn"] + k["fp"] > 0)
    nan = pl.col("threshold").is_nan()
    value = pl.when(nan).then(NAN).when(both).then(formula(k))
    order = [pl.col(metric).fill_null(-float("inf")), pl.col("threshold")]
    best = (
        table.with_columns(value.alias(metric))
        .group_by(keys)
        .agg(pl.all().sort_by(order, descending=True, nulls_last=True).first())
    )
    defined = pl.col(metric).is_not_null()
    return best.select(
        *keys,
        *(pl.when(defined).then(pl.col(f)).alias(f) for f in ("threshold", *_COUNTS)),
        metric,
    ).sort(keys, maintain_order=True)


@validated
def top_k_accuracy(
    log: FrameLike,
    *,
    by: str | Iterable[str] | None = None,
    k: int = 2,
    threshold: float = 0.5,
    weight: ColumnLike | None = None,
    **columns: Unpack[LogNames],
) -> pl.LazyFrame:
    """Top-k accuracy: the share of samples whose label is among their ``k`` highest scores.

    scikit-learn's ``top_k_accuracy_score(y_true, y_score, k=k, sample_weight=w)``, which
    it equals, including its rule for tied scores: among classes with the same score the
    one later in the sorted class order ranks higher. A sample's scores are its rows
    within its (dataset, model, repeat, fold) — the sample ids of different folds or
    models are different samples, whatever ``by`` pools.

    A sample with a single score row — every sample of a binary log holding only the
    positive class's rows, or of a log without a class column — is a binary problem,
    as in :func:`polaroc.evaluate`'s ``error``: it is predicted to be its row's class
    iff ``score >= threshold``. Its top-1 accuracy is then the accuracy at
    ``threshold`` (:func:`polaroc.accuracy`), and with ``k >= 2`` both classes are
    among its top k, so it is always counted right (scikit-learn's binary rule; it
    predicts positive iff ``score > threshold``, strictly, and takes the threshold 0
    for scores outside [0, 1]). A binary log holding both classes' rows ranks the two
    scores of each sample instead, which for complementary scores (``s`` and
    ``1 − s``) is the same as ``threshold=0.5``.

    Parameters
    ----------
    log
        As for :func:`threshold_table`.
    by
        Keyword-only grouping columns; ``None`` (default) = (dataset, model, repeat, fold)
        of the columns the log has (``model`` and ``fold`` always), ``()`` = one group,
        a name or names = those.
    k
        How many of the highest scores count (``>= 1``).
    threshold
        The decision threshold of a sample with a single score row (see above).
    weight
        Case weights, a column name or an expression (one value per sample; the first
        row's is used).
    **columns
        Names of the log's columns, as keywords: ``model``, ``fold``, ``class_``,
        ``score``, ``label``, ``sample``, ``dataset``, ``repeat`` (each defaults to its
        own name). A log with a class column needs its ``sample`` column (to gather
        each sample's scores).

    Returns
    -------
    pl.LazyFrame
        by…, ``n`` (samples), ``top_k_accuracy``; NaN for a group holding a NaN score.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> log = pl.DataFrame({
    ...     "model": "m", "fold": 0,
    ...     "sample": [1, 1, 1, 2, 2, 2],
    ...     "class": ["a", "b", "c"] * 2,
    ...     "score": [0.5, 0.3, 0.2, 0.2, 0.3, 0.5],
    ...     "label": ["b", "b", "b", "a", "a", "a"],
    ... })
    >>> pr.top_k_accuracy(log, k=2).collect()
    shape: (1, 4)
    ┌───────┬──────┬─────┬────────────────┐
    │ model ┆ fold ┆ n   ┆ top_k_accuracy │
    │ ---   ┆ ---  ┆ --- ┆ ---            │
    │ str   ┆ i32  ┆ i64 ┆ f64            │
    ╞═══════╪══════╪═════╪════════════════╡
    │ m     ┆ 0    ┆ 2   ┆ 0.5            │
    └───────┴──────┴─────┴────────────────┘
    """
    names = columns_of(columns, caller="top_k_accuracy")
    data = read_log(log, by=by, columns=names, weight=weight)
    if data.has_class and not data.has_sample:
        msg = (
            f"top_k_accuracy needs the {names.sample!r} column to gather a sample's class "
            f"rows, and the log has none (it has: {', '.join(data.schema.names())}); pass "
            "sample=<column> or add a sample id."
        )
        raise ValueError(msg)
    keys = data.groups
    usable = pl.col(SCORE).is_not_null() & pl.col(POSITIVE).is_not_null()
    if weight is not None:
        usable = usable & usable_weight()
    frame = data.unique().filter(usable)
    s, y = pl.col(SCORE), pl.col(POSITIVE)
    w = pl.col(WEIGHT) if weight is not None else pl.lit(1.0)
    # a sample with one score row: predicted its row's class iff score >= threshold
    alone = pl.lit(1.0) if k >= 2 else ((s >= threshold) == y).cast(pl.Float64)
    if not data.has_class:  # every row is a sample
        per_sample = frame.select(*keys, hit=pl.when(s.is_nan()).then(NAN).otherwise(alone), w=w)
    else:
        cls = pl.col(names.class_)
        if isinstance(data.schema[names.class_], pl.Enum | pl.Categorical):
            cls = cls.cast(pl.String)
        true_score, true_class = s.filter(y).first(), cls.filter(y).first()
        above = (s > true_score) | ((s == true_score) & (cls > true_class))
        one = pl.len() == 1
        ranked = pl.when(one).then(alone.first()).otherwise((above.sum() < k).cast(pl.Float64))
        # samples are keyed within (dataset, model, repeat, fold), whatever by pools
        within = list(dict.fromkeys([*keys, *data.keys]))
        per_sample = (
            frame.group_by(within)
            .agg(
                hit=pl.when(s.is_nan().any()).then(NAN).otherwise(ranked),
                w=w.first(),
                labelled=y.any() | one,
            )
            .filter(pl.col("labelled"))
        )
    weights = pl.col("w")
    out = (
        per_sample.group_by(keys)
        .agg(
            n=pl.len().cast(pl.Int64),
            top_k_accuracy=(pl.col("hit") * weights).sum() / weights.sum(),
        )
        .sort(keys, maintain_order=True)
    )
    return out.select(*data.by, "n", "top_k_accuracy")
