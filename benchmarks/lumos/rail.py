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

The rule (issue 31): the rail layout's requirement follows the authors' rule (one unit per
cross-Pod GPU pair, ``lane-pairs``), the server layout's Principle 3 (units per distinct
cross-Pod leaf pair), so the rail-vs-server change mixes the layout's effect with the
rule's. A third variant, ``rail/leaf-pairs``, runs the LumosCore fabrics in the rail layout
under Principle 3 (``leaf-pairs``: one unit per distinct cross-Pod leaf pair); the Clos
fabrics have no OCS requirement and are not rerun (their ``rail`` runs stand for both rules
in the same-chip gaps).
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
# variant -> (layout, rail_rule); rail/leaf-pairs on the LumosCore fabrics only
VARIANTS = {"server": ("server", "lane-pairs"), "rail": ("rail", "lane-pairs"),
            "rail/leaf-pairs": ("rail", "leaf-pairs")}
LUMOS = tuple(a for a in ARCHS if a.startswith("lumos"))


def rail_change(df: pd.DataFrame) -> pd.DataFrame:
    """Per routing, architecture and rail variant: Avg.JCT, Avg.JRT and mean CL_ar / CL_a2a
    in the server layout and in the variant (over all seeds' jobs), and the Avg.JCT change
    variant vs server per seed (%, min, max)."""
    per = df.groupby(["routing", "arch", "seed", "variant"]).jct_s.mean().unstack("variant")
    rows = []
    for (r, a), g in df.groupby(["routing", "arch"]):
        s = g[g.variant == "server"]
        for v in [v for v in VARIANTS if v != "server" and v in per.columns]:
            dd = 100 * (per[v] / per["server"] - 1).xs((r, a), level=("routing", "arch"))
            dd, x = dd.dropna(), g[g.variant == v]
            if not len(dd):
                continue
            rows.append(dict(routing=r, arch=a, variant=v, seeds=len(dd),
                             jct_server_s=s.jct_s.mean(), jct_s=x.jct_s.mean(),
                             jrt_server_s=s.jrt_s.mean(), jrt_s=x.jrt_s.mean(),
                             cl_ar_server=s.cl_ar.mean(), cl_ar=x.cl_ar.mean(),
                             cl_a2a_server=s.cl_a2a.mean(), cl_a2a=x.cl_a2a.mean(),
                             jct_change_min_pct=dd.min(), jct_change_max_pct=dd.max()))
    return pd.DataFrame(rows)


def requirement_table(df: pd.DataFrame, runs: Path) -> pd.DataFrame:
    """Per routing, LumosCore fabric and variant: the reconfigurations (admissions that
    crossed Pods), their mean leaf-level requirement in links before and after the K_leaf
    cap, the first as a multiple of the server layout's, and the share whose job shares
    paths (the cap bit), over all seeds."""
    rows = []
    for (r, a, v), g in df[df.arch.isin(LUMOS)].groupby(["routing", "arch", "variant"]):
        lay, rule = VARIANTS[v]
        rc = pd.concat([reconfigurations(a, GPUS, None, int(s), runs, routing=r, layout=lay,
                                         rail_rule=rule)
                        for s in sorted(g.seed.unique())], ignore_index=True)
        if not len(rc) or "req_links" not in rc:
            continue
        rows.append(dict(routing=r, arch=a, variant=v, reconfigs=len(rc),
                         req_links_mean=rc.req_links.mean(),
                         req_links_admitted_mean=rc.req_links_admitted.mean(),
                         sharing_share=rc.sharing.astype(bool).mean()))
    out = pd.DataFrame(rows)
    if len(out):
        server = out[out.variant == "server"].set_index(["routing", "arch"]).req_links_mean
        out.insert(5, "req_vs_server", out.req_links_mean.values / server.reindex(
            pd.MultiIndex.from_frame(out[["routing", "arch"]])).values)
    return out


def _span(lo: float, hi: float) -> str:
    return f"{lo:+.2f}..{hi:+.2f}%"


def claims(change: pd.DataFrame, req: pd.DataFrame) -> pd.DataFrame:
    """[002]'s sentences beside our signs (module docstring)."""
    rows = []
    for c in change[change.arch.str.startswith("clos")].itertuples():
        rows.append((f"{c.arch}, {c.routing}: Avg.JCT rail vs server", "improves significantly",
                     _span(c.jct_change_min_pct, c.jct_change_max_pct)))
    for c in change[change.arch == "lumos-25.6T-tau1"].itertuples():
        head = f"lumos-25.6T-tau1, {c.routing}, {c.variant}"
        rows.append((f"{head}: Avg.JCT vs server", "greatly enhanced",
                     _span(c.jct_change_min_pct, c.jct_change_max_pct)))
        rows.append((f"{head}: mean CL_ar server -> {c.variant}", "significantly reduced",
                     f"{c.cl_ar_server:.3f} -> {c.cl_ar:.3f}"))
    for (r, a), g in req[req.arch == "lumos-25.6T-tau1"].groupby(["routing", "arch"]):
        g = g.set_index("variant")
        for v in [v for v in g.index if v != "server" and "server" in g.index]:
            rows.append((f"{a}, {r}, {v}: leaf-level requirement per reconfiguration (links), "
                         f"share sharing paths; server -> {v}", "greatly reduced; fewer",
                         f"{g.req_links_mean['server']:.1f} -> {g.req_links_mean[v]:.1f}; "
                         f"{g.sharing_share['server']:.0%} -> {g.sharing_share[v]:.0%}"))
    return pd.DataFrame(rows, columns=["claim", "paper", "ours"])


def gaps_table(df: pd.DataFrame) -> pd.DataFrame:
    """LumosCore vs the Clos of the same chip per routing and variant; the Clos's rail runs
    stand for rail/leaf-pairs too (a Clos has no leaf-level requirement)."""
    clos = df[df.arch.str.startswith("clos") & (df.variant == "rail")]
    both = pd.concat([df, clos.assign(variant="rail/leaf-pairs")], ignore_index=True)
    return same_chip_gaps(both, ["routing", "variant"])


def run_fig24(quick: bool = False, out_dir: Path = Path("results/lumos")) -> list[Path]:
    n_jobs, seeds = run_size(quick)
    todo = [({"routing": r, "variant": v}, {"routing": r, "layout": lay, "rail_rule": rule}, s, a)
            for s in seeds for r in ROUTINGS for v, (lay, rule) in VARIANTS.items() for a in ARCHS
            if (a != "best" or (r, v) == ("probing", "server"))
            and (rule == "lane-pairs" or a in LUMOS)]
    df = simulate_all(out_dir, NAME, quick, todo)
    runs = runs_dir(out_dir, NAME, quick)
    tab = arch_table(df, ["routing", "variant"])
    change, req, gaps = rail_change(df), requirement_table(df, runs), gaps_table(df)
    cmd = reproduce_cmd("lumos-fig24", quick, out_dir)
    md = ["# Rail-optimized vs server layout inside the Pods ([002] Fig. 24, 4K)", "",
          f"Regenerate: `{cmd}` ({'quick' if quick else 'full'} run; resumable, runs in "
          f"`{runs}`). Machine: {machine()}.", "",
          f"{n_jobs} Helios-style jobs per run at workload level 0.655, {GPUS} GPUs, seeds "
          f"{list(seeds)}, the same jobs on every architecture and variant; routing probing "
          "(up to 5 rehashed paths, the widest kept) and ECMP (one hashed path; polarized on "
          "the Clos); Best (no network) once; the OCS algorithms' time is not charged. "
          "Variants: `server` (a leaf / ToR holds whole servers; the leaf-level requirement "
          "by spec 2.10, units per distinct cross-Pod leaf pair); `rail` (GPU r of each server "
          "of a rail group on rail leaf r, `instances/lumos/placement.py`; on LumosCore the "
          "authors' rail rule, one unit per cross-Pod GPU pair, `rail_rule` lane-pairs); "
          "`rail/leaf-pairs` (LumosCore only: the rail layout under Principle 3, one unit per "
          "distinct cross-Pod leaf pair, `rail_rule` leaf-pairs; "
          "`heuristics/lumos/requirement.py`).", "",
          md_table(tab, ".5g"), "",
          "## Each rail variant vs server per architecture", "",
          "`jct_change_*_pct`: Avg.JCT variant / server - 1 per seed (%, min and max over the "
          "seeds); the other columns over all seeds' jobs (`*_server`: the server layout).", "",
          md_table(change, ".4g"), "",
          "## Leaf-level requirement (LumosCore fabrics)", "",
          "Per reconfiguration (an admission whose job crosses Pods): the job's leaf-level "
          "requirement in links before the K_leaf cap (`req_links_mean`; `req_vs_server`: "
          "as a multiple of the server layout's) and after it, and the share of jobs that had "
          "to share paths (the cap).", "", md_table(req, ".4g"), "",
          "## LumosCore vs the Clos of the same chip, Avg.JCT gap per seed (%)", "",
          "The Clos's `rail` runs stand for `rail/leaf-pairs` too (no leaf-level "
          "requirement on a Clos).", "", md_table(gaps, ".3g"), ""]
    return write_report(out_dir, NAME, md, {f"{NAME}.csv": tab, f"{NAME}_rail.csv": change,
                                            f"{NAME}_requirement.csv": req,
                                            f"{NAME}_gaps.csv": gaps},
                        headline("Rail-optimized vs server layout, 4K ([002] Fig. 24 and "
                                 "§6.5; signs, the figure's values are not in the text)",
                                 claims(change, req)))
