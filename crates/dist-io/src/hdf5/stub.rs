//! A build without the `hdf5` feature: every HDF5 call says how to get
//! one that reads and writes HDF5.

use crate::error::{name, IoError};
use crate::file_info::FileInfo;
use crate::transfer::{AnySide, Transfer};
use mpi::topology::SimpleCommunicator;
use std::path::Path;

fn not_built(path: &Path) -> IoError {
    IoError::NotBuilt {
        path: name(path),
        format: "HDF5".to_string(),
        feature: "hdf5".to_string(),
        needs: "parallel HDF5 on the same MPI: Debian's libhdf5-mpich-dev, \
                HDF5_DIR=/usr/lib/x86_64-linux-gnu/hdf5/mpich"
            .to_string(),
    }
}

pub(crate) fn info(path: &Path, _dataset: &str) -> Result<FileInfo, IoError> {
    Err(not_built(path))
}

pub(crate) fn info_collective(
    _comm: &SimpleCommunicator,
    path: &Path,
    _dataset: &str,
    _what: &str,
) -> Result<FileInfo, IoError> {
    Err(not_built(path))
}

pub(crate) fn save(
    _side: &mut dyn AnySide,
    path: &Path,
    _dataset: &str,
    _transfer: Transfer<'_>,
) -> Result<(), IoError> {
    Err(not_built(path))
}

pub(crate) fn save_window(
    _side: &mut dyn AnySide,
    path: &Path,
    _dataset: &str,
    _transfer: Transfer<'_>,
) -> Result<(), IoError> {
    Err(not_built(path))
}

pub(crate) fn load_window(
    _side: &mut dyn AnySide,
    path: &Path,
    _dataset: &str,
    _transfer: Transfer<'_>,
) -> Result<(), IoError> {
    Err(not_built(path))
}
