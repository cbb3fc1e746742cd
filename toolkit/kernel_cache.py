"""Where the compiled kernels' machine code lives (issue 29 item 1): a per-user cache folder
keyed by the kernels' sources, filled once per machine, loaded by every later process.

Every kernel is decorated with :func:`njit` (``numba.njit`` with this cache) instead of
``numba.njit(cache=True)``, whose cache sits in ``__pycache__`` beside the source: a
read-only install, a container or a Dask worker on another host could not write there and
compiled again in every process. Here the machine code goes to :func:`folder`:

* the root is ``$NUMBA_CACHE_DIR/ocs-opt`` where the user sets ``NUMBA_CACHE_DIR``, else
  ``$XDG_CACHE_HOME/ocs-opt/numba`` (``~/.cache/ocs-opt/numba``): per user and per host,
  writable when the source tree is not;
* inside it one folder per version of the kernels, named by the Python and numba versions
  and a hash of every kernel source file (:data:`SOURCES`). [DECISION] The hash covers all
  of them, not each file alone (numba's own stamp): a kernel inlines the kernels it calls
  from other files, so an edit of ``mdmcf/chain.py`` must recompile ``mdmcf/eject_steps.py``
  too, which numba's per-file stamp misses. Two checkouts or installs of the same version
  (another path, a copy, a container) share one folder; old folders are not pruned (another
  checkout may use one; about 8 MB each: delete them at will).

numba keys each entry by signature and CPU (target triple, CPU name and features), so hosts
that share a home folder keep their entries side by side. Where the folder cannot be
written, numba's own locations follow (``__pycache__``, then its per-user folder), and
where none can, the kernels compile in every process.

Once per machine: :func:`filling` marks a kernel set filled for this CPU (an empty
``<set>-<cpu>.ok`` file) after its warm-up; a process that finds no mark takes the set's
lock file first (``flock``), so of the processes that start cold at once (a pool, the
workers of a Dask host) one compiles and the others wait, then load.
"""
from __future__ import annotations

import functools
import hashlib
import os
import sys
from contextlib import contextmanager
from pathlib import Path

# every file that defines a kernel (tests/test_kernel_cache.py checks the list is complete)
SOURCES = ("heuristics/spectra/jit.py", "heuristics/lumos/mdmcf/chain.py", "heuristics/lumos/mdmcf/konig.py",
           "heuristics/lumos/mdmcf/eject_steps.py", "heuristics/lumos/mdmcf/lns.py",
           "heuristics/lumos/mdmcf/triple.py", "heuristics/lumos/sim/probe_kernel.py",
           "heuristics/a2a/relabel_jit.py")
PACKAGE_ROOT = Path(__file__).resolve().parent.parent       # holds toolkit/ and heuristics/


def root() -> Path:
    """The cache root: ``$NUMBA_CACHE_DIR/ocs-opt``, else ``$XDG_CACHE_HOME/ocs-opt/numba``
    (``XDG_CACHE_HOME`` defaults to ``~/.cache``; without a home folder, one in the temporary
    folder)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return Path(os.environ["NUMBA_CACHE_DIR"]) / "ocs-opt"
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        try:
            base = Path.home() / ".cache"
        except RuntimeError:        # no home folder (a service account): the temp folder
            import tempfile

            base = Path(tempfile.gettempdir()) / f"ocs-opt-{os.getuid()}"
    return Path(base) / "ocs-opt" / "numba"


@functools.lru_cache(maxsize=None)
def folder() -> Path:
    """This version's folder: ``root()/py<X.Y>-numba<version>-<hash of SOURCES>`` (read
    once per process)."""
    import numba

    h = hashlib.sha256()
    for rel in SOURCES:
        h.update(rel.encode() + b"\0" + (PACKAGE_ROOT / rel).read_bytes() + b"\0")
    py = f"{sys.version_info[0]}.{sys.version_info[1]}"
    return root() / f"py{py}-numba{numba.__version__}-{h.hexdigest()[:16]}"


@functools.lru_cache(maxsize=None)
def writable(path: Path) -> bool:
    """Whether ``path`` exists or can be made, and takes a new file (checked once)."""
    import tempfile

    try:
        path.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
    except OSError:
        return False
    return True


def njit(fn=None, **options):
    """``numba.njit`` with the cache of this module: the decorator of every kernel, as
    ``@njit`` or with numba's options, ``@njit(nogil=True)``."""
    if fn is None:
        return lambda f: njit(f, **options)
    import numba

    _blas_module()
    disp = numba.njit(**options)(fn)
    try:        # what numba's own cache=True sets (Dispatcher.enable_caching), ours first
        disp._cache = _function_cache()(fn)
    except RuntimeError:        # no writable location anywhere: compile in every process
        pass
    return disp


@functools.lru_cache(maxsize=None)
def _blas_module() -> None:
    """Load ``scipy.linalg.cython_blas`` alone, before numba's first cache load needs it.

    numba's first cache load (or compilation) builds its registries, which import
    ``numba.np.arraymath``, whose module-level BLAS check imports
    ``scipy.linalg.cython_blas``; Python imports the package ``scipy.linalg`` first, and its
    ``__init__`` imports all of scipy.linalg: 80-145 ms of every new process that runs a
    kernel, a fifth of a warm start (issue 29 items 1 and 3). The check, and numba's C
    helpers that later take BLAS function pointers from the module, need only that one
    extension module. [DECISION] So it is loaded here from scipy.linalg's folder under its
    full name, without the package's ``__init__`` (the module imports nothing of it): the
    same module object numba would get, found in ``sys.modules``. A later ``import
    scipy.linalg`` imports the package as usual, and :class:`_LinalgAttribute` then sets
    the package's ``cython_blas`` attribute, as an import of the submodule would have
    (tests/test_kernel_cache.py). Where anything differs (scipy.linalg already imported, no
    such file, a load that fails), nothing is done and numba imports it as before."""
    import importlib.machinery
    import importlib.util

    name = "scipy.linalg.cython_blas"
    if name in sys.modules or "scipy.linalg" in sys.modules:
        return
    try:
        spec = importlib.util.find_spec("scipy")
        where = Path(spec.origin).parent / "linalg"
        path = next((where / f"cython_blas{suffix}" for suffix in
                     importlib.machinery.EXTENSION_SUFFIXES
                     if (where / f"cython_blas{suffix}").is_file()), None)
        if path is None:
            return
        ext = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(ext)
        sys.modules[name] = module
        try:
            ext.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(name, None)
            raise
    except Exception:  # noqa: BLE001 - numba's own import path follows
        return
    sys.meta_path.insert(0, _LinalgAttribute())


class _LinalgAttribute:
    """A meta path finder that, once, finds ``scipy.linalg`` as the other finders do and
    has its loader set the package's ``cython_blas`` attribute after the package runs
    (:func:`_blas_module` loaded that submodule before its package)."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "scipy.linalg":
            return None
        import importlib.util

        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        loader = spec and spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run = loader.exec_module

        def exec_module(module):
            run(module)
            blas = sys.modules.get("scipy.linalg.cython_blas")
            if blas is not None:
                module.cython_blas = blas
        loader.exec_module = exec_module
        return spec


@functools.lru_cache(maxsize=None)
def _function_cache():
    """numba's FunctionCache with :func:`folder` as the first location (then numba's)."""
    from numba.core import caching

    def numba_class(name):      # public names from numba 0.62 on, underscored before
        return getattr(caching, name, None) or getattr(caching, "_" + name)

    class KernelLocator(numba_class("UserProvidedCacheLocator")):
        def __init__(self, py_func, py_file):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = str(folder())

        def ensure_cache_path(self):        # before each save: the folder may be gone
            folder().mkdir(parents=True, exist_ok=True)

        def get_source_stamp(self):
            return folder().name        # covers every kernel source (module docstring)

        @classmethod
        def from_function(cls, py_func, py_file):
            if not writable(folder()):
                return None             # numba's own locations next
            return cls(py_func, py_file)

    impl = numba_class("CompileResultCacheImpl")

    class KernelCacheImpl(impl):
        _locator_classes = [KernelLocator, *impl._locator_classes]

    class KernelCache(caching.FunctionCache):
        _impl_class = KernelCacheImpl
    return KernelCache


def cpu_key() -> str:
    """A short hash of the CPU numba compiles for (its cache key's target machine)."""
    from numba.core.registry import cpu_target

    magic = cpu_target.target_context.codegen().magic_tuple()
    return hashlib.sha256(repr(magic).encode()).hexdigest()[:12]


def is_filled(name: str) -> bool:
    """Whether kernel set ``name`` was warmed into :func:`folder` on this CPU."""
    return (folder() / f"{name}-{cpu_key()}.ok").exists()


@contextmanager
def filling(name: str, on_wait=None):
    """Run the block (the warm-up of kernel set ``name``) as the one filler of its cache
    entries on this machine: where the set is not marked filled, under its lock file (another
    process filling it: ``on_wait()``, then wait for it), and mark it filled afterwards."""
    try:
        import fcntl
    except ImportError:         # no flock (Windows): every cold process compiles
        fcntl = None
    if fcntl is None or not writable(folder()) or is_filled(name):
        yield
        return
    fd = os.open(folder() / f"{name}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if on_wait is not None:
                on_wait()
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
        (folder() / f"{name}-{cpu_key()}.ok").touch()
    finally:
        os.close(fd)            # releases the lock
