"""LumosCore and Cross Wiring (Han et al.; spec ../shared/specs/lumoscore.md):
reproduce targets (results/lumos/)."""
