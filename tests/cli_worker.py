"""``solve.main`` in a helper process, for the tests that would run the command line in pytest's.

The command line loads compiled code (numba kernels, gurobipy, highspy, pandas' C parser) and
starts process pools; a crash there (a segmentation fault inside pandas' read_csv once ended a
whole ``make test``, issue 29) must fail one test, not take pytest down, and a pool must not
fork from pytest's process once it has threads. ``call(argv)`` hands the command to one
long-lived helper (``python -m tests.cli_worker``, started by fork + exec: none of pytest's
threads or state), which runs ``solve.main(argv)`` in the caller's working directory and
environment with its fds 1 and 2 going to files (what C code writes included, as ``capfd``),
and answers with the exit code. A helper that dies fails that call with its faulthandler dump
and the command's stderr, and is replaced on the next call; one still busy after ``timeout``
seconds (a hang guard, not a speed target) is killed. An exception escaping ``main`` fails
the call with its traceback.

Tests that monkeypatch what the command runs (a spy, a stand-in method) keep calling
``solve.main`` in their own process.
"""
from __future__ import annotations

import atexit
import json
import os
import select
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HANG_S = 600.0          # a command still running after this is hung (the guard, not a target)


class CliCrash(AssertionError):
    """The command raised, hung, or took its helper process down."""


class _Helper:
    def __init__(self):
        self.dir = tempfile.TemporaryDirectory(prefix="cli-worker-")
        self.log = Path(self.dir.name) / "helper.log"
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen([sys.executable, "-m", "tests.cli_worker"], cwd=ROOT,
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log)

    def ask(self, req: dict, timeout: float) -> dict | None:
        """The helper's answer, or None when it died or hung (then it is gone)."""
        try:
            self.proc.stdin.write((json.dumps(req) + "\n").encode())
            self.proc.stdin.flush()
            if select.select([self.proc.stdout], [], [], timeout)[0]:
                line = self.proc.stdout.readline()
                if line:
                    return json.loads(line)
        except BrokenPipeError:
            pass
        self.close(kill=True)
        return None

    def close(self, kill: bool = False) -> None:
        if kill:
            self.proc.kill()
        else:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


_helper: _Helper | None = None


def _read(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8", "replace")
    except FileNotFoundError:
        return ""


def call(argv, timeout: float = HANG_S) -> tuple[int, str, str]:
    """``solve.py *argv`` as ``solve.main`` runs it: (exit code, stdout, stderr)."""
    global _helper
    if _helper is None or _helper.proc.poll() is not None:
        _helper = _Helper()
    out, err = Path(_helper.dir.name) / "stdout", Path(_helper.dir.name) / "stderr"
    req = {"argv": [str(a) for a in argv], "cwd": os.getcwd(), "env": dict(os.environ),
           "out": str(out), "err": str(err)}
    ans = _helper.ask(req, timeout)
    cmd = "solve.py " + " ".join(req["argv"])
    if ans is None:
        helper, _helper = _helper, None
        code = helper.proc.returncode
        if code == -9:
            raise CliCrash(f"{cmd}: still running after {timeout:.0f} s (hung)")
        raise CliCrash(f"{cmd}: its process ended ({f'signal {-code}' if code < 0 else code})"
                       f"\n{_read(helper.log)[:6000]}\nstderr:\n{_read(err)[-4000:]}")
    if ans["traceback"]:
        raise CliCrash(f"{cmd} raised:\n{ans['traceback']}")
    return ans["code"], _read(out), _read(err)


@atexit.register
def _stop() -> None:
    if _helper is not None and _helper.proc.poll() is None:
        _helper.close()


# --------------------------------------------------------------------------------------
# the helper's side
# --------------------------------------------------------------------------------------
def _run_one(req: dict, main) -> dict:
    import traceback

    os.chdir(req["cwd"])
    os.environ.clear()
    os.environ.update(req["env"])
    code, tb = None, None
    saved = os.dup(1), os.dup(2)
    with open(req["out"], "wb") as fo, open(req["err"], "wb") as fe:
        os.dup2(fo.fileno(), 1)
        os.dup2(fe.fileno(), 2)
        try:
            code = main(req["argv"])
        except SystemExit as exc:        # argparse: --help, a usage error
            code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
        except BaseException:           # noqa: BLE001 - the test fails with it
            tb = traceback.format_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)
    return {"code": code, "traceback": tb}


def _serve() -> None:
    import faulthandler

    answers = os.fdopen(os.dup(1), "w")       # the pipes to pytest get fds of their own:
    requests = os.fdopen(os.dup(0), "r")      # fds 0, 1 and 2 are the command's
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    faulthandler.enable(file=os.fdopen(os.dup(2), "w"), all_threads=True)   # the helper's log
    sys.path.insert(0, str(ROOT))
    import solve

    for line in requests:
        answers.write(json.dumps(_run_one(json.loads(line), solve.main)) + "\n")
        answers.flush()


if __name__ == "__main__":
    _serve()
