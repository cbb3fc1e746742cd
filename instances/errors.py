"""Input validation errors: one line naming the file (when known) and the field."""
from __future__ import annotations

import numpy as np


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
    """A value for an error message, cut to 40 characters."""
    text = repr(v)
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
