"""LumosCore end-to-end job completion times from the cluster simulator (issue 16): the
simulations both JCT targets run (:func:`simulate`: checked, cached and resumed per run),
their cache files and per-architecture summaries. The targets: benchmarks.lumos.jct_scale
([002] Fig. 8, ``lumos-jct-scale``) and benchmarks.lumos.jct_ilp ([001] Fig. 8,
``lumos-jct-ilp``).

Routing: ECMP for both targets, the routing their committed results were made with (the
simulator's default became [002]'s probing in issue 31); ``run_scale_probing`` and
``run_ilp_probing`` (targets ``lumos-jct-scale-probing``, ``lumos-jct-ilp-probing``) run
them under probing into their own reports (``_probing``), their runs cached beside the ECMP
ones under their own names (``+probing``; ``simulate(..., routing=)``).

Every run is one (architecture, reconfiguration method, size, seed) simulation; its job
records go to ``<out>/lumos_runs/<target>/`` (``<out>``: results/, results/quick/ with
--quick) and a rerun skips the runs already there (resume). The same job list (same seed) runs on every architecture of one size.
"""
from __future__ import annotations

import time
from pathlib import Path

import pandas as pd

LARGE_ALPHA = 0.5      # larger jobs (mean 128 GPUs instead of 36) for the queueing regime


def simulate(arch: str, gpus: int, reconfig: str | None, n_jobs: int, rho: float, seed: int,
             out: Path, ilp_limit: float | None = None, alg_time: str = "measured",
             logical: str = "incremental", alpha: float = 1.0, routing: str = "ecmp",
             fail_rate: float = 0.0, layout: str = "server", rail_rule: str = "lane-pairs"
             ) -> pd.DataFrame:
    """One simulation, checked by ``instances.lumos.sim_check.check_sim`` and cached in
    ``out`` (resume): its job records (its reconfigurations beside them:
    ``reconfigurations(...)``). ``alpha``: the job-size exponent of
    ``helios_jobs`` (smaller = larger jobs); ``routing`` ecmp (default: the routing of every
    committed result before issue 31), probing or optimal; ``fail_rate``: GPU failures
    (``failures.FailureModel``, seed = ``seed``); ``layout``: server or rail (intra-Pod
    wiring, ``heuristics.lumos.sim.architectures``); ``rail_rule``: the rail layout's
    requirement rule, lane-pairs or leaf-pairs (``heuristics.lumos.requirement``)."""
    from heuristics.lumos.sim.architectures import make_arch
    from heuristics.lumos.sim.engine import Simulator
    from heuristics.lumos.sim.workload import helios_jobs
    from instances.lumos.sim import SimInstance, SimSolution
    from instances.lumos.sim_check import check_sim
    from toolkit.registry import RunConfig

    path = run_path(arch, gpus, reconfig, seed, out, logical, alpha, routing, fail_rate, layout,
                    rail_rule)
    if path.exists():
        return pd.read_csv(path)
    jobs = helios_jobs(n_jobs, gpus, rho, seed, alpha=alpha)
    cfg = RunConfig(backend="auto", time_limit=ilp_limit)
    if alg_time == "measured":  # the controller's timed calls leave out the one-time load (or,
        from heuristics.lumos.mdmcf.eject import preload      # in a fresh checkout, the ~30 s
        preload(lns=True)       # compile) of MDMCF's compiled code: a running controller is warm
    t0 = time.perf_counter()
    from heuristics.lumos.sim.failures import FailureModel

    fails = FailureModel(fail_rate, seed) if fail_rate else None
    res = Simulator(make_arch(arch, gpus, reconfig, cfg=cfg, logical=logical, layout=layout,
                              rail_rule=rail_rule),
                    alg_time=alg_time, routing=routing, failures=fails).run(jobs)
    bad, _ = check_sim(SimInstance(arch, gpus, jobs, layout=layout),
                       SimSolution(res.jobs.to_dict("records"), res.reconfigs.to_dict("records")))
    if bad:                 # the independent checker, before anything is cached
        raise AssertionError(f"{path.name}: {'; '.join(bad[:3])}")
    df = res.jobs.assign(arch=arch, reconfig=reconfig or "", gpus=gpus, seed=seed, rho=rho,
                         alpha=alpha, routing=routing, fail_rate=fail_rate, layout=layout,
                         rail_rule=rail_rule,
                         failures=res.stats["failures"],
                         sim_wall_s=time.perf_counter() - t0, rate_s=res.stats["rate_s"],
                         admit_s=res.stats["admit_s"], reconfigs=len(res.reconfigs))
    out.mkdir(parents=True, exist_ok=True)
    from toolkit.io import write_text_atomic
    write_text_atomic(path, df.to_csv(index=False))
    if len(res.reconfigs):
        write_text_atomic(path.with_suffix(".reconfigs.csv"), res.reconfigs.to_csv(index=False))
    return df


def run_path(arch: str, gpus: int, reconfig: str | None, seed: int, out: Path,
             logical: str = "incremental", alpha: float = 1.0, routing: str = "ecmp",
             fail_rate: float = 0.0, layout: str = "server", rail_rule: str = "lane-pairs"
             ) -> Path:
    """The cache file of one run; ECMP runs without failures in the server layout keep their
    pre-issue-31 names, runs under the default rail rule (lane-pairs) theirs before the rule
    could be chosen (the workload level is not in the name: a target that varies it uses
    one folder per level)."""
    tag = (("+" + reconfig if reconfig else "") + ("+full" if logical == "full" else "")
           + (f"+a{alpha:g}" if alpha != 1.0 else "")
           + (f"+{routing}" if routing != "ecmp" else "")
           + (f"+f{fail_rate:g}" if fail_rate else "")
           + (f"+{layout}" if layout != "server" else "")
           + (f"+{rail_rule}" if rail_rule != "lane-pairs" else ""))
    return out / f"{arch}{tag}_{gpus}_s{seed}.csv"


def reconfigurations(arch: str, gpus: int, reconfig: str | None, seed: int, out: Path,
                     logical: str = "incremental", alpha: float = 1.0, **tags) -> pd.DataFrame:
    """The OCS reconfigurations of a cached run (empty when it made none); ``tags``: the
    other keywords of ``run_path`` (routing, fail_rate, layout, rail_rule)."""
    path = run_path(arch, gpus, reconfig, seed, out, logical, alpha, **tags).with_suffix(
        ".reconfigs.csv")
    return pd.read_csv(path) if path.exists() else pd.DataFrame()


def summary(df: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    return df.groupby(by).agg(jobs=("job", "size"), avg_jct_s=("jct_s", "mean"),
                              avg_jrt_s=("jrt_s", "mean"), avg_jwt_s=("jwt_s", "mean"),
                              cl_ar=("cl_ar", "mean"), alg_s_mean=("alg_s", "mean"),
                              sim_wall_s=("sim_wall_s", "first")).reset_index()


def routing_text(routing: str) -> tuple[str, str]:
    """(file suffix, report sentence) of a JCT target run under ``routing``: ECMP keeps the
    pre-issue-31 names; any other routing adds ``_<routing>``."""
    if routing == "ecmp":
        return "", ("Routing: ecmp (pinned: the routing of every result of this target "
                    "before issue 31). ")
    return "_" + routing, (f"Routing: {routing} (the simulator's default since issue 31, as "
                           "[002] 6.2; the ECMP report beside it is the same target without "
                           "the suffix). ")


def report_start(target: str, title: str, routing: str, quick: bool, out_dir: Path,
                 runs_dir: Path, summ: pd.DataFrame, key: str, names) -> tuple[Path, list[str]]:
    """A JCT target's Avg.JCT-vs-GPUs plot (one line per ``key`` value in ``names``) and its
    report's opening lines (title with the routing, the command that regenerates it)."""
    from benchmarks.common import machine, reproduce_cmd
    from benchmarks.lumos.common import plot

    sfx, _ = routing_text(routing)
    cmd = reproduce_cmd(target + sfx.replace("_", "-"), quick, out_dir)
    png = plot(out_dir / f"{target.replace('-', '_')}{sfx}.png",
               {n: (summ[summ[key] == n].gpus, summ[summ[key] == n].avg_jct_s / 3600)
                for n in names}, "GPUs", "Avg.JCT (h)")
    return png, [title + (f", {routing} routing" if sfx else ""), "",
                 f"Regenerate: `{cmd}` (resumable; runs in `{runs_dir}`). Machine: {machine()}.",
                 ""]


def at_size(summ: pd.DataFrame, gpus: int) -> tuple[pd.DataFrame, str]:
    """The rows at ``gpus``, else at the largest size run (a quick run), and a label."""
    if (summ.gpus == gpus).any():
        return summ[summ.gpus == gpus], f"{gpus}"
    big = summ.gpus.max()
    return summ[summ.gpus == big], f"{big} (not {gpus}: not run)"
