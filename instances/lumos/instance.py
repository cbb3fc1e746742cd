"""LumosCore / Cross Wiring: OCS configurations, logical topologies and reconfiguration
instances (the fabric and its wirings: instances.lumos.fabric).

Papers: Han et al., "LumosCore: Highly Scalable LLM Clusters with Optical Interconnect"
([002]) and "A Highly Scalable LLM Clusters with Optical Interconnect" ([001], Cross
Wiring). Spec: ``../shared/specs/lumoscore.md`` (0-based indices throughout, spec 7.1).

An OCS configuration is ``perm[h, k, p] = q`` (input port p to output port q of OCS k in
group h) or -1: a partial permutation per OCS. For ``uniform`` and ``cross`` port p is
Pod p, so ``perm[h, k, i] = j`` is the papers' x_ijkh = 1.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain

import numpy as np

from instances.errors import (InstanceError, int_rows_of, known_fields, number, obj, seq, text,
                              tracing)
from instances.lumos.fabric import Fabric, Wiring, check_wiring_name, make_wiring
from instances.lumos.size import guard_reconfig


def int_rows(value, field_name: str, width: int, what: str) -> np.ndarray:
    """A list of ``width``-integer rows as an (n, width) int64 array. Strict: a row that is
    not a list of ``width`` entries, or an entry that is not an integer (a string, a
    boolean, a fraction), raises InstanceError naming it (``links[4]``, ``links[4][3]``)."""
    rows = seq(field_name, value)
    arr = None if tracing() else int_rows_of(rows)      # as the file's check made it
    if arr is not None and arr.shape[1] == width:
        return arr
    if set(map(type, rows)) <= {list} and set(map(len, rows)) <= {width} and not tracing():
        flat = list(chain.from_iterable(rows))
        if set(map(type, flat)) <= {int}:        # the common case: plain JSON integers
            try:
                return np.fromiter(flat, np.int64, len(flat)).reshape(len(rows), width)
            except OverflowError:
                pass
    out = np.zeros((len(rows), width), dtype=np.int64)
    for r, row in enumerate(rows):
        where = f"{field_name}[{r}]"
        seq(where, row)
        if len(row) != width:
            raise InstanceError(where, f"must be {width} integers {what}, got {len(row)} entries")
        out[r] = [number(f"{where}[{c}]", v, integer=True) for c, v in enumerate(row)]
    return out


def int_array(field_name: str, value, shape: tuple, dims: tuple) -> np.ndarray:
    """A dense nested list of integers of exactly ``shape`` as int64 (``dims`` names each
    axis). Call it after the size guard: it is the first thing that touches every entry.
    Errors name the first bad list or entry (``topology[0][1]``, ``topology[0][1][2]``)."""
    def walk(v, path, depth):
        seq(path, v)
        if len(v) != shape[depth]:
            raise InstanceError(path, f"must have {shape[depth]} entries (one per "
                                f"{dims[depth]}), got {len(v)}")
        if depth + 1 < len(shape):
            for i, x in enumerate(v):
                walk(x, f"{path}[{i}]", depth + 1)
        elif tracing() or not all(type(x) is int for x in v):
            for i, x in enumerate(v):
                number(f"{path}[{i}]", x, integer=True)
    walk(value, field_name, 0)
    return np.array(value, dtype=np.int64).reshape(shape)


# ----------------------------------------------------------------------------------------
# OCS configurations
# ----------------------------------------------------------------------------------------
@dataclass
class OcsConfig:
    """``perm[h, k, p] = q`` (or -1): a partial permutation per OCS (group h, OCS k)."""

    perm: np.ndarray
    meta: dict = field(default_factory=dict)

    @classmethod
    def empty(cls, fabric: Fabric, wiring: Wiring) -> "OcsConfig":
        return cls(np.full((fabric.H, wiring.n_ocs, wiring.n_ports), -1, dtype=np.int32))

    def circuits(self) -> np.ndarray:
        """(n, 4) rows (h, k, in_port, out_port)."""
        h, k, p = np.nonzero(self.perm >= 0)
        return np.stack([h, k, p, self.perm[h, k, p]], axis=1).astype(np.int64)

    def to_dict(self, arrays: bool = False) -> dict:
        """{"circuits": [[h, k, in, out], ...], "meta": ...}; with ``arrays`` the circuits
        as their (n, 4) array (a solution file's writer takes it, toolkit.outdir)."""
        d = {"circuits": self.circuits() if arrays else self.circuits().tolist()}
        if self.meta:
            d["meta"] = self.meta
        return d

    @classmethod
    def from_circuits(cls, rows, shape: tuple[int, int, int], field_name="circuits") -> "OcsConfig":
        perm = np.full(shape, -1, dtype=np.int32)
        arr = int_rows(rows, field_name, 4, "[h, k, in, out]")
        H, n_ocs, n_ports = shape
        lim = np.array([H, n_ocs, n_ports, n_ports])
        bad = np.flatnonzero(np.any((arr < 0) | (arr >= lim), axis=1))
        if len(bad):
            r = int(bad[0])
            raise InstanceError(f"{field_name}[{r}]", f"circuit {arr[r].tolist()} out of range "
                                f"(h < {H}, k < {n_ocs}, ports < {n_ports})")
        key = (arr[:, 0] * n_ocs + arr[:, 1]) * n_ports
        for side, name in ((2, "input"), (3, "output")):
            r = _first_repeat(key + arr[:, side])
            if r is not None:
                raise InstanceError(f"{field_name}[{r}]", f"OCS {name} port {arr[r, side]} of OCS "
                                    f"{arr[r, 1]} in group {arr[r, 0]} carries two circuits "
                                    "(not a partial permutation)")
        perm[arr[:, 0], arr[:, 1], arr[:, 2]] = arr[:, 3]
        return cls(perm)

    def matrix(self, h: int, k: int, n: int | None = None) -> np.ndarray:
        """0/1 matrix X[p, q] of OCS k in group h."""
        row = self.perm[h, k]
        n = n or len(row)
        X = np.zeros((len(row), n), dtype=np.int64)
        on = row >= 0
        X[np.flatnonzero(on), row[on]] = 1
        return X


def _first_repeat(keys: np.ndarray):
    """Index of the first entry equal to an earlier one, or None: after a stable sort,
    every entry of a run of equal keys but the run's first is such an entry."""
    order = np.argsort(keys, kind="stable")
    ranked = keys[order]
    again = order[1:][ranked[1:] == ranked[:-1]]
    return int(again.min()) if len(again) else None


def perm_from_matrix(X: np.ndarray) -> np.ndarray:
    """Partial-permutation 0/1 matrix -> perm row (-1 for idle inputs)."""
    X = np.asarray(X)
    out = np.full(X.shape[0], -1, dtype=np.int32)
    r, c = np.nonzero(X)
    out[r] = c
    return out


# ----------------------------------------------------------------------------------------
# logical topologies
# ----------------------------------------------------------------------------------------
def parse_topology(d: dict, fabric: Fabric, key: str = "topology") -> np.ndarray:
    """C (H, P, P) from the dense ``topology`` or the sparse ``links`` ([h, i, j, count]).
    Call it after ``guard_reconfig``: the dense list is checked entry by entry."""
    H, P, K = fabric.H, fabric.pods, fabric.k_spine
    if key in d and "links" in d:
        raise InstanceError("links", f"give either the dense '{key}' or the sparse 'links', not both")
    if key in d:
        C = int_array(key, d[key], (H, P, P), ("group h", "Pod i", "Pod j"))
        over = np.argwhere((C < 0) | (C > K))
        if len(over):
            h, i, j = over[0]
            raise InstanceError(f"{key}[{h}][{i}][{j}]", f"must be within [0, k_spine = {K}] "
                                f"(eq. 12), got {C[h, i, j]}")
        return validate_topology(C, fabric, key)
    if "links" not in d:
        raise InstanceError(key, "missing (give the dense 'topology' or the sparse 'links')")
    r = int_rows(d["links"], "links", 4, "[h, i, j, count]")
    bad = np.flatnonzero((r[:, 0] < 0) | (r[:, 0] >= H) | np.any((r[:, 1:3] < 0) | (r[:, 1:3] >= P), 1)
                         | (r[:, 3] < 0) | (r[:, 3] > K))
    if len(bad):
        b = int(bad[0])
        raise InstanceError(f"links[{b}]", f"{r[b].tolist()} out of range: need 0 <= h < {H}, "
                            f"0 <= i, j < {P}, 0 <= count <= k_spine = {K}")
    selfl = np.flatnonzero(r[:, 1] == r[:, 2])
    if len(selfl):
        raise InstanceError(f"links[{selfl[0]}]", f"a link from Pod {r[selfl[0], 1]} to itself (i == j)")
    cells = np.concatenate([(r[:, 0] * P + r[:, 1]) * P + r[:, 2], (r[:, 0] * P + r[:, 2]) * P + r[:, 1]])
    counts = np.bincount(cells, weights=np.tile(r[:, 3], 2), minlength=H * P * P)
    C = counts.astype(np.int64).reshape(H, P, P)     # sums of counts <= k_spine: exact
    return validate_topology(C, fabric, "links")


def validate_topology(C, fabric: Fabric, field_name: str = "topology") -> np.ndarray:
    """Eqs. (11)-(12) and C_iih = 0; returns C as int64. Errors name the entry
    (``topology[h][i][j]``) unless C was summed from ``links``."""
    def at(*idx) -> str:
        return field_name if field_name == "links" else field_name + "".join(f"[{x}]" for x in idx)

    C = np.asarray(C)
    if C.dtype.kind not in "iu":                # integers need no finiteness or rounding check
        C = np.asarray(C, dtype=float)
    shape = (fabric.H, fabric.pods, fabric.pods)
    if C.shape != shape:
        raise InstanceError(field_name, f"must have shape {shape} (H, P, P), got {C.shape}")
    bad = np.argwhere(C < 0) if C.dtype.kind in "iu" else \
        np.argwhere(~np.isfinite(C) | (C != np.round(C)) | (C < 0))
    if len(bad):
        raise InstanceError(at(*bad[0]), "entries must be non-negative integers")
    C = C.astype(np.int64)
    asym = np.argwhere(C != C.transpose(0, 2, 1))
    if len(asym):
        h, i, j = asym[0]
        raise InstanceError(at(h, i, j), f"not symmetric (eq. 11): C[{h}][{i}][{j}] = {C[h, i, j]} "
                            f"but C[{h}][{j}][{i}] = {C[h, j, i]}")
    diag = np.argwhere(np.einsum("hii->hi", C))
    if len(diag):
        h, i = diag[0]
        raise InstanceError(at(h, i, i), "diagonal C[h][i][i] must be 0")
    load = C.sum(axis=2)
    if np.any(load > fabric.k_spine):
        h, i = np.argwhere(load > fabric.k_spine)[0]
        raise InstanceError(at(h, i), f"spine {h} of Pod {i} has {load[h, i]} links > k_spine = "
                            f"{fabric.k_spine} (eq. 12)")
    return C


def sparse_links(C: np.ndarray) -> list[list[int]]:
    h, i, j = np.nonzero(np.triu(np.ones(C.shape[1:], dtype=bool), 1)[None] & (C > 0))
    return np.stack([h, i, j, C[h, i, j]], axis=1).tolist()


@dataclass
class ReconfigInstance:
    """OCS reconfiguration: reach logical topology C from the old configuration ``old``."""

    fabric: Fabric
    C: np.ndarray                 # (H, P, P) int
    wiring: str = "cross"
    old: OcsConfig | None = None  # None = no circuits yet
    name: str = "lumos-reconfig"
    meta: dict = field(default_factory=dict)

    problem = "lumos-reconfig"

    def __post_init__(self):
        check_wiring_name(self.wiring)
        self.C = validate_topology(self.C, self.fabric)
        w = self.wire
        if self.old is None:
            self.old = OcsConfig.empty(self.fabric, w)
        if self.old.perm.shape != (self.fabric.H, w.n_ocs, w.n_ports):
            raise InstanceError("old", f"configuration shape {self.old.perm.shape} does not match "
                                f"(H, OCSes, ports) = {(self.fabric.H, w.n_ocs, w.n_ports)}")

    @cached_property
    def wire(self) -> Wiring:
        return make_wiring(self.fabric, self.wiring)

    FIELDS = ('fabric', 'wiring', 'topology', 'links', 'old')   # besides problem, format, name, meta

    @classmethod
    def from_dict(cls, d: dict) -> "ReconfigInstance":
        if "fabric" not in d:
            raise InstanceError("fabric", "missing")
        fab = Fabric.from_dict(d["fabric"])
        wiring = check_wiring_name(text("wiring", d.get("wiring", "cross")))
        guard_reconfig(fab, wiring)               # before any array is built
        C = parse_topology(d, fab)
        w = make_wiring(fab, wiring)
        old = None
        if d.get("old") is not None:
            o = obj("old", d["old"])
            known_fields("old", o, ("circuits", "meta"))
            if "circuits" not in o:
                raise InstanceError("old.circuits", "missing (give [[h, k, in, out], ...])")
            obj("old.meta", o.get("meta", {}))
            old = OcsConfig.from_circuits(o["circuits"], (fab.H, w.n_ocs, w.n_ports), "old.circuits")
        return cls(fab, C, wiring, old, d.get("name", "lumos-reconfig"), dict(d.get("meta", {})))

    def to_dict(self) -> dict:
        d = {"problem": self.problem, "format": 1, "name": self.name,
             "fabric": self.fabric.to_dict(), "wiring": self.wiring, "links": sparse_links(self.C)}
        if (self.old.perm >= 0).any():
            d["old"] = {"circuits": self.old.circuits().tolist()}
        if self.meta:
            d["meta"] = self.meta
        return d
