"""Run one method on one instance and return a verified result record.

Every solution is passed to the problem's independent checker before it is reported;
the objective in the record is the checker's recomputation, not the method's claim.
"""
from __future__ import annotations

import time
import traceback
from dataclasses import replace

import instances
from instances.errors import InstanceError
from models import interrupt
from models.gap import relative_gap
from toolkit.kernels import compile_clock
from toolkit.rank import scope
from toolkit.registry import OptionError, RunConfig, preload, problem, settle, time_limited
from toolkit.versions import versions_text

CORE_FIELDS = ("instance", "name", "problem", "method", "backend", "status", "objective", "bound",
               "gap", "runtime_s", "n_vars", "n_int_vars", "n_constrs", "verified",
               "backend_reason", "message", "problem_bound", "versions")


class NotApplicable(ValueError):
    """The method declines this instance (e.g. an exact model far too large)."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped a run; ``record`` is its record, status ``interrupted`` (with the
    solver's incumbent, verified, when it had one)."""

    def __init__(self, record: dict):
        super().__init__(record)
        self.record = record

    def __str__(self):
        return f"{self.record.get('instance')} [{self.record.get('method')}]: " \
               f"{self.record.get('message')}"


def resolve_method(prob, name: str | None):
    """The method ``name`` of ``prob`` (None: its default); InstanceError for anything else,
    "" included (it used to run the default)."""
    name = prob.default_method if name is None else name
    if not isinstance(name, str) or name not in prob.methods:
        raise InstanceError("method", f"unknown method {name!r} for problem {prob.name} "
                            f"(known: {', '.join(prob.methods)})")
    return prob.methods[name]


def check_applicable(inst, method, cfg: RunConfig, source: str | None = None) -> None:
    """Raise NotApplicable (one line naming the file) when the method declines ``inst``."""
    reason = method.applicable(inst, method.configure(cfg)) if method.applicable else None
    if reason:
        where = f"{source}: " if source else ""
        raise NotApplicable(f"{where}method {method.name} declines instance {inst.name!r}: {reason}")


def _takes(method, inst, cfg: RunConfig) -> bool:
    """Whether ``method`` with its default options takes ``inst`` (for a decline's hint)."""
    if not method.applicable:
        return True
    try:
        return not method.applicable(inst, method.configure(replace(cfg, options={})))
    except Exception:                   # noqa: BLE001 - a hint only: not a taker
        return False


def run_task(data: dict, source: str, method_name: str | None, cfg: RunConfig,
             want_solution: bool = False) -> dict:
    """Solve the instance ``data`` (a parsed file, or the instance object built from one,
    as a batch passes it) with one method; return the record.

    Raises InstanceError for bad input and NotApplicable when the method declines, and
    Interrupted (a KeyboardInterrupt carrying the record) after a Ctrl-C. With
    ``want_solution`` the record carries the checked solution as ``record["solution"]``: a
    dict (``True``), the dict its solution file is written from (``"file"``:
    ``Problem.solution_to_file``, arrays where ``True`` has lists) or the solution object
    itself (``"object"``). With ``cfg.write_model``
    the record lists the model files written as ``model_files`` (models.model_files).
    """
    t_begin = time.perf_counter()       # the --time-limit budget counts from here
    inst = instances.from_dict(data, source) if isinstance(data, dict) else data
    prob = problem(inst.problem)
    try:
        method = resolve_method(prob, method_name)
    except InstanceError as exc:
        raise exc.with_source(source) from None
    if cfg.write_model and method.kind != "model":
        models_ = ", ".join(m.name for m in prob.methods.values() if m.kind == "model")
        raise InstanceError("write_model", f"--write-model needs a model method; {method.name} "
                            f"is a {method.kind}, not a model method (model methods of "
                            f"{prob.name}: {models_ or 'none'})", source)
    try:
        base, cfg = cfg, method.configure(cfg, prob.methods.values())   # --option names, values
    except OptionError as exc:
        raise InstanceError("option", str(exc), source) from None
    if cfg.log_dir:
        from pathlib import Path

        Path(cfg.log_dir).mkdir(parents=True, exist_ok=True)
        cfg = replace(cfg, log=str(Path(cfg.log_dir) / f"{Path(source).stem}.{method.name}.log"))
    rec = {k: None for k in CORE_FIELDS}
    rec.update(instance=source, name=inst.name, problem=prob.name, method=method.name,
               verified=False, message="", versions=versions_text())
    # --time-limit: the whole run's budget, all stages, loading and compiling included
    budget = method.new_budget(cfg, t0=t_begin)
    cfg = replace(cfg, budget=budget)
    rec["time_limit_s"] = budget.limit
    if cfg.write_model:
        from models import model_files

        model_files.begin(cfg.write_model)
    out, t0, comp = None, None, None

    def runtime() -> float:             # the method's time: no warm-up, no compilation
        if t0 is None:
            return 0.0
        return time.perf_counter() - t0 - (comp.seconds if comp is not None else 0.0)
    try:
        with budget.watchdog():         # stops code that never checks the budget
            budget.current = "loading and compiling the method's code"
            warmup = preload(method, inst, cfg)     # modules and kernels: before the clock
            budget.current = "the applicability check"
            check_applicable(inst, method, cfg, source)     # may run a heuristic (milp)
            budget.current = None
            if warmup:
                rec["warmup_s"] = warmup
            interrupt.clear()
            with compile_clock() as comp:   # a kernel the warm-up missed: not the algorithm's
                t0 = time.perf_counter()
                out = settle(method.fn(inst, cfg), budget)
    except TimeoutError as exc:     # a budget check, the watchdog or a compiled kernel's
        if not budget.spent():      # deadline: the best kept, or none; else another timeout
            return _failed(rec, exc, runtime(), budget)
        if out is None:
            out = time_limited(budget, exc)
    except OptionError as exc:          # bad --option values and combinations
        raise InstanceError("option", str(exc), source) from None
    except NotApplicable as exc:        # bad input: the method declines the instance
        takers = [m.name for m in prob.methods.values()
                  if m is not method and _takes(m, inst, base)]
        raise NotApplicable(f"{exc}; methods that take it: {', '.join(takers)}" if takers
                            else str(exc)) from None
    except KeyboardInterrupt:           # Ctrl-C in Python code (a cold compilation too), or a
        rec["runtime_s"] = runtime()    # solve after one
        _interrupted(rec)
    except Exception as exc:  # noqa: BLE001 - a failing method must not kill a batch
        return _failed(rec, exc, runtime(), budget)
    finally:
        if comp is not None and comp.seconds:
            rec["compile_s"] = comp.seconds
        if cfg.write_model:         # the files written, also after a failure or Ctrl-C
            rec["model_files"] = model_files.finish()
    rec["runtime_s"] = runtime()
    if budget.split():
        rec["time_split"] = budget.split()
    res = out.solver
    if res is not None:
        rec.update(backend=res.backend, backend_reason=res.backend_reason, n_vars=res.n_vars,
                   n_int_vars=res.n_int_vars, n_constrs=res.n_constrs, status=res.status,
                   bound=res.bound, message=res.message, solver_runtime_s=res.runtime_s)
        if res.iis_file:
            rec["iis_file"] = res.iis_file
    else:
        rec.update(status="feasible")
    rec.update(out.metrics)
    if out.solution is not None:
        violations, metrics = prob.check(inst, out.solution)
        rec.update(metrics)
        rec["verified"] = not violations
        rec["objective"] = metrics.get(prob.objective)
        if violations:
            rec["message"] = "checker: " + "; ".join(violations[:3])
            if res is None:
                rec["status"] = "error"
        if want_solution == "object":
            rec["solution"] = out.solution
        elif want_solution:
            to_dict = (want_solution == "file" and prob.solution_to_file) or prob.solution_to_dict
            rec["solution"] = to_dict(out.solution)
    # objective, bound, problem_bound are in the units of prob.objective (the problem's one
    # ranking metric); a method's solver bound must be too (e.g. lumos-reconfig's encoding)
    analytic = prob.bound(inst) if prob.bound else None
    better = max if prob.sense == "min" else min      # the tighter of two valid bounds
    rec["problem_bound"] = analytic           # valid for the instance, whatever the method
    if method.exact and res is not None and res.bound is not None:
        rec["problem_bound"] = res.bound if analytic is None else better(analytic, res.bound)
    if analytic is not None and not method.relaxation:
        rec["bound"] = analytic if rec["bound"] is None else better(rec["bound"], analytic)
    # "instance": ``bound`` bounds the instance's optimum; "model": only the method's model
    rec["bound_scope"] = scope(rec["bound"], rec["problem_bound"])
    rec["gap"] = relative_gap(rec["objective"], rec["bound"])
    # the whole run on the --time-limit clock: loading, compiling, the method and the check
    rec["elapsed_s"] = budget.elapsed()
    if interrupt.requested() or rec["status"] == "interrupted":
        _interrupted(rec)
    return rec


def _failed(rec: dict, exc: Exception, runtime: float, budget) -> dict:
    """The record of a method that raised ``exc`` (status error, with a short traceback)."""
    rec.update(status="error", runtime_s=runtime, message=f"{type(exc).__name__}: {exc}",
               elapsed_s=budget.elapsed())
    if interrupt.requested():       # it failed on an interrupted solve's result
        _interrupted(rec)
    rec["traceback"] = traceback.format_exc(limit=4)
    return rec


def _interrupted(rec: dict):
    """Stop on a Ctrl-C: the record (the user asked for it) says so and rides on Interrupted."""
    interrupt.clear()
    if rec["objective"] is None:
        what = "no solution"
    else:
        what = "the solution is the best the method had then" + (
            " (verified)" if rec["verified"] else "")
    checker = rec["message"] if (rec["message"] or "").startswith("checker:") else ""
    rec.update(status="interrupted", verified=bool(rec["verified"]), message="; ".join(filter(
        None, [f"interrupted by the user (Ctrl-C) after {rec['runtime_s']:.3g} s: {what}",
               checker])))
    raise Interrupted(rec) from None


def failed(rec: dict) -> bool:
    """A record counts as a failure (exit 1) when it has no verified solution, or was
    interrupted."""
    return not rec.get("verified") or rec.get("status") not in ("optimal", "feasible")
