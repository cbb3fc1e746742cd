"""The ``lumos-reconfig`` model methods: ITV-ILP ([001] ILP (1)-(7)) and Uniform-ILP (spec
2.6), one model per OCS group (groups are independent, spec 2.4) combined into one record
(:func:`combine`, lexicographic for Uniform-ILP: :func:`_lex_group`), and MRAR (eq. 16)
against ITV-ILP (:func:`mrar_metrics`, option ``mrar`` of every method). The problem type
and its heuristics: toolkit.methods.lumos_reconfig.
"""
from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from instances.lumos.check import check_config, lex_base
from instances.lumos.instance import OcsConfig, ReconfigInstance, perm_from_matrix
from toolkit.options import MAX_MODEL_VARS, Option
from toolkit.registry import MethodOutput, RunConfig, lazy

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

MRAR = Option("mrar", bool, False, "add MRAR (eq. 16) against ITV-ILP from the same old configuration")
START = Option("start", bool, True, "a heuristic configuration as MIP start")
MAX_VARS = Option("max_vars", int, ILP_MAX_VARS, "decline above this many binaries per group",
                  minimum=0, maximum=MAX_MODEL_VARS)
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


def check_wiring(inst, want):
    if inst.wiring != want:
        return f"needs {want} wiring (the instance has {inst.wiring})"
    return None


def ilp_applicable(inst: ReconfigInstance, cfg: RunConfig, wiring: str) -> str | None:
    if (reason := check_wiring(inst, wiring)):
        return reason
    per_group = int((inst.C > 0).sum(axis=(1, 2)).max(initial=0)) * inst.fabric.k_spine
    cap = cfg.option("max_vars")
    if per_group > cap:
        return f"about {per_group} binaries per group > max_vars={cap} (--option max_vars=N forces)"
    return None


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
    return MethodOutput(conf, out, mrar_metrics(inst, conf, cfg))


def mrar_metrics(inst: ReconfigInstance, conf: OcsConfig, cfg: RunConfig) -> dict:
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
