"""The package as a user gets it (issue 30 item 3): the wheel carries every module and every
data file under instances/, and, installed into a fresh virtual environment outside the
checkout, ``ocs-opt generate`` and ``ocs-opt solve`` work for every problem type from a
folder outside the checkout.

Fast and offline (about 20 s): the wheel is built from a clean copy of the sources with the
locked setuptools (``pip wheel --no-build-isolation``, no download); the fresh venv has no
pip and no packages of its own but for the wheel: a ``.pth`` line puts the locked
site-packages of the environment running this suite behind it (its dependencies; .pth files
there are not read, so the checkout's editable install stays invisible), and that pip
installs the wheel (``-I``: it never touches the editable install)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from toolkit.registry import problems

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("models", "heuristics", "instances", "toolkit", "benchmarks")
NOT_SOURCES = (".git", ".venv*", "build", "dist", "*.egg-info", "__pycache__", "results", "tests",
               ".pytest_cache", ".hypothesis", ".lockenv", "docs", "site")


def _run(cmd, cwd, env, timeout=300) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(the fresh venv's python, its site-packages, a working folder outside the checkout,
    the environment to run it in, the wheel's file names)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src, dist, venv, work = tmp / "src", tmp / "dist", tmp / "venv", tmp / "work"
    # a clean copy: no build/ folder of an earlier build (stale modules) and nothing ignored
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(*NOT_SOURCES))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PIP_"))}
    env.update(PYTHONNOUSERSITE="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    r = _run([sys.executable, "-m", "pip", "wheel", "--isolated", "--no-deps",
              "--no-build-isolation", "--no-index", "-q", "-w", dist, src], tmp, env)
    assert r.returncode == 0, r.stderr
    wheel, = dist.glob("ocs_opt-*.whl")
    r = _run([sys.executable, "-m", "venv", "--without-pip", venv], tmp, env)
    assert r.returncode == 0, r.stderr
    py = venv / "bin" / "python"
    site = Path(_run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                     tmp, env).stdout.strip())
    locked = {sysconfig.get_paths()[k] for k in ("purelib", "platlib")}
    (site / "locked_dependencies.pth").write_text("\n".join(sorted(locked)) + "\n")
    r = _run([py, "-m", "pip", "install", "--isolated", "--no-deps", "--no-index", "-I", "-q",
              wheel], tmp, env)
    assert r.returncode == 0, r.stderr
    work.mkdir()
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
    return py, site, work, env, names


def test_wheel_carries_every_module_data_file_and_licence(installed):
    _, _, _, _, names = installed
    shipped = {p.relative_to(ROOT).as_posix() for layer in LAYERS
               for p in (ROOT / layer).rglob("*")
               if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
               and (layer == "instances" or p.suffix == ".py")}
    assert "instances/lumos/trace/request_sequence" in shipped
    missing = sorted(shipped - names)
    assert not missing, f"the wheel lacks {len(missing)} files: {missing[:10]}"
    assert "solve.py" in names
    info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
    licences = {n for n in names if n.startswith(f"{info}/licenses/")}
    data_licences = {p for p in shipped if Path(p).name.startswith("LICENSE")}
    assert data_licences and {f"{info}/licenses/{p}" for p in data_licences} <= licences
    assert f"{info}/licenses/LICENSE" in licences


def test_installed_package_generates_and_solves_every_problem_outside_the_checkout(installed):
    py, site, work, env, _ = installed
    cli = py.parent / "ocs-opt"
    # the installed copy runs, not the checkout: its modules come from the venv
    r = _run([py, "-c", "import json, sys, solve, toolkit, instances; print(json.dumps("
              "[solve.__file__, toolkit.__file__, instances.__file__, sys.path]))"], work, env)
    assert r.returncode == 0, r.stderr
    *files, path = json.loads(r.stdout)
    assert all(Path(f).is_relative_to(site) for f in files), files
    locked = {Path(sysconfig.get_paths()[k]).resolve() for k in ("purelib", "platlib")}
    inside = [p for p in path if p and Path(p).resolve().is_relative_to(ROOT)
              and Path(p).resolve() not in locked]
    assert not inside, f"the checkout is on the installed package's path: {inside}"

    r = _run([cli, "list"], work, env)
    assert r.returncode == 0, r.stderr
    names = sorted(problems())
    listed = sorted(line.split(":")[0].strip() for line in r.stdout.splitlines()
                    if line.startswith("  ") and not line.startswith("   ") and ":" in line
                    and line.split(":")[0].strip() in problems())
    assert listed == names
    # every generator with its defaults (lumos-placement reads the shipped trace), and the
    # LumosCore trace workload of the simulator (both exited 2 from a wheel before issue 30)
    gens = [[p] for p in names] + [["lumos-sim", "--workload", "trace", "--jobs", "20"]]
    outs = []
    for k, args in enumerate(gens):
        out = work / f"{k}-{args[0]}.json"
        r = _run([cli, "generate", *args, "-o", out], work, env)
        assert r.returncode == 0, f"generate {' '.join(args)}: {r.stderr}"
        outs.append(out)
    r = _run([cli, "solve", *[o.name for o in outs], "--format", "json"], work, env)
    assert r.returncode == 0, r.stderr
    recs = [json.loads(line) for line in r.stdout.splitlines()]
    assert [rec["problem"] for rec in recs] == [a[0] for a in gens]
    for rec, out in zip(recs, outs):
        assert rec["instance"] == out.name
        assert rec["name"] == json.loads(out.read_text())["name"]
        assert rec["method"] == problems()[rec["problem"]].default_method
        assert rec["verified"] is True and rec["status"] in ("optimal", "feasible"), rec
        assert isinstance(rec["objective"], (int, float))
    # a model method on an instance shipped inside the wheel (gurobipy or HiGHS from the lock)
    shipped = site / "instances" / "examples" / "delta_gpt-7b.json"
    r = _run([cli, "solve", shipped, "--method", "delta-joint", "--format", "json"], work, env)
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert rec["verified"] is True and rec["status"] == "optimal" and rec["n_vars"] > 0
