"""Registry of problem types, their methods (heuristics and model builders) and generators.

A problem module (``toolkit/methods/<problem>.py``) calls :func:`register_problem` once
with a :class:`Problem`. Problem modules are imported lazily by :func:`problems`.
"""
from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable

from toolkit.budget import Budget, TimeLimitReached, method_limit
from toolkit.options import Option, OptionError, parse_options

if TYPE_CHECKING:
    from models.backend import Result

PROBLEM_MODULES = ("toolkit.methods.spectra", "toolkit.methods.delta", "toolkit.methods.a2a",
                   "toolkit.methods.lumos_reconfig", "toolkit.methods.lumos_logical",
                   "toolkit.methods.lumos_staging",
                   "toolkit.methods.lumos_placement", "toolkit.methods.lumos_sim")


@dataclass
class RunConfig:
    """What the command line passes to a method."""

    backend: str = "auto"
    time_limit: float | None = None
    mip_gap: float | None = None
    threads: int | None = None
    params: dict = field(default_factory=dict)    # Gurobi parameters (--param)
    options: dict = field(default_factory=dict)   # method options (--option)
    log: str | None = None          # solver log file (set per task from log_dir)
    log_dir: str | None = None      # --log-dir: one <instance>.<method>.log per task
    iis_path: str | None = None
    write_model: str | None = None  # --write-model FILE.mps|.lp (models.model_files)
    # True when several methods share ``options`` (batch, gap): each takes those it declares
    options_shared: bool = False
    declared: tuple[Option, ...] | None = None   # the running method's (Method.configure)
    budget: Budget | None = None        # the running method's wall-clock budget

    def solve_kw(self) -> dict:
        """Keyword arguments of models.backend.solve; the time limit is what is left of the
        run's budget (so sequential solves never exceed it)."""
        limit = self.budget.remaining() if self.budget is not None else self.time_limit
        return dict(backend=self.backend, time_limit=limit, mip_gap=self.mip_gap,
                    threads=self.threads, params=self.params, log=self.log,
                    iis_path=self.iis_path)

    def option(self, name: str):
        """The running method's option ``name``: the given value, else its declared default."""
        for opt in self.declared or ():
            if opt.name == name:
                return opt.parse(self.options[name]) if name in self.options else opt.default
        raise KeyError(f"option {name!r} is not declared by the running method")


@dataclass
class MethodOutput:
    solution: Any = None            # None when the solver found none
    solver: Result | None = None    # for model builders
    metrics: dict = field(default_factory=dict)


def time_limited(budget: Budget, exc: TimeoutError) -> MethodOutput:
    """The output of a run the time limit stopped: the best result the method kept
    (``Budget.keep``: status feasible), else none (status ``time_limit_no_solution``); the
    solver Result's message says which."""
    from models.backend import Result

    if not isinstance(exc, TimeLimitReached):
        exc = TimeLimitReached(budget.limit, budget.elapsed(), budget.current)
    if budget.kept is None:
        return MethodOutput(None, Result("time_limit_no_solution", backend="none",
                                         message=f"{exc}: no solution"))
    return MethodOutput(budget.kept.solution, Result(
        "feasible", backend="none", message=f"{exc}: the solution is {budget.kept.note}"),
        budget.kept.metrics)


def settle(out: MethodOutput, budget: Budget) -> MethodOutput:
    """``out``, or where its solver ran out of time without a solution, the best result
    the method kept (``Budget.keep``), with status feasible and a message saying so."""
    res, kept = out.solver, budget.kept
    if out.solution is not None or kept is None or \
            (res is not None and res.status != "time_limit_no_solution"):
        return out
    note = f"no solution within the time limit; the solution is {kept.note}"
    if res is None:
        from models.backend import Result

        res = Result("feasible", backend="none", message=note)
    else:
        res = replace(res, status="feasible", message="; ".join(filter(None, [res.message, note])))
    return MethodOutput(kept.solution, res, {**kept.metrics, **out.metrics})


@dataclass(frozen=True)
class Method:
    name: str
    kind: str                                            # "heuristic" | "model"
    fn: Callable[[Any, RunConfig], MethodOutput]
    summary: str
    options: tuple[Option, ...] = ()                     # its --option declarations
    applicable: Callable[[Any, RunConfig], str | None] | None = None  # reason if not
    # True when the model solves the instance's problem without restriction, so its solver
    # bound bounds the instance's optimum (not only this model's, e.g. T slots, K intervals):
    # its record's bound_scope is "instance". An option that restricts such a model (a2a's
    # d, exact-te's rho < n - 1, placement-ilp's pods_first) makes the method report no
    # solver bound for that run (toolkit.rank)
    exact: bool = False
    # True when the method may leave the problem's feasible set in a way the problem allows
    # as a comparison only (e.g. a2a baselines that split flows): the problem's analytic
    # bound does not apply to its objective, so no bound or gap is reported for it
    relaxation: bool = False
    # the compiled kernel sets it runs (toolkit.kernels.KERNELS), warmed by preload before
    # the clock: a tuple, or a function (instance, configured RunConfig) -> tuple that gets
    # (None, None) for "any instance, default options" (e.g. a run inside another method)
    kernels: tuple[str, ...] | Callable[[Any, RunConfig | None], tuple[str, ...]] = ()

    def kernel_sets(self, inst=None, cfg: RunConfig | None = None) -> tuple[str, ...]:
        """The kernel sets a run on ``inst`` with ``cfg`` uses (None: any instance, default
        options)."""
        return tuple(self.kernels(inst, cfg) if callable(self.kernels) else self.kernels)

    def configure(self, cfg: RunConfig, siblings=()) -> RunConfig:
        """``cfg`` for this method: its options checked and converted (OptionError naming a
        bad or undeclared one, and the valid ones) and its declarations attached."""
        if cfg.declared is self.options:
            return cfg
        opts = parse_options(cfg.options, self, siblings, cfg.options_shared)
        return replace(cfg, options=opts, declared=self.options, budget=None)

    def new_budget(self, cfg: RunConfig, t0: float | None = None) -> Budget:
        """The run's budget from ``t0`` (default: now): --time-limit, else the model default
        (none for heuristics)."""
        return Budget(method_limit(self.kind, cfg.time_limit), t0=t0)

    def run(self, inst, cfg: RunConfig) -> MethodOutput:
        """Run on ``inst`` with ``cfg`` (configured, with a budget, unless it already is).
        A run with a budget of its own ends at its limit with :func:`time_limited`'s output;
        one given a budget (a stage of a larger run) lets TimeLimitReached pass to its owner."""
        cfg = self.configure(cfg)
        if cfg.budget is not None:
            return self.fn(inst, cfg)
        cfg = replace(cfg, budget=self.new_budget(cfg))
        try:
            return settle(self.fn(inst, cfg), cfg.budget)
        except TimeoutError as exc:     # a budget check or a compiled kernel's deadline
            if not cfg.budget.spent():
                raise
            return time_limited(cfg.budget, exc)

    def with_defaults(self, cfg: RunConfig) -> RunConfig:
        """``cfg`` for this method with all its options at their defaults (a reference run
        inside another method, e.g. ITV-ILP for MRAR); the budget is kept."""
        return replace(cfg, options={}, declared=self.options, options_shared=False)


@dataclass(frozen=True)
class Generator:
    run: Callable[..., Any]
    params: dict   # name -> (type, default, help)


@dataclass(frozen=True)
class Problem:
    name: str
    summary: str
    check: Callable[[Any, Any], tuple[list[str], dict]]  # (instance, solution) -> (violations, metrics)
    objective: str                                       # metric that is the objective
    sense: str                                           # "min" | "max"
    metrics: tuple[str, ...]                             # problem metric columns
    methods: dict[str, Method]
    default_method: str
    bound: Callable[[Any], float] | None = None          # analytic bound on the objective
    generator: Generator | None = None
    solution_to_dict: Callable[[Any], dict] = lambda sol: sol.to_dict()
    # the solution as its file holds it, numpy integer arrays allowed where solution_to_dict
    # has lists of integers (toolkit.outdir writes both as the same text); None: that one
    solution_to_file: Callable[[Any], dict] | None = None


_PROBLEMS: dict[str, Problem] = {}


def register_problem(p: Problem) -> None:
    _PROBLEMS[p.name] = p


def problems() -> dict[str, Problem]:
    """All problem types (each problem module registers itself once on import)."""
    for mod in PROBLEM_MODULES:
        importlib.import_module(mod)       # cached by Python after the first call
    return _PROBLEMS


def selected_methods(names: list[str] | None) -> list[Method]:
    """The methods a batch selects: each problem's methods of these names, or (None) every
    problem's default method."""
    probs = problems().values()
    if names is None:
        return [p.methods[p.default_method] for p in probs]
    return [p.methods[n] for p in probs for n in names if n in p.methods]


def known_methods() -> set[str]:
    """Every method name of every problem."""
    return {m for p in problems().values() for m in p.methods}


def problem(name: str) -> Problem:
    probs = problems()
    if name not in probs:
        raise KeyError(f"unknown problem {name!r} (known: {', '.join(sorted(probs))})")
    return probs[name]


_LAZY: dict[str, set[str]] = {}    # problem module -> the modules it binds with lazy()


def lazy(module: str, name: str) -> Callable:
    """The function ``module.name``, imported on its first call.

    Problem modules bind their heuristics and model builders this way, so listing the
    registry (``solve.py list``, ``--help``) imports no solver, scipy.optimize or networkx.
    """
    _LAZY.setdefault(sys._getframe(1).f_globals["__name__"], set()).add(module)

    def call(*args, **kw):
        return getattr(importlib.import_module(module), name)(*args, **kw)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"{module}.{name} (imported on first call)"
    call.target = (module, name)
    return call


def preload(method: Method, inst=None, cfg: RunConfig | None = None) -> float:
    """Import the modules a run of ``method`` calls into (toolkit.method_imports), and
    compile or load the compiled kernels a run on ``inst`` with ``cfg`` uses
    (``Method.kernels``; once per process), so a timed run (``runtime_s``) includes
    neither: the heuristics for a heuristic, also the models (gurobipy, scipy.sparse) for
    a model method. Returns the seconds the kernels took (0.0 when already warm)."""
    from toolkit.method_imports import import_modules

    import_modules(method, _LAZY)
    sets = method.kernel_sets(inst, cfg)
    if not sets:
        return 0.0
    from toolkit.kernels import warm

    budget = cfg.budget if cfg is not None else None
    return warm(sets, None if budget is None else budget.deadline())


def preload_modules(method: Method) -> list[str]:
    """The modules a run of ``method`` reaches first (toolkit.method_imports, without
    importing them; :func:`preload` then imports them and their function-local imports): a
    pool's server imports them once for all its workers (toolkit.pools)."""
    from toolkit.method_imports import entry_modules

    return entry_modules(method, _LAZY)


def option_or(cfg: RunConfig | None, name: str, default):
    """``cfg.option(name)`` when the running method declares it, else ``default`` (for
    ``Method.kernels`` functions, which may get no RunConfig)."""
    if cfg is None or not any(o.name == name for o in cfg.declared or ()):
        return default
    return cfg.option(name)
