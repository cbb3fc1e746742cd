"""a2a methods that solve math programs: G1-G4 (spec 2.6) for ``solve.py --method``.

The models are the spec's, not the paper's (the paper has no math program). Exact models (G2,
G3) solve one model per d (and per cycle type of P_1 for G2) and report the best strategy; their
bound is min_d (d R + T * model bound_d), a bound on the instance optimum when every d was solved.
"""
from __future__ import annotations

from dataclasses import replace

from toolkit.options import Option, OptionError
from toolkit.registry import lazy, Method, MethodOutput, RunConfig

# heuristics and models load on first use (solve.py list and --help stay fast)
d_max = lazy("heuristics.a2a.bounds", "d_max")
family_candidates = lazy("heuristics.a2a.rdc", "family_candidates")
k1_candidate = lazy("heuristics.a2a.rdc", "k1_candidate")
realize = lazy("heuristics.a2a.strategy", "realize")
solve = lazy("models.backend", "solve")


def _T(inst) -> float:
    return float(inst.link.tau(inst.A[0, 1]))


def _max_n(default: int, cap: int) -> Option:
    """``cap``: the n where one model reaches ~1e8 variables or constraints (a decision)."""
    return Option("max_n", int, default, "decline n above this (exact model too large)", minimum=0,
                  maximum=cap)


# d <= n - 1, checked against the instance at run time; the cap is pmedian's max_n cap
D_OPTION = Option("d", int, 0, "solve only this number of topologies (0: every d, cheapest)",
                  minimum=0, maximum=10**4)


def _uniform_only(inst, cfg, kind: str = "") -> str | None:
    if not inst.is_uniform:
        return "the model is for uniform (unit) flows; this instance's traffic is not uniform"
    if kind == "k1" and inst.k != 1:
        return f"the model is for k = 1 (instance k = {inst.k})"
    cap = cfg.option("max_n")
    if inst.n > cap:
        return f"n = {inst.n} > max_n = {cap} (exact model too large; --option max_n=N to force)"
    return None


def _d_values(inst, cfg) -> list[int]:
    d = cfg.option("d")
    D = d_max(inst.n, inst.k)
    if d > D:
        raise OptionError(f"option d: expected 0 (all) or 1..{D}, got {d}")
    return [d] if d else list(range(1, D + 1))


def _per_d(inst, cfg, solve_d):
    """Run ``solve_d(d, left) -> (candidate or None, [Result])`` for every d; keep the
    cheapest. ``left`` d values remain, this one included: each takes its fair share of
    what is left of the time budget (:func:`_share`)."""
    T, R = _T(inst), inst.R
    ds = _d_values(inst, cfg)
    best = None
    bounds, runtime, statuses = [], 0.0, []
    for i, d in enumerate(ds):
        with cfg.budget.stage(f"{len(ds)} per-d models"):
            cand, results = (None, [_skipped()]) if cfg.budget.remaining() == 0 else \
                solve_d(d, len(ds) - i)
        runtime += sum(r.runtime_s for r in results)
        statuses += [r.status for r in results]
        feas = [r.bound for r in results if r.status != "infeasible"]
        if feas and all(b is not None for b in feas):
            bounds.append(R * d + T * min(feas))
        elif feas:
            bounds.append(None)
        if cand is not None:
            cost = R * cand.d + T * cand.hop_sum
            if best is None or cost < best[0] - 1e-12:
                best = (cost, cand, results)
    if best is None:
        res = replace(results[0], status="time_limit_no_solution", runtime_s=runtime)
        return MethodOutput(None, res)
    res = replace(max(best[2], key=lambda r: r.status == "optimal"), runtime_s=runtime)
    all_opt = all(s in ("optimal", "infeasible") for s in statuses)
    res.status = "optimal" if all_opt else "feasible"
    whole = len(ds) == d_max(inst.n, inst.k) and None not in bounds and bounds
    res.bound = min(bounds) if whole else None
    res.objective = best[0]
    return MethodOutput(realize(best[1], inst), res, {"family": best[1].family,
                                                     "milp_objective": best[0]})


def _skipped():
    """The Result of a model not solved because the time budget was used up (no bound)."""
    from models.backend import Result

    return Result("time_limit_no_solution", message="not solved: the time budget was used up")


def _share(cfg: RunConfig, parts: int) -> dict:
    """Solve keywords with a fair share of the budget left for the next of ``parts`` models.
    No IIS: an infeasible per-d (or per-cycle-type) model is part of the enumeration, not
    an infeasible instance."""
    return {**cfg.solve_kw(), "time_limit": cfg.budget.share(parts), "iis_path": None}


def run_pmedian(inst, cfg: RunConfig) -> MethodOutput:
    """G1 for every d: the best shift set of each d (regional optimum), cheapest d."""
    from models.a2a.milp import build_pmedian, extract_pmedian

    def solve_d(d, left):
        model, h = build_pmedian(inst.n, d)
        res = solve(model, **_share(cfg, left))
        if not res.has_solution:
            return None, [res]
        return k1_candidate(inst.n, extract_pmedian(h, res), "pmedian"), [res]
    out = _per_d(inst, cfg, solve_d)
    if out.solver is not None:
        out.solver.bound = None          # in-family optimum: not a bound on the instance
    return out


def run_exact_k1(inst, cfg: RunConfig) -> MethodOutput:
    """G2 per d, per cycle type of P_1, below the shifted rings' hop sum (GREEDY order).

    [DECISION] Each d looks only for strategies strictly better than the shifted rings of
    that d (``models.a2a.milp.exact_k1_search``); when every type is solved, the better of
    the two is the optimum of that d, reported by one summary Result (objective = bound =
    that hop sum); a type stopped by the time limit leaves the d unproven ("feasible")."""
    from heuristics.a2a.bounds import thm1_lb_T
    from heuristics.a2a.rdc import k1_curve
    from models.a2a.milp import cycle_types, exact_k1_search
    from models.backend import Result

    n_types = len(cycle_types(inst.n))
    shifts, hops = k1_curve(inst.n)
    # the d whose rings miss Theorem 1 are the only ones that solve models: they share the time
    open_ds = [d for d in _d_values(inst, cfg) if hops[d - 1] > thm1_lb_T(inst.n, d)]

    def solve_d(d, left):
        later = sum(1 for dd in open_ds if dd > d)

        def solve_one(model, types_left):
            if cfg.budget.remaining() == 0:
                return _skipped()
            return solve(model, **_share(cfg, later * n_types + types_left))
        best, results = exact_k1_search(inst.n, d, hops[d - 1] - 1, solve_one)
        if best is None:
            best = k1_candidate(inst.n, shifts[:d])
        proven = all(r.status in ("optimal", "infeasible") for r in results)
        v = float(best.hop_sum)
        what = dict(status="optimal" if proven else "feasible", objective=v, bound=v,
                    message=f"G2 over {len(results)} of {n_types} cycle types below the "
                            f"shifted rings' {hops[d - 1]}")
        results.append(replace(results[-1], runtime_s=0.0, x=None, **what) if results
                       else Result(**what))
        return best, results
    return _per_d(inst, cfg, solve_d)


def run_exact_te(inst, cfg: RunConfig) -> MethodOutput:
    """G3 per d (rounds per topology: option rho, default n - 1). Its bound bounds the
    instance with every d and at least the spec's n - 1 rounds (spec 2.6 G3 takes rho = n - 1
    as exact: unused rounds cost 0); with fewer rounds, or one d, it reports none."""
    from models.a2a.te import build_te, extract_te

    rho = cfg.option("rho") or None

    def solve_d(d, left):
        model, h = build_te(inst.n, inst.k, d, rho=rho)
        res = solve(model, **_share(cfg, left))
        return (extract_te(h, res) if res.has_solution else None), [res]
    out = _per_d(inst, cfg, solve_d)
    if rho is not None and rho < inst.n - 1 and out.solver is not None:
        out.solver.bound = None     # fewer rounds than the spec's n - 1: a restricted model
    return out


def run_pack_ilp(inst, cfg: RunConfig) -> MethodOutput:
    """G4 on our static (d = 1) topology and its generic/circulant paths: the packer's gap."""
    from models.a2a.te import build_packing, extract_packing

    if inst.k == 1:
        cand = k1_candidate(inst.n, [1])
    else:
        cand = family_candidates(inst.n, inst.k, cfg.option("family"))[0]
    arcs, rounds = cand.phases[0]
    paths = [tuple(int(v) for v in p) for r in rounds for P in r for p in P]
    model, h = build_packing(paths, arcs, len(rounds))
    res = solve(model, **cfg.solve_kw())
    if not res.has_solution:
        return MethodOutput(None, res)
    out = extract_packing(h, res)
    res.bound = None                      # fixed topology and paths: not an instance bound
    return MethodOutput(realize(out, inst), res, {"family": f"{cand.family}+g4",
                                                  "milp_objective": res.objective,
                                                  "heuristic_hop_sum": cand.hop_sum})


def _k1(inst, cfg):
    return _uniform_only(inst, cfg, "k1")


MODEL_METHODS = [
    Method("pmedian", "model", run_pmedian,
           "G1 (spec 2.6, not in the paper): optimal shift set per d (p-median), k=1, cheapest d",
           (D_OPTION, _max_n(64, 10**4)), applicable=_k1),        # n^2 per model
    Method("exact-k1", "model", run_exact_k1,
           "G2 (spec 2.6): exact k=1 global optimum for unit flows, one MILP per d and cycle type",
           (D_OPTION, _max_n(8, 39)), applicable=_k1, exact=True),  # ~n^5 walk steps
    Method("exact-te", "model", run_exact_te,
           "G3 (spec 2.6): exact time-expanded MILP, any k, tiny n, one MILP per d",
           # y: d rho n(n-1) (n-1) n(n-1) ~ n^7 at d = rho = n - 1; more rounds than the
           # n(n-1) <= 156 flows (n <= 13) never help
           (D_OPTION, Option("rho", int, 0, "rounds per topology (0: n - 1)", minimum=0,
                             maximum=1000),
            _max_n(4, 13)), applicable=_uniform_only, exact=True),
    Method("pack-ilp", "model", run_pack_ilp,
           "G4 (spec 2.6): optimal round packing of our d=1 topology's fixed paths",
           (Option("family", str, "genkautz", "k >= 2: the topology family (k = 1: the ring)",
                   choices=("genkautz", "circulant")), _max_n(8, 464)),   # ~n^3 a[p, r]
           applicable=_uniform_only),
]
