"""Tests of instances/lumos/ (lumos)."""
