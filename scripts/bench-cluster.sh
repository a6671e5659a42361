#!/usr/bin/env bash
# The benchmark across emulated nodes: `redist run --baseline alltoallv
# --verify --json` over a table of cases, each on N emulated nodes of
# PER_NODE ranks (scripts/cluster.sh, links shaped to RATE), against a bare
# MPI_Alltoallv of the same bytes on the same emulated cluster, and prints a
# markdown table: what crosses between nodes, how many messages went typed
# (derived datatypes) rather than packed in each round, the execution time,
# the bare exchange's and their ratio.
#
# Each case runs ROUNDS times (REPS timed repetitions each); every figure is
# the median over the rounds, every ratio the median of the rounds' ratios
# (each taken within one run). Needs root (network namespaces).
#
#   scripts/bench-cluster.sh                       # MPICH, 10gbit links
#   RATE=1gbit ROUNDS=5 scripts/bench-cluster.sh
#   MPI=openmpi scripts/bench-cluster.sh           # Open MPI's build and launcher
#   CASES_FILTER=block scripts/bench-cluster.sh    # only cases whose line matches
#   JSON=runs.jsonl scripts/bench-cluster.sh       # also append every run's JSON line
#
# What this models and what it does not: ranks on different nodes talk over
# TCP through veth pairs and a bridge, limited by tc's token bucket to RATE;
# ranks on one node share memory. It is not InfiniBand or any real NIC: no
# RDMA, no offload, no wire latency (the kernel here has no netem), every
# "node" shares this machine's cores and memory bus, and with more ranks
# than cores MPI's spinning waits distort small exchanges.
set -euo pipefail
cd "$(dirname "$0")/.."
RATE=${RATE:-10gbit}
PER_NODE=${PER_NODE:-2}
REPS=${REPS:-5}
ROUNDS=${ROUNDS:-3}
MPI=${MPI:-mpich}
JSON=${JSON:-}
case "$MPI" in
  mpich) target=${CARGO_TARGET_DIR:-target}
         cargo build --release -q -p redist-cli --bin redist ;;
  openmpi) target=${CARGO_TARGET_DIR:-target}/openmpi
           MPICC=/usr/bin/mpicc.openmpi CARGO_TARGET_DIR="$target" \
             cargo build --release -q -p redist-cli --bin redist ;;
  *) echo "bench-cluster.sh: MPI must be mpich or openmpi, got '$MPI'" >&2; exit 2 ;;
esac
REDIST=$target/release/redist

# nodes | shape | type | from | to | strategy [| extra redist run flags]
# (grids of nodes * PER_NODE ranks; the default PER_NODE=2 gives 4 and 8)
P=$PER_NODE
CASES=(
  "2|4096x4096|f64|cyclic(64),cyclic(64)@2x${P}|cyclic(64),cyclic(64)@$((2 * P))x1|auto"
  "2|4096x4096|f64|cyclic(64),cyclic(64)@2x${P}|cyclic(64),cyclic(64)@$((2 * P))x1|auto|--no-node-direct"
  "2|8192x4096|f64|block,*@$((2 * P))x1|*,block@1x$((2 * P))|auto"
  "2|4096x4096|f64|cyclic(5),cyclic(5)@2x${P}|cyclic(8),cyclic(8)@2x${P}|auto"
  "2|16777216|f64|cyclic(40)@$((2 * P))|cyclic(300)@$((2 * P))|auto"
  "2|256x256|f64|cyclic,cyclic@2x${P}|cyclic(2),cyclic(2)@$((2 * P))x1|auto"
  "4|256x256|f64|cyclic,cyclic@4x${P}|cyclic(2),cyclic(2)@${P}x4|auto"
  "4|4096x4096|f64|cyclic(64),cyclic(64)@4x${P}|cyclic(64),cyclic(64)@${P}x4|auto"
  "4|8192x4096|f64|block,*@$((4 * P))x1|*,block@1x$((4 * P))|auto"
)

echo "links $RATE, $PER_NODE ranks per node, $MPI, $ROUNDS rounds of $REPS reps"
echo
echo "| nodes | ranks | shape | from | to | strategy | node direct | MB moved | MB between nodes | messages between nodes | typed sends (each round) | exec ms | alltoallv ms | exec/alltoallv | verified |"
echo "|---:|---:|---|---|---|---|---|---:|---:|---:|---|---:|---:|---:|---|"
for c in "${CASES[@]}"; do
  if [ -n "${CASES_FILTER:-}" ] && ! grep -q -- "${CASES_FILTER}" <<<"$c"; then continue; fi
  IFS='|' read -r nodes shape type from to strategy extra <<<"$c"
  lines=()
  for _ in $(seq "$ROUNDS"); do
    # shellcheck disable=SC2086 # extra holds zero or more flags
    lines+=("$(scripts/cluster.sh --nodes "$nodes" --ranks-per-node "$PER_NODE" --rate "$RATE" \
        --mpi "$MPI" -- "$REDIST" run --shape "$shape" --type "$type" --from "$from" --to "$to" \
        --strategy "$strategy" --reps "$REPS" --verify --baseline alltoallv --json \
        ${extra:-} 2>/dev/null | tail -n 1)")
  done
  if [ -n "$JSON" ]; then printf '%s\n' "${lines[@]}" >>"$JSON"; fi
  python3 - "${lines[@]}" <<'PY'
import json, statistics, sys
runs = [json.loads(a) for a in sys.argv[1:]]
v = runs[0]
med = lambda f: statistics.median(f(r) for r in runs)
# Messages sent typed (derived datatypes) with the routes each run kept.
typed = "/".join(str(r.get("typed_sends")) for r in runs) if v.get("typed_sends") is not None else "—"
print(f"| {v['nodes']} | {v['ranks']} | {'x'.join(map(str, v['shape']))} | `{v['from']}` | `{v['to']}` | "
      f"{v['strategy']} | {'yes' if v['node_direct'] else 'no'} | {v['bytes_moved'] / 1e6:.1f} | "
      f"{v['bytes_between_nodes'] / 1e6:.1f} | {v['messages_between_nodes']} | {typed} | "
      f"{med(lambda r: r['exec_ms_median']):.2f} | {med(lambda r: r['alltoallv_ms_median']):.2f} | "
      f"{med(lambda r: r['exec_over_alltoallv']):.2f} | {all(r['verified'] for r in runs)} |")
PY
done
