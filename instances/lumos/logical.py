"""LumosCore logical-topology design ([002] 4.1): leaf-level requirement L and its split L_abh.

Leaf a belongs to Pod a // (K_spine / tau). L is symmetric, zero within a Pod, and each leaf
needs at most K_leaf cross-Pod paths. A solution assigns every requirement unit a -> b to a
spine h (sparse rows (a, b, h, count)); eq. (7) turns it into the logical topology C.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from instances.errors import InstanceError
from instances.lumos.fabric import Fabric
from instances.lumos.instance import int_array, int_rows
from instances.lumos.size import guard_logical


def validate_requirement(L, fabric: Fabric, field_name: str = "requirement") -> np.ndarray:
    """Symmetric, zero within a Pod, at most K_leaf cross-Pod paths per leaf; returns L as
    int64. Errors name the entry (``requirement[a][b]``) unless L was summed from ``pairs``."""
    def at(*idx) -> str:
        return field_name if field_name == "pairs" else field_name + "".join(f"[{x}]" for x in idx)

    try:
        L = np.asarray(L, dtype=float)
    except (TypeError, ValueError):
        raise InstanceError(field_name, "must be an n x n array of integers (n = leaves)") from None
    n = fabric.n_leaves
    if L.shape != (n, n):
        raise InstanceError(field_name, f"must be {n} x {n} (leaves), got {L.shape}")
    bad = np.argwhere(~np.isfinite(L) | (L != np.round(L)) | (L < 0) | (L > fabric.k_leaf))
    if len(bad):
        raise InstanceError(at(*bad[0]), f"entries must be integers within [0, k_leaf = "
                            f"{fabric.k_leaf}], got {L[tuple(bad[0])]:g}")
    L = L.astype(np.int64)
    if np.any(L != L.T):
        a, b = np.argwhere(L != L.T)[0]
        raise InstanceError(at(a, b), f"not symmetric: L[{a}][{b}] = {L[a, b]}, L[{b}][{a}] = {L[b, a]}")
    pod = fabric.pod_of_leaf(np.arange(n))
    same = (pod[:, None] == pod[None, :]) & (L > 0)
    if same.any():
        a, b = np.argwhere(same)[0]
        raise InstanceError(at(a, b), f"L[{a}][{b}] > 0 but leaves {a} and {b} share Pod {pod[a]}")
    deg = L.sum(axis=1)
    if np.any(deg > fabric.k_leaf):
        a = int(np.argmax(deg))
        raise InstanceError(at(a), f"leaf {a} needs {deg[a]} cross-Pod paths > k_leaf = "
                            f"{fabric.k_leaf}")
    return L


def check_cross_pod(rows: np.ndarray, fabric: Fabric, field_name: str, why: str) -> None:
    """Refuse the first row ``[a, b, ..., count]`` with count > 0 between two leaves of one
    Pod (InstanceError naming ``field_name[i]``; ``why`` says what needs other Pods)."""
    pod = fabric.pod_of_leaf(rows[:, :2])
    same = np.flatnonzero((pod[:, 0] == pod[:, 1]) & (rows[:, -1] > 0))
    if len(same):
        b = int(same[0])
        raise InstanceError(f"{field_name}[{b}]", f"leaves {rows[b, 0]} and {rows[b, 1]} share "
                            f"Pod {pod[b, 0]} ({why})")


def parse_requirement(d: dict, fabric: Fabric) -> np.ndarray:
    """L from the dense ``requirement`` or the sparse ``pairs`` ([a, b, count]); call it
    after ``guard_logical``."""
    n, K = fabric.n_leaves, fabric.k_leaf
    if "requirement" in d and "pairs" in d:
        raise InstanceError("pairs", "give either the dense 'requirement' or the sparse 'pairs', "
                            "not both")
    if "requirement" in d:
        L = int_array("requirement", d["requirement"], (n, n), ("leaf a", "leaf b"))
        return validate_requirement(L, fabric, "requirement")
    if "pairs" not in d:
        raise InstanceError("pairs", "missing (give the dense 'requirement' or the sparse 'pairs')")
    r = int_rows(d["pairs"], "pairs", 3, "[a, b, count]")
    bad = np.flatnonzero(np.any((r[:, :2] < 0) | (r[:, :2] >= n), 1) | (r[:, 2] < 0) | (r[:, 2] > K))
    if len(bad):
        b = int(bad[0])
        raise InstanceError(f"pairs[{b}]", f"{r[b].tolist()} out of range: need 0 <= a, b < {n} "
                            f"(leaves), 0 <= count <= k_leaf = {K}")
    check_cross_pod(r, fabric, "pairs", "only cross-Pod paths are designed")
    L = np.zeros((n, n), dtype=np.int64)
    np.add.at(L, (r[:, 0], r[:, 1]), r[:, 2])
    np.add.at(L, (r[:, 1], r[:, 0]), r[:, 2])
    return validate_requirement(L, fabric, "pairs")


@dataclass
class LogicalInstance:
    """Logical-topology design: split leaf-level requirement L over the H spines."""

    fabric: Fabric
    L: np.ndarray                 # (n_leaves, n_leaves) int
    name: str = "lumos-logical"
    meta: dict = field(default_factory=dict)

    problem = "lumos-logical"

    FIELDS = ('fabric', 'requirement', 'pairs')   # besides problem, format, name, meta

    def __post_init__(self):
        self.L = validate_requirement(self.L, self.fabric)

    @classmethod
    def from_dict(cls, d: dict) -> "LogicalInstance":
        if "fabric" not in d:
            raise InstanceError("fabric", "missing")
        fab = Fabric.from_dict(d["fabric"])
        guard_logical(fab)                        # before any array is built
        return cls(fab, parse_requirement(d, fab), d.get("name", "lumos-logical"),
                   dict(d.get("meta", {})))

    def to_dict(self) -> dict:
        a, b = np.nonzero(np.triu(self.L, 1))
        d = {"problem": self.problem, "format": 1, "name": self.name,
             "fabric": self.fabric.to_dict(),
             "pairs": np.stack([a, b, self.L[a, b]], axis=1).tolist()}
        if self.meta:
            d["meta"] = self.meta
        return d


@dataclass
class LogicalSolution:
    """Sparse L_abh: rows (a, b, h, count), count > 0 (requirement a -> b via spine h)."""

    entries: np.ndarray   # (n, 4) int64
    meta: dict = field(default_factory=dict)

    @classmethod
    def from_dense(cls, Lh: dict[int, np.ndarray] | np.ndarray) -> "LogicalSolution":
        """From {h: (n x n)} or an (H, n, n) array."""
        items = Lh.items() if isinstance(Lh, dict) else enumerate(Lh)
        rows = []
        for h, M in items:
            a, b = np.nonzero(M)
            rows.append(np.stack([a, b, np.full(len(a), h), np.asarray(M)[a, b]], axis=1))
        return cls(np.concatenate(rows).astype(np.int64) if rows else np.zeros((0, 4), np.int64))

    def topology(self, fabric: Fabric) -> np.ndarray:
        """C_ijh by eq. (7), as (H, P, P)."""
        e = self.entries
        C = np.zeros((fabric.H, fabric.pods, fabric.pods), dtype=np.int64)
        pod = fabric.pod_of_leaf
        np.add.at(C, (e[:, 2], pod(e[:, 0]), pod(e[:, 1])), e[:, 3])
        return C

    def to_dict(self) -> dict:
        d = {"entries": self.entries.tolist()}
        if self.meta:
            d["meta"] = self.meta
        return d
