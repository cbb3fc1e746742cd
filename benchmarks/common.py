"""Shared helpers for benchmark scripts: machine description and Markdown tables."""
from __future__ import annotations

import platform
import sys

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

    return (f"{cpu}, {os.cpu_count()} cores; Python {sys.version.split()[0]}, numpy {np.__version__}, "
            f"scipy {scipy.__version__}")


def md_table(df: pd.DataFrame, floatfmt: str = ".4g") -> str:
    cols = list(df.columns)
    lines = ["| " + " | ".join(map(str, cols)) + " |", "|" + "---|" * len(cols)]
    for _, row in df.iterrows():
        cells = [format(v, floatfmt) if isinstance(v, float) else str(v) for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
