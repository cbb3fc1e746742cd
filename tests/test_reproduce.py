"""Reproduction targets run end to end on toy settings (the real runs are benchmarks), and
where ``solve.py reproduce`` writes."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import benchmarks.delta.figs as figs
from toolkit.reproduce import TARGETS, ReproduceError, holds_full_run, run_target


def test_delta_fig6_pipeline_on_the_toy(tmp_path, monkeypatch):
    monkeypatch.setattr(figs, "MODELS", ("gpt-7b",))
    monkeypatch.setitem(figs.FIGS, "fig6", dict(figs.FIGS["fig6"], values=(400, 800)))
    paths = figs.run_fig6(quick=True, out_dir=tmp_path)
    assert all(p.exists() for p in paths)
    table = pd.read_csv(tmp_path / "delta_fig6.csv")
    assert len(table) == 2 and set(table.model) == {"gpt-7b"}   # imported: delta-fig6-simai
    text = paths[0].read_text()
    assert "HotStart runs" in text and "2 of 2 at or below the separate DELTA-Fast" in text
    # the headline: the paper's maximum reduction beside ours, a row of the report's summary
    row = next(ln for ln in paths.headline.splitlines() if ln.startswith("| gpt-7b |"))
    assert row.startswith("| gpt-7b | 10.7-17.5% (paper's range) | ") and row.count("% @ ") == 4
    table = table[table.model == "gpt-7b"]
    for m in figs.METHODS:   # nothing beats the ideal network (MILP tolerances amplify in the ratio)
        assert (table[m] >= 1 - (1e-4 if m.startswith("delta-j") else 1e-9)).all()
    assert (table["delta-joint"] <= table["best_baseline"] + 1e-6).all()
    again = figs.run_fig6(quick=True, out_dir=tmp_path)           # resumes: nothing to rerun
    assert again[0].read_text().count("gpt-7b") >= 2


def test_delta_fig9_fig10_fig11_pipelines_on_the_toy(tmp_path, monkeypatch):
    monkeypatch.setattr(figs, "MODELS", ("gpt-7b",))
    monkeypatch.setattr(figs, "FIG10_MODELS", ("gpt-7b",))
    monkeypatch.setattr(figs, "FIG11_MODELS", ("gpt-7b",))
    monkeypatch.setitem(figs.FIG11_N, True, (2,))
    heads = {}
    for run in (figs.run_fig9, figs.run_fig10, figs.run_fig11):
        report = run(quick=True, out_dir=tmp_path)
        assert all(p.exists() for p in report)
        heads[run.__name__] = report.headline
    fig9 = pd.read_csv(tmp_path / "delta_fig9.csv")
    assert set(fig9.method) == set(figs.DELTA_METHODS) and (fig9.port_ratio <= 1).all()
    for r in fig9.itertuples():           # headline: the paper's ratio beside this run's
        assert f"| {r.model} | {r.method} | {r.paper_port_ratio} | {r.port_ratio:.4g} |" \
            in heads["run_fig9"]
    assert "| megatron-462b | delta-topo max convergence | 896 s | - |" in heads["run_fig11"]
    joint = fig9[fig9.method == "delta-joint"].iloc[0]         # stage 2 keeps C <= C* (1 + 1e-6);
    # the extracted schedule may end later by the solver's row tolerance (~1e-6 x T_up,
    # models.delta.milp.extract_interval [DECISION] solver tolerance)
    assert joint.iteration_time <= joint.milp_stage1_objective * (1 + 1e-5)
    fig10 = pd.read_csv(tmp_path / "delta_fig10.csv")
    j = fig10[fig10.method == "delta-joint"].iloc[0]            # more ports never hurt the optimum
    assert j["U_p + freed"] <= j["U_p"] + 1e-4
    fig11 = pd.read_csv(tmp_path / "delta_fig11.csv")
    assert set(figs.FIG11_METHODS) <= set(fig11.columns) and (fig11[list(figs.FIG11_METHODS)] > 0).all().all()
    wall = pd.read_csv(tmp_path / "delta_fig11_wall.csv")
    milp = [m for m in figs.FIG11_METHODS if m != "delta-fast"]    # converging precedes stopping
    assert (fig11[milp].to_numpy() <= wall[milp].to_numpy() + 1e-6).all()
    # every incumbent, so the one reaching Joint's quality, comes before HotStart stops
    reach = fig11["hotstart_to_joint_quality_s"]
    assert reach.notna().all() and (reach <= wall["delta-joint-hotstart"] + 1e-3).all()


# --------------------------------------------------------------------------------------
# where `solve.py reproduce` writes (issue 28 item 5): quick runs never touch results/
# --------------------------------------------------------------------------------------
ROOT = Path(__file__).resolve().parents[1]


def _git(cwd, *args) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd,
                          capture_output=True, text=True, check=True).stdout


def _cli(cwd, *args):
    p = subprocess.run([sys.executable, str(ROOT / "solve.py"), *map(str, args)], cwd=cwd,
                       capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def test_quick_reproduce_leaves_the_committed_results_alone(tmp_path):
    """A checkout holding a2a Fig. 13's committed full run: `reproduce a2a-fig13 --quick`
    writes into results/quick/a2a/ (gitignored), so `git status results/` stays clean and the
    full report is byte-identical; its headline goes to stdout, the files to stderr; and a
    quick run told to write over the full report is refused (exit 2, one line)."""
    committed = sorted(ROOT.glob("results/a2a/a2a_fig13*"))
    assert {p.name for p in committed} >= {"a2a_fig13.md", "a2a_fig13.csv"}
    room = tmp_path / "results" / "a2a"                  # a2a's results folder
    room.mkdir(parents=True)
    for p in committed:
        shutil.copy(p, room / p.name)
    shutil.copy(ROOT / ".gitignore", tmp_path / ".gitignore")
    before = {p.name: p.read_bytes() for p in room.iterdir()}
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "full results")

    code, out, err = _cli(tmp_path, "reproduce", "a2a-fig13", "--quick")
    assert code == 0, err
    assert _git(tmp_path, "status", "--porcelain", "--untracked-files=all", "results/") == ""
    assert {p.name: p.read_bytes() for p in room.glob("a2a*")} == before
    quick = tmp_path / "results" / "quick"
    written = sorted(p.relative_to(tmp_path).as_posix() for p in quick.rglob("*") if p.is_file())
    assert written == sorted(["results/quick/a2a/a2a_fig13.md", "results/quick/a2a/a2a_fig13.csv",
                              "results/quick/a2a/a2a_fig13_curves.csv", "results/quick/a2a/a2a_fig13.png"])
    assert sorted(ln.split(" ", 1)[1] for ln in err.splitlines() if ln.startswith("wrote ")) \
        == written                                          # the files: stderr only
    assert "results/" not in out
    md = (quick / "a2a" / "a2a_fig13.md").read_text()
    assert "Regenerate: `python solve.py reproduce a2a-fig13 --quick`." in md
    claim = next(ln for ln in md.splitlines() if ln.startswith("| max ratio, n <= 64 |"))
    assert claim in out.splitlines()                    # the headline: the report's own claim
    assert claim.startswith("| max ratio, n <= 64 | <= 2.22 | ")         # paper beside ours

    code, out, err = _cli(tmp_path, "reproduce", "a2a-fig13", "--quick", "--out", "results/a2a")
    assert code == 2 and out == "" and "Traceback" not in err
    line, = err.strip().splitlines()
    assert "results/a2a/a2a_fig13.md" in line and "full run" in line
    assert {p.name: p.read_bytes() for p in room.glob("a2a*")} == before


def test_reproduce_help_lists_every_target_with_its_times():
    code, out, err = _cli(ROOT, "reproduce", "--help")
    assert code == 0, err
    assert "--out DIR" in out and "--out-dir" not in out and "results/quick/" in out
    listed = out[out.index("targets (about how long"):]
    for name, t in TARGETS.items():
        row = next(ln for ln in listed.splitlines() if ln.split()[:1] == [name])
        assert t.time_text("full") in row and t.time_text("quick") in row and t.doc in row


def test_a_quick_run_refuses_only_a_full_report_of_its_own_target(tmp_path):
    assert holds_full_run("a2a-fig13", tmp_path) is None              # no report yet
    md = tmp_path / "a2a_fig13.md"
    for line, full in (("Regenerate: `python solve.py reproduce a2a-fig13`. Machine: x.", True),
                       ("Regenerate: `python solve.py reproduce a2a-fig13 --out r`.", True),
                       ("Regenerate: `python solve.py reproduce a2a-fig13 --quick`.", False),
                       ("Regenerate: `python solve.py reproduce a2a-fig13 --quick --out r`.", False),
                       ("Regenerate: `python solve.py reproduce a2a-fig12`.", False)):
        md.write_text(f"# title\n\n{line}\n")
        assert (holds_full_run("a2a-fig13", tmp_path) == md) is full, line
    md.write_text("# title\n\nRegenerate: `python solve.py reproduce a2a-fig13`.\n")
    with pytest.raises(ReproduceError, match="a2a_fig13.md holds a full run"):
        run_target("a2a-fig13", quick=True, out_dir=tmp_path)


def test_a_benchmark_script_prints_the_headline_and_names_its_files_on_stderr(tmp_path):
    p = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "lumos" / "table1.py"), "--out",
                        str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "| Table 1 cells equal to the paper's | 60 printed cells | 60 of 60 |" in p.stdout
    assert f"wrote {tmp_path / 'lumos_table1.md'}" in p.stderr and str(tmp_path) not in p.stdout
    assert f"reproduce lumos-table1 --out {tmp_path.as_posix()}`" in \
        (tmp_path / "lumos_table1.md").read_text()


def test_delta_milp_headline_puts_the_papers_claims_beside_the_solves():
    from benchmarks.delta.milp import claims

    solves = pd.DataFrame([
        dict(case="gpt-7b N=2", method="interval (DELTA-Joint)", prune=True, hot_start=True,
             tighten=True, status="optimal", solve_s=3.2),
        dict(case="gpt-7b N=2", method="interval (DELTA-Joint)", prune=False, hot_start=True,
             tighten=False, status="optimal", solve_s=9.0),
        dict(case="gpt-7b N=2", method="fixed step 0.25 ms", prune=False, hot_start=False,
             tighten=False, status="time_limit", solve_s=120.0)])
    t = claims({"gpt-7b": 1.79}, {"gpt-7b": 0.81}, solves).set_index("claim")
    assert list(t.ours) == ["gpt-7b 1.79", "gpt-7b 0.81", "gpt-7b N=2: optimal in 3 s",
                            "gpt-7b N=2: time_limit in 120 s"]
    assert list(t.paper) == ["O(|M|^2): 2", "O(|M|): 1", '"within minutes"',
                             '"tens of hours" at 0.1 ms']


def test_the_batch_benchmarks_report_around_their_table(tmp_path):
    """benchmarks.common.table_report (batch-scaling's and batch-scaling-size's shape): title,
    command, machine and cores, the text around the table, the CSVs, the headline's columns."""
    import pandas as pd

    from benchmarks.common import table_report

    table = pd.DataFrame({"workers": [1, 2], "wall_s": [4.0, 2.5], "load": [0.5, 0.7]})
    rep = table_report(tmp_path, True, "batch-scaling-size", "A title", 2, ["before", ""],
                       table, ["after"], {"batch_scaling_size.csv": table},
                       ("Head", ["workers", "wall_s"]))
    md = (tmp_path / "batch_scaling_size.md").read_text().splitlines()
    assert md[0] == "# A title" and "reproduce batch-scaling-size --quick" in md[2]
    assert md[4].endswith("; 2 cores usable.") and md[6:8] == ["before", ""]
    assert md[8:12] == ["| workers | wall_s | load |", "|---|---|---|", "| 1 | 4 | 0.5 |",
                        "| 2 | 2.5 | 0.7 |"] and md[-1] == "after"
    assert rep == [tmp_path / "batch_scaling_size.md", tmp_path / "batch_scaling_size.csv"]
    assert rep.headline.splitlines()[0] == "Head" and "load" not in rep.headline
    assert pd.read_csv(rep[1]).equals(table)
