"""Folded Clos / fat-tree of k-port electrical switches with ECMP (spec 1.5, 4.1
baselines Clos(51.2T,3-tier), Clos(25.6T,3-tier), Clos(25.6T,4-tier); [002] 6.3-6.4).

Geometry (m = k/2). A tier-1 switch (ToR, "leaf") has m host ports and m uplinks; a
block B_1 is one ToR. For 2 <= l < tiers, a block B_l is m blocks B_{l-1} plus m^(l-1)
tier-l switches, each with m down ports (one per sub-block) and m uplinks; the top tier
is m^(tiers-1) switches whose k ports all go down, one per B_{tiers-1} (k of them).
Wiring: switch s (index inside its block) of tier l connects to sub-block c through
that sub-block's tier-(l-1) switch s // m, on its uplink port s % m. Hosts:
2*m^tiers = k^2/2, k^3/4, k^4/8. GPU g sits on ToR g // m, in B_l number g // m^l.

Partial build [DECISION]: n_gpus must be a multiple of m^2 (whole 2-tier blocks) with
2*m^2 <= n_gpus <= 2*m^tiers; at each level l < tiers only the ceil(n_gpus / m^l)
blocks holding GPUs are built, each complete with all its uplinks; the top tier is
complete, its switches' down ports reach only the built sub-blocks. So a half-filled
fat-tree keeps its full bisection per GPU.

Links: one bidirectional cable per (lower switch u, uplink port p), all at the one port
speed ``nic_gbps``; for the boundary above tier l, the up links are
``U_l + u*m + p`` and the down links ``U_l + n_l + u*m + p`` (n_l = switches of tier
l times m; boundaries stacked from tier 1 up).

Rail layout (``layout="rail"``, [002] Fig. 24; ``instances.lumos.placement`` module
docstring): GPU r of every server of a rail group of m consecutive servers sits on ToR r
of the group's T ToRs, ToR ``(g // (T m)) T + g % T``; a rail group lies inside one B_2
(m a multiple of T), so only tier 1 changes: B_l for l >= 2 is still ``g // m^l``.

Routing: shortest up-down path. A flow climbs to the lowest tier L whose block holds
both GPUs (L = 1: same ToR, empty column), picking at each tier l < L an uplink port
p_l by ECMP, which leads to switch s_{l+1} = s_l*m + p_l (s_1 = 0) of its block; it
descends through the same in-block indices s_{L-1}, ..., s_1 in the destination's
blocks (deterministic). ECMP hash: p_l = mix64(key XOR salt_l) % m (``networks.mix64``,
splitmix64's finalizer) with salt_l = 256*seed + l (``independent``: one hash function
per tier) or salt_l = 256*seed (``polarized``: every switch applies the same function,
so p_1 = p_2 = ...: the flows an upper switch receives from one lower choice all take
the same uplink again, the hash polarisation of [002] 1 / 6.4 citing Qian et al. 2024;
from one ToR only m of the m^2 tier-3 switches are reachable).
"""
from __future__ import annotations

import numpy as np

from instances.lumos.fabric import Fabric
from instances.lumos.placement import Cluster
from heuristics.lumos.sim.networks import Network, flows_in, mix64, paths_to_csc

_TIER_NAMES = {2: ("tor", "spine"), 3: ("tor", "agg", "core"), 4: ("tor", "agg", "core", "top")}


class ClosNetwork(Network):
    """k-port folded Clos with ``tiers`` switch layers for n_gpus GPUs (module docstring).

    ``cluster``: Fabric(pods = n_gpus / m^2, k_leaf = k_spine = m, tau = 1,
    k_ocs = max(512, pods)) with ``gpus_per_server`` (must divide m): its leaf is the
    ToR and its Pod the 2-tier block B_2, so placement's locality matches the Clos.
    [DECISION] for tiers = 2 (one block) the Pods are two halves of the ToRs: any two
    ToRs are 2 hops apart, so this grouping is locality-neutral.
    """

    def __init__(self, n_gpus: int, k: int, tiers: int, nic_gbps: float,
                 ecmp: str = "polarized", seed: int = 0, gpus_per_server: int = 8,
                 layout: str = "server"):
        if tiers not in _TIER_NAMES:
            raise ValueError(f"tiers must be 2, 3 or 4, got {tiers}")
        if k < 4 or k % 2:
            raise ValueError(f"k must be even and >= 4, got {k}")
        if ecmp not in ("polarized", "independent"):
            raise ValueError(f"ecmp must be 'polarized' or 'independent', got {ecmp!r}")
        m = k // 2
        if n_gpus % (m * m) or not 2 * m * m <= n_gpus <= 2 * m ** tiers:
            raise ValueError(f"n_gpus must be a multiple of (k/2)^2 = {m * m} in "
                             f"[{2 * m * m}, {2 * m ** tiers}] (the k = {k} {tiers}-tier "
                             f"capacity), got {n_gpus}")
        self.n_gpus, self.k, self.tiers, self.ecmp, self.seed = n_gpus, k, tiers, ecmp, seed
        self.nic_gbps = float(nic_gbps)
        pods = n_gpus // (m * m)
        self.cluster = Cluster(Fabric(pods, m, m, 1, max(512, pods)), gpus_per_server, layout)
        # switches per tier (top: m^(tiers-1)); link bases per boundary
        self.n_switches = [-(-n_gpus // m ** l) * m ** (l - 1) for l in range(1, tiers)]
        self.n_switches.append(m ** (tiers - 1))
        n_l = [s * m for s in self.n_switches[:-1]]
        self._base = np.concatenate([[0], np.cumsum(2 * np.array(n_l))])
        self._n_l = n_l
        self.capacity = np.full(int(self._base[-1]), self.nic_gbps)
        self._salts = [256 * seed + (l if ecmp == "independent" else 0) for l in range(1, tiers)]

    def route_mask(self, src, dst, key):
        src, dst, key = flows_in(src, dst, key, self.n_gpus)
        m, t = self.k // 2, self.tiers
        n = len(src)
        tor_src, tor_dst = self.cluster.leaf_of(src), self.cluster.leaf_of(dst)
        L = np.full(n, t, dtype=np.int64)
        for l in range(t - 1, 1, -1):
            L[src // m ** l == dst // m ** l] = l
        L[tor_src == tor_dst] = 1
        links = np.full((n, 2 * (t - 1)), -1, dtype=np.int64)
        s = np.zeros(n, dtype=np.int64)
        for l in range(1, t):
            act = L > l
            if not act.any():
                break
            p = (mix64(key[act], self._salts[l - 1]) % np.uint64(m)).astype(np.int64)
            sa = s[act]
            if l == 1:
                u_src, u_dst = tor_src[act], tor_dst[act]
            else:
                u_src = (src[act] // m ** l) * m ** (l - 1) + sa
                u_dst = (dst[act] // m ** l) * m ** (l - 1) + sa
            up = self._base[l - 1]
            links[act, l - 1] = up + u_src * m + p
            links[act, t - 1 + l - 1] = up + self._n_l[l - 1] + u_dst * m + p
            s[act] = sa * m + p
        return paths_to_csc(links, self.n_links), np.zeros(n, dtype=bool)

    def _name(self, i: int) -> str:
        m, t = self.k // 2, self.tiers
        l = int(np.searchsorted(self._base, i, side="right"))   # boundary above tier l
        r = i - int(self._base[l - 1])
        down, r = r >= self._n_l[l - 1], r % self._n_l[l - 1]
        u, p = divmod(r, m)
        block, s = divmod(u, m ** (l - 1))
        upper = (block // m if l + 1 < t else 0) * m ** l + s * m + p
        names = _TIER_NAMES[t]
        lo, hi = f"{names[l - 1]}{u}", f"{names[l]}{upper}"
        return f"{hi}->{lo}" if down else f"{lo}->{hi}"


def clos_for(chip_tbps: float, tiers: int, n_gpus: int,
             port_gbps_choices=(1600, 800, 400, 200)) -> tuple[int, int]:
    """(port_gbps, k): the fastest port speed whose Clos of radix k = chip / port with
    ``tiers`` layers holds n_gpus (2*(k/2)^tiers >= n_gpus, spec 1.5). [002] 6.3-6.4:
    with a fixed switching chip a larger Clos must lower its per-port bandwidth or add
    layers. E.g. 25.6T 3-tier 4096 GPUs -> (800, 32); 51.2T 3-tier 8192 -> (1600, 32)."""
    for port in sorted(port_gbps_choices, reverse=True):
        k = round(chip_tbps * 1000 / port)
        if abs(k * port - chip_tbps * 1000) > 1e-6 * port or k % 2 or k < 4:
            continue
        if 2 * (k // 2) ** tiers >= n_gpus:
            return int(port), k
    raise ValueError(f"no port speed in {tuple(port_gbps_choices)} gives a {chip_tbps}T "
                     f"{tiers}-tier Clos of {n_gpus} GPUs")
