"""Reproduction targets run end to end on toy settings (the real runs are benchmarks)."""
from __future__ import annotations

import pandas as pd

import benchmarks.delta_figs as figs


def test_delta_fig6_pipeline_on_the_toy(tmp_path, monkeypatch):
    monkeypatch.setattr(figs, "MODELS", ("gpt-7b",))
    monkeypatch.setattr(figs, "SIMAI_WORKLOADS", ("simai-gpt13b",))   # imported, 12 tasks
    monkeypatch.setitem(figs.FIGS, "fig6", dict(figs.FIGS["fig6"], values=(400, 800)))
    paths = figs.run_fig6(quick=True, out_dir=tmp_path)
    assert all(p.exists() for p in paths)
    table = pd.read_csv(tmp_path / "delta_fig6.csv")
    assert len(table) == 4 and set(table.model) == {"gpt-7b", "simai-gpt13b"}
    assert table[table.model == "simai-gpt13b"]["delta-joint"].isna().all()   # not run there
    text = paths[0].read_text()
    assert "HotStart runs" in text and "4 of 4 at or below the separate DELTA-Fast" in text
    table = table[table.model == "gpt-7b"]
    for m in figs.METHODS:   # nothing beats the ideal network (MILP tolerances amplify in the ratio)
        assert (table[m] >= 1 - (1e-4 if m.startswith("delta-j") else 1e-9)).all()
    assert (table["delta-joint"] <= table["best_baseline"] + 1e-6).all()
    again = figs.run_fig6(quick=True, out_dir=tmp_path)           # resumes: nothing to rerun
    assert again[0].read_text().count("gpt-7b") >= 2


def test_delta_fig9_fig10_fig11_pipelines_on_the_toy(tmp_path, monkeypatch):
    monkeypatch.setattr(figs, "MODELS", ("gpt-7b",))
    monkeypatch.setattr(figs, "FIG10_MODELS", ("gpt-7b",))
    monkeypatch.setattr(figs, "FIG11_MODELS", ("gpt-7b",))
    monkeypatch.setitem(figs.FIG11_N, True, (2,))
    for run in (figs.run_fig9, figs.run_fig10, figs.run_fig11):
        assert all(p.exists() for p in run(quick=True, out_dir=tmp_path))
    fig9 = pd.read_csv(tmp_path / "delta_fig9.csv")
    assert set(fig9.method) == set(figs.DELTA_METHODS) and (fig9.port_ratio <= 1).all()
    joint = fig9[fig9.method == "delta-joint"].iloc[0]         # stage 2 keeps C <= C* (1 + 1e-6);
    # the extracted schedule may end later by the solver's row tolerance (~1e-6 x T_up,
    # models.delta_milp.extract_interval [DECISION] solver tolerance)
    assert joint.iteration_time <= joint.milp_stage1_objective * (1 + 1e-5)
    fig10 = pd.read_csv(tmp_path / "delta_fig10.csv")
    j = fig10[fig10.method == "delta-joint"].iloc[0]            # more ports never hurt the optimum
    assert j["U_p + freed"] <= j["U_p"] + 1e-4
    fig11 = pd.read_csv(tmp_path / "delta_fig11.csv")
    assert set(figs.FIG11_METHODS) <= set(fig11.columns) and (fig11[list(figs.FIG11_METHODS)] > 0).all().all()
    wall = pd.read_csv(tmp_path / "delta_fig11_wall.csv")
    milp = [m for m in figs.FIG11_METHODS if m != "delta-fast"]    # converging precedes stopping
    assert (fig11[milp].to_numpy() <= wall[milp].to_numpy() + 1e-6).all()
    # every incumbent, so the one reaching Joint's quality, comes before HotStart stops
    reach = fig11["hotstart_to_joint_quality_s"]
    assert reach.notna().all() and (reach <= wall["delta-joint-hotstart"] + 1e-3).all()
