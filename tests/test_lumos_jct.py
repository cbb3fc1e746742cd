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


def test_the_rail_rule_is_in_the_cache_key(tmp_path):
    """Runs under the default rule keep their names from before the rule could be chosen
    (the cache of the lane-pairs runs is reused); leaf-pairs runs are cached apart, and
    their first cross-Pod admission asks fewer links of the same job."""
    kw = dict(routing="probing", layout="rail")
    assert run_path("lumos-25.6T-tau1", 256, None, 1, tmp_path, **kw).name == \
        "lumos-25.6T-tau1+probing+rail_256_s1.csv"
    first = {}
    for rule in ("lane-pairs", "leaf-pairs"):
        df = simulate("lumos-25.6T-tau1", 256, None, 25, 0.8, 1, tmp_path, alg_time="none",
                      rail_rule=rule, **kw)
        assert (df.rail_rule == rule).all() and run_path(
            "lumos-25.6T-tau1", 256, None, 1, tmp_path, rail_rule=rule, **kw).exists()
        first[rule] = reconfigurations("lumos-25.6T-tau1", 256, None, 1, tmp_path,
                                       rail_rule=rule, **kw).iloc[0]
    assert len(list(tmp_path.glob("*.reconfigs.csv"))) == 2
    assert first["lane-pairs"].job == first["leaf-pairs"].job
    assert 0 < first["leaf-pairs"].req_links < first["lane-pairs"].req_links


def test_fig24_tables_per_rail_variant():
    """benchmarks.lumos.rail on a synthetic set: one change row per (routing, arch, rail
    variant) from per-seed means; the Clos's rail runs stand in for rail/leaf-pairs in the
    same-chip gaps."""
    from benchmarks.lumos.rail import gaps_table, rail_change

    rows = []
    for seed, base in ((0, 100.0), (1, 200.0)):
        for arch, variant, f in (("lumos-25.6T-tau1", "server", 1.0),
                                 ("lumos-25.6T-tau1", "rail", 0.9),
                                 ("lumos-25.6T-tau1", "rail/leaf-pairs", 1.1),
                                 ("clos-25.6T-3tier", "server", 1.2),
                                 ("clos-25.6T-3tier", "rail", 1.0)):
            rows += [dict(routing="probing", arch=arch, variant=variant, seed=seed, job=j,
                          jct_s=base * f * (1 + j), jrt_s=base, cl_ar=f, cl_a2a=1.0)
                     for j in range(2)]
    df = pd.DataFrame(rows)
    ch = rail_change(df).set_index(["arch", "variant"])
    assert list(ch.index) == [("clos-25.6T-3tier", "rail"), ("lumos-25.6T-tau1", "rail"),
                              ("lumos-25.6T-tau1", "rail/leaf-pairs")]
    lum = ch.loc[("lumos-25.6T-tau1", "rail/leaf-pairs")]
    assert [lum.jct_change_min_pct, lum.jct_change_max_pct] == pytest.approx([10, 10])
    assert (lum.cl_ar_server, lum.cl_ar, lum.seeds) == (1.0, 1.1, 2)
    assert ch.loc[("clos-25.6T-3tier", "rail")].jct_change_max_pct == pytest.approx(-100 / 6)
    g = gaps_table(df).set_index("variant")
    assert g.loc["rail/leaf-pairs", "jct_gap_max_pct"] == pytest.approx(10)     # 1.1 vs 1.0
    assert g.loc["rail", "jct_gap_max_pct"] == pytest.approx(-10)
