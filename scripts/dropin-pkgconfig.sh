#!/usr/bin/env bash
# Writes the pkg-config file of libndcyclic_scalapack for the build tree
# (default) or for PREFIX after `install -D`:
#   scripts/dropin-pkgconfig.sh            -> target/release/pkgconfig/ndcyclic_scalapack.pc
#   scripts/dropin-pkgconfig.sh /opt/ndcyclic  (libdir PREFIX/lib, includedir PREFIX/include)
# then: PKG_CONFIG_PATH=target/release/pkgconfig pkg-config --cflags --libs ndcyclic_scalapack
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
if [ $# -gt 1 ]; then
    echo "usage: $0 [PREFIX]" >&2
    exit 2
fi
if [ $# -eq 1 ]; then
    libdir="$1/lib" includedir="$1/include" out="$1/lib/pkgconfig"
else
    libdir="$root/target/release" includedir="$root/crates/scalapack-dropin/include"
    out="$root/target/release/pkgconfig"
fi
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
mkdir -p "$out"
sed -e "s|@LIBDIR@|$libdir|" -e "s|@INCLUDEDIR@|$includedir|" -e "s|@VERSION@|$version|" \
    crates/scalapack-dropin/ndcyclic_scalapack.pc.in > "$out/ndcyclic_scalapack.pc"
echo "wrote $out/ndcyclic_scalapack.pc"
