#!/usr/bin/env bash
# The FFTW-MPI peer figures for ndcyclic's 3-D FFT on pencils: for every
# cube size in SIZES (N = M = K) and every rank count in RANKS, runs
# benches/fftw/fftw_mpi_bench.c, which times on an N^3 array of complex
# doubles (a) FFTW's distributed transpose of the N x M matrix of K-value
# blocks, i.e. x-slabs -> y-slabs, the peer of ndcyclic's x-pencils ->
# y-pencils redistribution, and (b) FFTW's out-of-place forward 3-D DFT
# (fftw_mpi_plan_dft_3d, FFTW_MEASURE, default output layout). Prints a
# markdown table of the medians over REPS repetitions (each repetition timed
# from a barrier, the slowest rank's time counted) and the largest error of
# the DFT against the exact spectrum of a plane wave, relative to its peak.
#
#   scripts/bench-fft.sh                          # 128^3 and 256^3 on 2 and 4 ranks
#   SIZES="64 128" RANKS="1 2" REPS=9 scripts/bench-fft.sh
#   JSON=fft.jsonl scripts/bench-fft.sh           # also append every run's JSON line
#
# Debian's FFTW-MPI (libfftw3-mpi-dev) is built on Open MPI, so the program
# is compiled with mpicc.openmpi and started with mpirun.openmpi; MPICH stays
# the system's mpirun/mpicc. Installs libfftw3-mpi-dev and libfftw3-dev
# when missing (needs root), then re-runs scripts/setup.sh, which pins the
# MPI alternatives back to MPICH. With more ranks than cores the runs are
# oversubscribed (--oversubscribe): ranks share cores, and FFTW's plans and
# times then say more about the scheduler than about the transform.
#
# ndcyclic's columns come from examples/fft3d.rs on the same rank count and
# size, on slabs (grid Px1, FFTW's decomposition), built against Open MPI
# (the same MPI as FFTW's columns) and against MPICH (the project's default),
# each started with its own mpirun: the x-pencils -> y-pencils redistribution
# (an axis permutation, x_to_y_s) and the forward transform (forward_s, x- to
# z-pencils, which FFTW's default output layout does not match: FFTW
# transposes back to x-slabs), medians of REPS; plans are built once, not timed.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=${SIZES:-"128 256"}
RANKS=${RANKS:-"2 4"}
REPS=${REPS:-5}
JSON=${JSON:-}

log() { printf 'bench-fft: %s\n' "$*" >&2; }

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

# Open MPI's compiler and launcher, installed next to MPICH by setup.sh.
if [ ! -x /usr/bin/mpicc.openmpi ] || [ ! -x /usr/bin/mpirun.openmpi ]; then
  [ "$(id -u)" -eq 0 ] || { log "Open MPI (mpicc.openmpi, mpirun.openmpi) is missing; run scripts/setup.sh --with-openmpi as root"; exit 1; }
  log "Open MPI missing; installing it with scripts/setup.sh --with-openmpi"
  scripts/setup.sh --with-openmpi
fi

# FFTW's MPI interface and its serial headers (fftw3-mpi.h includes fftw3.h).
missing=()
for p in libfftw3-mpi-dev libfftw3-dev; do installed "$p" || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    log "needs root to install ${missing[*]} (apt-get); run this script as root or install them first"
    exit 1
  fi
  log "installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # Something was installed: make sure mpirun/mpicc still name MPICH.
  scripts/setup.sh
fi

OUT=${CARGO_TARGET_DIR:-target}/fftw
BENCH=$OUT/fftw_mpi_bench
mkdir -p "$OUT"
/usr/bin/mpicc.openmpi -std=c99 -O3 -Wall -Wextra -Werror -o "$BENCH" \
  benches/fftw/fftw_mpi_bench.c -lfftw3_mpi -lfftw3 -lm

# ndcyclic's figures for the same ranks and size, as two table cells: the
# x-pencils -> y-pencils redistribution's median ms and the 3-D forward FFT's
# median ms (examples/fft3d.rs on slabs, grid Px1). Built twice: against Open
# MPI (the MPI FFTW-MPI runs on, in target/openmpi like scripts/test-openmpi.sh)
# and against MPICH (the project's default), each started by its own mpirun.
TARGET=${CARGO_TARGET_DIR:-target}
log "building examples/fft3d against MPICH ($TARGET) and Open MPI ($TARGET/openmpi)"
cargo build --release -q --example fft3d
MPICC=/usr/bin/mpicc.openmpi CARGO_TARGET_DIR="$TARGET/openmpi" cargo build --release -q --example fft3d
ours() {
  local mpi=$1 ranks=$2 size=$3 line
  case "$mpi" in
    openmpi) line=$(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
               /usr/bin/mpirun.openmpi --oversubscribe -n "$ranks" \
               "$TARGET/openmpi/release/examples/fft3d" --n "$size" --grid "${ranks}x1" \
               --reps "$REPS" --json 2>/dev/null | tail -n 1) || true ;;
    *) line=$(mpirun -n "$ranks" "$TARGET/release/examples/fft3d" --n "$size" --grid "${ranks}x1" \
               --reps "$REPS" --json 2>/dev/null | tail -n 1) || true ;;
  esac
  if [ -n "$JSON" ] && [ -n "$line" ]; then printf '%s\n' "$line" >>"$JSON"; fi
  python3 -c 'import json, sys
try:
    r = json.loads(sys.argv[1])
    print("%.2f | %.2f" % (r["x_to_y_s"] * 1e3, r["forward_s"] * 1e3), end="")
except (ValueError, KeyError):
    print("failed | failed", end="")' "$line"
}

cores=$(nproc)
log "FFTW-MPI under $(/usr/bin/mpirun.openmpi --version 2>&1 | head -n 1), $cores cores, $REPS reps"
echo "| ranks | size | FFTW transpose ms | FFTW 3-D forward ms | FFTW max error | ndcyclic x->y pencils ms, Open MPI | ndcyclic 3-D forward ms, Open MPI | ndcyclic x->y pencils ms, MPICH | ndcyclic 3-D forward ms, MPICH | FFTW plan ms (transpose / 3-D) |"
echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"
failed=0
version=
for size in $SIZES; do
  for ranks in $RANKS; do
    if out=$(/usr/bin/mpirun.openmpi --allow-run-as-root --oversubscribe -n "$ranks" \
        "$BENCH" --n "$size" --m "$size" --k "$size" --reps "$REPS" --json); then
      status=ok
    else
      status=failed
      failed=1
    fi
    # The human-readable summary to stderr, the JSON line into the table.
    sed '$d' <<<"$out" >&2
    line=$(tail -n 1 <<<"$out")
    if [ -n "$JSON" ]; then printf '%s\n' "$line" >>"$JSON"; fi
    over=""
    [ "$ranks" -le "$cores" ] || over=" (oversubscribed)"
    python3 - "$line" "$status" "$over" "$(ours openmpi "$ranks" "$size") | $(ours mpich "$ranks" "$size")" <<'PY'
import json, sys
line, status, over, ours = sys.argv[1:]
try:
    r = json.loads(line)
except ValueError:
    print(f"| ? | ? | run {status}: no JSON line | | | {ours} | |")
    sys.exit(0)
err = f"{r['fft_max_error']:.1e}" + ("" if status == "ok" and r.get("transpose_exact", True) else " FAILED")
print(f"| {r['ranks']}{over} | {r['n']}x{r['m']}x{r['k']} c64 | {r['transpose_ms_median']:.2f} | "
      f"{r['fft_ms_median']:.2f} | {err} | {ours} | "
      f"{r['transpose_plan_ms']:.0f} / {r['fft_plan_ms']:.0f} |")
PY
    version=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1]).get("fftw_version", "?"))' "$line" 2>/dev/null || true)
  done
done
echo
echo "FFTW ${version:-?}, FFTW_MEASURE plans, out-of-place; $cores cores; $REPS reps; medians of the slowest rank's times."
[ "$failed" -eq 0 ] || { log "some runs failed their checks"; exit 1; }
