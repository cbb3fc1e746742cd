"""Network models of the LumosCore cluster simulator: directed links and flow routes
(spec 4.1 baselines, 4.2 simulator; issue 16).

Every network exposes the same data (the simulator needs nothing else):

- ``capacity``: (n_links,) Gb/s of every DIRECTED link above the GPUs' NICs (a NIC is
  not a link: the simulator caps each flow at its NIC share itself);
- ``nic_gbps``: the per-GPU port speed of the architecture;
- ``cluster``: the GPU geometry the placement algorithms use (leaf/ToR and Pod of a GPU);
- ``route_mask(src, dst, key) -> (A, unroutable)``: ``A`` is an (n_links x n_flows)
  0/1 ``scipy.sparse.csc_matrix`` (column f = the directed links flow f crosses, row
  indices sorted), ``unroutable`` an (n_flows,) bool array (only ``OcsNetwork`` can set
  it; such a flow has an empty column, like a flow inside one leaf, so a caller must
  read the mask). ``route(src, dst, key)`` returns ``A`` alone. Vectorized over flows;
  the route of a flow depends only on (src, dst, key).
- ``link_names(ids) -> list[str]`` for messages and tests.

This module holds the shared pieces (the key hash, the CSC builder), ``BestNetwork`` and
``OcsNetwork``; the folded Clos is in ``clos.py``.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from instances.lumos.placement import Cluster

_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)


def mix64(x, salt: int = 0) -> np.ndarray:
    """The splitmix64 finalizer of ``x XOR salt`` (uint64 in, uint64 out, vectorized).

    This is THE hash of every ECMP / weighted choice of this package: a choice among m
    options takes ``mix64(key, salt) % m``; the salt names the choice (tier, purpose).
    """
    z = np.asarray(x).astype(np.uint64) ^ np.uint64(salt & 0xFFFFFFFFFFFFFFFF)
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def flows_in(src, dst, key, n_gpus: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validated int64 copies of the three per-flow arrays."""
    src, dst, key = (np.asarray(v).ravel() for v in (src, dst, key))
    if not (len(src) == len(dst) == len(key)):
        raise ValueError(f"src, dst, key lengths differ: {len(src)}, {len(dst)}, {len(key)}")
    for name, v in (("src", src), ("dst", dst), ("key", key)):
        if len(v) and not np.issubdtype(v.dtype, np.integer):
            raise ValueError(f"{name} must be integers, got dtype {v.dtype}")
    src, dst = src.astype(np.int64), dst.astype(np.int64)
    if len(src) and (min(src.min(), dst.min()) < 0 or max(src.max(), dst.max()) >= n_gpus):
        raise ValueError(f"GPU ids must lie in [0, {n_gpus})")
    return src, dst, key.astype(np.int64)


def paths_to_csc(links: np.ndarray, n_links: int) -> sp.csc_matrix:
    """(n_flows, hops) link ids, -1 = none, to the (n_links x n_flows) 0/1 CSC matrix
    (row indices sorted inside each column; a flow never repeats a link)."""
    n = links.shape[0]
    big = np.iinfo(np.int64).max
    srt = np.sort(np.where(links < 0, big, links), axis=1)
    ok = srt != big
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(ok.sum(axis=1), out=indptr[1:])
    idx_dtype = np.int32 if max(n_links, indptr[-1]) < 2 ** 31 else np.int64
    A = sp.csc_matrix((np.ones(int(indptr[-1])), srt[ok].astype(idx_dtype),
                       indptr.astype(idx_dtype)), shape=(n_links, n))
    A.has_sorted_indices = True
    return A


def weighted_pick(cum: np.ndarray, start: np.ndarray, end: np.ndarray,
                  key: np.ndarray, salt: int) -> np.ndarray:
    """Row index in [start, end) of a flat table with cumulative weights ``cum``,
    chosen by the key with probability proportional to the rows' weights:
    ``target = base + mix64(key, salt) % total``, the row whose cumulative range holds
    it (exact integer arithmetic; every segment must have a positive total)."""
    base = np.where(start > 0, cum[np.maximum(start - 1, 0)], 0)
    total = cum[end - 1] - base
    target = base + (mix64(key, salt) % total.astype(np.uint64)).astype(np.int64)
    return np.searchsorted(cum, target, side="right")


class Network:
    """Shared interface (see the module docstring); subclasses set the fields and
    implement ``route_mask`` and ``_name``."""

    capacity: np.ndarray
    nic_gbps: float
    cluster: Cluster

    @property
    def n_links(self) -> int:
        return len(self.capacity)

    def route(self, src, dst, key) -> sp.csc_matrix:
        """The route matrix alone (``route_mask(...)[0]``)."""
        return self.route_mask(src, dst, key)[0]

    def route_mask(self, src, dst, key) -> tuple[sp.csc_matrix, np.ndarray]:
        raise NotImplementedError

    def link_names(self, ids) -> list[str]:
        ids = np.asarray(ids, dtype=np.int64).ravel()
        if len(ids) and (ids.min() < 0 or ids.max() >= self.n_links):
            raise ValueError(f"link ids must lie in [0, {self.n_links})")
        return [self._name(int(i)) for i in ids]

    def _name(self, i: int) -> str:
        raise NotImplementedError


class BestNetwork(Network):
    """Ideal non-blocking electrical switch (spec 2.12 "Best"): no links at all, every
    route column empty; flows are limited by their NICs only."""

    def __init__(self, cluster: Cluster, nic_gbps: float = 1600):
        self.cluster, self.nic_gbps = cluster, float(nic_gbps)
        self.capacity = np.zeros(0)

    def route_mask(self, src, dst, key):
        src, dst, key = flows_in(src, dst, key, self.cluster.n_gpus)
        return (sp.csc_matrix((0, len(src)), dtype=np.float64),
                np.zeros(len(src), dtype=bool))


_SALT_INTRA, _SALT_PLANNED, _SALT_DIRECT, _SALT_TWOHOP = 0x11, 0x22, 0x33, 0x44


class OcsNetwork(Network):
    """LumosCore (Cross Wiring) or Uniform wiring after an OCS reconfiguration
    (spec 1.1-1.3; routing spec 2.7 / [002] 4.4).

    Directed links, ids in this order: leaf a -> spine (pod(a), h) at ``a*H + h``
    (capacity tau*B: the tau parallel leaf-spine links as one), spine (pod(b), h) ->
    leaf b at ``n_leaves*H + b*H + h`` (tau*B), then spine (i,h) -> spine (j,h) for every
    R[h,i,j] > 0, i != j, in (h, i, j) order (R[h,i,j]*B). B = ``nic_gbps``.

    Routing of a flow from leaf a (Pod i) to leaf b (Pod j), key-chosen with the hash
    ``mix64`` (a -> b and b -> a with one key take the same spine):

    - a == b: empty column;
    - i == j: a -> spine (i, h) -> b with h = mix64(key) % H (ECMP inside the Pod);
    - planned: the spines h of the L_abh rows of ``routes`` for the unordered pair {a,b}
      (both orientations summed; [DECISION] only h with R[h,i,j] > 0, so a plan the
      OCS did not realize falls through), h chosen with probability proportional to the
      counts: a -> (i,h) -> (j,h) -> b;
    - probing fallback ([DECISION], spec 4.2 lists probing as RapidAISim's default): no
      usable L row: any h with R[h,i,j] > 0, probability proportional to R[h,i,j];
    - two hops: no direct link in any group: a -> (i,h) -> (k,h) -> (j,h) -> b through a
      third Pod k, (h, k) chosen with probability proportional to
      min(R[h,i,k], R[h,k,j]) (the bottleneck of the detour, [DECISION]);
    - otherwise the flow is unroutable: flagged in the mask, empty column.

    Immutable: the simulator builds a new network after each reconfiguration.
    """

    def __init__(self, cluster: Cluster, R, routes, nic_gbps: float = 1600):
        """``R``: (H, P, P) realized links (``instances.lumos.check.realized_topology``);
        ``routes``: L_abh rows (a, b, h, count), an (n, 4) int array or a
        ``LogicalSolution``. Routing costs O(n_flows * H) plus O(H * P) per Pod pair
        that needs the two-hop search."""
        fab = cluster.fabric
        self.cluster, self.nic_gbps = cluster, float(nic_gbps)
        H, P, nL = fab.H, fab.pods, fab.n_leaves
        R = np.asarray(R)
        if R.shape != (H, P, P) or not np.issubdtype(R.dtype, np.integer) or (R < 0).any():
            raise ValueError(f"R must be a non-negative integer array of shape {(H, P, P)}")
        if not np.array_equal(R, R.transpose(0, 2, 1)):
            raise ValueError("R must be symmetric (bidirectional logical links, spec 1.2)")
        if np.einsum("hii->", R):
            raise ValueError("R has a link from a Pod to itself")
        self.R = R.astype(np.int64)
        self.R.setflags(write=False)
        self._H, self._P, self._nL, self._lpp = H, P, nL, fab.leaves_per_pod
        h, i, j = np.nonzero(self.R)
        self._ss = np.stack([h, i, j], axis=1)           # spine-spine link table
        self._ss_id = np.full((H, P, P), -1, dtype=np.int64)
        self._ss_id[h, i, j] = 2 * nL * H + np.arange(len(h))
        self.capacity = np.concatenate([np.full(2 * nL * H, fab.tau * self.nic_gbps),
                                        self.R[h, i, j] * self.nic_gbps])
        self._plan = self._planned_table(routes)

    def _planned_table(self, routes) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """L_abh rows merged per (unordered cross-Pod leaf pair, h), usable ones only:
        (sorted unique pair codes, segment starts, spines h, cumulative counts)."""
        e = np.asarray(getattr(routes, "entries", routes), dtype=np.int64).reshape(-1, 4)
        nL, H = self._nL, self._H
        a, b, h, c = e.T
        if ((a < 0) | (a >= nL) | (b < 0) | (b >= nL) | (h < 0) | (h >= H)).any() or (c < 0).any():
            raise ValueError(f"routes rows (a, b, h, count) need a, b in [0, {nL}), "
                             f"h in [0, {H}), count >= 0")
        pa, pb = a // self._lpp, b // self._lpp
        keep = (pa != pb) & (c > 0)
        keep[keep] = self.R[h[keep], pa[keep], pb[keep]] > 0
        code = np.minimum(a, b)[keep] * nL + np.maximum(a, b)[keep]
        ph = code * H + h[keep]
        uph, inv = np.unique(ph, return_inverse=True)
        cnt = np.bincount(inv, weights=c[keep], minlength=len(uph)).astype(np.int64)
        pair = uph // H
        upair, starts = np.unique(pair, return_index=True)
        return upair, starts, uph % H, np.cumsum(cnt)

    def route_mask(self, src, dst, key):
        src, dst, key = flows_in(src, dst, key, self.cluster.n_gpus)
        H, nL, lpp = self._H, self._nL, self._lpp
        la, lb = self.cluster.leaf_of(src), self.cluster.leaf_of(dst)
        pa, pb = la // lpp, lb // lpp
        n = len(src)
        h = np.full(n, -1, dtype=np.int64)       # group of the path
        mid = np.full(n, -1, dtype=np.int64)     # third Pod of a two-hop path
        intra = (la != lb) & (pa == pb)
        h[intra] = (mix64(key[intra], _SALT_INTRA) % np.uint64(H)).astype(np.int64)
        cross = np.flatnonzero(pa != pb)
        # planned: segment of the unordered leaf pair in the L table
        upair, starts, ph, cum = self._plan
        code = np.minimum(la, lb)[cross] * nL + np.maximum(la, lb)[cross]
        pos = np.searchsorted(upair, code)
        found = pos < len(upair)
        found[found] = upair[pos[found]] == code[found]
        f, s = cross[found], pos[found]
        end = np.append(starts[1:], len(ph))
        h[f] = ph[weighted_pick(cum, starts[s], end[s], key[f], _SALT_PLANNED)]
        rest = cross[~found]
        # probing fallback: direct links, weight R[h, i, j]
        W = self.R[:, pa[rest], pb[rest]].T                       # (n_rest, H)
        cumW = np.cumsum(W, axis=1)
        direct = cumW[:, -1] > 0
        r = rest[direct]
        tgt = (mix64(key[r], _SALT_DIRECT) % cumW[direct, -1].astype(np.uint64)).astype(np.int64)
        h[r] = (cumW[direct] <= tgt[:, None]).sum(axis=1)
        self._two_hop(rest[~direct], pa, pb, key, h, mid)
        return self._assemble(la, lb, pa, pb, h, mid), (pa != pb) & (h < 0)

    def _two_hop(self, fl, pa, pb, key, h, mid, chunk: int = 512) -> None:
        """Fill h and mid for flows ``fl`` (no direct link) by unique Pod pair, in chunks
        of Pod pairs (memory chunk * H * P)."""
        if len(fl) == 0:
            return
        P = self._P
        up, inv = np.unique(pa[fl] * P + pb[fl], return_inverse=True)
        for c0 in range(0, len(up), chunk):
            sel = np.flatnonzero((inv >= c0) & (inv < c0 + chunk))
            pi, pj = up[c0:c0 + chunk] // P, up[c0:c0 + chunk] % P
            W = np.minimum(self.R[:, pi, :], self.R[:, :, pj].transpose(0, 2, 1))  # (H, m, P)
            cumW = np.cumsum(W.transpose(1, 0, 2).reshape(len(pi), -1), axis=1)
            row = inv[sel] - c0
            ok = cumW[row, -1] > 0
            g, row = fl[sel[ok]], row[ok]
            tgt = (mix64(key[g], _SALT_TWOHOP) % cumW[row, -1].astype(np.uint64)).astype(np.int64)
            flat = (cumW[row] <= tgt[:, None]).sum(axis=1)
            h[g], mid[g] = flat // P, flat % P

    def _assemble(self, la, lb, pa, pb, h, mid) -> sp.csc_matrix:
        H, nL = self._H, self._nL
        n = len(la)
        links = np.full((n, 4), -1, dtype=np.int64)
        on = h >= 0
        links[on, 0] = la[on] * H + h[on]
        links[on, 3] = nL * H + lb[on] * H + h[on]
        d = on & (pa != pb) & (mid < 0)
        links[d, 1] = self._ss_id[h[d], pa[d], pb[d]]
        t = mid >= 0
        links[t, 1] = self._ss_id[h[t], pa[t], mid[t]]
        links[t, 2] = self._ss_id[h[t], mid[t], pb[t]]
        return paths_to_csc(links, self.n_links)

    def _name(self, i: int) -> str:
        H, nL, lpp = self._H, self._nL, self._lpp
        if i < 2 * nL * H:
            up, (a, h) = i < nL * H, divmod(i % (nL * H), H)
            leaf = f"pod{a // lpp}.leaf{a % lpp}"
            spine = f"pod{a // lpp}.spine{h}"
            return f"{leaf}->{spine}" if up else f"{spine}->{leaf}"
        h, p, q = self._ss[i - 2 * nL * H]
        return f"pod{p}.spine{h}->pod{q}.spine{h}"
