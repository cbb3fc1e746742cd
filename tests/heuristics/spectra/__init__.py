"""Tests of heuristics/spectra/ (spectra)."""
