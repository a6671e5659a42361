//! The `redist` tool as its users run it, one test program of six parts
//! (one binary to build and link where there were six): the tool under
//! `mpirun` ([`run_mpi`], [`io`], [`hdf5`] with the feature `hdf5`), without
//! MPI ([`show`], [`limits`]) and across emulated nodes ([`cluster`]).
//! Launches under `mpirun` go one at a time
//! ([`common::one_launch_at_a_time`]).

#[path = "../common/mod.rs"]
mod common;

mod cluster;
#[cfg(feature = "hdf5")]
mod hdf5;
mod io;
mod limits;
mod run_mpi;
mod show;
mod tune;
