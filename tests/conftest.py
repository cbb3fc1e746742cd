"""Shared fixtures. Solver tests run on HiGHS always, and on Gurobi when it can start.

The suite does not depend on the machine's load or memory (issue 29): Hypothesis runs
without its wall-clock checks (no per-example deadline, no too-slow health check) and on
the same examples every run (``HYPOTHESIS_PROFILE=explore`` draws new ones); the memory
limit is the toolkit's default, not one a user set in the environment (``OCS_MAX_MEMORY_GB``:
a test that needs another sets it).
"""
from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from models.backend import BackendError, gurobi_env

_CLOCK_FREE = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("repeatable", derandomize=True, database=None, **_CLOCK_FREE)
settings.register_profile("explore", **_CLOCK_FREE)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))
os.environ.pop("OCS_MAX_MEMORY_GB", None)


def gurobi_available() -> bool:
    try:
        gurobi_env()
        return True
    except BackendError:
        return False


needs_gurobi = pytest.mark.skipif(not gurobi_available(), reason="Gurobi cannot start here")


def assert_feasible_start(model, start: dict, row_tol: float = 1e-9) -> None:
    """A MIP start is complete and satisfies every row, bound and integrality of the model
    (checked on the exported matrix, independently of either solver)."""
    import numpy as np

    from models.backend import export_matrix

    assert len(start) == model.NumVars
    mx = export_matrix(model)
    x = np.zeros(model.NumVars)
    for v, val in start.items():
        x[v.index] = val
    ax = mx["A"] @ x
    assert np.all(ax >= mx["rlo"] - row_tol) and np.all(ax <= mx["rup"] + row_tol)
    assert np.all(x >= mx["lb"] - 1e-9) and np.all(x <= mx["ub"] + 1e-9)
    ints = mx["integrality"] == 1
    assert np.allclose(x[ints], np.round(x[ints]))
