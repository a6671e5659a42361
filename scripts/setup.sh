#!/usr/bin/env bash
# Idempotent set-up of ndcyclic's system prerequisites on Debian/Ubuntu:
# MPICH (runtime + headers), libclang (bindgen for rsmpi), pkg-config,
# NumPy for Debian's python3 (the tests check that numpy.load reads the
# files dist-io writes, and that dist-io reads numpy.save's);
# with --with-openmpi also Open MPI (libopenmpi-dev, openmpi-bin), next to
# MPICH, for scripts/test-openmpi.sh; with --with-scalapack also ScaLAPACK
# built on MPICH (libscalapack-mpich-dev), for the `scalapack` feature and
# scripts/test-scalapack.sh, and ScaLAPACK's own PBLAS testers
# (scalapack-mpi-test), which scripts/test-dropin.sh runs on the drop-in;
# with --with-hdf5 also parallel HDF5 built on MPICH (libhdf5-mpich-dev) and
# h5py, for dist-io's `hdf5` feature and scripts/test-hdf5.sh.
#
# Pins the MPI alternatives (mpirun, mpicc and the headers/libmpi.so/mpi.pc
# group) to MPICH in *manual* mode. Installing Open MPI (priority 50 against
# MPICH's 40; some packages such as libscalapack-mpich-dev pull it in) flips
# alternatives left in auto mode; pinned manually before and after every
# installation, they never point at Open MPI, not even for the seconds the
# installation takes (other builds on the machine run `mpicc` and `mpirun`).
# Takes a second or two when everything is already installed.
set -euo pipefail

with_openmpi=0
with_scalapack=0
with_hdf5=0
usage="usage: $0 [--with-openmpi] [--with-scalapack] [--with-hdf5]"
for arg in "$@"; do
    case $arg in
        --with-openmpi) with_openmpi=1 ;;
        --with-scalapack) with_scalapack=1 ;;
        --with-hdf5) with_hdf5=1 ;;
        -h | --help)
            echo "$usage"
            exit 0
            ;;
        *)
            echo "setup: unknown argument: $arg ($usage)" >&2
            exit 2
            ;;
    esac
done

packages=(mpich libmpich-dev libclang-dev clang pkg-config python3-numpy)
[ "$with_openmpi" -eq 0 ] || packages+=(libopenmpi-dev openmpi-bin)
[ "$with_scalapack" -eq 0 ] || packages+=(libscalapack-mpich-dev scalapack-mpi-test)
[ "$with_hdf5" -eq 0 ] || packages+=(libhdf5-mpich-dev python3-h5py)

log() { printf 'setup: %s\n' "$*"; }

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
        log "not root and no sudo; cannot install: ${missing[*]:-nothing}"
        [ ${#missing[@]} -eq 0 ] || exit 1
    fi
fi

# Pin an alternative to MPICH in manual mode (no-op when already so). In auto
# mode an alternative follows the highest priority, so a later installation
# of Open MPI would flip it even when it points at MPICH today.
pin() {
    local name=$1 target=$2
    if [ -e "$target" ] && update-alternatives --query "$name" >/dev/null 2>&1; then
        local current status
        current=$(update-alternatives --query "$name" | awk '/^Value:/{print $2}')
        status=$(update-alternatives --query "$name" | awk '/^Status:/{print $2}')
        if [ "$current" != "$target" ] || [ "$status" != "manual" ]; then
            $SUDO update-alternatives --set "$name" "$target" >/dev/null
            log "pinned alternative $name -> $target (was $current, $status)"
        else
            log "alternative $name already pinned -> $target"
        fi
    fi
}
# The headers, libmpi.so and mpi.pc group is named after the multiarch triplet.
triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -dumpmachine 2>/dev/null || true)
pin_all() {
    pin mpirun /usr/bin/mpirun.mpich
    pin mpi /usr/bin/mpicc.mpich
    [ -z "$triplet" ] || pin "mpi-$triplet" "/usr/include/$triplet/mpich"
}

if [ ${#missing[@]} -gt 0 ]; then
    pin_all # before: alternatives that exist already stay on MPICH throughout
    log "installing: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    log "installed: ${missing[*]}"
else
    log "packages already present: ${packages[*]}"
fi
pin_all # after: alternatives the installation created

if ! command -v mpirun >/dev/null 2>&1; then
    log "error: mpirun not found after installation"
    exit 1
fi
# Read the whole output first: with pipefail, `grep -q` closing the pipe
# early makes mpirun die of SIGPIPE and the check fail at random.
mpirun_version=$(mpirun --version 2>&1 || true)
if ! grep -qi "hydra\|mpich" <<<"$mpirun_version"; then
    log "warning: mpirun is not MPICH's launcher: $(readlink -f "$(command -v mpirun)")"
fi
if [ "$with_openmpi" -eq 1 ]; then
    for f in /usr/bin/mpicc.openmpi /usr/bin/mpirun.openmpi; do
        [ -x "$f" ] || { log "error: $f missing after installing Open MPI"; exit 1; }
    done
    ompi_version=$(/usr/bin/mpirun.openmpi --version 2>&1 || true)
    log "Open MPI: $(head -n 1 <<<"$ompi_version")"
fi
if [ "$with_scalapack" -eq 1 ]; then
    lib=$(ls /usr/lib/*/libscalapack-mpich.so 2>/dev/null | head -n 1 || true)
    [ -n "$lib" ] || { log "error: libscalapack-mpich.so missing after installing ScaLAPACK"; exit 1; }
    log "ScaLAPACK: $lib"
fi
if [ "$with_hdf5" -eq 1 ]; then
    dir=/usr/lib/$triplet/hdf5/mpich
    [ -e "$dir/libhdf5.so" ] || { log "error: $dir/libhdf5.so missing after installing parallel HDF5"; exit 1; }
    log "parallel HDF5: $dir (HDF5_DIR for the hdf5 feature)"
fi
if ! /usr/bin/python3 -c 'import numpy' >/dev/null 2>&1; then
    log "error: numpy does not import in /usr/bin/python3 after installing python3-numpy"
    exit 1
fi
if ! command -v cargo >/dev/null 2>&1; then
    log "warning: cargo not found on PATH; install Rust (https://rustup.rs) before building"
fi
log "ready: $(head -n 1 <<<"$mpirun_version")"
