"""DELTA Figs. 6 and 8 on the imported SimAI/AICB workloads, at the paper's scale (issue 31).

The workloads, conversions and methods are benchmarks/delta/simai_runs.py's; the sweeps are
Figs. 6 (inter-Pod bandwidth) and 8 (sequence length) of benchmarks/delta/figs.py. A full run
is the paper's scale (Sec. V-A): micro-batches = the conversion's default (the header's GA,
else 8 x PP) and 600 s per solver run; ``--quick`` uses N = PP and 60 s.

Resumable, in three phases through the batch runner: the cheap methods (three baselines,
DELTA-Fast) on every point, then DELTA-Joint-HotStart (the paper's DELTA-Joint, hot-started)
on every point, then DELTA-Topo; the points in x-major order over the workloads, so that a
run stopped early has covered every workload. [D] The instance files are rewritten on every call (a conversion change
changes their content and so their run keys: no run of an older conversion is reported);
the report takes the rows whose run keys are this plan's and says how many of the plan's
runs it holds (a partial run is reported as such, with the command that completes it).

Beside each NCT cut the report puts the iteration-time cut of the same run: NCT counts only
the inter-Pod communication on the ideal critical path, so it magnifies the difference.

Run: python solve.py reproduce delta-fig6-simai|delta-fig8-simai [--quick]. Writes
results/delta/delta_<fig>_simai.{md,csv,png}; raw runs in results/delta/delta_runs/<fig>_simai.csv.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.common import headline, machine, md_table, reproduce_cmd, runs_solvers, write_report
from benchmarks.delta.report import hotstart_check, lines_plot
from benchmarks.delta.rescore import rescore_nct
from benchmarks.delta.simai_runs import SIMAI, SIMAI_METHODS, fig_workloads, simai_instance
from instances import save_instance
from toolkit.batch import run_batch
from toolkit.records_csv import RETRY_STATUSES
from toolkit.registry import problem
from toolkit.run_keys import file_digest, run_key

BASELINES = SIMAI_METHODS[:3]
CHEAP = (*BASELINES, "delta-fast")
PHASES = (CHEAP, ("delta-joint-hotstart",), ("delta-topo",))
VARIANTS = ("delta-fast", "delta-joint-hotstart", "delta-topo")
# [D] the paper's Table I workload of the same architecture (GPT-3 175B: 96 layers, hidden
# 12288; the paper's runs TP 8, PP 6, DP 8, 48 micro-batches; ours TP 8, PP 8, DP 2, 64)
NEAREST = {"simai-gpt175b": "megatron-177b"}


def plan_files(fig: str, quick: bool, out_dir: Path) -> tuple[list[Path], Path]:
    """The sweep's instance files (rewritten), in x-major order, and the runs CSV."""
    from benchmarks.delta.figs import FIGS

    spec, tag = FIGS[fig], f"{fig}_quick" if quick else fig
    inst_dir = out_dir / "delta_runs" / f"{tag}_simai"
    inst_dir.mkdir(parents=True, exist_ok=True)
    files = []
    for v in spec["values"]:
        for w in fig_workloads(spec["param"]):
            f = inst_dir / f"{w}_{v}.json"
            save_instance(simai_instance(w, quick, f"{w}-{v}", **{spec["param"]: v}), f)
            files.append(f)
    return files, out_dir / "delta_runs" / f"{tag}_simai.csv"


def plan_keys(files, cfg, runs: Path) -> dict:
    """{run_key: (file, method)} of every task of the plan (toolkit.run_keys)."""
    methods = problem("delta").methods
    keys = {}
    for f in files:
        digest = file_digest(f)
        for m in SIMAI_METHODS:
            declared = {o.name for o in methods[m].options}
            keys[run_key(f, digest, m, cfg, runs.resolve().parent, declared)["run_key"]] = (f, m)
    return keys


def run_simai_fig(fig: str, quick: bool, out_dir: Path, run: bool = True):
    """Run (``run``) what the plan still lacks, then write the report from the plan's rows."""
    from benchmarks.delta.figs import FIGS, _cfg

    spec = FIGS[fig]
    files, runs = plan_files(fig, quick, out_dir)
    if run:
        for phase in PHASES:        # each phase with the options its methods declare
            run_batch(files, list(phase), _cfg(quick, phase), runs, progress=True)
    keys = plan_keys(files, _cfg(quick, SIMAI_METHODS), runs)
    df = pd.read_csv(runs) if runs.exists() else pd.DataFrame(columns=["run_key", "status"])
    df = df[df["run_key"].isin(keys) & ~df["status"].isin(RETRY_STATUSES)]   # a retried run: not done
    df = df.drop_duplicates("run_key", keep="last")
    points = pd.MultiIndex.from_product([list(fig_workloads(spec["param"])), list(spec["values"])],
                                        names=["model", "x"])
    nct = pd.DataFrame(np.nan, index=points, columns=list(SIMAI_METHODS))
    it = nct.copy()
    if len(df):
        df = rescore_nct(df, runs.parent)
        df["model"] = df["name"].str.rsplit("-", n=1).str[0]
        df["x"] = df["name"].str.rsplit("-", n=1).str[1].astype(int)
        for frame, col in ((nct, "nct"), (it, "iteration_time")):
            frame.update(df.pivot_table(index=["model", "x"], columns="method", values=col))
    table = cut_table(nct, it)
    summary = summary_table(table, spec)
    done = len(df)
    full_word = "quick" if quick else "full"
    state = (f"complete: all {len(keys)} runs of the plan" if done == len(keys) else
             f"PARTIAL: {done} of the plan's {len(keys)} runs done ({progress_text(nct, df)}); "
             "the others are not run yet (rerun the command to complete it; done runs are kept)")
    cmd = reproduce_cmd(f"delta-{fig}-simai", quick, out_dir)
    png = out_dir / f"delta_{fig}_simai.png"
    lines_plot(nct.reset_index(), "x", SIMAI_METHODS, spec["label"], "NCT", png)
    title = f"DELTA {fig.replace('fig', 'Fig. ')} on the imported SimAI/AICB workloads: NCT vs {spec['label']}"
    per_method = df.groupby("method")["status"].agg(lambda s: ", ".join(
        f"{k} {v}" for k, v in s.value_counts().items())) if done else pd.Series(dtype=str)
    md = [f"# {title}", "",
          f"Regenerate: `{cmd}` (resumable; raw runs in `{runs.as_posix()}`). Run: **{full_word}**, "
          f"{state}. Machine: {machine()}. Raw runs' solvers: {runs_solvers(df)}.", "",
          _setup(quick, spec["param"]), "",
          "## Maximum NCT cut over the best baseline, and the iteration-time cut of the same run", "",
          "Per workload: the point (x) and DELTA variant with the largest NCT cut against the best "
          "of the three baselines at that x; `iteration_time_cut` is the same run's iteration "
          "time against the best baseline's (NCT counts only the inter-Pod communication on the "
          "ideal critical path, so it magnifies the cut). `ceiling` = 1 - 1/NCT of the best "
          "baseline at that x (a topology as good as the ideal network). The paper reports "
          "DELTA-Joint's maxima for its four Table I workloads only: beside GPT-175B its "
          "Megatron-177B (the same architecture; TP 8, PP 6, DP 8, 48 micro-batches there), "
          "beside the others the range over the four. The paper gives no iteration times. "
          "`runs` = the workload's runs done of the plan's.", "",
          md_table(summary), "",
          "## NCT cut and iteration-time cut per workload, x and DELTA variant", "",
          "`-`: not run yet (a partial run) or no solution.", "",
          md_table(table, ".4g"), "",
          *(hotstart_check(df, 60 if quick else 600) if done else []),
          "Solver statuses: " + "; ".join(f"{m}: {s}" for m, s in per_method.items()) + ".", ""]
    return _write(out_dir, fig, md, table, summary, png, title)


def progress_text(nct: pd.DataFrame, df: pd.DataFrame) -> str:
    """Runs done per method, and the run time the missing ones need: each timed as the
    median of the done runs of its workload and method, else of its method (a time-capped
    MILP takes its cap)."""
    done = nct.notna()
    per = ", ".join(f"{m} {int(done[m].sum())}/{len(done)}" for m in SIMAI_METHODS)
    med = df.groupby(["model", "method"])["runtime_s"].median() if len(df) else pd.Series(dtype=float)
    by_method = df.groupby("method")["runtime_s"].median() if len(df) else pd.Series(dtype=float)
    left, unknown = 0.0, 0
    for (model, _), row in done.iterrows():
        for m in SIMAI_METHODS:
            if not row[m]:
                t = med.get((model, m), by_method.get(m, np.nan))
                left, unknown = (left + t, unknown) if np.isfinite(t) else (left, unknown + 1)
    rest = f"; the missing ones need about {left / 3600:.1f} h of run time at this run's pace"
    return per + rest + (f" plus {unknown} not yet timed" if unknown else "")


def cut_table(nct: pd.DataFrame, it: pd.DataFrame) -> pd.DataFrame:
    """Per (workload, x): the NCTs, the best baseline, and per DELTA variant its NCT cut and
    its iteration-time cut against the best baseline (same run)."""
    t = nct.copy()
    t["best_baseline_nct"] = nct[list(BASELINES)].min(axis=1, skipna=False)
    best_it = it[list(BASELINES)].min(axis=1, skipna=False)
    for v in VARIANTS:
        t[f"{v}_nct_cut"] = 1 - nct[v] / t["best_baseline_nct"]
        t[f"{v}_time_cut"] = 1 - it[v] / best_it
    t["ceiling"] = 1 - 1 / t["best_baseline_nct"]
    return t.reset_index()


def summary_table(table: pd.DataFrame, spec: dict) -> pd.DataFrame:
    rows = []
    for model, t in table.groupby("model", sort=False):
        cuts = t[[f"{v}_nct_cut" for v in VARIANTS]]
        near = NEAREST.get(model)
        paper = f"{near}: {spec['paper'][near]}" if near else spec["range"]
        row = {"model": model, "paper (DELTA-Joint)": paper,
               "runs": f"{int(t[list(SIMAI_METHODS)].notna().sum().sum())}/{len(t) * len(SIMAI_METHODS)}"}
        if cuts.notna().any().any():
            i, col = np.unravel_index(np.nanargmax(cuts.to_numpy()), cuts.shape)
            v, r = VARIANTS[col], t.iloc[i]
            row.update(best_nct_cut=f"{100 * r[f'{v}_nct_cut']:.1f}% @ {r.x} ({v})",
                       iteration_time_cut=f"{100 * r[f'{v}_time_cut']:.2f}%",
                       ceiling=f"{100 * r.ceiling:.1f}%")
        else:
            row.update(best_nct_cut="-", iteration_time_cut="-", ceiling="-")
        for v in VARIANTS:
            c = t[f"{v}_nct_cut"]
            if c.notna().any():
                r = t.loc[c.idxmax()]
                row[v] = f"{100 * c.max():.1f}% / {100 * r[f'{v}_time_cut']:.2f}% @ {r.x}"
            else:
                row[v] = "-"
        rows.append(row)
    return pd.DataFrame(rows)


def _fig_note(param: str) -> str:
    return ("sequence length sizes only the P2P activations (2 x seq x hidden; the files' "
            "compute is traced at 2048), the MoE file's fixed pp_comm leaves it out"
            if param == "seq_len" else "the files' activations (traced at sequence 2048)")


def _setup(quick: bool, param: str) -> str:
    n = "N = PP micro-batches, 60 s per solver run" if quick else (
        "the paper's scale: N = the conversion's default (the header's GA, else 8 x PP) "
        "micro-batches, 600 s per solver run")
    return (f"Setup: {n}; workloads and conversions of benchmarks/delta/simai_runs.py "
            f"({', '.join(SIMAI)}; {_fig_note(param)}); methods: "
            f"{', '.join(SIMAI_METHODS)} (plain DELTA-Joint not run on them). Stage placement: "
            "embedding on the first stage, output layer and loss on the last (issue 31). NCT "
            "rescored from each run's iteration time (benchmarks/delta/rescore.py). The solver is "
            "HiGHS (1 thread) unless the model fits the size-limited Gurobi licence: the paper "
            "used Gurobi 13 with 4 threads. Per-variant columns of the summary: NCT cut / "
            "iteration-time cut @ x, at the variant's largest NCT cut.")


def _write(out_dir, fig, md, table, summary, png, title):
    report = write_report(out_dir, f"delta_{fig}_simai", md, {f"delta_{fig}_simai.csv": table},
                          headline(f"{title}: maximum NCT cut and the iteration-time cut of the "
                                   "same run", summary))
    report.append(png)
    return report


def run_fig6_simai(quick: bool = False, out_dir: Path = Path("results/delta")):
    return run_simai_fig("fig6", quick, out_dir)


def run_fig8_simai(quick: bool = False, out_dir: Path = Path("results/delta")):
    return run_simai_fig("fig8", quick, out_dir)
