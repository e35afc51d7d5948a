"""Issue 35 (and the report's items of issue 34): what a researcher reads, on the terminal and the page.

Each test reads the report as a researcher would — the terminal's first lines, one data
set's section, the CSV files, the sentences beside a number — on generated logs of the
shapes issue 35 used: several data sets, a ten-class one, repeats, a 5 × 2 design, both
classes' rows of a two-class log.
"""

from __future__ import annotations

import html
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from scipy import stats
from sklearn.metrics import average_precision_score, roc_auc_score

import polaroc as pr
from polaroc.report import write_report
from polaroc.report.cli import main
from polaroc.report.html import PageInput, report_page
from polaroc.report.words import VerdictWords, as_text, mean_digits, p_text, verdict_sentences
from tests.report.logs import design_log, ten_class_sets
from tests.report.test_report_trust import page_text as tagless


def page_text(rep: object) -> str:
    """The page's words, tags dropped and entities read."""
    return html.unescape(tagless(rep))


ACROSS = {"mean_ranks", "friedman_test", "nemenyi_test", "wilcoxon_test", "sign_test",
          "bayes_signed_rank"}  # fmt: skip
"""Tables across data sets: one row per model or pair over every data set, no data set."""


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "polaroc", *args], capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def ten(tmp_path_factory) -> tuple[Path, object]:
    """The report of a binary, a three-class and a ten-class data set on a 5 × 2 design."""
    out = tmp_path_factory.mktemp("ten")
    return out, write_report(ten_class_sets(n=40), out)


def sections(html: str) -> dict[str, str]:
    """Each data set's section of the page, by its id."""
    found = re.findall(r'<section id="(dataset-[^"]+)" class="dataset">', html)
    starts = [html.index(f'<section id="{f}"') for f in found]
    ends = [*starts[1:], html.index('<section id="across"')]
    return {f: html[s:e] for f, s, e in zip(found, starts, ends, strict=True)}


# ---------------------------------------------------------------- the terminal


def test_terminal_opens_with_the_pages_verdict(tmp_path):
    done = run_cli("demo", "-o", str(tmp_path), "-q", "--no-plots")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    page = (tmp_path / "index.html").read_text()
    on_page = [re.sub(r"<[^>]+>", "", p) for p in re.findall(r'<p class="verdict">(.*?)</p>', page)]
    on_page = [p.replace("&lt;", "<").replace("&amp;", "&") for p in on_page]
    assert lines[: len(on_page)] == on_page, "the terminal opens with the page's sentences"
    verdict = pl.read_csv(tmp_path / "verdict.csv")
    best = verdict.filter(pl.col("best"))["model"].item()
    assert lines[0].startswith(f"On this log, {best} has the highest mean")
    # then the settings, then the page's path, then the tables
    settings = lines.index("settings:")
    path = next(i for i, line in enumerate(lines) if line.startswith("report page:"))
    first_table = next(i for i, line in enumerate(lines) if line.startswith("## "))
    assert len(on_page) < settings < path < first_table
    assert lines[path] == f"report page: {tmp_path / 'index.html'}"
    # every table after the verdict that can disagree with it says so in its title
    titles = [line for line in lines if line.startswith("## ")]
    assert any("unadjusted" in t and "the verdict" in t for t in titles if "paired t" in t)
    assert all("does not decide the verdict" in t for t in titles if "ANOVA" in t or "Duncan" in t)


def test_terminal_labels_duncan_uncorrected_on_repeated_folds(tmp_path):
    log = design_log({"a": 2}, repeats=3, folds=3, n=30).drop("dataset")
    log.write_parquet(tmp_path / "log.parquet")
    done = run_cli("report", str(tmp_path / "log.parquet"), "-o", str(tmp_path / "out"), "-q",
                   "--no-plots")  # fmt: skip
    assert done.returncode == 0, done.stderr
    duncan = next(line for line in done.stdout.splitlines() if "Duncan" in line)
    assert "uncorrected" in duncan
    assert done.stdout.splitlines()[0].startswith("On this log, ")


def test_one_fold_log_gets_the_one_test_set_verdict(tmp_path):
    one = pl.read_parquet(pr.demo_log_path()).filter(pl.col("fold") == 0)
    one.write_parquet(tmp_path / "log.parquet")
    done = run_cli("report", str(tmp_path / "log.parquet"), "-o", str(tmp_path / "out"), "-q",
                   "--no-plots")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "balanced" not in done.stderr + done.stdout
    assert "repeat column" not in done.stderr + done.stdout
    assert done.stdout.startswith("On this log, ")
    verdict = pl.read_csv(tmp_path / "out" / "verdict.csv")
    # the test that decided is one that compares the models sample by sample
    tests = set(verdict["test"])
    assert tests <= {"DeLong", "McNemar", "Cochran's Q + McNemar"}, tests
    page = (tmp_path / "out" / "index.html").read_text()
    assert "one test set (one fold)" in page
    assert "paired_ttest.csv" not in {p.name for p in (tmp_path / "out").iterdir()}


# ---------------------------------------------------------------- each data set its own


def test_every_csv_with_several_data_sets_has_the_column(ten):
    out, _ = ten
    written = sorted(out.glob("*.csv"))
    assert written
    for path in written:
        table = pl.read_csv(path, infer_schema_length=0)
        if path.stem in ACROSS:
            continue
        assert "dataset" in table.columns, f"{path.name} holds several data sets"
        assert set(table["dataset"].drop_nulls()) <= {"binary", "three", "ten"}, path.name


def test_each_data_set_shows_its_own_tables(ten):
    _, rep = ten
    agreement = rep.results["agreement"]
    for name, k in [("binary", 3), ("three", 3), ("ten", 3)]:
        mine = agreement.filter(pl.col("dataset") == name)
        # every pair of the data set counted once, in exactly one case
        assert mine["count"].sum() == k * (k - 1) // 2
        pairs = mine["pairs"].explode().drop_nulls().struct.unnest()
        assert set(pairs["dataset"]) == {name}
        assert pairs.select("model_a", "model_b").is_unique().all()
    # on the page: each data set's summary and deciding test hold its own rows only
    html = rep.html
    for anchor, part in sections(html).items():
        name = anchor.removeprefix("dataset-")
        summary = rep.results["summary"].filter(pl.col("dataset") == name)
        shown = re.findall(r'headers="t\d+-auc_mean"[^>]*>\s*([^<\s]*)', part)
        assert shown == [f"{v:.4f}" for v in summary["auc_mean"]], name
        pairs = re.findall(r'headers="t\d+-model_a"', part)
        assert len(pairs) == 3, name  # three models: three pairs, each once
    appendix = html[html.index('id="appendix-agreement"') :]
    appendix = appendix[: appendix.index("</section>")]
    assert appendix.count("<h4>") == 3  # one table per data set


def test_deciding_test_is_the_one_the_verdict_used(ten):
    _, rep = ten
    assert set(rep.results["verdict"]["test"].drop_nulls()) >= {"combined 5x2cv F"}
    for anchor, part in sections(rep.html).items():
        heading = re.search(r"<h3>Deciding test: ([^<]*)</h3>", part).group(1)
        assert heading == "combined 5×2 cv F on auc", anchor
        assert "df_num" in part  # the combined F table on every pair
        assert "The verdict uses the same test" not in part


def test_deciding_test_with_rope_is_the_bayesian_t(tmp_path):
    log = design_log({"a": 2}, repeats=2, folds=4, n=30).drop("dataset")
    rep = write_report(log, tmp_path, rope=0.02, plots=False)
    part = rep.html[rep.html.index('id="paired-log"') : rep.html.index('id="figures-log"')]
    assert "<h3>Deciding test: Bayesian correlated t on auc</h3>" in part
    assert "p_a_higher" in part
    assert "ROPE ±0.02" in part
    assert "Paired t tests on every pair" not in part


# ---------------------------------------------------------------- multiclass first-class


def test_multiclass_data_sets_get_an_overlay_and_a_reliability_figure(ten):
    out, rep = ten
    for name in ("three", "ten"):
        for figure in ("roc_overlay", "calibration", "pairwise", "roc_ovr"):
            assert (out / f"{figure}_{name}.png").read_bytes()[:4] == b"\x89PNG", (figure, name)
    part = sections(rep.html)["dataset-ten"]
    assert "one-vs-rest macro-average ROC curve" in part
    assert "M (Hand &amp; Till)" in part
    assert "Reliability diagram of the top label" in part
    assert "a grid of curves would be unreadable" in part


def test_macro_average_of_the_ten_class_overlay_matches_scikit_learn():
    log = ten_class_sets(n=40).filter((pl.col("dataset") == "ten") & (pl.col("repeat") == 0))
    curves = pr.pooled_roc(log.drop("dataset", "repeat")).collect()
    from polaroc.report.tables import one_vs_rest_macro

    macro = one_vs_rest_macro(curves, points=2001)
    for model, part in macro.partition_by("model", as_dict=True).items():
        rows = log.filter(pl.col("model") == model[0])
        wide = rows.pivot("class", index=["repeat", "fold", "sample"], values="score")
        labels = rows.filter(pl.col("class") == 0).sort("repeat", "fold", "sample")["label"]
        wide = wide.sort("repeat", "fold", "sample")
        scores = wide.select([str(c) for c in range(10)]).to_numpy()
        # the mean of the ten one-vs-rest AUCs (scikit-learn's macro), up to the grid
        expected = roc_auc_score(labels.to_numpy(), scores, multi_class="ovr", average="macro")
        area = np.trapezoid(part["tpr"].to_numpy(), part["fpr"].to_numpy())
        assert area == pytest.approx(expected, abs=2e-3)


# ---------------------------------------------------------------- names and classes


def test_page_names_m_and_the_auc_of_one_class(tmp_path):
    rep = write_report(pl.read_parquet(pr.demo_log_path()), tmp_path, plots=False)
    text = page_text(rep)
    assert "highest mean M (Hand & Till)" in text  # both classes' rows: M
    assert "AUC of class malignant" not in text or "pooled AUC of the positive class" in text
    one = pl.read_parquet(pr.demo_log_path()).filter(pl.col("class") == "malignant")
    rep_one = write_report(one, tmp_path / "one", plots=False)
    assert "highest mean AUC of class malignant" in page_text(rep_one)
    # the per-fold values behind the two names are the two quantities (scikit-learn)
    fold = pl.read_parquet(pr.demo_log_path()).filter(
        (pl.col("model") == "naive_bayes") & (pl.col("fold") == 3)
    )
    m = rep.results["folds"].filter((pl.col("model") == "naive_bayes") & (pl.col("fold") == 3))
    a = rep_one.results["folds"].filter((pl.col("model") == "naive_bayes") & (pl.col("fold") == 3))
    both = [roc_auc_score(p["label"] == c, p["score"])
            for (c,), p in fold.partition_by("class", as_dict=True).items()]  # fmt: skip
    mal = fold.filter(pl.col("class") == "malignant")
    assert m["auc"].item() == pytest.approx(np.mean(both), abs=1e-12)
    assert a["auc"].item() == pytest.approx(
        roc_auc_score(mal["label"] == "malignant", mal["score"]), abs=1e-12
    )


def test_positive_changes_the_positive_class_sections(tmp_path):
    log = pl.read_parquet(pr.demo_log_path()).filter(pl.col("model").is_in(["tree", "lda"]))
    log.write_parquet(tmp_path / "log.parquet")
    for out, extra in (("default", []), ("benign", ["--positive", "benign"])):
        assert main(["report", str(tmp_path / "log.parquet"), "-o", str(tmp_path / out), "-q",
                     *extra]) == 0  # fmt: skip
    default, benign = tmp_path / "default", tmp_path / "benign"
    pooling = pl.read_csv(benign / "pooling.csv")
    assert set(pooling["class"]) == {"benign"}
    assert set(pl.read_csv(default / "pooling.csv")["class"]) == {"malignant"}
    rows = log.filter(pl.col("class") == "benign")
    for row in pooling.iter_rows(named=True):
        mine = rows.filter(pl.col("model") == row["model"])
        expected = roc_auc_score(mine["label"] == "benign", mine["score"])
        assert row["auc_pooled"] == pytest.approx(expected, abs=1e-12)
    # the per-fold average precision is the chosen class's (scikit-learn)
    folds = pl.read_parquet(benign / "folds.parquet")
    for row in folds.iter_rows(named=True):
        mine = rows.filter((pl.col("model") == row["model"]) & (pl.col("fold") == row["fold"]))
        expected = average_precision_score(mine["label"] == "benign", mine["score"])
        assert row["average_precision"] == pytest.approx(expected, abs=1e-12)
    # M does not depend on the positive class
    assert pl.read_csv(default / "summary.csv")["auc_mean"].to_list() == pytest.approx(
        pl.read_csv(benign / "summary.csv")["auc_mean"].to_list()
    )
    for figure in ("roc.png", "pr.png", "roc_overlay.png", "calibration.png"):
        assert (default / figure).read_bytes() != (benign / figure).read_bytes(), figure
    page = (benign / "index.html").read_text()
    assert "benign (given (--positive / positive_class=))" in page
    assert "binary (positive: benign)" in page


def test_positive_that_is_not_a_class_is_one_clean_line(tmp_path):
    pl.read_parquet(pr.demo_log_path()).write_parquet(tmp_path / "log.parquet")
    done = run_cli("report", str(tmp_path / "log.parquet"), "--positive", "nope", "-q",
                   "-o", str(tmp_path / "out"))  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "polaroc: error: --positive nope is not a value of the class column 'class' "
        "(Enum(categories=['benign', 'malignant']))"
    )


# ---------------------------------------------------------------- numbers and sentences


def test_p_values_near_alpha_stay_on_their_side():
    assert p_text(0.0513, 0.05) == "p = 0.051"
    assert p_text(0.0496, 0.05) == "p = 0.0496"
    assert p_text(0.0104, 0.01) == "p = 0.010" or float(p_text(0.0104, 0.01)[4:]) > 0.01
    for p in np.linspace(0.04, 0.06, 201):
        shown = float(p_text(float(p), 0.05).removeprefix("p = "))
        assert (shown <= 0.05) == (p <= 0.05), p
        assert shown != 0.05 or p == 0.05, p
    verdict = pl.DataFrame({"model": ["a", "b"], "rank": [1.0, 2.0], "mean": [0.9, 0.88],
        "ci_low": [0.85, 0.8], "ci_high": [0.95, 0.9], "best": [True, False],
        "tied_with_best": [True, True], "p_vs_best": [None, 0.0513], "test": ["paired t"] * 2})  # fmt: skip
    words = VerdictWords("auc", 0.05, "holm", higher_is_better=True)
    sentence = as_text(verdict_sentences(verdict, words, by=[])[0])
    assert "b (p = 0.051) is not distinguishable" in sentence


def test_means_get_the_digits_that_separate_the_ranks():
    means = [0.99951, 0.99949, 0.97]
    digits = mean_digits(means)
    shown = [f"{m:.{digits}f}" for m in means]
    assert len(set(shown)) == 3
    from polaroc.report.html import compact_table

    verdict = pl.DataFrame({"model": ["hgb", "forest", "nb"], "rank": [1.0, 2.0, 3.0],
        "mean": means, "best": [True, False, False], "tied_with_best": [True, True, False]})  # fmt: skip
    cells = compact_table(verdict, model="model", dataset="dataset")["this log"].to_list()
    assert cells[0].split(" ")[2] != cells[1].split(" ")[2]


def test_alpha_001_labels_every_interval_99(tmp_path, monkeypatch):
    from polaroc.report import plot

    legends = []
    draw = plot.roc_overlay

    def capture(*args, **kwargs):
        fig = draw(*args, **kwargs)
        legend = fig.axes[0].get_legend()
        legends.append((legend.get_title().get_text(), [t.get_text() for t in legend.get_texts()]))
        return fig

    monkeypatch.setattr(plot, "roc_overlay", capture)
    log = design_log({"a": 2}, repeats=3, folds=4, n=30, seed=4).drop("dataset")
    rep = write_report(log, tmp_path, alpha=0.01)
    assert "95 %" not in rep.html
    assert "99 % CI" in rep.html
    ((title, labels),) = legends
    assert "99 % CI, corrected t" in title
    # the legend's interval is the verdict's corrected one (Nadeau & Bengio), not the
    # plain t over folds: recomputed from the per-fold AUCs
    folds = rep.results["folds"]
    best = rep.results["verdict"].filter(pl.col("best"))["model"].item()
    values = folds.filter(pl.col("model") == best)["auc"].to_numpy()
    n, k = values.size, 4
    half = stats.t.ppf(0.995, n - 1) * np.sqrt((1 / n + 1 / (k - 1)) * values.var(ddof=1))
    low, high = max(values.mean() - half, 0.0), min(values.mean() + half, 1.0)
    line = next(text for text in labels if text.startswith(f"{best}:"))
    numbers = [float(x) for x in re.findall(r"\d\.\d+", line.split("[")[1])]
    digits = len(line.split("[")[1].split(",")[0].split(".")[1])
    assert numbers == pytest.approx([low, high], abs=10**-digits)


def test_settings_state_the_rope_of_the_bayesian_table(ten):
    _, rep = ten
    settings = rep.html[rep.html.index('id="settings"') : rep.html.index('id="evaluated"')]
    assert "none (no Bayesian" not in settings
    assert "±0.01 in the Bayesian signed-rank table" in settings
    across = rep.html[rep.html.index('id="bayes_signed_rank"') :]
    assert "with ROPE ±0.01" in across[: across.index("</p>")]


def test_adjustment_is_stated_before_the_first_table(ten):
    _, rep = ten
    first_table = rep.html.index("<table")
    assert rep.html.index("Holm-adjusted over the k − 1 comparisons") < first_table


def test_error_metric_says_which_way_p_a_higher_points(tmp_path):
    log = design_log({f"d{i}": 2 for i in range(3)}, repeats=1, folds=3, n=30, seed=2)
    rep = write_report(log.drop("repeat"), tmp_path, metric="error", rope=0.02, plots=False)
    text = page_text(rep)
    assert "p_a_higher: that a’s error rate is higher by more than the ROPE (a is worse" in text
    assert "probability that a is better" not in text
    assert "that a is better" not in text


# ---------------------------------------------------------------- messages


def test_missing_column_hint_is_in_flag_syntax(tmp_path):
    log = pl.read_parquet(pr.demo_log_path()).rename({"score": "prob"})
    log.write_parquet(tmp_path / "log.parquet")
    done = run_cli("report", str(tmp_path / "log.parquet"), "-q", "-o", str(tmp_path / "out"))
    assert done.returncode == 2
    assert "--score prob" in done.stderr
    assert "score='prob'" not in done.stderr


def test_a_mistake_prints_that_commands_usage(tmp_path):
    done = run_cli("report", "x.parquet", "--bogus")
    assert done.returncode == 2
    assert done.stderr.startswith("usage: polaroc report ")
    assert "unrecognized arguments: --bogus" in done.stderr
    done = run_cli("demo", "--bogus")
    assert done.stderr.startswith("usage: polaroc demo ")


def test_one_warning_prefix(tmp_path):
    log = design_log({f"d{i}": 2 for i in range(3)}, repeats=1, folds=3, n=30).drop("repeat")
    log.write_parquet(tmp_path / "log.parquet")
    done = run_cli("report", str(tmp_path / "log.parquet"), "-q", "--no-plots",
                   "-o", str(tmp_path / "out"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    warned = [line for line in done.stderr.splitlines() if "warning" in line]
    assert len(warned) == 1, done.stderr
    assert warned[0].startswith("polaroc: warning: ")
    assert warned[0].count("polaroc:") == 1


def test_help_is_true_to_what_the_command_takes_and_writes(tmp_path):
    from polaroc.report.tables import report_metrics

    done = run_cli("report", "--help")
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    choices = re.search(r"--metric \{([^}]*)\}", text).group(1).split(",")
    assert choices == report_metrics()
    for word in ("verdict", "index.html", "--positive"):
        assert word in text, word
    # every metric the help offers is accepted on a log whose scores are probabilities
    log = pl.read_parquet(pr.demo_log_path()).filter(pl.col("model").is_in(["tree", "lda"]))
    for metric in choices:
        out = tmp_path / metric
        args = ["report", "-o", str(out), "-q", "--no-plots", "--metric", metric]
        log.write_parquet(tmp_path / "log.parquet")
        assert main([*args, str(tmp_path / "log.parquet")]) == 0, metric
        assert pl.read_csv(out / "verdict.csv")["mean"].is_not_null().all(), metric


def test_verdict_of_a_raw_log_says_run_evaluate_first():
    with pytest.raises(ValueError, match=r"run pr\.evaluate\(log\) first"):
        pr.verdict(pl.read_parquet(pr.demo_log_path()))


def test_page_without_verdict_table_still_renders():
    folds = pl.DataFrame({"model": ["a", "b"], "fold": [0, 0], "n_null_score": [0, 1]})
    kinds = pl.DataFrame({"n_rows": [4], "n_labels": [2], "n_models": [2], "n_folds": [1],
                          "_pr_positive": [None], "multiclass": [False]})  # fmt: skip
    text = report_page(PageInput({"folds": folds}, {}, {}, kinds, [], "auc", 0.05))
    assert "No verdict" in text


def test_a_small_p_that_stays_tied_says_why():
    verdict = pl.DataFrame({"model": ["a", "b", "c"], "rank": [1.5, 2.0, 2.5],
        "mean": [0.9, 0.88, 0.87], "ci_low": [0.85, 0.8, 0.8], "ci_high": [0.95, 0.9, 0.9],
        "best": [True, False, False], "tied_with_best": [True, True, True],
        "p_vs_best": [None, 0.4, 0.03], "test": ["Friedman + mean-rank z"] * 3,
        "dataset": [None, None, None]})  # fmt: skip
    words = VerdictWords("auc", 0.05, "holm", higher_is_better=True)
    sentence = as_text(verdict_sentences(verdict, words, by=["dataset"])[0])
    assert "c (p = 0.03) " in sentence
    assert "Friedman's test does not reject at α = 0.05" in sentence


def test_write_report_example_runs_in_a_fresh_interpreter():
    example = write_report.__doc__.split("Examples\n    --------\n", 1)[1]
    lines = [line.strip()[4:] for line in example.splitlines()
             if line.strip().startswith((">>> ", "... "))]  # fmt: skip
    done = subprocess.run([sys.executable, "-c", "\n".join(lines)], capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
