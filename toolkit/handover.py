"""The model in the caller's hands (issue 30 item 4): the machinery of ``toolkit.api.build``.

There is no table of builders, extractors and checkers: :func:`build` runs the method
itself, as ``toolkit.api.solve`` does (the same function, options and applicability check),
in a thread of its own, up to the moment the method hands its model to
``models.backend.solve``. There the run pauses (``models.backend.HANDOVER``) and the model
goes to the caller, a normal ``gurobipy.Model`` carrying the method's MIP start as its
``Start`` values. :meth:`Built.extract` resumes the run: that solve returns the model's
solution as the caller left it, and the method goes on as in any run (its extraction and
post-processing, e.g. spectra-lp's schedule from the LP's durations, later models), then
returns its solution; :meth:`Built.check` is the problem's independent checker.
[DECISION] A paused run rather than a build function per method: a method's code is the one
place where its builder, MIP start, extraction and post-processing meet (seeds, several
models, schedules made from a model's values), so it stays the one source of truth.

[DECISION] A method that solves several models (a2a: one per d; lexicographic stages;
lumos-placement: the Pod level, then the leaf level; the simulations: every
reconfiguration) hands over the ``nth`` it solves (default the first; numbered as
``--write-model`` numbers its files); the others are solved by the backend as in a run.
A later lexicographic stage is the same model object, so it keeps the caller's changes.

[DECISION] The run has no time limit: its clock would count the time the model spends in
the caller's hands (for the same reason, give the simulations ``alg_time="none"``: their
measured algorithm time would count it too).
"""
from __future__ import annotations

import queue
import threading
import weakref
from dataclasses import dataclass, field, replace
from typing import Any, Mapping


class _Abandoned(BaseException):
    """Ends a paused run whose model the caller dropped (no method catches it)."""


@dataclass(frozen=True)
class Check:
    """The problem's checker on a solution: ``violations`` (empty: the solution is
    feasible), its ``metrics`` and the ``objective`` among them."""

    violations: list
    metrics: dict
    objective: float | None

    @property
    def ok(self) -> bool:
        return not self.violations


class _Channel:
    """Between the caller and the method's thread: ``up`` carries ("model", model, start),
    ("done", MethodOutput) or ("error", exception) to the caller; ``down`` a Result (or
    None: abandon) to the paused method."""

    def __init__(self, nth: int):
        self.nth, self.calls, self.paused = nth, 0, False
        self.up: queue.SimpleQueue = queue.SimpleQueue()
        self.down: queue.SimpleQueue = queue.SimpleQueue()

    def handover(self, model, start):
        """``models.backend.solve``'s first step in the method's thread: the nth model
        goes to the caller, and the Result the caller sends back is this solve's."""
        self.calls += 1
        if self.calls != self.nth:
            return None
        items = list(start.items() if isinstance(start, Mapping) else (start or []))
        model.update()
        for v, val in items:
            v.Start = val
        model.update()                  # the starts readable as Var.Start
        self.up.put(("model", model, items))
        res = self.down.get()
        if res is None:
            raise _Abandoned
        return res

    def resume(self, result) -> tuple:
        """Send ``result`` to the paused method (None: abandon it); its next message."""
        self.paused = False
        self.down.put(result)
        return self.up.get() if result is not None else ("abandoned",)

    def abandon(self) -> None:
        if self.paused:
            self.resume(None)


def _run(ch: _Channel, method, inst, cfg) -> None:
    """The method's thread: the run, with the hand-over in place."""
    from models.backend import HANDOVER

    HANDOVER.set(ch.handover)
    try:
        ch.up.put(("done", method.fn(inst, cfg)))
    except _Abandoned:
        pass
    except BaseException as exc:        # noqa: BLE001 - raised again in the caller's thread
        ch.up.put(("error", exc))


@dataclass(eq=False)
class Built:
    """A model method's model in the caller's hands (``toolkit.api.build``).

    ``model`` is the gurobipy model the method solves (its ``nth``), with the method's MIP
    start (``start``, (Var, value) pairs) set as ``Start``; ``extract()`` finishes the run
    from its solution and returns the method's solution (kept as ``solution``; the run's
    ``MethodOutput`` as ``output``); ``check(solution)`` runs the problem's checker."""

    model: Any
    start: list = field(repr=False)
    instance: Any = field(repr=False)
    problem: str
    method: str
    nth: int = 1
    solution: Any = None
    output: Any = field(default=None, repr=False)
    _ch: _Channel = field(default=None, repr=False)
    _prob: Any = field(default=None, repr=False)

    def __post_init__(self):
        self._close = weakref.finalize(self, self._ch.abandon)   # a dropped Built ends its run

    def solve(self, **kw):
        """``model`` solved by the toolkit's backends from the method's MIP start:
        ``models.backend.solve(model, backend="auto"|"gurobi"|"highs", time_limit=,
        mip_gap=, threads=, params=, log=)``; "auto" runs HiGHS where the Gurobi licence
        refuses the model. Gurobi parameters go in ``params``: the model's own are reset,
        as in every backend solve. Returns the Result for :meth:`extract`."""
        from models.backend import solve

        return solve(self.model, start=self.start or None, **kw)

    def extract(self, result=None):
        """The method's solution from ``result`` (a :meth:`solve` Result), else from
        ``model`` as Gurobi solved it (``model.optimize()``): the run goes on from there,
        once. Later models are solved by the backend, and a method may free its model
        after reading it. A model without a solution goes to the method too (staging-ilp's
        loop moves on to the next theta); a run that ends without a solution is a
        ValueError saying why."""
        if self.output is not None:
            raise ValueError(f"{self.method}: extract() has finished this run (its solution "
                             f"is .solution); build() again for another")
        kind, out = self._ch.resume(self._caller_result() if result is None else result)
        if kind == "error":
            raise out
        self.output = out
        if out.solution is None:
            why = out.solver.message if out.solver is not None else ""
            raise ValueError(f"{self.method}: the run ended without a solution"
                             f"{': ' + why if why else ''}")
        self.solution = out.solution
        return out.solution

    def _caller_result(self):
        from gurobipy import GRB

        from models.backend import caller_result

        if self.model.Status == GRB.LOADED:
            raise ValueError(f"{self.method}: the model is not solved yet: call "
                             f".model.optimize() (or .solve()) first")
        return caller_result(self.model)

    def check(self, solution=None) -> Check:
        """The problem's independent checker on ``solution`` (default: the extracted one)."""
        sol = self.solution if solution is None else solution
        if sol is None:
            raise ValueError(f"{self.method}: no solution to check: extract() one first")
        violations, metrics = self._prob.check(self.instance, sol)
        return Check(list(violations), metrics, metrics.get(self._prob.objective))

    def close(self) -> None:
        """Abandon the paused run (the model stays usable); also on garbage collection."""
        self._close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def build(data, source: str, method: str | None, nth: int = 1, backend: str = "auto",
          options: dict | None = None) -> Built:
    """The ``nth`` model that ``method`` solves on the instance ``data`` (a parsed file or
    an instance object), handed over (see the module doc and ``toolkit.api.build``)."""
    import instances
    from toolkit.budget import Budget
    from toolkit.config import ConfigError, make_config
    from toolkit.options import OptionError
    from toolkit.registry import preload, problem
    from toolkit.run import check_applicable, resolve_method

    inst = instances.from_dict(data, source) if isinstance(data, dict) else data
    prob = problem(inst.problem)
    m = resolve_method(prob, method)
    if m.kind != "model":
        names = ", ".join(k.name for k in prob.methods.values() if k.kind == "model")
        raise ValueError(f"method {m.name} is a {m.kind}: it builds no model to hand over "
                         f"(model methods of {prob.name}: {names or 'none'})")
    if isinstance(nth, bool) or not isinstance(nth, int) or nth < 1:
        raise ConfigError("nth", f"must be a positive integer (the nth model the method "
                          f"solves), got {nth!r}")
    cfg = make_config(backend=backend, options=dict(options or {}))
    try:
        cfg = m.configure(cfg, prob.methods.values())
    except OptionError as exc:
        raise ConfigError("options", str(exc)) from None
    check_applicable(inst, m, cfg, source)
    preload(m, inst, cfg)
    cfg = replace(cfg, budget=Budget(None))
    ch = _Channel(nth)
    threading.Thread(target=_run, args=(ch, m, inst, cfg), name=f"build {m.name}",
                     daemon=True).start()
    kind, *got = ch.up.get()
    if kind == "error":
        raise got[0]
    if kind == "done":
        raise ValueError(f"{source}: method {m.name} solved {ch.calls} model(s) on instance "
                         f"{inst.name!r}: none is model {nth}")
    ch.paused = True
    model, start = got
    return Built(model, start, inst, prob.name, m.name, nth, _ch=ch, _prob=prob)
