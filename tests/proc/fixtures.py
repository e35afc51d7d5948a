"""Read the pROC fixtures (written by the R scripts beside this file; tests need no R)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import polars as pl

HERE = Path(__file__).parent


@cache
def infb() -> dict[str, Any]:
    """``fixtures_infb.json``: pROC's smooth and power.roc.test values."""
    return json.loads((HERE / "fixtures_infb.json").read_text())


def infb_csv(name: str) -> pl.DataFrame:
    """One of the data files ``make_logs_infb.py`` wrote (``infb_smooth``, ``infb_pilot``)."""
    return pl.read_csv(HERE / f"{name}.csv")
