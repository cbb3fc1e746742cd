"""DELTA: DAG-aware OCS logical topology optimization (Ye et al.; spec ../shared/specs/delta.md):
gurobipy model builders."""
