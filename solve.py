#!/usr/bin/env python3
"""OCS optimization toolkit: command line (contract in DESIGN.md; see README).

    python solve.py list
    python solve.py solve FILE... [--method M] [--backend auto|gurobi|highs] ...
    python solve.py batch PATH... [--methods M1,M2] [--workers N] [--scheduler ADDR] [--out DIR]
    python solve.py gap PATH... --methods M1,M2 [--workers N] [--out DIR]
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

from toolkit.outdir import json_default as _json_default
from toolkit.outdir import json_safe  # noqa: F401 - records as JSON (solve.json_safe)

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


def _config(args):
    from toolkit.config import ConfigError, check_config
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
        check_config(cfg)                       # the library's rules and words (toolkit.api)
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
    from toolkit.io import short_names

    names = short_names(str(r.get("instance") or "") for r in recs)
    return [{**r, "file": names[str(r.get("instance") or "")]} for r in recs]


def print_by_problem(recs: list[dict]) -> None:
    """One table per problem, each with that problem's metric columns."""
    groups: dict[str, list[dict]] = {}
    for r in recs:
        groups.setdefault(r.get("problem") or "?", []).append(r)
    for i, (prob, rs) in enumerate(groups.items()):
        if len(groups) > 1:
            out(("\n" if i else "") + f"== {prob} ==")
        print_records(rs, "table", _metric_cols(rs))


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
    from toolkit.budget import DEFAULT_TIME_LIMIT
    from toolkit.options import option_lines
    from toolkit.registry import problems
    from toolkit.reproduce import TARGETS

    out("problems and methods:")
    out(f"  (under each method its --option NAME=VALUE: name (type, default, range): help; "
        f"--time-limit S is the whole run's budget, default {DEFAULT_TIME_LIMIT:g} s for model "
        f"methods, none for heuristics)")
    for p in problems().values():
        out(f"  {p.name}: {p.summary}")
        for m in p.methods.values():
            dflt = " (default)" if m.name == p.default_method else ""
            out(f"    {m.name:<16} {m.kind:<9} {m.summary}{dflt}")
            for line in option_lines(m):
                out(f"    {'':<16} {'':<9}   {line}")
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
    from toolkit.run import Interrupted, NotApplicable, failed, run_task

    cfg = _config(args)
    folder = _out_folder(args.out) if args.out else None
    code, recs = EXIT_OK, []
    for i, f in enumerate(args.files):
        try:
            data = instances.read_json(f)
            if folder:
                from toolkit.outdir import iis_path

                cfg.iis_path = str(iis_path(folder, f, _method_name(data, args.method)))
            rec = run_task(data, f, args.method, cfg, want_solution=bool(folder))
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
        if folder:
            _keep(folder, f, rec, cfg)
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


def _out_folder(path, flag: str = "--out") -> Path:
    """``--out`` as a folder (created), or BadInput when it names a file or cannot be made."""
    from toolkit.outdir import OutDirError, out_dir

    try:
        return out_dir(path, flag)
    except OutDirError as exc:
        raise BadInput(str(exc)) from None


def _method_name(data: dict, method: str | None) -> str:
    """The method a solve will run (``--method`` or the problem's default)."""
    from toolkit.registry import problem

    try:
        return method or problem(data["problem"]).default_method
    except (KeyError, TypeError):        # run_task reports the bad file
        return "default"


def _keep(folder: Path, f: str, rec: dict, cfg) -> None:
    """A solve's run in the --out folder: its row in records.csv (keyed as batch keys it,
    so a batch into the folder skips it), its record and solution as JSON."""
    from toolkit.batch import CsvSink, file_digest, run_key
    from toolkit.outdir import RECORDS_CSV, write_solution

    write_solution(folder, rec)
    CsvSink(folder / RECORDS_CSV).append(
        {**rec, **run_key(Path(f), file_digest(Path(f)), rec["method"], cfg, folder)})


def _interrupted_note(exc, n_left: int) -> None:
    rec = exc.record
    _error(f"interrupted: {rec['instance']} [{rec['method']}] stopped by Ctrl-C after "
          f"{rec['runtime_s']:.3g} s; its record is printed with status 'interrupted'"
          + (f"; {n_left} more run(s) not started" if n_left else ""))


def cmd_batch(args) -> int:
    from toolkit.run import failed

    rep, where = _run_batch(args, _method_list(args.methods) if args.methods else None,
                            progress=not args.no_progress)
    print_by_problem(rep.rows)
    if rep.other_rows:
        _note(f"{where} also holds {rep.other_rows} row(s) of these files and methods made "
              f"with other settings (or before run keys); kept, told apart by run_key and "
              f"settings; the table shows this run's")
    fails = [r for r in rep.ran if failed(r)]
    _note(f"batch: {len(rep.ran)} ran, {rep.skipped_done} already in {where}, "
          f"{len(rep.declined)} declined, {len(rep.bad_input)} bad input, {len(fails)} failed; "
          f"results in {args.out}")
    if rep.bad_input:
        return EXIT_BAD_INPUT
    return EXIT_FAIL if fails else EXIT_OK


def _run_batch(args, methods, progress: bool):
    """The batch of ``args`` (batch or gap) into its --out folder (none: in memory);
    returns the BatchReport and where the records are. Declines and bad files go to stderr."""
    from toolkit.batch import SchedulerError, run_batch
    from toolkit.options import MAX_WORKERS, OptionError
    from toolkit.outdir import RECORDS_CSV

    cfg = _config(args)
    if not 1 <= args.workers <= MAX_WORKERS:
        raise BadInput(f"--workers must be in 1..{MAX_WORKERS}, got {args.workers}")
    folder = _out_folder(args.out) if args.out else None
    csv_path = folder / RECORDS_CSV if folder else None
    try:
        rep = run_batch(args.paths, methods, cfg, csv_path, workers=args.workers,
                        scheduler=args.scheduler, progress=progress, solutions=folder)
    except (SchedulerError, OptionError) as exc:   # bad --option: before any run
        raise BadInput(str(exc)) from None
    for msg in rep.bad_input:
        _error(f"skipped bad input: {msg}")
    for msg in rep.declined:
        _note(f"skipped: {msg}")
    return rep, csv_path


def _method_list(text: str) -> list[str]:
    """Comma-separated method names, each known to some problem (else bad input)."""
    from toolkit.registry import method_names

    names, bad = method_names(text)
    if bad or not names:
        raise BadInput(f"--methods: unknown method(s) {', '.join(bad) or '(none given)'} "
                       f"(see `solve.py list`)")
    return names


def cmd_gap(args) -> int:
    """A batch of every file with every method that applies to its problem, ranked per
    instance; with --out, also the report (toolkit.gap_report) in that folder."""
    from toolkit.batch import KEY_FIELDS
    from toolkit.gap_report import rank_by_instance, write_report
    from toolkit.outdir import from_row
    from toolkit.rank import RANK_FIELDS
    from toolkit.run import failed

    rep, where = _run_batch(args, _method_list(args.methods), progress=True)
    recs = rank_by_instance([from_row(r) for r in rep.rows])
    print_records([{k: v for k, v in r.items() if k not in KEY_FIELDS} for r in recs],
                  args.format, list(RANK_FIELDS))
    fails = [r for r in recs if failed(r)]
    _note(f"gap: {len(rep.ran)} ran" + (f", {rep.skipped_done} already in {where}" if where
                                         else "")
          + f", {len(rep.declined)} declined, {len(rep.bad_input)} bad input, "
            f"{len(fails)} failed")
    if args.out and recs:
        written = write_report(recs, args.out)
        _note(f"gap report: {', '.join(map(str, written))}; records in {where}")
    if rep.bad_input:
        return EXIT_BAD_INPUT
    return EXIT_FAIL if fails else EXIT_OK


def cmd_generate(args, rest) -> int:
    import instances
    from instances.errors import InstanceError
    from toolkit.registry import problem, problems

    if args.problem is None:
        names = ", ".join(problems())
        if {"-h", "--help"} & set(rest):
            out(f"usage: solve.py generate PROBLEM -o FILE [--PARAM VALUE ...]\n"
                f"PROBLEM: {names}; `solve.py generate PROBLEM --help` lists its parameters")
            return EXIT_OK
        raise BadInput(f"generate: PROBLEM is required (one of {names})")
    try:
        prob = problem(args.problem)
    except KeyError as exc:
        raise BadInput(str(exc.args[0]))
    if prob.generator is None:
        raise BadInput(f"problem {prob.name} has no generator")
    gp_ = _Parser(prog=f"solve.py generate {prob.name}", add_help=True)
    gp_.add_argument("-o", "--output", metavar="FILE", help="instance file to write (required)")
    for name, (kind, default, help_) in prob.generator.params.items():
        gp_.add_argument(f"--{name.replace('_', '-')}", dest=name, type=kind, default=default,
                         metavar=kind.__name__.upper(),
                         help=f"{help_} ({kind.__name__}, default {default!r})")
    try:
        with contextlib.redirect_stdout(OUT):
            params = vars(gp_.parse_args(rest))
    except SystemExit as exc:
        return EXIT_OK if exc.code == 0 else EXIT_BAD_INPUT
    params.pop("output")
    if not args.output:
        raise BadInput(f"generate {prob.name}: -o FILE is required")
    _out_folder(Path(args.output).parent, f"-o {args.output}: folder")
    try:
        inst = prob.generator.run(**params)
        instances.from_dict(inst.to_dict())     # never write a file that solve would refuse
    except InstanceError as exc:
        raise BadInput(f"generate {prob.name}: {exc}")
    try:
        instances.save_instance(inst, args.output)
    except OSError as exc:
        raise BadInput(f"-o {args.output}: cannot write ({exc.strerror or exc})") from None
    _note(f"wrote {args.output} ({inst.name})")
    return EXIT_OK


def cmd_reproduce(args) -> int:
    from toolkit.reproduce import TARGETS, run_target

    if args.target in TARGETS:
        _out_folder(args.out_dir, "--out-dir")
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
    p.add_argument("--time-limit", type=float,
                   help="seconds: the wall-clock budget of the whole method run, however the "
                        "method splits it (default: 600 s for model methods, none for heuristics)")
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


def _out_arg(p, default: str | None, more: str = "") -> None:
    p.add_argument("--out", default=default, metavar="DIR",
                   help="folder: DIR/records.csv (one row per run, resumable) and "
                        "DIR/<stem>-<path hash>.<method>.json (record and solution)" + more
                        + (f" (default {default})" if default else ""))


def _workers_args(p) -> None:
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--scheduler", help="Dask distributed scheduler address (tcp://host:8786)")


class _StoreOnce(argparse._StoreAction):
    """A single-valued option given twice is bad input, not "the last one wins"."""

    def __call__(self, parser, namespace, values, option_string=None):
        seen = parser.__dict__.setdefault("_given", set())     # a parser parses once
        if option_string is not None and self.dest in seen:   # (positionals may re-store)
            parser.error(f"argument {option_string}: given more than once")
        seen.add(self.dest)
        super().__call__(parser, namespace, values, option_string)


class _Parser(argparse.ArgumentParser):
    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.register("action", None, _StoreOnce)
        self.register("action", "store", _StoreOnce)

    def error(self, message):
        """A bad flag is one line on stderr, exit 2 (argparse would print the usage first)."""
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def parser(solve_epilog: str | None = None) -> argparse.ArgumentParser:
    ap = _Parser(prog="solve.py", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True, parser_class=_Parser)
    sub.add_parser("list", help="problems, methods and their options, backends, reproduce targets")
    p = sub.add_parser("solve", help="solve instance files", epilog=solve_epilog,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+")
    p.add_argument("--method")
    _solver_args(p)
    p.add_argument("--write-model", metavar="FILE.mps|.lp",
                   help="write the model a model method solves (several: FILE.1, FILE.2, ...)")
    _out_arg(p, None)
    p.add_argument("--format", default="table", choices=["table", "json", "csv"])
    p = sub.add_parser("batch", help="resumable batch over files/folders")
    p.add_argument("paths", nargs="+")
    p.add_argument("--methods", help="comma-separated (default: each problem's default method)")
    _workers_args(p)
    _out_arg(p, "results/runs")
    p.add_argument("--no-progress", action="store_true")
    _solver_args(p)
    p = sub.add_parser("gap", help="gap study: a batch ranked per instance, with a report")
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("--methods", required=True,
                   help="comma-separated; each file runs those of its problem")
    _workers_args(p)
    p.add_argument("--format", default="table", choices=["table", "json", "csv"])
    _out_arg(p, None, "; gap adds gap.md, gap.csv, gap-summary.csv, gap.png")
    _solver_args(p)
    # its --help is the problem generator's (cmd_generate), with the parameters
    p = sub.add_parser("generate", help="write a generated instance (PROBLEM --help for params)",
                       add_help=False)
    p.add_argument("problem", nargs="?")
    p.add_argument("-o", "--output")
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
    ap = parser(_method_help(argv))
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
               + (f"; finished rows are in {args.out}/records.csv: rerun the same command "
                  f"to resume" if args.cmd in ("batch", "gap") and args.out else ""))
        return EXIT_INTERRUPTED


def _method_help(argv: list[str]) -> str | None:
    """For ``solve --method M --help``: M's options, printed after the usual help."""
    if not argv or argv[0] != "solve" or not {"-h", "--help"} & set(argv):
        return None
    names = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--method"]
    names += [a.split("=", 1)[1] for a in argv if a.startswith("--method=")]
    if not names:
        return "method options: see `solve.py list` or `solve.py solve --method M --help`"
    from toolkit.options import option_lines
    from toolkit.registry import problems

    lines = []
    for p in problems().values():
        if names[-1] in p.methods:
            m = p.methods[names[-1]]
            opts = option_lines(m) or ["(none)"]
            lines += [f"--option NAME=VALUE of method {m.name} ({p.name}, {m.kind}):"] + \
                [f"  {line}" for line in opts]
    return "\n".join(lines) or f"method {names[-1]!r}: unknown (see `solve.py list`)"


class StdoutError(Exception):
    """Writing the records to stdout failed (the reader closed the pipe, a full disk)."""


class _RecordStream:
    """The records' stream; a failed write raises StdoutError, so that it is told apart
    from every other OSError of a run."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text):
        try:
            return self.stream.write(text)
        except OSError as exc:
            raise StdoutError(exc) from None

    def flush(self):
        try:
            self.stream.flush()
        except OSError as exc:
            raise StdoutError(exc) from None

    def __getattr__(self, name):
        return getattr(self.stream, name)


def cli() -> None:
    """Program entry point: records alone on stdout, everything else on stderr. A reader
    that closes the pipe early (``| head -1``) has taken what it wanted: exit 0, nothing on
    stderr (a toolkit decision; the shell's SIGPIPE convention would be 141). Any other
    failed write of the records (a full disk) is one line and exit 1."""
    import os

    stream = _RecordStream(_records_only_stdout())
    try:
        code = main(out_stream=stream)
        stream.flush()
    except StdoutError as exc:
        try:                             # the records' fd goes nowhere: no flush at exit fails
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, stream.fileno())
        except (OSError, ValueError):
            pass
        cause = exc.args[0]
        if isinstance(cause, BrokenPipeError):
            code = EXIT_OK
        else:
            _error(f"error: cannot write the records to stdout: {cause.strerror or cause}")
            code = EXIT_FAIL
    sys.exit(code)


if __name__ == "__main__":
    cli()
