"""The DELTA problem type for the command line: baselines, metrics, generator."""
from __future__ import annotations

import math
import time

import numpy as np

from instances.delta.instance import DeltaInstance, check_solution, from_job, makespan_of
from instances.delta.models import TABLE_I
from instances.errors import InstanceError
from toolkit.options import MAX_SECONDS, MAX_WORKERS, Option, OptionError
from toolkit.registry import (lazy, Generator, Method, MethodOutput, Problem, RunConfig,
                              register_problem)

# heuristics and models load on first use (solve.py list and --help stay fast)
delta_fast = lazy("heuristics.delta.fast", "delta_fast")
task_windows = lazy("heuristics.delta.fast", "task_windows")
x_upper_bound = lazy("heuristics.delta.fast", "x_upper_bound")
critical_path_bound = lazy("heuristics.delta.sim", "critical_path_bound")
evaluate = lazy("heuristics.delta.nct", "evaluate")
ideal_reference = lazy("heuristics.delta.nct", "ideal_reference")
nct_metrics = lazy("heuristics.delta.nct", "nct_metrics")
simulate = lazy("heuristics.delta.sim", "simulate")
solve = lazy("models.backend", "solve")
solve_lexicographic = lazy("models.backend", "solve_lexicographic")
build_fixed_step = lazy("models.delta.fts", "build_fixed_step")
build_interval = lazy("models.delta.milp", "build_interval")
extract_interval = lazy("models.delta.milp", "extract_interval")
mip_start = lazy("models.delta.milp", "mip_start")
profile = lazy("models.delta.milp", "profile")
prune_windows = lazy("models.delta.milp", "prune_windows")


def _baseline(name):
    def run(inst: DeltaInstance, cfg: RunConfig) -> MethodOutput:
        policy = cfg.option("policy")
        from heuristics.delta.baselines import BASELINES

        x = BASELINES[name](inst)
        ev = evaluate(inst, x, policy=policy)
        return MethodOutput(ev["sim"].solution(x), metrics=_nct_fields(ev))
    return run


def reference_run(inst: DeltaInstance):
    """The best traffic-matrix baseline by simulated makespan: (name, x, simulation).

    It gives T_up (Big-M), K and the pruning anchors, and the MIP start (spec 3.3, 3.6).
    """
    from heuristics.delta.baselines import BASELINES

    best = None
    for name, fn in BASELINES.items():
        x = fn(inst)
        sim = simulate(inst, x)
        if best is None or sim.makespan < best[2].makespan - 1e-12:
            best = (name, x, sim)
    return best


def _ga(inst: DeltaInstance, cfg: RunConfig, share: float = 1.0, reserve: float = 0.0):
    """DELTA-Fast (Alg. 3) with the spec's defaults, seeded with the three baselines; it
    stops at ``ga_time_limit`` or at ``share`` of what is left of the run's budget, less
    ``reserve`` seconds for what must follow it."""
    from heuristics.delta.baselines import BASELINES

    left = cfg.budget.share(fraction=share)
    left = None if left is None else max(left - reserve, 0.0)
    caps = [c for c in (left, cfg.option("ga_time_limit") or None) if c is not None]
    with cfg.budget.stage("ga"):
        return delta_fast(inst, pop=cfg.option("pop"), generations=cfg.option("generations"),
                          stall=cfg.option("stall"), seed=cfg.option("seed"),
                          time_limit=min(caps, default=float("inf")),
                          seeds=[fn(inst) for fn in BASELINES.values()],
                          workers=cfg.option("workers"))


NCT_FIELDS = ("nct", "nct_exposed", "nct_chain", "ideal_iteration_time")


def _nct_fields(ev: dict) -> dict:
    """The NCT columns of an evaluation (heuristics.delta.nct): nct, its exposed variant,
    the backward-chain diagnostic and the ideal iteration time."""
    return {k: ev[k] for k in NCT_FIELDS if k in ev}


def run_fast(inst: DeltaInstance, cfg: RunConfig) -> MethodOutput:
    t = time.perf_counter()
    ideal_reference(inst)        # before the GA: after its deadline only one simulation is left
    # [DECISION] that simulation's time is kept back from the GA's deadline, twice the ideal
    # reference's (a simulation of the same DAG; twice: the load may change meanwhile), so
    # the run ends within its limit with the GA's best topology
    ga = _ga(inst, cfg, reserve=2.0 * (time.perf_counter() - t))
    ev = evaluate(inst, ga.x, policy="maxmin")
    metrics = _nct_fields(ev)
    metrics.update(generations=ga.generations, evaluations=ga.evaluations, ga_stop=ga.stop)
    return MethodOutput(ev["sim"].solution(ga.x), metrics=metrics)


def prepare_interval(inst: DeltaInstance, variant: str, ref, prune: bool = True,
                     anchors: bool = True, margin: int = 2, k_pad: int = 2, tighten: bool = True,
                     paper_exact: bool = False, hotstart: bool = True, check=None):
    """Spec 3.3/3.6 set-up of the interval MILP from a reference run ``(name, x, sim)``:
    K from its events, Algorithm 1 windows, T_up = its makespan, optional tightenings
    (spec 2.1) and its trace as the MIP start. Returns (model, handles, start). ``check``:
    the run's budget check, called while the model is built."""
    _, x_ref, sim = ref
    prof = profile(inst, sim)
    K = prof.intervals(k_pad)
    windows = prune_windows(inst, K, prof, margin=margin, anchors=anchors) if prune else None
    T_up = sim.makespan * (1 + 1e-6)
    tight = {}
    if tighten:                              # spec 2.1 valid tightenings ("fast" mode)
        # X-bar is valid; the max with the reference keeps the hot start feasible
        tight = dict(x_ub=np.maximum(x_upper_bound(inst, T_up), x_ref), min_duration=True)
        if not paper_exact:                  # LCT assumes the tails are inside C
            tight["time_windows"] = task_windows(inst, T_up)
    model, h = build_interval(inst, K, T_up, variant, windows=windows,
                              paper_exact_makespan=paper_exact, check=check, **tight)
    start = mip_start(h, x_ref, sim) if hotstart else None
    return model, h, start


def _interval_method(variant: str, hot_from_ga: bool = False):
    def run(inst: DeltaInstance, cfg: RunConfig) -> MethodOutput:
        t_start = time.perf_counter()
        if hot_from_ga:                    # DELTA-Joint-HotStart: the GA's topology as reference
            ga = _ga(inst, cfg, share=cfg.option("ga_share"))
            ref = ("delta-fast", ga.x, simulate(inst, ga.x))
        else:
            ref = reference_run(inst)
        ref_name, x_ref, sim = ref
        cfg.budget.keep(sim.solution(x_ref), f"the {ref_name} topology's simulated schedule "
                        "(the MIP start heuristic)", {"reference": ref_name,
                                                      "reference_iteration_time": sim.makespan})
        with cfg.budget.stage("build"):
            model, h, start = prepare_interval(
                inst, variant, ref, prune=cfg.option("prune"), anchors=cfg.option("anchors"),
                margin=cfg.option("margin"), k_pad=cfg.option("k_pad"),
                tighten=cfg.option("tighten"), paper_exact=cfg.option("paper_exact"),
                hotstart=cfg.option("hotstart"), check=cfg.budget.checker())
            cfg.budget.check()
        K = h.K
        t_prep = time.perf_counter() - t_start     # baselines or GA, pruning, model build
        if cfg.option("ports"):              # lexicographic stage (4): fewest circuits at C <= C*
            import gurobipy as gp

            with cfg.budget.stage("milp"):      # stage 1 takes what it needs, stage 2 the rest
                stages = solve_lexicographic(model, [gp.LinExpr(h.C), h.ports], start=start,
                                             rel_tol=cfg.option("port_tol"), **cfg.solve_kw())
            res = stages[-1] if stages[-1].has_solution else stages[0]
            extra = {"milp_stage1_objective": stages[0].objective, **_convergence(stages[0], t_prep)}
        else:
            with cfg.budget.stage("milp"):
                res = solve(model, start=start, **cfg.solve_kw())
            extra = _convergence(res, t_prep)
        extra.update(reference=ref_name, reference_iteration_time=sim.makespan, intervals=K)
        if not res.has_solution:
            return MethodOutput(None, res, extra)
        milp_sol = extract_interval(h, res)
        x = milp_sol.x
        des = evaluate(inst, x, policy="maxmin")
        extra.update(milp_objective=res.objective, des_iteration_time=des["iteration_time"],
                     ideal_iteration_time=des["ideal_iteration_time"])
        if variant == "topo":      # Topo is judged by the fair-share simulator on its topology
            extra.update(_nct_fields(des))
            return MethodOutput(des["sim"].solution(x), res, extra)
        # Joint: its own rate-controlled schedule (spec 4.3), NCT from that schedule
        nct = nct_metrics(inst, makespan_of(inst, milp_sol.finish), milp_sol.start, milp_sol.finish)
        extra.update(_nct_fields(nct))
        return MethodOutput(milp_sol, res, extra)
    return run


def _convergence(res, t_prep: float) -> dict:
    """Fig. 11's convergence time (spec 3.7): preparation (for HotStart the GA too) plus the
    time of the last incumbent improving its predecessor by >= 0.01%; and the incumbent
    trajectory ``[[t, objective], ...]`` on the same clock, for time-to-target comparisons."""
    t = res.converged_s()
    return {"prep_s": t_prep, "converged_s": None if t is None else t_prep + t,
            "incumbents": [[round(t_prep + ti, 6), float(f"{obj:.10g}")]
                           for ti, obj in res.incumbents]}


def run_fts(inst: DeltaInstance, cfg: RunConfig) -> MethodOutput:
    """Fixed-time-step MILP (Appendix A); its topology is judged by the simulator. A step
    cutting the reference makespan into more than FTS_SLICES_MAX slices is bad input (an
    OptionError before the model is built; 1e-300 would reach ``int()`` and an allocation)."""
    ref_name, x_ref, sim = reference_run(inst)
    cfg.budget.keep(sim.solution(x_ref), f"the {ref_name} topology's simulated schedule "
                    "(the reference)", {"reference": ref_name})
    step = cfg.option("step") or sim.makespan / 200.0
    if sim.makespan > FTS_SLICES_MAX * step:
        raise OptionError(f"option step: {step:g} ms cuts the reference makespan "
                          f"({sim.makespan:g} ms) into more than {FTS_SLICES_MAX:.0e} slices; "
                          f"expected a step >= {sim.makespan / FTS_SLICES_MAX:.3g} ms")
    model, h = build_fixed_step(inst, step, sim.makespan * (1 + 1e-6), fair=cfg.option("fair"),
                                check=cfg.budget.checker("build"))
    res = solve(model, **cfg.solve_kw())
    extra = {"reference": ref_name, "step_ms": step, "slices": h.T}
    if not res.has_solution:
        return MethodOutput(None, res, extra)
    x = np.round(res.value(h.x))
    des = evaluate(inst, x, policy="maxmin")
    extra.update(milp_objective=h.makespan_ms(res), des_iteration_time=des["iteration_time"],
                 **_nct_fields(des))
    # The solver's bound is in slices and rounds delays up: it bounds the fixed-step optimum,
    # not the true makespan, so it is reported as milp_bound only.
    extra["milp_bound"] = (res.bound - 1.0) * step if res.bound is not None else None
    res.bound = None
    return MethodOutput(des["sim"].solution(x), res, extra)


def metrics(inst: DeltaInstance, sol) -> tuple[list[str], dict]:
    bad, m = check_solution(inst, sol)
    m["lower_bound"] = critical_path_bound(inst)
    m["tasks"] = inst.n_tasks
    return bad, m


GEN_PARAMS = {
    "model": (str, "gpt-7b", f"Table I workload ({', '.join(TABLE_I)})"),
    "from_simai": (str, "", "convert this SimAI/AICB workload file instead of --model "
                   "(instances/delta/simai_job.py; the options marked SimAI apply)"),
    "micro_batches": (int, 0, "micro-batches per iteration (0 = Table I value; SimAI: the "
                      "header's ga, else 8 x PP)"),
    "seq_len": (int, 4096, "sequence length (SimAI: with --hidden, sizes the P2P activation)"),
    "bandwidth_gbps": (float, 400.0, "per-GPU NIC = OCS port bandwidth, Gb/s"),
    "gpu_tflops": (float, 400.0, "effective GPU throughput, TFLOP/s"),
    "p2p_mode": (str, "megatron_blocking", "megatron_blocking or async"),
    "dp_ring": (str, "bidirectional", "bidirectional or unidirectional"),
    "replicas": (str, "canonical", "canonical (replica 0 + orbits) or full"),
    "form": (str, "job", "job (the description; the DAG is generated on load) or derived"),
    "name": (str, "", "instance name"),
    "pp": (int, 0, "SimAI: pipeline stages (0 = the header's pp, else 1)"),
    "dp": (int, 0, "SimAI: data-parallel size (0 = all_gpus / (TP x PP), else two replicas)"),
    "pods": (int, 0, "SimAI: Pods in total (0 = from --gpus-per-pod)"),
    "gpus_per_pod": (int, 0, "SimAI: GPUs per Pod per replica, a multiple of the stage "
                     "(0 = two stages per Pod)"),
    "etp": (int, 0, "SimAI MoE: expert tensor parallelism (0 = TP)"),
    "stages": (str, "file", "SimAI: file (every stage runs the file's program) or split (the "
               "file is the whole model, divided over --pp stages)"),
    "p2p_per_rank": (str, "auto", "SimAI: P2P bytes per TP rank: full activation, split (/TP) "
                     "or auto (split under sequence parallelism)"),
    "hidden": (int, 0, "SimAI: hidden size for the P2P activation when the header has no "
               "pp_comm (0 = the layer rows' TP collective size)"),
    "fold_gbps": (float, 0.0, "SimAI: fold TP/EP collectives into compute at this intra-Pod "
                  "bus bandwidth, Gb/s (0 = the file's compute only)"),
    "vpp": (int, 0, "SimAI: interleaving degree (0 = the header's vpp, else 1); only 1 is "
            "modelled (non-interleaved 1F1B): --vpp 1 converts a file whose header has vpp > 1"),
    "lenient": (bool, False, "SimAI: accept a row count on line 2 that disagrees with the rows "
                "(one warning on stderr)"),
}


def generate(model="gpt-7b", micro_batches=0, seq_len=4096, bandwidth_gbps=400.0, gpu_tflops=400.0,
             p2p_mode="megatron_blocking", dp_ring="bidirectional", replicas="canonical",
             form="job", name="", from_simai="", **simai) -> DeltaInstance:
    if form not in ("job", "derived"):
        raise InstanceError("form", f"must be job or derived, got {form!r}")
    if from_simai:
        from instances.delta.simai_job import convert_simai

        inst = convert_simai(from_simai, name=name, micro_batches=micro_batches, seq_len=seq_len,
                             bandwidth_gbps=bandwidth_gbps, p2p_mode=p2p_mode, dp_ring=dp_ring,
                             replicas=replicas, **simai)
        if form == "derived":
            inst.job = None
        return inst
    given = [k for k, v in simai.items() if k not in GEN_PARAMS or v != GEN_PARAMS[k][1]]
    if given:
        raise InstanceError(given[0], f"--{given[0].replace('_', '-')} applies only with --from-simai")
    if model not in TABLE_I:
        raise InstanceError("model", f"unknown workload {model!r} (known: {', '.join(TABLE_I)})")
    job = dict(TABLE_I[model])
    if micro_batches:
        job["micro_batches"] = micro_batches
    job.update(seq_len=seq_len, bandwidth_gbps=bandwidth_gbps, gpu_tflops=gpu_tflops,
               p2p_mode=p2p_mode, dp_ring=dp_ring, replicas=replicas)
    auto = f"{model}-n{job['micro_batches']}-seq{seq_len}-{bandwidth_gbps:g}g"
    inst = from_job(job, name=name or auto)
    if form == "derived":
        inst.job = None
    return inst


# option maxima (decisions): above them a value is bad input, not a run
POP_MAX = 10**5          # GA population: each generation simulates up to this many topologies
GENERATIONS_MAX = 10**7  # generation and stall caps (the GA has no clock of its own by default)
K_PAD_MAX = 10**4        # extra intervals: the interval model grows with K = events + k_pad
MARGIN_MAX = 10**6       # window margin, intervals: wider than any K is "no anchor"; numpy int64
STEP_MAX = 1e9           # ms; a step above the reference makespan is one slice
FTS_SLICES_MAX = 10**6   # reference makespan / step: the FTS model has 4 x tasks x slices variables
POLICY = (Option("policy", str, "maxmin", "simulator rate rule: max-min fair over links and NICs, "
                 "or link_equal (the paper's Eq. 17; an error when tasks share a NIC)", choices=("maxmin", "link_equal")),)
GA_OPTIONS = (
    Option("pop", int, 64, "population size", minimum=2, maximum=POP_MAX),
    Option("generations", int, 5000, "generation cap", minimum=1, maximum=GENERATIONS_MAX),
    Option("stall", int, 200, "stop after this many generations without improvement", minimum=1,
           maximum=GENERATIONS_MAX),
    # numpy's SeedSequence takes any non-negative integer (a negative one is a ValueError)
    Option("seed", int, 0, "random seed", minimum=0, maximum=math.inf),
    Option("workers", int, 1, "fitness worker processes", minimum=1, maximum=MAX_WORKERS),
    Option("ga_time_limit", float, 0.0, "GA time cap, s (0: none of its own; --time-limit caps it)",
           minimum=0, maximum=MAX_SECONDS),
)
INTERVAL_OPTIONS = (
    Option("prune", bool, True, "Algorithm 1 windows: only the kept task-time variables"),
    Option("anchors", bool, True, "anchor the windows at the reference simulation"),
    Option("margin", int, 2, "window margin, intervals", minimum=0, maximum=MARGIN_MAX),
    Option("k_pad", int, 2, "intervals added to the reference's events: max(k_pad, 5%)", minimum=0,
           maximum=K_PAD_MAX),
    Option("tighten", bool, True, "spec 2.1 valid inequalities (prune=0 tighten=0: the paper's model)"),
    Option("paper_exact", bool, False, "Eq. 18 as printed (no tails)"),
    Option("hotstart", bool, True, "the reference's simulated schedule as MIP start"),
    Option("ports", bool, False, "lexicographic stage (Eq. 4): fewest circuits at C <= C* (1 + port_tol)"),
    Option("port_tol", float, 1e-6, "relative slack on C* in the ports stage", minimum=0,
           maximum=1e6),                 # C <= C* (1 + tol): finite, a bound a solver can take
)
HOTSTART_OPTIONS = INTERVAL_OPTIONS + GA_OPTIONS + (
    Option("ga_share", float, 0.5, "largest share of the time budget the GA may take (the MILP "
           "gets the rest)", minimum=0, maximum=1),)
FTS_OPTIONS = (
    Option("step", float, 0.0, "time step, ms (0: the reference makespan / 200; at most "
           f"{FTS_SLICES_MAX:.0e} slices of it)", minimum=0, maximum=STEP_MAX),
    Option("fair", bool, False, "add Eq. 29 (fair sharing)"),
)

register_problem(Problem(
    name="delta",
    summary="DAG-aware OCS logical topology for one LLM training job across pods (Ye et al. 2026)",
    check=metrics,
    objective="iteration_time",
    sense="min",
    metrics=("iteration_time", "nct", "nct_exposed", "nct_chain", "ideal_iteration_time", "lower_bound",
             "ports_used", "port_ratio", "pod_ports_used", "tasks", "milp_objective", "des_iteration_time",
             "reference", "intervals", "step_ms", "slices", "generations", "evaluations", "ga_stop",
             "prep_s", "converged_s"),
    methods={m.name: m for m in [
        Method("prop-alloc", "heuristic", _baseline("prop-alloc"),
               "Prop-Alloc baseline (from SiP-ML): circuits proportional to traffic volume",
               POLICY),
        Method("sqrt-alloc", "heuristic", _baseline("sqrt-alloc"),
               "Sqrt-Alloc baseline: circuits proportional to sqrt(volume)", POLICY),
        Method("iter-halve", "heuristic", _baseline("iter-halve"),
               "Iter-Halve baseline (from TopoOpt): heaviest pair gets a circuit, weight halves",
               POLICY),
        Method("delta-joint", "model", _interval_method("joint"),
               "DELTA-Joint: variable-length-interval MILP (Eqs. 3-16, 18), topology + rate control",
               INTERVAL_OPTIONS),
        Method("delta-topo", "model", _interval_method("topo"),
               "DELTA-Topo: the interval MILP with fair sharing (Eq. 17); judged by the simulator",
               INTERVAL_OPTIONS),
        Method("delta-fast", "heuristic", run_fast,
               "DELTA-Fast: genetic algorithm over topologies, simulator fitness (Algs. 2-6)",
               GA_OPTIONS),
        Method("delta-joint-hotstart", "model", _interval_method("joint", hot_from_ga=True),
               "DELTA-Joint with DELTA-Fast's topology as MIP start, T_up, K and anchors",
               HOTSTART_OPTIONS),
        Method("delta-fts", "model", run_fts,
               "fixed-time-step MILP of Appendix A (Eqs. 19-30); judged by the simulator",
               FTS_OPTIONS),
    ]},
    default_method="sqrt-alloc",
    bound=critical_path_bound,
    generator=Generator(generate, GEN_PARAMS),
))
