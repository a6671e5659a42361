#!/usr/bin/env bash
# Tests libndcyclic_scalapack (crates/scalapack-dropin) against Debian's
# ScaLAPACK for MPICH (libscalapack-mpich):
#
#   scripts/test-dropin.sh           build the library, compile the C programs of
#                                    crates/scalapack-dropin/tests/c into target/dropin/, then
#                                    - check_gemr2d (GEMR2D.dat, random and context-reuse cases,
#                                      s/d/c/z/i) and check_pblas (p?tran, p?tranu/c, p?geadd) at
#                                      1, 2, 3, 4 ranks, ScaLAPACK's plain names next to ndcyclic_
#                                      names in one program (traced: the logs count the calls
#                                      ndcyclic handed over to ScaLAPACK), and check_gemr2d once
#                                      more without ndcyclic_release_plans;
#                                    - an unmodified ScaLAPACK program (plain_user) three ways:
#                                      (a) linked with libndcyclic_scalapack before ScaLAPACK,
#                                      (b) linked with ScaLAPACK only, (c) (b) with LD_PRELOAD:
#                                      (a) and (c) must trace ndcyclic's entry points, (b) must not,
#                                      and all three must print the same checksums;
#                                    - ScaLAPACK's own level-3 PBLAS testers (?pb3tst, package
#                                      scalapack-mpi-test) with the library preloaded, s/d/c/z, 4
#                                      ranks: every check passes (p?geadd done by ndcyclic, bad
#                                      arguments reported by ScaLAPACK's routine), and dpb3tst
#                                      prints the same with and without the library.
#   scripts/test-dropin.sh bench [ARGS]
#                                    build, compile, run bench_gemr2d on 2 ranks
#                                    (ARGS go to bench_gemr2d: sizes, --json, --reps R, ...)
#
# Environment: DROPIN_TIMEOUT (seconds per mpirun, default 300; check_gemr2d
# at 4 ranks gets twice as long), DROPIN_RANKS (default "1 2 3 4"),
# DROPIN_PLAIN_RANKS (default 3), DROPIN_BENCH_RANKS (default 2).
# Logs: target/dropin/logs/. Skips (exit 0) only if libscalapack-mpich is not
# installed; any failure exits 1.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

mode=${1:-test}
[ $# -gt 0 ] && shift
case $mode in
  test | bench) ;;
  -h | --help)
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  *)
    echo "usage: $0 [test | bench [bench_gemr2d args]]" >&2
    exit 2
    ;;
esac

TIMEOUT=${DROPIN_TIMEOUT:-300}
RANKS=${DROPIN_RANKS:-1 2 3 4}
PLAIN_RANKS=${DROPIN_PLAIN_RANKS:-3}
BENCH_RANKS=${DROPIN_BENCH_RANKS:-2}
crate=crates/scalapack-dropin
src=$crate/tests/c
out=$root/target/dropin
logs=$out/logs
lib=$root/target/release/libndcyclic_scalapack.so

log() { echo "test-dropin: $*"; }

# --- ScaLAPACK for MPICH present? -----------------------------------------
if ! command -v mpicc.mpich > /dev/null 2>&1 ||
  [ "$(mpicc.mpich -print-file-name=libscalapack-mpich.so 2> /dev/null)" = libscalapack-mpich.so ]; then
  log "SKIP: libscalapack-mpich (Debian's ScaLAPACK for MPICH, package libscalapack-mpich-dev) is not installed"
  exit 0
fi
if ! command -v mpirun.mpich > /dev/null 2>&1; then
  log "libscalapack-mpich is installed but mpirun.mpich is missing (package mpich)" >&2
  exit 1
fi

# --- Build ------------------------------------------------------------------
log "cargo build --release -p ndcyclic-scalapack"
cargo build --release -p ndcyclic-scalapack
if [ ! -f "$lib" ]; then
  log "$lib was not built" >&2
  exit 1
fi
if ! nm -D --defined-only "$lib" | grep -q ' T ndcyclic_Cpdgemr2d$'; then
  log "$lib does not export ndcyclic_Cpdgemr2d" >&2
  exit 1
fi
if ! ldd "$lib" | grep -q 'libmpich\.so'; then
  log "$lib is not linked with MPICH (libmpich.so), the MPI of libscalapack-mpich:" >&2
  ldd "$lib" | grep -i mpi >&2 || true
  exit 1
fi

mkdir -p "$out" "$logs"
CFLAGS=(-O2 -g -std=gnu11 -Wall -Wextra -I"$root/$crate/include")
# Plain names from ScaLAPACK, ndcyclic_ names from ours (ScaLAPACK first).
BOTH=(-Wl,--no-as-needed -lscalapack-mpich -L"$root/target/release" -lndcyclic_scalapack -lm)

needed() { readelf -d "$1" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' '; }
# Fails unless library $2 comes before library $3 in $1's NEEDED list.
needed_before() {
  local list
  list=$(needed "$1")
  case $list in
    *"$2"*"$3"*) return 0 ;;
    *)
      log "$1: expected $2 before $3 in NEEDED, found: $list" >&2
      return 1
      ;;
  esac
}

log "compiling into target/dropin/ (mpicc.mpich)"
for prog in check_gemr2d check_pblas bench_gemr2d; do
  mpicc.mpich "${CFLAGS[@]}" "$src/$prog.c" -o "$out/$prog" "${BOTH[@]}"
  needed_before "$out/$prog" libscalapack-mpich libndcyclic_scalapack
done
# An unmodified program: ours first (a), ScaLAPACK only (b, c).
mpicc.mpich "${CFLAGS[@]}" "$src/plain_user.c" -o "$out/plain_user_ndcyclic" \
  -Wl,--no-as-needed -L"$root/target/release" -lndcyclic_scalapack -lscalapack-mpich -lm
needed_before "$out/plain_user_ndcyclic" libndcyclic_scalapack libscalapack-mpich
mpicc.mpich "${CFLAGS[@]}" "$src/plain_user.c" -o "$out/plain_user_scalapack" \
  -Wl,--no-as-needed -lscalapack-mpich -lm
if needed "$out/plain_user_scalapack" | grep -q ndcyclic; then
  log "plain_user_scalapack must not link libndcyclic_scalapack" >&2
  exit 1
fi

# mpirun with a timeout: run NAME TIMEOUT RANKS PROGRAM ARGS...; output to
# logs/NAME.out and .err (stdout also on the console, less the skip lines).
run() {
  local name=$1 limit=$2 n=$3
  shift 3
  local rc=0
  timeout --kill-after=15 "$limit" mpirun.mpich -n "$n" "$@" \
    > "$logs/$name.out" 2> "$logs/$name.err" || rc=$?
  grep -v '^skip GEMR2D.dat case' "$logs/$name.out" | sed 's/^/    /' || true
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    log "$name: timed out after $limit s" >&2
  fi
  if [ "$rc" -ne 0 ] && [ -s "$logs/$name.err" ]; then
    grep -Ev '^ndcyclic_scalapack: [A-Za-z_]+$' "$logs/$name.err" | tail -n 20 | sed 's/^/    stderr: /' >&2 || true
  fi
  return "$rc"
}

if [ "$mode" = bench ]; then
  log "bench_gemr2d on $BENCH_RANKS ranks"
  LD_LIBRARY_PATH="$root/target/release${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    run bench "$((TIMEOUT * 2))" "$BENCH_RANKS" "$out/bench_gemr2d" "$@"
  exit 0
fi

passed=()
failed=()
verdict() { # verdict NAME STATUS
  if [ "$2" -eq 0 ]; then
    passed+=("$1")
    log "PASS $1"
  else
    failed+=("$1")
    log "FAIL $1 (exit $2; logs in target/dropin/logs/)"
  fi
}

export LD_LIBRARY_PATH="$root/target/release${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# MPICH's waiting ranks yield their core instead of spinning on it, as in
# the MPI test harness (scripts/yield-when-idle.sh; NDCYCLIC_MPI_IDLE=spin:
# not). Preloaded into every run, next to the library where that is preloaded.
idle=$(scripts/yield-when-idle.sh)
export LD_PRELOAD=$idle
dat=$root/$crate/tests/data/GEMR2D.dat

# How often $2 shows in logs/$1.err. Ranks' trace lines interleave
# mid-line on the shared stderr (a line is written in pieces), so this
# counts occurrences, not lines.
trace_count() { { grep -oF -- "$2" "$logs/$1.err" || true; } | wc -l; }
# The check programs run traced and print how many ndcyclic_ calls they
# made per entry point ("ndcyclic_calls ...: NAME=COUNT ..."): each must
# show in ndcyclic's trace as often (else the ndcyclic_ name ran something
# else, e.g. ScaLAPACK's routine through symbol interposition, and the
# comparison tested ScaLAPACK against itself). Also counts the calls
# ndcyclic handed over to ScaLAPACK. Fails on a shortfall.
trace_summary() {
  local name=$1 pair ep want got ok=0 handed summary=""
  for pair in $(sed -n 's/^ndcyclic_calls[^:]*://p' "$logs/$name.out"); do
    ep=${pair%=*}
    want=${pair#*=}
    got=$(trace_count "$name" "$ep")
    summary+=" $ep $got/$want"
    if [ "$got" -lt "$want" ]; then
      log "$name: ndcyclic_$ep was called $want times (summed over ranks) but ndcyclic traced $ep $got times: the other calls did not run ndcyclic" >&2
      ok=1
    fi
  done
  handed=$(trace_count "$name" handed)
  log "$name: traced/made ndcyclic_ calls:${summary:- none reported}; $handed handed over to ScaLAPACK"
  return $ok
}

for n in $RANKS; do
  limit=$TIMEOUT
  [ "$n" -ge 4 ] && limit=$((TIMEOUT * 2))
  log "check_gemr2d, $n rank(s)"
  rc=0
  run "check_gemr2d.$n" "$limit" "$n" env NDCYCLIC_SCALAPACK_TRACE=1 "$out/check_gemr2d" --dat "$dat" || rc=$?
  trace_summary "check_gemr2d.$n" || rc=1
  verdict "check_gemr2d at $n rank(s)" "$rc"
done
# Without ndcyclic_release_plans: ndcyclic must notice by itself that BLACS
# hands a freed context number out again for other processes.
n=${RANKS##* }
if [ "$n" -ge 2 ]; then
  log "check_gemr2d --no-release (random and context-reuse cases, plans never released), $n rank(s)"
  rc=0
  run "check_gemr2d.$n.no-release" "$TIMEOUT" "$n" env NDCYCLIC_SCALAPACK_TRACE=1 \
    "$out/check_gemr2d" --no-dat --no-release || rc=$?
  trace_summary "check_gemr2d.$n.no-release" || rc=1
  verdict "check_gemr2d --no-release at $n rank(s)" "$rc"
fi
for n in $RANKS; do
  log "check_pblas, $n rank(s)"
  rc=0
  run "check_pblas.$n" "$TIMEOUT" "$n" env NDCYCLIC_SCALAPACK_TRACE=1 "$out/check_pblas" || rc=$?
  trace_summary "check_pblas.$n" || rc=1
  verdict "check_pblas at $n rank(s)" "$rc"
done

# --- An unmodified ScaLAPACK program ----------------------------------------
entry_points="pdgemr2d_ Cpdgemr2d pdtran_ pdgeadd_ pzgemr2d_"
# Fails unless every entry point shows in the trace of logs/$1.err (under
# its own name: "ndcyclic_scalapack: <name>").
traced() {
  local name=$1 ep ok=0 counts=""
  for ep in $entry_points; do
    counts+=" $ep:$(trace_count "$name" "$ep")"
    if [ "$(trace_count "$name" "$ep")" -eq 0 ]; then
      ok=1
      case $ep in
        p?gemr2d_)
          if [ "$(trace_count "$name" "C${ep%_}")" -gt 0 ]; then
            log "$name: no trace line names $ep (ndcyclic traced these calls as C${ep%_}: its Fortran entry point is traced under the C name)" >&2
            continue
          fi
          ;;
      esac
      log "$name: no trace line names $ep" >&2
    fi
  done
  log "$name: trace words per entry point:$counts (Cpzgemr2d:$(trace_count "$name" Cpzgemr2d))"
  return $ok
}

# same_as_b NAME STATUS HOW: the verdicts of run NAME (exit STATUS):
# ndcyclic's trace, and the checksums against (b)'s.
same_as_b() {
  local name=$1 status=$2 how=$3 rc
  rc=$status
  [ "$status" -ne 0 ] || traced "$name" || rc=1
  verdict "plain_user (${name#plain_user.}) $how: every entry point traced by ndcyclic" "$rc"
  rc=$status
  if [ "$status" -eq 0 ] && ! cmp -s "$logs/$name.out" "$logs/plain_user.b.out"; then
    log "$name: checksums differ from ScaLAPACK's (b):" >&2
    diff "$logs/plain_user.b.out" "$logs/$name.out" | sed 's/^/    /' >&2 || true
    rc=1
  fi
  verdict "plain_user (${name#plain_user.}) $how: same checksums as (b)" "$rc"
}

log "plain_user (b): linked with ScaLAPACK only, $PLAIN_RANKS ranks"
rc=0
run plain_user.b "$TIMEOUT" "$PLAIN_RANKS" \
  env -u LD_LIBRARY_PATH LD_PRELOAD="$idle" NDCYCLIC_SCALAPACK_TRACE=1 "$out/plain_user_scalapack" || rc=$?
if [ "$rc" -eq 0 ] && [ "$(trace_count plain_user.b ndcyclic_scalapack)" -gt 0 ]; then
  log "plain_user (b): ndcyclic traced in a ScaLAPACK-only run" >&2
  rc=1
fi
verdict "plain_user (b) ScaLAPACK only: ran, no ndcyclic trace" "$rc"

log "plain_user (a): linked with libndcyclic_scalapack first, $PLAIN_RANKS ranks"
rc=0
run plain_user.a "$TIMEOUT" "$PLAIN_RANKS" \
  env NDCYCLIC_SCALAPACK_TRACE=1 "$out/plain_user_ndcyclic" || rc=$?
same_as_b plain_user.a "$rc" "linked first"

log "plain_user (c): the ScaLAPACK-only binary with LD_PRELOAD, $PLAIN_RANKS ranks"
rc=0
# The preload goes to the ranks only (not to mpirun itself).
run plain_user.c "$TIMEOUT" "$PLAIN_RANKS" \
  env -u LD_LIBRARY_PATH LD_PRELOAD="$lib${idle:+:$idle}" NDCYCLIC_SCALAPACK_TRACE=1 "$out/plain_user_scalapack" || rc=$?
same_as_b plain_user.c "$rc" "LD_PRELOAD"

# --- ScaLAPACK's own PBLAS testers ----------------------------------------
# Debian's level-3 PBLAS testers (package scalapack-mpi-test) with the
# library preloaded: every computational and error-exit check of ?GEADD
# (and of the routines around it) must pass, with ndcyclic doing the
# computational calls (bad arguments go to ScaLAPACK's own routine, which
# reports them as its testers expect). The double-precision tester also
# runs without the library: both outputs must agree, timings aside.
testers=/usr/lib/$(gcc -print-multiarch 2> /dev/null || echo x86_64-linux-gnu)/scalapack/mpich-tests/PBLAS
if [ -x "$testers/dpb3tst" ]; then
  for t in s d c z; do
    T=$(echo "$t" | tr a-z A-Z)
    dir=$out/pblas/$t
    rm -rf "$dir"
    mkdir -p "$dir"
    cp -L "$testers/${t}pb3tst" "$testers/P${T}BLAS3TST.dat" "$dir/"
    log "${t}pb3tst (ScaLAPACK's PBLAS tester) with the library preloaded, 4 ranks"
    rc=0
    (cd "$dir" && run "${t}pb3tst.preloaded" "$TIMEOUT" 4 \
      env -u LD_LIBRARY_PATH LD_PRELOAD="$lib${idle:+:$idle}" NDCYCLIC_SCALAPACK_TRACE=1 "./${t}pb3tst" > /dev/null) || rc=$?
    # The summary: a row per routine (tests, passed, failed, skipped).
    summary=$logs/${t}pb3tst.preloaded.out
    routines=$(grep -cE "^ *\| +P${T}[A-Z0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ *$" "$summary" || true)
    clean=$(grep -cE "^ *\| +P${T}[A-Z0-9]+ +([0-9]+) +\1 +0 +0 *$" "$summary" || true)
    geadd=$(grep -cE "^ *\| +P${T}GEADD +([1-9][0-9]*) +\1 +0 +0 *$" "$summary" || true)
    bad=$(grep -cE "\*\*\* ERROR \*\*\*|FAILED +\*\*\*\*\*" "$summary" || true)
    handed=$(trace_count "${t}pb3tst.preloaded" "p${t}geadd_ handed")
    done_here=$(($(trace_count "${t}pb3tst.preloaded" "p${t}geadd_") - 2 * handed))
    log "${t}pb3tst: $clean of $routines routines with every test passed, $bad failures; p${t}geadd_ calls done by ndcyclic $done_here, handed to ScaLAPACK $handed (bad arguments)"
    if [ "$rc" -eq 0 ] && { [ "$routines" -eq 0 ] || [ "$clean" -ne "$routines" ] ||
      [ "$geadd" -ne 1 ] || [ "$bad" -ne 0 ] || [ "$done_here" -le 0 ]; }; then
      rc=1
    fi
    verdict "${t}pb3tst (ScaLAPACK's level-3 PBLAS tester), ndcyclic preloaded: every check passed" "$rc"
  done
  dir=$out/pblas/d
  log "dpb3tst without the library, 4 ranks"
  rc=0
  (cd "$dir" && run dpb3tst.plain "$TIMEOUT" 4 env -u LD_LIBRARY_PATH LD_PRELOAD="$idle" ./dpb3tst > /dev/null) || rc=$?
  untimed() { grep -vE "time|Time|WALL|CPU|MFLOP|IEEE" "$logs/$1.out" || true; }
  if [ "$rc" -eq 0 ] && ! diff <(untimed dpb3tst.plain) <(untimed dpb3tst.preloaded) > "$logs/dpb3tst.diff"; then
    log "dpb3tst: output differs with the library preloaded (logs/dpb3tst.diff)" >&2
    rc=1
  fi
  verdict "dpb3tst: the same output with and without ndcyclic" "$rc"
else
  log "SKIP ScaLAPACK's PBLAS testers: $testers/dpb3tst not found (package scalapack-mpi-test)"
fi

echo
log "${#passed[@]} passed, ${#failed[@]} failed"
for p in "${passed[@]+"${passed[@]}"}"; do echo "  PASS  $p"; done
for f in "${failed[@]+"${failed[@]}"}"; do echo "  FAIL  $f"; done
[ "${#failed[@]}" -eq 0 ]
