"""Readable output (issue 14 item 8): the table's file column, integers that stay integers
in every CSV, list fields as JSON arrays (JSON) and one JSON string (CSV), and one column
rule for the batch CSV and ``solve``/``gap --format csv``."""
from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from tests import cli_worker
from toolkit.run import CORE_FIELDS

ROOT = Path(__file__).resolve().parents[1]
SPECTRA = str(ROOT / "instances" / "examples" / "worked_example.json")
DELTA = str(ROOT / "instances" / "delta" / "t0-hand.json")
LUMOS = str(ROOT / "instances" / "lumos" / "three-pod-full-mesh-cross.json")
from toolkit.batch import KEY_FIELDS as BATCH_ONLY   # the batch CSV's bookkeeping columns


def run(*argv) -> tuple[int, str]:
    """solve.py in the tests' CLI helper process: (exit code, stdout)."""
    return cli_worker.call(argv)[:2]


def table(text: str) -> tuple[list[str], list[list[str]]]:
    lines = [ln.split() for ln in text.splitlines() if ln.strip() and not ln.startswith("==")]
    return lines[0], lines[1:]


def no_float_ints(df: pd.DataFrame, cols) -> None:
    """Every non-empty cell of ``cols`` (read as text) is written as an integer."""
    for c in cols:
        cells = df[c].dropna()
        assert len(cells), c
        assert all(s.lstrip("-").isdigit() for s in cells), (c, list(cells))


# -- table: file column --------------------------------------------------------------------
def test_table_shows_the_file_basename_when_unambiguous():
    code, out = run("solve", SPECTRA, LUMOS)
    assert code == 0
    tables = [t for t in out.split("== ") if t.strip()]
    assert len(tables) == 2                              # one table per problem
    for t, f in zip(tables, (SPECTRA, LUMOS)):
        head, rows = table(t.split("\n", 1)[1])
        assert head[:3] == ["file", "name", "method"]
        assert rows[0][0] == Path(f).name


def test_table_shows_the_path_as_given_when_basenames_clash(tmp_path):
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        shutil.copy(SPECTRA, tmp_path / d / "x.json")
    paths = [str(tmp_path / d / "x.json") for d in ("a", "b")]
    code, out = run("solve", *paths)
    assert code == 0
    head, rows = table(out)
    assert head[0] == "file"
    assert [r[0] for r in rows] == paths


def test_gap_and_batch_tables_have_the_file_column(tmp_path):
    code, out = run("gap", SPECTRA, "--methods", "spectra,spectra-noeq")
    assert code == 0
    head, rows = table(out)
    assert head[0] == "file" and {r[0] for r in rows} == {"worked_example.json"}
    code, out = run("batch", DELTA, "--methods", "sqrt-alloc", "--out", tmp_path / "b",
                    "--no-progress")
    assert code == 0
    head, rows = table(out)
    assert head[0] == "file" and rows[0][0] == "t0-hand.json"


# -- CSV: integers, lists, columns ---------------------------------------------------------
@pytest.fixture(scope="module")
def csvs(tmp_path_factory):
    """The same runs (a heuristic without a model, an exact model) as solve, gap and batch CSV."""
    tmp = tmp_path_factory.mktemp("csv")
    got = {}
    for f, methods in ((DELTA, "sqrt-alloc,delta-joint"), (LUMOS, "itv-mdmcf,itv-ilp")):
        prob = Path(f).parent.name
        texts = [run("solve", f, "--method", m, "--format", "csv")[1] for m in methods.split(",")]
        solve_df = pd.concat([pd.read_csv(io.StringIO(t), dtype=str) for t in texts])
        code, gap_text = run("gap", f, "--methods", methods, "--format", "csv",
                             "--out", tmp / f"{prob}-gap")
        assert code == 0
        code, _ = run("batch", f, "--methods", methods, "--out", tmp / f"{prob}-batch",
                      "--no-progress")
        assert code == 0
        got[prob] = dict(
            solve=solve_df, solve_cols=[pd.read_csv(io.StringIO(t)).columns for t in texts],
            gap=pd.read_csv(io.StringIO(gap_text), dtype=str),
            gap_out=pd.read_csv(tmp / f"{prob}-gap" / "records.csv", dtype=str),
            batch=pd.read_csv(tmp / f"{prob}-batch" / "records.csv", dtype=str),
            typed={k: pd.read_csv(tmp / f"{prob}-{k.split('_')[0]}" / "records.csv")
                   for k in ("gap_out", "batch")})
    return got


@pytest.mark.parametrize("kind", ["solve", "gap", "gap_out", "batch"])
def test_integers_stay_integers_in_every_csv(csvs, kind):
    # n_vars etc. are empty for the heuristic and ints for the model: a column mixing
    # None and ints must not turn 41 into 41.0
    no_float_ints(csvs["delta"][kind], ["n_vars", "n_int_vars", "n_constrs", "tasks",
                                        "ports_used"])
    no_float_ints(csvs["lumos"][kind], ["n_vars", "n_constrs", "rewiring", "circuits", "links",
                                        "objective"])


@pytest.mark.parametrize("kind", ["gap_out", "batch"])
def test_fully_integer_columns_read_back_as_int64(csvs, kind):
    for prob, cols in (("delta", ["tasks", "ports_used"]),
                       ("lumos", ["rewiring", "circuits", "links", "objective"])):
        df = csvs[prob]["typed"][kind]
        for c in cols:
            assert df[c].dtype == "int64", (prob, kind, c, df[c].dtype)


@pytest.mark.parametrize("kind", ["solve", "gap", "gap_out", "batch"])
def test_list_fields_are_one_json_string_in_csv(csvs, kind):
    df = csvs["delta"][kind]
    assert [json.loads(s) for s in df["pod_ports_used"]] == [[1, 1], [1, 1]]
    inc = json.loads(df.loc[df["method"] == "delta-joint", "incumbents"].iloc[0])
    assert isinstance(inc, list) and inc and all(len(p) == 2 for p in inc)
    assert inc[-1][1] == pytest.approx(float(df.loc[df["method"] == "delta-joint",
                                                    "objective"].iloc[0]), rel=1e-6)


def test_list_fields_are_json_arrays_in_json():
    for m in ("sqrt-alloc", "delta-joint"):
        code, out = run("solve", DELTA, "--method", m, "--format", "json")
        assert code == 0
        rec = json.loads(out)
        assert rec["pod_ports_used"] == [1, 1]
        assert isinstance(rec["ports_used"], int) and rec["ports_used"] == 2
        if m == "delta-joint":
            assert isinstance(rec["incumbents"], list) and rec["incumbents"]
            assert all(isinstance(p, list) and len(p) == 2 for p in rec["incumbents"])
            assert isinstance(rec["n_vars"], int)


def test_solve_gap_and_batch_csv_share_the_column_rule(csvs):
    for prob, d in csvs.items():
        batch = list(d["batch"].columns)
        assert batch[:len(CORE_FIELDS)] == list(CORE_FIELDS)
        assert list(d["gap_out"].columns) == batch      # gap --out DIR: the same records CSV
        cols = list(d["gap"].columns)
        assert cols[:len(CORE_FIELDS)] == list(CORE_FIELDS)
        # the same columns in the same order, but the batch's bookkeeping and gap's ranks
        assert [c for c in batch if c not in BATCH_ONLY] == \
            [c for c in cols if not c.startswith(("rank", "best_", "vs_best"))], prob
        for cols in d["solve_cols"]:       # each run's own fields (order: first appearance)
            assert list(cols[:len(CORE_FIELDS)]) == list(CORE_FIELDS)
            assert set(cols) <= set(batch), prob
        assert set(batch) - set(BATCH_ONLY) == set().union(*map(set, d["solve_cols"])), prob


def test_csv_cell_turns_numpy_and_lists_into_plain_values():
    import numpy as np

    from toolkit.records_csv import csv_cell

    assert csv_cell(np.int64(12)) == 12 and isinstance(csv_cell(np.int64(12)), int)
    assert csv_cell(None) == ""
    assert csv_cell(np.array([1, 2])) == "[1,2]"
    assert json.loads(csv_cell([1.5, float("nan"), (2, np.float64(3.0))])) == [1.5, None, [2, 3.0]]
