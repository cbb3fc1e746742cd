"""``--time-limit`` is the budget of the whole run (issue 28, item 4): wall times under load.

Each case runs ``python solve.py solve FILE --method M --time-limit L --format json`` in a
fresh process while two busy processes (Python busy loops, started here and
stopped at the end) load the machine, and reads the record. A run ends in time when its
``elapsed_s`` (the record's time on the budget's clock: loading, compiling, building,
solving and the final check) is at most L + max(2 s, 10% of L); the process wall time
(``wall_s``), which adds the interpreter's and the command line's start-up and the output,
is reported beside it. Cases: every model method and every heuristic with a clock guard
(delta-fast's GA, the ITV heuristics, realize, the lumos-sim strategies) on a large shipped
or generated instance with a short limit, the three cases of the issue (spectra ``milp``
on the n = 100 benchmark instance with ``max_vars`` raised, ``delta-joint-hotstart`` on a
Table I workload at 120 s, ``simulate`` on the shipped sim instance at 20 s, warm and with
an empty numba cache), and heuristics without a clock guard given a limit they cannot meet
(the watchdog stops them).

Run: python solve.py reproduce time-limit [--quick]   (writes time_limit.md / .csv)
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from benchmarks.common import headline, machine, md_table, reproduce_cmd, write_report

ROOT = Path(__file__).resolve().parent.parent
BUSY = 2                       # busy processes beside each run
# a busy loop that ends with this process (killed or not)
SPIN = "import os\nppid = os.getppid()\nwhile os.getppid() == ppid:\n    pass"


@dataclass(frozen=True)
class Case:
    problem: str
    method: str
    source: str | dict           # a shipped file (relative to the repo) or generator params
    limit: float
    options: tuple = ()          # --option KEY=VALUE
    cold: bool = False           # an empty numba cache (NUMBA_CACHE_DIR)
    note: str = ""
    quick: bool = False          # also in --quick
    env: dict = field(default_factory=dict)

    @property
    def label(self) -> str:
        src = Path(self.source).stem if isinstance(self.source, str) else \
            ",".join(f"{k}={v}" for k, v in self.source.items())
        return f"{self.method} {src}" + (f" ({', '.join(self.options)})" if self.options else "") \
            + (" cold cache" if self.cold else "")


EX, DELTA, LUMOS = "instances/examples", "instances/delta", "instances/lumos"
BIG_SPECTRA = {"workload": "benchmark", "n": 1000, "m": 32, "switches": 8, "seed": 1}
CASES = [
    # the issue's three cases
    Case("spectra", "milp", f"{EX}/bench_n100_s4_d0.04.json", 5, ("max_vars=100000000",),
         note="issue: 19.9 s", quick=True),
    Case("delta", "delta-joint-hotstart", f"{DELTA}/deepseek-671b.json", 120,
         note="issue: 237-249 s at load 10"),
    Case("lumos-sim", "simulate", f"{LUMOS}/sim-lumos-256.json", 20, note="issue: 76 s",
         quick=True),
    Case("lumos-sim", "simulate", f"{LUMOS}/sim-lumos-256.json", 20, cold=True,
         note="empty numba cache: the compilation alone takes longer than the limit"),
    # spectra
    Case("spectra", "milp", f"{EX}/bench_n100_s8_d0.01.json", 5, ("max_vars=100000000",)),
    Case("spectra", "milp", f"{EX}/bench_n100_s4_d0.04.json", 20, ("max_vars=100000000",)),
    Case("spectra", "milp-matchings", {"workload": "random", "n": 8, "density": 1.0,
                                       "switches": 2, "seed": 1}, 5, ("max_matchings=100000",)),
    Case("spectra", "spectra-lp", BIG_SPECTRA, 5),
    Case("spectra", "baseline-milp", f"{EX}/bench_n100_s8_d0.01.json", 5),
    Case("spectra", "spectra", BIG_SPECTRA, 3, note="no clock guard"),
    Case("spectra", "spectra-eclipse", BIG_SPECTRA, 3, note="no clock guard"),
    # delta (Table I workloads)
    Case("delta", "delta-joint-hotstart", f"{DELTA}/deepseek-671b.json", 20, quick=True),
    Case("delta", "delta-joint", f"{DELTA}/deepseek-671b.json", 10),
    Case("delta", "delta-topo", f"{DELTA}/megatron-462b.json", 10),
    Case("delta", "delta-fts", f"{DELTA}/deepseek-671b.json", 10),
    Case("delta", "delta-fast", f"{DELTA}/megatron-462b.json", 10),
    # a2a: the exact models at their largest default sizes
    Case("a2a", "pmedian", {"n": 64, "k": 1}, 5),
    Case("a2a", "exact-k1", {"n": 6, "k": 1}, 5),
    Case("a2a", "exact-te", {"n": 4, "k": 2}, 5),
    Case("a2a", "pack-ilp", {"n": 8, "k": 2}, 5),
    Case("a2a", "rdc", {"n": 64, "k": 3}, 1, ("max_base_sets=1000000",), note="no clock guard"),
    # lumos-reconfig
    Case("lumos-reconfig", "itv-ilp", f"{LUMOS}/cross-rings-8k.json", 10),
    Case("lumos-reconfig", "uniform-ilp", f"{LUMOS}/uniform-rings-8k.json", 10),
    Case("lumos-reconfig", "itv-mdmcf", {"pods": 64, "k_leaf": 32, "k_spine": 32, "tau": 2,
                                          "k_ocs": 512, "seed": 1}, 5),
    Case("lumos-reconfig", "itv-mdmcf-lp", f"{LUMOS}/cross-rings-8k.json", 5),
    Case("lumos-reconfig", "itv-mcf", {"pods": 64, "k_leaf": 32, "k_spine": 32, "tau": 2,
                                        "k_ocs": 512, "seed": 1}, 5),
    Case("lumos-reconfig", "realize", f"{LUMOS}/uniform-rings-8k.json", 5),
    # lumos-logical, -staging, -placement
    Case("lumos-logical", "logical-ilp", {"pods": 32, "k_leaf": 32, "k_spine": 32, "tau": 2,
                                          "seed": 1}, 5, ("max_vars=100000000",)),
    Case("lumos-logical", "logical-ilp-min", {"pods": 32, "k_leaf": 32, "k_spine": 32,
                                              "tau": 2, "seed": 1}, 5, ("max_vars=100000000",)),
    Case("lumos-staging", "staging-ilp", {"pods": 32, "k_leaf": 16, "k_spine": 16, "tau": 1,
                                          "churn": 0.5, "seed": 1}, 5, ("max_vars=100000000",)),
    Case("lumos-staging", "staging-ilp", {"pods": 32, "k_leaf": 16, "k_spine": 16, "tau": 1,
                                          "churn": 0.5, "seed": 1}, 5,
         ("mode=direct", "max_vars=100000000")),
    Case("lumos-placement", "placement-ilp", f"{LUMOS}/placement-2k-trace.json", 5),
    # lumos-sim: the other strategies
    Case("lumos-sim", "sim-itv-ilp", f"{LUMOS}/sim-lumos-256.json", 10),
    Case("lumos-sim", "sim-itv-mcf", {"arch": "lumos-51.2T-tau1", "gpus": 8192, "jobs": 200,
                                      "seed": 1}, 10),
    Case("lumos-sim", "simulate", {"arch": "lumos-51.2T-tau1", "gpus": 8192, "jobs": 200,
                                   "seed": 1}, 10),
    Case("lumos-sim", "sim-uniform-ilp", {"arch": "uniform-51.2T-tau2", "gpus": 256,
                                          "jobs": 40, "seed": 1}, 10),
    Case("lumos-sim", "sim-helios", {"arch": "uniform-51.2T-tau1", "gpus": 8192, "jobs": 200,
                                     "seed": 1}, 10),
]


def allowed(limit: float) -> float:
    """The target: the run ends within limit + max(2 s, 10%)."""
    return limit + max(2.0, 0.1 * limit)


def _instance(case: Case, tmp: Path) -> Path:
    if isinstance(case.source, str):
        return ROOT / case.source
    from toolkit.registry import problem

    inst = problem(case.problem).generator.run(**case.source)
    path = tmp / f"{case.problem}-{abs(hash(json.dumps(case.source, sort_keys=True)))}.json"
    path.write_text(json.dumps(inst.to_dict()))
    return path


def run_case(case: Case, tmp: Path) -> dict:
    """One fresh ``solve.py solve`` process; its record and wall time."""
    argv = [sys.executable, "solve.py", "solve", str(_instance(case, tmp)), "--method",
            case.method, "--time-limit", str(case.limit), "--format", "json"]
    for opt in case.options:
        argv += ["--option", opt]
    env = dict(os.environ, **case.env)
    if case.cold:
        env["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(dir=tmp)
    t = time.perf_counter()
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    rec = json.loads(lines[-1]) if lines else {}
    return dict(case=case.label, problem=case.problem, method=case.method, limit_s=case.limit,
                allowed_s=allowed(case.limit), elapsed_s=rec.get("elapsed_s"),
                wall_s=wall, runtime_s=rec.get("runtime_s"),
                in_time=(rec.get("elapsed_s") or float("inf")) <= allowed(case.limit),
                wall_in_time=wall <= allowed(case.limit), status=rec.get("status"),
                verified=rec.get("verified"), objective=rec.get("objective"),
                exit=proc.returncode, load1=os.getloadavg()[0], note=case.note,
                message=((rec.get("message") or "") if rec else
                         (proc.stderr.strip().splitlines() or ["no record"])[-1])[:200])


def run(quick: bool = False, out_dir: Path = Path("results"), only: str | None = None
        ) -> list[Path]:
    cases = [c for c in CASES if (c.quick or not quick) and (only is None or only in c.label)]
    busy = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(BUSY)]
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for case in cases:
                row = run_case(case, Path(tmp))
                rows.append(row)
                print(f"{row['case']}: limit {row['limit_s']:g} s, elapsed {row['elapsed_s']} s, "
                      f"wall {row['wall_s']:.2f} s, {row['status']}", file=sys.stderr)
    finally:
        for p in busy:
            p.kill()
            p.wait()
    return report(pd.DataFrame(rows), quick, out_dir)


def report(df: pd.DataFrame, quick: bool, out_dir: Path):
    over = df[~df.in_time]
    wall_over = df[~df.wall_in_time]
    loads = df.load1.tolist()
    cmd = reproduce_cmd("time-limit", quick, out_dir)
    what = "quick: the issue's cases only" if quick else "full"
    result = (f"{len(df) - len(over)} of {len(df)} runs ended in time"
              + (f" (over: {', '.join(over.case)})" if len(over) else "")
              + f"; process wall within the same allowance: {len(df) - len(wall_over)} of "
              f"{len(df)}" + (f" (over: {', '.join(wall_over.case)})" if len(wall_over) else ""))
    table = df[["case", "limit_s", "allowed_s", "elapsed_s", "wall_s", "status", "verified",
                "in_time", "note"]]
    lines = [
        "# `--time-limit` bounds the whole run (issue 28, item 4)", "",
        f"Regenerate: `{cmd}` ({what}). Each case is one fresh `python solve.py solve FILE "
        f"--method M --time-limit L --format json` process, run while {BUSY} busy processes "
        "(a Python busy loop each) load the machine.", "",
        f"Machine: {machine()}. Load average (1 min) after each case: median "
        f"{statistics.median(loads):.1f}, range {min(loads):.1f}-{max(loads):.1f}.", "",
        "Target: every run ends within L + max(2 s, 10% of L) on its own clock (`elapsed_s`: "
        "from the moment the run takes the instance, loading, importing, numba compilation, "
        "heuristics, model building, solving and the final check included). `wall_s` is the "
        "whole process, which adds the interpreter's and the command line's start-up and the "
        "output.", "",
        f"Result: {result}.", "",
        "`status`: `feasible` with a message naming the kept solution (e.g. the MIP start "
        "heuristic's) when the limit stopped the method before its solver had one; "
        "`time_limit_no_solution` when it had none (exit 1).", "",
        md_table(table, ".3g"), "",
        "Messages:", ""] + [f"* {r.case}: {r.message}" for r in df.itertuples() if r.message]
    head = headline(f"--time-limit: {result} (target: limit + max(2 s, 10%))",
                    df[["case", "limit_s", "allowed_s", "elapsed_s", "wall_s", "status"]], ".3g")
    return write_report(out_dir, "time_limit", lines, {"time_limit.csv": df}, head)


if __name__ == "__main__":
    from benchmarks.common import main

    main(run, __doc__)
