"""Tests of heuristics/lumos/ (lumos)."""
