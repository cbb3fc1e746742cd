"""SimAI/AICB import (instances/delta/simai.py, simai_job.py, generate --from-simai).

Shipped files: row counts, types and totals checked by hand against the text; tiny
hand-written files whose instances are computed by hand (stage placement of the embedding,
output layer and loss: issue 31); bad files through the CLI (exit 2, one line naming the
file and the line, no traceback), ``--lenient`` on the public Llama-65B file whose line 2
disagrees with its rows; hypothesis mutations of valid files, strict and lenient.
"""
from __future__ import annotations

import json
import logging
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
from tests import cli_worker
from toolkit.registry import problem

ROOT = Path(__file__).resolve().parents[3]
SIMAI = ROOT / "instances" / "delta" / "simai"
G13 = SIMAI / "aicb_G13B-M1-C02_GPT13B_megatron_tp8_pp1_mbs1_sp_A100.txt"
G175 = SIMAI / "aicb_G175B-M1-C03_GPT175B_megatron_tp8_pp1_mbs1_A100.txt"
L7 = SIMAI / "aicb_L7B-M1-C04_Llama7B_megatron_tp2_pp1_mbs1_A100.txt"
L65 = SIMAI / "aicb_L65B-M1-C05_Llama65B_megatron_tp8_pp1_mbs1_A100.txt"   # 839 announced, 33 held
MOE = SIMAI / "simai_workload_analytical.txt"

# A hand-made new-header file: TP 2, PP 2, GA 2, 8 GPUs (DP 2), pp_comm 1 MB. Two layer rows
# (GA copies that differ), three iteration rows.
TINY = """HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ep: 1 pp: 2 vpp: 1 ga: 2 all_gpus: 8 checkpoints: 0 checkpoint_initiates: 0 pp_comm: 1000000.0
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
    # 12 layers on every stage; the embedding (523895 ns) on the first, the loss rows
    # (3 x cross_entropy, 1 ns each way) on the last (Megatron's placement, issue 31)
    layers_f, layers_b = 12 * (2571000 + 1584000), 12 * (2 * 2454000 + 2 * 2081000)
    assert p["fwd_ms"] == pytest.approx([(layers_f + 523895) / 1e6] + [layers_f / 1e6] * 6
                                        + [(layers_f + 3) / 1e6])
    assert p["bwd_ms"] == pytest.approx([(layers_b + 2) / 1e6] + [layers_b / 1e6] * 6
                                        + [(layers_b + 6) / 1e6])
    assert job["opt_ms"] == pytest.approx((13848002 + 13740002 + 3 * 3) / 1e6)
    assert p["dp_mb"] == [pytest.approx((11175321600 + 1) / 2 / 1e6)] * 8   # RS + AG, (R-1)/R = 1/2
    assert p["pp_mb"] == pytest.approx(8 * 50331648 / 1e6)                 # no SP: full per rank
    assert p["settings"]["activation_from"] == "tp_collectives"
    split = convert_simai(G175, pp=8, p2p_per_rank="split").job["profile"]
    assert split["pp_mb"] == pytest.approx(50331648 / 1e6)


def test_moe_conversion_by_hand():
    inst = convert_simai(MOE, vpp=1)          # its vpp: 8 is AICB's layers per stage
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
    emb = [n == "embedding_layer" for n in w.names]
    out = [n == "final_column" for n in w.names]
    assert sum(emb) == sum(out) == 24                    # one of each per GA copy
    every = w.compute[6:1782, 0].sum() - w.compute[emb, 0].sum() - w.compute[out, 0].sum()
    assert p["fwd_ms"][1:11] == [pytest.approx(every / 24 / 1e6)] * 10
    assert p["fwd_ms"][0] == pytest.approx((every + 24 * 622731) / 24 / 1e6)
    assert p["fwd_ms"][11] == pytest.approx((every + 24 * 875420) / 24 / 1e6)   # + loss: 0 ns
    # the first copy's embedding has a 15091072 ns weight-gradient time, the others 875420
    assert p["bwd_ms"][0] - p["bwd_ms"][1] == pytest.approx((24 + 15091072 + 23 * 875420) / 24 / 1e6)
    assert inst.n_tasks == 2 * 24 * (6 - 1) + 12 * 2 and len(inst.pods) == 6


@pytest.mark.parametrize("name,path,opts", [
    ("gpt13b-pp1-dp2-n8-400g", G13, {}), ("gpt175b-pp8-dp2-n64-400g", G175, {"pp": 8}),
    ("llama7b-pp1-dp2-n8-400g", L7, {}), ("moe-pp12-dp384-n24-400g", MOE, {"vpp": 1})])
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


# Old header, TP 2: one iteration row, the embedding, one layer, the output layer, a loss row.
PLACED = """HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 checkpoints: 0 checkpoint_initiates: 0
6
grad_param\t-1\t1\tNONE\t0\t2000000\tNONE\t0\t1\tREDUCESCATTER\t4000000\t100
embedding_layer\t-1\t500000\tALLREDUCE\t1000000\t1000\tNONE\t0\t2000\tNONE\t0\t100
layer\t-1\t3000000\tALLREDUCE\t1000000\t2000000\tNONE\t0\t4000000\tNONE\t0\t100
final_column\t-1\t700000\tALLGATHER\t1000000\t800000\tREDUCESCATTER\t0\t900000\tNONE\t0\t100
cross_entropy1\t-1\t10000\tALLREDUCE\t8192\t20000\tNONE\t0\t30000\tNONE\t0\t100
optimizer1\t-1\t0\tALLREDUCE\t4\t0\tNONE\t0\t0\tNONE\t0\t100
"""


@pytest.mark.parametrize("pp,stages,fwd,bwd", [
    (3, "file", [3.5, 3.0, 3.71], [6.003, 6.0, 7.75]),      # every stage runs the layer row
    (3, "split", [1.5, 1.0, 1.71], [2.003, 2.0, 3.75]),     # the layer row divided over 3
    (1, "file", [4.21], [7.753])])                          # one stage holds all of it
def test_embedding_first_output_and_loss_last_by_hand(tmp_path, pp, stages, fwd, bwd):
    path = tmp_path / "placed.txt"
    path.write_text(PLACED)
    job = convert_simai(path, pp=pp, stages=stages).job
    p = job["profile"]
    assert p["fwd_ms"] == pytest.approx(fwd) and p["bwd_ms"] == pytest.approx(bwd)
    share = 1 / pp if stages == "split" else 1
    assert job["opt_ms"] == pytest.approx(2.000002 * share)        # grad_param + optimizer1
    assert p["settings"]["first_stage_rows"] == 1 and p["settings"]["last_stage_rows"] == 2
    if pp > 1:
        assert p["pp_mb"] == 2.0              # 1 MB activation (TP collectives), full, 2 GPUs


def test_vpp_is_refused_naming_it_and_converts_with_vpp_1(tmp_path, tiny):
    path = tmp_path / "vpp.txt"
    path.write_text(TINY.replace("vpp: 1", "vpp: 4"))
    with pytest.raises(InstanceError, match="field 'line 1, vpp'.*interleaved 1F1B.*--vpp 1") as err:
        convert_simai(path)
    assert str(path) in str(err.value)
    same = ("fwd_ms", "bwd_ms", "dp_mb", "pp_mb")
    got, want = convert_simai(path, vpp=1).job["profile"], convert_simai(tiny).job["profile"]
    assert [got[k] for k in same] == [want[k] for k in same]
    for v in (2, 4):
        with pytest.raises(InstanceError, match=f"field 'vpp': interleaved 1F1B \\(vpp = {v}"):
            convert_simai(path, vpp=v)
    r = _cli("generate", "delta", "--from-simai", path, "-o", tmp_path / "o.json")
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and "vpp" in lines[0] and str(path) in lines[0]


def test_lenient_reads_the_public_llama65b_file_with_one_warning(tmp_path):
    bad = tmp_path / L65.name
    bad.write_bytes(L65.read_bytes())
    out = tmp_path / "o.json"
    r = _cli("generate", "delta", "--from-simai", bad, "--pp", "8", "-o", out)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and "Traceback" not in r.stderr
    assert str(bad) in lines[0] and "839" in lines[0] and "--lenient" in lines[0]
    assert not out.exists()
    r = _cli("generate", "delta", "--from-simai", bad, "--pp", "8", "--lenient", "-o", out)
    assert r.returncode == 0, r.stderr
    warn = [ln for ln in r.stderr.splitlines() if ln.startswith("warning:")]
    assert len(warn) == 1 and str(bad) in warn[0] and "839" in warn[0] and "33" in warn[0]
    assert r.stdout == ""
    fixed = tmp_path / "fixed.txt"                     # the same rows with the count corrected
    fixed.write_text(L65.read_text().replace("\n839\n", "\n33\n", 1))
    again = convert_simai(fixed, pp=8).job
    got = json.loads(out.read_text())["job"]
    same = ("fwd_ms", "bwd_ms", "dp_mb", "pp_mb")
    assert [got["profile"][k] for k in same] == [again["profile"][k] for k in same]
    assert got["opt_ms"] == again["opt_ms"] and got["micro_batches"] == 64


def test_lenient_accepts_extra_rows_and_keeps_every_other_check(tmp_path, caplog):
    extra = tmp_path / "extra.txt"
    extra.write_text(TINY + _lines(TINY)[4] + _lines(TINY)[5])   # one more GA copy's layers
    w = read_simai(extra, lenient=True)
    assert (w.rows, w.announced_rows) == (7, 5)
    with caplog.at_level(logging.WARNING, logger="instances.delta.simai"):
        job = convert_simai(extra, lenient=True).job
    assert len(caplog.records) == 1 and "announces 5 rows but the file holds 7" in caplog.text
    assert job["profile"]["fwd_ms"] == [4.0, 4.0]         # (3 + 1 + 3 + 1) ms over 2 copies
    with pytest.raises(InstanceError, match="--lenient reads every row"):
        read_simai(extra)
    short = tmp_path / "short.txt"                      # 3 of 5 rows: lenient reads them, and
    short.write_text("".join(_lines(TINY)[:5]))         # 1 layer row is not ga = 2 copies:
    r = _cli("generate", "delta", "--from-simai", short, "--lenient", "-o", tmp_path / "o.json")
    lines = r.stderr.strip().splitlines()               # one error line, no warning
    assert r.returncode == 2 and len(lines) == 1 and "'line 1, ga'" in lines[0]


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
    ("checkpoints", TINY.replace("checkpoints: 0", "checkpoints: 2 3 4"), "line 1, checkpoints"),
    ("checkpoint initiates", TINY.replace("checkpoint_initiates: 0", "checkpoint_initiates: 1 4"),
     "line 1, checkpoint_initiates"),
    ("blank row", TINY.replace("\nlayer", "\n\nlayer", 1), "line 5"),
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
TOKENS = ["nan", "-1", "0", "1", "2", "1.5", "1e9", "abc", "NONE", "ALLTOALL_EP", "REDUCESCATTER_DP_EP",
          "BROADCAST", str(10**13), "inf", "", "pp_comm:", "99999999999999999999"]
SMALL = {"tiny": TINY, "gpt175b": G175.read_text()}


def _mutated(tmp_path, data) -> Path:
    """A shipped or hand-made file with one line mutated (a token, dropped, doubled or cut)."""
    which = data.draw(st.sampled_from(sorted(SMALL)), label="file")
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
    return path


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_files_give_an_instance_or_a_named_error(tmp_path, data):
    path = _mutated(tmp_path, data)
    pp = data.draw(st.sampled_from([0, 2]), label="pp")
    errors = {}
    for lenient in (False, True):
        try:
            inst = convert_simai(path, pp=pp, lenient=lenient)
        except InstanceError as exc:
            assert str(path) in str(exc) and "\n" not in str(exc)
            errors[lenient] = str(exc)
            continue
        assert inst.n_tasks >= 1 and np.all(inst.volume > 0) and np.all(np.isfinite(inst.release))
    # strict names the option where only the row count is at fault; lenient never refuses
    # for the count, and accepts every file strict accepts
    assert "--lenient" not in errors.get(True, "")
    assert False in errors or True not in errors


@settings(max_examples=12, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_files_through_the_cli_keep_the_exit_2_contract(tmp_path, data):
    """``generate delta --from-simai`` strict and ``--lenient``: exit 0 with the file written,
    nothing on stdout and at most the one warning (lenient) besides the note; or exit 2 with
    exactly one line naming the file (no warning before it)."""
    path = _mutated(tmp_path, data)
    out = tmp_path / "o.json"
    for flag in ([], ["--lenient"]):
        out.unlink(missing_ok=True)
        code, stdout, err = cli_worker.call(["generate", "delta", "--from-simai", path, "--pp",
                                             "2", *flag, "-o", out])
        lines = err.strip().splitlines()
        assert stdout == "" and "Traceback" not in err
        if code == 2:
            assert len(lines) == 1 and str(path) in lines[0] and not out.exists(), lines
            assert not flag or "--lenient" not in lines[0]
        else:
            assert code == 0 and out.exists(), err
            warnings = [ln for ln in lines if ln.startswith("warning:")]
            assert len(warnings) <= len(flag) and len(lines) == len(warnings) + 1
