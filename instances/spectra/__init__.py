"""Spectra: scheduling parallel optical circuit switches (Liang et al.; spec ../shared/specs/spectra.md):
instances: dataclasses, validation, file I/O, generators."""
