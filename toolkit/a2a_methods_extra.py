"""a2a methods beyond the construction: exact models (G1-G5) and the paper's baselines."""
from __future__ import annotations

EXTRA_METHODS: list = []
