"""Solver-vs-heuristic gap study for Spectra on small instances (spec 3.7; not in the paper).

On tiny instances (n = 3..4 ports, s = 2..3 OCSes) the exact makespan MILP (spec 3.7,
HiGHS, MIP gap 0) gives OPT_T, the optimum with T = max(k, Spectra's slots per switch)
configurations per switch. Spectra's schedule fits in T slots, so LB <= OPT_T <= Spectra
on every instance; OPT_T is an upper bound on the unrestricted optimum. Each method runs
through the toolkit (``toolkit.run.run_task``, as ``solve.py gap`` does), so every schedule
is verified by the independent checker.

Families: ``random`` (i.i.d. U(0,1) entries with density 0.6, irregular) and ``perms``
(sums of m = n - 1 random weighted permutations, the benchmark's structure, with noise
sigma 0.01 so that instances of the same size are not all isomorphic).
Each instance is ``solve.py generate spectra --workload random|benchmark ...`` with the
seed listed in the CSV.

Run: python solve.py reproduce spectra-gap [--quick]
Writes results/spectra_gap.{md,csv,png}.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.common import machine, main, md_table, write_report
from benchmarks.spectra_eval import pyplot, save_figure
from instances.spectra_workloads import generate
from toolkit.progress import track
from toolkit.registry import RunConfig
from toolkit.run import run_task

HEURISTICS = ("spectra", "spectra-noeq", "spectra-eclipse", "baseline")
BINS = (0.0, 1e-6, 0.01, 0.05, 0.10, 0.20, np.inf)
BIN_LABELS = ("optimal (< 1e-6)", "(0, 1%)", "[1%, 5%)", "[5%, 10%)", "[10%, 20%)", ">= 20%")


def instances(quick: bool):
    seeds = range(2) if quick else range(5)
    for family in ("random", "perms"):
        for n in (3, 4):
            for s in (2, 3):
                for delta in ((0.05,) if quick else (0.02, 0.1)):
                    for r in seeds:
                        seed = 100 * n + 10 * s + r
                        if family == "random":
                            inst = generate("random", n=n, density=0.6, switches=s, delay=delta,
                                            seed=seed)
                        else:
                            inst = generate("benchmark", n=n, m=n - 1, noise=0.01, switches=s,
                                            delay=delta, seed=seed)
                        yield family, seed, inst


def run(quick: bool = False, out_dir: Path = Path("results")) -> list[Path]:
    limit = 20.0 if quick else 60.0
    exact_cfg = RunConfig(backend="highs", mip_gap=0.0, time_limit=limit)
    rows = []
    for family, seed, inst in track(instances(quick), unit="instance"):
        data = inst.to_dict()
        recs = {m: run_task(data, inst.name, m, RunConfig()) for m in HEURISTICS}
        ex = run_task(data, inst.name, "milp", exact_cfg)
        for m, r in [*recs.items(), ("milp", ex)]:
            if not r["verified"]:
                raise AssertionError(f"{m} on {inst.name}: {r['status']} {r['message']}")
        row = dict(family=family, name=inst.name, seed=seed, n=inst.n, s=inst.switches,
                   delta=inst.delay, degree=recs["spectra"]["degree"],
                   lb=recs["spectra"]["lower_bound"], opt_T=ex["objective"],
                   milp_status=ex["status"], milp_bound=ex["bound"], slots=ex.get("slots"),
                   milp_time_s=ex["runtime_s"], milp_vars=ex["n_vars"])
        row.update({m: recs[m]["objective"] for m in HEURISTICS})
        rows.append(row)
    df = pd.DataFrame(rows)
    df["spectra_vs_opt"] = df.spectra / df.opt_T - 1
    df["opt_vs_lb"] = df.opt_T / df.lb - 1
    df["spectra_vs_lb"] = df.spectra / df.lb - 1
    for m in HEURISTICS[1:]:
        df[f"{m}_vs_opt"] = df[m] / df.opt_T - 1
    solved = df[df.milp_status == "optimal"]
    png = out_dir / "spectra_gap.png"
    _plot(solved, png)
    dist = []
    for col, label in [("spectra_vs_opt", "Spectra / OPT_T - 1"), ("opt_vs_lb", "OPT_T / LB - 1"),
                       ("spectra_vs_lb", "Spectra / LB - 1"),
                       *[(f"{m}_vs_opt", f"{m} / OPT_T - 1") for m in HEURISTICS[1:]]]:
        v = solved[col].clip(lower=0)
        counts = pd.cut(v, BINS, right=False, labels=BIN_LABELS).value_counts().reindex(BIN_LABELS)
        dist.append({"gap": label, "mean": v.mean(), "median": v.median(), "p90": v.quantile(0.9),
                     "max": v.max(), **{b: int(c) for b, c in counts.items()}})
    fam = solved.groupby("family").agg(
        instances=("name", "size"), spectra_optimal=("spectra_vs_opt", lambda v: int((v < 1e-6).sum())),
        spectra_vs_opt_mean=("spectra_vs_opt", "mean"), spectra_vs_opt_max=("spectra_vs_opt", "max"),
        opt_vs_lb_mean=("opt_vs_lb", "mean"), lb_tight=("opt_vs_lb", lambda v: int((v < 1e-6).sum())),
        milp_time_s_median=("milp_time_s", "median"), milp_time_s_max=("milp_time_s", "max")
    ).reset_index()
    cmd = "python solve.py reproduce spectra-gap" + (" --quick" if quick else "")
    ok = df.lb.le(df.opt_T + 1e-7).all() and df.opt_T.le(df.spectra + 1e-7).all()
    md = ["# Spectra solver-vs-heuristic gap study (exact MILP vs Spectra vs lower bound)", "",
          f"Regenerate: `{cmd}`. Machine: {machine()}.", "",
          f"{len(df)} instances (n in {_vals(df.n)}, s in {_vals(df.s)}, "
          f"delta in {_vals(df.delta)}); exact MILP (spec 3.7, not in the paper) on "
          f"HiGHS with MIP gap 0 and a {limit:.0f} s limit: {len(solved)} solved to optimality, "
          f"{len(df) - len(solved)} hit the limit (excluded from the distributions, kept in the CSV). "
          "OPT_T is the optimum with T = max(k, Spectra's slots) configurations per switch, an "
          "upper bound on the true optimum. Every schedule passed the independent checker.", "",
          f"LB <= OPT_T <= Spectra on every instance: **{'yes' if ok else 'NO'}**.", "",
          "Spec 3.7 (its prototype, 30+ instances, n <= 4): \"Spectra was optimal on most "
          "permutation-structured instances, and within 0-17% on irregular ones\" (not the "
          "paper's data; the paper has no exact model).", "",
          "## Per family", "", md_table(fam, ".4g"), "",
          "## Distribution of the gaps (solved instances; counts per bin)", "",
          md_table(pd.DataFrame(dist), ".4f"), ""]
    return [*write_report(out_dir, "spectra_gap", md, {"spectra_gap.csv": df}), png]


def _vals(col: pd.Series) -> str:
    return "{" + ", ".join(f"{v:g}" for v in sorted(col.unique())) + "}"


def _plot(df: pd.DataFrame, path: Path) -> None:
    fig, axes = pyplot().subplots(1, 2, figsize=(9, 3.4))
    for ax, (col, title) in zip(axes, (("spectra_vs_opt", "Spectra / OPT_T - 1"),
                                       ("opt_vs_lb", "OPT_T / LB - 1"))):
        for fam, t in df.groupby("family"):
            ax.hist(100 * t[col].clip(lower=0), bins=20, alpha=0.6, label=fam)
        ax.set_xlabel(f"{title} (%)")
        ax.set_ylabel("instances")
        ax.grid(alpha=0.3)
    axes[0].legend()
    save_figure(fig, path)


if __name__ == "__main__":
    main(run, __doc__)
