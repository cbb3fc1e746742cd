"""Spectra: scheduling parallel optical circuit switches (Liang et al.; spec ../shared/specs/spectra.md):
reproduce targets (results/spectra/)."""
