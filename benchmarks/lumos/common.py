"""Shared runner for the LumosCore benchmarks: strategies along topology sequences.

Every strategy carries its own OCS configuration from step to step (the old configuration
of step l is its own result of step l-1); step 0 starts from no circuits and is not
measured ([001] eq. 16 sums over l > 1). Each result is verified by the problem's
independent checker before it is recorded.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

from instances.lumos.fabric import Fabric
from instances.lumos.instance import ReconfigInstance
from toolkit.registry import RunConfig, problem

# strategy -> (wiring, method name)
STRATEGIES = {
    "ITV-MDMCF": ("cross", "itv-mdmcf"), "ITV-MCF": ("cross", "itv-mcf"),
    "ITV-ILP": ("cross", "itv-ilp"), "Uniform-ILP": ("uniform", "uniform-ilp"),
    "Uniform-Greedy": ("uniform", "uniform-greedy"), "Helios": ("uniform", "helios"),
}


def _cpu() -> float:
    """CPU seconds of this process, of its finished child processes and of ITV-MDMCF's
    group workers (at P >= 32 it runs the OCS groups in a pool of worker processes kept
    for the process's life: heuristics.lumos.mdmcf.reconfig.WORKER_CPU_S)."""
    from heuristics.lumos.mdmcf import reconfig as lumos_reconfig

    t = os.times()
    return t.user + t.system + t.children_user + t.children_system + lumos_reconfig.WORKER_CPU_S


def run_step(fabric: Fabric, C: np.ndarray, strategy: str, old, cfg: RunConfig):
    """One reconfiguration: (new configuration, record)."""
    wiring, name = STRATEGIES[strategy]
    prob = problem("lumos-reconfig")
    inst = ReconfigInstance(fabric, C, wiring, old)
    t0, c0 = time.perf_counter(), _cpu()
    out = prob.methods[name].run(inst, cfg)
    dt, cpu = time.perf_counter() - t0, _cpu() - c0
    if out.solution is None:
        raise RuntimeError(f"{strategy}: no solution ({out.solver.status if out.solver else '?'})")
    bad, m = prob.check(inst, out.solution)
    if bad:
        raise AssertionError(f"{strategy}: checker rejected the configuration: {bad[:2]}")
    rec = {"strategy": strategy, "time_s": dt, "cpu_s": cpu, **{k: m[k] for k in (
        "rewiring", "lower_bound", "cos_old_new", "ltrr", "realized_fraction", "realized", "shortfall",
        "links_added", "links_removed", "reallocated_share", "circuits")}}
    if out.solver is not None:
        rec.update(status=out.solver.status, backend=out.solver.backend)
    return out.solution, rec


def run_sequence(fabric: Fabric, seq: list[np.ndarray], strategies, cfgs: dict[str, RunConfig],
                 tags: dict, first: bool = False, driver: str | None = None) -> list[dict]:
    """Run each strategy along ``seq``; one record per (strategy, step >= 1), and for step 0
    too with ``first`` (from no circuits).

    Without ``driver`` every strategy follows its own trajectory ([001] eq. 16). With a
    ``driver``, the strategies on the driver's wiring all start each step from the driver's
    configuration of the previous step, so their rewiring is compared on the same old state.
    """
    rows = []
    wiring = STRATEGIES[driver][0] if driver else None
    shared = [driver] + [s for s in strategies if s != driver and STRATEGIES[s][0] == wiring] \
        if driver else []
    for st in [s for s in strategies if s not in shared]:
        old = None
        for step, C in enumerate(seq):
            old, rec = run_step(fabric, C, st, old, cfgs.get(st, RunConfig()))
            if step or first:
                rows.append({**tags, "step": step, **rec})
    old = None
    for step, C in enumerate(seq):
        nxt = None
        for st in shared:
            conf, rec = run_step(fabric, C, st, old, cfgs.get(st, RunConfig()))
            nxt = conf if st == driver else nxt
            if step or first:
                rows.append({**tags, "step": step, "old_from": driver, **rec})
        old = nxt
    return rows


def mrar(df: pd.DataFrame, by: list[str], ref: str = "ITV-ILP") -> pd.DataFrame:
    """[001] eq. (16): sum_l cos(x^l, x^{l-1}) of a strategy over that of ITV-ILP, per group of
    ``by`` (the same sequences)."""
    s = df.groupby(by + ["strategy"])["cos_old_new"].sum().unstack("strategy")
    if ref not in s:
        return pd.DataFrame()
    return s.div(s[ref], axis=0)


def plot(path, frames: dict, xlabel: str, ylabel: str, logy: bool = False, paper: dict | None = None):
    """One line per series of ``frames`` {label: (x, y)}; optional paper points {label: (x, y)}."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for label, (x, y) in frames.items():
        ax.plot(x, y, marker="o", label=label)
    for label, (x, y) in (paper or {}).items():
        ax.scatter(x, y, marker="*", s=120, label=f"paper: {label}", zorder=5)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if logy:
        ax.set_yscale("log")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
