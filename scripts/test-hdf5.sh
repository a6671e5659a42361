#!/usr/bin/env bash
# Builds ndcyclic with the `hdf5` feature (parallel HDF5: Debian's
# libhdf5-mpich-dev through hdf5-metno's `mpio` feature) and runs what the
# feature adds: dist-io's tests with it (the HDF5 unit tests and
# crates/dist-io/tests/suites/hdf5.rs under mpirun with 1-8 ranks, which
# checks files with h5py and loads files h5py wrote), and `redist io
# --baseline hdf5` (crates/redist-cli/tests/cli/hdf5.rs).
#
# Needs parallel HDF5 and h5py: `scripts/setup.sh --with-hdf5`. HDF5_DIR
# may point elsewhere (the default is Debian's MPICH build).
#
#   scripts/test-hdf5.sh
#   NDCYCLIC_MPI_RANKS=1,2,3 scripts/test-hdf5.sh   # fewer launches
set -euo pipefail
cd "$(dirname "$0")/.."

export HDF5_DIR=${HDF5_DIR:-/usr/lib/x86_64-linux-gnu/hdf5/mpich}
if [ ! -e "$HDF5_DIR/include/H5FDmpio.h" ]; then
    echo "test-hdf5: no parallel HDF5 under HDF5_DIR=$HDF5_DIR; run scripts/setup.sh --with-hdf5 first" >&2
    exit 2
fi
if ! /usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null; then
    echo "test-hdf5: /usr/bin/python3 cannot import h5py and numpy; run scripts/setup.sh --with-hdf5 first" >&2
    exit 2
fi
start=$(date +%s)
cargo test --release -p dist-io --features hdf5
cargo test --release -p redist-cli --features hdf5 --test cli hdf5::
echo "test-hdf5: passed in $(($(date +%s) - start)) s"
