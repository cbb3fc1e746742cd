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
    "spectra-fig5": ("benchmarks.spectra_figs:run_fig5",
                     "Spectra Fig. 5: synthetic MoE traffic heatmap and statistics"),
    "spectra-fig6": ("benchmarks.spectra_figs:run_fig6",
                     "Spectra Fig. 6: GPT/MoE makespan vs delta (Spectra, Eclipse, Baseline, LB)"),
    "spectra-fig7": ("benchmarks.spectra_figs:run_fig7",
                     "Spectra Fig. 7: GPT/MoE makespan with and without Equalize"),
    "spectra-fig8": ("benchmarks.spectra_figs:run_fig8",
                     "Spectra Fig. 8: GPT/MoE noise sensitivity (sigma 0.3% vs 1%)"),
    "spectra-fig9": ("benchmarks.spectra_figs:run_fig9",
                     "Spectra Fig. 9: benchmark makespan vs delta"),
    "spectra-fig10": ("benchmarks.spectra_figs:run_fig10",
                      "Spectra Fig. 10: benchmark makespan vs flows per port m (delta=0.04)"),
    "spectra-fig11": ("benchmarks.spectra_figs:run_fig11",
                      "Spectra Fig. 11: P(degree = k), simulation vs Eq. 10"),
    "spectra-vs-s": ("benchmarks.spectra_figs:run_vs_s",
                     "Spectra: makespan vs number of OCSes s, all workloads (delta=0.04)"),
    "spectra-gap": ("benchmarks.spectra_gap:run",
                    "Spectra gap study: exact MILP (HiGHS) vs Spectra vs lower bound, small instances"),
    "delta-sim": ("benchmarks.delta_sim:run",
                  "DELTA simulator time per evaluation and baseline NCT, Table I workloads"),
    "delta-milp": ("benchmarks.delta_milp:run",
                   "DELTA MILP size/time: pruning, hot start, interval vs fixed-step"),
    "delta-fig6": ("benchmarks.delta_figs:run_fig6", "DELTA Fig. 6: NCT of six methods vs bandwidth"),
    "delta-fig8": ("benchmarks.delta_figs:run_fig8", "DELTA Fig. 8: NCT of six methods vs sequence length"),
    "delta-fig9": ("benchmarks.delta_figs:run_fig9", "DELTA Fig. 9: port ratio after port minimization"),
    "delta-fig10": ("benchmarks.delta_figs:run_fig10",
                    "DELTA Fig. 10: NCT of a stage-reversed job given the freed ports"),
    "delta-fig11": ("benchmarks.delta_figs:run_fig11",
                    "DELTA Fig. 11: execution time of the DELTA methods vs micro-batches"),
    "delta-ga": ("benchmarks.delta_figs:run_ga", "DELTA-Fast convergence time per Table I workload"),
    "a2a-example": ("benchmarks.a2a_example:run",
                    "a2a motivating example (30T vs 35T vs 56T) and small worked numbers"),
    "a2a-fig11": ("benchmarks.a2a_figs:run_fig11",
                  "a2a Fig. 11: completion time across n, k and workloads at R* (paper: -39.66%)"),
    "a2a-fig12": ("benchmarks.a2a_figs:run_fig12",
                  "a2a Fig. 12: completion time across flow sizes, n=16 (paper: -47.35%)"),
    "a2a-fig13": ("benchmarks.a2a_fig13:run",
                  "a2a Fig. 13: ratio to the Theorem 1 bound vs n up to 4096 (paper: <=2.22, <=4.54)"),
    "a2a-fig14": ("benchmarks.a2a_figs:run_fig14", "a2a Fig. 14: chosen d and cost vs R"),
    "a2a-families": ("benchmarks.a2a_families:run",
                     "a2a k=2 circulant/GenKautz chains vs the spec's prototype values"),
    "lumos-table1": ("benchmarks.lumos_table1:run", "LumosCore [002] Table 1: cluster sizes, closed forms"),
    "lumos-realization": ("benchmarks.lumos_realization:run",
                          "LumosCore LTRR of Uniform vs Cross Wiring at 8k/32k GPUs ([001] Figs. 2b, 5)"),
    "lumos-reconfig": ("benchmarks.lumos_reconfig:run",
                       "LumosCore ITV-ILP vs MDMCF vs MCF: time and MRAR over scales ([001] Figs. 6-7)"),
    "lumos-table6": ("benchmarks.lumos_table6:run",
                     "LumosCore [002] Table 6: reallocated links per reconfiguration"),
    "lumos-placement": ("benchmarks.lumos_placement:run",
                        "LumosCore GPU placement: ILP vs greedy on 1,000 trace arrivals at 4k/32k GPUs"),
    "import-time": ("benchmarks.import_time:run",
                    "start-up cost: import time of list, --help and a heuristic solve (< 0.5 s)"),
}


def run_target(name: str, quick: bool = False, out_dir: Path = Path("results")) -> list[Path]:
    if name not in TARGETS:
        raise KeyError(f"unknown reproduce target {name!r} (known: {', '.join(TARGETS)})")
    mod, fn = TARGETS[name][0].split(":")
    out_dir.mkdir(parents=True, exist_ok=True)
    return getattr(importlib.import_module(mod), fn)(quick=quick, out_dir=out_dir)
