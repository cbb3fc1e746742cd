"""The ``lumos-reconfig`` problem type: OCS reconfiguration toward a logical topology C.

Methods (spec 2.4-2.6): Cross Wiring ``itv-mdmcf`` (default), ``itv-mcf``, ``itv-ilp``;
Uniform wiring ``uniform-ilp``, ``uniform-greedy``, ``helios``. Every result is checked by
instances.lumos.check.check_config. Objective: unmet demand (``shortfall``, links of C not
realized; only Uniform wiring may leave any) first, then rewiring, eq. (7): sum |x - u|,
encoded exactly as ``shortfall * lex_base + rewiring`` (instances.lumos.check.lex_base).
The model methods (ITV-ILP, Uniform-ILP) and MRAR: toolkit.methods.lumos_reconfig_ilp.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from instances.lumos.fabric import UNIVERSAL
from instances.lumos.instance import OcsConfig, ReconfigInstance
from instances.lumos.check import check_config, lex_base, old_paths, realized_topology
from toolkit.methods.lumos_reconfig_generate import GEN_PARAMS, generate
from toolkit.methods.lumos_reconfig_ilp import (ITV_ILP_OPTIONS, MRAR, UNIFORM_ILP_OPTIONS,
                                                check_wiring, ilp_applicable, mrar_metrics,
                                                run_itv_ilp, run_uniform_ilp)
from toolkit.options import MAX_MODEL_VARS, MAX_SECONDS, MAX_WORKERS, Option
from toolkit.registry import lazy, option_or, Generator, Method, MethodOutput, Problem, \
    RunConfig, register_problem

# heuristics and models load on first use (solve.py list and --help stay fast)
helios = lazy("heuristics.lumos.baselines", "helios")
uniform_greedy = lazy("heuristics.lumos.baselines", "uniform_greedy")
itv_configure = lazy("heuristics.lumos.mdmcf.reconfig", "itv_configure")

EJECT_WORK = 4.0         # heuristics.lumos.mdmcf.group_split.EJECT_WORK: per OCS port and run
EXACT_VARS = 4000        # heuristics.lumos.mdmcf.group_split.EXACT_VARS: binaries per group
EXACT_WORK = 10          # heuristics.lumos.mdmcf.group_split.EXACT_WORK: HiGHS checkpoints per MIP
LNS = 30.0               # heuristics.lumos.mdmcf.group_split.LNS: LNS work per OCS port
MAX_WORK = 1e6           # work units per OCS port: the budgets stay 64-bit integers (compiled)
MAX_RESTARTS = 1000      # ejection restarts: their option list is built up front

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
        return MethodOutput(conf, metrics=mrar_metrics(inst, conf, cfg))
    return run


def _share_cap(cfg: RunConfig, seconds: float | None) -> float | None:
    """``seconds`` (None: none of its own), at most CLOCKED_SHARE of what is left."""
    left = cfg.budget.share(fraction=CLOCKED_SHARE)
    return seconds if left is None else (left if seconds is None else min(seconds, left))


def _heur(fn):
    def run(inst, cfg):
        conf = fn(inst)
        if cfg.option("mrar"):              # the ITV-ILP reference may meet the time limit
            cfg.budget.keep(conf, "the configuration before MRAR's ITV-ILP reference")
        return MethodOutput(conf, metrics=mrar_metrics(inst, conf, cfg))
    return run


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
               ITV_OPTIONS, applicable=lambda i, c: check_wiring(i, "cross"),
               kernels=mdmcf_kernels),
        Method("itv-mdmcf-lp", "heuristic", run_itv_heuristic(True),
               "ITV-MDMCF then, on groups of at most 16 Pods, an LP-guided step (HiGHS: the LP "
               "bound, the ILP with the old circuits the LP keeps, node-limited; an addition)",
               ITV_LP_OPTIONS, applicable=lambda i, c: check_wiring(i, "cross"),
               kernels=mdmcf_kernels),
        Method("itv-mcf", "heuristic", run_itv_heuristic(False),
               "ITV-MCF: rewiring-oblivious SIMD + FindConnection (MinRewiring MCF baseline)",
               ITV_OPTIONS, applicable=lambda i, c: check_wiring(i, "cross")),
        Method("itv-ilp", "model", run_itv_ilp,
               "ITV-ILP: [001] ILP (1)-(7), linearized MinRewiring, one model per OCS group",
               ITV_ILP_OPTIONS, applicable=lambda i, c: ilp_applicable(i, c, "cross"), exact=True,
               kernels=start_kernels),
        Method("uniform-ilp", "model", run_uniform_ilp,
               "Uniform-ILP: lexicographic min unmet demand, then min rewiring (spec 2.6)",
               UNIFORM_ILP_OPTIONS, applicable=lambda i, c: ilp_applicable(i, c, "uniform"), exact=True),
        Method("uniform-greedy", "heuristic", _heur(uniform_greedy),
               "Uniform-Greedy: keep old circuits, then lowest free OCS per unit (spec 2.6)",
               (MRAR,), applicable=lambda i, c: check_wiring(i, "uniform")),
        Method("realize", "heuristic", run_realize,
               "realizability of C under the instance's wiring (spec 1.4): a configuration or "
               "a proof of failure (odd-set certificate / infeasible colouring ILP)"),
        Method("helios", "heuristic", _heur(helios),
               "Helios: max-weight matching per OCS on the residual demand (spec 2.6)",
               (MRAR,), applicable=lambda i, c: check_wiring(i, "uniform")),
    ]},
    default_method="itv-mdmcf",
    bound=lex_bound,
    generator=Generator(generate, GEN_PARAMS),
    solution_to_file=lambda conf: conf.to_dict(arrays=True),
))
