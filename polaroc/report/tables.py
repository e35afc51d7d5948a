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
from scipy.stats import norm

from polaroc.core.inputs import FrameLike, LogColumns, as_lazy
from polaroc.core.registry import METRICS as REGISTRY_METRICS
from polaroc.core.registry import known_metrics
from polaroc.core.sums import fixed_mean

if TYPE_CHECKING:
    from polars._typing import PolarsDataType
from polaroc.compare.paired import paired_ttest, test_agreement
from polaroc.compare.registry import REGISTRY, Adjust
from polaroc.compare.spread import se_vs_sd
from polaroc.compare.twoway import anova, duncan, duncan_ranges
from polaroc.core.log import read_log
from polaroc.evaluation import evaluate
from polaroc.evaluation.per_fold import with_auc_ci
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
LOWER_IS_BETTER = frozenset(m.name for m in REGISTRY_METRICS.values() if m.direction == "lower")
"""Metrics for which the lower value is the better model (the metric registry's)."""

PER_FOLD_METRICS = ("auc", "sauc", "error", "average_precision", "brier", "log_loss")
"""The columns of :func:`polaroc.evaluate`'s per-fold table that a comparison can rank."""


def report_metrics() -> list[str]:
    """The metrics ``--metric`` takes: the registry's that the per-fold table holds.

    Examples
    --------
    >>> from polaroc.report.tables import report_metrics
    >>> report_metrics()
    ['auc', 'sauc', 'average_precision', 'error', 'brier', 'log_loss']
    """
    return [m for m in known_metrics() if m in PER_FOLD_METRICS]


def higher_is_better(metric: str) -> bool:
    """The registry's direction of ``metric`` (higher for a name it does not know)."""
    known = REGISTRY_METRICS.get(metric)
    return known is None or known.direction == "higher"


@dataclass(frozen=True)
class Settings:
    """Every choice the report made: the page states each one.

    ``seed`` seeds every randomised test (the Bayesian signed-rank test's posterior
    samples), so two runs write identical tables and pages. ``weight`` is the log's
    case-weight column (``None``: unweighted). ``positive`` is the positive class of
    the two-class data sets (``None``: the larger class value of each). A threshold
    that is not finite (``nan``) and a metric the per-fold table does not hold
    (:func:`report_metrics`) are refused.

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
    positive: Any = None

    def __post_init__(self) -> None:
        if self.metric not in report_metrics():
            msg = (
                f"--metric {self.metric} is not a metric of the per-fold table; use one of "
                f"{', '.join(report_metrics())}"
            )
            raise ValueError(msg)
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
        """Whether a higher ``metric`` is the better model (the metric registry's direction)."""
        return higher_is_better(self.metric)

    @property
    def level(self) -> float:
        """The level of every interval: 1 − α."""
        return 1 - self.alpha


OPTIONAL_METRICS = ("average_precision",)  # summarised when the per-fold table has them


def summary_table(
    folds: FrameLike,
    *,
    by: Iterable[str] | None = None,
    model: str = "model",
    dataset: str = "dataset",
    metric: str = "auc",
) -> pl.LazyFrame:
    """Per model (within ``by``): folds and mean ± sd of AUC (M), sAUC and error over folds.

    A per-fold table with an ``average_precision`` column (binary logs) adds its mean ± sd,
    and so does ``metric`` when it is another column. Models are ordered best first by
    the mean of ``metric`` in its direction (the metric registry's: lowest error first).
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
    shown = dict.fromkeys((*METRICS, *(m for m in OPTIONAL_METRICS if m in names), metric))
    for m in shown:
        stats += [pl.col(m).mean().alias(f"{m}_mean"), pl.col(m).std().alias(f"{m}_sd")]
    higher = higher_is_better(metric)
    return (
        frame.group_by(keys)
        .agg(stats)
        .sort(
            [*by, f"{metric}_mean", model],
            descending=[False] * len(by) + [higher, False],
            nulls_last=True,
        )
    )


@dataclass
class Report:
    """The report's tables, and what was found in the log.

    :func:`report_tables` fills the lazy plans (``tables``, ``curves``, ``optional``);
    :func:`polaroc.report.write_report` adds the collected tables (``results``), the
    figures' paths, the ``settings`` used, the page's path and text (``page``,
    ``html``) — and a notebook then shows the page (``_repr_html_``).

    ``kinds`` has one row per data set (by group): ``n_rows``, ``n_labels``,
    ``n_class_values`` (class values with score rows: 2 when a two-class log holds both
    classes' rows, whose ``auc`` is then Hand & Till's M), ``multiclass`` and the
    positive class of a binary one (``_pr_positive``: the ``positive`` setting, else
    the larger class value) — binary and multiclass are decided for each data set on
    its own. ``optional`` holds tables a design may not support (across data sets, 5×2
    cv, Bayesian); each is collected on its own and a refusal becomes a note, and
    ``used`` holds the settings each was called with (its ROPE, seed), which the page
    states. ``one_test_set`` is true when a data set has a single fold (one test set).

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
    used: dict[str, dict[str, Any]] = field(default_factory=dict)
    one_test_set: bool = False
    verdict: pl.DataFrame | str | None = None
    source: str = ""
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
    log: pl.LazyFrame,
    by: list[str],
    has_class: bool,
    columns: LogColumns,
    repeat: str,
    positive: Any = None,
) -> pl.DataFrame:
    """Per data set (by group): rows, models, folds, repeats, labels, classes, positive class.

    One small query. The positive class of a binary data set is ``positive`` when given
    (it must be one of the data set's class values), else its larger class value
    (scikit-learn's default ``pos_label``; for a log holding one class's rows, that
    class). ``n_class_values`` counts the class values with score rows.
    """
    stats = [
        pl.len().alias("n_rows"),
        pl.col(columns.label).drop_nulls().n_unique().alias("n_labels"),
        pl.col(columns.model).n_unique().alias("n_models"),
        pl.col(columns.fold).n_unique().alias("n_folds"),
    ]
    schema = log.collect_schema()
    if repeat in schema:
        stats.append(pl.col(repeat).n_unique().alias("n_repeats"))
    if has_class:
        classes = pl.col(columns.class_).drop_nulls()
        stats += [
            classes.n_unique().alias("n_class_values"),
            classes.unique().sort().last().alias(POSITIVE),
        ]
        if positive is not None:
            given = pl.lit(positive, dtype=schema[columns.class_])
            stats.append((pl.col(columns.class_) == given).any().alias("_pr_has"))
            listed = classes.unique().sort().cast(pl.String).str.join(", ")
            stats.append(listed.alias("_pr_classes"))
    else:
        stats += [pl.lit(0, pl.UInt32).alias("n_class_values"), pl.lit(None).alias(POSITIVE)]
    plan = log.group_by(by).agg(stats).sort(by) if by else log.select(stats)
    kinds = plan.with_columns(multiclass=pl.col("n_labels") > 2).collect()
    if positive is None:
        return kinds
    binary = ~pl.col("multiclass")
    missing = kinds.filter(binary & ~pl.col("_pr_has"))
    if missing.height:
        row = missing.row(0, named=True)
        where = f" of data set {', '.join(str(row[b]) for b in by)}" if by else ""
        msg = f"--positive {positive} is not a class{where}; its classes are {row['_pr_classes']}"
        raise ValueError(msg)
    given = pl.lit(positive, dtype=schema[columns.class_])
    chosen = pl.when(binary).then(given).otherwise(pl.col(POSITIVE))
    return kinds.with_columns(chosen.alias(POSITIVE)).drop("_pr_has", "_pr_classes")


def positive_value(positive: Any, schema: pl.Schema, columns: LogColumns) -> Any:
    """``positive`` as a value of the class column (the command line gives text).

    A log without a class column has no positive class to choose (its label is the
    positive indicator): a ``ValueError``. Text for a numeric or Boolean class column is
    cast to its type.

    Examples
    --------
    >>> import polars as pl
    >>> from polaroc.core.inputs import LogColumns
    >>> from polaroc.report.tables import positive_value
    >>> positive_value("1", pl.Schema({"class": pl.Int64}), LogColumns())
    1
    """
    if positive is None:
        return None
    if columns.class_ not in schema:
        msg = (
            f"--positive {positive}: the log has no class column {columns.class_!r}, so its "
            f"label {columns.label!r} is the positive indicator (true or 1 is positive)"
        )
        raise ValueError(msg)
    dtype = schema[columns.class_]
    if dtype == pl.Boolean and isinstance(positive, str):
        words = {"true": True, "1": True, "false": False, "0": False}
        if positive.strip().lower() in words:
            return words[positive.strip().lower()]
    try:
        return pl.Series([positive]).cast(dtype, strict=True).item()
    except (pl.exceptions.PolarsError, ValueError, TypeError) as exc:
        msg = (
            f"--positive {positive} is not a value of the class column {columns.class_!r} ({dtype})"
        )
        raise ValueError(msg) from exc


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


BAYES_ROPE = 0.01
"""The ROPE of the Bayesian signed-rank test across data sets when ``--rope`` is not given."""


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
    used: dict[str, dict[str, Any]] | None = None,
) -> dict[str, pl.LazyFrame]:
    """Tables a design may support: across data sets, 5×2 cv, Bayesian (when present).

    Across two or more data sets: the mean ranks, Friedman's test with Nemenyi's
    (Demšar 2006), Wilcoxon's signed-rank test, the sign test and the Bayesian
    signed-rank test (Benavoli et al. 2014; ROPE ``rope``, else :data:`BAYES_ROPE`). A
    5×2 design (``design == (5, 2)``, repeats × folds): Dietterich's (1998) 5×2 cv t and
    Alpaydın's (1999) combined F. With ``rope``: the correlated Bayesian t test (Corani
    & Benavoli 2015). ``seed`` seeds the Bayesian signed-rank test's posterior samples;
    a test that takes ``higher_is_better`` is told the metric's direction (error: lower
    is better). ``used`` (when given) receives, per table, the settings it was called
    with that the page states (``rope``, ``seed``, ``alpha``).
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
                         "sign_test")
        ]  # fmt: skip
        bayes_rope = BAYES_ROPE if rope is None else rope
        wanted.append(("bayes_signed_rank", {**common, "rope": bayes_rope}))
    if design == (5, 2):
        wanted += [("paired_ttest_5x2cv", names), ("combined_ftest_5x2cv", names)]
    if rope is not None:
        wanted.append(("bayes_ttest", {**names, "rope": rope}))
    for name, kwargs in wanted:
        options = {"alpha": alpha, "higher_is_better": higher, "seed": seed, **kwargs}
        if name == "mean_ranks":  # a summary, not a test
            plans[name] = compare.mean_ranks(
                folds, metric, by=across, alpha=alpha, higher_is_better=higher,
                model=columns.model, dataset=columns.dataset,
            )  # fmt: skip
        else:
            entry = REGISTRY[name]
            options = entry.accepted(**options)
            plans[name] = entry(folds, metric, **options)
        if used is not None:
            used[name] = {
                k: v for k, v in options.items() if k in ("rope", "seed", "alpha", "adjust")
            }
    return plans


ONE_CLASS = ("average_precision", "brier", "log_loss")
"""Per-fold columns read from one class's scores (the positive class of a binary log)."""


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
    positive_class: Any = None,
) -> Report:
    """Build the report's tables for ``log`` as lazy plans sharing one cached per-fold table.

    Each data set (``dataset`` group) is judged on its own: binary when its label
    has at most two values, multiclass otherwise (the one query this function runs,
    which also counts rows, models, folds and repeats). Tables: ``folds``
    (:func:`polaroc.evaluate`), ``summary``, ``pooled_interval`` (each model's AUC or M
    of its folds pooled, with DeLong's interval; not when ``folds`` is given, which
    would evaluate the log here again), ``paired_ttest``, ``anova``, ``duncan``,
    ``duncan_ranges``, ``agreement`` (AUC test vs error test, per data set), for binary
    data sets ``pooling`` and ``se_vs_sd``, for multiclass ones ``pairwise`` (per data
    set); the fold-wise tests leave out a data set with one fold (one test set, which
    the verdict decides sample by sample). ``curves`` holds the ROC tables of the binary
    data sets' positive class and the one-vs-rest curves of the multiclass ones;
    ``optional`` the tables across data sets, of a 5×2 design and with ``rope`` the
    Bayesian ones (:func:`optional_tables`). A per-fold table computed elsewhere
    (``folds``, e.g. by :func:`polaroc.distributed.evaluate` on a Ray or Spark
    cluster) replaces :func:`polaroc.evaluate`; the curves still read ``log``.
    ``weight`` names the log's case-weight column, passed to :func:`polaroc.evaluate`
    (None: unweighted); ``seed`` seeds the randomised tests. ``positive_class`` is the
    positive class of the two-class data sets (default: the larger class value): their
    curves, pooling table and the per-fold columns read from one class
    (``average_precision``, ``brier``, ``log_loss``) are that class's.

    Examples
    --------
    >>> import polaroc as pr
    >>> rep = pr.report.report_tables(pr.scan_logs(pr.demo_log_path()))
    >>> sorted(rep.tables)  # doctest: +NORMALIZE_WHITESPACE
    ['agreement', 'anova', 'duncan', 'duncan_ranges', 'folds', 'paired_ttest',
     'pooled_interval', 'pooling', 'se_vs_sd', 'summary']
    >>> rep.positive_class
    'malignant'
    >>> pr.report.report_tables(pr.scan_logs(pr.demo_log_path()),
    ...                         positive_class="benign").positive_class
    'benign'
    """
    cols = columns or LogColumns()
    lf = as_lazy(log)
    found = read_log(lf, columns=cols)  # validates names and dtypes before any work
    positive = positive_value(positive_class, found.schema, cols)
    names: dict[str, Any] = {
        "model": cols.model, "fold": cols.fold, "class_": cols.class_, "score": cols.score,
        "label": cols.label, "dataset": cols.dataset,
    }  # fmt: skip
    # the log's own repeat and sample names, for the tables that read the log as it is (the
    # curves read it with each (repeat, fold) one fold: ``_one_fold_column``)
    keyed = {**names, "repeat": cols.repeat, "sample": cols.sample}
    table_names: dict[str, Any] = {
        "model": cols.model, "fold": cols.fold, "dataset": cols.dataset, "repeat": cols.repeat,
    }  # fmt: skip
    repeat = cols.repeat
    by = [b for b in found.by if b not in (cols.model, cols.fold, repeat)]
    kinds = _kinds(lf, by, found.has_class, cols, repeat, positive)
    if kinds["n_rows"].sum() == 0:
        msg = "the log is empty: it has no rows to evaluate"
        raise ValueError(msg)
    binary_sets = kinds.filter(~pl.col("multiclass"))
    multi_sets = kinds.filter(pl.col("multiclass"))
    binary = positive_rows(lf, binary_sets, by, found.has_class, cols)
    evaluated = {"threshold": threshold, "sample": cols.sample, "repeat": repeat,
                 "weight": weight, **names}  # fmt: skip
    per_fold = evaluate(lf, **evaluated) if folds is None else folds.lazy()
    keys = [k for k in found.by if k in per_fold.collect_schema().names()]
    if positive is not None and found.has_class and binary_sets.height:
        per_fold = _one_class_columns(per_fold, evaluate(binary, **evaluated), keys)
    # One row order from run to run (group-by output order is not fixed): every sum and
    # standard deviation below then adds its terms in the same order, to the last bit.
    per_fold = per_fold.sort(keys, maintain_order=True).cache()
    repeats = pl.col("n_repeats") if "n_repeats" in kinds.columns else pl.lit(1)
    tested = kinds.filter(pl.col("n_folds") * repeats >= 2)  # not one test set
    fold_tests = _subset(per_fold, tested, by)
    tables = {
        "folds": per_fold,
        "summary": summary_table(
            per_fold, by=by, model=cols.model, dataset=cols.dataset, metric=metric
        ),
    }
    if folds is None:  # given a per-fold table (an engine's), the log is not evaluated here
        tables["pooled_interval"] = pooled_interval(lf, [*by, cols.model], repeat, evaluated, alpha)
    if tested.height:
        tables |= {
            "paired_ttest": paired_ttest(
                fold_tests, metric, alpha=alpha, adjust=adjust, **table_names
            ),
            "anova": anova(fold_tests, metric, **table_names),
            "duncan": duncan(fold_tests, metric, alpha=alpha, **table_names),
            "duncan_ranges": duncan_ranges(fold_tests, metric, alpha=alpha, **table_names),
            "agreement": _agreement(fold_tests, tested, by, alpha, table_names),
        }
    curves: dict[str, pl.LazyFrame] = {}
    if multi_sets.height:
        multi = _subset(lf, multi_sets, by)
        tables["pairwise"] = pairwise_auc(multi, **keyed)
        # one-vs-rest: each class's scores against every other label, folds pooled
        ovr = _one_fold_column(multi, cols.fold, repeat)
        curves["ovr"] = pooled_roc(ovr, **names, weight=weight)
    if binary_sets.height:
        tables["pooling"] = pooling_table(binary, **keyed)
        binary_tested = binary_sets.join(tested.select(by), on=by) if by else tested
        if binary_tested.height:
            binary_folds = _one_fold_column(_subset(per_fold, binary_tested, by), cols.fold, repeat)
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
    used: dict[str, dict[str, Any]] = {}
    optional = optional_tables(
        per_fold, metric=metric, alpha=alpha, by=by, n_datasets=kinds.height, design=design,
        rope=rope, columns=cols, seed=seed, used=used,
    )  # fmt: skip
    positive_shown = binary_sets[POSITIVE][0] if kinds.height == 1 and binary_sets.height else None
    return Report(
        tables, by, multiclass=multi_sets.height > 0, positive_class=positive_shown,
        curves=curves, kinds=kinds, columns=cols, optional=optional, alpha=alpha,
        design=design, used=used, one_test_set=tested.height < kinds.height,
    )  # fmt: skip


def pooled_interval(
    log: pl.LazyFrame,
    keys: list[str],
    repeat: str,
    evaluated: Mapping[str, Any],
    alpha: float = 0.05,
) -> pl.LazyFrame:
    """Per model: the AUC (M) of its folds' test samples pooled, with DeLong's 1 − α interval.

    :func:`polaroc.evaluate` over each model's folds together, so ``auc_pooled`` is the
    AUC (Hand & Till's M where the per-fold ``auc`` is) of the cross-validated scores,
    and ``auc_pooled_ci_low``/``auc_pooled_ci_high`` its 1 − ``alpha`` DeLong interval
    (DeLong, DeLong & Clarke-Pearson 1988; for M the structural components of every
    direction, ``docs/inference.md``). A repeated design pools within each repeat (every repeat
    scores each sample once) and averages the repeats' AUCs and standard errors.
    Weighted logs have no DeLong variance: the bounds are null.
    """
    has_repeat = repeat in log.collect_schema().names()
    pooled = evaluate(log, by=[*keys, repeat] if has_repeat else keys, **evaluated)
    mean = pooled.group_by(keys).agg(fixed_mean(pl.col(c)) for c in ("auc", "auc_se_delong"))
    names = {"auc": "auc_pooled", "auc_ci_low": "auc_pooled_ci_low"}
    names["auc_ci_high"] = "auc_pooled_ci_high"
    z = float(norm.ppf(1.0 - alpha / 2.0))
    return with_auc_ci(mean, z).select(*keys, *names).rename(names).sort(keys)


def positive_rows(
    log: pl.LazyFrame, sets: pl.DataFrame, by: list[str], has_class: bool, cols: LogColumns
) -> pl.LazyFrame:
    """The rows of each binary data set's positive class (all its rows without a class column)."""
    rows = _subset(log, sets, by)
    if not has_class:
        return rows
    positives = sets.lazy().select(*by, POSITIVE)
    rows = rows.join(positives, on=by) if by else rows.join(positives, how="cross")
    return rows.filter(pl.col(cols.class_) == pl.col(POSITIVE)).drop(POSITIVE)


def _one_class_columns(
    per_fold: pl.LazyFrame, one_class: pl.LazyFrame, keys: list[str]
) -> pl.LazyFrame:
    """``per_fold`` with :data:`ONE_CLASS` columns of the chosen positive class's rows.

    :func:`polaroc.evaluate` reads average precision, the Brier score and the log loss
    of a two-class log from its larger class value; with a positive class given, the
    binary data sets' values come from that class's rows instead (the multiclass ones
    keep theirs).
    """
    present = [c for c in ONE_CLASS if c in per_fold.collect_schema().names()]
    if not present:
        return per_fold
    mine = one_class.select(
        *keys, *[pl.col(c).alias(f"_pr_one_{c}") for c in present], pl.lit(True).alias("_pr_one")
    )
    joined = per_fold.join(mine, on=keys, how="left", nulls_equal=True, maintain_order="left")
    chosen = pl.col("_pr_one").fill_null(value=False)
    return joined.with_columns(
        pl.when(chosen).then(pl.col(f"_pr_one_{c}")).otherwise(pl.col(c)).alias(c) for c in present
    ).drop("_pr_one", *[f"_pr_one_{c}" for c in present])


def _agreement(
    folds: pl.LazyFrame,
    sets: pl.DataFrame,
    by: list[str],
    alpha: float,
    names: Mapping[str, Any],
) -> pl.LazyFrame:
    """The AUC test against the error test, counted within each data set (``by`` group).

    :func:`polaroc.test_agreement` counts over every pair of every group; the report
    counts each data set on its own, with its ``by`` columns first.
    """
    if not by:
        return test_agreement(folds, ("auc", "error"), alpha=alpha, **names)
    parts = []
    for row in sets.select(by).iter_rows(named=True):
        mine = folds.filter(
            pl.all_horizontal(
                pl.col(b).eq_missing(pl.lit(v, dtype=sets.schema[b])) for b, v in row.items()
            )
        )
        table = test_agreement(mine, ("auc", "error"), alpha=alpha, **names)
        parts.append(table.select(
            *[pl.lit(v, dtype=sets.schema[b]).alias(b) for b, v in row.items()], pl.all()
        ))  # fmt: skip
    return pl.concat(parts)


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
    the best (lowest Brier score) first — a binary data set's from its positive class's
    rows (``kinds``' ``_pr_positive``), a multiclass one's from every class;
    ``calibration_curve``: the reliability curves (:func:`polaroc.calibration_curve`, per
    fold) of the positive class of each binary data set among them and, for each
    multiclass one logged with sample ids, of the top label (each sample's highest score
    against whether its class is the label; Guo et al. 2017); ``decision_curve``: the
    positive class's decision curves (:func:`polaroc.decision_curve`, per fold) of the
    binary ones. Repeats are kept apart: a repeated fold is drawn as its own curve and a
    sample counts once per repeat. Empty when no data set qualifies.
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
    chosen = kinds.join(sets, on=by, how="semi") if by else kinds.head(sets.height)
    binary, multi = chosen.filter(~pl.col("multiclass")), chosen.filter(pl.col("multiclass"))
    tables, curves = [], []
    plans: dict[str, pl.LazyFrame] = {}
    if binary.height:
        rows = positive_rows(lf, binary, by, cols.class_ in names, cols)
        tables.append(calibration(rows, by=keys, sample=cols.sample, **common))
        curves.append(calibration_curve(rows, by=[*keys, cols.fold], **common))
        plans["decision_curve"] = _decision_curve(rows, [*keys, cols.fold], cols)
    if multi.height:
        rows = _subset(lf, multi, by)
        tables.append(calibration(rows, by=keys, sample=cols.sample, **common))
        if cols.sample in names:
            top = top_label(rows, [*keys, cols.fold], cols)
            curves.append(calibration_curve(
                top, by=[*keys, cols.fold], score=TOP_SCORE, label=TOP_RIGHT,
                model=cols.model, fold=cols.fold, dataset=cols.dataset, n_bins=CALIBRATION_BINS,
            ))  # fmt: skip
    table = pl.concat(tables, how="diagonal_relaxed")
    plans["calibration"] = table.sort([*by, "brier", cols.model], nulls_last=True)
    if curves:
        curve = pl.concat(curves, how="diagonal_relaxed")
        plans["calibration_curve"] = curve.sort([*keys, cols.fold, "bin"])
    return dict(sorted(plans.items()))


def one_vs_rest_macro(
    curves: pl.DataFrame,
    *,
    by: Iterable[str] = (),
    model: str = "model",
    class_: str = "class",
    points: int = 201,
) -> pl.DataFrame:
    """The one-vs-rest macro-average ROC curve of each model: the classes' curves averaged.

    ``curves`` holds one ROC curve per (by…, model, class) (:func:`polaroc.pooled_roc`
    of a multiclass log): each is read as a step function at ``points`` false positive
    rates from 0 to 1 (the highest true positive rate reached at that rate) and the
    classes' true positive rates are averaged — the curve scikit-learn's multiclass
    example calls the macro average. Its area is the macro one-vs-rest AUC, not Hand &
    Till's M (which averages class pairs).

    Examples
    --------
    >>> import polars as pl
    >>> from polaroc.report.tables import one_vs_rest_macro
    >>> curves = pl.DataFrame({"model": "m", "class": [0, 0, 0, 1, 1, 1],
    ...     "fpr": [0.0, 0.0, 1.0, 0.0, 0.5, 1.0], "tpr": [0.0, 1.0, 1.0, 0.0, 0.0, 1.0]})
    >>> one_vs_rest_macro(curves, points=3)["tpr"].to_list()
    [0.0, 0.5, 0.5, 1.0]
    """
    keys = [*by, model]
    grid = pl.DataFrame({"fpr": [i / (points - 1) for i in range(points)]})
    groups = curves.select(*keys, class_).unique()
    steps = curves.select(*keys, class_, "fpr", "tpr").drop_nulls().drop_nans()
    steps = steps.sort([*keys, class_, "fpr", "tpr"])
    asked = groups.join(grid, how="cross").sort([*keys, class_, "fpr"])
    read = asked.join_asof(
        steps, on="fpr", by=[*keys, class_], strategy="backward", check_sortedness=False
    )  # both sorted by (group, fpr) above
    mean = read.group_by([*keys, "fpr"]).agg(pl.col("tpr").mean())
    start = groups.select(keys).unique().with_columns(fpr=pl.lit(0.0), tpr=pl.lit(0.0))
    return pl.concat([start, mean], how="vertical_relaxed").sort(
        [*keys, "fpr", "tpr"], maintain_order=True
    )


TOP_SCORE, TOP_RIGHT = "_pr_top_score", "_pr_top_right"


def top_label(log: pl.LazyFrame, keys: list[str], columns: LogColumns) -> pl.LazyFrame:
    """Each sample's highest score and whether its class is the sample's label (top label).

    One row per (``keys``…, sample): ``_pr_top_score`` (the highest score; ties: the
    smallest class, as :func:`polaroc.calibration`'s top-label ECE) and
    ``_pr_top_right`` (true when that class is the label) — a binary log whose
    reliability curve is Guo et al.'s (2017) top-label reliability diagram.

    Examples
    --------
    >>> import polars as pl
    >>> from polaroc.core.inputs import LogColumns
    >>> from polaroc.report.tables import top_label
    >>> log = pl.LazyFrame({"model": "m", "fold": 0, "sample": [0, 0, 0, 1, 1, 1],
    ...     "class": [0, 1, 2] * 2, "score": [0.2, 0.7, 0.1, 0.5, 0.3, 0.2],
    ...     "label": [1, 1, 1, 2, 2, 2]})
    >>> top_label(log, ["model", "fold"], LogColumns()).sort("sample").collect().rows()
    [('m', 0, 0, 0.7, True), ('m', 0, 1, 0.5, False)]
    """
    from polaroc.core.log import comparable

    schema = log.collect_schema()
    class_expr, label_expr = comparable(schema, columns.class_, columns.label)
    ranked = pl.col("_pr_c").sort_by(
        [pl.col(columns.score), pl.col(columns.class_)], descending=[True, False]
    )
    return (
        log.filter(pl.col(columns.score).is_not_null())
        .with_columns(class_expr.alias("_pr_c"), label_expr.alias("_pr_l"))
        .group_by([*keys, columns.sample])
        .agg(
            pl.col(columns.score).max().alias(TOP_SCORE),
            (ranked.first() == pl.col("_pr_l").first()).alias(TOP_RIGHT),
        )
    )


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
