//! The interface a file format implements ([`FileFormat`]): how its files
//! are recognised, what their headers say, how an array is saved into one
//! and how windows of one are written and loaded. Each format is a module
//! of its own (`npy/format.rs`, `hdf5/format.rs`), listed once in the
//! registry (`registry.rs`); `docs/io.md` ("Adding a file format") says
//! how one is added.
//!
//! A format sees the array of a transfer with its element type erased
//! ([`AnySide`]) and hands the transfer its file side, a
//! [`Store`](crate::transfer::Store) written or read one box per aggregator
//! and round: the rounds, the redistributions and their agreement are the
//! transfer's. By default a format's files hold the array's bytes raw
//! after a header, saved and loaded by `raw_file.rs`.

use crate::element::ElementType;
use crate::error::IoError;
use crate::file_info::FileInfo;
use crate::options::Format;
use crate::raw_file;
use crate::transfer::{AnySide, Operation, Transfer};
use mpi::topology::SimpleCommunicator;
use procgrid::Order;
use std::path::Path;

/// What rank 0 read of a file's header ([`FileFormat::header`]), which
/// every rank is sent, and the file's size.
pub(crate) struct RawHeader {
    /// The header's bytes (none for a format whose every rank opens the
    /// file itself).
    pub bytes: Vec<u8>,
    /// The file's size in bytes.
    pub file_bytes: u64,
}

/// A file format.
///
/// The methods that read or write a file are handed the [`Format`] they
/// serve (for HDF5, with the dataset's path). The collective ones are
/// called by every rank of the array's communicator with the same
/// arguments (the calls agree on them first) and must return the same
/// verdict on every rank: each step that can fail on one rank alone ends
/// agreed (`agree.rs`).
pub(crate) trait FileFormat: Sync {
    /// The format's short name, as [`Format::name`] gives it (`npy`, `h5`).
    fn name(&self) -> &'static str;

    /// The file name extensions (lower case, no dot) that
    /// [`Format::from_name`] takes for this format.
    fn extensions(&self) -> &'static [&'static str];

    /// A file of this format, as the error for a file of none names it
    /// (`a .npy file (first bytes \x93NUMPY)`).
    fn description(&self) -> &'static str;

    /// Whether a file whose first bytes are `head` (4 KiB, fewer when the
    /// file is shorter) is of this format.
    fn recognizes(&self, head: &[u8]) -> bool;

    /// The [`Format`] of a file this format recognises or whose name it
    /// claims (HDF5: the dataset [`DEFAULT_DATASET`](crate::options::DEFAULT_DATASET)).
    fn format(&self) -> Format;

    /// Whether `format` is this format's: by default, whether it is the
    /// same variant as [`format`](Self::format)'s.
    fn serves(&self, format: &Format) -> bool {
        std::mem::discriminant(format) == std::mem::discriminant(&self.format())
    }

    /// What a file's description adds after the format's name and version
    /// (HDF5: `dataset /run/3/u`); by default nothing.
    fn details(&self, _format: &Format) -> Option<String> {
        None
    }

    /// The header's bytes every rank is sent, from `head` (the file's
    /// first bytes, as in [`recognizes`](Self::recognizes)) and what more
    /// it reads of `file`: by default `head`. Not collective (rank 0).
    ///
    /// # Errors
    ///
    /// The file's read error.
    fn header(&self, head: Vec<u8>, _file: &mut std::fs::File) -> std::io::Result<Vec<u8>> {
        Ok(head)
    }

    /// The file's header, from what [`header`](Self::header) read, by this
    /// process alone. Not collective.
    ///
    /// # Errors
    ///
    /// [`IoError::Header`] for a header the format does not read,
    /// [`IoError::Truncated`] for a file shorter than its header says.
    fn info(&self, path: &Path, format: &Format, header: &RawHeader) -> Result<FileInfo, IoError>;

    /// The file's header on every rank of `comm`, each handed the bytes
    /// rank 0 read: by default [`info`](Self::info) on every rank (the
    /// same bytes decoded, the same verdict). Collective.
    ///
    /// # Errors
    ///
    /// As [`info`](Self::info).
    fn info_collective(
        &self,
        _comm: &SimpleCommunicator,
        path: &Path,
        format: &Format,
        header: &RawHeader,
        _what: &str,
    ) -> Result<FileInfo, IoError> {
        self.info(path, format, header)
    }

    /// The header a new file of an array of `element`s, in `order`, of
    /// `shape` starts with, for the default [`run`](Self::run): by
    /// default none.
    fn new_header(&self, _element: ElementType, _order: Order, _shape: &[usize]) -> Vec<u8> {
        Vec::new()
    }

    /// Moves the array of `side` to or from the file at `path` as
    /// `operation` says, through `transfer` (whose file array, for
    /// [`Operation::Save`], is the array's shape in its storage order from
    /// byte 0: the format sets where its data starts). By default the
    /// file is [`new_header`](Self::new_header)'s bytes, then the array's,
    /// moved through MPI-IO (`raw_file.rs`); a format that moves its bytes
    /// itself (HDF5) says how here. Collective.
    ///
    /// # Errors
    ///
    /// [`IoError::Write`] or [`IoError::Read`], and the errors of the
    /// transfer.
    fn run(
        &self,
        operation: Operation,
        path: &Path,
        _format: &Format,
        side: &mut dyn AnySide,
        transfer: Transfer<'_>,
    ) -> Result<(), IoError> {
        let header = |element, order, shape: &[usize]| self.new_header(element, order, shape);
        raw_file::run(operation, path, side, transfer, header)
    }
}
