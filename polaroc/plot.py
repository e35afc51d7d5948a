"""Figures of polaroc's tables (matplotlib; install with ``pip install 'polaroc[plot]'``).

The figures live in :mod:`polaroc.report.plot`; this module is their public name.
"""

from polaroc.report.plot import *  # noqa: F403
from polaroc.report.plot import __all__ as __all__
