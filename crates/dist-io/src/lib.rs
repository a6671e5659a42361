//! Parallel I/O for ndcyclic: distributed arrays saved to and loaded from
//! files that NumPy and h5py open, on any layout and any rank count.
//!
//! A file is one more layout: its bytes are the array in C (or Fortran)
//! order, and contiguous ranges of them, one per aggregator rank, form a
//! `block`-like layout. Saving redistributes the array to those ranges and
//! writes each with one MPI-IO call; loading reads them and redistributes
//! to any layout — ROMIO's two-phase I/O with ndcyclic's exchange in place
//! of MPI-IO's generic one. Arrays larger than the staging budget go in
//! rounds.
//!
//! - [`save()`], [`save_window`]: an array to a new file (written under a
//!   temporary name, renamed when every rank succeeded), or into a window
//!   of an existing one;
//! - [`load()`], [`load_into`], [`load_window`], [`load_window_into`]: a
//!   file (or a window of it: a plane, a slab) into a new array of any
//!   layout on any grid, or into an existing array;
//! - [`info()`]: a file's header — format, element type, shape, order
//!   ([`FileInfo`]);
//! - [`options`]: [`IoOptions`], the [`Format`], the [`Aggregators`];
//! - the formats, each a module of its own behind one interface
//!   (`file_format.rs`), listed once in `registry.rs`: [`npy`] (the `.npy`
//!   header, encoded and decoded, and `npy/format.rs`), [`hdf5`] (HDF5
//!   datasets, feature `hdf5`; `stub.rs` without it); `raw_file.rs`: the
//!   saves and loads of files holding the array raw after a header;
//! - [`element`]: [`ElementType`], element types as files name them;
//! - [`rounds`]: the file as a layout, cut in rounds ([`rounds::Rounds`]);
//! - `transfer.rs`: one round's redistribution and write (or read);
//!   `aggregators.rs`: which ranks write; `agree.rs`: every rank's verdict
//!   agreed after each step; `checks.rs`: what is checked before;
//!   `temporary.rs`: new files under a temporary name; `staging.rs`:
//!   staging memory kept between calls;
//! - [`error`]: [`IoError`], the one error type.
//!
//! ```
//! use dist_array::{DistArray, Layout};
//! use mpi::topology::Communicator;
//! use procgrid::ProcGrid;
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let universe = procgrid::init()?;
//!     let world = universe.world();
//!     let p = world.size() as usize;
//!     let grid = ProcGrid::new(&world, &[1, p])?;
//!     let blocks = Layout::parse(&[64, 48], &format!("cyclic(8),cyclic(8)@1x{p}"))?;
//!     let u = DistArray::from_fn(&grid, blocks, |g| (g[0] * 100 + g[1]) as f64)?;
//!     let path = std::env::temp_dir().join(format!("dist-io-doc-{}.npy", std::process::id()));
//!     let options = dist_io::IoOptions::default();
//!     dist_io::save(&u, &path, &options)?; // numpy.load(path) sees the 64 x 48 array
//!     let rows = ProcGrid::new(&world, &[p, 1])?;
//!     let spec = format!("block,*@{p}x1").parse()?;
//!     let v: DistArray<f64> = dist_io::load(&rows, &spec, &path, &options)?;
//!     assert_eq!(v.gather(0)?, u.gather(0)?);
//!     # std::fs::remove_file(&path)?;
//!     Ok(())
//! }
//! ```
#![deny(missing_docs)]

mod aggregators;
mod agree;
mod checks;
pub mod element;
pub mod error;
mod file_format;
mod file_info;
pub mod hdf5;
pub mod info;
pub mod load;
pub mod npy;
pub mod options;
mod raw_file;
mod registry;
pub mod rounds;
pub mod save;
mod staging;
mod temporary;
#[cfg(test)]
mod toy_format;
mod transfer;

pub use element::ElementType;
pub use error::IoError;
pub use file_info::FileInfo;
pub use info::info;
pub use load::{load, load_into, load_window, load_window_into};
pub use options::{Aggregators, Format, IoOptions, DEFAULT_DATASET};
pub use save::{save, save_window};

/// The crate's README, whose example runs as a doc test (one rank).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
