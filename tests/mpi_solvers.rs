//! The solvers of `crates/apps` under MPI, one test program of four suites
//! (one binary to build and link where there were three): the ADI solver
//! ([`adi`]), the 2-D FFT ([`fft2d`]) and the 3-D FFT on pencils
//! ([`fft3d`]) and the explicit heat solver on ghost layers ([`heat`]),
//! each at its own rank counts. Before the launches, the launcher runs
//! `examples/adi.rs`, `examples/fft3d.rs` and `examples/heat.rs` whole.

mod solvers;

use solvers::{adi, fft2d, fft3d, heat};

fn main() {
    if !mpi_harness::is_rank() {
        adi::before_launches();
        fft3d::before_launches();
        heat::before_launches();
    }
    mpi_harness::run_suites(&[adi::suite(), fft2d::suite(), fft3d::suite(), heat::suite()]);
}
