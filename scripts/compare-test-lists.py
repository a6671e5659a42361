#!/usr/bin/env python3
"""Whether one list of tests holds another.

    scripts/compare-test-lists.py BEFORE AFTER

BEFORE and AFTER are what scripts/list-tests.sh prints. A test is its step
and its name; the program it is in does not count, since programs were
merged (the MPI harness names a body `SUITE::BODY np=K` whatever binary
holds it), and a program that became a suite of another is named after
that one (MERGED). Names change only where a test file became a module of
another program: `cli_NAME`'s test `T` is the `cli` program's `NAME::T`. Doc tests
are counted per file and item, without their line numbers. Prints what
BEFORE has that AFTER lacks, and exits 1 if anything.
"""
import collections
import re
import sys

# Test files of the redist tool that became modules of its `cli` program.
CLI_PARTS = {"cli_cluster", "cli_hdf5", "cli_io", "cli_limits", "cli_run_mpi", "cli_show"}
# MPI test programs that became suites of another (their example launches
# keep their names and move with them).
MERGED = {
    "mpi_across_nodes": "mpi_redist",
    "mpi_many_ranks": "mpi_redist",
    "numpy_files": "mpi_io",
    "mpi_hdf5": "mpi_io",
    "mpi_adi": "mpi_solvers",
    "mpi_fft2d": "mpi_solvers",
    "mpi_fft3d": "mpi_solvers",
}


def key(line):
    step, program, name = line.rstrip("\n").split("\t")
    program = MERGED.get(program, program)
    if program.endswith("(doc tests)"):
        return (step, program, re.sub(r" \(line \d+\)", "", name))
    if program in CLI_PARTS:
        return (step, "cli", f"{program[len('cli_'):]}::{name}")
    if program == "cli":
        return (step, "cli", name)
    if "::" in name and " np=" in name:
        return (step, "", name)
    if program.startswith("pytest"):
        return (step, program, name)
    return (step, program, name)


def read(path):
    with open(path, encoding="utf-8") as f:
        return collections.Counter(key(l) for l in f if l.strip())


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip())
        return 2
    before, after = read(argv[1]), read(argv[2])
    missing = before - after
    steps = sorted({k[0] for k in before} | {k[0] for k in after})
    for step in steps:
        b = sum(n for k, n in before.items() if k[0] == step)
        a = sum(n for k, n in after.items() if k[0] == step)
        print(f"{step}: {b} tests before, {a} after")
    if missing:
        print(f"{sum(missing.values())} tests of {argv[1]} are not in {argv[2]}:")
        for k, n in sorted(missing.items()):
            print(f"  {'  '.join(x for x in k if x)}" + (f" (x{n})" if n > 1 else ""))
        return 1
    print(f"every test of {argv[1]} is in {argv[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
