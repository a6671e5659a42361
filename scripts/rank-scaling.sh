#!/usr/bin/env bash
# Prints a markdown table of what one rank spends setting up a
# redistribution, against the rank count R = 2^10 ... 2^17: for each case,
# "build ms / MB", the worst over ranks 0, R/3, R/2, R-1 and 7 of
# `redist plan --rank` (the time to build what that rank builds in
# Redistribution::new, and the peak resident memory of the whole process,
# /usr/bin/time -f %M). No MPI and no data are needed.
#
#   scripts/rank-scaling.sh              # build in release, then every R
#   MAX_LOG2=14 scripts/rank-scaling.sh  # stop at 2^14 ranks
#
# Cases, on 1048576^2 elements unless said otherwise (grids P x Q with
# P = 2^floor(k/2), Q = R/P):
#   transpose        block,*@Rx1 -> *,block@1xR
#   cyclic(64)^2     cyclic(64),cyclic(64)@PxQ -> cyclic(32),cyclic(128)@PxQ
#   + remap optimal  the same with --remap optimal
#   grid change      cyclic,cyclic@PxQ -> cyclic,cyclic@QxP
#   1-D, 2^40        block@R -> cyclic(7)@R on 2^40 elements, --remap optimal
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p redist-cli
[ -x /usr/bin/time ] || { echo "rank-scaling.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
python3 - "${MAX_LOG2:-17}" <<'PY'
import json, subprocess, sys
BIN = "target/release/redist"
def run(shape, frm, to, rank, remap):
    cmd = ["/usr/bin/time", "-f", "RSS %M", BIN, "plan", "--shape", shape, "--from", frm,
           "--to", to, "--rank", str(rank), "--remap", remap, "--json"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    rss = [l for l in p.stderr.splitlines() if l.startswith("RSS")]
    out = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if not out or not rss:
        raise SystemExit(f"{' '.join(cmd)}: {p.stderr.strip()}")
    return json.loads(out[-1]), int(rss[-1].split()[1])
def worst(shape, frm, to, R, remap="none"):
    build, mem = 0.0, 0
    for r in sorted({0, R - 1, R // 2, R // 3, 7 % R}):
        d, rss = run(shape, frm, to, r, remap)
        build, mem = max(build, d["build_ms"]), max(mem, rss)
    return f"{build:.3g} / {mem / 1024:.0f}"
N = "1048576x1048576"
print("| R | transpose | cyclic(64)² | + remap optimal | grid change | 1-D, 2^40, remap optimal |")
print("|---:|---|---|---|---|---|")
for k in range(10, int(sys.argv[1]) + 1):
    R, p = 1 << k, 1 << (k // 2)
    q = R // p
    a, b = f"cyclic(64),cyclic(64)@{p}x{q}", f"cyclic(32),cyclic(128)@{p}x{q}"
    row = [str(R),
           worst(N, f"block,*@{R}x1", f"*,block@1x{R}", R),
           worst(N, a, b, R),
           worst(N, a, b, R, "optimal"),
           worst(N, f"cyclic,cyclic@{p}x{q}", f"cyclic,cyclic@{q}x{p}", R),
           worst("1099511627776", f"block@{R}", f"cyclic(7)@{R}", R, "optimal")]
    print("| " + " | ".join(row) + " |", flush=True)
PY
