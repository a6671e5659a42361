#!/usr/bin/env bash
# An mpirun that places ranks on emulated nodes, for tools that launch with
# mpirun's `-n K PROGRAM ARGS...` (the MPI test harness: NDCYCLIC_MPIRUN).
#
#   scripts/cluster-mpirun.sh [--per-node P] [--rate RATE] [--mpi mpich|openmpi]
#                             -n K PROGRAM ARGS...
#
# Runs PROGRAM on K ranks across ceil(K/P) emulated nodes through
# scripts/cluster.sh: P ranks on every node but the last, which takes the
# rest (P = 2 by default: 4 ranks on 2 nodes of 2, 5 ranks on nodes of 2, 2
# and 1). --rate and --mpi are cluster.sh's. Exit status: PROGRAM's, or
# cluster.sh's own (2 for usage errors, 3 when no cluster can be built).
set -euo pipefail

usage() {
  sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

per_node=2 ranks="" pass=()
while [ $# -gt 0 ]; do
  case "$1" in
    --per-node) per_node="${2:-}"; shift 2 || usage ;;
    --rate|--mpi) pass+=("$1" "${2:-}"); shift 2 || usage ;;
    -n|-np) ranks="${2:-}"; shift 2 || usage; break ;;
    -h|--help) usage ;;
    *) echo "cluster-mpirun.sh: unknown argument '$1' (expected --per-node, --rate, --mpi, then -n K PROGRAM ARGS...)" >&2; exit 2 ;;
  esac
done
[[ "$per_node" =~ ^[1-9][0-9]*$ ]] || { echo "cluster-mpirun.sh: --per-node must be a whole number from 1 up, got '$per_node'" >&2; exit 2; }
[[ "$ranks" =~ ^[1-9][0-9]*$ ]] || { echo "cluster-mpirun.sh: -n must be a whole number from 1 up, got '$ranks'" >&2; exit 2; }
[ $# -gt 0 ] || { echo "cluster-mpirun.sh: no program given after -n $ranks" >&2; exit 2; }

nodes=$(((ranks + per_node - 1) / per_node))
counts=""
for i in $(seq 1 "$nodes"); do
  if [ "$i" -lt "$nodes" ]; then k=$per_node; else k=$((ranks - per_node * (nodes - 1))); fi
  counts+="${counts:+,}$k"
done
[ "$nodes" -gt 1 ] || counts="$ranks"
exec "$(dirname "$0")/cluster.sh" --nodes "$nodes" --ranks-per-node "$counts" \
  ${pass[@]+"${pass[@]}"} -- "$@"
