"""LumosCore review tests (issue 6, item 7): the checker on dual-link configurations
(spec 1.3 W3), pairwise refine as a property (heuristics.lumos.mdmcf.refine), and odd-set
certificates as real proofs of Uniform unrealizability (spec 1.4)."""
from __future__ import annotations

from itertools import combinations, product

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from heuristics.lumos.baselines import helios, uniform_greedy
from heuristics.lumos.mdmcf.decompose import (find_connection, int_decompose, sym_decompose,
                                        sym_decompose_rewiring)
from heuristics.lumos.realize import realize
from heuristics.lumos.mdmcf.reconfig import cross_realize, dual_realize, old_even
from heuristics.lumos.mdmcf.refine import pair_refine
from instances.lumos.fabric import Fabric, make_wiring
from instances.lumos.instance import OcsConfig, ReconfigInstance, perm_from_matrix
from instances.lumos.check import check_config


# ----------------------------------------------------------------------------------------
# 1. dual-link wiring (W3): OCS m carries ports 2m, 2m+1 of every spine, both directions;
#    OCS port 2i + s is slot s of Pod i. A link i <-> j is in(2i+s) -> out(2j+t) plus its
#    mirror in(2j+t) -> out(2i+s) in the same OCS.
# ----------------------------------------------------------------------------------------
DUAL_C = np.array([[[0, 2, 1, 0, 0],
                    [2, 0, 1, 1, 0],
                    [1, 1, 0, 1, 1],
                    [0, 1, 1, 0, 1],
                    [0, 0, 1, 1, 0]]])        # P = 5, degrees <= 4 = K, odd cycles included


def _dual_instance():
    fab = Fabric(5, 2, 4, tau=2)             # H = 1, K_spine = 4: 2 dual-link OCSes of 10 ports
    inst = ReconfigInstance(fab, DUAL_C, "dual")
    return fab, inst, dual_realize(fab, DUAL_C)


def _dual_circuit(cfg):
    """(k, p, q) of the first circuit in group 0 (dual_realize makes none within a Pod)."""
    k, p = np.nonzero(cfg.perm[0] >= 0)
    q = cfg.perm[0, k, p]
    assert (p // 2 != q // 2).all()
    return int(k[0]), int(p[0]), int(q[0])


def _free_port(cfg, k, avoid_pods=()):
    """A port (2 * Pod + slot) of OCS k free on both sides, of a Pod not in avoid_pods."""
    row = cfg.perm[0, k]
    return next(p for p in range(len(row))
                if row[p] < 0 and p not in row and p // 2 not in avoid_pods)


def test_dual_realization_is_accepted_and_uses_the_w3_port_map():
    fab, inst, cfg = _dual_instance()
    w = make_wiring(fab, "dual")
    assert (w.n_ocs, w.n_ports) == (2, 10)
    assert (w.tx_ocs[3] == [0, 0, 1, 1]).all() and (w.tx_port[3] == [6, 7, 6, 7]).all()
    assert (w.rx_ocs == w.tx_ocs).all() and (w.rx_port == w.tx_port).all()
    bad, m = check_config(inst, cfg)
    assert bad == [] and m["realized"] and m["links"] == DUAL_C.sum() // 2
    # every circuit's mirror is in the same OCS (the W3 internal mirror)
    for k, p in zip(*np.nonzero(cfg.perm[0] >= 0)):
        assert cfg.perm[0, k, cfg.perm[0, k, p]] == p


def test_dual_checker_rejects_a_missing_mirror():
    _, inst, cfg = _dual_instance()
    k, p, q = _dual_circuit(cfg)
    cfg.perm[0, k, q] = -1                          # drop the reverse circuit q -> p
    bad, _ = check_config(inst, cfg)
    assert any("unidirectional" in b and "L2" in b for b in bad), bad
    assert any("not realized" in b for b in bad), bad   # the link is lost, C is short


def test_dual_checker_rejects_a_mirror_that_points_elsewhere():
    _, inst, cfg = _dual_instance()
    k, p, q = _dual_circuit(cfg)
    other = _free_port(cfg, k, avoid_pods=(p // 2, q // 2))   # a third Pod's port
    cfg.perm[0, k, q] = other                       # q -> other instead of q -> p
    bad, _ = check_config(inst, cfg)
    # both p -> q and q -> other have no reverse
    assert any(b.startswith("2 unidirectional") and "L2" in b for b in bad), bad


def test_dual_checker_rejects_a_mirror_in_another_ocs():
    _, inst, cfg = _dual_instance()
    k, p, q = _dual_circuit(cfg)
    cfg.perm[0, k, q] = -1
    k2 = 1 - k                                      # the mirror moved to the other OCS
    cfg.perm[0, k2] = -1                            # (cleared, so the ports are free)
    cfg.perm[0, k2, q] = p
    bad, _ = check_config(inst, cfg)
    assert any("unidirectional" in b and "L2" in b for b in bad), bad


@pytest.mark.parametrize("slots", [(0, 1), (0, 0), (1, 1)])
def test_dual_checker_rejects_a_circuit_between_the_slots_of_one_spine(slots):
    """in(2i+s) -> out(2i+t) links spine i's port 2m+s to its own port 2m+t; with its
    mirror it is L2-bidirectional, so only the self-circuit rule catches it."""
    _, inst, cfg = _dual_instance()
    s, t = slots
    k, i = next((k, i) for k in range(2) for i in range(5)
                if (cfg.perm[0, k, [2 * i + s, 2 * i + t]] < 0).all()
                and not np.isin([2 * i + s, 2 * i + t], cfg.perm[0, k]).any())
    cfg.perm[0, k, 2 * i + s] = 2 * i + t
    cfg.perm[0, k, 2 * i + t] = 2 * i + s
    bad, _ = check_config(inst, cfg)
    assert any("itself" in b and f"Pod {i}" in b for b in bad), bad
    assert not any("L2" in b for b in bad)          # the pair is bidirectional: not the L2 rule


def test_dual_checker_rejects_a_port_used_twice():
    _, inst, cfg = _dual_instance()
    k, p, q = _dual_circuit(cfg)
    cfg.perm[0, k, _free_port(cfg, k)] = q                       # two inputs on output q
    bad, _ = check_config(inst, cfg)
    assert any("not a partial permutation" in b and f"OCS {k}" in b for b in bad), bad


def test_dual_checker_rejects_a_link_count_different_from_c():
    _, inst, cfg = _dual_instance()
    # one link fewer than C: drop a circuit and its mirror (still L2-clean)
    short = OcsConfig(cfg.perm.copy())
    k, p, q = _dual_circuit(short)
    short.perm[0, k, p] = short.perm[0, k, q] = -1
    bad, m = check_config(inst, short)
    assert m["shortfall"] == 1
    assert len(bad) == 1 and "not realized under dual" in bad[0] and "1 link(s) short" in bad[0], bad
    # one link more than C: a mirrored pair between two Pods with free ports
    extra = OcsConfig(cfg.perm.copy())
    for k in range(2):
        free = [p for p in range(10) if extra.perm[0, k, p] < 0 and p not in extra.perm[0, k]]
        pair = next(((a, b) for a, b in combinations(free, 2) if a // 2 != b // 2), None)
        if pair:
            a, b = pair
            extra.perm[0, k, a], extra.perm[0, k, b] = b, a
            break
    assert pair is not None
    bad, m = check_config(inst, extra)
    assert m["links"] == DUAL_C.sum() // 2 + 1
    assert len(bad) == 1 and "1 link(s) beyond C" in bad[0], bad


# ----------------------------------------------------------------------------------------
# 2. pairwise refine (heuristics.lumos.mdmcf.refine) as a property
# ----------------------------------------------------------------------------------------
@st.composite
def admissible_group(draw, P, K):
    """A random C_h with eqs. (11), (12) and a zero diagonal: links added in a random order
    while both ends have a free port (mostly dense: rewiring choices need busy ports)."""
    n = draw(st.integers(P, 2 * P * K))
    pairs = draw(st.lists(st.tuples(st.integers(0, P - 1), st.integers(0, P - 1)),
                          min_size=n, max_size=n))
    C = np.zeros((P, P), dtype=np.int64)
    for i, j in pairs:
        if i != j and C[i].sum() < K and C[j].sum() < K:
            C[i, j] += 1
            C[j, i] += 1
    return C


def _rewiring(parts, old) -> int:
    return int(sum(np.abs(X - U).sum() for X, U in zip(parts, old)))


@st.composite
def refine_case(draw):
    P = draw(st.integers(3, 7))
    K = draw(st.sampled_from([4, 6]))
    return P, K, draw(admissible_group(P, K)), draw(admissible_group(P, K))


@settings(max_examples=40, deadline=None)
@given(case=refine_case())
def test_pair_refine_keeps_c_and_never_increases_rewiring(case):
    """From any valid assignment of C_h over the K/2 even OCSes (FindConnection's, or the
    rewiring-oblivious SIMD + IMD of Theorem 4.1), pair_refine returns partial
    permutations with zero diagonal whose sum of X + X^T is still C_h, and it never
    rewires more against the old matrices; the full mirrored configuration passes the
    independent checker with no more rewiring (eq. 7) than before."""
    P, K, C_h, C_old = case
    fab = Fabric(P, 2, K, tau=2)                       # H = 1
    old_cfg = cross_realize(fab, C_old[None])
    inst = ReconfigInstance(fab, C_h[None], "cross", old_cfg)
    old = old_even(inst, 0)
    starts = (find_connection(sym_decompose_rewiring(C_h, old.sum(0), K // 2), old),
              int_decompose(sym_decompose(C_h), K // 2))

    def valid(X):
        return len(X) == K // 2 and all(
            set(np.unique(x)) <= {0, 1} and x.sum(0).max() <= 1 and x.sum(1).max() <= 1
            and not np.diag(x).any() for x in X) and np.array_equal(sum(x + x.T for x in X), C_h)

    def checked(X):
        cfg = OcsConfig.empty(fab, inst.wire)
        for m, x in enumerate(X):
            cfg.perm[0, 2 * m], cfg.perm[0, 2 * m + 1] = perm_from_matrix(x), perm_from_matrix(x.T)
        bad, metrics = check_config(inst, cfg)
        assert bad == [] and metrics["realized"]
        return metrics["rewiring"]

    for parts in starts:
        assert valid(parts)                           # the starting point is a valid assignment
        ref = pair_refine([p.copy() for p in parts], old)
        assert valid(ref)
        assert _rewiring(ref, old) <= _rewiring(parts, old)
        assert checked(ref) <= checked(parts)


# ----------------------------------------------------------------------------------------
# 3. odd-set certificates are proofs (spec 1.4)
# ----------------------------------------------------------------------------------------
def _sym(P, edges):
    C = np.zeros((P, P), dtype=np.int64)
    for i, j, m in edges:
        C[i, j] += m
        C[j, i] += m
    return C


# (name, P, K, C_h): not K-edge-colourable, each for an odd-set reason
UNREALIZABLE = [
    ("3-pod full mesh (spec 1.4)", 3, 2, _sym(3, [(0, 1, 1), (1, 2, 1), (0, 2, 1)])),
    ("triangle 2-2-1, K = 4", 3, 4, _sym(3, [(0, 1, 2), (1, 2, 1), (0, 2, 2)])),
    ("5-cycle, K = 2", 5, 2, _sym(5, [(0, 1, 1), (1, 2, 1), (2, 3, 1), (3, 4, 1), (4, 0, 1)])),
    # K5 minus edge 3-4, both ends tied to Pod 5: an even component without a heavy
    # triangle, so only the odd 5-subset {0..4} (9 links > 4*4/2) proves it
    ("K5 - e + pendant Pod, K = 4", 6, 4,
     _sym(6, [(a, b, 1) for a, b in combinations(range(5), 2) if (a, b) != (3, 4)]
          + [(3, 5, 1), (4, 5, 1)])),
]
# controls: realizable, so no certificate may exist and the search must find a colouring
REALIZABLE = [
    ("4-cycle, K = 2", 4, 2, _sym(4, [(0, 1, 1), (1, 2, 1), (2, 3, 1), (3, 0, 1)])),
    ("triangle 1-1-2, K = 4", 3, 4, _sym(3, [(0, 1, 1), (1, 2, 1), (0, 2, 2)])),
    ("6-cycle x 2, K = 4", 6, 4, _sym(6, [(i, (i + 1) % 6, 2) for i in range(6)])),
]


def _matchings(P):
    """Every matching of the complete graph on P Pods (one Uniform OCS configuration
    each: the L2 rule x_ij = x_ji makes an OCS an undirected matching, spec 1.3 W1)."""
    def rec(free):
        if not free:
            yield []
            return
        a, rest = free[0], free[1:]
        yield from rec(rest)                           # a unmatched
        for b in rest:
            for m in rec([v for v in rest if v != b]):
                yield [(a, b)] + m
    return list(rec(list(range(P))))


def _uniform_perm(P, K, ocs_matchings):
    perm = np.full((1, K, P), -1, dtype=np.int32)
    for k, mt in enumerate(ocs_matchings):
        for a, b in mt:
            perm[0, k, a], perm[0, k, b] = b, a
    return OcsConfig(perm)


def _brute_force_realizations(P, K, C_h) -> int:
    """Uniform configurations (K-tuples of matchings) that realize C_h. Small fabrics: all
    len(matchings)^K tuples, each judged by the independent checker. Larger: the same
    enumeration, pruned only where no completion can realize C_h exactly (the OCSes so far
    carry a link C_h does not want, or a Pod has more links left than OCSes left); each
    survivor is judged by the checker."""
    fab = Fabric(P, 2, K, tau=2)
    inst = ReconfigInstance(fab, C_h[None], "uniform")
    ms = _matchings(P)
    found = 0
    if len(ms) ** K <= 1000:
        for combo in product(ms, repeat=K):
            found += check_config(inst, _uniform_perm(P, K, combo))[1]["realized"]
        return found

    def rec(k, left, chosen):
        nonlocal found
        if k == K:
            if not left.any():
                found += check_config(inst, _uniform_perm(P, K, chosen))[1]["realized"]
            return
        for mt in ms:
            if all(left[a, b] > 0 for a, b in mt):
                nxt = left.copy()
                for a, b in mt:
                    nxt[a, b] -= 1
                    nxt[b, a] -= 1
                if nxt.sum(axis=1).max() <= K - k - 1:
                    rec(k + 1, nxt, chosen + [mt])
    rec(0, C_h.copy(), [])
    return found


@pytest.mark.parametrize("name, P, K, C_h", UNREALIZABLE, ids=[c[0] for c in UNREALIZABLE])
def test_odd_set_certificate_is_a_real_proof(name, P, K, C_h):
    fab = Fabric(P, 2, K, tau=2)                       # one group, K_spine = K
    r = realize(fab, C_h[None], "uniform")
    assert r.realizable is False and r.config is None
    (cert,) = r.certificates
    assert cert["group"] == 0 and "odd-set certificate" in r.proof
    # (a) the inequality holds on C, recomputed from its definition: an odd Pod set S
    #     holding more links than K matchings can, K * (|S| - 1) / 2
    S = cert["odd_set"]
    assert len(S) == len(set(S)) >= 3 and len(S) % 2 == 1 and all(0 <= s < P for s in S)
    inside = sum(int(C_h[a, b]) for a in S for b in S if a < b)
    assert inside == cert["links_inside"]
    assert 2 * inside > K * (len(S) - 1)               # the proof, in integers
    # (b) the constructive Uniform realizations fall short
    inst = ReconfigInstance(fab, C_h[None], "uniform")
    for method in (helios, uniform_greedy):
        bad, m = check_config(inst, method(inst))
        assert bad == [] and not m["realized"] and m["shortfall"] >= 1
    # (c) no Uniform configuration of this fabric realizes C
    assert _brute_force_realizations(P, K, C_h) == 0


@pytest.mark.parametrize("name, P, K, C_h", REALIZABLE, ids=[c[0] for c in REALIZABLE])
def test_realizable_controls_have_no_certificate(name, P, K, C_h):
    """The other side: a certificate on a colourable C would be a false proof."""
    r = realize(Fabric(P, 2, K, tau=2), C_h[None], "uniform")
    assert r.realizable is True and r.certificates == []
    assert _brute_force_realizations(P, K, C_h) > 0
