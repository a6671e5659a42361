//! Files that hold the array's bytes raw after a header, as `.npy` does:
//! the file side of their transfers through MPI-IO ([`MpiStore`]), and
//! their saves and loads ([`run`]), the default of every format's
//! `run`: a format of that kind says only what its header is.

use crate::agree::agree;
use crate::element::ElementType;
use crate::error::{name, IoError};
use crate::temporary::Temporary;
use crate::transfer::{AnySide, Operation, Store, Transfer};
use mpi::topology::Communicator;
use mpi_extras::file::{Access, FileBox, MpiFile};
use procgrid::Order;
use std::path::Path;

/// A file's array through MPI-IO: `.npy` data after its header.
pub(crate) struct MpiStore {
    pub file: MpiFile,
    /// The file's name, for errors.
    pub path: String,
}

impl Store for MpiStore {
    fn write(
        &mut self,
        file_box: Option<&FileBox>,
        data: &[u8],
        contiguous: bool,
    ) -> Result<(), IoError> {
        let done = match (contiguous, file_box) {
            (true, Some(file_box)) => self.file.write_box(file_box, data),
            (true, None) => Ok(()),
            (false, file_box) => self.file.write_box_all(file_box, data),
        };
        done.map_err(|e| IoError::Write {
            path: self.path.clone(),
            reason: e.to_string(),
        })
    }

    fn read(
        &mut self,
        file_box: Option<&FileBox>,
        data: &mut [u8],
        contiguous: bool,
    ) -> Result<(), IoError> {
        let done = match (contiguous, file_box) {
            (true, Some(file_box)) => self.file.read_box(file_box, data),
            (true, None) => Ok(()),
            (false, file_box) => self.file.read_box_all(file_box, data),
        };
        done.map_err(|e| IoError::Read {
            path: self.path.clone(),
            reason: e.to_string(),
        })
    }
}

/// A format's [`run`](crate::file_format::FileFormat::run) by default,
/// for a file at
/// `path` that holds the array's bytes raw after the header `header`
/// makes (of the element type, the order and the shape): a new file is
/// written under a temporary name renamed to `path` once every rank
/// succeeded; windows are written in place, or read. Collective over the
/// array's communicator.
pub(crate) fn run(
    operation: Operation,
    path: &Path,
    side: &mut dyn AnySide,
    mut transfer: Transfer<'_>,
    header: impl FnOnce(ElementType, Order, &[usize]) -> Vec<u8>,
) -> Result<(), IoError> {
    match operation {
        Operation::Save => {
            let layout = side.layout();
            let header = header(side.element(), layout.storage(), layout.shape());
            transfer.geometry.data_offset = header.len() as u64;
            save_new(path, side, &transfer, &header)
        }
        Operation::SaveWindow => through_mpi_io(&transfer, side, path, Access::Update, |_| Ok(())),
        Operation::LoadWindow => through_mpi_io(&transfer, side, path, Access::Read, |_| Ok(())),
    }
}

/// Saves the array of `side` to a new file at `path`: `header`, then the
/// array's bytes (where the transfer's file array starts), under a
/// temporary name. Collective.
fn save_new(
    path: &Path,
    side: &mut dyn AnySide,
    transfer: &Transfer<'_>,
    header: &[u8],
) -> Result<(), IoError> {
    let grid = side.grid().clone();
    let comm = grid.communicator();
    let temp = Temporary::new(comm, path);
    let rank0 = comm.rank() == 0;
    // A new file: no size to set, the writes make it whole.
    let head = |file: &mut MpiFile| match rank0 {
        true => file.write_at(0, header),
        false => Ok(()),
    };
    let written = through_mpi_io(transfer, side, &temp.path, Access::Create, head);
    temp.finish(comm, written, transfer.options.sync, &transfer.what)
}

/// `transfer` through MPI-IO on the file at `path`, opened with `access`
/// (a new file, one to update, one to read), `before` called on the open
/// file: every step agreed, the file synced when the options say so and
/// it was written, closed. Collective.
fn through_mpi_io(
    transfer: &Transfer<'_>,
    side: &mut dyn AnySide,
    path: &Path,
    access: Access,
    before: impl FnOnce(&mut MpiFile) -> Result<(), mpi_extras::MpiError>,
) -> Result<(), IoError> {
    let grid = side.grid().clone();
    let comm = grid.communicator();
    let saving = side.saving();
    let what = &transfer.what;
    let name = name(path);
    let failed = |e: mpi_extras::MpiError| match saving {
        true => IoError::Write {
            path: name.clone(),
            reason: e.to_string(),
        },
        false => IoError::Read {
            path: name.clone(),
            reason: e.to_string(),
        },
    };
    let file = MpiFile::open(comm, path, access).map_err(|e| match saving {
        true => failed(e),
        false => IoError::Open {
            path: name.clone(),
            reason: e.to_string(),
        },
    });
    let mut file = agree(comm, file, 0, what)?;
    agree(comm, before(&mut file).map_err(failed), 0, what)?;
    let mut store = MpiStore {
        file,
        path: name.clone(),
    };
    transfer.run(side, &mut store)?;
    if saving && transfer.options.sync {
        agree(comm, store.file.sync().map_err(failed), 0, what)?;
    }
    agree(comm, store.file.close().map_err(failed), 0, what)
}
