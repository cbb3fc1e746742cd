"""The documentation's worked examples (issue 30 item 5): each page of docs/examples/ shows
a script (included from docs/examples/NAME.sh when the site is built) and the lines it
prints; here each script runs as a user would run it, from the repository root with the
environment's ``ocs-opt`` and ``python``, and must print those lines and write its files."""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import textwrap
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


# --------------------------------------------------------------------------------------
# the commands of the problem pages (docs/problems/*.md)
# --------------------------------------------------------------------------------------
BASH_BLOCK = re.compile(r"```bash\n(.*?)```(?:\s*```text\n(.*?)```)?", re.S)


def page_blocks() -> list[tuple[str, list[list[str]], list[str]]]:
    """(page, its commands (argv after ``python solve.py``), the lines of the ```text block
    right after them, if any) for every ```bash block of the problem pages."""
    out = []
    for page in sorted((ROOT / "docs" / "problems").glob("*.md")):
        for m in BASH_BLOCK.finditer(page.read_text()):
            body = textwrap.dedent(m.group(1))
            cmds = [shlex.split(line)[2:] for line in body.splitlines()
                    if line.startswith("python solve.py ")]
            assert cmds and len(cmds) == len(body.strip().splitlines()), (page.name, body)
            out.append((page.name, cmds, (m.group(2) or "").strip().splitlines()))
    return out


def test_every_reproduce_target_the_docs_name_exists():
    from toolkit.reproduce import TARGETS

    for page in (ROOT / "docs").rglob("*.md"):
        for names in re.findall(r"solve\.py reproduce ([\w|][\w|-]*)", page.read_text()):
            for name in names.split("|"):
                assert name == "TARGET" or name in TARGETS, (page.name, name)


def test_the_problem_pages_commands_run_or_name_real_methods_and_options(tmp_path):
    """Each ```bash command of a problem page: ``generate`` runs (its file into tmp_path) and
    prints the ```text lines shown after it; ``solve`` names a method of its file's problem
    and options that method declares (not run: some take minutes); ``reproduce`` a target."""
    from toolkit.registry import problems
    from toolkit.reproduce import TARGETS

    blocks = page_blocks()
    assert {p for p, _, _ in blocks} >= {"delta.md", "a2a.md", "lumos.md"}
    written: dict[str, Path] = {}
    for page, cmds, shown in blocks:
        printed = ""
        for argv in cmds:
            if argv[0] == "reproduce":
                assert argv[1] in TARGETS, (page, argv)
            elif argv[0] == "generate":
                i = argv.index("-o")
                written[argv[i + 1]] = tmp_path / argv[i + 1]
                argv = argv[:i + 1] + [str(tmp_path / argv[i + 1])] + argv[i + 2:]
                proc = subprocess.run([sys.executable, "solve.py", *argv], cwd=ROOT,
                                      capture_output=True, text=True, timeout=120)
                assert proc.returncode == 0, (page, argv, proc.stderr[-2000:])
                printed += proc.stdout + proc.stderr
            else:
                assert argv[0] == "solve", (page, argv)
                path = written.get(argv[1], ROOT / argv[1])
                prob = problems()[json.loads(path.read_text())["problem"]]
                method = prob.methods[argv[argv.index("--method") + 1] if "--method" in argv
                                      else prob.default_method]
                declared = {o.name for o in method.options}
                for j, a in enumerate(argv):
                    if a == "--option":
                        assert argv[j + 1].split("=")[0] in declared, (page, argv[j + 1])
        missing = [line for line in shown if line.strip() not in printed]
        assert not missing, (page, missing)
