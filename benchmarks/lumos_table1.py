"""[002] Table 1: cluster sizes of Clos and LumosCore from closed forms (spec 1.5).

Run: python benchmarks/lumos_table1.py   or   python solve.py reproduce lumos-table1
Writes results/lumos_table1.md and results/lumos_table1.csv.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from benchmarks.common import machine, main, write_report
from instances.lumos_scale import CHIPS_TBPS, PORTS_GBPS, ROWS, table1


CLOS_3, CLOS_15, LUMOS_TAU1 = "Clos(3-tier)", "Clos(3-tier-15:1)", "LumosCore(tau=1)"


def _gpus(df: pd.DataFrame, row: str, chip: float, port: int) -> int:
    """The computed cluster size of one cell (raises if the cell is missing)."""
    sel = df[(df.architecture == row) & (df.chip_tbps == chip) & (df.port_gbps == port)]
    if len(sel) != 1:
        raise KeyError(f"Table 1 cell {row} {chip}T/{port}G not found")
    return int(sel.gpus.iloc[0])


def run(quick: bool = False, out_dir: Path = Path("results")) -> list[Path]:
    df = pd.DataFrame(table1())
    df["match"] = df["ours"] == df["paper"]
    head = "| architecture | " + " | ".join(f"{c}T/{p}G" for c in CHIPS_TBPS for p in PORTS_GBPS) + " |"
    lines = [head, "|---|" + "---|" * (len(CHIPS_TBPS) * len(PORTS_GBPS))]
    for row in ROWS:
        sub = df[df.architecture == row]
        cells = [f"{o}" if m else f"**{o}** (paper {p})" for o, p, m in zip(sub.ours, sub.paper, sub.match)]
        lines.append(f"| {row} | " + " | ".join(cells) + " |")
    md = ["# [002] Table 1: cluster sizes (GPUs) by switch chip and port bandwidth", "",
          f"Regenerate: `python solve.py reproduce lumos-table1`. Closed forms, no solver; "
          f"Machine: {machine()}.", "",
          "Radix k = chip / port; K_leaf = K_spine = k/2; K_ocs = 512. Clos 2-tier k^2/2, 3-tier "
          "k^3/4, 3-tier 15:1 (k^2/2) floor(15k/16), LumosCore (k/2)^2/tau * K_ocs. Cells are "
          "printed as the paper prints them (the tau=2 row truncated to whole thousands). A cell "
          "that differs from the paper would be shown in bold with the paper's value.", "",
          *lines, "",
          f"**{int(df.match.sum())} of {len(df)} cells equal the paper's.** Claims checked: 51.2T at "
          f"1.6T gives {_gpus(df, LUMOS_TAU1, 51.2, 1600) / _gpus(df, CLOS_15, 51.2, 1600):.2f}x the "
          "3-tier 15:1 Clos (paper: about 8.5x); a 3-tier Clos of 51.2T chips reaches "
          f"{_gpus(df, CLOS_3, 51.2, 800):,} GPUs at 800G and {_gpus(df, CLOS_3, 51.2, 1600):,} at "
          "1.6T (paper: 65,536 and 8,192).", ""]
    return write_report(out_dir, "lumos_table1", md, {"lumos_table1.csv": df})


if __name__ == "__main__":
    main(run, __doc__)
