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
