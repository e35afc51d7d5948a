"""index.html in a real headless Chromium: every section there, nothing fetched, nothing broken."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import polars as pl
import pytest

from polaroc.report.cli import main
from tests.report.test_cli import binary_log, multiclass_log

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip


def browser_available() -> bool:
    return Path(CHROMIUM).exists() or shutil.which("chromium") is not None


pytestmark = pytest.mark.skipif(
    not browser_available() and os.environ.get("CI") != "true",
    reason="Debian's chromium is not installed (CI installs it and never skips)",
)


def render(page: Path, shot: Path) -> dict[str, object]:
    """Open ``page``; return every request, failed load, section ids and images found."""
    from playwright.sync_api import sync_playwright

    requests: list[str] = []
    failed: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        tab = browser.new_page(viewport={"width": 1200, "height": 900})
        tab.on("request", lambda r: requests.append(r.url))
        tab.on("requestfailed", lambda r: failed.append(r.url))
        tab.goto(page.as_uri(), wait_until="load")
        sections = tab.eval_on_selector_all("section[id]", "els => els.map(e => e.id)")
        images = tab.eval_on_selector_all(
            "img",
            "els => els.map(e => [e.complete && e.naturalWidth > 0, e.src.slice(0, 22), e.alt])",
        )
        first = tab.eval_on_selector("body > section", "e => e.id")
        # a wide table scrolls inside its box instead of fitting the page: "clipped"
        clipped = tab.eval_on_selector_all(
            "div.wide", "els => els.filter(e => e.scrollWidth > e.clientWidth + 1).length"
        )
        # a contents entry broken across the two columns has two boxes
        broken = tab.eval_on_selector_all(
            "nav > ul > li", "els => els.filter(e => e.getClientRects().length > 1).length"
        )
        shrunk = tab.eval_on_selector_all(  # figures drawn wider than the page shrink
            "img", "els => els.filter(e => e.naturalWidth > 1.25 * e.clientWidth).map(e => e.alt)"
        )
        above_fold = tab.evaluate(
            "document.querySelector('#verdict p.verdict').getBoundingClientRect().top"
        )
        tab.screenshot(path=str(shot), full_page=True)
        browser.close()
    return {"requests": requests, "failed": failed, "sections": sections, "images": images,
            "first": first, "verdict_top": above_fold, "clipped": clipped, "broken": broken,
            "shrunk": shrunk}  # fmt: skip


SETTINGS = ("metric compared", "design", "test of the verdict", "significance level",
            "adjustment", "ROPE", "seed", "threshold", "weight")  # fmt: skip


def check(result: dict[str, object], page: Path, expected: list[str]) -> None:
    others = [u for u in result["requests"] if u != page.as_uri() and not u.startswith("data:")]
    assert others == [], "the page must not fetch anything"
    assert result["failed"] == []
    for ok, src, alt in result["images"]:
        assert ok, f"an image failed to decode: {alt}"
        assert src.startswith("data:image/png;base64")
    for section in expected:
        assert section in result["sections"], (section, result["sections"])
    # the verdict is the first section, and its first sentence is on the first screen
    assert result["first"] == "verdict"
    assert result["sections"][:2] == ["verdict", "settings"]
    assert result["verdict_top"] < 900
    assert result["clipped"] == 0, "a table is wider than the page"
    assert result["broken"] == 0, "a contents entry breaks across columns"
    assert result["shrunk"] == [], "a figure is shrunk past legibility"
    text = page.read_text()
    settings = text[text.index('id="settings"') : text.index('id="evaluated"')]
    for name in SETTINGS:
        assert name in settings, name


def report(tmp_path: Path, log: pl.DataFrame | None, *extra: str, out: str = "out") -> Path:
    folder = tmp_path / out
    if log is None:
        assert main(["demo", "-o", str(folder), "-q", *extra]) == 0
    else:
        log.write_parquet(tmp_path / "log.parquet")
        assert main(["report", str(tmp_path / "log.parquet"), "-o", str(folder), "-q", *extra]) == 0
    return folder / "index.html"


BINARY = ["verdict", "settings", "evaluated", "summary-log", "paired-log", "figures-log",
          "appendix"]  # fmt: skip


def alts(result: dict[str, object]) -> list[str]:
    return [alt for _, _, alt in result["images"]]


def test_demo_page(tmp_path):
    page = report(tmp_path, None)
    result = render(page, tmp_path / "demo.png")
    check(result, page, BINARY)
    # ROC overlay, p-value map, per-fold AUC, ROC per fold, precision-recall, reliability
    # diagram and decision curves (the demo's scores are probabilities), Duncan
    assert len(result["images"]) == 8
    assert "reliability diagram" in alts(result)
    assert "decision curves" in alts(result)
    assert "ROC curves of every model" in alts(result)
    assert "p-value map" in alts(result)
    assert (tmp_path / "demo.png").stat().st_size > 50_000
    again = report(tmp_path, None, out="again")
    assert again.read_text() == page.read_text(), "two runs must give identical HTML"


def test_multiclass_page(tmp_path):
    page = report(tmp_path, multiclass_log(classes=4))
    result = render(page, tmp_path / "multi.png")
    check(result, page, BINARY)
    assert "one-vs-rest ROC curves" in alts(result)
    assert "pairwise separabilities" in alts(result)
    assert "ROC curves of every model" in alts(result)  # the macro-average overlay
    assert "reliability diagram" in alts(result)  # top label


def test_repeated_page_with_rope(tmp_path):
    log = pl.concat([binary_log(seed=r, folds=5).with_columns(repeat=pl.lit(r)) for r in range(3)])
    page = report(tmp_path, log, "--rope", "0.01")
    result = render(page, tmp_path / "repeated.png")
    check(result, page, BINARY)
    text = page.read_text()
    assert "corrected repeated k-fold t" in text
    assert "Uncorrected" in text  # the ANOVA and Duncan's test on a repeated design
    assert "posterior of the Bayesian t test" in alts(result)


def test_multi_dataset_page(tmp_path):
    log = pl.concat(
        [binary_log(seed=s, folds=3).with_columns(dataset=pl.lit(f"set{s}")) for s in range(4)]
    )
    page = report(tmp_path, log)
    result = render(page, tmp_path / "datasets.png")
    per_set = [f"dataset-set{s}" for s in range(4)] + [f"figures-set{s}" for s in range(4)]
    check(result, page, ["evaluated", *per_set, "across", "appendix"])
    assert "critical-difference diagram" in alts(result)
    text = page.read_text()
    assert "Across the 4 data sets" in text


def test_ten_class_data_sets_on_a_five_by_two_design(tmp_path):
    from tests.report.logs import ten_class_sets

    page = report(tmp_path, ten_class_sets(n=40))
    result = render(page, tmp_path / "ten.png")
    per_set = [f"{part}-{name}" for name in ("binary", "three", "ten")
               for part in ("dataset", "summary", "paired", "figures", "calibration")]  # fmt: skip
    check(result, page, ["evaluated", *per_set, "across", "appendix"])
    text = page.read_text()
    ten = text[text.index('id="dataset-ten"') : text.index('id="across"')]
    for alt in ("ROC curves of every model", "one-vs-rest ROC curves", "pairwise separabilities",
                "reliability diagram", "p-value map", "per-fold values"):  # fmt: skip
        assert f'alt="{alt}"' in ten, alt
    assert "Deciding test: combined 5×2 cv F on auc" in ten
