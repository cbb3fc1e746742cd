"""Tests of models/spectra/ (spectra)."""
