"""Issue 29 item 1, a new process imports what its method needs: ``preload`` imports the
modules a method reaches (toolkit.registry.lazy_modules), no more (ITV-MDMCF needs no
networkx), and none less (the timed run imports no heuristic or model module after it)."""
from __future__ import annotations

import json
import subprocess
import sys

from tests.test_cli import ROOT
from tests.test_kernels import FORKED_CASES

EX, LU, A2A = "instances/examples/", "instances/lumos/", "instances/a2a/uniform_n4_k1.json"
CASES = [(EX + "bench_n32_m8_s2_d0.1.json", "spectra"), (EX + "tiny_random_n4_s2.json", "baseline"),
         (EX + "delta_megatron-177b-n12.json", "sqrt-alloc"),
         (A2A, "rdc"), (A2A, "mixnet"), (A2A, "exact-k1"),
         (LU + "cross-rings-P8.json", "itv-mdmcf"), (LU + "cross-rings-P8.json", "itv-ilp"),
         (LU + "cross-rings-P8.json", "realize"), (LU + "uniform-rings-P8.json", "uniform-greedy"),
         (LU + "logical-leaf-triangle-tau1.json", "logical-ilp-min"),
         (LU + "staging-P8-tau1.json", "staging-greedy"),
         (LU + "placement-bestfit-48.json", "placement-greedy")]

# each case in a child forked from a process that has imported what solve.py imports
_FORKED = """
import json, os, sys
import instances
import models.backend
from toolkit.registry import RunConfig, preload, problem, problems
problems()
ours = lambda: {m for m in sys.modules if m.split(".")[0] in ("heuristics", "models")}

def case(f, m):
    data = json.load(open(f))
    inst = instances.from_dict(data, f)
    meth = problem(inst.problem).methods[m]
    preload(meth, inst, meth.configure(RunConfig()))
    before, nx = ours(), "networkx" in sys.modules
    out = meth.run(inst, RunConfig())               # what run_task times
    return [sorted(ours() - before), nx, out.solution is not None]

""" + FORKED_CASES


def test_preload_imports_what_the_run_needs_and_no_more():
    proc = subprocess.run([sys.executable, "-c", _FORKED, json.dumps(CASES)], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = dict(zip((m for _, m in CASES), json.loads(proc.stdout.splitlines()[-1])))
    for m, r in res.items():
        assert isinstance(r, list), (m, r)
        new, _, solved = r
        assert solved and new == [], (m, new)            # the run imported nothing more
    assert res["itv-mdmcf"][1] is False                  # helios' networkx stays out


def test_import_modules_reads_a_methods_code_once(monkeypatch):
    """Issue 29 item 3: the byte-code walk (5-9 ms a method) runs once per method function;
    a later call imports the same modules, and another function is walked for itself."""
    from dataclasses import replace

    from toolkit import method_imports
    from toolkit.registry import _LAZY, problem

    meth = problem("delta").methods["delta-fast"]
    first = method_imports.import_modules(meth, _LAZY)
    assert "heuristics.delta.fast" in first
    monkeypatch.setattr(method_imports, "_find", lambda *a: (_ for _ in ()).throw(
        AssertionError("walked again")))
    assert method_imports.import_modules(meth, _LAZY) == first
    other = replace(meth, fn=lambda inst, cfg: None)            # a new function: not cached
    try:
        method_imports.import_modules(other, _LAZY)
    except AssertionError as exc:
        assert "walked again" in str(exc)
    else:
        raise AssertionError("another function was served from the cache")
