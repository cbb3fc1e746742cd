"""The documentation's worked examples (issue 30 item 5): each page of docs/examples/ shows
a script (included from docs/examples/NAME.sh when the site is built) and the lines it
prints; here each script runs as a user would run it, from the repository root with the
environment's ``ocs-opt`` and ``python``, and must print those lines and write its files."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "docs" / "examples"
MARK = "<!-- expected output"


def expected_lines(page: str) -> list[str]:
    """The lines of the ```text block that follows the page's expected-output marker."""
    after = page.split(MARK, 1)[1]
    block = re.search(r"```text\n(.*?)```", after, re.S)
    assert block, "the expected-output marker has no ```text block after it"
    return [line.rstrip() for line in block.group(1).splitlines() if line.strip()]


def run_example(name: str, out: Path) -> subprocess.CompletedProcess:
    bin_dir = Path(sys.executable).parent
    assert (bin_dir / "ocs-opt").exists(), "the environment has no ocs-opt (make install)"
    env = dict(os.environ, OUT=str(out), PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    return subprocess.run(["bash", str(EXAMPLES / f"{name}.sh")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("name", ["batch", "gap", "reproduce"])
def test_example_prints_what_its_page_shows(tmp_path, name):
    page = (EXAMPLES / f"{name}.md").read_text()
    assert f'--8<-- "docs/examples/{name}.sh"' in page      # the page shows this very script
    out = tmp_path / "out"
    proc = run_example(name, out)
    assert proc.returncode == 0, proc.stderr[-3000:]
    printed = [line.rstrip() for line in proc.stdout.splitlines()]
    missing = [line for line in expected_lines(page) if line not in printed]
    assert not missing, f"{name}.sh no longer prints these lines of its page:\n" + "\n".join(missing)
    if name == "batch":                 # 12 runs (4 files x 3 methods), all verified; the rerun added no row
        df = pd.read_csv(out / "records.csv")
        assert len(df) == 12 and df["verified"].all()
        assert len(list(out.glob("*.json"))) == 12
    elif name == "gap":
        assert {p.name for p in out.glob("gap*.*")} >= {"gap.md", "gap.csv", "gap-summary.csv",
                                                         "gap.png"}
        gap = pd.read_csv(out / "gap.csv")
        assert set(gap.loc[gap["rank"] == 1, "method"]) == {"milp-matchings"}
    else:
        assert {"lumos_table1.md", "a2a_example.md"} <= {p.name for p in out.iterdir()}


def test_expected_lines_are_read_from_the_marked_block():
    page = f"text\n{MARK} -->\n```text\n a b\n\n c  \n```\n```text\nnot this\n```"
    assert expected_lines(page) == [" a b", " c"]
