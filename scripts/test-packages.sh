#!/usr/bin/env bash
# Checks that the library crates can be published to crates.io: runs
# `cargo publish --dry-run` for the seven of them together — redist-plan,
# mpi-extras, procgrid, dist-array, redist, dist-io and the facade ndcyclic.
# Cargo packages each crate as crates.io would receive it, checks its
# manifest (every dependency with a version, the README and every file it
# names in the package), builds each from its packaged sources against the
# others' packaged versions (a local overlay registry under
# target/package/), and uploads nothing. The list must be exactly the
# workspace's publishable packages: every other member says
# `publish = false`.
#
#   scripts/test-packages.sh
#
# Needs the registry (index.crates.io) for the dependencies' index.
# Uncommitted changes are packaged as they are (`--allow-dirty`). Any
# failure exits non-zero.
set -euo pipefail
cd "$(dirname "$0")/.."

# Dependencies before the crates that use them (the order cargo publishes in).
crates=(redist-plan mpi-extras procgrid dist-array redist dist-io ndcyclic)
selected=()
for c in "${crates[@]}"; do selected+=(-p "$c"); done

log() { echo "test-packages: $*"; }
start=$(date +%s)

# The workspace's publishable packages (`publish` unset), as NAME VERSION lines.
packages=$(cargo metadata --no-deps --format-version 1 | python3 -c '
import json, sys
for p in json.load(sys.stdin)["packages"]:
    if p["publish"] != []:
        print(p["name"], p["version"])')
listed=$(printf '%s\n' "${crates[@]}" | sort)
if [ "$(cut -d' ' -f1 <<< "$packages" | sort)" != "$listed" ]; then
    log "the workspace's publishable packages differ from this script's list (${crates[*]}):" >&2
    sed 's/^/test-packages:   /' <<< "$packages" >&2
    log "(a member that is not published says publish = false in its Cargo.toml)" >&2
    exit 1
fi

# --- 1. cargo publish --dry-run ---------------------------------------------
t=$(date +%s)
log "cargo publish --dry-run --allow-dirty ${selected[*]}"
cargo publish --dry-run --allow-dirty "${selected[@]}"
publish_s=$(($(date +%s) - t))

log "passed in $(($(date +%s) - start)) s"
