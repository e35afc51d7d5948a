"""The whole evaluation of a log in one call: the tables of ``polaroc report``.

:func:`report_tables` builds every table as one lazy plan over the log (the per-fold
table is cached, so ``pl.collect_all`` reads the log once); :func:`write_report`
writes them as CSV, Parquet and Markdown next to the figures.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from polaroc._input import FrameLike, LogColumns, as_lazy
from polaroc._log import read_log
from polaroc.compare.paired import paired_ttest, test_agreement
from polaroc.compare.spread import se_vs_sd
from polaroc.compare.twoway import anova, duncan, duncan_ranges
from polaroc.evaluation import evaluate
from polaroc.metrics.curves import roc_curve
from polaroc.metrics.fold_curves import average_roc, pooled_roc, pooling_table
from polaroc.metrics.multiclass import pairwise_auc

__all__ = ["Report", "report_tables", "summary_table", "to_markdown", "write_report"]

METRICS = ("auc", "sauc", "error")


def summary_table(folds: FrameLike, by: Iterable[str], model: str = "model") -> pl.LazyFrame:
    """Per model (within ``by``): folds and mean ± sd of AUC (M), sAUC and error over folds.

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
    keys = [*by, model]
    stats = [pl.len().alias("n_folds")]
    for m in METRICS:
        stats += [pl.col(m).mean().alias(f"{m}_mean"), pl.col(m).std().alias(f"{m}_sd")]
    return (
        as_lazy(folds, argument="folds")
        .group_by(keys)
        .agg(stats)
        .sort([*by, "auc_mean", model], descending=[False] * len(by) + [True, False])
    )


@dataclass
class Report:
    """The report's lazy tables, and what was found in the log."""

    tables: dict[str, pl.LazyFrame]
    by: list[str]
    multiclass: bool
    positive_class: object | None
    curves: dict[str, pl.LazyFrame] = field(default_factory=dict)


def _values(log: pl.LazyFrame, found_has_class: bool, columns: LogColumns) -> tuple[int, object]:
    """Number of label values, and the positive class of a binary log (one small query).

    The positive class is the last class value in sort order (scikit-learn's default
    ``pos_label``), which for a log holding only one class's rows is that class.
    """
    label = pl.col(columns.label).drop_nulls().n_unique().alias("n_labels")
    if not found_has_class:
        return log.select(label).collect().item(), None
    last = pl.col(columns.class_).drop_nulls().unique().sort().last().alias("positive")
    n_labels, positive = log.select(label, last).collect().row(0)
    return n_labels, positive


def report_tables(
    log: FrameLike,
    *,
    metric: str = "auc",
    alpha: float = 0.05,
    threshold: float = 0.5,
    adjust: str | None = None,
    columns: LogColumns | None = None,
) -> Report:
    """Build the report's tables for ``log`` as lazy plans sharing one cached per-fold table.

    Binary and multiclass logs are told apart by the number of label values (the
    one query this function runs). Tables: ``folds`` (:func:`polaroc.evaluate`),
    ``summary``, ``paired_ttest``, ``anova``, ``duncan``, ``duncan_ranges``,
    ``agreement`` (AUC test vs error test), and for binary logs ``pooling`` and
    ``se_vs_sd``, for multiclass logs ``pairwise``. ``curves`` holds the ROC tables
    the figures need (binary logs: the positive class's curves).

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
    names = {
        "model": cols.model, "fold": cols.fold, "class_": cols.class_, "score": cols.score,
        "label": cols.label, "dataset": cols.dataset,
    }  # fmt: skip
    table_names = {"model": cols.model, "fold": cols.fold, "dataset": cols.dataset}
    by = [b for b in found.by if b not in (cols.model, cols.fold)]
    n_labels, positive = _values(lf, found.has_class, cols)
    multiclass = n_labels > 2

    folds = evaluate(lf, threshold=threshold, sample=cols.sample, **names).cache()
    tables = {
        "folds": folds,
        "summary": summary_table(folds, by, cols.model),
        "paired_ttest": paired_ttest(folds, metric, alpha=alpha, adjust=adjust, **table_names),
        "anova": anova(folds, metric, **table_names),
        "duncan": duncan(folds, metric, alpha=alpha, **table_names),
        "duncan_ranges": duncan_ranges(folds, metric, alpha=alpha, **table_names),
        "agreement": test_agreement(folds, ("auc", "error"), alpha=alpha, **table_names),
    }
    curves: dict[str, pl.LazyFrame] = {}
    if multiclass:
        positive = None
        tables["pairwise"] = pairwise_auc(lf, **names)
    else:
        binary = lf.filter(pl.col(cols.class_) == positive) if found.has_class else lf
        tables["pooling"] = pooling_table(binary, **names)
        tables["se_vs_sd"] = se_vs_sd(folds, by=by, **table_names)
        curves = {
            "folds": roc_curve(binary, **names),
            "pooled": pooled_roc(binary, **names),
            "average": average_roc(binary, **names),
        }
    return Report(tables, by, multiclass, positive, curves)


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
    """A DataFrame as an aligned GitHub Markdown table (numbers to four decimals).

    Examples
    --------
    >>> import polars as pl
    >>> from polaroc.report.tables import to_markdown
    >>> df = pl.DataFrame({"model": ["a", "bb"], "auc": [0.91234, 0.5], "reject": [True, None]})
    >>> print(to_markdown(df))
    | model |    auc | reject |
    |-------|-------:|--------|
    | a     | 0.9123 | true   |
    | bb    | 0.5000 |        |
    """
    numeric = [dtype.is_numeric() for dtype in df.dtypes]
    rows = [
        [str(v).lower() if isinstance(v, bool) else _cell(v) for v in row] for row in df.iter_rows()
    ]
    widths = [max([len(c), 3, *(len(r[i]) for r in rows)]) for i, c in enumerate(df.columns)]

    def line(cells: list[str]) -> str:
        padded = [
            c.rjust(w) if num else c.ljust(w)
            for c, w, num in zip(cells, widths, numeric, strict=True)
        ]
        return "| " + " | ".join(padded) + " |"

    rule = [
        "-" * (w + 1) + ":" if num else "-" * (w + 2)
        for w, num in zip(widths, numeric, strict=True)
    ]
    return "\n".join([line(list(df.columns)), "|" + "|".join(rule) + "|", *map(line, rows)])


def flat(df: pl.DataFrame) -> pl.DataFrame:
    """Nested columns (lists of structs) as text, so a table fits CSV."""
    nested = [n for n, d in df.schema.items() if d.is_nested()]
    return df.with_columns(
        pl.Series(n, [_cell(v) for v in df[n].to_list()], dtype=pl.String) for n in nested
    )


def write_report(tables: Mapping[str, pl.DataFrame], out: str | Path) -> list[Path]:
    """Write each table as ``<name>.csv``, ``<name>.parquet`` and ``<name>.md`` into ``out``.

    Returns the paths written. Nested columns stay nested in Parquet and become text
    in CSV and Markdown.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, df in tables.items():
        df.write_parquet(out / f"{name}.parquet")
        flat(df).write_csv(out / f"{name}.csv")
        (out / f"{name}.md").write_text(f"# {name}\n\n{to_markdown(df)}\n")
        written += [out / f"{name}.{ext}" for ext in ("csv", "parquet", "md")]
    return written
