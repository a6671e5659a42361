#!/usr/bin/env bash
# Runs `redist tune --json` over the bench table (scripts/bench-cases.sh;
# the rows that name `auto`, each with its extra flags) and prints a
# markdown table: auto's own choice and time, the fastest choice measured
# and its time, their ratio (at most 1 but for noise: the best is auto's own
# where nothing was faster), and what measuring cost. Both times are taken
# in the same run, the slowest rank's median of REPS executions after
# WARMUPS (auto's after at least 9, past its trial of routes).
#
#   scripts/bench-tune.sh                          # 2 ranks, MPICH
#   RANKS=4 REPS=7 scripts/bench-tune.sh
#   WISDOM=/dev/shm/w scripts/bench-tune.sh        # also add every case to a wisdom file
#   CASES_FILTER=cyclic scripts/bench-tune.sh      # only cases whose line matches
#   MPI=openmpi scripts/bench-tune.sh              # Open MPI's build and mpirun
#   LAUNCH="scripts/cluster.sh --nodes 2 --ranks-per-node 2 --mpi mpich --" RANKS=4 \
#       scripts/bench-tune.sh                      # across 2 emulated nodes (root)
set -euo pipefail
cd "$(dirname "$0")/.."
RANKS=${RANKS:-2}
REPS=${REPS:-5}
WARMUPS=${WARMUPS:-3}
WISDOM=${WISDOM:-}
MPI=${MPI:-mpich}
R=$RANKS
# shellcheck source=bench-cases.sh
source scripts/bench-cases.sh
case $MPI in
  mpich) target=${CARGO_TARGET_DIR:-target}
         cargo build --release -q -p redist-cli --bin redist
         launch=(mpirun -n "$RANKS") ;;
  openmpi) target=${CARGO_TARGET_DIR:-target}/openmpi
           MPICC=/usr/bin/mpicc.openmpi CARGO_TARGET_DIR="$target" \
               cargo build --release -q -p redist-cli --bin redist
           launch=(mpirun.openmpi --allow-run-as-root --oversubscribe -n "$RANKS") ;;
  *) echo "bench-tune.sh: MPI must be mpich or openmpi, got '$MPI'" >&2; exit 2 ;;
esac
if [ -n "${LAUNCH:-}" ]; then
  read -r -a launch <<<"$LAUNCH"
fi
REDIST=$PWD/$target/release/redist
wisdom=()
[ -z "$WISDOM" ] || wisdom=(--wisdom "$WISDOM")
echo "| case | auto | auto ms | best | best ms | best/auto | measuring |"
echo "| --- | --- | ---: | --- | ---: | ---: | ---: |"
for c in "${CASES[@]}"; do
  [ -z "${CASES_FILTER:-}" ] || grep -q -- "$CASES_FILTER" <<<"$c" || continue
  IFS='|' read -r shape type from to strategy extra <<<"$c"
  [ "$strategy" = auto ] || continue
  # shellcheck disable=SC2086 # extra holds flags
  line=$("${launch[@]}" "$REDIST" tune --shape "$shape" --type "$type" --from "$from" \
      --to "$to" --reps "$REPS" --warmups "$WARMUPS" --verify --json "${wisdom[@]}" $extra |
      grep '^{' | tail -n 1)
  python3 - "$line" "$shape $type $from -> $to $extra" <<'PY'
import json, sys
v = json.loads(sys.argv[1])
assert v["verified"], v
print(f"| `{sys.argv[2].strip()}` | {v['auto_choice']} | {v['auto_ms']:.3f} | {v['best_choice']} | "
      f"{v['best_ms']:.3f} | {v['tuned_over_auto']:.2f} | {v['executions']} ex, {v['tune_seconds']:.1f} s |")
PY
done
