//! HDF5 files (feature `hdf5`): a dataset at a path inside a file that may
//! hold others, written and read through parallel HDF5's hyperslab calls
//! (every rank calls each round; the aggregators move their ranges).
//! Without the feature every call says how to get it.
//!
//! A dataset is always a C-order array (HDF5 has no Fortran order): the
//! file side of every transfer is row-major, and a column-major array is
//! redistributed into it like any other layout. Contiguous storage, no
//! chunking, no fill: the transfer writes every element once.
//!
//! - `names.rs`: dataset paths (`/run/3/u`), groups found or made;
//! - `types.rs`: element types as HDF5 datatypes, and the refusals;
//! - `files.rs`: opening files (serially, or over MPI-IO), a dataset's
//!   header as a [`FileInfo`](crate::FileInfo);
//! - `store.rs`: the transfer's file side, one `H5Dwrite` or `H5Dread`
//!   of a hyperslab per aggregator and round (independent MPI-IO: why,
//!   there);
//! - `write.rs`: saving a whole dataset (a new file under a temporary
//!   name, or a temporary dataset beside the old one) and windows;
//! - `read.rs`: headers and loading windows;
//! - `stub.rs`: the refusals of a build without the feature.

#[cfg(feature = "hdf5")]
mod files;
#[cfg(feature = "hdf5")]
mod names;
#[cfg(feature = "hdf5")]
mod read;
#[cfg(feature = "hdf5")]
mod store;
#[cfg(feature = "hdf5")]
mod types;
#[cfg(feature = "hdf5")]
mod write;

#[cfg(feature = "hdf5")]
pub(crate) use read::{info, info_collective, load_window};
#[cfg(feature = "hdf5")]
pub(crate) use write::{save, save_window};

#[cfg(not(feature = "hdf5"))]
mod stub;

#[cfg(not(feature = "hdf5"))]
pub(crate) use stub::{info, info_collective, load_window, save, save_window};
