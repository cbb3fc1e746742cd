"""LumosCore / Cross Wiring: the fabric (:class:`Fabric`) and its spine-OCS wirings as port
maps (:class:`Wiring`, :func:`make_wiring`).

Papers: Han et al., "LumosCore: Highly Scalable LLM Clusters with Optical Interconnect"
([002]) and "A Highly Scalable LLM Clusters with Optical Interconnect" ([001], Cross
Wiring). Spec: ``../shared/specs/lumoscore.md`` (0-based indices throughout, spec 7.1).

Fabric (spec 1.1): P Pods, each a leaf-spine network; a leaf has K_leaf GPU ports and
K_leaf spine ports, a spine K_spine leaf ports and K_spine OCS ports (even), tau links
per (leaf, spine); H = K_leaf/tau spines per Pod = OCS groups; spine h of every Pod
connects only to group h.

Wirings (spec 1.3) map each spine OCS-facing port e of Pod i, duplex Tx/Rx, to an OCS port:
``tx_ocs[i, e], tx_port[i, e]`` (egress -> OCS input) and ``rx_ocs, rx_port`` (OCS output ->
ingress); the same for every group h.

* ``uniform``: Tx and Rx of port k -> OCS k, port i (one duplex link per spine and OCS).
* ``cross`` (= Interleaved): OCS pairs (2m, 2m+1) swap their ingress targets:
  Tx(i,2m) -> O_2m.in_i, Rx(i,2m+1) <- O_2m.out_i, Tx(i,2m+1) -> O_2m+1.in_i,
  Rx(i,2m) <- O_2m+1.out_i.
* ``dual``: ports 2m and 2m+1 -> OCS m with both directions; OCS m has two ports per
  Pod (port 2i + s for slot s), so at most K_ocs/2 Pods.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from instances.errors import InstanceError, choice, known_fields, number, obj, short

WIRINGS = ("uniform", "cross", "dual")
# wirings under which every admissible C (eqs. 11-12) is realizable (Theorem 4.1 / 3.1)
UNIVERSAL = ("cross", "dual")
FABRIC_KEYS = ("pods", "k_leaf", "k_spine", "tau", "k_ocs")


# ----------------------------------------------------------------------------------------
# fabric
# ----------------------------------------------------------------------------------------
def _posint(d: dict, key: str, default=None, where: str = "fabric") -> int:
    if key not in d and default is not None:
        return default
    if key not in d:
        raise InstanceError(f"{where}.{key}", "missing")
    return number(f"{where}.{key}", d[key], integer=True, lo=1)


@dataclass(frozen=True)
class Fabric:
    """Fabric sizes (spec 1.1). Derived: ``H``, ``leaves_per_pod``, ``n_leaves``, ``gpus``."""

    pods: int
    k_leaf: int
    k_spine: int
    tau: int = 1
    k_ocs: int = 512

    def __post_init__(self):
        for key in ("pods", "k_leaf", "k_spine", "tau", "k_ocs"):
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise InstanceError(f"fabric.{key}", f"must be a positive integer, got {short(v)}")
        if self.k_leaf % 2:
            raise InstanceError("fabric.k_leaf", f"must be even (spec 1.1), got {self.k_leaf}")
        if self.k_spine % 2:
            raise InstanceError("fabric.k_spine", f"must be even (spec 1.1), got {self.k_spine}")
        if self.k_leaf % self.tau or self.k_spine % self.tau:
            raise InstanceError("fabric.tau", f"must divide k_leaf and k_spine, got {self.tau}")
        if self.pods < 2:
            raise InstanceError("fabric.pods", f"must be >= 2, got {self.pods}")
        if self.pods > self.k_ocs:
            raise InstanceError("fabric.pods", f"{self.pods} Pods exceed k_ocs = {self.k_ocs} "
                                "(one OCS port per Pod)")

    @property
    def H(self) -> int:
        """Spines per Pod = OCS groups."""
        return self.k_leaf // self.tau

    @property
    def leaves_per_pod(self) -> int:
        return self.k_spine // self.tau

    @property
    def n_leaves(self) -> int:
        return self.pods * self.leaves_per_pod

    @property
    def gpus(self) -> int:
        return self.pods * self.k_spine * self.k_leaf // self.tau

    def pod_of_leaf(self, a):
        return np.asarray(a) // self.leaves_per_pod

    def link_capacity(self) -> int:
        """Bidirectional links the fabric can hold at once (every OCS-facing port used)."""
        return self.H * self.pods * self.k_spine // 2

    @classmethod
    def from_dict(cls, d, where: str = "fabric") -> "Fabric":
        """The ``fabric`` object; ``where`` is its path in the file (errors name it)."""
        obj(where, d)
        known_fields(where, d, FABRIC_KEYS)
        return cls(*(_posint(d, k, dflt, where) for k, dflt in
                     (("pods", None), ("k_leaf", None), ("k_spine", None), ("tau", 1), ("k_ocs", 512))))

    def to_dict(self) -> dict:
        return {"pods": self.pods, "k_leaf": self.k_leaf, "k_spine": self.k_spine,
                "tau": self.tau, "k_ocs": self.k_ocs}


# ----------------------------------------------------------------------------------------
# wirings
# ----------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Wiring:
    """Spine port -> OCS port maps of one group (identical for every group h)."""

    name: str
    n_ocs: int          # OCSes per group
    n_ports: int        # input (= output) ports used per OCS
    tx_ocs: np.ndarray  # (P, K_spine)
    tx_port: np.ndarray
    rx_ocs: np.ndarray
    rx_port: np.ndarray

    @cached_property
    def in_owner(self) -> np.ndarray:
        """(n_ocs, n_ports): flat spine port i*K + e whose Tx feeds that OCS input, or -1."""
        return self._owner(self.tx_ocs, self.tx_port)

    @cached_property
    def out_owner(self) -> np.ndarray:
        """(n_ocs, n_ports): flat spine port j*K + e whose Rx that OCS output feeds, or -1."""
        return self._owner(self.rx_ocs, self.rx_port)

    def _owner(self, ocs, port) -> np.ndarray:
        own = np.full((self.n_ocs, self.n_ports), -1, dtype=np.int64)
        flat = np.arange(ocs.size)
        if len(np.unique(ocs.ravel() * self.n_ports + port.ravel())) != ocs.size:
            raise ValueError(f"wiring {self.name}: two fibres on one OCS port")
        own[ocs.ravel(), port.ravel()] = flat
        return own


def check_wiring_name(name: str) -> str:
    """``name`` if it is a known wiring, else a one-line error naming the field."""
    return choice("wiring", name, WIRINGS)


def make_wiring(fabric: Fabric, name: str) -> Wiring:
    """The explicit port maps of wiring ``name`` (spec 1.3, W1-W3)."""
    check_wiring_name(name)
    P, K = fabric.pods, fabric.k_spine
    i = np.repeat(np.arange(P), K).reshape(P, K)
    e = np.tile(np.arange(K), P).reshape(P, K)
    if name == "uniform":
        return Wiring(name, K, P, e, i, e.copy(), i.copy())
    if name == "cross":
        return Wiring(name, K, P, e, i, e ^ 1, i.copy())
    if name == "dual":
        if 2 * P > fabric.k_ocs:
            raise InstanceError("fabric.pods", f"dual-link wiring needs 2 OCS ports per Pod: "
                                f"{P} Pods exceed k_ocs/2 = {fabric.k_ocs // 2}")
        return Wiring(name, K // 2, 2 * P, e // 2, 2 * i + e % 2, e // 2, 2 * i + e % 2)
    raise AssertionError(name)   # unreachable: check_wiring_name covers WIRINGS
