"""``write_report``: the whole report of a log — tables, figures and ``index.html`` — from Python.

The command line (``polaroc report``) calls :func:`write_report`; a notebook calls it
too and gets the same files and the same page, shown inline by the returned
:class:`~polaroc.report.tables.Report` (``_repr_html_``).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from polaroc.compare.decision import verdict
from polaroc.compare.registry import Adjust
from polaroc.core.inputs import LogColumns
from polaroc.io import find_log_files, scan_logs
from polaroc.report.html import figure_key
from polaroc.report.tables import (
    Report,
    Settings,
    calibration_tables,
    optional_tables,
    probability_sets,
    report_tables,
    settled,
    sorted_table,
    write_tables,
)

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


def _figures(
    rep: Report,
    tables: dict[str, pl.DataFrame],
    curves: dict[str, pl.DataFrame],
    optional: dict[str, pl.DataFrame | str],
    out: Path,
    settings: Settings,
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

    summaries = _parts(tables["summary"], rep.by)
    duncans = _parts(tables["duncan"], rep.by)
    paired = _parts(tables["paired_ttest"], rep.by)
    for key, part in _parts(tables["folds"], rep.by).items():
        order = orders.get(key)
        fig = plot.auc_distributions(
            part, metric=metric, model=model, higher_is_better=higher, order=order
        )
        save(f"{metric}_per_fold", key, fig)
        dun = duncans.get(key)
        if dun is not None and dun.height:
            save("duncan", key, plot.duncan_groups(dun, model=model))
        pairs = paired.get(key)
        if pairs is not None and pairs.height:
            save("p_values", key, plot.p_value_heatmap(pairs, order=order, alpha=settings.alpha))
    if curves:
        c = {k: _parts(v, rep.by) for k, v in curves.items()}
        for key, part in c.get("folds", {}).items():
            order, average = orders.get(key), c["average"][key]
            save("roc_overlay", key, plot.roc_overlay(
                average, summaries.get(key), model=model, order=order))  # fmt: skip
            save("roc", key, plot.roc_folds(
                part, c["pooled"][key], average, model=model, fold=fold, order=order))  # fmt: skip
        for key, part in c.get("pr_folds", {}).items():
            save("pr", key, plot.pr_folds(
                part, c["pr_pooled"][key], model=model, fold=fold,
                order=orders.get(key)))  # fmt: skip
        for key, part in c.get("ovr", {}).items():
            save("roc_ovr", key, plot.roc_one_vs_rest(
                part, model=model, class_=rep.columns.class_, order=orders.get(key)))  # fmt: skip
    if "calibration_curve" in tables:
        from polaroc.report.plot_scoring import calibration

        for key, part in _parts(tables["calibration_curve"], rep.by).items():
            save("calibration", key, calibration(part, model=model, fold=fold))
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
                save(name, key, plot.posterior(
                    part, metric=metric, higher_is_better=higher, rope=settings.rope,
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


def _verdict(folds: pl.DataFrame, rep: Report, settings: Settings) -> pl.DataFrame | str:
    """``pr.verdict`` on the per-fold table, or the one-line reason it has none."""
    try:
        # by=None: the verdict's own default (per data set, and across data sets)
        result = verdict(
            folds, metric=settings.metric, alpha=settings.alpha,
            adjust=settings.adjust or "holm", rope=settings.rope, seed=settings.seed,
            model=rep.columns.model, fold=rep.columns.fold, repeat=rep.columns.repeat,
            dataset=rep.columns.dataset,
        )  # fmt: skip
        return result.collect(engine="in-memory") if isinstance(result, pl.LazyFrame) else result
    except (ValueError, TypeError, pl.exceptions.PolarsError) as exc:
        return first_line(exc)


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
        The per-fold column the tests compare: ``auc``, ``sauc`` or ``error``; lower is
        better for ``error`` (and ``brier``, ``log_loss``) and every sentence says so.
    alpha
        Significance level of every test.
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

    Returns
    -------
    Report
        Its ``results`` hold every collected table, ``figures`` the PNG paths, ``page``
        the path of ``index.html`` and ``html`` its text; in Jupyter it shows the page.

    Examples
    --------
    >>> import tempfile
    >>> import polaroc as pr
    >>> rep = pr.report.write_report(pr.demo_log_path(), tempfile.mkdtemp(), plots=False)
    >>> rep.page.name, rep.results["summary"]["model"][0]
    ('index.html', 'logistic')
    """
    settings = Settings(metric=metric, alpha=alpha, adjust=adjust, rope=rope,
                        threshold=threshold, seed=seed, weight=weight)  # fmt: skip
    run = progress or (lambda _message, work: work())
    lazy, source = _as_log(log)
    columns = LogColumns(model=model, fold=fold, class_=class_, score=score, label=label,
                         sample=sample, dataset=dataset, repeat=repeat)  # fmt: skip
    rep = report_tables(
        lazy, metric=metric, alpha=alpha, threshold=threshold, adjust=adjust, rope=rope,
        columns=columns, folds=folds, weight=weight, seed=seed,
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
    verdict = _verdict(tables["folds"], rep, settings)
    if isinstance(verdict, pl.DataFrame):
        verdict = sorted_table("verdict", verdict)
        tables["verdict"] = verdict
    out = Path(out)
    written = write_tables(tables, out)
    written += write_tables({k: v for k, v in optional.items() if isinstance(v, pl.DataFrame)}, out)
    notes = [*notes, *dict.fromkeys(failed)]
    figures: dict[str, Path] = {}
    if plots:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            notes.append("matplotlib is not installed: no figures (pip install 'polaroc[report]')")
        else:
            figures = run(
                "drawing figures", lambda: _figures(rep, tables, curves, optional, out, settings)
            )
            written += list(figures.values())
    rep.results = {**tables, **{k: v for k, v in optional.items() if isinstance(v, pl.DataFrame)}}
    rep.figures = figures
    rep.settings = settings
    rep.written = written
    if page:
        try:
            import great_tables  # noqa: F401
        except ImportError:
            rep.notes = [*notes, "great_tables is not installed: no index.html "
                         "(pip install 'polaroc[report]')"]  # fmt: skip
            return rep
        from polaroc.report.html import PageInput, report_page

        text = report_page(
            PageInput(
                tables=tables, optional=optional, figures=figures, kinds=rep.kinds, by=rep.by,
                metric=metric, alpha=alpha, model=rep.columns.model,
                dataset=rep.columns.dataset, source=source, notes=notes, settings=settings,
                verdict=verdict, design=rep.design,
            )
        )  # fmt: skip
        rep.page = out / "index.html"
        rep.page.write_text(text, encoding="utf-8")
        rep.html = text
        rep.written.append(rep.page)
    rep.notes = notes
    return rep
