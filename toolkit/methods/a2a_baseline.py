"""a2a baselines of the paper (Sec. 5.1, spec 4.2 reconstructions) for ``solve.py --method``.

FAST and DirectConnect may split flows (A23): their strategies are marked splittable and are
reported against the fluid lower bound (``toolkit.methods.a2a.metrics``).
"""
from __future__ import annotations

from toolkit.registry import lazy, Method, MethodOutput, RunConfig

# heuristics and models load on first use (solve.py list and --help stay fast)
topoopt_declines = lazy("heuristics.a2a.baselines", "topoopt_declines")


def _baseline(name):
    def run(inst, cfg: RunConfig) -> MethodOutput:
        from heuristics.a2a.baselines import BASELINES

        st = BASELINES[name](inst)
        return MethodOutput(st, metrics={"family": name})
    return run


def baseline_methods(k2_size: tuple, k2_declines) -> list[Method]:
    """The baselines; ``k2_size`` are rdc's k >= 2 size-cap options and ``k2_declines`` its
    check of them (toolkit.methods.a2a, which imports this module)."""
    return [
        Method("mixnet", "heuristic", _baseline("mixnet"),
               "baseline MixNet (static traffic-aware greedy topology; spec 4.2 reconstruction)"),
        Method("fast", "heuristic", _baseline("fast"),
               "baseline FAST (BvN, k permutations per reconfiguration, one hop; spec 4.2)",
               relaxation=True),
        Method("directconnect-gk", "heuristic", _baseline("directconnect-gk"),
               "baseline DirectConnect, GenKautz + G5 MCF LP routing (spec 4.2)", relaxation=True),
        Method("directconnect-circulant", "heuristic", _baseline("directconnect-circulant"),
               "baseline DirectConnect, circulant + G5 MCF LP routing (spec 4.2)",
               k2_size, applicable=k2_declines, relaxation=True),
        Method("topoopt", "heuristic", _baseline("topoopt"),
               "baseline TopoOpt (shifted coprime rings, one shortest path; spec 4.2)",
               applicable=lambda inst, cfg: topoopt_declines(inst.n, inst.k)),
    ]
