"""Solver-vs-heuristic gap study for Spectra on small instances (not in the paper).

Two exact models, both on HiGHS with MIP gap 0, each method through the toolkit
(``toolkit.run.run_task``, as ``solve.py gap`` does), so every schedule is verified by the
independent checker:

* ``milp-matchings`` (models.spectra.matchings): the proven optimum OPT (no slot limit),
  on every instance, n = 3 to 6;
* ``milp`` (spec 3.7, the slot MILP): OPT_T with T = max(k, Spectra's slots per switch),
  an upper bound on OPT; only for n <= 4 (issue 17: some n = 4 instances stay open after
  30-60 s already).

So LB <= OPT <= min(OPT_T, Spectra) on every solved instance; the gaps are taken against OPT.

Instances (issue 28: the claims must hold beyond a few chosen cases): the generator's
families at small n, each instance what ``solve.py generate spectra --workload W ...``
writes with the seed listed in the CSV: ``random`` (i.i.d. U(0,1) entries with density
0.6, irregular), ``perms`` (workload benchmark: sums of m = n - 1 random weighted
permutations, the benchmark's structure, with noise sigma 0.01 so that instances of the
same size are not all isomorphic), ``moe`` (expert routing with top-k 2: every
off-diagonal entry nonzero, the densest support) and ``shifts`` (three cyclic shifts, noise
0.003); n = 3, 4 with s = 2, 3, 4 and n = 5 with s = 2, 3, and n = 6 with s = 2 for random
and perms only (``SIZES``); 5 seeds per (family, n, s), delta 0.02 on even and 0.1 on odd
seeds: 170 instances (``--quick``: n = 3, 4, s = 2, random and perms, 2 seeds). Times are wall (``*_time_s``, the record's runtime_s) and
this process's CPU time around the run (``*_cpu_s``, less sensitive to the machine's load).

Run: python solve.py reproduce spectra-gap [--quick]
Writes results/spectra/spectra_gap.{md,csv,png} (--quick: results/quick/). Resumable: each finished
instance is kept in <that folder>/spectra_runs/gap[_quick]/ (local, gitignored) and a rerun
skips it; delete the folder to rerun from scratch.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.common import headline, machine, main, md_table, reproduce_cmd, write_report
from benchmarks.spectra.eval import pyplot, save_figure
from instances.spectra.workloads import generate
from toolkit.progress import track
from toolkit.registry import RunConfig
from toolkit.run import run_task

HEURISTICS = ("spectra", "spectra-noeq", "spectra-eclipse", "baseline")
BINS = (0.0, 1e-6, 0.01, 0.05, 0.10, 0.20, np.inf)
BIN_LABELS = ("optimal (< 1e-6)", "(0, 1%)", "[1%, 5%)", "[5%, 10%)", "[10%, 20%)", ">= 20%")


SLOT_MILP_MAX_N = 4     # the slot MILP (OPT_T) runs up to this n
OPT_LIMIT_S = 1200.0    # the matching MILP's limit (wall; 2 busy cores: see the report's load)
N6_LIMIT_S = 3600.0     # ... at n = 6
# (n, s). [DECISION] n = 6 (issue 31) only with s = 2 and the families of issue 17 and 28's
# claims (N6_FAMILIES): issue 28 measured 5 held-out random n = 6, s = 2 proofs at up to
# 509 s, and some n = 5 proofs already reach 1200 s on 2 shared cores, so n = 6 gets a
# longer limit (N6_LIMIT_S) to be proven on a loaded machine; 10 instances, up to 10 h.
SIZES = ((3, 2), (3, 3), (3, 4), (4, 2), (4, 3), (4, 4), (5, 2), (5, 3), (6, 2))
FAMILIES = ("random", "perms", "moe", "shifts")
N6_FAMILIES = ("random", "perms")   # [DECISION] n = 6: the families of issue 17 and 28's claims
DELTAS = (0.02, 0.1)    # by seed parity
# the generator's parameters per family (solve.py generate spectra --workload ...)
FAMILY_ARGS = {"random": lambda n: dict(workload="random", density=0.6),
               "perms": lambda n: dict(workload="benchmark", m=n - 1, noise=0.01),
               "moe": lambda n: dict(workload="moe", top_k=2),
               "shifts": lambda n: dict(workload="shifts")}


def instances(quick: bool):
    """(family, seed, instance), smallest n first (an interrupted run keeps those)."""
    sizes = [(n, s) for n, s in SIZES if n <= 4 and s == 2] if quick else SIZES
    for n, s in sizes:
        for family in (FAMILIES[:2] if quick else N6_FAMILIES if n >= 6 else FAMILIES):
            for r in range(2 if quick else 5):
                seed = 100 * n + 10 * s + r
                yield family, seed, generate(n=n, switches=s, delay=DELTAS[r % 2], seed=seed,
                                             **FAMILY_ARGS[family](n))


def run(quick: bool = False, out_dir: Path = Path("results/spectra")) -> list[Path]:
    limit = 20.0 if quick else 60.0              # slot MILP (OPT_T)
    opt_limit = 120.0 if quick else OPT_LIMIT_S  # matching MILP (OPT)
    exact_cfg = RunConfig(backend="highs", mip_gap=0.0, time_limit=limit)
    cache = out_dir / "spectra_runs" / ("gap_quick" if quick else "gap")
    cache.mkdir(parents=True, exist_ok=True)
    rows = []
    for family, seed, inst in track(instances(quick), unit="instance"):
        done = cache / f"{family}-{seed}-{inst.name}.json"
        if done.exists():               # resume: one finished instance per file
            rows.append(json.loads(done.read_text()))
            continue
        data = inst.to_dict()
        recs = {m: run_task(data, inst.name, m, RunConfig()) for m in HEURISTICS}
        c0 = time.process_time()
        opt_cfg = RunConfig(backend="highs", mip_gap=0.0,
                            time_limit=opt_limit if inst.n < 6 else N6_LIMIT_S)
        recs["milp-matchings"] = opt = run_task(data, inst.name, "milp-matchings", opt_cfg)
        c1 = time.process_time()
        ex = run_task(data, inst.name, "milp", exact_cfg) if inst.n <= SLOT_MILP_MAX_N else {}
        c2 = time.process_time()
        if ex:
            recs["milp"] = ex
        for m, r in recs.items():
            if not r["verified"]:
                raise AssertionError(f"{m} on {inst.name}: {r['status']} {r['message']}")
        row = dict(family=family, name=inst.name, seed=seed, n=inst.n, s=inst.switches,
                   delta=inst.delay, degree=recs["spectra"]["degree"],
                   lb=recs["spectra"]["lower_bound"], opt=opt["objective"],
                   opt_status=opt["status"], opt_bound=opt["bound"],
                   opt_time_s=opt["runtime_s"], opt_cpu_s=c1 - c0, opt_vars=opt["n_vars"],
                   matchings=opt.get("matchings"), opt_T=ex.get("objective", np.nan),
                   milp_status=ex.get("status", "not run"), milp_bound=ex.get("bound", np.nan),
                   slots=ex.get("slots"), milp_time_s=ex.get("runtime_s", np.nan),
                   milp_cpu_s=c2 - c1 if ex else np.nan, load=os.getloadavg()[0],
                   milp_vars=ex.get("n_vars"))
        row.update({m: recs[m]["objective"] for m in HEURISTICS})
        row = {k: (v.item() if isinstance(v, np.generic) else v) for k, v in row.items()}
        tmp = done.with_suffix(".tmp")
        tmp.write_text(json.dumps(row))
        tmp.replace(done)
        rows.append(row)
    df = pd.DataFrame(rows)
    df["spectra_vs_opt"] = df.spectra / df.opt - 1
    df["opt_vs_lb"] = df.opt / df.lb - 1
    df["spectra_vs_lb"] = df.spectra / df.lb - 1
    df["opt_T_vs_opt"] = df.opt_T / df.opt - 1
    for m in HEURISTICS[1:]:
        df[f"{m}_vs_opt"] = df[m] / df.opt - 1
    solved = df[df.opt_status == "optimal"]
    png = out_dir / "spectra_gap.png"
    _plot(solved, png)
    dist = []
    for col, label in [("spectra_vs_opt", "Spectra / OPT - 1"), ("opt_vs_lb", "OPT / LB - 1"),
                       ("spectra_vs_lb", "Spectra / LB - 1"),
                       ("opt_T_vs_opt", "OPT_T / OPT - 1 (n <= 4, both solved)"),
                       *[(f"{m}_vs_opt", f"{m} / OPT - 1") for m in HEURISTICS[1:]]]:
        rows = solved[solved.milp_status == "optimal"] if col == "opt_T_vs_opt" else solved
        v = rows[col].dropna().clip(lower=0)
        counts = pd.cut(v, BINS, right=False, labels=BIN_LABELS).value_counts().reindex(BIN_LABELS)
        dist.append({"gap": label, "mean": v.mean(), "median": v.median(), "p90": v.quantile(0.9),
                     "max": v.max(), **{b: int(c) for b, c in counts.items()}})
    both = solved[solved.milp_status == "optimal"]
    keys = ["family", "n", "s"]
    times = df.groupby(keys).agg(
        instances=("name", "size"),
        opt_proven=("opt_status", lambda v: int((v == "optimal").sum())),
        opt_time_s_median=("opt_time_s", "median"), opt_time_s_max=("opt_time_s", "max"),
        opt_cpu_s_max=("opt_cpu_s", "max"), matchings_max=("matchings", "max"),
        milp_time_s_median=("milp_time_s", "median"), milp_time_s_max=("milp_time_s", "max"))
    gaps = solved.groupby(keys).agg(
        spectra_optimal=("spectra_vs_opt", lambda v: int((v < 1e-6).sum())),
        spectra_vs_opt_mean=("spectra_vs_opt", "mean"),
        spectra_vs_opt_max=("spectra_vs_opt", "max"), opt_vs_lb_mean=("opt_vs_lb", "mean"),
        lb_tight=("opt_vs_lb", lambda v: int((v < 1e-6).sum())))
    fam = times.join(gaps).reset_index()
    slot = df[df.n <= SLOT_MILP_MAX_N]
    cmd = reproduce_cmd("spectra-gap", quick, out_dir)
    tol = 1e-7
    lim = f"{opt_limit:.0f} s" + (f" ({N6_LIMIT_S:.0f} s at n = 6)" if (df.n >= 6).any() else "")
    ok = solved.lb.le(solved.opt + tol).all() and solved.opt.le(solved.spectra + tol).all() \
        and both.opt.le(both.opt_T + tol).all()
    md = ["# Spectra solver-vs-heuristic gap study (exact MILPs vs Spectra vs lower bound)", "",
          f"Regenerate: `{cmd}` (resumable: finished instances are kept in `{cache}`). "
          f"Machine: {machine()}.", "",
          f"{len(df)} instances (n in {_vals(df.n)}, s in {_vals(df.s)}, "
          f"delta in {_vals(df.delta)}). OPT: the matching MILP (`milp-matchings`, not in the "
          f"paper; no slot limit) on HiGHS with MIP gap 0 and a {lim} limit proved "
          f"the optimum on {len(solved)} of {len(df)} (the rest excluded from the distributions, "
          f"kept in the CSV). OPT_T: the slot MILP (spec 3.7, `milp`) with T = max(k, Spectra's "
          f"slots) configurations per switch, {limit:.0f} s limit, run for n <= "
          f"{SLOT_MILP_MAX_N} only: {int((slot.milp_status == 'optimal').sum())} of {len(slot)} "
          "solved. Every schedule passed the independent checker.", "",
          f"LB <= OPT <= Spectra, and OPT <= OPT_T where both are proven, on every solved "
          f"instance: **{'yes' if ok else 'NO'}**.", "",
          "Spec 3.7 (its prototype, 30+ instances, n <= 4, against OPT_T): \"Spectra was "
          "optimal on most permutation-structured instances, and within 0-17% on irregular "
          "ones\" (not the paper's data; the paper has no exact model).", "",
          *_worst(df, solved, lim),
          "## Per family and size", "", "Gaps and `spectra_optimal` over the proven instances; "
          "times over all (an unproven one ran to the limit).", "", md_table(fam, ".4g"), "",
          "## Distribution of the gaps (solved instances; counts per bin)", "",
          md_table(pd.DataFrame(dist), ".4f"), ""]
    report = write_report(out_dir, "spectra_gap", md, {"spectra_gap.csv": df}, headline(
        f"Spectra gap study: gaps on the {len(solved)} instances with a proven optimum (the "
        "paper has no exact model; spec 3.7's prototype: Spectra within 0-17% of OPT_T)",
        pd.DataFrame(dist)[["gap", "mean", "median", "p90", "max"]]))
    report.append(png)
    return report


def _worst(df: pd.DataFrame, solved: pd.DataFrame, lim: str) -> list[str]:
    """The headline: milp-matchings' slowest proof and Spectra's worst gap, with the set."""
    if not len(solved):
        return ["No instance proven.", ""]
    w = solved.loc[solved.opt_time_s.idxmax()]
    c = solved.loc[solved.opt_cpu_s.idxmax()] if "opt_cpu_s" in solved else w
    g = solved.loc[solved.spectra_vs_opt.idxmax()]
    per_n = "; ".join(
        f"n = {n}: {t.opt_time_s.max():.3g} s wall (median {t.opt_time_s.median():.3g} s) over "
        f"{len(t)} proven of {int((df.n == n).sum())}" for n, t in solved.groupby("n"))
    return ["## Worst cases", "",
            f"`milp-matchings` proved {len(solved)} of {len(df)} instances within "
            f"{lim} "
            f"each; the slowest proof took {w.opt_time_s:.3g} s wall ({w.family}, n = {w.n}, "
            f"s = {w.s}, delta {w.delta:g}, seed {w.seed}; load {w.get('load', float('nan')):.1f})"
            f", the most CPU {c.opt_cpu_s:.3g} s ({c.family}, n = {c.n}, s = {c.s}). Per n: "
            f"{per_n}.", "",
            f"Spectra's worst gap to OPT: {100 * g.spectra_vs_opt:.1f}% ({g.family}, n = {g.n}, "
            f"s = {g.s}, seed {g.seed}); optimal on {int((solved.spectra_vs_opt < 1e-6).sum())} "
            f"of {len(solved)} proven instances.", ""]


def _vals(col: pd.Series) -> str:
    return "{" + ", ".join(f"{v:g}" for v in sorted(col.unique())) + "}"


def _plot(df: pd.DataFrame, path: Path) -> None:
    fig, axes = pyplot().subplots(1, 2, figsize=(9, 3.4))
    for ax, (col, title) in zip(axes, (("spectra_vs_opt", "Spectra / OPT - 1"),
                                       ("opt_vs_lb", "OPT / LB - 1"))):
        for fam, t in df.groupby("family"):
            ax.hist(100 * t[col].clip(lower=0), bins=20, alpha=0.6, label=fam)
        ax.set_xlabel(f"{title} (%)")
        ax.set_ylabel("instances")
        ax.grid(alpha=0.3)
    axes[0].legend()
    save_figure(fig, path)


if __name__ == "__main__":
    main(run, __doc__)
