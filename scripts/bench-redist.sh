#!/usr/bin/env bash
# Runs `redist run --baseline alltoallv,pattern --verify --json` over a fixed
# table of cases on 2 ranks (override with RANKS=N) and prints a markdown
# table: the time to build the redistribution, the bytes its copy programs
# hold, the execution time next to a bare MPI_Alltoallv of the same bytes,
# next to the same runs copied by a plain loop (the access pattern alone;
# "-" where the source parts are private) and next to a memcpy of the local
# data. pattern/alltoallv is the floor of exec/alltoallv on this machine:
# above 1, copying the runs alone already takes longer than the bare
# exchange of the same bytes.
#
# Each case runs ROUNDS times (REPS timed repetitions each); every figure is
# the median over the rounds, every ratio the median of the rounds' ratios
# (each taken within one run, so machine noise affects both sides alike).
#
#   scripts/bench-redist.sh                  # build in release, run every case
#   ROUNDS=5 REPS=9 RANKS=4 scripts/bench-redist.sh
#   CASES_FILTER=cyclic scripts/bench-redist.sh   # only cases whose line matches
#   PDGEMR2D=1 scripts/bench-redist.sh       # also ScaLAPACK's pdgemr2d on the 2-D
#                                            # f64 cases (builds with --features
#                                            # scalapack; both arrays column-major)
#   CHART=docs/bench-redist.png scripts/bench-redist.sh
#                                            # also draw the ratios as a PNG bar
#                                            # chart (`redist chart`)
#   JSON=runs.jsonl scripts/bench-redist.sh  # also append every run's JSON line
#                                            # to a file (`redist chart --input`)
#   FLAGS=--no-node-direct scripts/bench-redist.sh
#                                            # add flags to every case (here: the
#                                            # message path on one node)
#   MPI=openmpi scripts/bench-redist.sh      # Open MPI's build (target/openmpi)
#                                            # and mpirun.openmpi
set -euo pipefail
cd "$(dirname "$0")/.."
RANKS=${RANKS:-2}
REPS=${REPS:-7}
ROUNDS=${ROUNDS:-3}
PDGEMR2D=${PDGEMR2D:-0}
CHART=${CHART:-}
JSON=${JSON:-}
FLAGS=${FLAGS:-}
MPI=${MPI:-mpich}
features=()
if [ "$PDGEMR2D" = 1 ]; then features=(--features scalapack); fi
case "$MPI" in
  mpich) target=${CARGO_TARGET_DIR:-target}
         cargo build --release -q -p redist-cli --bin redist "${features[@]}"
         launch=(mpirun -n "$RANKS") ;;
  openmpi) [ "$PDGEMR2D" = 1 ] && { echo "bench-redist.sh: PDGEMR2D=1 needs MPICH's ScaLAPACK" >&2; exit 2; }
           target=${CARGO_TARGET_DIR:-target}/openmpi
           MPICC=/usr/bin/mpicc.openmpi CARGO_TARGET_DIR="$target" \
             cargo build --release -q -p redist-cli --bin redist
           launch=(mpirun.openmpi --allow-run-as-root --oversubscribe -n "$RANKS") ;;
  *) echo "bench-redist.sh: MPI must be mpich or openmpi, got '$MPI'" >&2; exit 2 ;;
esac
REDIST=$target/release/redist
R=${RANKS}
RECORDS=$(mktemp)
trap 'rm -f "$RECORDS"' EXIT

# The table of cases (shape | type | from | to | strategy [| flags]) for R ranks.
# shellcheck source=scripts/bench-cases.sh
source scripts/bench-cases.sh

if [ "$PDGEMR2D" = 1 ]; then
  echo "| shape | type | from | to | strategy | node direct | MB moved | build ms | program B | exec ms | alltoallv ms | exec/alltoallv | pattern ms | exec/pattern | pattern/alltoallv | exec/memcpy | pdgemr2d ms | pdgemr2d/exec | verified |"
  echo "|---|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
else
  echo "| shape | type | from | to | strategy | node direct | MB moved | build ms | program B | exec ms | alltoallv ms | exec/alltoallv | pattern ms | exec/pattern | pattern/alltoallv | exec/memcpy | verified |"
  echo "|---|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
fi
for c in "${CASES[@]}"; do
  if [ -n "${CASES_FILTER:-}" ] && ! grep -q -- "${CASES_FILTER}" <<<"$c"; then continue; fi
  IFS='|' read -r shape type from to strategy extra <<<"$c"
  baseline=alltoallv,pattern
  if [ "$PDGEMR2D" = 1 ]; then
    # pdgemr2d moves 2-D arrays of doubles only.
    if [ "$type" != f64 ] || [ "$(tr -cd x <<<"$shape")" != x ]; then continue; fi
    baseline=alltoallv,pattern,pdgemr2d
  fi
  for f in $FLAGS; do
    # A flag the case already has is not given twice.
    if ! grep -qw -- "$f" <<<"${extra:-}"; then extra="${extra:-} $f"; fi
  done
  lines=()
  for _ in $(seq "$ROUNDS"); do
    # shellcheck disable=SC2086 # extra holds zero or more flags
    lines+=("$("${launch[@]}" "$REDIST" run --shape "$shape" --type "$type" --from "$from" \
        --to "$to" --strategy "$strategy" --reps "$REPS" --verify --baseline "$baseline" --json \
        ${extra:-} | tail -n 1)")
  done
  printf '%s\n' "${lines[@]}" >>"$RECORDS"
  if [ -n "$JSON" ]; then printf '%s\n' "${lines[@]}" >>"$JSON"; fi
  python3 - "${lines[@]}" <<'PY'
import json, statistics, sys
runs = [json.loads(a) for a in sys.argv[1:]]
v = runs[0]
med = lambda f: statistics.median(f(r) for r in runs)
memcpy = lambda r: r["exec_ms_median"] / r["memcpy_ms_median"] if r.get("memcpy_ms_median") else float("nan")
a2a = lambda r: r.get("exec_over_alltoallv", float("nan"))
nan = float("nan")
pat = lambda key: "-" if key not in v else f"{med(lambda r: r.get(key, nan)):.2f}"
# The floor of exec/alltoallv: the runs alone against the bare exchange.
floor = "-" if "pattern_ms_median" not in v else \
    f"{med(lambda r: r.get('pattern_ms_median', nan) / r.get('alltoallv_ms_median', nan)):.2f}"
print(f"| {'x'.join(map(str, v['shape']))} | {v['type']} | `{v['from']}` | `{v['to']}` | {v['strategy']} | "
      f"{'yes' if v['node_direct'] else 'no'} | {v['bytes_moved'] / 1e6:.1f} | "
      f"{med(lambda r: r['build_ms']):.2f} | {max(r['program_bytes'] for r in runs)} | "
      f"{med(lambda r: r['exec_ms_median']):.2f} | {med(lambda r: r.get('alltoallv_ms_median', float('nan'))):.2f} | "
      f"{med(a2a):.2f} | {pat('pattern_ms_median')} | {pat('exec_over_pattern')} | {floor} | {med(memcpy):.2f} | "
      + (f"{med(lambda r: r['pdgemr2d_ms_median']):.2f} | {med(lambda r: r['pdgemr2d_over_exec']):.2f} | "
         if "pdgemr2d_ms_median" in v else "")
      + f"{all(r['verified'] and r.get('pdgemr2d_agrees', True) and r.get('pattern_verified') is not False for r in runs)} |")
PY
done
if [ -n "$CHART" ]; then
  "$REDIST" chart --input "$RECORDS" --output "$CHART"
  echo "chart: $CHART" >&2
fi
