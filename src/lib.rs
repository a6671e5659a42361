//! ndcyclic: n-dimensional block-cyclic distributed arrays over MPI, and fast
//! run-time redistribution between layouts.
//!
//! This facade re-exports the workspace's crates:
//!
//! - [`procgrid`]: process grids over MPI communicators;
//! - [`dist_array`]: block-cyclic layouts and the distributed array type;
//! - [`redist`]: redistribution plans, schedules and their execution;
//! - [`adi`]: the ADI heat solver of `examples/adi.rs`, written against them.
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

pub mod adi;

pub use dist_array;
pub use mpi;
pub use procgrid;
pub use redist;
