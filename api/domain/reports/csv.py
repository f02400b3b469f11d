"""The payout report as CSV: the API's `Accept: text/csv` body and `--format csv`."""

import csv
import io
from typing import Any

from api.domain.reports.results import (
    FIGURES,
    GROUP_COLUMNS,
    PayoutReport,
    PayoutRow,
    ReportHeader,
)

TOTAL = "TOTAL"


NO_ACTIVITY = "NO ACTIVITY"


def to_csv(report: PayoutReport) -> str:
    """The report's header as `#` lines (title, generated at, versions, filters, time zone),
    the column names, the rows (or one `NO ACTIVITY` row for an empty period), then one
    `TOTAL` row per currency; ratios as plain decimals, empty when null."""
    column = GROUP_COLUMNS[report.group_by]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    write_header(writer, report.header)
    writer.writerow([column, *FIGURES])
    for row in report.rows:
        writer.writerow([getattr(row, column), *_figures(row)])
    if report.no_activity:
        writer.writerow([NO_ACTIVITY, "no hands were settled in this period"])
    for row in report.totals:
        writer.writerow([TOTAL, *_figures(row)])
    return out.getvalue()


def write_header(writer: Any, header: ReportHeader) -> None:
    """`# name,value` lines: spreadsheets show them, and readers skip them by their `#`."""
    writer.writerow([f"# {header.title}"])
    writer.writerow(["# generated_at", header.generated_at.isoformat().replace("+00:00", "Z")])
    writer.writerow(["# software_version", header.software_version])
    writer.writerow(["# engine_version", header.engine_version])
    for name, value in header.filters.items():
        writer.writerow([f"# {name}", value])
    writer.writerow(["# time_zone", header.time_zone])


def _figures(row: PayoutRow) -> list[object]:
    return ["" if value is None else value for value in (getattr(row, f) for f in FIGURES)]
