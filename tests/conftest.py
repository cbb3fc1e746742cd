"""Shared fixtures. Solver tests run on HiGHS always, and on Gurobi when it can start."""
from __future__ import annotations

import pytest

from models.backend import BackendError, gurobi_env


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
