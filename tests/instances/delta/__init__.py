"""Tests of instances/delta/ (delta)."""
