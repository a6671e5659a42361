#!/usr/bin/env bash
# Idempotent set-up of ndcyclic's system prerequisites on Debian/Ubuntu:
# MPICH (runtime + headers), libclang (bindgen for rsmpi), pkg-config.
# Pins the mpirun/mpicc alternatives to MPICH, since some packages
# (e.g. libscalapack-mpich-dev) pull in Open MPI and flip them.
# Takes a second or two when everything is already installed.
set -euo pipefail

packages=(mpich libmpich-dev libclang-dev clang pkg-config)

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

if [ ${#missing[@]} -gt 0 ]; then
    log "installing: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    log "installed: ${missing[*]}"
else
    log "packages already present: ${packages[*]}"
fi

# Pin the MPI alternatives to MPICH (no-op when already pinned).
pin() {
    local name=$1 target=$2
    if [ -e "$target" ] && update-alternatives --query "$name" >/dev/null 2>&1; then
        local current
        current=$(update-alternatives --query "$name" | awk '/^Value:/{print $2}')
        if [ "$current" != "$target" ]; then
            $SUDO update-alternatives --set "$name" "$target" >/dev/null
            log "pinned alternative $name -> $target (was $current)"
        else
            log "alternative $name already -> $target"
        fi
    fi
}
pin mpirun /usr/bin/mpirun.mpich
pin mpi /usr/bin/mpicc.mpich

if ! command -v mpirun >/dev/null 2>&1; then
    log "error: mpirun not found after installation"
    exit 1
fi
if ! mpirun --version 2>&1 | grep -qi "hydra\|mpich"; then
    log "warning: mpirun is not MPICH's launcher: $(readlink -f "$(command -v mpirun)")"
fi
if ! command -v cargo >/dev/null 2>&1; then
    log "warning: cargo not found on PATH; install Rust (https://rustup.rs) before building"
fi
log "ready: $(mpirun --version 2>&1 | head -n 1)"
