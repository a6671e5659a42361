//! Process grids for ndcyclic: Cartesian arrangements of MPI ranks.
//!
//! Every distributed array in ndcyclic lives on a [`ProcGrid`]: a grid of
//! processes with one extent per array dimension. This crate holds
//!
//! - [`coords`](mod@coords): the pure bijection between grid coordinates and
//!   ranks, in row-major or column-major [`Order`], and shifts (the planning
//!   crate's, `redist_plan::coords`, re-exported);
//! - [`dims`]: [`balanced_extents`], the `MPI_Dims_create` choice of extents
//!   for a rank count;
//! - [`grid`]: [`ProcGrid`] itself and its [`GridBuilder`]: a duplicate of the
//!   user's communicator, periodic flags, sub-grids (row and column
//!   communicators), neighbour shifts, grids over a subset of the ranks;
//! - [`node`]: [`Node`], the ranks of a communicator sharing the calling
//!   rank's node, found once per grid communicator ([`ProcGrid::node`]);
//! - [`waits`]: barrier, all-reduce, all-gather and broadcast that, on a node with more
//!   ranks than cores, test and yield instead of spinning inside MPI;
//! - [`runtime`]: [`init`], which starts MPI with a panic hook that aborts the
//!   job and a check for a mismatched `mpirun`, and [`ranks_on_node`];
//! - [`error`]: [`GridError`], the one error type.
//!
//! ```
//! use procgrid::ProcGrid;
//! use mpi::topology::Communicator;
//!
//! let universe = procgrid::init().unwrap();
//! let world = universe.world();
//! let grid = ProcGrid::balanced(&world, 2).unwrap();
//! if let Some(row) = grid.row_grid().unwrap() {
//!     assert_eq!(row.size(), grid.extents()[1]);
//! }
//! ```
#![deny(missing_docs)]
#![warn(clippy::all)]

pub mod dims;
pub mod error;
pub mod grid;
pub mod node;
pub mod runtime;
pub mod waits;

pub use dims::balanced_extents;
pub use error::GridError;
pub use grid::{GridBuilder, ProcGrid, Shift};
pub use node::Node;
pub use redist_plan::coords;
pub use redist_plan::coords::{check_extents, coords_to_rank, rank_to_coords, shifted, Order};
pub use runtime::{abort_on_panic, init, ranks_on_node};

/// Re-export of the `mpi` crate this crate is built against.
pub use mpi;

/// The crate's README, whose example runs as a doc test (one rank).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
