"""``linear_sum_assignment`` (scipy's LSAP) without importing all of scipy.optimize.

The function is a builtin of scipy's compiled ``scipy/optimize/_lsap`` extension; importing it
as ``scipy.optimize.linear_sum_assignment`` first runs ``scipy.optimize/__init__`` (linalg,
linprog, shgo, ...: about 0.3-0.5 s on 2 cores), which Spectra's heuristics never use. This
module loads that extension file directly (the same compiled routine scipy exports; on newer
scipy a second instance of the module) and falls
back to the ordinary import when the file is not where scipy 1.x puts it.
"""
from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from pathlib import Path


def _load():
    if "scipy.optimize" in sys.modules:          # already paid for: use it
        from scipy.optimize import linear_sum_assignment

        return linear_sum_assignment
    import scipy

    folder = Path(scipy.__file__).parent / "optimize"
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = folder / f"_lsap{suffix}"
        if path.is_file():
            spec = importlib.util.spec_from_file_location("scipy.optimize._lsap", path)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            return mod.linear_sum_assignment
    from scipy.optimize import linear_sum_assignment

    return linear_sum_assignment


linear_sum_assignment = _load()
