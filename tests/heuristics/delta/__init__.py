"""Tests of heuristics/delta/ (delta)."""
