"""``polaroc report`` and ``polaroc demo``: the whole evaluation of Parquet logs from the shell."""

from __future__ import annotations

import argparse
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from polaroc._input import LogColumns
from polaroc.io import demo_log_path, find_log_files, scan_logs
from polaroc.report.tables import Report, report_tables, to_markdown, write_report

__all__ = ["main"]

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
    """Stage messages on stderr, with a running clock while a long step works."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.start = time.perf_counter()

    def say(self, message: str) -> None:
        if not self.quiet:
            print(f"polaroc: {message}", file=sys.stderr, flush=True)

    def run(self, message: str, work):
        """Run ``work()`` while showing ``message`` and the seconds elapsed (on a terminal)."""
        if self.quiet:
            return work()
        done = threading.Event()
        tty = sys.stderr.isatty()

        def tick() -> None:
            begun = time.perf_counter()
            while not done.wait(0.5):
                if tty:
                    elapsed = time.perf_counter() - begun
                    print(f"\rpolaroc: {message} {elapsed:5.1f} s", end="", file=sys.stderr)

        print(f"polaroc: {message}", end="" if tty else "\n", file=sys.stderr, flush=True)
        thread = threading.Thread(target=tick, daemon=True)
        thread.start()
        begun = time.perf_counter()
        try:
            return work()
        finally:
            done.set()
            thread.join()
            if tty:
                elapsed = time.perf_counter() - begun
                print(f"\rpolaroc: {message} {elapsed:5.1f} s", file=sys.stderr, flush=True)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="polaroc",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
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
    keep = [*by, "model_a", "model_b", "k", "mean_diff", "t", "p_value"]
    paired = tables["paired_ttest"]
    keep += ["p_adjusted"] if "p_adjusted" in paired.columns else []
    _show(f"paired t tests on {metric}", paired.select(*keep, "reject"))
    _show(f"two-way ANOVA of {metric} (models x folds)", tables["anova"])
    _show(f"Duncan's multiple range test on {metric}", tables["duncan"])


def _figures(rep: Report, tables: dict[str, pl.DataFrame], out: Path, metric: str) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")  # files only: no window, whatever the user's default backend
    from polaroc import plot

    figures = {}
    folds, duncan = tables["folds"], tables["duncan"]
    groups = folds.partition_by(rep.by, as_dict=True) if rep.by else {(): folds}
    for key, part in groups.items():
        suffix = "".join(f"_{k}" for k in key)
        figures[f"{metric}_per_fold{suffix}"] = plot.auc_distributions(
            part, metric=metric, higher_is_better=metric != "error"
        )
        if rep.by:
            mask = pl.all_horizontal(pl.col(b) == k for b, k in zip(rep.by, key, strict=True))
            dun = duncan.filter(mask)
        else:
            dun = duncan
        if dun.height:
            figures[f"duncan{suffix}"] = plot.duncan_groups(dun)
    if rep.curves and not rep.by:
        c = rep.curves
        figures["roc"] = plot.roc_folds(c["folds"], c["pooled"], c["average"])
    if "pairwise" in tables:
        figures["pairwise"] = plot.pairwise_heatmap(tables["pairwise"])
    written = []
    for name, fig in figures.items():
        path = out / f"{name}.png"
        fig.savefig(path, dpi=110, bbox_inches="tight")
        written.append(path)
    import matplotlib.pyplot as plt

    plt.close("all")
    return written


def run_report(log: pl.LazyFrame, args: argparse.Namespace, progress: Progress) -> None:
    """Compute, print and write the report for one (lazy) log."""
    columns = LogColumns(**{
        k: getattr(args, k, getattr(LogColumns(), k))
        for k in ("model", "fold", "class_", "score", "label", "sample", "dataset")
    })  # fmt: skip
    rep = report_tables(
        log, metric=args.metric, alpha=args.alpha, threshold=args.threshold,
        adjust=args.adjust, columns=columns,
    )  # fmt: skip
    kind = "multiclass" if rep.multiclass else f"binary (positive class: {rep.positive_class})"
    progress.say(f"{kind} log; computing per-fold metrics and comparisons")
    names = list(rep.tables) + [f"curve_{k}" for k in rep.curves]
    plans = list(rep.tables.values()) + list(rep.curves.values())
    frames = progress.run("collecting", lambda: pl.collect_all(plans))
    results = dict(zip(names, frames, strict=True))
    tables = {k: results[k] for k in rep.tables}
    rep.curves = {k: results[f"curve_{k}"] for k in rep.curves}
    if tables["folds"].height == 0:
        raise ValueError("the log has no rows to evaluate")

    _terminal_tables(rep, tables, args.metric)
    out = Path(args.out)
    written = write_report(tables, out)
    if not args.no_plots:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            progress.say("matplotlib is not installed: no figures (pip install 'polaroc[plot]')")
        else:
            written += _figures(rep, tables, out, args.metric)
    progress.say(
        f"wrote {len(written)} files to {out}/ in {time.perf_counter() - progress.start:.1f} s"
    )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    line = text.splitlines()[0]
    # Runtime checks raise through a failed string parse; show only their message.
    if "polaroc" in line and '["' in line:
        line = line.split('["', 1)[1].split('"]', 1)[0]
    return line


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``polaroc`` command; returns the exit code."""
    args = _parser().parse_args(argv)
    progress = Progress(args.quiet)
    try:
        if args.command == "demo":
            files = [demo_log_path()]
            log = scan_logs(*files)
        else:
            files = find_log_files(args.logs)
            log = scan_logs(*args.logs)
        size = sum(f.stat().st_size for f in files) / 2**20
        progress.say(f"scanning {len(files)} file(s), {size:.1f} MiB")
        run_report(log, args, progress)
    except KeyboardInterrupt:
        print("polaroc: interrupted", file=sys.stderr)
        return 130
    except (ValueError, TypeError, OSError, pl.exceptions.PolarsError) as exc:
        print(f"polaroc: error: {_first_line(exc)}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
