#!/usr/bin/env bash
# Builds ndcyclic against Open MPI and runs its test programs under Open
# MPI's launcher, at up to 4 ranks: what a user on an Open MPI cluster gets.
#
# The build goes to its own target directory (target/openmpi): mpi-sys is
# built against whichever MPI `MPICC` names, and changing `MPICC` does not
# rebuild it, so one target directory must never mix the two. MPICH stays
# the system default; Open MPI is named explicitly (its `mpicc.openmpi` and
# `mpirun.openmpi`), so the alternatives are not touched.
#
# Needs Open MPI installed: `scripts/setup.sh --with-openmpi`.
# Environment: NDCYCLIC_MPI_RANKS (default 1,2,3,4), NDCYCLIC_OPENMPI_TARGET
# (the build directory, default `openmpi` inside $CARGO_TARGET_DIR or
# target/ — never the MPICH build's own directory).
set -euo pipefail
cd "$(dirname "$0")/.."

for f in /usr/bin/mpicc.openmpi /usr/bin/mpirun.openmpi; do
    if [ ! -x "$f" ]; then
        echo "test-openmpi: $f not found; run scripts/setup.sh --with-openmpi first" >&2
        exit 2
    fi
done

export MPICC=/usr/bin/mpicc.openmpi
export CARGO_TARGET_DIR=${NDCYCLIC_OPENMPI_TARGET:-${CARGO_TARGET_DIR:-target}/openmpi}
export NDCYCLIC_MPIRUN=/usr/bin/mpirun.openmpi
# Tests across emulated nodes start Open MPI's launcher (scripts/cluster.sh --mpi openmpi).
export NDCYCLIC_CLUSTER_MPI=openmpi
# Run as root (containers, CI) and with more ranks than cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
export NDCYCLIC_MPI_RANKS=${NDCYCLIC_MPI_RANKS:-1,2,3,4}

start=$(date +%s)
echo "test-openmpi: $("$NDCYCLIC_MPIRUN" --version 2>&1 | head -n 1), ranks $NDCYCLIC_MPI_RANKS, target $CARGO_TARGET_DIR"
# One build of everything the tests start, examples among them (tests
# compare their results on one node and across nodes): `cargo build
# --examples` first resolved features for the examples alone, and the test
# build after it compiled 8 of its crates a second time.
cargo test --workspace --release --no-run
# Unit tests and every test program (the MPI ones launch themselves under
# $NDCYCLIC_MPIRUN); doc tests are MPICH's run's.
cargo test --workspace --release --tests
echo "test-openmpi: passed in $(($(date +%s) - start)) s"
