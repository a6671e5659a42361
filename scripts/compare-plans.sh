#!/usr/bin/env bash
# Checks that two builds of the `redist` CLI report the same plans: runs
# `BIN plan --json` over a fixed table of 16 whole-plan cases (1-D, 2-D, 3-D; same grid,
# grid-shape and rank-count changes; cyclic(1)..cyclic(3); `+K` offsets; every
# --remap mode; a 2^40-element extent; extents the grids do not divide) and 6
# cases of one rank's part (`plan --rank R --list`: what that rank builds, its
# messages and steps) with each binary, removes the timings from the JSON and compares the rest byte for
# byte. No MPI and no build are needed: give it two built binaries, e.g. one
# from before a refactoring and one from after.
#
#   scripts/compare-plans.sh OLD_REDIST NEW_REDIST
#   git worktree add /tmp/old HEAD~5 && (cd /tmp/old && cargo build --release -p redist-cli)
#   scripts/compare-plans.sh /tmp/old/target/release/redist target/release/redist
#   CASES_FILTER=remap scripts/compare-plans.sh OLD NEW   # only matching cases
#   TIMEOUT=120 scripts/compare-plans.sh OLD NEW          # seconds per run (60)
#
# Prints one line per case, `same` or `DIFFERS` (with the first differing
# fields, old -> new) or `FAILED` (a binary exited non-zero), then a summary.
# Exits 0 when every case is the same, 1 when any differs or fails, 2 on a
# usage error.
#
# Removed before comparing: every object key that is a timing, at any depth:
# a name ending in _ms, _us, _ns, _secs or _seconds, or with time, elapsed or
# duration as a word of it (whole plans carry plan_ms; `plan --rank` would
# add build_ms and schedule_ms); the summary names the keys it removed. Keys
# are sorted, numbers keep their exact text (no float or 2^53 rounding),
# lines that are not JSON are compared as they are, and so are exit codes.
#
# Windows, --permute and column-major storage are `redist run` options only;
# `redist plan` has no flag for them, so this table cannot cover them.
set -euo pipefail
usage() {
  echo "usage: scripts/compare-plans.sh OLD_REDIST_BINARY NEW_REDIST_BINARY" >&2
  exit 2
}
[ $# -eq 2 ] || usage
resolve() {
  local p
  p=$(command -v -- "$1" 2>/dev/null) || true
  if [ -z "$p" ] || [ -d "$p" ] || [ ! -x "$p" ]; then
    echo "compare-plans.sh: '$1' is not an executable file" >&2
    exit 2
  fi
  # An absolute path: the runs below do not depend on the working directory.
  case "$p" in /*) echo "$p" ;; *) echo "$PWD/$p" ;; esac
}
OLD=$(resolve "$1")
NEW=$(resolve "$2")
TIMEOUT=${TIMEOUT:-60}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
: >"$WORK/removed"

# shape | from | to | remap [| more flags]
CASES=(
  # 1-D
  "100000|block@4|cyclic@4|none"                                   # plain, same grid
  "7|cyclic(1)+2@3|cyclic(2)+1@8|none"                             # 3 -> 8 ranks, ranks left empty
  "1000003|cyclic(4)+3@6|cyclic(12)@6|closed-form"                 # prime extent, offset
  "1099511627776|block@8|cyclic(7)@8|none"                         # 2^40 elements
  "1099511627776|block@8|cyclic(7)@8|optimal"
  # 2-D
  "4096x4096|block,*@4x1|*,block@1x4|none"                         # 4x1 -> 1x4
  "1000x999|cyclic,cyclic@2x3|cyclic,cyclic@3x2|none"              # 2x3 -> 3x2
  "1000x999|cyclic(3),cyclic(3)@2x3|block,block@2x2|optimal"       # 6 -> 4 ranks
  "100x100|cyclic(3)+1,block@2x2|cyclic(2),cyclic(2)+1@2x2|none"   # offsets
  "97x101|cyclic(1),cyclic(2)@3x2|cyclic(3),cyclic(1)@2x3|optimal" # tiny blocks
  "4099x4090|cyclic(4),cyclic(16)@2x3|cyclic(8),cyclic(4)+1@2x3|closed-form"
  "1048576x1048576|cyclic(64),cyclic(64)@16x16|cyclic(3)+2,cyclic(2)@16x16|optimal" # 256 ranks
  "1099511627775x8193|block,*@8x1|cyclic(7),cyclic@4x2|none"       # odd counts > 2^53
  # 3-D
  "256x256x256|block,*,*@4x1x1|*,*,block@1x1x4|none"
  "30x31x32|cyclic(2)+1,cyclic(3),*@2x3x1|*,cyclic(1),block@1x2x3|optimal"
  "64x63x65|cyclic(2),cyclic(2),cyclic(2)@2x2x2|block,cyclic(3)+2,*@3x4x1|none" # 8 -> 12 ranks
  # One rank's part, with its list of messages and steps
  "100000|block@4|cyclic(7)@4|none|--rank 1 --list"
  "1000x999|cyclic(3),cyclic(3)@2x3|block,block@2x2|optimal|--rank 5 --list"
  "4096x4096|block,*@4x1|*,block@1x4|none|--rank 2 --list"
  "30x31x32|cyclic(2)+1,cyclic(3),*@2x3x1|*,cyclic(1),block@1x2x3|none|--rank 4 --list"
  "1048576x1048576|block,*@4096x1|*,block@1x4096|none|--rank 7"   # 4096 ranks
  "1099511627776|block@131072|cyclic(7)@131072|optimal|--rank 3" # 2^40 on 2^17 ranks
)

# normalize OUT REMOVED: stdin -> OUT, one line per line of stdin; JSON lines
# lose their timing keys (their paths are appended to REMOVED) and are printed
# with sorted keys; other lines are kept as they are.
normalize() {
  python3 -c '
import json, re, sys
TIMING = re.compile(r"(_ms|_us|_ns|_secs|_seconds)$|(^|_)(time|elapsed|duration)(_|$)", re.I)
class Num(str):
    pass
def num(text):
    return Num("\0num:" + text)  # the exact text, not a rounded float
removed = []
def strip(v, path):
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            if TIMING.search(k):
                removed.append(path + k)
            else:
                out[k] = strip(x, path + k + ".")
        return out
    if isinstance(v, list):
        return [strip(x, path) for x in v]
    return v
with open(sys.argv[1], "w") as out:
    for line in sys.stdin.read().splitlines():
        try:
            v = json.loads(line, parse_float=num, parse_int=num)
        except ValueError:
            out.write("text:" + line + "\n")
            continue
        s = json.dumps(strip(v, ""), sort_keys=True, separators=(",", ":"))
        out.write("json:" + re.sub(r"\"\\u0000num:([^\"]*)\"", r"\1", s) + "\n")
with open(sys.argv[2], "a") as f:
    f.writelines(k + "\n" for k in removed)
' "$1" "$2"
}

# differences OLD NEW: the first differing fields of two normalized outputs,
# on one line: `path: old -> new; ...`.
differences() {
  python3 -c '
import json, sys
def flat(v, path, out):
    sep = "." if path and not path.endswith(":") else ""
    if isinstance(v, dict) and v:
        for k in sorted(v):
            flat(v[k], path + sep + k, out)
    elif isinstance(v, list) and v:
        for i, x in enumerate(v):
            flat(x, "%s[%d]" % (path, i), out)
    else:
        out[path] = json.dumps(v)
def fields(name):
    out = {}
    for n, line in enumerate(open(name).read().splitlines()):
        kind, _, rest = line.partition(":")
        where = "line %d:" % (n + 1) if n else ""
        if kind == "json":
            flat(json.loads(rest), where, out)
        else:
            out[where.rstrip(":") or "line 1"] = json.dumps(rest)
    return out
a, b = fields(sys.argv[1]), fields(sys.argv[2])
diffs = ["%s: %s -> %s" % (k, a.get(k, "(none)"), b.get(k, "(none)"))
         for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
shown = "; ".join(diffs[:4])
if len(diffs) > 4:
    shown += "; ... (%d fields differ)" % len(diffs)
print(shown[:400])
' "$1" "$2"
}

n=0; same=0; bad=0
for c in "${CASES[@]}"; do
  if [ -n "${CASES_FILTER:-}" ] && ! grep -q -- "${CASES_FILTER}" <<<"$c"; then continue; fi
  IFS='|' read -r shape from to remap more <<<"$c"
  n=$((n + 1))
  read -r -a extra <<<"${more:-}"
  args=(plan --json --shape "$shape" --from "$from" --to "$to" --remap "$remap" "${extra[@]}")
  label=$(printf '%2d  --shape %s --from %s --to %s --remap %s %s' "$n" "$shape" "'$from'" "'$to'" "$remap" "${more:-}")
  for side in old new; do
    bin=$OLD; [ "$side" = new ] && bin=$NEW
    rc=0
    timeout "$TIMEOUT" "$bin" "${args[@]}" >"$WORK/$side.out" 2>"$WORK/$side.err" || rc=$?
    echo "$rc" >"$WORK/$side.rc"
    normalize "$WORK/$side.norm" "$WORK/removed" <"$WORK/$side.out"
  done
  old_rc=$(cat "$WORK/old.rc"); new_rc=$(cat "$WORK/new.rc")
  if [ "$old_rc" != 0 ] || [ "$new_rc" != 0 ]; then
    err=$(cat "$WORK/old.err" "$WORK/new.err" | awk 'NF && !s { print substr($0, 1, 200); s = 1 }')
    echo "FAILED  $label  (exit old $old_rc, new $new_rc${err:+: $err})"
    bad=$((bad + 1))
  elif cmp -s "$WORK/old.norm" "$WORK/new.norm"; then
    echo "same    $label"
    same=$((same + 1))
  else
    echo "DIFFERS $label"
    echo "          $(differences "$WORK/old.norm" "$WORK/new.norm")"
    bad=$((bad + 1))
  fi
done
[ "$n" -gt 0 ] || { echo "compare-plans.sh: no case matches CASES_FILTER='${CASES_FILTER:-}'" >&2; exit 2; }
removed=$(sort -u "$WORK/removed" | paste -sd, - | sed 's/,/, /g')
echo "$n cases: $same same, $bad differ or fail (timing keys removed: ${removed:-none})"
[ "$bad" = 0 ]
