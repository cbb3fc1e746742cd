"""The relative gap between an objective and a bound (no solver import: records use it)."""
from __future__ import annotations

import math


def relative_gap(obj: float | None, bound: float | None) -> float | None:
    """|objective - bound| / |objective| (0 within 1e-9 relative; None if either is missing)."""
    if obj is None or bound is None:
        return None
    diff = abs(obj - bound)
    if diff <= 1e-9 * max(1.0, abs(obj)):
        return 0.0
    return diff / abs(obj) if abs(obj) > 1e-12 else math.inf
