"""Spectra runtime per matrix on GPT, MoE and benchmark (three Decompose paths), and makespan / LB.

Paper (Liang et al. 2026, Section V): "The runtimes for Spectra are from under 1 ms to
14 ms" (3.7 GHz Threadripper 3970X). Each instance is timed end to end (Decompose +
Refine + LPT + Equalize; nothing cached), best of 3 repeats at n = 100 (one run at n = 256
and 512), with Decompose's default ``matching="warm"`` (at these sizes the compiled rounds of
heuristics.spectra.jit), ``"scipy"`` (heuristics.spectra.warm) and ``"cold"`` (one fresh
assignment per round) on the same matrix, one after the other. The compiled rounds are
loaded before the timing; what a new process pays to load them (numba import and cached
machine code) is measured apart, in fresh processes (``load_cost``).

Part 1: every workload at n = 100 (``runs`` matrices) plus a few at n = 256 and 512; timed
at s = 4, delta = 0.04, and the makespans of both decompositions compared on the whole
(s, delta) grid (default / cold: != 1 only where tied max-weight matchings were broken
another way). GPT sizes: tp*pp*dp = 4*5*5, 4*8*8, 8*8*8 (spec 4.2; the paper's is 4*4*2 = 32).
Part 2: the standard benchmark (n = 100) over the (s, delta) grid: runtime and makespan / LB.

Run: python benchmarks/spectra/runtime.py [--quick]
  or python solve.py reproduce spectra-runtime [--quick]
Writes results/spectra/spectra_runtime.md, spectra_runtime.csv and spectra_runtime_compare.csv.
"""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.common import headline, main, machine, md_table, reproduce_cmd, write_report
from heuristics.spectra.bounds import lower_bound
from heuristics.spectra.decompose import JIT_MIN_N, decompose
from heuristics.spectra.schedule import spectra
from instances.spectra.instance import SpectraInstance, check_schedule
from instances.spectra.workloads import generate

S_GRID = (2, 4, 8)
DELTA_GRID = (0.01, 0.04, 0.10)
S0, DELTA0 = 4, 0.04                     # the timed point of part 1
WORKLOADS = ("gpt", "moe", "benchmark")
GPT_DIMS = {100: (4, 5, 5), 256: (4, 8, 8), 512: (8, 8, 8)}
SEED0 = 1000
TARGET_MS = (14.0, 20.0)                 # issue 17: median and max per n = 100 matrix


def sizes(quick: bool, runs: int) -> dict[int, int]:
    """Matrices per n (the n = 512 MoE cold run alone takes about a minute)."""
    return {100: runs, 256: 1} if quick else {100: runs, 256: 3, 512: 2}


def instance(workload: str, n: int, seed: int, s: int = S0, delta: float = DELTA0) -> SpectraInstance:
    if workload == "gpt":
        tp, pp, dp = GPT_DIMS[n]
        return generate("gpt", tp=tp, pp=pp, dp=dp, switches=s, delay=delta, seed=seed)
    return generate(workload, n=n, switches=s, delay=delta, seed=seed)


def timed(inst: SpectraInstance, matching: str, repeats: int):
    """(best wall time in ms of ``repeats`` full Spectra runs, checked makespan, decomposition).

    A run is ``decompose`` then ``spectra(dec=...)``: the work of ``spectra(inst)``."""
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        dec = decompose(inst.demand, matching=matching)
        sched = spectra(inst, dec=dec)
        best = min(best, time.perf_counter() - t0)
    bad, met = check_schedule(inst, sched)
    if bad:
        raise AssertionError(f"unverified schedule ({matching}): {bad[:2]}")
    return best * 1e3, met["makespan"], dec


def grid_ratios(D: np.ndarray, decs) -> np.ndarray:
    """Makespan(warm) / makespan(cold) on every (s, delta) of the grid (checked schedules)."""
    out = []
    for s in S_GRID:
        for delta in DELTA_GRID:
            inst = SpectraInstance(D, s, delta)
            spans = []
            for dec in decs:
                bad, met = check_schedule(inst, spectra(inst, dec=dec))
                if bad:
                    raise AssertionError(f"unverified schedule: {bad[:2]}")
                spans.append(met["makespan"])
            out.append(spans[0] / spans[1])
    return np.array(out)


def compare(quick: bool, runs: int) -> pd.DataFrame:
    decompose(np.ones((JIT_MIN_N, JIT_MIN_N)), matching="jit")     # load (or compile) first
    recs = []
    for n, count in sizes(quick, runs).items():
        repeats = 3 if n == 100 else 1
        for workload in WORKLOADS:
            for r in range(count):
                inst = instance(workload, n, SEED0 + r)
                warm_ms, _, warm = timed(inst, "warm", repeats)
                scipy_ms, _, _ = timed(inst, "scipy", repeats)
                cold_ms, _, cold = timed(inst, "cold", repeats)
                ratios = grid_ratios(inst.demand, (warm, cold))
                recs.append(dict(workload=workload, n=n, seed=SEED0 + r, warm_ms=warm_ms,
                                 scipy_ms=scipy_ms, cold_ms=cold_ms,
                                 speedup_vs_scipy=scipy_ms / warm_ms, speedup=cold_ms / warm_ms,
                                 ratio_max=ratios.max(), ratio_min=ratios.min(),
                                 ratio_mean=ratios.mean(), worse=int((ratios > 1 + 1e-9).sum()),
                                 points=ratios.size))
    return pd.DataFrame(recs)


LOAD_CODE = ("import time, numpy as np; t = time.perf_counter(); "
             "from heuristics.spectra.decompose import decompose; "
             "decompose(np.eye(32), matching='jit'); print(time.perf_counter() - t)")


def load_cost(runs: int = 5) -> float:
    """Median seconds a fresh process spends importing and loading the compiled rounds
    (numba import, cached machine code, one 32 x 32 call), beside the numpy/scipy path."""
    root = Path(__file__).resolve().parent.parent.parent
    code = {"jit": LOAD_CODE, "scipy": LOAD_CODE.replace("'jit'", "'scipy'")}
    out = {k: [] for k in code}
    for _ in range(runs):
        for k, c in code.items():
            res = subprocess.run([sys.executable, "-c", c], cwd=root, capture_output=True,
                                 text=True, check=True)
            out[k].append(float(res.stdout.split()[-1]))
    return float(np.median(out["jit"]) - np.median(out["scipy"]))


def quality(runs: int) -> pd.DataFrame:
    recs = []
    for s in S_GRID:
        for delta in DELTA_GRID:
            for r in range(runs):
                inst = generate("benchmark", n=100, m=16, switches=s, delay=delta, seed=SEED0 + r)
                ms, span, _ = timed(inst, "warm", 3)
                lb = lower_bound(inst.demand, s, delta)
                recs.append(dict(s=s, delta=delta, seed=SEED0 + r, runtime_ms=ms,
                                 makespan=span, lower_bound=lb, ratio_lb=span / lb))
    return pd.DataFrame(recs)


def run(quick: bool = False, out_dir: Path = Path("results/spectra")) -> list[Path]:
    runs = 10 if quick else 50
    cmp_df = compare(quick, runs)
    ct = cmp_df.groupby(["workload", "n"], sort=False).agg(
        matrices=("seed", "size"), warm_ms_median=("warm_ms", "median"),
        warm_ms_max=("warm_ms", "max"), scipy_ms_median=("scipy_ms", "median"),
        scipy_ms_max=("scipy_ms", "max"), cold_ms_median=("cold_ms", "median"),
        cold_ms_max=("cold_ms", "max"), vs_scipy_median=("speedup_vs_scipy", "median"),
        vs_cold_median=("speedup", "median"),
        makespan_ratio_max=("ratio_max", "max"), makespan_ratio_min=("ratio_min", "min"),
        worse_points=("worse", "sum"), points=("points", "sum")).reset_index()
    df = quality(runs)
    load_s = load_cost()
    agg = df.groupby(["s", "delta"]).agg(
        runs=("seed", "size"), runtime_ms_median=("runtime_ms", "median"),
        runtime_ms_max=("runtime_ms", "max"), makespan=("makespan", "mean"),
        lower_bound=("lower_bound", "mean"), ratio_lb_mean=("ratio_lb", "mean"),
        ratio_lb_max=("ratio_lb", "max")).reset_index()
    for col in ("makespan_ratio_max", "makespan_ratio_min"):      # 1 +- 1e-6 must show
        ct[col] = ct[col].map(lambda x: f"{x:.7f}")
    at100 = ct[ct.n == 100]
    met = all((at100.warm_ms_median < TARGET_MS[0]) & (at100.warm_ms_max < TARGET_MS[1]))
    cmd = reproduce_cmd("spectra-runtime", quick, out_dir)
    md = [
        "# Spectra runtime per matrix (GPT, MoE, benchmark) and makespan / lower bound", "",
        f"Regenerate: `{cmd}` (seeds {SEED0}.., {runs} matrices per workload at n = 100, "
        + ", ".join(f"{c} at n = {n}" for n, c in sizes(quick, runs).items() if n != 100)
        + "). Machine: " + machine() + ".", "",
        "Each runtime is one full Spectra run (Decompose + Refine + LPT + Equalize, no caching), "
        "best of 3 repeats at n = 100, one run at n = 256 and 512. `warm` is the default Decompose, "
        f"which from n = {JIT_MIN_N} on runs the compiled rounds (numba, Jonker-Volgenant with "
        "carried duals: heuristics/spectra/jit.py); `scipy` the same rounds on scipy's solver "
        "(heuristics/spectra/warm.py, the default before), `cold` a fresh assignment per round; "
        "run on the same matrix one after the other. Every schedule passed the independent "
        "checker.", "",
        f"Not in the times: a new process pays {1e3 * load_s:.0f} ms (median of 5 fresh processes, "
        "beside the scipy path) to import numba and load the cached compiled rounds, and the "
        "first run on a machine compiles them once (several seconds); `--option matching=scipy` "
        "avoids both for one-off runs.", "",
        "Paper: runtimes \"from under 1 ms to 14 ms\" (3.7 GHz Threadripper 3970X; n = 32, 64, 100). "
        "The GPT and MoE matrices are our synthetic reconstructions (spec 4.2, 4.3).", "",
        f"## Runtime per matrix, default (warm) vs scipy vs cold (s = {S0}, delta = {DELTA0})", "",
        "makespan_ratio = makespan(warm) / makespan(cold) over the whole (s, delta) grid: 1 where "
        "both decompositions are the same, otherwise tied max-weight matchings were broken "
        "differently (integer MoE token counts).", "",
        md_table(ct), "",
        f"Target (issue 17): median < {TARGET_MS[0]:g} ms and max < {TARGET_MS[1]:g} ms per n = 100 "
        f"matrix on all three workloads on an idle machine: {'met' if met else 'NOT met'} in this run.",
        "", "## Standard benchmark (n = 100, warm): runtime and makespan / lower bound", "",
        "Spec section 7 (our prototype, not the paper's data): Spectra/LB of 1.03-1.18.", "",
        md_table(agg), "",
        f"Overall: median runtime {df.runtime_ms.median():.2f} ms, max {df.runtime_ms.max():.2f} ms; "
        f"mean makespan/LB {df.ratio_lb.mean():.4f}, max {df.ratio_lb.max():.4f}.", ""]
    head = ct[["workload", "n", "matrices", "warm_ms_median", "warm_ms_max"]].assign(
        paper_ms=np.where(ct.n <= 100, "under 1 to 14", "-"))   # Sec. V, runtime: n <= 100
    return write_report(out_dir, "spectra_runtime", md,
                        {"spectra_runtime.csv": df, "spectra_runtime_compare.csv": cmp_df},
                        headline(f"Spectra runtime per matrix (ms), s = {S0}, delta = {DELTA0} "
                                 "(paper: Sec. V, \"from under 1 ms to 14 ms\" at n = 32-100 "
                                 "on a 3.7 GHz Threadripper 3970X)", head))


if __name__ == "__main__":
    main(run, __doc__)
