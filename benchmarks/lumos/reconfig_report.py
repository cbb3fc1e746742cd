"""The Markdown report of benchmarks.lumos.reconfig_quality (its tables and worst cases)."""
from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from benchmarks.lumos import reconfig_grid as G
from benchmarks.common import headline, machine, md_table, reproduce_cmd, write_report

TARGET = 1.03
NAMES = {"mdmcf": "itv-mdmcf", "mdmcf_lp": "itv-mdmcf-lp", "mcf": "itv-mcf"}


def _set_text(df: pd.DataFrame) -> str:
    """The set's size and ranges in one phrase."""
    def rng(col, d=df):
        v = sorted(d[col].unique())
        return f"{v[0]:g}-{v[-1]:g}" if len(v) > 1 else f"{v[0]:g}"
    ring = df[df.workload.str.startswith("rings")]
    churn = f", ring churn {rng('churn', ring)}" if len(ring) else ""
    n = df.workload.value_counts()
    mcf = df[df.workload.str.endswith("-mcf")]
    old = (f"; {len(mcf)} of them (`-mcf`, {rng('pods', mcf)} Pods) from ITV-MCF's old "
           "configuration (`--old mcf`)") if len(mcf) else ""
    return (f"{len(df)} steps: {rng('pods')} Pods, {rng('groups')} groups, {rng('k_spine')} "
            f"ports{churn}, {df.seed.nunique()} seeds each; "
            + ", ".join(f"{k} {v}" for k, v in n.items()) + old)


def worst(df: pd.DataFrame, col: str) -> str:
    """``col``'s worst ratio over the proven steps, with the step, then per workload."""
    opt = df[df.ilp_status == "optimal"]
    if not len(opt):
        return "no proven step"
    w = opt.loc[opt[f"{col}_vs_ilp"].idxmax()]
    parts = []
    for wl, sel in opt.groupby("workload", sort=False):
        r = sel[f"{col}_vs_ilp"]
        parts.append(f"{wl}: worst {r.max():.4f}x over {len(sel)}, {int((r <= 1 + 1e-9).sum())} "
                     f"at the optimum, {int((r > TARGET + 1e-9).sum())} above {TARGET}x")
    return (f"worst **{w[f'{col}_vs_ilp']:.4f}x** over {len(opt)} proven steps "
            f"({w[f'{col}_rewiring']} vs {w.ilp_rewiring} circuits, `"
            f"{G.command(w.workload, w.pods, w.groups, w.k_spine, w.churn, w.seed)}`); "
            + "; ".join(parts))


def _unproven(df: pd.DataFrame) -> str:
    un = df[df.ilp_status != "optimal"]
    if not len(un):
        return "Every step was proven."
    return (f"{len(un)} of {len(df)} steps were not proven within the group limit ("
            f"{', '.join(f'P = {p}: {n}' for p, n in un.pods.value_counts().sort_index().items())}"
            f"); on them itv-mdmcf is at most {un.mdmcf_vs_bound.max():.4f}x the ILP's lower bound "
            f"(the true ratio is below this) and at least "
            f"{(un.mdmcf_rewiring / un.ilp_rewiring).max():.4f}x its best configuration on the "
            f"worst step (median {(un.mdmcf_rewiring / un.ilp_rewiring).median():.4f}x).")


def _speed(df: pd.DataFrame) -> str:
    """Median and worst CPU-time ratios to ITV-MCF per method and size."""
    parts = []
    for col, name in (("time_vs_mcf", "itv-mdmcf"), ("lp_time_vs_mcf", "itv-mdmcf-lp")):
        for wl in df.workload.unique():
            g = df[df.workload == wl].groupby("pods")[col]
            parts.append(f"{name} on {wl}: " + ", ".join(
                f"P = {p}: median {v.median():.2f}x, worst {v.max():.1f}x" for p, v in g))
    return "; ".join(parts)


def head(df: pd.DataFrame) -> str:
    """The headline a reproduce run prints: the targets table."""
    return headline(f"ITV-MDMCF per step vs the proven ITV-ILP optimum and CPU time vs ITV-MCF, "
                    f"{len(df)} steps (issues 17, 28; [001] gives no per-step numbers)",
                    _targets(df))


def _targets(df: pd.DataFrame) -> list[str]:
    opt = df[df.ilp_status == "optimal"]
    rows = ["| target | method | workload | measured | met |", "|---|---|---|---|---|"]
    for col in ("mdmcf", "mdmcf_lp"):
        for wl in df.workload.unique():
            w = opt[opt.workload == wl][f"{col}_vs_ilp"].max()
            rows.append(f"| per step <= {TARGET}x ITV-ILP where proven (17) | {NAMES[col]} | {wl} "
                        f"| worst {w:.4f}x over {int((opt.workload == wl).sum())} steps | "
                        f"{'yes' if w <= TARGET + 1e-9 else 'no'} |")
    for col, lim, what, stat, pmax in (("time_vs_mcf", 3, "median", "median", 16),
                                       ("lp_time_vs_mcf", 10, "worst step", "max", 1 << 30)):
        for wl in df.workload.unique():
            t = df[(df.workload == wl) & (df.pods <= pmax)].groupby("pods")[col].agg(stat)
            txt = ", ".join(f"P = {P}: {v:.2f}x" for P, v in t.items())
            name = "itv-mdmcf" if col == "time_vs_mcf" else "itv-mdmcf-lp"
            where = "at 8 and 16 Pods (17)" if lim == 3 else "on every step (28)"
            rows.append(f"| {what} time <= {lim}x ITV-MCF {where} | {name} | {wl} | {txt} | "
                        f"{'yes' if (t <= lim).all() else 'no'} |")
    return rows


def report(df: pd.DataFrame, tr: pd.DataFrame, sd: pd.DataFrame, quick: bool, load0: float,
           wall: float, out_dir: Path = Path("results/lumos")) -> list[str]:
    from heuristics.lumos.mdmcf.group_split import EXACT_VARS, EXACT_WORK, LNS
    cmd = reproduce_cmd("lumos-reconfig-quality", quick, out_dir)
    cache = (Path(out_dir) / "lumos_runs" / "reconfig_quality").as_posix()
    opt = df[df.ilp_status == "optimal"]
    keys = ["workload", "pods", "churn"]
    agg = dict(steps=("seed", "size"),
               proven=("ilp_status", lambda s: int((s == "optimal").sum())),
               worst_mdmcf_vs_ilp=("mdmcf_vs_ilp", "max"),
               mean_mdmcf_vs_ilp=("mdmcf_vs_ilp", "mean"),
               worst_mdmcf_lp_vs_ilp=("mdmcf_lp_vs_ilp", "max"),
               worst_mcf_vs_ilp=("mcf_vs_ilp", "max"),
               worst_mdmcf_vs_bound=("mdmcf_vs_bound", "max"),
               worst_ilp_vs_lp=("ilp_vs_lp", "max"),
               time_vs_mcf_median=("time_vs_mcf", "median"), time_vs_mcf_max=("time_vs_mcf", "max"),
               lp_time_vs_mcf_median=("lp_time_vs_mcf", "median"),
               lp_time_vs_mcf_max=("lp_time_vs_mcf", "max"), ilp_time_max_s=("ilp_time_s", "max"))
    by = df.groupby(keys).agg(**agg).reset_index()
    fab = df.groupby(["workload", "pods", "groups", "k_spine"]).agg(
        **{k: v for k, v in agg.items() if k not in ("worst_mcf_vs_ilp", "worst_ilp_vs_lp")},
        mdmcf_time_s=("mdmcf_time_s", "median"), mcf_time_s=("mcf_time_s", "median")).reset_index()
    bad = df[(df.ilp_status != "optimal") | (df.mdmcf_vs_ilp > TARGET + 1e-9)
             | (df.mdmcf_lp_vs_ilp > TARGET + 1e-9)]
    cols = ["workload", "pods", "groups", "k_spine", "churn", "seed", "ilp_status",
            "ilp_rewiring", "ilp_bound", "ilp_groups", "mdmcf_rewiring", "mdmcf_lp_rewiring",
            "mcf_rewiring", "lp_bound", "mdmcf_vs_ilp", "mdmcf_lp_vs_ilp", "mdmcf_vs_bound",
            "time_vs_mcf", "lp_time_vs_mcf", "ilp_time_s"]
    jobs = {wl: opt[opt.workload == wl] for wl in ("jobs", "jobs-mcf")
            if (opt.workload == wl).any()}
    return [
        "# ITV-MDMCF vs the ITV-ILP optimum per step, and its speed (issues 17, 28)", "",
        f"Regenerate: `{cmd}` (ILP optima cached in {cache}/, a "
        f"rerun resumes; the set alone: `python -m benchmarks.lumos.reconfig_grid`). Machine: "
        f"{machine()}; load average {load0:.1f} at the start; this run took {wall / 60:.0f} "
        "min (with the cache it had).", "",
        f"The set ({_set_text(df)}): every step is written by `solve.py generate "
        "lumos-reconfig` (the problem's generator: ring churn replaces a `--churn` fraction of "
        "every group's rings, `--kind jobs` is one job arrival or departure; old = ITV-MDMCF's "
        "realization of the topology before, or one step of ITV-MCF's trajectory with "
        "`--old mcf`), so the claims hold on instances nobody here chose. ITV-ILP: the "
        "reduced model, per group on HiGHS, 1 thread, MIP gap 0, "
        f"{G.ILP_GROUP_S:g} s per group, MDMCF's configuration as start; a step is proven when "
        "every group is, and its first unproven group ends its ILP (the rest bounded by the LP; "
        "benchmarks.lumos.reconfig_grid). Rewiring = eq. (7) (checker). Times: CPU seconds of "
        f"this process, median of {1 if quick else 3} interleaved runs, one worker for every "
        "method ([DECISION] the machine is shared; wall times move with the others' load).", "",
        "## Worst cases", "",
        f"* itv-mdmcf: {worst(df, 'mdmcf')}.",
        f"* itv-mdmcf-lp: {worst(df, 'mdmcf_lp')}.",
        f"* itv-mcf (rewiring-oblivious): {worst(df, 'mcf')}.",
        f"* {_unproven(df)}",
        "* Job churn: itv-mdmcf at the optimum on " + "; ".join(
            f"{int((j.mdmcf_vs_ilp <= 1 + 1e-9).sum())} of {len(j)} proven `{wl}` steps"
            + (f" (worst {j.mdmcf_vs_ilp.max():.4f}x)" if (j.mdmcf_vs_ilp > 1 + 1e-9).any() else "")
            for wl, j in jobs.items()) + ".",
        f"* The LP bound (`lp_bound`: per group the ceiling of the reduced ITV-ILP's LP "
        f"relaxation) equals the optimum on {int((opt.ilp_vs_lp <= 1 + 1e-9).sum())} of "
        f"{len(opt)} proven steps and is within {opt.ilp_vs_lp.max():.4f}x of it on every one.",
        f"* CPU time over ITV-MCF's on the same step: {_speed(df)}.", "",
        "## Targets", "", *_targets(df), "",
        "The ejection-chain assignment (heuristics.lumos.mdmcf.eject) inserts the missing units one "
        "at a time and on ring churn its result depends on the insertion order, while the ILP "
        "relocates a few circuits in a coordinated way; the compiled large-neighbourhood "
        f"search (heuristics.lumos.mdmcf.lns, lns {LNS:g} work units per OCS port, never the clock) "
        "closes most of that (variants below). `itv-mdmcf-lp` adds, on groups of at most 16 "
        f"Pods and {EXACT_VARS} binaries, the LP-guided step of heuristics.lumos.mdmcf.exact (LP "
        "bound, the ILP with the old circuits the LP keeps fixed, up to 12 Pods the unfixed "
        f"ILP; HiGHS, 50 nodes and {EXACT_WORK} HiGHS MIP checkpoints per MIP: deterministic "
        "work limits, issue 28). Its LP alone costs more than 10x ITV-MCF on 16-Pod ring steps, "
        "so the 10x target of issue 28 is not met by any work limit that keeps the step; the "
        "variants table says what each limit costs. [DECISION] it stays a separate method: "
        "heuristic-vs-solver studies need `itv-mdmcf` to stay the polynomial replacement of "
        "the ILP that [001] proposes.", "",
        "## Per workload, size and churn", "", md_table(by, ".4g"), "",
        f"## Variants: quality vs time (proven steps up to 16 Pods)", "",
        "Worst and mean ratio to the optimum, and the median and worst over the steps of the "
        "variant's CPU time / ITV-MCF's (one run each, interleaved). `restarts` = extra "
        "ejection-chain runs (without the LNS); `lns` = the search's work per OCS port; "
        "`exact_work` = HiGHS MIP checkpoints per MIP of the LP-guided step (0: its 50-node "
        "limit only, as before issue 28).", "", md_table(tr, ".4g"), "",
        "## LNS seeds (proven steps up to 16 Pods)", "",
        "itv-mdmcf's default with each LNS seed (`--option lns_seed=N`); `lost_vs_ilp` = "
        "rewiring above the optimum summed over the steps. Worst over the seeds: "
        + ", ".join(f"{wl} {g.worst_vs_ilp.max():.4f}x" for wl, g in sd.groupby("workload"))
        + ".", "", md_table(sd, ".4g"), "",
        "## Per fabric", "", md_table(fab, ".4g"), "",
        f"## Steps not proven or above {TARGET}x (all steps: lumos_reconfig_quality.csv)", "",
        md_table(bad[cols], ".4g"), "",
        f"Load average at the end: {os.getloadavg()[0]:.1f}.", ""]


def rerender(out_dir: Path = Path("results/lumos"), quick: bool = False) -> list[Path]:
    """Rewrite the report from its CSVs (no solving, no timing); the machine and load lines
    stay those of the run that measured them."""
    df = pd.read_csv(out_dir / "lumos_reconfig_quality.csv")
    tr = pd.read_csv(out_dir / "lumos_reconfig_quality_variants.csv")
    sd = pd.read_csv(out_dir / "lumos_reconfig_quality_seeds.csv")
    old = (out_dir / "lumos_reconfig_quality.md").read_text().splitlines()
    keep = {k: next(ln for ln in old if ln.startswith(k)) for k in ("Regenerate:", "Load average")}
    lines = report(df, tr, sd, quick, float("nan"), float("nan"), out_dir)
    lines = [next((v for k, v in keep.items() if ln.startswith(k)), ln) for ln in lines]
    return write_report(out_dir, "lumos_reconfig_quality", lines, {}, head(df))
