//! ndcyclic: n-dimensional block-cyclic distributed arrays over MPI, and fast
//! run-time redistribution between layouts.
//!
//! This facade only re-exports the workspace's library crates:
//!
//! - [`procgrid`]: process grids over MPI communicators;
//! - [`dist_array`]: block-cyclic layouts and the distributed array type;
//! - [`redist`]: redistribution plans, schedules and their execution;
//! - [`mpi`]: the MPI bindings they are built on.
//!
//! The ADI heat solver of `examples/adi.rs` lives in the unpublished
//! `ndcyclic-apps` package (`apps::adi`), the `redist` tool in `redist-cli`.
//!
//! ```
//! use ndcyclic::procgrid::ProcGrid;
//! use ndcyclic::mpi::topology::Communicator;
//!
//! let universe = ndcyclic::procgrid::init().unwrap();
//! let world = universe.world();
//! let grid = ProcGrid::balanced(&world, 2).unwrap();
//! assert_eq!(grid.size(), world.size() as usize);
//! ```
#![deny(missing_docs)]

pub use dist_array;
pub use mpi;
pub use procgrid;
pub use redist;
