"""The compiled relabeling search (spec 3.7): incremental swaps = full evaluation, spec budget."""
from __future__ import annotations

import numpy as np
import pytest

from heuristics.a2a.rdc import family_candidates, k1_candidate, k1_curve, rdc
from heuristics.a2a.relabel import (MAX_EVALS, PASSES, RESTARTS, default_max_evals,
                                    kernel_arrays, relabel)
from heuristics.a2a.relabel_jit import init_state, search_pass
from heuristics.a2a.strategy import FlowTable
from instances.a2a.instance import A2AInstance, Link


def _cands(n, k, fam):
    if k == 1:
        return [k1_candidate(n, k1_curve(n)[0][:d]) for d in range(1, n)]
    return list(family_candidates(n, k, fam))


@pytest.mark.parametrize("n,k,fam", [(7, 1, None), (10, 2, "circulant"),
                                     (10, 2, "genkautz-literal"), (9, 3, "direct")])
def test_incremental_swaps_track_the_full_cost(n, k, fam):
    """After every pass, the cost the kernel carries equals FlowTable.cost of its labeling,
    on sparse skewed traffic (swaps empty and refill topologies: d_eff moves) at several R."""
    rng = np.random.default_rng(n)
    A = rng.uniform(0.1, 5.0, (n, n)) * (rng.random((n, n)) < 0.5)
    np.fill_diagonal(A, 0.0)
    link = Link(alpha=0.3, beta=1.0, chunk=1.0, spec={"T": 1.0})
    pa, pb = (x.astype(np.int64) for x in np.triu_indices(n, 1))
    for R in (0.0, 2.0, 50.0):
        for cand in _cands(n, k, fam):
            table = FlowTable(cand)
            ka = kernel_arrays(table, n)
            lab = rng.permutation(n).astype(np.int64)
            t, g, rt, live = init_state(lab, A, link.alpha, link.beta, ka["src"], ka["dst"],
                                        ka["fcell"], ka["cstart"], ka["chop"], ka["rstart"],
                                        ka["pid"], table.n_phases)
            cur = R * np.count_nonzero(live) + rt.sum()
            assert cur == pytest.approx(table.cost(A, link, R, lab), rel=1e-12)
            for it in range(3):
                before = lab.copy()
                cur, improved, _ = search_pass(
                    lab, rng.permutation(len(pa)), pa, pb, R, A, link.alpha, link.beta,
                    ka["src"], ka["dst"], ka["fcell"], ka["cstart"], ka["chop"], ka["rstart"],
                    ka["cround"], ka["pid"], ka["pstart"], ka["pflows"], t, g, rt, live, cur,
                    0, 10**9)
                assert sorted(lab) == list(range(n))
                assert improved == (not np.array_equal(before, lab))
                assert cur == pytest.approx(table.cost(A, link, R, lab), rel=1e-12, abs=1e-12)


def test_defaults_are_the_spec_budget_and_rdc_relabels_every_candidate():
    """Spec 3.7: identity + 4 seeded restarts, <= 50 passes, on every candidate; more starts
    never lose to fewer (same seed: the identity start is the same)."""
    assert (PASSES, RESTARTS) == (50, 4)
    # the work cap holds the whole budget up to n = 64, and the method's default is the same
    assert MAX_EVALS == (RESTARTS + 1) * PASSES * 64 * 63 // 2
    assert [default_max_evals(n) for n in (8, 64, 128)] == [MAX_EVALS, MAX_EVALS, MAX_EVALS // 2]
    from toolkit.methods.a2a import RDC_OPTIONS
    opts = {o.name: o.default for o in RDC_OPTIONS}
    assert (opts["passes"], opts["restarts"], opts["max_evals"], opts["relabel_top"]) == \
        (PASSES, RESTARTS, 0, 0)
    n = 8
    rng = np.random.default_rng(1)
    A = rng.zipf(2.0, (n, n)).astype(float)
    np.fill_diagonal(A, 0.0)
    inst = A2AInstance(n, 2, 1e-3, Link.from_dict({"T": 1.0}), traffic=A)
    res = rdc(inst)
    assert all("relabeled_total_cost" in row for row in res.table)
    for cand in family_candidates(n, 2, "circulant"):
        _, c1, base = relabel(cand, inst, restarts=0)
        _, c5, _ = relabel(cand, inst)
        assert c5 <= c1 <= base
