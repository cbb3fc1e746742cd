"""The gap report (toolkit.gap_report) on hand-made records: the table and summary carry
the records' numbers, and the performance profile has the Dolan-More properties."""
from __future__ import annotations

import csv
import math

import pytest

from toolkit import gap_report as G, gap_write


def rec(inst, method, obj, *, bound=None, status="feasible", verified=True):
    return {"instance": f"/data/{inst}.json", "path": f"/data/{inst}.json", "name": inst,
            "problem": "spectra", "method": method, "status": status, "objective": obj,
            "verified": verified, "problem_bound": bound}


@pytest.fixture
def recs():
    """Three instances, four methods: milp best on a and b and declines c (no record);
    spectra ties milp on a; baseline fails on b; spectra-noeq is worst everywhere."""
    return G.rank_by_instance([
        rec("a", "spectra", 2.0), rec("a", "spectra-noeq", 3.0), rec("a", "baseline", 2.5),
        rec("a", "milp", 2.0, bound=2.0, status="optimal"),
        rec("b", "spectra", 1.2), rec("b", "spectra-noeq", 1.5),
        rec("b", "baseline", None, status="error", verified=False),
        rec("b", "milp", 1.0, bound=0.9, status="time_limit"),
        rec("c", "spectra", 4.0), rec("c", "spectra-noeq", 8.0), rec("c", "baseline", 5.0),
    ])


def by(rows, **kw):
    return [r for r in rows if all(r[k] == v for k, v in kw.items())]


def test_ranks_are_per_instance(recs):
    assert [r["rank"] for r in recs if r["name"] == "a"] == [1, 3, 2, 1]
    assert by(recs, name="b", method="milp")[0]["best_bound"] == 0.9
    assert by(recs, name="c", method="spectra")[0]["best_bound"] is None
    assert by(recs, name="b", method="baseline")[0]["rank"] is None


def test_gap_table_numbers_are_the_records(recs, tmp_path):
    gap_write.write_report(recs, tmp_path)
    with open(tmp_path / "gap.csv", newline="") as fh:
        table = list(csv.DictReader(fh))
    assert len(table) == len(recs)
    for row, r in zip(table, recs):
        assert (row["method"], row["instance"]) == (r["method"], r["instance"])
        for col in ("objective", "best_objective", "best_bound", "vs_best_bound", "vs_best"):
            want = r[col]
            assert (row[col] == "") if want is None else float(row[col]) == pytest.approx(want)
    b = by(table, name="b", method="spectra")[0]
    assert float(b["vs_best_bound"]) == pytest.approx(0.3 / 1.2)
    assert float(b["vs_best"]) == pytest.approx(0.2)
    md = (tmp_path / "gap.md").read_text()
    assert "| a.json | a | spectra | milp | optimal | True | 2 | - | - | 2 | 2 | 0 | 0 | 1 |" in md
    png = (tmp_path / "gap.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000


def test_method_summary(recs):
    s = {r["method"]: r for r in G.method_summary(recs)}
    assert all(r["instances"] == 3 for r in s.values())
    assert s["milp"]["solved"] == 2 and s["milp"]["wins"] == 2
    assert s["milp"]["optimal"] == 1                  # a: status optimal; b: 1.0 vs bound 0.9
    assert s["milp"]["mean_gap"] == pytest.approx(0.1 / 2) and s["milp"]["worst_gap"] == pytest.approx(0.1)
    assert s["baseline"]["solved"] == 2 and s["baseline"]["wins"] == 0
    assert s["spectra"]["wins"] == 2                  # tied best on a, best on c
    assert s["spectra"]["optimal"] == 1               # a: objective = best bound 2.0
    assert s["spectra-noeq"]["mean_gap"] == pytest.approx(((3 - 2) / 3 + (1.5 - 0.9) / 1.5) / 2)


def test_profile_ratios_count_failures_and_declines_as_inf(recs):
    rat = G.profile_ratios(recs)
    assert rat[("spectra", "milp")] == [1.0, 1.0, math.inf]           # declined c
    assert rat[("spectra", "baseline")] == pytest.approx([1.25, 1.25, math.inf])   # failed b
    assert rat[("spectra", "spectra")] == pytest.approx([1.0, 1.0, 1.2])


def test_performance_profile_properties(recs):
    rat = G.profile_ratios(recs)
    taus = [1.0, 1.1, 1.2, 1.25, 1.5, 2.0, 10.0, 1e9]
    for key, rs in rat.items():
        rho = G.performance_profile(rs, taus)
        assert all(x <= y for x, y in zip(rho, rho[1:])), key            # non-decreasing
        wins = sum(1 for r in recs if (r["problem"], r["method"]) == key and r["rank"] == 1)
        assert rho[0] == pytest.approx(wins / 3), key                   # tau = 1: (tied) best
    solved_all = G.performance_profile(rat[("spectra", "spectra")], taus)
    assert solved_all[-1] == 1.0 and solved_all[1] == pytest.approx(2 / 3)
    assert G.performance_profile(rat[("spectra", "milp")], taus)[-1] == pytest.approx(2 / 3)


def test_ratio_for_min_and_max():
    assert G.ratio(3.0, 2.0, "min") == 1.5
    assert G.ratio(2.0, 3.0, "max") == 1.5            # within factor 1.5 of the best 3
    assert G.ratio(2.0, 2.0, "max") == 1.0
    assert G.ratio(0.0, 0.0, "min") == 1.0
    assert G.ratio(1.0, 0.0, "min") == math.inf       # no factor of 0 reaches 1
    assert G.ratio(-1.0, -2.0, "min") == 1.5          # not positive: 1 + relative distance
