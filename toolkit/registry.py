"""Registry of problem types, their methods (heuristics and model builders) and generators.

A problem module (``toolkit/<problem>_methods.py``) calls :func:`register_problem` once
with a :class:`Problem`. Problem modules are imported lazily by :func:`problems`.
"""
from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from models.backend import Result

PROBLEM_MODULES = ("toolkit.spectra_methods", "toolkit.delta_methods", "toolkit.a2a_methods",
                   "toolkit.lumos_reconfig_methods", "toolkit.lumos_logical_methods")


class OptionError(ValueError):
    """A bad --option value or combination: bad input (exit 2), not a method failure."""


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

    def solve_kw(self) -> dict:
        return dict(backend=self.backend, time_limit=self.time_limit, mip_gap=self.mip_gap,
                    threads=self.threads, params=self.params, log=self.log,
                    iis_path=self.iis_path)

    def option(self, name: str, default, kind=None):
        """A method option, converted like its default (bools accept 1/0/true/false/yes/no)."""
        if name not in self.options:
            return default
        val = self.options[name]
        kind = kind or (type(default) if default is not None else str)
        if kind is bool and isinstance(val, str):
            low = val.lower()
            if low not in ("1", "0", "true", "false", "yes", "no", "on", "off"):
                raise OptionError(f"option {name}: expected a boolean, got {val!r}")
            return low in ("1", "true", "yes", "on")
        try:
            return kind(val)
        except (TypeError, ValueError):
            raise OptionError(f"option {name}: expected {kind.__name__}, got {val!r}")


@dataclass
class MethodOutput:
    solution: Any = None            # None when the solver found none
    solver: Result | None = None    # for model builders
    metrics: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Method:
    name: str
    kind: str                                            # "heuristic" | "model"
    run: Callable[[Any, RunConfig], MethodOutput]
    summary: str
    options: str = ""                                    # help text for --option
    applicable: Callable[[Any, RunConfig], str | None] | None = None  # reason if not
    # True when the model solves the instance's problem without restriction, so its solver
    # bound bounds the instance's optimum (not only this model's, e.g. T slots, K intervals)
    exact: bool = False
    # True when the method may leave the problem's feasible set in a way the problem allows
    # as a comparison only (e.g. a2a baselines that split flows): the problem's analytic
    # bound does not apply to its objective, so no bound or gap is reported for it
    relaxation: bool = False


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


_PROBLEMS: dict[str, Problem] = {}


def register_problem(p: Problem) -> None:
    _PROBLEMS[p.name] = p


def problems() -> dict[str, Problem]:
    """All problem types (each problem module registers itself once on import)."""
    for mod in PROBLEM_MODULES:
        importlib.import_module(mod)       # cached by Python after the first call
    return _PROBLEMS


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


def preload(method: Method) -> None:
    """Import the modules that ``method``'s problem module binds with :func:`lazy`, so a
    timed run (``runtime_s``) does not include them: the heuristics for a heuristic, also
    the models (gurobipy, scipy.sparse) for a model method."""
    for mod in sorted(_LAZY.get(getattr(method.run, "__module__", ""), ())):
        if method.kind == "model" or mod.startswith("heuristics."):
            importlib.import_module(mod)
