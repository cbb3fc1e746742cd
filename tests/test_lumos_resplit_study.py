"""The lumos-resplit-study pipeline on a toy grid: report, CSV, re-splits never worse."""
from __future__ import annotations

import pandas as pd

import benchmarks.lumos_reconfig_quality as Q
import benchmarks.lumos_resplit_study as R


def test_study_pipeline_on_a_toy(tmp_path, monkeypatch):
    monkeypatch.setattr(Q, "SETS", [("rings", 6, 2, 8, 0.5, 2, (1,)), ("jobs", 5, 2, 4, 0, 2, (2,))])
    monkeypatch.setattr(R, "VARIANTS", (1, 5))
    monkeypatch.setattr(R, "SEEDS", (0, 1))
    paths = R.run(quick=False, out_dir=tmp_path)
    df = pd.read_csv(tmp_path / "lumos_resplit_study.csv")
    assert len(df) == 2 * 2 * 2 and set(df.lns) == {1, 5}    # 2 ring steps x 2 lns x 2 seeds
    assert (df.resplit_rewiring <= df.mdmcf_rewiring).all()
    assert (df[df.ilp_status == "optimal"].resplit_rewiring >= df.ilp_rewiring).all()
    md = (tmp_path / "lumos_resplit_study.md").read_text()
    assert "reproduce lumos-resplit-study" in md and all(p.exists() for p in paths)
