"""The a2a problem type for the command line: methods, checker metrics, bound, generator."""
from __future__ import annotations

from math import comb, inf

from instances.a2a.instance import A2AInstance, check_strategy
from instances.a2a.workloads import generate
from toolkit.options import Option, OptionError
from toolkit.registry import (lazy, option_or, Generator, Method, MethodOutput, Problem,
                              RunConfig, register_problem)

# heuristics and models load on first use (solve.py list and --help stay fast)
fluid_lower_bound = lazy("heuristics.a2a.bounds", "fluid_lower_bound")
lower_bound = lazy("heuristics.a2a.bounds", "lower_bound")
k1_candidate = lazy("heuristics.a2a.rdc", "k1_candidate")
rdc = lazy("heuristics.a2a.rdc", "rdc")
direct_round_robin = lazy("heuristics.a2a.strategy", "direct_round_robin")
realize = lazy("heuristics.a2a.strategy", "realize")

MAX_PATH_ENTRIES = 60_000_000   # a materialized strategy larger than this is declined
K2_MAX_N = 64              # k >= 2: the families are built for n <= 64 (spec's evaluation range)
K2_MAX_BASE_SETS = 5000    # k >= 2: exhaustive base-generator search over C(n-1, k) sets
FAMILIES = ("circulant", "genkautz", "genkautz-literal")      # heuristics.a2a.rdc.FAMILIES
# option maxima (decisions): above them a value is bad input, not a run
K2_MAX_N_CAP = 2048        # max_n: beyond n ~ 1415, C(n-1, 2) > K2_BASE_SETS_CAP anyway
K2_BASE_SETS_CAP = 10**6   # ~19 ms per base set at n = 128: about 5 h of search

K2_SIZE = (
    Option("max_n", int, K2_MAX_N, "k >= 2: decline n above this", minimum=0,
           maximum=K2_MAX_N_CAP),
    Option("max_base_sets", int, K2_MAX_BASE_SETS, "k >= 2: decline when the circulant base "
           "search scans more generator sets", minimum=0, maximum=K2_BASE_SETS_CAP))
K2_OPTIONS = (Option("families", str, ",".join(FAMILIES),
                     "k >= 2: comma list of the topology families"),) + K2_SIZE
RDC_OPTIONS = (
    Option("order", str, "greedy", "k >= 2 contraction order", choices=("greedy", "seq", "contract")),
    Option("relabel", bool, True, "relabel GPUs for skewed traffic"),
    # the defaults are the spec's budget (3.7): every candidate, 4 restarts, 50 passes
    Option("relabel_top", int, 0, "candidates relabeled, cheapest first (0: every one)",
           minimum=0, maximum=10**4),
    # a pass without an improvement (or evaluations left) stops the search
    Option("passes", int, 50, "relabeling local-search passes", minimum=0, maximum=10**6),
    # each restart costs O(n^2), evaluations left or not
    Option("restarts", int, 4, "relabeling random restarts", minimum=0, maximum=10**4),
    # an evaluation is one swap, O(n k); 0: the spec's whole budget up to n = 64 (5 starts x
    # 50 passes x 2016 swaps), 504,000 * 64 / n swaps above (heuristics.a2a.relabel)
    Option("max_evals", int, 0, "relabeling swap evaluations per candidate, all starts "
           "together (0: the spec's budget up to n = 64, the same work above)", minimum=0,
           maximum=10**8),
    # numpy's SeedSequence takes any non-negative integer (a negative one is a ValueError)
    Option("seed", int, 0, "random seed", minimum=0, maximum=inf)) + K2_OPTIONS

GK_LITERAL_OPTIONS = tuple(o for o in RDC_OPTIONS if o.name not in ("order", "families",
                                                                    "max_base_sets"))


def _relabel_kernels(inst, cfg) -> tuple:
    """The compiled relabeling search (toolkit.kernels "a2a-relabel"), where it runs."""
    if inst is not None and inst.is_uniform or not option_or(cfg, "relabel", True):
        return ()
    return ("a2a-relabel",)


def _families(cfg: RunConfig) -> tuple:
    fams = tuple(f for f in cfg.option("families").split(",") if f)
    if not fams or any(f not in FAMILIES for f in fams):
        raise OptionError(f"option families: expected a comma list of {', '.join(FAMILIES)}")
    return fams


def run_rdc(inst: A2AInstance, cfg: RunConfig, families=None, direct: bool = True
            ) -> MethodOutput:
    res = rdc(inst, order=option_or(cfg, "order", "greedy"), families=families or _families(cfg),
              do_relabel=cfg.option("relabel"), relabel_top=cfg.option("relabel_top") or None,
              relabel_opts=dict(passes=cfg.option("passes"), restarts=cfg.option("restarts"),
                                max_evals=cfg.option("max_evals") or None,
                                seed=cfg.option("seed")),
              direct=direct)
    st = realize(res.best, inst, res.label)
    st.info.update(d=res.d, analytic_cost=res.cost)
    costs = [r["total_cost"] for r in res.table]
    return MethodOutput(st, metrics={"family": res.best.family, "analytic_cost": res.cost,
                                     "candidates": len(costs)})


def run_gk_literal(inst: A2AInstance, cfg: RunConfig) -> MethodOutput:
    """The paper's GenKautz schedule (Sec. 4.2, Fig. 9; heuristics.a2a.gk_literal) and its
    contraction chain, every d, cheapest at the instance's R; relabeled like rdc."""
    return run_rdc(inst, cfg, families=("genkautz-literal",), direct=False)


def gk_literal_applicable(inst: A2AInstance, cfg: RunConfig) -> str | None:
    if inst.k < 2:
        return ("GenKautz needs k >= 2 (for k = 1 it is not a ring, spec 3.4; the paper uses "
                "the ring: method rdc)")
    if inst.n > cfg.option("max_n"):
        return (f"k >= 2 families are built for n <= {cfg.option('max_n')} (n = {inst.n}; "
                f"--option max_n=N to force)")
    return None


def k2_declines(inst: A2AInstance, cfg: RunConfig) -> str | None:
    """The k >= 2 families cost grows with C(n-1, k) (exhaustive circulant base search, spec 3.3
    rule 3: ~9 s for n = 64, k = 2 and ~8 s for n = 24, k = 4; 150 s for n = 128, k = 2), so
    they are declined beyond n = 64 or 5000 base sets unless forced by --option max_n / max_base_sets."""
    n, k = inst.n, inst.k
    if k < 2:
        return None
    max_n = cfg.option("max_n")
    max_sets = cfg.option("max_base_sets")
    if n > max_n:
        return f"k >= 2 families are built for n <= {max_n} (n = {n}; --option max_n=N to force)"
    if comb(n - 1, k) > max_sets:
        return (f"the circulant base search would scan C({n - 1}, {k}) = {comb(n - 1, k)} generator "
                f"sets > max_base_sets = {max_sets} (--option max_base_sets=N to force)")
    return None


def rdc_applicable(inst: A2AInstance, cfg: RunConfig) -> str | None:
    n, k = inst.n, inst.k
    reason = k2_declines(inst, cfg)
    if reason:
        return reason
    if k == 1 and not inst.is_uniform and n > 256:
        return f"relabeled k = 1 strategies are built for every d; n = {n} > 256"
    if k == 1 and n * n * (n - 1) // 2 > MAX_PATH_ENTRIES * 4:
        return (f"the materialized strategy is too large to check for n = {n}; the per-d costs are "
                f"in benchmarks/a2a/fig13.py (a2a-fig13)")
    return None


def run_static(inst: A2AInstance, cfg: RunConfig) -> MethodOutput:
    """Never reconfigure: our d = 1 strategy (base ring / best base of the families)."""
    families = _families(cfg)            # checked at k = 1 too, as rdc does
    if inst.k == 1:
        cand = k1_candidate(inst.n, [1])
    else:
        from heuristics.a2a.rdc import base_candidate
        from heuristics.a2a.strategy import FlowTable

        cands = [base_candidate(inst.n, inst.k, f) for f in families]
        cand = min(cands, key=lambda c: FlowTable(c).cost(inst.A, inst.link, inst.R))
    return MethodOutput(realize(cand, inst), metrics={"family": cand.family})


RING_BYTES_PER_ENTRY = 24      # measured: 2.2 GB for the n = 600 ring (1.08e8 path entries)


def static_applicable(inst: A2AInstance, cfg: RunConfig) -> str | None:
    from instances.limits import GIB, max_bytes

    entries = inst.n * inst.n * (inst.n - 1) // 2           # the ring's n(n-1) paths, n/2 hops
    if inst.k == 1 and entries > MAX_PATH_ENTRIES * 4:
        return f"the ring strategy is too large to check for n = {inst.n}"
    if inst.k == 1 and RING_BYTES_PER_ENTRY * entries > max_bytes():
        return (f"the ring strategy for n = {inst.n} would need about "
                f"{RING_BYTES_PER_ENTRY * entries / GIB:.3g} GiB, over the "
                f"{max_bytes() / GIB:.3g} GiB limit (--max-memory GIB)")
    return k2_declines(inst, cfg)


def run_one_hop(inst: A2AInstance, cfg: RunConfig) -> MethodOutput:
    """Always reconfigure: direct round-robin, ceil((n-1)/k) configurations of 1-hop flows."""
    return MethodOutput(realize(direct_round_robin(inst.n, inst.k), inst),
                        metrics={"family": "direct"})


def metrics(inst: A2AInstance, sol) -> tuple[list[str], dict]:
    """Checker metrics plus the lower bound that holds for this strategy: the unsplittable-flow
    bound (spec 2.2, 2.4), or the fluid bound for a strategy marked splittable (FAST,
    DirectConnect; spec A23), which may beat the unsplittable one."""
    bad, m = check_strategy(inst, sol)
    split = m["splittable"]
    lb = fluid_lower_bound(inst) if split else lower_bound(inst)
    m["lower_bound"] = lb
    m["lower_bound_kind"] = "fluid (split flows)" if split else "unsplittable"
    # both 0 when every time underflows (sizes near 1e-320): the strategy meets the bound
    m["ratio_lb"] = m["total_cost"] / lb if lb > 0 else \
        (1.0 if m["total_cost"] == 0 else float("inf"))
    return bad, m


GEN_PARAMS = {
    "workload": (str, "uniform", "uniform, random, zipf (spec 5.2) or example (Sec. 2.3)"),
    "n": (int, 16, "GPUs"),
    "k": (int, 1, "degree = optical switches"),
    "R": (float, 1e-5, "per-reconfiguration delay (s; T-units with --T)"),
    "size_mb": (float, 32.0, "(mean) flow size in MB (in chunks with --T)"),
    "T": (float, 0.0, "> 0: T-unit mode, tau(S) = T * S with S in chunks"),
    "bandwidth_gbps": (float, 800.0, "link bandwidth"),
    "latency_s": (float, 500e-9, "single-hop latency alpha"),
    "chunk_mb": (float, 4.0, "chunk size (simulator)"),
    "seed": (int, 0, "random seed (random, zipf)"),
    "name": (str, "", "instance name (default: derived from the parameters)"),
}


def _methods() -> list[Method]:
    from toolkit.methods.a2a_baseline import baseline_methods
    from toolkit.methods.a2a_model import MODEL_METHODS

    return [
        Method("rdc", "heuristic", run_rdc,
               "ReconfigureDuringCollective (Sec. 4): shifted rings (k=1), circulant/GenKautz "
               "contraction (k>=2), every d, cheapest; relabeling for skewed traffic",
               RDC_OPTIONS, applicable=rdc_applicable, kernels=_relabel_kernels),
        Method("gk-literal", "heuristic", run_gk_literal,
               "the paper's GenKautz schedule (Sec. 4.2, Fig. 9): k^(h-1) rounds per hop h, "
               "prune, merge; contraction for every d, cheapest; relabeling for skewed traffic",
               GK_LITERAL_OPTIONS, applicable=gk_literal_applicable, kernels=_relabel_kernels),
        Method("static", "heuristic", run_static,
               "never reconfigure: our d=1 strategy (ring / best circulant or GenKautz base)",
               K2_OPTIONS, applicable=static_applicable),
        Method("one-hop", "heuristic", run_one_hop,
               "always reconfigure: direct round-robin, ceil((n-1)/k) configurations (Fig. 5)"),
    ] + MODEL_METHODS + baseline_methods(K2_SIZE, k2_declines)


register_problem(Problem(
    name="a2a",
    summary="all-to-all on reconfigurable photonic interconnects: topology sequence + "
            "contention-free rounds (Zhou, Addanki, Apostolaki 2026)",
    check=metrics,
    objective="total_cost",
    sense="min",
    metrics=("total_cost", "lower_bound", "lower_bound_kind", "ratio_lb", "splittable", "d", "n_rounds", "hop_sum",
             "reconfig_time", "transmission_time", "family", "analytic_cost", "simulated_time"),
    methods={m.name: m for m in _methods()},
    default_method="rdc",
    bound=lower_bound,
    generator=Generator(generate, GEN_PARAMS),
))

