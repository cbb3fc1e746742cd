"""SimAI/AICB import (instances/delta/simai.py, simai_job.py, generate --from-simai).

Shipped files: row counts, types and totals checked by hand against the text; a tiny
hand-written file whose instance is computed by hand; bad files through the CLI (exit 2,
one line naming the file and the line, no traceback); hypothesis mutations of valid files.
"""
from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import instances
from instances.delta.dag import build_full_dag
from instances.delta.models import Job
from instances.delta.simai import read_simai
from instances.delta.simai_job import convert_simai
from instances.errors import InstanceError
from toolkit.registry import problem

ROOT = Path(__file__).resolve().parents[3]
SIMAI = ROOT / "instances" / "delta" / "simai"
G13 = SIMAI / "aicb_G13B-M1-C02_GPT13B_megatron_tp8_pp1_mbs1_sp_A100.txt"
G175 = SIMAI / "aicb_G175B-M1-C03_GPT175B_megatron_tp8_pp1_mbs1_A100.txt"
L7 = SIMAI / "aicb_L7B-M1-C04_Llama7B_megatron_tp2_pp1_mbs1_A100.txt"
MOE = SIMAI / "simai_workload_analytical.txt"

# A hand-made new-header file: TP 2, PP 2, GA 2, 8 GPUs (DP 2), pp_comm 1 MB. Two layer rows
# (GA copies that differ), three iteration rows.
TINY = """HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ep: 1 pp: 2 vpp: 4 ga: 2 all_gpus: 8 checkpoints: 0 checkpoint_initiates: 0 pp_comm: 1000000.0
5
grad_param_comm\t-1\t1\tNONE\t0\t1\tNONE\t0\t1\tREDUCESCATTER\t4000000\t100
grad_param_compute\t-1\t0\tNONE\t0\t2000000\tNONE\t0\t0\tNONE\t0\t100
layer\t-1\t3000000\tALLREDUCE\t1000000\t2000000\tNONE\t0\t4000000\tNONE\t0\t100
layer\t-1\t1000000\tALLREDUCE\t1000000\t2000000\tNONE\t0\t2000000\tNONE\t0\t100
optimizer1\t-1\t0\tALLREDUCE\t4\t0\tNONE\t0\t0\tNONE\t0\t100
"""


def _cli(*args):
    return subprocess.run([sys.executable, str(ROOT / "solve.py"), *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture
def tiny(tmp_path):
    p = tmp_path / "tiny.txt"
    p.write_text(TINY)
    return p


# ---- shipped files ---------------------------------------------------------------------------
def test_shipped_files_parse_with_hand_checked_counts_and_totals():
    w = read_simai(G175)
    assert w.rows == 33 and not w.new_header and w.header["tp"] == 8
    assert Counter(w.comm_type[:, 0]) == {"ALLREDUCE": 29, "NONE": 4}   # 24 layers + emb + norm + 3 CE
    # forward ns: embedding 523895 + 12 x (2571000 + 1584000) + eight 1-ns rows
    assert w.compute[:, 0].sum() == 523895 + 12 * (2571000 + 1584000) + 8
    assert w.comm_bytes[:, 2].sum() == 11175321600 + 1                  # grad_param RS + grad_gather AG
    assert w.names[0] == "grad_gather" and w.line[0] == 3 and w.line[-1] == 35

    w = read_simai(MOE)
    assert w.rows == 1789 and w.new_header
    assert w.header == {"tp": 2, "ep": 16, "pp": 12, "vpp": 8, "ga": 24, "all_gpus": 9216,
                        "pp_comm": 50331648}
    kinds = Counter(w.comm_type.ravel())
    assert kinds["ALLTOALL_EP"] == 24 * 8 * 2 * 2       # GA x layers x 2 rows x (fwd, ig)
    assert kinds["ALLGATHER_DP_EP"] == kinds["REDUCESCATTER_DP_EP"] == 1
    assert Counter(w.names)["attention_column"] == 24 * 8

    w = read_simai(G13)
    assert w.rows == 172 and w.comm_type[0, 0] == "BROADCAST"
    assert Counter(w.names)["mlp_row_layer"] == 40
    w = read_simai(L7)
    assert w.rows == 76 and w.header["tp"] == 2
    assert w.compute[4:68, 0].sum() == 32 * (539986 + 486330)


def test_gpt175b_conversion_by_hand():
    job = convert_simai(G175, pp=8).job
    p = job["profile"]
    assert (job["tp"], job["pp"], job["gpus"], job["micro_batches"]) == (8, 8, 128, 64)
    assert p["fwd_ms"] == [pytest.approx(50.383895)] * 8
    assert p["bwd_ms"] == [pytest.approx(12 * (2 * 2454000 + 2 * 2081000) / 1e6 + 2e-6)] * 8
    assert job["opt_ms"] == pytest.approx((13848002 + 13740002 + 3 * 3 + 3 * 3) / 1e6)
    assert p["dp_mb"] == [pytest.approx((11175321600 + 1) / 2 / 1e6)] * 8   # RS + AG, (R-1)/R = 1/2
    assert p["pp_mb"] == pytest.approx(8 * 50331648 / 1e6)                 # no SP: full per rank
    assert p["settings"]["activation_from"] == "tp_collectives"
    split = convert_simai(G175, pp=8, p2p_per_rank="split").job["profile"]
    assert split["pp_mb"] == pytest.approx(50331648 / 1e6)


def test_moe_conversion_by_hand():
    inst = convert_simai(MOE)
    job, p = inst.job, inst.job["profile"]
    assert (job["ep"], job["etp"], job["pp"], job["micro_batches"]) == (16, 2, 12, 24)
    R, k = 24, 16                       # DP 384 / (EP 16) replicas; 16 DP ranks per 32-GPU unit
    assert p["settings"]["replicas"] == R and p["settings"]["sequence_parallel"]
    dense = (2807758848 + 5615517696) * (R - 1) / R / k
    expert = (19327352832 + 38654705664) * (R - 1) / R
    assert p["dp_mb"][0] == pytest.approx((dense + expert) / 1e6)
    assert p["pp_mb"] == pytest.approx(32 * 50331648 / 2 / 1e6)          # SP: pp_comm / TP per rank
    assert job["opt_ms"] == pytest.approx(29.700241)
    w = read_simai(MOE)
    assert p["fwd_ms"][0] == pytest.approx(w.compute[6:1782, 0].sum() / 24 / 1e6)
    assert inst.n_tasks == 2 * 24 * (6 - 1) + 12 * 2 and len(inst.pods) == 6


@pytest.mark.parametrize("name,path,opts", [
    ("gpt13b-pp1-dp2-n8-400g", G13, {}), ("gpt175b-pp8-dp2-n64-400g", G175, {"pp": 8}),
    ("llama7b-pp1-dp2-n8-400g", L7, {}), ("moe-pp12-dp384-n24-400g", MOE, {})])
def test_shipped_instances_are_the_documented_conversions(name, path, opts):
    shipped = instances.load_instance(SIMAI / f"{name}.json")
    fresh = problem("delta").generator.run(from_simai=str(path), name=f"simai-{name}", **opts)
    assert json.loads(json.dumps(fresh.to_dict())) == json.loads((SIMAI / f"{name}.json").read_text())
    assert shipped.n_tasks == fresh.n_tasks and shipped.n_tasks <= 400 and len(shipped.pods) <= 6


# ---- a hand-made file ------------------------------------------------------------------------
def test_tiny_file_by_hand(tiny):
    inst = convert_simai(tiny, gpus_per_pod=2)          # one 2-GPU stage per Pod
    job, p = inst.job, inst.job["profile"]
    assert (job["gpus"], job["micro_batches"], job["gpus_per_pod_per_replica"]) == (8, 2, 2)
    assert p["fwd_ms"] == [2.0, 2.0]                     # (3 + 1) / 2 copies
    assert p["bwd_ms"] == [5.0, 5.0]                     # (2 + 4 + 2 + 2) / 2
    assert job["opt_ms"] == pytest.approx(2.000003)       # iteration rows' compute
    assert p["dp_mb"] == [2.0, 2.0]                      # RS 4 MB over R = 2: (R-1)/R x 4
    assert p["pp_mb"] == 2.0                             # no SP: 1 MB per rank x 2 GPUs
    # 2 Pods per replica: 2 x N x 1 boundary PP tasks + one merged DP task per stage (R = 2)
    kinds = Counter(t["kind"] for t in inst.tasks)
    assert kinds == {"pp": 4, "dp": 2} and inst.pods == ["r0b0", "r0b1"]
    assert all(t["volume"] == 2.0 and t["flows"] == 2 for t in inst.tasks if t["kind"] == "pp")
    assert all(t["volume"] == 4.0 and t["flows"] == 2 for t in inst.tasks if t["kind"] == "dp")
    g, _ = build_full_dag(Job.from_dict(job))
    dur = {n[0]: d for n, d in zip(g.names, g.dur) if n[0] in "FBO"}
    assert dur == {"F": 2.0, "B": 5.0, "O": pytest.approx(2.000003)}
    # --pods is the same placement; folding at 8 Gb/s = 1 byte/ns adds 1 ms per TP all-reduce
    assert convert_simai(tiny, pods=4).job == job
    fold = convert_simai(tiny, gpus_per_pod=2, fold_gbps=8.0).job
    assert fold["profile"]["fwd_ms"] == [3.0, 3.0] and fold["opt_ms"] == pytest.approx(2.000007)
    assert convert_simai(tiny, p2p_per_rank="split").job["profile"]["pp_mb"] == 1.0
    derived = problem("delta").generator.run(from_simai=str(tiny), gpus_per_pod=2, form="derived")
    again = type(derived).from_dict(json.loads(json.dumps(derived.to_dict())))
    assert derived.job is None and again.n_tasks == 6 and np.array_equal(again.deps, inst.deps)
    split = convert_simai(tiny, stages="split").job
    assert split["profile"]["fwd_ms"] == [1.0, 1.0] and split["profile"]["dp_mb"] == [1.0, 1.0]


def test_cli_generates_and_prop_alloc_solves(tmp_path, tiny):
    out = tmp_path / "t.json"
    r = _cli("generate", "delta", "--from-simai", tiny, "--gpus-per-pod", "2", "-o", out)
    assert r.returncode == 0, r.stderr
    r = _cli("solve", SIMAI / "gpt175b-pp8-dp2-n64-400g.json", out, "--method", "prop-alloc",
             "--format", "json")
    assert r.returncode == 0, r.stderr
    recs = [json.loads(line) for line in r.stdout.splitlines()]
    assert [x["verified"] for x in recs] == [True, True] and recs[0]["tasks"] == 392
    assert recs[0]["iteration_time"] >= recs[0]["lower_bound"] > 0


# ---- bad files through the CLI ---------------------------------------------------------------
def _lines(text):
    return text.splitlines(keepends=True)


def _edit(row: int, col: int, value: str) -> str:
    rows = _lines(TINY)
    tok = rows[row].rstrip("\n").split("\t")
    tok[col] = value
    rows[row] = "\t".join(tok) + "\n"
    return "".join(rows)


BAD = [
    ("truncated", "".join(_lines(TINY)[:5]), "line 6"),
    ("non-numeric", _edit(3, 2, "fast"), "line 4"),
    ("nan", _edit(4, 4, "nan"), "line 5"),
    ("negative", _edit(2, 5, "-7"), "line 3"),
    ("unknown type", _edit(4, 3, "ALLSCATTER"), "line 5"),
    ("fraction", _edit(3, 10, "2.5"), "line 4"),
    ("too many rows", TINY + _lines(TINY)[4], "line 8"),
    ("row count", TINY.replace("\n5\n", "\n6\n"), "line 8"),
    ("huge row count", TINY.replace("\n5\n", "\n99999999999999\n"), "line 2"),
    ("field count", _edit(3, 11, "100\t7"), "line 4"),
    ("absurd size", _edit(2, 10, "9" * 19), "line 3"),
    ("bad header key", TINY.replace("vpp:", "vvp:"), "line 1"),
    ("empty", "", "line 1"),
    ("ga copies", TINY.replace("ga: 2", "ga: 3"), "line 1"),
]


@pytest.mark.parametrize("case,text,where", BAD, ids=[b[0] for b in BAD])
def test_bad_files_exit_2_naming_file_and_line(tmp_path, case, text, where):
    bad = tmp_path / f"bad-{case.replace(' ', '_')}.txt"
    bad.write_text(text)
    r = _cli("generate", "delta", "--from-simai", bad, "-o", tmp_path / "o.json")
    assert r.returncode == 2, (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr
    assert str(bad) in lines[0] and f"'{where}" in lines[0], lines[0]
    assert not (tmp_path / "o.json").exists()


def test_simai_options_need_the_file_and_are_checked(tmp_path, tiny):
    r = _cli("generate", "delta", "--model", "gpt-7b", "--pp", "3", "-o", tmp_path / "o.json")
    assert r.returncode == 2 and "--from-simai" in r.stderr
    for opts, field in (({"pods": 3}, "pods"), ({"gpus_per_pod": 3}, "gpus_per_pod"),
                        ({"stages": "all"}, "stages"), ({"pp": 3}, "all_gpus"), ({"etp": 3}, "etp")):
        with pytest.raises(InstanceError, match=field) as err:
            convert_simai(tiny, **opts)
        assert str(tiny) in str(err.value)


# ---- hypothesis: mutate valid files line by line ----------------------------------------------
TOKENS = ["nan", "-1", "0", "1", "1.5", "1e9", "abc", "NONE", "ALLTOALL_EP", "REDUCESCATTER_DP_EP",
          "BROADCAST", str(10**13), "inf", "", "pp_comm:", "99999999999999999999"]
SMALL = {"tiny": TINY, "gpt175b": G175.read_text()}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(which=st.sampled_from(sorted(SMALL)), data=st.data())
def test_mutated_files_give_an_instance_or_a_named_error(tmp_path, which, data):
    rows = _lines(SMALL[which])
    i = data.draw(st.integers(0, len(rows) - 1), label="line")
    op = data.draw(st.sampled_from(["token", "drop", "dup", "cut"]), label="op")
    if op == "token":
        tok = rows[i].split()
        j = data.draw(st.integers(0, max(len(tok) - 1, 0)), label="col")
        tok[j:j + 1] = [data.draw(st.sampled_from(TOKENS), label="value")]
        rows[i] = "\t".join(tok) + "\n"
    elif op == "drop":
        del rows[i]
    elif op == "dup":
        rows.insert(i, rows[i])
    else:
        rows[i] = rows[i][: data.draw(st.integers(0, len(rows[i])), label="cut")]
    path = tmp_path / f"{which}.txt"
    path.write_text("".join(rows))
    pp = data.draw(st.sampled_from([0, 2]), label="pp")
    try:
        inst = convert_simai(path, pp=pp)
    except InstanceError as exc:
        assert str(path) in str(exc)
        return
    assert inst.n_tasks >= 1 and np.all(inst.volume > 0) and np.all(np.isfinite(inst.release))
