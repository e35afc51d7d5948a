"""polaroc's private core: what every room reads, and nothing public.

The reading of the log (:mod:`~polaroc.core.log`, on the column and indicator checks of
:mod:`~polaroc.core.inputs` and the internal names of :mod:`~polaroc.core.names`), the
counting core (:mod:`~polaroc.core.counts`: the count schema and its two evaluators;
:mod:`~polaroc.core.formulas`: each rank-based formula once; :mod:`~polaroc.core.blocks`:
the per-class-block tables built on them), the problems a table reports
(:mod:`~polaroc.core.guard`), the batches that bound a query's memory
(:mod:`~polaroc.core.batches`), the argument vocabulary (:mod:`~polaroc.core.args`) and
the metric registry (:mod:`~polaroc.core.registry`). The rooms above (``metrics``, ``evaluation``,
``compare``, ``scale``, ``report``) import from here; nothing here imports from them.
See ``docs/architecture.md``.
"""
