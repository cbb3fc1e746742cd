"""Method options are declared once, listed, and checked before a run; --param names are
Gurobi's; --time-limit is the budget of the whole method run (issue 14, items 1-2)."""
from __future__ import annotations

import functools
import json
import time
from pathlib import Path

import pytest

import instances
from tests import cli_worker
from toolkit.budget import DEFAULT_TIME_LIMIT, Budget
from toolkit.options import Option, OptionError
from toolkit.registry import RunConfig, problem, problems
from toolkit.run import NotApplicable, run_task

ROOT = Path(__file__).resolve().parents[1]
SPECTRA = ROOT / "instances" / "examples" / "tiny_random_n4_s2.json"


def main(*argv):
    """solve.py in the tests' CLI helper process (tests/cli_worker.py)."""
    return cli_worker.call(argv)


# --- the declaration ---------------------------------------------------------------------
def test_option_parses_and_checks_values():
    assert Option("x", bool, False, "h").parse("yes") is True
    assert Option("x", bool, True, "h").parse(0) is False
    assert Option("x", int, 0, "h").parse("3") == 3 and Option("x", int, 0, "h").parse(4.0) == 4
    assert Option("x", float, 0.0, "h").parse(2) == 2.0
    for opt, raw in ((Option("x", bool, False, "h"), "maybe"), (Option("x", int, 0, "h"), 2.5),
                     (Option("x", int, 0, "h"), "two"), (Option("x", float, 0.0, "h"), "nan"),
                     (Option("x", str, "a", "h", choices=("a", "b")), "c"),
                     (Option("x", int, 2, "h", minimum=2), 1),
                     (Option("x", float, 1.0, "h", maximum=10), "1e300")):
        with pytest.raises(OptionError, match="option x"):
            opt.parse(raw)


def test_every_method_declares_named_typed_documented_options():
    for p in problems().values():
        for m in p.methods.values():
            names = [o.name for o in m.options]
            assert len(names) == len(set(names)), (p.name, m.name)
            for o in m.options:
                assert o.kind in (bool, int, float, str) and o.help, (m.name, o.name)
                assert o.parse(o.default) == o.default, (m.name, o.name)   # default is valid


def test_undeclared_option_read_is_a_programming_error():
    cfg = problem("spectra").methods["milp"].configure(RunConfig())
    assert cfg.option("slots") == 0
    with pytest.raises(KeyError):
        cfg.option("refine")            # spectra's, not milp's


# --- checked before the run ------------------------------------------------------------------
def test_mistyped_option_is_exit_2_naming_it_and_the_valid_ones():
    code, out, err = main("solve", SPECTRA, "--method", "milp", "--option", "slot=2")
    assert code == 2 and out == ""
    line, = err.strip().splitlines()
    assert "option slot" in line and "slots" in line and "max_vars" in line


def test_option_of_another_method_is_exit_2_naming_its_owner():
    code, _, err = main("solve", SPECTRA, "--method", "spectra", "--option", "slots=2")
    line, = err.strip().splitlines()
    assert code == 2 and "option slots" in line and "milp" in line and "refine" in line


@pytest.mark.parametrize("opt", ["slots=two", "slots=-1", "lb_cut=maybe"])
def test_bad_option_value_is_exit_2_naming_it(opt):
    code, _, err = main("solve", SPECTRA, "--method", "milp", "--option", opt)
    line, = err.strip().splitlines()
    assert code == 2 and f"option {opt.split('=')[0]}" in line


@pytest.mark.parametrize("opt", ["lns=1e300", "eject_work=1e300", "restarts=1e12"])
def test_absurd_work_option_is_exit_2_before_the_run(opt):
    """Budgets that would overflow the compiled chains' 64-bit counters, or restart lists
    that would not fit in memory: refused by the option's maximum, not a traceback."""
    code, out, err = main("solve", "instances/lumos/cross-rings-P8.json", "--method",
                          "itv-mdmcf", "--option", opt)
    line, = err.strip().splitlines()
    assert code == 2 and out == "" and f"option {opt.split('=')[0]}" in line and "<=" in line


def test_declared_option_reaches_the_method():
    code, out, err = main("solve", SPECTRA, "--method", "spectra", "--option", "refine=lp",
                          "--backend", "highs", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["refine_lp_objective"] is not None
    code, _, err = main("solve", SPECTRA, "--method", "milp", "--option", "max_vars=1")
    assert code == 2 and "max_vars=1" in err              # declines with the given cap


def test_batch_option_applies_to_methods_that_declare_it(tmp_path):
    code, _, err = main("batch", SPECTRA, "--methods", "spectra,spectra-lp", "--option", "refine=lp",
                        "--backend", "highs", "--out", tmp_path / "a", "--no-progress")
    assert code == 0, err
    # spectra took it (its Refine LP ran), spectra-lp ran without it
    assert "refine_lp_objective" in (tmp_path / "a" / "records.csv").read_text()
    code, _, err = main("batch", SPECTRA, "--methods", "spectra,baseline", "--option", "slots=4",
                        "--out", tmp_path / "b", "--no-progress")
    line, = err.strip().splitlines()
    assert code == 2 and "option slots" in line
    assert not (tmp_path / "b" / "records.csv").exists()       # before any run


def test_gap_rejects_an_option_no_selected_method_declares():
    code, out, err = main("gap", SPECTRA, "--methods", "spectra,baseline", "--option", "slot=4")
    assert code == 2 and out == "" and "option slot" in err


def test_unknown_param_is_exit_2_before_any_solve():
    code, out, err = main("solve", SPECTRA, "--method", "milp", "--param", "MIPFocuss=1")
    line, = err.strip().splitlines()
    assert code == 2 and out == "" and "MIPFocuss" in line and "MIPFocus" in line


@pytest.mark.parametrize("flag,item,words", [
    ("--param", "TimeLimit=x", "TimeLimit=x"), ("--param", "TimeLimit=nan", "finite"),
    ("--param", "Threads=-5", "minimum is -1"), ("--param", "Method=99", "maximum is 6"),
    ("--param", "TimeLimit=inf", "finite"),
    ("--param", ("Seed=1", "seed=2"), "given twice"), ("--option", ("slots=1", "slots=2"), "given twice"),
])
def test_bad_or_repeated_param_value_is_exit_2_before_any_solve(flag, item, words):
    items = [a for it in ((item,) if isinstance(item, str) else item) for a in (flag, it)]
    code, out, err = main("solve", SPECTRA, "--method", "milp", "--backend", "highs", *items)
    line, = err.strip().splitlines()
    assert code == 2 and out == "" and words in line and flag in line, err


def test_param_names_are_case_insensitive_and_take_gurobi_spelling():
    code, out, err = main("solve", SPECTRA, "--method", "spectra-lp", "--param", "timelimit=30",
                          "--backend", "highs", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["verified"]


# --- discoverable ----------------------------------------------------------------------------
def test_list_prints_each_methods_options_and_the_default_time_limit():
    code, out, _ = main("list")
    assert code == 0
    assert "slots (int, default 0, 0..1e+06)" in out and "refine (greedy|lp, default greedy)" in out
    assert "ga_time_limit (float, default 0.0, 0..1e+07)" in out
    assert "seed (int, default 0, >= 0)" in out              # declared unbounded (math.inf)
    assert f"default {DEFAULT_TIME_LIMIT:g} s for model methods" in out


def test_solve_method_help_lists_its_options_on_stdout():
    code, out, err = main("solve", "--method", "uniform-ilp", "--help")
    assert code == 0 and err == ""
    assert "--time-limit" in out                          # the usual help, then the options
    assert out.index("--time-limit") < out.index("lam (float, default 0.0, 0..1e+09)")
    assert "helios_start (bool, default 1)" in out


def test_generate_help_lists_parameters_with_types_defaults_help():
    code, out, _ = main("generate", "a2a", "--help")
    assert code == 0
    assert "--n INT" in out and "--size-mb FLOAT" in out and "int, default 16" in out
    assert "GPUs" in out                                 # the parameter's help


# --- every method reads only what it declares -------------------------------------------------
SMALL = {"spectra": dict(n=4, switches=2, seed=1), "delta": dict(model="gpt-7b", micro_batches=2),
         "a2a": dict(n=4, k=1), "lumos-reconfig": dict(pods=4, k_leaf=2, k_spine=4, k_ocs=64),
         "lumos-logical": dict(pods=4, k_leaf=4, k_spine=4, tau=2),
         "lumos-placement": dict(gpus=64, k_leaf=8, k_spine=4, tau=2, gpus_per_server=4, job=3),
         "lumos-sim": dict(arch="lumos-51.2T-tau2", gpus=256, jobs=8, seed=1)}


@pytest.mark.parametrize("pname", sorted(SMALL))
def test_every_method_runs_with_its_declared_options(pname):
    prob = problem(pname)
    data = prob.generator.run(**SMALL[pname]).to_dict()
    for name, m in prob.methods.items():
        if name == "delta-joint-hotstart":
            continue                 # the GA and MILP: delta-joint and delta-fast cover them
        try:
            rec = run_task(data, "small", name, RunConfig(backend="highs", time_limit=5))
        except NotApplicable:
            continue
        assert "traceback" not in rec, (name, rec.get("message"))     # the method raised
        assert rec["time_limit_s"] == 5


# --- the time budget ---------------------------------------------------------------------------
def test_budget_shares_never_exceed_what_is_left():
    b = Budget(10.0)
    assert b.share(4) <= 2.5 and b.share(1, fraction=0.5) <= 5.0
    assert b.cap(100.0) <= 10.0 and b.cap(1.0) == 1.0 and b.cap(None) <= 10.0
    free = Budget(None)
    assert free.remaining() is None and free.share(3) is None and free.cap(2.0) == 2.0
    assert RunConfig(budget=Budget(3.0)).solve_kw()["time_limit"] <= 3.0
    assert RunConfig(time_limit=7.0).solve_kw()["time_limit"] == 7.0


def test_default_limit_is_for_model_methods_only():
    data = instances.read_json(SPECTRA)
    assert run_task(data, "s", "milp", RunConfig(backend="highs"))["time_limit_s"] == DEFAULT_TIME_LIMIT
    assert run_task(data, "s", "spectra", RunConfig())["time_limit_s"] is None


LUMOS = ROOT / "instances" / "lumos"
STAGED = [   # (problem, file or generator params, method that splits its time, split stage)
    ("delta", ROOT / "instances" / "examples" / "delta_gpt-7b.json", "delta-joint-hotstart", "ga"),
    ("a2a", dict(n=7, k=1), "exact-k1", "per-d models"),   # d = 3: rings 10 > Theorem 1 9
    ("lumos-reconfig", LUMOS / "uniform-rings-P8.json", "uniform-ilp", "groups"),
    ("lumos-logical", LUMOS / "logical-P8-tau1.json", "logical-ilp-min", "ilp"),
    ("lumos-placement", LUMOS / "placement-bestfit-48.json", "placement-ilp", "pod"),
    ("lumos-sim", LUMOS / "sim-lumos-256.json", "sim-itv-ilp", "groups"),
    ("spectra", ROOT / "instances" / "examples" / "bench_n32_m8_s2_d0.1.json", "milp", None),
]


class _ChargedClock:
    """``time`` for the budget: its perf_counter is the real one plus the whole limit of
    every solve so far (``charged``), as if each solve used all the time it was given."""

    def __init__(self, charged: list):
        self.charged = charged

    def __getattr__(self, name):
        return getattr(time, name)

    def perf_counter(self) -> float:
        return time.perf_counter() + sum(self.charged)


@pytest.mark.parametrize("pname, src, method, stage", STAGED, ids=[s[0] for s in STAGED])
def test_time_limit_is_the_whole_run(pname, src, method, stage, monkeypatch):
    """2 s for the whole run, however it is split: each solve is charged its whole limit on
    the budget's clock (the worst case), and the limits the solves were given sum to at most
    the 2 s. A stage that took a limit of its own, or the whole 2 s again, breaks the sum; a
    property of the split, not of how long the run takes on this machine."""
    from models import backend as B
    from toolkit import budget, registry

    charged: list[float] = []
    real_solve = B.solve_highs

    def solve_charged(model, params, *rest):
        charged.append(params.get("TimeLimit"))
        return real_solve(model, params, *rest)

    monkeypatch.setattr(B, "solve_highs", solve_charged)
    clock = _ChargedClock(charged)
    monkeypatch.setattr(B, "time", clock)        # the lexicographic stages' clock
    monkeypatch.setattr(registry, "Budget",      # the run's budget (from run_task's start)
                        functools.partial(budget.Budget, clock=clock.perf_counter))
    data = instances.read_json(src) if isinstance(src, Path) else \
        problem(pname).generator.run(**src).to_dict()
    opts = {"max_vars": 10**7} if method == "milp" else {}
    rec = run_task(data, str(src), method, RunConfig(backend="highs", time_limit=2.0, options=opts))
    assert rec["time_limit_s"] == 2.0 and rec["status"] != "error", rec.get("message")
    assert charged and None not in charged and sum(charged) <= 2.0 + 1e-9, charged
    if stage:
        assert stage in rec["time_split"], rec["message"]


@pytest.mark.parametrize("argv", [
    ("solve", SPECTRA, "--method", "spectra", "--method", "milp"),
    ("solve", SPECTRA, "--time-limit", "5", "--time-limit=9"),
    ("generate", "spectra", "--n", "4", "--n", "5", "-o", "x.json"),
])
def test_single_valued_option_given_twice_is_exit_2(argv, tmp_path, monkeypatch):
    """Not "the last one wins": a repeated --method would silently drop a method."""
    monkeypatch.chdir(tmp_path)
    code, out, err = main(*argv)
    assert code == 2 and out == "" and "given more than once" in err
    assert not (tmp_path / "x.json").exists()


def test_static_checks_families_even_where_k1_does_not_use_them():
    """A bad value is bad input whether or not this instance reads it (rdc already refused
    it at k = 1; static accepted it)."""
    for method in ("rdc", "static"):
        code, out, err = main("solve", ROOT / "instances/a2a/uniform_n4_k1.json", "--method",
                              method, "--option", "families=zzz")
        assert code == 2 and out == "" and "option families" in err, (method, err)


@pytest.mark.parametrize("param,flag,field", [("TimeLimit=7", "--time-limit", "time_limit"),
                                              ("mipgap=0.25", "--mip-gap", "mip_gap"),
                                              ("Threads=1", "--threads", "threads")])
def test_param_with_a_flag_of_its_own_is_that_flag(param, flag, field):
    """``--param TimeLimit=7`` was silently replaced by the run's budget (600 s by default;
    the solver never saw it): it is ``--time-limit 7``, the whole run's budget; MIPGap and
    Threads are ``--mip-gap`` and ``--threads``. Given with the flag too: exit 2."""
    from toolkit import config

    value = json.loads(param.split("=")[1])
    cfg = config.make_config(params={param.split("=")[0]: value})
    assert getattr(cfg, field) == value and not cfg.params
    code, out, err = main("solve", SPECTRA, "--method", "milp", "--backend", "highs",
                          "--param", param, "--format", "json")
    rec = json.loads(out)
    assert code == 0 and rec["verified"], err
    if field == "time_limit":
        assert rec["time_limit_s"] == 7
    code, out, err = main("solve", SPECTRA, "--method", "milp", "--param", param, flag, "2")
    line, = err.strip().splitlines()
    assert code == 2 and out == "" and flag in line and "given twice" in line, err
    code, out, err = main("solve", SPECTRA, "--param", "TimeLimit=0")
    line, = err.strip().splitlines()
    assert code == 2 and "--param TimeLimit" in line and "> 0" in line, err
