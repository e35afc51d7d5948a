"""The whole evaluation of a log: the report's tables, its figures and the command line.

:func:`report_tables` computes every table of ``polaroc report`` in one plan;
:func:`write_report` writes them; :mod:`polaroc.plot` draws the figures and
:mod:`polaroc.report.html` lays everything out as one self-contained ``index.html``.
"""

from polaroc.report.tables import (
    Report,
    flat,
    report_tables,
    summary_table,
    to_markdown,
    write_report,
)

__all__ = ["Report", "flat", "report_tables", "summary_table", "to_markdown", "write_report"]
