"""Regression tests for defects found in review (issue 2): each one failed before its fix."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from heuristics.spectra.bounds import lower_bound
from heuristics.spectra.decompose import degree
from heuristics.spectra.schedule import spectra
from instances.spectra.instance import SpectraInstance, check_schedule
from models import backend as B
from tests.test_cli import cli
from toolkit.registry import Method, RunConfig, problem
from toolkit.run import failed, run_task


@pytest.mark.parametrize("D, s", [([[100000.0]], 3), ([[4e4, 2e4], [2e4, 4e4]], 4), ([[1.0]], 7)])
def test_equalize_terminates_with_zero_delay(D, s):
    inst = SpectraInstance(np.array(D), s, 0.0)
    sched = spectra(inst)                                   # used to loop forever
    bad, m = check_schedule(inst, sched)
    assert not bad and m["makespan"] >= lower_bound(inst.demand, s, 0.0) - 1e-9
    assert m["makespan"] == pytest.approx(np.array(D).sum(axis=1).max() / s, rel=1e-6)


def test_round_off_entries_do_not_count_in_bounds_or_degree():
    D = np.zeros((10, 10))
    D[0] = [1.0] + [1e-13] * 9
    inst = SpectraInstance(D, 2, 0.1)
    bad, m = check_schedule(inst, spectra(inst))
    assert not bad and degree(D) == 1
    assert lower_bound(D, 2, 0.1) <= m["makespan"] + 1e-12


def test_milp_on_zero_demand_is_zero():
    rec = run_task(SpectraInstance(np.zeros((3, 3)), 2, 0.1).to_dict(), "z", "milp", RunConfig())
    assert rec["status"] == "optimal" and rec["verified"] and rec["objective"] == 0


def test_spectra_lp_does_not_report_the_lp_value_as_a_bound():
    from instances.spectra.workloads import example_matrix

    rec = run_task(SpectraInstance(example_matrix(), 2, 0.01).to_dict(), "w", "spectra-lp", RunConfig())
    assert rec["bound"] == pytest.approx(rec["lower_bound"]) and rec["bound"] <= rec["objective"]
    assert rec["refine_lp_objective"] == pytest.approx(1.01) and rec["status"] == "feasible"


def test_highs_survives_thread_count_changes():
    from tests.models.test_backend import knapsack

    m, *_ = knapsack(2)
    objs = [B.solve(m, backend="highs", threads=th).objective for th in (None, 2, 1, None, 2)]
    assert len(set(objs)) == 1


def test_gurobi_parameter_names_ignore_case_on_highs():
    from tests.models.test_backend import knapsack

    m, *_ = knapsack(1)
    res = B.solve(m, backend="highs", params={"timelimit": 5, "MIPGAP": 0})
    assert res.status == "optimal" and "ignored" not in res.message


def test_internal_value_error_is_a_failure_not_bad_input(monkeypatch):
    def broken(inst, cfg):
        raise ValueError("internal bug")

    monkeypatch.setitem(problem("spectra").methods, "broken", Method("broken", "heuristic", broken, "t"))
    rec = run_task(SpectraInstance(np.eye(2), 1, 0.1).to_dict(), "e", "broken", RunConfig())
    assert rec["status"] == "error" and failed(rec) and "internal bug" in rec["message"]


BAD_FILES = {
    "badutf.json": (b'\xff\xfe{"problem": "spectra"}', "not UTF-8"),
    "metalist.json": (b'{"problem": "spectra", "demand": [[1]], "switches": 1, "delay": 0, "meta": [1]}',
                      "field 'meta'"),
    "problist.json": (b'{"problem": ["spectra"], "demand": [[1]], "switches": 1, "delay": 0}',
                      "field 'problem'"),
    "hugedelay.json": (b'{"problem": "spectra", "demand": [[1]], "switches": 1, "delay": 1' + b'0' * 400 + b'}',
                       "field 'delay'"),
    "strentry.json": (b'{"problem": "spectra", "demand": [["1", 0], [0, 1]], "switches": 1, "delay": 0}',
                      "field 'demand'"),
    "boolentry.json": (b'{"problem": "spectra", "demand": [[true, 0], [0, 1]], "switches": 1, "delay": 0}',
                       "field 'demand'"),
    "hugeswitches.json": (b'{"problem": "spectra", "demand": [[1]], "switches": 1e300, "delay": 0}',
                          "field 'switches'"),
}


def test_bad_files_are_one_line_errors_and_never_stop_a_batch(tmp_path):
    d = tmp_path / "inst"
    d.mkdir()
    for name, (data, _) in BAD_FILES.items():
        (d / name).write_bytes(data)
    (d / "good.json").write_text(json.dumps(SpectraInstance(np.eye(3), 2, 0.1, name="good").to_dict()))
    for name, (_, words) in BAD_FILES.items():
        code, _, err = cli("solve", d / name)
        lines = [l for l in err.splitlines() if l.strip()]
        assert code == 2 and len(lines) == 1 and words in lines[0] and "Traceback" not in err, (name, err)
    out = tmp_path / "runs" / "records.csv"
    code, _, err = cli("batch", d, "--out", out.parent, "--no-progress")
    assert code == 2 and "Traceback" not in err
    import pandas as pd

    assert list(pd.read_csv(out)["instance"].map(lambda p: Path(p).name)) == ["good.json"]


def test_unknown_method_names_are_rejected(tmp_path):
    from tests.test_cli import EX

    for methods in ("spectr", "spectra,spectr"):
        code, _, err = cli("batch", EX / "worked_example.json", "--methods", methods, "--out", tmp_path)
        assert code == 2 and "spectr" in err
    code, _, err = cli("solve", EX / "worked_example.json", "--method", "spectr")
    assert code == 2 and "worked_example.json" in err


def test_gap_study_uses_only_bounds_valid_for_the_instance(tmp_path):
    """DELTA-Topo's MILP bound (4) holds for fair sharing only; Joint reaches 3 on T0."""
    import csv

    from tests.test_cli import ROOT

    out = tmp_path / "gap"
    code, _, err = cli("gap", ROOT / "instances/delta/t0-hand.json", "--methods",
                       "sqrt-alloc,delta-joint,delta-topo", "--mip-gap", 0, "--out", out)
    assert code == 0, err
    rows = list(csv.DictReader((out / "gap.csv").open()))
    best_obj = min(float(r["objective"]) for r in rows)
    assert all(float(r["best_bound"]) <= best_obj + 1e-9 for r in rows)
    assert all(float(r["vs_best_bound"]) >= -1e-9 for r in rows)
