"""The OCS side of the LumosCore running stage in the simulator ([002] Fig. 3, spec 3).

Per admitted job that crosses Pods: leaf-level requirement L = L1 + L2 (spec 2.10, the
K_leaf cap by sharing), logical topology by Heuristic-Decomposition (spec 2.7), OCS
reconfiguration from the running configuration by a registered ``lumos-reconfig``
method (ITV-MDMCF, ITV-MCF, ITV-ILP under Cross Wiring; Uniform-Greedy, Uniform-ILP,
Helios under Uniform wiring), and the network the flows see afterwards: the realized
logical links R[h, i, j] and the planned routing L_abh (spec 2.7 "Routing").

Decisions (the papers are silent):
* a job inside one Pod has L1 = 0 and triggers no reconfiguration (its traffic never
  crosses the OCS layer);
* on completion the job's L1 is subtracted from L ([REPO], spec 3 step 6) but the circuits
  stay until the next reconfiguration (tearing them down serves nobody);
* the wall time of requirement + logical topology + reconfiguration is measured and
  returned: [001] adds it to the job's waiting time (spec 2.12, JWT).
Each job's L1 is kept sparse (its nonzero pairs), L as one dense array.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from heuristics.lumos_logical import heuristic_decomposition
from heuristics.lumos_requirement import leaf_requirement
from instances.lumos import OcsConfig, ReconfigInstance, make_wiring
from instances.lumos_check import config_metrics, fibre_paths, realized_topology
from instances.lumos_logical import LogicalInstance
from instances.lumos_placement import Cluster, Placement
from toolkit.registry import RunConfig, problem


@dataclass
class Reconfiguration:
    """What one admission did to the OCS layer."""

    t: float                  # simulated time it was decided
    wall_s: float             # measured algorithm time (requirement, topology, OCS)
    sharing: bool             # the job's L1 was scaled down by the K_leaf cap
    method: str
    metrics: dict = field(default_factory=dict)   # instances.lumos_check.config_metrics


class OcsController:
    """Keeps L, the OCS configuration, R and the routing of one OCS fabric."""

    def __init__(self, cluster: Cluster, wiring: str = "cross", method: str = "itv-mdmcf",
                 cfg: RunConfig | None = None, check: bool = False):
        self.cluster, self.fabric = cluster, cluster.fabric
        self.wiring, self.method, self.check = wiring, method, check
        self.cfg = cfg or RunConfig(backend="auto")
        self._prob = problem("lumos-reconfig")
        self._method = self._prob.methods[method]
        n = self.fabric.n_leaves
        self.L = np.zeros((n, n), dtype=np.int64)
        self.job_L1: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self.config = OcsConfig.empty(self.fabric, make_wiring(self.fabric, wiring))
        self.R = np.zeros((self.fabric.H, self.fabric.pods, self.fabric.pods), dtype=np.int64)
        self.routes = np.zeros((0, 4), dtype=np.int64)
        self.version = 0          # bumps whenever R or the routes change
        # a lumos-reconfig method run when ``method`` returns no configuration (an ILP
        # stopped by its time limit before any incumbent); None: that is an error
        self.fallback: str | None = None
        self.solver_results: list = []    # the solver Result of every run that had one
        self.fallbacks = 0                # reconfigurations made by ``fallback``

    # ------------------------------------------------------------------------------------
    def admit(self, placement: Placement, job_id: int, t: float) -> Reconfiguration | None:
        """Add the job's requirement and reconfigure; None when it stays inside a Pod."""
        if len(placement.pods()) < 2:
            return None
        t0 = time.perf_counter()
        req = leaf_requirement(placement, [self.L])
        if not req.L1.any():
            return None
        a, b = np.nonzero(np.triu(req.L1, 1))
        self.job_L1[job_id] = (a, b, req.L1[a, b])
        self.L = req.L
        split = heuristic_decomposition(LogicalInstance(self.fabric, self.L))
        C = split.topology(self.fabric)
        inst = ReconfigInstance(self.fabric, C, self.wiring, self.config)
        out = self._method.run(inst, self.cfg)
        method = self.method
        if out.solver is not None:
            self.solver_results.append(out.solver)
        if out.solution is None and self.fallback:
            method = self.fallback
            self.fallbacks += 1
            out = self._prob.methods[method].run(inst, self.cfg)
        if out.solution is None:
            raise RuntimeError(f"{self.method} found no configuration at t = {t:.1f} s "
                               f"(job {job_id}): {out.solver and out.solver.message}")
        if self.check:
            bad, _ = self._prob.check(inst, out.solution)
            if bad:
                raise RuntimeError(f"{self.method} configuration fails its checker: {bad[0]}")
        wall = time.perf_counter() - t0
        paths = fibre_paths(self.fabric, inst.wire, out.solution.perm)
        self.R = realized_topology(self.fabric, paths)
        m = config_metrics(inst, paths, self.R)
        rec = Reconfiguration(t, wall, req.sharing, method, {k: m[k] for k in (
            "rewiring", "circuits", "links", "links_added", "links_removed",
            "reallocated_share", "shortfall")})
        self.config = out.solution
        self.routes = split.entries
        self.version += 1
        return rec

    def release(self, job_id: int) -> None:
        """Subtract a finished job's L1 (spec 3 step 6); circuits stay."""
        if job_id in self.job_L1:
            a, b, v = self.job_L1.pop(job_id)
            self.L[a, b] -= v
            self.L[b, a] -= v
