"""LumosCore size guards: an absurd fabric is refused from its header numbers, before any
array is built (issue 13). The memory estimates add up the arrays an instance and its
default methods allocate; the work caps bound the per-OCS / per-spine Python loops that
take minutes to hours long before memory runs out. Both follow the memory limit of
``instances.limits`` (``--max-memory`` / ``OCS_MAX_MEMORY_GB``)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from instances.errors import InstanceError
from instances.limits import DEFAULT_GIB, GIB, fmt_bytes, guard, max_bytes

if TYPE_CHECKING:
    from instances.lumos.fabric import Fabric


def _culprit(sizes: dict) -> str:
    """The fabric field with the largest size among ``sizes`` (named by a size guard)."""
    return "fabric." + max(sizes, key=sizes.get)


# Work caps at the default 4 GiB limit, scaled with it (--max-memory lifts them too): the
# methods handle each OCS (reconfig, ~0.1 ms) or each spine of a Pod (logical IMD, one flow,
# ~0.4 ms) in Python, so a fabric far beyond these runs for minutes to hours.
MAX_OCSES = 2**16
MAX_SPINES = 2**14


def wiring_dims(fabric: Fabric, name: str) -> tuple[int, int]:
    """(OCSes per group, ports used per OCS) of wiring ``name``, without building it."""
    return (fabric.k_spine // 2, 2 * fabric.pods) if name == "dual" else (fabric.k_spine, fabric.pods)


def reconfig_bytes(fabric: Fabric, wiring: str) -> float:
    """Estimated peak memory (bytes) of a reconfiguration instance and its methods: the
    dense topology C (H x P x P; parsed, checked and copied: ~4 copies), the wiring's port
    maps and owner tables (~8 words per spine port of one group), the old and new
    configurations with the checker's per-circuit arrays (~18 words per OCS port over all
    groups) and one group's 0/1 OCS matrices (OCSes x ports x ports, ~2 copies), which
    every method builds. Measured: 4,000 Pods, H = 1, K = 2 peak at 0.64 GB, estimate 1 GB."""
    H, P, K = fabric.H, fabric.pods, fabric.k_spine
    n_ocs, n_ports = wiring_dims(fabric, wiring)
    return 8.0 * (4.0 * H * P * P + 8.0 * P * K + 18.0 * H * n_ocs * n_ports
                  + 2.0 * n_ocs * n_ports * n_ports)


def logical_bytes(fabric: Fabric) -> float:
    """Estimated peak memory (bytes) of a logical-design instance: the leaf-level n x n
    requirement (parsed, checked, ~6 copies with the checker's) and the H parts of the
    default Heuristic-Decomposition (one n x n matrix per spine). Measured: 4,000 leaves,
    H = 2, peak 0.77 GB, estimate 1 GB."""
    n = float(fabric.pods) * (fabric.k_spine // fabric.tau)
    return 8.0 * n * n * (fabric.H + 6)


def _work_cap(field_name: str, count: int, cap: int, what: str) -> None:
    scaled = int(cap * max_bytes() / (DEFAULT_GIB * GIB))
    if count > scaled:
        raise InstanceError(field_name, f"{what} exceed the {scaled} the methods handle in bounded "
                            f"time at the {fmt_bytes(max_bytes())} limit (raise it with --max-memory GIB)")


def guard_reconfig(fabric: Fabric, wiring: str) -> None:
    """Refuse a reconfiguration fabric too big to build or to solve, before allocating."""
    H, P, K = fabric.H, fabric.pods, fabric.k_spine
    n_ocs, n_ports = wiring_dims(fabric, wiring)
    guard(_culprit({"pods": P, "k_spine": K, "k_leaf": H}), reconfig_bytes(fabric, wiring),
          f"{P} Pods x H = {H} groups of {n_ocs} OCSes with {n_ports} ports")
    _work_cap("fabric.k_leaf" if H > n_ocs else "fabric.k_spine", H * n_ocs, MAX_OCSES,
              f"{H * n_ocs} OCSes (H = {H} groups x {n_ocs})")


def guard_logical(fabric: Fabric) -> None:
    """Refuse a logical-design fabric too big to build or to solve, before allocating."""
    H, P, per_pod = fabric.H, fabric.pods, fabric.k_spine // fabric.tau
    guard(_culprit({"pods": P, "k_spine": per_pod, "k_leaf": H}), logical_bytes(fabric),
          f"{P * per_pod} leaves x H = {H} spines per Pod")
    _work_cap("fabric.k_leaf", H, MAX_SPINES, f"H = k_leaf / tau = {H} spines per Pod")
