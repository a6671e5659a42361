//! The suites `mpi_io` launches next to its own: files NumPy reads and
//! writes, and (feature `hdf5`) HDF5 datasets.

#[cfg(feature = "hdf5")]
pub mod hdf5;
pub mod numpy_files;
