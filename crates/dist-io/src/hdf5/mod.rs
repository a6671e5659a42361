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
//! Public here: whether the build has HDF5 ([`available`]), the file
//! signature ([`HDF5_SIGNATURE`]) and, with the
//! feature, `types`: element types as the HDF5 datatypes dist-io writes,
//! for programs that call HDF5 themselves.
//!
//! - `format.rs`: HDF5 as a file format of the registry (`.h5` names, the
//!   signature), its calls handed to the modules below;
//! - `names.rs`: dataset paths (`/run/3/u`), groups found or made;
//! - `types.rs`: element types as HDF5 datatypes, and the refusals;
//! - `files.rs`: opening files (serially, or over MPI-IO), a dataset's
//!   header as a [`FileInfo`](crate::file_info::FileInfo);
//! - `store.rs`: the transfer's file side, one `H5Dwrite` or `H5Dread`
//!   of a hyperslab per aggregator and round (independent MPI-IO: why,
//!   there);
//! - `write.rs`: saving a whole dataset (a new file under a temporary
//!   name, or a temporary dataset beside the old one) and windows;
//! - `read.rs`: headers and loading windows;
//! - `stub.rs`: the refusals of a build without the feature.

#[cfg(feature = "hdf5")]
mod files;
pub(crate) mod format;
#[cfg(feature = "hdf5")]
mod names;
#[cfg(feature = "hdf5")]
mod read;
#[cfg(feature = "hdf5")]
mod store;
#[cfg(not(feature = "hdf5"))]
mod stub;
#[cfg(feature = "hdf5")]
pub mod types;
#[cfg(feature = "hdf5")]
mod write;

/// Whether this build reads and writes HDF5 files (the `hdf5` feature);
/// without it, every HDF5 call returns [`IoError::NotBuilt`](crate::IoError::NotBuilt).
pub const fn available() -> bool {
    cfg!(feature = "hdf5")
}

/// The first bytes of every HDF5 file (at byte 0 when it has no user
/// block).
pub const HDF5_SIGNATURE: &[u8; 8] = b"\x89HDF\r\n\x1a\n";
