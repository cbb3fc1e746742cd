"""a2a Figs. 11, 12, 14: ReconfigureDuringCollective vs the baselines (paper Sec. 5.2-5.4).

Protocol (spec 5.3, interpretation A): every strategy's cost is linear in R (d R + transmission),
so each method is built once; ours(R) = min over our candidates (family, d) of d R + t (t with
relabeling for skewed traffic, applied to every candidate at the spec 3.7 budget: identity plus
4 seeded restarts, <= 50 passes each), and the baselines use the same R. R* maximizes 1 - ours / best baseline over R in {0} U logspace(1e-9, 1 s,
10/decade); all bars are reported at R*. Every reported strategy (ours at R*, and every baseline)
is built and verified by the independent checker, and the analytic cost columns are the checker's
R d_eff + transmission (our candidates are ranked on the grid by the same cost computed without
building them, and the chosen one must match the checker exactly). The "sim" columns re-time the
same strategies with the chunk-level simulator (spec 5.4) at R*.
Link: 800 Gb/s, 500 ns, 4 MB chunks; MB = 1e6 B. MixNet is not shown for Uniform (as in the paper).

Run: python solve.py reproduce a2a-fig11|a2a-fig12|a2a-fig14 [--quick]
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.common import headline, machine, md_table, reproduce_cmd, write_report
from heuristics.a2a.baselines import BASELINES
from heuristics.a2a.rdc import FAMILIES, family_candidates, k1_candidate, k1_curve
from heuristics.a2a.relabel import RESTARTS, relabel
from heuristics.a2a.sim import simulate
from heuristics.a2a.strategy import FlowTable, realize
from instances.a2a.instance import check_strategy
from instances.a2a.workloads import generate

R_GRID = np.r_[0.0, np.logspace(-9, 0, 91)]
QUICK_NOTE = ("Quick run: relabeling starts from the identity only (the full run adds the spec "
              "3.7's 4 random restarts).\n")
WORKLOADS = ("uniform", "random", "zipf")


def our_candidates(n: int, k: int) -> list:
    if k == 1:
        shifts, _ = k1_curve(n)
        return [k1_candidate(n, shifts[:d]) for d in range(1, n)]
    return [c for f in FAMILIES + ("direct",) for c in family_candidates(n, k, f)]


def evaluate(inst, restarts: int = RESTARTS) -> dict:
    """Ours and every baseline as (d_eff, transmission) lines, ours relabeled where it matters.

    Our lines: every candidate under the identity labeling, plus a relabeled copy of every
    candidate (relabeling at the spec 3.7 budget minimizes transmission, R = 0; ``--quick``
    runs start from the identity only, ``restarts=0``). d_eff counts the topologies that carry
    traffic under the labeling (A10), as the checker does.
    Baselines are built once and verified by the independent checker (at R = 0 their cost is
    their transmission; d is the checker's d_eff).
    """
    A, link = inst.A, inst.link
    cands = our_candidates(inst.n, inst.k)
    lines = [(i, None) + FlowTable(c).evaluate(A, link) for i, c in enumerate(cands)]
    if not inst.is_uniform:
        tx = np.array([ln[3] for ln in lines])
        for i in range(len(cands)):
            lab, t, _ = relabel(cands[i], inst, restarts=restarts, R=0.0)
            if t < tx[i]:
                lines.append((i, lab) + FlowTable(cands[i]).evaluate(A, link, lab))
    base = {}
    for name, fn in BASELINES.items():
        if name == "mixnet" and inst.is_uniform:
            continue
        st = fn(inst)
        bad, m = check_strategy(inst, st)
        assert not bad, (name, bad[:2])
        base[name] = (m["d"], m["transmission_time"], st)
    return {"cands": cands, "line_cand": [ln[0] for ln in lines],
            "labels": [ln[1] for ln in lines], "d": np.array([ln[2] for ln in lines], dtype=float),
            "tx": np.array([ln[3] for ln in lines]), "base": base}


def at_R(ev: dict, R: float) -> tuple[float, int]:
    """(our analytic cost at R, index of the line attaining it)."""
    c = ev["d"] * R + ev["tx"]
    i = int(np.argmin(c))
    return float(c[i]), i


def our_strategy(inst, ev: dict, i: int):
    """Line i realized on the instance and verified by the independent checker, whose cost at
    R = 0 (the instance's R) must equal the line's (d_eff, transmission)."""
    st = realize(ev["cands"][ev["line_cand"][i]], inst, ev["labels"][i])
    bad, m = check_strategy(inst, st)
    assert not bad, bad[:2]
    assert m["d"] == ev["d"][i] and np.isclose(m["transmission_time"], ev["tx"][i], rtol=1e-9), \
        (m["d"], ev["d"][i], m["transmission_time"], ev["tx"][i])
    return st, m


def best_R(ev: dict, R_grid=R_GRID) -> float:
    gains = []
    for R in R_grid:
        ours, _ = at_R(ev, R)
        best_b = min(d * R + t for d, t, _ in ev["base"].values())
        gains.append(1 - ours / best_b)
    return float(R_grid[int(np.argmax(gains))])


def setting_rows(inst, ev: dict, R: float, sim: bool = True) -> list[dict]:
    """All bars at R: cost = R d_eff + transmission, both from the independent checker."""
    _, i = at_R(ev, R)
    cand = ev["cands"][ev["line_cand"][i]]
    st, m = our_strategy(inst, ev, i)
    rows = [{"method": "ours", "family": cand.family, "d": m["d"],
             "cost": R * m["d"] + m["transmission_time"],
             "sim": R * m["d"] + simulate(inst, st)["transmission"] if sim else np.nan}]
    for name, (d, t, st) in ev["base"].items():
        rows.append({"method": name, "family": name, "d": d, "cost": d * R + t,
                     "sim": d * R + simulate(inst, st)["transmission"] if sim else np.nan})
    return rows


def _grid(configs, seeds, sim, restarts: int = RESTARTS) -> pd.DataFrame:
    recs = []
    for n, k, wl, size in configs:
        for seed in (seeds if wl != "uniform" else [0]):
            inst = generate(wl, n=n, k=k, R=0.0, size_mb=size, seed=seed)
            ev = evaluate(inst, restarts)
            R = best_R(ev)
            for row in setting_rows(inst, ev, R, sim):
                recs.append(dict(n=n, k=k, workload=wl, size_mb=size, seed=seed, R=R, **row))
    return pd.DataFrame(recs)


def _summary(df: pd.DataFrame, keys) -> pd.DataFrame:
    out = []
    for key, g in df.groupby(list(keys) + ["seed"]):
        ours = g[g.method == "ours"].iloc[0]
        b = g[g.method != "ours"]
        bb = b.loc[b.cost.idxmin()]
        bs = b.loc[b.sim.idxmin()] if b.sim.notna().all() else bb
        out.append(dict(zip(list(keys) + ["seed"], key), R_star=ours.R, ours_d=int(ours.d),
                        ours_family=ours.family, ours_ms=1e3 * ours.cost, best_baseline=bb.method,
                        best_baseline_ms=1e3 * bb.cost, reduction=1 - ours.cost / bb.cost,
                        sim_reduction=1 - ours.sim / bs.sim))
    s = pd.DataFrame(out)
    return s.groupby(list(keys)).agg(
        R_star=("R_star", "median"), ours_d=("ours_d", "median"), ours_family=("ours_family", "first"),
        ours_ms=("ours_ms", "mean"), best_baseline=("best_baseline", "first"),
        best_baseline_ms=("best_baseline_ms", "mean"), reduction=("reduction", "mean"),
        sim_reduction=("sim_reduction", "mean")).reset_index()


def _breakdown(summ: pd.DataFrame, key: str) -> str:
    """'value: analytic% / sim%' averages of the reductions per value of ``key``."""
    return ", ".join(f"{key}={v}: {100 * g.reduction.mean():.1f}% / {100 * g.sim_reduction.mean():.1f}%"
                     for v, g in summ.groupby(key))


def _claim(summ: pd.DataFrame, paper_avg: str) -> pd.DataFrame:
    """The paper's average reduction beside ours (analytic and chunk-sim), from ``summ``."""
    return pd.DataFrame([("average reduction vs the best baseline at R*", paper_avg,
                          f"{100 * summ.reduction.mean():.2f}%",
                          f"{100 * summ.sim_reduction.mean():.2f}%")],
                        columns=["quantity", "paper", "ours (analytic)", "ours (chunk-sim)"])


def _report(out_dir, fig, title, quick, summ, paper_avg, notes, seeds, tables):
    """Write a2a_<fig>.md (its claim table first) and the CSVs; the claim is the headline."""
    claim = _claim(summ, paper_avg)
    md = [f"# {title}", "", f"Regenerate: `{reproduce_cmd(f'a2a-{fig}', quick, out_dir)}` "
          f"({'quick' if quick else 'full'} run, seeds {list(seeds)} for Random/Zipf). "
          f"Machine: {machine()}.", "", *([QUICK_NOTE] if quick else []),
          __doc__.split("\n\n")[1].replace("\n", " "), "",
          md_table(claim), "", md_table(summ), ""] + notes
    return write_report(out_dir, f"a2a_{fig}", md, tables, headline(
        f"{title}, seeds {list(seeds)} (paper: its text on {fig.replace('fig', 'Fig. ')})",
        claim))


def run_fig11(quick: bool = False, out_dir: Path = Path("results/a2a")) -> list[Path]:
    seeds = [0] if quick else [0, 1, 2]
    configs = [(n, k, wl, 32.0) for n in (8, 16, 32, 64) for k in (1, 2) for wl in WORKLOADS]
    df = _grid(configs, seeds, sim=True, restarts=0 if quick else RESTARTS)
    summ = _summary(df, ["n", "k", "workload"])
    wins = summ[(summ.reduction < 0) | (summ.sim_reduction < 0)]
    close = summ.loc[summ.sim_reduction.idxmin()]
    fast = df[(df.method == "fast") & (df.n == 8) & (df.k == 2) & (df.workload != "uniform")]
    notes = ["Paper's named exceptions: MixNet beats ours at (n=64, k=2, Zipf); FAST at (n=8, k=2, "
             f"Zipf). Settings where a baseline beats ours here (analytic or chunk-sim): "
             f"{', '.join(f'({r.n},{r.k},{r.workload}: {r.best_baseline})' for r in wins.itertuples()) or 'none'}; "
             f"the smallest chunk-sim reduction is {100 * close.sim_reduction:.1f}% at "
             f"(n={close.n}, k={close.k}, {close.workload}).", "",
             "Average reduction (analytic / chunk-sim) by workload: " + _breakdown(summ, "workload") +
             "; by k: " + _breakdown(summ, "k") + "; by n: " + _breakdown(summ, "n") + ".", "",
             f"FAST configurations at n=8, k=2 on Random/Zipf: {int(fast.d.min())}-{int(fast.d.max())} "
             f"(ceil((n-1)/k) = 4).", "", "All bars per setting are in a2a_fig11.csv (column `cost` analytic, `sim` simulated; "
             "seconds). Differences from the paper: htsim is replaced by the spec 5.4 chunk simulator, "
             "the baselines are the spec 4.2 reconstructions, R* comes from our R grid, and the "
             "reduction is averaged over our seeds; the paper's bar heights are not given in the text.", ""]
    return _report(out_dir, "fig11", "a2a Fig. 11: completion time across n, k and workloads "
                   "(32 MB flows)", quick, summ, "39.66%", notes, seeds,
                   {"a2a_fig11.csv": df, "a2a_fig11_summary.csv": summ})


def run_fig12(quick: bool = False, out_dir: Path = Path("results/a2a")) -> list[Path]:
    seeds = [0] if quick else [0, 1, 2]
    configs = [(16, k, wl, s) for k in (1, 2) for wl in WORKLOADS for s in (8.0, 16.0, 32.0, 64.0)]
    df = _grid(configs, seeds, sim=True, restarts=0 if quick else RESTARTS)
    summ = _summary(df, ["k", "workload", "size_mb"])
    trend = "; ".join(
        f"k={k} {wl}: " + " -> ".join(f"{100 * r.sim_reduction:.1f}%" for r in g.sort_values("size_mb").itertuples())
        for (k, wl), g in summ.groupby(["k", "workload"]))
    notes = ["Paper: \"the improvement persists as flows grow\". Per-size averages here (analytic / "
             "chunk-sim): " + _breakdown(summ, "size_mb") + ". The analytic reduction is nearly "
             "size-invariant by construction: with alpha negligible every method's transmission time "
             "scales with the flow size and R* scales with it, so the ratio barely moves; only the "
             "chunk-sim reduction can show a size trend. "
             "Chunk-sim reduction from 8 to 64 MB per (k, workload): " + trend + ".", "",
             "Bars in a2a_fig12.csv.", ""]
    return _report(out_dir, "fig12", "a2a Fig. 12: completion time across flow sizes (n = 16)",
                   quick, summ, "47.35%", notes, seeds,
                   {"a2a_fig12.csv": df, "a2a_fig12_summary.csv": summ})


def run_fig14(quick: bool = False, out_dir: Path = Path("results/a2a")) -> list[Path]:
    panels = [(64, 128.0), (64, 64.0), (16, 128.0)]
    Rs = np.r_[0.0, np.logspace(-7, -1, 13 if quick else 25)]
    recs = []
    for n, size in panels:
        for k in (1, 2):
            inst = generate("random", n=n, k=k, R=0.0, size_mb=size, seed=0)
            ev = evaluate(inst, 0 if quick else RESTARTS)
            checked = {}
            for R in Rs:
                _, i = at_R(ev, R)
                if i not in checked:
                    checked[i] = our_strategy(inst, ev, i)[1]
                m = checked[i]
                recs.append(dict(n=n, size_mb=size, k=k, R=R, method="ours", d=m["d"],
                                 family=ev["cands"][ev["line_cand"][i]].family,
                                 cost=R * m["d"] + m["transmission_time"]))
                for name, (d, t, _) in ev["base"].items():
                    recs.append(dict(n=n, size_mb=size, k=k, R=R, method=name, d=d, family=name,
                                     cost=d * R + t))
    df = pd.DataFrame(recs)
    ours = df[df.method == "ours"]
    mono = all((g.sort_values("R").d.diff().fillna(0) <= 0).all()
               for _, g in ours.groupby(["n", "size_mb", "k"]))
    piv = ours.pivot_table(index="R", columns=["n", "size_mb", "k"], values="d").reset_index()
    piv.columns = ["R"] + [f"d(n={a},{b:g}MB,k={c})" for a, b, c in piv.columns[1:]]
    static_at = {}
    for key, g in ours.groupby(["n", "size_mb", "k"]):
        s = g[g.d == 1].R
        static_at[key] = float(s.min()) if len(s) else np.inf
    notes = [f"Chosen d is non-increasing in R in every panel: {mono} (paper: \"as R increases, the "
             "selected d decreases\").",
             "Smallest R on the grid where d = 1 (static) is chosen: " +
             "; ".join(f"n={a}, {b:g} MB, k={c}: {v:.2g} s" for (a, b, c), v in static_at.items()) +
             " (paper: the transition to static happens earlier for k = 2, and earlier for smaller "
             "flows and smaller n).", "",
             "Analytic costs only (the chunk-sim re-timing is in Figs. 11/12). Every strategy of ours "
             "chosen on the R grid is built and verified by the independent checker, and its d (d_eff) "
             "and cost are the checker's; the baselines are verified once. All methods and R in "
             "a2a_fig14.csv, plot a2a_fig14.png.", ""]
    claims = pd.DataFrame(
        [("chosen d non-increasing in R, every panel", "\"as R increases, the selected d "
          "decreases\"", str(mono))] +
        [(f"smallest R choosing d = 1 (static), n={a}, {b:g} MB, k={c}", "earlier for k = 2, "
          "smaller flows, smaller n", f"{v:.2g} s") for (a, b, c), v in static_at.items()],
        columns=["claim", "paper", "ours"])
    md = ["# a2a Fig. 14: chosen d and completion time vs R (Random workload)", "",
          f"Regenerate: `{reproduce_cmd('a2a-fig14', quick, out_dir)}` "
          f"({'quick' if quick else 'full'} run). Machine: {machine()}.", "",
          *([QUICK_NOTE] if quick else []), md_table(piv), ""] + notes
    report = write_report(out_dir, "a2a_fig14", md, {"a2a_fig14.csv": df}, headline(
        "a2a Fig. 14: chosen d vs the reconfiguration delay R, Random workload (paper: its "
        "text on Fig. 14)", claims))
    report.append(_plot14(df, out_dir))
    return report


def _plot14(df, out_dir: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = sorted({(n, s) for n, s in zip(df.n, df.size_mb)}, key=lambda x: (-x[0], -x[1]))
    fig, ax = plt.subplots(2, len(keys), figsize=(5 * len(keys), 8), squeeze=False)
    for j, (n, s) in enumerate(keys):
        for i, k in enumerate((1, 2)):
            g = df[(df.n == n) & (df.size_mb == s) & (df.k == k) & (df.R > 0)]
            for m, gm in g.groupby("method"):
                ax[i, j].plot(gm.R, gm.cost, label=m, lw=2.5 if m == "ours" else 1)
            o = g[g.method == "ours"]
            for r in o.itertuples():
                ax[i, j].annotate(str(r.d), (r.R, r.cost), fontsize=7)
            ax[i, j].set_xscale("log"); ax[i, j].set_yscale("log")
            ax[i, j].set_title(f"n={n}, {s:g} MB, k={k}"); ax[i, j].set_xlabel("R (s)")
    ax[0, 0].legend(fontsize=7)
    fig.tight_layout()
    path = out_dir / "a2a_fig14.png"
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path
