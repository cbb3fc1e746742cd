"""Issue 14 item 7: listing and help load no heavy module; lazily bound methods resolve.

(The start-up time itself is measured by ``solve.py reproduce import-time``, not here.)
"""
from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("scipy.optimize", "networkx", "ortools", "gurobipy", "dask", "pandas", "highspy")


def _loaded_after(argv: list[str]) -> set[str]:
    """The HEAVY modules in sys.modules after ``solve.main(argv)`` in a fresh interpreter
    (a package is there once its ``__init__`` ran, whatever submodule was asked for)."""
    code = ("import io, json, sys, contextlib\nimport solve\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try:\n        solve.main(%r, out_stream=io.StringIO())\n"
            "    except SystemExit:\n        pass\n"
            "print(json.dumps(sorted(m for m in %r if m in sys.modules)))" % (argv, HEAVY))
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          check=True)
    return set(json.loads(proc.stdout.splitlines()[-1]))


def test_help_imports_no_heavy_module():
    assert _loaded_after(["--help"]) == set()
    assert _loaded_after(["solve", "--help"]) == set()


def test_list_imports_only_gurobipy_for_the_licence_line():
    # the backends section probes the Gurobi licence, which needs gurobipy (~0.05 s)
    assert _loaded_after(["list"]) == {"gurobipy"}


def test_heuristic_solve_does_not_load_other_problems_libraries():
    loaded = _loaded_after(["solve", "instances/examples/worked_example.json",
                            "--format", "json"])
    # Spectra's Decompose needs only scipy's LSAP extension (heuristics.lsap), not the
    # package scipy.optimize; a heuristic needs no solver
    assert not loaded & {"scipy.optimize", "gurobipy", "networkx", "ortools", "dask", "pandas"}


def test_every_lazy_binding_names_a_real_function():
    from toolkit.registry import PROBLEM_MODULES, problems

    problems()
    mods = list(PROBLEM_MODULES) + ["toolkit.methods.a2a_model", "toolkit.methods.a2a_baseline",
                                   "toolkit.methods.lumos_reconfig_ilp"]
    seen = 0
    for name in mods:
        for obj in vars(importlib.import_module(name)).values():
            target = getattr(obj, "target", None)
            if isinstance(target, tuple) and callable(obj):
                module, attr = target
                assert callable(getattr(importlib.import_module(module), attr)), target
                seen += 1
    assert seen > 40


@pytest.mark.parametrize("problem,method,heuristic", [
    ("spectra", "spectra", "heuristics.spectra.schedule"),
    ("spectra", "milp", "heuristics.spectra.schedule"),
    ("lumos-reconfig", "itv-ilp", "heuristics.lumos.mdmcf.reconfig")])
def test_preload_imports_the_method_modules_before_the_clock(problem, method, heuristic):
    # a heuristic gets its heuristics; a model method its models (and so gurobipy) too
    code = ("import sys\nfrom toolkit.registry import preload, problem\n"
            f"m = problem({problem!r}).methods[{method!r}]\n"
            f"mods = ('models.backend', {heuristic!r})\n"
            "print(*[m in sys.modules for m in mods], end=' ')\npreload(m)\n"
            "print(*[m in sys.modules for m in mods], m.kind)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          check=True)
    before_backend, before_heur, after_backend, after_heur, kind = proc.stdout.split()
    assert (before_backend, before_heur, after_heur) == ("False", "False", "True")
    assert after_backend == str(kind == "model")


def test_lsap_is_scipys_routine_without_scipy_optimize():
    """The same compiled routine as scipy.optimize's (the object may be a second instance of
    the extension module on newer scipy): equal assignments on random cost matrices."""
    code = ("import sys\nfrom heuristics.lsap import linear_sum_assignment as f\n"
            "print('scipy.optimize' in sys.modules)\n"
            "import numpy as np, scipy.optimize\n"
            "g = scipy.optimize.linear_sum_assignment\n"
            "rng = np.random.default_rng(0)\n"
            "same = all(all(np.array_equal(a, b) for a, b in zip(f(c), g(c)))\n"
            "           for c in (rng.random((n, m)) for n, m in [(3, 3), (5, 7), (40, 40)] * 5))\n"
            "print(same)\n"
            "c = np.array([[4., 1, 3], [2, 0, 5], [3, 2, 2]])\n"
            "print([list(map(int, a)) for a in f(c)])")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          check=True)
    assert proc.stdout.split("\n")[:3] == ["False", "True", "[[0, 1, 2], [1, 0, 2]]"]
