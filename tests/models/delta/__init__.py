"""Tests of models/delta/ (delta)."""
