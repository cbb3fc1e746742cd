"""The ``lumos-staging`` problem type: hitless OCS reconfiguration in the fewest stages.

[002] A.8, spec 2.11: partition the changed OCS groups into stages so that every leaf
loses at most a fraction iota of its flows per stage (instances.lumos.staging states the
decisions). Methods: ``staging-ilp`` (the corrected model; Algorithm 1's loop over theta,
default, or one model minimising the stages used) and ``staging-greedy`` (first-fit
decreasing). Objective: the number of stages (min).
"""
from __future__ import annotations

import time

from instances.errors import InstanceError
from instances.lumos.fabric import Fabric
from instances.lumos.instance import ReconfigInstance
from instances.lumos.logical import LogicalInstance
from instances.lumos.size import guard_logical, guard_reconfig
from instances.lumos.staging import DEFAULT_IOTA, Staging, StagingInstance, changed_groups, \
    check_staging
from instances.lumos.workloads import churn_requirement, random_requirement
from toolkit.options import MAX_MODEL_VARS, Option
from toolkit.registry import lazy, Generator, Method, MethodOutput, Problem, RunConfig, \
    register_problem

# heuristics and models load on first use (solve.py list and --help stay fast)
staging_greedy = lazy("heuristics.lumos.staging", "staging_greedy")
stage_lower_bound = lazy("heuristics.lumos.staging", "stage_lower_bound")
build_staging = lazy("models.lumos.staging", "build_staging")
extract_staging = lazy("models.lumos.staging", "extract_staging")
staging_size = lazy("models.lumos.staging", "staging_size")
staging_start = lazy("models.lumos.staging", "staging_start")
solve = lazy("models.backend", "solve")

MAX_VARS = 200_000
ILP_OPTIONS = (
    Option("mode", str, "loop", "loop: Algorithm 1, feasibility models for theta = lower bound, "
           "lower bound + 1, ... (first feasible); direct: one model, min stages used",
           choices=("loop", "direct")),
    Option("start", bool, True, "first-fit decreasing as upper bound (loop) / MIP start (direct)"),
    Option("max_vars", int, MAX_VARS, "decline models with more binaries", minimum=0,
           maximum=MAX_MODEL_VARS),
)


def run_greedy(inst: StagingInstance, cfg: RunConfig) -> MethodOutput:
    return MethodOutput(staging_greedy(inst))


def run_ilp(inst: StagingInstance, cfg: RunConfig) -> MethodOutput:
    """The corrected model over the packable groups; groups staged alone are appended."""
    from models.backend import Result

    n_alone, lb = len(inst.alone), stage_lower_bound(inst)
    seed = staging_greedy(inst) if cfg.option("start") else None
    if seed is not None:
        cfg.budget.keep(seed, "the first-fit decreasing staging (the MIP start heuristic)")
    top = len(seed.stages) if seed else len(inst.changed)     # a known feasible count
    if len(inst.packable) == 0 or lb == top:                  # nothing left to decide
        sol = seed or staging_greedy(inst)
        return MethodOutput(sol, Result("optimal", float(len(sol.stages)), float(lb), 0.0,
                                        backend="none", message="first-fit decreasing meets the "
                                        "lower bound: no model solved"))
    lo = lb - n_alone                                         # stages for the packable groups
    if cfg.option("mode") == "direct":
        model, h = build_staging(inst, upper=top - n_alone, lower=lo)
        with cfg.budget.stage("ilp"):
            res = solve(model, start=staging_start(h, seed) if seed else None, **cfg.solve_kw())
        for key in ("objective", "bound"):
            if getattr(res, key) is not None:
                setattr(res, key, getattr(res, key) + n_alone)
        return MethodOutput(extract_staging(h, res, inst.alone) if res.has_solution else None, res)
    return _loop(inst, cfg, lo, top - n_alone if seed else len(inst.packable) + 1, seed)


def _loop(inst: StagingInstance, cfg: RunConfig, lo: int, top: int, seed) -> MethodOutput:
    """Algorithm 1: theta = lo, lo + 1, ... < top until a model is feasible; else the
    greedy staging (``top`` = its count) is taken. The bound is the smallest theta not proven
    infeasible; a model the time limit cuts short leaves it there and the loop goes on.
    [DECISION] [002] Algorithm 1 starts at theta = 2; this starts at the lower bound, which
    may be 1 (all changed groups in one stage when every leaf stays within iota)."""
    from models.backend import Result

    n_alone, bound, results, sol = len(inst.alone), lo, [], None
    t0 = time.perf_counter()
    for theta in range(lo, top):
        if cfg.budget.spent():
            break                   # the time limit: the greedy staging (or one per stage)
        model, h = build_staging(inst, theta=theta)
        with cfg.budget.stage("ilp"):
            res = solve(model, **{**cfg.solve_kw(), "time_limit": cfg.budget.share(top - theta)})
        results.append(res)
        if res.has_solution:
            sol = extract_staging(h, res, inst.alone)
            break
        if res.status == "infeasible" and bound == theta:
            bound = theta + 1
        model.dispose()
    if sol is None:
        sol = seed
    last = results[-1] if results else Result("optimal")
    out = Result("optimal", runtime_s=time.perf_counter() - t0, backend=last.backend,
                 backend_reason=last.backend_reason,
                 n_vars=max(r.n_vars for r in results) if results else 0,
                 n_int_vars=max(r.n_int_vars for r in results) if results else 0,
                 n_constrs=max(r.n_constrs for r in results) if results else 0,
                 message=f"theta models solved: {len(results)} (Algorithm 1)")
    if sol is None:                  # no seed (start=0), every model cut short: one per stage
        sol = Staging([[int(h)] for h in inst.changed])
    out.objective, out.bound = float(len(sol.stages)), float(bound + n_alone)
    out.status = "optimal" if out.objective <= out.bound else "feasible"
    out.gap = (out.objective - out.bound) / out.objective if out.objective else 0.0
    return MethodOutput(sol, out)


def ilp_applicable(inst: StagingInstance, cfg: RunConfig) -> str | None:
    n, cap = staging_size(inst, len(inst.packable)), cfg.option("max_vars")
    return f"{n} binaries > max_vars={cap} (--option max_vars=N forces)" if n > cap else None


def metrics(inst: StagingInstance, sol):
    bad, m = check_staging(inst, sol)
    m["lower_bound"] = stage_lower_bound(inst)
    return bad, m


GEN_PARAMS = {
    "pods": (int, 4, "P, Pods"), "k_leaf": (int, 8, "K_leaf"), "k_spine": (int, 4, "K_spine (even)"),
    "tau": (int, 1, "links per (leaf, spine); H = k_leaf / tau groups"),
    "k_ocs": (int, 512, "OCS ports"),
    "fill": (float, 0.6, "fraction of the leaves' stubs paired in the old requirement"),
    "churn": (float, 0.3, "fraction of requirement units replaced (jobs leave and arrive)"),
    "iota": (float, DEFAULT_IOTA, "largest fraction of a leaf's flows one stage may affect"),
    "seed": (int, 0, "random seed"), "name": (str, "", "instance name"),
}


def generate(pods=4, k_leaf=8, k_spine=4, tau=1, k_ocs=512, fill=0.6, churn=0.3,
             iota=DEFAULT_IOTA, seed=0, name="") -> StagingInstance:
    """The running-stage pipeline on a random requirement: L_old (random, ``fill``) and
    L_new (``churn`` of its units re-paired) -> Heuristic-Decomposition -> C -> ITV-MDMCF,
    the new configuration from the old one; the split is L_new's. Cross Wiring."""
    from heuristics.lumos.logical import heuristic_decomposition
    from heuristics.lumos.mdmcf.reconfig import itv_configure

    fab = Fabric(pods, k_leaf, k_spine, tau, k_ocs)
    guard_logical(fab)
    guard_reconfig(fab, "cross")
    for key, val in (("fill", fill), ("churn", churn)):
        if not 0 <= val <= 1:
            raise InstanceError(key, f"must be within [0, 1], got {val}")
    if not 0 < iota <= 1:
        raise InstanceError("iota", f"must be within (0, 1], got {iota}")
    if seed < 0:
        raise InstanceError("seed", f"must be >= 0, got {seed}")
    L_old = random_requirement(fab, seed, None, fill)
    L_new = churn_requirement(fab, L_old, churn, seed + 1)
    split_old = heuristic_decomposition(LogicalInstance(fab, L_old))
    split_new = heuristic_decomposition(LogicalInstance(fab, L_new))
    old = itv_configure(ReconfigInstance(fab, split_old.topology(fab), "cross"))
    new = itv_configure(ReconfigInstance(fab, split_new.topology(fab), "cross", old))
    auto = f"staging-P{pods}-Kl{k_leaf}-Ks{k_spine}-tau{tau}-s{seed}"
    return StagingInstance(fab, split_new.entries, changed_groups(old, new), iota, "cross", old,
                           new, name or auto,
                           {"generator": dict(fill=fill, churn=churn, seed=seed)})


register_problem(Problem(
    name="lumos-staging",
    summary="LumosCore staged (hitless) OCS reconfiguration: fewest stages under the per-leaf "
            "budget iota ([002] A.8)",
    check=metrics,
    objective="stages",
    sense="min",
    metrics=("stages", "lower_bound", "max_affected_fraction", "groups_changed", "groups_alone",
             "iota"),
    methods={m.name: m for m in [
        Method("staging-greedy", "heuristic", run_greedy,
               "first-fit decreasing of the changed groups into stages under every leaf's budget, "
               "best of three orders"),
        Method("staging-ilp", "model", run_ilp,
               "spec 2.11 corrected model: y_hw binary, partition, per-leaf budget; Algorithm 1 "
               "loop over theta (default) or direct min stages", ILP_OPTIONS,
               applicable=ilp_applicable, exact=True),
    ]},
    default_method="staging-greedy",
    bound=lambda inst: float(stage_lower_bound(inst)),
    generator=Generator(generate, GEN_PARAMS),
))
