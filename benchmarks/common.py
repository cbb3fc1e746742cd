"""Shared helpers for benchmark scripts: machine description and Markdown tables."""
from __future__ import annotations

import argparse
import platform
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import scipy


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next(l.split(":", 1)[1].strip() for l in fh if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    import os

    try:     # timings are only comparable on a quiet machine: say how busy it was
        load = f"; load average {os.getloadavg()[0]:.1f} when the report was written"
    except OSError:
        load = ""
    from toolkit.versions import versions_text

    return (f"{cpu}, {os.cpu_count()} cores; Python {sys.version.split()[0]}, numpy {np.__version__}, "
            f"scipy {scipy.__version__}; solvers: {versions_text()}{load}")


def md_table(df: pd.DataFrame, floatfmt: str = ".4g") -> str:
    cols = list(df.columns)
    lines = ["| " + " | ".join(map(str, cols)) + " |", "|" + "---|" * len(cols)]
    for _, row in df.iterrows():
        cells = [format(v, floatfmt) if isinstance(v, float) else str(v) for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_report(out_dir: Path, name: str, md_lines: list[str], tables: dict) -> list[Path]:
    """Write ``<name>.md`` and one CSV per table (``{csv file name: DataFrame}``) atomically."""
    from toolkit.io import write_text_atomic

    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / f"{name}.md"] + [out_dir / f for f in tables]
    for path, df in zip(paths[1:], tables.values()):
        write_text_atomic(path, df.to_csv(index=False))
    write_text_atomic(paths[0], "\n".join(md_lines))
    return paths


def main(run, doc: str) -> None:
    """The command line every benchmark script shares: [--quick] [--out-dir DIR]."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out-dir", default="results")
    a = ap.parse_args()
    for p in run(a.quick, Path(a.out_dir)):
        print(p)


def runs_solvers(df: pd.DataFrame) -> str:
    """Which solver versions produced a resumable report's raw runs (its ``versions``
    column; rows from before the lock have none)."""
    col = df["versions"] if "versions" in df else pd.Series([None] * len(df), dtype=object)
    counts = col.fillna("not recorded (runs made before the dependency lock)").value_counts()
    return "; ".join(f"{v} ({n} runs)" for v, n in counts.items())
