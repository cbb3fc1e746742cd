"""OCS reconfiguration: ITV-ILP vs ITV-MDMCF vs ITV-MCF (and Uniform baselines) over scales.

[001] Figs. 6-7 (spec 5.2): solve time grows to 435.07 s for the ILP (Gurobi) at 32k GPUs
vs 19.37 s for MDMCF; MDMCF keeps MRAR ([001] eq. 16) within 4% of ITV-ILP and 2.77%
above ITV-MCF; Uniform-ILP is 16.14% below ITV-ILP. Targets (issue 6): MDMCF under 2 s
per reconfiguration at P = 128, K_spine = 16 (32,768 GPUs); rewiring within 4% of the ILP
where the ILP solves.

Sizes: K_leaf = K_spine = 16, tau = 1 (H = 16 groups, 256 GPUs per Pod), P = 8..128.
Workloads: ``rings`` = full-utilization job-ring topologies with 10% of the rings replaced
per step (the [001] 6.2 heavy workload); ``jobs`` = one job arrival or departure per step
at 80% port load. ITV-ILP is solved per group (HiGHS on the pip Gurobi licence) from the
MDMCF start, with a time limit per group. The three ITV strategies start every step from
the same old configuration (ITV-MDMCF's trajectory), so rewiring and cos compare on equal
footing; the Uniform ones follow their own trajectories.

Run: python benchmarks/lumos/reconfig.py [--quick]  or  python solve.py reproduce lumos-reconfig
Writes results/lumos/lumos_reconfig.md, .csv, _time.png and _mrar.png.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.common import headline, machine, main, md_table, reproduce_cmd, write_report
from benchmarks.lumos.common import mrar, plot, run_sequence
from instances.lumos.fabric import Fabric
from instances.lumos.workloads import job_sequence, topology_sequence
from toolkit.progress import track
from toolkit.registry import RunConfig

ITV = ("ITV-ILP", "ITV-MDMCF", "ITV-MCF")
UNIFORM = ("Uniform-Greedy", "Helios", "Uniform-ILP")
PODS = {"quick": (8, 32, 128), "full": (8, 16, 32, 64, 128)}
K = 16                                      # K_leaf = K_spine


def _sequence(fab, workload, steps, seed):
    if workload == "rings":
        return topology_sequence(fab, steps + 1, "rings", churn=0.1, seed=seed)
    return job_sequence(fab, steps, seed=seed)


def run(quick: bool = False, out_dir: Path = Path("results/lumos")) -> list[Path]:
    from heuristics.lumos.mdmcf.eject import preload

    pods = PODS["quick" if quick else "full"]
    steps = 2 if quick else 4
    ilp_group_s = 10.0 if quick else 30.0
    preload(lns=True)   # the compiled chains' and LNS' one-time load stays out of the timed steps
    rows = []
    for workload, P in track([(w, P) for w in ("rings", "jobs") for P in pods], unit="sequence"):
        fab = Fabric(P, K, K, 1)
        strategies = ITV + tuple(s for s in UNIFORM if s != "Uniform-ILP" or P <= 16)
        if P == 128 and quick:
            strategies = ITV
        cfgs = {"ITV-ILP": RunConfig(time_limit=ilp_group_s * fab.H),
                "Uniform-ILP": RunConfig(time_limit=10.0 * fab.H)}
        seq = _sequence(fab, workload, steps, seed=P)
        rows += run_sequence(fab, seq, strategies, cfgs,
                             {"workload": workload, "gpus": fab.gpus, "pods": P},
                             driver="ITV-MDMCF")
    df = pd.DataFrame(rows)
    summ, status = summarize(df)
    churn = heavy_churn(2 if quick else 4)
    pngs = []
    for what, col, logy in (("time", "time_mean_s", True), ("mrar", "mrar", False)):
        frames = {f"{s} ({w})": (summ[(summ.strategy == s) & (summ.workload == w)].gpus,
                                 summ[(summ.strategy == s) & (summ.workload == w)][col])
                  for w in ("rings", "jobs") for s in (ITV if what == "time" else ITV + UNIFORM)}
        paper = ({"ITV-ILP max": ([32768], [435.07]), "ITV-MDMCF max": ([32768], [19.37])}
                 if what == "time" else {"MDMCF >= 0.96": ([32768], [0.96])})
        pngs.append(plot(out_dir / f"lumos_reconfig_{what}.png", frames, "GPUs",
                         "mean solve time per reconfiguration (s)" if what == "time" else
                         "MRAR vs ITV-ILP", logy=logy, paper=paper))
    md = _report(summ, status, quick, steps, ilp_group_s, out_dir) + _churn_report(churn)
    report = write_report(out_dir, "lumos_reconfig", md, {"lumos_reconfig.csv": df,
                                                          "lumos_reconfig_churn.csv": churn},
                          headline(f"OCS reconfiguration, {steps} steps per sequence: paper "
                                   "vs ours (paper: [001] Figs. 6-7 and their text)",
                                   paper_vs_ours(summ)))
    report.extend(pngs)
    return report


CHURNS = (0.3, 1.0)


def heavy_churn(steps: int, P: int = 128) -> pd.DataFrame:
    """MDMCF alone at 32k GPUs on heavier ring churn than the main sequences, with the
    ejection chains' work budget (default ``eject_work``) and without it (``eject_work=0``)."""
    fab = Fabric(P, K, K, 1)
    rows = []
    for churn in CHURNS:
        seq = topology_sequence(fab, steps + 1, "rings", churn=churn, seed=P)
        for budget in (None, 0.0):
            cfg = RunConfig() if budget is None else RunConfig(options={"eject_work": budget})
            rows += run_sequence(fab, seq, ("ITV-MDMCF",), {"ITV-MDMCF": cfg},
                                 {"churn": churn,
                                  "eject_work": "default" if budget is None else "0 (off)"})
    return pd.DataFrame(rows)


def _churn_report(df: pd.DataFrame) -> list[str]:
    t = df.groupby(["churn", "eject_work"]).agg(
        time_mean_s=("time_s", "mean"), time_max_s=("time_s", "max"), cpu_max_s=("cpu_s", "max"),
        rewiring=("rewiring", "sum"), lower_bound=("lower_bound", "sum")).reset_index()
    t["rewiring_vs_lb"] = t.rewiring / t.lower_bound
    return ["## MDMCF on heavier churn (32k GPUs)", "",
            "Rings sequences at P = 128 (seed 128) with the given share of the rings replaced per step "
            f"(the table above: 0.1), {df.step.nunique()} reconfigurations each, MDMCF with the "
            "ejection chains' work budget (option `eject_work`, default 4 units per OCS port "
            "and run, counted in chain states, selections and re-keep attempts; once a group's budget is spent its remaining units "
            "are placed by Konig swaps alone, no further restart runs, and FindConnection / "
            "keep-and-insert are candidates again; the LNS has its own budget, option `lns`) "
            "and without it (`eject_work=0`). The budget counts work, not seconds, so both rows are the same "
            "on any machine under any load; only the times differ. The issue's < 2 s target "
            "is stated for the benchmark's churn (the table above), where the budget is not "
            "reached; heavier churn costs more time, and the budget trades rewiring for time.",
            "",
            md_table(t, ".4g"), ""]


def summarize(df: pd.DataFrame):
    """Per (workload, scale, strategy) table and the ITV-ILP status per scale.

    ``ilp_optimal`` says whether every ITV-ILP step of that scale proved optimality; where
    it did not (the time limit was hit) the ILP's rewiring is only an upper bound, so
    ``rewiring_vs_ilp`` and ``mrar`` there compare with a heuristic, not the optimum;
    ``rewiring_vs_lb`` is the gap to the rewiring lower bound, valid everywhere."""
    g = df.groupby(["workload", "gpus", "strategy"])
    summ = g.agg(time_mean_s=("time_s", "mean"), time_max_s=("time_s", "max"),
                 cpu_max_s=("cpu_s", "max"),
                 rewiring=("rewiring", "sum"), lower_bound=("lower_bound", "sum"),
                 cos=("cos_old_new", "mean"), ltrr=("ltrr", "mean")).reset_index()
    ref = summ[summ.strategy == "ITV-ILP"].set_index(["workload", "gpus"])["rewiring"]
    summ["rewiring_vs_ilp"] = [r / ref.get((w, n), np.nan) for w, n, r in
                               zip(summ.workload, summ.gpus, summ.rewiring)]
    summ["rewiring_vs_lb"] = summ.rewiring / summ.lower_bound.where(summ.lower_bound > 0)
    mr = mrar(df, ["workload", "gpus"]).stack().rename("mrar").reset_index()
    summ = summ.merge(mr, on=["workload", "gpus", "strategy"], how="left")
    ilp = df[df.strategy == "ITV-ILP"]
    status = ilp.groupby(["workload", "gpus"])["status"].agg(
        lambda s: ", ".join(f"{k} {v}" for k, v in s.value_counts().items())).reset_index()
    opt = ilp.groupby(["workload", "gpus"])["status"].agg(lambda s: bool((s == "optimal").all()))
    summ["ilp_optimal"] = [bool(opt.get((w, n), False)) for w, n in zip(summ.workload, summ.gpus)]
    return summ, status


def rerender(csv: Path = Path("results/lumos/lumos_reconfig.csv"), quick: bool = True, steps: int = 2,
             ilp_group_s: float = 10.0, out_dir: Path = Path("results/lumos")) -> list[Path]:
    """Rewrite results/lumos/lumos_reconfig.md from the saved per-step CSV (no re-solving)."""
    df = pd.read_csv(csv)
    summ, status = summarize(df)
    return write_report(out_dir, "lumos_reconfig",
                        _report(summ, status, quick, steps, ilp_group_s, out_dir), {})


def paper_vs_ours(summ: pd.DataFrame) -> pd.DataFrame:
    """[001]'s claims (Figs. 6-7 and their text) beside ours, from the per-scale table."""
    big = summ[(summ.gpus == 32768) & (summ.strategy == "ITV-MDMCF")]
    tmax = big.time_max_s.max() if len(big) else float("nan")
    cmax = big.cpu_max_s.max() if len(big) else float("nan")
    md_rows = summ[summ.strategy == "ITV-MDMCF"]
    proven = md_rows[md_rows.ilp_optimal]            # only where the ILP proved its optimum
    worst_mrar = proven.mrar.min()
    worst_rew = proven.rewiring_vs_ilp.max()
    hit = md_rows[~md_rows.ilp_optimal]
    hit_txt = ", ".join(f"{w} {n}" for w, n in zip(hit.workload, hit.gpus)) or "none"
    hit_lb = ", ".join(f"{w} {n}: {r:.2f}x" for w, n, r in zip(hit.workload, hit.gpus,
                                                               hit.rewiring_vs_lb)) or "-"
    beat = hit[hit.rewiring_vs_ilp > 1 + 1e-9]       # the ILP's incumbent beats MDMCF there
    beat_txt = "".join(f"; at {w} {n} the ILP's time-limited solution rewires less, so MDMCF "
                       f"is at least {r:.3f}x the optimum there"
                       for w, n, r in zip(beat.workload, beat.gpus, beat.rewiring_vs_ilp))
    ilp_big = summ[(summ.gpus == 32768) & (summ.strategy == "ITV-ILP")]
    ilp_t = ", ".join(f"{w}: max {t:.1f} s ({'optimal' if o else 'time limit hit'})"
                      for w, t, o in zip(ilp_big.workload, ilp_big.time_max_s, ilp_big.ilp_optimal))
    mcf = summ[summ.strategy == "ITV-MCF"].set_index(["workload", "gpus"]).mrar
    gain = (md_rows.set_index(["workload", "gpus"]).mrar / mcf - 1).mean()
    uni = summ[summ.strategy == "Uniform-ILP"].mrar.mean()
    return pd.DataFrame([
        ("MDMCF time per reconfiguration at 32k GPUs", "up to 19.37 s",
         f"max {tmax:.2f} s wall, {cmax:.2f} s CPU, groups on 2 processes (target < 2 s on 2 "
         "cores), on these sequences' churn (10% of the rings replaced, or one job event, per "
         "step); heavier churn takes longer: see the last section"),
        ("ILP time at 32k GPUs", "up to 435.07 s (Gurobi)",
         f"{ilp_t} (HiGHS, MDMCF start; a hit limit is the budget, not a solve time)"),
        ("MDMCF MRAR vs ITV-ILP", "within 4% at all scales",
         f"min {worst_mrar:.4f} where the ILP proved optimality; not measured at {hit_txt} "
         "(ILP limit hit)"),
        ("MDMCF rewiring vs ITV-ILP", "-",
         f"at most {worst_rew:.3f}x where the ILP proved optimality, summed over the steps of "
         f"a scale (target within 4%){beat_txt}; per step on a wider generated set (720 "
         "steps: 8-32 Pods, 4-16 groups, 16-64 ports, ring churn 0.1-0.5 and job churn): "
         "lumos_reconfig_quality.md"),
        ("MDMCF rewiring vs lower bound where the ILP hit its limit", "-", hit_lb),
        ("MDMCF MRAR over ITV-MCF", "+2.77% average", f"{100 * gain:+.2f}% average"),
        ("Uniform-ILP MRAR vs ITV-ILP", "-16.14%", f"{100 * (uni - 1):+.2f}% (P <= 16)"),
    ], columns=["claim", "paper", "ours"])


def _report(summ, status, quick, steps, ilp_group_s, out_dir) -> list[str]:
    cmd = reproduce_cmd("lumos-reconfig", quick, out_dir)
    claims = paper_vs_ours(summ)
    summ = summ.assign(ilp=np.where(summ.ilp_optimal, "optimal", "LIMIT HIT"))
    cols = ["workload", "gpus", "strategy", "ilp", "time_mean_s", "time_max_s", "cpu_max_s",
            "rewiring", "lower_bound", "rewiring_vs_lb", "rewiring_vs_ilp", "mrar", "cos", "ltrr"]
    return ["# OCS reconfiguration: ITV-ILP vs ITV-MDMCF vs ITV-MCF ([001] Figs. 6-7)", "",
            f"Regenerate: `{cmd}`. Machine: {machine()}.", "",
            f"{steps} reconfigurations per sequence (paper: 100 topologies); ITV-ILP limited to "
            f"{ilp_group_s:g} s per OCS group, {ilp_group_s:g} s x H = 16 groups per step. Column "
            "`ilp` = LIMIT HIT where some ITV-ILP step stopped at the limit (status `feasible`): "
            "there its rewiring is only an upper bound (it may be its own MDMCF MIP start), so "
            "`rewiring_vs_ilp` and `mrar` on those rows compare with a heuristic, not with the "
            "optimum, and its time is the limit, not a solve time. `rewiring` = sum over "
            "the steps of eq. (7), sum |x - u|; `lower_bound` = 2 circuits per link of C not in the "
            "old configuration and per old link beyond C (0 = not computed for Uniform); "
            "`rewiring_vs_lb` = rewiring / lower_bound (valid at every scale); MRAR = eq. (16); "
            "`cos` = mean cos(x^l, x^(l-1)). Every configuration passed the independent checker. "
            "ITV-MDMCF and ITV-MCF are reconstructions (the MDMCF section of [001] is missing; "
            "spec 2.5); MDMCF here = its defaults: per group the ejection-chain assignment "
            "with orientation freedom and the large-neighbourhood search after it "
            "(heuristics.lumos.mdmcf.eject and lns, additions; relaxed rewiring-aware SIMD + "
            "FindConnection and SIMD + keep-and-insert as fallbacks), with the OCS groups on 2 "
            "worker processes at P >= 32; `cpu_max_s` counts the calling process and its "
            "workers.", "",
            md_table(summ[cols], ".4g"), "",
            "ITV-ILP solver status per step:", "", md_table(status, ".4g"), "",
            "## Paper vs ours", "", md_table(claims), ""]


if __name__ == "__main__":
    main(run, __doc__)
