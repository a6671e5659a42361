//! Writing: an array saved as a dataset — into a new file written under a
//! temporary name, or beside the other datasets of an existing file
//! under a temporary dataset name, moved to its own once every rank
//! succeeded — and windows of an existing dataset written in place.

use super::files::{
    has_signature, open_error, open_parallel, write_text_attribute, LAYOUT_ATTRIBUTE,
    VERSION_ATTRIBUTE,
};
use super::names::{find_dataset, kind_at, kind_name, make_group, DatasetPath};
use super::read::close;
use super::store::DatasetStore;
use super::types;
use crate::agree::{agree, broadcast_bytes};
use crate::element::ElementType;
use crate::error::{name, IoError};
use crate::temporary::Temporary;
use crate::transfer::{AnySide, Transfer};
use hdf5::dataset::{AllocTime, FillTime};
use hdf5::{Dataset, File, Group, LocationType, OpenMode};
use mpi::topology::{Communicator, SimpleCommunicator};
use procgrid::Order;
use std::path::Path;

/// Saves the array of `side` as `dataset` of the HDF5 file at `path`: a
/// new file when none is there, else the dataset created or replaced
/// among the file's others. Collective over the array's communicator.
pub(crate) fn save(
    side: &mut dyn AnySide,
    path: &Path,
    dataset: &str,
    mut transfer: Transfer<'_>,
) -> Result<(), IoError> {
    // HDF5 datasets are C order whatever the array's storage order.
    transfer.geometry.order = Order::RowMajor;
    let grid = side.grid().clone();
    let comm = grid.communicator();
    let parsed = DatasetPath::parse(dataset)?;
    if exists(comm, path, &transfer.what)? {
        save_into(side, path, &parsed, &transfer)
    } else {
        save_new(side, path, &parsed, &transfer)
    }
}

/// Whether an HDF5 file is at `path` (rank 0 looks, every rank is told);
/// an error when something else is. Collective.
fn exists(comm: &SimpleCommunicator, path: &Path, what: &str) -> Result<bool, IoError> {
    let seen = if comm.rank() == 0 {
        match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(IoError::Open {
                path: name(path),
                reason: e.to_string(),
            }),
            Ok(m) if m.is_dir() => Err(IoError::Open {
                path: name(path),
                reason: "it is a directory".to_string(),
            }),
            Ok(_) if !has_signature(path) => Err(IoError::Header {
                path: name(path),
                reason: "exists and is not an HDF5 file, so no dataset can be added to it; \
                         remove it or save to another name"
                    .to_string(),
            }),
            Ok(_) => Ok(true),
        }
    } else {
        Ok(false)
    };
    let seen = agree(comm, seen, 0, what)?;
    let mut wire = vec![u8::from(seen)];
    broadcast_bytes(comm, 0, &mut wire);
    Ok(wire.first() == Some(&1))
}

/// A new file: written under a temporary name beside `path`, renamed to
/// it when every rank succeeded. Collective.
fn save_new(
    side: &mut dyn AnySide,
    path: &Path,
    parsed: &DatasetPath,
    transfer: &Transfer<'_>,
) -> Result<(), IoError> {
    let grid = side.grid().clone();
    let comm = grid.communicator();
    let what = &transfer.what;
    let temp = Temporary::new(comm, path);
    let written = (|| {
        let file = open_parallel(comm, &temp.path, OpenMode::Create).map_err(|e| IoError::Write {
            path: name(path),
            reason: format!("creating {}: {e}", name(&temp.path)),
        });
        let file = agree(comm, file, 0, what)?;
        let done = (|| {
            let group = make_group(&file, parsed).map_err(|r| failed(path, r));
            let group = agree(comm, group, 0, what)?;
            write_dataset(
                side,
                &group,
                &parsed.leaf,
                path,
                &temp.path,
                parsed,
                transfer,
            )?;
            drop(group);
            flush(comm, &file, path, transfer)
        })();
        let closed = agree(comm, close(file, path, true), 0, what);
        done.and(closed)
    })();
    temp.finish(comm, written, transfer.options.sync, what)
}

/// An existing file: the array written to a temporary dataset beside
/// `parsed`, which then replaces the old dataset (if any); on failure the
/// temporary dataset is deleted and the old one left as it was.
/// Collective.
fn save_into(
    side: &mut dyn AnySide,
    path: &Path,
    parsed: &DatasetPath,
    transfer: &Transfer<'_>,
) -> Result<(), IoError> {
    let grid = side.grid().clone();
    let comm = grid.communicator();
    let what = &transfer.what;
    let file = open_parallel(comm, path, OpenMode::ReadWrite).map_err(|e| open_error(path, &e));
    let file = agree(comm, file, 0, what)?;
    let done = (|| {
        let group = make_group(&file, parsed).map_err(|r| failed(path, r));
        let group = agree(comm, group, 0, what)?;
        let leaf = &parsed.leaf;
        let old = match kind_at(&group, leaf) {
            Ok(None) => Ok(false),
            Ok(Some(LocationType::Dataset)) => Ok(true),
            Ok(Some(kind)) => Err(failed(
                path,
                format!(
                    "{} is {}, not a dataset; only a dataset is replaced",
                    parsed.full(),
                    kind_name(kind)
                ),
            )),
            Err(r) => Err(failed(path, r)),
        };
        let old = agree(comm, old, 0, what)?;
        let temporary = parsed.temporary_leaf();
        // A temporary dataset a failed save left behind.
        let stale = kind_at(&group, &temporary).map_err(|r| failed(path, r));
        if agree(comm, stale, 0, what)?.is_some() {
            let removed = group
                .unlink(&temporary)
                .map_err(|e| failed(path, e.to_string()));
            agree(comm, removed, 0, what)?;
        }
        let written = write_dataset(side, &group, &temporary, path, path, parsed, transfer);
        // Nothing of the old dataset is lost until the new one is whole.
        let mut old_gone = false;
        let moved = written.and_then(|()| {
            let unlinked = if old { group.unlink(leaf) } else { Ok(()) };
            let unlinked = agree(
                comm,
                unlinked
                    .map_err(|e| failed(path, format!("deleting the old {}: {e}", parsed.full()))),
                0,
                what,
            );
            old_gone = old && unlinked.is_ok();
            unlinked?;
            let renamed = group.relink(&temporary, leaf).map_err(|e| {
                failed(
                    path,
                    format!(
                        "moving the new data from {}/{temporary} to {} (it stays there): {e}",
                        parsed.parent().trim_end_matches('/'),
                        parsed.full()
                    ),
                )
            });
            agree(comm, renamed, 0, what)
        });
        if moved.is_err() && !old_gone {
            // Every rank is here (every step is agreed): the removal is
            // collective, and its failure changes nothing of the answer.
            if matches!(kind_at(&group, &temporary), Ok(Some(_))) {
                let _ = group.unlink(&temporary);
            }
        }
        moved?;
        drop(group);
        flush(comm, &file, path, transfer)
    })();
    let closed = agree(comm, close(file, path, true), 0, what);
    done.and(closed)
}

/// Creates the dataset `leaf` of `group` for the array of `side` and
/// writes the array into it: `file` is the file HDF5 writes (`path` or a
/// temporary one beside it), `parsed` the dataset's path. On failure the
/// dataset's bytes go back to the file system (see [`release`]).
/// Collective.
fn write_dataset(
    side: &mut dyn AnySide,
    group: &Group,
    leaf: &str,
    path: &Path,
    file: &Path,
    parsed: &DatasetPath,
    transfer: &Transfer<'_>,
) -> Result<(), IoError> {
    let grid = side.grid().clone();
    let comm = grid.communicator();
    let what = &transfer.what;
    let element = side.element();
    let layout = side.layout().spec().to_string();
    let ds = create_dataset(group, leaf, element, side.layout().shape(), &layout)
        .map_err(|e| failed(path, format!("creating the dataset {}: {e}", parsed.full())));
    let ds = agree(comm, ds, 0, what)?;
    let store = DatasetStore::new(&ds, element, name(path), parsed.full())
        .map_err(|e| failed(path, format!("the dataset {}: {e}", parsed.full())));
    let mut store = agree(comm, store, 0, what)?;
    let written = transfer.run(side, &mut store);
    if written.is_err() && comm.rank() == 0 {
        let bytes = (side.layout().len() as u64).saturating_mul(element.size() as u64);
        release(file, ds.offset(), bytes);
    }
    written
}

/// Gives the `bytes` from `offset` of the file at `file` — the storage of
/// a dataset a failed save will delete — back to the file system: the
/// failure may have been a full disk, and HDF5 must still write the
/// file's metadata to close it (rank 0 writes it, and the other ranks
/// would wait for it forever if it could not). Punches a hole there
/// (Linux; elsewhere, or where the file system cannot, nothing). Not
/// collective: rank 0 calls it once every rank's writing has ended.
fn release(file: &Path, offset: Option<u64>, bytes: u64) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let Some(offset) = offset else { return };
        let Ok(handle) = std::fs::OpenOptions::new().write(true).open(file) else {
            return;
        };
        let (Ok(at), Ok(len)) = (libc::off_t::try_from(offset), libc::off_t::try_from(bytes))
        else {
            return;
        };
        // SAFETY: a plain system call on a file descriptor this function
        // owns; a failure (a file system without holes) changes nothing.
        unsafe {
            libc::fallocate(
                handle.as_raw_fd(),
                libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                at,
                len,
            );
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (file, offset, bytes);
}

/// A contiguous dataset of `shape` `element`s, allocated at once and
/// never filled (every element is written), with the attributes `layout`
/// and `ndcyclic_version`. Collective.
fn create_dataset(
    group: &Group,
    leaf: &str,
    element: ElementType,
    shape: &[usize],
    layout: &str,
) -> hdf5::Result<Dataset> {
    let ds = group
        .new_dataset_builder()
        .empty_as(types::descriptor(element))
        .shape(shape.to_vec())
        .alloc_time(Some(AllocTime::Early))
        .fill_time(FillTime::Never)
        .create(leaf)?;
    write_text_attribute(&ds, LAYOUT_ATTRIBUTE, layout)?;
    write_text_attribute(&ds, VERSION_ATTRIBUTE, env!("CARGO_PKG_VERSION"))?;
    Ok(ds)
}

/// With `sync`, flushes `file` to storage (`MPI_File_sync` underneath).
/// Collective.
fn flush(
    comm: &SimpleCommunicator,
    file: &File,
    path: &Path,
    transfer: &Transfer<'_>,
) -> Result<(), IoError> {
    if !transfer.options.sync {
        return Ok(());
    }
    let flushed = file
        .flush()
        .map_err(|e| failed(path, format!("flushing it: {e}")));
    agree(comm, flushed, 0, &transfer.what)
}

/// A write error of the file at `path`.
fn failed(path: &Path, reason: String) -> IoError {
    IoError::Write {
        path: name(path),
        reason,
    }
}

/// Writes the array of `side` into the window of `dataset` the transfer
/// names, in place. Collective over the array's communicator.
pub(crate) fn save_window(
    side: &mut dyn AnySide,
    path: &Path,
    dataset: &str,
    transfer: Transfer<'_>,
) -> Result<(), IoError> {
    let grid = side.grid().clone();
    let comm = grid.communicator();
    let what = &transfer.what;
    let parsed = DatasetPath::parse(dataset)?;
    let file = open_parallel(comm, path, OpenMode::ReadWrite).map_err(|e| open_error(path, &e));
    let file = agree(comm, file, 0, what)?;
    let done = (|| {
        let ds = find_dataset(&file, &parsed).map_err(|reason| IoError::Header {
            path: name(path),
            reason,
        });
        let ds = agree(comm, ds, 0, what)?;
        let store = DatasetStore::new(&ds, side.element(), name(path), parsed.full())
            .map_err(|e| failed(path, format!("the dataset {}: {e}", parsed.full())));
        let mut store = agree(comm, store, 0, what)?;
        transfer.run(side, &mut store)?;
        drop(store);
        drop(ds);
        flush(comm, &file, path, &transfer)
    })();
    let closed = agree(comm, close(file, path, true), 0, what);
    done.and(closed)
}
