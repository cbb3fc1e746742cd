"""LumosCore [002] Fig. 24 from the cluster simulator (issue 31): the rail-optimized intra-Pod
layout against the server layout, 4K cluster, under probing and ECMP routing.

Paper (§6.5, A.10; its figure's values are not in the text): "the performance of Clos
networks improves significantly with the rail-optimized design"; "the performance of the
LumosCore (25.6T, tau=1) architecture is greatly enhanced because the need for cross-pod
communication at the leaf level is reduced. This reduction leads to a lower leaf-level
network requirement and decreases the likelihood of bandwidth sharing"; §6.5: "the
contention level of LumosCore (25.6T, 1-tau) is significantly reduced". So the report puts
signs beside those sentences: the Avg.JCT change rail vs server per architecture and
routing (per seed), the mean contention level, and for the LumosCore fabrics the leaf-level
requirement per reconfiguration (links, before the K_leaf cap) and the share of
reconfigurations whose job had to share paths.

The layout (``instances.lumos.placement``, ``heuristics.lumos.sim.architectures``): GPU r of
each server on rail leaf r of its rail group; the flows, the placement and the workload are
the same in both layouts (the same jobs, placed on the same GPU ids), only the GPU-to-leaf
wiring (and with it the leaf-level requirement of ``heuristics.lumos.requirement``)
differs. Best (no network) runs once. Runs are cached as in ``benchmarks.lumos.jct``
(resume); the OCS algorithms' time is not charged (alg_time none: deterministic).
Run: python solve.py reproduce lumos-fig24 [--quick]
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from benchmarks.common import headline, machine, md_table, reproduce_cmd, write_report
from benchmarks.lumos.jct import reconfigurations
from benchmarks.lumos.robust import (ARCHS, GPUS, arch_table, run_size, runs_dir,
                                     same_chip_gaps, simulate_all)

NAME = "lumos_fig24"
ROUTINGS = ("probing", "ecmp")
LAYOUTS = ("server", "rail")
LUMOS = tuple(a for a in ARCHS if a.startswith("lumos"))


def rail_change(df: pd.DataFrame) -> pd.DataFrame:
    """Per routing and architecture: Avg.JCT, Avg.JRT and mean CL_ar / CL_a2a in each layout
    (over all seeds' jobs), and the Avg.JCT change rail vs server per seed (%, min, max)."""
    per = df.groupby(["routing", "arch", "seed", "layout"]).jct_s.mean().unstack("layout")
    per = per.dropna()
    d = 100 * (per["rail"] / per["server"] - 1)
    rows = []
    for (r, a), g in df.groupby(["routing", "arch"]):
        if (r, a) not in d.index.droplevel("seed"):
            continue
        s, rl = g[g.layout == "server"], g[g.layout == "rail"]
        dd = d.xs((r, a), level=("routing", "arch"))
        rows.append(dict(routing=r, arch=a, seeds=len(dd),
                         jct_server_s=s.jct_s.mean(), jct_rail_s=rl.jct_s.mean(),
                         jrt_server_s=s.jrt_s.mean(), jrt_rail_s=rl.jrt_s.mean(),
                         cl_ar_server=s.cl_ar.mean(), cl_ar_rail=rl.cl_ar.mean(),
                         cl_a2a_server=s.cl_a2a.mean(), cl_a2a_rail=rl.cl_a2a.mean(),
                         jct_change_min_pct=dd.min(), jct_change_max_pct=dd.max()))
    return pd.DataFrame(rows)


def requirement_table(df: pd.DataFrame, runs: Path) -> pd.DataFrame:
    """Per routing, LumosCore fabric and layout: the reconfigurations (admissions that
    crossed Pods), their mean leaf-level requirement in links before and after the K_leaf
    cap, and the share whose job shares paths (the cap bit), over all seeds."""
    rows = []
    for (r, a, lay), g in df[df.arch.isin(LUMOS)].groupby(["routing", "arch", "layout"]):
        rc = pd.concat([reconfigurations(a, GPUS, None, int(s), runs, routing=r, layout=lay)
                        for s in sorted(g.seed.unique())], ignore_index=True)
        if not len(rc) or "req_links" not in rc:
            continue
        rows.append(dict(routing=r, arch=a, layout=lay, reconfigs=len(rc),
                         req_links_mean=rc.req_links.mean(),
                         req_links_admitted_mean=rc.req_links_admitted.mean(),
                         sharing_share=rc.sharing.astype(bool).mean()))
    return pd.DataFrame(rows)


def _span(x: pd.Series) -> str:
    return f"{x.min():+.2f}..{x.max():+.2f}%"


def claims(change: pd.DataFrame, req: pd.DataFrame) -> pd.DataFrame:
    """[002]'s sentences beside our signs (module docstring)."""
    rows = []
    for c in change[change.arch.str.startswith("clos")].itertuples():
        rows.append((f"{c.arch}, {c.routing}: Avg.JCT rail vs server", "improves significantly",
                     _span(pd.Series([c.jct_change_min_pct, c.jct_change_max_pct]))))
    for c in change[change.arch == "lumos-25.6T-tau1"].itertuples():
        rows.append((f"lumos-25.6T-tau1, {c.routing}: Avg.JCT rail vs server", "greatly enhanced",
                     _span(pd.Series([c.jct_change_min_pct, c.jct_change_max_pct]))))
        rows.append((f"lumos-25.6T-tau1, {c.routing}: mean CL_ar server -> rail",
                     "significantly reduced", f"{c.cl_ar_server:.3f} -> {c.cl_ar_rail:.3f}"))
    for (r, a), g in req[req.arch == "lumos-25.6T-tau1"].groupby(["routing", "arch"]):
        g = g.set_index("layout")
        if not set(LAYOUTS) <= set(g.index):
            continue
        rows.append((f"{a}, {r}: leaf-level requirement per reconfiguration (links), "
                     "share sharing paths; server -> rail", "greatly reduced; fewer",
                     f"{g.req_links_mean['server']:.1f} -> {g.req_links_mean['rail']:.1f}; "
                     f"{g.sharing_share['server']:.0%} -> {g.sharing_share['rail']:.0%}"))
    return pd.DataFrame(rows, columns=["claim", "paper", "ours"])


def run_fig24(quick: bool = False, out_dir: Path = Path("results/lumos")) -> list[Path]:
    n_jobs, seeds = run_size(quick)
    todo = [({"routing": r, "layout": lay}, {"routing": r, "layout": lay}, s, a)
            for s in seeds for r in ROUTINGS for lay in LAYOUTS for a in ARCHS
            if a != "best" or (r, lay) == ("probing", "server")]
    df = simulate_all(out_dir, NAME, quick, todo)
    runs = runs_dir(out_dir, NAME, quick)
    tab = arch_table(df, ["routing", "layout"])
    change, req = rail_change(df), requirement_table(df, runs)
    gaps = same_chip_gaps(df, ["routing", "layout"])
    cmd = reproduce_cmd("lumos-fig24", quick, out_dir)
    md = ["# Rail-optimized vs server layout inside the Pods ([002] Fig. 24, 4K)", "",
          f"Regenerate: `{cmd}` ({'quick' if quick else 'full'} run; resumable, runs in "
          f"`{runs}`). Machine: {machine()}.", "",
          f"{n_jobs} Helios-style jobs per run at workload level 0.655, {GPUS} GPUs, seeds "
          f"{list(seeds)}, the same jobs on every architecture and layout; routing probing "
          "(up to 5 rehashed paths, the widest kept) and ECMP (one hashed path; polarized on "
          "the Clos); Best (no network) once. Layouts: `server` (a leaf / ToR holds whole "
          "servers) and `rail` (GPU r of each server of a rail group on rail leaf r; "
          "`instances/lumos/placement.py`); the OCS algorithms' time is not charged.", "",
          md_table(tab, ".5g"), "",
          "## Rail vs server per architecture", "",
          "`jct_change_*_pct`: Avg.JCT rail / server - 1 per seed (%, min and max over the "
          "seeds); the other columns over all seeds' jobs.", "", md_table(change, ".4g"), "",
          "## Leaf-level requirement (LumosCore fabrics)", "",
          "Per reconfiguration (an admission whose job crosses Pods): the job's leaf-level "
          "requirement in links before the K_leaf cap (`req_links_mean`) and after it, and "
          "the share of jobs that had to share paths (the cap; `heuristics/lumos/"
          "requirement.py`: units per distinct leaf pair in the server layout, one link per "
          "cross-Pod GPU pair in the rail layout).", "", md_table(req, ".4g"), "",
          "## LumosCore vs the Clos of the same chip, Avg.JCT gap per seed (%)", "",
          md_table(gaps, ".3g"), ""]
    return write_report(out_dir, NAME, md, {f"{NAME}.csv": tab, f"{NAME}_rail.csv": change,
                                            f"{NAME}_requirement.csv": req,
                                            f"{NAME}_gaps.csv": gaps},
                        headline("Rail-optimized vs server layout, 4K ([002] Fig. 24 and "
                                 "§6.5; signs, the figure's values are not in the text)",
                                 claims(change, req)))
