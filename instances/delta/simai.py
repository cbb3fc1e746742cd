"""SimAI / AICB workload files: a strict reader.

Format (aliyun/aicb ``workload_generator/SimAI_training_workload_generator.py`` writes it,
aliyun/SimAI ``astra-sim/workload/Workload.cc`` reads it; notes in
instances/delta/simai/README.md):

* line 1, the header: ``HYBRID_TRANSFORMER_FWD_IN_BCKWD`` then ``key: value`` tokens.
  Old AICB files give ``model_parallel_NPU_group`` (TP) only; new ones add ``ep``, ``pp``,
  ``vpp``, ``ga``, ``all_gpus`` and ``pp_comm`` (bytes, AICB writes it as ``N`` or ``N.0``);
  both carry ``checkpoints: 0 checkpoint_initiates: 0``;
* line 2: the number of rows;
* one row per line, 12 whitespace-separated fields: ``name reserved fwd_compute fwd_comm_type
  fwd_comm_bytes ig_compute ig_comm_type ig_comm_bytes wg_compute wg_comm_type wg_comm_bytes
  update_time``. Times are ns, sizes bytes, all non-negative integers (SimAI reads them as
  uint64; ``reserved`` is a signed integer).

Communication types (Workload.cc): NONE, BROADCAST (SimAI ignores it), and ALLREDUCE,
ALLGATHER, REDUCESCATTER, ALLTOALL, ALLREDUCEALLTOALL, each bare or with ``_EP`` or
``_DP_EP``. The group is chosen by the suffix: bare = TP for the forward and input-gradient
collectives and DP for the weight-gradient one, ``_EP`` = the EP group, ``_DP_EP`` = a group
of DP/EP ranks.

Strict (toolkit decision): anything else - a wrong field count, a non-integer, a negative or
non-finite number, an unknown type or header key, a row count that disagrees with the rows,
a value past the caps below - is an InstanceError naming the file and the line. The file is
read line by line; the row count is checked against MAX_ROWS before any row is stored.

Lenient (``lenient=True``, ``--lenient``; issue 31): public AICB files can disagree with their
own line 2 (aliyun/aicb's ``L65B-M1-C05_Llama65B_megatron_tp8_pp1_mbs1_A100.txt`` announces
839 rows and holds 33). [DECISION] The lenient reader accepts that one mismatch only: it
reads every row the file holds (blank lines skipped) and keeps line 2's count as
``announced_rows``; every other check stays, and the count itself must still be an integer in
[1, MAX_ROWS]. The converter (instances.delta.simai_job) logs the one warning line once the
file has converted (logger ``instances.delta.simai``: on stderr, silenced by ``-q``), so a
file refused for another reason still gets one error line. The strict error names the option.

Not converted, refused (one InstanceError line naming the field; the arguments):

* activation checkpointing, SimAI's ``checkpoints: N <rows>`` / ``checkpoint_initiates: N
  <rows>`` (rows whose backward re-runs the forward from the last checkpoint row). [DECISION]
  Refused, naming the rows: AICB writes ``0`` in every file (its ``--recompute_activations``
  is already in the rows' forward times, which are read as they stand), and SimAI's own header
  loop reads only the first row of each list, so a file listing several means one thing to
  SimAI and another to its text; either reading would be a guess.
* interleaved 1F1B: see ``vpp`` in instances.delta.simai_job.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

import numpy as np

from instances.errors import InstanceError

POLICY = "HYBRID_TRANSFORMER_FWD_IN_BCKWD"
COLUMNS = ("name", "reserved", "fwd_compute_ns", "fwd_comm_type", "fwd_comm_bytes",
           "ig_compute_ns", "ig_comm_type", "ig_comm_bytes", "wg_compute_ns", "wg_comm_type",
           "wg_comm_bytes", "update_time")
PHASES = ("fwd", "ig", "wg")
BASES = ("ALLREDUCE", "ALLGATHER", "REDUCESCATTER", "ALLTOALL", "ALLREDUCEALLTOALL")
SUFFIXES = ("", "_EP", "_DP_EP")
COMM_TYPES = ("NONE", "BROADCAST") + tuple(b + s for b in BASES for s in SUFFIXES)
HEADER_INTS = ("model_parallel_NPU_group", "ep", "pp", "vpp", "ga", "all_gpus")

MAX_ROWS = 2**20            # a row per layer and step; AICB's largest files have thousands
MAX_LINE = 4096             # characters per line
MAX_NS = 10**12             # one compute time: 1e6 ms, the toolkit's horizon (delta_input)
MAX_BYTES = 10**12          # one collective: 1 TB (the shipped files' largest is 39 GB)
MAX_PARALLEL = 2**24        # TP, EP, PP, GA, GPUs
_UINT = re.compile(r"\d{1,19}")
_INT = re.compile(r"-?\d{1,19}")
_PP_COMM = re.compile(r"(\d{1,19})(\.0*)?")
_log = logging.getLogger(__name__)


@dataclass
class SimaiWorkload:
    """A parsed file. ``header`` maps tp, ep, pp, vpp, ga, all_gpus, pp_comm to ints (None
    when absent); per row (arrays of length n): ``names``, ``line`` (1-based line numbers),
    ``compute`` (n, 3) ns and ``comm_bytes`` (n, 3) for fwd/ig/wg, ``comm_type`` (n, 3) str;
    ``announced_rows``: line 2's count (differs from ``rows`` only in a lenient read)."""

    path: str
    header: dict
    announced_rows: int = 0
    names: list[str] = field(default_factory=list)
    line: np.ndarray = None
    compute: np.ndarray = None
    comm_type: np.ndarray = None
    comm_bytes: np.ndarray = None

    @property
    def new_header(self) -> bool:
        return any(self.header[k] is not None for k in ("ep", "pp", "ga", "all_gpus", "pp_comm"))

    @property
    def rows(self) -> int:
        return len(self.names)


def read_simai(path: str, lenient: bool = False) -> SimaiWorkload:
    """Parse ``path`` strictly (module docstring); errors name the file and the line.
    ``lenient``: a row count on line 2 that disagrees with the rows is accepted."""
    src = str(path)
    try:
        fh = open(src, "rb")
    except OSError as exc:
        raise InstanceError("from_simai", f"cannot read the file: {exc.strerror or exc}", src)
    with fh:
        lines = _lines(fh, src)
        n_line, head = next(lines, (1, None))
        if head is None:
            raise InstanceError("line 1", "the file is empty (expected the header line)", src)
        header = _header(head, src)
        n_line, count_text = next(lines, (2, None))
        if count_text is None:
            raise InstanceError("line 2", "missing (expected the number of rows)", src)
        count = _row_count(count_text, src)
        names, nums, types, where = [], [], [], []
        blank = None                     # the first blank line after the last row read
        for n_line, text in lines:
            if not text.strip():
                blank = blank or n_line
                continue
            if len(names) == count and not lenient:
                raise InstanceError(f"line {n_line}", f"a row after the {count} rows announced on "
                                    "line 2 (the row count is wrong; --lenient reads every row)", src)
            if blank and not lenient:
                raise InstanceError(f"line {blank}", "a blank line among the rows", src)
            if len(names) == MAX_ROWS:
                raise InstanceError(f"line {n_line}", f"more than {MAX_ROWS} rows", src)
            name, row, kinds = _row(text, f"line {n_line}", src)
            names.append(name)
            nums.append(row)
            types.append(kinds)
            where.append(n_line)
    if len(names) < count and not lenient:
        raise InstanceError(f"line {n_line + 1}", f"the file ends after {len(names)} of the {count} "
                            "rows announced on line 2 (--lenient reads the rows the file holds)", src)
    if not names:
        raise InstanceError("line 3", "no rows (line 2 announces "
                            f"{count})", src)
    nums = np.array(nums, dtype=np.int64).reshape(-1, 11)
    compute = nums[:, [1, 4, 7]]
    comm_bytes = nums[:, [3, 6, 9]]
    return SimaiWorkload(path=src, header=header, announced_rows=count, names=names,
                         line=np.array(where, dtype=np.int64),
                         compute=compute, comm_type=np.array(types, dtype=object).reshape(-1, 3),
                         comm_bytes=comm_bytes)


def warn_row_count(w: SimaiWorkload) -> None:
    """The lenient read's one warning line, when line 2 disagreed with the rows."""
    if w.rows != w.announced_rows:
        _log.warning("warning: %s: line 2 announces %d rows but the file holds %d; reading those "
                     "%d (--lenient)", w.path, w.announced_rows, w.rows, w.rows)


def _lines(fh, src: str):
    """(line number, text) pairs; a line over MAX_LINE characters or not ASCII is refused."""
    n = 0
    while True:
        raw = fh.readline(MAX_LINE + 2)
        if not raw:
            return
        n += 1
        if len(raw) > MAX_LINE and not raw.endswith(b"\n") or len(raw) > MAX_LINE + 1:
            raise InstanceError(f"line {n}", f"longer than {MAX_LINE} characters", src)
        try:
            text = raw.decode("ascii")
        except UnicodeDecodeError:
            raise InstanceError(f"line {n}", "is not ASCII text", src)
        if "\x00" in text:
            raise InstanceError(f"line {n}", "contains a NUL byte (not a text file)", src)
        yield n, text


def _header(text: str, src: str) -> dict:
    tok = text.split()
    if not tok or tok[0] != POLICY:
        got = tok[0][:40] if tok else "an empty line"
        raise InstanceError("line 1", f"the header must start with {POLICY} (the only SimAI policy "
                            f"converted), got {got!r}", src)
    out = dict.fromkeys(("tp", "ep", "pp", "vpp", "ga", "all_gpus", "pp_comm"))
    seen, i = set(), 1
    while i < len(tok):
        key = tok[i].rstrip(":")
        if key in seen:
            raise InstanceError("line 1", f"header key {key!r} given twice", src)
        seen.add(key)
        if i + 1 >= len(tok):
            raise InstanceError("line 1", f"header key {key!r} has no value", src)
        val = tok[i + 1]
        if key in HEADER_INTS:
            v = _uint(val, f"line 1, {key}", src, lo=1, hi=MAX_PARALLEL)
            out["tp" if key == "model_parallel_NPU_group" else key] = v
        elif key == "pp_comm":
            m = _PP_COMM.fullmatch(val)
            if not m:
                raise InstanceError("line 1, pp_comm", f"must be a non-negative integer number of "
                                    f"bytes, got {val[:40]!r}", src)
            v = int(m.group(1))
            if v > MAX_BYTES:
                raise InstanceError("line 1, pp_comm", f"{v} bytes exceed the {MAX_BYTES:.0e} cap", src)
            out["pp_comm"] = v
        elif key in ("checkpoints", "checkpoint_initiates"):
            n = _uint(val, f"line 1, {key}", src, hi=MAX_ROWS)
            if n:
                rows = " ".join(t[:20] for t in tok[i + 2:i + 2 + min(n, 8)])
                raise InstanceError(f"line 1, {key}", f"activation checkpointing is not converted: "
                                    f"{n} checkpoint row(s) listed ({rows}{' ...' if n > 8 else ''}); "
                                    "the 1F1B DAG has no recomputation (AICB writes 0: its "
                                    "--recompute_activations is in the rows' forward times)", src)
        else:
            raise InstanceError("line 1", f"unknown header key {tok[i][:40]!r} (known: "
                                f"{', '.join(HEADER_INTS)}, pp_comm, checkpoints, "
                                "checkpoint_initiates)", src)
        i += 2
    if out["tp"] is None:
        raise InstanceError("line 1", "model_parallel_NPU_group (TP) is missing", src)
    return out


def _row_count(text: str, src: str) -> int:
    tok = text.split()
    if len(tok) != 1:
        raise InstanceError("line 2", f"must hold only the number of rows, got {len(tok)} fields", src)
    return _uint(tok[0], "line 2", src, lo=1, hi=MAX_ROWS, what="the row count")


def _row(text: str, where: str, src: str):
    tok = text.split()
    if len(tok) != len(COLUMNS):
        raise InstanceError(where, f"a row needs {len(COLUMNS)} fields ({' '.join(COLUMNS)}), "
                            f"got {len(tok)}", src)
    if not _INT.fullmatch(tok[1]):
        raise InstanceError(f"{where}, reserved", f"must be an integer, got {tok[1][:40]!r}", src)
    row = [int(tok[1])]
    kinds = []
    for p, phase in enumerate(PHASES):
        c = 2 + 3 * p
        row.append(_uint(tok[c], f"{where}, {COLUMNS[c]}", src, hi=MAX_NS))
        kind = tok[c + 1]
        if kind not in COMM_TYPES:
            raise InstanceError(f"{where}, {COLUMNS[c + 1]}", f"unknown communication type "
                                f"{kind[:40]!r} (known: NONE, BROADCAST, {'/'.join(BASES)} with "
                                "no suffix, _EP or _DP_EP)", src)
        kinds.append(kind)
        row.append(0)
        row.append(_uint(tok[c + 2], f"{where}, {COLUMNS[c + 2]}", src, hi=MAX_BYTES))
    row.append(_uint(tok[11], f"{where}, update_time", src, hi=MAX_NS))
    return tok[0], row, kinds


def _uint(tok: str, where: str, src: str, lo: int = 0, hi: int | None = None,
          what: str = "the value") -> int:
    """A decimal integer in [lo, hi]; NaN, infinities, fractions, signs and exponents refused."""
    if not _UINT.fullmatch(tok):
        low = tok.lower().lstrip("+-")
        if low in ("nan", "inf", "infinity"):
            why = "must be finite"
        elif tok.startswith("-") and _UINT.fullmatch(tok[1:]):
            why = "must be >= 0"
        else:
            why = "must be a non-negative integer"
        raise InstanceError(where, f"{why}, got {tok[:40]!r}", src)
    v = int(tok)
    if v < lo:
        raise InstanceError(where, f"{what} must be >= {lo}, got {v}", src)
    if hi is not None and v > hi:
        raise InstanceError(where, f"{what} {v} exceeds the cap {hi}", src)
    return v
