"""The [001]/[002] end-to-end targets' bookkeeping (benchmarks.lumos.jct, jct_ilp, jct_scale)
on tiny runs."""
import pandas as pd
import pytest

from benchmarks.lumos.jct import reconfigurations, run_path, simulate
from benchmarks.lumos.jct_ilp import _ilp_table, strategies
from benchmarks.lumos.jct_scale import seed_gaps


def test_cached_runs_keep_their_strategy_and_resume(tmp_path):
    runs = [("best", None), ("clos-51.2T-3tier", None), ("lumos-51.2T-tau1", "itv-mdmcf")]
    first = [simulate(a, 512, r, 12, 0.8, 0, tmp_path, alg_time="none") for a, r in runs]
    again = [simulate(a, 512, r, 12, 0.8, 0, tmp_path, alg_time="none") for a, r in runs]
    for a, r in runs:
        assert run_path(a, 512, r, 0, tmp_path).exists()
    # the second call reads the cache (the CSV turns the empty method into NaN)
    df = pd.concat(again, ignore_index=True)
    assert df.reconfig.isna().sum() == 2 * 12
    assert list(dict.fromkeys(strategies(df))) == ["best", "clos-51.2T-3tier", "itv-mdmcf"]
    for a, b in zip(first, again):
        assert b.jct_s.to_numpy() == pytest.approx(a.jct_s.to_numpy(), rel=1e-12)
    # the [001] table: one row per strategy, the controller's reconfigurations counted
    tab = _ilp_table(df.assign(alpha=1.0), tmp_path).set_index("strategy")
    assert list(tab.index) == ["best", "clos-51.2T-3tier", "itv-mdmcf"]
    assert (tab.jobs == 12).all() and tab.loc["best", "jrt_slowdown_max"] == 0
    rc = reconfigurations("lumos-51.2T-tau1", 512, "itv-mdmcf", 0, tmp_path)
    assert tab.loc["itv-mdmcf", "reconfigs"] == len(rc) and tab.loc["best", "reconfigs"] == 0
    # Best bounds every job's running time
    best = again[0].set_index("job").jrt_s
    for other in again[1:]:
        assert (other.set_index("job").jrt_s >= best.reindex(other.job).to_numpy() - 1e-6).all()


def test_seed_gaps_are_per_seed_ratios():
    df = pd.DataFrame(dict(gpus=256, seed=[0, 0, 1, 1], arch=["a", "b", "a", "b"],
                           jct_s=[90.0, 100.0, 120.0, 100.0], jrt_s=[50.0, 50.0, 60.0, 40.0]))
    g = seed_gaps(df, (("a", "b"),)).iloc[0]
    assert [g.jct_min, g.jct_max, g.jrt_min, g.jrt_max] == pytest.approx([-10, 20, 0, 50])


def test_a_run_the_checker_refuses_is_not_cached(tmp_path, monkeypatch):
    """Every simulation passes instances.lumos.sim_check before it is written to the cache."""
    import instances.lumos.sim_check as chk

    seen = []

    def refuse(inst, sol):
        seen.append((inst.arch, len(sol.jobs)))
        return ["job 0: finishes before it starts"], {}

    monkeypatch.setattr(chk, "check_sim", refuse)
    with pytest.raises(AssertionError, match="finishes before it starts"):
        simulate("best", 512, None, 12, 0.8, 0, tmp_path, alg_time="none")
    assert seen == [("best", 12)] and not run_path("best", 512, None, 0, tmp_path).exists()
