"""Engine behind the Spectra figure reproductions (spec 4.5): paired runs, factors, plots.

For each random matrix it runs every method on every (s, delta) of the grid, on the same
matrix (pairing, spec 4.5), caching what does not depend on a parameter: Spectra's
decomposition (independent of s and delta), Eclipse's (depends on delta only) and the
Baseline split and its sub-matrix decompositions (depend on s only). Every schedule is
verified by the independent checker ``instances.spectra.instance.check_schedule``; the makespan
recorded is the checker's. A method's runtime is its full cost at that point: its
(cached, timed once) decomposition plus its Schedule/Equalize/assembly.
"""
from __future__ import annotations

import time

import numpy as np
import pandas as pd

from heuristics.spectra.baseline import baseline_schedule, decompose_parts, greedy_split
from heuristics.spectra.bounds import lower_bound
from heuristics.spectra.decompose import decompose
from heuristics.spectra.eclipse import eclipse_decompose
from heuristics.spectra.schedule import spectra
from instances.spectra.instance import SpectraInstance, check_schedule

METHODS = ("spectra", "spectra-noeq", "spectra-eclipse", "baseline")
LABELS = {"spectra": "Spectra", "spectra-noeq": "Spectra w/o Equalize",
          "spectra-eclipse": "Spectra (Eclipse)", "baseline": "Baseline", "lb": "LB"}
COLORS = {"spectra": "tab:blue", "spectra-noeq": "tab:cyan", "spectra-eclipse": "tab:green",
          "baseline": "tab:red", "lb": "black"}


def _timed(fn, *a, **kw):
    t0 = time.perf_counter()
    out = fn(*a, **kw)
    return out, time.perf_counter() - t0


def _verified(inst: SpectraInstance, sched, method: str) -> dict:
    bad, met = check_schedule(inst, sched)
    if bad:
        raise AssertionError(f"{method} on {inst.name}: unverified schedule: {bad[:2]}")
    return met


def evaluate(D: np.ndarray, s_grid, delta_grid, methods=METHODS, **tags) -> list[dict]:
    """One record per (s, delta, method) plus the lower bound ("lb") for one matrix D."""
    recs = []

    def record(s, delta, method, makespan, runtime_s, n_configs=0, sum_alpha=0.0):
        recs.append(dict(tags, s=s, delta=delta, method=method, makespan=makespan,
                         runtime_ms=runtime_s * 1e3, n_configs=n_configs, sum_alpha=sum_alpha))

    dec, t_dec = _timed(decompose, D) if {"spectra", "spectra-noeq"} & set(methods) else (None, 0)
    ecl = {d: _timed(eclipse_decompose, D, d) for d in delta_grid} \
        if "spectra-eclipse" in methods else {}
    for s in s_grid:
        if "baseline" in methods:
            t0 = time.perf_counter()
            decs = decompose_parts(greedy_split(D, s))
            t_base = time.perf_counter() - t0
        for d in delta_grid:
            inst = SpectraInstance(D, s, d, name=f"{tags}")
            for m in methods:
                if m in ("spectra", "spectra-noeq"):
                    sched, t = _timed(spectra, inst, equalize_loads=m == "spectra", dec=dec)
                    t += t_dec
                elif m == "spectra-eclipse":
                    edec, t_e = ecl[d]
                    sched, t = _timed(spectra, inst, dec=edec)
                    t += t_e
                elif m == "baseline":
                    sched, t = _timed(baseline_schedule, decs)
                    t += t_base
                else:
                    raise ValueError(f"unknown method {m!r}")
                met = _verified(inst, sched, m)
                record(s, d, m, makespan=met["makespan"], runtime_s=t, n_configs=met["n_configs"],
                       sum_alpha=sum(a for sw in sched.switches for _, a in sw))   # transmission
            lb, t = _timed(lower_bound, D, s, d)
            record(s, d, "lb", makespan=lb, runtime_s=t)
    return recs


def point_means(df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Mean makespan per plotted point (keys) and method, methods as columns, and the ratio
    ``spectra_over_lb`` of the two means when both are there."""
    pts = df.pivot_table(index=keys, columns="method", values="makespan", aggfunc="mean").reset_index()
    pts.columns.name = None
    if {"spectra", "lb"} <= set(pts.columns):
        pts["spectra_over_lb"] = pts.spectra / pts.lb
    return pts


def average_factors(pts: pd.DataFrame, group: list[str]) -> pd.DataFrame:
    """Spec 4.5 "average factor": mean over the plotted points of mean(other)/mean(Spectra),
    with the geometric mean, min and max; Spectra/LB the same way. One row per group."""
    rows = []
    for g, t in pts.groupby(group):
        for other, label in (("baseline", "Baseline / Spectra"),
                             ("spectra-eclipse", "Spectra (Eclipse) / Spectra"),
                             ("spectra-noeq", "Spectra w/o Equalize / Spectra"),
                             ("spectra", "Spectra / LB")):
            if other not in t or "spectra" not in t:
                continue
            r = (t["spectra"] / t["lb"]) if other == "spectra" else (t[other] / t["spectra"])
            rows.append({**dict(zip(group, g)), "ratio": label, "mean": r.mean(),
                         "geomean": float(np.exp(np.log(r).mean())), "min": r.min(),
                         "max": r.max(), "points": len(r)})
    return pd.DataFrame(rows)


def runtime_table(df: pd.DataFrame, group: list[str]) -> pd.DataFrame:
    """Per method: runtime (ms per instance, decomposition included; mean, median, max), and
    the mean number of configurations and total transmission time sum(alpha) of a schedule."""
    return df[df.method != "lb"].groupby([*group, "method"]).agg(
        runtime_ms_mean=("runtime_ms", "mean"), runtime_ms_median=("runtime_ms", "median"),
        runtime_ms_max=("runtime_ms", "max"), configs_mean=("n_configs", "mean"),
        sum_alpha_mean=("sum_alpha", "mean")).reset_index()


def plot_panels(pts: pd.DataFrame, panel: str, x: str, series: str | None, methods, path,
                xlabel: str, title=lambda p: str(p), ncols: int | None = None,
                styles=("-", "--", ":", "-.")) -> None:
    """One panel per value of ``panel`` (``ncols`` per row); one line per (method, value of
    ``series``)."""
    plt = pyplot()
    panels = list(dict.fromkeys(pts[panel]))
    ncols = ncols or len(panels)
    nrows = -(-len(panels) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, 3.5 * nrows), squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    for ax, p in zip(axes.flat, panels):
        t = pts[pts[panel] == p]
        for k, sv in enumerate(dict.fromkeys(t[series]) if series else [None]):
            u = t[t[series] == sv] if series else t
            u = u.sort_values(x)
            for m in methods:
                if m in u:
                    lab = LABELS.get(m, m) + (f", {series} {sv}" if series else "")
                    ax.plot(u[x], u[m], styles[k % len(styles)], marker="o", ms=3,
                            color=COLORS.get(m), label=lab)
        ax.set_title(title(p))
        ax.set_xlabel(xlabel)
        ax.set_ylabel("makespan (normalized time)")
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=6, ncol=2)
    save_figure(fig, path)


def pyplot():
    """matplotlib.pyplot on the file-only Agg backend (imported on first use: it is slow)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, path) -> None:
    """Lay out, write (110 dpi) and close a figure."""
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    pyplot().close(fig)
