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
    """The HEAVY modules in sys.modules after ``solve.main(argv)`` in a fresh interpreter."""
    code = ("import io, json, sys, contextlib\nimport solve\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try:\n        solve.main(%r, out_stream=io.StringIO())\n"
            "    except SystemExit:\n        pass\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in %r "
            "or m.startswith('scipy.optimize'))))" % (argv, tuple(h.split(".")[0] for h in HEAVY)))
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          check=True)
    mods = set(json.loads(proc.stdout.splitlines()[-1]))
    return {h for h in HEAVY if any(m == h or m.startswith(h + ".") for m in mods)}


def test_help_imports_no_heavy_module():
    assert _loaded_after(["--help"]) == set()
    assert _loaded_after(["solve", "--help"]) == set()


def test_list_imports_only_gurobipy_for_the_licence_line():
    # the backends section probes the Gurobi licence, which needs gurobipy (~0.05 s)
    assert _loaded_after(["list"]) == {"gurobipy"}


def test_heuristic_solve_does_not_load_other_problems_libraries():
    loaded = _loaded_after(["solve", "instances/examples/worked_example.json",
                            "--format", "json"])
    assert "scipy.optimize" in loaded           # Spectra's Decompose needs it
    assert not loaded & {"networkx", "ortools", "dask", "pandas"}


def test_every_lazy_binding_names_a_real_function():
    from toolkit.registry import PROBLEM_MODULES, problems

    problems()
    mods = list(PROBLEM_MODULES) + ["toolkit.a2a_model_methods", "toolkit.a2a_baseline_methods"]
    seen = 0
    for name in mods:
        for obj in vars(importlib.import_module(name)).values():
            target = getattr(obj, "target", None)
            if isinstance(target, tuple) and callable(obj):
                module, attr = target
                assert callable(getattr(importlib.import_module(module), attr)), target
                seen += 1
    assert seen > 40


@pytest.mark.parametrize("problem", ["spectra", "lumos-reconfig"])
def test_preload_imports_the_method_modules_before_the_clock(problem):
    code = ("import sys\nfrom toolkit.registry import preload, problem\n"
            f"p = problem({problem!r})\nm = p.methods[p.default_method]\n"
            "before = 'models.backend' in sys.modules\npreload(m.run)\n"
            "print(before, 'models.backend' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          check=True)
    assert proc.stdout.split() == ["False", "True"]
