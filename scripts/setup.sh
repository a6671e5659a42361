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
# h5py, for dist-io's `hdf5` feature and scripts/test-hdf5.sh;
# with --with-python also the Python package (python/) in a virtual
# environment .venv at the repository's root, for scripts/test-python.sh:
# Debian's python3-venv, python3-dev and libfftw3-dev; a venv made by
# Debian's /usr/bin/python3 (not a pyenv python on PATH); maturin, numpy,
# pytest and mypy (its stubtest) from PyPI, and h5py where parallel HDF5 is
# installed; mpi4py built from source against MPICH (never a wheel
# that brings its own MPI); mpi4py-fft (built against FFTW, for a
# benchmark: a warning, not a failure, when it cannot be built), each at
# the version python/constraints.txt pins; then the
# extension (with HDF5 where parallel HDF5 on MPICH is installed), rebuilt on every run (`maturin develop --release`, incremental,
# into the workspace's target/ directory, whose dependencies built with the
# same features, mpi-sys among them, it shares). Checks that mpi4py and the
# extension load the same libmpi (MPICH) and that `import ndcyclic` works,
# alone and under `mpirun -n 2`.
#
# Pins the MPI alternatives (mpirun, mpicc and the headers/libmpi.so/mpi.pc
# group) to MPICH in *manual* mode. Installing Open MPI (priority 50 against
# MPICH's 40; some packages such as libscalapack-mpich-dev pull it in) flips
# alternatives left in auto mode; pinned manually before and after every
# installation, they never point at Open MPI, not even for the seconds the
# installation takes (other builds on the machine run `mpicc` and `mpirun`).
# Takes a second or two when everything is already installed (with
# --with-python a few more: the extension's incremental rebuild and the
# checks).
set -euo pipefail

with_openmpi=0
with_scalapack=0
with_hdf5=0
with_python=0
usage="usage: $0 [--with-openmpi] [--with-scalapack] [--with-hdf5] [--with-python]"
for arg in "$@"; do
    case $arg in
        --with-openmpi) with_openmpi=1 ;;
        --with-scalapack) with_scalapack=1 ;;
        --with-hdf5) with_hdf5=1 ;;
        --with-python) with_python=1 ;;
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
[ "$with_python" -eq 0 ] || packages+=(python3-venv python3-dev libfftw3-dev)

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

# The libmpi files an ELF file loads, resolved (one a line, sorted).
mpi_libs() {
    { ldd "$1" 2>/dev/null || true; } | awk '/libmpi/ && $3 ~ /^\// {print $3}' | xargs -r readlink -f | sort -u
}

# --with-python: the virtual environment .venv, its packages and the
# extension built from python/ (see the header).
setup_python() {
    local root venv py pins hdf5
    root=$(cd "$(dirname "$0")/.." && pwd)
    venv=$root/.venv
    py=$venv/bin/python
    # Every package at the version python/constraints.txt pins.
    pins=$root/python/constraints.txt
    # Parallel HDF5 on MPICH present (--with-hdf5, or installed before):
    # the extension is built with HDF5 and the tests get h5py.
    hdf5=0
    [ ! -e "/usr/lib/$triplet/hdf5/mpich/libhdf5.so" ] || hdf5=1
    if ! command -v cargo >/dev/null 2>&1; then
        log "error: cargo not found on PATH; the Python extension needs Rust"
        exit 1
    fi

    # Debian's python3, whose headers (python3-dev) the source builds use.
    local make=0
    if [ ! -e "$venv" ]; then
        log "creating $venv with /usr/bin/python3 ($(/usr/bin/python3 --version 2>&1))"
        make=1
    elif ! "$py" -c '' >/dev/null 2>&1; then
        log "recreating $venv: its python does not run (Debian's python3 upgraded?)"
        make=1
    fi
    if [ "$make" -eq 1 ]; then
        /usr/bin/python3 -m venv --clear "$venv"
        # Debian's pip 23.0 builds mpi4py again for every new venv
        # (--no-binary bypasses its wheel cache); a newer pip reuses the wheel.
        "$py" -m pip install -q -c "$pins" --upgrade pip
    fi
    local base
    base=$("$py" -c 'import sys; print(sys.base_prefix)')
    if [ "$base" != /usr ]; then
        log "error: $venv was made by the python under $base, not by Debian's /usr/bin/python3;" \
            "remove it (rm -rf $venv) and run again"
        exit 1
    fi

    # The modules of those named that do not import (a quick look, no pip).
    missing_modules() {
        "$py" - "$@" <<'EOF'
import importlib.util, sys
print(" ".join(m for m in sys.argv[1:] if importlib.util.find_spec(m) is None))
EOF
    }
    # The build and test tools at their pinned versions (pip returns at
    # once when they are there already).
    local tools=(maturin numpy pytest mypy)
    [ "$hdf5" -eq 0 ] || tools+=(h5py)
    local need
    need=$(missing_modules "${tools[@]}")
    [ -z "$need" ] || log "pip installing: $need"
    "$py" -m pip install -q -c "$pins" "${tools[@]}"

    # mpi4py built from source against MPICH, never a wheel with an MPI of
    # its own. MPICC is set for pip alone: cargo below must see the
    # environment the workspace's builds see, or it would rebuild mpi-sys.
    if [ -n "$(missing_modules mpi4py)" ]; then
        log "pip installing mpi4py, built from source with mpicc.mpich (2 min; pip caches the wheel)"
    fi
    MPICC=mpicc.mpich "$py" -m pip install -q -c "$pins" --no-binary=mpi4py mpi4py
    # It imports and loads MPICH's libmpich (pip's wheel cache may hold an
    # mpi4py built against another MPI: then it is built again, uncached).
    local mpi4py_so mpi4py_libs
    mpi4py_on_mpich() {
        mpi4py_so=$("$py" -c 'import mpi4py.MPI as m; print(m.__file__)' 2>/dev/null) &&
            mpi4py_libs=$(mpi_libs "$mpi4py_so") && grep -q '/libmpich\.so' <<<"$mpi4py_libs"
    }
    if ! mpi4py_on_mpich; then
        log "mpi4py does not import or does not load MPICH's libmpich; building it again without pip's cache"
        MPICC=mpicc.mpich "$py" -m pip install -q -c "$pins" --no-binary=mpi4py --no-cache-dir \
            --force-reinstall --no-deps mpi4py
        if ! mpi4py_on_mpich; then
            if [ -z "$mpi4py_so" ]; then
                log "error: mpi4py does not import: $("$py" -c 'import mpi4py.MPI' 2>&1 | tail -n 1)"
            else
                log "error: $mpi4py_so loads ${mpi4py_libs:-no libmpi}, not MPICH's libmpich"
            fi
            exit 1
        fi
    fi
    local mpi_version
    mpi_version=$("$py" -c 'from mpi4py import MPI; print(*MPI.Get_library_version().split()[:3])')
    if ! grep -q MPICH <<<"$mpi_version"; then
        log "error: mpi4py's MPI library is not MPICH: $mpi_version"
        exit 1
    fi

    # mpi4py-fft (built against FFTW) serves a benchmark only: a warning when
    # it cannot be installed.
    if [ -n "$(missing_modules mpi4py_fft)" ]; then
        log "pip installing mpi4py-fft"
        local fft_log
        fft_log=$(mktemp)
        if ! MPICC=mpicc.mpich "$py" -m pip install -q -c "$pins" --no-binary=mpi4py mpi4py-fft >"$fft_log" 2>&1; then
            log "warning: mpi4py-fft could not be installed (the benchmark comparing with it cannot run):"
            tail -n 20 "$fft_log" | sed 's/^/setup:   /'
        fi
        rm -f "$fft_log"
    fi

    # The extension, built again on every run (cargo is incremental) into the
    # workspace's target directory. It shares the dependencies built with the
    # same features (mpi-sys's bindgen build, rayon, ...); the path crates
    # are built apart (the workspace turns on syn's `full` feature, so the
    # derive macros, thiserror's and bytemuck's, and all built on them
    # differ), and neither build makes the other rebuild.
    # Without patchelf (not installed on purpose: with it, `maturin build`
    # would copy libmpich into a wheel) maturin warns that it cannot add
    # the link-search directory, a system one, to the extension's RUNPATH.
    local features=()
    [ "$hdf5" -eq 0 ] || features=(--features hdf5)
    log "building the extension: maturin develop --release -m python/Cargo.toml ${features[*]}"
    if ! (cd "$root" && VIRTUAL_ENV=$venv CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target} \
        "$venv/bin/maturin" develop --release -m python/Cargo.toml "${features[@]}" 2>&1) |
        { grep --line-buffered -v 'Failed to set rpath.*patchelf' || true; }; then
        log "error: building the Python extension failed"
        exit 1
    fi

    # The extension and mpi4py load the same libmpi.
    local ext_so ext_libs
    ext_so=$("$py" - <<'EOF'
import glob, importlib.util, os
spec = importlib.util.find_spec("ndcyclic")  # finds the package, imports nothing
dirs = list(spec.submodule_search_locations or []) if spec else []
print(next(iter(sorted(f for d in dirs for f in glob.glob(os.path.join(d, "_ndcyclic*.so")))), ""))
EOF
    )
    [ -n "$ext_so" ] || { log "error: no _ndcyclic*.so in the ndcyclic package after building it"; exit 1; }
    ext_libs=$(mpi_libs "$ext_so")
    if [ -z "$ext_libs" ]; then
        if nm -D --undefined-only "$ext_so" 2>/dev/null | grep -q ' P\?MPI_'; then
            log "error: $ext_so calls MPI but loads no libmpi"
            exit 1
        fi
        log "warning: $ext_so calls no MPI function (yet)"
    elif [ "$ext_libs" != "$mpi4py_libs" ]; then
        log "error: the extension and mpi4py load different MPI libraries:"
        log "  $ext_so: $(paste -sd ' ' <<<"$ext_libs")"
        log "  $mpi4py_so: $(paste -sd ' ' <<<"$mpi4py_libs")"
        exit 1
    else
        log "the extension and mpi4py both load $(paste -sd ' ' <<<"$ext_libs")"
    fi

    # It imports, alone and under MPICH's launcher.
    local out
    if ! out=$(cd "$root" && "$py" -c 'import ndcyclic' 2>&1); then
        log "error: $py -c 'import ndcyclic' failed:"
        sed 's/^/setup:   /' <<<"$out"
        exit 1
    fi
    if ! out=$(cd "$root" && timeout -k 5 60 mpirun -n 2 "$py" -c 'import ndcyclic' 2>&1); then
        log "error: mpirun -n 2 $py -c 'import ndcyclic' failed:"
        sed 's/^/setup:   /' <<<"$out"
        exit 1
    fi
    # The build has HDF5 where it should (the package's own word for it).
    local has_hdf5
    has_hdf5=$(cd "$root" && "$py" -c 'import ndcyclic; print(int(ndcyclic.build_info()["hdf5"]))')
    if [ "$has_hdf5" != "$hdf5" ]; then
        log "error: the extension was built ${features[*]:-without HDF5}, but ndcyclic.build_info()['hdf5'] is $has_hdf5"
        exit 1
    fi
    log "Python: $venv ($("$py" --version 2>&1), $mpi_version$([ "$hdf5" -eq 0 ] || echo ", with HDF5")); ndcyclic imports, also under mpirun -n 2"
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
[ "$with_python" -eq 0 ] || setup_python
log "ready: $(head -n 1 <<<"$mpirun_version")"
