"""Speed of the LumosCore cluster simulator (issue 16 target): one 1,000-job simulation at
32K GPUs with ITV-MDMCF reconfiguration, and where its time goes (rates, routing, OCS
admissions: requirement + logical topology + reconfiguration).

Setting: [001]'s fabric at 32768 GPUs (LumosCore(51.2T, tau = 1): K_leaf = K_spine = 16,
128 Pods of 256 GPUs), Helios-style jobs at workload level 0.801 ([001] §6.3), seed 0.
``--quick``: 8192 GPUs, 300 jobs.
Run: python solve.py reproduce lumos-sim-speed [--quick]
"""
from __future__ import annotations

import time
from pathlib import Path

import pandas as pd

from benchmarks.common import headline, machine, main, md_table, reproduce_cmd, write_report


def run(quick: bool = False, out_dir: Path = Path("results/lumos")) -> list[Path]:
    from heuristics.lumos.sim.architectures import make_arch
    from heuristics.lumos.sim.engine import Simulator
    from heuristics.lumos.sim.workload import helios_jobs

    gpus, n_jobs = (8192, 300) if quick else (32768, 1000)
    jobs = helios_jobs(n_jobs, gpus, 0.801, 0)
    t0 = time.perf_counter()
    arch = make_arch("lumos-51.2T-tau1", gpus, "itv-mdmcf")
    res = Simulator(arch, routing="ecmp").run(jobs)    # as its committed results (issue 31)
    wall = time.perf_counter() - t0
    st = res.stats
    other = wall - st["rate_s"] - st["route_s"] - st["admit_s"]
    row = pd.DataFrame([dict(gpus=gpus, jobs=len(res.jobs), wall_s=wall, events=st["events"],
                             rate_solves=st["rate_solves"], reconfigurations=len(res.reconfigs),
                             rate_s=st["rate_s"], route_s=st["route_s"], admit_s=st["admit_s"],
                             other_s=other, rate_share=st["rate_s"] / wall,
                             route_share=st["route_s"] / wall, admit_share=st["admit_s"] / wall,
                             reconfig_mean_s=res.reconfigs.wall_s.mean() if len(res.reconfigs) else 0.0,
                             reconfig_max_s=res.reconfigs.wall_s.max() if len(res.reconfigs) else 0.0,
                             avg_jct_s=res.jobs.jct_s.mean())])
    cmd = reproduce_cmd("lumos-sim-speed", quick, out_dir)
    md = ["# LumosCore cluster simulator: time of one simulation", "",
          f"Regenerate: `{cmd}`. Machine: {machine()}.", "",
          f"LumosCore(51.2T, tau = 1) at {gpus} GPUs, {n_jobs} Helios-style jobs at workload "
          "level 0.801, ITV-MDMCF reconfiguration (default work budget). `rate_s`: max-min "
          "rate computation; `route_s`: routing flows on the current network; `admit_s`: "
          "requirement, logical topology and OCS reconfiguration (with its metrics) of the "
          "admitted jobs; `other_s`: placement, flow generation and the event loop. Target "
          "(issue 16): 1,000 jobs at 32K GPUs in under 600 s on 2 cores.", "",
          md_table(row, ".4g"), ""]
    return write_report(out_dir, "lumos_sim_speed", md, {"lumos_sim_speed.csv": row}, headline(
        f"LumosCore simulator: one {n_jobs}-job simulation at {gpus} GPUs with ITV-MDMCF "
        "(target, issue 16: 1,000 jobs at 32K GPUs under 600 s on 2 cores; the papers give no "
        "simulator time)", row[["gpus", "jobs", "wall_s", "events", "reconfigurations",
                                "rate_share", "admit_share", "avg_jct_s"]]))


if __name__ == "__main__":
    main(run, __doc__)
