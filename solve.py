#!/usr/bin/env python3
"""OCS optimization toolkit: command line (contract in DESIGN.md; see README).

    python solve.py list
    python solve.py solve FILE... [--method M] [--backend auto|gurobi|highs] ...
    python solve.py batch PATH... [--methods M1,M2] [--workers N] [--scheduler ADDR] [--out DIR]
    python solve.py gap PATH... --methods M1,M2 [--workers N] [--out DIR]
    python solve.py generate PROBLEM [--param value ...] -o FILE
    python solve.py reproduce TARGET [--quick] [--out DIR]

Exit codes: 0 ok, 2 bad input (the message names the file and field), 1 solver or
internal failure (including a solution the checker rejects), 130 interrupted (Ctrl-C: the
interrupted run's record is printed with status ``interrupted``; no further run starts).
"""
from __future__ import annotations

import contextlib
import sys
from pathlib import Path

from toolkit import records_out
from toolkit.cli_args import method_help, parser
from toolkit.cli_common import (EXIT_BAD_INPUT, EXIT_FAIL, EXIT_INTERRUPTED, EXIT_OK,
                                BadInput, error, note, out_folder, run_config)
from toolkit.cli_generate import cmd_generate, cmd_reproduce
from toolkit.outdir import json_safe  # noqa: F401 - records as JSON (solve.json_safe)
from toolkit.records_out import metric_cols, out, print_by_problem, print_records
from toolkit.records_out import records_only_stdout as _records_only_stdout

# --------------------------------------------------------------------------------------
# subcommands
# --------------------------------------------------------------------------------------
def cmd_list(args) -> int:
    from models.backend import licence_summary
    from toolkit.budget import DEFAULT_TIME_LIMIT
    from toolkit.options import option_lines
    from toolkit.registry import problems
    from toolkit.reproduce import target_lines

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
    for line in target_lines():
        out(line)
    return EXIT_OK


def cmd_solve(args) -> int:
    status = [EXIT_OK]                  # the exit code so far, kept if the reader goes
    try:
        return _solve_files(args, status)
    except StdoutError as exc:
        exc.code = status[0]
        raise


def _solve_files(args, status: list[int]) -> int:
    """cmd_solve's work; ``status[0]`` follows its exit code as files fail."""
    import instances
    from instances.errors import InstanceError
    from toolkit.run import Interrupted, NotApplicable, failed, run_task

    cfg = run_config(args)
    folder = out_folder(args.out) if args.out is not None else None
    if folder:                      # a records.csv to add rows to: readable, before any run
        from toolkit.batch import RecordsError
        from toolkit.outdir import RECORDS_CSV
        from toolkit.records_csv import CsvSink

        try:
            CsvSink(folder / RECORDS_CSV)
        except RecordsError as exc:
            raise BadInput(str(exc)) from None
    code, recs = EXIT_OK, []
    for i, f in enumerate(args.files):
        try:
            data = instances.read_json(f)
            if folder:
                from toolkit.outdir import iis_path

                cfg.iis_path = str(iis_path(folder, f, _method_name(data, args.method)))
            rec = run_task(data, f, args.method, cfg, want_solution=bool(folder))
        except (InstanceError, NotApplicable) as exc:
            error(f"error: {exc}")
            code = status[0] = EXIT_BAD_INPUT
            continue
        except Interrupted as exc:      # Ctrl-C: print its record, start no further file
            rec, code = exc.record, EXIT_INTERRUPTED
            _interrupted_note(exc, len(args.files) - i - 1)
        recs.append(rec)
        if failed(rec) and code != EXIT_INTERRUPTED:
            error(f"failure: {f} [{rec['method']}]: status {rec['status']}"
                  + (f": {rec['message']}" if rec.get("message") else ""))
            code = max(code, EXIT_FAIL) if code != EXIT_BAD_INPUT else code
        status[0] = code
        if folder:
            _keep(folder, f, rec, cfg)
        if args.format == "json":
            print_records([rec], "json")
            records_out.OUT.flush()
        if code == EXIT_INTERRUPTED:
            break
    if args.format == "table":
        print_by_problem(recs)
    elif args.format == "csv":
        print_records(recs, args.format, metric_cols(recs))
    return code


def _method_name(data: dict, method: str | None) -> str:
    """The method a solve will run (``--method`` or the problem's default)."""
    from toolkit.registry import problem

    try:
        return problem(data["problem"]).default_method if method is None else method
    except (KeyError, TypeError):        # run_task reports the bad file
        return "default"


def _keep(folder: Path, f: str, rec: dict, cfg) -> None:
    """A solve's run in the --out folder: its row in records.csv (keyed as batch keys it,
    so a batch into the folder skips it), its record and solution as JSON."""
    from toolkit.batch import file_digest, run_key
    from toolkit.outdir import RECORDS_CSV, write_solution
    from toolkit.records_csv import CsvSink
    from toolkit.registry import problem

    write_solution(folder, rec)
    declared = {o.name for o in problem(rec["problem"]).methods[rec["method"]].options}
    CsvSink(folder / RECORDS_CSV).append(
        {**rec, **run_key(Path(f), file_digest(Path(f)), rec["method"], cfg, folder, declared)})


def _interrupted_note(exc, n_left: int) -> None:
    rec = exc.record
    error(f"interrupted: {rec['instance']} [{rec['method']}] stopped by Ctrl-C after "
          f"{rec['runtime_s']:.3g} s; its record is printed with status 'interrupted'"
          + (f"; {n_left} more run(s) not started" if n_left else ""))


def cmd_batch(args) -> int:
    from toolkit.run import failed

    rep, where = _run_batch(args, _method_list(args.methods) if args.methods else None,
                            progress=not args.no_progress)
    fails = [r for r in rep.ran if failed(r)]
    code = EXIT_BAD_INPUT if rep.bad_input else EXIT_FAIL if fails else EXIT_OK
    _records(code, print_by_problem, rep.rows)
    if rep.other_rows:
        note(f"{where} also holds {rep.other_rows} row(s) of these files and methods made "
              f"with other settings (or before run keys); kept, told apart by run_key and "
              f"settings; the table shows this run's")
    note(f"batch: {len(rep.ran)} ran, {rep.skipped_done} already in {where}, "
          f"{len(rep.declined)} declined, {len(rep.bad_input)} bad input, {len(fails)} failed; "
          f"results in {args.out}")
    return code


def _records(code: int, print_fn, *args, **kw) -> None:
    """``print_fn(*args, **kw)`` onto the records' stream; if the reader has gone, the
    command still exits with ``code``, its exit code with every record written."""
    try:
        print_fn(*args, **kw)
    except StdoutError as exc:
        exc.code = code
        raise


def _run_batch(args, methods, progress: bool):
    """The batch of ``args`` (batch or gap) into its --out folder (none: in memory);
    returns the BatchReport and where the records are. Declines and bad files go to stderr."""
    from toolkit.batch import RecordsError, SchedulerError, run_batch
    from toolkit.heap import keep_freed_memory
    from toolkit.options import MAX_WORKERS, OptionError
    from toolkit.outdir import RECORDS_CSV

    cfg = run_config(args)
    if not 1 <= args.workers <= MAX_WORKERS:
        raise BadInput(f"--workers must be in 1..{MAX_WORKERS}, got {args.workers}")
    folder = out_folder(args.out) if args.out is not None else None
    csv_path = folder / RECORDS_CSV if folder else None
    # this process is the CLI's own: the tasks' arrays keep their pages (toolkit.heap); an
    # API caller's process is left as it is unless it calls keep_freed_memory itself
    keep_freed_memory()
    try:
        rep = run_batch(args.paths, methods, cfg, csv_path, workers=args.workers,
                        scheduler=args.scheduler, progress=progress, solutions=folder)
    except (SchedulerError, OptionError, RecordsError) as exc:   # before any run
        raise BadInput(str(exc)) from None
    for msg in rep.bad_input:
        error(f"skipped bad input: {msg}")
    for msg in rep.declined:
        note(f"skipped: {msg}")
    return rep, csv_path


def _method_list(text: str) -> list[str]:
    """Comma-separated method names or variants (``milp:slots=2``, toolkit.variants), each
    of a method known to some problem, with options it declares (else bad input)."""
    from toolkit.variants import VariantError, parse_variants

    try:
        return [v.label for v in parse_variants(text)]
    except VariantError as exc:
        raise BadInput(f"--methods: {exc}") from None


def cmd_gap(args) -> int:
    """A batch of every file with every method that applies to its problem, ranked per
    instance; with --out, also the report (toolkit.gap_write) in that folder."""
    from toolkit.batch import KEY_FIELDS
    from toolkit.gap_report import rank_by_instance
    from toolkit.gap_write import write_report
    from toolkit.outdir import from_row
    from toolkit.rank import RANK_FIELDS
    from toolkit.run import failed

    rep, where = _run_batch(args, _method_list(args.methods), progress=True)
    recs = rank_by_instance([from_row(r) for r in rep.file_rows])
    fails = [r for r in map(from_row, rep.rows) if failed(r)]
    code = EXIT_BAD_INPUT if rep.bad_input else EXIT_FAIL if fails else EXIT_OK
    if args.out is not None and recs:               # before the records: a reader that goes early
        written = write_report(recs, args.out)     # must not cost the report
        note(f"gap report: {', '.join(map(str, written))}; records in {where}")
    _records(code, print_records, [{k: v for k, v in r.items() if k not in KEY_FIELDS}
                                   for r in recs], args.format, list(RANK_FIELDS))
    earlier = len(rep.file_rows) - len(rep.rows)
    note(f"gap: {len(rep.ran)} ran" + (f", {rep.skipped_done} already in {where}" if where
                                         else "")
          + f", {len(rep.declined)} declined, {len(rep.bad_input)} bad input, "
            f"{len(fails)} failed" + (f"; ranked with {earlier} earlier row(s) of these files "
                                      f"(other methods or variants) from {where}" if earlier
                                      else ""))
    return code


def main(argv=None, out_stream=None) -> int:
    """Run the command line; records go to ``out_stream`` (default: sys.stdout now)."""
    records_out.OUT = out_stream or sys.stdout
    argv = sys.argv[1:] if argv is None else argv
    ap = parser(method_help(argv), __doc__.split("\n\n")[0])
    with contextlib.redirect_stdout(records_out.OUT):     # --help is what the user asked for
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
        error(f"error: {exc}")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        error(f"interrupted (Ctrl-C) during `{args.cmd}`"
               + (f"; finished rows are in {args.out}/records.csv: rerun the same command "
                  f"to resume" if args.cmd in ("batch", "gap") and args.out else ""))
        return EXIT_INTERRUPTED


class StdoutError(Exception):
    """Writing the records to stdout failed (the reader closed the pipe, a full disk);
    ``code``: the command's exit code at that point (a failure or bad input seen before)."""

    code = EXIT_OK


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
    that closes the pipe early (``| head -1``) has taken what it wanted: nothing more on
    stderr, and the exit code of what ran until then (0, or 1 / 2 if a run failed or a
    file was bad input; a toolkit decision, the shell's SIGPIPE convention would be 141). Any other
    failed write of the records (a full disk) is one line and exit 1."""
    import os

    from toolkit.threads import one_blas_thread

    one_blas_thread()       # before anything imports numpy (toolkit.threads)
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
            code = exc.code             # what the command had come to when the reader went
        else:
            error(f"error: cannot write the records to stdout: {cause.strerror or cause}")
            code = EXIT_FAIL
    sys.exit(code)


if __name__ == "__main__":
    cli()
