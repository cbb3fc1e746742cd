"""Realizability of a logical topology C under a wiring (spec 1.4): a configuration, or a
proof that none exists.

* ``cross`` and ``dual``: always realizable when C satisfies (11)-(12) (Theorem 4.1);
  the configuration comes from the constructive proof (SIMD + IMD, mirrored).
* ``uniform``: group h is realizable iff the multigraph C_h is K_spine-edge-colourable
  (NP-complete). Failure proofs, cheapest first:
  1. an *odd-set certificate*: an odd Pod set S with more links inside than
     K * (|S| - 1) / 2, the most K matchings can hold (e.g. the 3-Pod full mesh with
     K = 2: 3 > 2); searched over odd components, all triples, and all odd subsets of
     small groups;
  2. infeasibility of the exact colouring ILP (models.lumos.ilp.build_uniform, exact).
  A greedy colouring is tried before the ILP; it proves realizability when it places all.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

from instances.errors import InstanceError
from instances.lumos.fabric import Fabric, make_wiring
from instances.lumos.instance import (OcsConfig, ReconfigInstance, perm_from_matrix,
                                      validate_topology)
from instances.lumos.check import check_config


@dataclass
class Realizability:
    wiring: str
    realizable: bool | None            # None: undecided (solver limit)
    config: OcsConfig | None
    proof: str
    certificates: list = field(default_factory=list)   # per failing group


def odd_set_certificate(C_h: np.ndarray, K: int, enumerate_upto: int = 14) -> dict | None:
    """An odd Pod set S with links(S) > K * (|S| - 1) / 2, or None if none was found."""
    C_h = np.asarray(C_h)
    P = len(C_h)

    def test(S) -> dict | None:
        S = list(map(int, S))
        inside = int(C_h[np.ix_(S, S)].sum()) // 2
        cap = K * (len(S) - 1) // 2
        return {"odd_set": S, "links_inside": inside, "max_in_K_matchings": cap} if inside > cap else None

    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components
    n_comp, lab = connected_components(csr_matrix(C_h > 0), directed=False)
    for c in range(n_comp):
        S = np.flatnonzero(lab == c)
        if len(S) % 2 and len(S) > 1 and (cert := test(S)):
            return cert
    # triangles: C_ij + C_jk + C_ik > K, vectorized over (i, j) for each k
    for k in range(P):
        T = C_h + C_h[k][:, None] + C_h[k][None, :]
        ok = (C_h > 0) & (C_h[k][:, None] > 0) & (C_h[k][None, :] > 0)
        ok[k, :] = ok[:, k] = False
        hit = np.argwhere(np.triu(ok & (T > K), 1))
        if len(hit):
            return test([hit[0][0], hit[0][1], k])
    if P <= enumerate_upto:
        for size in range(5, P + 1, 2):
            for S in combinations(range(P), size):
                if cert := test(S):
                    return cert
    return None


def _uniform_group(C_h, K, backend, time_limit):
    """(status, matrices or None, text, certificate) for one group under Uniform wiring."""
    from heuristics.lumos.baselines import helios_group
    from models.backend import solve
    from models.lumos.ilp import build_uniform, extract_uniform

    P = len(C_h)
    cert = odd_set_certificate(C_h, K)
    if cert:
        return False, None, (f"odd-set certificate: Pods {cert['odd_set']} carry "
                             f"{cert['links_inside']} links > K(|S|-1)/2 = {cert['max_in_K_matchings']}"), cert
    mats = helios_group(C_h, K)
    if np.array_equal(sum(mats), C_h):
        return True, mats, "greedy colouring", None
    model, h = build_uniform(C_h, np.zeros((K, P, P), dtype=np.int64), exact=True)
    res = solve(model, backend=backend, time_limit=time_limit)
    if res.status == "infeasible":
        return False, None, f"edge-colouring ILP infeasible ({res.backend})", {"ilp": "infeasible"}
    if not res.has_solution:
        return None, None, f"edge-colouring ILP undecided ({res.status})", None
    return True, extract_uniform(h, res), f"edge-colouring ILP ({res.backend})", None


def realize(fabric: Fabric, C, wiring: str, backend: str = "auto",
            time_limit: float | None = None) -> Realizability:
    """Decide whether C is realizable under ``wiring``; return a verified configuration
    (checked by instances.lumos.check) or a failure proof."""
    try:
        C = validate_topology(C, fabric)
    except InstanceError as exc:
        return Realizability(wiring, False, None, f"not an admissible topology: {exc.msg}")
    if wiring in ("cross", "dual"):
        from heuristics.lumos.mdmcf.reconfig import cross_realize, dual_realize

        cfg = (cross_realize if wiring == "cross" else dual_realize)(fabric, C)
        proof = ("Theorem 4.1: SIMD (Euler) + IMD into K/2 partial permutations, "
                 + ("mirrored in the odd OCSes" if wiring == "cross" else "each with its mirror "
                    "inside the same dual-link OCS"))
        ok, certs = True, []
    elif wiring == "uniform":
        w = make_wiring(fabric, "uniform")
        cfg, ok, certs, texts = OcsConfig.empty(fabric, w), True, [], []
        t0 = time.perf_counter()
        for h in range(fabric.H):       # time_limit is for all groups: each a fair share of the rest
            left = None if time_limit is None else \
                max(0.0, time_limit - (time.perf_counter() - t0)) / (fabric.H - h)
            st, mats, text, cert = _uniform_group(C[h], fabric.k_spine, backend, left)
            texts.append(f"group {h}: {text}")
            if st is True:
                for k, X in enumerate(mats):
                    cfg.perm[h, k] = perm_from_matrix(X)
            else:
                ok = None if (st is None and ok is not False) else False
                certs.append({"group": h, **(cert or {})})
        proof = "; ".join(t for t in texts if ok or "certificate" in t or "infeasible" in t
                          or "undecided" in t) or "all groups coloured"
        if ok is not True:
            cfg = None
    else:
        raise InstanceError("wiring", f"unknown wiring {wiring!r}")
    if cfg is not None:
        bad, _ = check_config(ReconfigInstance(fabric, C, wiring, cfg), cfg)
        if bad:
            raise AssertionError(f"realization under {wiring} failed the checker: {bad[:2]}")
    return Realizability(wiring, ok, cfg, proof, certs)
