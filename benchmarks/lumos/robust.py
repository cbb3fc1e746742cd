"""LumosCore [002] appendix A.10 and §6.5 from the cluster simulator (issue 31): routing
algorithms (Fig. 25), workload levels (Fig. 23) and GPU failures (Fig. 8(d)), all in a 4K
cluster under probing routing unless the figure varies it.

* ``run_fig25``: Avg.JCT of the LumosCore and Clos variants under probing ([002]'s
  default), ECMP and the contention-free optimum. Paper (text of A.10): "under the same
  switch hardware, LumosCore consistently outperforms Clos networks"; "LumosCore (25.6T,
  tau=1) performs poorly in ECMP routing".
* ``run_fig23``: Avg.JCT vs workload level ([002] eq. 9; default 0.655). Paper: "LumosCore
  consistently outperforms Clos networks under the same conditions ... as the workload
  level increases, the improvement in Avg.JCT for LumosCore becomes more pronounced".
* ``run_fig8d``: Avg.JCT vs the share of GPUs failed (``heuristics.lumos.sim.failures``).
  Paper (§6.5): "varying failure rates do not affect the aforementioned performance
  analysis" (the architectures keep their order).

The figures' plotted values are not in the paper's text (its figures are images we cannot
read): each report compares with the sentences above, i.e. signs and orders, not numbers.
Runs are cached as in ``benchmarks.lumos.jct`` (resume); the OCS algorithms' time is not
charged (alg_time none: deterministic). Run: python solve.py reproduce
lumos-fig25|lumos-fig23|lumos-fig8d [--quick]
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from benchmarks.common import headline, machine, md_table, reproduce_cmd, write_report
from benchmarks.lumos.jct import simulate

GPUS = 4096
ARCHS = ("best", "lumos-51.2T-tau2", "lumos-25.6T-tau1", "clos-51.2T-3tier", "clos-25.6T-3tier")
SAME_CHIP = (("lumos-25.6T-tau1", "clos-25.6T-3tier"), ("lumos-51.2T-tau2", "clos-51.2T-3tier"))


def run_size(quick: bool) -> tuple[int, tuple[int, ...]]:
    """(jobs per run, seeds): quick 300 jobs, seed 0; full 1,000 jobs, seeds 0 and 1."""
    return (300, (0,)) if quick else (1000, (0, 1))


def arch_table(df: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Avg.JCT / JRT / JWT, mean CL and jobs per group and architecture."""
    t = df.groupby(by + ["arch"]).agg(avg_jct_s=("jct_s", "mean"), avg_jrt_s=("jrt_s", "mean"),
                                      avg_jwt_s=("jwt_s", "mean"), cl_ar=("cl_ar", "mean"),
                                      jobs=("job", "size")).reset_index()
    return t


def same_chip_gaps(df: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Per group, seed and same-chip pair: LumosCore's Avg.JCT vs the Clos's (%), min and
    max over the seeds."""
    per = df.groupby(by + ["seed", "arch"]).jct_s.mean()
    rows = []
    levels = list(range(len(by)))
    for key, g in per.groupby(level=levels if len(by) > 1 else 0):   # a scalar key for one
        g = g.droplevel(levels)
        key = key if isinstance(key, tuple) else (key,)
        for a, b in SAME_CHIP:
            try:
                d = 100 * (g.xs(a, level="arch") / g.xs(b, level="arch") - 1)
            except KeyError:
                continue
            rows.append({**dict(zip(by, key)), "pair": f"{a} vs {b}", "seeds": len(d),
                         "jct_gap_min_pct": d.min(), "jct_gap_max_pct": d.max()})
    return pd.DataFrame(rows)


def runs_dir(out_dir: Path, name: str, quick: bool) -> Path:
    return out_dir / "lumos_runs" / (name + ("_quick" if quick else ""))


def _report(out_dir, name, quick, title, intro, df, by, claims):
    """The report of one sweep: per-architecture table and the same-chip gaps."""
    tab, gaps = arch_table(df, by), same_chip_gaps(df, by)
    cmd = reproduce_cmd(name.replace("_", "-"), quick, out_dir)
    md = [f"# {title}", "", f"Regenerate: `{cmd}` ({'quick' if quick else 'full'} run; "
          f"resumable, runs in `{runs_dir(out_dir, name, quick)}`). Machine: {machine()}.", "",
          *intro, "", md_table(tab, ".5g"), "",
          "LumosCore vs the Clos of the same switching chip, Avg.JCT gap per seed (%):", "",
          md_table(gaps, ".3g"), ""]
    return write_report(out_dir, name, md, {f"{name}.csv": tab, f"{name}_gaps.csv": gaps},
                        headline(title, claims(gaps)))


def _order_claim(gaps: pd.DataFrame, by: str, paper: str) -> pd.DataFrame:
    rows = [(f"{r.pair} at {by} {getattr(r, by)}", paper,
             f"{r.jct_gap_min_pct:+.2f}..{r.jct_gap_max_pct:+.2f}%") for r in gaps.itertuples()]
    return pd.DataFrame(rows, columns=["claim", "paper", "ours (Avg.JCT gap, seeds)"])


def simulate_all(out_dir: Path, name: str, quick: bool, todo: list) -> pd.DataFrame:
    """Simulate every (tags, simulate() keywords, seed, arch) of ``todo`` at 4K and 0.655
    unless the keywords say otherwise (cached in the target's runs folder); the job rows
    of all runs, each with its tags as columns."""
    from toolkit.progress import track

    n_jobs, _ = run_size(quick)
    runs = runs_dir(out_dir, name, quick)
    frames = [simulate(a, GPUS, None, n_jobs, kw.pop("rho", 0.655), s, kw.pop("runs", runs),
                       alg_time="none", **kw).assign(**tags)
              for tags, kw, s, a in track([(t, dict(kw), s, a) for t, kw, s, a in todo])]
    return pd.concat(frames, ignore_index=True)


def _sweep(out_dir: Path, name: str, quick: bool, by: str, todo: list, title: str,
           intro: str, paper: str) -> list[Path]:
    """``simulate_all`` over (value of ``by``, keywords, seed, arch), then the report."""
    df = simulate_all(out_dir, name, quick, [({by: v}, kw, s, a) for v, kw, s, a in todo])
    return _report(out_dir, name, quick, title, [intro], df, [by],
                   lambda g: _order_claim(g, by, paper))


def run_fig25(quick: bool = False, out_dir: Path = Path("results/lumos")) -> list[Path]:
    n_jobs, seeds = run_size(quick)
    todo = [(r, {"routing": r}, s, a) for s in seeds for r in ("probing", "ecmp", "optimal")
            for a in ARCHS if not (a == "best" and r != "probing")]
    return _sweep(out_dir, "lumos_fig25", quick, "routing", todo,
                  "LumosCore vs Clos under three routings ([002] Fig. 25, 4K)",
                  f"{n_jobs} Helios-style jobs per run at workload level 0.655, {GPUS} GPUs, "
                  f"seeds {list(seeds)}; Best (no network) once. Routings: probing (up to 5 "
                  "rehashed paths, the widest kept), ECMP (one hashed path; polarized on the "
                  "Clos), optimal (every flow at its NIC share; "
                  "`heuristics/lumos/sim/routing.py`).", "LumosCore better (same chip)")


def run_fig23(quick: bool = False, out_dir: Path = Path("results/lumos")) -> list[Path]:
    n_jobs, seeds = run_size(quick)
    levels = (0.5, 0.655, 0.8) if quick else (0.4, 0.5, 0.655, 0.8, 0.9)
    runs = runs_dir(out_dir, "lumos_fig23", quick)
    todo = [(rho, {"rho": rho, "routing": "probing", "runs": runs / f"rho{rho:g}"}, s, a)
            for rho in levels for s in seeds for a in ARCHS]
    return _sweep(out_dir, "lumos_fig23", quick, "rho", todo,
                  "LumosCore vs Clos vs workload level ([002] Fig. 23, 4K)",
                  f"{n_jobs} Helios-style jobs per run, {GPUS} GPUs, probing routing, seeds "
                  f"{list(seeds)}; workload level rho = {list(levels)} ([002] eq. 9: the "
                  "arrival rate is set so that sum_k k lambda_k T_k / GPUs = rho).",
                  "LumosCore better, more so at higher load")


def run_fig8d(quick: bool = False, out_dir: Path = Path("results/lumos")) -> list[Path]:
    n_jobs, seeds = run_size(quick)
    rates = (0.0, 0.01, 0.02) if quick else (0.0, 0.005, 0.01, 0.02, 0.04)
    todo = [(f, {"routing": "probing", "fail_rate": f}, s, a)
            for f in rates for s in seeds for a in ARCHS]
    return _sweep(out_dir, "lumos_fig8d", quick, "fail_rate", todo,
                  "GPU failure tolerance ([002] Fig. 8(d), 4K)",
                  f"{n_jobs} Helios-style jobs per run at workload level 0.655, {GPUS} GPUs, "
                  f"probing routing, seeds {list(seeds)}; GPU failures at steady-state down "
                  f"share {list(rates)} (80 % soft, back after 10 min; 20 % hard, back after a "
                  "day; a failed GPU leaves the placement pool, its job runs on: "
                  "`heuristics/lumos/sim/failures.py`), the failure seed = the job seed, so "
                  "every architecture sees the same failures.",
                  "the order of the architectures holds")
