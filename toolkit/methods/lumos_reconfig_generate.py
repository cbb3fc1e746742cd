"""``generate lumos-reconfig``: a reconfiguration step (spec 2.4-2.6) from a generated
sequence of logical topologies (job rings, sums of matchings, stubs, or job arrivals and
departures) with an old configuration that a method realized for the preceding topology.
"""
from __future__ import annotations

from instances.lumos.fabric import Fabric
from instances.lumos.instance import ReconfigInstance
from instances.lumos.workloads import job_sequence, random_topology, topology_sequence
from toolkit.registry import lazy

# heuristics load on first use (solve.py list and --help stay fast)
uniform_greedy = lazy("heuristics.lumos.baselines", "uniform_greedy")
itv_configure = lazy("heuristics.lumos.mdmcf.reconfig", "itv_configure")

GEN_PARAMS = {
    "pods": (int, 8, "P, Pods"), "k_leaf": (int, 4, "K_leaf"), "k_spine": (int, 4, "K_spine (even)"),
    "tau": (int, 1, "links per (leaf, spine); H = k_leaf / tau groups"),
    "k_ocs": (int, 512, "OCS ports"), "wiring": (str, "cross", "cross, uniform or dual"),
    "kind": (str, "rings", "rings (job rings), matchings (sum of K perfect matchings), stubs, jobs "
                           "(one job arrival/departure)"),
    "churn": (float, 0.2, "fraction of components replaced from the old topology"),
    "ring_max": (int, 8, "largest job ring (Pods)"), "seed": (int, 0, "random seed"),
    "old": (str, "previous", "previous (old config = the default method's realization of the "
                             "preceding topology), mcf (one step of ITV-MCF's trajectory: its "
                             "reconfiguration to the preceding topology from the one before, an "
                             "old state MDMCF did not choose; cross wiring) or none"),
    "name": (str, "", "instance name"),
}


def generate(pods=8, k_leaf=4, k_spine=4, tau=1, k_ocs=512, wiring="cross", kind="rings", churn=0.2,
             ring_max=8, seed=0, old="previous", name="") -> ReconfigInstance:
    from instances.errors import InstanceError
    from instances.lumos.fabric import WIRINGS
    from instances.lumos.size import guard_reconfig
    from instances.lumos.workloads import KINDS

    fab = Fabric(pods, k_leaf, k_spine, tau, k_ocs)
    if old not in ("previous", "mcf", "none"):
        raise InstanceError("old", f"must be previous, mcf or none, got {old!r}")
    if old == "mcf" and (wiring != "cross" or kind == "stubs"):
        raise InstanceError("old", f"mcf (ITV-MCF's trajectory) needs cross wiring and a sequence "
                                   f"(kind rings, matchings or jobs), got {wiring!r}, {kind!r}")
    if wiring not in WIRINGS:
        raise InstanceError("wiring", f"must be one of {', '.join(WIRINGS)}, got {wiring!r}")
    guard_reconfig(fab, wiring)
    if kind not in KINDS + ("jobs",):
        raise InstanceError("kind", f"must be one of {', '.join(KINDS + ('jobs',))}, got {kind!r}")
    if not 0 <= churn <= 1:
        raise InstanceError("churn", f"must be within [0, 1], got {churn}")
    if ring_max < 2:
        raise InstanceError("ring_max", f"must be >= 2 (a ring joins at least 2 Pods), got {ring_max}")
    if seed < 0:
        raise InstanceError("seed", f"must be >= 0, got {seed}")
    steps = 2 if old == "mcf" else 1    # mcf: the old state is one step of ITV-MCF's trajectory
    if kind == "jobs":
        seq = job_sequence(fab, steps, seed=seed, ring_max=ring_max)
    elif kind == "stubs" or old == "none":
        seq = [random_topology(fab, kind, seed, ring_max)] * 2
    else:
        seq = topology_sequence(fab, steps + 1, kind, churn, seed, ring_max)
    prev = None
    if old == "mcf":
        prev = itv_configure(ReconfigInstance(fab, seq[0], wiring), aware=False)
        prev = itv_configure(ReconfigInstance(fab, seq[1], wiring, prev), aware=False)
    elif old == "previous":
        first = ReconfigInstance(fab, seq[0], wiring)
        prev = {"cross": itv_configure, "uniform": uniform_greedy}.get(wiring)
        if wiring == "dual":
            from heuristics.lumos.mdmcf.reconfig import dual_realize
            prev = dual_realize(fab, seq[0])
        else:
            prev = prev(first)
    auto = f"{wiring}-{kind}-P{pods}-K{k_spine}-H{fab.H}-s{seed}"
    return ReconfigInstance(fab, seq[-1], wiring, prev, name or auto,
                            {"generator": dict(kind=kind, churn=churn, seed=seed, old=old)})
