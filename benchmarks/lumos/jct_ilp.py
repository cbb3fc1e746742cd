"""[001] Fig. 8 from the cluster simulator (target ``lumos-jct-ilp``, issue 16).

``run_ilp`` ([001] Fig. 8): ITV-MDMCF, ITV-MCF, ITV-ILP (Cross Wiring), Uniform-Greedy,
Uniform-ILP (Uniform wiring), Clos and Best at workload level 0.801 ([001] §6.3); the
OCS algorithm's measured time enters each job's waiting time. JRT slowdown = (JRT -
JRT_Best) / JRT_Best, JWT slowdown = JWT - JWT_Best, per job (spec 2.12). Paper: at 32K
ILP-based approaches +12.6 % Avg.JCT vs ITV-MDMCF; at 8K Uniform-Greedy +2.1 % average
JRT (worst 91.9 %), Clos +1.3 %.

Routing: ECMP (pinned); ``run_ilp_probing`` (``lumos-jct-ilp-probing``) runs it under
probing into its own report. The simulations, their cache and the routing:
benchmarks.lumos.jct.

Run: python solve.py reproduce lumos-jct-ilp[-probing] [--quick]
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.common import headline, md_table, write_report
from benchmarks.lumos.jct import (LARGE_ALPHA, at_size, reconfigurations, report_start,
                                  routing_text, simulate, summary)

ILP_RUNS = (("best", None), ("lumos-51.2T-tau1", "itv-mdmcf"), ("lumos-51.2T-tau1", "itv-mcf"),
            ("lumos-51.2T-tau1", "itv-ilp"), ("uniform-51.2T-tau1", "uniform-greedy"),
            ("uniform-51.2T-tau1", "uniform-ilp"), ("clos-51.2T-3tier", None))


def run_ilp_probing(quick: bool = False, out_dir: Path = Path("results/lumos")) -> list[Path]:
    """``run_ilp`` under probing routing ([001]'s setup, spec 5.3; issue 31), its own files."""
    return run_ilp(quick, out_dir, routing="probing")


def strategies(df: pd.DataFrame) -> np.ndarray:
    """A run's strategy: its reconfiguration method, else its architecture (Best, Clos).
    The cached CSVs read an empty method back as NaN."""
    rc = df.reconfig.fillna("").astype(str)
    return np.where(rc != "", rc, df.arch)


def slowdowns(df: pd.DataFrame) -> pd.DataFrame:
    """Per job: its strategy, JRT slowdown (JRT / JRT_Best - 1) and JWT slowdown (JWT -
    JWT_Best, s) against the same job on Best of the same size (spec 2.12)."""
    df = df.assign(strategy=strategies(df))
    best = df[df.arch == "best"].set_index(["gpus", "job"])
    key = pd.MultiIndex.from_frame(df[["gpus", "job"]])
    df["jrt_slowdown"] = df.jrt_s.to_numpy() / best.jrt_s.reindex(key).to_numpy() - 1
    df["jwt_slowdown_s"] = df.jwt_s.to_numpy() - best.jwt_s.reindex(key).to_numpy()
    return df


def _cdf_plot(path: Path, df: pd.DataFrame, gpus: int) -> Path:
    """[001] Fig. 8(a)-(b): CDFs of the per-job JRT and JWT slowdowns at one size."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    d = df[(df.gpus == gpus) & (df.arch != "best")]
    for st, g in d.groupby("strategy", sort=False):
        for ax, col in zip(axes, ("jrt_slowdown", "jwt_slowdown_s")):
            x = np.sort(g[col].to_numpy())
            ax.step(x, np.arange(1, len(x) + 1) / len(x), where="post", label=st)
    axes[0].set_xlabel(f"JRT slowdown at {gpus} GPUs")
    axes[1].set_xlabel(f"JWT slowdown (s) at {gpus} GPUs")
    for ax in axes:
        ax.set_ylabel("CDF of jobs")
        ax.grid(alpha=0.3)
    axes[1].set_xscale("symlog")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _quantiles(df: pd.DataFrame, gpus: int) -> pd.DataFrame:
    d = df[(df.gpus == gpus) & (df.arch != "best")]
    q = (0.5, 0.9, 0.99, 1.0)
    return pd.DataFrame([{"strategy": st, **{f"jrt_p{int(100 * x)}": g.jrt_slowdown.quantile(x)
                                             for x in q},
                          **{f"jwt_p{int(100 * x)}_s": g.jwt_slowdown_s.quantile(x) for x in q}}
                         for st, g in d.groupby("strategy", sort=False)])


def _ilp_table(df: pd.DataFrame, runs_dir: Path) -> pd.DataFrame:
    """Per (size, strategy): Avg.JCT/JRT/JWT, slowdowns per job against Best, and the
    controller's reconfigurations (count, median / max wall time, unmet links)."""
    df = slowdowns(df)
    summ = summary(df, ["gpus", "strategy"])
    sl = df.groupby(["gpus", "strategy"]).agg(
        jrt_slowdown_mean=("jrt_slowdown", "mean"), jrt_slowdown_max=("jrt_slowdown", "max"),
        jwt_slowdown_mean_s=("jwt_slowdown_s", "mean")).reset_index()
    summ = summ.merge(sl, on=["gpus", "strategy"])
    ref = summ[summ.strategy == "itv-mdmcf"].set_index("gpus").avg_jct_s
    summ["jct_vs_mdmcf_pct"] = 100 * (summ.avg_jct_s / summ.gpus.map(ref) - 1)
    rows = []
    for (g, st), d in df.groupby(["gpus", "strategy"]):
        r0 = d.iloc[0]
        rc = reconfigurations(r0.arch, g, r0.reconfig if isinstance(r0.reconfig, str) else None,
                              int(r0.seed), runs_dir, alpha=float(r0.get("alpha", 1.0)),
                              routing=r0.get("routing", "ecmp"))
        rows.append(dict(gpus=g, strategy=st, reconfigs=len(rc),
                         reconf_s_median=rc.wall_s.median() if len(rc) else 0.0,
                         reconf_s_max=rc.wall_s.max() if len(rc) else 0.0,
                         unmet_links=int(rc.shortfall.sum()) if len(rc) else 0))
    return summ.merge(pd.DataFrame(rows), on=["gpus", "strategy"]).drop(columns="alg_s_mean")


def run_ilp(quick: bool = False, out_dir: Path = Path("results/lumos"), routing: str = "ecmp"
            ) -> list[Path]:
    from toolkit.progress import track

    sizes = (2048, 4096) if quick else (2048, 4096, 8192, 16384, 32768)
    large = () if quick else (8192, 32768)
    n_jobs, rho, seed = 1000, 0.801, 0
    runs_dir = out_dir / "lumos_runs" / ("jct_ilp_quick" if quick else "jct_ilp")
    todo = [(g, ar, 1.0) for g in sizes for ar in ILP_RUNS] + \
        [(g, ar, LARGE_ALPHA) for g in large for ar in ILP_RUNS]
    frames = [simulate(a, g, r, n_jobs, rho, seed, runs_dir, ilp_limit=600.0, alpha=al,
                       routing=routing) for g, (a, r), al in track(todo)]
    df = pd.concat(frames, ignore_index=True)
    df["alpha"] = df.get("alpha", pd.Series(1.0, index=df.index)).fillna(1.0)
    summ = _ilp_table(df[df.alpha == 1.0], runs_dir)
    names = list(dict.fromkeys(summ.strategy))
    sfx, note = routing_text(routing)
    png, head = report_start("lumos-jct-ilp", "# OCS reconfiguration time in the job completion "
                             "time ([001] Fig. 8)", routing, quick, out_dir, runs_dir, summ,
                             "strategy", names)
    cdf_gpus = 4096 if quick else 8192
    per_job = slowdowns(df[df.alpha == 1.0])
    cdf = _cdf_plot(out_dir / f"lumos_jct_ilp{sfx}_cdf.png", per_job, cdf_gpus)
    md = [*head, note + f"{n_jobs} Helios-style jobs per run, workload level {rho}, seed {seed}; "
          "ITV-ILP and Uniform-ILP limited to 600 s per reconfiguration. The controller's measured time "
          "(requirement, logical topology, reconfiguration) delays each admitted job, and "
          "admissions queue for the one controller. Slowdowns are per job against the "
          "same job on Best; `reconfigs` counts the admissions that changed the OCSes "
          "(`reconf_s_*`: their wall time; `unmet_links`: logical links the method could "
          "not realize, summed over them). Paper: ILP-based +12.6 % Avg.JCT vs ITV-MDMCF at "
          "32K; Uniform-Greedy +2.1 % mean JRT slowdown (max 91.9 %) at 8K; Clos +1.3 %.", "",
          md_table(summ, ".4g"), "",
          f"## Slowdown distributions at {cdf_gpus} GPUs ([001] Fig. 8(a)-(b); CDFs in "
          f"`lumos_jct_ilp{sfx}_cdf.png`)", "",
          "Quantiles over the jobs of the per-job JRT slowdown (fraction) and JWT slowdown "
          "(s) against Best.", "", md_table(_quantiles(per_job, cdf_gpus), ".4g"), ""]
    tables = {f"lumos_jct_ilp{sfx}.csv": summ}
    if large:
        big = _ilp_table(df[df.alpha == LARGE_ALPHA], runs_dir)
        md += [f"## Larger jobs (job-size exponent alpha = {LARGE_ALPHA}: mean 128 GPUs)", "",
               "The same runs with `helios_jobs(alpha=0.5)`, where more admissions cross Pods "
               "and the cluster fills, so jobs queue (the regime where the controller's time "
               "could accumulate).", "", md_table(big, ".4g"), ""]
        tables[f"lumos_jct_ilp{sfx}_large.csv"] = big
    report = write_report(out_dir, f"lumos_jct_ilp{sfx}", md, tables, headline(
        f"OCS reconfiguration time in the JCT, {routing}, {n_jobs} jobs, seed {seed} "
        "(paper: [001] Sec. 6.3, its text on Fig. 8(a), (c))", ilp_claims(summ)))
    report.extend([png, cdf])
    return report


def ilp_claims(summ: pd.DataFrame) -> pd.DataFrame:
    """[001]'s numbers (Sec. 6.3, text on Fig. 8) beside ours, from run_ilp's table."""
    rows = []
    t, at = at_size(summ, 32768)
    for st in ("itv-ilp", "uniform-ilp"):
        v = t[t.strategy == st].jct_vs_mdmcf_pct
        rows.append((f"Avg.JCT of {st} vs itv-mdmcf", at, "+12.6% (ILP-based)",
                     f"{v.iloc[0]:+.2f}%" if len(v) else "-"))
    t, at = at_size(summ, 8192)
    for st, col, paper in (("uniform-greedy", "jrt_slowdown_mean", "2.1%"),
                           ("uniform-greedy", "jrt_slowdown_max", "91.9%"),
                           ("clos-51.2T-3tier", "jrt_slowdown_mean", "1.3%")):
        v = t[t.strategy == st][col]
        rows.append((f"{st} JRT slowdown, {col.split('_')[-1]}", at, paper,
                     f"{100 * v.iloc[0]:.1f}%" if len(v) else "-"))
    return pd.DataFrame(rows, columns=["claim", "gpus", "paper", "ours"])
