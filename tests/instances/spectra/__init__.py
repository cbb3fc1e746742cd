"""Tests of instances/spectra/ (spectra)."""
