"""[002] Table 1: cluster sizes of Clos and LumosCore from closed forms (spec 1.5).

Run: python benchmarks/lumos/table1.py   or   python solve.py reproduce lumos-table1
Writes results/lumos/lumos_table1.md and results/lumos/lumos_table1.csv.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from benchmarks.common import Report, headline, machine, main, md_table, reproduce_cmd, write_report
from instances.lumos.scale import CHIPS_TBPS, PORTS_GBPS, ROWS, table1


CLOS_3, CLOS_15, LUMOS_TAU1 = "Clos(3-tier)", "Clos(3-tier-15:1)", "LumosCore(tau=1)"


def _gpus(df: pd.DataFrame, row: str, chip: float, port: int) -> int:
    """The computed cluster size of one cell (raises if the cell is missing)."""
    sel = df[(df.architecture == row) & (df.chip_tbps == chip) & (df.port_gbps == port)]
    if len(sel) != 1:
        raise KeyError(f"Table 1 cell {row} {chip}T/{port}G not found")
    return int(sel.gpus.iloc[0])


def claims(df: pd.DataFrame) -> pd.DataFrame:
    """[002]'s Table 1 and the claims in its text beside ours (computed from ``df``)."""
    ratio = _gpus(df, LUMOS_TAU1, 51.2, 1600) / _gpus(df, CLOS_15, 51.2, 1600)
    return pd.DataFrame([
        ("Table 1 cells equal to the paper's", f"{len(df)} printed cells",
         f"{int(df.match.sum())} of {len(df)}"),
        ("LumosCore(tau=1) / Clos(3-tier-15:1), 51.2T chips, 1.6T ports (text)", "about 8.5x",
         f"{ratio:.2f}x"),
        ("Clos(3-tier), 51.2T chips, 800G ports (text)", "65,536", f"{_gpus(df, CLOS_3, 51.2, 800):,}"),
        ("Clos(3-tier), 51.2T chips, 1.6T ports (text)", "8,192", f"{_gpus(df, CLOS_3, 51.2, 1600):,}"),
    ], columns=["quantity", "paper", "ours"])


def run(quick: bool = False, out_dir: Path = Path("results/lumos")) -> Report:
    df = pd.DataFrame(table1())
    df["match"] = df["ours"] == df["paper"]
    said = claims(df)
    head = "| architecture | " + " | ".join(f"{c}T/{p}G" for c in CHIPS_TBPS for p in PORTS_GBPS) + " |"
    lines = [head, "|---|" + "---|" * (len(CHIPS_TBPS) * len(PORTS_GBPS))]
    for row in ROWS:
        sub = df[df.architecture == row]
        cells = [f"{o}" if m else f"**{o}** (paper {p})" for o, p, m in zip(sub.ours, sub.paper, sub.match)]
        lines.append(f"| {row} | " + " | ".join(cells) + " |")
    md = ["# [002] Table 1: cluster sizes (GPUs) by switch chip and port bandwidth", "",
          f"Regenerate: `{reproduce_cmd('lumos-table1', quick, out_dir)}`. Closed forms, no solver; "
          f"Machine: {machine()}.", "",
          "Radix k = chip / port; K_leaf = K_spine = k/2; K_ocs = 512. Clos 2-tier k^2/2, 3-tier "
          "k^3/4, 3-tier 15:1 (k^2/2) floor(15k/16), LumosCore (k/2)^2/tau * K_ocs. Cells are "
          "printed as the paper prints them (the tau=2 row truncated to whole thousands). A cell "
          "that differs from the paper would be shown in bold with the paper's value.", "",
          *lines, "", md_table(said), ""]
    return write_report(out_dir, "lumos_table1", md, {"lumos_table1.csv": df},
                        headline("[002] Table 1: cluster sizes (GPUs), closed forms (paper: "
                                 "Table 1 and the text beside it)", said))


if __name__ == "__main__":
    main(run, __doc__)
