"""``index.html``: the report as one self-contained page, laid out as a reader goes.

Tables are rendered by great_tables (which speaks Polars), figures are the report's
PNG files embedded as ``data:`` URIs, and the style sheet is inline: the page makes no
network request, so it reads offline and can be attached to an email. Each section is
a small function returning HTML; :func:`report_page` puts them in order. Every sentence
about a test comes from :mod:`polaroc.report.words`, which the command line prints too.
"""

from __future__ import annotations

import base64
import html
import itertools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from polaroc.report.tables import BAYES_ROPE, CALIBRATION_BINS, Settings, net_benefit_summary
from polaroc.report.words import (
    ADJUST_WORDS,
    VerdictWords,
    as_html,
    bayes_regions,
    interval_name,
    level_text,
    mean_digits,
    metric_bounds,
    metric_words,
    name_of_test,
    quantity,
    table_of_test,
    verdict_sentences,
)

__all__ = [
    "DATASET_SECTIONS",
    "PageInput",
    "figure_key",
    "report_page",
    "settings_items",
    "table_html",
    "terminal_tables",
]

_ids = itertools.count()


def figure_key(name: str, key: tuple[object, ...] | Mapping[str, object]) -> str:
    """The page's name of one data set's figure (the data set ids as they are)."""
    values = tuple(key.values()) if isinstance(key, Mapping) else key
    return name + "".join(f"\x1f{v}" for v in values)


def anchor(*parts: object) -> str:
    """An HTML id from text: letters, digits and ``-`` only (a data set id may hold anything)."""
    text = "-".join(str(p) for p in parts)
    return re.sub(r"[^A-Za-z0-9_-]+", "_", text)


STYLE = """
body { font-family: -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif;
       color: #222; margin: 0 auto; max-width: 1100px; padding: 1.5em 2em 4em; line-height: 1.45; }
h1 { font-size: 1.7em; margin-bottom: 0.2em; }
h2 { font-size: 1.35em; border-bottom: 2px solid #ddd; padding-bottom: 0.2em; margin-top: 2em; }
h3 { font-size: 1.1em; margin-top: 1.6em; }
p.how { color: #444; max-width: 60em; }
p.note { color: #8a4b00; background: #fff6e5; padding: 0.4em 0.7em; border-radius: 4px; }
nav > ul { columns: 2; column-gap: 2.5em; font-size: 0.95em; padding-left: 1.2em; }
nav > ul > li { break-inside: avoid; page-break-inside: avoid; margin-bottom: 0.2em; }
nav ul ul { padding-left: 1.2em; font-size: 0.95em; }
figure { margin: 0.8em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
.gt_table { margin-left: 0 !important; }
.gt_col_heading { white-space: normal !important; vertical-align: bottom !important; }
div.wide { overflow-x: auto; max-width: 100%; }
div.wide.many .gt_table { font-size: 13px !important; }
div.wide.many .gt_row, div.wide.many .gt_col_heading { padding: 4px 5px !important; }
section#verdict { background: #f4f8fc; border: 1px solid #cfe0f0; border-radius: 6px;
                  padding: 0.2em 1.2em 1em; }
section#verdict h2 { margin-top: 0.6em; }
p.verdict { font-size: 1.08em; max-width: 62em; }
dl.settings { display: grid; grid-template-columns: max-content auto; gap: 0.25em 1.2em; }
dl.settings dt { font-weight: 600; }
dl.settings dd { margin: 0; }
"""


@dataclass
class PageInput:
    """What the page shows: the collected tables, figures and what was found in the log."""

    tables: Mapping[str, pl.DataFrame]
    optional: Mapping[str, pl.DataFrame | str]
    figures: Mapping[str, Path]
    kinds: pl.DataFrame
    by: list[str]
    metric: str
    alpha: float
    model: str = "model"
    dataset: str = "dataset"
    source: str = ""
    notes: list[str] = field(default_factory=list)
    settings: Settings | None = None
    verdict: pl.DataFrame | str | None = None
    design: tuple[int, int] | None = None
    used: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


def _label(name: str) -> str:
    """A column name that may wrap after its underscores (a wide table stays on the page)."""
    return "_<wbr>".join(html.escape(part) for part in name.split("_"))


def table_html(df: pl.DataFrame, *, max_rows: int = 60) -> str:
    """A table as HTML by great_tables; numbers as in the Markdown tables, nested as text.

    Floats show four decimals, or three significant digits in scientific notation when
    tiny or huge (p-values), and are right-aligned; column names may wrap at their
    underscores, and a table of many columns is set smaller, so it fits the page.

    Examples
    --------
    >>> import polars as pl
    >>> from polaroc.report.html import table_html
    >>> text = table_html(pl.DataFrame({"model": ["a"], "auc": [0.912345], "p": [6.4e-10]}))
    >>> "0.9123" in text and "6.4e-10" in text
    True
    """
    from great_tables import GT
    from great_tables import html as gt_html

    from polaroc.report.tables import cell_text, flat

    shown = flat(_pairs_as_names(df.head(max_rows)))
    floats = [n for n, d in shown.schema.items() if d.is_float()]
    shown = shown.with_columns(
        pl.Series(n, [cell_text(v) for v in shown[n].to_list()], dtype=pl.String) for n in floats
    )
    gt = GT(shown, id=f"t{next(_ids)}").sub_missing(missing_text="")
    gt = gt.cols_label(cases={n: gt_html(_label(n)) for n in shown.columns if "_" in n})
    if floats:
        gt = gt.cols_align("right", columns=floats)
    more = (
        f"<p class='how'>First {max_rows} of {df.height} rows.</p>" if df.height > max_rows else ""
    )
    wide = " many" if shown.width > 9 else ""
    return f'<div class="wide{wide}">{gt.as_raw_html(inline_css=False)}</div>{more}'


def _pairs_as_names(df: pl.DataFrame) -> pl.DataFrame:
    """A list of model-pair structs (the agreement table's ``pairs``) as "a–b, c–d"."""
    nested = {
        n: d for n, d in df.schema.items()
        if isinstance(d, pl.List) and isinstance(d.inner, pl.Struct)
        and {"model_a", "model_b"} <= {f.name for f in d.inner.fields}
    }  # fmt: skip
    return df.with_columns(
        pl.col(n)
        .list.eval(
            pl.concat_str(
                pl.element().struct.field("model_a").cast(pl.String),
                pl.lit("–"),
                pl.element().struct.field("model_b").cast(pl.String),
            )
        )
        .list.join(", ")
        for n in nested
    )


def _figure(path: Path | None, alt: str) -> str:
    if path is None or not path.exists():
        return ""
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f'<figure><img alt="{html.escape(alt)}" src="data:image/png;base64,{data}"></figure>'


def _section(level: int, anchor: str, title: str, how: str, body: str) -> str:
    tag = f"h{level}"
    return (
        f'<section id="{html.escape(anchor)}"><{tag}>{html.escape(title)}</{tag}>'
        f'<p class="how">{how}</p>{body}</section>'
    )


def _fig(
    page: PageInput, name: str, key: Mapping[str, object] | tuple[object, ...], alt: str
) -> str:
    return _figure(page.figures.get(figure_key(name, key)), alt)


def _select(df: pl.DataFrame | None, key: Mapping[str, object]) -> pl.DataFrame | None:
    """The rows of one data set (``key``: column → value); tables without the columns whole."""
    if df is None:
        return None
    for column, value in key.items():
        if column in df.columns:
            df = df.filter(pl.col(column) == value)
    return df.drop([c for c in key if c in df.columns])


def _settings(page: PageInput) -> Settings:
    return page.settings or Settings(metric=page.metric, alpha=page.alpha)


def _kind(page: PageInput, key: Mapping[str, object]) -> dict[str, Any] | None:
    """The data set's row of ``page.kinds`` (what it is: binary or multiclass, its classes)."""
    for row in page.kinds.iter_rows(named=True):
        if all(str(row.get(b)) == str(v) for b, v in key.items()):
            return row
    return None


def _verdict_rows(page: PageInput, key: Mapping[str, object]) -> pl.DataFrame | None:
    """The verdict's rows of one data set (none across data sets)."""
    verdict = page.verdict
    if not isinstance(verdict, pl.DataFrame):
        return None
    if page.dataset in verdict.columns:
        verdict = verdict.filter(pl.col(page.dataset).is_not_null())
    return _select(verdict, key)


def _tests(rows: pl.DataFrame | None) -> list[str]:
    if rows is None or "test" not in rows.columns:
        return []
    return sorted({str(t) for t in rows["test"].drop_nulls().to_list()})


def _words(page: PageInput) -> VerdictWords:
    settings = _settings(page)
    return VerdictWords(
        settings.metric,
        settings.alpha,
        settings.adjust or "holm",
        settings.higher_is_better,
        settings.rope,
    )


# --------------------------------------------------------------------- the verdict


def _cell(row: Mapping[str, object], digits: int) -> str:
    rank, mean, best, tied = row["rank"], row["mean"], row["best"], row["tied_with_best"]
    if best is None or rank is None:
        return "NaN: no decision"
    mark = "★" if best else "=" if tied else "▼"
    rank_text = f"{rank:g}" if float(rank).is_integer() else f"{rank:.2f}"  # type: ignore[arg-type]
    return f"{rank_text} · {mean:.{digits}f} {mark}"


def compact_table(verdict: pl.DataFrame, *, model: str, dataset: str) -> pl.DataFrame:
    """Models × data sets: each cell the rank and mean, marked against the best.

    ``★`` the best, ``=`` not distinguishable from it, ``▼`` worse (at the page's α);
    models in the order of the verdict across data sets (or of the one data set). Each
    data set's means get the digits that tell its models apart.
    """
    across = "across (mean rank)"
    per = verdict.to_dicts()

    def digits_of(rows: list[dict[str, Any]]) -> int:
        return mean_digits(r["mean"] for r in rows)

    if dataset not in verdict.columns:
        rows = sorted(per, key=lambda r: (r["rank"] is None, r["rank"] or 0, str(r[model])))
        d = digits_of(rows)
        return pl.DataFrame({model: [str(r[model]) for r in rows],
                             "this log": [_cell(r, d) for r in rows]})  # fmt: skip
    overall = [r for r in per if r[dataset] is None]
    ordered = overall or per
    order = list(dict.fromkeys(
        str(r[model]) for r in sorted(
            ordered, key=lambda r: (r["rank"] is None, r["rank"] or 0, str(r[model])))
    ))  # fmt: skip
    sets = sorted({str(r[dataset]) for r in per if r[dataset] is not None})
    digits = {s: digits_of([r for r in per if str(r[dataset]) == s]) for s in sets}
    digits[across] = digits_of(overall)
    cells = {}
    for r in per:
        column = across if r[dataset] is None else str(r[dataset])
        cells[(str(r[model]), column)] = _cell(r, digits[column])
    columns = [*sets, *([across] if overall else [])]
    return pl.DataFrame(
        {model: order, **{c: [cells.get((m, c), "") for m in order] for c in columns}}
    )


CD_NOTE = (
    "<p class='how'>The diagram joins models whose mean ranks differ by less than Nemenyi's "
    "critical difference, a test of every pair at once; the verdict compares each model "
    "with the best only (its p-value adjusted over the k − 1 comparisons). Where a bar and "
    "the verdict disagree, the verdict counts.</p>"
)


def _decided_by(page: PageInput) -> str:
    """One sentence before the first table: the test, α, the level and the adjustment."""
    settings = _settings(page)
    verdict = page.verdict if isinstance(page.verdict, pl.DataFrame) else None
    tests = _tests(verdict)
    named = "; ".join(name_of_test(t) for t in tests) or "no test"
    bayes = bool(tests) and all(t.lower().startswith("bayes") for t in tests)
    adjust = ADJUST_WORDS.get(settings.adjust or "holm", str(settings.adjust))
    how = (
        f"posterior probabilities, not adjusted (ROPE ±{settings.rope:g})"
        if bayes and settings.rope is not None
        else f"p-values {adjust}-adjusted over the k − 1 comparisons with the best"
    )
    return (
        f"Decided by {html.escape(named)} at α = {settings.alpha:g}; {how}; intervals at "
        f"{level_text(settings.alpha)} (1 − α) under the deciding test's variance."
    )


def verdict_section(page: PageInput) -> str:
    """The page's first section: which model is best, which are tied with it, by which test."""
    settings = _settings(page)
    verdict = page.verdict
    if not isinstance(verdict, pl.DataFrame) or verdict.is_empty():
        why = verdict if isinstance(verdict, str) else "this polaroc has no pr.verdict"
        body = f'<p class="note">No verdict: {html.escape(why)}. The tests below still stand.</p>'
        return _section(2, "verdict", "Verdict", "", body)
    sentences = verdict_sentences(
        verdict, _words(page), by=page.by, model=page.model, dataset=page.dataset,
        kinds=page.kinds,
    )  # fmt: skip
    text = "".join(f'<p class="verdict">{as_html(s)}</p>' for s in sentences)
    better = "higher" if settings.higher_is_better else "lower"
    one_set = page.kinds.height == 1  # the metric named as the headline names it
    named = quantity(settings.metric, _kind(page, {})) if one_set else metric_words(settings.metric)
    how = (
        f"The best model has the {'highest' if settings.higher_is_better else 'lowest'} mean "
        f"{html.escape(named)} ({better} is better); every other "
        "model is compared with it by the one test the design calls for (comparisons with a "
        "control, Demšar 2006), the k − 1 p-values adjusted together. Each test and its "
        'settings are listed under <a href="#settings">Settings</a>; nothing further down '
        "overrides this verdict — where another table disagrees, it says so."
    )
    compact = compact_table(verdict, model=page.model, dataset=page.dataset)
    legend = (
        "<p class='how'>Each cell: rank · mean; ★ best, = not distinguishable from the best, "
        f"▼ worse at α = {settings.alpha:g}.</p>"
    )
    cd = _figure(page.figures.get(figure_key("cd", ())), "critical-difference diagram")
    if cd:
        cd += CD_NOTE
    body = (
        f'<p class="how">{_decided_by(page)}</p>'
        + table_html(compact)
        + legend
        + cd
        + f'<p class="how">{how}</p>'
    )
    return f'<section id="verdict"><h2>Verdict</h2>{text}{body}</section>'


def _design_words(page: PageInput) -> tuple[str, str]:
    """The design found in the log and the test it calls for, in words."""
    kinds = page.kinds
    folds = int(kinds["n_folds"].max()) if "n_folds" in kinds.columns else 0  # type: ignore[arg-type]
    repeats = int(kinds["n_repeats"].max()) if "n_repeats" in kinds.columns else 1  # type: ignore[arg-type]
    if page.design == (5, 2):
        return "5 × 2 cross-validation", "combined 5×2 cv F (Alpaydın 1999)"
    if repeats > 1:
        return (
            f"{repeats} × {folds}-fold repeated cross-validation",
            "corrected repeated k-fold t (Nadeau & Bengio 2003; Bouckaert & Frank 2004)",
        )
    if folds == 1:
        return "one test set (one fold)", "DeLong's paired test, or McNemar's for error"
    return f"{folds}-fold cross-validation", "k-fold paired t (Dietterich 1998)"


def _positive_words(page: PageInput) -> str:
    """The positive class of each two-class data set and how it was chosen."""
    settings = _settings(page)
    kinds = page.kinds
    binary = kinds.filter(~pl.col("multiclass")) if "multiclass" in kinds.columns else kinds
    if binary.is_empty():
        return "none: every data set has more than two classes (M averages every class pair)"
    how = (
        "given (--positive / positive_class=)"
        if settings.positive is not None
        else "the larger class value; --positive CLASS chooses another"
    )
    values = binary["_pr_positive"].to_list() if "_pr_positive" in binary.columns else [None]
    shown = sorted({"the label (true or 1)" if v is None else str(v) for v in values})
    return f"{', '.join(shown)} ({how})"


def settings_items(page: PageInput) -> list[tuple[str, str]]:
    """Every setting the page used, as (name, plain text) pairs; the terminal prints them too.

    Test, α, interval level, adjustments, ROPE and seed (as the tables that used them
    were called), threshold, weight and positive class.
    """
    settings = _settings(page)
    design, test = _design_words(page)
    used = _tests(page.verdict if isinstance(page.verdict, pl.DataFrame) else None)
    tests = "; ".join(name_of_test(t) for t in used) or test
    adjust = settings.adjust
    better = "higher" if settings.higher_is_better else "lower"
    bayes = {name: opts for name, opts in page.used.items() if "rope" in opts}
    if settings.rope is not None:
        rope = f"±{settings.rope:g} (the Bayesian tests: the verdict and every Bayesian table)"
    elif bayes:
        width = next(iter(bayes.values())).get("rope", BAYES_ROPE)
        rope = (
            f"±{width:g} in the Bayesian signed-rank table across data sets (its default; "
            "the verdict is frequentist; --rope WIDTH sets it and decides by the Bayesian tests)"
        )
    else:
        rope = "none (no Bayesian table; --rope WIDTH adds them)"
    return [
        ("metric compared", f"{settings.metric} ({better} is better)"),
        ("positive class", _positive_words(page)),
        ("design", design),
        ("test of the verdict", tests),
        ("significance level α", f"{settings.alpha:g}"),
        ("intervals", f"{level_text(settings.alpha)} (1 − α), under the deciding test's variance"),
        (
            "adjustment (verdict)",
            "none: posterior probabilities are not adjusted"
            if used and all(t.lower().startswith("bayes") for t in used)
            else f"{ADJUST_WORDS.get(adjust or 'holm')} over the k − 1 comparisons with the best",
        ),
        (
            "adjustment (pairwise tables)",
            ADJUST_WORDS.get(adjust, "none")
            if adjust
            else "none: each pair's p-value on its own; reject is p ≤ α",
        ),
        ("ROPE", rope),
        ("seed", f"{settings.seed} (the Bayesian signed-rank test's posterior samples)"),
        (
            "threshold",
            f"{settings.threshold:g} (the error of a binary log without a class column; "
            "otherwise the arg-max class)",
        ),
        (
            "weight",
            f"column {settings.weight} (case weights of the metrics)"
            if settings.weight
            else "none: every sample counts once",
        ),
    ]


def settings_section(page: PageInput) -> str:
    """Every setting the page used: test, α, adjustment, ROPE, seed, folds, threshold, weight."""
    items = settings_items(page)
    body = (
        '<dl class="settings">'
        + "".join(f"<dt>{html.escape(k)}</dt><dd>{html.escape(v)}</dd>" for k, v in items)
        + "</dl>"
    )
    how = (
        "Every choice behind the numbers on this page; two runs with these settings write "
        "identical files."
    )
    return _section(2, "settings", "Settings", how, body)


# --------------------------------------------------------------------- sections


def evaluated(page: PageInput) -> str:
    """What was evaluated: data sets, kind, what the AUC is, rows, models, folds, nulls."""
    folds = page.tables["folds"]
    nulls = [c for c in ("n_null_score", "n_null_label") if c in folds.columns]
    dropped = (
        folds.group_by(page.by).agg(pl.col(nulls).sum())
        if page.by
        else folds.select(pl.col(nulls).sum())
    )
    auc = [quantity("auc", row) for row in page.kinds.iter_rows(named=True)]
    overview = page.kinds.with_columns(
        kind=pl.when("multiclass")
        .then(pl.format("multiclass ({} classes)", "n_labels"))
        .otherwise(
            pl.format(
                "binary (positive: {})",
                pl.col("_pr_positive").cast(pl.String).fill_null("label true"),
            )
        ),
        auc_is=pl.Series(auc, dtype=pl.String),
    ).drop("multiclass", "n_labels", "_pr_positive", "n_class_values", strict=False)
    if page.by:
        overview = overview.join(dropped, on=page.by).sort(page.by)
    else:
        overview = overview.hstack(dropped)
    source = f" read from <code>{html.escape(page.source)}</code>" if page.source else ""
    how = (
        f"The log{source}: one row per (model, fold, sample, class) score. Rows with a null "
        "score or label are dropped from the metrics and counted here. Each data set is "
        "judged on its own: binary when its label has two values, multiclass otherwise. "
        "<code>auc_is</code> names what the per-fold <code>auc</code> is: Hand &amp; Till's "
        "M — the mean over class pairs of A(i, j) — for a multiclass data set and for a "
        "two-class log that holds both classes' scores (there the mean of the two classes' "
        "AUCs, which differ when scores tie in one class's column only); the AUC of the "
        "positive class when only its scores are logged. Tables and figures that read one "
        "class (pooling, ROC and precision–recall curves, Brier score) read the positive "
        "class and say so."
    )
    notes = "".join(f'<p class="note">{html.escape(n)}</p>' for n in page.notes)
    return _section(2, "evaluated", "What was evaluated", how, table_html(overview) + notes)


def _with_ci(
    page: PageInput, summary: pl.DataFrame, key: Mapping[str, object]
) -> tuple[pl.DataFrame, str]:
    """The summary with the verdict's interval of the compared metric beside it, and its name."""
    rows = _verdict_rows(page, key)
    if rows is None or rows.is_empty() or not {"ci_low", "ci_high"} <= set(rows.columns):
        return summary, ""
    m = page.metric
    low, high = pl.col("ci_low"), pl.col("ci_high")
    bounds = metric_bounds(m)
    if bounds is not None:  # a rate or an AUC lies in its range; a t interval may not
        low, high = low.clip(*bounds), high.clip(*bounds)
    ci = rows.select(page.model, low.alias(f"{m}_ci_low"), high.alias(f"{m}_ci_high"))
    ci = ci.with_columns(pl.col(page.model).cast(summary.schema[page.model]))
    joined = summary.join(ci, on=page.model, how="left", maintain_order="left")
    after = f"{m}_mean" if f"{m}_mean" in joined.columns else joined.columns[-3]
    cols = [c for c in joined.columns if c not in (f"{m}_ci_low", f"{m}_ci_high")]
    at = cols.index(after) + 1
    tests = _tests(rows)
    name = interval_name(page.alpha, tests[0] if tests else None)
    return joined.select([*cols[:at], f"{m}_ci_low", f"{m}_ci_high", *cols[at:]]), name


def summary(page: PageInput, key: Mapping[str, object], anchor_id: str) -> str:
    """Per model: mean, its interval and sd over folds of the AUC (or M), sAUC and error."""
    m = page.metric
    auc = quantity("auc", _kind(page, key))
    table, interval = _with_ci(page, _need(page, "summary", key), key)
    how = (
        f"Per model, the mean and standard deviation over folds of <code>auc</code> — here "
        f"{html.escape(auc)} (Bradley 1997; Hand &amp; Till 2001) — the scored AUC (Wu &amp; "
        "Flach 2005) and the error rate"
    )
    if interval:
        how += (
            f", with the verdict's {html.escape(interval)} interval of the mean "
            f"{html.escape(m)} (<code>{html.escape(m)}_ci_low</code>, "
            f"<code>{html.escape(m)}_ci_high</code>; clipped to the metric's range)"
        )
    how += f"; best first by mean {html.escape(quantity(m, _kind(page, key)))}."
    ap = ["average_precision_mean", "average_precision_sd"]
    if ap[0] in table.columns and table[ap[0]].null_count() == table.height:
        table = table.drop(ap, strict=False)  # a multiclass data set has none
    if ap[0] in table.columns:
        positive = (_kind(page, key) or {}).get("_pr_positive")
        of = f" of class {positive}" if positive is not None else ""
        how += f" <code>average_precision</code> is the average precision{html.escape(of)}."
    table, pooled = _with_pooled(page, table, key)
    if pooled:
        how += (
            f" <code>auc_pooled</code> is the {html.escape(auc)} of every fold's test samples "
            f"pooled, with DeLong's {level_text(page.alpha)} interval "
            "(<code>auc_pooled_ci_low</code>, "
            "<code>auc_pooled_ci_high</code>; DeLong, DeLong &amp; Clarke-Pearson 1988, for M "
            "from the structural components of all its directions): how precisely the test "
            "samples pin the model's ranking down, where the fold interval says how much it "
            "varies from one training set to the next."
        )
    table, scored = _with_scores(page, table, key)
    if scored:
        how += (
            " The scores are probabilities: <code>brier_mean</code> and "
            "<code>log_loss_mean</code> are the Brier score and log loss averaged over folds "
            "(lower is better; see Calibration)."
        )
    return _section(3, anchor_id, "Per-model summary", how, table_html(table))


def _with_pooled(
    page: PageInput, summary: pl.DataFrame, key: Mapping[str, object]
) -> tuple[pl.DataFrame, bool]:
    """The summary with the pooled AUC (M) and its DeLong interval beside each model."""
    pooled = _select(page.tables.get("pooled_interval"), key)
    if pooled is None or pooled.is_empty() or page.model not in summary.columns:
        return summary, False
    wanted = ["auc_pooled", "auc_pooled_ci_low", "auc_pooled_ci_high"]
    pooled = pooled.select(pl.col(page.model).cast(summary.schema[page.model]), *wanted)
    return summary.join(pooled, on=page.model, how="left", maintain_order="left"), True


def _with_scores(
    page: PageInput, summary: pl.DataFrame, key: Mapping[str, object]
) -> tuple[pl.DataFrame, bool]:
    """The summary with the mean over folds of the Brier score and log loss, when shown.

    Only for a data set with a calibration section (its scores are probabilities).
    """
    shown = _select(page.tables.get("calibration"), key)
    folds = _select(page.tables.get("folds"), key)
    if shown is None or shown.is_empty() or folds is None or page.model not in summary.columns:
        return summary, False
    wanted = [c for c in ("brier", "log_loss") if f"{c}_mean" not in summary.columns]
    if not wanted:
        return summary, True
    means = folds.group_by(page.model).agg(pl.col(c).mean().alias(f"{c}_mean") for c in wanted)
    means = means.with_columns(pl.col(page.model).cast(summary.schema[page.model]))
    return summary.join(means, on=page.model, how="left", maintain_order="left"), True


def _need(page: PageInput, name: str, key: Mapping[str, object]) -> pl.DataFrame:
    table = _select(page.tables.get(name), key)
    return table if table is not None else pl.DataFrame()


def _frame_or_none(value: pl.DataFrame | str | None) -> pl.DataFrame | None:
    return value if isinstance(value, pl.DataFrame) else None


def _comparisons(page: PageInput, rows: pl.DataFrame) -> pl.DataFrame:
    """The verdict's rows of one data set as a table: each model against the best."""
    wanted = ["model", "rank", "mean", "ci_low", "ci_high", "p_vs_best", "effect_size",
              "magnitude", "tied_with_best", "n"]  # fmt: skip
    names = [page.model if w == "model" else w for w in wanted]
    table = rows.select([c for c in names if c in rows.columns]).sort("rank", page.model)
    if (table["rank"].drop_nulls().drop_nans() % 1 == 0).all():  # whole ranks read "2"
        table = table.with_columns(pl.col("rank").cast(pl.Int64))
    bounds = metric_bounds(page.metric)
    if bounds is not None and {"ci_low", "ci_high"} <= set(table.columns):
        table = table.with_columns(pl.col("ci_low", "ci_high").clip(*bounds))
    return table


TEST_HOW = {
    "paired_ttest": (
        "the k-fold paired t test on each pair's fold differences (Dietterich 1998; Aslan, "
        "Yıldız &amp; Alpaydın 2009, eqs. 1–2)"
    ),
    "corrected": (
        "the corrected repeated k-fold t test (Nadeau &amp; Bengio 2003; Bouckaert &amp; Frank "
        "2004): the folds come from repeated cross-validation and share training data, so "
        "the variance is corrected for their overlap"
    ),
    "combined_ftest_5x2cv": (
        "Alpaydın's (1999) combined 5×2 cv F test on the ten fold differences of the five "
        "repeats of two folds"
    ),
    "bayes_ttest": (
        "the correlated Bayesian t test (Corani &amp; Benavoli 2015): posterior probabilities, "
        "not p-values"
    ),
}


def deciding(page: PageInput, key: Mapping[str, object], anchor_id: str) -> str:
    """The test the verdict used on this data set: its comparisons with the best, every pair.

    The verdict's own rows (each model against the best, with its adjusted p-value and
    effect size), then the same test on every pair where the report has its table
    (paired or corrected t, combined 5×2 cv F, correlated Bayesian t) with the p-value
    map; on one test set the verdict's rows alone.
    """
    settings = _settings(page)
    rows = _verdict_rows(page, key)
    tests = _tests(rows)
    test = tests[0] if tests else None
    named = "; ".join(name_of_test(t) for t in tests) or "no test"
    m = html.escape(page.metric)
    title = f"Deciding test: {name_of_test(test) if test else 'none'} on {page.metric}"
    if rows is None or rows.is_empty():
        how = "No verdict on this data set (see the note under Verdict)."
        return _section(3, anchor_id, title, how, "")
    source = table_of_test(test) if test else None
    adjust = ADJUST_WORDS.get(settings.adjust or "holm", str(settings.adjust))
    interval = interval_name(settings.alpha, test)
    bayes = test is not None and test.lower().startswith("bayes")
    how = (
        f"The verdict compares each model with the best by {html.escape(named)}. "
        + (
            "<code>p_vs_best</code> is 1 − P(the best is practically better): the posterior "
            "probability that the model is practically equivalent or better (not adjusted). "
            if bayes
            else f"<code>p_vs_best</code> is that test's p-value, {adjust}-adjusted over the "
            "k − 1 comparisons with the best; "
        )
        + f"<code>ci_low</code>, <code>ci_high</code> are the {html.escape(interval)} interval "
        f"of the model's mean {m}"
        + (
            "; <code>effect_size</code> is Cohen's d against the best (the pooled SD of the "
            "two models' values) and <code>magnitude</code> its size in words (autorank: "
            "negligible &lt; 0.2 ≤ small &lt; 0.5 ≤ medium &lt; 0.8 ≤ large)"
            if "effect_size" in rows.columns
            else ""
        )
        + "."
    )
    body = table_html(_comparisons(page, rows))
    pairs = None
    if source == "paired_ttest":
        pairs = _need(page, "paired_ttest", key)
    elif source is not None:
        pairs = _select(_frame_or_none(page.optional.get(source)), key)
    if pairs is not None and not pairs.is_empty():
        which = "corrected" if test and "corrected" in test else source
        described = TEST_HOW.get(which or "", html.escape(named))
        lower = (
            "" if settings.higher_is_better else f" (for {m}, a negative value means a is better)"
        )
        every = (
            f"<p class='how'>The same test on every pair: {described}. "
            f"<code>estimate</code> is a − b{lower}; "
        )
        if bayes:
            every += html.escape(bayes_regions(settings.metric, settings.higher_is_better))
            every += f" (ROPE ±{page.used.get('bayes_ttest', {}).get('rope', settings.rope):g})."
        elif settings.adjust and "p_adjusted" in pairs.columns:
            adjusted = ADJUST_WORDS.get(settings.adjust, settings.adjust)
            every += (
                f"<code>p_adjusted</code> is {adjusted}'s "
                f"adjustment over all {pairs.height} pairs, and <code>reject</code> is true when "
                f"p_adjusted ≤ {page.alpha:g}."
            )
        else:
            every += f"<code>reject</code> is true when p ≤ {page.alpha:g} (no adjustment)."
        every += (
            " These rows compare every pair"
            + ("" if bayes else ", unadjusted for the comparisons with the best")
            + "; where one and the verdict differ, the verdict counts.</p>"
        )
        body += every + table_html(pairs) + _fig(page, "p_values", key, "p-value map")
        if bayes:
            body += _fig(page, "bayes_ttest", key, "posterior of the Bayesian t test")
    elif source is None and test is not None:
        body += (
            "<p class='how'>One test set: the models are compared sample by sample on the "
            "log, each with the best; there are no folds to test every pair on.</p>"
        )
    return _section(3, anchor_id, title, how, body)


def figures(page: PageInput, key: Mapping[str, object], anchor_id: str, multiclass: bool) -> str:
    """The figures of one data set: every model on one ROC axis, the per-fold values, …."""
    settings = _settings(page)
    kind = _kind(page, key)
    auc = html.escape(quantity("auc", kind))
    rows = _verdict_rows(page, key)
    tests = _tests(rows)
    interval = interval_name(settings.alpha, tests[0] if tests else None)
    if settings.metric != "auc":
        interval += " (the verdict's test on the AUC)"
    parts = []
    if not multiclass:
        positive = (kind or {}).get("_pr_positive")
        of = f" of class {html.escape(str(positive))}" if positive is not None else ""
        parts.append(
            f"<p class='how'>Every model's ROC curve{of} (vertical average over folds) on one "
            f"axis; the legend gives the mean {auc} over folds with its "
            f"{html.escape(interval)} interval, best first (as scikit-learn's RocCurveDisplay "
            "and pROC draw them).</p>" + _fig(page, "roc_overlay", key, "ROC curves of every model")
        )
    else:
        parts.append(
            "<p class='how'>Every model on one axis: its one-vs-rest macro-average ROC curve — "
            "each class's scores ranking its own samples against all others (folds pooled), "
            "the classes' curves averaged vertically. The curve's area is the macro "
            f"one-vs-rest AUC; the legend gives {auc}, the verdict's quantity, with its "
            f"{html.escape(interval)} interval, best first.</p>"
            + _fig(page, "roc_overlay", key, "ROC curves of every model")
        )
    better = "higher" if settings.higher_is_better else "lower"
    parts.append(
        f"<p class='how'>Each box spans the folds' {html.escape(page.metric)} of one model "
        f"({better} is better), dots are the folds; best first. Wide boxes mean the "
        "fold-to-fold variation is large next to the differences between models (Aslan, "
        "Yıldız &amp; Alpaydın 2009).</p>"
        + _fig(page, f"{page.metric}_per_fold", key, "per-fold values")
    )
    if not multiclass:
        parts.append(
            "<p class='how'>Per model, grey: each fold's ROC curve; blue: the vertical average "
            "over folds with its band; dashed: the curve of all folds' scores pooled (Bradley "
            "1997 compares pooling with averaging).</p>"
            + _fig(page, "roc", key, "ROC curves per fold")
        )
        if figure_key("pr", key) in page.figures:
            parts.append(
                "<p class='how'>Precision against recall for the same folds (grey) and pooled "
                "(dashed), drawn as the steps average precision sums (Davis &amp; Goadrich "
                "2006); the dotted line is the share of positives, a random ranking's "
                "precision.</p>" + _fig(page, "pr", key, "precision-recall curves")
            )
    else:
        n = int((kind or {}).get("n_labels") or 0)
        parts.append(
            "<p class='how'>"
            + (
                "One-vs-rest AUC of every model for every class (a cell per model and class; "
                "a grid of curves would be unreadable at this many classes)"
                if n > 6
                else "One-vs-rest ROC curves: for each class, its scores ranking its own "
                "samples against all others (folds pooled), every model on one axis"
            )
            + ".</p>"
            + _fig(page, "roc_ovr", key, "one-vs-rest ROC curves")
        )
        parts.append(
            "<p class='how'>Hand &amp; Till's (2001) pairwise separabilities A(i, j), averaged "
            "over folds, one cell per class pair: a model with a mediocre M (the mean of its "
            "cells) may still separate most class pairs well and confuse only a few (dark "
            "cells).</p>" + _fig(page, "pairwise", key, "pairwise separabilities")
        )
    return _section(3, anchor_id, "Figures", "", "".join(parts))


def calibration_section(page: PageInput, key: Mapping[str, object], anchor_id: str) -> str:
    """How well the scores read as probabilities: the table and the reliability diagram.

    Only for a data set whose scores are all probabilities (it has rows in the
    ``calibration`` table); "" otherwise. A binary data set's is its positive class's, a
    multiclass one's the top label's.
    """
    table = _select(page.tables.get("calibration"), key)
    if table is None or table.is_empty():
        return ""
    kind = _kind(page, key) or {}
    multiclass = bool(kind.get("multiclass"))
    weight = _settings(page).weight
    positive = kind.get("_pr_positive")
    of = (
        ", summed over the classes, and the log loss of the true class's score"
        if multiclass
        else f" and the log loss of class {html.escape(str(positive))}"
        if positive is not None
        else " and the log loss"
    )
    how = (
        "The scores are probabilities, so their calibration can be judged: all folds pooled, "
        "per model the Brier score (the mean squared gap between score and outcome; Brier "
        f"1950){of}; lower is better for both, best (lowest Brier score) first. "
        f"ECE, the expected calibration error, is the gap between the mean score and the "
        f"share of positives in each of {CALIBRATION_BINS} equal-width score bins, averaged "
        "with the bins' counts as weights; MCE is the largest gap (Guo et al. 2017; with "
        "three or more classes on the top label: each sample's highest score against "
        "whether its class is the label)."
        + CALIBRATION_BEYOND
        + (f" Unweighted: the weight column {html.escape(weight)} is not used here." if weight
           else "")
    )  # fmt: skip
    body = table_html(table)
    if figure_key("calibration", key) in page.figures:
        what = (
            "of the top label: per model the share of samples whose highest-scoring class is "
            "their label, against the mean of that highest score, per bin"
            if multiclass
            else f"of class {html.escape(str(positive))}: per model the share of positives "
            "against the mean score of each bin"
        )
        body += (
            f"<p class='how'>Reliability diagram {what}, grey per fold, coloured for the "
            "folds pooled with the band of the folds' range; a calibrated model lies on the "
            "dashed diagonal, and a point below it means "
            + ("fewer right answers" if multiclass else "fewer positives")
            + " than the scores promise (scores too high). The bars count the samples per "
            "bin: a point from few samples is weak evidence.</p>"
            + _fig(page, "calibration", key, "reliability diagram")
        )
    return _section(3, anchor_id, "Calibration", how, body)


CALIBRATION_BEYOND = (
    " For two classes also the logistic recalibration logit P(positive) = a + b·logit(score) "
    "(Cox 1958; R's rms::val.prob): <code>calibration_slope</code> is b, best at 1 (below 1: "
    "scores too extreme, as an overfitted model gives; above 1: too timid), and "
    "<code>calibration_intercept</code> is a with b held at 1, calibration in the large, best "
    "at 0 (below 0: scores too high on average); scores of exactly 0 or 1 are left out of "
    "both fits, and a fit that does not exist (the scores separate the classes) is empty. "
    "<code>spiegelhalter_z</code> and <code>spiegelhalter_p</code> test whether the scores are "
    "the true probabilities (Spiegelhalter 1986; z is standard normal if they are). "
    "<code>reliability</code> (lower is better), <code>resolution</code> (higher is better) and "
    "<code>uncertainty</code> (the base rate's, the same for every model) decompose the Brier "
    "score on the ECE's bins (Murphy 1973): reliability − resolution + uncertainty is the Brier "
    "score when the scores are constant within bins. Empty for three or more classes."
)
"""The calibration section's words on the columns beyond the ECE."""


def decision_curve_section(page: PageInput, key: Mapping[str, object], anchor_id: str) -> str:
    """Net benefit of acting on the probabilities: a table at a few thresholds and the curves.

    Only for a binary data set whose scores are all probabilities (it has rows in the
    ``decision_curve`` table); "" otherwise.
    """
    table = _select(page.tables.get("decision_curve"), key)
    if table is None or table.is_empty():
        return ""
    how = (
        "The scores are probabilities of the positive class, so they can be acted on: treating "
        "a sample when its score reaches a threshold probability p<sub>t</sub> values a missed "
        "positive at (1 − p<sub>t</sub>)/p<sub>t</sub> unnecessary treatments. The net benefit "
        "counts the true positives less the false positives at that rate, TP/n − FP/n · "
        "p<sub>t</sub>/(1 − p<sub>t</sub>) (Vickers &amp; Elkin 2006), computed per fold at "
        "p<sub>t</sub> = 0.01, …, 0.99. A model is worth using where it beats both treating "
        "everyone and treating no one (net benefit 0). The table gives the mean over folds at "
        "a few thresholds, best model first; the figure each model's mean over folds with a "
        "band of ±1 standard deviation of the folds (the spread of one fold's curve, not an "
        "interval for the mean)."
    )
    body = table_html(net_benefit_summary(table, page.model)) + _fig(
        page, "decision_curve", key, "decision curves"
    )
    return _section(3, anchor_id, "Decision curve", how, body)


Section = Callable[[PageInput, Mapping[str, object], str, bool], str]

DATASET_SECTIONS: list[tuple[str, Section]] = [
    ("summary", lambda page, key, tag, multi: summary(page, key, tag)),
    ("paired", lambda page, key, tag, multi: deciding(page, key, tag)),
    ("figures", lambda page, key, tag, multi: figures(page, key, tag, multi)),
    ("calibration", lambda page, key, tag, multi: calibration_section(page, key, tag)),
    ("decision-curve", lambda page, key, tag, multi: decision_curve_section(page, key, tag)),
]
"""Each data set's sections in reading order, as (id prefix, builder).

A builder gets the page, the data set's key (column → value), its section id
(``<prefix>-<data set>``) and whether it is multiclass, and returns HTML ("" for a
section the data set does not have). A new per-data-set section is one more entry.
"""


def dataset_sections(page: PageInput, key: Mapping[str, object], multiclass: bool) -> str:
    """One data set in reading order: summary with CIs, the deciding test, the figures, …."""
    tag = anchor(*key.values()) if key else "log"
    return "".join(build(page, key, f"{prefix}-{tag}", multiclass)
                   for prefix, build in DATASET_SECTIONS)  # fmt: skip


TITLES = {
    "mean_ranks": "Mean ranks",
    "friedman_test": "Friedman's test",
    "nemenyi_test": "Nemenyi's test",
    "wilcoxon_test": "Wilcoxon's signed-rank test",
    "sign_test": "Sign test",
    "bayes_signed_rank": "Bayesian signed-rank test",
    "paired_ttest_5x2cv": "5×2 cv paired t test",
    "combined_ftest_5x2cv": "Combined 5×2 cv F test",
    "bayes_ttest": "Correlated Bayesian t test",
}


def _across_text(page: PageInput) -> dict[str, str]:
    settings = _settings(page)
    metric = html.escape(settings.metric)
    if settings.higher_is_better:
        wins = (
            "how many data sets each model of a pair wins (the higher value); "
            "<code>estimate</code> is positive when a wins more"
        )
    else:
        wins = (
            f"how many data sets each model of a pair wins — the lower {metric} wins "
            "(<code>wins_a</code> counts the data sets where a's is lower); "
            "<code>estimate</code> is positive when a wins more"
        )
    used = page.used.get("bayes_signed_rank", {})
    rope = used.get("rope", settings.rope if settings.rope is not None else BAYES_ROPE)
    seed = used.get("seed", settings.seed)
    regions = html.escape(bayes_regions(settings.metric, settings.higher_is_better))
    return {
        "mean_ranks": "Mean ranks over data sets (1 = best) with Nemenyi's critical difference.",
        "friedman_test": "Friedman's test that all models perform alike over the data sets "
        "(χ² and Iman–Davenport's F; Demšar 2006, §3.2.2).",
        "nemenyi_test": "Nemenyi's post-hoc test: two models differ when their mean ranks "
        "differ by at least the critical difference.",
        "wilcoxon_test": "Wilcoxon's signed-rank test on each pair's per-data-set differences "
        "(Demšar 2006, §3.1.3).",
        "sign_test": f"The sign test: {wins} (Demšar 2006, §3.1.2).",
        "bayes_signed_rank": f"The Bayesian signed-rank test (Benavoli et al. 2014, 2017) "
        f"with ROPE ±{rope:g}: posterior probabilities — {regions}. Seeded, so two runs "
        f"agree (seed {seed}).",
    }


def _optional(page: PageInput, names: Mapping[str, str], prefix: str) -> str:
    parts = []
    for name, how in names.items():
        result = page.optional.get(name)
        if result is None:
            continue
        body = (
            table_html(result)
            if isinstance(result, pl.DataFrame)
            else f'<p class="note">Not computed: {html.escape(result)}</p>'
        )
        if name == "bayes_signed_rank":
            body += _fig(page, name, (), "posterior of the Bayesian signed-rank test")
        title = TITLES.get(name, name)
        parts.append(
            f'<section id="{prefix}{name}"><h3>{title}</h3><p class="how">{how}</p>{body}</section>'
        )
    return "".join(parts)


def across(page: PageInput) -> str:
    """Across data sets: mean ranks, Friedman, Nemenyi and the CD diagram, Wilcoxon, …."""
    rows = page.verdict if isinstance(page.verdict, pl.DataFrame) else None
    if rows is not None and page.dataset in rows.columns:
        rows = rows.filter(pl.col(page.dataset).is_null())
    named = "; ".join(name_of_test(t) for t in _tests(rows)) or "Friedman's test"
    how = (
        f"Each model's {html.escape(page.metric)} is averaged over the folds of every data "
        "set; the tests then treat data sets as the samples, as Demšar (2006) recommends for "
        "comparing classifiers over several data sets. These tables are across data sets and "
        "have no data set column. In the critical-difference diagram models joined by a "
        "thick bar are not separated by the Nemenyi test; the verdict across data sets is "
        f"{html.escape(named)}."
    )
    body = (
        _fig(page, "cd", (), "critical-difference diagram")
        + CD_NOTE
        + _optional(page, _across_text(page), "")
    )
    return _section(2, "across", "Across data sets", how, body)


def _appendix_parts(page: PageInput) -> list[tuple[str, str, str]]:
    """(id, title, html) of every table not shown above, per data set inside each."""
    settings = _settings(page)
    repeated = "repeat" in page.tables["folds"].columns or (page.design or (1, 1))[0] > 1
    uncorrected = (
        "<b>Uncorrected</b>: on repeated cross-validation the ANOVA and Duncan's test treat "
        "the (repeat, fold) blocks as independent, ignoring that they share training data, "
        "so they declare differences too readily (Nadeau &amp; Bengio 2003). "
        if repeated
        else ""
    )
    direction = (
        ""
        if settings.higher_is_better
        else f" For {html.escape(settings.metric)} lower is better: Duncan's group <code>a</code> "
        "holds the highest mean, the worst."
    )
    keys = (
        [{b: row[b] for b in page.by} for row in page.kinds.iter_rows(named=True)]
        if page.by
        else [{}]
    )

    def per_set(name: str, figure: str = "", alt: str = "") -> str:
        return _per_set(page, keys, page.tables.get(name), figure, alt)

    deciding_sources = {
        table_of_test(t)
        for t in _tests(page.verdict if isinstance(page.verdict, pl.DataFrame) else None)
    }
    items = []
    if "paired_ttest" not in deciding_sources:
        paired = "corrected repeated k-fold t" if repeated else "k-fold paired t"
        items.append((
            "appendix-paired",
            f"{paired[0].upper()}{paired[1:]} tests on every pair (not the verdict's test)",
            f"The {paired} test on every pair; the verdict decided by another test, shown "
            "under each data set's Deciding test; where these rows disagree with it, the "
            "verdict counts.",
            per_set("paired_ttest"),
        ))  # fmt: skip
    items += [
        (
            "appendix-anova",
            "Two-way ANOVA",
            uncorrected + f"A two-way analysis of variance of "
            f"{html.escape(page.metric)} with models and folds as factors (folds as blocks; "
            "Bradley 1997, §4). It tests all models at once and does not decide the verdict; "
            "where it disagrees, the verdict counts.",
            per_set("anova"),
        ),
        (
            "appendix-duncan",
            "Duncan's multiple range test",
            uncorrected + "Models sharing a "
            "letter in <code>groups</code> are not separated by Duncan's test (Bradley 1997, "
            "§5), which does not decide the verdict; where its groups disagree with the "
            f"verdict, the verdict counts.{direction}",
            per_set("duncan", "duncan", "Duncan's groups"),
        ),
        (
            "appendix-duncan-ranges",
            "Duncan's least significant ranges",
            "The critical range R_p for p means in a row (Duncan's step-down).",
            per_set("duncan_ranges"),
        ),
        (
            "appendix-agreement",
            "AUC test against error test",
            "Within each data set, do the paired t tests on the AUC and on the error rate reach "
            "the same decision for each pair? (Bradley 1997 argues the AUC test is the more "
            "powerful.) Neither decides the verdict.",
            per_set("agreement"),
        ),
        (
            "appendix-pooling",
            "Pooling against averaging",
            "The pooled AUC of the positive class (all folds' scores in one ranking, "
            "<code>class</code> names it) against the mean of the folds' AUCs of that class: "
            "when scores are not calibrated alike across folds the pooled AUC falls below "
            "(<code>pooling_bias</code>; Bradley 1997). These are AUCs of one class, not M.",
            per_set("pooling"),
        ),
        (
            "appendix-se-vs-sd",
            "Standard error against the spread over folds",
            "The standard error of one fold's AUC of the positive class (Hanley &amp; McNeil) "
            "against the spread of the AUC over folds (<code>ratio</code> near 1 when the "
            "analytic SE describes fold-to-fold variation); <code>correlation</code> is one "
            "value per data set, Pearson's r of <code>mean_se</code> and <code>sd</code> over "
            "its models, repeated on each of its rows (Bradley 1997, §9.3.2).",
            per_set("se_vs_sd"),
        ),
    ]
    design = {
        "paired_ttest_5x2cv": "Dietterich's (1998) 5×2 cv paired t test.",
        "combined_ftest_5x2cv": "Alpaydın's (1999) combined 5×2 cv F test, the verdict's test "
        "on a 5 × 2 design (shown under each data set's Deciding test).",
    }
    for name, how in design.items():
        result = page.optional.get(name)
        if result is None:
            continue
        if isinstance(result, pl.DataFrame):
            body = _per_set(page, keys, result)
        else:
            body = f'<p class="note">Not computed: {html.escape(result)}</p>'
        items.append((f"appendix-{name}", TITLES[name], how, body))
    return [(i, t, f'<p class="how">{h}</p>{b}') for i, t, h, b in items if b]


def _per_set(
    page: PageInput,
    keys: list[dict[str, Any]],
    table: pl.DataFrame | None,
    figure: str = "",
    alt: str = "",
) -> str:
    """``table``'s rows of each data set under the data set's name (and its ``figure``)."""
    parts = []
    for key in keys:
        rows = _select(table, key)
        if rows is None or rows.is_empty():
            continue
        title = f"<h4>{html.escape(', '.join(str(v) for v in key.values()))}</h4>" if key else ""
        parts.append(title + table_html(rows) + (_fig(page, figure, key, alt) if figure else ""))
    return "".join(parts)


def appendix(page: PageInput) -> str:
    """Every other table, each under its own heading (listed in the contents)."""
    parts = "".join(
        f'<section id="{i}"><h3>{html.escape(t)}</h3>{b}</section>'
        for i, t, b in _appendix_parts(page)
    )
    how = "The remaining tables, for the record; none of them changes the verdict."
    return _section(2, "appendix", "Appendix: every other table", how, parts)


def _nav(body: str) -> str:
    """Contents: a link to every section of the page, in order, sub-sections inside theirs."""
    found = re.findall(r'<section id="([^"]+)"[^>]*><h([23])>(.*?)</h[23]>', body)
    if len(found) > 30:  # many data sets: their sections only, and the appendix's tables
        found = [e for e in found if e[1] == "2" or e[0].startswith("appendix-")]
    items: list[str] = []
    inner: list[str] = []

    def close() -> None:
        if inner and items:
            items[-1] = items[-1].removesuffix("</li>") + f"<ul>{''.join(inner)}</ul></li>"
        inner.clear()

    for a, level, title in found:
        link = f'<a href="#{a}">{title}</a>'
        if level == "2":
            close()
            items.append(f"<li>{link}</li>")
        else:
            inner.append(f"<li>{link}</li>")
    close()
    return f"<nav><ul>{''.join(items)}</ul></nav>"


def report_page(page: PageInput) -> str:
    """The whole page as one HTML string (no external resources), in reading order.

    The verdict, the settings, what was evaluated, each data set (summary with CIs,
    the deciding test, the figures), the comparisons across data sets, and an appendix
    of every other table. The same input gives the same text.

    Examples
    --------
    >>> import polars as pl
    >>> from polaroc.report.html import PageInput, report_page
    >>> folds = pl.DataFrame({"model": ["a", "b"], "fold": [0, 0], "n_null_score": [0, 1]})
    >>> kinds = pl.DataFrame({"n_rows": [4], "n_labels": [2], "n_models": [2], "n_folds": [1],
    ...                       "_pr_positive": [None], "multiclass": [False]})
    >>> text = report_page(PageInput({"folds": folds}, {}, {}, kinds, [], "auc", 0.05))
    >>> text.index('id="verdict"') < text.index('id="settings"') < text.index('id="evaluated"')
    True
    """
    global _ids  # table ids restart on every page: two runs, one text
    _ids = itertools.count()
    body = [verdict_section(page), settings_section(page), evaluated(page)]
    if page.by:
        for row in page.kinds.iter_rows(named=True):
            key = {b: row[b] for b in page.by}
            title = ", ".join(str(v) for v in key.values())
            inner = dataset_sections(page, key, bool(row["multiclass"]))
            body.append(
                f'<section id="dataset-{anchor(*key.values())}" class="dataset">'
                f"<h2>Data set {html.escape(title)}</h2>{inner}</section>"
            )
    else:
        inner = dataset_sections(page, {}, bool(page.kinds["multiclass"][0]))
        body.append(f'<section id="results" class="dataset"><h2>Results</h2>{inner}</section>')
    if page.dataset in page.by and page.kinds.height >= 2:
        body.append(across(page))
    body.append(appendix(page))
    settings = _settings(page)
    title = "polaroc report"
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{title}</title><style>{STYLE}</style></head><body>"
        f"<h1>{title}</h1><p class='how'>Comparison of classifiers from their logged "
        f"scores on {html.escape(metric_words(settings.metric))} at α = {settings.alpha:g}.</p>"
        + _nav("".join(body))
        + "".join(body)
        + "</body></html>\n"
    )


# --------------------------------------------------------------------- the terminal


def terminal_tables(page: PageInput) -> list[tuple[str, pl.DataFrame]]:
    """The tables the command line prints after the verdict, each titled with its standing.

    The summary, then the deciding test on every pair (labelled unadjusted, or not the
    verdict's test), the ANOVA and Duncan's groups (labelled as not deciding, and
    uncorrected on repeated cross-validation): every table that can disagree with the
    verdict says so in its title.
    """
    settings = _settings(page)
    m = settings.metric
    out: list[tuple[str, pl.DataFrame]] = []
    if "summary" in page.tables:
        out.append(("per model: mean and sd over folds, best first", page.tables["summary"]))
    verdict = page.verdict if isinstance(page.verdict, pl.DataFrame) else None
    sources = {table_of_test(t) for t in _tests(verdict)}
    repeated = "repeat" in page.tables["folds"].columns or (page.design or (1, 1))[0] > 1
    adjust = ADJUST_WORDS.get(settings.adjust or "holm", str(settings.adjust))
    if "paired_ttest" in page.tables:
        test = "corrected repeated k-fold t" if repeated else "paired t"
        unadjusted = "" if settings.adjust else "unadjusted, "
        standing = (
            f"{unadjusted}every pair; the verdict compares each model with the best, "
            f"{adjust}-adjusted, and counts where they differ"
            if "paired_ttest" in sources
            else "not the verdict's test; where it differs, the verdict counts"
        )
        out.append((f"{test} tests on {m} ({standing})", page.tables["paired_ttest"]))
    uncorrected = "uncorrected for the overlapping repeats; " if repeated else ""
    if "anova" in page.tables:
        out.append((
            f"two-way ANOVA of {m}, models x folds ({uncorrected}all models at once; does not "
            "decide the verdict)",
            page.tables["anova"],
        ))  # fmt: skip
    if "duncan" in page.tables:
        out.append((
            f"Duncan's multiple range test on {m} ({uncorrected}does not decide the verdict; "
            "where its groups differ from it, the verdict counts)",
            page.tables["duncan"],
        ))  # fmt: skip
    return out
