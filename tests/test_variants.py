"""Method variants in batch and gap (issue 28 item 6): ``--methods a,a:opt=v`` runs each
variant as its own method row; run keys hold only the options a method declares; a gap run
into a folder ranks the earlier rows of its files too."""
from __future__ import annotations

import json

import pytest

from tests.test_batch_resume import rows, run, two  # noqa: F401 - two: a fixture
from toolkit import api
from toolkit.variants import VariantError, parse_variants


def test_labels_are_canonical_and_each_variant_runs_once():
    vs = parse_variants("milp,milp:symmetry=no:slots=2.0, milp:slots=2:symmetry=0,spectra")
    assert [v.label for v in vs] == ["milp", "milp:slots=2:symmetry=0", "spectra"]
    assert vs[1].options == (("slots", "2"), ("symmetry", "0"))
    assert parse_variants(["baseline-milp:split_eps=0.5"])[0].label == "baseline-milp:split_eps=0.5"


@pytest.mark.parametrize("entry,words", [
    ("milp:slots", "expected METHOD:OPTION=VALUE"),
    ("milp:=2", "expected METHOD:OPTION=VALUE"),
    ("milp:slots=2:slots=3", "option slots given twice"),
    ("milp:refine=lp", "option refine: not an option of method milp; valid: slots"),
    ("milp:slots=abc", "option slots: expected an integer"),
    ("milp:slots=-1", "option slots: expected a value >= 0"),
    ("nope:slots=2", "unknown method 'nope'"),
    (":slots=2", "unknown method ''"),
])
def test_a_bad_variant_is_one_line_exit_2(two, tmp_path, entry, words):
    for cmd in ("gap", "batch"):
        code, out, err = run(cmd, two, "--methods", f"spectra,{entry}", "--out", tmp_path / "o")
        assert code == 2 and out == "", err
        assert err.strip().splitlines() == [err.strip()] and words in err, err
        assert "--methods: " in err and "Traceback" not in err
    assert not (tmp_path / "o" / "records.csv").exists()
    with pytest.raises(VariantError, match=words.split(":")[0]):
        parse_variants(entry)
    with pytest.raises(api.ConfigError) as exc:
        api.batch([two], methods=["spectra", entry])
    assert exc.value.field == "methods"


def test_a_variant_is_its_own_method_row(two, tmp_path):
    out = tmp_path / "g"
    args = ("gap", two, "--methods", "spectra,spectra:edge_mode=srem,baseline", "--out", out,
            "--format", "json")
    code, stdout, err = run(*args)
    assert code == 0, err
    recs = [json.loads(x) for x in stdout.splitlines()]
    assert len(recs) == 6 and all(r["rank"] for r in recs)
    var = [r for r in recs if r.get("variant")]
    assert len(var) == 2 and all(r["variant"] == "spectra:edge_mode=srem"
                                 and r["method"] == "spectra" for r in var)
    got = rows(out / "records.csv")
    assert [r["variant"] for r in got].count("spectra:edge_mode=srem") == 2
    assert all('"edge_mode":"srem"' in r["settings"] for r in got if r["variant"])
    summary = rows(out / "gap-summary.csv")
    assert [r["method"] for r in summary] == ["spectra", "spectra:edge_mode=srem", "baseline"]
    assert "| spectra:edge_mode=srem |" in (out / "gap.md").read_text()
    assert len(list(out.glob("*.spectra+edge_mode=srem.json"))) == 2      # its own solutions
    assert len(list(out.glob("*.spectra.json"))) == 2
    code, _, err = run(*args)                # resumed by its own key
    assert code == 0 and "0 ran, 6 already" in err, err


def test_a_variant_overrides_the_shared_option(two, tmp_path):
    out = tmp_path / "o"
    code, _, err = run("gap", two / "worked_example.json", "--methods",
                       "spectra,spectra:edge_mode=supp", "--option", "edge_mode=srem",
                       "--out", out)
    assert code == 0, err
    sets = {r["variant"] or r["method"]: json.loads(r["settings"])["options"]
            for r in rows(out / "records.csv")}
    assert sets == {"spectra": {"edge_mode": "srem"},
                    "spectra:edge_mode=supp": {"edge_mode": "supp"}}


def test_the_run_key_holds_only_options_the_method_declares(two, tmp_path):
    """spectra does not declare quantiles: changing it reruns spectra-eclipse only (it
    reran spectra too, for nothing)."""
    out = tmp_path / "r"
    base = ("batch", two, "--methods", "spectra,spectra-eclipse", "--out", out, "--no-progress")
    code, _, err = run(*base, "--option", "quantiles=8")
    assert code == 0 and "4 ran" in err, err
    got = rows(out / "records.csv")
    assert all("quantiles" not in r["settings"] for r in got if r["method"] == "spectra")
    code, _, err = run(*base, "--option", "quantiles=16")
    assert code == 0 and "2 ran, 2 already" in err, err
    assert {r["method"] for r in rows(out / "records.csv")[4:]} == {"spectra-eclipse"}


def test_a_gap_run_into_a_folder_ranks_its_earlier_rows(two, tmp_path):
    out = tmp_path / "g"
    f = two / "worked_example.json"
    assert run("gap", f, two / "shifts_n6_s1.json", "--methods", "spectra", "--out", out)[0] == 0
    code, stdout, err = run("gap", f, "--methods", "baseline,spectra-noeq", "--out", out,
                            "--format", "json")
    assert code == 0 and "ranked with 1 earlier row(s)" in err, err
    recs = [json.loads(x) for x in stdout.splitlines()]
    assert [r["method"] for r in recs] == ["baseline", "spectra-noeq", "spectra"]
    assert sorted(r["rank"] for r in recs)[0] == 1
    best = min(r["objective"] for r in recs)
    assert all(r["best_objective"] == best for r in recs)
    summary = rows(out / "gap-summary.csv")
    assert [r["method"] for r in summary] == ["baseline", "spectra-noeq", "spectra"]
    assert all(r["instances"] == "1" for r in summary)     # only the file given this time
