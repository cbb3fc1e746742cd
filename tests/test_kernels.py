"""Issue 28 item 3, times are the algorithm's: a method's compiled kernels are warmed before
its clock (toolkit.kernels), with exactly the signatures its run uses, and lumos-sim never
charges compilation or cache loading as OCS algorithm time.

Both are checked without timing anything: numba's compiler events say whether a run
compiled or loaded machine code inside its clock, and the simulation runs with its
controller's clock replaced by one that moves by a fixed tick per reading plus the time
numba spends compiling (so a charged compilation would change the objective).
"""
from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys

import numpy as np

from tests.test_cli import ROOT
from toolkit.kernels import KERNELS, compile_clock
from toolkit.registry import problems

# (instance, method, options, --time-limit): every path into compiled code
CASES = [
    ("instances/examples/bench_n32_m8_s2_d0.1.json", "spectra", {}, None),
    ("instances/examples/bench_n32_m8_s2_d0.1.json", "baseline", {}, None),
    ("instances/examples/tiny_random_n4_s2.json", "spectra-noeq", {"matching": "jit"}, None),
    ("instances/lumos/cross-rings-P8.json", "itv-mdmcf", {}, None),
    ("instances/lumos/cross-rings-P8.json", "itv-mdmcf", {"lns": "0", "restarts": "3"}, None),
    ("instances/lumos/cross-rings-P8.json", "itv-mdmcf", {}, 60.0),   # clock-read chunks
    ("instances/lumos/cross-rings-P8.json", "itv-mdmcf-lp", {}, None),
    ("instances/lumos/cross-rings-P8.json", "itv-ilp", {}, None),
    ("instances/lumos/sim-lumos-256.json", "simulate", {}, None),
    ("instances/a2a/zipf_n8_k2.json", "rdc", {}, None),
    ("instances/a2a/zipf_n8_k2.json", "gk-literal", {"restarts": "0"}, None),
]

# the cases of argv[1] (JSON), each ``case(*c)`` in a child forked from this process: a list
# of their JSON results (an exception's repr where one raised) on stdout
FORKED_CASES = """
def forked(c):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            out = case(*c)
        except BaseException as exc:
            out = repr(exc)
        os.write(w, json.dumps(out).encode())
        os._exit(0)
    os.close(w)
    with os.fdopen(r) as pipe:
        out = json.loads(pipe.read())
    os.waitpid(pid, 0)
    return out

print(json.dumps([forked(c) for c in json.loads(sys.argv[1])]))
"""

# Each case in a process forked from one that has not loaded numba: its warm-up must load
# every kernel it runs (a case cannot profit from an earlier case's kernels).
_FORKED = """
import json, os, sys
from toolkit.registry import RunConfig, problems
from toolkit.run import run_task
problems()
assert "numba" not in sys.modules

def case(f, method, opts, limit):
    rec = run_task(json.load(open(f)), f, method, RunConfig(options=opts, time_limit=limit))
    return [rec.get("warmup_s"), rec.get("compile_s"), rec["verified"]]

""" + FORKED_CASES


def test_every_declared_kernel_set_has_a_warm_up():
    for module, fn in KERNELS.values():
        assert callable(getattr(importlib.import_module(module), fn))
    declared = {k for p in problems().values() for m in p.methods.values()
                for k in m.kernel_sets()}
    assert declared == {"spectra", "lumos-chains", "lumos-lns", "a2a-relabel", "lumos-probe"}


def test_kernel_sets_follow_the_options_and_the_instance():
    import instances
    from toolkit.registry import RunConfig

    spectra = problems()["spectra"].methods["spectra"]
    tiny = instances.from_dict(json.loads((ROOT / CASES[2][0]).read_text()), "tiny")
    big = instances.from_dict(json.loads((ROOT / CASES[0][0]).read_text()), "big")
    sets = lambda m, inst, **o: m.kernel_sets(inst, m.configure(RunConfig(options=o)))
    assert sets(spectra, tiny) == () and sets(spectra, big) == ("spectra",)
    assert sets(spectra, tiny, matching="jit") == ("spectra",)
    assert sets(spectra, big, matching="scipy") == ()
    reconfig = problems()["lumos-reconfig"].methods
    assert sets(reconfig["itv-mdmcf"], None, lns="0") == ("lumos-chains",)
    assert sets(reconfig["itv-mdmcf"], None, eject="false") == ()
    assert sets(reconfig["itv-mcf"], None) == ()
    assert sets(reconfig["itv-ilp"], None, start="false") == ()
    sim = problems()["lumos-sim"].methods
    clos = instances.from_dict(json.loads((ROOT / "instances/lumos/sim-clos-256.json")
                                          .read_text()), "clos")
    assert sets(sim["simulate"], clos) == ("lumos-probe",)        # probing routing (issue 31)
    assert sets(sim["simulate"], clos, routing="ecmp") == ()
    assert sets(sim["sim-itv-ilp"], None) == ("lumos-chains", "lumos-lns", "lumos-probe")
    assert sets(sim["sim-itv-ilp"], None, routing="optimal") == ("lumos-chains", "lumos-lns")
    a2a = problems()["a2a"].methods
    zipf = instances.from_dict(json.loads((ROOT / "instances/a2a/zipf_n8_k2.json").read_text()),
                               "zipf")
    uniform = instances.from_dict(json.loads((ROOT / "instances/a2a/uniform_n4_k1.json")
                                             .read_text()), "uniform")
    assert sets(a2a["rdc"], zipf) == ("a2a-relabel",) and sets(a2a["rdc"], uniform) == ()
    assert sets(a2a["rdc"], zipf, relabel="false") == () == sets(a2a["static"], zipf)



def test_a_batch_warms_the_sets_of_its_methods_once_each():
    """toolkit.batch.kernel_sets: the union over (method, options), in order, a bad option
    value left to its task (the batch's pools and Dask workers warm these)."""
    from toolkit.batch import kernel_sets
    from toolkit.registry import RunConfig

    reconfig, spectra = problems()["lumos-reconfig"].methods, problems()["spectra"].methods
    runs = lambda *mo: [(m, RunConfig(options=o)) for m, o in mo]
    assert kernel_sets(runs((reconfig["itv-mdmcf"], {"lns": "0"}), (reconfig["itv-mcf"], {}),
                            (reconfig["itv-mdmcf"], {}))) == ["lumos-chains", "lumos-lns"]
    assert kernel_sets(runs((reconfig["itv-mdmcf"], {"eject": "maybe"}),
                            (spectra["spectra"], {}))) == ["spectra"]
    assert kernel_sets([]) == []

def test_a_run_after_its_warm_up_compiles_nothing():
    """Every case's record: a warm-up (it loaded its kernels before the clock) and no
    ``compile_s`` (nothing compiled or loaded inside it): the warm-ups' signatures are
    exactly those of the runs, whatever path (seeded restarts, the LNS, a time limit, a
    model's MIP start, a simulation's reconfigurations) the run takes."""
    cases = [[str(ROOT / f), m, o, t] for f, m, o, t in CASES]
    proc = subprocess.run([sys.executable, "-c", _FORKED, json.dumps(cases)], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for (f, method, opts, _), (warmup, compiled, verified) in zip(
            CASES, json.loads(proc.stdout.splitlines()[-1])):
        assert verified and warmup and warmup > 0, (f, method, opts)
        assert compiled is None, (f, method, opts, compiled)


def test_the_compile_clock_sees_a_compilation_and_a_cache_load_not_a_warm_call():
    import numba

    @numba.njit
    def twice(x):
        return 2 * x

    with compile_clock() as first:
        twice(1.0)
    with compile_clock() as again:
        twice(2.0)
    assert first.events == 1 and first.seconds > 0
    assert again.events == 0 and again.seconds == 0.0


def test_compilation_inside_an_admission_is_not_charged():
    """A reconfiguration method that compiles a new kernel inside an admission: the
    controller reports that time as ``compile_s``, outside the charged ``wall_s``."""
    from dataclasses import replace

    import numba

    from heuristics.lumos.placement import greedy_placement
    from heuristics.lumos.sim.controller import OcsController
    from instances.lumos.fabric import Fabric
    from instances.lumos.placement import Cluster, Job, PlacementInstance

    cl = Cluster(Fabric(4, 8, 8, 2), 8)
    ctrl = OcsController(cl)
    real = ctrl._method.fn

    def compiling(inst, cfg):
        numba.njit(lambda x: x + 1)(1)          # a new kernel: compiled now
        return real(inst, cfg)

    ctrl._method = replace(ctrl._method, fn=compiling)
    p = greedy_placement(PlacementInstance(cl, np.zeros(cl.n_gpus, dtype=bool),
                                           Job(48, tp=8, pp=2, dp=3)))
    rec = ctrl.admit(p, 0, 0.0)
    assert rec is not None and rec.compile_s > 0 and rec.wall_s >= 0


# The simulation with the controller's clock replaced: each reading moves it by 1 ms, and
# it also moves by the time numba holds its compiler lock (compiling or loading cached
# code), so a charged compilation shows in the objective, and nothing else of the machine
# does.
_SIM = """
import json, sys, time
import numba
from numba.core import event
from heuristics.lumos.sim import controller
from toolkit.registry import RunConfig
from toolkit.run import run_task

class Clock(event.Listener):
    reads, compiling, depth, since = 0, 0.0, 0, 0.0
    def on_start(self, e):
        self.depth += 1
        if self.depth == 1:
            self.since = time.perf_counter()
    def on_end(self, e):
        self.depth -= 1
        if self.depth == 0:
            self.compiling += time.perf_counter() - self.since
    def perf_counter(self):
        self.reads += 1
        return self.reads * 1e-3 + self.compiling

clock = Clock()
event.register("numba:compiler_lock", clock)
controller.time = clock
f = sys.argv[1]
out = []
for _ in range(int(sys.argv[2])):
    rec = run_task(json.load(open(f)), f, "simulate", RunConfig(), want_solution=True)
    out.append([rec["objective"], rec.get("warmup_s"), rec.get("compile_s"),
                sum(r["compile_s"] for r in rec["solution"]["reconfigs"])])
print(json.dumps(out))
"""


def _simulate(cache, runs: int) -> tuple[list, int]:
    """The runs' [objective, warmup_s, compile_s, reconfigurations' compile_s], and the
    number of cold-cache notes on stderr (stdout holds the one JSON line only)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    sim = ROOT / "instances/lumos/sim-lumos-256.json"
    proc = subprocess.run([sys.executable, "-c", _SIM, str(sim), str(runs)], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (line,) = proc.stdout.splitlines()
    return json.loads(line), proc.stderr.count("note: compiling the numba kernels")


def test_a_simulation_gives_the_same_objective_cold_and_warm(tmp_path):
    """A fresh process with an empty numba cache dir (it compiles MDMCF's chains and LNS,
    30-60 s on 2 cores: the one cold compilation of the suite), a fresh process with that
    cache, and a second run in that warm process give the same Avg.JCT: the compilation
    and the cache loading happen in the warm-up, before the clock, never in an admission.
    The cold process says so once on stderr (issue 29: not once per kernel set)."""
    cache = tmp_path / "numba"
    (cold,), notes = _simulate(cache, 1)
    assert any(cache.rglob("*.nbi"))                        # it compiled into the empty dir
    assert notes == 1
    (fresh, warm), notes = _simulate(cache, 2)
    assert notes == 0
    assert cold[0] == fresh[0] == warm[0]
    for run in (cold, fresh, warm):
        assert run[2] is None and run[3] == 0               # nothing compiled in the clock
    assert cold[1] > 0 and fresh[1] > 0 and warm[1] is None     # warm-ups: cold, load, none
