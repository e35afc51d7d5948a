"""The per-fold table, and the bootstrap that resamples it.

:func:`evaluate` turns a score log into one row per (model, fold) — the table every
comparison in :mod:`polaroc.compare` reads; :func:`bootstrap` resamples the log's
samples and recomputes such a table per replicate. This room sits above
:mod:`polaroc.metrics` (whose scoring rules ``evaluate`` assembles) and below
:mod:`polaroc.compare`.

(The modules are not named like the functions: a submodule called ``evaluate`` would
replace the function as an attribute of the package whenever it is imported by path.)
"""

from polaroc.evaluation.per_fold import evaluate
from polaroc.evaluation.resample import bootstrap

__all__ = ["bootstrap", "evaluate"]
