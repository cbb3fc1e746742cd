#!/usr/bin/env python3
"""OCS optimization toolkit: command line (contract in DESIGN.md; see README).

    python solve.py list
    python solve.py solve FILE... [--method M] [--backend auto|gurobi|highs] ...
    python solve.py batch PATH... [--methods M1,M2] [--workers N] [--scheduler ADDR] [--out CSV]
    python solve.py gap FILE... --methods M1,M2
    python solve.py generate PROBLEM [--param value ...] -o FILE
    python solve.py reproduce TARGET [--quick]

Exit codes: 0 ok, 2 bad input (the message names the file and field), 1 solver or
internal failure (including a solution the checker rejects), 130 interrupted (Ctrl-C: the
interrupted run's record is printed with status ``interrupted``; no further run starts).
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
from pathlib import Path

EXIT_OK, EXIT_FAIL, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130
TABLE_COLS = ("file", "name", "method", "backend", "status", "objective", "bound", "gap", "runtime_s",
              "verified")


class BadInput(Exception):
    """Command-line input error: printed as one line, exit 2."""


# Where records go. ``main`` sets it to the stdout it was given; run as a program, that is a
# private copy of file descriptor 1, and descriptor 1 itself (and Python's sys.stdout) is
# pointed at stderr, so nothing but records can reach the real stdout: not a solver banner
# printed from C, not a library's print(), not a warning (see ``_records_only_stdout``).
OUT = sys.stdout


def out(text: str = "") -> None:
    print(text, file=OUT)


def _records_only_stdout():
    """Give fd 1 to stderr and return a stream on the original stdout for the records."""
    import os

    sys.stdout.flush()
    try:
        fd = os.dup(1)
        os.dup2(2, 1)
    except OSError:              # no fd 1 (closed): records go wherever sys.stdout goes
        return sys.stdout
    stream = os.fdopen(fd, "w", encoding=sys.stdout.encoding or "utf-8",
                       errors=sys.stdout.errors or "strict", newline=None, buffering=1)
    sys.stdout = sys.stderr
    return stream


# --------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------
def _kv(items, what: str) -> dict:
    out = {}
    for it in items or []:
        if "=" not in it:
            raise BadInput(f"{what} {it!r}: expected NAME=VALUE")
        k, v = it.split("=", 1)
        out[k.strip()] = _num(v.strip())
    return out


def _num(v: str):
    for conv in (int, float):
        try:
            return conv(v)
        except ValueError:
            pass
    return v


def _config(args):
    from toolkit.registry import RunConfig

    if args.time_limit is not None and args.time_limit <= 0:
        raise BadInput(f"--time-limit must be > 0, got {args.time_limit}")
    if args.mip_gap is not None and args.mip_gap < 0:
        raise BadInput(f"--mip-gap must be >= 0, got {args.mip_gap}")
    if args.threads is not None and args.threads < 1:
        raise BadInput(f"--threads must be >= 1, got {args.threads}")
    if args.max_memory is not None:
        if not (math.isfinite(args.max_memory) and args.max_memory > 0):
            raise BadInput(f"--max-memory must be a positive number of GiB, got {args.max_memory}")
        from instances.limits import set_max_gib

        set_max_gib(args.max_memory)
    return RunConfig(backend=args.backend, time_limit=args.time_limit, mip_gap=args.mip_gap,
                     threads=args.threads, params=_kv(args.param, "--param"),
                     options=_kv(args.option, "--option"), log_dir=args.log_dir)


def _fmt(v):
    if v is None or (isinstance(v, str) and v == ""):
        return "-"
    if hasattr(v, "tolist"):            # numpy scalar or array
        v = v.tolist()
    if isinstance(v, (list, tuple, dict)):
        return json.dumps(v, separators=(",", ":"), default=str)
    if isinstance(v, str):
        try:
            v = float(v) if v.lower() not in ("nan", "true", "false") else v
        except ValueError:
            return v
    if isinstance(v, float):
        return "inf" if math.isinf(v) else f"{v:.6g}"
    return str(v)


def print_records(recs: list[dict], fmt: str, extra: list[str] | None = None, stream=None):
    """Print records as an aligned table, JSON lines, or CSV."""
    stream = stream or OUT
    if fmt == "json":
        for r in recs:
            print(json.dumps(json_safe({k: v for k, v in r.items() if k != "solution"}),
                             default=_json_default, allow_nan=False), file=stream)
        return
    if not recs:
        return
    if fmt == "csv":                # the batch CSV's columns: core fields, then the rest
        from toolkit.batch import write_csv

        write_csv(recs, stream)
        return
    cols = list(TABLE_COLS) + [c for c in (extra or []) if c not in TABLE_COLS]
    recs = _with_file(recs)
    cells = [[_fmt(r.get(c)) for c in cols] for r in recs]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
    print("  ".join(c.ljust(w) for c, w in zip(cols, widths)), file=stream)
    for row in cells:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths)), file=stream)


def _with_file(recs: list[dict]) -> list[dict]:
    """The records with a ``file`` field for the table: the instance file's name when no
    two different paths share it, else the path as given."""
    paths = {str(r.get("instance") or "") for r in recs}
    short = len({Path(p).name for p in paths}) == len(paths)
    return [{**r, "file": Path(str(r.get("instance") or "")).name if short else r.get("instance")}
            for r in recs]


def print_by_problem(recs: list[dict]) -> None:
    """One table per problem, each with that problem's metric columns."""
    groups: dict[str, list[dict]] = {}
    for r in recs:
        groups.setdefault(r.get("problem") or "?", []).append(r)
    for i, (prob, rs) in enumerate(groups.items()):
        if len(groups) > 1:
            out(("\n" if i else "") + f"== {prob} ==")
        print_records(rs, "table", _metric_cols(rs))


def json_safe(rec: dict) -> dict:
    """The record with every non-finite number replaced by null (JSON has no NaN or
    Infinity; ``json.loads`` of another language would fail), and the fields so replaced
    named in ``message``."""
    import numpy as np

    def clean(v, path, hit):
        if isinstance(v, (float, np.floating)) and not math.isfinite(float(v)):
            hit.append(f"{path}={float(v)!r}")
            return None
        if isinstance(v, dict):
            return {k: clean(x, f"{path}.{k}" if path else str(k), hit) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [clean(x, f"{path}[{i}]", hit) for i, x in enumerate(v)]
        if isinstance(v, np.ndarray):
            return clean(v.tolist(), path, hit)
        return v

    hit: list[str] = []
    out_ = clean(rec, "", hit)
    if hit:
        note = "non-finite values written as null: " + ", ".join(hit[:5]) + \
            (f" and {len(hit) - 5} more" if len(hit) > 5 else "")
        out_["message"] = f"{out_['message']}; {note}" if out_.get("message") else note
    return out_


def _json_default(o):
    import numpy as np

    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


def _metric_cols(recs):
    from toolkit.registry import problems

    cols = []
    for r in recs:
        p = problems().get(r.get("problem") or "")
        for c in (p.metrics if p else ()):
            if c not in cols and r.get(c) not in (None, ""):
                cols.append(c)
    return cols


def _note(msg: str):
    """An informational line on stderr (silenced by -q)."""
    from toolkit.progress import note

    note(msg)


def _error(msg: str):
    """The line of an error that makes the exit code nonzero: printed even with -q."""
    print(msg, file=sys.stderr)


# --------------------------------------------------------------------------------------
# subcommands
# --------------------------------------------------------------------------------------
def cmd_list(args) -> int:
    from models.backend import licence_summary
    from toolkit.registry import problems
    from toolkit.reproduce import TARGETS

    out("problems and methods:")
    for p in problems().values():
        out(f"  {p.name}: {p.summary}")
        for m in p.methods.values():
            dflt = " (default)" if m.name == p.default_method else ""
            out(f"    {m.name:<16} {m.kind:<9} {m.summary}{dflt}")
            if m.options:
                out(f"    {'':<16} {'':<9} --option {m.options}")
    out("backends:")
    for name, text in licence_summary().items():
        out(f"  {name:<7} {text}")
    out("reproduce targets (about how long on 2 cores: full run, then with --quick):")
    for t, tg in TARGETS.items():
        out(f"  {t:<18} {tg.time_text('full'):<13} {tg.time_text('quick'):<13} {tg.doc}")
    out("  ('-': no --quick variant; (est.): estimated from recorded runs, not timed)")
    return EXIT_OK


def cmd_solve(args) -> int:
    import instances
    from instances.errors import InstanceError
    from toolkit.io import write_text_atomic
    from toolkit.run import Interrupted, NotApplicable, failed, run_task

    cfg = _config(args)
    code, recs = EXIT_OK, []
    for i, f in enumerate(args.files):
        try:
            data = instances.read_json(f)
            if args.out:
                cfg.iis_path = str(Path(args.out) / f"{Path(f).stem}.iis.ilp")
            rec = run_task(data, f, args.method, cfg, want_solution=bool(args.out))
        except (InstanceError, NotApplicable) as exc:
            _error(f"error: {exc}")
            code = EXIT_BAD_INPUT
            continue
        except Interrupted as exc:      # Ctrl-C: print its record, start no further file
            rec, code = exc.record, EXIT_INTERRUPTED
            _interrupted_note(exc, len(args.files) - i - 1)
        recs.append(rec)
        if failed(rec) and code != EXIT_INTERRUPTED:
            _error(f"failure: {f} [{rec['method']}]: status {rec['status']}"
                  + (f": {rec['message']}" if rec.get("message") else ""))
            code = max(code, EXIT_FAIL) if code != EXIT_BAD_INPUT else code
        if args.out and rec.get("solution") is not None:
            path = Path(args.out) / f"{Path(f).stem}.{rec['method']}.json"
            write_text_atomic(path, json.dumps(json_safe(rec), indent=1, default=_json_default,
                                               allow_nan=False) + "\n")
        if args.format == "json":
            print_records([rec], "json")
            OUT.flush()
        if code == EXIT_INTERRUPTED:
            break
    if args.format == "table":
        print_by_problem(recs)
    elif args.format == "csv":
        print_records(recs, args.format, _metric_cols(recs))
    return code


def _interrupted_note(exc, n_left: int) -> None:
    rec = exc.record
    _error(f"interrupted: {rec['instance']} [{rec['method']}] stopped by Ctrl-C after "
          f"{rec['runtime_s']:.3g} s; its record is printed with status 'interrupted'"
          + (f"; {n_left} more run(s) not started" if n_left else ""))


def cmd_batch(args) -> int:
    from toolkit.batch import SchedulerError, run_batch
    from toolkit.run import failed

    cfg = _config(args)
    if args.workers < 1:
        raise BadInput(f"--workers must be >= 1, got {args.workers}")
    methods = _method_list(args.methods) if args.methods else None
    try:
        rep = run_batch(args.paths, methods, cfg, args.out, workers=args.workers,
                        scheduler=args.scheduler, progress=not args.no_progress)
    except SchedulerError as exc:
        raise BadInput(str(exc)) from None
    for msg in rep.bad_input:
        _error(f"skipped bad input: {msg}")
    for msg in rep.declined:
        _note(f"skipped: {msg}")
    print_by_problem(rep.rows)
    if rep.other_rows:
        _note(f"{args.out} also holds {rep.other_rows} row(s) of these files and methods made "
              f"with other settings (or before run keys); kept, told apart by run_key and "
              f"settings; the table shows this run's")
    fails = [r for r in rep.ran if failed(r)]
    _note(f"batch: {len(rep.ran)} ran, {rep.skipped_done} already in {args.out}, "
          f"{len(rep.declined)} declined, {len(rep.bad_input)} bad input, {len(fails)} failed; "
          f"results in {args.out}")
    if rep.bad_input:
        return EXIT_BAD_INPUT
    return EXIT_FAIL if fails else EXIT_OK


def _method_list(text: str) -> list[str]:
    """Comma-separated method names, each known to some problem (else bad input)."""
    from toolkit.registry import problems

    names = [m.strip() for m in text.split(",") if m.strip()]
    known = {m for p in problems().values() for m in p.methods}
    bad = [m for m in names if m not in known]
    if bad or not names:
        raise BadInput(f"--methods: unknown method(s) {', '.join(bad) or '(none given)'} "
                       f"(see `solve.py list`)")
    return names


def cmd_gap(args) -> int:
    import instances
    from instances.errors import InstanceError
    from toolkit.rank import RANK_FIELDS, rank_records
    from toolkit.run import Interrupted, NotApplicable, failed, run_task

    cfg = _config(args)
    methods = _method_list(args.methods)
    code, rows = EXIT_OK, []
    for i, f in enumerate(args.files):
        recs = []
        try:
            data = instances.read_json(f)
            for m in methods:
                recs.append(run_task(data, f, m, cfg))
        except (InstanceError, NotApplicable) as exc:
            _error(f"error: {exc}")
            code = EXIT_BAD_INPUT
            continue
        except Interrupted as exc:      # Ctrl-C: report what ran, start nothing more
            recs.append(exc.record)
            code = EXIT_INTERRUPTED
            _interrupted_note(exc, (len(args.files) - i) * len(methods) - len(recs))
        # by the problem's objective; only bounds valid for the instance (problem_bound)
        rank_records(recs)
        for r in recs:
            if failed(r) and code not in (EXIT_BAD_INPUT, EXIT_INTERRUPTED):
                code = EXIT_FAIL
        rows.extend(recs)
        if code == EXIT_INTERRUPTED:
            break
    cols = list(RANK_FIELDS)
    print_records(rows, args.format, cols)
    if args.out:
        import io

        from toolkit.batch import write_csv
        from toolkit.io import write_text_atomic

        buf = io.StringIO()
        write_csv(rows, buf)
        write_text_atomic(args.out, buf.getvalue())
        _note(f"gap study written to {args.out}")
    return code


def cmd_generate(args, rest) -> int:
    import instances
    from instances.errors import InstanceError
    from toolkit.registry import problem

    try:
        prob = problem(args.problem)
    except KeyError as exc:
        raise BadInput(str(exc.args[0]))
    if prob.generator is None:
        raise BadInput(f"problem {prob.name} has no generator")
    gp_ = argparse.ArgumentParser(prog=f"solve.py generate {prob.name}", add_help=True)
    for name, (kind, default, help_) in prob.generator.params.items():
        gp_.add_argument(f"--{name.replace('_', '-')}", dest=name, type=kind, default=default,
                         help=f"{help_} (default {default!r})")
    try:
        with contextlib.redirect_stdout(OUT):
            params = vars(gp_.parse_args(rest))
    except SystemExit as exc:
        return EXIT_OK if exc.code == 0 else EXIT_BAD_INPUT
    try:
        inst = prob.generator.run(**params)
    except InstanceError as exc:
        raise BadInput(f"generate {prob.name}: {exc}")
    instances.save_instance(inst, args.output)
    _note(f"wrote {args.output} ({inst.name})")
    return EXIT_OK


def cmd_reproduce(args) -> int:
    from toolkit.reproduce import run_target

    try:
        written = run_target(args.target, quick=args.quick, out_dir=Path(args.out_dir))
    except KeyError as exc:
        raise BadInput(str(exc.args[0]))
    for p in written:
        out(str(p))
    return EXIT_OK


# --------------------------------------------------------------------------------------
def _solver_args(p):
    p.add_argument("--backend", default="auto", choices=["auto", "gurobi", "highs"])
    p.add_argument("--time-limit", type=float, help="seconds, per solve")
    p.add_argument("--mip-gap", type=float, help="relative MIP gap")
    p.add_argument("--threads", type=int)
    p.add_argument("--param", action="append", metavar="NAME=VALUE",
                   help="Gurobi parameter (mapped to a HiGHS option where one exists)")
    p.add_argument("--option", action="append", metavar="KEY=VALUE",
                   help="method option (see `solve.py list`)")
    p.add_argument("--log-dir", help="write each solver log to DIR/<instance>.<method>.log")
    p.add_argument("--max-memory", type=float, metavar="GIB",
                   help="refuse instances estimated to need more memory than this "
                        "(default 4 GiB, or OCS_MAX_MEMORY_GB)")


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="solve.py", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list", help="problems, methods, backends, reproduce targets")
    p = sub.add_parser("solve", help="solve instance files")
    p.add_argument("files", nargs="+")
    p.add_argument("--method")
    _solver_args(p)
    p.add_argument("--out", help="folder for solution files (<instance>.<method>.json)")
    p.add_argument("--format", default="table", choices=["table", "json", "csv"])
    p = sub.add_parser("batch", help="resumable batch over files/folders")
    p.add_argument("paths", nargs="+")
    p.add_argument("--methods", help="comma-separated (default: each problem's default method)")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--scheduler", help="Dask distributed scheduler address (tcp://host:8786)")
    p.add_argument("--out", default="results/runs.csv")
    p.add_argument("--no-progress", action="store_true")
    _solver_args(p)
    p = sub.add_parser("gap", help="solver-vs-heuristic gap study")
    p.add_argument("files", nargs="+")
    p.add_argument("--methods", required=True)
    p.add_argument("--format", default="table", choices=["table", "json", "csv"])
    p.add_argument("--out", help="CSV file for the study")
    _solver_args(p)
    p = sub.add_parser("generate", help="write a generated instance (PROBLEM --help for params)")
    p.add_argument("problem")
    p.add_argument("-o", "--output", required=True)
    p = sub.add_parser("reproduce", help="regenerate a paper table/figure into results/")
    p.add_argument("target")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--out-dir", default="results")
    _verbosity_args(ap, False)
    for p in sub.choices.values():      # global flags: before or after the subcommand
        _verbosity_args(p, argparse.SUPPRESS)
    return ap


def _verbosity_args(p, default) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("-v", "--verbose", action="store_true", default=default,
                   help="also stream the solvers' logs to stderr while they run")
    g.add_argument("-q", "--quiet", action="store_true", default=default,
                   help="stderr stays silent but for errors: no notes, progress or warnings")


def main(argv=None, out_stream=None) -> int:
    """Run the command line; records go to ``out_stream`` (default: sys.stdout now)."""
    global OUT
    OUT = out_stream or sys.stdout
    argv = sys.argv[1:] if argv is None else argv
    ap = parser()
    with contextlib.redirect_stdout(OUT):     # --help is what the user asked for
        args, rest = ap.parse_known_args(argv)
    if rest and args.cmd != "generate":
        ap.error(f"unrecognized arguments: {' '.join(rest)}")
    if args.verbose and args.quiet:
        ap.error("argument -q/--quiet: not allowed with argument -v/--verbose")
    from toolkit.progress import NORMAL, QUIET, VERBOSE, verbosity

    with verbosity(QUIET if args.quiet else VERBOSE if args.verbose else NORMAL):
        return _run(args, rest)


def _run(args, rest) -> int:
    try:
        if args.cmd == "generate":
            return cmd_generate(args, rest)
        return {"list": cmd_list, "solve": cmd_solve, "batch": cmd_batch, "gap": cmd_gap,
                "reproduce": cmd_reproduce}[args.cmd](args)
    except BadInput as exc:
        _error(f"error: {exc}")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        _error(f"interrupted (Ctrl-C) during `{args.cmd}`"
               + ("; finished rows are in the CSV: rerun the same command to resume"
                  if args.cmd == "batch" else ""))
        return EXIT_INTERRUPTED


def cli() -> None:
    """Program entry point: records alone on stdout, everything else on stderr."""
    sys.exit(main(out_stream=_records_only_stdout()))


if __name__ == "__main__":
    cli()
