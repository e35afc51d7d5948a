"""``index.html``: the report as one self-contained page, laid out as a reader goes.

Tables are rendered by great_tables (which speaks Polars), figures are the report's
PNG files embedded as ``data:`` URIs, and the style sheet is inline: the page makes no
network request, so it reads offline and can be attached to an email. Each section is
a small function returning HTML; :func:`report_page` puts them in order.
"""

from __future__ import annotations

import base64
import html
import itertools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

__all__ = ["PageInput", "report_page", "table_html"]

_ids = itertools.count()

STYLE = """
body { font-family: -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif;
       color: #222; margin: 0 auto; max-width: 1100px; padding: 1.5em 2em 4em; line-height: 1.45; }
h1 { font-size: 1.7em; margin-bottom: 0.2em; }
h2 { font-size: 1.35em; border-bottom: 2px solid #ddd; padding-bottom: 0.2em; margin-top: 2em; }
h3 { font-size: 1.1em; margin-top: 1.6em; }
p.how { color: #444; max-width: 60em; }
p.note { color: #8a4b00; background: #fff6e5; padding: 0.4em 0.7em; border-radius: 4px; }
nav ul { columns: 2; font-size: 0.95em; }
nav li.h3 { margin-left: 1.4em; font-size: 0.95em; }
figure { margin: 0.8em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
.gt_table { margin-left: 0 !important; }
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


def table_html(df: pl.DataFrame, *, max_rows: int = 60) -> str:
    """A table as HTML by great_tables; numbers as in the Markdown tables, nested as text.

    Floats show four decimals, or three significant digits in scientific notation when
    tiny or huge (p-values), and are right-aligned.

    Examples
    --------
    >>> import polars as pl
    >>> from polaroc.report.html import table_html
    >>> text = table_html(pl.DataFrame({"model": ["a"], "auc": [0.912345], "p": [6.4e-10]}))
    >>> "0.9123" in text and "6.4e-10" in text
    True
    """
    from great_tables import GT

    from polaroc.report.tables import cell_text, flat

    shown = flat(df.head(max_rows))
    floats = [n for n, d in shown.schema.items() if d.is_float()]
    shown = shown.with_columns(
        pl.Series(n, [cell_text(v) for v in shown[n].to_list()], dtype=pl.String) for n in floats
    )
    gt = GT(shown, id=f"t{next(_ids)}").sub_missing(missing_text="")
    if floats:
        gt = gt.cols_align("right", columns=floats)
    more = (
        f"<p class='how'>First {max_rows} of {df.height} rows.</p>" if df.height > max_rows else ""
    )
    return str(gt.as_raw_html(inline_css=False)) + more


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


def _select(df: pl.DataFrame | None, key: Mapping[str, object]) -> pl.DataFrame | None:
    """The rows of one data set (``key``: column → value); tables without the columns whole."""
    if df is None:
        return None
    for column, value in key.items():
        if column in df.columns:
            df = df.filter(pl.col(column) == value)
    return df.drop([c for c in key if c in df.columns])


# --------------------------------------------------------------------- sections


def evaluated(page: PageInput) -> str:
    """What was evaluated: data sets, kind, rows, models, folds, repeats, nulls dropped."""
    folds = page.tables["folds"]
    nulls = [c for c in ("n_null_score", "n_null_label") if c in folds.columns]
    dropped = (
        folds.group_by(page.by).agg(pl.col(nulls).sum())
        if page.by
        else folds.select(pl.col(nulls).sum())
    )
    overview = page.kinds.with_columns(
        kind=pl.when("multiclass")
        .then(pl.format("multiclass ({} classes)", "n_labels"))
        .otherwise(
            pl.format(
                "binary (positive: {})",
                pl.col("_pr_positive").cast(pl.String).fill_null("label true"),
            )
        )
    ).drop("multiclass", "n_labels", "_pr_positive")
    if page.by:
        overview = overview.join(dropped, on=page.by).sort(page.by)
    else:
        overview = overview.hstack(dropped)
    source = f" read from <code>{html.escape(page.source)}</code>" if page.source else ""
    how = (
        f"The log{source}: one row per (model, fold, sample, class) score. Rows with a null "
        "score or label are dropped from the metrics and counted here. Each data set is "
        "judged on its own: binary when its label has two values (the positive class is "
        "the last class in sort order), multiclass otherwise."
    )
    notes = "".join(f'<p class="note">{html.escape(n)}</p>' for n in page.notes)
    return _section(2, "evaluated", "What was evaluated", how, table_html(overview) + notes)


def summary(page: PageInput, key: Mapping[str, object], anchor: str) -> str:
    """Per model: mean and sd over folds of AUC (or M), sAUC and error."""
    how = (
        "Per model, the mean and standard deviation over folds of the AUC (Bradley 1997; "
        "for more than two classes Hand &amp; Till's (2001) M), the scored AUC (Wu &amp; "
        "Flach 2005) and the error rate; best mean AUC first."
    )
    return _section(3, anchor, "Per-model summary", how, table_html(_need(page, "summary", key)))


def paired(page: PageInput, key: Mapping[str, object], anchor: str) -> str:
    """Paired t tests on every model pair, with their decisions."""
    table = _need(page, "paired_ttest", key)
    corrected = "repeat" in page.tables["folds"].columns
    how = (
        f"Every pair of models compared on {page.metric} fold by fold: the k-fold "
        "cross-validated paired t test (Aslan, Yıldız &amp; Alpaydın 2009, eqs. 1–2). "
        f"<code>estimate</code> is a − b; <code>reject</code> is true when p ≤ {page.alpha:g}."
    )
    if corrected:
        how += (
            " The folds come from repeated cross-validation, so the test is the corrected "
            "repeated k-fold t (Nadeau &amp; Bengio 2003; Bouckaert &amp; Frank 2004)."
        )
    return _section(3, anchor, f"Paired t tests on {page.metric}", how, table_html(table))


def anova_duncan(page: PageInput, key: Mapping[str, object], anchor: str, suffix: str) -> str:
    """The two-way ANOVA and Duncan's homogeneous subsets."""
    how = (
        f"A two-way analysis of variance of {page.metric} with models and folds as factors "
        "(folds as blocks), then Duncan's multiple range test: models sharing a letter in "
        "<code>groups</code> are not significantly different (Bradley 1997, §4–5)."
    )
    body = (
        table_html(_need(page, "anova", key))
        + table_html(_need(page, "duncan", key))
        + _figure(page.figures.get(f"duncan{suffix}"), "Duncan's groups")
    )
    return _section(3, anchor, "ANOVA and Duncan's groups", how, body)


def distributions(page: PageInput, anchor: str, suffix: str) -> str:
    """Per-fold values of the compared metric, per model."""
    how = (
        f"Each box spans the folds' {page.metric} of one model, dots are the folds; models "
        "ordered by their mean (as in Aslan, Yıldız &amp; Alpaydın 2009). Wide boxes mean "
        "the fold-to-fold variation is large next to the differences between models."
    )
    figure = _figure(page.figures.get(f"{page.metric}_per_fold{suffix}"), "per-fold values")
    return _section(3, anchor, f"Per-fold {page.metric}", how, figure)


def roc(page: PageInput, key: Mapping[str, object], anchor: str, suffix: str) -> str:
    """ROC figures: fold curves, pooled and vertically averaged, and the pooling table."""
    how = (
        "Grey: each fold's ROC curve; blue: the vertical average over folds with its band; "
        "dashed: the curve of all folds' scores pooled. Bradley (1997) compares pooling "
        "with averaging: when scores are not calibrated alike across folds the pooled AUC "
        "falls below the mean of the folds' AUCs (<code>pooling_bias</code> below)."
    )
    body = _figure(page.figures.get(f"roc{suffix}"), "ROC curves")
    if f"pr{suffix}" in page.figures:
        body += (
            "<p class='how'>Precision against recall for the same folds (grey) and pooled "
            "(dashed), drawn as the steps average precision sums (Davis &amp; Goadrich "
            "2006); the dotted line is the share of positives, a random ranking's "
            "precision. On unbalanced data it shows what the ROC curve hides: how many "
            "of the cases a model flags are wrong.</p>"
            + _figure(page.figures[f"pr{suffix}"], "precision-recall curves")
        )
    body += table_html(_need(page, "pooling", key))
    if "se_vs_sd" in page.tables:
        body += (
            "<p class='how'>The standard error of one fold's AUC (DeLong; Hanley &amp; "
            "McNeil) against the spread of the AUC over folds (<code>ratio</code> near 1 "
            "when the analytic SE describes fold-to-fold variation).</p>"
            + table_html(_need(page, "se_vs_sd", key))
        )
    return _section(3, anchor, "ROC curves", how, body)


def separability(page: PageInput, anchor: str, suffix: str) -> str:
    """The pairwise separability heat map of a multiclass data set."""
    how = (
        "Hand &amp; Till's (2001) pairwise separabilities A(i, j), averaged over folds: a "
        "model with a mediocre M may still separate most class pairs well and confuse "
        "only a few (dark cells). M is the mean of each map's upper triangle."
    )
    figure = _figure(page.figures.get(f"pairwise{suffix}"), "pairwise separabilities")
    return _section(3, anchor, "Pairwise separability", how, figure)


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

ACROSS = {
    "mean_ranks": "Mean ranks over data sets (1 = best) with Nemenyi's critical difference.",
    "friedman_test": "Friedman's test that all models perform alike over the data sets "
    "(χ² and Iman–Davenport's F; Demšar 2006, §3.2.2).",
    "nemenyi_test": "Nemenyi's post-hoc test: two models differ when their mean ranks differ "
    "by at least the critical difference.",
    "wilcoxon_test": "Wilcoxon's signed-rank test on each pair's per-data-set differences "
    "(Demšar 2006, §3.1.3).",
    "sign_test": "The sign test: how many data sets each model of a pair wins (Demšar 2006, "
    "§3.1.2).",
    "bayes_signed_rank": "The Bayesian signed-rank test: posterior probabilities that a is "
    "better, that both are practically equivalent (within the ROPE) and that b is better "
    "(Benavoli et al. 2014, 2017).",
}

DESIGN = {
    "paired_ttest_5x2cv": "Dietterich's (1998) 5×2 cv paired t test.",
    "combined_ftest_5x2cv": "Alpaydın's (1999) combined 5×2 cv F test.",
    "bayes_ttest": "The correlated Bayesian t test (Corani &amp; Benavoli 2015): posterior "
    "probabilities of a better, practically equivalent (within the ROPE) and b better.",
}


def _optional(page: PageInput, names: Mapping[str, str]) -> str:
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
        title = TITLES.get(name, name)
        parts.append(f'<h3 id="{name}">{title}</h3><p class="how">{how}</p>{body}')
    return "".join(parts)


def across(page: PageInput) -> str:
    """Across data sets: mean ranks, Friedman, Nemenyi and the CD diagram, Wilcoxon, …."""
    how = (
        f"Each model's {page.metric} is averaged over the folds of every data set; the "
        "tests then treat data sets as the samples, as Demšar (2006) recommends for "
        "comparing classifiers over several data sets. In the critical-difference diagram "
        "models joined by a thick bar are not separated by the Nemenyi test."
    )
    body = _figure(page.figures.get("cd"), "critical-difference diagram") + _optional(page, ACROSS)
    return _section(2, "across", "Across data sets", how, body)


def design_tests(page: PageInput) -> str:
    """Tests of the design: 5×2 cv, Bayesian t with a ROPE."""
    how = (
        "Tests chosen by the design of the cross-validation: the 5×2 cv tests for five "
        "repeats of two folds, and with a region of practical equivalence (--rope) the "
        "Bayesian view (Benavoli et al. 2017)."
    )
    return _section(2, "design", "5×2 cv and Bayesian tests", how, _optional(page, DESIGN))


def _need(page: PageInput, name: str, key: Mapping[str, object]) -> pl.DataFrame:
    table = _select(page.tables.get(name), key)
    return table if table is not None else pl.DataFrame()


def dataset_sections(page: PageInput, key: Mapping[str, object], multiclass: bool) -> str:
    """Every table and figure of one data set (``key``: its by values; empty for one)."""
    suffix = "".join(f"_{v}" for v in key.values())
    tag = "-".join(str(v) for v in key.values()) or "log"
    parts: list[Callable[[], str]] = [
        lambda: summary(page, key, f"summary-{tag}"),
        lambda: paired(page, key, f"paired-{tag}"),
        lambda: anova_duncan(page, key, f"anova-{tag}", suffix),
        lambda: distributions(page, f"distributions-{tag}", suffix),
        (
            (lambda: separability(page, f"pairwise-{tag}", suffix))
            if multiclass
            else (lambda: roc(page, key, f"roc-{tag}", suffix))
        ),
    ]
    return "".join(part() for part in parts)


def _nav(body: str) -> str:
    """Contents: a link to every section of the page, in order."""
    found = re.findall(r'<section id="([^"]+)"[^>]*><h([23])>(.*?)</h[23]>', body)
    if len(found) > 24:  # many data sets: their sections only
        found = [entry for entry in found if entry[1] == "2"]
    items = "".join(
        f'<li class="h{level}"><a href="#{anchor}">{title}</a></li>'
        for anchor, level, title in found
    )
    return f"<nav><ul>{items}</ul></nav>"


def report_page(page: PageInput) -> str:
    """The whole page as one HTML string (no external resources).

    Examples
    --------
    >>> import polars as pl
    >>> from polaroc.report.html import PageInput, report_page
    >>> folds = pl.DataFrame({"model": ["a", "b"], "fold": [0, 0], "n_null_score": [0, 1]})
    >>> kinds = pl.DataFrame({"n_rows": [4], "n_labels": [2], "n_models": [2], "n_folds": [1],
    ...                       "_pr_positive": [None], "multiclass": [False]})
    >>> text = report_page(PageInput({"folds": folds}, {}, {}, kinds, [], "auc", 0.05))
    >>> text.startswith("<!DOCTYPE html>") and 'id="evaluated"' in text
    True
    """
    body = [evaluated(page)]
    if page.by:
        for row in page.kinds.iter_rows(named=True):
            key = {b: row[b] for b in page.by}
            title = ", ".join(str(v) for v in key.values())
            anchor = "dataset-" + "-".join(str(v) for v in key.values())
            inner = dataset_sections(page, key, bool(row["multiclass"]))
            body.append(
                f'<section id="{html.escape(anchor)}" class="dataset">'
                f"<h2>Data set {html.escape(title)}</h2>{inner}</section>"
            )
    else:
        body.append(dataset_sections(page, {}, bool(page.kinds["multiclass"][0])))
    if page.dataset in page.by and page.kinds.height >= 2:
        body.append(across(page))
    if any(name in page.optional for name in DESIGN):
        body.append(design_tests(page))
    title = "polaroc report"
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{title}</title><style>{STYLE}</style></head><body>"
        f"<h1>{title}</h1><p class='how'>Comparison of classifiers from their logged "
        f"scores on {html.escape(page.metric)} at α = {page.alpha:g}.</p>"
        + _nav("".join(body))
        + "".join(body)
        + "</body></html>\n"
    )
