//! Redistribution under MPI: the suite of `redist_suite`, launched by the
//! harness with 1, 2, 3, 4, 5, 6 and 8 ranks on this node.

mod common;
mod redist_suite;

fn main() {
    mpi_harness::run("redist", redist_suite::TESTS);
}
