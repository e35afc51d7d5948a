"""The whole evaluation of a log in one call: the tables of ``polaroc report``.

:func:`report_tables` builds every table as one lazy plan over the log (the per-fold
table is cached, so ``pl.collect_all`` reads the log once); :func:`write_report`
writes them as CSV, Parquet and Markdown next to the figures.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from polaroc.core.inputs import FrameLike, LogColumns, as_lazy

if TYPE_CHECKING:
    from polars._typing import PolarsDataType
from polaroc.compare.paired import paired_ttest, test_agreement
from polaroc.compare.registry import REGISTRY, Adjust
from polaroc.compare.spread import se_vs_sd
from polaroc.compare.twoway import anova, duncan, duncan_ranges
from polaroc.core.log import read_log
from polaroc.evaluation import evaluate
from polaroc.metrics.curves import roc_curve
from polaroc.metrics.fold_curves import average_roc, pooled_roc, pooling_table
from polaroc.metrics.multiclass import pairwise_auc
from polaroc.metrics.net_benefit import decision_curve
from polaroc.metrics.precision_recall import pooled_pr_curve, pr_curve
from polaroc.metrics.reliability import calibration, calibration_curve

__all__ = [
    "LOWER_IS_BETTER",
    "Report",
    "Settings",
    "calibration_tables",
    "net_benefit_summary",
    "probability_sets",
    "report_tables",
    "sorted_table",
    "summary_table",
    "to_markdown",
    "write_tables",
]

METRICS = ("auc", "sauc", "error")
LOWER_IS_BETTER = frozenset({"error", "brier", "log_loss", "cost", "ece", "mce"})
"""Metrics for which the lower value is the better model; every test and sentence knows."""


def higher_is_better(metric: str) -> bool:
    """False for the metrics in :data:`LOWER_IS_BETTER` (error, Brier score, log loss, …)."""
    return metric not in LOWER_IS_BETTER


@dataclass(frozen=True)
class Settings:
    """Every choice the report made: the page states each one.

    ``seed`` seeds every randomised test (the Bayesian signed-rank test's posterior
    samples), so two runs write identical tables and pages. ``weight`` is the log's
    case-weight column (``None``: unweighted). A threshold that is not finite (``nan``)
    is refused.

    Examples
    --------
    >>> from polaroc.report import Settings
    >>> Settings(metric="error").higher_is_better
    False
    >>> Settings(threshold=float("nan"))
    Traceback (most recent call last):
    ...
    ValueError: --threshold must be a finite number, got nan
    """

    metric: str = "auc"
    alpha: float = 0.05
    adjust: Adjust = None
    rope: float | None = None
    threshold: float = 0.5
    seed: int = 0
    weight: str | None = None

    def __post_init__(self) -> None:
        if not math.isfinite(self.threshold):
            msg = f"--threshold must be a finite number, got {self.threshold}"
            raise ValueError(msg)
        if not 0 < self.alpha < 1:
            msg = f"--alpha must lie between 0 and 1, got {self.alpha}"
            raise ValueError(msg)
        if self.rope is not None and not (math.isfinite(self.rope) and self.rope >= 0):
            msg = f"--rope must be a finite width >= 0, got {self.rope}"
            raise ValueError(msg)

    @property
    def higher_is_better(self) -> bool:
        """Whether a higher ``metric`` is the better model."""
        return higher_is_better(self.metric)


OPTIONAL_METRICS = ("average_precision",)  # summarised when the per-fold table has them


def summary_table(
    folds: FrameLike,
    *,
    by: Iterable[str] | None = None,
    model: str = "model",
    dataset: str = "dataset",
) -> pl.LazyFrame:
    """Per model (within ``by``): folds and mean ± sd of AUC (M), sAUC and error over folds.

    A per-fold table with an ``average_precision`` column (binary logs) adds its mean ± sd.
    ``by=None`` summarises within each data set when the table has a ``dataset`` column and
    over the whole table otherwise; ``()`` is one group; names are those columns.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> folds = pl.DataFrame({"model": ["a", "a", "b", "b"], "auc": [0.8, 0.9, 0.7, 0.7],
    ...                       "sauc": [0.5, 0.6, 0.4, 0.4], "error": [0.2, 0.1, 0.3, 0.3]})
    >>> pr.report.summary_table(folds, by=[]).collect()
    shape: (2, 8)
    ┌───────┬─────────┬──────────┬──────────┬───────────┬──────────┬────────────┬──────────┐
    │ model ┆ n_folds ┆ auc_mean ┆ auc_sd   ┆ sauc_mean ┆ sauc_sd  ┆ error_mean ┆ error_sd │
    │ ---   ┆ ---     ┆ ---      ┆ ---      ┆ ---       ┆ ---      ┆ ---        ┆ ---      │
    │ str   ┆ u32     ┆ f64      ┆ f64      ┆ f64       ┆ f64      ┆ f64        ┆ f64      │
    ╞═══════╪═════════╪══════════╪══════════╪═══════════╪══════════╪════════════╪══════════╡
    │ a     ┆ 2       ┆ 0.85     ┆ 0.070711 ┆ 0.55      ┆ 0.070711 ┆ 0.15       ┆ 0.070711 │
    │ b     ┆ 2       ┆ 0.7      ┆ 0.0      ┆ 0.4       ┆ 0.0      ┆ 0.3        ┆ 0.0      │
    └───────┴─────────┴──────────┴──────────┴───────────┴──────────┴────────────┴──────────┘
    """
    frame = as_lazy(folds, argument="folds")
    names = frame.collect_schema().names()
    by = ([dataset] if dataset in names else []) if by is None else list(by)
    keys = [*by, model]
    stats = [pl.len().alias("n_folds")]
    for m in (*METRICS, *(m for m in OPTIONAL_METRICS if m in names)):
        stats += [pl.col(m).mean().alias(f"{m}_mean"), pl.col(m).std().alias(f"{m}_sd")]
    return (
        frame.group_by(keys)
        .agg(stats)
        .sort([*by, "auc_mean", model], descending=[False] * len(by) + [True, False])
    )


@dataclass
class Report:
    """The report's tables, and what was found in the log.

    :func:`report_tables` fills the lazy plans (``tables``, ``curves``, ``optional``);
    :func:`polaroc.report.write_report` adds the collected tables (``results``), the
    figures' paths, the ``settings`` used, the page's path and text (``page``,
    ``html``) — and a notebook then shows the page (``_repr_html_``).

    ``kinds`` has one row per data set (by group): ``n_rows``, ``n_labels``,
    ``multiclass`` and the positive class of a binary one (``_pr_positive``: the last
    class value in sort order) — binary and multiclass are decided for each data set
    on its own. ``optional`` holds tables a design may not support (across data sets,
    5×2 cv, Bayesian); each is collected on its own and a refusal becomes a note.

    Examples
    --------
    >>> import polaroc as pr
    >>> rep = pr.report.report_tables(pr.scan_logs(pr.demo_log_path()))
    >>> rep.multiclass, rep.by
    (False, [])
    >>> rep.tables["summary"].collect().height  # one row per model
    6
    """

    tables: dict[str, pl.LazyFrame]
    by: list[str]
    multiclass: bool
    positive_class: object | None
    curves: dict[str, pl.LazyFrame] = field(default_factory=dict)
    kinds: pl.DataFrame = field(default_factory=pl.DataFrame)
    columns: LogColumns = field(default_factory=LogColumns)
    optional: dict[str, pl.LazyFrame] = field(default_factory=dict)
    alpha: float = 0.05
    design: tuple[int, int] | None = None
    results: dict[str, pl.DataFrame] = field(default_factory=dict)
    figures: dict[str, Path] = field(default_factory=dict)
    settings: Settings = field(default_factory=Settings)
    written: list[Path] = field(default_factory=list)
    page: Path | None = None
    html: str = ""
    notes: list[str] = field(default_factory=list)

    def _repr_html_(self) -> str:
        """The page in Jupyter, in a frame (its style sheet stays its own)."""
        if not self.html:
            names = ", ".join(sorted(self.results or self.tables))
            return f"<p>polaroc report: tables {html.escape(names)} (no page written)</p>"
        return (
            '<iframe style="width:100%;height:820px;border:1px solid #ddd" '
            f'srcdoc="{html.escape(self.html, quote=True)}"></iframe>'
        )


POSITIVE = "_pr_positive"


def _kinds(
    log: pl.LazyFrame, by: list[str], has_class: bool, columns: LogColumns, repeat: str
) -> pl.DataFrame:
    """Per data set (by group): rows, models, folds, repeats, label values, positive class.

    One small query. The positive class of a binary data set is its last class value in sort order
    (scikit-learn's default ``pos_label``), which for a log holding only one class's
    rows is that class.
    """
    stats = [
        pl.len().alias("n_rows"),
        pl.col(columns.label).drop_nulls().n_unique().alias("n_labels"),
        pl.col(columns.model).n_unique().alias("n_models"),
        pl.col(columns.fold).n_unique().alias("n_folds"),
    ]
    if repeat in log.collect_schema().names():
        stats.append(pl.col(repeat).n_unique().alias("n_repeats"))
    if has_class:
        stats.append(pl.col(columns.class_).drop_nulls().unique().sort().last().alias(POSITIVE))
    else:
        stats.append(pl.lit(None).alias(POSITIVE))
    kinds = log.group_by(by).agg(stats).sort(by) if by else log.select(stats)
    return kinds.with_columns(multiclass=pl.col("n_labels") > 2).collect()


def _subset(log: pl.LazyFrame, keys: pl.DataFrame, by: list[str]) -> pl.LazyFrame:
    """The rows of ``log`` in the data sets listed in ``keys`` (all rows without ``by``)."""
    if not by:
        return log
    return log.join(keys.lazy().select(by), on=by, how="semi")


def _one_fold_column(folds: pl.LazyFrame, fold: str, repeat: str) -> pl.LazyFrame:
    """Repeated folds as one fold column ``"repeat/fold"`` (for tables without repeats).

    Works on logs and per-fold tables alike.
    """
    if repeat not in folds.collect_schema().names():
        return folds
    return folds.with_columns(pl.format("{}/{}", repeat, fold).alias(fold)).drop(repeat)


def optional_tables(
    folds: pl.LazyFrame,
    *,
    metric: str,
    alpha: float,
    by: list[str],
    n_datasets: int,
    design: tuple[int, int] | None,
    rope: float | None,
    columns: LogColumns,
    seed: int | None = 0,
) -> dict[str, pl.LazyFrame]:
    """Tables a design may support: across data sets, 5×2 cv, Bayesian (when present).

    Across two or more data sets: the mean ranks, Friedman's test with Nemenyi's
    (Demšar 2006), Wilcoxon's signed-rank test, the sign test and the Bayesian
    signed-rank test (Benavoli et al. 2014). A 5×2 design (``design == (5, 2)``,
    repeats × folds): Dietterich's (1998) 5×2 cv t and Alpaydın's (1999) combined F.
    With ``rope``: the correlated Bayesian t test (Corani & Benavoli 2015).
    ``seed`` seeds the Bayesian signed-rank test's posterior samples; a test that
    takes ``higher_is_better`` is told the metric's direction (error: lower is better).
    """
    import polaroc.compare as compare

    names = {"model": columns.model, "fold": columns.fold, "dataset": columns.dataset,
             "repeat": columns.repeat}  # fmt: skip
    higher = higher_is_better(metric)
    plans: dict[str, pl.LazyFrame] = {}
    wanted: list[tuple[str, Mapping[str, object]]] = []
    across = [b for b in by if b != columns.dataset]
    if columns.dataset in by and n_datasets >= 2:
        common = {"by": across, "model": columns.model, "dataset": columns.dataset}
        wanted += [
            (name, common)
            for name in ("mean_ranks", "friedman_test", "nemenyi_test", "wilcoxon_test",
                         "sign_test", "bayes_signed_rank")
        ]  # fmt: skip
    if design == (5, 2):
        wanted += [("paired_ttest_5x2cv", names), ("combined_ftest_5x2cv", names)]
    if rope is not None:
        wanted.append(("bayes_ttest", names))
    if rope is not None:  # otherwise each test's own default
        wanted = [(name, {**kwargs, "rope": rope}) for name, kwargs in wanted]
    for name, kwargs in wanted:
        options = {"alpha": alpha, "higher_is_better": higher, "seed": seed, **kwargs}
        if name == "mean_ranks":  # a summary, not a test
            plans[name] = compare.mean_ranks(
                folds, metric, by=across, alpha=alpha, higher_is_better=higher,
                model=columns.model, dataset=columns.dataset,
            )  # fmt: skip
        else:
            plans[name] = REGISTRY[name](folds, metric, **options)
    return plans


def report_tables(
    log: FrameLike,
    *,
    metric: str = "auc",
    alpha: float = 0.05,
    threshold: float = 0.5,
    adjust: Adjust = None,
    rope: float | None = None,
    columns: LogColumns | None = None,
    folds: pl.DataFrame | None = None,
    weight: str | None = None,
    seed: int | None = 0,
) -> Report:
    """Build the report's tables for ``log`` as lazy plans sharing one cached per-fold table.

    Each data set (``dataset`` group) is judged on its own: binary when its label
    has at most two values, multiclass otherwise (the one query this function runs,
    which also counts rows, models, folds and repeats). Tables: ``folds``
    (:func:`polaroc.evaluate`), ``summary``, ``paired_ttest``, ``anova``, ``duncan``,
    ``duncan_ranges``, ``agreement`` (AUC test vs error test), for binary data sets
    ``pooling`` and ``se_vs_sd``, for multiclass ones ``pairwise`` (per data set).
    ``curves`` holds the ROC tables of the binary data sets' positive class;
    ``optional`` the tables across data sets, of a 5×2 design and with ``rope`` the
    Bayesian ones (:func:`optional_tables`). A per-fold table computed elsewhere
    (``folds``, e.g. by :func:`polaroc.distributed.evaluate` on a Ray or Spark
    cluster) replaces :func:`polaroc.evaluate`; the curves still read ``log``.
    ``weight`` names the log's case-weight column, passed to :func:`polaroc.evaluate`
    (None: unweighted); ``seed`` seeds the randomised tests.

    Examples
    --------
    >>> import polaroc as pr
    >>> rep = pr.report.report_tables(pr.scan_logs(pr.demo_log_path()))
    >>> sorted(rep.tables)  # doctest: +NORMALIZE_WHITESPACE
    ['agreement', 'anova', 'duncan', 'duncan_ranges', 'folds', 'paired_ttest', 'pooling',
     'se_vs_sd', 'summary']
    >>> rep.positive_class
    'malignant'
    """
    cols = columns or LogColumns()
    lf = as_lazy(log)
    found = read_log(lf, columns=cols)  # validates names and dtypes before any work
    names: dict[str, Any] = {
        "model": cols.model, "fold": cols.fold, "class_": cols.class_, "score": cols.score,
        "label": cols.label, "dataset": cols.dataset,
    }  # fmt: skip
    table_names: dict[str, Any] = {
        "model": cols.model, "fold": cols.fold, "dataset": cols.dataset, "repeat": cols.repeat,
    }  # fmt: skip
    repeat = cols.repeat
    by = [b for b in found.by if b not in (cols.model, cols.fold, repeat)]
    kinds = _kinds(lf, by, found.has_class, cols, repeat)
    if kinds["n_rows"].sum() == 0:
        msg = "the log is empty: it has no rows to evaluate"
        raise ValueError(msg)
    binary_sets = kinds.filter(~pl.col("multiclass"))
    multi_sets = kinds.filter(pl.col("multiclass"))

    per_fold = (
        evaluate(
            lf,
            threshold=threshold,
            sample=cols.sample,
            repeat=cols.repeat,
            weight=weight,
            **names,
        )
        if folds is None
        else folds.lazy()  # computed elsewhere, e.g. on a cluster by pr.distributed.evaluate
    )
    # One row order from run to run (group-by output order is not fixed): every sum and
    # standard deviation below then adds its terms in the same order, to the last bit.
    keys = [k for k in found.by if k in per_fold.collect_schema().names()]
    per_fold = per_fold.sort(keys, maintain_order=True).cache()
    tables = {
        "folds": per_fold,
        "summary": summary_table(per_fold, by=by, model=cols.model, dataset=cols.dataset),
        "paired_ttest": paired_ttest(per_fold, metric, alpha=alpha, adjust=adjust, **table_names),
        "anova": anova(per_fold, metric, **table_names),
        "duncan": duncan(per_fold, metric, alpha=alpha, **table_names),
        "duncan_ranges": duncan_ranges(per_fold, metric, alpha=alpha, **table_names),
        "agreement": test_agreement(per_fold, ("auc", "error"), alpha=alpha, **table_names),
    }
    curves: dict[str, pl.LazyFrame] = {}
    if multi_sets.height:
        multi = _subset(lf, multi_sets, by)
        tables["pairwise"] = pairwise_auc(multi, **names)
        # one-vs-rest: each class's scores against every other label, folds pooled
        ovr = _one_fold_column(multi, cols.fold, repeat)
        curves["ovr"] = pooled_roc(ovr, **names, weight=weight)
    if binary_sets.height:
        binary = _subset(lf, binary_sets, by)
        if found.has_class:  # the positive class's rows of each binary data set
            positives = binary_sets.lazy().select(*by, POSITIVE)
            binary = binary.join(positives, on=by) if by else binary.join(positives, how="cross")
            binary = binary.filter(pl.col(cols.class_) == pl.col(POSITIVE)).drop(POSITIVE)
        tables["pooling"] = pooling_table(binary, **names)
        binary_folds = _one_fold_column(_subset(per_fold, binary_sets, by), cols.fold, repeat)
        binary_folds = binary_folds.sort([*by, cols.model, cols.fold], maintain_order=True)
        tables["se_vs_sd"] = se_vs_sd(binary_folds, by=by, **table_names)
        drawn = _one_fold_column(binary, cols.fold, repeat)  # every (repeat, fold) a curve
        curves |= {
            "folds": roc_curve(drawn, **names, weight=weight),
            "pooled": pooled_roc(drawn, **names, weight=weight),
            "average": average_roc(drawn, **names, weight=weight),
            "pr_folds": pr_curve(drawn, **names, weight=weight),
            "pr_pooled": pooled_pr_curve(drawn, **names, weight=weight),
        }
    design = None
    if "n_repeats" in kinds.columns:
        design = (int(kinds["n_repeats"].max()), int(kinds["n_folds"].max()))  # type: ignore[arg-type]  # numeric max
    optional = optional_tables(
        per_fold, metric=metric, alpha=alpha, by=by, n_datasets=kinds.height, design=design,
        rope=rope, columns=cols, seed=seed,
    )  # fmt: skip
    positive = binary_sets[POSITIVE][0] if kinds.height == 1 and binary_sets.height else None
    return Report(
        tables, by, multiclass=multi_sets.height > 0, positive_class=positive, curves=curves,
        kinds=kinds, columns=cols, optional=optional, alpha=alpha, design=design,
    )  # fmt: skip


CALIBRATION_BINS = 10
"""Equal-width score bins of the report's ECE, MCE and reliability diagrams."""


def probability_sets(folds: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    """The data sets (``by`` groups) whose scores are probabilities: one row each.

    A data set qualifies when every fold of every model counts no score outside
    ``[0, 1]`` (:func:`polaroc.evaluate`'s ``n_not_probability`` is 0) and has a
    ``brier`` column; a per-fold table without those columns qualifies none. Without
    ``by`` the one row has no columns when the whole log qualifies (no row otherwise).

    Examples
    --------
    >>> import polars as pl
    >>> from polaroc.report.tables import probability_sets
    >>> folds = pl.DataFrame({"dataset": ["a", "a", "b"], "brier": [0.1, 0.2, None],
    ...                       "n_not_probability": [0, 0, 3]})
    >>> probability_sets(folds, ["dataset"])["dataset"].to_list()
    ['a']
    """
    if not {"brier", "n_not_probability", *by} <= set(folds.columns) or folds.is_empty():
        return pl.DataFrame()
    bad = (pl.col("n_not_probability").fill_null(0) > 0).any().alias("_pr_bad")
    if not by:
        return pl.DataFrame([{}]) if not folds.select(bad).item() else pl.DataFrame()
    return folds.group_by(by).agg(bad).filter(~pl.col("_pr_bad")).drop("_pr_bad").sort(by)


def calibration_tables(
    log: pl.LazyFrame, sets: pl.DataFrame, kinds: pl.DataFrame, by: list[str], columns: LogColumns
) -> dict[str, pl.LazyFrame]:
    """Calibration of the data sets in ``sets`` (from :func:`probability_sets`).

    ``calibration``: :func:`polaroc.calibration` per (by…, model), all folds pooled, with
    the best (lowest Brier score) first; ``calibration_curve``: the reliability curves
    (:func:`polaroc.calibration_curve`, per fold) of the positive class of each binary
    data set among them. Repeats are kept apart: a repeated fold is drawn as its own
    curve and a sample counts once per repeat. Empty when no data set qualifies.
    """
    if sets.height == 0 or (by and not set(by) <= set(sets.columns)):
        return {}
    cols = columns
    names = log.collect_schema().names()
    lf = _subset(log, sets, by)
    if cols.repeat in names and cols.sample in names:  # one sample id per repeat
        lf = lf.with_columns(pl.format("{}/{}", cols.repeat, cols.sample).alias(cols.sample))
    lf = _one_fold_column(lf, cols.fold, cols.repeat)
    common: dict[str, Any] = {
        "model": cols.model, "fold": cols.fold, "class_": cols.class_, "score": cols.score,
        "label": cols.label, "dataset": cols.dataset, "n_bins": CALIBRATION_BINS,
    }  # fmt: skip
    keys = [*by, cols.model]
    table = calibration(lf, by=keys, sample=cols.sample, **common)
    plans = {"calibration": table.sort([*by, "brier", cols.model], nulls_last=True)}
    binary = kinds.filter(~pl.col("multiclass"))
    binary = binary.join(sets, on=by, how="semi") if by else binary.head(sets.height)
    if binary.height:
        rows = _subset(lf, binary, by)
        if cols.class_ in names:  # the positive class's rows
            positives = binary.lazy().select(*by, POSITIVE)
            rows = rows.join(positives, on=by) if by else rows.join(positives, how="cross")
            rows = rows.filter(pl.col(cols.class_) == pl.col(POSITIVE)).drop(POSITIVE)
        curve = calibration_curve(rows, by=[*keys, cols.fold], **common)
        plans["calibration_curve"] = curve.sort([*keys, cols.fold, "bin"])
        plans["decision_curve"] = _decision_curve(rows, [*keys, cols.fold], cols)
    return plans


def _decision_curve(rows: pl.LazyFrame, by: list[str], cols: LogColumns) -> pl.LazyFrame:
    """:func:`polaroc.decision_curve` of the positive class's ``rows``, per ``by``."""
    table = decision_curve(
        rows, by=by, model=cols.model, fold=cols.fold, class_=cols.class_, score=cols.score,
        label=cols.label, dataset=cols.dataset,
    )  # fmt: skip
    return table.sort([*by, "threshold"])


SUMMARY_THRESHOLDS = (0.05, 0.1, 0.2, 0.3, 0.5)
"""The threshold probabilities at which the page tabulates the decision curves."""


def net_benefit_summary(
    curve: pl.DataFrame, model: str, thresholds: Iterable[float] = SUMMARY_THRESHOLDS
) -> pl.DataFrame:
    """Mean net benefit over folds at a few thresholds: a row per model, treat all, treat none.

    ``curve`` is :func:`polaroc.decision_curve`'s table of one data set; a column
    ``pt = 0.1`` holds the models' mean ``net_benefit`` (nulls and NaN left out) at that
    threshold probability. Models come best first by their mean over those thresholds,
    then ``treat all`` (the folds' mean ``net_benefit_all``) and ``treat none`` (0).

    Examples
    --------
    >>> import polars as pl
    >>> from polaroc.report.tables import net_benefit_summary
    >>> curve = pl.DataFrame({"model": ["a", "a"], "fold": [0, 1], "threshold": [0.1, 0.1],
    ...                       "net_benefit": [0.3, 0.2], "net_benefit_all": [0.25, 0.15]})
    >>> net_benefit_summary(curve, "model", [0.1]).rows()
    [('a', 0.25), ('treat all', 0.2), ('treat none', 0.0)]
    """
    points = [float(t) for t in thresholds]
    usable = pl.col("net_benefit").is_not_null() & pl.col("net_benefit").is_not_nan()
    part = curve.filter(usable & pl.col("threshold").is_in(points))
    label = {t: f"pt = {t:g}" for t in points}

    def wide(values: pl.DataFrame, name: str) -> pl.DataFrame:
        at = [
            pl.col("_pr_v").filter(pl.col("threshold") == t).mean().alias(label[t]) for t in points
        ]
        return values.group_by(name).agg(at)

    named = pl.col(model).cast(pl.String).alias(model)
    rows = part.select(named, "threshold", _pr_v="net_benefit")
    models = wide(rows, model).sort(
        pl.mean_horizontal(list(label.values())), pl.col(model), descending=[True, False]
    )
    every = wide(
        part.select("threshold", _pr_v="net_benefit_all", **{model: pl.lit("treat all")}), model
    )
    none = pl.DataFrame({model: ["treat none"], **{c: [0.0] for c in label.values()}})
    return pl.concat([models, every, none], how="vertical_relaxed")


def cell_text(value: object) -> str:
    """One table cell as text: floats to four decimals, or ``6.47e-10`` when tiny or huge."""
    return _cell(value)


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return str(value)
        return f"{value:.4f}" if value == 0 or 1e-4 <= abs(value) < 1e6 else f"{value:.3g}"
    if isinstance(value, list):
        return ", ".join(_cell(v) for v in value)
    if isinstance(value, dict):
        return "(" + ", ".join(_cell(v) for v in value.values()) + ")"
    return str(value).replace("|", "\\|")


def to_markdown(df: pl.DataFrame) -> str:
    """A DataFrame as a GitHub Markdown table, printed by Polars (numbers to four decimals).

    Cells are formatted first (floats to four decimals, or three significant digits
    in scientific notation when tiny or huge; booleans lower case; nulls empty) and
    numbers padded to the right, then Polars prints the table with
    ``tbl_formatting="MARKDOWN"``.

    Examples
    --------
    >>> import polars as pl
    >>> from polaroc.report.tables import to_markdown
    >>> df = pl.DataFrame({"model": ["a", "bb"], "auc": [0.91234, 0.5], "reject": [True, None]})
    >>> print(to_markdown(df))
    | model | auc    | reject |
    |-------|--------|--------|
    | a     | 0.9123 | true   |
    | bb    | 0.5000 |        |
    """
    columns = []
    df = whole_degrees(df)
    for name, dtype in df.schema.items():
        values = df[name].to_list()
        if dtype == pl.Boolean:
            text = ["" if v is None else str(v).lower() for v in values]
        else:
            text = [_cell(v) for v in values]
        if dtype.is_numeric():  # right-aligned: Polars keeps the padding
            width = max(len(t) for t in [*text, name])
            text = [t.rjust(width) for t in text]
        columns.append(pl.Series(name, text, dtype=pl.String))
    with pl.Config(
        tbl_formatting="MARKDOWN",
        tbl_hide_column_data_types=True,
        tbl_hide_dataframe_shape=True,
        tbl_rows=-1,
        tbl_cols=-1,
        tbl_width_chars=65_000,  # Polars' limit is u16
        fmt_str_lengths=65_000,
    ):
        return str(pl.DataFrame(columns))


DEGREES = ("df", "df_num", "df_den")


def whole_degrees(df: pl.DataFrame) -> pl.DataFrame:
    """``df`` with degrees of freedom that are all whole numbers shown as integers.

    The comparison tables give ``df`` as ``Float64`` (Welch's df is fractional); a table
    whose df are whole (a t on n − 1, an F on (5, 45)) reads them as ``5``, not ``5.0000``.

    Examples
    --------
    >>> import polars as pl
    >>> from polaroc.report.tables import whole_degrees
    >>> whole_degrees(pl.DataFrame({"df": [9.0, None]})).schema["df"]
    Int64
    >>> whole_degrees(pl.DataFrame({"df": [7.5]})).schema["df"]
    Float64
    """
    whole = [
        n
        for n in DEGREES
        if n in df.columns
        and df.schema[n].is_float()
        and bool(df.select((pl.col(n).drop_nulls() % 1.0 == 0.0).all()).item())
    ]
    return df.with_columns(pl.col(whole).cast(pl.Int64)) if whole else df


def flat(df: pl.DataFrame) -> pl.DataFrame:
    """Nested columns (lists of structs) as text, so a table fits CSV.

    Examples
    --------
    >>> import polars as pl
    >>> import polaroc as pr
    >>> df = pl.DataFrame({"model": ["a"], "groups": [["a", "b"]]})
    >>> pr.report.flat(df).schema["groups"]
    String
    """
    df = whole_degrees(df)
    nested = [n for n, d in df.schema.items() if d.is_nested()]
    return df.with_columns(
        pl.Series(n, [_cell(v) for v in df[n].to_list()], dtype=pl.String) for n in nested
    )


ORDERED = frozenset(
    {"summary", "anova", "duncan", "mean_ranks", "verdict", "compact", "calibration"}
)
"""Tables whose row order means something (best first); the others are sorted by value."""


SIGNIFICANT_DIGITS = 12
"""Digits a written table keeps of each float (the last bits of a parallel sum vary)."""


def _settled(expr: pl.Expr, dtype: PolarsDataType) -> pl.Expr:
    """``expr`` with every float inside it (lists, structs too) to 12 significant digits."""
    if dtype.is_float():
        return expr.round_sig_figs(SIGNIFICANT_DIGITS)
    if isinstance(dtype, pl.Struct):
        return pl.struct(
            [_settled(expr.struct.field(f.name), f.dtype).alias(f.name) for f in dtype.fields]
        )
    if isinstance(dtype, pl.List):
        return expr.list.eval(_settled(pl.element(), dtype.inner))
    return expr


def _has_float(dtype: PolarsDataType) -> bool:
    if isinstance(dtype, pl.Struct):
        return any(_has_float(f.dtype) for f in dtype.fields)
    if isinstance(dtype, pl.List | pl.Array):
        return isinstance(dtype, pl.List) and _has_float(dtype.inner)
    return dtype.is_float()


def settled(df: pl.DataFrame) -> pl.DataFrame:
    """``df`` with every float (also inside nested columns) to 12 significant digits.

    Examples
    --------
    >>> import polars as pl
    >>> from polaroc.report.tables import settled
    >>> settled(pl.DataFrame({"x": [0.1 + 0.2]}))["x"].item()
    0.3
    """
    return df.with_columns(
        _settled(pl.col(n), d).alias(n) for n, d in df.schema.items() if _has_float(d)
    )


def sorted_table(name: str, df: pl.DataFrame) -> pl.DataFrame:
    """``df`` in one order and to one precision from run to run.

    Polars' group-by output order is not fixed, and a float sum over parallel partial
    results may differ in its last bit between runs; the report's files must be
    byte-identical. So every float (also inside nested columns) keeps 12 significant
    digits — far beyond any difference the tests decide on — and tables in
    :data:`ORDERED` keep their order (they were sorted best first, ties by name) while
    every other table is sorted by all its columns that are not nested, left to right.

    Examples
    --------
    >>> import polars as pl
    >>> from polaroc.report.tables import sorted_table
    >>> table = pl.DataFrame({"model": ["b", "a"], "fold": [0, 1]})
    >>> sorted_table("folds", table)["model"].to_list()
    ['a', 'b']
    """
    df = settled(df)
    if name in ORDERED:
        return df
    keys = [n for n, d in df.schema.items() if not d.is_nested() and d != pl.Object]
    return df.sort(keys, nulls_last=True, maintain_order=True) if keys else df


def write_tables(tables: Mapping[str, pl.DataFrame], out: str | Path) -> list[Path]:
    """Write each table as ``<name>.csv``, ``<name>.parquet`` and ``<name>.md`` into ``out``.

    Returns the paths written. Rows are put in one order first (:func:`sorted_table`),
    so two runs write identical files. Nested columns stay nested in Parquet and become
    text in CSV and Markdown.

    Examples
    --------
    >>> import tempfile
    >>> import polars as pl
    >>> import polaroc as pr
    >>> out = tempfile.mkdtemp()
    >>> paths = pr.report.write_tables({"summary": pl.DataFrame({"model": ["a"]})}, out)
    >>> sorted(p.name for p in paths)
    ['summary.csv', 'summary.md', 'summary.parquet']
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, table in tables.items():
        df = sorted_table(name, table)
        df.write_parquet(out / f"{name}.parquet", statistics=False)
        flat(df).write_csv(out / f"{name}.csv")
        (out / f"{name}.md").write_text(f"# {name}\n\n{to_markdown(df)}\n")
        written += [out / f"{name}.{ext}" for ext in ("csv", "parquet", "md")]
    return written
