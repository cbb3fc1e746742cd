"""Start-up cost of the command line: time spent importing modules (issue 14, item 7).

Runs ``python -X importtime solve.py ...`` in fresh subprocesses for ``list``, ``--help``
and a heuristic solve of the 3x3 worked example (default method), five times each, and
reports the median of the summed import times (the sum of the "self" column of
``-X importtime``) and the ten modules with the largest cumulative import time in the
median run.

Run: python solve.py reproduce import-time   (writes results/import_time.md)
"""
from __future__ import annotations

import statistics
import subprocess
import sys
from pathlib import Path

import pandas as pd

from benchmarks.common import Report, headline, machine, md_table, reproduce_cmd
from toolkit.io import write_text_atomic

ROOT = Path(__file__).resolve().parent.parent
BUDGET_S = 0.5          # issue 14 item 7's target for each command
COMMANDS = {
    "list": ["solve.py", "list"],
    "--help": ["solve.py", "--help"],
    "solve worked_example (default method)": ["solve.py", "solve",
                                              "instances/examples/worked_example.json"],
}
REPEATS = 5
TOP = 10


def parse_importtime(stderr: str) -> list[tuple[str, int, int]]:
    """(module, self us, cumulative us) per line of ``-X importtime`` output, in order."""
    rows = []
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        own, cum, name = line.split("|")
        rows.append((name.strip(), int(own.split(":")[1]), int(cum)))
    return rows


def measure(argv: list[str]) -> tuple[float, list[tuple[str, int, int]]]:
    """One run: (total import seconds, rows)."""
    proc = subprocess.run([sys.executable, "-X", "importtime", *argv], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    rows = parse_importtime(proc.stderr)
    return sum(r[1] for r in rows) / 1e6, rows


def run(quick: bool = False, out_dir: Path = Path("results")) -> Report:
    table, tops = [], []
    for label, argv in COMMANDS.items():
        runs = sorted((measure(argv) for _ in range(REPEATS)), key=lambda r: r[0])
        totals = [r[0] for r in runs]
        table.append({"command": f"`python {' '.join(argv)}`",
                      "import time, median (s)": f"{statistics.median(totals):.3f}",
                      "min (s)": f"{totals[0]:.3f}", "max (s)": f"{totals[-1]:.3f}",
                      "budget (s)": f"{BUDGET_S:g}"})
        rows = runs[len(runs) // 2][1]
        tops.append((label, argv, sorted(rows, key=lambda r: -r[2])[:TOP]))
    table = pd.DataFrame(table)
    lines = ["# Import time of the command line", "",
             f"Command: `{reproduce_cmd('import-time', quick, out_dir)}` (`python -X importtime` "
             f"on each command, {REPEATS} fresh processes each, median; the budget is "
             f"{BUDGET_S:g} s).", "",
             f"Machine: {machine()}", "", md_table(table)]
    for label, argv, top in tops:
        lines += ["", f"## Top {TOP} modules by cumulative import time: `python {' '.join(argv)}`",
                  "", "| module | cumulative (ms) | self (ms) |", "|---|---|---|"]
        lines += [f"| {name} | {cum / 1e3:.1f} | {own / 1e3:.1f} |" for name, own, cum in top]
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "import_time.md"
    write_text_atomic(path, "\n".join(lines) + "\n")
    return Report([path], headline(f"Import time of the command line (median of {REPEATS} "
                                   "fresh processes; the paper has none)", table))


if __name__ == "__main__":
    from benchmarks.common import main
    main(run, __doc__)
