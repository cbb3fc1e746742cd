"""A simulation's records without pandas (issue 29 item 1: ``simulate`` imports no pandas):
``engine.records`` gives what ``pd.DataFrame(rows).to_dict("records")`` gives, value for
value and type for type, on a real simulation's rows and on rows with gaps, None, mixed
numbers, numpy scalars and bools."""
from __future__ import annotations

import math
import pickle
import subprocess
import sys

import numpy as np
import pandas as pd

from heuristics.lumos.sim.engine import records
from tests.test_cli import ROOT

# a LumosCore simulation with reconfigurations, in a child (it loads the compiled kernels)
_SIM = """
import pickle, sys
from heuristics.lumos.sim.architectures import make_arch
from heuristics.lumos.sim.engine import Simulator
from instances import load_instance
inst = load_instance("instances/lumos/sim-lumos-256.json")
arch = make_arch(inst.arch, inst.gpus, "itv-mdmcf", ecmp=inst.ecmp or "polarized")
res = Simulator(arch, alg_time="none").run(inst.jobs)
assert "pandas" not in sys.modules
sys.stdout.buffer.write(pickle.dumps((res.job_rows, res.reconfig_rows)))
"""


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


def _agree(rows: list[dict]) -> None:
    got, want = records(rows), pd.DataFrame(rows).to_dict("records")
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert list(g) == list(w)
        for k in w:
            assert _same(g[k], w[k]), (k, g[k], w[k])


def test_records_of_a_simulation_are_pandas_records():
    proc = subprocess.run([sys.executable, "-c", _SIM], cwd=ROOT, capture_output=True)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    jobs, reconfigs = pickle.loads(proc.stdout)
    assert jobs and reconfigs
    _agree(jobs)
    _agree(reconfigs)


def test_records_of_edge_rows_are_pandas_records():
    _agree([])
    _agree([dict(a=1, b=np.int64(2), c=1.5, d="x", e=True, f=None, g=np.float64(3.0)),
            dict(a=2, b=np.int64(3), c=2, d=None, e=False, f=None, g=np.nan),
            dict(a=3, c=np.int64(4), d="y", e=np.bool_(True), h=[1, 2])])
    _agree([dict(a=1, b=None), dict(a=np.int32(2), b=7), dict(b=np.float32(0.5))])
    _agree([dict(m=1, n="s"), dict(m="t", n=2)])            # mixed columns stay as given
    _agree([dict(f=None), dict(f=None)])
    _agree([dict(f=None), dict()])
    _agree([dict(f=None), dict(f="x")])
    _agree([dict(f=True), dict(), dict(f=None)])
