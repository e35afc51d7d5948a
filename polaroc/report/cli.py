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
from typing import Any, TypeVar

import polars as pl

from polaroc.core.inputs import LogColumns
from polaroc.core.registry import lookup
from polaroc.io import demo_log_path, find_log_files
from polaroc.report.tables import Report, Settings, report_metrics, to_markdown
from polaroc.report.write import first_line as _first_line
from polaroc.report.write import page_input, write_report

__all__ = ["main"]

T = TypeVar("T")

DESCRIPTION = """\
Evaluate classifiers from logged scores. A log is a Parquet table with one row per
(model, fold, sample, class): the score a model gave a test sample for a class, and
the sample's true label. polaroc computes, per model and fold, the AUC (Hand & Till's M
for more than two classes, and for two classes whose rows are both logged), the scored
AUC and the error rate, then decides which model is best and which are not
distinguishable from it (the verdict, by the test the design calls for), and writes
every table and figure with a page, index.html, that opens with that verdict.
"""

EPILOG = """\
prints: the verdict's sentences first, then the settings and the path of the page, then
the summary and the tests that do not decide (each labelled so).

outputs (in DIR): index.html, the page (self-contained: the verdict, settings, each data
set's tables and figures, the comparisons across data sets, an appendix); every table as
.csv, .parquet and .md -- verdict, folds, summary, pooled_interval (not with --engine),
paired_ttest, anova, duncan, duncan_ranges, agreement, pooling and se_vs_sd (binary),
pairwise (multiclass),
calibration and calibration_curve (probabilities), and across data sets mean_ranks,
friedman_test, nemenyi_test, wilcoxon_test, sign_test, bayes_signed_rank; on a 5 x 2
design paired_ttest_5x2cv and combined_ftest_5x2cv; with --rope bayes_ttest -- and every
figure as .png.

examples:
  polaroc demo
  polaroc report logs/*.parquet -o results
  polaroc report runs/ --score prob --label y --class cls --metric sauc
  polaroc report log.parquet --positive benign --alpha 0.01
  python -m polaroc report 'logs/**/*.parquet' --no-plots
"""

FLAGS = {"class_": "class", "positive_class": "positive"}
"""Python keywords whose command-line flag is spelt otherwise."""


def command_line_words(message: str) -> str:
    """A message's Python hints in command-line syntax: ``score='prob'`` → ``--score prob``.

    Examples
    --------
    >>> from polaroc.report.cli import command_line_words
    >>> command_line_words("pass its name, e.g. score='prob'.")
    'pass its name, e.g. --score prob.'
    >>> command_line_words("pass class_='cls' or repeat=")
    'pass --class cls or --repeat COL'
    """

    def flag(match: re.Match[str]) -> str:
        name, value = match.group(1), match.group(3)
        return f"--{FLAGS.get(name, name).replace('_', '-')} {value or 'COL'}"

    keywords = "|".join([*LogColumns.__dataclass_fields__, "weight", "positive_class", "rope",
                         "alpha", "threshold", "seed", "metric", "adjust"])  # fmt: skip
    return re.sub(rf"\b({keywords})=(?:(['\"])([^'\"]*)\2)?", flag, message)


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
    out.add_argument(
        "-q", "--quiet", action="store_true",
        help="no progress messages on stderr (the verdict and the tables are still printed)",
    )  # fmt: skip
    tests = common.add_argument_group("tests")
    metrics = report_metrics()
    lower = [m for m in metrics if not lookup(m).higher_is_better]
    tests.add_argument(
        "--metric",
        default="auc",
        choices=metrics,
        help="the per-fold metric compared by the verdict and every test (default: auc); "
        f"lower is better for {', '.join(lower)}; average_precision needs two classes, "
        "brier and log_loss scores that are probabilities",
    )
    tests.add_argument(
        "--alpha", type=float, default=0.05,
        help="significance level; every interval is at 1 - alpha (default: %(default)s)",
    )  # fmt: skip
    tests.add_argument(
        "--adjust",
        choices=["holm", "bonferroni"],
        help="adjust the paired t p-values across model pairs (reject is then decided on "
        "p_adjusted); the verdict adjusts its comparisons with the best by Holm unless given",
    )
    tests.add_argument(
        "--rope",
        type=float,
        metavar="WIDTH",
        help="region of practical equivalence: the verdict decides by the Bayesian tests "
        "(differences within +-WIDTH count as equivalent) and the correlated Bayesian t "
        "table is added",
    )
    tests.add_argument(
        "--positive",
        metavar="CLASS",
        default=None,
        help="the positive class of a two-class log (default: the larger class value): "
        "its ROC, precision-recall and calibration figures and tables",
    )
    tests.add_argument(
        "--threshold",
        type=float,
        default=0.5,
        help="score threshold for the error of a binary log without a class "
        "column (default: %(default)s; a finite number)",
    )
    tests.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the randomised tests, so two runs write identical files "
        "(default: %(default)s)",
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
                       ("dataset", "dataset"), ("repeat", "repeat")]:  # fmt: skip
        names.add_argument(
            f"--{flag}",
            dest=attr,
            metavar="COL",
            default=getattr(defaults, attr),
            help=f"(default: {getattr(defaults, attr)})",
        )

    names.add_argument(
        "--weight",
        metavar="COL",
        default=None,
        help="case-weight column passed to the metrics (default: none, unweighted)",
    )

    commands.add_parser(
        "demo", parents=[common], help="run the report on the bundled example log",
        description="Run the report on the bundled example: six classifiers on the Wisconsin "
                    "breast cancer data, stratified 10-fold cross-validation.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    return parser


def _console() -> Any:
    """Rich's console on stdout (lines unbroken when stdout is not a terminal), or None."""
    try:
        from rich.console import Console
    except ImportError:  # the report extra is not installed: plain print
        return None
    terminal = sys.stdout.isatty()
    return Console(file=sys.stdout, soft_wrap=not terminal, highlight=False, emoji=False)


def _say(console: Any, pieces: list[tuple[str, bool]]) -> None:
    """One paragraph: rich's console with the stressed pieces in bold, or plain text."""
    if console is None:
        print("".join(text for text, _ in pieces))
        return
    from rich.text import Text

    text = Text()
    for piece, bold in pieces:
        text.append(piece, style="bold" if bold else None)
    console.print(text)


def print_report(rep: Report) -> None:
    """The verdict's sentences, the settings and the page's path, then the tables.

    The same sentences as the page's verdict (:mod:`polaroc.report.words`), the same
    settings (:func:`polaroc.report.html.settings_items`), and each table that can
    disagree with the verdict titled so (:func:`polaroc.report.html.terminal_tables`).
    """
    from polaroc.report.html import settings_items, terminal_tables
    from polaroc.report.words import VerdictWords, verdict_sentences

    page = page_input(rep)
    console = _console()
    settings = rep.settings
    if isinstance(rep.verdict, pl.DataFrame) and not rep.verdict.is_empty():
        words = VerdictWords(settings.metric, settings.alpha, settings.adjust or "holm",
                             settings.higher_is_better, settings.rope)  # fmt: skip
        sentences = verdict_sentences(
            rep.verdict, words, by=rep.by, model=rep.columns.model,
            dataset=rep.columns.dataset, kinds=rep.kinds,
        )  # fmt: skip
        for sentence in sentences:
            _say(console, [(p.text, p.bold) for p in sentence])
    else:
        why = rep.verdict if isinstance(rep.verdict, str) else "no verdict table"
        _say(console, [(f"No verdict: {command_line_words(why)}.", False)])
    print("\nsettings:")
    for name, text in settings_items(page):
        print(f"  {name}: {text}")
    where = rep.page if rep.page is not None else rep.written[0].parent if rep.written else None
    what = "report page" if rep.page is not None else "report files"
    print(f"\n{what}: {where}")
    for title, table in terminal_tables(page):
        print(f"\n## {title}\n")
        print(to_markdown(table))
    print(f"\n{what}: {where}")  # again last, where a reader who scrolled looks


def run_report(args: argparse.Namespace, progress: Progress) -> Path:
    """Compute and write the report (:func:`polaroc.report.write_report`), then print its tables.

    Files are written before anything goes to stdout, so a closed pipe (``| head``)
    cannot lose them. Returns the path of the report page (or the folder without one).
    """
    Settings(metric=args.metric, alpha=args.alpha, adjust=args.adjust, rope=args.rope,
             threshold=args.threshold, seed=args.seed, weight=getattr(args, "weight", None),
             positive=args.positive)  # fmt: skip
    names = {k: getattr(args, k, getattr(LogColumns(), k))
             for k in ("model", "fold", "class_", "score", "label", "sample", "dataset",
                       "repeat")}  # fmt: skip
    if args.command == "demo":
        files = [demo_log_path()]
        log: str | Path | list[str] = demo_log_path()
    else:
        files = find_log_files(args.logs)
        log = list(args.logs)
    size = sum(f.stat().st_size for f in files) / 2**20
    progress.say(f"scanning {len(files)} file(s), {size:.1f} MiB")
    folds = None
    engine = getattr(args, "engine", None)
    if engine is not None:
        from polaroc.scale import distributed

        folds = progress.run(
            f"per-fold table on {engine}",
            lambda: distributed.evaluate(
                args.logs, engine=engine, threshold=args.threshold, model=names["model"],
                fold=names["fold"], class_=names["class_"], score=names["score"],
                label=names["label"], sample=names["sample"], dataset=names["dataset"],
            ),
        )  # fmt: skip
    notes = []
    if not args.no_plots:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            notes.append("matplotlib is not installed: no figures (pip install 'polaroc[report]')")
            progress.say(notes[-1])
    rep = write_report(
        log, args.out, metric=args.metric, alpha=args.alpha, adjust=args.adjust,
        rope=args.rope, threshold=args.threshold, seed=args.seed, plots=not args.no_plots,
        weight=getattr(args, "weight", None), folds=folds, progress=progress.run,
        notes=[n for n in notes if "matplotlib" not in n], positive_class=args.positive,
        **names,
    )  # fmt: skip
    for note in rep.notes:
        if "great_tables" in note:
            progress.say(note)
    kinds = rep.kinds
    n_multi = int(kinds["multiclass"].sum())
    if n_multi == kinds.height:
        kind = "multiclass"
    elif n_multi == 0:
        kind = "binary" + (f" (positive class: {rep.positive_class})" if rep.positive_class else "")
    else:
        kind = f"{kinds.height - n_multi} binary and {n_multi} multiclass data sets"
    weight = f", weighted by {rep.settings.weight!r}" if rep.settings.weight else ""
    progress.say(f"{kind} log{weight}")
    progress.say(
        f"wrote {len(rep.written)} files to {args.out}/ in "
        f"{time.perf_counter() - progress.start:.1f} s"
    )
    print_report(rep)
    return rep.page if rep.page is not None else Path(args.out)


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
    """Warnings as one line each, once, with one ``polaroc: warning:`` prefix."""
    text = str(message).strip().splitlines()[0] if str(message).strip() else category.__name__
    while text.startswith("polaroc: "):
        text = text.removeprefix("polaroc: ")
    text = command_line_words(text)
    if text in _WARNED:
        return
    _WARNED.add(text)
    print(f"polaroc: warning: {text}", file=sys.stderr)


_WARNED: set[str] = set()


def _subparser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    """The parser of ``command`` (``report``, ``demo``), for its own usage line."""
    for action in parser._actions:  # argparse keeps its subparsers on the action
        if isinstance(action, argparse._SubParsersAction):
            found: argparse.ArgumentParser = action.choices[command]
            return found
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``polaroc`` command; returns the exit code."""
    os.environ.setdefault("RUST_BACKTRACE", "0")
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # a mistake inside a command: that command's own usage
        _subparser(parser, args.command).error(f"unrecognized arguments: {' '.join(extra)}")
    progress = Progress(args.quiet)
    warnings.showwarning = _one_line_warning
    _WARNED.clear()
    rust: list[str] = []
    panicked = False
    try:
        with _rust_stderr_captured() as rust:
            run_report(args, progress)
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
        print(f"polaroc: error: {command_line_words(_first_line(exc))}", file=sys.stderr)
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
