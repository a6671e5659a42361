#!/usr/bin/env bash
# Prints the path of yield_when_idle.so, building it first when it is
# missing or older than its source (crates/mpi-harness/shim/yield_when_idle.c):
# the library the MPI test harness preloads into its launches so that
# MPICH's waiting ranks yield the core instead of spinning on it
# (crates/mpi-harness/src/idle.rs). The shell-driven suites
# (test-dropin.sh, test-python.sh) preload it the same way:
#
#   shim=$(scripts/yield-when-idle.sh) && export LD_PRELOAD=$shim
#
# Prints nothing (and exits 0) when NDCYCLIC_MPI_IDLE=spin or no C compiler
# can build it: the suites then run with MPICH's own spinning waits.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "${NDCYCLIC_MPI_IDLE:-}" != spin ] || exit 0
src=crates/mpi-harness/shim/yield_when_idle.c
out=${CARGO_TARGET_DIR:-$PWD/target}/yield_when_idle.so
case $out in /*) ;; *) out=$PWD/$out ;; esac
if [ ! -f "$out" ] || [ "$src" -nt "$out" ]; then
    mkdir -p "$(dirname "$out")"
    if ! "${CC:-cc}" -O2 -shared -fPIC -o "$out.tmp" "$src" -ldl 2> /dev/null; then
        echo "yield-when-idle: cannot build $src; waits will spin" >&2
        exit 0
    fi
    mv "$out.tmp" "$out"
fi
echo "$out"
