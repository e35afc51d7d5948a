"""``write_report``: the whole report of a log — tables, figures and ``index.html`` — from Python.

The command line (``polaroc report``) calls :func:`write_report`; a notebook calls it
too and gets the same files and the same page, shown inline by the returned
:class:`~polaroc.report.tables.Report` (``_repr_html_``).
"""

from __future__ import annotations

import hashlib
import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from polaroc.compare.decision import verdict
from polaroc.compare.registry import Adjust
from polaroc.core.inputs import LogColumns
from polaroc.core.registry import lookup
from polaroc.io import find_log_files, scan_logs
from polaroc.report.html import PageInput, figure_key
from polaroc.report.tables import (
    Report,
    Settings,
    calibration_tables,
    one_vs_rest_macro,
    optional_tables,
    positive_rows,
    probability_sets,
    report_tables,
    settled,
    sorted_table,
    write_tables,
)
from polaroc.report.words import interval_name, quantity, table_of_test

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["figure_file", "write_report"]

LogSource = pl.DataFrame | pl.LazyFrame | str | Path | Sequence[str | Path]


def figure_file(name: str, key: tuple[object, ...]) -> str:
    """A figure's file name for one data set: only letters, digits, ``.``, ``_`` and ``-``.

    A data set id is pasted into the name made safe — a slash or ``..`` can never
    reach outside the output folder — with a short hash of the id when anything was
    replaced, so ``uci/d0`` and ``uci_d0`` stay two files. The page shows the id as it is.

    Examples
    --------
    >>> from polaroc.report.write import figure_file
    >>> figure_file("roc", ("heart",))
    'roc_heart.png'
    >>> figure_file("roc", ("../x",)).startswith("roc_x-")
    True
    """
    parts = [name]
    for value in key:
        text = str(value)
        safe = re.sub(r"[^A-Za-z0-9_-]+", "_", text).strip("_") or "_"
        if safe != text:
            safe += "-" + hashlib.sha256(text.encode()).hexdigest()[:8]
        parts.append(safe)
    return "_".join(parts) + ".png"


def _parts(frame: pl.DataFrame, by: list[str]) -> dict[tuple[object, ...], pl.DataFrame]:
    """One table per data set (by group); the whole table under ``()`` without ``by``."""
    if not by or frame.is_empty() or not set(by) <= set(frame.columns):
        return {(): frame}
    parts = frame.partition_by(by, as_dict=True, include_key=False, maintain_order=True)
    return dict(sorted(parts.items(), key=lambda kv: [str(v) for v in kv[0]]))


def _order(rep: Report, tables: dict[str, pl.DataFrame]) -> dict[tuple[object, ...], list[str]]:
    """Per data set, the models best first (the summary's order)."""
    model = rep.columns.model
    return {
        key: [str(m) for m in part[model].to_list()]
        for key, part in _parts(tables["summary"], rep.by).items()
    }


def _ranked(values: pl.Series, names: list[str] | None) -> list[object]:
    """The distinct ``values`` in the order of their text in ``names`` (best first)."""
    by_name = {str(v): v for v in values.unique().to_list()}
    return [by_name[n] for n in (names or []) if n in by_name]


def _kind(rep: Report, key: tuple[object, ...]) -> dict[str, Any] | None:
    """The row of ``rep.kinds`` of one data set (by group)."""
    for row in rep.kinds.iter_rows(named=True):
        if tuple(str(row[b]) for b in rep.by) == tuple(str(k) for k in key):
            return row
    return None


def legend_table(verdict: pl.DataFrame | None, rep: Report) -> pl.DataFrame | None:
    """Per (by…, model) the AUC's mean and the verdict's interval, for the ROC legends.

    ``verdict`` is a verdict on ``auc`` (the ROC figures show AUCs); its rows across
    data sets are left out.
    """
    if verdict is None or not {"mean", "ci_low", "ci_high"} <= set(verdict.columns):
        return None
    dataset = rep.columns.dataset
    rows = verdict.filter(pl.col(dataset).is_not_null()) if dataset in verdict.columns else verdict
    return rows.select(*[b for b in rep.by if b in rows.columns], rep.columns.model,
                       "mean", "ci_low", "ci_high", "test")  # fmt: skip


def _figures(
    rep: Report,
    tables: dict[str, pl.DataFrame],
    curves: dict[str, pl.DataFrame],
    optional: dict[str, pl.DataFrame | str],
    out: Path,
    settings: Settings,
    legends: pl.DataFrame | None,
    deciding: dict[tuple[object, ...], str | None],
) -> dict[str, Path]:
    """Draw and save every figure, per data set; returns the page's name → PNG path."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no window, whatever the user's default backend
    import matplotlib.pyplot as plt

    from polaroc.report import plot

    model, fold = rep.columns.model, rep.columns.fold
    metric, higher = settings.metric, settings.higher_is_better
    written: dict[str, Path] = {}
    orders = _order(rep, tables)

    def save(name: str, key: tuple[object, ...], fig: Figure) -> None:
        path = out / figure_file(name, key)
        fig.savefig(path, dpi=110, bbox_inches="tight", metadata={"Software": None})
        plt.close(fig)
        written[figure_key(name, key)] = path

    def where(key: tuple[object, ...]) -> str:
        return ", ".join(str(k) for k in key)

    def named(key: tuple[object, ...]) -> str:
        return quantity("auc", _kind(rep, key))

    legend_parts = _parts(legends, rep.by) if legends is not None else {}

    def overlay(key: tuple[object, ...], average: pl.DataFrame, caption: str) -> None:
        legend = legend_parts.get(key)
        tests = [] if legend is None else legend["test"].drop_nulls().unique().sort().to_list()
        save("roc_overlay", key, plot.roc_overlay(
            average, legend, model=model, order=orders.get(key), quantity=named(key),
            interval=interval_name(settings.alpha, tests[0] if tests else None),
            title=f"{where(key) + ': ' if key else ''}{caption}",
        ))  # fmt: skip

    duncans = _parts(tables["duncan"], rep.by) if "duncan" in tables else {}
    for key, part in _parts(tables["folds"], rep.by).items():
        order = orders.get(key)
        fig = plot.auc_distributions(
            part, metric=metric, model=model, higher_is_better=higher, order=order,
            title=where(key),
        )  # fmt: skip
        save(f"{metric}_per_fold", key, fig)
        dun = duncans.get(key)
        if dun is not None and dun.height:
            save("duncan", key, plot.duncan_groups(dun, model=model, title=where(key)))
        name = deciding.get(key)
        source = tables.get(name) if name == "paired_ttest" else optional.get(name or "")
        if isinstance(source, pl.DataFrame):
            pairs = _parts(source, [b for b in rep.by if b in source.columns]).get(key)
            if pairs is not None and pairs.height and "p_value" in pairs.columns:
                save("p_values", key, plot.p_value_heatmap(
                    pairs, order=order, alpha=settings.alpha, title=where(key)))  # fmt: skip
    if curves:
        c = {k: _parts(v, rep.by) for k, v in curves.items()}
        for key, part in c.get("folds", {}).items():
            order, average = orders.get(key), c["average"][key]
            overlay(key, average, "ROC curves, vertical average over folds")
            save("roc", key, plot.roc_folds(
                part, c["pooled"][key], average, model=model, fold=fold, order=order))  # fmt: skip
        for key, part in c.get("pr_folds", {}).items():
            save("pr", key, plot.pr_folds(
                part, c["pr_pooled"][key], model=model, fold=fold,
                order=orders.get(key)))  # fmt: skip
        for key, part in c.get("ovr", {}).items():
            macro = one_vs_rest_macro(part, model=model, class_=rep.columns.class_)
            overlay(key, macro, "one-vs-rest ROC curves, macro average over classes")
            save("roc_ovr", key, plot.roc_one_vs_rest(
                part, model=model, class_=rep.columns.class_, order=orders.get(key)))  # fmt: skip
    if "calibration_curve" in tables:
        from polaroc.report.plot_scoring import calibration

        for key, part in _parts(tables["calibration_curve"], rep.by).items():
            multiclass = bool((_kind(rep, key) or {}).get("multiclass"))
            outcome = "share correct (top label)" if multiclass else "share of positives"
            save("calibration", key, calibration(
                part, model=model, fold=fold, outcome=outcome,
                order=_ranked(part[model], orders.get(key)), class_=rep.columns.class_,
            ))  # fmt: skip
    if "decision_curve" in tables:
        from polaroc.report.plot_scoring import decision_curve

        for key, part in _parts(tables["decision_curve"], rep.by).items():
            save("decision_curve", key, decision_curve(part, model=model, fold=fold))
    if "pairwise" in tables:
        for key, part in _parts(tables["pairwise"], rep.by).items():
            save("pairwise", key, plot.pairwise_heatmap(part, model=model, order=orders.get(key)))
    for name in ("bayes_ttest", "bayes_signed_rank"):
        table = optional.get(name)
        if isinstance(table, pl.DataFrame) and table.height:
            keys = [b for b in rep.by if b in table.columns]
            for key, part in _parts(table, keys).items():
                # the correlated t's density needs the fold differences (baycomp's plot),
                # of this part's data set only
                folds = None
                if name == "bayes_ttest":
                    folds = tables["folds"]
                    if keys:
                        this = [pl.col(c).eq_missing(v) for c, v in zip(keys, key, strict=True)]
                        folds = folds.filter(this).drop(keys)  # parts hold no data set column
                rope = rep.used.get(name, {}).get("rope", settings.rope)
                save(name, key, plot.posterior(
                    part, metric=metric, higher_is_better=higher, rope=rope,
                    folds=folds, model=model, fold=fold, repeat=rep.columns.repeat,
                    dataset=rep.columns.dataset))  # fmt: skip
    if isinstance(optional.get("mean_ranks"), pl.DataFrame):
        save("cd", (), plot.cd_diagram(
            tables["folds"], metric, alpha=settings.alpha, higher_is_better=higher,
            model=model, dataset=rep.columns.dataset))  # fmt: skip
    return written


def _collect_optional(plans: dict[str, pl.LazyFrame]) -> dict[str, pl.DataFrame | str]:
    """Each optional table on its own: a design it does not fit is a note, not a failure."""
    results: dict[str, pl.DataFrame | str] = {}
    for name, plan in plans.items():
        try:
            results[name] = plan.collect(engine="in-memory")
        except (ValueError, TypeError, pl.exceptions.PolarsError) as exc:
            results[name] = first_line(exc)
    return results


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message, without Polars' wrapping."""
    text = str(exc).strip() or type(exc).__name__
    line = text.splitlines()[0]
    # Runtime checks raise through a failed string parse; show only their message.
    if "polaroc" in line and '["' in line:
        line = line.split('["', 1)[1].split('"]', 1)[0]
    while line.startswith("polaroc: "):  # the command adds its own prefix
        line = line.removeprefix("polaroc: ")
    return line


def _verdict(
    folds: pl.DataFrame,
    rep: Report,
    settings: Settings,
    log: pl.LazyFrame,
    metric: str | None = None,
) -> pl.DataFrame | str:
    """``pr.verdict`` on the per-fold table, or the one-line reason it has none.

    On a design with a one-fold data set (one test set) the verdict reads the models'
    samples from ``log`` (its class, score, label and sample columns under the
    contract's names). ``metric`` (default: the report's) lets the ROC legends ask for
    the AUC's intervals when the report compares another metric.
    """
    cols = rep.columns
    kwargs: dict[str, Any] = {}
    if rep.one_test_set:
        wanted = {cols.class_: "class", cols.score: "score", cols.label: "label",
                  cols.sample: "sample"}  # fmt: skip
        present = log.collect_schema().names()
        ranking = lookup(metric or settings.metric).family == "ranking"
        if settings.positive is not None and ranking and cols.class_ in present:
            log = _chosen_class(log, rep)  # DeLong reads the chosen class's scores
        keep = [c for c in (*rep.by, cols.model, cols.repeat, cols.fold) if c in present]
        keep += [c for c in wanted if c in present and c not in keep]
        kwargs["log"] = log.select(keep).rename({k: v for k, v in wanted.items() if k in keep})
    try:
        # by=None: the verdict's own default (per data set, and across data sets)
        result = verdict(
            folds, metric=metric or settings.metric, alpha=settings.alpha,
            adjust=settings.adjust or "holm", rope=settings.rope, seed=settings.seed,
            model=cols.model, fold=cols.fold, repeat=cols.repeat, dataset=cols.dataset,
            **kwargs,
        )  # fmt: skip
        return result.collect(engine="in-memory") if isinstance(result, pl.LazyFrame) else result
    except (ValueError, TypeError, pl.exceptions.PolarsError) as exc:
        return first_line(exc)


def _chosen_class(log: pl.LazyFrame, rep: Report) -> pl.LazyFrame:
    """The log with each binary data set's rows cut to its positive class's."""
    binary = rep.kinds.filter(~pl.col("multiclass"))
    multi = rep.kinds.filter(pl.col("multiclass"))
    if not rep.by:
        return positive_rows(log, binary, [], True, rep.columns) if binary.height else log
    parts = [positive_rows(log, binary, rep.by, True, rep.columns)]
    if multi.height:
        parts.append(log.join(multi.lazy().select(rep.by), on=rep.by, how="semi"))
    return pl.concat(parts, how="vertical_relaxed")


def _legends(
    folds: pl.DataFrame,
    rep: Report,
    settings: Settings,
    log: pl.LazyFrame,
    decided: pl.DataFrame | str,
) -> pl.DataFrame | None:
    """The ROC legends' table: the verdict's own on ``auc``, else a verdict on ``auc``."""
    if settings.metric == "auc":
        return legend_table(decided if isinstance(decided, pl.DataFrame) else None, rep)
    with warnings.catch_warnings():  # its warnings were the verdict's, already shown
        warnings.simplefilter("ignore")
        on_auc = _verdict(folds, rep, replace(settings, rope=None), log, metric="auc")
    return legend_table(on_auc if isinstance(on_auc, pl.DataFrame) else None, rep)


def deciding_tables(
    verdict: pl.DataFrame | str, rep: Report
) -> dict[tuple[object, ...], str | None]:
    """Per data set, the report's all-pairs table of the test its verdict used."""
    if not isinstance(verdict, pl.DataFrame) or "test" not in verdict.columns:
        return {}
    dataset = rep.columns.dataset
    rows = verdict.filter(pl.col(dataset).is_not_null()) if dataset in verdict.columns else verdict
    out: dict[tuple[object, ...], str | None] = {}
    for key, part in _parts(rows, [b for b in rep.by if b in rows.columns]).items():
        tests = part["test"].drop_nulls().unique().sort().to_list()
        out[key] = table_of_test(tests[0]) if tests else None
    return out


def _as_log(log: LogSource) -> tuple[pl.LazyFrame, str]:
    """A log frame, a path (file, glob, hive folder) or a list of paths → (lazy log, source)."""
    if isinstance(log, pl.DataFrame | pl.LazyFrame):
        return log.lazy(), ""
    paths = [log] if isinstance(log, str | Path) else list(log)
    if not paths:
        msg = "no log given: pass a DataFrame, a LazyFrame, a path or a list of paths"
        raise ValueError(msg)
    files = find_log_files([str(p) for p in paths])
    source = ", ".join(str(f) for f in files[:3]) + (" …" if len(files) > 3 else "")
    return scan_logs(*[str(p) for p in paths]), source


def write_report(
    log: LogSource,
    out: str | Path = "polaroc-report",
    *,
    metric: str = "auc",
    alpha: float = 0.05,
    adjust: Adjust = None,
    rope: float | None = None,
    threshold: float = 0.5,
    seed: int = 0,
    plots: bool = True,
    page: bool = True,
    model: str = "model",
    fold: str = "fold",
    class_: str = "class",
    score: str = "score",
    label: str = "label",
    sample: str = "sample",
    dataset: str = "dataset",
    repeat: str = "repeat",
    weight: str | None = None,
    folds: pl.DataFrame | None = None,
    notes: Sequence[str] = (),
    progress: Callable[[str, Callable[[], Any]], Any] | None = None,
    positive_class: Any = None,
) -> Report:
    """Write the report of ``log`` into ``out``: every table, every figure and ``index.html``.

    The same files and the same page as ``polaroc report`` (which calls this function),
    byte for byte from run to run: tables are sorted, randomised tests seeded with
    ``seed``. The page opens with the verdict (:func:`polaroc.verdict`: which model is
    best on each data set and across data sets, which are not distinguishable from it
    and by which test), then every setting, what was evaluated, each data set and the
    comparisons across data sets, with every other table in an appendix.

    Parameters
    ----------
    log
        A log frame (``DataFrame`` or ``LazyFrame``), a Parquet path (file, glob or
        hive-partitioned folder) or a list of them.
    out
        The folder written (created if missing).
    metric
        The per-fold column the tests compare, one of
        :func:`~polaroc.report.tables.report_metrics` (``auc``, ``sauc``,
        ``average_precision``, ``error``, ``brier``, ``log_loss``); its direction is the
        metric registry's (lower is better for ``error``, ``brier``, ``log_loss``) and
        every sentence says so.
    alpha
        Significance level of every test; every interval is at 1 − ``alpha``.
    adjust
        Adjust the paired p-values across model pairs (``"holm"``, ``"bonferroni"``);
        ``reject`` is then decided on ``p_adjusted``. The verdict adjusts its
        comparisons with the best model by Holm's method unless another is named.
    rope
        Width of the region of practical equivalence: adds the Bayesian tests.
    threshold
        Score threshold of the error of a binary log without a class column (finite).
    seed
        Seed of the randomised tests (the Bayesian signed-rank test).
    plots, page
        Draw the figures (needs matplotlib) and write ``index.html`` (needs great_tables).
    model, fold, class_, score, label, sample, dataset, repeat, weight
        The log's column names; ``weight`` (default none) is the case-weight column
        passed to :func:`polaroc.evaluate`, and the page says which one was used.
    folds
        A per-fold table computed elsewhere (e.g. :func:`polaroc.distributed.evaluate`).
    notes
        Sentences shown under "What was evaluated".
    progress
        Called as ``progress(message, work)`` around each long step (the command line's
        spinner); default: just run it.
    positive_class
        The positive class of the two-class data sets (the command line's
        ``--positive``; text is read as the class column's type): their ROC and
        precision–recall curves, pooling table, calibration and per-fold average
        precision, Brier score and log loss are that class's. Default: the larger class
        value of each. The page states which class it is and how it was chosen.

    Returns
    -------
    Report
        Its ``results`` hold every collected table, ``figures`` the PNG paths, ``page``
        the path of ``index.html`` and ``html`` its text; in Jupyter it shows the page.

    Examples
    --------
    >>> import tempfile
    >>> import polaroc as pr
    >>> from polaroc.report import write_report
    >>> rep = write_report(pr.demo_log_path(), tempfile.mkdtemp(), plots=False)
    >>> rep.page.name, rep.results["summary"]["model"][0]
    ('index.html', 'logistic')
    """
    settings = Settings(metric=metric, alpha=alpha, adjust=adjust, rope=rope,
                        threshold=threshold, seed=seed, weight=weight,
                        positive=positive_class)  # fmt: skip
    run = progress or (lambda _message, work: work())
    lazy, source = _as_log(log)
    columns = LogColumns(model=model, fold=fold, class_=class_, score=score, label=label,
                         sample=sample, dataset=dataset, repeat=repeat)  # fmt: skip
    rep = report_tables(
        lazy, metric=metric, alpha=alpha, threshold=threshold, adjust=adjust, rope=rope,
        columns=columns, folds=folds, weight=weight, seed=seed, positive_class=positive_class,
    )  # fmt: skip
    names = list(rep.tables) + [f"curve_{k}" for k in rep.curves]
    plans = list(rep.tables.values()) + list(rep.curves.values())
    # The in-memory engine sums each group in row order; the streaming engine's morsels
    # may change the order of float sums between runs (last-bit differences), and the
    # report is byte-identical from run to run.
    frames = run("collecting", lambda: pl.collect_all(plans, engine="in-memory"))
    results = dict(zip(names, frames, strict=True))
    tables = {k: sorted_table(k, results[k]) for k in rep.tables}
    curves = {k: settled(results[f"curve_{k}"]) for k in rep.curves}  # same pixels every run
    _check_metric(tables["folds"], rep, settings)
    sets = probability_sets(tables["folds"], rep.by)
    calibrated = calibration_tables(lazy, sets, rep.kinds, rep.by, rep.columns)
    failed = []
    for name, frame in _collect_optional(calibrated).items():
        if isinstance(frame, pl.DataFrame):
            tables[name] = sorted_table(name, frame)
        else:
            failed.append(f"no calibration section: {frame}")
    optional = _collect_optional(
        optional_tables(
            tables["folds"].lazy(), metric=metric, alpha=alpha, by=rep.by,
            n_datasets=rep.kinds.height, design=rep.design, rope=rope, columns=rep.columns,
            seed=seed,
        )
    )  # fmt: skip
    optional = {k: sorted_table(k, v) if isinstance(v, pl.DataFrame) else v
                for k, v in optional.items()}  # fmt: skip
    decided = _verdict(tables["folds"], rep, settings, lazy)
    if isinstance(decided, pl.DataFrame):
        decided = sorted_table("verdict", decided)
        tables["verdict"] = decided
    out = Path(out)
    written = write_tables(tables, out)
    written += write_tables({k: v for k, v in optional.items() if isinstance(v, pl.DataFrame)}, out)
    notes = [*notes, *dict.fromkeys(failed)]
    figures: dict[str, Path] = {}
    deciding = deciding_tables(decided, rep)
    if plots:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            notes.append("matplotlib is not installed: no figures (pip install 'polaroc[report]')")
        else:
            legends = _legends(tables["folds"], rep, settings, lazy, decided)
            figures = run(
                "drawing figures",
                lambda: _figures(rep, tables, curves, optional, out, settings, legends, deciding),
            )
            written += list(figures.values())
    rep.results = {**tables, **{k: v for k, v in optional.items() if isinstance(v, pl.DataFrame)}}
    rep.figures = figures
    rep.settings = settings
    rep.written = written
    rep.notes = notes
    rep.verdict = decided
    rep.source = source
    if page:
        try:
            import great_tables  # noqa: F401
        except ImportError:
            rep.notes = [*notes, "great_tables is not installed: no index.html "
                         "(pip install 'polaroc[report]')"]  # fmt: skip
            return rep
        from polaroc.report.html import report_page

        text = report_page(page_input(rep, optional))
        rep.page = out / "index.html"
        rep.page.write_text(text, encoding="utf-8")
        rep.html = text
        rep.written.append(rep.page)
    return rep


def page_input(rep: Report, optional: Mapping[str, pl.DataFrame | str] | None = None) -> PageInput:
    """What the page (and the command line's summary of it) shows, from a written report."""
    return PageInput(
        tables=rep.results, optional=optional if optional is not None else rep.results,
        figures=rep.figures, kinds=rep.kinds, by=rep.by, metric=rep.settings.metric,
        alpha=rep.settings.alpha, model=rep.columns.model, dataset=rep.columns.dataset,
        source=rep.source, notes=rep.notes, settings=rep.settings,
        verdict=rep.verdict, design=rep.design, used=rep.used,
    )  # fmt: skip


def _check_metric(folds: pl.DataFrame, rep: Report, settings: Settings) -> None:
    """A metric with no value on a data set cannot be compared there: say which and why."""
    metric = settings.metric
    if metric in ("auc", "sauc", "error") or metric not in folds.columns:
        return
    empty = (
        folds.group_by(rep.by).agg(pl.col(metric).is_not_null().any().alias("_pr_any"))
        if rep.by
        else folds.select(pl.col(metric).is_not_null().any().alias("_pr_any"))
    ).filter(~pl.col("_pr_any"))
    if empty.height:
        where = (
            f" on data set {', '.join(str(v) for v in empty.drop('_pr_any').row(0))}"
            if rep.by
            else ""
        )
        why = (
            "average precision needs two classes"
            if metric == "average_precision"
            else "the Brier score and log loss need scores that are probabilities"
        )
        msg = f"--metric {metric} has no value{where} ({why}); choose auc, sauc or error"
        raise ValueError(msg)
