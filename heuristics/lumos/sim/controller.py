"""The OCS side of the LumosCore running stage in the simulator ([002] Fig. 3, spec 3).

Per admitted job that crosses Pods: leaf-level requirement L = L1 + L2 (spec 2.10, the
K_leaf cap by sharing), logical topology by Heuristic-Decomposition (spec 2.7), OCS
reconfiguration from the running configuration by a registered ``lumos-reconfig``
method (ITV-MDMCF, ITV-MCF, ITV-ILP under Cross Wiring; Uniform-Greedy, Uniform-ILP,
Helios under Uniform wiring), and the network the flows see afterwards: the realized
logical links R[h, i, j] and the planned routing L_abh (spec 2.7 "Routing").

Logical topology (``logical``): ``incremental`` (default, an addition) keeps the running
jobs' spines and puts the new job's units on spines with room, existing circuits first
(``heuristics.lumos.logical.extend_split``): running jobs' paths never move, and C changes
only by what the new job needs; when a unit finds no spine, or with ``full`` ([002] as
printed), Heuristic-Decomposition re-splits the whole L, which may move every job's path
and makes the OCS layer rewire accordingly.

``rail_rule`` (``lane-pairs`` by default, or ``leaf-pairs``): the leaf-level requirement's
rule in the rail layout (``heuristics.lumos.requirement`` module docstring; ignored in the
server layout).

Decisions (the papers are silent):
* a job inside one Pod has L1 = 0 and triggers no reconfiguration (its traffic never
  crosses the OCS layer);
* on completion the job's L1 is subtracted from L ([REPO], spec 3 step 6) but the circuits
  stay until the next reconfiguration (tearing them down serves nobody);
* the wall time of requirement + logical topology + reconfiguration is measured and
  returned: [001] adds it to the job's waiting time (spec 2.12, JWT). It is the
  algorithm's time only (issue 28): the controller warms its method's compiled kernels
  when it is built (toolkit.kernels; ``run_task`` already did, before its clock), and any
  time an admission still spends in numba's compiler is left out (``compile_s``).
Each job's L1 is kept sparse (its nonzero pairs), L as one dense array.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from heuristics.lumos.logical import extend_split, heuristic_decomposition
from heuristics.lumos.requirement import RAIL_RULES, leaf_requirement
from instances.lumos.fabric import make_wiring
from instances.lumos.instance import OcsConfig, ReconfigInstance
from instances.lumos.check import config_metrics, fibre_paths, realized_topology
from instances.lumos.logical import LogicalInstance, LogicalSolution
from instances.lumos.placement import Cluster, Placement
from toolkit.kernels import compile_clock, warm
from toolkit.registry import RunConfig, problem


@dataclass
class Reconfiguration:
    """What one admission did to the OCS layer."""

    t: float                  # simulated time it was decided
    wall_s: float             # measured algorithm time (requirement, topology, OCS)
    sharing: bool             # the job's L1 was scaled down by the K_leaf cap
    method: str
    metrics: dict = field(default_factory=dict)   # instances.lumos.check.config_metrics,
    # the logical mode, and the job's requirement in links: req_links before the K_leaf cap,
    # req_links_admitted after it
    compile_s: float = 0.0    # time in numba's compiler, measured but not in wall_s


class OcsController:
    """Keeps L, the OCS configuration, R and the routing of one OCS fabric."""

    def __init__(self, cluster: Cluster, wiring: str = "cross", method: str = "itv-mdmcf",
                 cfg: RunConfig | None = None, check: bool = False, logical: str = "incremental",
                 rail_rule: str = "lane-pairs"):
        if logical not in ("incremental", "full"):
            raise ValueError(f"logical must be 'incremental' or 'full', got {logical!r}")
        if rail_rule not in RAIL_RULES:
            raise ValueError(f"rail_rule must be one of {', '.join(RAIL_RULES)}, got "
                             f"{rail_rule!r}")
        self.rail_rule = rail_rule
        self.cluster, self.fabric = cluster, cluster.fabric
        self.wiring, self.method, self.check, self.logical = wiring, method, check, logical
        self.full_splits = 0              # admissions that re-decomposed the whole L
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
        warm(self._method.kernel_sets(None, self._method.configure(self.cfg)))
        if wiring == "cross":           # MDMCF's group pool, started before any clock
            from heuristics.lumos.mdmcf.reconfig import default_workers, group_pool

            if (n := default_workers(self.fabric, self.cfg.threads)) > 1:
                group_pool(n)

    # ------------------------------------------------------------------------------------
    def admit(self, placement: Placement, job_id: int, t: float) -> Reconfiguration | None:
        """Add the job's requirement and reconfigure; None when it stays inside a Pod."""
        if len(placement.pods()) < 2:
            return None
        with compile_clock() as comp:
            return self._reconfigure(placement, job_id, t, comp)

    def _reconfigure(self, placement: Placement, job_id: int, t: float, comp
                     ) -> Reconfiguration | None:
        """:meth:`admit`'s work; ``comp``: its toolkit.kernels.CompileTime."""
        t0 = time.perf_counter()
        req = leaf_requirement(placement, [self.L], rail_rule=self.rail_rule)
        if not req.L1.any():
            return None
        a, b = np.nonzero(np.triu(req.L1, 1))
        self.job_L1[job_id] = (a, b, req.L1[a, b])
        self.L = req.L
        new = (extend_split(self.fabric, self.routes, req.L1, self.R)
               if self.logical == "incremental" else None)
        if new is None:                   # [002]: Heuristic-Decomposition of the whole L
            entries = heuristic_decomposition(LogicalInstance(self.fabric, self.L)).entries
            self.full_splits += 1
        else:
            entries = _merge(self.routes, new)
        C = LogicalSolution(entries).topology(self.fabric)
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
        compile_s = comp.seconds            # the algorithm's time: not verification or compiling
        wall = time.perf_counter() - t0 - compile_s
        if self.check:
            bad, _ = self._prob.check(inst, out.solution)
            if bad:
                raise RuntimeError(f"{self.method} configuration fails its checker: {bad[0]}")
        paths = fibre_paths(self.fabric, inst.wire, out.solution.perm)
        self.R = realized_topology(self.fabric, paths)
        m = config_metrics(inst, paths, self.R)
        rec = Reconfiguration(t, wall, req.sharing, method, {k: m[k] for k in (
            "rewiring", "circuits", "links", "links_added", "links_removed",
            "reallocated_share", "shortfall")})
        rec.metrics["logical"] = "full" if new is None else "incremental"
        rec.metrics["req_links"] = int(np.triu(req.L1_estimate, 1).sum())   # before the cap
        rec.metrics["req_links_admitted"] = int(b.size and req.L1[a, b].sum())
        rec.compile_s = compile_s
        self.config = out.solution
        self.routes = entries
        self.version += 1
        return rec

    def release(self, job_id: int) -> None:
        """Subtract a finished job's L1 (spec 3 step 6) and its units from the routing
        split; circuits stay."""
        if job_id in self.job_L1:
            a, b, v = self.job_L1.pop(job_id)
            self.routes = _remove_units(self.routes, a, b, v)
            self.L[a, b] -= v
            self.L[b, a] -= v


def _merge(entries: np.ndarray, new: np.ndarray) -> np.ndarray:
    """Rows (a, b, h, count) of both, counts of equal (a, b, h) added."""
    rows = np.concatenate([entries, new])
    key, inv = np.unique(rows[:, :3], axis=0, return_inverse=True)
    return np.column_stack([key, np.bincount(inv.ravel(), rows[:, 3])]).astype(np.int64)


def _remove_units(entries: np.ndarray, a, b, v) -> np.ndarray:
    """``entries`` less v[k] units of each pair {a[k], b[k]} (both orientations, the same
    spines), taken from its rows in spine order. O(rows + pairs log rows)."""
    if len(entries) == 0 or len(a) == 0:
        return entries
    e = entries.copy()
    n = max(int(e[:, :2].max()), int(max(a.max(), b.max()))) + 1
    lo, hi = np.minimum(e[:, 0], e[:, 1]), np.maximum(e[:, 0], e[:, 1])
    pair = lo * n + hi
    want = dict(zip((np.minimum(a, b) * n + np.maximum(a, b)).tolist(), np.asarray(v).tolist()))
    fwd = np.flatnonzero(np.isin(pair, list(want)) & (e[:, 0] < e[:, 1]))
    # the rows of each directed (a, b, h), by a sorted key: the reverse of a forward row
    # is a binary search, not a scan of all rows
    H = int(e[:, 2].max()) + 1
    code = (e[:, 0] * n + e[:, 1]) * H + e[:, 2]
    by_code = np.argsort(code, kind="stable")
    sorted_code = code[by_code]
    rev = (e[:, 1] * n + e[:, 0]) * H + e[:, 2]
    for r in fwd[np.lexsort((e[fwd, 2], pair[fwd]))].tolist():      # per pair, spine order
        k = int(pair[r])
        take = min(want[k], int(e[r, 3]))
        if take <= 0:
            continue
        want[k] -= take
        e[r, 3] -= take
        lo_i, hi_i = np.searchsorted(sorted_code, rev[r], "left"), np.searchsorted(
            sorted_code, rev[r], "right")
        e[by_code[lo_i:hi_i], 3] -= take
    return e[e[:, 3] > 0]
