"""Versions of the solvers behind a result: every record and every results/ header names them.

Read from the installed distributions' metadata, so asking costs no solver import (and no
solver banner). ``python -m toolkit.versions`` prints them and checks that highspy and
OR-Tools carry the same HiGHS release (both ship a ``libhighs.so.1`` and a process loads
only the first one; see pyproject.toml).
"""
from __future__ import annotations

import sys
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version

SOLVER_PACKAGES = ("gurobipy", "highspy", "ortools")
# OR-Tools release -> the HiGHS release its wheels bundle (read off the wheel's libhighs.so.1)
ORTOOLS_HIGHS = {"9.15": "1.12"}


@lru_cache(maxsize=None)
def solver_versions() -> dict[str, str]:
    """{package: version} for gurobipy, highspy and ortools ("missing" if not installed)."""
    out = {}
    for pkg in SOLVER_PACKAGES:
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "missing"
    return out


def versions_text() -> str:
    """One line for a record or a report header: ``gurobipy 13.0.3, highspy 1.12.0, ...``."""
    return ", ".join(f"{k} {v}" for k, v in solver_versions().items())


def highs_mismatch() -> str | None:
    """Why highspy and OR-Tools cannot share one process, or None when they can."""
    v = solver_versions()
    ort = ".".join(v["ortools"].split(".")[:2])
    hs = ".".join(v["highspy"].split(".")[:2])
    want = ORTOOLS_HIGHS.get(ort)
    if want is None:
        return (f"ortools {v['ortools']}: its bundled HiGHS release is not recorded in "
                f"toolkit.versions.ORTOOLS_HIGHS")
    if hs != want:
        return f"highspy {v['highspy']} but ortools {v['ortools']} bundles HiGHS {want}"
    return None


if __name__ == "__main__":
    print(f"Python {sys.version.split()[0]}; {versions_text()}")
    why = highs_mismatch()
    if why:
        print(f"error: {why}: one process cannot load both (see pyproject.toml)", file=sys.stderr)
        sys.exit(1)
