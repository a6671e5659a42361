#!/usr/bin/env bash
# Lists every test the full gate (the README's second line) runs, without
# running any: one line a test, `STEP<TAB>PROGRAM<TAB>TEST`, sorted.
#
#   mpich    cargo test --workspace --release --all-features: unit tests,
#            doc tests, CLI tests and every MPI test program's bodies at
#            every rank count (SUITE::BODY np=K)
#   openmpi  scripts/test-openmpi.sh: the same programs' tests (--tests)
#            at its rank counts (NDCYCLIC_MPI_RANKS=1,2,3,4)
#   python   scripts/test-python.sh: pytest's tests at each rank count
#
# Builds what it lists (cargo test --no-run) unless it is built already.
# The drop-in's checks (scripts/test-dropin.sh) are the PASS lines of its
# run. scripts/compare-test-lists.py tells whether one list holds another.
#
#   scripts/list-tests.sh > after.tsv
set -euo pipefail
cd "$(dirname "$0")/.."

# cargo test ... -- --list, as STEP<TAB>PROGRAM<TAB>TEST lines.
cargo_list() {
    local step=$1
    shift
    cargo test "$@" -- --list 2>&1 | awk -v step="$step" '
        /^ *Running / {
            prog = $0
            sub(/.*\//, "", prog); sub(/-[0-9a-f]+\)$/, "", prog)
            if ($0 ~ /unittests/) prog = prog " (unit tests)"
            next
        }
        /^ *Doc-tests / { prog = $2 " (doc tests)"; next }
        / test$/ || /: test$/ {
            name = $0; sub(/: test$/, "", name)
            print step "\t" prog "\t" name
        }'
}

{
    cargo_list mpich --workspace --release --all-features
    NDCYCLIC_MPI_RANKS=1,2,3,4 cargo_list openmpi --workspace --release --tests
    if [ -x .venv/bin/python ]; then
        tests=$(.venv/bin/python -m pytest --collect-only -q -p no:cacheprovider python/tests 2> /dev/null |
            grep '::' || true)
        for n in 1 2 3 4; do
            while IFS= read -r t; do
                [ -n "$t" ] && printf 'python\tpytest np=%s\t%s\n' "$n" "$t"
            done <<< "$tests"
        done
    fi
} | sort
