//! Redistribution under MPI, one program of three suites: `redist_suite`
//! launched by the harness with 1, 2, 3, 4, 5, 6 and 8 ranks on this node,
//! the ghost-update suite (`ghost_suite`) likewise and across emulated nodes,
//! and with 4 and 5 ranks across emulated nodes
//! ([`redist_suite::across_nodes`]), and the suite on many ranks
//! ([`redist_suite::many_ranks`]): one binary to build where there were
//! three. `--suite NAME` launches one of them.

mod common;
mod ghost_suite;
mod redist_suite;

use mpi_harness::Suite;

fn main() {
    let mut suites = vec![
        Suite::new("redist", redist_suite::TESTS),
        Suite::new("ghosts", ghost_suite::TESTS),
    ];
    suites.extend(redist_suite::across_nodes::suite());
    suites.extend(redist_suite::across_nodes::suite_of(
        "ghosts across nodes",
        ghost_suite::TESTS,
        &[],
    ));
    suites.push(redist_suite::many_ranks::suite());
    mpi_harness::run_suites(&suites);
}
