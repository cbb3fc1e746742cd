"""The lumos-resplit-study pipeline on a toy grid: report, CSV, re-splits never worse."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import benchmarks.lumos.reconfig_quality as Q
import benchmarks.lumos.resplit_study as R
from heuristics.lumos.mdmcf.group_split import _rewiring, split_group
from heuristics.lumos.mdmcf.reconfig import old_even


def test_study_pipeline_on_a_toy(tmp_path, monkeypatch):
    monkeypatch.setattr(Q, "SETS", [("rings", 6, 2, 8, 0.5, 2, (1,)), ("jobs", 5, 2, 4, 0, 2, (2,))])
    monkeypatch.setattr(R, "VARIANTS", (1, 5))
    monkeypatch.setattr(R, "SEEDS", (0, 1))
    paths = R.run(quick=False, out_dir=tmp_path)
    df = pd.read_csv(tmp_path / "lumos_resplit_study.csv")
    assert len(df) == 2 * 2 * 2 and set(df.lns) == {1, 5}    # 2 ring steps x 2 lns x 2 seeds
    assert (df.quad_rewiring <= df.resplit_rewiring).all()
    assert (df.resplit_rewiring <= df.mdmcf_rewiring).all()
    assert (df[df.ilp_status == "optimal"].quad_rewiring >= df.ilp_rewiring).all()
    md = (tmp_path / "lumos_resplit_study.md").read_text()
    assert "reproduce lumos-resplit-study" in md and all(p.exists() for p in paths)


@pytest.mark.parametrize("seed", [1, 2])
def test_four_ocs_local_optimum_is_the_ilp_optimum(seed, tmp_path):
    """With four even OCSes the quadruple is the whole group: its local optimum is the
    ITV-ILP optimum (models.lumos.ilp on HiGHS)."""
    K = 8                               # the chains alone miss the optimum on these steps
    for _, inst in Q._instances("rings", 8, 2, K, 0.8, 2, seed):
        after = 0
        for h in range(2):
            U, V = old_even(inst, h), old_even(inst, h, 1)
            X = np.array(split_group(inst.C[h], K, U, old_odd=V, lns=0, restarts=0))
            Y, _, at_limit = R.quad_local_opt(X, U)
            S = Y.sum(axis=0)
            assert np.array_equal(S + S.T, inst.C[h]) and at_limit == 0
            assert _rewiring(Y, U, V) <= _rewiring(X, U, V)
            after += _rewiring(Y, U, V)
        assert after == Q.ilp_optimum(inst, inst.old, tmp_path)["ilp_rewiring"]
