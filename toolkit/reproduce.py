"""Registry of ``solve.py reproduce`` targets: each regenerates one table or figure.

A target names a ``"module:function"``; the function takes ``(quick: bool, out_dir: Path)``
and returns a ``benchmarks.common.Report``: the paths it wrote (a list) and its headline
table (the paper's value beside ours), which ``reproduce`` prints on stdout. Each target
also says how long it takes on 2 cores, in full and with ``--quick`` (``solve.py list`` and
``reproduce --help`` print it): wall times of the whole command, from the runs recorded in
results/ or timed on the shared 2-core machine (load 3-8; the short targets and every
``--quick`` below 1 min retimed for issue 28, nice 10), except those marked estimated
(extrapolated from recorded runs, e.g. the full DELTA figures from their ``--quick`` runs
at a 10x time limit; not run in full). Issue 31's full runs, resumed over several
sessions at load 1-8: ``delta-fig6-simai`` and ``delta-fig8-simai`` the sum of their runs'
times (3.5 h, 2.6 h; quick timed side by side at load 6-8, nice 10: 1271 s, 681 s);
``spectra-gap`` the sum of its solves (4.5 h; quick 7 s from a fresh clone);
``lumos-jct-scale-probing`` 41 + 18 min (two invocations, load 2-4), quick 284 s from a
fresh clone beside another quick run; ``lumos-jct-ilp-probing`` 30 min (load 1-4), quick at
load 5-6; ``lumos-fig24`` 9.6 min (load 1-4, nice 10), quick 93 s at load 3-4;
``lumos-fig23`` 32 min at load 4-5, ``lumos-fig8d`` 12 min at load 3-4 (their committed
runs). ``batch-overhead`` (issue 29): full 2.5 min, quick 15 s, at load 4-4.5, not niced.

Where a run writes (issue 28): a full run into its paper's folder, ``results/<paper>/``
(issue 30: ``spectra-fig5`` into ``results/spectra/``; the shared targets into ``results/``),
a ``--quick`` run into the same under ``results/quick/`` (gitignored), or either into
``--out DIR`` (that folder itself); every cache a target keeps
(``lumos_runs/``, ``delta_runs/``, ``spectra_runs/``) lives under that folder too, so a
quick run never touches ``results/``. [DECISION] A quick run refuses a folder whose report
of the same target is a full run's (its "Regenerate" command has no ``--quick``): a full
result is never replaced by a quick one, whatever ``--out`` says.
"""
from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from pathlib import Path

RESULTS = Path("results")           # a full run's folder (relative to the working folder)
QUICK = RESULTS / "quick"           # a --quick run's folder
ROOMS = ("spectra", "delta", "lumos", "a2a")    # a paper's targets are named <paper>-...


class ReproduceError(ValueError):
    """A reproduce request refused before anything runs (one line naming the file)."""


@dataclass(frozen=True)
class Target:
    """One reproduce target."""

    entry: str                  # "module:function"
    doc: str
    full: str                   # about how long the full run takes on 2 cores ("~3 min")
    quick: str | None = None    # the same with --quick; None: the target has no --quick variant
    estimated: str = ""         # "full", "quick" or "both": that time is estimated, not run

    def time_text(self, which: str) -> str:
        """The ``full`` or ``quick`` time for a listing, "(est.)" when estimated."""
        t = self.full if which == "full" else self.quick
        if t is None:
            return "-"
        return t + (" (est.)" if self.estimated in (which, "both") else "")


TARGETS: dict[str, Target] = {
    "spectra-example": Target("benchmarks.spectra.example:run",
                              "Spectra worked example, Figs. 2-4 (0.62 -> 0.525)", "~2 s", None),
    "spectra-runtime": Target("benchmarks.spectra.runtime:run",
                              "Spectra runtime per matrix, warm vs cold Decompose (GPT, MoE, "
                              "benchmark; n=100, 256, 512), and makespan/LB", "~4.5 min", "~35 s"),
    "spectra-fig5": Target("benchmarks.spectra.figs:run_fig5",
                           "Spectra Fig. 5: synthetic MoE traffic heatmap and statistics",
                           "~5 s", "~5 s"),
    "spectra-fig6": Target("benchmarks.spectra.figs:run_fig6",
                           "Spectra Fig. 6: GPT/MoE makespan vs delta (Spectra, Eclipse, Baseline, LB)",
                           "~1 min", "~15 s"),
    "spectra-fig7": Target("benchmarks.spectra.figs:run_fig7",
                           "Spectra Fig. 7: GPT/MoE makespan with and without Equalize",
                           "~15 s", "~10 s"),
    "spectra-fig8": Target("benchmarks.spectra.figs:run_fig8",
                           "Spectra Fig. 8: GPT/MoE noise sensitivity (sigma 0.3% vs 1%)",
                           "~2 min", "~30 s"),
    "spectra-fig9": Target("benchmarks.spectra.figs:run_fig9",
                           "Spectra Fig. 9: benchmark makespan vs delta", "~40 s", "~10 s"),
    "spectra-fig10": Target("benchmarks.spectra.figs:run_fig10",
                            "Spectra Fig. 10: benchmark makespan vs flows per port m (delta=0.04)",
                            "~50 s", "~10 s"),
    "spectra-fig11": Target("benchmarks.spectra.figs:run_fig11",
                            "Spectra Fig. 11: P(degree = k), simulation vs Eq. 10",
                            "~5 s", "~5 s"),
    "spectra-vs-s": Target("benchmarks.spectra.figs:run_vs_s",
                           "Spectra: makespan vs number of OCSes s, all workloads (delta=0.04)",
                           "~45 s", "~15 s"),
    "spectra-gap": Target("benchmarks.spectra.gap:run",
                          "Spectra gap study: proven optimum (matching MILP, HiGHS) and OPT_T (slot "
                          "MILP) vs Spectra vs lower bound, 4 families, n = 3-6, s = 2-4",
                          "~4.5 h", "~10 s"),    # full: its solves' sum, resumed
    "delta-sim": Target("benchmarks.delta.sim:run",
                        "DELTA simulator time per evaluation and baseline NCT, Table I workloads",
                        "~10 s", "~10 s"),
    "delta-milp": Target("benchmarks.delta.milp:run",
                         "DELTA MILP size/time: pruning, hot start, interval vs fixed-step",
                         "~1 h", "~15 min", "quick"),
    "delta-fig6": Target("benchmarks.delta.figs:run_fig6",
                         "DELTA Fig. 6: NCT of six methods vs bandwidth",
                         "~7 h", "~45 min", "full"),
    "delta-fig8": Target("benchmarks.delta.figs:run_fig8",
                         "DELTA Fig. 8: NCT of six methods vs sequence length",
                         "~7 h", "~45 min", "full"),
    "delta-fig6-simai": Target("benchmarks.delta.simai_figs:run_fig6_simai",
                               "DELTA Fig. 6 on the SimAI/AICB workloads, NCT and iteration-time "
                               "cuts", "~3.5 h", "~21 min"),     # its runs' sum, resumed 3 times
    "delta-fig8-simai": Target("benchmarks.delta.simai_figs:run_fig8_simai",
                               "DELTA Fig. 8 on the SimAI/AICB workloads, NCT and iteration-time "
                               "cuts", "~2.6 h", "~11 min"),     # its runs' sum, resumed
    "delta-fig9": Target("benchmarks.delta.figs:run_fig9",
                         "DELTA Fig. 9: port ratio after port minimization",
                         "~3 h", "~20 min", "full"),
    "delta-fig10": Target("benchmarks.delta.figs:run_fig10",
                          "DELTA Fig. 10: NCT of a stage-reversed job given the freed ports",
                          "~5 h", "~35 min", "full"),
    "delta-fig11": Target("benchmarks.delta.figs:run_fig11",
                          "DELTA Fig. 11: execution time of the DELTA methods vs micro-batches",
                          "~5 h", "~20 min", "full"),
    "delta-ga": Target("benchmarks.delta.figs:run_ga",
                       "DELTA-Fast convergence time per Table I workload", "~3 min", "~2 min"),
    "a2a-example": Target("benchmarks.a2a.example:run",
                          "a2a motivating example (30T vs 35T vs 56T), small worked numbers, "
                          "G2 exact optimum up to n = 8", "~40 s", "~2 s"),
    "a2a-fig11": Target("benchmarks.a2a.figs:run_fig11",
                        "a2a Fig. 11: completion time across n, k and workloads at R* (paper: -39.66%)",
                        "~25 min", "~4 min"),
    "a2a-fig12": Target("benchmarks.a2a.figs:run_fig12",
                        "a2a Fig. 12: completion time across flow sizes, n=16 (paper: -47.35%)",
                        "~45 s", "~20 s"),
    "a2a-fig13": Target("benchmarks.a2a.fig13:run",
                        "a2a Fig. 13: ratio to the Theorem 1 bound vs n up to 4096 (paper: <=2.22, <=4.54)",
                        "~35 s", "~5 s"),
    "a2a-fig14": Target("benchmarks.a2a.figs:run_fig14",
                        "a2a Fig. 14: chosen d and cost vs R", "~6 min", "~2 min"),
    "a2a-gk-literal": Target("benchmarks.a2a.gk_literal:run",
                             "a2a GK-literal (the paper's GenKautz schedule, k^(h-1) rounds per "
                             "hop): every d chunk-simulated, every chunk delivered, >= the bound",
                             "~1 min", "~2 s"),
    "a2a-families": Target("benchmarks.a2a.families:run",
                           "a2a k=2 circulant/GenKautz (generic-SP, GK-literal) chains vs the "
                           "spec's prototype values", "~20 s", "~5 s"),
    "lumos-table1": Target("benchmarks.lumos.table1:run",
                           "LumosCore [002] Table 1: cluster sizes, closed forms", "~1 s", None),
    "lumos-realization": Target("benchmarks.lumos.realization:run",
                                "LumosCore LTRR of Uniform vs Cross Wiring at 8k/32k GPUs ([001] Figs. 2b, 5)",
                                "~20 min", "~4 min", "full"),
    "lumos-reconfig": Target("benchmarks.lumos.reconfig:run",
                             "LumosCore ITV-ILP vs MDMCF vs MCF: time and MRAR over scales ([001] Figs. 6-7)",
                             "~40 min", "~10 min", "full"),
    "lumos-reconfig-quality": Target("benchmarks.lumos.reconfig_quality:run",
                                     "LumosCore MDMCF per step vs the ITV-ILP optimum on 720 "
                                     "generated steps (8-32 Pods, H = 4-16, K = 16-64, ring/job "
                                     "churn), CPU time vs ITV-MCF, variants", "~3 h", "~3 min",
                                     "full"),
    "lumos-resplit-study": Target("benchmarks.lumos.resplit_study:run",
                                  "LumosCore MDMCF + exact re-splits of 3 and 4 OCSes vs the "
                                  "ITV-ILP optimum, over LNS seeds (a study)", "~2 min", "~45 s"),
    "lumos-table6": Target("benchmarks.lumos.table6:run",
                           "LumosCore [002] Table 6: reallocated links per reconfiguration",
                           "~7 min", "~2 min"),
    "lumos-placement": Target("benchmarks.lumos.placement:run",
                              "LumosCore GPU placement: ILP vs greedy on 1,000 trace arrivals at 4k/32k GPUs",
                              "~35 s", "~5 s"),
    "lumos-jct-scale": Target("benchmarks.lumos.jct_scale:run_scale",
                              "LumosCore vs Clos vs Best: Avg.JCT/JRT vs cluster size, simulated ([002] Fig. 8)",
                              "~4 h", "~10 min", "full"),
    "lumos-jct-scale-probing": Target("benchmarks.lumos.jct_scale:run_scale_probing",
                                      "lumos-jct-scale under probing routing ([002]'s default; "
                                      "no larger-jobs part)", "~1 h", "~5 min"),
    "lumos-jct-ilp": Target("benchmarks.lumos.jct_ilp:run_ilp",
                            "MDMCF vs MCF vs ILP vs Uniform vs Clos: JRT/JWT slowdowns and Avg.JCT, simulated ([001] Fig. 8)",
                            "~6 h", "~5 min", "full"),
    "lumos-jct-ilp-probing": Target("benchmarks.lumos.jct_ilp:run_ilp_probing",
                                    "lumos-jct-ilp under probing routing ([001]'s setup, "
                                    "spec 5.3)", "~30 min", "~8.5 min"),
    "lumos-fig25": Target("benchmarks.lumos.robust:run_fig25",
                          "LumosCore vs Clos under probing, ECMP and contention-free routing, 4K "
                          "([002] Fig. 25)", "~30 min", "~3 min"),
    "lumos-fig24": Target("benchmarks.lumos.rail:run_fig24",
                          "LumosCore vs Clos, rail-optimized vs server layout inside the Pods "
                          "(LumosCore under both rail rules), 4K, probing and ECMP ([002] "
                          "Fig. 24)", "~10 min", "~1.5 min"),
    "lumos-fig23": Target("benchmarks.lumos.robust:run_fig23",
                          "LumosCore vs Clos vs workload level (eq. 9), 4K, probing ([002] Fig. 23)",
                          "~32 min", "~3 min"),
    "lumos-fig8d": Target("benchmarks.lumos.robust:run_fig8d",
                          "LumosCore vs Clos vs share of GPUs failed, 4K, probing ([002] Fig. 8(d))",
                          "~12 min", "~3.5 min"),
    "lumos-mrar-gap": Target("benchmarks.lumos.mrar_gap:run",
                             "LumosCore: MDMCF's MRAR gain over ITV-MCF split by workload and "
                             "step (+26.23 % ours vs +2.77 % [001])", "~15 min", "~2 min",
                             "full"),
    "lumos-sim-speed": Target("benchmarks.lumos.sim_speed:run",
                              "LumosCore simulator: one 1,000-job simulation at 32K GPUs with MDMCF, time split",
                              "~1.5 min", "~15 s"),
    "time-limit": Target("benchmarks.time_limit:run",
                         "--time-limit bounds the whole run: every model method and clock-guarded "
                         "heuristic on a large instance, 2 busy processes beside it",
                         "~10 min", "~1.5 min", "quick"),
    "batch-scaling": Target("benchmarks.batch_scaling:run",
                            "batch scale-out: process pool and Dask at 1, 2, ... workers, "
                            "speedup, per-task overhead, equal objectives", "~15 min", "~2 min"),
    "batch-scaling-size": Target("benchmarks.batch_scaling_size:run",
                                 "batch speedup at 64 and 256 tasks on the pool at 1 worker and "
                                 "all cores, and the pool's start alone", "~3 min", "~1 min"),
    "batch-overhead": Target("benchmarks.batch_overhead:run",
                             "batch overhead per task at 1 worker: CPU and wall beside the runs, "
                             "all-in and warm, over fresh processes", "~2.5 min", "~15 s"),
    "import-time": Target("benchmarks.import_time:run",
                          "start-up cost: import time of list, --help and a heuristic solve (< 0.5 s)",
                          "~10 s", None),
    "cold-start": Target("benchmarks.cold_start:run",
                         "first solve in a new process vs a warm solve per method family, where "
                         "the start-up goes, and compiling with an empty kernel cache",
                         "~13 min", "~2.5 min"),
}


def room(name: str) -> str:
    """The paper whose results folder target ``name`` writes to (``spectra-fig5`` ->
    ``spectra``); "" for the shared targets (``batch-scaling``, ``cold-start``, ...)."""
    head = name.split("-")[0]
    return head if head in ROOMS else ""


def default_out(quick: bool, name: str = "") -> Path:
    """Where a run of target ``name`` writes without ``--out``: results/<paper>/ (results/
    for a shared target), or the same under results/quick/ with ``--quick`` (also for a
    target without a quick variant, which then runs in full: the user asked for a run that
    leaves results/ alone)."""
    return (QUICK if quick else RESULTS) / room(name)


def target_lines() -> list[str]:
    """The targets with their full and quick times, one line each (``list`` and
    ``reproduce --help``)."""
    return [f"  {t:<22} {tg.time_text('full'):<15} {tg.time_text('quick'):<15} {tg.doc}"
            for t, tg in TARGETS.items()] + \
        ["  ('-': no --quick variant; (est.): estimated from recorded runs, not timed)"]


def report_path(name: str, out_dir: Path) -> Path:
    """The Markdown report target ``name`` writes in ``out_dir`` (``a2a-fig13`` ->
    ``a2a_fig13.md``)."""
    return out_dir / (name.replace("-", "_") + ".md")


_CMD = re.compile(r"`python solve\.py reproduce (\S+?)((?: [^`]*)?)`")


def holds_full_run(name: str, out_dir: Path) -> Path | None:
    """``out_dir``'s report of ``name`` when a full run wrote it: the first
    ``python solve.py reproduce NAME ...`` command in its opening lines has no ``--quick``.
    None when there is no report or it is a quick run's."""
    path = report_path(name, out_dir)
    try:
        head = path.read_text(errors="replace").splitlines()[:8]
    except OSError:
        return None
    for line in head:
        for target, rest in _CMD.findall(line):
            if target == name:
                return None if "--quick" in rest.split() else path
    return None


def run_target(name: str, quick: bool = False, out_dir: Path | None = None):
    """Run target ``name`` into ``out_dir`` (default :func:`default_out`); returns its
    ``Report`` (paths written, headline). KeyError for an unknown target, ReproduceError
    when a quick run would replace a full run's report."""
    if name not in TARGETS:
        raise KeyError(f"unknown reproduce target {name!r} (known: {', '.join(TARGETS)})")
    target = TARGETS[name]
    out_dir = default_out(quick, name) if out_dir is None else Path(out_dir)
    if quick and target.quick is None:
        from toolkit.progress import note

        note(f"note: reproduce {name} has no --quick variant; running it in full ({target.full})")
        quick = False
    full = holds_full_run(name, out_dir) if quick else None
    if full is not None:
        raise ReproduceError(
            f"--out {out_dir.as_posix()}: {full.as_posix()} holds a full run of {name}; a "
            f"--quick run never replaces it (leave out --out to write to "
            f"{default_out(True, name).as_posix()}/, or name another folder)")
    mod, fn = target.entry.split(":")
    out_dir.mkdir(parents=True, exist_ok=True)
    return getattr(importlib.import_module(mod), fn)(quick=quick, out_dir=out_dir)


def _module_of(module_file: str) -> str:
    """The dotted module name of a file of this checkout (``benchmarks/spectra/gap.py``
    -> ``benchmarks.spectra.gap``)."""
    rel = Path(module_file).resolve().relative_to(Path(__file__).resolve().parents[1])
    return ".".join(rel.with_suffix("").parts)


def target_of(module_file: str, function: str) -> str | None:
    """The target whose entry is ``<the file's module>:<function>`` (a benchmark script
    run directly, where its module is ``__main__``)."""
    entry = f"{_module_of(module_file)}:{function}"
    return next((t for t, tg in TARGETS.items() if tg.entry == entry), None)
