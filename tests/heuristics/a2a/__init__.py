"""Tests of heuristics/a2a/ (a2a)."""
