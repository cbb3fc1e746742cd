"""The rules every run setting obeys, for the command line and the library alike.

:func:`make_config` builds a :class:`~toolkit.registry.RunConfig` from keyword arguments
(``toolkit.api``); :func:`check_config` checks one (``solve.py`` after parsing its flags).
A bad value raises :class:`ConfigError`, a ValueError that names the field; the command
line prints :meth:`ConfigError.cli_text`, the same words with the flag's name.
"""
from __future__ import annotations

import math
import numbers
import os
from dataclasses import fields

from toolkit.options import MAX_SECONDS, OptionError, check_params
from toolkit.registry import RunConfig

BACKENDS = ("auto", "gurobi", "highs")          # = models.backend.BACKENDS (a test checks)
MODEL_FORMATS = (".mps", ".lp")                 # --write-model suffixes (Gurobi's writer)
MAX_THREADS = 1024                              # solver threads (Gurobi's own maximum)


class ConfigError(ValueError):
    """A bad run setting. ``field`` is the RunConfig field; ``str()`` names it."""

    def __init__(self, field: str, msg: str):
        self.field, self.msg = field, msg
        super().__init__(f"{field} {msg}")

    def cli_text(self) -> str:
        """The message with the command-line flag: ``--time-limit must be > 0, got -1``."""
        return f"--{self.field.replace('_', '-')} {self.msg}"


def _number(name: str, v, integer: bool = False):
    """``v`` as a Python int (``integer``) or float; numpy scalars count, bools do not."""
    ok = isinstance(v, numbers.Integral if integer else numbers.Real)
    if isinstance(v, bool) or not ok or (not integer and not math.isfinite(v)):
        kind = "an integer" if integer else "a finite number"
        raise ConfigError(name, f"must be {kind}, got {v!r}")
    return int(v) if integer else v


def check_config(cfg: RunConfig) -> RunConfig:
    """Raise ConfigError for the first bad setting of ``cfg``; return ``cfg``."""
    if cfg.backend not in BACKENDS:
        raise ConfigError("backend", f"must be one of {', '.join(BACKENDS)}, got {cfg.backend!r}")
    if cfg.time_limit is not None and _number("time_limit", cfg.time_limit) <= 0:
        raise ConfigError("time_limit", f"must be > 0, got {cfg.time_limit}")
    if cfg.time_limit is not None and cfg.time_limit > MAX_SECONDS:
        raise ConfigError("time_limit", f"must be <= {MAX_SECONDS:g} s, got {cfg.time_limit:g}")
    if cfg.mip_gap is not None and _number("mip_gap", cfg.mip_gap) < 0:
        raise ConfigError("mip_gap", f"must be >= 0, got {cfg.mip_gap}")
    if cfg.threads is not None and _number("threads", cfg.threads, integer=True) < 1:
        raise ConfigError("threads", f"must be >= 1, got {cfg.threads}")
    if cfg.threads is not None and cfg.threads > MAX_THREADS:
        raise ConfigError("threads", f"must be <= {MAX_THREADS}, got {cfg.threads}")
    for name in ("params", "options"):
        val = getattr(cfg, name)
        if not isinstance(val, dict) or not all(isinstance(k, str) for k in val):
            raise ConfigError(name, f"must be a dict of NAME: VALUE, got {val!r}")
    for name in ("log_dir", "iis_path", "write_model"):
        val = getattr(cfg, name, None)
        if val is not None and not isinstance(val, str):
            raise ConfigError(name, f"must be a path (str), got {type(val).__name__}")
        if val == "":                   # not "none" nor the current folder: say which
            raise ConfigError(name, "is an empty path")
    wm = getattr(cfg, "write_model", None)
    if wm is not None and not wm.lower().endswith(MODEL_FORMATS):
        raise ConfigError("write_model", f"must be a file name ending in "
                          f"{' or '.join(MODEL_FORMATS)}, got {wm!r}")
    if cfg.log_dir is not None:
        check_folder("log_dir", cfg.log_dir)
    for name in ("iis_path", "write_model"):
        if getattr(cfg, name, None) is not None:
            check_folder(name, os.path.dirname(getattr(cfg, name)) or ".", getattr(cfg, name))
    return cfg


# Gurobi parameters that are run settings of their own: the run sets them on every solve
# (TimeLimit from the run's budget, 600 s by default), so a --param would be overridden
FLAG_PARAMS = {"TimeLimit": "time_limit", "MIPGap": "mip_gap", "Threads": "threads"}


def fold_params(cfg: RunConfig) -> RunConfig:
    """Move ``params`` TimeLimit / MIPGap / Threads (Gurobi's spelling, as
    ``options.check_params`` leaves them) to ``time_limit`` / ``mip_gap`` / ``threads``
    and check them there. [DECISION] ``--param TimeLimit=S`` is ``--time-limit S``, the
    whole run's budget (it was silently replaced by that budget); both given is a
    ConfigError, even with equal values."""
    for pname, name in FLAG_PARAMS.items():
        if pname not in cfg.params:
            continue
        value = cfg.params.pop(pname)
        if getattr(cfg, name) is not None:
            raise ConfigError(name, f"given twice: also as --param {pname}={value}; give one")
        setattr(cfg, name, value)
        try:
            check_config(cfg)
        except ConfigError as exc:
            if exc.field == name:
                raise ConfigError(name, f"(as --param {pname}) {exc.msg}") from None
            raise
    return cfg


def check_folder(name: str, folder, path=None) -> None:
    """ConfigError unless ``folder`` is a folder or can be created: its nearest existing
    ancestor must be a writable folder (not a file). Nothing is created here."""
    p = os.path.abspath(folder)
    while not os.path.exists(p) and os.path.dirname(p) != p:
        p = os.path.dirname(p)
    where = path if path is not None else folder
    if not os.path.isdir(p):
        raise ConfigError(name, f"{where}: {p} is a file, not a folder")
    if not os.access(p, os.W_OK | os.X_OK):
        raise ConfigError(name, f"{where}: cannot write in {p} (no permission or read-only)")


def config_fields() -> tuple[str, ...]:
    """The settings a caller may pass: every RunConfig field but the per-task ones (``log``;
    ``options_shared``, ``declared`` and ``budget``, set by the run for each method)."""
    internal = ("log", "options_shared", "declared", "budget")
    return tuple(f.name for f in fields(RunConfig) if f.name not in internal)


def make_config(**settings) -> RunConfig:
    """A checked RunConfig from keyword settings; an unknown name is a ConfigError."""
    known = config_fields()
    for name in settings:
        if name not in known:
            raise ConfigError(name, f"is not a setting (known: {', '.join(known)})")
    for name in ("log_dir", "iis_path", "write_model"):      # pathlib.Path is fine too
        if settings.get(name) is not None and hasattr(settings[name], "__fspath__"):
            settings[name] = str(settings[name])
    cfg = RunConfig(**settings)
    cfg.params = {} if cfg.params is None else cfg.params
    cfg.options = {} if cfg.options is None else cfg.options
    check_config(cfg)
    if cfg.threads is not None:           # np.int64(2) -> 2
        cfg.threads = int(cfg.threads)
    try:                     # the CLI's --param rule: Gurobi's names, in Gurobi's spelling
        cfg.params = check_params(cfg.params)
    except OptionError as exc:
        raise ConfigError("params", str(exc).replace("--param ", "name ", 1)) from None
    return fold_params(cfg)
