"""The documentation's generated parts (toolkit/docgen.py, docs/hooks.py): every marker in
docs/ renders, the methods and options come from the registry, the CLI reference from the
parser, and every module the API reference names imports (so a moved module fails here,
not only in `make docs`)."""
from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import instances
from toolkit import docgen
from toolkit.registry import problems
from toolkit.reproduce import TARGETS

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
MARKER = re.compile(r"^<!-- gen: ([\w-]+)((?: [^ >]+)*) -->$", re.M)


def markers() -> list[tuple[str, tuple[str, ...]]]:
    out = []
    for page in sorted(DOCS.rglob("*.md")):
        out += [(m.group(1), tuple(m.group(2).split())) for m in MARKER.finditer(page.read_text())]
    return out


def test_the_hook_and_this_test_read_the_same_markers():
    hook = (DOCS / "hooks.py").read_text()
    assert MARKER.pattern in hook


def test_every_marker_renders():
    found = markers()
    kinds = {k for k, _ in found}
    assert kinds == set(docgen.PARTS), kinds
    for kind, args in found:
        if kind == "schema":            # derived in tests/test_schema.py; here the names only
            assert set(args) <= set(instances.INSTANCE_TYPES), args
            continue
        assert docgen.part(kind, *args).strip(), (kind, args)
    with pytest.raises(ValueError, match="unknown generated part"):
        docgen.part("nosuch")


def test_every_problem_page_generates_its_methods_schema_and_results():
    found = markers()
    shown = {a for k, args in found if k == "methods" for a in args}
    assert shown == set(problems())
    assert {a for k, args in found if k == "schema" for a in args} >= set(instances.INSTANCE_TYPES)
    assert {a for k, args in found if k == "results" for a in args} == \
        {"spectra/README.md", "delta/README.md", "lumos/README.md", "a2a/README.md"}


def test_methods_list_every_method_and_option():
    text = docgen.methods(*problems())
    for p in problems().values():
        for m in p.methods.values():
            assert f"| `{m.name}` | {m.kind} |" in text
            for o in m.options:
                assert f"| `{o.name}` |" in text
    assert "| `matching` | str | `warm` | `warm`, `jit`, `scipy`, `cold` |" in text


def test_cli_reference_has_every_subcommand_generator_and_target():
    text = docgen.cli()
    for cmd in ("list", "solve", "batch", "gap", "generate", "reproduce"):
        assert f"## `solve.py {cmd}`" in text
    assert "usage: solve.py solve [-h]" in text and "--write-model FILE.mps|.lp" in text
    for p in problems().values():
        if p.generator is not None:
            assert f"### `generate {p.name}`" in text
    assert all(f"| `{t}` |" in text for t in TARGETS)


def test_results_are_found_wherever_they_live_and_demoted():
    text = docgen.results("spectra/README.md")
    assert text.startswith("From `results/") and "\n### Spectra" in text
    with pytest.raises(FileNotFoundError):
        docgen.find_result("NOSUCH.md")
    with pytest.raises(FileNotFoundError):
        docgen.find_result("spectra/NOSUCH.md")


def test_every_module_of_the_api_reference_imports():
    names = re.findall(r"^::: ([\w.]+)$", (DOCS / "reference" / "api.md").read_text(), re.M)
    assert "toolkit.api" in names and len(names) >= 8
    for name in names:
        importlib.import_module(name)


def test_every_included_script_exists():
    for page in DOCS.rglob("*.md"):
        for path in re.findall(r'^--8<-- "([^"]+)"$', page.read_text(), re.M):
            assert (ROOT / path).is_file(), (page, path)


def test_sphinx_roles_become_optional_links_with_the_name_as_code():
    scope = {"solve": "toolkit.api.solve", "Result": "models.result.Result"}.get
    text = docgen.sphinx_roles(
        "as :func:`solve` does; :meth:`Result.value`, :class:`~toolkit.run.Interrupted`, "
        ":py:mod:`models.backend`, :func:`the runner <solve>`, :data:`!LIMIT`; "
        ":param x: and ``:func:`` stay", scope)
    assert '<autoref identifier="toolkit.api.solve" optional><code>solve</code></autoref>' in text
    assert '<autoref identifier="models.result.Result.value" optional><code>Result.value</code>' in text
    assert '<autoref identifier="toolkit.run.Interrupted" optional><code>Interrupted</code>' in text
    assert '<autoref identifier="models.backend" optional><code>models.backend</code>' in text
    assert '<autoref identifier="toolkit.api.solve" optional><code>the runner</code>' in text
    assert "<code>LIMIT</code>;" in text and "autoref identifier=\"LIMIT\"" not in text
    assert ":param x: and ``:func:`` stay" in text and not docgen.ROLE.search(text)


def test_the_built_api_reference_shows_no_raw_sphinx_role(tmp_path):
    """`make docs` as CI runs it (strict), into a temporary folder: the API reference's
    roles are links (or code where the site documents no target), none is left raw."""
    site = tmp_path / "site"
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, NO_MKDOCS_2_WARNING="1"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    page = (site / "reference" / "api" / "index.html").read_text()
    raw = re.findall(r":(?:py:)?(?:func|meth|class|mod|attr|data|exc|obj|const):(?:<code>|`)", page)
    assert not raw, raw
    assert '<a class="autorefs autorefs-internal"' in page and 'href="#toolkit.api.solve"><code>solve</code>' in page
    assert "<autoref " not in page                       # every reference was resolved or dropped
