"""Spectra reproduction targets end to end on toy grids (the real runs are benchmarks)."""
from __future__ import annotations

import pandas as pd

import benchmarks.spectra_figs as figs
import benchmarks.spectra_gap as gap
from instances.spectra_workloads import generate


def tiny_grid(monkeypatch):
    monkeypatch.setattr(figs, "QUICK_RUNS", 2)
    monkeypatch.setattr(figs, "DELTAS_QUICK", (0.02, 0.08))
    monkeypatch.setattr(figs, "S_GRID", (2,))


def test_fig6_pipeline(tmp_path, monkeypatch):
    tiny_grid(monkeypatch)
    paths = figs.run_fig6(quick=True, out_dir=tmp_path)
    assert all(p.exists() and p.stat().st_size > 0 for p in paths)
    pts = pd.read_csv(tmp_path / "spectra_fig6.csv")
    assert len(pts) == 2 * 2                          # (gpt, moe) x 2 deltas, s = 2
    for m in ("spectra", "spectra-eclipse", "baseline", "spectra-noeq"):
        assert (pts[m] >= pts["lb"] - 1e-9).all()     # the mean LB is below every mean
    assert (pts["spectra"] <= pts["spectra-noeq"] + 1e-12).all()
    md = (tmp_path / "spectra_fig6.md").read_text()
    assert "| gpt | Baseline / Spectra | 1.4 |" in md and "| moe | Baseline / Spectra | 1.9 |" in md
    assert "reproduce spectra-fig6 --quick" in md


def test_fig9_pipeline(tmp_path, monkeypatch):
    tiny_grid(monkeypatch)
    figs.run_fig9(quick=True, out_dir=tmp_path)
    md = (tmp_path / "spectra_fig9.md").read_text()
    assert "| benchmark | Baseline / Spectra | 2.4 |" in md
    pts = pd.read_csv(tmp_path / "spectra_fig9.csv")
    assert (pts["baseline"] > pts["spectra"]).all()   # "vastly outperforms" holds on any draw


def test_gap_study_pipeline(tmp_path, monkeypatch):
    def two(quick):
        for seed in (1, 2):
            yield "random", seed, generate("random", n=3, density=0.6, switches=2, delay=0.05,
                                           seed=seed)
    monkeypatch.setattr(gap, "instances", two)
    gap.run(quick=True, out_dir=tmp_path)
    df = pd.read_csv(tmp_path / "spectra_gap.csv")
    assert len(df) == 2 and (df.milp_status == "optimal").all()
    assert (df.lb <= df.opt_T + 1e-7).all() and (df.opt_T <= df.spectra + 1e-7).all()
    assert "LB <= OPT_T <= Spectra on every instance: **yes**" in (tmp_path / "spectra_gap.md").read_text()
