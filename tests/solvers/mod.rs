//! The suites of `mpi_solvers`: one module a solver.

pub mod adi;
pub mod fft2d;
pub mod fft3d;
pub mod heat;
