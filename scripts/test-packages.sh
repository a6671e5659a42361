#!/usr/bin/env bash
# Checks that the library crates can be published to crates.io, and that
# what they hold builds and runs as a user's project uses it:
#
#   1. `cargo publish --dry-run` of the seven together — redist-plan,
#      mpi-extras, procgrid, dist-array, redist, dist-io and the facade
#      ndcyclic: cargo packages each crate as crates.io would receive it,
#      checks its manifest (every dependency with a version, the README and
#      every file it names in the package), builds each from its packaged
#      sources against the others' packaged versions (a local overlay
#      registry under target/package/), and uploads nothing. The seven must
#      be exactly the workspace's publishable packages: every other member
#      says `publish = false`;
#   2. `cargo package --no-verify` of the same seven, each .crate file
#      unpacked into target/package-check/crates/;
#   3. a throwaway project in a temporary folder outside the repository,
#      depending on `ndcyclic = "0.1"` with [patch.crates-io] pointing each
#      crate at its unpacked package, whose src/main.rs is the README's
#      front-page program (the ```rust block after "A complete program",
#      taken from README.md): built with --release, then run under
#      `mpirun -n 3` with a timeout.
#
#   scripts/test-packages.sh
#
# Environment: CARGO_TARGET_DIR (the throwaway builds into it too, see
# step 3), NDCYCLIC_PACKAGES_LATEST=1 (resolve the throwaway's dependencies
# afresh, as a new project would, instead of taking the versions the
# packaged ndcyclic's Cargo.lock holds), NDCYCLIC_MPIRUN (launcher, default
# mpirun), NDCYCLIC_MPI_TIMEOUT (seconds for the run, default 120).
# Needs the registry (index.crates.io). Uncommitted changes are packaged as
# they are (`--allow-dirty`). Any failure exits non-zero.
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

# --- 2. The packages, unpacked ----------------------------------------------
# `cargo package --no-verify` leaves each crate's .crate file, the tarball
# crates.io would serve, at $target/package/NAME-VERSION.crate (the dry run
# keeps its own in a temporary folder). Each is unpacked into
# $target/package-check/crates/, and replaced there only when its content
# changed: cargo packs every file with one fixed time, so a replaced crate
# gets fresh times (and is rebuilt), an unchanged one keeps its build. Two
# files that change with every commit and take no part in a build are left
# out of the comparison: .cargo_vcs_info.json (the commit) and Cargo.lock
# (the checksums of the other packages, which hold that file), taken anew.
t=$(date +%s)
log "cargo package --no-verify --allow-dirty ${selected[*]}"
cargo package --no-verify --allow-dirty "${selected[@]}"
target=${CARGO_TARGET_DIR:-$PWD/target}
case $target in /*) ;; *) target=$PWD/$target ;; esac
unpacked=$target/package-check/crates
fresh=$target/package-check/fresh
mkdir -p "$unpacked"
patches=""
while read -r name version; do
    rm -rf "$fresh"
    mkdir -p "$fresh"
    tar -xzf "$target/package/$name-$version.crate" -C "$fresh"
    if ! diff -rq -x .cargo_vcs_info.json -x Cargo.lock "$fresh/$name-$version" "$unpacked/$name-$version" > /dev/null 2>&1; then
        rm -rf "${unpacked:?}/$name-$version"
        mv "$fresh/$name-$version" "$unpacked/"
        find "$unpacked/$name-$version" -exec touch {} +
    else
        for file in Cargo.lock .cargo_vcs_info.json; do
            [ ! -e "$fresh/$name-$version/$file" ] || cp "$fresh/$name-$version/$file" "$unpacked/$name-$version/"
        done
    fi
    patches+="$name = { path = \"$unpacked/$name-$version\" }"$'\n'
    [ "$name" != ndcyclic ] || facade=$version
done <<< "$packages"
rm -rf "$fresh"
package_s=$(($(date +%s) - t))

# --- 3. A user's project ----------------------------------------------------
# Outside the repository: `ndcyclic = "0.1"` from crates.io, each crate
# patched to its unpacked package, and as src/main.rs the README's program
# (the ```rust block after "A complete program", in its own words). Nothing
# else of the repository is read: the lock file is the one the packaged
# ndcyclic ships (the versions the workspace tested), unless
# NDCYCLIC_PACKAGES_LATEST=1 resolves the newest, as a new project would.
# It builds into the workspace's target directory with the workspace's
# release profile, so that the dependencies `cargo test --workspace
# --release` built are reused where their features match.
t=$(date +%s)
project=$(mktemp -d "${TMPDIR:-/tmp}/ndcyclic-package-check.XXXXXX")
bin=ndcyclic-package-check
cleanup() {
    rm -rf "$project"
    # The throwaway's own build (a new project folder gives a new one).
    rm -rf "$target/release/deps/${bin//-/_}"-* "$target/release/.fingerprint/$bin"-* \
        "$target/release/$bin" "$target/release/$bin.d"
}
trap cleanup EXIT
mkdir -p "$project/src"
awk '/A complete program/ { seen = 1 }
     seen && /^```rust$/ { inside = 1; next }
     inside && /^```$/ { exit }
     inside { print }' README.md > "$project/src/main.rs"
if ! grep -q '^fn main' "$project/src/main.rs"; then
    log 'README.md: no ```rust program after "A complete program"' >&2
    exit 1
fi
requirement=${facade%.*}
# The dependency line the READMEs show is the one this project uses.
for page in README.md README-crate.md; do
    if ! grep -qx "ndcyclic = \"$requirement\"" "$page"; then
        log "$page does not show the line ndcyclic = \"$requirement\" (version $facade)" >&2
        exit 1
    fi
done
cat > "$project/Cargo.toml" << EOF
[package]
name = "$bin"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
ndcyclic = "$requirement"

[patch.crates-io]
$patches
# As the workspace's (its Cargo.toml), so that its release builds are reused.
[profile.release]
debug = 1

[workspace]
EOF
[ "${NDCYCLIC_PACKAGES_LATEST:-}" = 1 ] || cp "$unpacked/ndcyclic-$facade/Cargo.lock" "$project/"
log "a project depending on ndcyclic = \"$requirement\" in $project: cargo build --release"
(cd "$project" && CARGO_TARGET_DIR=$target cargo build --release)
build_s=$(($(date +%s) - t))

t=$(date +%s)
mpirun=${NDCYCLIC_MPIRUN:-mpirun}
limit=${NDCYCLIC_MPI_TIMEOUT:-120}
log "$mpirun -n 3 $bin (at most $limit s)"
status=0
timeout -k 10 "$limit" "$mpirun" -n 3 "$target/release/$bin" || status=$?
if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    log "the README's program did not end within $limit s (NDCYCLIC_MPI_TIMEOUT); killed" >&2
    exit 1
elif [ "$status" -ne 0 ]; then
    log "the README's program failed on 3 ranks (exit status $status)" >&2
    exit 1
fi
run_s=$(($(date +%s) - t))

log "passed in $(($(date +%s) - start)) s (publish --dry-run $publish_s s, package $package_s s, build $build_s s, run $run_s s)"
