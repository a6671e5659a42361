#!/usr/bin/env bash
# The parallel I/O bench: `redist io write` and `read` of the cases of the
# I/O page's table (docs/io.md, "Measured"), each next to plain MPI-IO
# (`--baseline mpiio`) in the same run, and next to ndcyclic saving and
# loading the same bytes from `block` rows (one contiguous range per rank:
# the file system's speed). Files go to $DIR (default /dev/shm).
#
#   scripts/bench-io.sh                      # every case, 1 round, 5 reps
#   ROUNDS=3 REPS=7 scripts/bench-io.sh      # medians of more
#   AGGREGATORS=2 scripts/bench-io.sh        # --aggregators 2
#   FORMAT=h5 BASELINE=hdf5 scripts/bench-io.sh   # HDF5 (the tool built with --features hdf5)
#
# Prints one JSON line per run (what `--json` gives) to $OUT (default
# bench-results/io.jsonl) and a table on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."

DIR=${DIR:-/dev/shm}
ROUNDS=${ROUNDS:-1}
REPS=${REPS:-5}
FORMAT=${FORMAT:-npy}
BASELINE=${BASELINE:-mpiio}
OUT=${OUT:-bench-results/io.jsonl}
REDIST=${REDIST:-target/release/redist}
MPIRUN=${NDCYCLIC_MPIRUN:-mpirun}
extra=()
[ -z "${AGGREGATORS:-}" ] || extra+=(--aggregators "$AGGREGATORS")
[ "$FORMAT" = npy ] || extra+=(--format "$FORMAT")

[ -x "$REDIST" ] || cargo build --release -p redist-cli --bin redist
mkdir -p "$(dirname "$OUT")"
file="$DIR/ndcyclic-bench-io.$FORMAT"

# ranks shape type layout reference-layout
cases=(
    "2 4096x4096 f64 cyclic(64),cyclic(64)@1x2 block,*@2x1"
    "2 4096x4096 f64 cyclic,cyclic@1x2 block,*@2x1"
    "4 4096x4096 f64 cyclic,cyclic@2x2 block,*@4x1"
    "2 512x512x512 f32 block,block,*@1x2x1 block,*,*@2x1x1"
)

field() { python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(d.get(sys.argv[2]))" "$1" "$2"; }

printf '%-28s %-14s %5s %10s %10s %8s %10s %8s\n' layout shape op ms baseline ratio "ref ms" "bw/ref"
for round in $(seq "$ROUNDS"); do
    for c in "${cases[@]}"; do
        read -r n shape ty layout reference <<<"$c"
        for op in write read; do
            run() {
                local l=$1
                shift
                if [ "$op" = write ]; then
                    "$MPIRUN" -n "$n" "$REDIST" io write --shape "$shape" --type "$ty" --layout "$l" \
                        --file "$file" --reps "$REPS" --json "${extra[@]}" "$@" | tail -n 1
                else
                    "$MPIRUN" -n "$n" "$REDIST" io write --shape "$shape" --type "$ty" --layout "$l" \
                        --file "$file" --reps 1 --json "${extra[@]}" >/dev/null
                    "$MPIRUN" -n "$n" "$REDIST" io read --file "$file" --layout "$l" \
                        --reps "$REPS" --json "${extra[@]}" "$@" | tail -n 1
                fi
            }
            ours=$(run "$layout" --baseline "$BASELINE")
            ref=$(run "$reference")
            echo "$ours" >>"$OUT"
            echo "$ref" >>"$OUT"
            ms=$(field "$ours" "${op}_ms_median")
            base=$(field "$ours" "${BASELINE}_${op}_ms_median")
            ratio=$(field "$ours" "${op}_over_${BASELINE}")
            ref_ms=$(field "$ref" "${op}_ms_median")
            printf '%-28s %-14s %5s %10.2f %10.2f %8.3f %10.2f %8.3f\n' "$layout" "$shape" "$op" \
                "$ms" "$base" "$ratio" "$ref_ms" "$(python3 -c "print($ref_ms / $ms)")"
        done
    done
done
rm -f "$file"
