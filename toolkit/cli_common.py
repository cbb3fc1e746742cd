"""The command line's shared pieces (solve.py): the bad-input error and exit codes, the
``NAME=VALUE`` options, the run configuration from the flags, the ``--out`` folder, and
the stderr lines (a note, silenced by -q; an error, always printed)."""
from __future__ import annotations

import math
import sys
from pathlib import Path

EXIT_OK, EXIT_FAIL, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130


class BadInput(Exception):
    """Command-line input error: printed as one line, exit 2."""


def _kv(items, what: str) -> dict:
    out = {}
    for it in items or []:
        if "=" not in it:
            raise BadInput(f"{what} {it!r}: expected NAME=VALUE")
        k, v = it.split("=", 1)
        if k.strip() in out:             # as a repeated single-valued flag: bad input
            raise BadInput(f"{what} {k.strip()}: given twice")
        out[k.strip()] = _num(v.strip())
    return out


def _num(v: str):
    for conv in (int, float):
        try:
            return conv(v)
        except ValueError:
            pass
    return v


def run_config(args):
    from toolkit.config import ConfigError, check_config, fold_params
    from toolkit.options import OptionError, check_params
    from toolkit.registry import RunConfig

    try:
        params = check_params(_kv(args.param, "--param"))
    except OptionError as exc:
        raise BadInput(str(exc)) from None
    cfg = RunConfig(backend=args.backend, time_limit=args.time_limit, mip_gap=args.mip_gap,
                    threads=args.threads, params=params,
                    options=_kv(args.option, "--option"), log_dir=args.log_dir,
                    write_model=getattr(args, "write_model", None))
    try:
        fold_params(check_config(cfg))          # the library's rules and words (toolkit.api)
    except ConfigError as exc:
        raise BadInput(exc.cli_text()) from None
    if cfg.write_model and len(args.files) > 1:
        raise BadInput(f"--write-model writes the model(s) of one run: give one FILE, "
                       f"got {len(args.files)}")
    if args.max_memory is not None:
        if not (math.isfinite(args.max_memory) and args.max_memory > 0):
            raise BadInput(f"--max-memory must be a positive number of GiB, got {args.max_memory}")
        from instances.limits import set_max_gib

        set_max_gib(args.max_memory)
    return cfg



def note(msg: str):
    """An informational line on stderr (silenced by -q): toolkit.progress.note, imported on
    the first note (it imports logging)."""
    from toolkit import progress

    progress.note(msg)


def error(msg: str):
    """The line of an error that makes the exit code nonzero: printed even with -q."""
    print(msg, file=sys.stderr)


def out_folder(path, flag: str = "--out") -> Path:
    """``--out`` as a folder (created), or BadInput when it names a file or cannot be made."""
    from toolkit.outdir import OutDirError, out_dir

    try:
        return out_dir(path, flag)
    except OutDirError as exc:
        raise BadInput(str(exc)) from None
