"""The re-split study (benchmarks.lumos_resplit_study): with three even OCSes the triple
re-split is the whole group, so its local optimum is the ITV-ILP optimum of
models.lumos_ilp; and the pipeline on a toy grid."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import benchmarks.lumos_reconfig_quality as Q
import benchmarks.lumos_resplit_study as R
from heuristics.lumos_reconfig import _rewiring, old_even, split_group


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_three_ocs_local_optimum_is_the_ilp_optimum(seed, tmp_path):
    K = 6                                                    # 3 even OCSes: one triple
    for _, inst in Q._instances("rings", 6, 2, K, 0.6, 2, seed):
        before = after = 0
        for h in range(2):
            U, V = old_even(inst, h), old_even(inst, h, 1)
            X = np.array(split_group(inst.C[h], K, U, old_odd=V, lns=1))
            Y, _, _ = R.triple_local_opt(X, U, V)
            S = Y.sum(axis=0)
            assert np.array_equal(S + S.T, inst.C[h]) and Y.sum(axis=1).max() <= 1
            assert Y.sum(axis=2).max() <= 1 and not np.einsum("mii->", Y)
            before, after = before + _rewiring(X, U, V), after + _rewiring(Y, U, V)
        ilp = Q.ilp_optimum(inst, inst.old, tmp_path)      # gurobipy builder, HiGHS
        assert ilp["ilp_status"] == "optimal"
        assert after == ilp["ilp_rewiring"] <= before


def test_study_pipeline_on_a_toy(tmp_path, monkeypatch):
    monkeypatch.setattr(Q, "SETS", [("rings", 6, 2, 8, 0.5, 2, (1,)), ("jobs", 5, 2, 4, 0, 2, (2,))])
    monkeypatch.setattr(R, "VARIANTS", (1, 5))
    paths = R.run(quick=False, out_dir=tmp_path)
    df = pd.read_csv(tmp_path / "lumos_resplit_study.csv")
    assert len(df) == 2 * 2 and set(df.lns) == {1, 5}              # 2 ring steps x 2 variants
    assert (df.resplit_rewiring <= df.mdmcf_rewiring).all()
    assert (df[df.ilp_status == "optimal"].resplit_rewiring >= df.ilp_rewiring).all()
    md = (tmp_path / "lumos_resplit_study.md").read_text()
    assert "reproduce lumos-resplit-study" in md and all(p.exists() for p in paths)
