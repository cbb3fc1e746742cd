"""The command line's ``generate`` and ``reproduce`` subcommands (solve.py): an instance
file from a problem's generator, and a paper's table or figure from its reproduce target."""
from __future__ import annotations

import contextlib
from pathlib import Path

from toolkit import records_out
from toolkit.cli_args import Parser
from toolkit.cli_common import EXIT_BAD_INPUT, EXIT_OK, BadInput, note, out_folder
from toolkit.records_out import out


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
    gp_ = Parser(prog=f"solve.py generate {prob.name}", add_help=True)
    gp_.add_argument("-o", "--output", metavar="FILE", help="instance file to write (required)")
    for name, (kind, default, help_) in prob.generator.params.items():
        if kind is bool:        # a flag: present = True
            gp_.add_argument(f"--{name.replace('_', '-')}", dest=name, action="store_true",
                             default=default, help=help_)
            continue
        gp_.add_argument(f"--{name.replace('_', '-')}", dest=name, type=kind, default=default,
                         metavar=kind.__name__.upper(),
                         help=f"{help_} ({kind.__name__}, default {default!r})")
    try:
        with contextlib.redirect_stdout(records_out.OUT):
            params = vars(gp_.parse_args(rest))
    except SystemExit as exc:
        return EXIT_OK if exc.code == 0 else EXIT_BAD_INPUT
    params.pop("output")
    if not args.output:
        raise BadInput(f"generate {prob.name}: -o FILE is required")
    out_folder(Path(args.output).parent, f"-o {args.output}: folder")
    try:
        inst = prob.generator.run(**params)
        instances.from_dict(inst.to_dict())     # never write a file that solve would refuse
    except InstanceError as exc:
        raise BadInput(f"generate {prob.name}: {exc}")
    try:
        instances.save_instance(inst, args.output)
    except OSError as exc:
        raise BadInput(f"-o {args.output}: cannot write ({exc.strerror or exc})") from None
    note(f"wrote {args.output} ({inst.name})")
    return EXIT_OK


def cmd_reproduce(args) -> int:
    """Run one target: the files it wrote on stderr, then its headline table on stdout."""
    from toolkit.reproduce import TARGETS, ReproduceError, default_out, run_target

    if args.target not in TARGETS:
        raise BadInput(f"unknown reproduce target {args.target!r} (known: {', '.join(TARGETS)})")
    folder = out_folder(default_out(args.quick, args.target) if args.out is None else args.out)
    try:
        report = run_target(args.target, quick=args.quick, out_dir=folder)
    except ReproduceError as exc:
        raise BadInput(str(exc)) from None
    for p in report:
        note(f"wrote {p}")
    out(report.headline)
    return EXIT_OK
