"""The toolkit as a library: ``from toolkit.api import solve, batch, build``.

    rec = solve("instances/examples/worked_example.json", method="spectra")
    rec.objective, rec.gap, rec.solution, rec.metrics["makespan"]
    df = batch(["instances/examples"], methods=["spectra", "spectra-noeq"], time_limit=20)
    b = build("instances/examples/worked_example.json", "milp")   # the gurobipy model

The same runs as ``solve.py solve`` and ``solve.py batch`` (``toolkit.run.run_task``,
``toolkit.batch.run_batch``); the keyword settings are RunConfig's fields, checked by the
command line's rules (``toolkit.config``): a bad one raises a ValueError naming it.
Ctrl-C raises :class:`~toolkit.run.Interrupted`, a KeyboardInterrupt carrying the record.
"""
from __future__ import annotations

import numbers
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolkit.config import ConfigError, check_folder, make_config
from toolkit.handover import Built, Check
from toolkit.options import MAX_WORKERS
from toolkit.run import CORE_FIELDS, Interrupted, NotApplicable, run_task

__all__ = ["solve", "batch", "build", "Record", "Built", "Check", "ConfigError",
           "NotApplicable", "Interrupted", "BatchWarning"]


@dataclass
class Record:
    """One verified run (the fields of a ``--format json`` record).

    ``objective`` is the checker's value of ``solution`` (the checked solution object);
    ``metrics`` holds every other field: the problem's metrics (e.g. ``makespan``) and the
    method's own (``model_files``, ``solver_runtime_s``, ...), also readable as attributes.
    """

    instance: str
    name: str | None
    problem: str
    method: str
    backend: str | None
    status: str
    objective: float | None
    bound: float | None
    gap: float | None
    runtime_s: float | None
    n_vars: int | None
    n_int_vars: int | None
    n_constrs: int | None
    verified: bool
    backend_reason: str | None
    message: str
    problem_bound: float | None
    versions: str | None
    metrics: dict = field(default_factory=dict)
    solution: Any = field(default=None, repr=False)

    @classmethod
    def from_record(cls, rec: dict) -> "Record":
        core = {k: rec.get(k) for k in CORE_FIELDS}
        rest = {k: v for k, v in rec.items() if k not in CORE_FIELDS and k != "solution"}
        return cls(**core, metrics=rest, solution=rec.get("solution"))

    def to_dict(self) -> dict:
        """The flat record (core fields, then metrics), without the solution."""
        return {**{k: getattr(self, k) for k in CORE_FIELDS}, **self.metrics}

    def __getattr__(self, name: str):
        metrics = self.__dict__.get("metrics") or {}
        if name in metrics:
            return metrics[name]
        raise AttributeError(f"{type(self).__name__} has no field or metric {name!r}")


def _instance_data(instance_or_path) -> tuple[dict, str]:
    """(parsed instance dict, source label for the record's ``instance``)."""
    import instances

    if isinstance(instance_or_path, (str, os.PathLike)):
        return instances.read_json(instance_or_path), str(instance_or_path)
    if isinstance(instance_or_path, dict):
        return instance_or_path, "<dict>"
    if hasattr(instance_or_path, "to_dict") and hasattr(instance_or_path, "problem"):
        return instance_or_path.to_dict(), f"<{type(instance_or_path).__name__}>"
    raise TypeError(f"instance_or_path: expected a file path, a parsed instance dict or an "
                    f"instance object, got {type(instance_or_path).__name__}")


def solve(instance_or_path, method: str | None = None, **config) -> Record:
    """Solve one instance with one method (default: the problem's default method).

    ``instance_or_path`` is an instance file, its parsed JSON (a dict) or an instance object
    (``instances.load_instance``, a generator's result). ``config`` are RunConfig's fields:
    ``backend``, ``time_limit``, ``mip_gap``, ``threads``, ``params`` (Gurobi parameters),
    ``options`` (method options), ``log_dir``, ``iis_path``, ``write_model``, ...

    Raises ConfigError (bad setting), instances.InstanceError (bad instance or method),
    NotApplicable (the method declines the instance), all ValueErrors; Interrupted on Ctrl-C.
    A run that fails is a Record with ``verified`` False and the reason in ``message``.
    """
    cfg = make_config(**config)
    data, source = _instance_data(instance_or_path)
    return Record.from_record(run_task(data, source, method, cfg, want_solution="object"))


def build(instance_or_path, method: str, *, nth: int = 1, backend: str = "auto",
          **options) -> Built:
    """The gurobipy model a model method solves, in your hands, with the functions to read
    and check a solution from it::

        b = build("instances/examples/worked_example.json", "milp", slots=3)
        b.model                                  # a normal gurobipy.Model (paper's names)
        b.model.addConstr(...); b.model.Params.MIPGap = 0
        b.model.optimize()
        sol = b.extract()                        # the method's solution, from the model
        c = b.check(sol)                         # the problem's independent checker
        c.ok, c.objective, c.violations

    ``instance_or_path`` as for :func:`solve`; ``method`` a model method (``solve.py
    list``); ``options`` its method options (``slots=3``). Raises ValueError for a
    heuristic (no model), ConfigError for a bad option, NotApplicable where the method
    declines the instance, as :func:`solve` does.

    The model is the one the method would solve, built by the method's own code (the run
    pauses where it hands the model to the solver backend; see toolkit.handover), with
    the method's MIP start as ``Start`` values. ``extract()`` finishes the run from the
    model's solution, once; ``b.check()`` returns a :class:`Check`. A method that solves
    several models (a2a: one per d; lexicographic stages; lumos-placement: Pod level, then
    leaf level; simulations: every reconfiguration) hands over its ``nth``; the others are
    solved on ``backend``. [DECISION] The run has no time limit (its clock would count
    your time with the model); give the simulations ``alg_time="none"`` for the same reason.

    Big models: the pip Gurobi licence optimizes models of at most 2000 variables and
    2000 constraints; above that ``b.model.optimize()`` raises ``gurobipy.GurobiError``
    (errno 10010, "Model too large for size-limited license"). Build and change them as
    any model, then ``res = b.solve(backend="auto")`` (the toolkit's backends: HiGHS by
    matrix export where the licence refuses the model; Gurobi parameters go in ``params``)
    and ``b.extract(res)``.
    """
    from toolkit.handover import build as _build

    data, source = _instance_data(instance_or_path)
    return _build(data, source, method, nth=nth, backend=backend, options=options)


def _read_runs(csv: Path):
    """The batch CSV as a DataFrame; text columns (``outdir.TEXT_FIELDS``) stay text, an
    empty cell "" rather than a float NaN (which would make an all-empty ``message`` a
    float column)."""
    import pandas as pd

    from toolkit.outdir import TEXT_FIELDS

    return pd.read_csv(csv, converters=dict.fromkeys(TEXT_FIELDS, str))   # absent: ignored


def _paths(paths) -> list:
    """``paths`` (one path or a list of them) as a list; ConfigError for anything else: a
    dict's keys or no paths at all ran nothing, silently."""
    one = (str, os.PathLike)
    if isinstance(paths, one):
        return [paths]
    if not isinstance(paths, (list, tuple)) or not all(isinstance(p, one) for p in paths):
        raise ConfigError("paths", "must be instance files or folders (a path or a list of "
                          f"paths; for a parsed instance use solve()), got {paths!r:.80}")
    if not paths:
        raise ConfigError("paths", "is empty: no instance files or folders given")
    return list(paths)


class BatchWarning(UserWarning):
    """A file or task a batch skipped (bad input, or a method declined it)."""


def batch(paths, methods=None, *, out: str | os.PathLike | None = None, workers: int = 1,
          scheduler: str | None = None, progress: bool = False, **config):
    """Run every (file, method) pair and return a pandas DataFrame, one row per run.

    ``paths`` are instance files or folders (their ``*.json``), one or a list; ``methods``
    a list of names or variants (or "a,b"; ``milp:slots=2``: toolkit.variants), each applied
    to the files of the problems that have it
    (default: each problem's default method). ``out`` is the resumable CSV of
    ``solve.py batch --out`` (default: a temporary file, nothing kept). Skipped files and
    tasks are warned about (BatchWarning) and listed in ``df.attrs["skipped"]``.
    """
    import tempfile

    import pandas as pd

    from toolkit.batch import run_batch
    from toolkit.variants import VariantError, parse_variants

    if config.get("write_model") is not None:
        raise ConfigError("write_model", "writes one run's models: use solve(), not batch()")
    cfg = make_config(**config)
    paths = _paths(paths)
    if methods is not None:
        if not isinstance(methods, str) and not (
                isinstance(methods, (list, tuple)) and all(isinstance(m, str) for m in methods)):
            raise ConfigError("methods", f"must be a list of method names or 'a,b', got "
                              f"{methods!r}")
        try:
            methods = [v.label for v in parse_variants(methods)]
        except VariantError as exc:
            raise ConfigError("methods", f"has {exc}") from None
    if isinstance(workers, bool) or not (isinstance(workers, numbers.Integral)
                                         and 1 <= workers <= MAX_WORKERS):
        raise ConfigError("workers", f"must be an integer in 1..{MAX_WORKERS}, got {workers!r}")
    workers = int(workers)
    if not isinstance(progress, bool):
        raise ConfigError("progress", f"must be True or False, got {progress!r}")
    if scheduler is not None and not (isinstance(scheduler, str) and scheduler.strip()):
        raise ConfigError("scheduler", f"must be a Dask scheduler address (HOST:PORT), got "
                          f"{scheduler!r}")
    if out is not None:
        if not isinstance(out, (str, os.PathLike)):
            raise ConfigError("out", f"must be the path of the records CSV, got "
                              f"{type(out).__name__}")
        if os.path.isdir(out):
            raise ConfigError("out", f"{os.fspath(out)}: is a folder; out names the records "
                              f"CSV file (e.g. runs.csv)")
        check_folder("out", os.path.dirname(os.fspath(out)) or ".", os.fspath(out))
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(out) if out is not None else Path(tmp) / "runs.csv"
        rep = run_batch(paths, methods, cfg, csv, workers=workers, scheduler=scheduler,
                        progress=progress)
        rows = _read_runs(csv) if csv.exists() else pd.DataFrame(columns=["run_key"])
    rows = rows.drop_duplicates("run_key", keep="last").set_index("run_key", drop=False)
    keys = [k for k in rep.keys if k in rows.index]
    df = rows.loc[keys].reset_index(drop=True) if keys else \
        pd.DataFrame(columns=list(CORE_FIELDS))
    skipped = rep.bad_input + rep.declined
    for msg in skipped:
        warnings.warn(f"skipped: {msg}", BatchWarning, stacklevel=2)
    df.attrs["skipped"] = skipped
    return df
