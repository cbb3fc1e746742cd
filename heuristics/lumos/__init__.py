"""LumosCore and Cross Wiring (Han et al.; spec ../shared/specs/lumoscore.md):
polynomial heuristics, bounds and simulators."""
