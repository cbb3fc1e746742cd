"""Tests of models/lumos/ (lumos)."""
