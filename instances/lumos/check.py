"""Independent checkers for LumosCore solutions, at fibre (port) level.

``check_config`` knows nothing about how a configuration was computed. It follows every
circuit through the wiring's port maps to a directed fibre path Tx(i,h,e) -> Rx(j,h,e'),
keeps the paths whose reverse Tx(j,h,e') -> Rx(i,h,e) is also set (the L2 constraint: a
logical link is a bidirectional port pair, spec 1.2), and counts the realized links per
(h, i, j). ``check_logical`` verifies eqs. (5), (6), (8) of [002] for an L_abh split.
"""
from __future__ import annotations

import numpy as np

from instances.lumos.fabric import UNIVERSAL, Fabric, Wiring
from instances.lumos.instance import OcsConfig, ReconfigInstance
from instances.lumos.logical import LogicalInstance, LogicalSolution


def cosine(x: np.ndarray, y: np.ndarray) -> float:
    """cos(x, y) of two flattened vectors; 1 when both are zero, 0 when one is."""
    x, y = np.ravel(x).astype(float), np.ravel(y).astype(float)
    nx, ny = np.linalg.norm(x), np.linalg.norm(y)
    if nx == 0 and ny == 0:
        return 1.0
    if nx == 0 or ny == 0:
        return 0.0
    return float(x @ y / (nx * ny))


def fibre_paths(fabric: Fabric, w: Wiring, perm: np.ndarray) -> dict:
    """Directed paths of a configuration: group h, flat source and destination spine ports
    (i*K + e), circuit keys, and which paths are L2-valid (their reverse is set).

    A spine port's Tx feeds one OCS input (``Wiring.in_owner`` is one-to-one), so a group
    has at most one path from each source port: the reverse of a path src -> dst is set iff
    the path from dst (looked up in a table by group and port) ends at src."""
    K, PK = fabric.k_spine, fabric.pods * fabric.k_spine
    h, k, p = np.nonzero(perm >= 0)
    q = perm[h, k, p].astype(np.int64)
    src, dst = w.in_owner[k, p], w.out_owner[k, q]
    wired = (src >= 0) & (dst >= 0)
    end_of = np.full(fabric.H * PK, -1, dtype=np.int64)      # (h, src) -> dst of its path
    end_of[(h * PK + src)[wired]] = dst[wired]
    bidir = wired & (end_of[h * PK + np.where(wired, dst, 0)] == src)
    return dict(h=h, k=k, p=p, q=q, src=src, dst=dst, wired=wired, bidir=bidir,
                src_pod=np.where(wired, src // K, -1), dst_pod=np.where(wired, dst // K, -1),
                circuit=(h * w.n_ocs + k) * w.n_ports ** 2 + p * w.n_ports + q,
                link=np.where(bidir, (h * PK + np.minimum(src, dst)) * PK + np.maximum(src, dst), -1))


def old_paths(inst: ReconfigInstance) -> dict:
    """:func:`fibre_paths` of the instance's old configuration, computed once per instance
    (the checker's metrics and the rewiring bounds all read it; an instance is not changed
    once built), its arrays read-only."""
    paths = inst.__dict__.get("_old_paths")
    if paths is None:
        paths = fibre_paths(inst.fabric, inst.wire, inst.old.perm)
        for a in paths.values():
            a.setflags(write=False)
        inst._old_paths = paths
    return paths


def realized_topology(fabric: Fabric, paths: dict) -> np.ndarray:
    """R[h, i, j]: bidirectional links between spine h of Pods i and j."""
    H, P = fabric.H, fabric.pods
    b = paths["bidir"] & (paths["src_pod"] != paths["dst_pod"])
    cell = (paths["h"][b] * P + paths["src_pod"][b]) * P + paths["dst_pod"][b]
    return np.bincount(cell, minlength=H * P * P).reshape(H, P, P)


def check_config(inst: ReconfigInstance, cfg: OcsConfig) -> tuple[list[str], dict]:
    """Verify an OCS configuration for ``inst``; returns (violations, metrics).

    Violations: wrong shape or port range; an OCS port used twice (not a partial
    permutation); a circuit on an unwired port; a circuit from a Pod to itself; a
    unidirectional circuit (L2); more links than C anywhere; fewer links than C under a
    wiring that realizes every admissible C (cross, dual: Theorem 4.1). Under ``uniform``
    a shortfall is reported (``shortfall``, ``ltrr``), not a violation.
    """
    fab, w = inst.fabric, inst.wire
    bad: list[str] = []
    perm = np.asarray(cfg.perm)
    shape = (fab.H, w.n_ocs, w.n_ports)
    if perm.shape != shape or not np.issubdtype(perm.dtype, np.integer):
        return [f"configuration must be an integer array of shape {shape}, got {perm.shape}"], {}
    if np.any((perm < -1) | (perm >= w.n_ports)):
        return [f"output port out of range [-1, {w.n_ports})"], {}
    ranked = np.sort(perm, axis=2)          # an output used twice: equal neighbours >= 0
    twice = np.argwhere(((ranked[..., 1:] == ranked[..., :-1]) & (ranked[..., 1:] >= 0)).any(axis=2))
    if len(twice):
        h, k = twice[0]
        bad.append(f"OCS {k} of group {h} is not a partial permutation (an output used twice)")
    paths = fibre_paths(fab, w, perm)
    if not paths["wired"].all():
        c = np.flatnonzero(~paths["wired"])[0]
        bad.append(f"circuit {paths['p'][c]}->{paths['q'][c]} in OCS {paths['k'][c]} of group "
                   f"{paths['h'][c]} uses an OCS port with no fibre")
    selfc = paths["wired"] & (paths["src_pod"] == paths["dst_pod"])
    if selfc.any():
        c = np.flatnonzero(selfc)[0]
        bad.append(f"{int(selfc.sum())} circuit(s) from a Pod to itself (e.g. Pod {paths['src_pod'][c]} "
                   f"in OCS {paths['k'][c]} of group {paths['h'][c]})")
    uni = paths["wired"] & ~paths["bidir"]
    if uni.any():
        c = np.flatnonzero(uni)[0]
        bad.append(f"{int(uni.sum())} unidirectional circuit(s) violate L2 compatibility (e.g. Pod "
                   f"{paths['src_pod'][c]} -> {paths['dst_pod'][c]} in OCS {paths['k'][c]} of group "
                   f"{paths['h'][c]} has no reverse path)")
    R = realized_topology(fab, paths)
    excess = np.maximum(R - inst.C, 0)
    short = np.maximum(inst.C - R, 0)
    if excess.any():
        h, i, j = np.argwhere(excess)[0]
        bad.append(f"{int(excess.sum()) // 2} link(s) beyond C (e.g. {R[h, i, j]} > C = "
                   f"{inst.C[h, i, j]} for group {h}, Pods {i}-{j})")
    if short.any() and inst.wiring in UNIVERSAL:
        h, i, j = np.argwhere(short)[0]
        bad.append(f"C not realized under {inst.wiring} wiring, where every admissible C is "
                   f"(Theorem 4.1): {int(short.sum()) // 2} link(s) short (e.g. group {h}, Pods "
                   f"{i}-{j}: {R[h, i, j]} < {inst.C[h, i, j]})")
    return bad, config_metrics(inst, paths, R)


def lex_base(inst: ReconfigInstance) -> int:
    """B = R_max + 1 for the lexicographic objective ``shortfall * B + rewiring``.

    R_max bounds eq. (7) for any configuration of ``inst``: at most one circuit per OCS input
    port is added (H * n_ocs * n_ports) and at most every old circuit removed. As
    0 <= rewiring <= R_max < B, ``s * B + r < s' * B + r'`` iff (s, r) < (s', r')
    lexicographically, and the encoding is an exact integer (< 2**53 for any instance that
    fits in memory)."""
    old = int((np.asarray(inst.old.perm) >= 0).sum())
    return inst.fabric.H * inst.wire.n_ocs * inst.wire.n_ports + old + 1


def config_metrics(inst: ReconfigInstance, paths: dict, R: np.ndarray) -> dict:
    """Rewiring (eq. 7) against the old configuration, links, LTRR (eq. 15), and the
    problem's objective: unmet demand (``shortfall``, links of C not realized) first, then
    rewiring, as the exact integer ``shortfall * lex_base + rewiring`` (:func:`lex_base`)."""
    fab = inst.fabric
    old = old_paths(inst)
    new_c, old_c = paths["circuit"], old["circuit"]
    # a new circuit is an old one iff the old configuration maps its input port alike
    kept = int((inst.old.perm[paths["h"], paths["k"], paths["p"]] == paths["q"]).sum())
    added, removed = len(new_c) - kept, len(old_c) - kept
    new_l = np.unique(paths["link"][paths["link"] >= 0])
    old_l = np.unique(old["link"][old["link"] >= 0])
    at = np.minimum(np.searchsorted(old_l, new_l), max(len(old_l) - 1, 0))
    kept_l = int((old_l[at] == new_l).sum()) if len(old_l) else 0
    demanded = int(inst.C.sum()) // 2
    realized_links = int(R.sum()) // 2
    cap = fab.link_capacity()
    shortfall = int(np.maximum(inst.C - R, 0).sum()) // 2
    base = lex_base(inst)
    return {
        "shortfall_rewiring": shortfall * base + added + removed, "lex_base": base,
        "rewiring": added + removed,                  # eq. (7): sum |x - u|
        "circuits": len(new_c), "circuits_added": added, "circuits_removed": removed,
        "links": len(new_l), "links_added": len(new_l) - kept_l, "links_removed": len(old_l) - kept_l,
        "reallocated_share": (len(new_l) + len(old_l) - 2 * kept_l) / cap if cap else 0.0,
        "cos_old_new": cosine_sets(len(new_c), len(old_c), kept),
        "demanded_links": demanded, "realized_links": realized_links,
        "shortfall": shortfall,
        "realized": bool(np.array_equal(R, inst.C)),
        "ltrr": cosine(R, inst.C),
        "realized_fraction": realized_links / demanded if demanded else 1.0,
    }


def cosine_sets(n_new: int, n_old: int, common: int) -> float:
    """cos of two 0/1 vectors given their sizes and overlap (eq. 16's cos(x^l, x^{l-1}))."""
    if n_new == 0 and n_old == 0:
        return 1.0
    if n_new == 0 or n_old == 0:
        return 0.0
    return common / float(np.sqrt(n_new * n_old))


# ----------------------------------------------------------------------------------------
# logical topology
# ----------------------------------------------------------------------------------------
def leaf_loads(fabric: Fabric, sol: LogicalSolution) -> tuple[np.ndarray, np.ndarray]:
    """(out, in) loads per (leaf, spine): sum_b L_abh and sum_a L_abh (eq. 6 left sides)."""
    e = sol.entries
    out = np.zeros((fabric.n_leaves, fabric.H), dtype=np.int64)
    inn = np.zeros_like(out)
    np.add.at(out, (e[:, 0], e[:, 2]), e[:, 3])
    np.add.at(inn, (e[:, 1], e[:, 2]), e[:, 3])
    return out, inn


def check_logical(inst: LogicalInstance, sol: LogicalSolution) -> tuple[list[str], dict]:
    """Verify an L_abh split: (5) demand met exactly, no same-Pod pair, (8) pod-level
    symmetry, and C admissible: every spine within its k_spine ports (eq. 12 of [002] /
    [001] eq. 12; with tau = 1 and loads up to 2 this is not implied by (6)). Metrics:
    contention level max load / tau (eq. 6), which may exceed 1 (reported, not rejected)."""
    fab, bad = inst.fabric, []
    e = np.asarray(sol.entries)
    n = fab.n_leaves
    if e.ndim != 2 or e.shape[1] != 4 or not np.issubdtype(e.dtype, np.integer):
        return ["entries must be integer rows (a, b, h, count)"], {}
    if len(e) and (np.any(e[:, :2] < 0) | np.any(e[:, :2] >= n) | np.any(e[:, 2] < 0)
                   | np.any(e[:, 2] >= fab.H) | np.any(e[:, 3] < 0)):
        return [f"entries out of range (leaves < {n}, spines < {fab.H}, count >= 0)"], {}
    pod = fab.pod_of_leaf
    if len(e) and np.any((pod(e[:, 0]) == pod(e[:, 1])) & (e[:, 3] > 0)):
        bad.append("a requirement routed between two leaves of the same Pod")
    got = np.zeros((n, n), dtype=np.int64)
    np.add.at(got, (e[:, 0], e[:, 1]), e[:, 3])
    if not np.array_equal(got, inst.L):
        a, b = np.argwhere(got != inst.L)[0]
        bad.append(f"eq. (5) violated: sum_h L[{a}][{b}][h] = {got[a, b]} != L = {inst.L[a, b]}")
    C = sol.topology(fab)
    if not np.array_equal(C, C.transpose(0, 2, 1)):
        h, i, j = np.argwhere(C != C.transpose(0, 2, 1))[0]
        bad.append(f"eq. (8) violated: C[{h}][{i}][{j}] = {C[h, i, j]} != C[{h}][{j}][{i}] = {C[h, j, i]}")
    out, inn = leaf_loads(fab, sol)
    load = int(max(out.max(initial=0), inn.max(initial=0)))
    spine = C.sum(axis=2)
    m = {"contention_level": load / fab.tau, "max_leaf_spine_load": load,
         "contention_free": load <= fab.tau,
         "max_spine_ports": int(spine.max(initial=0)),
         "port_budget_ok": bool(spine.max(initial=0) <= fab.k_spine),
         "logical_links": int(C.sum()) // 2}
    if not m["port_budget_ok"]:
        h, i = np.argwhere(spine > fab.k_spine)[0]
        bad.append(f"eq. (12) violated: spine {h} of Pod {i} needs {spine[h, i]} links > k_spine = "
                   f"{fab.k_spine} (C is not an admissible logical topology)")
    return bad, m
