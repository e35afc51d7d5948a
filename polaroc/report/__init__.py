"""The whole evaluation of a log: the report's tables, its figures, its page and the command line.

:func:`write_report` writes everything — tables, figures and the self-contained
``index.html`` that opens with the verdict — from a log frame or Parquet paths (the
command line calls it); :func:`report_tables` builds the tables as one lazy plan and
:func:`write_tables` writes collected tables; :mod:`polaroc.plot` draws the figures and
:mod:`polaroc.report.html` lays the page out.
"""

from polaroc.report.tables import (
    Report,
    Settings,
    flat,
    report_tables,
    summary_table,
    to_markdown,
    write_tables,
)
from polaroc.report.write import write_report

__all__ = [
    "Report",
    "Settings",
    "flat",
    "report_tables",
    "summary_table",
    "to_markdown",
    "write_report",
    "write_tables",
]
