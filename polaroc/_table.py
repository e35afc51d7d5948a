"""Transitional re-export: the per-fold table helpers now live in ``polaroc.compare._table``.

Kept only so that modules not yet updated (``compare/delong.py``) keep importing;
delete once nothing imports ``polaroc._table``.
"""

from polaroc.compare._table import *  # noqa: F403
from polaroc.compare._table import ROUNDING, guarded, listing, one_class_rows, over, problems

__all__ = ["ROUNDING", "guarded", "listing", "one_class_rows", "over", "problems"]
