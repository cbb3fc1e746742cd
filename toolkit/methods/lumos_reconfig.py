"""The ``lumos-reconfig`` problem type: OCS reconfiguration toward a logical topology C.

Methods (spec 2.4-2.6): Cross Wiring ``itv-mdmcf`` (default), ``itv-mcf``, ``itv-ilp``;
Uniform wiring ``uniform-ilp``, ``uniform-greedy``, ``helios``. Every result is checked by
instances.lumos.check.check_config. Objective: unmet demand (``shortfall``, links of C not
realized; only Uniform wiring may leave any) first, then rewiring, eq. (7): sum |x - u|,
encoded exactly as ``shortfall * lex_base + rewiring`` (instances.lumos.check.lex_base).
"""
from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from instances.lumos.fabric import UNIVERSAL
from instances.lumos.instance import OcsConfig, ReconfigInstance, perm_from_matrix
from instances.lumos.check import check_config, lex_base, old_paths, realized_topology
from toolkit.methods.lumos_reconfig_generate import GEN_PARAMS, generate
from toolkit.options import MAX_MODEL_VARS, MAX_SECONDS, MAX_WORKERS, Option
from toolkit.registry import lazy, option_or, Generator, Method, MethodOutput, Problem, \
    RunConfig, register_problem

if TYPE_CHECKING:
    from models.backend import Result

# heuristics and models load on first use (solve.py list and --help stay fast)
helios = lazy("heuristics.lumos.baselines", "helios")
uniform_greedy = lazy("heuristics.lumos.baselines", "uniform_greedy")
itv_configure = lazy("heuristics.lumos.mdmcf.reconfig", "itv_configure")
solve = lazy("models.backend", "solve")
solve_lexicographic = lazy("models.backend", "solve_lexicographic")
build_itv = lazy("models.lumos.ilp", "build_itv")
build_uniform = lazy("models.lumos.ilp", "build_uniform")
extract_itv = lazy("models.lumos.ilp", "extract_itv")
extract_uniform = lazy("models.lumos.ilp", "extract_uniform")
itv_start = lazy("models.lumos.ilp", "itv_start")
uniform_start = lazy("models.lumos.ilp", "uniform_start")

ILP_MAX_VARS = 400_000   # per group; above this the ILPs decline (--option max_vars=N forces)
EJECT_WORK = 4.0         # heuristics.lumos.mdmcf.group_split.EJECT_WORK: per OCS port and run
EXACT_VARS = 4000        # heuristics.lumos.mdmcf.group_split.EXACT_VARS: binaries per group
EXACT_WORK = 10          # heuristics.lumos.mdmcf.group_split.EXACT_WORK: HiGHS checkpoints per MIP
LNS = 30.0               # heuristics.lumos.mdmcf.group_split.LNS: LNS work per OCS port
MAX_WORK = 1e6           # work units per OCS port: the budgets stay 64-bit integers (compiled)
MAX_RESTARTS = 1000      # ejection restarts: their option list is built up front

MRAR = Option("mrar", bool, False, "add MRAR (eq. 16) against ITV-ILP from the same old configuration")
START = Option("start", bool, True, "a heuristic configuration as MIP start")
MAX_VARS = Option("max_vars", int, ILP_MAX_VARS, "decline above this many binaries per group",
                  minimum=0, maximum=MAX_MODEL_VARS)
ITV_OPTIONS = (
    Option("simd", str, "euler", "SIMD step", choices=("euler", "flow")),
    Option("eject", bool, True, "ejection chains with orientation freedom (an addition)"),
    Option("restarts", int, -1, "ejection restarts (-1: none with lns, else by size)", minimum=-1,
           maximum=MAX_RESTARTS),
    Option("eject_work", float, EJECT_WORK, "ejection-chain work budget per OCS port and run, "
           "deterministic (0: none; --time-limit may still stop the chains)", minimum=0,
           maximum=MAX_WORK),
    Option("exact_vars", int, 0, "LP-guided exact step (HiGHS, node limit) on groups whose "
           "reduced ITV-ILP has at most this many binaries (0: off; itv-mdmcf-lp: "
           f"{EXACT_VARS})", minimum=0, maximum=MAX_MODEL_VARS),
    Option("exact_work", int, EXACT_WORK, "work limit of each MIP of the LP-guided step, in "
           "HiGHS MIP checkpoints (deterministic; 0: its node limit only)", minimum=0,
           maximum=MAX_RESTARTS),
    Option("lns", float, LNS, "large-neighbourhood search after the first ejection-chain run "
           "(heuristics.lumos.mdmcf.lns), work units per OCS port, deterministic (0: off, then "
           "restarts by size and FindConnection / keep-and-insert candidates)", minimum=0,
           maximum=MAX_WORK),
    Option("lns_seed", int, 0, "the LNS's random seed (deterministic for a given seed)",
           minimum=0, maximum=math.inf),
    Option("workers", int, 0, "group worker processes (0: 2 at P >= 32 and a share of >= 2 "
           "cores; at most --threads)", minimum=0, maximum=MAX_WORKERS),
    Option("refine", bool, False, "pairwise local search (an addition)"),
    Option("refine_budget", float, 0.0, "refine time budget, s (0: none; --time-limit caps it)",
           minimum=0, maximum=MAX_SECONDS),
    MRAR)
# itv-mdmcf-lp: the same options with the LP-guided step on by default
ITV_LP_OPTIONS = tuple(o if o.name != "exact_vars" else replace(o, default=EXACT_VARS)
                       for o in ITV_OPTIONS)
ITV_ILP_OPTIONS = (Option("model", str, "reduced", "ILP (1)-(7) as printed (full) or reduced",
                          choices=("reduced", "full")), START, MAX_VARS, MRAR)
UNIFORM_ILP_OPTIONS = (
    # an objective weight: finite (inf * 0 unmet is nan), within a solver's coefficient range
    # (1e9 against rewiring's 1); above lex_base it is lexicographic anyway
    Option("lam", float, 0.0, "> 0: minimize lam * unmet + rewiring (0: lexicographic)", minimum=0,
           maximum=1e9),
    START, Option("helios_start", bool, True, "also try Helios for the MIP start"), MAX_VARS, MRAR)


def _old_mats(inst: ReconfigInstance, h: int) -> np.ndarray:
    return np.array([inst.old.matrix(h, k) for k in range(inst.wire.n_ocs)])


def rewiring_bound(inst: ReconfigInstance) -> float | None:
    """Lower bound on eq. (7) under cross/dual wiring: every link of C not in the old
    configuration is 2 new circuits, every old link beyond C 2 removed ones, every old
    unidirectional circuit 1 removed one; except that an old unidirectional circuit
    between two Pods whose pair still lacks a link may be completed by its reverse (1 new
    circuit instead of 2 new and 1 removed), so up to min(such circuits, missing links)
    per pair and spine count 2 less."""
    return float(_rewiring_lb(inst)) if inst.wiring in UNIVERSAL else None


def lex_bound(inst: ReconfigInstance) -> float:
    """Lower bound on the lexicographic objective ``shortfall * B + rewiring`` (B = lex_base),
    any wiring: a configuration that realizes C needs at least :func:`rewiring_bound`'s
    circuit changes (the argument holds for every wiring: each link is a fixed pair of
    circuits), and one that leaves a link unmet has objective >= B."""
    return float(min(_rewiring_lb(inst), lex_base(inst)))


def _rewiring_lb(inst: ReconfigInstance) -> int:
    """The bound of :func:`rewiring_bound`, computed once per instance (the checker's
    metrics and the problem's bound both read it; an instance is not changed once built)."""
    cached = inst.__dict__.get("_rewiring_lb")
    if cached is None:
        cached = inst._rewiring_lb = _rewiring_lb_of(inst)
    return cached


def _rewiring_lb_of(inst: ReconfigInstance) -> int:
    paths = old_paths(inst)
    R = realized_topology(inst.fabric, paths)
    one = paths["wired"] & ~paths["bidir"] & (paths["src_pod"] != paths["dst_pod"])
    W = np.zeros_like(R)                     # one-way circuits per (spine, Pod pair), both ways
    a, b = paths["src_pod"][one], paths["dst_pod"][one]
    np.add.at(W, (paths["h"][one], np.minimum(a, b), np.maximum(a, b)), 1)
    short = np.triu(np.maximum(inst.C - R, 0), 1)            # missing links per pair
    return int(np.abs(inst.C - R).sum() + int((~paths["bidir"]).sum())
               - 2 * np.minimum(W, short).sum())


def _lex_group(stages: list[Result], base: int, lam: float = 0.0) -> Result:
    """One group's uniform-ilp result with objective and bound in the lexicographic
    encoding ``unmet * base + rewiring``. Lexicographic stages: the bound is
    ceil(stage-1 bound) * base, plus stage 2's bound when stage 1 is proven optimal (then
    every lexicographic optimum is in stage 2's feasible set). Weighted (``lam`` > 0):
    base * u + r >= min(1, base / lam) * (lam * u + r), so the weighted bound, scaled."""
    def lb(x):
        return float(np.ceil(x - 1e-6))        # both stage objectives are integers

    if lam > 0:
        res = stages[0]
        if res.bound is not None:
            res.bound = res.bound * min(1.0, base / lam)
        return res
    first, last = stages[0], stages[-1]
    res = last if last.has_solution else first
    if len(stages) == 2 and first.status != "optimal" and res.status == "optimal":
        res.status = "feasible"     # stage 2 is optimal for a non-optimal stage 1 only
    if first.bound is None:
        res.bound = None
        return res
    u_lb = max(lb(first.bound), 0.0)
    proven = first.status == "optimal" and first.objective is not None \
        and u_lb >= round(first.objective)
    if res.has_solution and len(stages) == 2 and last.has_solution:
        res.objective = round(first.objective) * base + last.objective
    elif res.has_solution:
        res.objective = None        # stage 1 only: its rewiring is not known here
    r_lb = lb(last.bound) if proven and len(stages) == 2 and last.bound is not None else 0.0
    res.bound = u_lb * base + max(r_lb, 0.0)
    return res


def combine(results: list[Result], runtime: float) -> Result:
    """One record for the per-group solves (groups are independent, spec 2.4)."""
    from models.backend import Result

    order = ("error", "time_limit_no_solution", "infeasible", "unbounded", "feasible", "optimal")
    status = min((r.status for r in results), key=order.index) if results else "optimal"
    out = Result(status, runtime_s=runtime,
                 backend="/".join(sorted({r.backend for r in results})) or "none",
                 backend_reason=results[0].backend_reason if results else "")
    if status in ("optimal", "feasible"):
        objs = [r.objective for r in results]
        out.objective = None if None in objs else sum(objs)
        out.bound = sum(r.bound if r.bound is not None else -np.inf for r in results)
        out.bound = None if not np.isfinite(out.bound) else out.bound
    out.n_vars = sum(r.n_vars for r in results)
    out.n_int_vars = sum(r.n_int_vars for r in results)
    out.n_constrs = sum(r.n_constrs for r in results)
    out.message = "; ".join(sorted({r.message for r in results if r.message}))
    return out


def _group_kw(cfg: RunConfig, left: int) -> dict:
    """Solve keywords for the next of ``left`` groups: a fair share of the budget left."""
    return {**cfg.solve_kw(), "time_limit": cfg.budget.share(left)}


def _check_wiring(inst, want):
    if inst.wiring != want:
        return f"needs {want} wiring (the instance has {inst.wiring})"
    return None


def mdmcf_kernels(inst, cfg: RunConfig | None) -> tuple[str, ...]:
    """MDMCF's compiled kernel sets (toolkit.kernels): the ejection chains unless
    ``eject=false``, the LNS unless ``lns=0``."""
    if not option_or(cfg, "eject", True):
        return ()
    return ("lumos-chains", "lumos-lns") if option_or(cfg, "lns", LNS) else ("lumos-chains",)


def start_kernels(inst, cfg: RunConfig | None) -> tuple[str, ...]:
    """ITV-ILP's: those of its MIP start, ITV-MDMCF with its default options."""
    return mdmcf_kernels(inst, None) if option_or(cfg, "start", True) else ()


# [DECISION] the share of what is left of a user's --time-limit that the ITV heuristics'
# clocked steps (ejection chains, refine) may take: the rest is for their unclocked steps
# (SIMD, FindConnection, the worker pool) and the check, so the run ends with its result
CLOCKED_SHARE = 0.7


def run_itv_heuristic(aware: bool):
    def run(inst: ReconfigInstance, cfg: RunConfig) -> MethodOutput:
        restarts, workers = cfg.option("restarts"), cfg.option("workers")
        if cfg.threads:                   # the run's thread budget (batch --workers sets 1)
            workers = min(workers or cfg.threads, cfg.threads)
        # the clocks: refine's own budget and --time-limit only (none by default, so the
        # default result does not depend on the machine)
        conf = itv_configure(inst, aware=aware, simd=cfg.option("simd"), refine=cfg.option("refine"),
                             time_budget=_share_cap(cfg, cfg.option("refine_budget") or None),
                             eject=cfg.option("eject"), restarts=None if restarts < 0 else restarts,
                             workers=workers or None, eject_work=cfg.option("eject_work") or None,
                             time_limit=_share_cap(cfg, None), exact_vars=cfg.option("exact_vars"),
                             exact_work=cfg.option("exact_work"), lns=cfg.option("lns"),
                             lns_seed=cfg.option("lns_seed"))
        if cfg.option("mrar"):              # the ITV-ILP reference may meet the time limit
            cfg.budget.keep(conf, "the configuration before MRAR's ITV-ILP reference")
        return MethodOutput(conf, metrics=_mrar(inst, conf, cfg))
    return run


def _share_cap(cfg: RunConfig, seconds: float | None) -> float | None:
    """``seconds`` (None: none of its own), at most CLOCKED_SHARE of what is left."""
    left = cfg.budget.share(fraction=CLOCKED_SHARE)
    return seconds if left is None else (left if seconds is None else min(seconds, left))


def _itv_ilp_config(inst: ReconfigInstance, cfg: RunConfig, keep: bool = False):
    """ITV-ILP group by group; ``keep``: the MIP start is the run's result should the time
    limit stop it (``Budget.keep``)."""
    reduced = cfg.option("model") == "reduced"
    with cfg.budget.stage("start"):
        seed = itv_configure(inst, workers=cfg.threads, time_limit=cfg.budget.cap(None)) \
            if cfg.option("start") else None
    if keep and seed is not None:
        cfg.budget.keep(seed, "the ITV-MDMCF configuration (the MIP start heuristic)")
    conf, results = OcsConfig.empty(inst.fabric, inst.wire), []
    t0 = time.perf_counter()
    H = inst.fabric.H
    for h in range(H):
        with cfg.budget.stage(f"{H} groups"):
            cfg.budget.check(f"group {h + 1} of {H}")
            model, hd = build_itv(inst.C[h], _old_mats(inst, h), reduced=reduced)
            start = itv_start(hd, [seed.matrix(h, k) for k in range(inst.fabric.k_spine)]) \
                if seed else None
            res = solve(model, start=start, **_group_kw(cfg, H - h))
        results.append(res)
        if not res.has_solution:
            return None, combine(results, time.perf_counter() - t0)
        for k, X in enumerate(extract_itv(hd, res)):
            conf.perm[h, k] = perm_from_matrix(X)
        model.dispose()
    return conf, combine(results, time.perf_counter() - t0)


def run_itv_ilp(inst: ReconfigInstance, cfg: RunConfig) -> MethodOutput:
    """ITV-ILP: [001] ILP (1)-(7), one model per group (exact), MIP start from ITV-MDMCF."""
    conf, res = _itv_ilp_config(inst, cfg, keep=True)
    return MethodOutput(conf, res)


def run_uniform_ilp(inst: ReconfigInstance, cfg: RunConfig) -> MethodOutput:
    """Uniform-ILP (spec 2.6 reconstruction of [001]'s Lagrangian model): per group,
    lexicographic min unmet demand, then min rewiring; ``lam=L`` minimizes
    L * unmet + rewiring instead."""
    lam = cfg.option("lam")
    seed = None
    if cfg.option("start"):             # the greedy or Helios solution that places more links
        with cfg.budget.stage("start"):
            seeds = [uniform_greedy(inst)] + ([helios(inst)] if cfg.option("helios_start") else [])
            seed = min(seeds, key=lambda c: check_config(inst, c)[1]["shortfall"])
        cfg.budget.keep(seed, "the Uniform-Greedy / Helios configuration (the MIP start "
                        "heuristic)")
    conf, results = OcsConfig.empty(inst.fabric, inst.wire), []
    t0 = time.perf_counter()
    K, base, H = inst.fabric.k_spine, lex_base(inst), inst.fabric.H
    for h in range(H):
        with cfg.budget.stage(f"{H} groups"):
            cfg.budget.check(f"group {h + 1} of {H}")
            model, hd = build_uniform(inst.C[h], _old_mats(inst, h))
            start = uniform_start(hd, [seed.matrix(h, k) for k in range(K)]) if seed else None
            kw = _group_kw(cfg, H - h)
            if lam > 0:
                model.setObjective(lam * hd.unmet + hd.rewiring)
                res = solve(model, start=start, **kw)
            else:     # the group's share: stage 1 (unmet) at most half, stage 2 the rest
                stages = solve_lexicographic(model, [hd.unmet, hd.rewiring], start=start,
                                             first_share=0.5, **kw)
        res = _lex_group(stages if lam <= 0 else [res], base, lam)
        results.append(res)
        if not res.has_solution:
            return MethodOutput(None, combine(results, time.perf_counter() - t0))
        for k, X in enumerate(extract_uniform(hd, res)):
            conf.perm[h, k] = perm_from_matrix(X)
        model.dispose()
    out = combine(results, time.perf_counter() - t0)   # objective, bound: lexicographic
    return MethodOutput(conf, out, _mrar(inst, conf, cfg))


def _heur(fn):
    def run(inst, cfg):
        conf = fn(inst)
        if cfg.option("mrar"):              # the ITV-ILP reference may meet the time limit
            cfg.budget.keep(conf, "the configuration before MRAR's ITV-ILP reference")
        return MethodOutput(conf, metrics=_mrar(inst, conf, cfg))
    return run


def _mrar(inst: ReconfigInstance, conf: OcsConfig, cfg: RunConfig) -> dict:
    """With ``--option mrar=1``: MRAR (eq. 16) of this step against ITV-ILP from the same
    old configuration (Cross Wiring instances; the reference of [001] Fig. 7)."""
    if not cfg.option("mrar"):
        return {}
    if inst.wiring != "cross":            # its old state is not a Cross configuration
        return {"mrar": None}
    ref = inst
    with cfg.budget.stage("mrar reference"):      # ITV-ILP with its default options
        ilp, _ = _itv_ilp_config(ref, replace(cfg, options={}, declared=ITV_ILP_OPTIONS))
    if ilp is None:
        return {"mrar": None}
    cos_ref = check_config(ref, ilp)[1]["cos_old_new"]
    cos_st = check_config(inst, conf)[1]["cos_old_new"]
    return {"mrar": cos_st / cos_ref if cos_ref else None, "cos_itv_ilp": cos_ref}


def run_realize(inst: ReconfigInstance, cfg: RunConfig) -> MethodOutput:
    """Spec 1.4 realizability check under the instance's wiring (ignores the old
    configuration): a configuration, or status ``infeasible`` with the proof in ``message``."""
    from heuristics.lumos.realize import realize
    from models.backend import Result

    kw = cfg.solve_kw()
    r = realize(inst.fabric, inst.C, inst.wiring, backend=kw["backend"], time_limit=kw["time_limit"])
    extra = {"realizable": r.realizable, "proof": r.proof}
    if r.config is None:
        status = "infeasible" if r.realizable is False else "time_limit_no_solution"
        return MethodOutput(None, Result(status, message=r.proof), extra)
    return MethodOutput(r.config, metrics=extra)


def ilp_applicable(inst: ReconfigInstance, cfg: RunConfig, wiring: str) -> str | None:
    if (reason := _check_wiring(inst, wiring)):
        return reason
    per_group = int((inst.C > 0).sum(axis=(1, 2)).max(initial=0)) * inst.fabric.k_spine
    cap = cfg.option("max_vars")
    if per_group > cap:
        return f"about {per_group} binaries per group > max_vars={cap} (--option max_vars=N forces)"
    return None


def metrics(inst: ReconfigInstance, conf: OcsConfig):
    bad, m = check_config(inst, conf)
    m["lower_bound"] = rewiring_bound(inst)
    m["groups"] = inst.fabric.H
    return bad, m


register_problem(Problem(
    name="lumos-reconfig",
    summary="LumosCore / Cross Wiring OCS reconfiguration with minimal rewiring (Han et al.)",
    check=metrics,
    objective="shortfall_rewiring",
    sense="min",
    metrics=("shortfall_rewiring", "lex_base", "rewiring", "lower_bound", "circuits", "circuits_added", "circuits_removed", "links",
             "links_added", "links_removed", "reallocated_share", "cos_old_new", "demanded_links",
             "realized_links", "shortfall", "realized", "ltrr", "realized_fraction", "mrar",
             "cos_itv_ilp", "realizable", "proof"),
    methods={m.name: m for m in [
        Method("itv-mdmcf", "heuristic", run_itv_heuristic(True),
               "ITV-MDMCF (reconstruction): rewiring-aware SIMD + FindConnection bisection MCFs, "
               "and ejection chains with orientation freedom (an addition); best per group",
               ITV_OPTIONS, applicable=lambda i, c: _check_wiring(i, "cross"),
               kernels=mdmcf_kernels),
        Method("itv-mdmcf-lp", "heuristic", run_itv_heuristic(True),
               "ITV-MDMCF then, on groups of at most 16 Pods, an LP-guided step (HiGHS: the LP "
               "bound, the ILP with the old circuits the LP keeps, node-limited; an addition)",
               ITV_LP_OPTIONS, applicable=lambda i, c: _check_wiring(i, "cross"),
               kernels=mdmcf_kernels),
        Method("itv-mcf", "heuristic", run_itv_heuristic(False),
               "ITV-MCF: rewiring-oblivious SIMD + FindConnection (MinRewiring MCF baseline)",
               ITV_OPTIONS, applicable=lambda i, c: _check_wiring(i, "cross")),
        Method("itv-ilp", "model", run_itv_ilp,
               "ITV-ILP: [001] ILP (1)-(7), linearized MinRewiring, one model per OCS group",
               ITV_ILP_OPTIONS, applicable=lambda i, c: ilp_applicable(i, c, "cross"), exact=True,
               kernels=start_kernels),
        Method("uniform-ilp", "model", run_uniform_ilp,
               "Uniform-ILP: lexicographic min unmet demand, then min rewiring (spec 2.6)",
               UNIFORM_ILP_OPTIONS, applicable=lambda i, c: ilp_applicable(i, c, "uniform"), exact=True),
        Method("uniform-greedy", "heuristic", _heur(uniform_greedy),
               "Uniform-Greedy: keep old circuits, then lowest free OCS per unit (spec 2.6)",
               (MRAR,), applicable=lambda i, c: _check_wiring(i, "uniform")),
        Method("realize", "heuristic", run_realize,
               "realizability of C under the instance's wiring (spec 1.4): a configuration or "
               "a proof of failure (odd-set certificate / infeasible colouring ILP)"),
        Method("helios", "heuristic", _heur(helios),
               "Helios: max-weight matching per OCS on the residual demand (spec 2.6)",
               (MRAR,), applicable=lambda i, c: _check_wiring(i, "uniform")),
    ]},
    default_method="itv-mdmcf",
    bound=lex_bound,
    generator=Generator(generate, GEN_PARAMS),
    solution_to_file=lambda conf: conf.to_dict(arrays=True),
))
