"""The ``lumos-sim`` problem type: a LumosCore cluster simulation as one solve (issue 16).

An instance (``instances.lumos.sim``) is an architecture and a job list; a method runs
the flow-level simulator (``heuristics.lumos.sim.engine``) with one OCS reconfiguration
strategy, so ``gap`` / ``batch`` compare strategies per instance ([001] Fig. 8):

* ``simulate`` (default): the architecture's own (ITV-MDMCF on ``lumos-*``, Cross
  Wiring; Uniform-Greedy on ``uniform-*``; none on ``best`` and Clos);
* ``sim-itv-mcf``, ``sim-itv-ilp`` (``lumos-*`` only); ``sim-uniform-ilp``, ``sim-helios``
  (``uniform-*`` only). The ILP ones are model methods.

[DECISION] One method per strategy rather than a ``reconfig`` option: a gap run compares
methods, and one option value holds for all methods of a run. Every reconfiguration
shares the run's budget (``--time-limit``; model methods: 600 s by default): each one's
lumos-reconfig method gets what is left (``RunConfig.solve_kw``), its per-group ILPs a
fair share of that. When an ILP stops before any incumbent (its share too short), the
reconfiguration falls back to the ILP's own MIP start method (ITV-MDMCF /
Uniform-Greedy), counted in ``ilp_fallbacks``. The simulation checks the budget at every
event: once it is spent the run stops with status ``time_limit_no_solution`` (a partial
simulation is no result; issue 28).

Option ``alg_time``: ``measured`` (default, [001]: the measured wall time of requirement,
logical topology and reconfiguration delays the job's start, so on OCS fabrics the times
vary by milliseconds between runs; never numba's compilation or cache loading: the
reconfiguration method's kernels are warmed before the clock, ``sim_kernels``) or ``none``
(no delay: the output depends on nothing but the instance). Option ``routing`` (issue 31):
``probing`` (default, [002] §6.2 "By default, we use probing-based routing"), ``ecmp`` (every
result before issue 31) or ``optimal`` (contention-free; ``heuristics.lumos.sim.routing``).
The instance's ``layout`` (``server`` or ``rail``) is the intra-Pod wiring of every method,
its ``rail_rule`` (rail layout, OCS fabrics) the leaf-level requirement's rule.
Objective: Avg.JCT (s, min),
with the analytic bound mean T (JCT >= JRT >= T, ``instances.lumos.sim_check``).
"""
from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from instances.errors import InstanceError
from instances.lumos.sim import GPUS_PER_SERVER, WORKLOAD_KINDS, SimInstance, SimSolution
from instances.lumos.sim_check import check_sim
from toolkit.options import Option
from toolkit.registry import lazy, option_or, Generator, Method, MethodOutput, Problem, RunConfig, \
    register_problem

make_arch = lazy("heuristics.lumos.sim.architectures", "make_arch")
Simulator = lazy("heuristics.lumos.sim.engine", "Simulator")

ALG_TIME = Option("alg_time", str, "measured", "OCS algorithm time before a job starts: measured "
                  "wall time ([001]) or none (clock-free output)", choices=("measured", "none"))
ROUTING = Option("routing", str, "probing", "flow routing: probing (up to 5 rehashed paths, the "
                 "widest kept; [002]'s default), ecmp (one hashed path) or optimal "
                 "(contention-free)", choices=("probing", "ecmp", "optimal"))
# method -> (reconfiguration, the wiring it needs or None, fallback for an ILP)
STRATEGIES = {"simulate": (None, None, None), "sim-itv-mcf": ("itv-mcf", "cross", None),
              "sim-itv-ilp": ("itv-ilp", "cross", "itv-mdmcf"),
              "sim-uniform-ilp": ("uniform-ilp", "uniform", "uniform-greedy"),
              "sim-helios": ("helios", "uniform", None)}
STAT_KEYS = ("rate_s", "route_s", "admit_s", "events", "rate_solves", "unroutable_max")


def reconfig_cfg(cfg: RunConfig, method: str) -> RunConfig:
    """The RunConfig every reconfiguration of the run gets: the run's solver settings,
    ``method``'s default options, and the run's own budget (so each solve's time limit is
    what is left of it)."""
    from toolkit.registry import problem

    m = problem("lumos-reconfig").methods[method]
    return replace(cfg, options={}, declared=m.options, options_shared=False,
                   budget=cfg.budget.sub() if cfg.budget is not None else None)


def sim_kernels(name: str):
    """The compiled kernel sets of a simulation: its reconfiguration method's and its
    fallback's (their default options), warmed before the run's clock so that no
    reconfiguration's measured algorithm time holds compilation (issue 28)."""
    method, _, fallback = STRATEGIES[name]

    def kernels(inst: SimInstance | None, cfg: RunConfig | None) -> tuple[str, ...]:
        from toolkit.registry import problem

        probe = ("lumos-probe",) if option_or(cfg, "routing", "probing") == "probing" else ()
        if inst is not None and not inst.is_ocs:
            return probe if inst.arch != "best" else ()
        reconfig = method or ("itv-mdmcf" if inst is None or inst.wiring == "cross"
                              else "uniform-greedy")
        methods = problem("lumos-reconfig").methods
        return tuple(dict.fromkeys([k for r in (reconfig, fallback) if r
                                    for k in methods[r].kernel_sets()] + list(probe)))
    return kernels


def applicable(method: str):
    wiring = STRATEGIES[method][1]

    def check(inst: SimInstance, cfg: RunConfig) -> str | None:
        if wiring and inst.wiring != wiring:
            return f"needs an architecture with {wiring} wiring ({'lumos-*' if wiring == 'cross' else 'uniform-*'}), not {inst.arch}"
        return None
    return check


def _solver(results: list, cfg: RunConfig, fallbacks: int, runtime: float):
    """One Result for the run's reconfiguration solves: status feasible (a simulation has
    no optimum), the backends used, the largest model's size; no bound (theirs bound the
    rewiring, not JCT)."""
    from models.backend import Result

    stat: dict = {}
    for r in results:
        stat[r.status] = stat.get(r.status, 0) + 1
    msg = f"{len(results)} reconfiguration solves: " + ", ".join(
        f"{v} {k}" for k, v in sorted(stat.items())) if results else "no reconfiguration solve"
    if fallbacks:
        msg += f"; {fallbacks} fell back to the MIP start method (no incumbent in time)"
    return Result("feasible", runtime_s=runtime,
                  backend="/".join(sorted({r.backend for r in results if r.backend})) or cfg.backend,
                  backend_reason=results[0].backend_reason if results else "",
                  n_vars=max((r.n_vars for r in results), default=0),
                  n_int_vars=max((r.n_int_vars for r in results), default=0),
                  n_constrs=max((r.n_constrs for r in results), default=0), message=msg)


def run_sim(name: str, kind: str):
    method, _, fallback = STRATEGIES[name]

    def run(inst: SimInstance, cfg: RunConfig) -> MethodOutput:
        reconfig = None
        if inst.is_ocs:
            reconfig = method or {"cross": "itv-mdmcf", "uniform": "uniform-greedy"}[inst.wiring]
        rcfg = reconfig_cfg(cfg, reconfig) if reconfig else None
        arch = make_arch(inst.arch, inst.gpus, reconfig, ecmp=inst.ecmp or "polarized", cfg=rcfg,
                         layout=inst.layout, rail_rule=inst.rail_rule or "lane-pairs")
        if arch.controller is not None:
            arch.controller.fallback = fallback
        t0 = time.perf_counter()
        with cfg.budget.stage("simulation"):
            res = Simulator(arch, alg_time=cfg.option("alg_time"), routing=cfg.option("routing"),
                            failures=inst.failure_model()).run(
                inst.jobs, check=cfg.budget.checker("the simulation"))
        wall = time.perf_counter() - t0
        sol = SimSolution(*res.records())
        st = res.stats
        metrics = {"sim_s": wall, **{k: st[k] for k in STAT_KEYS}, "reconfig_method": reconfig}
        ctrl = arch.controller
        metrics["ilp_fallbacks"] = ctrl.fallbacks if ctrl is not None and fallback else None
        solver = None
        if kind == "model":
            solver = _solver(ctrl.solver_results if ctrl else [], cfg,
                             ctrl.fallbacks if ctrl else 0, wall)
        return MethodOutput(sol, solver, metrics)
    return run


def jct_bound(inst: SimInstance) -> float:
    """Avg.JCT >= mean T: no job waits less than 0 or runs faster than on Best."""
    return float(np.mean([j.duration_s for j in inst.jobs]))


GEN_PARAMS = {
    "arch": (str, "lumos-51.2T-tau2", "architecture (solve.py list: the lumos-sim summary; "
             "best, clos-51.2T-3tier, lumos-51.2T-tau1, uniform-51.2T-tau1, ...)"),
    "gpus": (int, 256, "cluster GPUs, a multiple of the architecture's Pod (>= 2 Pods)"),
    "workload": (str, "helios", "helios (Helios-style sizes and durations) or trace (the "
                 "authors' trace)"),
    "jobs": (int, 40, "number of jobs"),
    "rho": (float, 0.655, "workload level ([002] eq. 9 = [001] eq. 17): 0.655 in [002] (default), 0.801 in [001]"),
    "seed": (int, 0, "random seed"),
    "ecmp": (str, "", "Clos only: polarized (default) or independent"),
    "layout": (str, "server", "intra-Pod GPU-to-leaf wiring: server (a leaf holds whole "
               "servers) or rail (rail-optimized: GPU r of each server on rail leaf r; [002] "
               "Fig. 24)"),
    "rail_rule": (str, "", "OCS fabrics in the rail layout only: the leaf-level requirement's "
                  "rule, lane-pairs (default: one unit per cross-Pod GPU pair, the authors') "
                  "or leaf-pairs (one per distinct cross-Pod leaf pair, Principle 3)"),
    "fail_rate": (float, 0.0, "GPU failures: share of the GPUs down in steady state ([002] "
                  "Fig. 8(d)); 0: none"),
    "fail_seed": (int, 0, "seed of the GPU failures"),
    "explicit": (int, 0, "1: write the generated job list itself (editable) instead of the "
                 "workload spec"),
    "name": (str, "", "instance name"),
}


def generate(arch="lumos-51.2T-tau2", gpus=256, workload="helios", jobs=40, rho=0.655, seed=0,
             ecmp="", layout="server", rail_rule="", fail_rate=0.0, fail_seed=0, explicit=0,
             name="") -> SimInstance:
    if workload not in WORKLOAD_KINDS:
        raise InstanceError("workload", f"must be one of {', '.join(WORKLOAD_KINDS)}, got {workload!r}")
    if explicit not in (0, 1):
        raise InstanceError("explicit", f"must be 0 or 1, got {explicit}")
    auto = (f"sim-{arch}-{gpus}-{workload}-j{jobs}-r{rho:g}-s{seed}"
            + ("-rail" if layout == "rail" else "") + (f"-{rail_rule}" if rail_rule else ""))
    d = {"problem": "lumos-sim", "format": 1, "name": name or auto, "arch": arch, "gpus": gpus,
         "workload": {"kind": workload, "jobs": jobs, "rho": rho, "seed": seed}}
    if ecmp:
        d["ecmp"] = ecmp
    if layout != "server":
        d["layout"] = layout
    if rail_rule:
        d["rail_rule"] = rail_rule
    if fail_rate:
        d["failures"] = {"rate": fail_rate, "seed": fail_seed}
    inst = SimInstance.from_dict(d)
    if explicit:
        inst = replace(inst, workload=None, meta={"generator": d["workload"]})
    return inst


register_problem(Problem(
    name="lumos-sim",
    summary="LumosCore flow-level cluster simulation: Avg.JCT of a job list on one "
            "architecture ([002] 6.3, [001] 6.3; spec 4.2; issue 16)",
    check=check_sim,
    objective="avg_jct_s",
    sense="min",
    metrics=("avg_jct_s", "avg_jrt_s", "avg_jwt_s", "p99_jct_s", "mean_slowdown", "mean_cl_ar",
             "mean_cl_a2a", "jobs", "reconfigurations", "reconfig_s_mean", "reconfig_s_max",
             "makespan_s", "sim_s", "rate_s", "route_s", "admit_s", "ilp_fallbacks"),
    methods={m.name: m for m in [
        Method("simulate", "heuristic", run_sim("simulate", "heuristic"),
               "FIFO flow-level simulation with the architecture's reconfiguration (ITV-MDMCF "
               "on lumos-*, Uniform-Greedy on uniform-*, none on best / Clos)", (ALG_TIME, ROUTING),
               kernels=sim_kernels("simulate")),
        Method("sim-itv-mcf", "heuristic", run_sim("sim-itv-mcf", "heuristic"),
               "simulation, reconfigurations by ITV-MCF (lumos-* only)", (ALG_TIME, ROUTING),
               applicable=applicable("sim-itv-mcf"),
               kernels=sim_kernels("sim-itv-mcf")),
        Method("sim-itv-ilp", "model", run_sim("sim-itv-ilp", "model"),
               "simulation, reconfigurations by ITV-ILP sharing the run's budget (lumos-* only)",
               (ALG_TIME, ROUTING), applicable=applicable("sim-itv-ilp"),
               kernels=sim_kernels("sim-itv-ilp")),
        Method("sim-uniform-ilp", "model", run_sim("sim-uniform-ilp", "model"),
               "simulation, reconfigurations by Uniform-ILP sharing the run's budget "
               "(uniform-* only)", (ALG_TIME, ROUTING), applicable=applicable("sim-uniform-ilp"),
               kernels=sim_kernels("sim-uniform-ilp")),
        Method("sim-helios", "heuristic", run_sim("sim-helios", "heuristic"),
               "simulation, reconfigurations by Helios (uniform-* only)", (ALG_TIME, ROUTING),
               applicable=applicable("sim-helios"),
               kernels=sim_kernels("sim-helios")),
    ]},
    default_method="simulate",
    bound=jct_bound,
    generator=Generator(generate, GEN_PARAMS),
))
