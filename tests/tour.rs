//! The tour's programs (`docs/tour.md`), run whole: each
//! `examples/tour_*.rs` under `mpirun` with 1, 2, 3, 4, 5, 6 and 7 ranks
//! (they work for any number), `tour_plans` without MPI. Each program checks its own results and exits
//! with a failure when one is wrong.
//!
//! A unit test of the facade (`src/lib.rs`) checks that `docs/tour.md`
//! (and `docs/io.md`, for `tour_files`; `docs/ghosts.md`, for
//! `tour_ghosts`) shows these files as they are.

use mpi_harness::Example;

fn main() {
    mpi_harness::run_examples(
        "tour",
        &[1, 2, 3, 4, 5, 6, 7],
        &[
            Example::mpi("tour_grids"),
            Example::mpi("tour_layouts"),
            Example::serial("tour_plans"),
            Example::mpi("tour_redistribute"),
            Example::mpi("tour_files"),
            Example::mpi("tour_ghosts"),
        ],
    );
}
