"""The payout report as CSV: the API's `Accept: text/csv` body and `--format csv`."""

import csv
import io

from api.domain.reports.results import FIGURES, GROUP_COLUMNS, PayoutReport, PayoutRow

TOTAL = "TOTAL"


def to_csv(report: PayoutReport) -> str:
    """Rows then one `TOTAL` row per currency; ratios as plain decimals, empty when null."""
    column = GROUP_COLUMNS[report.group_by]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([column, *FIGURES])
    for row in report.rows:
        writer.writerow([getattr(row, column), *_figures(row)])
    for row in report.totals:
        writer.writerow([TOTAL, *_figures(row)])
    return out.getvalue()


def _figures(row: PayoutRow) -> list[object]:
    return ["" if value is None else value for value in (getattr(row, f) for f in FIGURES)]
