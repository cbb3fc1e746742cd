#!/usr/bin/env bash
# Batch solving: every a2a instance in a folder with three methods, on two worker
# processes, into a resumable results folder. Run from the repository root with the
# project's environment active (`make install`, then `. .venv/bin/activate`).
set -euo pipefail
OUT=${OUT:-results/runs/example-batch}

# each file runs the --methods of its problem; finished rows go to $OUT/records.csv at once
ocs-opt -q batch instances/a2a --methods rdc,static,one-hop --workers 2 --out "$OUT"

# the same command again: every (file, method) has a finished row, so nothing runs (it
# prints the same table, from the CSV)
ocs-opt -q batch instances/a2a --methods rdc,static,one-hop --workers 2 --out "$OUT" > /dev/null

# the rows are a CSV: one per run, with the verified objective and every metric
python - "$OUT/records.csv" <<'PY'
import sys
import pandas as pd

df = pd.read_csv(sys.argv[1]).sort_values(["name", "method"])
print(df[["name", "method", "status", "verified", "total_cost", "d"]].to_string(index=False))
PY
