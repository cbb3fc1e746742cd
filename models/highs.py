"""HiGHS backend: a gurobipy model exported as matrices and solved by the embedded HiGHS.

The solution comes back as a vector indexed like ``model.getVars()`` (``Result.x``), so
extraction code reads it through ``Result.value`` whatever solved the model.
"""
from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
import scipy.sparse as sp

import gurobipy as gp

from models import interrupt
from models.result import NOT_SOLVED, BackendError, Result, interrupted_message, time_left
from models.solver_log import echo, solver_output

_INF = 1e30  # |bound| >= this is infinite for HiGHS

# Gurobi parameter -> HiGHS option (with a value converter) where one exists.
HIGHS_PARAM_MAP: dict[str, tuple[str, Any]] = {
    "TimeLimit": ("time_limit", float),
    "MIPGap": ("mip_rel_gap", float),
    "MIPGapAbs": ("mip_abs_gap", float),
    "Threads": ("threads", int),
    "Seed": ("random_seed", int),
    "NodeLimit": ("mip_max_nodes", lambda v: int(float(v))),
    "SolutionLimit": ("mip_max_improving_sols", int),
    "FeasibilityTol": ("primal_feasibility_tolerance", float),
    "OptimalityTol": ("dual_feasibility_tolerance", float),
    "IntFeasTol": ("mip_feasibility_tolerance", float),
    "Presolve": ("presolve", lambda v: "off" if int(v) == 0 else "on"),
    "OutputFlag": ("output_flag", lambda v: bool(int(v))),
}

# [DECISION] HiGHS reads its clock only between some phases: after presolve, its MIP set-up
# runs to the first LP without a check or an interrupt callback (measured: 4.5x the matrix
# export's and passModel's time on the n = 100 spectra MILP, 680k nonzeros, and 7.9x on
# the deepseek-671b DELTA-Joint MILP, 475k, at load 9 on 2 cores), so it may overrun its
# time limit by that much. It gets the limit less RESERVE times what its export and
# passModel took (which grow with the model and the machine's load alike); its interrupt
# callbacks stop it at the deadline too.
RESERVE = 10.0


def export_matrix(model: gp.Model) -> dict:
    """The model as arrays: c, offset, sense, A (CSR), row bounds, column bounds, integrality."""
    model.update()
    if model.NumQConstrs or model.NumSOS or model.NumGenConstrs or model.NumQNZs:
        raise BackendError("HiGHS export supports linear (MI)LPs only: the model has quadratic, "
                           "SOS or general constraints")
    if model.NumObj > 1:
        raise BackendError("HiGHS export: use solve_lexicographic for multiple objectives")
    vars_ = model.getVars()
    constrs = model.getConstrs()
    A = model.getA().tocsr() if constrs else sp.csr_matrix((0, len(vars_)))
    lb = np.array(model.getAttr("LB", vars_), dtype=float)
    ub = np.array(model.getAttr("UB", vars_), dtype=float)
    vtype = np.array(model.getAttr("VType", vars_)) if vars_ else np.array([], dtype=str)
    c = np.array(model.getAttr("Obj", vars_), dtype=float)
    rhs = np.array(model.getAttr("RHS", constrs), dtype=float)
    sense = np.array(model.getAttr("Sense", constrs)) if constrs else np.array([], dtype=str)
    rlo = np.where(sense == "<", -np.inf, rhs)
    rup = np.where(sense == ">", np.inf, rhs)
    integ = np.zeros(len(vars_), dtype=np.int32)
    integ[(vtype == "B") | (vtype == "I")] = 1
    integ[vtype == "S"] = 2
    integ[vtype == "N"] = 3
    isb = vtype == "B"
    lb[isb] = np.maximum(lb[isb], 0.0)
    ub[isb] = np.minimum(ub[isb], 1.0)
    lb[lb <= -_INF] = -np.inf
    ub[ub >= _INF] = np.inf
    return dict(c=c, offset=float(model.ObjCon), sense=int(model.ModelSense), A=A, rlo=rlo,
                rup=rup, lb=lb, ub=ub, integrality=integ)


def solve_highs(model, params, start_items, log, since: float | None = None) -> Result:
    """Solve ``model`` with HiGHS. Its time limit is what is left of ``params``' TimeLimit
    (counted from ``since``, when ``models.backend.solve`` was called) once the matrix is
    exported and passed, less :data:`RESERVE` times that export; the interrupt callbacks
    also stop it at that deadline."""
    import highspy

    t_export = time.perf_counter()
    try:
        mx = export_matrix(model)
    except BackendError as exc:
        return Result("error", message=str(exc))
    n = len(mx["c"])
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    ignored = []
    lower = {k.lower(): v for k, v in HIGHS_PARAM_MAP.items()}   # Gurobi names ignore case
    for name, val in params.items():
        if name.lower() not in lower:
            ignored.append(name)
            continue
        opt, conv = lower[name.lower()]
        h.setOptionValue(opt, conv(val))
    log_fh = None
    if solver_output():     # -v: HiGHS passes its log to a subscribed callback instead of
        # the console and the log file, so the callback writes both (stderr, not fd 1)
        log_fh = open(log, "w", encoding="utf-8") if log else None
        h.setOptionValue("output_flag", True)
        h.setOptionValue("log_to_console", True)
        h.cbLogging.subscribe(lambda e: _relay(e.message, log_fh))
    elif log:
        h.setOptionValue("log_file", log)
        h.setOptionValue("output_flag", True)
        h.setOptionValue("log_to_console", False)
    _highs_thread_pool(next((v for k, v in params.items() if k.lower() == "threads"), None))
    A = mx["A"]
    m = A.shape[0]
    is_mip = bool(np.any(mx["integrality"]))
    h.passModel(n, m, A.nnz, 2, mx["sense"], mx["offset"], mx["c"], mx["lb"], mx["ub"],
                mx["rlo"], mx["rup"], A.indptr.astype(np.int32), A.indices.astype(np.int32),
                A.data.astype(float), mx["integrality"])
    if start_items and is_mip:
        idx = np.array([v.index for v, _ in start_items], dtype=np.int32)
        val = np.array([float(x) for _, x in start_items], dtype=float)
        h.setSolution(len(idx), idx, val)
    incumbents: list[tuple[float, float]] = []
    if is_mip:                  # the incumbent trajectory (the MIP start counts if accepted)
        h.cbMipImprovingSolution.subscribe(lambda e: incumbents.append(
            (time.perf_counter() - t0, float(e.data_out.objective_function_value))))
    left = time_left(params, since)     # the time limit less the export and passModel,
    if left is not None:                # and less a reserve for HiGHS' unchecked phases
        left = max(0.0, left - RESERVE * (time.perf_counter() - t_export))
    if left is not None and left <= 0:
        if log_fh is not None:
            log_fh.close()
        return Result("time_limit_no_solution", message=NOT_SOLVED)
    deadline = None if left is None else time.perf_counter() + left
    if left is not None:
        h.setOptionValue("time_limit", left)

    def stop(e):                # Ctrl-C (models.interrupt) or past the deadline
        if interrupt.requested() or (deadline is not None and time.perf_counter() > deadline):
            e.interrupt()

    for cb in (h.cbSimplexInterrupt, h.cbIpmInterrupt, h.cbMipInterrupt):
        cb.subscribe(stop)
    t0 = time.perf_counter()
    try:
        with interrupt.catch_sigint(), interrupt.solver_running():
            h.run()
    finally:
        if log_fh is not None:
            log_fh.close()
    runtime = time.perf_counter() - t0
    ms = h.getModelStatus()
    info = h.getInfo()
    has_sol = info.primal_solution_status == highspy.SolutionStatus.kSolutionStatusFeasible
    S = highspy.HighsModelStatus
    if ms in (S.kInterrupt, S.kHighsInterrupt) and interrupt.requested():
        status = "interrupted"
    elif ms == S.kOptimal:
        status = "optimal"
    elif ms == S.kInfeasible:
        status = "infeasible"
    elif ms == S.kUnbounded:
        status = "unbounded"
    elif ms == S.kUnboundedOrInfeasible:
        status = _highs_disambiguate(mx)
    elif ms in (S.kTimeLimit, S.kIterationLimit, S.kSolutionLimit, S.kInterrupt,
                S.kObjectiveBound, S.kObjectiveTarget, S.kMemoryLimit, S.kHighsInterrupt):
        status = "feasible" if has_sol else "time_limit_no_solution"
    elif ms == S.kModelEmpty:
        status, has_sol = "optimal", True
    else:
        status = "error"
    res = Result(status, runtime_s=runtime, incumbents=incumbents, time_limit=left)
    if has_sol and status in ("optimal", "feasible", "interrupted"):
        res.x = np.array(h.getSolution().col_value, dtype=float) if n else np.zeros(0)
        res.objective = float(info.objective_function_value) if n else mx["offset"]
        if is_mip:
            res.bound = float(info.mip_dual_bound)
            if status == "optimal" and not math.isfinite(res.bound):
                res.bound = res.objective
            res.gap = float(info.mip_gap) if math.isfinite(info.mip_gap) else None
        elif status != "interrupted":
            res.bound = res.objective
    if status == "infeasible":
        res.message = "model is infeasible (HiGHS; no IIS file: use --backend gurobi on a small model)"
    elif status == "error":
        res.message = f"HiGHS model status {h.modelStatusToString(ms)}"
    elif status == "interrupted":
        res.message = interrupted_message(runtime, has_sol)
    if ignored:
        res.message = (res.message + "; " if res.message else "") + \
            "no HiGHS equivalent, ignored: " + ", ".join(ignored)
    return res


def _relay(text: str, log_fh) -> None:
    echo(text)
    if log_fh is not None:
        log_fh.write(text)


_HIGHS_POOL = "unset"   # thread count HiGHS' process-global scheduler was last sized for


def _highs_thread_pool(threads) -> None:
    """HiGHS keeps one global thread pool per process; a solve asking for another size
    fails unless the pool is reset first (long-lived Dask workers hit this)."""
    global _HIGHS_POOL
    import highspy

    want = None if threads is None else int(threads)
    if _HIGHS_POOL != "unset" and want != _HIGHS_POOL:
        highspy.Highs.resetGlobalScheduler(True)
    _HIGHS_POOL = want


def _highs_disambiguate(mx) -> str:
    """Infeasible or unbounded? Resolve with a zero objective (feasibility only)."""
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    A = mx["A"]
    n = len(mx["c"])
    h.passModel(n, A.shape[0], A.nnz, 2, 1, 0.0, np.zeros(n), mx["lb"], mx["ub"], mx["rlo"],
                mx["rup"], A.indptr.astype(np.int32), A.indices.astype(np.int32),
                A.data.astype(float), mx["integrality"])
    h.run()
    return "infeasible" if h.getModelStatus() == highspy.HighsModelStatus.kInfeasible else "unbounded"


