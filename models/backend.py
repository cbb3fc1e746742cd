"""Solver backends for gurobipy models: Gurobi, or HiGHS by matrix export.

Every model in this toolkit is built with gurobipy. :func:`solve` runs it on

* ``gurobi`` - Gurobi itself (any licence; the pip licence accepts models up to
  2000 variables and 2000 constraints);
* ``highs`` - the embedded HiGHS solver (``highspy``): the model is exported as a
  matrix (``getA()``, bounds, senses, integrality) and the solution comes back as
  a vector indexed like ``model.getVars()``;
* ``auto`` - Gurobi when its licence accepts the model, else HiGHS. The result
  says which backend ran and why (``backend_reason``).

Extraction code reads values through :meth:`Result.value`, never ``Var.X``, so
it is backend-blind.
"""
from __future__ import annotations

import itertools
import time
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

import gurobipy as gp
from gurobipy import GRB

from models import interrupt, model_files
from models.gap import relative_gap
from models.result import NOT_SOLVED, BackendError, Result, interrupted_message, time_left
from models.solver_log import echo, solver_output

BACKENDS = ("auto", "gurobi", "highs")
SIZE_LIMIT = 2000  # pip (size-limited) licence: variables and constraints
_ERR_SIZE_LIMIT = 10010

# --------------------------------------------------------------------------------------
# Environments
# --------------------------------------------------------------------------------------
_ENV: gp.Env | None = None
_ENV_ERROR: str | None = None
_LICENCE_SIZE_LIMITED: bool | None = None  # learned from errno 10010


def gurobi_env() -> gp.Env:
    """A shared, quiet Gurobi environment (raises BackendError if Gurobi cannot start)."""
    global _ENV, _ENV_ERROR
    if _ENV is None and _ENV_ERROR is None:
        try:
            env = gp.Env(empty=True)
            env.setParam("OutputFlag", 0)
            env.start()
            _ENV = env
        except gp.GurobiError as exc:  # no licence at all
            _ENV_ERROR = f"Gurobi could not start: {exc}"
    if _ENV is None:
        raise BackendError(_ENV_ERROR)
    return _ENV


def new_model(name: str = "") -> gp.Model:
    """A gurobipy model for a builder to fill. Building never needs a full licence."""
    return gp.Model(name, env=gurobi_env())


class every:
    """A builder's budget check (e.g. ``Budget.check``; None: none) for Python loops:
    ``tick()`` calls ``check`` once every ``n`` calls (a clock read is cheap, a row cheaper
    still), ``tick.now()`` at once (between constraint groups)."""

    def __init__(self, check: Callable[[], None] | None, n: int = 256):
        self.check, self.n, self.count = check, n, itertools.count(1)

    def __call__(self) -> None:
        if self.check is not None and next(self.count) % self.n == 0:
            self.check()

    def now(self) -> None:
        if self.check is not None:
            self.check()


def model_size(model: gp.Model) -> tuple[int, int, int]:
    model.update()
    return model.NumVars, model.NumIntVars, model.NumConstrs


def gurobi_size_limited() -> bool:
    """Whether the Gurobi licence is size-limited, learned once by optimizing a tiny
    model with SIZE_LIMIT + 1 variables (errno 10010 when it is)."""
    global _LICENCE_SIZE_LIMITED
    if _LICENCE_SIZE_LIMITED is None:
        m = gp.Model("licence_probe", env=gurobi_env())
        m.addVars(SIZE_LIMIT + 1)
        try:
            m.optimize()
            _LICENCE_SIZE_LIMITED = False
        except gp.GurobiError as exc:
            _LICENCE_SIZE_LIMITED = exc.errno == _ERR_SIZE_LIMIT
        finally:
            m.dispose()
    return _LICENCE_SIZE_LIMITED


def licence_summary() -> dict[str, str]:
    """One line per backend saying whether and how it can run (for ``solve.py list``)."""
    from importlib.metadata import version

    try:
        gurobi_env()
        ver = ".".join(map(str, gp.gurobi.version()))
        lim = (f"size-limited licence (<= {SIZE_LIMIT} vars and constrs)" if gurobi_size_limited()
               else "full licence")
        g = f"available, Gurobi {ver}, {lim}"
    except BackendError as exc:
        g = f"unavailable: {exc}"
    h = f"available, highspy {version('highspy')} (embedded HiGHS)"
    return {"gurobi": g, "highs": h,
            "auto": "Gurobi when its licence accepts the model, else HiGHS (reason reported)"}


def _choose_backend(model: gp.Model, backend: str) -> tuple[str, str]:
    if backend not in BACKENDS:
        raise BackendError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    n, _, m = model_size(model)
    if backend != "auto":
        return backend, "requested"
    try:
        gurobi_env()
    except BackendError as exc:
        return "highs", f"{exc}; using HiGHS"
    if (n > SIZE_LIMIT or m > SIZE_LIMIT) and gurobi_size_limited():
        return "highs", (f"Gurobi licence is size-limited ({SIZE_LIMIT} vars/constrs) and the model "
                         f"has {n} vars, {m} constrs; using HiGHS")
    return "gurobi", "Gurobi licence accepts the model"


# --------------------------------------------------------------------------------------
# Public entry point
# --------------------------------------------------------------------------------------
# toolkit.api.build's hand-over, set in the thread that runs the method: a function
# (model, start) -> Result | None that :func:`solve` calls first (None: solve as usual)
HANDOVER: ContextVar[Callable | None] = ContextVar("HANDOVER", default=None)


def solve_highs(model, params, start_items, log, since: float | None = None) -> "Result":
    from models.highs import solve_highs as _run

    return _run(model, params, start_items, log, since)


def export_matrix(model: gp.Model) -> dict:
    """The model as arrays (see models.highs.export_matrix)."""
    from models.highs import export_matrix as _export

    return _export(model)


def solve(model: gp.Model, backend: str = "auto", time_limit: float | None = None,
          mip_gap: float | None = None, threads: int | None = None,
          start: Mapping[gp.Var, float] | Iterable[tuple[gp.Var, float]] | None = None,
          log: str | None = None, params: Mapping[str, Any] | None = None,
          iis_path: str | None = None) -> Result:
    """Solve a gurobipy model on the chosen backend and return a :class:`Result`.

    ``start`` is a (possibly partial) MIP start ``{var: value}``; ``log`` a log file path;
    ``params`` extra Gurobi parameters (mapped to HiGHS options where one exists, else
    reported in ``message``). Infeasible models are reported as such; with Gurobi an IIS
    is written to ``iis_path`` when given. A Ctrl-C stops the solve with status
    ``interrupted`` (the incumbent kept); after it, solves raise KeyboardInterrupt
    (models.interrupt). During a run with ``--write-model`` the model is written first
    (models.model_files).

    ``time_limit`` counts from this call: the solver gets what is left of it when it starts
    (after ``model.update()``, the MIP start, HiGHS' matrix export), and with nothing left
    no solver runs (status ``time_limit_no_solution``).
    """
    since = time.perf_counter()
    if interrupt.requested():
        raise KeyboardInterrupt("interrupted before this solve started")
    handover = HANDOVER.get()       # toolkit.api.build: this model may go to the caller
    if handover is not None and (res := handover(model, start)) is not None:
        return res
    params = dict(params or {})
    if time_limit is not None:
        params["TimeLimit"] = time_limit
    limit = time_left(params, None)
    if limit is not None and limit <= 0:
        return _not_solved(model, backend)
    model_files.write(model)        # --write-model: each model as it is handed over
    if mip_gap is not None:
        params["MIPGap"] = mip_gap
    if threads is None and not any(k.lower() == "threads" for k in params):
        # in a worker process: its share of the cores (toolkit.threads)
        from toolkit.threads import solver_threads

        threads = solver_threads()
    if threads is not None:
        params["Threads"] = threads
    start_items = list(start.items() if isinstance(start, Mapping) else (start or []))
    chosen, reason = _choose_backend(model, backend)
    if chosen == "gurobi":
        res = _solve_gurobi(model, params, start_items, log, iis_path, since)
        if res.status == "error" and res.message.startswith("size-limit") and backend == "auto":
            n, _, m = model_size(model)
            reason = (f"Gurobi licence is size-limited ({SIZE_LIMIT} vars/constrs) and the model "
                      f"has {n} vars, {m} constrs; using HiGHS")
            res = solve_highs(model, params, start_items, log, since)
            chosen = "highs"
    else:
        res = solve_highs(model, params, start_items, log, since)
    res.backend, res.backend_reason = chosen, reason
    res.n_vars, res.n_int_vars, res.n_constrs = model_size(model)
    _fill_gap(res)
    return res


def caller_result(model: gp.Model) -> Result:
    """The Result of a model its caller optimized with Gurobi (``toolkit.api.build``),
    reported as :func:`solve` reports one."""
    res = gurobi_result(model, model.Runtime)
    res.backend, res.backend_reason = "gurobi", "solved by the caller (toolkit.api.build)"
    res.n_vars, res.n_int_vars, res.n_constrs = model_size(model)
    _fill_gap(res)
    return res


def _not_solved(model: gp.Model, backend: str) -> Result:
    """The Result of a solve skipped because no time was left."""
    res = Result("time_limit_no_solution", backend="none", message=NOT_SOLVED,
                 backend_reason=f"no solver ran (--backend {backend})")
    res.n_vars, res.n_int_vars, res.n_constrs = model_size(model)
    return res


def _fill_gap(res: Result) -> None:
    if res.status == "optimal" and res.bound is None and res.objective is not None:
        res.gap = 0.0
    else:
        res.gap = relative_gap(res.objective, res.bound)


# --------------------------------------------------------------------------------------
# Gurobi
# --------------------------------------------------------------------------------------
def _solve_gurobi(model, params, start_items, log, iis_path, since=None) -> Result:
    global _LICENCE_SIZE_LIMITED
    model.update()
    model.resetParams()  # parameters and starts from an earlier solve must not leak into this one
    model.setParam("OutputFlag", 0)
    if model.NumVars:
        model.setAttr("Start", model.getVars(), [GRB.UNDEFINED] * model.NumVars)
    console = solver_output()     # -v: the log's lines to stderr through the callback
    if log or console:
        model.setParam("LogToConsole", 0)
        if log:
            model.setParam("LogFile", log)
        model.setParam("OutputFlag", 1)
    for name, val in params.items():
        try:
            model.setParam(name, val)
        except gp.GurobiError as exc:
            return Result("error", message=f"Gurobi parameter {name}={val!r}: {exc}")
    if start_items:
        for v, val in start_items:
            v.Start = val
    left = time_left(params, since)         # what is left after the set-up above
    if left is not None:
        model.setParam("TimeLimit", left)
    incumbents: list[tuple[float, float]] = []
    armed = []

    def on_solution(m, where):
        if not armed:               # Gurobi has put its own SIGINT handler in place
            interrupt.rearm()
            armed.append(True)
        if interrupt.requested():
            m.terminate()
        if where == GRB.Callback.MESSAGE and console:
            echo(m.cbGet(GRB.Callback.MSG_STRING))
        elif where == GRB.Callback.MIPSOL:
            incumbents.append((m.cbGet(GRB.Callback.RUNTIME), m.cbGet(GRB.Callback.MIPSOL_OBJ)))

    t0 = time.perf_counter()
    try:
        with interrupt.catch_sigint(), interrupt.solver_running():
            model.optimize(on_solution)
    except gp.GurobiError as exc:
        if exc.errno == _ERR_SIZE_LIMIT:
            _LICENCE_SIZE_LIMITED = True
            return Result("error", message=f"size-limit: {exc}")
        return Result("error", message=f"Gurobi error {exc.errno}: {exc}",
                      runtime_s=time.perf_counter() - t0)
    runtime = time.perf_counter() - t0
    if model.Status == GRB.INF_OR_UNBD:  # disambiguate
        model.setParam("DualReductions", 0)
        armed.clear()
        with interrupt.catch_sigint(), interrupt.solver_running():
            model.optimize(on_solution)
        model.setParam("DualReductions", 1)
    if model.Status == GRB.INTERRUPTED:   # Ctrl-C, caught by us or (before the first
        interrupt.request()               # callback) by Gurobi
    res = gurobi_result(model, runtime, incumbents, left)
    if res.status == "infeasible":
        if iis_path:
            try:
                model.computeIIS()
                Path(iis_path).parent.mkdir(parents=True, exist_ok=True)   # first use
                model.write(iis_path)
                res.iis_file = iis_path
                res.message += f"; IIS written to {iis_path}"
            except (gp.GurobiError, OSError) as exc:
                res.message += f"; IIS failed: {exc}"
    return res


def gurobi_result(model: gp.Model, runtime: float, incumbents: list | None = None,
                  time_limit: float | None = None) -> Result:
    """The :class:`Result` of a model Gurobi has optimized, read from its attributes (also
    for a model its caller optimized: ``toolkit.api.build``)."""
    st, has_sol = model.Status, model.SolCount > 0
    res = Result(_gurobi_status(st, has_sol), runtime_s=runtime, incumbents=incumbents or [],
                 time_limit=time_limit)
    if has_sol and res.status in ("optimal", "feasible", "interrupted"):
        res.x = np.array(model.getAttr("X", model.getVars()), dtype=float)
        res.objective = float(model.ObjVal)
        res.bound = (float(model.ObjBound) if model.IsMIP else
                     None if res.status == "interrupted" else float(model.ObjVal))
        if model.IsMIP:
            res.gap = float(model.MIPGap)
    if res.status == "infeasible":
        res.message = "model is infeasible"
    elif res.status == "error":
        res.message = f"Gurobi status {st}"
    elif res.status == "interrupted":
        res.message = interrupted_message(runtime, has_sol)
    return res


def _gurobi_status(st: int, has_sol: bool) -> str:
    if st == GRB.OPTIMAL:
        return "optimal"
    if st == GRB.INFEASIBLE:
        return "infeasible"
    if st == GRB.UNBOUNDED:
        return "unbounded"
    if st == GRB.INTERRUPTED:
        return "interrupted"
    if st in (GRB.TIME_LIMIT, GRB.NODE_LIMIT, GRB.SOLUTION_LIMIT,
              GRB.ITERATION_LIMIT, GRB.SUBOPTIMAL, GRB.USER_OBJ_LIMIT, GRB.WORK_LIMIT,
              GRB.MEM_LIMIT):
        return "feasible" if has_sol else "time_limit_no_solution"
    return "error"


# --------------------------------------------------------------------------------------
# Lexicographic objectives
# --------------------------------------------------------------------------------------
def solve_lexicographic(model: gp.Model, objectives: Sequence[gp.LinExpr],
                        rel_tol: float = 0.0, abs_tol: float = 1e-6, start=None,
                        first_share: float = 1.0, **solve_kw) -> list[Result]:
    """Minimize ``objectives`` in order, each stage with the earlier optima fixed.

    Stage j+1 adds ``obj_j <= z_j* + max(abs_tol, rel_tol*|z_j*|)`` (constraint
    ``lex_stage<j>``) and starts from stage j's solution. Uses only gurobipy constraints,
    so Gurobi and HiGHS see the identical stage models. Returns one Result per stage
    that ran; it stops at the first stage without a solution. ``start`` is a MIP start for
    stage 1. The added constraints stay in the model (the last stage's model is what the
    final result refers to). ``time_limit`` is for all stages together: stage 1 may take
    ``first_share`` of it, each later stage what is left.
    """
    results: list[Result] = []
    vars_ = None
    limit, t0 = solve_kw.pop("time_limit", None), time.perf_counter()
    for j, expr in enumerate(objectives):
        if limit is not None:
            left = max(0.0, limit - (time.perf_counter() - t0))
            solve_kw["time_limit"] = left * first_share if j == 0 else left
        model.setObjective(expr, GRB.MINIMIZE)
        if results and results[-1].has_solution:
            vars_ = vars_ or model.getVars()
            start = list(zip(vars_, results[-1].x))
        res = solve(model, start=start, **solve_kw)
        results.append(res)
        if not res.has_solution or j == len(objectives) - 1:
            break
        z = res.objective
        model.addConstr(expr <= z + max(abs_tol, rel_tol * abs(z)), name=f"lex_stage{j + 1}")
    return results
