//! Reading: a dataset's header (by one process, or by every rank over
//! MPI-IO), and a window of a dataset loaded into an array.

use super::files::{describe, open_error, open_parallel, open_serial};
use super::names::{find_dataset, DatasetPath};
use super::store::DatasetStore;
use crate::agree::agree;
use crate::error::{name, IoError};
use crate::file_info::FileInfo;
use crate::transfer::{AnySide, Transfer};
use hdf5::OpenMode;
use mpi::topology::SimpleCommunicator;
use std::path::Path;

/// The header of `dataset` in the HDF5 file at `path`, read by this
/// process alone. Not collective.
pub(crate) fn info(path: &Path, dataset: &str) -> Result<FileInfo, IoError> {
    DatasetPath::parse(dataset)?;
    let file = open_serial(path).map_err(|e| open_error(path, &e))?;
    let info = describe(&file, path, dataset);
    let closed = close(file, path, false);
    info.and_then(|i| closed.map(|()| i))
}

/// [`info`] read by every rank of `comm` through the MPI-IO driver, the
/// same verdict on every rank. Collective.
pub(crate) fn info_collective(
    comm: &SimpleCommunicator,
    path: &Path,
    dataset: &str,
    what: &str,
) -> Result<FileInfo, IoError> {
    DatasetPath::parse(dataset)?;
    let file = open_parallel(comm, path, OpenMode::Read).map_err(|e| open_error(path, &e));
    let file = agree(comm, file, 0, what)?;
    let info = describe(&file, path, dataset);
    let closed = close(file, path, false);
    agree(comm, info.and_then(|i| closed.map(|()| i)), 0, what)
}

/// Closes `file`, every object in it closed before (a [`IoError::Write`]
/// when `written`, else a [`IoError::Read`]). Collective when the file was
/// opened over a communicator.
pub(super) fn close(file: hdf5::File, path: &Path, written: bool) -> Result<(), IoError> {
    file.close().map_err(|e| {
        let (path, reason) = (name(path), format!("closing it: {e}"));
        if written {
            IoError::Write { path, reason }
        } else {
            IoError::Read { path, reason }
        }
    })
}

/// Loads the window of `dataset` the transfer names into the array of
/// `side`. Collective over the array's communicator.
pub(crate) fn load_window(
    side: &mut dyn AnySide,
    path: &Path,
    dataset: &str,
    transfer: Transfer<'_>,
) -> Result<(), IoError> {
    let grid = side.grid().clone();
    let comm = grid.communicator();
    let what = &transfer.what;
    let parsed = DatasetPath::parse(dataset)?;
    let file = open_parallel(comm, path, OpenMode::Read).map_err(|e| open_error(path, &e));
    let file = agree(comm, file, 0, what)?;
    let loaded = (|| {
        let ds = find_dataset(&file, &parsed).map_err(|reason| IoError::Header {
            path: name(path),
            reason,
        });
        let ds = agree(comm, ds, 0, what)?;
        let element = side.element();
        let store =
            DatasetStore::new(&ds, element, name(path), parsed.full()).map_err(|e| IoError::Read {
                path: name(path),
                reason: format!("the dataset {}: {e}", parsed.full()),
            });
        let mut store = agree(comm, store, 0, what)?;
        transfer.run(side, &mut store)
    })();
    let closed = agree(comm, close(file, path, false), 0, what);
    loaded.and(closed)
}
