"""LumosCore and Cross Wiring (Han et al.; spec ../shared/specs/lumoscore.md):
instances: dataclasses, validation, file I/O, generators."""
