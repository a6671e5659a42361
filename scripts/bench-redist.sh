#!/usr/bin/env bash
# Runs `redist run --baseline alltoallv --json` over a fixed table of cases on
# 2 ranks (override with RANKS=N) and prints a markdown table with the
# redistribution time next to a bare MPI_Alltoallv of the same bytes.
#
#   scripts/bench-redist.sh            # build in release, run every case
#   REPS=9 RANKS=4 scripts/bench-redist.sh
set -euo pipefail
cd "$(dirname "$0")/.."
RANKS=${RANKS:-2}
REPS=${REPS:-7}
cargo build --release -q -p redist-cli --bin redist
REDIST=target/release/redist

# shape | from | to | strategy [| extra redist run flags]
CASES=(
  "4096x4096|cyclic(64),cyclic(64)@1x${RANKS}|cyclic(64),cyclic(64)@${RANKS}x1|auto"
  "4096x4096|cyclic(64),cyclic(64)@1x${RANKS}|cyclic(64),cyclic(64)@${RANKS}x1|auto|--no-node-direct"
  "4096x4096|cyclic(64),cyclic(64)@1x${RANKS}|cyclic(64),cyclic(64)@${RANKS}x1|alltoallv"
  "4096x4096|cyclic(64),cyclic(64)@1x${RANKS}|cyclic(64),cyclic(64)@1x${RANKS}|auto"
  "4096x4096|block,*@${RANKS}x1|*,block@1x${RANKS}|auto"
  "4096x4096|block,*@${RANKS}x1|*,block@1x${RANKS}|scheduled"
  "16777216|cyclic(5)@${RANKS}|cyclic(8)@${RANKS}|auto"
  "16777216|cyclic(100)@${RANKS}|cyclic(3)@${RANKS}|auto"
  "16777216|cyclic(40)@${RANKS}|cyclic(300)@${RANKS}|auto"
  "16777216|cyclic(300)@${RANKS}|cyclic(200)@${RANKS}|auto"
  "16777216|cyclic(60)@${RANKS}|cyclic(3)@${RANKS}|auto"
  "16777216|cyclic(10)@${RANKS}|cyclic(500)@${RANKS}|auto"
  "256x256x256|block,*,*@${RANKS}x1x1|*,*,block@1x1x${RANKS}|auto"
)

echo "| shape | from | to | strategy | node direct | MB moved | exec ms | alltoallv ms | exec/alltoallv | verified |"
echo "|---|---|---|---|---|---:|---:|---:|---:|---|"
for c in "${CASES[@]}"; do
  IFS='|' read -r shape from to strategy extra <<<"$c"
  # shellcheck disable=SC2086 # extra holds zero or more flags
  line=$(mpirun -n "$RANKS" "$REDIST" run --shape "$shape" --from "$from" --to "$to" \
      --strategy "$strategy" --reps "$REPS" --verify --baseline alltoallv --json ${extra:-} | tail -n 1)
  python3 - "$line" <<'PY'
import json, sys
v = json.loads(sys.argv[1])
print(f"| {'x'.join(map(str, v['shape']))} | `{v['from']}` | `{v['to']}` | {v['strategy']} | "
      f"{'yes' if v['node_direct'] else 'no'} | "
      f"{v['bytes_moved'] / 1e6:.1f} | {v['exec_ms_median']:.2f} | {v['alltoallv_ms_median']:.2f} | "
      f"{v['exec_over_alltoallv']:.2f} | {v['verified']} |")
PY
done
