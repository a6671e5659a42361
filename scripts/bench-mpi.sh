#!/usr/bin/env bash
# Runs the MPI benchmark `benches/redistribute.rs` under mpirun: criterion on
# rank 0, every case next to a bare MPI_Alltoallv of the same bytes. `cargo
# bench` alone would start it as one rank; this builds it, finds its
# executable and launches it on RANKS ranks (default 2).
#
#   scripts/bench-mpi.sh                   # every case on 2 ranks
#   RANKS=4 scripts/bench-mpi.sh array     # 4 ranks, only ids containing "array"
#
# Arguments are passed to criterion (a filter, --save-baseline NAME, ...).
# The HTML report with plots: target/criterion/report/index.html (criterion
# writes it under the target directory, CARGO_TARGET_DIR if set).
set -euo pipefail
cd "$(dirname "$0")/.."
RANKS=${RANKS:-2}
exe=$(cargo bench --bench redistribute --no-run --message-format=json 2>/dev/null |
  grep -o '"executable":"[^"]*"' | tail -n 1 | cut -d '"' -f 4)
if [ -z "$exe" ] || [ ! -x "$exe" ]; then
  echo "bench-mpi: could not build benches/redistribute.rs; run 'cargo bench --bench redistribute --no-run' to see why" >&2
  exit 1
fi
echo "bench-mpi: mpirun -n $RANKS $exe --bench $*" >&2
exec mpirun -n "$RANKS" "$exe" --bench "$@"
