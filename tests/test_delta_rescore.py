"""Cached DELTA runs rescored with the issue 18 NCT (benchmarks/delta/rescore.py), the
imported workloads' conversions (benchmarks/delta/simai_runs.py) and the HotStart check."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from benchmarks.delta.report import hotstart_check
from benchmarks.delta.rescore import rescore_nct
from benchmarks.delta.simai_runs import SIMAI, TRACE_SEQ, fig_workloads, simai_instance
from heuristics.delta.baselines import BASELINES
from heuristics.delta.nct import evaluate, nct_metrics
from instances import load_instance, save_instance
from toolkit.methods.delta import generate


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    path = tmp_path_factory.mktemp("rescore") / "gpt-7b_2.json"
    save_instance(generate(model="gpt-7b", micro_batches=2, bandwidth_gbps=200, name="gpt-7b-2"), path)
    return path


def test_rescored_nct_equals_nct_metrics_and_the_evaluation(tiny):
    inst = load_instance(tiny)
    evs = {b: evaluate(inst, fn(inst)) for b, fn in BASELINES.items()}
    rows = [dict(instance=str(tiny), method=b, iteration_time=ev["iteration_time"],
                 nct=7.0 + i, ideal_iteration_time=ev["ideal_iteration_time"])  # old rows: chain
            for i, (b, ev) in enumerate(evs.items())]
    rows.append(dict(instance=str(tiny), method="new", iteration_time=evs["sqrt-alloc"]["iteration_time"],
                     nct=5.0, nct_chain=3.0))
    rows.append(dict(instance=str(tiny), method="none", iteration_time=np.nan, nct=np.nan))
    out = rescore_nct(pd.DataFrame(rows))
    fresh = load_instance(tiny)           # no cached ideal reference: nct_metrics from scratch
    for i, (b, ev) in enumerate(evs.items()):
        m = nct_metrics(fresh, ev["iteration_time"])
        assert out.nct[i] == pytest.approx(m["nct"], rel=1e-12) == pytest.approx(ev["nct"], rel=1e-12)
        assert out.nct_exposed[i] == pytest.approx(m["nct_exposed"], rel=1e-12)
        assert out.nct_chain[i] == 7.0 + i and out.nct_recorded[i] == 7.0 + i
        assert abs(out.ideal_shift[i]) < 1e-12
    assert out.nct[3] == pytest.approx(out.nct[1]) and out.nct_chain[3] == 3.0   # chain kept
    assert np.isnan(out.nct[4])


def test_rescored_nct_increases_with_the_iteration_time(tiny):
    C = evaluate(load_instance(tiny), BASELINES["iter-halve"](load_instance(tiny)))["iteration_time"]
    times = C * np.array([0.9, 1.0, 1.01, 1.5, 3.0])
    out = rescore_nct(pd.DataFrame({"instance": str(tiny), "iteration_time": times}))
    assert (np.diff(out.nct) > 0).all() and out.nct.notna().all()
    # a row's path under the runs' folder wins over its instance as written (another clone)
    moved = rescore_nct(pd.DataFrame({"instance": "elsewhere/x.json", "path": tiny.name,
                                      "iteration_time": times}), base=tiny.parent)
    assert np.array_equal(moved.nct, out.nct)


def test_imported_workloads_scale_only_what_their_files_allow():
    """At the traces' sequence length the hidden size reproduces the file's activation, so
    the Fig. 8 sweep starts at the Fig. 6 conversion; the MoE file's pp_comm cannot scale."""
    assert "simai-moe" in fig_workloads("bandwidth_gbps") and "simai-moe" not in fig_workloads("seq_len")
    for w in fig_workloads("seq_len"):
        base = simai_instance(w, True, "a")
        same = simai_instance(w, True, "a", seq_len=TRACE_SEQ)
        longer = simai_instance(w, True, "a", seq_len=2 * TRACE_SEQ)
        assert np.array_equal(base.volume, same.volume)
        assert longer.volume.sum() > base.volume.sum()
    with pytest.raises(ValueError):
        simai_instance("simai-moe", True, "a", seq_len=4096)
    assert set(SIMAI) >= set(fig_workloads("seq_len"))


def test_hotstart_check_flags_a_worse_hotstart():
    df = pd.DataFrame([
        dict(name="a", method="delta-fast", iteration_time=10.0),
        dict(name="a", method="delta-joint-hotstart", iteration_time=9.5, reference_iteration_time=10.0),
        dict(name="b", method="delta-fast", iteration_time=10.0),
        dict(name="b", method="delta-joint-hotstart", iteration_time=10.5, reference_iteration_time=10.5)])
    text = "\n".join(hotstart_check(df))
    assert "2 HotStart runs; 2 end at or below" in text and "1 of 2" in text and "b +0.5 ms" in text


def test_batch_rows_drop_rows_of_an_older_instance_file(tmp_path):
    """Fig. 10's CSV keeps a run on a reversed copy built from an earlier Fig. 9 run beside
    the current one: the report reads only the current batch's rows (else it averages both)."""
    from types import SimpleNamespace

    from benchmarks.delta.report import batch_rows

    runs = tmp_path / "runs.csv"
    pd.DataFrame({"run_key": ["old", "new", "other"], "nct": [2.0, 1.0, 1.5]}).to_csv(runs, index=False)
    rep = SimpleNamespace(rows=[{"run_key": "new"}, {"run_key": "other"}])
    assert list(batch_rows(rep, runs).nct) == [1.0, 1.5]
