"""toolkit.run: every solution goes through the independent checker before it is reported."""
from __future__ import annotations

import numpy as np

from heuristics.spectra.schedule import spectra
from instances.spectra.instance import SpectraSchedule
from instances.spectra.workloads import example_matrix
from instances.spectra.instance import SpectraInstance
from toolkit.registry import Method, MethodOutput, RunConfig, problem
from toolkit.run import failed, run_task


def test_a_wrong_solution_is_caught_and_fails(monkeypatch):
    def cheat(inst, cfg):
        good = spectra(inst)
        sw = [[(p, a / 2) for p, a in s] for s in good.switches]  # half the service: claims less
        return MethodOutput(SpectraSchedule(sw))

    prob = problem("spectra")
    monkeypatch.setitem(prob.methods, "cheat", Method("cheat", "heuristic", cheat, "test only"))
    data = SpectraInstance(example_matrix(), 2, 0.01).to_dict()
    rec = run_task(data, "mem", "cheat", RunConfig())
    assert rec["verified"] is False and rec["status"] == "error" and failed(rec)
    assert "not covered" in rec["message"]


def test_objective_is_recomputed_by_the_checker(monkeypatch):
    def honest(inst, cfg):
        return MethodOutput(spectra(inst), metrics={"makespan": -1.0})  # a false claim

    prob = problem("spectra")
    monkeypatch.setitem(prob.methods, "honest", Method("honest", "heuristic", honest, "test"))
    rec = run_task(SpectraInstance(example_matrix(), 2, 0.01).to_dict(), "mem", "honest", RunConfig())
    assert rec["objective"] == rec["makespan"] and np.isclose(rec["objective"], 0.525)


def test_a_crashing_method_is_an_error_record(monkeypatch):
    def boom(inst, cfg):
        raise RuntimeError("kaput")

    prob = problem("spectra")
    monkeypatch.setitem(prob.methods, "boom", Method("boom", "heuristic", boom, "test"))
    rec = run_task(SpectraInstance(example_matrix(), 2, 0.01).to_dict(), "mem", "boom", RunConfig())
    assert rec["status"] == "error" and "kaput" in rec["message"] and failed(rec)


def test_a_relaxation_gets_no_problem_bound_or_gap(monkeypatch):
    """A method marked ``relaxation`` (e.g. a2a baselines that split flows) is not held to the
    problem's analytic bound: no bound and no gap are reported for it, the instance's
    bound is still recorded as problem_bound."""
    prob = problem("spectra")
    for name, relax in (("plain", False), ("relaxed", True)):
        monkeypatch.setitem(prob.methods, name, Method(name, "heuristic",
                                                       lambda inst, cfg: MethodOutput(spectra(inst)),
                                                       "test", relaxation=relax))
    data = SpectraInstance(example_matrix(), 2, 0.01).to_dict()
    plain, relaxed = (run_task(data, "mem", m, RunConfig()) for m in ("plain", "relaxed"))
    assert plain["bound"] is not None and plain["gap"] is not None
    assert relaxed["bound"] is None and relaxed["gap"] is None
    assert relaxed["problem_bound"] == plain["problem_bound"] is not None
