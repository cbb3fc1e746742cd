"""delta-fig6-simai / delta-fig8-simai (benchmarks/delta/simai_figs.py) end to end on a toy
sweep: a report before any run says so, the complete run's cuts are consistent (NCT is an
increasing function of the iteration time, so an NCT cut and the same run's iteration-time
cut have one sign), and a rerun resumes."""
from __future__ import annotations

import numpy as np
import pandas as pd

import benchmarks.delta.figs as figs
import benchmarks.delta.simai_runs as runs
from benchmarks.delta.simai_figs import VARIANTS, run_simai_fig


def test_simai_fig_toy_partial_then_complete_then_resumed(tmp_path, monkeypatch):
    monkeypatch.setattr(runs, "SIMAI", {"simai-gpt13b": runs.SIMAI["simai-gpt13b"]})
    monkeypatch.setitem(figs.FIGS, "fig6", dict(figs.FIGS["fig6"], values=(400, 1600)))
    empty = run_simai_fig("fig6", True, tmp_path, run=False)
    assert "PARTIAL: 0 of the plan's 12 runs" in empty[0].read_text()
    assert "| simai-gpt13b | 10.7-17.5% (paper's range) | 0/12 | - |" in empty.headline
    assert figs.FIGS["fig6"]["paper"]["megatron-177b"] == "11.5% @ 800"   # beside GPT-175B
    paths = run_simai_fig("fig6", True, tmp_path)
    text = paths[0].read_text()
    assert "Run: **quick**, complete: all 12 runs" in text and "--quick" in text.splitlines()[2]
    table = pd.read_csv(tmp_path / "delta_fig6_simai.csv")
    assert len(table) == 2 and table[list(runs.SIMAI_METHODS)].notna().all().all()
    for v in VARIANTS:
        nct, time = table[f"{v}_nct_cut"], table[f"{v}_time_cut"]
        assert (np.sign(nct.round(12)) == np.sign(time.round(12))).all()
        assert (nct <= table["ceiling"] + 1e-6).all()
    assert (table["delta-fast"] >= 1 - 1e-9).all()
    rows = len(pd.read_csv(tmp_path / "delta_runs" / "fig6_quick_simai.csv"))
    again = run_simai_fig("fig6", True, tmp_path)                  # nothing left to run
    assert len(pd.read_csv(tmp_path / "delta_runs" / "fig6_quick_simai.csv")) == rows == 12
    assert again.headline == paths.headline
