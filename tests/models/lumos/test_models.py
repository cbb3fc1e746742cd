"""LumosCore gurobipy models: ILP optimum vs heuristics, full vs reduced, Gurobi vs HiGHS."""
from __future__ import annotations

import numpy as np
import pytest

from heuristics.lumos.mdmcf.decompose import int_bounds_hold, sym_bounds_hold, sym_decompose_rewiring
from heuristics.lumos.mdmcf.reconfig import itv_configure
from instances.lumos.fabric import Fabric
from instances.lumos.instance import ReconfigInstance
from instances.lumos.logical import LogicalInstance
from instances.lumos.check import check_logical
from instances.lumos.workloads import random_requirement, topology_sequence
from models.backend import solve, solve_lexicographic
from models.lumos.decomp import build_imd, build_simd, extract_imd, extract_simd
from models.lumos.ilp import build_itv, build_uniform, extract_itv
from models.lumos.logical import build_logical, extract_logical
from tests.conftest import needs_gurobi
from toolkit.methods.lumos_reconfig import rewiring_bound
from toolkit.registry import RunConfig, problem

BACKENDS = ["highs", pytest.param("gurobi", marks=needs_gurobi)]


def step_instance(P, K, seed, churn=0.4, kl=2):
    fab = Fabric(P, kl, K, 1)
    seq = topology_sequence(fab, 2, "rings", churn, seed)
    old = itv_configure(ReconfigInstance(fab, seq[0], "cross"))
    return ReconfigInstance(fab, seq[1], "cross", old)


def run(inst, method, backend="highs", **opts):
    prob = problem("lumos-reconfig")
    out = prob.methods[method].run(inst, RunConfig(backend=backend, mip_gap=0, options=opts))
    bad, m = prob.check(inst, out.solution)
    assert not bad, bad
    return out, m


@pytest.mark.parametrize("seed", range(4))
def test_itv_ilp_optimum_is_at_most_mdmcf_and_at_least_the_bound(seed):
    inst = step_instance(8, 4, seed)
    out, m = run(inst, "itv-ilp")
    assert out.solver.status == "optimal" and m["realized"]
    assert m["rewiring"] == pytest.approx(out.solver.objective)
    for heur in ("itv-mdmcf", "itv-mcf"):
        assert m["rewiring"] <= run(inst, heur)[1]["rewiring"]
    assert m["rewiring"] >= rewiring_bound(inst)


@pytest.mark.parametrize("seed", range(6))
def test_bound_holds_with_one_way_old_circuits(seed):
    """Old configurations with a few mirror circuits removed (one-way circuits, which a
    new configuration may complete with 1 circuit): rewiring_bound <= the full ITV-ILP
    optimum (the bound without the completion credit exceeded it, e.g. 37 > 33)."""
    import copy

    inst = step_instance(6, 4, seed)
    perm = np.array(inst.old.perm)
    h, k, p = np.nonzero(perm[:, 1::2] >= 0)
    for i in np.random.default_rng(seed).choice(len(h), size=min(3, len(h)), replace=False):
        perm[h[i], 2 * k[i] + 1, p[i]] = -1
    old = copy.deepcopy(inst.old)
    old.perm = perm
    inst = ReconfigInstance(inst.fabric, inst.C, "cross", old)
    out, m = run(inst, "itv-ilp", model="full")
    assert out.solver.status == "optimal" and m["rewiring"] >= rewiring_bound(inst)


@pytest.mark.parametrize("seed", range(2))
def test_full_and_reduced_itv_models_agree(seed):
    inst = step_instance(6, 4, seed)
    full = run(inst, "itv-ilp", model="full")[1]["rewiring"]
    red = run(inst, "itv-ilp", model="reduced")[1]["rewiring"]
    assert full == red


def test_gurobi_and_highs_agree_on_itv_ilp():
    pytest.importorskip("gurobipy")
    inst = step_instance(5, 4, 3)
    objs = {}
    for backend in ("highs", "gurobi"):
        try:
            model, h = build_itv(inst.C[0], np.array([inst.old.matrix(0, k) for k in range(4)]))
            res = solve(model, backend=backend, mip_gap=0)
        except Exception as exc:  # noqa: BLE001 - no Gurobi here
            pytest.skip(f"backend {backend}: {exc}")
        if res.status == "error":
            pytest.skip(res.message)
        assert res.status == "optimal"
        objs[backend] = res.objective
        mats = extract_itv(h, res)
        assert sum(np.abs(a - b).sum() for a, b in zip(
            mats, [inst.old.matrix(0, k) for k in range(4)])) == pytest.approx(res.objective)
    assert objs["highs"] == pytest.approx(objs["gurobi"])


@pytest.mark.parametrize("backend", BACKENDS)
def test_uniform_models_on_the_three_pod_full_mesh(backend):
    fab = Fabric(3, 2, 2, tau=2)
    C = np.array([[0, 1, 1], [1, 0, 1], [1, 1, 0]])
    u = np.zeros((2, 3, 3), dtype=int)
    model, _ = build_uniform(C, u, exact=True)
    assert solve(model, backend=backend).status == "infeasible"
    model, h = build_uniform(C, u)
    stages = solve_lexicographic(model, [h.unmet, h.rewiring], backend=backend)
    assert [round(s.objective) for s in stages] == [1, 4]     # 1 link unmet; 2 links = 4 circuits
    inst = ReconfigInstance(fab, C[None], "uniform")
    out, m = run(inst, "uniform-ilp", backend=backend)
    assert m["shortfall"] == 1 and m["rewiring"] == 4


@pytest.mark.parametrize("backend", BACKENDS)
def test_decomposition_models(backend):
    rng = np.random.default_rng(1)
    M = rng.integers(0, 3, size=(5, 5))
    C = np.triu(M, 1) + np.triu(M, 1).T
    model, h = build_simd(C)
    res = solve(model, backend=backend)
    assert res.status == "optimal" and sym_bounds_hold(C, extract_simd(h, res))
    A_old = rng.integers(0, 2, size=C.shape)
    model, h = build_simd(C, A_old)
    res = solve(model, backend=backend)
    A = sym_decompose_rewiring(C, A_old)
    sup = ~np.eye(5, dtype=bool) & (C > 0)          # the model has variables where C > 0
    assert res.objective == pytest.approx(np.abs(A - A_old)[sup].sum())   # MCF = LP optimum
    model, h = build_imd(M, 3)
    res = solve(model, backend=backend)
    assert res.status == "optimal" and int_bounds_hold(M, extract_imd(h, res))


def leaf_triangle():
    """Leaves 0, 2, 4 in Pods 0, 1, 2 pairwise (each needs 2 paths), tau = 1, H = 2."""
    fab = Fabric(3, 2, 2, 1)
    L = np.zeros((6, 6), dtype=int)
    for a, b in ((0, 2), (2, 4), (0, 4)):
        L[a, b] = L[b, a] = 1
    return LogicalInstance(fab, L)


@pytest.mark.parametrize("backend", BACKENDS)
def test_logical_model_tau1_triangle_has_no_contention_free_topology(backend):
    """[002] Fig. 12: with tau = 1 model (5)(6)(8) can be infeasible; contention 2 is optimal."""
    inst = leaf_triangle()
    model, _ = build_logical(inst, "feasibility")
    assert solve(model, backend=backend).status == "infeasible"
    model, h = build_logical(inst, "min_contention")
    res = solve(model, backend=backend)
    assert res.status == "optimal" and round(res.objective) == 2
    bad, m = check_logical(inst, extract_logical(h, res))
    assert not bad and m["contention_level"] == 2


@pytest.mark.parametrize("seed", range(3))
def test_logical_model_tau2_is_feasible_and_matches_theorem_4_1(seed):
    fab = Fabric(3, 4, 4, 2)
    inst = LogicalInstance(fab, random_requirement(fab, seed))
    model, h = build_logical(inst, "feasibility")
    res = solve(model, backend="auto")
    assert res.status == "optimal"
    bad, m = check_logical(inst, extract_logical(h, res))
    assert not bad and m["contention_free"]
