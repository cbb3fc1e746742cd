"""Method options: one declaration per option (name, type, default, help), checked before a run.

A method declares its ``--option`` names as a tuple of :class:`Option`; the command line
values are converted and checked against it (:func:`parse_options`) before the method
runs, and the method reads them with ``cfg.option(name)`` (the default comes from here).

Every int and float option declares a ``maximum`` (a test checks): a value no real use
exceeds, so that absurd sizes (process counts, allocations, loops that would run for days,
1e300 reaching an ``int()``) are bad input, exit 2 naming the option, before the run. The
caps are fixed numbers, not the machine's (CPU count, memory): the same command is accepted
everywhere. ``math.inf`` declares an option harmless at any size (a seed).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable

_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")

# maxima shared by several problems' options (decisions; the paper and specs are silent)
MAX_WORKERS = 256         # worker processes: a fixed cap, not the CPU count
MAX_MODEL_VARS = 10**8    # max_vars-like thresholds: 1e8 variables is tens of GiB in a solver
MAX_SECONDS = 1e7         # an option's own time cap (~116 days); 0 is "none", so inf is refused


class OptionError(ValueError):
    """A bad --option value or combination: bad input (exit 2), not a method failure."""


@dataclass(frozen=True)
class Option:
    name: str
    kind: type                       # int, float, bool or str
    default: Any
    help: str
    choices: tuple | None = None     # allowed values (str options)
    minimum: float | None = None     # smallest allowed value (numbers)
    maximum: float | None = None     # largest allowed value (numbers; absurd sizes)

    def parse(self, raw) -> Any:
        """``raw`` (a command-line string or number) as this option's type, checked."""
        val = _convert(self, raw)
        if self.choices is not None and val not in self.choices:
            raise OptionError(f"option {self.name}: expected one of {', '.join(map(str, self.choices))}, "
                              f"got {raw!r}")
        if self.minimum is not None and val < self.minimum:
            raise OptionError(f"option {self.name}: expected a value >= {_num(self.minimum)}, "
                              f"got {raw!r}")
        if self.maximum is not None and val > self.maximum:
            raise OptionError(f"option {self.name}: expected a value <= {_num(self.maximum)}, "
                              f"got {raw!r}")
        return val

    def describe(self) -> str:
        """``name (type, default D[, range]): help`` for ``solve.py list`` and ``--help``;
        the range of a number: ``lo..hi``, ``>= lo`` (no finite maximum) or ``<= hi``."""
        kind = "|".join(map(str, self.choices)) if self.choices else self.kind.__name__
        dflt = int(self.default) if self.kind is bool else self.default
        lo = self.minimum
        hi = None if self.maximum == math.inf else self.maximum
        rng = (f"{_num(lo)}..{_num(hi)}" if lo is not None and hi is not None else
               f">= {_num(lo)}" if lo is not None else f"<= {_num(hi)}" if hi is not None else "")
        return f"{self.name} ({kind}, default {dflt}{', ' + rng if rng else ''}): {self.help}"


def _num(v: float) -> str:
    """``v`` short: whole numbers below 1e6 as digits, others as ``%g`` (1e+08, 0.5)."""
    return str(int(v)) if float(v).is_integer() and abs(v) < 1e6 else f"{v:g}"


def _convert(opt: Option, raw):
    kind, name = opt.kind, opt.name
    if kind is bool:
        low = str(raw).strip().lower()
        if low in _TRUE or low in _FALSE:
            return low in _TRUE
        raise OptionError(f"option {name}: expected a boolean (1/0, true/false), got {raw!r}")
    if kind is int:
        try:
            val = float(raw) if not isinstance(raw, int) else raw
        except (TypeError, ValueError):
            val = math.nan
        if isinstance(val, bool) or not (isinstance(val, int) or float(val).is_integer()):
            raise OptionError(f"option {name}: expected an integer, got {raw!r}")
        return int(val)
    if kind is float:
        try:
            val = float(raw)
        except (TypeError, ValueError):
            raise OptionError(f"option {name}: expected a number, got {raw!r}") from None
        if math.isnan(val):
            raise OptionError(f"option {name}: expected a number, got {raw!r}")
        return val
    return str(raw)


def declared_names(options: Iterable[Option]) -> str:
    names = [o.name for o in options]
    return ", ".join(names) if names else "none"


def parse_options(values: dict, method, siblings: Iterable = (), shared: bool = False) -> dict:
    """The given ``--option`` values that ``method`` declares, converted and checked.

    A name ``method`` does not declare is an OptionError naming it and the valid names
    (and the sibling methods that declare it), unless ``shared`` (batch, gap: each method
    takes the options it declares; :func:`check_shared` checks the rest up front).
    """
    decl = {o.name: o for o in method.options}
    out = {}
    for name, raw in values.items():
        if name not in decl:
            if shared:
                continue
            owners = [m.name for m in siblings if any(o.name == name for o in m.options)]
            whose = f" (an option of {', '.join(owners)})" if owners else ""
            raise OptionError(f"option {name}: not an option of method {method.name}{whose}; "
                              f"valid: {declared_names(method.options)}")
        out[name] = decl[name].parse(raw)
    return out


def check_shared(values: dict, methods: list) -> None:
    """Batch rule: each option must be declared by at least one of ``methods`` (the selected
    ones); its value is checked by every method that declares it."""
    for name, raw in values.items():
        owners = [m for m in methods if any(o.name == name for o in m.options)]
        if not owners:
            valid = sorted({o.name for m in methods for o in m.options})
            chosen = ", ".join(sorted({m.name for m in methods}))
            raise OptionError(f"option {name}: no selected method ({chosen}) declares it; "
                              f"valid: {', '.join(valid) or 'none'}")
        for m in owners:
            parse_options({name: raw}, m)


def option_lines(method) -> list[str]:
    """One line per declared option (``solve.py list``, ``solve --method M --help``)."""
    return [o.describe() for o in method.options]


def check_params(params: dict) -> dict:
    """``--param`` values with each name in Gurobi's spelling (names are case-insensitive);
    an OptionError names one that is not a Gurobi parameter, a name given twice, a
    non-finite number, or a value of the wrong type or outside the parameter's range
    (Gurobi's own check, on an empty environment: no licence, no solve)."""
    if not params:
        return {}
    from difflib import get_close_matches

    import gurobipy as gp
    from gurobipy import GRB

    env = gp.Env(empty=True)
    env.setParam("OutputFlag", 0)
    try:
        known = {n.lower(): n for n in dir(GRB.Param) if not n.startswith("_")}
        out = {}
        for name, val in params.items():
            canon = known.get(str(name).lower())
            if canon is None:
                near = get_close_matches(str(name).lower(), known, n=3)
                hint = f"; did you mean {', '.join(known[k] for k in near)}?" if near else ""
                raise OptionError(f"--param {name}: not a Gurobi parameter{hint} (names: Gurobi "
                                  f"reference manual, Parameters)")
            if canon in out:
                raise OptionError(f"--param {canon}: given twice")
            if isinstance(val, float) and not math.isfinite(val):
                raise OptionError(f"--param {canon}={val}: must be a finite number")
            try:
                env.setParam(canon, val)
            except (gp.GurobiError, TypeError, ValueError) as exc:
                raise OptionError(f"--param {canon}={val}: {exc}") from None
            out[canon] = val
    finally:
        env.dispose()
    return out
