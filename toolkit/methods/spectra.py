"""The Spectra problem type for the command line: methods, metrics, generator."""
from __future__ import annotations


from instances.spectra.instance import SpectraInstance, check_schedule
from instances.spectra.workloads import generate
from toolkit.options import MAX_MODEL_VARS, Option
from toolkit.registry import (lazy, option_or, Generator, Method, MethodOutput, Problem,
                              RunConfig, register_problem)

# heuristics and models load on first use (solve.py list and --help stay fast)
baseline = lazy("heuristics.spectra.baseline", "baseline")
greedy_split = lazy("heuristics.spectra.baseline", "greedy_split")
split_nnz = lazy("heuristics.spectra.baseline", "split_nnz")
lower_bound = lazy("heuristics.spectra.bounds", "lower_bound")
decompose = lazy("heuristics.spectra.decompose", "decompose")
degree = lazy("heuristics.spectra.decompose", "degree")
eclipse_decompose = lazy("heuristics.spectra.eclipse", "eclipse_decompose")
spectra = lazy("heuristics.spectra.schedule", "spectra")
solve = lazy("models.backend", "solve")
build_milp = lazy("models.spectra.milp", "build_milp")
build_refine_lp = lazy("models.spectra.milp", "build_refine_lp")
extract_milp = lazy("models.spectra.milp", "extract_milp")
extract_refine_lp = lazy("models.spectra.milp", "extract_refine_lp")
milp_size = lazy("models.spectra.milp", "milp_size")
milp_start = lazy("models.spectra.milp", "milp_start")
build_split_milp = lazy("models.spectra.split", "build_split_milp")
extract_split = lazy("models.spectra.split", "extract_split")
split_start = lazy("models.spectra.split", "split_start")
build_matching_milp = lazy("models.spectra.matchings", "build_matching_milp")
count_maximal_matchings = lazy("models.spectra.matchings", "count_maximal_matchings")
extract_matching_milp = lazy("models.spectra.matchings", "extract_matching_milp")
matching_start = lazy("models.spectra.matchings", "matching_start")
schedule_makespan = lazy("instances.spectra.instance", "makespan")

MILP_MAX_VARS = 5000  # above this, `milp` declines (override: --option max_vars=N)
MAX_MATCHINGS = 2000  # above this, `milp-matchings` declines (n <= 6 has a few hundred)
# option maxima (decisions): above them a value is bad input, not a run
QUANTILES_MAX = 10**6    # alpha candidates (a linspace of this many); more than n^2 = exhaustive
SLOTS_MAX = 10**6        # T per switch: the model has >= 2 s T variables
MATCHINGS_MAX = 10**5    # the count enumerates up to 50x this many partial matchings (n ints
                         # each); supp(D) = K_8 has 8! = 40320 maximal matchings
SLACK_MAX = 1e6          # split_eps: T = (1 + eps) rho / s; eps >= s - 1 is already no balance

EDGE_MODE = Option("edge_mode", str, "supp", "Decompose's edge set: support of D (supp) or of the "
                   "remaining demand (srem)", choices=("supp", "srem"))
MERGE = Option("merge_identical", bool, False, "merge identical permutations into one configuration")
MATCHING = Option("matching", str, "warm", "Decompose's assignment rounds: warm (compiled from "
                  "n = 32 on, scipy below), jit (numba; loaded once per process, ~0.4 s, "
                  "before the clock), scipy, cold (reference); ties may differ, weights never",
                  choices=("warm", "jit", "scipy", "cold"))
SPECTRA_OPTIONS = (
    Option("refine", str, "greedy", "durations: greedy, or the Refine LP (Eq. 5) on the backend",
           choices=("greedy", "lp")), EDGE_MODE, MERGE, MATCHING)
ECLIPSE_OPTIONS = (
    Option("alpha_search", str, "quantile", "Eclipse's alpha search",
           choices=("quantile", "exhaustive")),
    Option("quantiles", int, 64, "alpha candidates of the quantile search", minimum=2,
           maximum=QUANTILES_MAX),
    Option("equalize", bool, True, "run Equalize after LPT"), MERGE)
SPLIT_OPTIONS = (
    Option("split_eps", float, 0.0, "balance slack of the split MILP", minimum=0,
           maximum=SLACK_MAX),
    Option("start", bool, True, "the greedy split as MIP start"), EDGE_MODE)
MILP_OPTIONS = (
    Option("slots", int, 0, "T, configurations per switch (0: max(k, Spectra's))", minimum=0,
           maximum=SLOTS_MAX),
    Option("lb_cut", bool, True, "add the lower-bound cut"),
    Option("symmetry", bool, True, "symmetry-breaking constraints"),
    Option("start", bool, True, "Spectra's schedule as MIP start"),
    Option("max_vars", int, MILP_MAX_VARS, "decline models with more variables", minimum=0,
           maximum=MAX_MODEL_VARS))

MATCHING_OPTIONS = (
    Option("lb_cut", bool, True, "C >= the Theorem 1-2 lower bound"),
    Option("ub_cut", bool, True, "C <= Spectra's makespan (and durations capped by it)"),
    Option("line_cuts", bool, True, "per-line, per-switch makespan cuts with entry-served binaries"),
    Option("switch_line", bool, True, "per-line, per-switch cuts with the switch's whole "
           "configuration count (LP-implied; helps HiGHS's search)"),
    Option("symmetry", bool, True, "order the identical switches by their first matching"),
    Option("start", bool, True, "Spectra's schedule as MIP start"),
    Option("max_matchings", int, MAX_MATCHINGS, "decline supports with more maximal matchings",
           minimum=1, maximum=MATCHINGS_MAX))


def spectra_kernels(inst, cfg: RunConfig | None) -> tuple[str, ...]:
    """Decompose's compiled rounds (toolkit.kernels "spectra") when the run uses them:
    ``matching`` jit, or warm (every other method's choice too) from JIT_MIN_N lines on."""
    from heuristics.spectra.decompose import JIT_MIN_N

    matching = option_or(cfg, "matching", "warm")
    n = JIT_MIN_N if inst is None else inst.demand.shape[0]
    return ("spectra",) if matching == "jit" or (matching == "warm" and n >= JIT_MIN_N) else ()


def _spectra_opts(cfg: RunConfig) -> dict:
    return dict(edge_mode=cfg.option("edge_mode"), merge_identical=cfg.option("merge_identical"),
                matching=cfg.option("matching"))


def run_spectra(inst: SpectraInstance, cfg: RunConfig, equalize: bool = True) -> MethodOutput:
    if cfg.option("refine") == "lp":
        return run_spectra_lp(inst, cfg, equalize)
    return MethodOutput(spectra(inst, equalize_loads=equalize, deadline=cfg.budget.deadline(),
                                **_spectra_opts(cfg)))


def run_spectra_lp(inst: SpectraInstance, cfg: RunConfig, equalize: bool = True) -> MethodOutput:
    """Spectra with the Refine LP (Eq. 5) solved on the chosen backend."""
    opts = _spectra_opts(cfg)
    dec = decompose(inst.demand, edge_mode=opts["edge_mode"], refine="none",
                    matching=opts["matching"], deadline=cfg.budget.deadline())
    model, handles = build_refine_lp(inst.demand, dec.perms)
    res = solve(model, **cfg.solve_kw())
    if not res.has_solution:
        return MethodOutput(None, res)
    dec.alphas = extract_refine_lp(handles, res)
    # The LP is a sub-problem (the durations of fixed permutations): its optimum is not a
    # makespan bound and the schedule is still a heuristic one.
    extra = {"refine_lp_objective": res.objective}
    res.bound, res.gap = None, None
    if res.status == "optimal":
        res.status = "feasible"
    return MethodOutput(spectra(inst, equalize_loads=equalize, dec=dec, **opts), res, extra)


def _milp_slots(inst: SpectraInstance, cfg: RunConfig, seed) -> int:
    slots = cfg.option("slots")
    if slots <= 0:
        slots = max(degree(inst.demand), max((len(sw) for sw in seed.switches), default=0), 1)
    return slots


def run_milp(inst: SpectraInstance, cfg: RunConfig) -> MethodOutput:
    """Exact makespan MILP (spec 3.7), seeded with Spectra's schedule as a MIP start."""
    seed = spectra(inst, deadline=cfg.budget.deadline())
    cfg.budget.keep(seed, "Spectra's schedule (the MIP start heuristic)")
    slots = _milp_slots(inst, cfg, seed)
    lb = lower_bound(inst.demand, inst.switches, inst.delay)
    model, h = build_milp(inst, slots, lb_cut=lb if cfg.option("lb_cut") else None,
                          symmetry=cfg.option("symmetry"), check=cfg.budget.checker("build"))
    start = milp_start(h, seed) if cfg.option("start") and \
        all(len(sw) <= slots for sw in seed.switches) else None
    cfg.budget.check("build")
    res = solve(model, start=start, **cfg.solve_kw())
    sol = extract_milp(h, res) if res.has_solution else None
    return MethodOutput(sol, res, {"slots": slots})


def run_milp_matchings(inst: SpectraInstance, cfg: RunConfig) -> MethodOutput:
    """Exact makespan MILP over maximal matchings (models.spectra.matchings): no slot
    limit, so its optimum is OPT itself; Spectra's schedule as MIP start and upper bound."""
    seed = spectra(inst, deadline=cfg.budget.deadline())
    cfg.budget.keep(seed, "Spectra's schedule (the MIP start heuristic)")
    lb = lower_bound(inst.demand, inst.switches, inst.delay)
    ub = schedule_makespan(seed, inst.delay)
    model, h = build_matching_milp(inst, lb=lb if cfg.option("lb_cut") else None,
                                   ub=ub if cfg.option("ub_cut") else None,
                                   symmetry=cfg.option("symmetry"),
                                   line_cuts=cfg.option("line_cuts"),
                                   switch_line=cfg.option("switch_line"),
                                   check=cfg.budget.checker("build"))
    start = matching_start(h, seed) if cfg.option("start") else None
    cfg.budget.check("build")
    res = solve(model, start=start, **cfg.solve_kw())
    sol = extract_matching_milp(h, res) if res.has_solution else None
    return MethodOutput(sol, res, {"matchings": len(h.matchings)})


def matchings_applicable(inst: SpectraInstance, cfg: RunConfig) -> str | None:
    """Declines above ``max_matchings``; the count checks the run's budget as it goes."""
    cap = cfg.option("max_matchings")
    check = cfg.budget.checker() if cfg.budget is not None else None
    count = count_maximal_matchings(inst, cap=50 * cap, check=check)
    if count > cap:
        return (f"supp(D) of n={inst.n} has {count if count <= 50 * cap else f'> {50 * cap}'} "
                f"maximal matchings > max_matchings={cap}; use --option max_matchings=N to force")
    return None


def milp_applicable(inst: SpectraInstance, cfg: RunConfig) -> str | None:
    cap = cfg.option("max_vars")
    slots = _milp_slots(inst, cfg, spectra(inst))     # the slots the run will use
    nv, _ = milp_size(inst, slots)
    if nv > cap:
        return (f"exact MILP too large for n={inst.n}, s={inst.switches} (about {nv} variables > "
                f"max_vars={cap}); use --option max_vars=N to force")
    return None


def split_applicable(inst: SpectraInstance, cfg: RunConfig) -> str | None:
    """The Baselines' split holds s dense n x n sub-matrices (8 s n^2 bytes): declined over the
    memory limit (s = 10^4 switches at n = 1000 would be 75 GiB)."""
    from instances.limits import GIB, max_bytes

    need = 8.0 * inst.switches * inst.n ** 2
    if need > max_bytes():
        return (f"the split into s = {inst.switches} dense {inst.n} x {inst.n} sub-matrices would "
                f"need about {need / GIB:.3g} GiB, over the {max_bytes() / GIB:.3g} GiB limit "
                f"(--max-memory GIB)")
    return None


def run_eclipse(inst: SpectraInstance, cfg: RunConfig) -> MethodOutput:
    """Spectra (Eclipse): Eclipse decomposition (spec 2.6.2), then LPT + Equalize."""
    dec = eclipse_decompose(inst.demand, inst.delay, alpha_search=cfg.option("alpha_search"),
                            quantiles=cfg.option("quantiles"))
    sched = spectra(inst, equalize_loads=cfg.option("equalize"), dec=dec,
                    merge_identical=cfg.option("merge_identical"))
    return MethodOutput(sched, metrics={"decompose_configs": len(dec.perms)})


def run_baseline(inst: SpectraInstance, cfg: RunConfig) -> MethodOutput:
    """Baseline (Section V): greedy LESS-style split (spec 2.6.3), Decompose per switch."""
    parts = greedy_split(inst.demand, inst.switches)
    sched = baseline(inst, parts=parts, edge_mode=cfg.option("edge_mode"))
    return MethodOutput(sched, metrics={"split_nnz": split_nnz(parts)})


def run_baseline_milp(inst: SpectraInstance, cfg: RunConfig) -> MethodOutput:
    """Baseline with the exact split MILP (spec 2.6.3), warm-started from the greedy split."""
    model, h = build_split_milp(inst, eps=cfg.option("split_eps"))
    start = split_start(h, greedy_split(inst.demand, inst.switches)) \
        if cfg.option("start") else None
    res = solve(model, start=start, **cfg.solve_kw())
    if not res.has_solution:
        return MethodOutput(None, res)
    parts = extract_split(h, res)
    sched = baseline(inst, parts=parts, edge_mode=cfg.option("edge_mode"))
    # The MILP optimizes the split's nonzero count, not the makespan: report its status
    # and values as split_* and keep its bound out of the makespan columns.
    extra = {"split_nnz": split_nnz(parts), "split_status": res.status,
             "split_bound": res.bound}
    res.bound, res.gap = None, None
    if res.status == "optimal":
        res.status = "feasible"
    return MethodOutput(sched, res, extra)


def metrics(inst: SpectraInstance, sol) -> tuple[list[str], dict]:
    bad, m = check_schedule(inst, sol)
    lb = lower_bound(inst.demand, inst.switches, inst.delay)
    m["lower_bound"] = lb
    m["ratio_lb"] = m["makespan"] / lb if lb > 0 else (1.0 if m["makespan"] == 0 else float("inf"))
    m["degree"] = degree(inst.demand)
    return bad, m


GEN_PARAMS = {
    "workload": (str, "benchmark", "benchmark (spec 4.4), gpt (GPT-3B 3D-parallel, spec 4.2), "
                 "moe (Qwen2-57B expert routing, spec 4.3), example (Figs. 2-4), shifts, random"),
    "n": (int, 0, "ports per OCS, at most 1024 (0 = the workload's: benchmark/random/shifts "
          "100, moe 64, gpt tp*pp*dp)"),
    "m": (int, 16, "benchmark: flows per source port (1..1024)"),
    "large": (int, 0, "benchmark: large flows (0 = max(1, round(m/4)))"),
    "large_share": (float, 0.7, "benchmark: bandwidth share of the large flows"),
    "noise": (float, None, "absolute Gaussian sigma added to nonzeros, clipped at 0 "
              "(default: 0.003 for benchmark/gpt/shifts, 0 for moe)"),
    "density": (float, 0.5, "random: probability an entry is nonzero"),
    "tp": (int, 4, "gpt: tensor-parallel degree"),
    "pp": (int, 4, "gpt: pipeline-parallel degree"),
    "dp": (int, 2, "gpt: data-parallel degree (2 <= tp*pp*dp <= 1024)"),
    "top_k": (int, 8, "moe: experts per token"),
    "pop_sigma": (float, 0.25, "moe: sigma of the log expert popularity"),
    "switches": (int, 4, "s, parallel OCSes"),
    "delay": (float, 0.04, "delta, reconfiguration delay"),
    "seed": (int, 0, "random seed"),
    "name": (str, "", "instance name (default: derived from the parameters)"),
}

register_problem(Problem(
    name="spectra",
    summary="one demand matrix over s parallel OCSes with reconfiguration delay (Liang et al. 2026)",
    check=metrics,
    objective="makespan",
    sense="min",
    metrics=("makespan", "lower_bound", "ratio_lb", "degree", "n_configs",
             "max_configs_per_switch", "slots", "refine_lp_objective", "decompose_configs",
             "split_nnz", "split_status", "split_bound", "matchings"),
    methods={m.name: m for m in [
        Method("spectra", "heuristic", run_spectra,
               "Decompose (k=degree perms) + LPT Schedule + Equalize (Algs. 1-4)",
               SPECTRA_OPTIONS, kernels=spectra_kernels),
        Method("spectra-noeq", "heuristic", lambda i, c: run_spectra(i, c, equalize=False),
               "Spectra without Equalize (Fig. 7)", SPECTRA_OPTIONS, kernels=spectra_kernels),
        Method("spectra-lp", "model", run_spectra_lp,
               "Spectra with the Refine LP (Eq. 5) on the solver backend",
               (EDGE_MODE, MERGE, MATCHING), kernels=spectra_kernels),
        Method("spectra-eclipse", "heuristic", run_eclipse,
               "Spectra (Eclipse): Eclipse decomposition (spec 2.6.2) + LPT + Equalize",
               ECLIPSE_OPTIONS),
        Method("baseline", "heuristic", run_baseline,
               "Baseline: greedy LESS-style sparsity+balance split into s sub-matrices, "
               "Decompose each on its own switch (spec 2.6.3)", (EDGE_MODE,),
               applicable=split_applicable, kernels=spectra_kernels),
        Method("baseline-milp", "model", run_baseline_milp,
               "Baseline with the exact min-nonzeros split MILP (spec 2.6.3, not in the paper; "
               "greedy split as MIP start)", SPLIT_OPTIONS, applicable=split_applicable,
               kernels=spectra_kernels),
        Method("milp", "model", run_milp,
               "exact min-makespan MILP with T slots/switch (spec 3.7, not in the paper), "
               "MIP start from Spectra",
               MILP_OPTIONS, applicable=milp_applicable, kernels=spectra_kernels),
        Method("milp-matchings", "model", run_milp_matchings,
               "exact min-makespan MILP over the maximal matchings of supp(D) with line cuts "
               "(not in the paper; no slot limit, proves OPT), MIP start from Spectra",
               MATCHING_OPTIONS, applicable=matchings_applicable, exact=True,
               kernels=spectra_kernels),
    ]},
    default_method="spectra",
    bound=lambda inst: lower_bound(inst.demand, inst.switches, inst.delay),
    generator=Generator(generate, GEN_PARAMS),
))
