"""The IIS file of an infeasible model goes into a folder made on first use: the backend's
``iis_path`` and ``solve --out``."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.conftest import needs_gurobi
from tests.test_batch_resume import run


@needs_gurobi
def test_iis_is_written_into_a_folder_that_does_not_exist_yet(tmp_path):
    import models.backend as B
    from gurobipy import GRB

    m = B.new_model()
    a = m.addVars(2, vtype=GRB.BINARY)
    m.addConstr(a.sum() >= 3, name="three_of_two")
    m.update()
    iis = tmp_path / "not" / "yet" / "m.ilp"
    res = B.solve(m, backend="gurobi", iis_path=str(iis))
    assert res.status == "infeasible" and res.iis_file == str(iis)
    assert "three_of_two" in iis.read_text()


def _leaf_triangle(path: Path) -> Path:
    """[002] Fig. 12: with tau = 1 the feasibility model (5)(6)(8) is infeasible."""
    import instances
    from instances.lumos.fabric import Fabric
    from instances.lumos.logical import LogicalInstance

    L = np.zeros((6, 6), dtype=int)
    for a, b in ((0, 2), (2, 4), (0, 4)):
        L[a, b] = L[b, a] = 1
    instances.save_instance(LogicalInstance(Fabric(3, 2, 2, 1), L), path)
    return path


@needs_gurobi
def test_solve_out_writes_the_iis_into_a_new_folder(tmp_path):
    f = _leaf_triangle(tmp_path / "tri.json")
    dest = tmp_path / "new" / "out"
    code, out, err = run("solve", f, "--method", "logical-ilp", "--backend", "gurobi",
                         "--out", dest, "--format", "json")
    assert code == 1 and '"status": "infeasible"' in out, err
    from toolkit.outdir import iis_path

    iis = iis_path(dest, f, "logical-ilp")
    assert iis.exists() and "Subject To" in iis.read_text()
    assert f'"iis_file": "{iis}"' in out
