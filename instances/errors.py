"""Input validation errors: one line naming the file (when known) and the field."""
from __future__ import annotations

import math
import threading
from contextlib import contextmanager
from itertools import chain

import numpy as np


# toolkit.schema derives the instance files' JSON Schemas from these checks: while it loads
# its corpus, _TRACE collects (check, field, rules) of every call of the helpers below, and
# the loaders' bulk fast paths take their per-entry walk instead (tracing()).
_TRACE: list | None = None


def tracing() -> bool:
    """True while toolkit.schema records the checks (bulk fast paths then check entry by entry)."""
    return _TRACE is not None


class PerInstance(int):
    """A bound that depends on the instance (an index below its count of links, Pods,
    groups): the loader checks it, a JSON Schema cannot state it (toolkit.schema leaves it
    out). Give such bounds as ``per_instance(n)``."""


def per_instance(bound: int) -> int:
    return PerInstance(bound)


def _fixed(bound):
    """A bound as toolkit.schema records it: None where it depends on the instance."""
    return None if isinstance(bound, PerInstance) else bound


class InstanceError(ValueError):
    """Bad input. ``str(err)`` is one line: ``<file>: field '<field>': <what is wrong>``."""

    def __init__(self, field: str, msg: str, source: str | None = None):
        self.field, self.msg, self.source = field, msg, source
        super().__init__(self._text())

    def _text(self) -> str:
        where = f"{self.source}: " if self.source else ""
        return f"{where}field '{self.field}': {self.msg}" if self.field else f"{where}{self.msg}"

    def with_source(self, source: str) -> "InstanceError":
        return InstanceError(self.field, self.msg, source)


def short(v) -> str:
    """A value for an error message, on one line and cut to 40 characters."""
    text = " ".join(repr(v).split())
    return text if len(text) <= 40 else text[:37] + "..."


def require(d: dict, key: str, kind=None):
    """``d[key]``, or InstanceError naming the missing field."""
    if key not in d:
        raise InstanceError(key, "missing")
    val = d[key]
    if kind is None:
        return val
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(val, kinds) or (isinstance(val, bool) and bool not in kinds):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise InstanceError(key, f"must be {names}, got {type(val).__name__}")
    return val


def as_matrix(field: str, value, square: bool = True, nonneg: bool = True,
              integral: bool = False) -> np.ndarray:
    """A 2-D finite float matrix from nested lists, with shape/sign/integrality checks."""
    if _TRACE is not None:
        _TRACE.append(("matrix", field, {"nonneg": nonneg, "integral": integral}))
    if isinstance(value, list) and not all(
            isinstance(row, list) and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                          for v in row) for row in value):
        raise InstanceError(field, "must be a list of rows of numbers (no strings, booleans or nesting)")
    try:
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise InstanceError(field, "must be a matrix of numbers (ragged rows or non-numeric entries)")
    if arr.ndim != 2:
        raise InstanceError(field, f"must be a 2-D matrix, got {arr.ndim} dimension(s)")
    if square and arr.shape[0] != arr.shape[1]:
        raise InstanceError(field, f"must be square, got {arr.shape[0]}x{arr.shape[1]}")
    if not np.all(np.isfinite(arr)):
        raise InstanceError(field, "has non-finite entries")
    with np.errstate(over="ignore"):
        sums_ok = np.isfinite(arr.sum(axis=0)).all() and np.isfinite(arr.sum(axis=1)).all()
    if not sums_ok:
        raise InstanceError(field, "entries are so large that row or column sums overflow")
    if nonneg and np.any(arr < 0):
        i, j = map(int, np.argwhere(arr < 0)[0])
        raise InstanceError(field, f"must be non-negative, entry [{i}][{j}] = {arr[i, j]:g}")
    if integral and np.any(arr != np.round(arr)):
        raise InstanceError(field, "must be integral")
    return arr


# --------------------------------------------------------------------------------------
# Strict field checks shared by every problem type (bad input is exit 2, one line)
# --------------------------------------------------------------------------------------
MAX_INT = 2**63 - 1          # integers must fit int64 (numpy, solvers)
MAX_MAGNITUDE = 1e18         # |x| of any number in an instance file (see check_tree)
MAX_DEPTH = 16               # nesting of objects/lists in an instance file
_INTEGRAL = (int, np.integer)
_REAL = (int, float, np.integer, np.floating)


def number(field: str, v, *, integer: bool = False, lo=None, hi=None, strict_lo: bool = False):
    """``v`` as an int (``integer``) or a finite float, else InstanceError naming ``field``.

    Strict: booleans, strings, None, NaN/Infinity and (for integers) fractional values are
    rejected, never converted; integers must fit int64. ``lo``/``hi`` are inclusive bounds
    (``strict_lo``: v > lo). numpy scalars from generators are accepted like Python ones.
    """
    if _TRACE is not None:
        _TRACE.append(("integer" if integer else "number", field,
                       {"lo": _fixed(lo), "hi": _fixed(hi), "strict_lo": strict_lo}))
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, _REAL):
        want = "an integer" if integer else "a number"
        raise InstanceError(field, f"must be {want}, got {type(v).__name__} {short(v)}")
    if isinstance(v, _INTEGRAL):
        v = int(v)
        if abs(v) > MAX_INT:
            raise InstanceError(field, f"integer {short(v)} does not fit 64 bits")
    elif not np.isfinite(v):
        raise InstanceError(field, f"must be finite, got {v!r}")
    elif integer:
        if v != np.floor(v) or abs(v) > MAX_INT:
            raise InstanceError(field, f"must be an integer, got {short(v)}")
        v = int(v)
    out = v if integer else float(v)
    if lo is not None and (out <= lo if strict_lo else out < lo):
        raise InstanceError(field, f"must be {'>' if strict_lo else '>='} {lo}, got {short(out)}")
    if hi is not None and out > hi:
        raise InstanceError(field, f"must be <= {hi}, got {short(out)}")
    return out


def text(field: str, v, max_len: int = 200) -> str:
    """A JSON string field (names), at most ``max_len`` characters."""
    if _TRACE is not None:
        _TRACE.append(("string", field, {"max_len": max_len}))
    if not isinstance(v, str):
        raise InstanceError(field, f"must be a string, got {type(v).__name__}")
    if len(v) > max_len:
        raise InstanceError(field, f"must be at most {max_len} characters, got {len(v)}")
    return v


def choice(field: str, v, options) -> str:
    """A JSON string field that must be one of ``options``."""
    if _TRACE is not None:
        _TRACE.append(("string", field, {"max_len": None, "enum": tuple(options)}))
    if not isinstance(v, str):
        raise InstanceError(field, f"must be a string, got {type(v).__name__}")
    if v not in options:
        raise InstanceError(field, f"must be one of {', '.join(options)}, got {short(v)}")
    return v


def boolean(field: str, v) -> bool:
    """A JSON ``true``/``false`` field (never a number or a string)."""
    if _TRACE is not None:
        _TRACE.append(("boolean", field, {}))
    if not isinstance(v, (bool, np.bool_)):
        raise InstanceError(field, f"must be true or false, got {short(v)}")
    return bool(v)


def obj(field: str, v) -> dict:
    """A JSON object field (a list or a number where an object is expected is named)."""
    if _TRACE is not None:
        _TRACE.append(("object", field, {}))
    if not isinstance(v, dict):
        raise InstanceError(field, f"must be an object, got {_json_type(v)}")
    return v


def seq(field: str, v, max_len: int | None = None) -> list:
    """A JSON list field."""
    if _TRACE is not None:
        _TRACE.append(("array", field, {"max_len": _fixed(max_len)}))
    if not isinstance(v, list):
        raise InstanceError(field, f"must be a list, got {_json_type(v)}")
    if max_len is not None and len(v) > max_len:
        raise InstanceError(field, f"must have at most {max_len} entries, got {len(v)}")
    return v


def known_fields(field: str, d: dict, allowed) -> None:
    """Reject keys of ``d`` outside ``allowed``, naming the first and the known ones."""
    if _TRACE is not None:
        _TRACE.append(("fields", field, {"allowed": tuple(allowed) if isinstance(allowed, (tuple, list))
                                         else tuple(sorted(allowed))}))
    unknown = [k for k in d if k not in allowed]
    if unknown:
        where = f"{field}.{unknown[0]}" if field else str(unknown[0])
        raise InstanceError(where, f"unknown field (known: {', '.join(sorted(allowed))})")


def _json_type(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, dict):
        return "an object"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, _REAL):
        return f"a number ({short(v)})"
    return (f"{type(v).__name__} {short(v)} (instance data are JSON types: lists, "
            "e.g. array.tolist())")


def check_tree(data) -> None:
    """One pass over a parsed file before any problem code sees it: nesting deeper than
    MAX_DEPTH, non-finite numbers, integers beyond 64 bits and numbers of magnitude over
    MAX_MAGNITUDE are rejected with the JSON path of the first offender. The magnitude cap
    is a toolkit decision: no quantity of these problems comes near 1e18 in its file's units,
    and with it no sum or product of file values overflows a float. Numbers are checked
    where their container is scanned and paths are built only for an offender, so a file
    of a million numbers takes well under a second."""
    stack = [(data, None, 0)]            # (value, its path node (parent node, key), depth)
    while stack:
        v, node, depth = stack.pop()
        if isinstance(v, dict):
            items = v.items()
        elif isinstance(v, list):
            if depth + 1 < MAX_DEPTH and _plain_numbers(v):     # nothing to report in it
                continue
            items = enumerate(v)
        else:
            _check_number(v, node)
            continue
        if depth >= MAX_DEPTH:
            raise InstanceError(_path(node), f"nested deeper than {MAX_DEPTH} levels")
        for k, x in items:
            t = type(x)
            if t is float:
                if not -MAX_MAGNITUDE <= x <= MAX_MAGNITUDE:      # also NaN
                    _check_number(x, (node, k))
            elif t is int:
                if not -MAX_INT <= x <= MAX_INT:
                    _check_number(x, (node, k))
            elif t is dict or t is list:
                stack.append((x, (node, k), depth + 1))
            elif t is not str and t is not bool and x is not None:
                _check_number(x, (node, k))


def _plain_numbers(v: list) -> bool:
    """True when ``v`` is a list of numbers, or of lists of numbers, that :func:`check_tree`
    accepts (no bool, None or text; finite; within the limits), checked at C speed (issue
    29: a 64-Pod reconfiguration's 40,000 numbers in 1 ms, not 15); False sends ``v``
    through the exact walk, which names the first offender. Inside :func:`int_rows_kept`,
    a list of integer rows of one width is kept as its int64 array (:func:`int_rows_of`)."""
    kinds = set(map(type, v))
    rows = None
    if kinds == {list}:
        rows, v = v, list(chain.from_iterable(v))
        kinds = set(map(type, v))
    if not v:
        return True
    if kinds == {int}:
        kept = getattr(_KEPT, "rows", None)
        if kept is not None and rows is not None and len(set(map(len, rows))) == 1:
            try:
                arr = np.fromiter(v, np.int64, len(v))
            except OverflowError:               # beyond 64 bits
                return False
            if arr.min() < -MAX_INT:            # -2**63 fits int64, not the limit
                return False
            kept[id(rows)] = (rows, arr.reshape(len(rows), -1))
            return True
        return -MAX_INT <= min(v) and max(v) <= MAX_INT
    if not kinds <= {int, float}:
        return False
    try:
        if not math.isfinite(math.fsum(v)):         # a NaN or an infinity
            return False
    except (OverflowError, ValueError):
        return False
    return -MAX_MAGNITUDE <= min(v) and max(v) <= MAX_MAGNITUDE


_KEPT = threading.local()       # .rows: id(list) -> (list, int64 rows), in int_rows_kept


@contextmanager
def int_rows_kept():
    """Within the block, the lists of integer rows that :func:`check_tree` scans are kept
    as int64 arrays for :func:`int_rows_of`: a file's large integer tables (a 64-Pod
    reconfiguration's 40,000 numbers) are flattened and typed once, not twice (issue 29
    item 3). The arrays are dropped at the block's end."""
    before = getattr(_KEPT, "rows", None)
    _KEPT.rows = {}
    try:
        yield
    finally:
        _KEPT.rows = before


def int_rows_of(v) -> np.ndarray | None:
    """The (rows, width) int64 array :func:`check_tree` made of the list ``v`` in this
    :func:`int_rows_kept` block (handed out once), or None."""
    kept = getattr(_KEPT, "rows", None)
    hit = kept.pop(id(v), None) if kept else None
    return hit[1] if hit is not None and hit[0] is v else None


def _path(node) -> str:
    """The JSON path of a node (parent node, key) of ``check_tree``: a.b[3].c."""
    keys = []
    while node is not None:
        node, k = node
        keys.append(k)
    out = ""
    for k in reversed(keys):
        out += f"[{k}]" if isinstance(k, int) else (f".{k}" if out else str(k))
    return out


def _check_number(v, node) -> None:
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return
    if isinstance(v, int):
        if abs(v) > MAX_INT:
            raise InstanceError(_path(node), f"integer {short(v)} does not fit 64 bits")
    elif isinstance(v, float):
        if not np.isfinite(v):
            raise InstanceError(_path(node), f"non-finite number {v!r} (JSON has no NaN or Infinity)")
        if abs(v) > MAX_MAGNITUDE:
            raise InstanceError(_path(node), f"magnitude {v:g} exceeds {MAX_MAGNITUDE:g}, the limit "
                                              "for any number in an instance file")
