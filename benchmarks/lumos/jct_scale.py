"""[002] Fig. 8(a)-(c) from the cluster simulator (target ``lumos-jct-scale``, issue 16).

``run_scale`` ([002] Fig. 8(a)-(c)): Avg.JCT and Avg.JRT of the LumosCore and Clos
variants and Best vs cluster size; workload level 0.655 ([002] §6.3), Helios-style jobs
(heuristics.lumos.sim.workload.helios_jobs); the OCS algorithm's time is not charged
(alg_time "none": deterministic). Paper: LumosCore(25.6T, tau=1) vs
Clos(25.6T, 3-tier) at 4K: Avg.JRT -5.06 %, Avg.JCT -16.1 %; up to -34.1 % Avg.JCT vs
Clos at 16K.

Routing: ECMP (pinned); ``run_scale_probing`` (``lumos-jct-scale-probing``) runs it under
probing into its own report. The simulations, their cache and the routing:
benchmarks.lumos.jct.

Run: python solve.py reproduce lumos-jct-scale[-probing] [--quick]
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from benchmarks.common import headline, main, md_table, write_report
from benchmarks.lumos.jct import (LARGE_ALPHA, at_size, report_start, routing_text, simulate,
                                  summary)

SCALE_ARCHS = ("best", "lumos-51.2T-tau2", "lumos-51.2T-tau1", "lumos-25.6T-tau1",
               "clos-51.2T-3tier", "clos-25.6T-3tier", "clos-25.6T-4tier")
PAPER_SCALE = {"4096 JRT vs clos-25.6T-3tier": -5.06, "4096 JCT vs clos-25.6T-3tier": -16.1,
               "16384 JCT vs Clos (best of)": -34.1}     # [002] Sec. 6, text on Fig. 8(a), (c)


def run_scale_probing(quick: bool = False, out_dir: Path = Path("results/lumos")) -> list[Path]:
    """``run_scale`` under probing routing ([002]'s default; issue 31), its own files."""
    return run_scale(quick, out_dir, routing="probing")


def run_scale(quick: bool = False, out_dir: Path = Path("results/lumos"), routing: str = "ecmp"
              ) -> list[Path]:
    from toolkit.progress import track

    sizes = (2048, 4096) if quick else (2048, 4096, 8192, 16384, 32768)
    n_jobs, rho, seeds = (1000, 0.655, (0, 1, 2)) if quick else (1000, 0.655, tuple(range(5)))
    sfx, note = routing_text(routing)
    runs_dir = out_dir / "lumos_runs" / ("jct_scale_quick" if quick else "jct_scale")
    frames = [simulate(a, g, None, n_jobs, rho, s, runs_dir, alg_time="none", routing=routing)
              for a, g, s in track([(a, g, s) for g in sizes for s in seeds for a in SCALE_ARCHS])]
    df = pd.concat(frames, ignore_index=True)
    summ = summary(df, ["gpus", "arch"])
    for col in ("avg_jct_s", "avg_jrt_s"):
        ref = summ[summ.arch == "clos-25.6T-3tier"].set_index("gpus")[col]
        summ[col.replace("avg_", "").replace("_s", "") + "_vs_clos25_3t_pct"] = \
            100 * (summ[col] / summ.gpus.map(ref) - 1)
    gaps = seed_gaps(df, PAIRS)
    large = () if quick or routing != "ecmp" else ((16384,), (0, 1, 2))
    if large:
        big = pd.concat([simulate(a, g, None, n_jobs, rho, s, runs_dir, alg_time="none",
                                  alpha=LARGE_ALPHA)
                         for a, g, s in track([(a, g, s) for g in large[0] for s in large[1]
                                               for a in SCALE_ARCHS])], ignore_index=True)
        big_summ = summary(big, ["gpus", "arch"])
        big_gaps = seed_gaps(big, PAIRS)
    png, head = report_start("lumos-jct-scale", "# LumosCore vs Clos: Avg.JCT and Avg.JRT vs "
                             "cluster size ([002] Fig. 8(a)-(c))", routing, quick, out_dir,
                             runs_dir, summ, "arch", SCALE_ARCHS)
    md = [*head, note + f"{n_jobs} Helios-style jobs per run, workload level {rho}, seeds {list(seeds)}; "
          "the same jobs on every architecture of a size. The OCS algorithms' time is not "
          "charged to the jobs ([002] does not say it is; `alg_time=none`), so every number "
          "here is independent of the machine and its load. Paper: " +
          "; ".join(f"{k}: {v} %" for k, v in PAPER_SCALE.items()) + ".", "",
          md_table(summ, ".4g"), "",
          "Gaps per seed (each seed its own job list; min / median / max over the seeds, in %): "
          "`a vs b` = Avg of a / Avg of b - 1.", "", md_table(gaps, ".3g"), ""]
    tables = {f"lumos_jct_scale{sfx}.csv": summ, f"lumos_jct_scale{sfx}_gaps.csv": gaps}
    if large:
        md += [f"## Larger jobs (job-size exponent alpha = {LARGE_ALPHA}: mean 128 GPUs; "
               f"{large[0][0]} GPUs, seeds {list(large[1])})", "",
               "With the default sizes (mean 36 GPUs) a 16K cluster never fills within 1,000 "
               "jobs (Best's Avg.JWT is 0), so JCT = JRT there; with larger jobs it does and "
               "queueing enters the JCT, the regime of [002]'s -34.1 %.", "",
               md_table(big_summ, ".4g"), "", md_table(big_gaps, ".3g"), ""]
        tables.update({"lumos_jct_scale_large.csv": big_summ,
                       "lumos_jct_scale_large_gaps.csv": big_gaps})
    report = write_report(out_dir, f"lumos_jct_scale{sfx}", md, tables, headline(
        f"LumosCore vs Clos, {n_jobs} jobs, seeds {list(seeds)}: Avg.JRT and Avg.JCT gaps (paper: "
        "[002] Sec. 6, its text on Fig. 8(a), (c))", scale_claims(summ)))
    report.append(png)
    return report


def scale_claims(summ: pd.DataFrame) -> pd.DataFrame:
    """[002]'s numbers (PAPER_SCALE) beside ours, from run_scale's per-size table."""
    rows = []
    for (what, col), key in zip((("Avg.JRT", "jrt_vs_clos25_3t_pct"),
                                 ("Avg.JCT", "jct_vs_clos25_3t_pct")), PAPER_SCALE):
        t, at = at_size(summ, 4096)
        v = t[t.arch == "lumos-25.6T-tau1"][col]
        rows.append((f"{what}, LumosCore(25.6T, tau=1) vs Clos(25.6T, 3-tier)", at,
                     f"{PAPER_SCALE[key]:+.2f}%", f"{v.iloc[0]:+.2f}%" if len(v) else "-"))
    t, at = at_size(summ, 16384)
    jct = t.set_index("arch").avg_jct_s
    pairs = [(a, b) for a in jct.index if a.startswith("lumos") for b in jct.index
             if b.startswith("clos")]
    a, b = min(pairs, key=lambda p: jct[p[0]] / jct[p[1]]) if pairs else ("-", "-")
    rows.append(("Avg.JCT, LumosCore vs Clos, largest reduction", at,
                 f"{PAPER_SCALE['16384 JCT vs Clos (best of)']:+.1f}%",
                 f"{100 * (jct[a] / jct[b] - 1):+.2f}% ({a} vs {b})" if pairs else "-"))
    return pd.DataFrame(rows, columns=["claim", "gpus", "paper", "ours"])


PAIRS = (("lumos-25.6T-tau1", "clos-25.6T-3tier"), ("lumos-25.6T-tau1", "clos-25.6T-4tier"),
         ("lumos-25.6T-tau1", "clos-51.2T-3tier"), ("lumos-51.2T-tau2", "clos-51.2T-3tier"),
         ("lumos-51.2T-tau2", "lumos-51.2T-tau1"), ("lumos-51.2T-tau2", "best"))


def seed_gaps(df: pd.DataFrame, pairs, key: str = "arch") -> pd.DataFrame:
    """Per (size, pair): min / median / max over seeds of Avg.JCT and Avg.JRT gaps (%)."""
    per = df.groupby(["gpus", "seed", key]).agg(jct=("jct_s", "mean"), jrt=("jrt_s", "mean"))
    rows = []
    for (g, a, b) in [(g, a, b) for g in sorted(df.gpus.unique()) for a, b in pairs]:
        try:
            x, y = per.xs((g, a), level=("gpus", key)), per.xs((g, b), level=("gpus", key))
        except KeyError:
            continue
        d = 100 * (x / y.reindex(x.index) - 1)
        rows.append(dict(gpus=g, pair=f"{a} vs {b}", seeds=len(d),
                         **{f"{m}_{f}": getattr(d[m], f)() for m in ("jct", "jrt")
                            for f in ("min", "median", "max")}))
    return pd.DataFrame(rows)


if __name__ == "__main__":
    main(run_scale, __doc__)
