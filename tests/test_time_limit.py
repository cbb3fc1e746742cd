"""--time-limit is the budget of the whole run (issue 28, item 4): builders check it, a spent
budget stops a method before its solve with its best result or status
time_limit_no_solution (said in the record), the solver gets what is left. No test here
waits on the clock: the budgets are spent (a limit far below any run) or driven by a fake
clock."""
from __future__ import annotations

import io
import json
import sys
import types
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import instances
import solve
from models import backend, interrupt
from toolkit.budget import Budget, TimeLimitReached, grace
from toolkit.registry import MethodOutput, RunConfig, problem, settle
from toolkit.run import failed, run_task

ROOT = Path(__file__).resolve().parents[1]
EX = ROOT / "instances" / "examples"
SPENT = 1e-9          # a limit every run has passed at its first check


class FakeClock:
    """A clock that moves only when told."""

    def __init__(self, t: float = 100.0):
        self.t = t

    def __call__(self) -> float:
        return self.t


def cli(*argv):
    out = io.StringIO()
    code = solve.main([str(a) for a in argv], out_stream=out)
    return code, [json.loads(ln) for ln in out.getvalue().splitlines()]


# --- the budget --------------------------------------------------------------------------------
def test_budget_on_a_fake_clock():
    clock = FakeClock()
    b = Budget(10.0, clock=clock)
    b.check()                                   # 0 s of 10: nothing happens
    clock.t += 3.0
    assert b.remaining() == 7.0 and not b.spent() and b.deadline() == 110.0
    assert RunConfig(budget=b).solve_kw()["time_limit"] == 7.0      # what is left, exactly
    with b.stage("build"):
        clock.t += 7.5
        with pytest.raises(TimeLimitReached, match="10 s reached after 10.5 s during build"):
            b.check()
    assert b.spent() and b.remaining() == 0.0 and b.stages == {"build": 7.5}
    assert RunConfig(budget=b).solve_kw()["time_limit"] == 0.0
    assert isinstance(TimeLimitReached(1, 2), TimeoutError)
    free = Budget(None, clock=clock)
    clock.t += 1e9
    free.check()                                # no limit: never raises
    assert free.deadline() is None and not free.spent()
    sub = b.sub()                               # same deadline and stages, own kept result
    b.keep("x", "the seed")
    assert sub.kept is None and sub.deadline() == b.deadline() and sub.stages is b.stages


def test_grace_is_half_the_benchmark_allowance():
    assert grace(5) == 1.0 and grace(100) == 5.0
    assert all(grace(lim) <= max(2.0, 0.1 * lim) / 2 for lim in (0.1, 1, 20, 120, 600))


def test_watchdog_raises_only_where_an_exception_is_safe():
    b = Budget(1.0, clock=FakeClock())
    with pytest.raises(TimeLimitReached):
        b.stop_in(sys._getframe())              # plain Python: stop here
    with interrupt.solver_running():
        b.stop_in(sys._getframe())              # a solver call: its own limit stops it
    # numba (compiled code calling back into Python, or its compiler) and imports: waits
    for where in ("/x/site-packages/numba/core/serialize.py", "/x/llvmlite/binding/ffi.py",
                  "<frozen importlib._bootstrap>"):
        ns = {}
        exec(compile("import sys\ndef f():\n    return sys._getframe()\n", where, "exec"), ns)
        b.stop_in(ns["f"]())
    # ... also when our own code runs inside them (a module body being imported)
    exec(compile("def outer(g):\n    return g()\n", "<frozen importlib._bootstrap>", "exec"),
         ns)
    b.stop_in(ns["outer"](lambda: sys._getframe()))


# --- builders stop on a spent budget ----------------------------------------------------------
def _spectra(name):
    return instances.from_dict(instances.read_json(EX / name), name)


def test_builders_stop_on_a_spent_budget():
    from models.delta.fts import build_fixed_step
    from models.delta.milp import build_interval
    from models.spectra.matchings import build_matching_milp
    from models.spectra.milp import build_milp

    spent = Budget(0.0).checker("build")
    inst = _spectra("bench_n32_m8_s2_d0.1.json")
    with pytest.raises(TimeLimitReached, match="during build"):
        build_milp(inst, 4, check=spent)
    with pytest.raises(TimeLimitReached):
        build_matching_milp(_spectra("tiny_random_n4_s2.json"), check=spent)
    delta = instances.from_dict(instances.read_json(EX / "delta_gpt-7b.json"), "d")
    with pytest.raises(TimeLimitReached):
        build_interval(delta, 10, 1e4, check=spent)
    with pytest.raises(TimeLimitReached):
        build_fixed_step(delta, 50.0, 1e3, check=spent)
    # an unspent budget builds the same model as none
    m1, _ = build_milp(inst, 4, check=Budget(None).checker())
    m2, _ = build_milp(inst, 4)
    assert (m1.NumVars, m1.NumConstrs) == (m2.NumVars, m2.NumConstrs)


# --- a spent budget in a run: the best kept result, or none --------------------------------------
def test_spent_budget_keeps_the_mip_start_heuristic():
    """milp keeps Spectra's schedule before it builds: the limit stops the build, the record
    has that schedule (verified, status feasible) and says so; no solver ran."""
    rec = run_task(instances.read_json(EX / "tiny_random_n4_s2.json"), "t", "milp",
                   RunConfig(backend="highs", time_limit=SPENT))
    assert rec["status"] == "feasible" and rec["verified"] and not failed(rec)
    assert "time limit of 1e-09 s reached" in rec["message"]
    assert "Spectra's schedule" in rec["message"] and rec["backend"] == "none"
    assert rec["elapsed_s"] >= rec["runtime_s"] > 0
    spectra = run_task(instances.read_json(EX / "tiny_random_n4_s2.json"), "t", "spectra",
                       RunConfig())
    assert rec["objective"] == spectra["objective"]


def test_spent_budget_without_a_solution_is_time_limit_no_solution_exit_1():
    """spectra-lp keeps nothing: status time_limit_no_solution, no objective, exit 1."""
    code, recs = cli("solve", EX / "tiny_random_n4_s2.json", "--method", "spectra-lp",
                     "--time-limit", SPENT, "--format", "json")
    (rec,) = recs
    assert code == 1 and rec["status"] == "time_limit_no_solution"
    assert rec["objective"] is None and not rec["verified"]
    assert "time limit" in rec["message"]


def test_simulation_stops_at_a_spent_budget():
    rec = run_task(instances.read_json(ROOT / "instances/lumos/sim-lumos-256.json"), "s",
                   "simulate", RunConfig(time_limit=SPENT))
    assert rec["status"] == "time_limit_no_solution" and rec["objective"] is None
    assert "time limit" in rec["message"] and "no solution" in rec["message"]


def test_heuristic_without_a_limit_never_reads_a_deadline():
    """No --time-limit: a heuristic's budget has no limit, so no deadline reaches it."""
    prob = problem("spectra")
    cfg = prob.methods["spectra"].configure(RunConfig())
    assert prob.methods["spectra"].new_budget(cfg).deadline() is None


def test_settle_takes_the_kept_result_when_the_solver_ran_out():
    from models.backend import Result

    b = Budget(1.0)
    out = MethodOutput(None, Result("time_limit_no_solution", message="HiGHS: time limit"))
    assert settle(out, b) is out                        # nothing kept: as it was
    b.keep("seed", "the seed")
    got = settle(out, b)
    assert got.solution == "seed" and got.solver.status == "feasible"
    assert "the solution is the seed" in got.solver.message
    infeasible = MethodOutput(None, Result("infeasible"))
    assert settle(infeasible, b) is infeasible          # a proof is not replaced


# --- the solver gets what is left ---------------------------------------------------------------
def _tiny_model():
    m = backend.new_model("t")
    x = m.addVars(3, vtype="B")
    m.addConstr(x[0] + x[1] + x[2] >= 2)
    m.setObjective(x[0] + 2 * x[1] + 3 * x[2])
    return m


@pytest.mark.parametrize("name", ["highs", "gurobi"])
def test_solver_gets_the_limit_less_its_setup(monkeypatch, name):
    """The time from solve()'s call to the solver's start (update, MIP start, HiGHS' export)
    comes off the time limit: a fake clock moves 3 s in between."""
    if name == "gurobi":
        from tests.conftest import gurobi_available

        if not gurobi_available():
            pytest.skip("Gurobi cannot start here")
    from models import highs, result

    ticks = iter([100.0])
    fake = types.SimpleNamespace(perf_counter=lambda: next(ticks, 103.0))
    monkeypatch.setattr(backend, "time", fake)
    monkeypatch.setattr(result, "time", fake)       # time_left reads the same clock
    monkeypatch.setattr(highs, "time", fake)        # its export takes no time here
    res = backend.solve(_tiny_model(), backend=name, time_limit=10.0)
    assert res.time_limit == pytest.approx(7.0) and res.status == "optimal"
    assert res.objective == 3.0


def test_no_solver_runs_without_time_left():
    res = backend.solve(_tiny_model(), backend="highs", time_limit=0.0)
    assert res.status == "time_limit_no_solution" and not res.has_solution
    assert res.message == backend.NOT_SOLVED and res.n_vars == 3


def test_run_passes_what_the_budget_has_left(monkeypatch):
    """Inside a run, each solve's time limit is what the run's budget has left when it is
    called (here: a fake clock 4 s into a 10 s budget)."""
    import toolkit.methods.spectra as sm

    seen = []

    def spy(model, **kw):
        seen.append(kw["time_limit"])
        return backend.Result("time_limit_no_solution")

    clock = FakeClock()
    monkeypatch.setattr(sm, "solve", spy)
    prob = problem("spectra")
    m = prob.methods["spectra-lp"]
    cfg = m.configure(RunConfig(backend="highs"))
    budget = Budget(10.0, clock=clock)
    clock.t += 4.0
    m.fn(_spectra("tiny_random_n4_s2.json"), replace(cfg, budget=budget))
    assert seen == [6.0]


# --- compilation counts, and an empty numba cache is compiled where it can be stopped ----------
_COLD = """
import time
from toolkit.kernels import warm
from heuristics.spectra import jit as spectra_jit
try:
    warm(["spectra"], deadline=time.perf_counter())     # the limit already passed
    print("warmed")
except TimeoutError as exc:
    print("stopped:", exc, "; compiled here:", len(spectra_jit.rounds.overloads))
"""


def test_an_empty_cache_is_compiled_in_a_child_stopped_at_the_deadline(tmp_path):
    """With a deadline, a kernel set that must be compiled (not loaded) is compiled by a
    child process (killed at the deadline), never in this process: numba cannot be
    interrupted safely while it compiles."""
    import os
    import subprocess

    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    proc = subprocess.run([sys.executable, "-c", _COLD], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "stopped: compiling the spectra kernels (empty numba cache)" in proc.stdout
    assert "compiled here: 0" in proc.stdout


# --- milp-matchings: its count and its build check the budget as they go --------------------------
def test_matching_enumeration_checks_the_budget_in_steps():
    """The count behind milp-matchings' applicability check (K_8: 1.4 million partial
    matchings) checks the budget after each vectorized step: a spent budget stops it, and
    the run ends there with no solution (it used to run the count to its end)."""
    from models.spectra.matchings import count_maximal_matchings, maximal_matchings
    from toolkit.methods.spectra import matchings_applicable

    S, calls = np.ones((5, 5), dtype=bool), []
    got = maximal_matchings(S, check=lambda: calls.append(1))
    assert len(got) == 120 and np.array_equal(got, maximal_matchings(S))
    assert len(calls) >= 5 * 5 + 5      # each output of each input, each input's maximality
    inst = _spectra("tiny_random_n4_s2.json")
    with pytest.raises(TimeLimitReached):
        count_maximal_matchings(inst, check=Budget(0.0).checker())
    method = problem("spectra").methods["milp-matchings"]
    with pytest.raises(TimeLimitReached):
        matchings_applicable(inst, replace(method.configure(RunConfig()), budget=Budget(0.0)))
    rec = run_task(instances.read_json(EX / "tiny_random_n4_s2.json"), "t", "milp-matchings",
                   RunConfig(time_limit=SPENT))
    assert rec["status"] == "time_limit_no_solution"
    assert "during the applicability check" in rec["message"]


def test_matching_milp_leaves_out_a_symmetry_cut_too_large_to_build(monkeypatch):
    """sym_switches has M (M + 1) / 2 nonzeros a switch (13 GB as a dense matrix at K_8's
    M = 40320): above SYM_NNZ_MAX the optional cut is left out, not built."""
    from models.spectra import matchings as sm

    def sym_rows(model):
        model.update()
        return sum(c.ConstrName.startswith("sym_switches") for c in model.getConstrs())

    inst = _spectra("tiny_random_n4_s2.json")
    assert sym_rows(sm.build_matching_milp(inst)[0]) > 0
    monkeypatch.setattr(sm, "SYM_NNZ_MAX", 1)
    assert sym_rows(sm.build_matching_milp(inst)[0]) == 0


# --- waits on worker processes stop at the limit --------------------------------------------------
def test_a_wait_on_worker_processes_stops_at_the_limit_itself(monkeypatch):
    """At the limit the watchdog stops a wait on worker processes, which no check of the
    method's own can end, and leaves other code its grace; a wait begun past the limit of
    an armed watchdog raises at once."""
    from toolkit import budget as bmod

    clock = FakeClock()
    b = Budget(1.0, clock=clock)
    clock.t += 1.0
    b.at_limit(sys._getframe())                 # code that checks: its grace first
    with bmod.waiting_on_workers():
        with pytest.raises(TimeLimitReached):
            b.at_limit(sys._getframe())
        with interrupt.solver_running():
            b.at_limit(sys._getframe())         # never inside a solver call
    monkeypatch.setattr(bmod, "_armed", b)
    with pytest.raises(TimeLimitReached):
        with bmod.waiting_on_workers():
            pass
    assert bmod._waiting == 0


def test_the_group_pool_is_killed_at_the_limit_not_run_again_serially(monkeypatch):
    """ITV's group pool: the limit stopping the wait (TimeLimitReached, an OSError) kills the
    pool and ends the run, where it used to rerun the groups serially past the limit; a
    pool that cannot start (an OSError of its own) still falls back to the serial run."""
    from concurrent.futures import Future

    from heuristics.lumos.mdmcf import reconfig as lr
    from toolkit import budget as bmod

    dropped, waiting = [], []

    class Pool:
        def submit(self, fn, job):
            waiting.append(bmod._waiting)
            f = Future()
            f.set_exception(TimeLimitReached(5.0, 5.0))
            return f

    pool = Pool()
    monkeypatch.setattr(lr, "group_pool", lambda workers: pool)
    monkeypatch.setattr(lr, "drop_shared", dropped.append)
    with pytest.raises(TimeLimitReached):
        lr._in_pool(2, ["job 1", "job 2"])
    assert dropped == [pool] and waiting == [1, 1]      # marked as a wait on workers

    def cannot_start(workers):
        raise OSError("no forkserver here")

    monkeypatch.setattr(lr, "group_pool", cannot_start)
    assert lr._in_pool(2, ["job 1"]) is None


def test_a_pool_stopped_while_it_starts_is_killed_with_the_server_it_started(monkeypatch):
    """A shared pool stopped while its workers start (the limit, a Ctrl-C) is killed and
    forgotten, and so is a forkserver it started (it would still fork the worker whose start
    was interrupted); the next call starts afresh."""
    from toolkit import pools

    killed, stopped = [], []

    class Starting:
        def submit(self, fn):
            raise TimeLimitReached(5.0, 5.0)

    pids = iter([None, 4242])                   # no server before, this pool's after
    monkeypatch.setattr(pools, "_server_pid", lambda: next(pids))
    monkeypatch.setattr(pools, "process_pool", lambda workers, **kw: Starting())
    monkeypatch.setattr(pools, "kill_pool", killed.append)
    monkeypatch.setattr(pools, "_stop_server", lambda: stopped.append(True))
    with pytest.raises(TimeLimitReached):
        pools.shared_pool(3, modules=("tests.test_time_limit",))
    assert len(killed) == 1 and stopped == [True]
    assert all(v is not killed[0] for v in pools._SHARED.values())
