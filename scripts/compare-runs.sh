#!/usr/bin/env bash
# Times two builds of the `redist` tool on the bench table
# (scripts/bench-cases.sh), in turn: for each case and round, the old build
# and then the new one run `redist run --reps REPS --verify --json` under
# mpirun, and the round's ratio new/old of the execution medians is taken
# within the pair, so the machine's drift touches both sides alike. Prints a
# markdown table: per case the median over rounds of each build's execution
# time and of the pairs' ratios, their range, and whether every run verified.
#
#   git worktree add /tmp/old HEAD~5 && (cd /tmp/old && cargo build --release -p redist-cli)
#   scripts/compare-runs.sh /tmp/old/target/release/redist target/release/redist
#   ROUNDS=5 REPS=9 RANKS=4 scripts/compare-runs.sh OLD NEW
#   CASES_FILTER=cyclic scripts/compare-runs.sh OLD NEW   # only matching cases
#   STRATEGY=scheduled scripts/compare-runs.sh OLD NEW     # every case with it
#   OLD_ENV=NDCYCLIC_NODE_WRITES=never scripts/compare-runs.sh \
#       target/release/redist target/release/redist        # one build, two settings
#
# OLD_ENV and NEW_ENV (space-separated NAME=VALUE words) set the environment
# of each side's runs.
# Exits 1 when a run fails or does not verify, 2 on a usage error; it judges
# no ratio (that is the reader's call, with the range in view).
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: scripts/compare-runs.sh OLD_REDIST NEW_REDIST" >&2; exit 2; }
for b in "$1" "$2"; do
  [ -x "$b" ] && [ ! -d "$b" ] || { echo "compare-runs.sh: '$b' is not an executable file" >&2; exit 2; }
done
OLD=$1
NEW=$2
cd "$(dirname "$0")/.."
RANKS=${RANKS:-2}
REPS=${REPS:-7}
ROUNDS=${ROUNDS:-3}
R=$RANKS
# shellcheck source=scripts/bench-cases.sh
source scripts/bench-cases.sh

echo "| shape | type | from | to | strategy | flags | old exec ms | new exec ms | new/old | range | verified |"
echo "|---|---|---|---|---|---|---:|---:|---:|---|---|"
status=0
for c in "${CASES[@]}"; do
  if [ -n "${CASES_FILTER:-}" ] && ! grep -q -- "${CASES_FILTER}" <<<"$c"; then continue; fi
  IFS='|' read -r shape type from to strategy extra <<<"$c"
  strategy=${STRATEGY:-$strategy}
  pairs=()
  for _ in $(seq "$ROUNDS"); do
    for side in old new; do
      if [ "$side" = old ]; then bin=$OLD; vars=${OLD_ENV:-}; else bin=$NEW; vars=${NEW_ENV:-}; fi
      # shellcheck disable=SC2086 # extra and vars hold zero or more words
      line=$(env $vars mpirun -n "$RANKS" "$bin" run --shape "$shape" --type "$type" --from "$from" \
          --to "$to" --strategy "$strategy" --reps "$REPS" --verify --json ${extra:-} | tail -n 1) \
        || { echo "compare-runs.sh: a run of $bin failed on $c" >&2; status=1; line='{}'; }
      pairs+=("$line")
    done
  done
  python3 - "$shape" "$type" "$from" "$to" "$strategy" "${extra:-}" "${pairs[@]}" <<'PY' || status=1
import json, statistics, sys
shape, typ, frm, to, strategy, extra = sys.argv[1:7]
runs = [json.loads(a) for a in sys.argv[7:]]
old, new = runs[0::2], runs[1::2]
ok = all(r.get("verified") for r in runs)
if not ok or not all("exec_ms_median" in r for r in runs):
    print(f"| {shape} | {typ} | `{frm}` | `{to}` | {strategy} | {extra} | | | | | False |")
    sys.exit(1)
ratios = [n["exec_ms_median"] / o["exec_ms_median"] for o, n in zip(old, new)]
med = lambda rs: statistics.median(r["exec_ms_median"] for r in rs)
print(f"| {shape} | {typ} | `{frm}` | `{to}` | {strategy} | {extra} | {med(old):.2f} | "
      f"{med(new):.2f} | {statistics.median(ratios):.3f} | {min(ratios):.2f}–{max(ratios):.2f} | {ok} |")
PY
done
exit "$status"
