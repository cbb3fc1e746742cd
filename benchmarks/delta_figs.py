"""Reproduce DELTA Figs. 6 and 8: NCT of the six methods vs bandwidth and vs sequence length.

Ye et al. 2026, Section V-B (delta spec 5.3, 5.5). Every (workload, x value) becomes an
instance file; the six methods run through the resumable batch runner (an interrupted
run continues where it stopped); the table puts the paper's stated maxima beside ours.
``--quick`` uses fewer micro-batches (N = PP instead of 8 x PP) and 60 s solver limits;
the full run uses the Table I workloads and the paper's 600 s cap (hours on 2 cores).

Run: python solve.py reproduce delta-fig6 [--quick]   /   delta-fig8 [--quick]
Writes results/delta_fig6.{md,csv,png} (or fig8) and keeps the raw runs in
results/delta_runs/fig6[_quick].csv.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.common import machine, md_table, write_report
from instances import save_instance
from instances.delta_models import TABLE_I
from toolkit.batch import run_batch
from toolkit.delta_methods import generate
from toolkit.registry import RunConfig

MODELS = ("megatron-177b", "mixtral-8x22b", "megatron-462b", "deepseek-671b")
METHODS = ("prop-alloc", "sqrt-alloc", "iter-halve", "delta-fast", "delta-topo", "delta-joint")
BASELINES = METHODS[:3]
FIGS = {
    "fig6": dict(param="bandwidth_gbps", values=(200, 400, 800, 1600), label="inter-pod bandwidth (Gb/s)",
                 paper={"megatron-177b": "11.5% @ 800", "mixtral-8x22b": "13.7% @ 1600",
                        "megatron-462b": "10.7% @ 200", "deepseek-671b": "17.5% @ 800"}),
    "fig8": dict(param="seq_len", values=(2048, 4096, 8192, 16384), label="sequence length",
                 paper={"megatron-177b": "15.8% @ 8192", "mixtral-8x22b": "9.8% @ 4096",
                        "megatron-462b": "11.6% @ 2048", "deepseek-671b": "18.1% @ 16384"}),
}


def run_fig(fig: str, quick: bool, out_dir: Path) -> list[Path]:
    spec = FIGS[fig]
    tag = f"{fig}_quick" if quick else fig
    inst_dir = out_dir / "delta_runs" / tag
    inst_dir.mkdir(parents=True, exist_ok=True)
    for model in MODELS:
        n = TABLE_I[model]["pp"] if quick else TABLE_I[model]["micro_batches"]
        for v in spec["values"]:
            f = inst_dir / f"{model}_{v}.json"
            if not f.exists():
                save_instance(generate(model=model, micro_batches=n, name=f"{model}-{v}",
                                       **{spec["param"]: v}), f)
    runs = out_dir / "delta_runs" / f"{tag}.csv"
    cfg = RunConfig(time_limit=60.0 if quick else 600.0,
                    options={"stall": 50 if quick else 200, "ga_time_limit": 60.0 if quick else 600.0})
    run_batch([inst_dir], list(METHODS), cfg, runs, progress=True)
    df = pd.read_csv(runs)
    df["model"] = df["name"].str.rsplit("-", n=1).str[0]
    df["x"] = df["name"].str.rsplit("-", n=1).str[1].astype(int)
    table = df.pivot_table(index=["model", "x"], columns="method", values="nct").reset_index()
    table["best_baseline"] = table[list(BASELINES)].min(axis=1)
    table["joint_vs_best_baseline"] = 1 - table["delta-joint"] / table["best_baseline"]
    table["joint_vs_topo"] = 1 - table["delta-joint"] / table["delta-topo"]
    table["fast_minus_topo"] = table["delta-fast"] - table["delta-topo"]
    status = df.groupby("method")["status"].agg(lambda s: ", ".join(f"{k} {v}" for k, v in
                                                                    s.value_counts().items()))
    summary = []
    for model in MODELS:
        t = table[table.model == model]
        if len(t):
            i = t.joint_vs_best_baseline.idxmax()
            summary.append(dict(model=model, paper_max_reduction=spec["paper"].get(model, "-"),
                                ours_max_reduction=f"{100 * t.loc[i, 'joint_vs_best_baseline']:.1f}% @ "
                                                   f"{t.loc[i, 'x']}"))
    png = out_dir / f"delta_{fig}.png"
    _plot(table, spec, png)
    cmd = f"python solve.py reproduce delta-{fig}" + (" --quick" if quick else "")
    md = [f"# DELTA {fig.replace('fig', 'Fig. ')}: NCT vs {spec['label']}", "",
          f"Regenerate: `{cmd}` (resumable; raw runs in `{runs.as_posix()}`). Machine: {machine()}.",
          "", ("Quick variant: N = PP micro-batches (not 8 x PP), 60 s per solver run. " if quick else
               "Table I workloads, 600 s per solver run. ") +
          "NCT = critical-path inter-pod communication time over the ideal network's (spec 4.4). "
          "Baselines, DELTA-Fast and DELTA-Topo are scored by the fair-share simulator on their "
          "topology; DELTA-Joint by its own rate-controlled schedule. Our workloads are the spec's "
          "Megatron-faithful reconstruction, not the paper's SimAI traces, and the solver is HiGHS "
          "unless a full Gurobi licence is present: expect qualitative agreement only.", "",
          "## Maximum NCT reduction of DELTA-Joint over the best baseline", "",
          md_table(pd.DataFrame(summary)), "",
          "## NCT per workload and x", "", md_table(table, ".4g"), "",
          "Solver statuses: " + "; ".join(f"{m}: {s}" for m, s in status.items()) + ".", ""]
    return [*write_report(out_dir, f"delta_{fig}", md, {f"delta_{fig}.csv": table}), png]


def _plot(table, spec, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(MODELS), figsize=(4 * len(MODELS), 3.2), sharey=False)
    for ax, model in zip(np.atleast_1d(axes), MODELS):
        t = table[table.model == model].sort_values("x")
        for m in METHODS:
            if m in t:
                ax.plot(t.x, t[m], marker="o", label=m)
        ax.set_xscale("log", base=2)
        ax.set_title(model)
        ax.set_xlabel(spec["label"])
    np.atleast_1d(axes)[0].set_ylabel("NCT")
    np.atleast_1d(axes)[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run_fig6(quick: bool = False, out_dir: Path = Path("results")) -> list[Path]:
    return run_fig("fig6", quick, out_dir)


def run_fig8(quick: bool = False, out_dir: Path = Path("results")) -> list[Path]:
    return run_fig("fig8", quick, out_dir)
