"""The ``batch-overhead`` benchmark (issue 29 item 3): registered as a reproduce target, and
its per-task arithmetic, summary and report on synthetic records (no batch runs, no timing)."""
from __future__ import annotations

import pandas as pd
import pytest

from benchmarks import batch_overhead as bo
from toolkit.reproduce import TARGETS, target_of


def _records(runtimes, status="feasible"):
    return pd.DataFrame({"instance": [f"i{k}.json" for k in range(len(runtimes))],
                         "status": [status] * len(runtimes), "runtime_s": runtimes})


def test_the_target_is_registered_with_its_times():
    t = TARGETS["batch-overhead"]
    assert t.entry == "benchmarks.batch_overhead:run" and t.full and t.quick
    assert target_of(bo.__file__, "run") == "batch-overhead"


def test_per_task_takes_the_runs_cpu_and_runtimes_out():
    m = bo.per_task(_records([0.2, 0.3, 0.5, 1.0]), cpu_s=2.5, inside_cpu_s=2.1, wall_s=2.2)
    assert m["tasks"] == 4 and m["runtime_sum_s"] == pytest.approx(2.0)
    assert m["cpu_ms"] == pytest.approx(100.0)            # (2.5 - 2.1) s / 4
    assert m["wall_ms"] == pytest.approx(50.0)            # (2.2 - 2.0) s / 4


def test_a_task_that_did_not_finish_is_no_measure():
    rec = pd.concat([_records([0.1]), _records([0.2], status="error")], ignore_index=True)
    with pytest.raises(ValueError, match="1 of 2 tasks"):
        bo.per_task(rec, cpu_s=1.0, inside_cpu_s=0.3, wall_s=1.0)
    with pytest.raises(ValueError):
        bo.per_task(_records([]), cpu_s=1.0, inside_cpu_s=0.3, wall_s=1.0)


def test_rounds_give_the_fixed_cost_medians_and_worst(tmp_path):
    rows = []
    for load, (allin, warm) in zip((1.0, 2.0, 3.0), ((30.0, 10.0), (26.0, 12.0), (40.0, 11.0))):
        first = {"tasks": 64, "cpu_ms": allin, "wall_ms": allin + 2, "wall_s": 14.0,
                 "runtime_sum_s": 12.0}
        rows.append({"load": load, **bo.round_row(first, dict(first, cpu_ms=warm,
                                                                wall_ms=warm + 1))})
    rounds = pd.DataFrame(rows)
    assert rounds.fixed_cpu_s.tolist() == pytest.approx([1.28, 0.896, 1.856])   # x 64 tasks
    s = bo.summarize(rounds).set_index("measure")
    allin = s.loc[bo.MEASURES["allin_cpu_ms"][0]]
    assert (allin["median"], allin["worst"]) == (30.0, 40.0)
    assert s.loc[bo.MEASURES["warm_wall_ms"][0], "worst"] == 13.0
    assert "not met" in bo.verdict(s.reset_index())
    assert "met in every round" in bo.verdict(bo.summarize(rounds.assign(allin_wall_ms=15.0)))
    rep = bo._report(tmp_path, False, rounds, 2)
    assert rep == [tmp_path / "batch_overhead.md", tmp_path / "batch_overhead.csv"]
    md = (tmp_path / "batch_overhead.md").read_text()
    assert "`python solve.py reproduce batch-overhead --out" in md
    assert "before each round: 1.0, 2.0, 3.0" in md and "not met at this load" in md
