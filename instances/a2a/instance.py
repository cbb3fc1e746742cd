"""All-to-all on reconfigurable photonic interconnects: instance, strategy, independent checker.

Problem (Zhou, Addanki, Apostolaki, "To Reconfigure or Not to Reconfigure: Optimizing All-to-All
Collectives in Circuit-Switched Photonic Interconnects", 2026, Sections 2-3; spec ``a2a.md``):
n GPUs, k optical switches (every topology is a digraph with out- and in-degree <= k), each
topology costs R. A *strategy* is a sequence of d topologies, each with rounds of flows on
paths; cost = R * d + sum over rounds of the round's hop-synchronous time (spec 1.4)::

    cost(round) = sum_{tau=1..h_r} max{ alpha + beta * S_f : f in round, h_f >= tau }

which is h_r * T for uniform flows (the paper's TotalCost, Sec. 3.1).

File format::

    {"problem": "a2a", "format": 1, "name": ..., "n": 8, "k": 1, "R": 7.0,
     "link": {"T": 1.0}                         # traffic in chunks, tau(S) = T * S
          or {"bandwidth_gbps": 800, "latency_s": 5e-7, "chunk_bytes": 4e6},  # traffic in bytes
     "traffic": [[...n x n...]]  or  {"uniform": S}}
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from instances.errors import (InstanceError, as_matrix, known_fields, number, obj, require,
                             seq, short, text)
from instances.limits import guard

BYTE_TOL = 1e-6        # relative tolerance on delivered bytes
STEP = 1 << 24         # (link, hop index) id = link * STEP + hop index
# Memory of a solve per ordered GPU pair: the n x n traffic, the checker's n x n arrays and a
# strategy's n(n-1) flow paths (measured about 110 bytes per pair for one-hop at n = 3000).
BYTES_PER_PAIR = 128
MIN_BANDWIDTH_GBPS = 1e-9      # 1 bit/s: below it the per-byte time 8 / (bw 1e9) overflows


@dataclass
class Link:
    """alpha-beta link model (Hockney; paper Sec. 2.1): tau(S) = alpha + beta * S per hop."""

    alpha: float = 0.0          # single-hop latency (s, or T-units)
    beta: float = 1.0           # inverse bandwidth per traffic unit
    chunk: float = 1.0          # chunk size in traffic units (simulator)
    spec: dict = field(default_factory=lambda: {"T": 1.0})   # the form it was given in

    @classmethod
    def from_dict(cls, d) -> "Link":
        obj("link", d)
        if "T" in d:
            known_fields("link", d, ("T",))
            T = number("link.T", d["T"], lo=0, strict_lo=True)
            return cls(0.0, T, 1.0, {"T": T})
        known_fields("link", d, ("bandwidth_gbps", "latency_s", "chunk_bytes"))
        if "bandwidth_gbps" not in d:
            raise InstanceError("link", "needs \"T\" (T-unit mode) or \"bandwidth_gbps\" (with "
                                        "optional \"latency_s\", \"chunk_bytes\")")
        bw = number("link.bandwidth_gbps", d["bandwidth_gbps"], lo=MIN_BANDWIDTH_GBPS)
        lat = number("link.latency_s", d.get("latency_s", 0.0), lo=0)
        chunk = number("link.chunk_bytes", d.get("chunk_bytes", 4e6), lo=0, strict_lo=True)
        return cls(lat, 8.0 / (bw * 1e9), chunk,
                   {"bandwidth_gbps": bw, "latency_s": lat, "chunk_bytes": chunk})

    def tau(self, S):
        """Per-hop time of a message of S traffic units."""
        return self.alpha + self.beta * np.asarray(S, dtype=float)


@dataclass
class A2AInstance:
    """n GPUs, degree k, per-reconfiguration delay R, link model and traffic matrix A."""

    n: int
    k: int
    R: float
    link: Link
    traffic: np.ndarray | None = None       # n x n, zero diagonal; None with uniform_size
    uniform_size: float | None = None       # {"uniform": S}: every off-diagonal entry is S
    name: str = "a2a"
    meta: dict = field(default_factory=dict)

    problem = "a2a"

    def __post_init__(self):
        self.n = number("n", self.n, integer=True, lo=2)
        guard("n", BYTES_PER_PAIR * float(self.n) ** 2,
              f"n = {self.n} GPUs (n x n traffic, strategies of n(n-1) flows)")
        self.k = number("k", self.k, integer=True, lo=1)
        if self.k > self.n - 1:
            raise InstanceError("k", f"must be <= n - 1 = {self.n - 1}, got {self.k}")
        self.R = number("R", self.R, lo=0)
        if self.traffic is None:
            self.uniform_size = number("traffic.uniform", self.uniform_size, lo=0, strict_lo=True)
        else:
            if isinstance(self.traffic, list):     # rows checked before any array is built
                if len(self.traffic) != self.n:
                    raise InstanceError("traffic", f"must be {self.n}x{self.n}, got "
                                                   f"{len(self.traffic)} rows")
                for i, row in enumerate(self.traffic):
                    seq(f"traffic[{i}]", row)
                    if len(row) != self.n:
                        raise InstanceError(f"traffic[{i}]", f"has {len(row)} entries, expected "
                                                             f"n = {self.n}")
            A = as_matrix("traffic", self.traffic)
            if A.shape[0] != self.n:
                raise InstanceError("traffic", f"must be {self.n}x{self.n}, got {A.shape[0]}x{A.shape[1]}")
            if np.any(np.diag(A) != 0):
                raise InstanceError("traffic", "diagonal must be zero (a GPU sends nothing to itself)")
            if not A.any():
                raise InstanceError("traffic", "has no positive entry")
            self.traffic = A

    @property
    def A(self) -> np.ndarray:
        """The traffic matrix (materialized on demand for the uniform form)."""
        if self.traffic is None:
            A = np.full((self.n, self.n), self.uniform_size)
            np.fill_diagonal(A, 0.0)
            return A
        return self.traffic

    @property
    def is_uniform(self) -> bool:
        if self.traffic is None:
            return True
        off = ~np.eye(self.n, dtype=bool)
        vals = self.traffic[off]
        return bool(np.all(vals == vals[0]))

    @property
    def T(self) -> float:
        """Per-hop time of the smallest positive flow (= the paper's T for uniform traffic)."""
        A = self.A
        return float(self.link.tau(A[A > 0].min()))

    FIELDS = ("n", "k", "R", "link", "traffic")    # besides problem, format, name, meta

    @classmethod
    def from_dict(cls, d: dict) -> "A2AInstance":
        tr = require(d, "traffic")
        if isinstance(tr, dict):
            known_fields("traffic", tr, ("uniform",))
            if "uniform" not in tr:
                raise InstanceError("traffic.uniform", "missing (the object form is "
                                                       "{\"uniform\": size})")
            traffic, uni = None, tr["uniform"]
        elif isinstance(tr, list):
            traffic, uni = tr, None
        else:
            raise InstanceError("traffic", f"must be an n x n matrix (list of rows) or "
                                           f"{{\"uniform\": size}}, got {short(tr)}")
        return cls(n=require(d, "n"), k=require(d, "k"), R=require(d, "R"),
                   link=Link.from_dict(d.get("link", {"T": 1.0})), traffic=traffic,
                   uniform_size=uni, name=text("name", d.get("name", "a2a")),
                   meta=dict(obj("meta", d.get("meta", {}))))

    def to_dict(self) -> dict:
        d = {"problem": "a2a", "format": 1, "name": self.name, "n": self.n, "k": self.k,
             "R": self.R, "link": dict(self.link.spec),
             "traffic": {"uniform": self.uniform_size} if self.traffic is None
             else self.traffic.tolist()}
        if self.meta:
            d["meta"] = self.meta
        return d


# ------------------------------------------------------------------------------------------
# Strategy = [Phase] ; Phase = (topology arcs, [Round]) ; Round = [Group] (spec 1.3)
# ------------------------------------------------------------------------------------------
@dataclass
class Group:
    """Flows of one round with the same hop count h: ``paths`` (m, h+1) node sequences and the
    traffic each carries (``size``: the whole flow; a piece of it only in a strategy marked
    ``info["splittable"]``, spec A23)."""

    paths: np.ndarray
    size: np.ndarray


@dataclass
class Phase:
    arcs: np.ndarray                     # (m, 2) int; a repeated arc = parallel circuits
    rounds: list[list[Group]]


@dataclass
class A2AStrategy:
    phases: list[Phase]
    info: dict = field(default_factory=dict)       # method's own description (family, d, ...)
    # info["splittable"] = True: the method may send a flow as several pieces (the FAST and
    # DirectConnect baselines, spec 4.2, A23); the checker rejects split flows otherwise.

    def to_dict(self) -> dict:
        return {"info": self.info, "phases": [
            {"arcs": np.asarray(p.arcs).tolist(),
             "rounds": [[{"path": path.tolist(), "size": float(s)}
                         for g in r for path, s in zip(g.paths, g.size)] for r in p.rounds]}
            for p in self.phases]}

    @classmethod
    def from_dict(cls, d: dict) -> "A2AStrategy":
        """Inverse of :meth:`to_dict`; node ids must be integers and arcs pairs (InstanceError)."""
        phases = []
        for i, p in enumerate(d["phases"]):
            rounds = []
            for j, r in enumerate(p["rounds"]):
                paths = [_int_array(f"phases[{i}].rounds[{j}][{m}].path", f["path"], 1)
                         for m, f in enumerate(r)]
                rounds.append([Group(P, S) for P, S in
                               by_hops(paths, [float(f["size"]) for f in r])])
            arcs = _int_array(f"phases[{i}].arcs", p["arcs"], 2) if len(p["arcs"]) else \
                np.zeros((0, 2), dtype=np.int64)
            if arcs.shape[1] != 2:
                raise InstanceError(f"phases[{i}].arcs", f"must be [u, v] pairs, got rows of "
                                                         f"{arcs.shape[1]}")
            phases.append(Phase(arcs, rounds))
        return cls(phases, dict(d.get("info", {})))

    @property
    def n_rounds(self) -> int:
        return sum(len(p.rounds) for p in self.phases)


def _int_array(field_: str, value, ndim: int) -> np.ndarray:
    """An integer array of the given dimension from JSON lists (no silent float truncation)."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise InstanceError(field_, "must be numbers") from None
    if arr.ndim != ndim or not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
        raise InstanceError(field_, f"must be a {ndim}-D array of integer node ids, got {short(value)}")
    return arr.astype(np.int64)


def by_hops(paths, sizes=None) -> list[tuple[np.ndarray, np.ndarray | None]]:
    """Group paths by hop count, fewest hops first: [(paths (m, h+1) int64, sizes (m,) or None)].

    ``paths``: node sequences (h+1,) or blocks of them (m, h+1); ``sizes``: one size per sequence
    or one array per block (None for abstract candidates). The one grouping used by every
    construction, model and file reader (a round's groups, spec 1.3)."""
    by_len: dict[int, list] = {}
    for m, p in enumerate(paths):
        B = np.atleast_2d(np.asarray(p, dtype=np.int64))
        S = None if sizes is None else np.atleast_1d(np.asarray(sizes[m], dtype=float))
        by_len.setdefault(B.shape[1], []).append((B, S))
    return [(np.concatenate([B for B, _ in v]),
             None if sizes is None else np.concatenate([S for _, S in v]))
            for _, v in sorted(by_len.items())]


def arc_multiplicity(arcs) -> dict[tuple[int, int], int]:
    """{(u, v): number of parallel circuits u -> v} of a topology's arc list."""
    mult: dict[tuple[int, int], int] = {}
    for u, v in np.asarray(arcs, dtype=np.int64).reshape(-1, 2):
        key = (int(u), int(v))
        mult[key] = mult.get(key, 0) + 1
    return mult


def round_time(hops: np.ndarray, times: np.ndarray) -> float:
    """Spec 1.4: sum_{tau=1..max h} max{times_f : h_f >= tau} (hop-synchronous store-and-forward)."""
    if len(hops) == 0:
        return 0.0
    H = int(hops.max())
    best = np.zeros(H + 1)
    np.maximum.at(best, hops, times)
    return float(np.maximum.accumulate(best[::-1])[::-1][1:].sum())


def check_strategy(inst: A2AInstance, st: A2AStrategy) -> tuple[list[str], dict]:
    """Independent verifier: returns (violations, metrics recomputed from the strategy).

    Checks (spec 7.9): every topology has out/in-degree <= k (parallel arcs count) and no
    self-loop; every path follows arcs of its phase's topology; in every round no (link, hop
    index) is used more times than the link has circuits (contention-free in the time-expanded
    graph); every flow with A[s,t] > 0 is delivered in full, as exactly one piece (flows are
    unsplittable, spec 1.3, A23) unless ``st.info["splittable"]`` is set, and nothing else is
    sent. The cost is recomputed: R * (phases carrying >= 1 flow) + sum of round times (spec 1.4,
    A10); a piece is timed tau(piece size).
    """
    n, k = inst.n, inst.k
    A = inst.A
    bad: list[str] = []
    delivered = np.zeros((n, n))
    pieces = np.zeros((n, n), dtype=np.int64)
    splittable = bool(st.info.get("splittable", False))
    transmit = hop_sum = 0.0
    d_eff = rounds = 0
    for i, ph in enumerate(st.phases):
        arcs = np.asarray(ph.arcs, dtype=np.int64)
        if arcs.size == 0:
            arcs = arcs.reshape(0, 2)
        if arcs.ndim != 2 or arcs.shape[1] != 2:
            bad.append(f"phase {i}: arcs must be an (m, 2) array of [u, v], got shape {arcs.shape}")
            continue
        if arcs.size and (arcs.min() < 0 or arcs.max() >= n):
            bad.append(f"phase {i}: arc endpoint out of range [0, {n})")
            continue
        if np.any(arcs[:, 0] == arcs[:, 1]):
            bad.append(f"phase {i}: self-loop arc")
        code = arcs[:, 0] * n + arcs[:, 1]
        mult = np.bincount(code, minlength=n * n)
        outd, ind = np.bincount(arcs[:, 0], minlength=n), np.bincount(arcs[:, 1], minlength=n)
        if outd.max(initial=0) > k or ind.max(initial=0) > k:
            bad.append(f"phase {i}: degree exceeds k={k} (max out {outd.max()}, max in {ind.max()})")
        if any(sum(len(g.paths) for g in r) for r in ph.rounds):
            d_eff += 1
        for j, r in enumerate(ph.rounds):
            where = f"phase {i} round {j}"
            uses, hops, times = [], [], []
            for g in r:
                P = np.asarray(g.paths, dtype=np.int64)
                S = np.asarray(g.size, dtype=float)
                if P.ndim != 2 or P.shape[1] < 2 or S.ndim != 1 or len(S) != len(P):
                    bad.append(f"{where}: malformed path group")
                    continue
                if len(P) == 0:                   # an empty group sends nothing
                    continue
                if P.min() < 0 or P.max() >= n:
                    bad.append(f"{where}: node out of range")
                    continue
                if np.any(~np.isfinite(S)) or np.any(S <= 0):
                    bad.append(f"{where}: flow sizes must be finite and > 0")
                    continue
                h = P.shape[1] - 1
                link = P[:, :-1] * n + P[:, 1:]                        # (m, h)
                if np.any(mult[link] == 0):
                    bad.append(f"{where}: a path uses an arc not in the phase's topology")
                    continue
                uses.append((link * STEP + np.arange(h)).ravel())      # (link, step) ids
                np.add.at(delivered, (P[:, 0], P[:, -1]), S)
                np.add.at(pieces, (P[:, 0], P[:, -1]), 1)
                hops.append(np.full(len(P), h))
                times.append(inst.link.tau(S))
            if not uses:
                continue
            u, cnt = np.unique(np.concatenate(uses), return_counts=True)
            over = cnt > mult[u // STEP]
            if over.any():
                lk, step = divmod(int(u[over][0]), STEP)
                bad.append(f"{where}: contention on link {lk // n}->{lk % n} at hop {step + 1} "
                           f"({cnt[over][0]} flows)")
            hh, tt = np.concatenate(hops), np.concatenate(times)
            transmit += round_time(hh, tt)
            hop_sum += int(hh.max())
            rounds += 1
    if np.any(np.diag(delivered) > 0):
        bad.append("a path starts and ends at the same GPU")
    split = pieces > 1
    if split.any() and not splittable:
        s, t = map(int, np.argwhere(split)[0])
        bad.append(f"flow ({s},{t}) is sent as {pieces[s, t]} pieces: flows are unsplittable "
                   f"(spec 1.3, A23) unless the strategy is marked splittable "
                   f"({int(split.sum())} flows split)")
    # relative to the flow, with an absolute floor of one unit, or of the mean flow when traffic
    # is on a smaller scale (else a file of 1e-9-sized flows could have them all dropped)
    pos = A[A > 0]
    tol = BYTE_TOL * np.maximum(A, min(1.0, float(pos.mean())) if pos.size else 1.0)
    extra = (A == 0) & (delivered > 0)
    if extra.any():
        s, t = map(int, np.argwhere(extra)[0])
        bad.append(f"flow ({s},{t}) has no traffic but is sent")
    miss = np.abs(delivered - A) > tol
    if miss.any():
        s, t = map(int, np.argwhere(miss)[0])
        bad.append(f"flow ({s},{t}): delivered {delivered[s, t]:.6g} of {A[s, t]:.6g} "
                   f"({int(miss.sum())} flows wrong)")
    reconf = inst.R * d_eff
    metrics = {"total_cost": reconf + transmit, "reconfig_time": reconf,
               "transmission_time": transmit, "d": d_eff, "n_rounds": rounds, "hop_sum": hop_sum,
               "splittable": splittable}
    return bad, metrics
