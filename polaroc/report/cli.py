"""``polaroc report`` and ``polaroc demo``: the whole evaluation of Parquet logs from the shell."""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import polars as pl

from polaroc._input import LogColumns
from polaroc.io import demo_log_path, find_log_files, scan_logs
from polaroc.report.tables import (
    Report,
    optional_tables,
    report_tables,
    to_markdown,
    write_report,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["main"]

T = TypeVar("T")

DESCRIPTION = """\
Evaluate classifiers from logged scores. A log is a Parquet table with one row per
(model, fold, sample, class): the score a model gave a test sample for a class, and
the sample's true label. polaroc computes, per model and fold, the AUC (Hand & Till's M
for more than two classes), the scored AUC and the error rate, then compares the models:
k-fold paired t tests, a two-way ANOVA (models x folds) and Duncan's multiple range test.
"""

EPILOG = """\
outputs (in DIR): every table as .csv, .parquet and .md -- folds, summary, paired_ttest,
anova, duncan, duncan_ranges, agreement, and pooling + se_vs_sd (binary) or pairwise
(multiclass) -- and figures as .png: roc (binary), metric per fold, Duncan's groups,
pairwise separabilities (multiclass).

examples:
  polaroc demo
  polaroc report logs/*.parquet -o results
  polaroc report runs/ --score prob --label y --class cls --metric sauc
  python -m polaroc report 'logs/**/*.parquet' --no-plots
"""


class Progress:
    """Stage messages on stderr; a long step shows rich's spinner and clock on a terminal."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.start = time.perf_counter()

    def say(self, message: str) -> None:
        if not self.quiet:
            print(f"polaroc: {message}", file=sys.stderr, flush=True)

    def run(self, message: str, work: Callable[[], T]) -> T:
        """Run ``work()`` while showing ``message`` (rich's status line on a terminal)."""
        if self.quiet:
            return work()
        if not sys.stderr.isatty():
            self.say(message)
            return work()
        try:
            from rich.console import Console
        except ImportError:  # the report extra is not installed: plain messages
            self.say(message)
            return work()
        console = Console(file=sys.stderr)
        begun = time.perf_counter()
        with console.status(f"polaroc: {message}"):
            result = work()
        self.say(f"{message}: {time.perf_counter() - begun:.1f} s")
        return result


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("polaroc")
    except PackageNotFoundError:  # run from a source tree
        from polaroc import __version__

        return __version__


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="polaroc",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"polaroc {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    common = argparse.ArgumentParser(add_help=False)
    out = common.add_argument_group("output")
    out.add_argument(
        "-o",
        "--out",
        metavar="DIR",
        default="polaroc-report",
        help="folder for tables and figures (default: %(default)s)",
    )
    out.add_argument("--no-plots", action="store_true", help="write tables only")
    out.add_argument("-q", "--quiet", action="store_true", help="print only the tables")
    tests = common.add_argument_group("tests")
    tests.add_argument(
        "--metric",
        default="auc",
        choices=["auc", "sauc", "error"],
        help="metric compared by the paired t, ANOVA and Duncan (default: auc)",
    )
    tests.add_argument(
        "--alpha", type=float, default=0.05, help="significance level (default: %(default)s)"
    )
    tests.add_argument(
        "--adjust",
        choices=["holm", "bonferroni"],
        help="adjust the paired t p-values across model pairs",
    )
    tests.add_argument(
        "--rope",
        type=float,
        metavar="WIDTH",
        help="region of practical equivalence: add the Bayesian tests' probabilities "
        "(differences within +-WIDTH count as equivalent)",
    )
    tests.add_argument(
        "--threshold",
        type=float,
        default=0.5,
        help="score threshold for the error of a binary log without a class "
        "column (default: %(default)s)",
    )

    report = commands.add_parser(
        "report", parents=[common], help="evaluate Parquet logs",
        description="Evaluate Parquet score logs and compare the models.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    report.add_argument(
        "logs",
        nargs="+",
        metavar="LOG",
        help="Parquet files, glob patterns or (hive-partitioned) folders",
    )
    report.add_argument(
        "--engine",
        choices=("ray", "spark"),
        default=None,
        help="compute the per-fold table on a Ray or Spark cluster (the running session, "
        "or a local one); the comparison tables after it are small and stay local",
    )
    names = report.add_argument_group("column names (defaults are the log contract's)")
    defaults = LogColumns()
    for flag, attr in [("model", "model"), ("fold", "fold"), ("class", "class_"),
                       ("score", "score"), ("label", "label"), ("sample", "sample"),
                       ("dataset", "dataset")]:  # fmt: skip
        names.add_argument(
            f"--{flag}",
            dest=attr,
            metavar="COL",
            default=getattr(defaults, attr),
            help=f"(default: {getattr(defaults, attr)})",
        )

    commands.add_parser(
        "demo", parents=[common], help="run the report on the bundled example log",
        description="Run the report on the bundled example: six classifiers on the Wisconsin "
                    "breast cancer data, stratified 10-fold cross-validation.",
    )  # fmt: skip
    return parser


def _show(title: str, df: pl.DataFrame) -> None:
    print(f"\n## {title}\n")
    print(to_markdown(df))


def _terminal_tables(rep: Report, tables: dict[str, pl.DataFrame], metric: str) -> None:
    by = rep.by
    summary = tables["summary"]
    _show("per model: mean and sd over folds", summary)
    keep = [*by, "model_a", "model_b", "n", "estimate", "statistic", "p_value"]
    paired = tables["paired_ttest"]
    keep += ["p_adjusted"] if "p_adjusted" in paired.columns else []
    _show(f"paired t tests on {metric}", paired.select(*keep, "reject"))
    _show(f"two-way ANOVA of {metric} (models x folds)", tables["anova"])
    _show(f"Duncan's multiple range test on {metric}", tables["duncan"])


def _parts(frame: pl.DataFrame, by: list[str]) -> dict[tuple[object, ...], pl.DataFrame]:
    """One table per data set (by group); the whole table under ``()`` without ``by``."""
    if not by or frame.is_empty() or not set(by) <= set(frame.columns):
        return {(): frame}
    return frame.partition_by(by, as_dict=True, include_key=False)


def _suffix(key: tuple[object, ...]) -> str:
    return "".join(f"_{k}" for k in key)


def _figures(
    rep: Report,
    tables: dict[str, pl.DataFrame],
    curves: dict[str, pl.DataFrame],
    optional: dict[str, pl.DataFrame | str],
    out: Path,
    metric: str,
) -> dict[str, Path]:
    """Draw and save every figure, per data set; returns name → PNG path."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no window, whatever the user's default backend
    import matplotlib.pyplot as plt

    from polaroc import plot

    model, fold = rep.columns.model, rep.columns.fold
    written: dict[str, Path] = {}

    def save(name: str, fig: Figure) -> None:
        written[name] = out / f"{name}.png"
        fig.savefig(written[name], dpi=110, bbox_inches="tight")
        plt.close(fig)

    duncans = _parts(tables["duncan"], rep.by)
    for key, part in _parts(tables["folds"], rep.by).items():
        save(
            f"{metric}_per_fold{_suffix(key)}",
            plot.auc_distributions(
                part, metric=metric, model=model, higher_is_better=metric != "error"
            ),
        )
        dun = duncans.get(key)
        if dun is not None and dun.height:
            save(f"duncan{_suffix(key)}", plot.duncan_groups(dun, model=model))
    if curves:
        c = {k: _parts(v, rep.by) for k, v in curves.items()}
        for key, part in c["folds"].items():
            save(
                f"roc{_suffix(key)}",
                plot.roc_folds(part, c["pooled"][key], c["average"][key], model=model, fold=fold),
            )
        for key, part in c.get("pr_folds", {}).items():
            save(
                f"pr{_suffix(key)}",
                plot.pr_folds(part, c["pr_pooled"][key], model=model, fold=fold),
            )
    if "pairwise" in tables:
        for key, part in _parts(tables["pairwise"], rep.by).items():
            save(f"pairwise{_suffix(key)}", plot.pairwise_heatmap(part, model=model))
    if isinstance(optional.get("mean_ranks"), pl.DataFrame):
        cd = plot.cd_diagram(
            tables["folds"], metric, alpha=rep.alpha, higher_is_better=metric != "error",
            model=model, dataset=rep.columns.dataset,
        )  # fmt: skip
        save("cd", cd)
    return written


def _collect_optional(plans: dict[str, pl.LazyFrame]) -> dict[str, pl.DataFrame | str]:
    """Each optional table on its own: a design it does not fit is a note, not a failure."""
    results: dict[str, pl.DataFrame | str] = {}
    for name, plan in plans.items():
        try:
            results[name] = plan.collect()
        except (ValueError, TypeError, pl.exceptions.PolarsError) as exc:
            results[name] = _first_line(exc)
    return results


def run_report(log: pl.LazyFrame, args: argparse.Namespace, progress: Progress) -> Path:
    """Compute and write the report for one (lazy) log, then print its tables.

    Files are written before anything goes to stdout, so a closed pipe (``| head``)
    cannot lose them. Returns the path of the report page.
    """
    columns = LogColumns(**{
        k: getattr(args, k, getattr(LogColumns(), k))
        for k in ("model", "fold", "class_", "score", "label", "sample", "dataset")
    })  # fmt: skip
    folds = None
    engine = getattr(args, "engine", None)
    if engine is not None:
        from polaroc.scale import distributed

        folds = progress.run(
            f"per-fold table on {engine}",
            lambda: distributed.evaluate(
                args.logs, engine=engine, threshold=args.threshold, model=columns.model,
                fold=columns.fold, class_=columns.class_, score=columns.score,
                label=columns.label, sample=columns.sample, dataset=columns.dataset,
            ),
        )  # fmt: skip
    rep = report_tables(
        log, metric=args.metric, alpha=args.alpha, threshold=args.threshold,
        adjust=args.adjust, rope=args.rope, columns=columns, folds=folds,
    )  # fmt: skip
    kinds = rep.kinds
    n_multi = int(kinds["multiclass"].sum())
    if n_multi == kinds.height:
        kind = "multiclass"
    elif n_multi == 0:
        kind = "binary" + (f" (positive class: {rep.positive_class})" if rep.positive_class else "")
    else:
        kind = f"{kinds.height - n_multi} binary and {n_multi} multiclass data sets"
    progress.say(f"{kind} log; computing per-fold metrics and comparisons")
    names = list(rep.tables) + [f"curve_{k}" for k in rep.curves]
    plans = list(rep.tables.values()) + list(rep.curves.values())
    frames = progress.run("collecting", lambda: pl.collect_all(plans))
    results = dict(zip(names, frames, strict=True))
    tables = {k: results[k] for k in rep.tables}
    curves = {k: results[f"curve_{k}"] for k in rep.curves}
    # From the collected per-fold table: nothing is recomputed.
    optional = _collect_optional(
        optional_tables(
            tables["folds"].lazy(),
            metric=args.metric,
            alpha=args.alpha,
            by=rep.by,
            n_datasets=rep.kinds.height,
            design=rep.design,
            rope=args.rope,
            columns=rep.columns,
        )
    )

    out = Path(args.out)
    written = write_report(tables, out)
    written += write_report({k: v for k, v in optional.items() if isinstance(v, pl.DataFrame)}, out)
    figures: dict[str, Path] = {}
    notes = []
    if not args.no_plots:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            notes.append("matplotlib is not installed: no figures (pip install 'polaroc[report]')")
            progress.say(notes[-1])
        else:
            figures = progress.run(
                "drawing figures",
                lambda: _figures(rep, tables, curves, optional, out, args.metric),
            )
            written += list(figures.values())
    page = _write_page(rep, tables, optional, figures, out, args, notes, progress)
    if page is not None:
        written.append(page)
    progress.say(
        f"wrote {len(written)} files to {out}/ in {time.perf_counter() - progress.start:.1f} s"
    )
    _terminal_tables(rep, tables, args.metric)
    return page if page is not None else out


def _write_page(
    rep: Report,
    tables: dict[str, pl.DataFrame],
    optional: dict[str, pl.DataFrame | str],
    figures: dict[str, Path],
    out: Path,
    args: argparse.Namespace,
    notes: list[str],
    progress: Progress,
) -> Path | None:
    """Write ``index.html`` (needs great_tables, from the ``report`` extra)."""
    try:
        import great_tables  # noqa: F401
    except ImportError:
        progress.say("great_tables is not installed: no index.html (pip install 'polaroc[report]')")
        return None
    from polaroc.report.html import PageInput, report_page

    page = PageInput(
        tables=tables, optional=optional, figures=figures, kinds=rep.kinds, by=rep.by,
        metric=args.metric, alpha=args.alpha, model=rep.columns.model,
        dataset=rep.columns.dataset, source=getattr(args, "source", ""), notes=notes,
    )  # fmt: skip
    path = out / "index.html"
    path.write_text(report_page(page), encoding="utf-8")
    return path


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    line = text.splitlines()[0]
    # Runtime checks raise through a failed string parse; show only their message.
    if "polaroc" in line and '["' in line:
        line = line.split('["', 1)[1].split('"]', 1)[0]
    while line.startswith("polaroc: "):  # the command adds its own prefix
        line = line.removeprefix("polaroc: ")
    return line


@contextmanager
def _rust_stderr_captured() -> Iterator[list[str]]:
    """Send what Rust writes to file descriptor 2 (panic messages) to a buffer.

    Python's own ``sys.stderr`` keeps writing to the terminal. The captured text is
    appended to the yielded list on exit; the caller shows it unless Polars panicked.
    """
    captured: list[str] = []
    try:
        fd = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # no real stderr (e.g. under a test runner)
        yield captured
        return
    saved = os.dup(fd)
    python_stderr = sys.stderr
    with tempfile.TemporaryFile(mode="w+b") as buffer:
        sys.stderr.flush()
        os.dup2(buffer.fileno(), fd)
        sys.stderr = open(saved, "w", closefd=False, encoding="utf-8", errors="replace")  # noqa: SIM115
        try:
            yield captured
        finally:
            sys.stderr.flush()
            sys.stderr = python_stderr
            os.dup2(saved, fd)
            os.close(saved)
            buffer.seek(0)
            captured.append(buffer.read().decode("utf-8", "replace"))


def _one_line_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: object = None,
    line: str | None = None,
) -> None:
    """Warnings as one line each (no source line)."""
    text = str(message).strip().splitlines()[0] if str(message).strip() else category.__name__
    print(f"polaroc: warning: {text}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``polaroc`` command; returns the exit code."""
    os.environ.setdefault("RUST_BACKTRACE", "0")
    args = _parser().parse_args(argv)
    progress = Progress(args.quiet)
    warnings.showwarning = _one_line_warning
    rust: list[str] = []
    panicked = False
    try:
        with _rust_stderr_captured() as rust:
            if args.command == "demo":
                files = [demo_log_path()]
                log = scan_logs(*files)
            else:
                files = find_log_files(args.logs)
                log = scan_logs(*args.logs)
            args.source = ", ".join(str(f) for f in files[:3]) + (" …" if len(files) > 3 else "")
            size = sum(f.stat().st_size for f in files) / 2**20
            progress.say(f"scanning {len(files)} file(s), {size:.1f} MiB")
            page = run_report(log, args, progress)
            what = "report page" if page.suffix == ".html" else "report files"
            print(f"\n{what}: {page}")
            sys.stdout.flush()
    except BrokenPipeError:
        # The reader closed the pipe (| head): the files are written; stop printing
        # (https://docs.python.org/3/library/signal.html#note-on-sigpipe).
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        print("polaroc: interrupted", file=sys.stderr)
        return 130
    except (ValueError, TypeError, OSError, ImportError, pl.exceptions.PolarsError) as exc:
        print(f"polaroc: error: {_first_line(exc)}", file=sys.stderr)
        return 2
    except BaseException as exc:
        if type(exc).__name__ != "PanicException":  # pyo3's, a BaseException subclass
            raise
        panicked = True
        inner = re.findall(r'\(\\*"([^"\\]+)', str(exc))  # the innermost quoted cause
        cause = inner[-1] if inner else _first_line(exc)
        print(
            f"polaroc: error: Polars could not read the log ({cause[:120]}): a Parquet file "
            "may be damaged; check each with pl.read_parquet",
            file=sys.stderr,
        )
        return 2
    finally:
        if rust and rust[0] and not panicked:
            sys.stderr.write(rust[0])
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
