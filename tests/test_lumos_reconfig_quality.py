"""The lumos-reconfig-quality pipeline on a toy grid: report, CSVs, and resume from the
cached ITV-ILP optima."""
from __future__ import annotations

import pandas as pd

import benchmarks.lumos_reconfig_quality as Q


def test_quality_pipeline_on_a_toy_and_resume(tmp_path, monkeypatch):
    monkeypatch.setattr(Q, "SETS", [("rings", 5, 2, 4, 0.5, 2, (1,)), ("jobs", 5, 2, 4, 0, 2, (2,))])
    monkeypatch.setattr(Q, "SPEED_PODS", (4,))
    monkeypatch.setattr(Q, "SPEED_STEPS", 1)
    monkeypatch.setattr(Q, "RESTARTS", (0, 5))
    monkeypatch.setattr(Q, "LNS", (20,))
    monkeypatch.setattr(Q, "LNS_SEEDS", (0, 1, 2))
    paths = Q.run(quick=False, out_dir=tmp_path)
    df = pd.read_csv(tmp_path / "lumos_reconfig_quality.csv")
    assert len(df) == 4 and (df.ilp_status == "optimal").all()
    for m in ("mdmcf", "mdmcf_lp", "mcf"):                        # the ILP proved optimality
        assert (df[f"{m}_rewiring"] >= df.ilp_rewiring).all()
    assert (df.ilp_rewiring >= df.lp_bound).all() and (df.lp_bound >= df.group_bound).all()
    sp = pd.read_csv(tmp_path / "lumos_reconfig_quality_speed.csv")
    assert (sp.mdmcf_rewiring >= sp.lp_bound).all() and (sp.lp_bound >= sp.group_bound).all()
    tr = pd.read_csv(tmp_path / "lumos_reconfig_quality_variants.csv")
    assert len(tr) == 2 * 6 and (tr.worst_vs_ilp >= 1).all()     # 3 + 2 + 1 variants x 2 workloads
    assert set(tr.variant) >= {"itv-mdmcf (default: lns 30)", "itv-mdmcf-lp",
                               "itv-mdmcf, no lns, restarts 0", "itv-mdmcf, lns 20"}
    sd = pd.read_csv(tmp_path / "lumos_reconfig_quality_seeds.csv")
    assert sorted(sd.lns_seed.unique()) == [0, 1, 2] and (sd.worst_vs_ilp >= 1).all()
    assert (sd.lost_vs_ilp >= 0).all()
    seed0 = sd[(sd.lns_seed == 0) & (sd.workload == "rings")].worst_vs_ilp.item()
    assert seed0 == tr[tr.variant.str.startswith("itv-mdmcf (default")
                       & (tr.workload == "rings")].worst_vs_ilp.item()    # seed 0 = default
    md = (tmp_path / "lumos_reconfig_quality.md").read_text()
    assert "reproduce lumos-reconfig-quality" in md and "itv-mdmcf-lp **" in md
    assert all(p.exists() for p in paths)
    # a rerun resumes: no ILP solve (the cache answers), same table
    import models.backend as backend

    def no_solve(*a, **k):
        raise AssertionError("the ILP was solved again")
    monkeypatch.setattr(backend, "solve", no_solve)
    Q.run(quick=False, out_dir=tmp_path)
    again = pd.read_csv(tmp_path / "lumos_reconfig_quality.csv")
    assert again.ilp_rewiring.tolist() == df.ilp_rewiring.tolist()
    assert again.mdmcf_rewiring.tolist() == df.mdmcf_rewiring.tolist()
