"""LumosCore GPU placement on consecutive trace arrivals: placement-ilp vs placement-greedy.

Setting: 512 GPUs per Pod (K_leaf = K_spine = 32, tau = 2: 16 leaves of 4 servers x 8
GPUs), 4,096 GPUs (8 Pods) and 32,768 GPUs (64 Pods). Jobs: the shipped trace
(instances/lumos/trace, the authors' 4096-GPU simulation, 1574 jobs of 1-256 GPUs) in
order, cycled, each turned into TP/PP/DP/EP by instances.lumos.placement_workloads.

Cluster state (documented rule; the trace's arrivals are all at 0): warm-up jobs from the
start of the trace are placed by the greedy until LOAD of the GPUs are busy, each holding
its GPUs for a residual time U(0, 1] x its duration; then the measured jobs (the next ones
in the trace) arrive every D = mean(GPUs x duration) / (LOAD x cluster GPUs) seconds (the
arrival rate that keeps LOAD busy on average) and hold their GPUs for their trace duration.
A job that cannot be placed waits (FIFO) for the next departures. The state follows the
ILP's placements; on every state the greedy and the pods_first ILP are run as well (their
placements are not applied), so all see the same arrivals and states.

Per job: wall time of Method.run (model build and solves included), the checker's idle
GPUs left in the chosen Pods (the objective) and Pods used; greedy gap = greedy idle -
ILP idle (>= 0: the ILP is exact).

Run: python benchmarks/lumos/placement.py [--quick]  or  python solve.py reproduce lumos-placement
Writes results/lumos/lumos_placement.md and .csv.
"""
from __future__ import annotations

import heapq
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.common import headline, machine, main, md_table, reproduce_cmd, write_report
from instances.lumos.placement import PlacementInstance
from instances.lumos.placement_workloads import load_trace, make_cluster, trace_job
from toolkit.registry import RunConfig, problem

SCALES = (4096, 32768)
LOAD = 0.8
ARRIVALS, QUICK_ARRIVALS = 1000, 30
RUNS = {"ilp": ("placement-ilp", {}), "ilp_pods_first": ("placement-ilp", {"pods_first": "1"}),
        "greedy": ("placement-greedy", {})}


def _run(prob, inst, method: str, options: dict):
    t0 = time.perf_counter()
    out = prob.methods[method].run(inst, RunConfig(options=dict(options)))
    dt = time.perf_counter() - t0
    if out.solution is None:
        return None, dt, (out.solver.status if out.solver else "none")
    bad, m = prob.check(inst, out.solution)
    if bad:
        raise AssertionError(f"{method}: checker rejected the placement: {bad[:2]}")
    return (out.solution, m), dt, (out.solver.status if out.solver else "feasible")


def simulate(gpus: int, arrivals: int, seed: int = 0) -> tuple[list[dict], int]:
    """(one row per measured arrival, number of warm-up jobs)."""
    prob = problem("lumos-placement")
    cl = make_cluster(gpus)
    trace = load_trace()
    rng = np.random.default_rng(seed)
    busy = np.zeros(cl.n_gpus, dtype=bool)
    heap: list = []                       # (departure time, seq, gpus)
    k = 0
    while busy.sum() < LOAD * cl.n_gpus:  # warm-up by the greedy
        _, dur, n = trace[k % len(trace)]
        k += 1
        job, _ = trace_job(int(n), rng, cl.gpus_per_server)
        res, _, _ = _run(prob, PlacementInstance(cl, busy, job), "placement-greedy", {})
        if res is not None:
            busy[res[0].gpus] = True
            heapq.heappush(heap, (float(rng.uniform(0, 1)) * dur, k, res[0].gpus))
    warm = k
    gap_s = float((trace[:, 1] * trace[:, 2]).mean()) / (LOAD * cl.n_gpus)
    rows, t = [], 0.0
    for a in range(arrivals):
        _, dur, n = trace[k % len(trace)]
        k += 1
        job, _ = trace_job(int(n), rng, cl.gpus_per_server)
        t = max(t, a * gap_s)
        waited = 0
        while True:
            while heap and heap[0][0] <= t:
                busy[heapq.heappop(heap)[2]] = False
            inst = PlacementInstance(cl, busy.copy(), job)
            out = {name: _run(prob, inst, m, o) for name, (m, o) in RUNS.items()}
            if out["ilp"][0] is not None:
                break
            if not heap:
                raise RuntimeError(f"job of {n} GPUs never fits the {gpus}-GPU cluster")
            t = heap[0][0]                  # FIFO: wait for the next departure
            waited += 1
            assert out["greedy"][0] is None, "greedy placed a job the exact ILP calls infeasible"
        sol = out["ilp"][0][0]
        busy[sol.gpus] = True
        heapq.heappush(heap, (t + float(dur), k, sol.gpus))
        row = {"gpus": gpus, "arrival": a, "trace_index": (k - 1) % len(trace), "job_gpus": int(n),
               "tp": job.tp, "pp": job.pp, "dp": job.dp, "ep": job.ep, "waited_departures": waited,
               "free_gpus_before": int((~inst.busy).sum())}
        for name, (res, dt, status) in out.items():
            row[f"{name}_ms"] = round(1e3 * dt, 3)
            row[f"{name}_status"] = status
            row[f"{name}_idle"] = res[1]["idle_gpus"] if res else None
            row[f"{name}_pods"] = res[1]["pods_used"] if res else None
        rows.append(row)
    return rows, warm


def summarize(df: pd.DataFrame) -> pd.DataFrame:
    out = []
    for gpus, d in df.groupby("gpus"):
        gap = d.greedy_idle - d.ilp_idle
        gap_pf = d.greedy_idle - d.ilp_pods_first_idle
        out.append({
            "GPUs": gpus, "jobs": len(d),
            "ILP ms median": d.ilp_ms.median(), "ILP ms max": d.ilp_ms.max(),
            "ILP pods_first ms median": d.ilp_pods_first_ms.median(),
            "greedy ms median": d.greedy_ms.median(), "greedy ms max": d.greedy_ms.max(),
            "greedy < 1 ms (share)": float((d.greedy_ms < 1).mean()),
            "greedy = ILP (jobs)": int((gap == 0).sum()),
            "gap median (GPUs)": float(gap.median()), "gap max (GPUs)": int(gap.max()),
            "gap mean (GPUs)": float(gap.mean()),
            "gap to pods_first ILP min": int(gap_pf.min()),
            "gap to pods_first ILP median": float(gap_pf.median()),
            "gap to pods_first ILP max": int(gap_pf.max()),
            "Pods used ILP / greedy (mean)": f"{d.ilp_pods.mean():.2f} / {d.greedy_pods.mean():.2f}",
            "jobs that waited": int((d.waited_departures > 0).sum())})
    return pd.DataFrame(out)


def run(quick: bool = False, out_dir: Path = Path("results/lumos")) -> list[Path]:
    arrivals = QUICK_ARRIVALS if quick else ARRIVALS
    t0 = time.perf_counter()
    runs = {g: simulate(g, arrivals) for g in SCALES}
    df = pd.DataFrame([r for rows, _ in runs.values() for r in rows])
    wall = time.perf_counter() - t0
    assert (df.greedy_idle >= df.ilp_idle).all(), "greedy beat the exact ILP"
    summ = summarize(df)
    cmd = reproduce_cmd("lumos-placement", quick, out_dir)
    md = ["# LumosCore GPU placement: placement-ilp vs placement-greedy on trace arrivals", "",
          f"Regenerate: `{cmd}`. Machine: {machine()}.", "",
          f"{arrivals} consecutive arrivals per scale from the shipped trace, at {LOAD:.0%} load "
          "(setting and arrival/departure rule: the docstring of benchmarks/lumos/placement.py). "
          f"Every placement passed the independent checker. Warm-up jobs: "
          + ", ".join(f"{w} at {g} GPUs" for g, (_, w) in runs.items())
          + f". Whole run {wall:.0f} s.", "",
          "Objective: idle GPUs left in the chosen Pods (spec 2.8, eq. 41 corrected). "
          "`gap` = greedy idle GPUs - ILP idle GPUs, over all jobs (the ILP is exact, so >= 0). "
          "Times are the wall time of one Method.run (model build, two Gurobi/HiGHS solves, "
          "extraction); the paper's reference is 3-12 ms per job for the authors' ILP at "
          "8 Pods x 16 servers (their code), and greedy under 1 ms.", "",
          md_table(summ, ".3g"), "",
          "The greedy follows the paper's Principle 1 (locality first: one leaf, else one "
          "Pod, best fit); the ILP's objective (41) counts only idle GPUs, so it may spread a "
          "job over several nearly full Pods where the greedy keeps it in one: "
          + "; ".join(f"{int((d.ilp_pods > d.greedy_pods).sum())} of {len(d)} jobs at {g} GPUs"
                      for g, d in df.groupby("gpus"))
          + ". The pods_first ILP (fewest Pods first, then idle GPUs) is the exact optimum "
          "of the greedy's priorities; the greedy matched it on "
          + "; ".join(f"{int((d.greedy_idle == d.ilp_pods_first_idle).sum())} of {len(d)} jobs "
                      f"at {g} GPUs" for g, d in df.groupby("gpus")) + ".", ""]
    return write_report(out_dir, "lumos_placement", md, {"lumos_placement.csv": df}, headline(
        f"LumosCore placement, {arrivals} trace arrivals per scale (the paper's reference, "
        "spec 2.8: 3-12 ms per job for the authors' ILP at 8 Pods x 16 servers, greedy "
        "under 1 ms)", summ, ".3g"))


if __name__ == "__main__":
    main(run, __doc__)
