#!/usr/bin/env bash
# Runs the planning crate's tests (`cargo test -p redist-plan --release`) on
# a machine with no MPI library: in a private mount namespace (root, or
# `unshare -rm`), every MPI, ScaLAPACK and parallel-HDF5 shared library of
# the system is hidden behind an empty file, which is checked by starting an
# MPI-linked program (MPICH's mpichversion: it must fail to load). Then prints `ldd` of the test
# binary, which names no libmpi.
#
#   sudo scripts/test-without-mpi.sh
#
# The build goes to its own target folder (CARGO_TARGET_DIR, default
# /tmp/ndcyclic-without-mpi) so that the workspace's builds are untouched.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" != --inside ]; then
  exec unshare -m "$0" --inside
fi
lib=/usr/lib/x86_64-linux-gnu
for d in "$lib/mpich" "$lib/openmpi" /usr/lib/mpich /usr/lib/openmpi; do
  if [ -d "$d" ]; then mount -t tmpfs none "$d"; fi
done
hidden=0
for f in "$lib"/libmpi*.so* "$lib"/libmpich*.so* "$lib"/libopen-pal*.so* "$lib"/libopen-rte*.so* \
         "$lib"/libscalapack*.so* "$lib"/libhdf5_mpich*.so* "$lib"/libhdf5_openmpi*.so*; do
  if [ -f "$f" ]; then mount --bind /dev/null "$f"; hidden=$((hidden + 1)); fi
done
echo "test-without-mpi: $hidden MPI library files hidden"
# A program linked to libmpich must no longer start.
if mpichversion >/dev/null 2>&1; then
  echo "test-without-mpi: mpichversion still starts: MPI is not hidden" >&2
  exit 1
fi
echo "test-without-mpi: mpichversion says: $(mpichversion 2>&1 | head -n 1)"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-/tmp/ndcyclic-without-mpi}
cargo test -p redist-plan --release
for b in "$CARGO_TARGET_DIR"/release/deps/redist_plan-*; do
  case "$b" in *.d | *.rlib | *.rmeta) continue ;; esac
  echo "ldd $b:"
  ldd "$b"
  if ldd "$b" | grep -q mpi; then
    echo "test-without-mpi: $b links MPI" >&2
    exit 1
  fi
done
echo "test-without-mpi: passed"
