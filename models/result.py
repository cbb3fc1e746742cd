"""The record of one solve, whatever backend ran it (:class:`Result`), and what both
backends (``models.backend`` for Gurobi, ``models.highs`` for HiGHS) say the same way:
the statuses, the errors, the time left of a run's limit, the Ctrl-C message.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, asdict
from typing import Mapping, Sequence

import numpy as np

import gurobipy as gp

STATUSES = ("optimal", "feasible", "infeasible", "unbounded", "time_limit_no_solution", "error",
            "interrupted")


class BackendError(RuntimeError):
    """A backend could not be used (unknown name, missing licence, unsupported model)."""


@dataclass
class Result:
    """One solve, whatever backend ran it (compare ``scipy.optimize.OptimizeResult``)."""

    status: str
    objective: float | None = None
    bound: float | None = None
    gap: float | None = None
    runtime_s: float = 0.0
    backend: str = ""
    backend_reason: str = ""
    n_vars: int = 0
    n_int_vars: int = 0
    n_constrs: int = 0
    message: str = ""
    iis_file: str | None = None
    time_limit: float | None = None     # seconds the solver was given (None: no limit)
    x: np.ndarray | None = field(default=None, repr=False)  # indexed by Var.index
    # (seconds since the solve started, objective) of every improving MIP solution
    incumbents: list[tuple[float, float]] = field(default_factory=list, repr=False)

    def converged_s(self, rel: float = 1e-4) -> float | None:
        """Time of the last incumbent that improved on the previous one by >= ``rel``
        (relative): the "objective gap between consecutive feasible solutions remains
        below 0.01%" convergence rule of DELTA Fig. 11 (spec delta 3.7). None without
        incumbents."""
        return convergence_time(self.incumbents, rel)

    @property
    def has_solution(self) -> bool:
        return self.x is not None

    def value(self, obj):
        """Value of a Var (float), MVar (ndarray), tupledict/dict (dict), or list (ndarray)."""
        if self.x is None:
            raise BackendError(f"no solution available (status {self.status})")
        if isinstance(obj, gp.Var):
            return float(self.x[obj.index])
        if isinstance(obj, gp.MVar):
            idx = np.array([v.index for v in np.ravel(obj.tolist())], dtype=np.int64)
            return self.x[idx].reshape(obj.shape)
        if isinstance(obj, Mapping):
            return {k: float(self.x[v.index]) for k, v in obj.items()}
        if isinstance(obj, (list, tuple)):
            return np.array([self.x[v.index] for v in obj])
        if isinstance(obj, (gp.LinExpr,)):
            return float(obj.getConstant() + sum(
                obj.getCoeff(i) * self.x[obj.getVar(i).index] for i in range(obj.size())))
        raise TypeError(f"cannot read a value for {type(obj).__name__}")

    def record(self) -> dict:
        """The printable fields (no solution vector)."""
        d = asdict(self)
        d.pop("x")
        d.pop("incumbents")
        return d


def convergence_time(incumbents: Sequence[tuple[float, float]], rel: float = 1e-4) -> float | None:
    """Time of the last incumbent whose relative improvement over the previous incumbent is
    at least ``rel`` (the first incumbent always counts); None for no incumbents."""
    t_conv, prev = None, None
    for t, obj in incumbents:
        if prev is None or abs(prev - obj) >= rel * max(abs(prev), 1e-12):
            t_conv = t
        prev = obj
    return t_conv


def time_left(params: dict, since: float | None) -> float | None:
    """The solver's time limit (``params``' TimeLimit) less the seconds since ``since``
    (when :func:`solve` was called), never below 0; None without a limit."""
    limit = next((float(v) for k, v in params.items() if k.lower() == "timelimit"), None)
    if limit is None or since is None:
        return limit
    return max(0.0, limit - (time.perf_counter() - since))


NOT_SOLVED = "not solved: the run's time limit was reached before this solve"


def interrupted_message(runtime: float, has_sol: bool) -> str:
    return (f"interrupted (Ctrl-C) after {runtime:.3g} s: "
            + ("the solution and bound are the solver's at that point" if has_sol
               else "no solution yet"))
