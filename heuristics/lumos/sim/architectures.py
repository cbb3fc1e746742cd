"""The architectures the LumosCore papers simulate ([002] §6.3-6.4, [001] §6.3; spec 4.1).

``make_arch(name, n_gpus, ...)`` returns an ``Arch``: the cluster geometry placement sees,
the network the flows see, and for OCS fabrics the controller that reconfigures it.

* ``best``: an ideal electrical switch with infinitely many 1.6 Tb/s ports (spec 2.12);
  placement on the LumosCore(51.2T, tau = 2) geometry (it does not matter: no contention).
* ``clos-<chip>-<t>tier``: a t-tier Clos of <chip> switches with ECMP; the port speed is
  the fastest of 1.6T / 800G / 400G / 200G whose Clos holds the cluster ([002] §6.3:
  "the Clos network is compelled to reduce the per-port bandwidth or increase the network
  layer"); ``ecmp`` polarized (default, [002] §1, §6.4) or independent.
* ``lumos-<chip>-tau<t>``: LumosCore (Cross Wiring) of <chip> switches at 1.6 Tb/s,
  K_leaf = K_spine = chip / 1.6T / 2, tau = t, reconfigured by ``reconfig`` (ITV-MDMCF by
  default; ITV-MCF, ITV-ILP);
* ``uniform-<chip>-tau<t>``: the same fabric with Uniform wiring, reconfigured by
  ``reconfig`` (Uniform-Greedy by default; Uniform-ILP, Helios): [001]'s baseline.

``layout`` (``server`` by default, or ``rail``: [002] Fig. 24) is the intra-Pod wiring of
GPUs to leaves / ToRs (``instances.lumos.placement`` module docstring); it applies to every
architecture (Best ignores it: no links). ``rail_rule`` (``lane-pairs`` by default, or
``leaf-pairs``) is the OCS controller's leaf-level requirement rule in the rail layout
(``heuristics.lumos.requirement``); Best and the Clos have no requirement and ignore it.

[001] §6.3's fabric is ``lumos-51.2T-tau1`` / ``uniform-51.2T-tau1`` (K = 16, 256 GPUs per
Pod: 8192 GPUs = 32 Pods, spec 5.2 [DECISION]); [002] §6.3's are the three LumosCore and
three Clos variants of spec 4.1.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from heuristics.lumos.sim.controller import OcsController
from heuristics.lumos.sim.clos import ClosNetwork, clos_for
from heuristics.lumos.sim.networks import BestNetwork, OcsNetwork
from instances.errors import InstanceError
from instances.lumos.fabric import Fabric
from instances.lumos.placement import Cluster
from toolkit.registry import RunConfig

PORT_GBPS = 1600.0
ARCH_RE = re.compile(r"^(best|clos-(25\.6|51\.2)T-([234])tier|(lumos|uniform)-(25\.6|51\.2)T-tau([12]))$")
DEFAULT_RECONFIG = {"lumos": "itv-mdmcf", "uniform": "uniform-greedy"}


@dataclass
class Arch:
    name: str
    cluster: Cluster
    network: object
    controller: OcsController | None = None

    def network_changed(self) -> None:
        """Rebuild the OCS network from the controller's R and routes."""
        c = self.controller
        self.network = OcsNetwork(self.cluster, c.R, c.routes, PORT_GBPS)


def lumos_cluster(chip_tbps: float, tau: int, n_gpus: int, layout: str = "server") -> Cluster:
    """LumosCore of ``chip_tbps`` switches at 1.6 Tb/s: K = chip / 1.6T / 2 (spec 1.5)."""
    K = int(round(chip_tbps * 1000 / PORT_GBPS)) // 2
    per_pod = K * K // tau
    if n_gpus % per_pod or n_gpus < 2 * per_pod:
        raise InstanceError("gpus", f"LumosCore({chip_tbps}T, tau={tau}) has {per_pod} GPUs "
                            f"per Pod: the cluster must be a multiple, >= 2 Pods; got {n_gpus}")
    return Cluster(Fabric(n_gpus // per_pod, K, K, tau, max(512, n_gpus // per_pod)), 8, layout)


def arch_names() -> tuple[str, ...]:
    return ("best", "clos-51.2T-3tier", "clos-25.6T-3tier", "clos-25.6T-4tier",
            "lumos-51.2T-tau2", "lumos-51.2T-tau1", "lumos-25.6T-tau1",
            "uniform-51.2T-tau1", "uniform-51.2T-tau2", "uniform-25.6T-tau1")


def make_arch(name: str, n_gpus: int, reconfig: str | None = None, ecmp: str = "polarized",
              cfg: RunConfig | None = None, check: bool = False,
              logical: str = "incremental", layout: str = "server",
              rail_rule: str = "lane-pairs") -> Arch:
    """The architecture ``name`` (module docstring) at ``n_gpus`` GPUs; ``logical``: the
    OCS controller's logical-topology mode (controller module docstring); ``layout``:
    ``server`` or ``rail``; ``rail_rule``: the rail layout's requirement rule (module
    docstring)."""
    m = ARCH_RE.match(name)
    if not m:
        raise InstanceError("arch", f"unknown architecture {name!r}; known: {', '.join(arch_names())}")
    if name == "best":
        cl = lumos_cluster(51.2, 2, n_gpus, layout)
        return Arch(name, cl, BestNetwork(cl, PORT_GBPS))
    if m.group(2):
        chip, tiers = float(m.group(2)), int(m.group(3))
        gbps, k = clos_for(chip, tiers, n_gpus)
        net = ClosNetwork(n_gpus, k, tiers, gbps, ecmp=ecmp, layout=layout)
        return Arch(name, net.cluster, net)
    kind, chip, tau = m.group(4), float(m.group(5)), int(m.group(6))
    cl = lumos_cluster(chip, tau, n_gpus, layout)
    wiring = "cross" if kind == "lumos" else "uniform"
    ctrl = OcsController(cl, wiring, reconfig or DEFAULT_RECONFIG[kind], cfg, check, logical,
                         rail_rule)
    arch = Arch(name, cl, None, ctrl)
    arch.network_changed()
    return arch
