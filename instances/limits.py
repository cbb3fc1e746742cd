"""Size guards: absurd instances are refused before anything large is allocated.

Each problem type estimates, from the few header numbers of a file (sizes, counts), the
memory its instance would take once built; ``guard`` refuses one over the limit with
the estimate and the way to lift it. The default limit is 4 GiB (the machines this is
tested on have 24 GiB); ``solve.py --max-memory GIB`` or ``OCS_MAX_MEMORY_GB`` changes it.
"""
from __future__ import annotations

import os

from instances.errors import InstanceError

GIB = 2**30
DEFAULT_GIB = 4.0


def max_bytes() -> float:
    """The current limit in bytes (``OCS_MAX_MEMORY_GB``, default 4 GiB)."""
    raw = os.environ.get("OCS_MAX_MEMORY_GB", "")
    try:
        gib = float(raw) if raw else DEFAULT_GIB
    except ValueError:
        gib = DEFAULT_GIB
    return gib * GIB if gib > 0 else DEFAULT_GIB * GIB


def set_max_gib(gib: float) -> None:
    """Set the limit for this process and the workers it starts (``--max-memory``)."""
    os.environ["OCS_MAX_MEMORY_GB"] = repr(float(gib))


def guard(field: str, n_bytes: float, what: str) -> None:
    """Refuse (InstanceError naming ``field``) when ``n_bytes`` exceeds the limit."""
    limit = max_bytes()
    if n_bytes > limit:
        raise InstanceError(field, f"{what} would need about {fmt_bytes(n_bytes)}, over the "
                                   f"{fmt_bytes(limit)} limit (raise it with --max-memory GIB)")


def fmt_bytes(n: float) -> str:
    for unit, size in (("TiB", GIB * 1024), ("GiB", GIB), ("MiB", 2**20)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:.0f} bytes"
