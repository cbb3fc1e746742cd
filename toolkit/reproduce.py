"""Registry of ``solve.py reproduce`` targets: each regenerates one table or figure.

A target is ``"module:function"``; the function takes ``(quick: bool, out_dir: Path)``
and returns the paths it wrote. Later problem issues add their targets here.
"""
from __future__ import annotations

import importlib
from pathlib import Path

TARGETS: dict[str, tuple[str, str]] = {
    "spectra-example": ("benchmarks.spectra_example:run",
                        "Spectra worked example, Figs. 2-4 (0.62 -> 0.525)"),
    "spectra-runtime": ("benchmarks.spectra_runtime:run",
                        "Spectra runtime and makespan/LB on n=100 benchmark matrices"),
    "delta-sim": ("benchmarks.delta_sim:run",
                  "DELTA simulator time per evaluation and baseline NCT, Table I workloads"),
    "delta-milp": ("benchmarks.delta_milp:run",
                   "DELTA MILP size/time: pruning, hot start, interval vs fixed-step"),
    "delta-fig6": ("benchmarks.delta_figs:run_fig6", "DELTA Fig. 6: NCT of six methods vs bandwidth"),
    "delta-fig8": ("benchmarks.delta_figs:run_fig8", "DELTA Fig. 8: NCT of six methods vs sequence length"),
    "lumos-table1": ("benchmarks.lumos_table1:run", "LumosCore [002] Table 1: cluster sizes, closed forms"),
    "lumos-realization": ("benchmarks.lumos_realization:run",
                          "LumosCore LTRR of Uniform vs Cross Wiring at 8k/32k GPUs ([001] Figs. 2b, 5)"),
    "lumos-reconfig": ("benchmarks.lumos_reconfig:run",
                       "LumosCore ITV-ILP vs MDMCF vs MCF: time and MRAR over scales ([001] Figs. 6-7)"),
    "lumos-table6": ("benchmarks.lumos_table6:run",
                     "LumosCore [002] Table 6: reallocated links per reconfiguration"),
}


def run_target(name: str, quick: bool = False, out_dir: Path = Path("results")) -> list[Path]:
    if name not in TARGETS:
        raise KeyError(f"unknown reproduce target {name!r} (known: {', '.join(TARGETS)})")
    mod, fn = TARGETS[name][0].split(":")
    out_dir.mkdir(parents=True, exist_ok=True)
    return getattr(importlib.import_module(mod), fn)(quick=quick, out_dir=out_dir)
