"""DELTA: DAG-aware OCS logical topology optimization (Ye et al.; spec ../shared/specs/delta.md):
instances: dataclasses, validation, file I/O, generators."""
