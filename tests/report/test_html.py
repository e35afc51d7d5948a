"""The report page's HTML: self-contained, in reading order, tables as the files hold them."""

from __future__ import annotations

import re

import polars as pl
import pytest

from polaroc.report.cli import main
from polaroc.report.html import table_html


@pytest.fixture(scope="module")
def demo_page(tmp_path_factory) -> str:
    out = tmp_path_factory.mktemp("demo")
    assert main(["demo", "-o", str(out), "-q"]) == 0
    return (out / "index.html").read_text()


def test_page_is_self_contained(demo_page):
    assert "<script" not in demo_page
    assert "<link" not in demo_page
    assert "@import" not in demo_page
    assert re.findall(r'(?:src|href)="(?!data:|#)[^"]*"', demo_page) == []
    assert not re.search(r"url\((?!data:)", demo_page)
    # ROC overlay, p-value map, per-fold AUC, ROC per fold, precision-recall, Duncan
    # with the reliability diagram and the decision curves
    assert demo_page.count('src="data:image/png;base64,') == 8


def test_sections_come_in_reading_order(demo_page):
    ids = re.findall(r'<section id="([^"]+)"', demo_page)
    assert ids[:9] == ["verdict", "settings", "evaluated", "results", "summary-log",
                       "paired-log", "figures-log", "calibration-log",
                       "decision-curve-log"]  # fmt: skip
    assert ids[9] == "appendix"
    appendix = ids[10:]
    assert {"appendix-anova", "appendix-duncan", "appendix-agreement", "appendix-pooling",
            "appendix-se-vs-sd"} <= set(appendix)  # fmt: skip
    nav = demo_page[demo_page.index("<nav>") : demo_page.index("</nav>")]
    for anchor in appendix:  # every appendix table is in the contents
        assert f'href="#{anchor}"' in nav
    for paper in (
        "Bradley 1997",
        "Hand &amp; Till",
        "Wu &amp; Flach",
        "Aslan",
        "Davis &amp; Goadrich",
    ):
        assert paper in demo_page


def test_every_table_value_is_on_the_page(demo_page, tmp_path):
    assert main(["demo", "-o", str(tmp_path), "-q", "--no-plots"]) == 0
    summary = pl.read_parquet(tmp_path / "summary.parquet")
    for value in summary["auc_mean"]:
        assert f"{value:.4f}" in demo_page
    assert "6.47e-10" in demo_page  # the ANOVA's p-value keeps its digits


def test_table_html_formats_like_the_markdown_tables():
    df = pl.DataFrame({"model": ["a", "b"], "p": [6.47e-10, 0.5], "ok": [True, None], "k": [1, 2]})
    text = table_html(df)
    assert "6.47e-10" in text
    assert "0.5000" in text
    assert "None" not in text
    assert "null" not in text
    more = table_html(pl.DataFrame({"x": range(100)}), max_rows=10)
    assert "First 10 of 100 rows" in more
