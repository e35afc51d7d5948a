"""polaroc's private core: what every room reads, and nothing public.

The reading of the log (:mod:`~polaroc.core.log`, on the column and indicator checks of
:mod:`~polaroc.core.inputs` and the internal names of :mod:`~polaroc.core.names`), the
counting core (:mod:`~polaroc.core.legacy_counts`, :mod:`~polaroc.core.blocks`), the problems
a table reports (:mod:`~polaroc.core.guard`) and the batches that bound a query's memory
(:mod:`~polaroc.core.batches`). The rooms above (``metrics``, ``evaluation``,
``compare``, ``scale``, ``report``) import from here; nothing here imports from them.
See ``docs/architecture.md``.
"""
