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
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from polaroc.report.tables import CALIBRATION_BINS, Settings, net_benefit_summary

__all__ = ["PageInput", "figure_key", "report_page", "table_html", "verdict_sentences"]

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
nav ul { columns: 2; font-size: 0.95em; }
nav li.h3 { margin-left: 1.4em; font-size: 0.95em; }
figure { margin: 0.8em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
.gt_table { margin-left: 0 !important; }
div.wide { overflow-x: auto; max-width: 100%; }
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

    shown = flat(_pairs_as_names(df.head(max_rows)))
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
    return f'<div class="wide">{gt.as_raw_html(inline_css=False)}</div>{more}'


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


# --------------------------------------------------------------------- the verdict

TEST_NAMES = {
    "corrected_t": "corrected repeated k-fold t",
    "paired_t": "paired t",
    "combined_5x2cv_f": "combined 5×2 cv F",
    "nemenyi": "Friedman then Nemenyi",
    "wilcoxon": "Wilcoxon signed-rank",
}

ADJUST_NAMES = {
    "holm": "Holm",
    "bonferroni": "Bonferroni",
    "sidak": "Šidák",
    "hochberg": "Hochberg",
    "hommel": "Hommel",
    "fdr_bh": "Benjamini–Hochberg",
    "fdr_by": "Benjamini–Yekutieli",
}


def _shown(metric: str) -> str:
    return metric.upper() if metric in ("auc", "sauc") else metric


def _settings(page: PageInput) -> Settings:
    return page.settings or Settings(metric=page.metric, alpha=page.alpha)


def _p(p: float | None) -> str:
    if p is None or p != p:
        return "p = NaN"
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}" if p < 0.01 else f"p = {p:.2f}"


def _names(items: list[str]) -> str:
    if len(items) <= 2:
        return " and ".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _test_name(test: object) -> str:
    return TEST_NAMES.get(str(test), str(test).replace("_", " "))


def _interval(low: float | None, high: float | None, bounded: bool) -> str:
    """The text ", 95 % CI a–b" (clipped to [0, 1] for an AUC or a rate); "" when unknown."""
    if low is None or high is None or low != low or high != high:
        return ""
    if bounded:
        low, high = max(low, 0.0), min(high, 1.0)
    return f", 95 % CI {low:.3f}–{high:.3f}"


def _one_verdict(
    rows: pl.DataFrame, where: str, settings: Settings, model: str, across: bool
) -> str:
    """One sentence group: the best model of one data set (or across), its ties, the rest."""
    metric = settings.metric.upper() if settings.metric in ("auc", "sauc") else settings.metric
    rows = rows.sort("rank", model, nulls_last=True)
    best = rows.filter(pl.col("best"))
    if best.is_empty():
        return f"{where}, no model can be named best: {settings.metric} is NaN or missing."
    top = best.row(0, named=True)
    extreme = "highest" if settings.higher_is_better else "lowest"
    if across:
        lead = (
            f"{where}, <b>{html.escape(str(top[model]))}</b> has the best average rank "
            f"({top['rank']:.2f}; mean {metric} over data sets {top['mean']:.3f})"
        )
    else:
        ci = _interval(top.get("ci_low"), top.get("ci_high"), settings.metric in BOUNDED)
        lead = (
            f"{where}, <b>{html.escape(str(top[model]))}</b> has the {extreme} mean {metric} "
            f"({top['mean']:.3f}{ci})"
        )
    others = rows.filter(~pl.col("best"))
    tied = others.filter(pl.col("tied_with_best"))
    worse = others.filter(~pl.col("tied_with_best").fill_null(False))
    tests = sorted({_test_name(t) for t in rows["test"].drop_nulls().to_list()})
    test = "; ".join(tests) or "no test"
    bayes = bool(tests) and all(t.startswith("Bayesian") for t in tests)
    best_name = html.escape(str(top[model]))
    if bayes:  # posterior probabilities: not p-values, not adjusted

        def label(p: float | None) -> str:
            known = p is not None and p == p
            return f"P(equivalent or better) = {p:.2f}" if known else "P = NaN"

        test += f", ROPE ±{settings.rope:g}" if settings.rope is not None else ""
    else:
        label = _p
        adjust = ADJUST_NAMES.get(settings.adjust or "holm", settings.adjust or "Holm")
        if others.height > 1:
            test += f", {adjust}-adjusted"
    parts = [lead]
    if tied.height:
        names = [
            f"{html.escape(str(r[model]))} ({label(r['p_vs_best'])})"
            for r in tied.iter_rows(named=True)
        ]
        verb = "is" if tied.height == 1 else "are"
        parts.append(f"{_names(names)} {verb} not distinguishable from it ({test})")
    if worse.height:
        ps = [r["p_vs_best"] for r in worse.iter_rows(named=True)]
        names = [html.escape(str(r[model])) for r in worse.iter_rows(named=True)]
        verb = "is" if worse.height == 1 else "are"
        finite = [p for p in ps if p is not None and p == p]
        tail = "" if tied.height else f"; {test}"
        if bayes:
            sure = f"P({best_name} practically better) ≥ {1 - settings.alpha:g}"
            parts.append(f"{_names(names)} {verb} worse ({sure}{tail})")
        elif len(finite) == len(ps) and max(finite) < 0.01:
            parts.append(f"{_names(names)} {verb} worse (p &lt; 0.01{tail})")
        else:
            each = [f"{n} ({_p(p)})" for n, p in zip(names, ps, strict=True)]
            parts.append(f"{_names(each)} {verb} worse" + ("" if tied.height else f" ({test})"))
    if not others.height:
        parts.append("it is the only model")
    return "; ".join(parts).replace("p < ", "p &lt; ") + "."


def verdict_sentences(
    verdict: pl.DataFrame,
    settings: Settings,
    *,
    by: list[str],
    model: str = "model",
    dataset: str = "dataset",
) -> list[str]:
    """The verdict in sentences: one per data set (name first), then one across data sets.

    ``verdict`` is :func:`polaroc.verdict`'s table: per (by…, model) ``rank``, ``mean``,
    ``ci_low``, ``ci_high``, ``best``, ``tied_with_best``, ``p_vs_best``, ``test``;
    rows across data sets have a null ``dataset``. The sentences know whether lower
    is better (``settings.metric``).

    Examples
    --------
    >>> import polars as pl
    >>> from polaroc.report.html import verdict_sentences
    >>> from polaroc.report.tables import CALIBRATION_BINS, Settings
    >>> v = pl.DataFrame({"model": ["boost", "forest", "stump"], "rank": [1, 2, 3],
    ...     "mean": [0.969, 0.96, 0.8], "ci_low": [0.95, 0.94, 0.7], "ci_high": [0.98, 0.97, 0.9],
    ...     "best": [True, False, False], "tied_with_best": [True, True, False],
    ...     "p_vs_best": [None, 0.57, 0.001], "test": ["corrected_t"] * 3})
    >>> print(verdict_sentences(v, Settings(), by=[])[0])  # doctest: +NORMALIZE_WHITESPACE
    On this log, <b>boost</b> has the highest mean AUC (0.969, 95 % CI 0.950–0.980); forest
    (p = 0.57) is not distinguishable from it (corrected repeated k-fold t, Holm-adjusted);
    stump is worse (p &lt; 0.01).
    """
    sentences = []
    within = [b for b in by if b in verdict.columns]
    has_across = dataset in verdict.columns and verdict[dataset].null_count() > 0
    per_set = verdict.filter(pl.col(dataset).is_not_null()) if has_across else verdict
    if within:
        parts = per_set.partition_by(within, as_dict=True, maintain_order=True)
        for key, rows in sorted(parts.items(), key=lambda kv: [str(v) for v in kv[0]]):
            where = "On " + html.escape(", ".join(str(k) for k in key))
            sentences.append(_one_verdict(rows, where, settings, model, across=False))
    elif per_set.height:
        sentences.append(_one_verdict(per_set, "On this log", settings, model, across=False))
    if has_across:
        rows = verdict.filter(pl.col(dataset).is_null())
        n = per_set[dataset].n_unique() if per_set.height else 0
        where = f"Across the {n} data sets"
        sentences.append(_one_verdict(rows, where, settings, model, across=True))
        if n < 5:
            sentences.append(
                f"With {n} data sets the tests across data sets have little power "
                "(Demšar 2006 asks for more); read the per-data-set verdicts first."
            )
    return sentences


def _cell(row: Mapping[str, object]) -> str:
    rank, mean, best, tied = row["rank"], row["mean"], row["best"], row["tied_with_best"]
    if best is None or rank is None:
        return "NaN: no decision"
    mark = "★" if best else "=" if tied else "▼"
    rank_text = f"{rank:g}" if float(rank).is_integer() else f"{rank:.2f}"  # type: ignore[arg-type]
    return f"{rank_text} · {mean:.3f} {mark}"


def compact_table(verdict: pl.DataFrame, *, model: str, dataset: str) -> pl.DataFrame:
    """Models × data sets: each cell the rank and mean, marked against the best.

    ``★`` the best, ``=`` not distinguishable from it, ``▼`` worse (at the page's α);
    models in the order of the verdict across data sets (or of the one data set).
    """
    across = "across (mean rank)"
    per = verdict.to_dicts()
    if dataset not in verdict.columns:
        rows = sorted(per, key=lambda r: (r["rank"] is None, r["rank"] or 0, str(r[model])))
        return pl.DataFrame({model: [str(r[model]) for r in rows],
                             "this log": [_cell(r) for r in rows]})  # fmt: skip
    overall = [r for r in per if r[dataset] is None]
    ordered = overall or per
    order = list(dict.fromkeys(
        str(r[model]) for r in sorted(
            ordered, key=lambda r: (r["rank"] is None, r["rank"] or 0, str(r[model])))
    ))  # fmt: skip
    sets = sorted({str(r[dataset]) for r in per if r[dataset] is not None})
    cells = {(str(r[model]), across if r[dataset] is None else str(r[dataset])): _cell(r)
             for r in per}  # fmt: skip
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


def verdict_section(page: PageInput) -> str:
    """The page's first section: which model is best, which are tied with it, by which test."""
    settings = _settings(page)
    verdict = page.verdict
    if not isinstance(verdict, pl.DataFrame) or verdict.is_empty():
        why = verdict if isinstance(verdict, str) else "this polaroc has no pr.verdict"
        body = f'<p class="note">No verdict: {html.escape(why)}. The tests below still stand.</p>'
        return _section(2, "verdict", "Verdict", "", body)
    sentences = verdict_sentences(
        verdict, settings, by=page.by, model=page.model, dataset=page.dataset
    )
    text = "".join(f'<p class="verdict">{s}</p>' for s in sentences)
    better = "higher" if settings.higher_is_better else "lower"
    shown = settings.metric.upper() if settings.metric in ("auc", "sauc") else settings.metric
    how = (
        f"The best model has the {'highest' if settings.higher_is_better else 'lowest'} mean "
        f"{html.escape(shown)} ({better} is better); every other model is "
        "compared with it by the one test the design calls for (comparisons with a control, "
        "Demšar 2006), the k − 1 p-values adjusted together. Each test and its settings are "
        'listed under <a href="#settings">Settings</a>; nothing further down overrides this '
        "verdict — where another table disagrees, it says so."
    )
    compact = compact_table(verdict, model=page.model, dataset=page.dataset)
    legend = (
        "<p class='how'>Each cell: rank · mean; ★ best, = not distinguishable from the best, "
        f"▼ worse at α = {settings.alpha:g}.</p>"
    )
    cd = _figure(page.figures.get(figure_key("cd", ())), "critical-difference diagram")
    if cd:
        cd += CD_NOTE
    body = table_html(compact) + legend + cd + f'<p class="how">{how}</p>'
    return f'<section id="verdict"><h2>Verdict</h2>{text}{body}</section>'


def settings_section(page: PageInput) -> str:
    """Every setting the page used: test, α, adjustment, ROPE, seed, folds, threshold, weight."""
    settings = _settings(page)
    kinds = page.kinds
    folds = int(kinds["n_folds"].max()) if "n_folds" in kinds.columns else 0  # type: ignore[arg-type]
    repeats = int(kinds["n_repeats"].max()) if "n_repeats" in kinds.columns else 1  # type: ignore[arg-type]
    if page.design == (5, 2):
        design, test = "5 × 2 cross-validation", "combined 5×2 cv F (Alpaydın 1999)"
    elif repeats > 1:
        design = f"{repeats} × {folds}-fold repeated cross-validation"
        test = "corrected repeated k-fold t (Nadeau &amp; Bengio 2003; Bouckaert &amp; Frank 2004)"
    else:
        design, test = f"{folds}-fold cross-validation", "k-fold paired t (Dietterich 1998)"
    tests = test
    if isinstance(page.verdict, pl.DataFrame) and "test" in page.verdict.columns:
        used = sorted({_test_name(t) for t in page.verdict["test"].drop_nulls().to_list()})
        tests = "; ".join(used) or test
    adjust = settings.adjust
    better = "higher" if settings.higher_is_better else "lower"
    items = [
        ("metric compared", f"{html.escape(settings.metric)} ({better} is better)"),
        ("design", design),
        ("test of the verdict", tests),
        ("significance level α", f"{settings.alpha:g}"),
        (
            "adjustment (verdict)",
            f"{ADJUST_NAMES.get(adjust or 'holm')} over the k − 1 comparisons with the best",
        ),
        (
            "adjustment (pairwise tables)",
            ADJUST_NAMES.get(adjust, "none")
            if adjust
            else "none: each pair's p-value on its own; reject is p ≤ α",
        ),
        (
            "ROPE",
            f"±{settings.rope:g} (the Bayesian tests)"
            if settings.rope is not None
            else "none (no Bayesian tests; --rope WIDTH adds them)",
        ),
        ("seed", f"{settings.seed} (the Bayesian signed-rank test's posterior samples)"),
        (
            "threshold",
            f"{settings.threshold:g} (the error of a binary log without a class column; "
            "otherwise the arg-max class)",
        ),
        (
            "weight",
            f"column <code>{html.escape(settings.weight)}</code> (case weights of the metrics)"
            if settings.weight
            else "none: every sample counts once",
        ),
    ]
    body = (
        '<dl class="settings">' + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in items) + "</dl>"
    )
    how = (
        "Every choice behind the numbers on this page; two runs with these settings write "
        "identical files."
    )
    return _section(2, "settings", "Settings", how, body)


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


BOUNDED = frozenset({"auc", "error", "average_precision", "brier"})


def _with_ci(page: PageInput, summary: pl.DataFrame, key: Mapping[str, object]) -> pl.DataFrame:
    """The summary with the verdict's CI of the compared metric beside it."""
    verdict = page.verdict
    if not isinstance(verdict, pl.DataFrame) or not {"ci_low", "ci_high"} <= set(verdict.columns):
        return summary
    rows = _select(
        verdict.filter(pl.col(page.dataset).is_not_null())
        if page.dataset in verdict.columns
        else verdict,
        key,
    )
    if rows is None or rows.is_empty():
        return summary
    m = page.metric
    low, high = pl.col("ci_low"), pl.col("ci_high")
    if m in BOUNDED:  # a rate or an AUC lies in [0, 1]; a t interval may not
        low, high = low.clip(0.0, 1.0), high.clip(0.0, 1.0)
    ci = rows.select(page.model, low.alias(f"{m}_ci_low"), high.alias(f"{m}_ci_high"))
    ci = ci.with_columns(pl.col(page.model).cast(summary.schema[page.model]))
    joined = summary.join(ci, on=page.model, how="left", maintain_order="left")
    after = f"{m}_mean" if f"{m}_mean" in joined.columns else joined.columns[-3]
    cols = [c for c in joined.columns if c not in (f"{m}_ci_low", f"{m}_ci_high")]
    at = cols.index(after) + 1
    return joined.select([*cols[:at], f"{m}_ci_low", f"{m}_ci_high", *cols[at:]])


def summary(page: PageInput, key: Mapping[str, object], anchor_id: str) -> str:
    """Per model: mean, its CI and sd over folds of AUC (or M), sAUC and error."""
    how = (
        "Per model, the mean and standard deviation over folds of the AUC (Bradley 1997; "
        "for more than two classes Hand &amp; Till's (2001) M), the scored AUC (Wu &amp; "
        f"Flach 2005) and the error rate, with the 95 % CI of the mean {html.escape(page.metric)} "
        "the verdict reports (clipped to [0, 1], where the metric lives); best first."
    )
    table = _with_ci(page, _need(page, "summary", key), key)
    table, scored = _with_scores(page, table, key)
    if scored:
        how += (
            " The scores are probabilities: <code>brier_mean</code> and "
            "<code>log_loss_mean</code> are the Brier score and log loss averaged over folds "
            "(lower is better; see Calibration)."
        )
    return _section(3, anchor_id, "Per-model summary", how, table_html(table))


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
    means = folds.group_by(page.model).agg(
        pl.col("brier").mean().alias("brier_mean"), pl.col("log_loss").mean().alias("log_loss_mean")
    )
    means = means.with_columns(pl.col(page.model).cast(summary.schema[page.model]))
    return summary.join(means, on=page.model, how="left", maintain_order="left"), True


def paired(page: PageInput, key: Mapping[str, object], anchor_id: str, suffix: str) -> str:
    """The deciding test on every model pair, with its decisions and the p-value map."""
    settings = _settings(page)
    table = _need(page, "paired_ttest", key)
    corrected = "repeat" in page.tables["folds"].columns or (
        page.design is not None and page.design[0] > 1
    )
    name = "corrected repeated k-fold t" if corrected else "k-fold paired t"
    estimate = "estimate" if "estimate" in table.columns else "mean_diff"
    how = (
        f"Every pair of models compared on {page.metric} fold by fold by the {name} test"
        + (
            " (Nadeau &amp; Bengio 2003; Bouckaert &amp; Frank 2004: the folds come from "
            "repeated cross-validation, so the variance is corrected for their overlap)"
            if corrected
            else " (Aslan, Yıldız &amp; Alpaydın 2009, eqs. 1–2; Dietterich 1998)"
        )
        + f". <code>{estimate}</code> is a − b"
        + (
            " (for error, a negative value means a is better)"
            if not settings.higher_is_better
            else ""
        )
        + "; "
    )
    if settings.adjust:
        how += (
            f"<code>p_adjusted</code> is {ADJUST_NAMES.get(settings.adjust, settings.adjust)}'s "
            f"adjustment over all {table.height} pairs, and <code>reject</code> is true when "
            f"p_adjusted ≤ {page.alpha:g}."
        )
    else:
        how += f"<code>reject</code> is true when p ≤ {page.alpha:g} (no adjustment)."
    how += (
        " The verdict uses the same test, but only for the comparisons with the best model, "
        "adjusted together; where a row here and the verdict differ, the verdict counts."
    )
    body = table_html(table) + _fig(page, "p_values", key, "p-value map")
    return _section(3, anchor_id, f"Deciding test: {name} on {page.metric}", how, body)


def figures(page: PageInput, key: Mapping[str, object], anchor_id: str, multiclass: bool) -> str:
    """The figures of one data set: every model on one ROC axis, the per-fold values, …."""
    settings = _settings(page)
    parts = []
    if not multiclass:
        parts.append(
            "<p class='how'>Every model's ROC curve (vertical average over folds) on one axis; "
            "the legend gives the mean AUC over folds with its 95 % CI, best first (as "
            "scikit-learn's RocCurveDisplay and pROC draw them).</p>"
            + _fig(page, "roc_overlay", key, "ROC curves of every model")
        )
    else:
        parts.append(
            "<p class='how'>One-vs-rest ROC curves: for each class, its scores ranking its own "
            "samples against all others (folds pooled), every model on one axis.</p>"
            + _fig(page, "roc_ovr", key, "one-vs-rest ROC curves")
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
        parts.append(
            "<p class='how'>Hand &amp; Till's (2001) pairwise separabilities A(i, j), averaged "
            "over folds: a model with a mediocre M may still separate most class pairs well "
            "and confuse only a few (dark cells).</p>"
            + _fig(page, "pairwise", key, "pairwise separabilities")
        )
    if figure_key("bayes_ttest", key) in page.figures or isinstance(
        page.optional.get("bayes_ttest"), pl.DataFrame
    ):
        table = _select(_frame_or_none(page.optional.get("bayes_ttest")), key)
        parts.append(
            "<p class='how'>The correlated Bayesian t test (Corani &amp; Benavoli 2015): the "
            "posterior probability that a is better, that both are practically equivalent "
            f"(|a − b| ≤ ROPE = {settings.rope:g}) and that b is better.</p>"
            + _fig(page, "bayes_ttest", key, "posterior of the Bayesian t test")
            + (table_html(table) if table is not None else "")
        )
    return _section(3, anchor_id, "Figures", "", "".join(parts))


def _frame_or_none(value: pl.DataFrame | str | None) -> pl.DataFrame | None:
    return value if isinstance(value, pl.DataFrame) else None


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


def _across_text(settings: Settings) -> dict[str, str]:
    metric = html.escape(settings.metric)
    if settings.higher_is_better:
        wins = (
            "how many data sets each model of a pair wins (the higher value); "
            "<code>estimate</code> is positive when a wins more"
        )
        bayes = "that a is better (higher), that both are practically equivalent"
    else:
        wins = (
            f"how many data sets each model of a pair wins — the lower {metric} wins "
            "(<code>wins_a</code> counts the data sets where a's is lower); "
            "<code>estimate</code> is positive when a wins more"
        )
        bayes = (
            f"that a's {metric} is higher (<code>p_a_higher</code>: a is worse, as lower is "
            "better), that both are practically equivalent"
        )
    return {
        "mean_ranks": "Mean ranks over data sets (1 = best) with Nemenyi's critical difference.",
        "friedman_test": "Friedman's test that all models perform alike over the data sets "
        "(χ² and Iman–Davenport's F; Demšar 2006, §3.2.2).",
        "nemenyi_test": "Nemenyi's post-hoc test: two models differ when their mean ranks "
        "differ by at least the critical difference.",
        "wilcoxon_test": "Wilcoxon's signed-rank test on each pair's per-data-set differences "
        "(Demšar 2006, §3.1.3).",
        "sign_test": f"The sign test: {wins} (Demšar 2006, §3.1.2).",
        "bayes_signed_rank": f"The Bayesian signed-rank test: posterior probabilities {bayes} "
        "(within the ROPE) and the reverse (Benavoli et al. 2014, 2017); seeded, so two runs "
        f"agree (seed {settings.seed}).",
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
    how = (
        f"Each model's {page.metric} is averaged over the folds of every data set; the "
        "tests then treat data sets as the samples, as Demšar (2006) recommends for "
        "comparing classifiers over several data sets. In the critical-difference diagram "
        "models joined by a thick bar are not separated by the Nemenyi test; the verdict "
        "across data sets is Friedman's test then Nemenyi's (Wilcoxon's for two models)."
    )
    body = (
        _fig(page, "cd", (), "critical-difference diagram")
        + CD_NOTE
        + _optional(page, _across_text(_settings(page)), "")
    )
    return _section(2, "across", "Across data sets", how, body)


def _need(page: PageInput, name: str, key: Mapping[str, object]) -> pl.DataFrame:
    table = _select(page.tables.get(name), key)
    return table if table is not None else pl.DataFrame()


def calibration_section(page: PageInput, key: Mapping[str, object], anchor_id: str) -> str:
    """How well the scores read as probabilities: the table and the reliability diagram.

    Only for a data set whose scores are all probabilities (it has rows in the
    ``calibration`` table); "" otherwise.
    """
    table = _select(page.tables.get("calibration"), key)
    if table is None or table.is_empty():
        return ""
    weight = _settings(page).weight
    how = (
        "The scores are probabilities, so their calibration can be judged: all folds pooled, "
        "per model the Brier score (mean squared gap between score and outcome; Brier 1950) "
        "and the log loss, lower is better for both, best (lowest Brier score) first. "
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
        body += (
            "<p class='how'>Reliability diagram of the positive class: per model the share of "
            "positives against the mean score of each bin, grey per fold, coloured for the "
            "folds pooled with the band of the folds' range; a calibrated model lies on the "
            "dashed diagonal, and a point below it means fewer positives than the scores "
            "promise (scores too high). The bars count the samples per bin: a point from few "
            "samples is weak evidence.</p>" + _fig(page, "calibration", key, "reliability diagram")
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


def dataset_sections(page: PageInput, key: Mapping[str, object], multiclass: bool) -> str:
    """One data set in reading order: summary with CIs, the deciding test, the figures."""
    tag = anchor(*key.values()) if key else "log"
    suffix = tag
    return (
        summary(page, key, f"summary-{tag}")
        + paired(page, key, f"paired-{tag}", suffix)
        + figures(page, key, f"figures-{tag}", multiclass)
        + calibration_section(page, key, f"calibration-{tag}")
        + decision_curve_section(page, key, f"decision-curve-{tag}")
    )


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

    def per_set(name: str) -> str:
        parts = []
        for key in keys:
            table = _need(page, name, key)
            if table.is_empty():
                continue
            title = (
                f"<p class='how'><b>{html.escape(', '.join(str(v) for v in key.values()))}</b></p>"
                if key
                else ""
            )
            parts.append(title + table_html(table))
        return "".join(parts)

    def duncan_figures() -> str:
        return "".join(_fig(page, "duncan", key, "Duncan's groups") for key in keys)

    items = [
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
            per_set("duncan") + duncan_figures(),
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
            "Do the paired t tests on AUC "
            "and on the error rate reach the same decision for each pair? (Bradley 1997 argues "
            "the AUC test is the more powerful.)",
            per_set("agreement"),
        ),
        (
            "appendix-pooling",
            "Pooling against averaging",
            "The pooled AUC (all folds' scores "
            "in one ranking) against the mean of the folds' AUCs: when scores are not calibrated "
            "alike across folds the pooled AUC falls below (<code>pooling_bias</code>; Bradley "
            "1997).",
            per_set("pooling"),
        ),
        (
            "appendix-se-vs-sd",
            "Standard error against the spread over folds",
            "The standard "
            "error of one fold's AUC (DeLong; Hanley &amp; McNeil) against the spread of the AUC "
            "over folds (<code>ratio</code> near 1 when the analytic SE describes fold-to-fold "
            "variation).",
            per_set("se_vs_sd"),
        ),
    ]
    design = {
        "paired_ttest_5x2cv": "Dietterich's (1998) 5×2 cv paired t test.",
        "combined_ftest_5x2cv": "Alpaydın's (1999) combined 5×2 cv F test, the verdict's test "
        "on a 5 × 2 design.",
    }
    for name, how in design.items():
        result = page.optional.get(name)
        if result is not None:
            body = (
                table_html(result)
                if isinstance(result, pl.DataFrame)
                else (f'<p class="note">Not computed: {html.escape(result)}</p>')
            )
            items.append((f"appendix-{name}", TITLES[name], how, body))
    return [(i, t, f'<p class="how">{h}</p>{b}') for i, t, h, b in items if b]


def appendix(page: PageInput) -> str:
    """Every other table, each under its own heading (listed in the contents)."""
    parts = "".join(
        f'<section id="{i}"><h3>{html.escape(t)}</h3>{b}</section>'
        for i, t, b in _appendix_parts(page)
    )
    how = "The remaining tables, for the record; none of them changes the verdict."
    return _section(2, "appendix", "Appendix: every other table", how, parts)


def _nav(body: str) -> str:
    """Contents: a link to every section of the page, in order."""
    found = re.findall(r'<section id="([^"]+)"[^>]*><h([23])>(.*?)</h[23]>', body)
    if len(found) > 30:  # many data sets: their sections only, and the appendix's tables
        found = [e for e in found if e[1] == "2" or e[0].startswith("appendix-")]
    items = "".join(
        f'<li class="h{level}"><a href="#{a}">{title}</a></li>' for a, level, title in found
    )
    return f"<nav><ul>{items}</ul></nav>"


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
        f"scores on {html.escape(_shown(settings.metric))} at α = {settings.alpha:g}.</p>"
        + _nav("".join(body))
        + "".join(body)
        + "</body></html>\n"
    )
