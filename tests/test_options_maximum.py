"""Every numeric --option declares a maximum: absurd sizes (1e12 processes, 1e300 budgets,
inf) are bad input, exit 2 with one stderr line naming the option, before the run."""
from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

from tests import cli_worker
from toolkit.options import Option, OptionError
from toolkit.registry import problems

ROOT = Path(__file__).resolve().parents[1]
DELTA = ROOT / "instances" / "examples" / "delta_gpt-7b.json"
LUMOS = ROOT / "instances" / "lumos" / "cross-rings-P8.json"
A2A = ROOT / "instances" / "a2a" / "uniform_n4_k1.json"


def numeric_options():
    """(problem, method, option) for every int or float option of every registered method."""
    return [(p.name, m.name, o) for p in problems().values() for m in p.methods.values()
            for o in m.options if o.kind in (int, float)]


def _above(o: Option):
    return o.maximum + 1 if o.kind is int else max(2 * o.maximum, o.maximum + 1)


def test_there_are_numeric_options_to_check():
    assert len(numeric_options()) > 50
    names = {o.name for _, _, o in numeric_options()}
    assert {"pop", "workers", "max_vars", "quantiles", "max_evals", "lns"} <= names


@pytest.mark.parametrize("pname, mname, opt", numeric_options(),
                         ids=lambda v: v.name if isinstance(v, Option) else v)
def test_every_numeric_option_declares_a_maximum_that_it_enforces(pname, mname, opt):
    assert opt.maximum is not None, f"{mname}: option {opt.name} declares no maximum"
    assert opt.minimum is None or opt.minimum <= opt.default <= opt.maximum
    if math.isinf(opt.maximum):            # declared harmless at any size (seeds)
        assert opt.kind is int and opt.parse("1e300") == int(1e300)
        return
    assert opt.parse(opt.maximum) == opt.maximum                 # the maximum itself is fine
    assert opt.parse(str(opt.maximum)) == opt.maximum            # and as typed on the CLI
    for raw in (_above(opt), str(_above(opt)), "1e300"):
        with pytest.raises(OptionError, match=rf"^option {opt.name}: expected a value <= "):
            opt.parse(raw)
    if opt.kind is float:                  # never inf: a maximum is finite
        with pytest.raises(OptionError, match=rf"^option {opt.name}: "):
            opt.parse("inf")
    assert f"{opt.name} ({opt.kind.__name__}, default " in opt.describe()


def test_describe_shows_the_range_shortly():
    assert Option("x", int, 4, "h", minimum=2, maximum=10**5).describe() == \
        "x (int, default 4, 2..100000): h"
    assert Option("x", float, 0.5, "h", minimum=0, maximum=1e7).describe() == \
        "x (float, default 0.5, 0..1e+07): h"
    assert Option("x", int, 0, "h", minimum=0, maximum=math.inf).describe() == \
        "x (int, default 0, >= 0): h"
    assert Option("x", int, 0, "h", maximum=3).describe() == "x (int, default 0, <= 3): h"
    assert Option("x", bool, True, "h").describe() == "x (bool, default 1): h"
    with pytest.raises(OptionError, match=r"<= 1e\+08, got '2e8'"):
        Option("x", int, 0, "h", maximum=10**8).parse("2e8")


def test_itv_mdmcf_lp_keeps_the_maxima_of_the_options_it_copies():
    lp = {o.name: o for o in problems()["lumos-reconfig"].methods["itv-mdmcf-lp"].options}
    base = {o.name: o for o in problems()["lumos-reconfig"].methods["itv-mdmcf"].options}
    assert lp["exact_vars"].default == 4000 and base["exact_vars"].default == 0
    assert lp["exact_vars"].maximum == base["exact_vars"].maximum is not None


# --- the command line -------------------------------------------------------------------------
def main(*argv):
    """solve.py in the tests' CLI helper process (tests/cli_worker.py)."""
    return cli_worker.call(argv)


@pytest.mark.parametrize("path, method, opt", [
    (DELTA, "delta-fast", "pop=1e12"),
    (DELTA, "delta-fast", "workers=100000"),
    (DELTA, "delta-joint-hotstart", "generations=1e300"),
    (DELTA, "delta-joint-hotstart", "ga_share=2"),
    (DELTA, "delta-fast", "ga_time_limit=inf"),
    (DELTA, "delta-fast", "seed=-1"),              # was an error record (numpy's ValueError)
    (DELTA, "delta-joint", "k_pad=1e12"),
    (LUMOS, "itv-mdmcf", "workers=100000"),
    (LUMOS, "itv-ilp", "max_vars=1e12"),
    (A2A, "exact-te", "rho=1e12"),
])
def test_absurd_option_is_exit_2_naming_it_nothing_on_stdout(path, method, opt):
    code, out, err = main("solve", path, "--method", method, "--option", opt)
    line, = err.strip().splitlines()
    assert code == 2 and out == "", err
    assert f"option {opt.split('=')[0]}" in line and "expected a value" in line


def test_fts_step_too_fine_for_the_reference_is_exit_2_before_the_model():
    """1e-300 ms would be 5e302 slices: an OverflowError or a huge allocation before."""
    code, out, err = main("solve", DELTA, "--method", "delta-fts", "--option", "step=1e-300")
    line, = err.strip().splitlines()
    assert code == 2 and out == "" and "option step" in line and "slices" in line


def test_batch_refuses_an_absurd_shared_option_before_any_run(tmp_path):
    code, out, err = main("batch", DELTA, "--methods", "delta-fast,delta-joint-hotstart",
                          "--option", "pop=1e12", "--out", tmp_path / "b", "--no-progress")
    line, = err.strip().splitlines()
    assert code == 2 and out == "" and "option pop" in line
    assert not (tmp_path / "b" / "records.csv").exists()


def test_cli_process_exit_2_one_line(tmp_path):
    """The real process: exit status 2, one stderr line, empty stdout (no traceback)."""
    p = subprocess.run([sys.executable, str(ROOT / "solve.py"), "solve", str(DELTA), "--method",
                        "delta-fast", "--option", "pop=1e12"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=600)
    assert p.returncode == 2 and p.stdout == ""
    line, = p.stderr.strip().splitlines()
    assert "option pop" in line and "<= 100000" in line
