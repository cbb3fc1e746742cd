"""lumos-placement end to end: list, generate (every scale, both states), solve the shipped
examples with every method, and the benchmark on a toy setting."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import instances
from tests import cli_worker
from tests.test_cli import ROOT

LUMOS = ROOT / "instances" / "lumos"


def cli(*args):
    """solve.py in the tests' CLI helper process (tests/cli_worker.py)."""
    return cli_worker.call(args)


def test_list_and_generate_help():
    code, out, _ = cli("list")
    assert code == 0
    for word in ("lumos-placement", "placement-greedy", "placement-ilp", "placement-authors",
                 "pods_first", "ep_split"):
        assert word in out
    code, out, _ = cli("generate", "lumos-placement", "--help")
    for flag in ("--gpus", "--load", "--state", "--job", "--trace", "--seed", "--k-leaf"):
        assert flag in out


@pytest.mark.parametrize("gpus, state", [(2048, "trace"), (8192, "random"), (32768, "trace")])
def test_generated_states_have_the_load_and_a_trace_job(tmp_path, gpus, state):
    f = tmp_path / "g.json"
    code, _, err = cli("generate", "lumos-placement", "--gpus", gpus, "--state", state,
                       "--load", 0.6, "--seed", 4, "-o", f)
    assert code == 0, err
    inst = instances.load_instance(f)
    assert inst.cluster.n_gpus == gpus and abs(inst.busy.mean() - 0.6) < 0.05
    assert inst.job.gpus in (1, 2, 4) or inst.job.gpus % 8 == 0
    assert inst.meta["job_ratios"]["all2all_ratio"] > 0
    code, out, err = cli("solve", f, "--method", "placement-ilp", "--format", "json")
    rec = json.loads(out)
    assert code == 0 and rec["verified"] and rec["status"] == "optimal" and rec["objective"] == rec["bound"]


def test_generator_refuses_bad_params(tmp_path):
    for args in (("--gpus", 1000), ("--load", 1.5), ("--state", "x"), ("--job", 99999),
                 ("--trace", tmp_path / "missing")):
        code, out, err = cli("generate", "lumos-placement", *args, "-o", tmp_path / "g.json")
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, (args, err)


def test_shipped_examples_with_every_method():
    files = sorted(LUMOS.glob("placement-*.json"))
    assert len(files) >= 4
    recs = {}
    for f in files:
        for m in ("placement-greedy", "placement-ilp", "placement-authors"):
            code, out, err = cli("solve", f, "--method", m, "--format", "json")
            recs[f.stem, m] = (code, json.loads(out))
    # locality vs best fit (README): the greedy keeps one leaf, the ILP leaves fewer idle GPUs
    assert recs["placement-bestfit-48", "placement-greedy"][1]["objective"] == 4
    assert recs["placement-bestfit-48", "placement-ilp"][1]["objective"] == 2
    assert recs["placement-bestfit-48", "placement-greedy"][1]["leaves_used"] == 1
    for m in ("placement-greedy", "placement-ilp", "placement-authors"):      # no room
        code, rec = recs["placement-fragmented-ep", m]
        assert code == 1 and rec["status"] == "infeasible" and "no placement" in rec["message"]
    for (stem, m), (code, rec) in recs.items():
        if stem != "placement-fragmented-ep":
            assert code == 0 and rec["verified"], (stem, m)
            assert rec["objective"] >= recs[stem, "placement-ilp"][1]["objective"]
    code, out, _ = cli("solve", LUMOS / "placement-fragmented-ep.json", "--method",
                       "placement-greedy", "--option", "ep_split=1", "--format", "json")
    rec = json.loads(out)
    assert code == 0 and rec["verified"] and rec["ep_exception"] and rec["cross_pod_ep_domains"] == 1


def test_benchmark_on_a_toy_setting(tmp_path, monkeypatch):
    import benchmarks.lumos.placement as bench

    monkeypatch.setattr(bench, "SCALES", (2048,))
    monkeypatch.setattr(bench, "QUICK_ARRIVALS", 12)
    paths = bench.run(quick=True, out_dir=tmp_path)
    df = pd.read_csv(tmp_path / "lumos_placement.csv")
    assert len(df) == 12 and all(p.exists() for p in paths)
    assert (df.greedy_idle >= df.ilp_idle).all() and (df.ilp_pods_first_pods <= df.ilp_pods).all()
    md = (tmp_path / "lumos_placement.md").read_text()
    assert "python solve.py reproduce lumos-placement --quick" in md and "load average" in md
    assert np.isfinite(df.ilp_ms).all() and (df.greedy_ms >= 0).all()
