"""The files of a gap study's report: the tables of :mod:`toolkit.gap_report` and the
plot of :mod:`toolkit.gap_plot`.

    write_report(records, folder)  ->  gap.md, gap.csv, gap-summary.csv, gap.png
"""
from __future__ import annotations

import io
from pathlib import Path

from toolkit.gap_report import (FILES, SUMMARY_COLS, TABLE_COLS, gap_rows, markdown,
                                method_summary, rank_by_instance)


def write_table_csv(rows: list[dict], cols, path: Path) -> None:
    from toolkit.records_csv import write_csv
    from toolkit.io import write_text_atomic

    buf = io.StringIO()
    write_csv(rows, buf, cols)
    write_text_atomic(path, buf.getvalue())


def write_report(recs: list[dict], folder: str | Path) -> list[Path]:
    """Rank ``recs`` per instance and write FILES into ``folder``; return their paths."""
    from toolkit.io import write_text_atomic

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rank_by_instance(recs)
    rows, summary = gap_rows(recs), method_summary(recs)
    md, tab, summ, png = (folder / f for f in FILES)
    write_text_atomic(md, markdown(rows, summary))
    write_table_csv(rows, TABLE_COLS, tab)
    write_table_csv(summary, SUMMARY_COLS, summ)
    from toolkit.gap_plot import plot

    plot(recs, png)
    return [md, tab, summ, png]
