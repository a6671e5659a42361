#!/usr/bin/env bash
# Runs the Python package's pytest suite (python/tests) under MPICH's
# launcher: `mpirun -n N .venv/bin/python -m pytest -q -x python/tests` for
# N = 1, 2, 3, 4, each launch under a timeout, so that a hang fails instead
# of blocking. Rank 0 reports; python/tests/conftest.py makes the ranks agree
# on every test's outcome and aborts the job when a failing rank would
# leave the others waiting.
#
# Needs the virtual environment with the package built:
# `scripts/setup.sh --with-python` (which also rebuilds the extension after
# a change of python/src).
#
#   scripts/test-python.sh
#   NDCYCLIC_MPI_RANKS=1,2 scripts/test-python.sh      # fewer launches
#   scripts/test-python.sh -k redistribution           # pytest's arguments
#
# First the stub checker (mypy's stubtest: python/ndcyclic/_ndcyclic.pyi
# against the compiled module), and the source archive's manifests (cargo
# reads the workspace inside `maturin sdist`'s archive). Where parallel HDF5 is installed, the HDF5
# tests must run (NDCYCLIC_EXPECT_HDF5=1), not skip.
#
# Environment: NDCYCLIC_MPI_RANKS (default 1,2,3,4), NDCYCLIC_MPI_TIMEOUT
# (seconds per launch, default 300), NDCYCLIC_MPIRUN (launcher, default
# mpirun, pinned to MPICH by setup.sh), NDCYCLIC_PYTEST_AGREE_TIMEOUT (see
# python/tests/conftest.py).
set -euo pipefail
cd "$(dirname "$0")/.."

py=.venv/bin/python
if ! out=$("$py" -c 'import ndcyclic' 2>&1); then
    echo "test-python: $py cannot import ndcyclic; run scripts/setup.sh --with-python first" >&2
    [ -z "$out" ] || sed 's/^/test-python:   /' <<<"$out" >&2
    exit 2
fi
so=$(ls python/ndcyclic/_ndcyclic*.so 2>/dev/null | head -n 1 || true)
if [ -n "$so" ] && [ -n "$(find python/src python/Cargo.toml crates/*/src -newer "$so" -print -quit)" ]; then
    echo "test-python: warning: sources changed since the extension was built; scripts/setup.sh --with-python rebuilds it" >&2
fi
# Where parallel HDF5 is installed the extension must have been built with
# it (setup.sh does): the HDF5 tests then fail instead of skipping.
triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -dumpmachine 2>/dev/null || true)
if [ -e "/usr/lib/$triplet/hdf5/mpich/libhdf5.so" ]; then
    export NDCYCLIC_EXPECT_HDF5=1
fi
# The type stubs against the extension: every class, function, parameter
# and default of ndcyclic/_ndcyclic.pyi as the compiled module has them.
echo "test-python: stubtest ndcyclic._ndcyclic"
if ! (cd python && "../$py" -m mypy.stubtest ndcyclic._ndcyclic); then
    echo "test-python: the stubs (python/ndcyclic/_ndcyclic.pyi) do not match the extension" >&2
    exit 1
fi
# The source archive pip builds elsewhere (`maturin sdist`) holds every
# manifest cargo needs: cargo reads its workspace as pip's build will.
echo "test-python: maturin sdist, then cargo metadata inside it"
sdist=$(mktemp -d)
trap 'rm -rf "$sdist"' EXIT
if ! .venv/bin/maturin sdist -m python/Cargo.toml -o "$sdist" >"$sdist/log" 2>&1 ||
    ! tar -xzf "$sdist"/ndcyclic-*.tar.gz -C "$sdist" ||
    ! (cd "$sdist"/ndcyclic-*/python && cargo metadata -q --format-version 1 --locked >/dev/null 2>>"$sdist/log"); then
    echo "test-python: the source archive does not build:" >&2
    sed 's/^/test-python:   /' "$sdist/log" >&2
    exit 1
fi
# MPICH's waiting ranks yield their core instead of spinning on it, as in
# the MPI test harness (scripts/yield-when-idle.sh; NDCYCLIC_MPI_IDLE=spin: not).
idle=$(scripts/yield-when-idle.sh)
[ -z "$idle" ] || export LD_PRELOAD=${LD_PRELOAD:+$LD_PRELOAD:}$idle
ranks=${NDCYCLIC_MPI_RANKS:-1,2,3,4}
limit=${NDCYCLIC_MPI_TIMEOUT:-300}
mpirun=${NDCYCLIC_MPIRUN:-mpirun}

start=$(date +%s)
for n in ${ranks//,/ }; do
    echo "test-python: $n rank(s)"
    status=0
    # -p no:cacheprovider: the ranks would all write .pytest_cache at once.
    timeout -k 10 "$limit" "$mpirun" -n "$n" "$py" -m pytest -q -x -p no:cacheprovider python/tests "$@" || status=$?
    if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
        echo "test-python: $n rank(s): no end within $limit s (NDCYCLIC_MPI_TIMEOUT); killed" >&2
        exit 1
    elif [ "$status" -ne 0 ]; then
        echo "test-python: $n rank(s): failed (exit status $status)" >&2
        exit 1
    fi
done
# A checkpoint saved on 4 ranks and loaded on 3 (python/examples/checkpoint.py).
ck=$(mktemp -u /dev/shm/ndcyclic-ck-XXXXXX.npy)
trap 'rm -f "$ck"; rm -rf "$sdist"' EXIT
for step in "4 save" "3 load"; do
    set -- $step
    echo "test-python: checkpoint: $2 on $1 ranks"
    if ! timeout -k 10 "$limit" "$mpirun" -n "$1" "$py" python/examples/checkpoint.py "$2" "$ck"; then
        echo "test-python: the checkpoint example failed to $2 on $1 ranks" >&2
        exit 1
    fi
done
echo "test-python: passed in $(($(date +%s) - start)) s"
