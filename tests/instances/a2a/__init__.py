"""Tests of instances/a2a/ (a2a)."""
