"""The imported SimAI/AICB workloads in DELTA's Figs. 6 and 8 and the GA benchmark (issue 18).

Workloads: the files shipped in ``instances/delta/simai/`` (README there), converted by
``solve.py generate delta --from-simai`` (instances/delta/simai_job.py). Figs. 6 and 8 on
them are their own targets (benchmarks/delta/simai_figs.py, issue 31), with their own
resumable CSVs (``results/delta/delta_runs/<fig>_simai.csv``).

Decisions (issue 18, items 4-5):

* [D] Conversions: GPT-175B with ``--pp 8`` (the AICB file is one stage of eight), the SimAI
  MoE example with its header's defaults (PP 12, GA 24) and ``--vpp 1`` (its ``vpp: 8`` is
  AICB's layers per stage; interleaving is not modelled), GPT-13B and Llama-7B with
  ``--pp 4 --stages split`` (their default conversion is DP-only: one inter-Pod task).
* [D] Quick runs use N = PP micro-batches, as the reconstructed workloads' quick runs; full
  runs the conversion's default (GA, else 8 x PP).
* [D] Fig. 8 (sequence length): the AICB files have no ``pp_comm``, so ``--hidden H
  --seq-len S`` sizes the P2P activation 2 S H bytes; H is the model's hidden size, for which
  2 x 2048 x H is exactly the activation the file's TP collectives show (the traces are at
  sequence 2048, ``TRACE_SEQ``). Only the activations scale: the file's compute and DP bytes
  stay as traced (compute at 2048), so beyond 2048 the points overstate communication
  relative to compute. The SimAI MoE file's header fixes ``pp_comm``: its activations cannot
  be scaled, and it is left out of Fig. 8.
* [D] Methods: the three baselines, DELTA-Fast, DELTA-Topo and DELTA-Joint-HotStart; the
  plain DELTA-Joint (HiGHS rarely improves on its baseline start within 60 s: results/delta/README.md)
  is not run on these workloads, to fit the shared machine.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from instances import save_instance
from toolkit.methods.delta import generate

SIMAI_DIR = Path("instances/delta/simai")
TRACE_SEQ = 2048
SIMAI = {     # workload -> (conversion options, hidden size or None if seq-len cannot scale)
    "simai-gpt175b": (dict(from_simai="aicb_G175B-M1-C03_GPT175B_megatron_tp8_pp1_mbs1_A100.txt",
                           pp=8), 12288),
    "simai-moe": (dict(from_simai="simai_workload_analytical.txt", vpp=1), None),
    "simai-gpt13b": (dict(from_simai="aicb_G13B-M1-C02_GPT13B_megatron_tp8_pp1_mbs1_sp_A100.txt",
                          pp=4, stages="split"), 5120),
    "simai-llama7b": (dict(from_simai="aicb_L7B-M1-C04_Llama7B_megatron_tp2_pp1_mbs1_A100.txt",
                           pp=4, stages="split"), 4096),
}
SIMAI_METHODS = ("prop-alloc", "sqrt-alloc", "iter-halve", "delta-fast", "delta-topo",
                 "delta-joint-hotstart")
QUICK_N = {"simai-gpt175b": 8, "simai-moe": 12, "simai-gpt13b": 4, "simai-llama7b": 4}  # = PP


def fig_workloads(param: str) -> list[str]:
    """The imported workloads a sweep over ``param`` can vary (module docstring)."""
    return [w for w, (_, hidden) in SIMAI.items() if param != "seq_len" or hidden]


def simai_instance(workload: str, quick: bool, name: str, **params):
    """``workload`` converted with its options; ``seq_len`` in ``params`` also sets the hidden
    size (the P2P activation 2 x seq_len x hidden)."""
    opts, hidden = SIMAI[workload]
    opts = dict(opts, from_simai=str(SIMAI_DIR / opts["from_simai"]))
    if "seq_len" in params:
        if not hidden:
            raise ValueError(f"{workload}: the file fixes pp_comm; seq-len cannot scale it")
        opts["hidden"] = hidden
    return generate(micro_batches=QUICK_N[workload] if quick else 0, name=name, **opts, **params)


GA_WORKLOADS = {"simai-gpt175b": "gpt175b-pp8-dp2-n64-400g.json",
                "simai-moe": "moe-pp12-dp384-n24-400g.json"}


def simai_ga_files(quick: bool, inst_dir: Path) -> list[Path]:
    """The GA benchmark's imported instances: the shipped conversions (full), or N = PP."""
    inst_dir.mkdir(parents=True, exist_ok=True)
    out = []
    for w, shipped in GA_WORKLOADS.items():
        f = inst_dir / (shipped if not quick else f"{w}_{QUICK_N[w]}.json")
        # a copy inside the runs' folder (its run keys hold in any clone), refreshed: a new
        # conversion is a new file content, so its runs are made again
        if quick:
            save_instance(simai_instance(w, True, f"{w}-{QUICK_N[w]}"), f)
        else:
            shutil.copyfile(SIMAI_DIR / shipped, f)
        out.append(f)
    return out
