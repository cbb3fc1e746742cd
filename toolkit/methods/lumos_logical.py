"""The ``lumos-logical`` problem type: logical topology from the leaf-level requirement.

Methods ([002] 4.1, spec 2.7): ``heuristic-decomposition`` (Theorem 4.1, default),
``greedy`` (Theorem 4.2), ``logical-ilp`` (model (5)(6)(8), feasibility) and
``logical-ilp-min`` (min contention). Objective: contention level = max load / tau.
"""
from __future__ import annotations


from instances.errors import InstanceError
from instances.lumos.fabric import Fabric
from instances.lumos.size import guard_logical
from instances.lumos.logical import LogicalInstance
from instances.lumos.check import check_logical
from instances.lumos.workloads import random_requirement
from toolkit.options import MAX_MODEL_VARS, Option
from toolkit.registry import lazy, Generator, Method, MethodOutput, Problem, RunConfig, \
    register_problem

# heuristics and models load on first use (solve.py list and --help stay fast)
greedy_assign = lazy("heuristics.lumos.logical", "greedy_assign")
heuristic_decomposition = lazy("heuristics.lumos.logical", "heuristic_decomposition")
theorem42_holds = lazy("heuristics.lumos.logical", "theorem42_holds")
solve = lazy("models.backend", "solve")
build_logical = lazy("models.lumos.logical", "build_logical")
extract_logical = lazy("models.lumos.logical", "extract_logical")
logical_size = lazy("models.lumos.logical", "logical_size")
logical_start = lazy("models.lumos.logical", "logical_start")

MAX_VARS = 200_000
SIMD = (Option("simd", str, "euler", "SIMD step", choices=("euler", "flow")),)
ILP_OPTIONS = (Option("start", bool, True, "Heuristic-Decomposition as MIP start"),
               Option("max_vars", int, MAX_VARS, "decline models with more variables", minimum=0,
                      maximum=MAX_MODEL_VARS))


def contention_bound(inst: LogicalInstance) -> float:
    """Each leaf spreads its d_a paths over H spines: some spine carries ceil(d_a / H)."""
    d = int(inst.L.sum(axis=1).max(initial=0))
    return float(-(-d // inst.fabric.H)) / inst.fabric.tau


def run_heuristic(inst: LogicalInstance, cfg: RunConfig) -> MethodOutput:
    return MethodOutput(heuristic_decomposition(inst, cfg.option("simd")))


def run_greedy(inst: LogicalInstance, cfg: RunConfig) -> MethodOutput:
    return MethodOutput(greedy_assign(inst), metrics={"theorem42": theorem42_holds(inst)})


def run_ilp(mode: str):
    def run(inst: LogicalInstance, cfg: RunConfig) -> MethodOutput:
        model, h = build_logical(inst, mode)
        cfg.budget.check("build")
        start = None
        if cfg.option("start"):
            with cfg.budget.stage("start"):
                seed = heuristic_decomposition(inst)
                cfg.budget.keep(seed, "Heuristic-Decomposition's split (the MIP start heuristic)")
                if mode == "min_contention" or check_logical(inst, seed)[1]["contention_free"]:
                    start = logical_start(h, seed)
        with cfg.budget.stage("ilp"):
            res = solve(model, start=start, **cfg.solve_kw())
        if mode == "min_contention" and res.bound is not None:
            res.bound /= inst.fabric.tau          # z -> contention level
            res.objective = res.objective / inst.fabric.tau if res.objective is not None else None
        elif mode == "feasibility":
            res.bound = None                      # no objective: the model only decides (5)(6)(8)
        sol = extract_logical(h, res) if res.has_solution else None
        return MethodOutput(sol, res)
    return run


def ilp_applicable(inst: LogicalInstance, cfg: RunConfig) -> str | None:
    n, cap = logical_size(inst), cfg.option("max_vars")
    return f"{n} variables > max_vars={cap} (--option max_vars=N forces)" if n > cap else None


def metrics(inst: LogicalInstance, sol):
    bad, m = check_logical(inst, sol)
    m["lower_bound"] = contention_bound(inst)
    m["max_leaf_demand"] = int(inst.L.sum(axis=1).max(initial=0))
    return bad, m


GEN_PARAMS = {
    "pods": (int, 4, "P, Pods"), "k_leaf": (int, 8, "K_leaf"), "k_spine": (int, 8, "K_spine (even)"),
    "tau": (int, 2, "links per (leaf, spine)"), "k_ocs": (int, 512, "OCS ports"),
    "per_leaf": (int, 0, "requirement stubs per leaf (0 = k_leaf; k_leaf/2 with tau=1: Theorem 4.2)"),
    "fill": (float, 1.0, "fraction of the stubs paired"),
    "seed": (int, 0, "random seed"), "name": (str, "", "instance name"),
}


def generate(pods=4, k_leaf=8, k_spine=8, tau=2, k_ocs=512, per_leaf=0, fill=1.0, seed=0,
             name="") -> LogicalInstance:
    fab = Fabric(pods, k_leaf, k_spine, tau, k_ocs)
    guard_logical(fab)
    if not 0 <= per_leaf <= k_leaf:
        raise InstanceError("per_leaf", f"must be within [0, k_leaf = {k_leaf}] (0 = k_leaf), "
                            f"got {per_leaf}")
    if not 0 < fill <= 1:
        raise InstanceError("fill", f"must be within (0, 1], got {fill}")
    if seed < 0:
        raise InstanceError("seed", f"must be >= 0, got {seed}")
    L = random_requirement(fab, seed, per_leaf or None, fill)
    auto = f"logical-P{pods}-Kl{k_leaf}-Ks{k_spine}-tau{tau}-d{per_leaf or k_leaf}-s{seed}"
    return LogicalInstance(fab, L, name or auto, {"generator": dict(per_leaf=per_leaf, fill=fill,
                                                                    seed=seed)})


register_problem(Problem(
    name="lumos-logical",
    summary="LumosCore logical topology from the leaf-level requirement ([002] Section 4.1)",
    check=metrics,
    objective="contention_level",
    sense="min",
    metrics=("contention_level", "lower_bound", "contention_free", "max_leaf_spine_load",
             "max_spine_ports", "port_budget_ok", "logical_links", "max_leaf_demand", "theorem42"),
    methods={m.name: m for m in [
        Method("heuristic-decomposition", "heuristic", run_heuristic,
               "Heuristic-Decomposition (Thm 4.1): SIMD + IMD into H parts; contention-free at tau=2",
               SIMD),
        Method("greedy", "heuristic", run_greedy,
               "Theorem 4.2 greedy: each unit on a spine free at both leaves (tau=1, d <= H/2)"),
        Method("logical-ilp", "model", run_ilp("feasibility"),
               "model (5)(6)(8) as printed: feasibility (infeasible = no contention-free C)",
               ILP_OPTIONS, applicable=ilp_applicable),
        Method("logical-ilp-min", "model", run_ilp("min_contention"),
               "model (5)(6)(8) with tau in (6) replaced by z, min z (spec 2.7 variant ii)",
               ILP_OPTIONS, applicable=ilp_applicable, exact=True),
    ]},
    default_method="heuristic-decomposition",
    bound=contention_bound,
    generator=Generator(generate, GEN_PARAMS),
))
