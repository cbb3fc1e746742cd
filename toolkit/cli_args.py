"""The command line's arguments: the ``solve.py`` parser (options given twice are bad input)
and the ``solve --method M --help`` epilog listing M's options."""
from __future__ import annotations

import argparse


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


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose single-valued options refuse a second value (_StoreOnce)."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.register("action", None, _StoreOnce)
        self.register("action", "store", _StoreOnce)

    def error(self, message):
        """A bad flag is one line on stderr, exit 2 (argparse would print the usage first)."""
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def parser(solve_epilog: str | None = None, description: str | None = None
           ) -> argparse.ArgumentParser:
    """The ``solve.py`` parser; ``description`` is its --help's first line (solve.py's
    docstring), ``solve_epilog`` closes ``solve --help`` (:func:`method_help`)."""
    ap = Parser(prog="solve.py", description=description)
    sub = ap.add_subparsers(dest="cmd", required=True, parser_class=Parser)
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
    p.add_argument("--methods", help="comma-separated (default: each problem's default method); "
                   "a variant M:OPT=V[:OPT=V] runs M with its own options as its own method row")
    _workers_args(p)
    _out_arg(p, "results/runs")
    p.add_argument("--no-progress", action="store_true")
    _solver_args(p)
    p = sub.add_parser("gap", help="gap study: a batch ranked per instance, with a report")
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("--methods", required=True,
                   help="comma-separated; each file runs those of its problem; a variant "
                   "M:OPT=V[:OPT=V] (e.g. milp:slots=2) runs M with its own options as its own "
                   "method row")
    _workers_args(p)
    p.add_argument("--format", default="table", choices=["table", "json", "csv"])
    _out_arg(p, None, "; gap adds gap.md, gap.csv, gap-summary.csv, gap.png")
    _solver_args(p)
    # its --help is the problem generator's (cmd_generate), with the parameters
    p = sub.add_parser("generate", help="write a generated instance (PROBLEM --help for params)",
                       add_help=False)
    p.add_argument("problem", nargs="?")
    p.add_argument("-o", "--output")
    p = sub.add_parser("reproduce", help="regenerate a paper table/figure into results/",
                       epilog=_targets_epilog(), formatter_class=argparse.RawDescriptionHelpFormatter,
                       description="Regenerate one paper table or figure: the files it wrote "
                                   "go to stderr, its headline table (the paper beside ours) "
                                   "to stdout.")
    p.add_argument("target", metavar="TARGET", help="one of the targets listed below")
    p.add_argument("--quick", action="store_true",
                   help="the target's shorter variant (fewer seeds, sizes or matrices), "
                        "written to results/quick/<paper>/; it never replaces a full run's report")
    p.add_argument("--out", metavar="DIR",
                   help="folder for the report, its figures and its run caches "
                        "(default results/<paper>/, e.g. results/spectra/, with --quick "
                        "results/quick/<paper>/; results/ for the shared targets)")
    _verbosity_args(ap, False)
    for p in sub.choices.values():      # global flags: before or after the subcommand
        _verbosity_args(p, argparse.SUPPRESS)
    return ap


def _targets_epilog() -> str:
    from toolkit.reproduce import target_lines

    return "\n".join(["targets (about how long on 2 cores: full run, then with --quick):",
                      *target_lines()])


def _verbosity_args(p, default) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("-v", "--verbose", action="store_true", default=default,
                   help="also stream the solvers' logs to stderr while they run")
    g.add_argument("-q", "--quiet", action="store_true", default=default,
                   help="stderr stays silent but for errors: no notes, progress or warnings")



def method_help(argv: list[str]) -> str | None:
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
