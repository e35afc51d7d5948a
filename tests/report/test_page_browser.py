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
    """Open ``page``; return every request, failed load and the section ids found."""
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
            "img", "els => els.map(e => [e.complete && e.naturalWidth > 0, e.src.slice(0, 22)])"
        )
        tab.screenshot(path=str(shot), full_page=True)
        browser.close()
    return {"requests": requests, "failed": failed, "sections": sections, "images": images}


def check(result: dict[str, object], page: Path, expected: list[str]) -> None:
    others = [u for u in result["requests"] if u != page.as_uri() and not u.startswith("data:")]
    assert others == [], "the page must not fetch anything"
    assert result["failed"] == []
    for ok, src in result["images"]:
        assert ok, "an image failed to decode"
        assert src.startswith("data:image/png;base64")
    for section in expected:
        assert section in result["sections"], (section, result["sections"])


def report(tmp_path: Path, log: pl.DataFrame | None, *extra: str) -> Path:
    out = tmp_path / "out"
    if log is None:
        assert main(["demo", "-o", str(out), "-q", *extra]) == 0
    else:
        log.write_parquet(tmp_path / "log.parquet")
        assert main(["report", str(tmp_path / "log.parquet"), "-o", str(out), "-q", *extra]) == 0
    return out / "index.html"


BINARY = ["evaluated", "summary-log", "paired-log", "anova-log", "distributions-log", "roc-log"]


def test_demo_page(tmp_path):
    page = report(tmp_path, None)
    result = render(page, tmp_path / "demo.png")
    check(result, page, BINARY)
    assert len(result["images"]) == 4  # Duncan, per-fold AUC, ROC, precision-recall
    assert (tmp_path / "demo.png").stat().st_size > 50_000


def test_multiclass_page(tmp_path):
    page = report(tmp_path, multiclass_log(classes=4))
    result = render(page, tmp_path / "multi.png")
    check(result, page, [*BINARY[:-1], "pairwise-log"])
    assert "roc-log" not in result["sections"]


def test_repeated_page_with_rope(tmp_path):
    log = pl.concat([binary_log(seed=r, folds=5).with_columns(repeat=pl.lit(r)) for r in range(3)])
    page = report(tmp_path, log, "--rope", "0.01")
    result = render(page, tmp_path / "repeated.png")
    check(result, page, BINARY)
    text = page.read_text()
    assert "corrected repeated k-fold t" in text
    if "bayes_ttest" in text:
        assert 'id="design"' in text


def test_multi_dataset_page(tmp_path):
    log = pl.concat(
        [binary_log(seed=s, folds=3).with_columns(dataset=pl.lit(f"set{s}")) for s in range(4)]
    )
    page = report(tmp_path, log)
    result = render(page, tmp_path / "datasets.png")
    per_set = [f"dataset-set{s}" for s in range(4)] + [f"roc-set{s}" for s in range(4)]
    check(result, page, ["evaluated", *per_set, "across"])
    assert any(src.startswith("data:image/png") for _, src in result["images"])
