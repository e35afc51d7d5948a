"""What every figure module of the report needs: pyplot (the ``report`` extra) and a frame."""

from __future__ import annotations

from types import ModuleType

import polars as pl

from polaroc.core.inputs import FrameLike

__all__ = ["as_frame", "pyplot"]


def pyplot() -> ModuleType:
    """``matplotlib.pyplot``, or an ``ImportError`` naming the extra that installs it."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - exercised without the extra
        msg = "plotting needs matplotlib: pip install 'polaroc[report]'"
        raise ImportError(msg) from exc
    return plt


def as_frame(table: FrameLike) -> pl.DataFrame:
    """``table`` collected (a ``LazyFrame``) or as it is (a ``DataFrame``)."""
    return table.collect() if isinstance(table, pl.LazyFrame) else table
