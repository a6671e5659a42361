#!/usr/bin/env bash
# Builds the `redist` tool with its `scalapack` feature (linking Debian's
# libscalapack-mpich) and runs what the feature adds: the MPI tests that
# compare ndcyclic with ScaLAPACK's pdgemr2d, pdtran and pdgeadd element by
# element (crates/redist-cli/tests/mpi_scalapack.rs, 1-4 ranks) and
# `redist run --baseline pdgemr2d,pdtran,pdgeadd`
# (the `run_mpi` part of crates/redist-cli/tests/cli/); then compiles the doc examples
# of redist_cli::scalapack.
#
# Needs ScaLAPACK installed: `scripts/setup.sh --with-scalapack`.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! ls /usr/lib/*/libscalapack-mpich.so >/dev/null 2>&1; then
    echo "test-scalapack: libscalapack-mpich.so not found; run scripts/setup.sh --with-scalapack first" >&2
    exit 2
fi
start=$(date +%s)
cargo test --release -p redist-cli --features scalapack \
    --test mpi_scalapack --test cli run_mpi
cargo test --release -p redist-cli --features scalapack --doc
echo "test-scalapack: passed in $(($(date +%s) - start)) s"
