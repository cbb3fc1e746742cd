"""Issue 29 item 1, compilation out of the user's way: the kernels' machine code lives in a
per-user cache folder keyed by their sources (toolkit.kernel_cache), so a read-only copy of
the source tree loads it without compiling and writes nothing into the tree, and a cold
kernel set is compiled by one process per machine at a time, which says so once on stderr.

Nothing is timed: numba's compile events and dispatcher counters say whether a process
compiled or loaded; a child that must wait for a lock is released by the test itself.
"""
from __future__ import annotations

import fcntl
import json
import os
import re
import selectors
import shutil
import stat
import subprocess
import sys

from tests.test_cli import ROOT
from toolkit import kernel_cache
from toolkit.kernel_cache import SOURCES


def test_every_file_with_a_kernel_is_a_source_and_uses_the_cache():
    """The folder's key covers every kernel file, and no kernel bypasses the cache."""
    py = [p for p in ROOT.glob("heuristics/**/*.py")]
    found = {p.relative_to(ROOT).as_posix() for p in py
             if re.search(r"^@njit\b", p.read_text(), re.M)}
    assert found == set(SOURCES)
    direct = re.compile(r"^\s*(@numba\.n?jit|\w+ = numba\.n?jit)", re.M)   # numba's own
    for p in py + list(ROOT.glob("toolkit/**/*.py")) + list(ROOT.glob("models/**/*.py")):
        assert p.name == "kernel_cache.py" or not direct.search(p.read_text()), p


# solve.py with a listener of numba's compile events (a cache load is no compilation)
_SOLVE = """
import runpy, sys
from numba.core import event
compiled = []
class Compiled(event.Listener):
    def on_start(self, e):
        compiled.append(e.data["dispatcher"].py_func.__name__)
    def on_end(self, e):
        pass
event.register("numba:compile", Compiled())
sys.argv = ["solve.py", *sys.argv[1:]]
try:
    runpy.run_path("solve.py", run_name="__main__")
finally:
    import heuristics.spectra.jit as jit
    print("compiled:", compiled, "from:", jit.__file__, file=sys.stderr)
"""


def _files(tree) -> set[str]:
    return {p.relative_to(tree).as_posix() for p in tree.rglob("*")}


def test_a_read_only_copy_of_the_tree_loads_the_cache_and_writes_nothing_there(tmp_path):
    """A copy of the package at another path, made read-only, with the cache folder in
    NUMBA_CACHE_DIR: the warm-up finds this machine's entries, copied in (the folder is
    keyed by the sources, not their path), or fills the cache where this machine has none;
    a new process's solve then compiles nothing and adds no file to the tree."""
    src, cache = tmp_path / "src", tmp_path / "cache"
    for d in ("heuristics", "instances", "models", "toolkit"):
        shutil.copytree(ROOT / d, src / d, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(ROOT / "solve.py", src)
    here = kernel_cache.folder()            # this machine's entries, when it has them
    there = cache / "ocs-opt" / here.name
    there.mkdir(parents=True)
    copied = [shutil.copy2(f, there) for f in here.glob("jit.*")] if here.is_dir() else []
    tree = _files(src)
    for p in [src, *src.rglob("*")]:
        p.chmod(p.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONDONTWRITEBYTECODE="1")
    try:
        fill = subprocess.run([sys.executable, "-m", "toolkit.kernels", "spectra"], cwd=src,
                              env=env, capture_output=True, text=True)
        assert fill.returncode == 0, fill.stderr[-2000:]
        assert fill.stdout == ""
        assert "note:" not in fill.stderr or not copied         # loaded, not compiled
        proc = subprocess.run([sys.executable, "-c", _SOLVE, "solve", "--format", "json",
                               "instances/examples/bench_n32_m8_s2_d0.1.json"], cwd=src,
                              env=env, capture_output=True, text=True)
        assert _files(src) == tree                          # nothing written into the tree
    finally:
        for p in [src, *src.rglob("*")]:
            p.chmod(p.stat().st_mode | stat.S_IWUSR)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"compiled: [] from: {src / 'heuristics' / 'spectra' / 'jit.py'}" in proc.stderr
    assert "note:" not in proc.stderr
    rec = json.loads(proc.stdout)
    assert rec["verified"] and rec["warmup_s"] > 0 and "compile_s" not in rec
    assert list(there.glob("jit.*.nbi")) and list(there.glob("spectra-*.ok"))


_TOY = """
from toolkit.kernel_cache import njit


@njit
def twice(x):
    return 2 * x


@njit
def thrice(x):
    return 3 * x


def warm_up():
    twice(1.0)
    thrice(1.0)


def warm_up_int():
    twice(1)
"""

# two toy kernel sets warmed in one process; the toy dispatchers' compile/load counts
_WARM_TOY = """
import sys
sys.path.insert(0, sys.argv[1])
from toolkit import kernels
import toy_kernels as toy
kernels.KERNELS.update(toy=("toy_kernels", "warm_up"), toy2=("toy_kernels", "warm_up_int"))
kernels.warm(["toy"])
kernels.warm(["toy2"])
count = lambda what: sum(sum(getattr(d.stats, what).values()) for d in (toy.twice, toy.thrice))
print(f"compiled {count('cache_misses')} loaded {count('cache_hits')}", file=sys.stderr)
"""


def test_a_cold_set_is_compiled_by_one_process_with_one_note_then_loaded(tmp_path):
    """A process that finds a cold set locked by another waits, saying so once on stderr
    (never on stdout), then compiles both its sets with no second note and marks them
    filled; the next process loads them, silent."""
    (tmp_path / "toy_kernels.py").write_text(_TOY)
    cache = tmp_path / "cache"
    folder = cache / "ocs-opt" / kernel_cache.folder().name
    folder.mkdir(parents=True)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    argv = [sys.executable, "-c", _WARM_TOY, str(tmp_path)]
    lock = os.open(folder / "toy.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(lock, fcntl.LOCK_EX)            # "another process" compiling toy
    try:
        child = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        with selectors.DefaultSelector() as sel:    # its first line, or a failure (EOF)
            sel.register(child.stderr, selectors.EVENT_READ)
            assert sel.select(timeout=300), "no line from the waiting process"
            first = child.stderr.readline()
    finally:
        os.close(lock)                          # the other process is done
    out, rest = child.communicate()
    assert child.returncode == 0, rest[-2000:]
    assert first.startswith("note: waiting for another process that compiles the numba "
                            "kernels of toy"), first + rest
    assert out == "" and "note:" not in rest and "compiled 3 loaded 0" in rest
    assert {p.name.split("-")[0] for p in folder.glob("*.ok")} == {"toy", "toy2"}
    again = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr[-2000:]
    assert again.stdout == "" and "note:" not in again.stderr
    assert "compiled 0 loaded 3" in again.stderr


_BLAS = """
import json, sys
first = sys.argv[1] == "linalg-first"
if first:
    import scipy.linalg
from toolkit import kernels
kernels.warm(["spectra"])                      # a kernel set: numba's registries, BLAS check
seen = {"linalg": "scipy.linalg" in sys.modules, "blas": "scipy.linalg.cython_blas" in sys.modules}
import numpy as np
import scipy.linalg.cython_blas
from numba import njit

@njit
def dot(a, b):                                  # numba's BLAS through the module's pointers
    return np.dot(a, b)
seen.update(attr=scipy.linalg.cython_blas is sys.modules["scipy.linalg.cython_blas"],
            solve=float(scipy.linalg.solve([[2.0]], [4.0])[0]),
            dot=dot(np.eye(3), np.arange(3.0)).tolist())
print(json.dumps(seen))
"""


def test_kernels_load_blas_without_scipy_linalg_and_the_package_imports_as_usual():
    """kernel_cache._blas_module: a process that runs kernels loads
    scipy.linalg.cython_blas alone (not the scipy.linalg package, 80-145 ms); numba's BLAS
    works through it, a later import of scipy.linalg works and gets the submodule as its
    attribute; where scipy.linalg was imported first, the usual path is kept."""
    out = {}
    for how in ("kernels-first", "linalg-first"):
        proc = subprocess.run([sys.executable, "-c", _BLAS, how], cwd=ROOT, capture_output=True,
                              text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-2000:]
        out[how] = json.loads(proc.stdout)
    assert out["kernels-first"]["linalg"] is False and out["linalg-first"]["linalg"] is True
    for seen in out.values():
        assert seen["blas"] and seen["attr"] and seen["solve"] == 2.0
        assert seen["dot"] == [0.0, 1.0, 2.0]
