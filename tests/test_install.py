"""The install is the lock (issue 13, item 1): the environment running the suite holds
exactly the locked versions, and highspy and OR-Tools, which each ship a libhighs.so.1 of
which a process loads only the first, work together in either import order."""
from __future__ import annotations

import re
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.utils import canonicalize_name

from toolkit.versions import highs_mismatch, solver_versions

ROOT = Path(__file__).resolve().parents[1]
PIN = re.compile(r"^([A-Za-z0-9_.\-]+)==([^\s;\\]+)\s*(?:;\s*([^\\]+?))?\s*\\?$")


def locked() -> dict[str, str]:
    """{package: version} of the lock's lines whose marker holds on this Python."""
    out = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        m = PIN.match(line)
        if m and (m.group(3) is None or Marker(m.group(3)).evaluate()):
            out[canonicalize_name(m.group(1))] = m.group(2)
    return out


def test_environment_is_the_lock():
    pins = locked()
    assert {"gurobipy", "highspy", "ortools", "numpy", "scipy", "pandas"} <= set(pins)
    wrong = {}
    for name, want in pins.items():
        try:
            have = version(name)
        except PackageNotFoundError:
            have = "missing"
        if have != want:
            wrong[name] = (have, want)
    assert not wrong, f"installed != locked (run `make` to rebuild the venv): {wrong}"


def test_solver_versions_agree_on_highs():
    assert highs_mismatch() is None
    assert all(v != "missing" for v in solver_versions().values())


SNIPPET = """
import numpy as np
def mcf():
    from heuristics.lumos.mdmcf.mcf import min_cost_flow
    f = min_cost_flow(3, [0, 0, 1], [1, 2, 2], [0, 0, 0], [5, 5, 5], [1, 3, 1], supply=[4, 0, -4])
    assert f.tolist() == [4, 0, 4], f
def highs():
    import gurobipy as gp
    from models.backend import new_model, solve
    m = new_model("t"); x = m.addVar(vtype="I", ub=3); y = m.addVar(vtype="I", ub=3)
    m.addConstr(x + y <= 4.5); m.setObjective(-x - y)
    r = solve(m, backend="highs")
    assert r.status == "optimal" and abs(r.objective + 4) < 1e-9, r
for f in ORDER:
    f()
print("ok")
"""


@pytest.mark.parametrize("order", ["mcf, highs", "highs, mcf"])
def test_highspy_and_ortools_share_a_process(order):
    code = SNIPPET.replace("ORDER", f"[{order}]")
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr[-2000:]
