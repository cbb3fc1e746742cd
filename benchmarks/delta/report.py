"""Report helpers of the DELTA reproduction (benchmarks/delta/figs.py): the batch's own rows,
the HotStart-vs-Fast check (issue 18), Fig. 11's convergence table and the plots."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd


def hotstart_check(df: pd.DataFrame, budget_s: float = 60) -> list[str]:
    """Report lines: DELTA-Joint-HotStart's iteration time against its own GA's topology (its
    MIP start: never worse by construction) and against the separate DELTA-Fast run."""
    hot = df[df.method == "delta-joint-hotstart"].set_index("name")
    if not len(hot):
        return []
    fast = df[df.method == "delta-fast"].set_index("name")["iteration_time"].reindex(hot.index)
    tol = 1e-6 * hot["iteration_time"]
    vs_start = hot["iteration_time"] - hot["reference_iteration_time"]
    vs_fast = hot["iteration_time"] - fast
    worse = vs_fast[vs_fast > tol]
    lines = ["## DELTA-Joint-HotStart vs DELTA-Fast (iteration time)", "",
             f"{len(hot)} HotStart runs; {int((vs_start <= tol).sum())} end at or below their own "
             f"GA topology's simulated iteration time (the MIP start; max difference "
             f"{vs_start.max():+.4g} ms); {int((vs_fast <= tol).sum())} of {int(vs_fast.notna().sum())} "
             "at or below the separate DELTA-Fast run's (HotStart's GA gets at most half of the "
             f"{budget_s:g} s budget, so a GA stopped by time can start it from a worse topology)."]
    if len(worse):
        lines.append("Worse than the separate DELTA-Fast run: " + "; ".join(
            f"{n} {v:+.4g} ms" for n, v in worse.items()) + ".")
    return [*lines, ""]


def lines_plot(table, xcol, methods, xlabel, ylabel, path, logy=False):
    """One panel per workload (four per row): a line per method over ``xcol`` (log2 x axis)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = list(dict.fromkeys(table.model))
    ncol = min(4, len(models))
    nrow = -(-len(models) // ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, 3.2 * nrow), squeeze=False)
    for ax in axes.flat[len(models):]:
        ax.set_visible(False)
    for ax, model in zip(axes.flat, models):
        t = table[table.model == model].sort_values(xcol)
        for m in methods:
            if m in t:
                ax.plot(t[xcol], t[m], marker="o", label=m)
        ax.set_xscale("log", base=2)
        if logy:
            ax.set_yscale("log")
        ax.set_title(model)
        ax.set_xlabel(xlabel)
    axes[0][0].set_ylabel(ylabel)
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def batch_rows(rep, runs: Path) -> pd.DataFrame:
    """The rows of ``runs`` that belong to the batch ``rep`` (not rows of older instance
    files or settings that the CSV keeps beside them)."""
    df = pd.read_csv(runs)
    keys = {r.get("run_key") for r in rep.rows} - {None, ""}
    return df[df["run_key"].isin(keys) | df["run_key"].isna()].reset_index(drop=True)


def _trajectory(text) -> list[tuple[float, float]]:
    """``incumbents`` of a record or CSV cell: a list, its JSON, or the older ``t:obj;...``."""
    if isinstance(text, str) and text.startswith("["):
        text = json.loads(text)
    if isinstance(text, list):
        return [(float(t), float(o)) for t, o in text]
    if not isinstance(text, str) or not text:
        return []
    return [tuple(map(float, p.split(":"))) for p in text.split(";")]


def pod_ports(cell) -> np.ndarray:
    """``pod_ports_used`` of a CSV cell: a JSON array, or the older space-separated numbers."""
    return np.array(json.loads(cell) if cell.startswith("[") else cell.split(), float)


def convergence_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per (model, micro-batches): each method's convergence time (spec 3.7; DELTA-Fast's
    whole run), HotStart's saving over Joint, and HotStart's time to Joint's final quality."""
    df = df.copy()
    if "converged_s" not in df:
        df["converged_s"] = np.nan
    df["conv"] = np.where(df["method"] == "delta-fast", df["runtime_s"], df["converged_s"])
    conv = df.pivot_table(index=["model", "micro_batches"], columns="method",
                          values="conv").reset_index()
    if not {"delta-joint", "delta-joint-hotstart"} <= set(conv.columns):
        return conv
    conv["hotstart_saving"] = 1 - conv["delta-joint-hotstart"] / conv["delta-joint"]
    traj = {(r.model, r.micro_batches, r.method): _trajectory(r.get("incumbents"))
            for _, r in df.iterrows()}
    reach = []
    for _, r in conv.iterrows():
        joint = traj.get((r.model, r.micro_batches, "delta-joint"), [])
        hot = traj.get((r.model, r.micro_batches, "delta-joint-hotstart"), [])
        target = joint[-1][1] * (1 + 1e-4) if joint else np.nan
        reach.append(next((t for t, obj in hot if obj <= target), np.nan))
    conv["hotstart_to_joint_quality_s"] = reach
    return conv


# paper: Fig. 11's text: the maximum convergence times (s) and HotStart's mean saving over Joint
FIG11_PAPER = {"megatron-462b": {"delta-topo": "896 s", "delta-joint": "928 s",
                                 "delta-joint-hotstart": "358 s", "hotstart_saving": "50.4%"},
               "deepseek-671b": {"delta-topo": "2020 s", "delta-joint": "1526 s",
                                 "delta-joint-hotstart": "637 s", "hotstart_saving": "72.7%"}}


def fig11_claims(conv: pd.DataFrame) -> pd.DataFrame:
    """Per model and quantity of FIG11_PAPER: the paper's value beside ours (the maximum
    convergence time over the run's micro-batch counts; the mean saving)."""
    rows = []
    for model, paper in FIG11_PAPER.items():
        t = conv[conv.model == model]
        for col, value in paper.items():
            if col not in t or not len(t):
                ours = "-"
            elif col == "hotstart_saving":
                ours = f"{100 * t[col].mean():.1f}%"
            else:
                ours = f"{t[col].max():.4g} s"
            rows.append(dict(model=model, quantity="mean saving" if col == "hotstart_saving"
                             else f"{col} max convergence", paper=value, ours=ours))
    return pd.DataFrame(rows)


def bars_plot(table, col, label, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    piv = table.pivot_table(index="model", columns="method", values=col)
    ax = piv.plot.bar(figsize=(7, 3.2), rot=15)
    ax.set_ylabel(label)
    ax.figure.tight_layout()
    ax.figure.savefig(path, dpi=110)
    plt.close(ax.figure)
