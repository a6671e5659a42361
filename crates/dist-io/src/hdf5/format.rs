//! HDF5 as a file format ([`Hdf5`]): recognised by its signature or a
//! `.h5` name; no header bytes are sent, every rank opens the file. The
//! calls are `read.rs`' and `write.rs`' (`stub.rs`' without the feature).

use super::HDF5_SIGNATURE;
#[cfg(feature = "hdf5")]
use super::{read, write};
#[cfg(not(feature = "hdf5"))]
use super::{stub as read, stub as write};
use crate::error::IoError;
use crate::file_format::{FileFormat, RawHeader};
use crate::file_info::FileInfo;
use crate::options::{Format, DEFAULT_DATASET};
use crate::transfer::{AnySide, Operation, Transfer};
use mpi::topology::SimpleCommunicator;
use std::path::Path;

/// HDF5 datasets: [`Format::Hdf5`].
pub(crate) struct Hdf5;

/// The dataset `format` names.
fn dataset(format: &Format) -> Result<&str, IoError> {
    match format {
        Format::Hdf5 { dataset } => Ok(dataset),
        other => Err(IoError::invalid("format", other.name(), "HDF5")),
    }
}

impl FileFormat for Hdf5 {
    fn name(&self) -> &'static str {
        "h5"
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["h5", "hdf5", "hdf", "he5"]
    }

    fn description(&self) -> &'static str {
        "an HDF5 file"
    }

    fn recognizes(&self, head: &[u8]) -> bool {
        head.starts_with(HDF5_SIGNATURE)
    }

    fn format(&self) -> Format {
        Format::Hdf5 {
            dataset: DEFAULT_DATASET.to_string(),
        }
    }

    fn details(&self, format: &Format) -> Option<String> {
        dataset(format).ok().map(|d| format!("dataset {d}"))
    }

    fn header(&self, _: Vec<u8>, _: &mut std::fs::File) -> std::io::Result<Vec<u8>> {
        Ok(Vec::new())
    }

    fn info(&self, path: &Path, format: &Format, _: &RawHeader) -> Result<FileInfo, IoError> {
        read::info(path, dataset(format)?)
    }

    fn info_collective(
        &self,
        comm: &SimpleCommunicator,
        path: &Path,
        format: &Format,
        _: &RawHeader,
        what: &str,
    ) -> Result<FileInfo, IoError> {
        read::info_collective(comm, path, dataset(format)?, what)
    }

    fn run(
        &self,
        operation: Operation,
        path: &Path,
        format: &Format,
        side: &mut dyn AnySide,
        transfer: Transfer<'_>,
    ) -> Result<(), IoError> {
        let dataset = dataset(format)?;
        match operation {
            Operation::Save => write::save(side, path, dataset, transfer),
            Operation::SaveWindow => write::save_window(side, path, dataset, transfer),
            Operation::LoadWindow => read::load_window(side, path, dataset, transfer),
        }
    }
}
