//! Opening HDF5 files — by this process alone, or over a communicator
//! through the MPI-IO driver — and a dataset's header read as a
//! [`FileInfo`].

use super::names::{find_dataset, DatasetPath};
use super::types::element_of;
use super::HDF5_SIGNATURE;
use crate::error::{name, IoError};
use crate::file_info::FileInfo;
use crate::options::Format;
use hdf5::types::VarLenUnicode;
use hdf5::{Dataset, File, OpenMode};
use mpi::raw::AsRaw;
use mpi::topology::SimpleCommunicator;
use procgrid::Order;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// The attribute holding the layout an array was saved from.
pub(super) const LAYOUT_ATTRIBUTE: &str = "layout";

/// The attribute holding the version of ndcyclic that saved it.
pub(super) const VERSION_ATTRIBUTE: &str = "ndcyclic_version";

/// Opens `path` in `mode` over `comm` with the MPI-IO driver. Collective
/// over `comm`: every rank passes the same path and mode.
///
/// Rank 0 alone writes the file's metadata (HDF5 1.10 spreads the
/// writing over the ranks by default): a rank whose writes fail (a quota,
/// a size limit) then fails in the raw data, where the failure is agreed,
/// instead of in the metadata cache's collective flush, which the other
/// ranks would wait in forever.
pub(super) fn open_parallel(
    comm: &SimpleCommunicator,
    path: &Path,
    mode: OpenMode,
) -> hdf5::Result<File> {
    let raw = comm.as_raw();
    let mut cache = hdf5::plist::FileAccess::try_new()?.mdc_config();
    cache.metadata_write_strategy = hdf5::file::MetadataWriteStrategy::ProcessZeroOnly;
    File::with_options()
        .with_fapl(|p| p.mpio(raw, None).mdc_config(&cache))
        .open_as(path, mode)
}

/// Opens `path` for reading by this process alone. Not collective.
pub(super) fn open_serial(path: &Path) -> hdf5::Result<File> {
    File::open(path)
}

/// The error of a file HDF5 could not open.
pub(super) fn open_error(path: &Path, e: &hdf5::Error) -> IoError {
    if e.contains_minor(hdf5::MinorErrorCode::NotHdf5) || !has_signature(path) {
        return IoError::Header {
            path: name(path),
            reason: "not an HDF5 file (no HDF5 signature \\x89HDF\\r\\n\\x1a\\n at byte 0, 512, \
                     1024, ...)"
                .to_string(),
        };
    }
    IoError::Open {
        path: name(path),
        reason: format!("HDF5 cannot open it: {e}"),
    }
}

/// Whether the file at `path` has the HDF5 signature where HDF5 looks for
/// it: at byte 0, or after a user block (512, 1024, 2048, ... bytes).
/// `true` when the file cannot be read (opening it says more).
pub(super) fn has_signature(path: &Path) -> bool {
    let Ok(mut file) = std::fs::File::open(path) else {
        return true;
    };
    let size = file.metadata().map_or(0, |m| m.len());
    let mut at = 0u64;
    loop {
        let mut head = [0u8; 8];
        let read = file
            .seek(SeekFrom::Start(at))
            .and_then(|_| file.read_exact(&mut head));
        if read.is_ok() && &head == HDF5_SIGNATURE {
            return true;
        }
        at = if at == 0 { 512 } else { at * 2 };
        if at.saturating_add(8) > size {
            return false;
        }
    }
}

/// The header of `dataset` in `file`: its element type and shape (C
/// order), the layout it was saved from. Not collective (reads metadata).
pub(super) fn describe(file: &File, path: &Path, dataset: &str) -> Result<FileInfo, IoError> {
    let header = |reason: String| IoError::Header {
        path: name(path),
        reason,
    };
    let parsed = DatasetPath::parse(dataset)?;
    let ds = find_dataset(file, &parsed).map_err(header)?;
    let full = parsed.full();
    let dtype = ds
        .dtype()
        .map_err(|e| header(format!("the dataset {full}: its type cannot be read: {e}")))?;
    let element = element_of(&dtype).map_err(|why| header(format!("the dataset {full}: {why}")))?;
    let space = ds
        .space()
        .map_err(|e| header(format!("the dataset {full}: its shape cannot be read: {e}")))?;
    if space.is_null() || space.ndim() == 0 {
        return Err(header(format!(
            "the dataset {full} is a scalar (0 dimensions); only arrays of 1 or more \
             dimensions are read"
        )));
    }
    let file_bytes = std::fs::metadata(path).map_or_else(|_| file.size(), |m| m.len());
    Ok(FileInfo {
        format: Format::Hdf5 {
            dataset: dataset.to_string(),
        },
        element,
        shape: space.shape(),
        order: Order::RowMajor,
        data_offset: None,
        version: None,
        file_bytes,
        layout: text_attribute(&ds, LAYOUT_ATTRIBUTE),
    })
}

/// The text of a string attribute of `ds`, if it has one.
pub(super) fn text_attribute(ds: &Dataset, attribute: &str) -> Option<String> {
    if !ds.attr_names().ok()?.iter().any(|a| a == attribute) {
        return None;
    }
    let attr = ds.attr(attribute).ok()?;
    if let Ok(v) = attr.read_scalar::<VarLenUnicode>() {
        return Some(v.as_str().to_string());
    }
    attr.read_scalar::<hdf5::types::VarLenAscii>()
        .ok()
        .map(|v| v.as_str().to_string())
}

/// Writes `text` as the string attribute `attribute` of `ds` (replacing
/// one of that name). Collective over the file's communicator.
pub(super) fn write_text_attribute(ds: &Dataset, attribute: &str, text: &str) -> hdf5::Result<()> {
    let value: VarLenUnicode = text
        .parse()
        .map_err(|e| hdf5::Error::from(format!("attribute {attribute}: {e}").as_str()))?;
    if ds.attr_names()?.iter().any(|a| a == attribute) {
        ds.delete_attr(attribute)?;
    }
    ds.new_attr::<VarLenUnicode>()
        .create(attribute)?
        .write_scalar(&value)
}
