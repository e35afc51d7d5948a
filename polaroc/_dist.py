"""Transitional re-export: the distribution functions now live in ``polaroc.compare._dist``.

Kept only so that modules not yet updated (``compare/delong.py``) keep importing;
delete once nothing imports ``polaroc._dist``.
"""

from polaroc.compare._dist import *  # noqa: F403
from polaroc.compare._dist import __all__ as __all__
