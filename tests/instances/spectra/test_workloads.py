"""Spectra AI workload generators (spec 4.2, 4.3, 8.11): structure, normalization, seeds."""
from __future__ import annotations

import re

import numpy as np
import pytest

from heuristics.spectra.decompose import degree
from instances.errors import InstanceError
from instances.spectra.workloads import (generate, gpt_matrix, gpt_traffic, moe_matrix, moe_traffic,
                                         sinkhorn)


def test_gpt_traffic_structure():
    """TP ring successor, DP partner, PP neighbours: degree 4, first/last stage rows have 3."""
    T = gpt_traffic()
    assert T.shape == (32, 32) and np.all(np.diag(T) == 0)
    nnz = (T > 0).sum(axis=1)
    stage = np.arange(32) // 8                      # rank = p*DP*TP + d*TP + t, DP*TP = 8
    assert set(nnz[(stage == 0) | (stage == 3)]) == {3} and set(nnz[(stage == 1) | (stage == 2)]) == {4}
    assert (T > 0).sum() == 32 * 2 + 2 * 24           # TP ring + DP ring + PP both ways
    r = lambda p, d, t: p * 8 + d * 4 + t
    # hand values (spec 4.2): act = 1*2048*2560*2 bytes; TP (32/4)*4*8*2*3/4 = 384 act,
    # DP 2*(1/2)*3e9/16*2 = 3.75e8 bytes, PP 8/4 = 2 act each way
    act = 2048 * 2560 * 2
    assert T[r(1, 0, 2), r(1, 0, 3)] == pytest.approx(384 * act)
    assert T[r(1, 0, 2), r(1, 1, 2)] == pytest.approx(3.75e8)
    assert T[r(1, 0, 2), r(2, 0, 2)] == T[r(2, 0, 2), r(1, 0, 2)] == pytest.approx(2 * act)


def test_gpt_matrix_doubly_stochastic_before_noise_and_seeded():
    D = gpt_matrix(0.0)
    assert np.allclose(D.sum(axis=0), 1, atol=1e-9) and np.allclose(D.sum(axis=1), 1, atol=1e-9)
    assert degree(D) == 4
    # Sinkhorn scales the rows of 423.76 act (middle stages: TP 384 + DP 35.76 + PP 2 + 2) and
    # 421.76 act (first/last stage) to 1: TP ~0.906-0.910, DP ~0.0844-0.0848, PP ~0.0047
    vals = np.unique(np.round(D[D > 0], 6))
    hand = sorted(v / row for v in (384, 35.76, 2) for row in (423.76, 421.76))
    assert vals.tolist() == pytest.approx(hand, rel=3e-3)
    a = generate("gpt", seed=7).demand
    assert np.array_equal(a, generate("gpt", seed=7).demand)
    assert not np.array_equal(a, generate("gpt", seed=8).demand)
    big = D > 0.05                                   # TP and DP entries: never clipped at 0
    assert np.sqrt(np.mean((a - D)[big] ** 2)) == pytest.approx(0.003, rel=0.25)
    assert not ((a > 0) & (D == 0)).any()               # noise only on nonzeros (may clip some)


def test_moe_matrix_substochastic_dense_and_seeded():
    D = moe_matrix(rng=np.random.default_rng(3))
    assert D.shape == (64, 64) and np.all(np.diag(D) == 0)
    assert max(D.sum(axis=0).max(), D.sum(axis=1).max()) == pytest.approx(1.0)
    assert D.sum(axis=1).max() < 1                   # rows sub-stochastic, a hot column sums to 1
    assert degree(D) == 63
    assert np.array_equal(D, moe_matrix(rng=np.random.default_rng(3)))
    noisy = moe_matrix(0.01, rng=np.random.default_rng(3))
    assert (noisy >= 0).all() and not ((noisy > 0) & (D == 0)).any()   # noise only on nonzeros
    # sigma = 0.01 is about one typical entry (0.005-0.016): clipping empties some entries and
    # the degree falls below 63 (spectra_fig8.md: 61 on average, 58 at worst)
    assert (noisy > 0).sum() < (D > 0).sum() and degree(noisy) < 63
    assert generate("moe").meta["noise"] == 0.0 and generate("gpt").meta["noise"] == 0.003


def test_moe_traffic_counts_tokens():
    T = moe_traffic(n=8, top_k=2, tokens_per_gpu=100, moe_layers=3, local=True,
                    rng=np.random.default_rng(0))
    assert T.sum() == 8 * 2 * 100 * 3 and np.array_equal(T, np.round(T))
    T2 = moe_traffic(n=8, top_k=2, tokens_per_gpu=100, moe_layers=3, include_combine=True,
                     rng=np.random.default_rng(0))
    assert np.array_equal(T2, T2.T)


def test_sinkhorn_rejects_an_empty_line():
    with pytest.raises(InstanceError, match="'demand'"):
        sinkhorn(np.array([[1.0, 0.0], [0.0, 0.0]]))


@pytest.mark.parametrize("kw, field", [
    (dict(workload="gpt", n=20), "'n'"), (dict(workload="moe", top_k=0), "'top_k'"),
    (dict(workload="moe", noise=-0.1), "'noise'"), (dict(workload="gpt", tp=0), "'tp'"),
    (dict(workload="moe", pop_sigma=-1.0), "'pop_sigma'"),
    (dict(workload="benchmark", seed=-1), "'seed'"), (dict(workload="moe", seed=-5), "'seed'"),
    (dict(workload="moe", pop_sigma=float("nan")), "'pop_sigma'"),
    (dict(workload="moe", pop_sigma=float("inf")), "'pop_sigma'"),
    (dict(workload="moe", pop_sigma=1e300), "'pop_sigma'"),
    (dict(workload="gpt", tp=1, pp=1, dp=1), "'tp*pp*dp'"),
    (dict(workload="gpt", tp=64, pp=64, dp=1), "'tp*pp*dp'"),
    (dict(workload="gpt", tp=1, pp=3, dp=1), "'pp'"), (dict(workload="gpt", tp=1, pp=4, dp=1), "'pp'"),
    (dict(workload="moe", n=1, top_k=1), "'n'"), (dict(workload="benchmark", n=100_000), "'n'"),
    (dict(workload="random", n=2000), "'n'"), (dict(workload="benchmark", m=5000), "'m'"),
])
def test_generate_rejects_bad_parameters(kw, field):
    with pytest.raises(InstanceError, match=re.escape(field)):
        generate(**kw)


@pytest.mark.parametrize("tp, pp, dp", [(1, 2, 1), (2, 1, 1), (1, 1, 2), (1, 3, 2), (2, 3, 1)])
def test_small_gpt_layouts_are_doubly_stochastic(tp, pp, dp):
    D = generate("gpt", tp=tp, pp=pp, dp=dp, noise=0.0).demand
    assert D.shape == (tp * pp * dp,) * 2
    assert np.allclose(D.sum(axis=0), 1, atol=1e-9) and np.allclose(D.sum(axis=1), 1, atol=1e-9)


@pytest.mark.parametrize("sigma", [float("nan"), float("inf"), -0.1])
def test_moe_traffic_names_the_bad_sigma(sigma):
    with pytest.raises(InstanceError, match="'drift_sigma'"):
        moe_traffic(n=4, drift_sigma=sigma)
    with pytest.raises(InstanceError, match="'pop_sigma'"):
        moe_traffic(n=4, pop_sigma=sigma)
