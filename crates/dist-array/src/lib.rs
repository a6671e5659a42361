//! n-dimensional block-cyclic layouts and the distributed array type.
//!
//! - layouts, from the planning crate (`redist_plan`, which holds them
//!   without MPI) and re-exported here: [`spec`] ([`Dist`] per dimension and
//!   [`LayoutSpec`] spec strings such as `cyclic(64),cyclic(64)@2x3`),
//!   [`axis`] ([`AxisMap`], one dimension's O(1) index maps: ScaLAPACK's
//!   `numroc`, `indxg2p`, `indxg2l`, `indxl2g`), [`layout`] ([`Layout`],
//!   shape + distributions + grid + rank map + storage order, with owner,
//!   global ↔ local maps, local shapes and local blocks), [`element`]
//!   ([`Element`], the types an array can hold);
//! - [`on_grid`](mod@on_grid): [`layout_on_grid`], a layout placed on a
//!   [`ProcGrid`];
//! - [`array`](mod@array): [`DistArray`], a layout plus this rank's local
//!   part (lent out as ndarray views), with parallel `from_fn`,
//!   `map_inplace`, `zip_with`;
//! - [`ghosts`]: ghost layers — a local part stored padded by `w_d` cells
//!   on both sides of each axis ([`DistArray::with_ghosts`],
//!   [`DistArray::padded`]), for stencil solvers;
//! - [`storage`]: where a local part lives — heap memory, or shared memory
//!   other processes of the node can map ([`SharedStorage`], [`ReadMapping`], [`WriteMapping`]),
//!   and staging bytes shared the same way ([`SharedBytes`]);
//! - [`collective`]: reductions (sum, max-abs, 2-norm), gather and scatter;
//! - [`error`]: [`DistError`], the one error type.
//!
//! ```
//! use dist_array::Layout;
//! let layout = Layout::parse(&[10, 7], "cyclic(3),block+1@2x2").unwrap();
//! assert_eq!(layout.local_shapes(), vec![vec![6, 3], vec![6, 4], vec![4, 3], vec![4, 4]]);
//! let (rank, local) = layout.global_to_local(&[9, 0]).unwrap();
//! assert_eq!((rank, local), (3, vec![3, 0])); // grid coordinates (1, 1)
//! ```
#![deny(missing_docs)]

pub mod array;
pub mod collective;
pub mod error;
pub mod ghosts;
pub mod on_grid;
mod padding;
pub mod storage;

pub use redist_plan::layout::{self, axis, spec};
pub use redist_plan::{element, PlanError};

pub use array::{DistArray, LocalStorage};
pub use error::DistError;
pub use on_grid::layout_on_grid;
pub use procgrid::{self, ProcGrid};
pub use redist_plan::{AxisMap, Dist, Element, Layout, LayoutSpec, LocalBlock, LocalBlocks, Order};
pub use storage::{ReadMapping, SharedBytes, SharedStorage, WriteMapping};

/// Re-export of `num_complex::Complex`, a supported element type.
pub use redist_plan::Complex;

/// The crate's README, whose example runs as a doc test (one rank).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
