#!/usr/bin/env bash
# Reproducing a paper's table: LumosCore's Table 1 (cluster sizes from closed forms) and
# the a2a motivating example (--quick: its short variant). Each prints its headline table,
# the paper's value beside ours, and writes its report into $OUT.
set -euo pipefail
OUT=${OUT:-results/quick/example-reproduce}

ocs-opt -q reproduce lumos-table1 --out "$OUT"
ocs-opt -q reproduce a2a-example --quick --out "$OUT"
ls "$OUT"
