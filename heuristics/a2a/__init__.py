"""a2a: all-to-all on reconfigurable photonic interconnects (Zhou et al.; spec ../shared/specs/a2a.md):
polynomial heuristics, bounds and simulators."""
