"""Tests of models/a2a/ (a2a)."""
