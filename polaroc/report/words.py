"""The report's sentences, written once for the page and the terminal.

Every sentence about a test — its name, the direction words of a metric, the level
and kind of an interval, the rounding of a p-value or a mean — is built here from the
table it describes, and rendered as HTML (:mod:`polaroc.report.html`) or as text for
rich's console (:mod:`polaroc.report.cli`). A sentence is a list of pieces (:class:`Piece`:
its text, and whether it is stressed), so neither rendering parses the other's markup.
"""

from __future__ import annotations

import html
import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import polars as pl

from polaroc.core.registry import METRICS, lookup

__all__ = [
    "Piece",
    "as_html",
    "as_text",
    "bayes_regions",
    "interval_name",
    "interval_text",
    "level_text",
    "mean_digits",
    "metric_words",
    "name_of_test",
    "p_text",
    "quantity",
    "verdict_sentences",
]


@dataclass(frozen=True)
class Piece:
    """A stretch of a sentence: its text and whether it is stressed (a model's name)."""

    text: str
    bold: bool = False


Sentence = list[Piece]


def as_html(sentence: Sentence) -> str:
    """A sentence as HTML: text escaped, stressed pieces in ``<b>``."""
    return "".join(
        f"<b>{html.escape(p.text)}</b>" if p.bold else html.escape(p.text) for p in sentence
    )


def as_text(sentence: Sentence) -> str:
    """A sentence as plain text."""
    return "".join(p.text for p in sentence)


# ------------------------------------------------------------------ numbers


def level_text(alpha: float) -> str:
    """The confidence level of an interval at significance ``alpha``, as the page prints it.

    Examples
    --------
    >>> from polaroc.report.words import level_text
    >>> level_text(0.05), level_text(0.01), level_text(0.1)
    ('95 %', '99 %', '90 %')
    """
    return f"{round((1 - alpha) * 100, 6):g} %"


def p_text(p: float | None, alpha: float = 0.05) -> str:
    """``p = …`` with enough digits to be on the right side of ``alpha``.

    Two decimals (three below 0.01) unless the rounded value would reach ``alpha`` or
    cross it: an adjusted p of 0.0513 at α = 0.05 prints ``p = 0.051``, never
    ``p = 0.05``; below 0.001 it is ``p < 0.001``.

    Examples
    --------
    >>> from polaroc.report.words import p_text
    >>> p_text(0.0513), p_text(0.0496), p_text(0.57), p_text(0.0004), p_text(0.004)
    ('p = 0.051', 'p = 0.0496', 'p = 0.57', 'p < 0.001', 'p = 0.004')
    """
    if p is None or p != p:
        return "p = NaN"
    if p < 0.001 and alpha > 0.001:
        return "p < 0.001"
    digits = 3 if p < 0.01 else 2
    while digits < 8:
        shown = float(f"{p:.{digits}f}")
        same_side = (shown <= alpha) == (p <= alpha)
        if same_side and (shown != alpha or p == alpha):
            break
        digits += 1
    return f"p = {p:.{digits}f}"


def mean_digits(values: Iterable[float | None], *, least: int = 3, most: int = 6) -> int:
    """The decimals that keep every two different values apart (``least`` to ``most``).

    The page prints means beside ranks; two models of different rank must not both
    read ``1.000``.

    Examples
    --------
    >>> from polaroc.report.words import mean_digits
    >>> mean_digits([0.9994, 0.9993, 0.97]), mean_digits([0.91, 0.82])
    (4, 3)
    """
    finite = sorted({float(v) for v in values if v is not None and math.isfinite(v)})
    digits = least
    while digits < most and any(
        f"{a:.{digits}f}" == f"{b:.{digits}f}" for a, b in itertools.pairwise(finite)
    ):
        digits += 1
    return digits


# ------------------------------------------------------------------ tests and metrics

TEST_WORDS = {
    "corrected repeated k-fold t": "corrected repeated k-fold t",
    "paired t": "paired t",
    "combined 5x2cv F": "combined 5×2 cv F",
    "Friedman + Nemenyi": "Friedman then Nemenyi",
    "Friedman + mean-rank z": "Friedman then Demšar's mean-rank z",
    "Wilcoxon signed-rank": "Wilcoxon signed-rank",
    "Bayesian correlated t": "Bayesian correlated t",
    "Bayesian signed-rank": "Bayesian signed-rank",
    "DeLong": "DeLong's paired test",
    "McNemar": "McNemar's test",
    "Cochran's Q + McNemar": "Cochran's Q then McNemar's test",
}


def name_of_test(test: object) -> str:
    """The name of a verdict's test in a sentence (the verdict's own name, made readable)."""
    text = str(test)
    return TEST_WORDS.get(text, text.replace("_", " ").replace("5x2cv", "5×2 cv"))


def _interval_kind(test: str) -> str:
    """What an interval is, from the name of the test whose variance it uses."""
    lowered = test.lower()
    if "corrected" in lowered or "correlated" in lowered:  # the Bayesian t's has its scale
        return "corrected t"
    if "5x2" in lowered or "5×2" in lowered:
        return "5×2 cv"
    if "delong" in lowered:
        return "DeLong"
    if "mcnemar" in lowered or "cochran" in lowered:
        return "Wilson"
    across = ("friedman", "demšar", "demsar", "wilcoxon", "nemenyi", "signed-rank", "mean-rank")
    if any(word in lowered for word in across):
        return "t over data sets"
    if lowered.startswith("paired t") or lowered == "t":
        return "paired t"
    return name_of_test(test)


def interval_text(
    low: float | None,
    high: float | None,
    *,
    alpha: float,
    test: object = None,
    bounds: tuple[float, float] | None = None,
    digits: int = 3,
) -> str:
    """``95 % CI 0.950–0.980 (corrected t)``: level from ``alpha``, kind from the test.

    ``bounds`` clips to the metric's range (an AUC lies in [0, 1]); "" when unknown.

    Examples
    --------
    >>> from polaroc.report.words import interval_text
    >>> interval_text(0.95, 1.01, alpha=0.01, test="corrected repeated k-fold t", bounds=(0, 1))
    '99 % CI 0.950–1.000, corrected t'
    """
    if low is None or high is None or low != low or high != high:
        return ""
    if bounds is not None:
        low, high = max(low, bounds[0]), min(high, bounds[1])
    kind = f", {_interval_kind(str(test))}" if test is not None else ""
    return f"{level_text(alpha)} CI {low:.{digits}f}–{high:.{digits}f}{kind}"


def interval_name(alpha: float, test: object = None) -> str:
    """``95 % CI, corrected t``: what an interval is, for a legend or a column's caption.

    Examples
    --------
    >>> from polaroc.report.words import interval_name
    >>> interval_name(0.01, "paired t"), interval_name(0.05)
    ('99 % CI, paired t', '95 % CI')
    """
    kind = f", {_interval_kind(str(test))}" if test is not None else ""
    return f"{level_text(alpha)} CI{kind}"


def metric_bounds(metric: str) -> tuple[float, float] | None:
    """The registry's range of ``metric`` when it is finite on both sides (for clipping)."""
    known = METRICS.get(metric)
    if known is None or not (math.isfinite(known.low) and math.isfinite(known.high)):
        return None
    return (known.low, known.high)


def metric_words(metric: str) -> str:
    """How a sentence names ``metric`` (the registry's label: "AUC", "error rate", …)."""
    try:
        return lookup(metric).words
    except ValueError:
        return metric


def quantity(metric: str, kind: Mapping[str, object] | None) -> str:
    """What ``metric`` is on one data set, named: "M (Hand & Till)" or "AUC of class c".

    ``kind`` is the data set's row of the report's ``kinds`` table (``multiclass``,
    ``n_class_values``, ``_pr_positive``, ``n_labels``). The per-fold ``auc`` is Hand &
    Till's M on a multiclass data set and on a two-class one that logs both classes'
    scores (the mean of the two classes' AUCs); it is the AUC of the positive class
    when only that class's scores are logged. A metric read from one class
    (average precision, Brier score, log loss on two classes) names that class.

    Examples
    --------
    >>> from polaroc.report.words import quantity
    >>> both = {"multiclass": False, "n_class_values": 2, "_pr_positive": "malignant"}
    >>> quantity("auc", both), quantity("average_precision", both)
    ('M (Hand & Till)', 'average precision of class malignant')
    >>> quantity("auc", {"multiclass": False, "n_class_values": 1, "_pr_positive": 1})
    'AUC of class 1'
    """
    words = metric_words(metric)
    if kind is None:
        return words
    positive = kind.get("_pr_positive")
    if kind.get("multiclass"):
        return "M (Hand & Till)" if metric == "auc" else words
    if metric == "auc":
        if int(kind.get("n_class_values") or 0) >= 2:  # type: ignore[call-overload]
            return "M (Hand & Till)"
        return f"AUC of class {positive}" if positive is not None else "AUC"
    if metric in ("average_precision", "brier", "log_loss") and positive is not None:
        return f"{words} of class {positive}"
    return words


def bayes_regions(metric: str, higher_is_better: bool) -> str:
    """What a Bayesian table's three probabilities mean, in the metric's direction.

    ``p_a_higher`` is P(a − b > ROPE) whatever the direction; for a lower-is-better
    metric (error) it is the probability that a is *worse*.

    Examples
    --------
    >>> from polaroc.report.words import bayes_regions
    >>> bayes_regions("error", False)[:63]
    'p_a_higher: that a’s error rate is higher by more than the ROPE'
    """
    words = metric_words(metric)
    if higher_is_better:
        return (
            f"p_a_higher: that a’s {words} is higher by more than the ROPE (a is better); "
            "p_rope: that the two are practically equivalent (the difference within the "
            f"ROPE); p_b_higher: that b’s {words} is higher (b is better)"
        )
    return (
        f"p_a_higher: that a’s {words} is higher by more than the ROPE (a is worse, as "
        "lower is better); p_rope: that the two are practically equivalent (the difference "
        f"within the ROPE); p_b_higher: that b’s {words} is higher (b is worse)"
    )


# ------------------------------------------------------------------ the verdict


def _names(items: Sequence[Sentence]) -> Sentence:
    """Pieces joined as "a, b and c"."""
    out: Sentence = []
    for i, item in enumerate(items):
        if i:
            out.append(Piece(" and " if i == len(items) - 1 else ", "))
        out += item
    return out


def _effect(row: Mapping[str, object]) -> str:
    """The effect size against the best (", d = 0.31, small"), when the verdict has it."""
    d, words = row.get("effect_size"), row.get("magnitude")
    if d is None or not isinstance(d, float | int) or d != d:
        return ""
    return f", d = {d:.2f}" + (f", {words}" if words else "")


def _omnibus(tests: Sequence[str]) -> str:
    """The test over every model that gates the comparisons with the best."""
    joined = " ".join(tests).lower()
    if "friedman" in joined:
        return "Friedman's test"
    if "cochran" in joined:
        return "Cochran's Q"
    return "the test over all models"


def _bracket(effect: str) -> str:
    """An effect's text in brackets (" (d = 0.31, small)"); none stays none."""
    return f" ({effect.removeprefix(', ')})" if effect else ""


@dataclass(frozen=True)
class VerdictWords:
    """What the sentences need besides the verdict table."""

    metric: str
    alpha: float
    adjust: str | None
    higher_is_better: bool
    rope: float | None = None


ADJUST_WORDS = {
    "holm": "Holm",
    "bonferroni": "Bonferroni",
    "sidak": "Šidák",
    "hochberg": "Hochberg",
    "hommel": "Hommel",
    "fdr_bh": "Benjamini–Hochberg",
    "fdr_by": "Benjamini–Yekutieli",
}


def _one_verdict(
    rows: pl.DataFrame,
    where: str,
    words: VerdictWords,
    model: str,
    *,
    across: bool,
    kind: Mapping[str, object] | None,
) -> Sentence:
    """One data set's (or the across-data-sets) sentence: best model, ties, the rest."""
    rows = rows.sort("rank", model, nulls_last=True)
    best = rows.filter(pl.col("best").fill_null(value=False))
    what = quantity(words.metric, kind)
    if best.is_empty():
        return [Piece(f"{where}, no model can be named best: {what} is NaN or missing.")]
    top = best.row(0, named=True)
    digits = mean_digits(rows["mean"].to_list())
    extreme = "highest" if words.higher_is_better else "lowest"
    tests = sorted({str(t) for t in rows["test"].drop_nulls().to_list()})
    test = "; ".join(name_of_test(t) for t in tests) or "no test"
    if across:
        lead = [
            Piece(f"{where}, "),
            Piece(str(top[model]), bold=True),
            Piece(
                f" has the best average rank ({top['rank']:.2f}; mean {what} over data sets "
                f"{top['mean']:.{digits}f})"
            ),
        ]
    else:
        ci = interval_text(
            top.get("ci_low"), top.get("ci_high"), alpha=words.alpha,
            test=tests[0] if tests else None, bounds=metric_bounds(words.metric), digits=digits,
        )  # fmt: skip
        mean = f"{top['mean']:.{digits}f}"
        value = (  # "AUC (0.969, 95 % CI …)", "M (Hand & Till), 0.969 (95 % CI …)"
            f" ({mean}" + (f", {ci}" if ci else "") + ")"
            if not what.endswith(")")
            else f", {mean}" + (f" ({ci})" if ci else "")
        )
        lead = [
            Piece(f"{where}, "),
            Piece(str(top[model]), bold=True),
            Piece(f" has the {extreme} mean {what}{value}"),
        ]
    others = rows.filter(~pl.col("best").fill_null(value=False))
    tied = others.filter(pl.col("tied_with_best").fill_null(value=False))
    worse = others.filter(~pl.col("tied_with_best").fill_null(value=False))
    bayes = bool(tests) and all(t.lower().startswith("bayes") for t in tests)
    if bayes:

        def label(row: Mapping[str, object]) -> str:
            p = row["p_vs_best"]
            known = isinstance(p, float) and p == p
            return f"P(equivalent or better) = {p:.2f}" if known else "P = NaN"

        test += f", ROPE ±{words.rope:g}" if words.rope is not None else ""
    else:

        def label(row: Mapping[str, object]) -> str:
            return p_text(row["p_vs_best"], words.alpha) + _effect(row)  # type: ignore[arg-type]

        if others.height > 1 and words.adjust:
            test += f", {ADJUST_WORDS.get(words.adjust, words.adjust)}-adjusted"
    parts: list[Sentence] = [lead]
    if tied.height:
        names = [[Piece(f"{r[model]} ({label(r)})")] for r in tied.iter_rows(named=True)]
        verb = "is" if tied.height == 1 else "are"
        parts.append([*_names(names), Piece(f" {verb} not distinguishable from it ({test})")])
        at_alpha = pl.col("p_vs_best").is_not_nan() & (pl.col("p_vs_best") <= words.alpha)
        if not bayes and tied.filter(at_alpha).height:  # tied with a small p: omnibus unmoved
            omnibus = _omnibus(tests)
            parts.append([Piece(
                f"{omnibus} does not reject at α = {words.alpha:g}, and the comparisons with "
                "the best count only after it does"
            )])  # fmt: skip
    if worse.height:
        rows_w = list(worse.iter_rows(named=True))
        verb = "is" if worse.height == 1 else "are"
        tail = "" if tied.height else f"; {test}"
        if bayes:
            sure = f"P({top[model]} practically better) ≥ {1 - words.alpha:g}"
            names = [[Piece(str(r[model]))] for r in rows_w]
            parts.append([*_names(names), Piece(f" {verb} worse ({sure}{tail})")])
        else:
            ps = [r["p_vs_best"] for r in rows_w]
            cuts = [cut for cut in (0.001, 0.01) if cut <= words.alpha and all(
                isinstance(p, float) and p < cut for p in ps)]  # fmt: skip
            if cuts:  # "x and y are worse (p < 0.01)", effect sizes beside the names
                names = [[Piece(f"{r[model]}" + _bracket(_effect(r)))] for r in rows_w]
                parts.append([*_names(names), Piece(f" {verb} worse (p < {cuts[0]:g}{tail})")])
            else:
                names = [[Piece(f"{r[model]} ({label(r)})")] for r in rows_w]
                parts.append(
                    [
                        *_names(names),
                        Piece(f" {verb} worse" + ("" if tied.height else f" ({test})")),
                    ]
                )
    if not others.height:
        parts.append([Piece("it is the only model")])
    sentence: Sentence = []
    for i, part in enumerate(parts):
        if i:
            sentence.append(Piece("; "))
        sentence += part
    sentence.append(Piece("."))
    return sentence


def verdict_sentences(
    verdict: pl.DataFrame,
    words: VerdictWords,
    *,
    by: Sequence[str],
    model: str = "model",
    dataset: str = "dataset",
    kinds: pl.DataFrame | None = None,
) -> list[Sentence]:
    """The verdict in sentences: one per data set (name first), then one across data sets.

    ``verdict`` is :func:`polaroc.verdict`'s table (per (by…, model) ``rank``, ``mean``,
    ``ci_low``, ``ci_high``, ``best``, ``tied_with_best``, ``p_vs_best``, ``test``, and
    ``effect_size``/``magnitude`` when it has them); rows across data sets have a null
    ``dataset``. ``kinds`` (the report's table of data sets) names the quantity of each
    data set (M or the AUC of one class).

    Examples
    --------
    >>> import polars as pl
    >>> from polaroc.report.words import VerdictWords, as_text, verdict_sentences
    >>> v = pl.DataFrame({"model": ["boost", "forest", "stump"], "rank": [1, 2, 3],
    ...     "mean": [0.969, 0.96, 0.8], "ci_low": [0.95, 0.94, 0.7], "ci_high": [0.98, 0.97, 0.9],
    ...     "best": [True, False, False], "tied_with_best": [True, True, False],
    ...     "p_vs_best": [None, 0.57, 0.001], "test": ["corrected repeated k-fold t"] * 3})
    >>> words = VerdictWords("auc", 0.05, "holm", higher_is_better=True)
    >>> print(as_text(verdict_sentences(v, words, by=[])[0]))  # doctest: +NORMALIZE_WHITESPACE
    On this log, boost has the highest mean AUC (0.969, 95 % CI 0.950–0.980, corrected t);
    forest (p = 0.57) is not distinguishable from it (corrected repeated k-fold t,
    Holm-adjusted); stump is worse (p < 0.01).
    """
    sentences: list[Sentence] = []
    within = [b for b in by if b in verdict.columns]
    has_across = dataset in verdict.columns and verdict[dataset].null_count() > 0
    per_set = verdict.filter(pl.col(dataset).is_not_null()) if has_across else verdict
    kind_of = _kind_rows(kinds, within)
    if within:
        parts = per_set.partition_by(within, as_dict=True, maintain_order=True)
        for key, rows in sorted(parts.items(), key=lambda kv: [str(v) for v in kv[0]]):
            where = "On " + ", ".join(str(k) for k in key)
            kind = kind_of.get(tuple(str(k) for k in key))
            sentences.append(_one_verdict(rows, where, words, model, across=False, kind=kind))
    elif per_set.height:
        kind = kind_of.get(())
        sentences.append(
            _one_verdict(per_set, "On this log", words, model, across=False, kind=kind)
        )
    if has_across:
        rows = verdict.filter(pl.col(dataset).is_null())
        n = per_set[dataset].n_unique() if per_set.height else 0
        where = f"Across the {n} data sets"
        sentences.append(_one_verdict(rows, where, words, model, across=True, kind=None))
        if n < 5:
            sentences.append([Piece(
                f"With {n} data sets the tests across data sets have little power "
                "(Demšar 2006 asks for more); read the per-data-set verdicts first."
            )])  # fmt: skip
    return sentences


def _kind_rows(
    kinds: pl.DataFrame | None, by: Sequence[str]
) -> dict[tuple[str, ...], dict[str, object]]:
    """The report's kinds table keyed by the data set's ids as text."""
    if kinds is None or kinds.is_empty():
        return {}
    if not by or not set(by) <= set(kinds.columns):
        return {(): kinds.row(0, named=True)} if kinds.height == 1 else {}
    return {tuple(str(row[b]) for b in by): row for row in kinds.iter_rows(named=True)}


def table_of_test(test: object) -> str | None:
    """The report's all-pairs table of the verdict's test ``test`` (None: the report has none).

    Examples
    --------
    >>> from polaroc.report.words import table_of_test
    >>> table_of_test("corrected repeated k-fold t"), table_of_test("combined 5x2cv F")
    ('paired_ttest', 'combined_ftest_5x2cv')
    """
    lowered = str(test).lower()
    if "bayes" in lowered and "correlated" in lowered:
        return "bayes_ttest"
    if "5x2" in lowered or "5×2" in lowered:
        return "combined_ftest_5x2cv"
    if lowered in ("paired t", "corrected repeated k-fold t") or lowered.endswith(" t"):
        return "paired_ttest" if "bayes" not in lowered else None
    return None
