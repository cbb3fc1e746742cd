"""Max-min fair rates (lumos_sim.maxmin, spec lumoscore.md 4.2): hand cases, a plain-Python
reference progressive filling, and the independent definition checker."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import assume, given, settings, strategies as st

from heuristics.lumos.sim.maxmin import maxmin_rates, maxmin_violations

INF = math.inf


def incidence(paths, n_links):
    """Sparse (links x flows) 0/1 matrix from each flow's list of links."""
    rows = [l for p in paths for l in p]
    cols = [f for f, p in enumerate(paths) for _ in p]
    return sp.coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(n_links, len(paths)))


def reference(paths, cap, w, lim):
    """Textbook progressive filling, one link (or one limit) at a time, in plain Python."""
    x = [lim[f] if not p else None for f, p in enumerate(paths)]
    while any(r is None for r in x):
        best, link, flow = INF, None, None
        for l, c in enumerate(cap):
            on = [f for f, p in enumerate(paths) if l in p]
            free = [f for f in on if x[f] is None]
            if free:
                used = sum(w[f] * x[f] for f in on if x[f] is not None)
                level = (c - used) / sum(w[f] for f in free)
                if level < best:
                    best, link, flow = level, l, None
        for f, r in enumerate(x):
            if r is None and lim[f] < best:
                best, link, flow = lim[f], None, f
        for f, p in enumerate(paths):
            if x[f] is None and (f == flow or (link is not None and link in p)):
                x[f] = best
    return x


# --- hand cases -----------------------------------------------------------------------------
@pytest.mark.parametrize("paths, n_links, cap, w, lim, want", [
    # one flow alone on a link
    ([[0]], 1, [7.0], None, None, [7.0]),
    # two flows sharing one link
    ([[0], [0]], 1, [10.0], None, None, [5.0, 5.0]),
    # parking lot: a long flow over links 0-1-2, one short flow per link: all cap/2
    ([[0, 1, 2], [0], [1], [2]], 3, [6.0, 6.0, 6.0], None, None, [3.0, 3.0, 3.0, 3.0]),
    # flow 0 bottlenecked on the slow link 0 (cap 2) leaves 8 of the fast link to flow 1
    ([[0, 1], [1]], 2, [2.0, 10.0], None, None, [2.0, 8.0]),
    # weight-3 flow and weight-1 flow on a link of 8: unit rate 2 each (load 3*2 + 2 = 8)
    ([[0], [0]], 1, [8.0], [3, 1], None, [2.0, 2.0]),
    # a flow capped at 1 on a link of 10 shared with one other flow: 1 and 9
    ([[0], [0]], 1, [10.0], None, [1.0, INF], [1.0, 9.0]),
    # flows on no link get their limit; the linked flow is alone on its link
    ([[], [0], []], 1, [5.0], None, [4.0, INF, 0.5], [4.0, 5.0, 0.5]),
    # two levels: link 0 (cap 3, three flows) saturates at 1; flow 3 takes the rest of link 1
    ([[0, 1], [0], [0], [1]], 2, [3.0, 10.0], None, None, [1.0, 1.0, 1.0, 9.0]),
    # weights and limits together: the weight-2 flow's limit 1 leaves 10 - 2 = 8 to two units
    ([[0], [0], [0]], 1, [10.0], [2, 1, 1], [1.0, INF, INF], [1.0, 4.0, 4.0]),
])
def test_hand_cases(paths, n_links, cap, w, lim, want):
    A = incidence(paths, n_links)
    x = maxmin_rates(A, cap, w, lim)
    assert x.tolist() == pytest.approx(want, rel=1e-12)
    assert maxmin_violations(A, cap, x, w, lim) == []


def test_any_sparse_format_dense_and_explicit_zeros():
    """Formats give the same rates; an explicitly stored 0 is not a link use."""
    A = incidence([[0, 1, 2], [0], [1], [2]], 3)
    for fmt in ("coo", "csr", "csc", "lil", "dok"):
        assert maxmin_rates(A.asformat(fmt), [6, 6, 6]).tolist() == pytest.approx([3] * 4)
    assert maxmin_rates(A.toarray(), [6, 6, 6]).tolist() == pytest.approx([3] * 4)
    Z = sp.csr_matrix((np.array([1.0, 0.0]), np.array([0, 1]), np.array([0, 2])), shape=(1, 2))
    assert maxmin_rates(Z, [4.0], limit=[INF, 1.5]).tolist() == [4.0, 1.5]
    assert maxmin_rates(sp.csr_matrix((3, 0)), [1, 2, 3]).shape == (0,)
    assert maxmin_rates(sp.csr_matrix((0, 2)), [], limit=[1, 2]).tolist() == [1, 2]


def test_rejects_bad_inputs():
    A = incidence([[0], []], 1)
    with pytest.raises(ValueError, match="no link"):
        maxmin_rates(A, [1.0])  # the unlinked flow has no finite limit
    with pytest.raises(ValueError, match="weights"):
        maxmin_rates(A, [1.0], weight=[0, 1], limit=[INF, 1])
    with pytest.raises(ValueError, match="capacities"):
        maxmin_rates(A, [0.0], limit=[INF, 1])
    with pytest.raises(ValueError, match="cap"):
        maxmin_rates(A, [1.0, 2.0], limit=[INF, 1])


# --- random cases against the reference and the checker ----------------------------------------
@st.composite
def cases(draw, max_links=5, max_flows=7):
    n_links = draw(st.integers(1, max_links))
    n_flows = draw(st.integers(1, max_flows))
    paths = [sorted(draw(st.sets(st.integers(0, n_links - 1), max_size=n_links)))
             for _ in range(n_flows)]
    # small integers make many ties (several links saturating at one level); floats break them
    num = st.one_of(st.integers(1, 6).map(float), st.floats(0.1, 20.0))
    cap = [draw(num) for _ in range(n_links)]
    w = [draw(st.one_of(st.integers(1, 4).map(float), st.floats(0.25, 4.0)))
         for _ in range(n_flows)]
    lim = [draw(num if not p else st.one_of(st.just(INF), num, st.just(0.0))) for p in paths]
    return paths, n_links, cap, w, lim


@settings(max_examples=400, deadline=None)
@given(cases())
def test_equals_reference_and_is_fair(case):
    paths, n_links, cap, w, lim = case
    A = incidence(paths, n_links)
    x = maxmin_rates(A, cap, w, lim)
    assert x.tolist() == pytest.approx(reference(paths, cap, w, lim), rel=1e-9, abs=1e-12)
    assert maxmin_violations(A, cap, x, w, lim) == []


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_fair_on_larger_random_instances(seed):
    """Hundreds of flows (many bulk rounds): fair by the definition; small ones = reference."""
    rng = np.random.default_rng(seed)
    n_links, n_flows = int(rng.integers(5, 120)), int(rng.integers(1, 400))
    paths = [sorted(rng.choice(n_links, min(n_links, int(rng.integers(1, 7))), replace=False))
             for _ in range(n_flows)]
    cap = rng.choice([10.0, 25.0, 40.0], n_links) if seed % 2 else rng.uniform(1, 50, n_links)
    w = rng.integers(1, 5, n_flows).astype(float)
    lim = np.where(rng.random(n_flows) < 0.2, rng.uniform(0, 5, n_flows), INF)
    A = incidence(paths, n_links)
    x = maxmin_rates(A, cap, w, lim)
    assert maxmin_violations(A, cap, x, w, lim) == []
    if n_flows <= 40:
        assert x.tolist() == pytest.approx(reference(paths, list(cap), w, lim), rel=1e-9)


# --- the checker catches corrupted allocations --------------------------------------------------
def test_checker_hand_violations():
    A = incidence([[0], [0]], 1)
    assert any("over capacity" in v for v in maxmin_violations(A, [10.0], [6.0, 5.0]))
    assert any("no bottleneck" in v for v in maxmin_violations(A, [10.0], [4.0, 5.0]))
    # feasible and saturated, but unfair: flow 0 is not the largest on its only link
    v = maxmin_violations(A, [10.0], [4.0, 6.0])
    assert len(v) == 1 and v[0].startswith("flow 0") and "no bottleneck" in v[0]
    assert any("over its limit" in v for v in maxmin_violations(A, [10.0], [2.0, 8.0], limit=[1.0, INF]))
    assert any("negative rate" in v for v in maxmin_violations(A, [10.0], [-1.0, 10.0]))
    # an unlinked flow below its limit has no bottleneck
    B = incidence([[]], 1)
    assert any("no bottleneck" in v for v in maxmin_violations(B, [1.0], [0.5], limit=[1.0]))
    assert maxmin_violations(B, [1.0], [1.0], limit=[1.0]) == []


@settings(max_examples=200, deadline=None)
@given(cases(), st.integers(0, 100), st.booleans())
def test_checker_flags_one_scaled_rate(case, pick, up):
    """Scaling one rate up breaks a capacity or limit; down leaves it without a bottleneck."""
    paths, n_links, cap, w, lim = case
    A = incidence(paths, n_links)
    x = maxmin_rates(A, cap, w, lim)
    f = pick % len(paths)
    # the flow's own load is a visible share of each of its links (and of its limit)
    assume(all(w[f] * x[f] > 1e-3 * cap[l] for l in paths[f]) and x[f] > 1e-3)
    y = x.copy()
    y[f] *= 1.5 if up else 0.5
    v = maxmin_violations(A, cap, y, w, lim)
    if up:
        assert any("over capacity" in s or "over its limit" in s for s in v)
    else:
        assert any(s.startswith(f"flow {f} ") and "no bottleneck" in s for s in v)
