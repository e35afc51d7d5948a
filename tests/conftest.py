"""Shared fixtures: every query runs eagerly, lazily in memory, and streaming."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "default", deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("ci", parent=settings.get_profile("default"), max_examples=40)
settings.load_profile("default")

MODES = ("eager", "in-memory", "streaming")

Query = Callable[[pl.DataFrame | pl.LazyFrame], pl.DataFrame | pl.LazyFrame]


def run_query(df: pl.DataFrame, query: Query, mode: str) -> pl.DataFrame:
    """Run ``query`` on ``df`` eagerly, or on ``df.lazy()`` collected with ``mode``'s engine."""
    if mode == "eager":
        out = query(df)
        return out.collect() if isinstance(out, pl.LazyFrame) else out
    out = query(df.lazy())
    return out.collect(engine=mode)


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def run(mode: str) -> Callable[[pl.DataFrame, Query], pl.DataFrame]:
    """``run(df, query)``: the query's result under the parametrised engine."""
    return lambda df, query: run_query(df, query, mode)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261122)
