#!/usr/bin/env bash
# Runs an MPI program across emulated nodes on this one machine.
#
#   scripts/cluster.sh --nodes N --ranks-per-node K [--rate RATE] [--delay DELAY]
#                      [--mpi mpich|openmpi] -- PROGRAM ARGS...
#
# Each node is a network namespace of its own with its own host name (a UTS
# namespace entered for every process started on it), joined to the others
# by a veth pair on a bridge that lives in a namespace of its own too:
# addresses exist only inside these namespaces and nothing leaves the
# machine. PROGRAM runs on N*K ranks, K per node, ranks numbered node by
# node (as a cluster's launcher places them). The MPI's launcher starts the
# ranks of each node through a stand-in for ssh that enters the node's
# namespaces (MPICH: -launcher ssh -launcher-exec; Open MPI: plm_rsh_agent).
#
#   --ranks-per-node K, or K1,K2,...,KN for nodes of different sizes
#   --rate RATE    limit every node's link, both ways, with tc's tbf (e.g.
#                  10gbit, 1gbit, 500mbit)
#   --delay DELAY  add a one-way delay (e.g. 50us) with tc's netem: refused
#                  where the kernel has no netem
#   --mpi MPI      mpich (default) or openmpi: whose launcher starts the ranks;
#                  PROGRAM must be built against the same MPI
#
# Traffic between nodes really crosses the links: MPICH's UCX is told to use
# TCP (UCX_TLS=tcp,self; within a node MPICH uses its own shared memory),
# Open MPI uses the tcp BTL between nodes (vader within one). The nodes share
# this machine's cores: with more ranks than cores the ranks are told
# NDCYCLIC_OVERSUBSCRIBED=1 (waits test and yield). Everything the
# script made is removed when it ends, on failure and on Ctrl-C. Needs root
# (network namespaces).
#
# Exit status: PROGRAM's; 2 for usage errors; 3 when the emulated cluster
# cannot be built (not root, no namespaces, no netem for --delay).
set -euo pipefail

usage() {
  sed -n '2,33p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

die() {
  echo "cluster.sh: $1" >&2
  exit "${2:-3}"
}

nodes="" per_node="" rate="" delay="" mpi="mpich"
while [ $# -gt 0 ]; do
  case "$1" in
    --nodes) nodes="${2:-}"; shift 2 || usage ;;
    --ranks-per-node) per_node="${2:-}"; shift 2 || usage ;;
    --rate) rate="${2:-}"; shift 2 || usage ;;
    --delay) delay="${2:-}"; shift 2 || usage ;;
    --mpi) mpi="${2:-}"; shift 2 || usage ;;
    -h|--help) usage ;;
    --) shift; break ;;
    *) echo "cluster.sh: unknown argument '$1' (expected --nodes, --ranks-per-node, --rate, --delay, --mpi, then -- PROGRAM ARGS...)" >&2; exit 2 ;;
  esac
done
[ $# -gt 0 ] || die "no program given: expected '-- PROGRAM ARGS...'" 2
[[ "$nodes" =~ ^[1-9][0-9]*$ ]] && [ "$nodes" -le 64 ] \
  || die "--nodes must be a whole number from 1 to 64, got '${nodes}'" 2
# Ranks per node: one count for every node, or one per node.
if [[ "$per_node" =~ ^[1-9][0-9]*$ ]]; then
  counts=()
  for _ in $(seq 1 "$nodes"); do counts+=("$per_node"); done
elif [[ "$per_node" =~ ^[1-9][0-9]*(,[1-9][0-9]*)+$ ]]; then
  IFS=, read -r -a counts <<< "$per_node"
  [ "${#counts[@]}" -eq "$nodes" ] \
    || die "--ranks-per-node lists ${#counts[@]} counts for $nodes nodes (expected one count, or one per node)" 2
else
  die "--ranks-per-node must be a whole number from 1 up, or one per node joined by commas, got '${per_node}'" 2
fi
case "$mpi" in mpich|openmpi) ;; *) die "--mpi must be mpich or openmpi, got '$mpi'" 2 ;; esac
if [ -n "$rate" ] && ! [[ "$rate" =~ ^[0-9]+(\.[0-9]+)?([kmgt]?bit|[kmgt]?bps)$ ]]; then
  die "--rate must be a tc rate such as 10gbit or 500mbit, got '$rate'" 2
fi
if [ -n "$delay" ] && ! [[ "$delay" =~ ^[0-9]+(\.[0-9]+)?(us|ms|s)$ ]]; then
  die "--delay must be a time such as 50us or 1ms, got '$delay'" 2
fi

[ "$(id -u)" -eq 0 ] || die "needs root to create network namespaces (run it with sudo)"
for tool in ip tc unshare; do
  command -v "$tool" >/dev/null || die "needs '$tool' (apt-get install iproute2 util-linux)"
done
case "$mpi" in
  mpich) launcher=$(command -v mpiexec.hydra || command -v mpiexec.mpich || true)
         [ -n "$launcher" ] || die "MPICH's mpiexec.hydra not found (apt-get install mpich)" ;;
  openmpi) launcher=$(command -v mpirun.openmpi || true)
           [ -n "$launcher" ] || die "Open MPI's mpirun.openmpi not found (apt-get install openmpi-bin)" ;;
esac

# Names unique to this run, so that runs side by side do not meet.
tag="ndc$$"
switch="${tag}sw"
work=$(mktemp -d "/tmp/${tag}.XXXX")
made_ns=()
made_etc_netns=""
[ -d /etc/netns ] || made_etc_netns=1

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  for ns in "${made_ns[@]}"; do
    local pids
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [ -z "$pids" ] || kill -9 $pids 2>/dev/null || true
    ip netns delete "$ns" 2>/dev/null || true
    rm -rf "/etc/netns/$ns"
  done
  [ -z "$made_etc_netns" ] || rmdir /etc/netns 2>/dev/null || true
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

new_ns() {
  ip netns add "$1" 2>/dev/null || die "cannot create network namespace '$1' (are namespaces available here?)"
  made_ns+=("$1")
  ip -n "$1" link set lo up
}

shape_link() { # namespace device
  if [ -n "$delay" ]; then
    ip netns exec "$1" tc qdisc add dev "$2" root handle 1: netem delay "$delay" 2>/dev/null \
      || die "this kernel has no netem: --delay cannot be emulated (leave it out; --rate works)"
    [ -z "$rate" ] || ip netns exec "$1" tc qdisc add dev "$2" parent 1: handle 2: tbf rate "$rate" burst 1mb latency 5ms
  elif [ -n "$rate" ]; then
    ip netns exec "$1" tc qdisc add dev "$2" root tbf rate "$rate" burst 1mb latency 5ms
  fi
}

new_ns "$switch"
ip -n "$switch" link add br0 type bridge
ip -n "$switch" link set br0 up
hosts="127.0.0.1 localhost"
for i in $(seq 1 "$nodes"); do
  hosts+=$'\n'"10.203.$((i / 250)).$((i % 250 + 1)) n$i"
done
for i in $(seq 1 "$nodes"); do
  ns="${tag}n$i"
  new_ns "$ns"
  ip link add "v${tag}n$i" type veth peer name "p${tag}n$i"
  ip link set "v${tag}n$i" netns "$ns" name eth0
  ip link set "p${tag}n$i" netns "$switch"
  ip -n "$switch" link set "p${tag}n$i" master br0 up
  ip -n "$ns" addr add "10.203.$((i / 250)).$((i % 250 + 1))/16" dev eth0
  ip -n "$ns" link set eth0 up
  shape_link "$ns" eth0
  shape_link "$switch" "p${tag}n$i"
  mkdir -p "/etc/netns/$ns"
  printf '%s\n' "$hosts" > "/etc/netns/$ns/hosts"
done

# The stand-in for ssh: `standin [options] HOST COMMAND...` runs COMMAND in
# HOST's namespaces with HOST as its host name.
standin="$work/on-node"
cat > "$standin" <<EOF
#!/usr/bin/env bash
while [ \$# -gt 0 ]; do
  case "\$1" in
    -o|-p|-l|-i|-F) shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
host="\$1"; shift
exec ip netns exec "${tag}\$host" unshare --uts sh -c 'hostname "\$0"; exec sh -c "\$*"' "\$host" "\$*"
EOF
chmod +x "$standin"

# MPICH 4.0's UCX netmod closes its endpoints in MPI_Finalize by flushing
# each one and waiting, and only then meets the other ranks in a PMI
# barrier: over UCX's TCP transport a flush may need the peer's reply, and a
# peer that has closed its own endpoints already waits in the barrier and
# replies no more, so ranks hang in MPI_Finalize after their work is done
# (later MPICH meets in the barrier first). Ranks get a small library,
# preloaded, whose ucp_disconnect_nb leaves the endpoint open: the barrier
# comes next and ucp_worker_destroy then closes every endpoint without
# waiting. CLUSTER_FINALIZE_FIX=0 runs without it.
finalize_fix=()
if [ "$mpi" = mpich ] && [ "${CLUSTER_FINALIZE_FIX:-1}" != 0 ] \
   && mpichversion 2>/dev/null | grep -q 'Device:.*ucx' \
   && mpichversion 2>/dev/null | grep -Eq 'Version:[[:space:]]+(3\.|4\.0)'; then
  cat > "$work/finalize-fix.c" <<'EOF'
#include <ucp/api/ucp.h>
ucs_status_ptr_t ucp_disconnect_nb(ucp_ep_h ep)
{
    (void)ep;
    return UCS_STATUS_PTR(UCS_OK);
}
EOF
  if cc -shared -fPIC -O2 -o "$work/finalize-fix.so" "$work/finalize-fix.c" 2>"$work/finalize-fix.log"; then
    # After what the caller preloads (the test harness's yield_when_idle.so).
    finalize_fix=(-genv LD_PRELOAD "${LD_PRELOAD:+$LD_PRELOAD:}$work/finalize-fix.so")
  else
    echo "cluster.sh: warning: could not build the MPI_Finalize fix (needs cc and libucx-dev); ranks may hang in MPI_Finalize" >&2
  fi
fi

host_list="" ranks=0
for i in $(seq 1 "$nodes"); do
  host_list+="${host_list:+,}n$i:${counts[$((i - 1))]}"
  ranks=$((ranks + counts[i - 1]))
done

# The nodes share this machine's cores, which each node's launcher counts
# as its own: where the ranks outnumber the cores, tell ndcyclic so (its
# waits then test and yield instead of spinning inside MPI).
oversubscribed=${NDCYCLIC_OVERSUBSCRIBED:-$([ "$ranks" -gt "$(nproc)" ] && echo 1 || echo 0)}

case "$mpi" in
  mpich)
    launch=("$launcher" -launcher ssh -launcher-exec "$standin" -hosts "$host_list" -n "$ranks"
            -genv UCX_TLS tcp,self -genv UCX_NET_DEVICES eth0
            -genv NDCYCLIC_OVERSUBSCRIBED "$oversubscribed" ${finalize_fix[@]+"${finalize_fix[@]}"} "$@") ;;
  openmpi)
    launch=("$launcher" --allow-run-as-root --oversubscribe --mca plm_rsh_agent "$standin"
            --host "$host_list" -np "$ranks" --mca btl self,vader,tcp --mca btl_tcp_if_include eth0
            --mca oob_tcp_if_include eth0 --mca pml ob1 -x UCX_TLS=tcp,self
            -x NDCYCLIC_OVERSUBSCRIBED="$oversubscribed" "$@") ;;
esac

echo "cluster.sh: $nodes node(s), ranks per node $per_node${rate:+, links at $rate}${delay:+, delay $delay}, $mpi" >&2
# The launcher runs on node 1. Waiting on it in the background lets a
# signal reach the traps at once; the cleanup kills whatever is left in the
# namespaces.
set +e
ip netns exec "${tag}n1" unshare --uts sh -c 'hostname n1; exec "$@"' sh "${launch[@]}" &
wait $!
status=$?
set -e
exit "$status"
